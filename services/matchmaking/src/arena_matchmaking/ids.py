"""Room codes and match ids, derived from command ids so that a repeated decision repeats them.

``decide`` must be pure, so nothing here draws randomness: a retried CreateRoom picks the same
code, and a redelivered JoinRoom names the same match.
"""

from __future__ import annotations

import hashlib
import uuid

#: 31 symbols without 0/O, 1/I/L: unambiguous when read aloud or copied by hand.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 5

_MATCH_NAMESPACE = uuid.UUID("6f1c1f5e-58a4-4d0e-9a57-4c1d7f0b2a61")


def room_code(command_id: str, attempt: int) -> str:
    """The code attempt ``attempt`` of the CreateRoom ``command_id`` tries."""
    digest = hashlib.sha256(f"{command_id}\x00{attempt}".encode()).digest()
    number = int.from_bytes(digest[:16], "big")
    symbols = []
    for _ in range(CODE_LENGTH):
        number, index = divmod(number, len(CODE_ALPHABET))
        symbols.append(CODE_ALPHABET[index])
    return "".join(symbols)


def is_room_code(text: str) -> bool:
    return len(text) == CODE_LENGTH and all(c in CODE_ALPHABET for c in text)


def match_id(stream: str, command_id: str) -> str:
    """The id of the match a command of ``stream`` starts (without the ``match-`` prefix)."""
    return uuid.uuid5(_MATCH_NAMESPACE, f"{stream}\x00{command_id}").hex


def room_stream(code: str) -> str:
    return f"room-{code}"


def player_stream(player_id: str) -> str:
    return f"player-{player_id}"


def queue_stream(game: str, mode: str) -> str:
    return f"queue-{game}-{mode}"


def match_stream(match: str) -> str:
    return f"match-{match}"


def queue_of(stream: str) -> tuple[str, str]:
    """(game, mode) of a queue stream ``queue-<game>-<mode>`` (a game's name may hold hyphens)."""
    game, _, mode = stream.removeprefix("queue-").rpartition("-")
    return game, mode
