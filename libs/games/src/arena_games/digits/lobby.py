"""Digits' settings as rooms and queues know them: defaults, checks, the JSON form.

The mode is the match's (``StartMatch.mode``); the settings carry what a room's host picks
(rounds, shop and Face-off clocks, the time between rounds, guests), two organiser settings (how
long a game waits for an army, the integrity threshold) and what the services fill in (seeds,
a duel's deadline and armies, a room's clock, missed rounds). ``check`` fills every default of
the first two kinds and refuses a bad value with a typed SettingsError; the form a client sends
carries only the host's picks. Values the seed leaves open are in docs/rules/digits.md.
"""

from __future__ import annotations

from typing import Annotated, Any

from arena_engine.digits import DEFAULT_SETTINGS, paris
from arena_engine.digits.catalogue import MAX_LEVEL, load
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field

from arena_games.contract import SettingsError
from arena_games.lobby_form import FormLobby
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

ROOM_ROUNDS = DEFAULT_SETTINGS.room_round_choices
#: (field, low, high, default, code): every bounded number a check fills and checks.
BOUNDS: tuple[tuple[str, int, int, int, str], ...] = (
    ("room_rounds", 6, 12, DEFAULT_SETTINGS.room_rounds_default, "invalid_room_rounds"),
    ("room_shop_seconds", 30, 600, DEFAULT_SETTINGS.room_shop_seconds, "invalid_shop_time"),
    ("faceoff_seconds", 10, 300, 60, "invalid_faceoff_time"),
    ("room_combat_seconds", 0, 300, 30, "invalid_combat_time"),
    ("army_wait_ms", 0, 60_000, 5_000, "invalid_army_wait"),
    ("human_answer_ms", 100, 2_000, DEFAULT_SETTINGS.human_answer_ms, "invalid_answer_threshold"),
)
#: A duel draws one army per round of the standard game.
DUEL_ROUNDS = DEFAULT_SETTINGS.max_rounds


class SettingsForm(BaseModel):
    """A room's settings as its host sends them; omitted: the default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    room_rounds: Annotated[int, Field(ge=0, le=100)] | None = None
    room_shop_seconds: Annotated[int, Field(ge=0, le=100_000)] | None = None
    faceoff_seconds: Annotated[int, Field(ge=0, le=100_000)] | None = None
    room_combat_seconds: Annotated[int, Field(ge=0, le=100_000)] | None = None
    guests_allowed: bool | None = None


FORM_FIELDS = tuple(SettingsForm.model_fields)


def check(settings: pb.DigitsSettings | None) -> pb.DigitsSettings:
    """The settings with every default filled in, or a SettingsError naming the first bad
    value (the given message is not changed)."""
    checked = pb.DigitsSettings()
    if settings is not None:
        checked.CopyFrom(settings)
    for name, low, high, default, code in BOUNDS:
        if not checked.HasField(name):  # type: ignore[arg-type]  # every name is a field
            setattr(checked, name, default)
        value = getattr(checked, name)
        if not low <= value <= high:
            raise SettingsError(code, f"{name} is {low}..{high}, not {value}")
    if checked.room_rounds not in ROOM_ROUNDS:
        raise SettingsError(
            "invalid_room_rounds", f"a room plays {ROOM_ROUNDS} rounds, not {checked.room_rounds}"
        )
    if not checked.HasField("guests_allowed"):
        checked.guests_allowed = False
    if not checked.HasField("missed_rounds"):
        checked.missed_rounds = 0
    if checked.missed_rounds >= checked.room_rounds:
        raise SettingsError(
            "invalid_missed_rounds", f"{checked.missed_rounds} missed of {checked.room_rounds}"
        )
    if checked.opponents:
        _check_opponents(checked.opponents)
    return checked


def _check_opponents(opponents: Any) -> None:
    if len(opponents) != DUEL_ROUNDS:
        raise SettingsError("invalid_opponents", f"a duel draws {DUEL_ROUNDS} armies")
    kinds = load(DEFAULT_SETTINGS.catalogue_version).by_name
    for number, army in enumerate(opponents, start=1):
        cells = army.slate.cells
        good = len(cells) == 8 and all(
            (not c.kind and c.level == 0) or (c.kind in kinds and 1 <= c.level <= MAX_LEVEL)
            for c in cells
        )
        if not good:
            raise SettingsError("invalid_opponents", f"round {number}'s army is not a slate")


def defaults() -> pb.DigitsSettings:
    return check(None)


def from_form(form: SettingsForm) -> pb.DigitsSettings:
    given = {name: value for name, value in form.model_dump().items() if value is not None}
    return check(pb.DigitsSettings(**given))


def to_form(settings: Message) -> dict[str, Any]:
    """The host's picks as a client sees them."""
    assert isinstance(settings, pb.DigitsSettings)
    form = MessageToDict(settings, preserving_proto_field_name=True)
    return {name: form[name] for name in FORM_FIELDS if name in form}


#: The seeds a mode's players share, which the services must give: a daily challenge and a room
#: the same offers (the shop seed), a duel the same game (the questions too).
SHARED_SEEDS: dict[str, tuple[str, ...]] = {
    "daily": ("shop_seed",),
    "room": ("shop_seed",),
    "duel": ("player_seed", "shop_seed"),
}


def room_start(settings: pb.DigitsSettings, seed: int, now_ms: int) -> pb.DigitsSettings:
    """A room's games: the same offers (the shop seed drawn for the room) and the same clock
    (round 1 opens at the room's start for everyone)."""
    started = check(settings)
    started.shop_seed = seed
    started.room_started_ms = now_ms
    return started


def late_join(settings: pb.DigitsSettings, now_ms: int) -> pb.DigitsSettings | None:
    """A player joining a room already playing: the rounds opened by now (on the host's clock:
    round n opens at ``room_started_ms + (n - 1) × (shop + Face-off + combat + army wait)``)
    count as lost (``missed_rounds``); None when every round has opened."""
    started = check(settings)
    period = (
        started.room_shop_seconds + started.faceoff_seconds + started.room_combat_seconds
    ) * 1000 + started.army_wait_ms
    elapsed = now_ms - started.room_started_ms
    opened = 0 if elapsed < 0 else 1 + elapsed // period
    if opened >= started.room_rounds:
        return None
    started.missed_rounds = opened
    return started


LOBBY = FormLobby(
    "Digits",
    pb.DigitsSettings,
    SettingsForm,
    defaults,
    check,
    from_form,
    to_form,
    shared_seeds=SHARED_SEEDS,
    room_start=room_start,
    day_of=paris.day_key,
    late_join=late_join,
)
