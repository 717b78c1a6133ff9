"""The payloads of proto/arena/v1/maths_warriors.proto, and the engine's shapes in protobuf.

Importing this module registers every command and event of a Maths Warriors match with the
envelope codec's registry (:data:`arena_runtime.envelope.SCHEMAS`). The converters turn the
engine's frozen dataclasses into their messages and back; the round trip is exact, so a logged
event can be compared with the one the engine decides again (``arena verify``).

The protocol names the game-clock win ``timeout`` where the engine says ``game_clock``; the
converters translate.
"""

from __future__ import annotations

from arena_engine.maths_warriors import (
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
from google.protobuf.message import Message

from arena_runtime.envelope import SCHEMAS, Schemas
from arena_runtime.proto_gen.arena.v1 import maths_warriors_pb2 as pb

COMMANDS: tuple[type[Message], ...] = (
    pb.CreateMatch,
    pb.Strength,
    pb.Mind,
    pb.Skip,
    pb.Resign,
    pb.PlayerDisconnected,
    pb.PlayerReconnected,
    pb.MoveClockTimeout,
    pb.GameClockExpiry,
    pb.ReconnectExpired,
    pb.AiMove,
)
EVENTS: tuple[type[Message], ...] = (
    pb.MatchCreated,
    pb.GameStarted,
    pb.StrengthAttacked,
    pb.MindAttacked,
    pb.TurnSkipped,
    pb.GameEnded,
    pb.PlayerDisconnected,
    pb.PlayerReconnected,
)

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

AI_LEVELS = {
    pb.AI_LEVEL_EASY: "easy",
    pb.AI_LEVEL_MEDIUM: "medium",
    pb.AI_LEVEL_HARD: "hard",
    pb.AI_LEVEL_IMPOSSIBLE: "impossible",
}


def register(schemas: Schemas = SCHEMAS) -> None:
    """Register every payload of the match stream (once per registry)."""
    schemas.add_messages((*COMMANDS, *EVENTS))


register()


def type_name(message: type[Message]) -> str:
    """The envelope type of a payload class, e.g. ``arena.v1.Strength``."""
    return str(message.DESCRIPTOR.full_name)


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


def clocks_from_create(message: pb.CreateMatch) -> ClockSettings:
    """The online clocks of a new match: defaults for unset values, the rest clamped."""
    return ClockSettings.online(
        message.game_seconds if message.HasField("game_seconds") else None,
        message.move_seconds if message.HasField("move_seconds") else None,
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
