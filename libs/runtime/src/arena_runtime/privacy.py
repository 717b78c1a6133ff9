"""What of an event may leave the operators' hands (docs/analytics.md, Privacy).

Every string field name of every payload Arena writes is classified here, once, by name:

- :data:`SECRET_FIELDS`: credentials and what stands for them. Never exported, with or without
  pseudonyms (a password's or a token's hash is still a credential to attack offline).
- :data:`IDENTIFIER_FIELDS`: who a player is. Exported as they are, or with
  :class:`Pseudonymiser`, as a keyed hash (HMAC-SHA-256 under ``ARENA_EXPORT_PSEUDONYM_KEY``):
  equal identifiers give equal pseudonyms under one key, so a pseudonymised data set still joins
  (a player's matches, ratings and rooms), and nobody without the key can tell whom it names.
- :data:`FREE_TEXT_FIELDS`: what a player typed. Dropped when pseudonymising (a name may be in it).
- :data:`PUBLIC_FIELDS`: everything else (ids of matches and rooms, codes, reasons, names of
  rules); exported as they are.

A field name in none of them is a field nobody decided about: the suite fails
(tests/runtime/test_privacy.py walks every registered payload), so adding one forces a choice.
Stream ids that name a player (``player-<id>``, ``account-<username>``, ``guest-<session id>``)
and the causation and correlation ids (which may embed a session's id) are pseudonymised with
them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

#: Never exported.
SECRET_FIELDS = frozenset({"password_hash", "token_hash"})
#: Player (and operator) identifiers: exported as they are or pseudonymised.
IDENTIFIER_FIELDS = frozenset(
    {
        "player_id",
        "winner_player_id",
        "username",
        "display_name",
        "upgraded_guest_name",
        "session_id",
        "host",
        "player",
        "players",
        "policy_names",
        "shown_as",
        # Digits' ghost store: the owner's name when the slate was saved.
        "login",
        # A duel's settlement: player ids.
        "winner",
        "loser",
        "by",
        # A statistics board's entry: a player id (or a scripted policy's name) and its name.
        "key",
        "name",
    }
)
#: Text players (or operators) wrote: dropped when pseudonymising.
FREE_TEXT_FIELDS = frozenset({"say", "notes", "why", "note"})
#: Every other string field of Arena's payloads, exported as it is.
PUBLIC_FIELDS = frozenset(
    {
        "match_id",
        # Digits' seasons and credits ledgers: a month, matches, and a ledger's own entry ids.
        "match_ids",
        "season",
        "season_after",
        "hold_id",
        "movement_id",
        "game",
        "board",
        "reason",
        "request_id",
        "create_command_id",
        "room_code",
        "code",
        "target",
        "policy",
        "variant",
        "mode",
        "intent",
        "die",
        "attacker",
        "unrated_reason",
        "tokens",
        "token",
        "timeout_winner",
        "symbol",
        "rules_tag",
        "first_player_penalty",
        "first_player_compare",
        "all_equal_start",
        "ending",
        "command_type",
        "command_id",
        "message",
        "source",
        "type_url",
        "kind",
        "text",
        "pool",
        "tier",
        "catalogue_version",
        "result",
        "offers",
        "bright",
        # Digits' ghost store and daily games: a preference (login, anonymous, none), a Paris day.
        "sharing",
        "day",
        # A duel: its id (a stream's, chosen by the gateway) and the criterion that decided it.
        "duel_id",
        "decided_by",
        # The views: who a push is for, by role ("spectator", "observer").
        "role",
    }
)

#: Streams whose id names a player: the part after the prefix is pseudonymised.
IDENTIFYING_STREAMS = ("player-", "account-", "guest-")
#: Length of a pseudonym (hex digits of the HMAC: 80 bits).
PSEUDONYM_DIGITS = 20
MIN_KEY_LENGTH = 16


class Pseudonymiser:
    """Identifier -> keyed hash; the empty string stays empty (no identifier is no identifier)."""

    __slots__ = ("_cache", "_key")

    def __init__(self, key: str | bytes) -> None:
        raw = key.encode() if isinstance(key, str) else key
        if len(raw) < MIN_KEY_LENGTH:
            raise ValueError(f"a pseudonym key needs at least {MIN_KEY_LENGTH} characters")
        self._key = raw
        self._cache: dict[str, str] = {}

    def __repr__(self) -> str:
        return "Pseudonymiser(key=hidden)"

    def __call__(self, value: str) -> str:
        if not value:
            return value
        found = self._cache.get(value)
        if found is None:
            digest = hmac.new(self._key, value.encode(), hashlib.sha256).hexdigest()
            found = self._cache[value] = f"p_{digest[:PSEUDONYM_DIGITS]}"
            if len(self._cache) > 1_000_000:
                self._cache.clear()
        return found

    def stream(self, stream: str) -> str:
        """A stream id with the player it names replaced by their pseudonym."""
        for prefix in IDENTIFYING_STREAMS:
            if stream.startswith(prefix):
                return prefix + self(stream[len(prefix) :])
        return stream


def scrub(payload: Mapping[str, Any], pseudonym: Pseudonymiser | None) -> dict[str, Any]:
    """A payload (as a dict of plain values) fit to export: secrets removed; with a pseudonymiser,
    identifiers replaced by pseudonyms and free text removed. Nested messages alike."""
    out: dict[str, Any] = {}
    for name, value in payload.items():
        if name in SECRET_FIELDS:
            continue
        if pseudonym is not None:
            if name in FREE_TEXT_FIELDS:
                continue
            if name in IDENTIFIER_FIELDS:
                out[name] = _pseudonymised(value, pseudonym)
                continue
        out[name] = _scrubbed(value, pseudonym)
    return out


def _scrubbed(value: Any, pseudonym: Pseudonymiser | None) -> Any:
    if isinstance(value, Mapping):
        return scrub(value, pseudonym)
    if isinstance(value, list):
        return [_scrubbed(item, pseudonym) for item in value]
    return value


def _pseudonymised(value: Any, pseudonym: Pseudonymiser) -> Any:
    if isinstance(value, str):
        return pseudonym(value)
    if isinstance(value, list):
        return [_pseudonymised(item, pseudonym) for item in value]
    if isinstance(value, Mapping):
        return scrub(value, pseudonym)
    return value  # a seat number (Maths Warriors' ``player``) names nobody
