"""Matrix Games on the wire: its protobuf messages, their registration, and converters.

The messages are in proto/arena/games/matrix_games/v1/matrix_games.proto (package
``arena.games.matrix_games.v1``); their generated code is :mod:`arena_games.proto_gen`. The
converters turn the engine's settings and orders into messages and back, exactly, so a logged
event equals the one the rules decide again (``arena verify``) and the replay regenerated from
the log is the engine's byte for byte.

Seats are numbered 1-8 on the seam (seat n is the engine's slot n - 1).
"""

from __future__ import annotations

from arena_engine.matrix_games import Order, Settings
from arena_runtime.envelope import Schemas
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.schemas import match as match_schemas
from google.protobuf.message import Message

from arena_games.contract import Result, SeatResult, unpack
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb

GAME = "matrix-games"

#: Commands a seat sends.
COMMANDS: tuple[type[Message], ...] = (pb.JoinEpisode, pb.GiveOrder)
#: Commands the match service sends itself when a deadline is due.
TIMERS: tuple[type[Message], ...] = (pb.ConnectWaitOver, pb.BeatDue)
#: The game's events; EpisodeEnded (the last) is the final one, carried by MatchEnded.
EVENTS: tuple[type[Message], ...] = (
    pb.EpisodeStarted,
    pb.SeatJoined,
    pb.ConnectWaitEnded,
    pb.OrderGiven,
    pb.BeatPlayed,
    pb.EpisodeEnded,
)

#: Settings message field -> the engine's Settings field. The reference's llmTimeoutSeconds is
#: the time a seat's client has to order (``decision_timeout_seconds``).
SETTING_FIELDS: dict[str, str] = {
    "variant": "matrix",
    "seed": "seed",
    "beats": "beats",
    "ticks_per_beat": "ticks_per_beat",
    "token_cap": "token_cap",
    "token_respawn_ticks": "token_respawn_ticks",
    "beam_range": "beam_range",
    "freeze_ticks": "freeze_ticks",
    "step_cooldown_ticks": "step_cooldown_ticks",
    "beam_reset_cooldown": "beam_reset_cooldown",
    "beam_miss_cooldown": "beam_miss_cooldown",
    "view_radius": "view_radius",
    "decision_timeout_seconds": "llm_timeout_seconds",
    "min_beat_seconds": "min_beat_seconds",
    "episode_timeout_seconds": "episode_timeout_seconds",
    "player_connect_timeout_seconds": "player_connect_timeout_seconds",
}


def type_name(message: type[Message]) -> str:
    return str(message.DESCRIPTOR.full_name)


# -- settings ---------------------------------------------------------------------------------


def engine_settings(message: pb.MatrixGamesSettings) -> Settings:
    """The engine's settings of a message (unset fields: the engine's defaults, seed 0).
    A value the engine refuses raises its SettingsError (a stable ``code``)."""
    given = {
        engine: getattr(message, name)
        for name, engine in SETTING_FIELDS.items()
        if message.HasField(name)  # type: ignore[arg-type]  # every name is a field
    }
    return Settings(**given)


def settings_message(settings: Settings, *, seed: bool) -> pb.MatrixGamesSettings:
    """Every field of the engine's settings as a message; the seed only when ``seed``."""
    message = pb.MatrixGamesSettings(
        **{
            name: getattr(settings, engine)
            for name, engine in SETTING_FIELDS.items()
            if name != "seed"
        }
    )
    if seed:
        message.seed = settings.seed
    return message


# -- orders -----------------------------------------------------------------------------------


def order_message(order: Order) -> pb.Order:
    return pb.Order(
        intent=order.intent,
        token=order.token,
        target=order.target,
        source=order.source,
        say=order.say,
        notes=order.notes,
        latency_ms=order.latency_ms,
    )


def engine_order(message: pb.Order) -> Order:
    return Order(
        message.intent,
        message.token,
        message.target,
        message.source,
        message.say,
        message.notes,
        message.latency_ms,
    )


def unwrapped(event: Message) -> Message:
    """The game's own event: a MatchEnded (as the log keeps the end) read as its EpisodeEnded."""
    if isinstance(event, match_pb2.MatchEnded) and event.detail.Is(pb.EpisodeEnded.DESCRIPTOR):
        return unpack(event.detail, pb.EpisodeEnded)
    return event


# -- the result -------------------------------------------------------------------------------


def result_of(ended: pb.EpisodeEnded) -> Result:
    """Ranks by score (equal scores, equal ranks: 1, 1, 3, …); the score in centipoints."""
    scores = [seat.score_cp for seat in ended.seats]
    return Result(
        ended.reason,
        tuple(
            SeatResult(seat.seat, 1 + sum(other > seat.score_cp for other in scores), seat.score_cp)
            for seat in ended.seats
        ),
    )


def register(schemas: Schemas) -> None:
    """Every payload of the game (the final event travels inside MatchEnded, so it is not a
    type of its own in the log)."""
    match_schemas.register(schemas)
    schemas.add_messages((*COMMANDS, *TIMERS, *EVENTS[:-1]))


class MatrixGamesWire:
    settings = pb.MatrixGamesSettings
    commands = COMMANDS
    timers = TIMERS
    service: tuple[type[Message], ...] = ()
    events = EVENTS
    final = pb.EpisodeEnded

    def register(self, schemas: Schemas) -> None:
        register(schemas)

    def result_of(self, final: Message) -> Result:
        assert isinstance(final, pb.EpisodeEnded)
        return result_of(final)
