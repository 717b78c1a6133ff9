"""Maths Warriors on the wire: its protobuf messages, their registration, and converters.

The messages are in proto/arena/v1/maths_warriors.proto (type names ``arena.v1.*``, unchanged by
the game seam); their generated code is :mod:`arena_games.proto_gen`. The converters turn the
engine's frozen dataclasses into their messages and back; the round trip is exact, so a logged
event can be compared with the one the engine decides again (``arena verify``).

:func:`register` is the game's part of the contract: every payload, and the legacy upcasters of
records written before the seam (issue 14): ``CreateMatch`` reads as ``StartMatch``,
``MatchCreated`` as ``MatchOpened``, ``GameEnded`` as a ``MatchEnded`` carrying it, and the
lobby's version-1 settings (Maths Warriors' fields) as version 2 (game-neutral, this game's
settings as typed bytes). What new code writes is exactly what these produce from old records.

The protocol names the game-clock win ``timeout`` where the engine says ``game_clock``; the
converters translate.
"""

from __future__ import annotations

from arena_engine.maths_warriors import (
    DICE,
    ClockSettings,
    DieToken,
    GameEnded,
    GameStarted,
    Mind,
    MindAttacked,
    Ruleset,
    Skip,
    Strength,
    StrengthAttacked,
    TurnSkipped,
    WinReason,
)
from arena_engine.maths_warriors import Event as EngineEvent
from arena_engine.maths_warriors.moves import MindToken as EngineMindToken
from arena_runtime.envelope import Schemas
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as lobby
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.schemas import lobby as lobby_schemas
from arena_runtime.schemas import match as match_schemas
from google.protobuf.message import Message

from arena_games.contract import Result, SeatResult, match_id_of, pack
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb

GAME = "maths-warriors"
SEATS = 2

#: Commands a seat sends.
COMMANDS: tuple[type[Message], ...] = (pb.Strength, pb.Mind, pb.Skip)
#: Commands the match service sends itself when a deadline is due.
TIMERS: tuple[type[Message], ...] = (pb.MoveClockTimeout, pb.GameClockExpiry, pb.AiMove)
#: The game's events; GameEnded is the final one.
EVENTS: tuple[type[Message], ...] = (
    pb.GameStarted,
    pb.StrengthAttacked,
    pb.MindAttacked,
    pb.TurnSkipped,
    pb.GameEnded,
)
#: The events the rules fold (every event of the game).
GAME_EVENTS = EVENTS

#: Engine win reason -> protocol reason.
PROTOCOL_REASON = {
    WinReason.ALL_CAPTURED.value: "all_captured",
    WinReason.GAME_CLOCK.value: "timeout",
    WinReason.FORFEIT.value: "forfeit",
}
ENGINE_REASON = {protocol: engine for engine, protocol in PROTOCOL_REASON.items()}

RULESET_OPTIONS = (
    "first_player_penalty",
    "timeout_winner",
    "first_player_compare",
    "all_equal_start",
)

#: The legacy AiLevel enum -> the AI level's name (MatchSeat.policy).
AI_LEVELS = {
    match_pb2.AI_LEVEL_EASY: "easy",
    match_pb2.AI_LEVEL_MEDIUM: "medium",
    match_pb2.AI_LEVEL_HARD: "hard",
    match_pb2.AI_LEVEL_IMPOSSIBLE: "impossible",
}
AI_LEVEL_OF_NAME = {name: level for level, name in AI_LEVELS.items()}

#: The lobby messages whose RoomSettings held this game's fields before the seam.
ROOM_SETTINGS_MESSAGES: tuple[type[Message], ...] = (
    lobby.CreateRoom,
    lobby.OpenRoom,
    lobby.RoomRequested,
    lobby.RoomOpened,
    lobby.RoomMatchStarted,
    lobby.PlayAi,
    lobby.AiMatchRequested,
)


def type_name(message: type[Message]) -> str:
    """The envelope type of a payload class, e.g. ``arena.v1.Strength``."""
    return str(message.DESCRIPTOR.full_name)


# -- registration -----------------------------------------------------------------------------


def register(schemas: Schemas) -> None:
    """The contract's registration: every payload of the game, and its legacy upcasters."""
    match_schemas.register(schemas)
    lobby_schemas.register(schemas)
    schemas.add_messages((*COMMANDS, *TIMERS, *EVENTS[:-1]))
    _register_legacy_lobby(schemas)
    for legacy, into, upcast in (
        (pb.CreateMatch, match_pb2.StartMatch, start_of_create),
        (pb.MatchCreated, match_pb2.MatchOpened, opened_of_created),
        (pb.GameEnded, match_pb2.MatchEnded, ended_of_game_ended),
    ):
        if type_name(legacy) not in schemas.types():
            schemas.add_legacy(legacy, version=1, upcast=upcast, into=type_name(into))


def _register_legacy_lobby(schemas: Schemas) -> None:
    for message in ROOM_SETTINGS_MESSAGES:
        if not schemas.has(type_name(message), 1):
            schemas.add_legacy(message, version=1, upcast=_lobby_v2)


# -- legacy records ----------------------------------------------------------------------------


def policy_seat(seat: match_pb2.MatchSeat) -> match_pb2.MatchSeat:
    """A seat as written since the seam: an AI seat names its level in ``policy``."""
    if not seat.ai_level:
        return seat
    return match_pb2.MatchSeat(
        player_id=seat.player_id,
        display_name=seat.display_name,
        kind=seat.kind,
        policy=seat.policy or AI_LEVELS.get(seat.ai_level, ""),
    )


def settings_of_create(create: pb.CreateMatch) -> pb.MathsWarriorsSettings:
    settings = pb.MathsWarriorsSettings(ruleset=create.ruleset, preview=create.preview)
    if create.HasField("game_seconds"):
        settings.game_seconds = create.game_seconds
    if create.HasField("move_seconds"):
        settings.move_seconds = create.move_seconds
    return settings


def start_of_create(create: pb.CreateMatch, stream: str) -> match_pb2.StartMatch:
    """A legacy CreateMatch as the StartMatch new code sends."""
    return match_pb2.StartMatch(
        match_id=create.match_id,
        game=GAME,
        seats=[policy_seat(s) for s in create.seats],
        mode=create.mode,
        room_code=create.room_code,
        settings=pack(settings_of_create(create)),
    )


def opened_of_created(created: pb.MatchCreated, stream: str) -> match_pb2.MatchOpened:
    """A legacy MatchCreated as the MatchOpened new code writes."""
    settings = pb.MathsWarriorsSettings(
        game_seconds=created.game_seconds,
        move_seconds=created.move_seconds,
        ruleset=created.ruleset,
        preview=created.preview,
    )
    return match_pb2.MatchOpened(
        match_id=created.match_id,
        game=GAME,
        seats=[policy_seat(s) for s in created.seats],
        mode=created.mode,
        room_code=created.room_code,
        settings=pack(settings),
        service=match_pb2.ServiceSettings(
            reconnect_ms=created.reconnect_ms, ai_think_ms=created.ai_think_ms
        ),
    )


def ended_of_game_ended(ended: pb.GameEnded, stream: str) -> match_pb2.MatchEnded:
    """A legacy GameEnded as the MatchEnded new code writes, carrying it."""
    return result_of(ended).to_proto(match_id_of(stream) or "", GAME, ended)


def result_of(ended: pb.GameEnded) -> Result:
    """The game-neutral result of the final event: the winner ranks first; each seat's score
    is the dice it captured."""
    captured = {1: len(DICE) - ended.remaining2, 2: len(DICE) - ended.remaining1}
    return Result(
        ended.reason,
        tuple(
            SeatResult(seat, 1 if seat == ended.winner else 2, captured[seat]) for seat in (1, 2)
        ),
    )


def room_settings(
    settings: pb.MathsWarriorsSettings, mode: match_pb2.MatchMode.ValueType
) -> lobby.RoomSettings:
    """The lobby's game-neutral settings of a Maths Warriors room."""
    return lobby.RoomSettings(mode=mode, game=GAME, seats=SEATS, settings=pack(settings))


def _lobby_v2(payload: Message, stream: str) -> Message:
    """Version 1 of a lobby message -> version 2: the settings' fields 1-4 (this game's, before
    the seam; MathsWarriorsSettings has their numbers) move into typed bytes; an AI level is
    named in ``policy`` too."""
    settings: lobby.RoomSettings = payload.settings  # type: ignore[attr-defined]
    game = pb.MathsWarriorsSettings.FromString(settings.SerializeToString(deterministic=True))
    game.DiscardUnknownFields()
    payload.settings.CopyFrom(room_settings(game, settings.mode))  # type: ignore[attr-defined]
    if isinstance(payload, lobby.PlayAi | lobby.AiMatchRequested) and not payload.policy:
        payload.policy = AI_LEVELS.get(payload.level, "")
    return payload


def clocks_of(settings: pb.MathsWarriorsSettings) -> ClockSettings:
    """The online clocks of a match: defaults for unset values, the rest clamped."""
    return ClockSettings.online(
        settings.game_seconds if settings.HasField("game_seconds") else None,
        settings.move_seconds if settings.HasField("move_seconds") else None,
    )


# -- rulesets and moves ---------------------------------------------------------------------


def ruleset_from_proto(message: pb.MatchRuleset) -> Ruleset:
    """The engine ruleset; an unknown option value raises MathsWarriorsError(invalid_ruleset)."""
    options = {name: value for name in RULESET_OPTIONS if (value := getattr(message, name))}
    return Ruleset.from_dict(options)


def ruleset_to_proto(ruleset: Ruleset) -> pb.MatchRuleset:
    return pb.MatchRuleset(
        first_player_penalty=ruleset.first_player_penalty.value,
        timeout_winner=ruleset.timeout_winner.value,
        first_player_compare=ruleset.first_player_compare.value,
        all_equal_start=ruleset.all_equal_start.value,
    )


def _token_from_proto(token: pb.MindToken) -> EngineMindToken:
    kind = token.WhichOneof("token")
    if kind == "die":
        return DieToken(token.die.die, token.die.value)
    if kind == "number":
        return token.number
    return token.symbol  # an unset token reads as "", which the rules refuse as malformed


def token_to_proto(token: EngineMindToken) -> pb.MindToken:
    if isinstance(token, DieToken):
        return pb.MindToken(die=pb.MindDie(die=token.die, value=token.value))
    if isinstance(token, int):
        return pb.MindToken(number=token)
    return pb.MindToken(symbol=token)


def strength_move(message: pb.Strength, seat: int) -> Strength:
    return Strength(seat, (message.attacker,), message.target)


def mind_move(message: pb.Mind, seat: int) -> Mind:
    return Mind(seat, message.target, tuple(_token_from_proto(t) for t in message.tokens))


def skip_move(seat: int) -> Skip:
    return Skip(seat)


def move_to_proto(move: Strength | Mind | Skip, player_id: str) -> pb.Strength | pb.Mind | pb.Skip:
    """The command a client (or a scripted player) sends for an engine move."""
    if isinstance(move, Strength):
        return pb.Strength(player_id=player_id, attacker=move.attackers[0], target=move.target)
    if isinstance(move, Mind):
        return pb.Mind(
            player_id=player_id,
            target=move.target,
            tokens=[token_to_proto(t) for t in move.tokens],
        )
    return pb.Skip(player_id=player_id)


# -- engine events ----------------------------------------------------------------------------


def _rerolls(rerolls: tuple[tuple[str, int], ...]) -> list[pb.Reroll]:
    return [pb.Reroll(die=die, value=value) for die, value in rerolls]


def _optional(message: object, name: str) -> int | None:
    return getattr(message, name) if message.HasField(name) else None  # type: ignore[attr-defined]


def event_to_proto(
    event: EngineEvent, *, ai_seed: int | None = None, winner_player_id: str = ""
) -> pb.GameStarted | pb.StrengthAttacked | pb.MindAttacked | pb.TurnSkipped | pb.GameEnded:
    """The message of an engine event; ``ai_seed`` marks a move the AI chose with that seed."""
    if isinstance(event, GameStarted):
        rules = dict(event.rules)
        return pb.GameStarted(
            seed=event.seed,
            dice1=event.dice1,
            dice2=event.dice2,
            first=event.first,
            rolloff=[pb.RolloffRound(roll1=a, roll2=b) for a, b in event.rolloff],
            game_seconds=event.game_seconds or 0,
            move_seconds=event.move_seconds,
            started_at_ms=event.started_at_ms,
            game_deadline_ms=event.game_deadline_ms,
            move_deadline_ms=event.move_deadline_ms,
            ruleset=ruleset_to_proto(Ruleset.from_dict(rules)),
            rules_tag=rules.get("tag", ""),
        )
    if isinstance(event, StrengthAttacked):
        return pb.StrengthAttacked(
            player=event.player,
            attacker=event.attacker,
            target=event.target,
            seed=event.seed,
            rerolls=_rerolls(event.rerolls),
            move_deadline_ms=event.move_deadline_ms,
            ai_seed=ai_seed,
        )
    if isinstance(event, MindAttacked):
        return pb.MindAttacked(
            player=event.player,
            target=event.target,
            tokens=event.tokens,
            value=event.value,
            seed=event.seed,
            rerolls=_rerolls(event.rerolls),
            move_deadline_ms=event.move_deadline_ms,
            ai_seed=ai_seed,
        )
    if isinstance(event, TurnSkipped):
        return pb.TurnSkipped(
            player=event.player,
            reason=event.reason,
            move_deadline_ms=event.move_deadline_ms,
            ai_seed=ai_seed,
        )
    return pb.GameEnded(
        winner=event.winner,
        reason=PROTOCOL_REASON[event.reason],
        remaining1=event.remaining1,
        remaining2=event.remaining2,
        winner_player_id=winner_player_id,
    )


def event_from_proto(message: object) -> EngineEvent:
    """The engine event of a logged message (inverse of :func:`event_to_proto`)."""
    if isinstance(message, pb.GameStarted):
        ruleset = ruleset_from_proto(message.ruleset).to_dict()
        ruleset["tag"] = message.rules_tag
        return GameStarted(
            seed=message.seed,
            rules=tuple((name, ruleset[name]) for name in Ruleset().to_dict()),
            game_seconds=message.game_seconds or None,
            move_seconds=message.move_seconds,
            dice1=tuple(message.dice1),
            dice2=tuple(message.dice2),
            first=message.first,
            rolloff=tuple((r.roll1, r.roll2) for r in message.rolloff),
            started_at_ms=message.started_at_ms,
            game_deadline_ms=_optional(message, "game_deadline_ms"),
            move_deadline_ms=_optional(message, "move_deadline_ms"),
        )
    if isinstance(message, pb.StrengthAttacked):
        return StrengthAttacked(
            player=message.player,
            attacker=message.attacker,
            target=message.target,
            seed=message.seed,
            rerolls=tuple((r.die, r.value) for r in message.rerolls),
            move_deadline_ms=_optional(message, "move_deadline_ms"),
        )
    if isinstance(message, pb.MindAttacked):
        return MindAttacked(
            player=message.player,
            target=message.target,
            tokens=tuple(message.tokens),
            value=message.value,
            seed=message.seed,
            rerolls=tuple((r.die, r.value) for r in message.rerolls),
            move_deadline_ms=_optional(message, "move_deadline_ms"),
        )
    if isinstance(message, pb.TurnSkipped):
        return TurnSkipped(
            player=message.player,
            reason=message.reason,
            move_deadline_ms=_optional(message, "move_deadline_ms"),
        )
    if isinstance(message, pb.GameEnded):
        return GameEnded(
            winner=message.winner,
            reason=ENGINE_REASON[message.reason],
            remaining1=message.remaining1,
            remaining2=message.remaining2,
        )
    raise TypeError(f"not a Maths Warriors engine event: {message!r}")


class MathsWarriorsWire:
    settings = pb.MathsWarriorsSettings
    commands = COMMANDS
    timers = TIMERS
    service: tuple[type[Message], ...] = ()
    events = EVENTS
    final = pb.GameEnded

    def register(self, schemas: Schemas) -> None:
        register(schemas)

    def result_of(self, final: Message) -> Result:
        assert isinstance(final, pb.GameEnded)
        return result_of(final)
