"""The contract every game implements (docs/games.md): one :class:`GameModule` per game.

Modelled on python-chess's variants: one registry (:mod:`arena_games.registry`), a few hooks, one
result type. The services know this contract and never a game: the match service opens a match
with ``rules.settings``/``rules.initial``/``rules.start``, folds its events with ``rules.apply``,
decides each command with ``rules.decide`` (seat 0: a timer), arms ``rules.timers``, forfeits
absent or resigning seats with ``rules.forfeit``, and reads ``rules.result`` when the game is
over; it produces each viewer's pushes with ``views`` (the gateway only relays them); the lobby
checks settings with ``lobby``; the gateway turns client messages into commands with ``client``;
the rating service feeds ladders with ``ratings``; tests, benches and simulations play with
``bot``.

Everything that varies between runs (server time, seeds) comes in :class:`Inputs` and is recorded
in the events, so ``arena verify`` decides every command again and gets the logged events back.
Game states are values: ``apply`` returns a new state and never changes the one it is given (the
stream runner keeps earlier states to put a fold back after a lost race).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from arena_runtime.envelope import Schemas
from arena_runtime.proto_gen.arena.v1 import lobby_pb2, match_pb2
from arena_runtime.readmodels.queries import MatchRecord
from arena_runtime.streams import Rejection
from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import Message
from pydantic import BaseModel

from arena_games.stakes import DuelOutcome

State = TypeVar("State")
State_contra = TypeVar("State_contra", contravariant=True)
M = TypeVar("M", bound=Message)

#: What deciding a command gives: the events to append, or a typed refusal.
Decision = list[Message] | Rejection

CASUAL = "casual"
RANKED = "ranked"
#: Every match is the stream ``match-<match id>`` of the match topics.
MATCH_PREFIX = "match-"


def match_stream(match_id: str) -> str:
    return f"{MATCH_PREFIX}{match_id}"


def match_id_of(stream: str) -> str | None:
    return stream[len(MATCH_PREFIX) :] if stream.startswith(MATCH_PREFIX) else None


class GameError(Exception):
    """A typed refusal by a game: ``code`` is stable (for programs), ``message`` for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def rejection(self) -> Rejection:
        return Rejection(self.code, self.message)


class SettingsError(GameError):
    """Settings a game refuses (a clock out of range, an unknown rule option)."""


class ClientError(GameError):
    """A client message a game refuses before it becomes a command (e.g. a malformed
    expression); the gateway answers it with ``error{code, message}``."""


# -- seats -----------------------------------------------------------------------------------


class SeatKind(StrEnum):
    HUMAN = "human"
    #: The game's AI, moved by the match service; its ``policy`` is an AI level.
    AI = "ai"
    #: A scripted player of the game; its ``policy`` names the script.
    SCRIPTED = "scripted"


_KIND_TO_PROTO = {
    SeatKind.HUMAN: match_pb2.SEAT_KIND_HUMAN,
    SeatKind.AI: match_pb2.SEAT_KIND_AI,
    SeatKind.SCRIPTED: match_pb2.SEAT_KIND_SCRIPTED,
}
_KIND_OF_PROTO = {value: kind for kind, value in _KIND_TO_PROTO.items()}


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat of a match, numbered from 1."""

    number: int
    player_id: str
    display_name: str = ""
    kind: SeatKind = SeatKind.HUMAN
    #: AI and scripted seats: the AI level or the scripted policy, by the game's names.
    policy: str = ""

    @property
    def human(self) -> bool:
        return self.kind is SeatKind.HUMAN

    def to_proto(self) -> match_pb2.MatchSeat:
        return match_pb2.MatchSeat(
            player_id=self.player_id,
            display_name=self.display_name,
            kind=_KIND_TO_PROTO[self.kind],
            policy=self.policy,
        )

    @classmethod
    def from_proto(cls, number: int, message: match_pb2.MatchSeat) -> Seat:
        """The seat of a MatchSeat; an unknown kind raises ValueError."""
        if message.kind not in _KIND_OF_PROTO:
            raise ValueError(f"seat {number}: no seat kind {message.kind}")
        return cls(
            number,
            message.player_id,
            message.display_name,
            _KIND_OF_PROTO[message.kind],
            message.policy,
        )


@dataclass(frozen=True, slots=True)
class SeatPlan:
    """How a game's seats are filled."""

    #: Seats of every match.
    seats: int
    #: How many of them people may take (the rest are AI or scripted).
    min_humans: int
    max_humans: int
    #: The kinds a seat may be.
    kinds: frozenset[SeatKind]
    #: The AI's levels (AI seats) and the scripted policies (scripted seats), by name.
    ai_levels: tuple[str, ...] = ()
    scripted_policies: tuple[str, ...] = ()
    #: The policy of seats nobody took when the match starts; None: every seat must be taken.
    default_fill: str | None = None

    def problem(self, seats: Sequence[Seat]) -> str:
        """Why these seats cannot start a match ("" if they can)."""
        if len(seats) != self.seats:
            return f"a match has exactly {self.seats} seats"
        if [s.number for s in seats] != list(range(1, self.seats + 1)):
            return "seats are numbered from 1, in order"
        ids = [s.player_id for s in seats]
        if not all(ids) or len(set(ids)) != len(ids):
            return "each seat needs its own player id"
        humans = sum(s.human for s in seats)
        if not self.min_humans <= humans <= self.max_humans:
            return f"{self.min_humans}-{self.max_humans} seats are people, not {humans}"
        for seat in seats:
            if seat.kind not in self.kinds:
                return f"seat {seat.number}: no {seat.kind} seats in this game"
            allowed = {SeatKind.AI: self.ai_levels, SeatKind.SCRIPTED: self.scripted_policies}
            if seat.kind in allowed and seat.policy not in allowed[seat.kind]:
                return f"seat {seat.number}: no {seat.kind} policy {seat.policy!r}"
        return ""


# -- a match ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """What the match service knows of a match whatever its game (its MatchOpened)."""

    match_id: str
    game: str
    seats: tuple[Seat, ...]
    mode: str = CASUAL
    room_code: str = ""

    def seat(self, number: int) -> Seat:
        return self.seats[number - 1]

    def seat_of(self, player_id: str) -> int | None:
        for seat in self.seats:
            if player_id and seat.player_id == player_id:
                return seat.number
        return None


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """The match service's settings a match is played with (recorded in MatchOpened)."""

    reconnect_ms: int = 30_000
    ai_think_ms: int = 700


@dataclass(frozen=True, slots=True)
class Thought:
    """What a game worked out ahead, off the event loop (``Rules.think``), for one state: a
    decision uses it only on that very state (compared by identity)."""

    state: object
    seed: int
    choice: object


@dataclass(frozen=True, slots=True)
class Inputs:
    """What a decision may depend on besides the state and the command; all of it is recorded
    (the time as the envelope's, the seeds in the payloads)."""

    now_ms: int
    seed: int = 0
    #: The seed an AI or scripted seat chooses with.
    ai_seed: int = 0
    thought: Thought | None = None


@dataclass(frozen=True, slots=True, order=True)
class Timer:
    """A deadline the match waits for: a command the match service sends itself when it is due,
    with the id ``timer:<kind>:<deadline_ms>`` (sent twice, it is answered once)."""

    due_ms: int
    command_id: str
    payload: Message = field(compare=False)


class Presence(StrEnum):
    """What a seat whose player is away means."""

    #: Away longer than the reconnect window: the seat forfeits (Maths Warriors, Maze).
    FORFEIT = "forfeit"
    #: An away seat is played by its fallback policy; it never forfeits (Matrix Games).
    FALLBACK = "fallback"
    #: No presence at all: the game waits for its player (Digits, which lives for days).
    NONE = "none"


@dataclass(frozen=True, slots=True)
class ReconnectPolicy:
    presence: Presence
    #: The window (ms); None: the match service's (``ServiceSettings.reconnect_ms``).
    window_ms: int | None = None


@dataclass(frozen=True, slots=True)
class SeatResult:
    seat: int
    #: 1 is best; equal ranks are a tie (a draw between those seats).
    rank: int
    #: What the game counts (Maths Warriors: dice captured).
    score: int


@dataclass(frozen=True, slots=True)
class Result:
    """How a match ended, whatever the game: what ratings, rooms and read models read."""

    reason: str
    seats: tuple[SeatResult, ...]

    def of(self, seat: int) -> SeatResult:
        return self.seats[seat - 1]

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats ranked first."""
        best = min(s.rank for s in self.seats)
        return tuple(s.seat for s in self.seats if s.rank == best)

    def to_proto(self, match_id: str, game: str, detail: Message) -> match_pb2.MatchEnded:
        """The MatchEnded of a match that ended so, carrying the game's final event."""
        return match_pb2.MatchEnded(
            match_id=match_id,
            game=game,
            reason=self.reason,
            seats=[
                match_pb2.SeatResult(seat=s.seat, rank=s.rank, score=s.score) for s in self.seats
            ],
            detail=pack(detail),
        )


@dataclass(frozen=True, slots=True)
class StatisticsRow:
    """What one seat of one finished match adds to a game's statistics board (every count is
    summed with the board's row of the same ``(board, kind, key)``).

    ``board`` splits a game's statistics (Matrix Games: the variant); ``kind`` is ``player``
    (``key`` the player id) or ``policy`` (``key`` a scripted policy's name); ``score`` is the
    seat's score (MatchEnded's); ``counts`` are the game's own sums, by name.
    """

    board: str
    kind: str
    key: str
    name: str
    episodes: int
    wins: int
    score: int
    counts: tuple[tuple[str, int], ...] = ()


def pack(message: Message) -> AnyMessage:
    """A message as typed bytes (``google.protobuf.Any``), serialised deterministically so that
    deciding again gives equal bytes."""
    packed = AnyMessage()
    packed.Pack(message, deterministic=True)
    return packed


def unpack(packed: AnyMessage, message_class: type[M]) -> M:
    """The message inside typed bytes; a different type raises GameError(wrong_type)."""
    message = message_class()
    if not packed.Unpack(message):
        raise GameError("wrong_type", f"expected {message_class.DESCRIPTOR.full_name}")
    return message


# -- the five parts --------------------------------------------------------------------------


class Rules(Protocol[State]):
    """The game's rules, pure, run by the match service where the state is."""

    reconnect: ReconnectPolicy
    #: The commands (a seat's, a timer, another service's) ``think`` may have a thought about:
    #: the match service calls ``think``, in a thread, before deciding one of these only.
    thinks: tuple[type[Message], ...]

    def settings(self, given: Message | None) -> Message | Rejection:
        """The settings a match is played with: defaults filled in, values clamped."""
        ...

    def initial(self, match: MatchInfo, settings: Message, service: ServiceSettings) -> State:
        """The state of a match just opened (before its opening events)."""
        ...

    def start(self, state: State, inputs: Inputs) -> Decision:
        """The game's opening events (after MatchOpened, in the same batch)."""
        ...

    def apply(self, state: State, event: Message, time_ms: int) -> State:
        """Fold one of the game's events (its final event included); ``time_ms`` is the
        event's server time."""
        ...

    def decide(self, state: State, seat: int, command: Message, inputs: Inputs) -> Decision:
        """Decide a seat's command, or a timer's (seat 0)."""
        ...

    def timers(self, state: State) -> list[Timer]:
        """The game's deadlines the state waits for now (presence windows are the service's)."""
        ...

    def forfeit(self, state: State, seat: int, inputs: Inputs) -> Decision:
        """The seat gives up (resigned, or away past the reconnect window)."""
        ...

    def result(self, state: State) -> Result | None:
        """The result once the game is over; None while it is on."""
        ...

    def think(self, state: State, command: Message, seed: int) -> Thought | None:
        """Expensive AI or scripted thinking for a command about to be decided, run off the
        event loop; None when there is nothing to think about."""
        ...


class Wire(Protocol):
    """The game's protobuf messages."""

    @property
    def settings(self) -> type[Message]:
        """The settings message (in rooms, StartMatch and MatchOpened as typed bytes)."""
        ...

    @property
    def commands(self) -> tuple[type[Message], ...]:
        """Commands a seat sends (each carries the sender's ``player_id``)."""
        ...

    @property
    def timers(self) -> tuple[type[Message], ...]:
        """Commands the match service sends itself when a deadline is due."""
        ...

    @property
    def service(self) -> tuple[type[Message], ...]:
        """Commands other services send (decided as seat 0, like a timer, but never stale):
        e.g. Digits' army drawn by matchmaking's ghost store."""
        ...

    @property
    def events(self) -> tuple[type[Message], ...]:
        """The game's events, its final event included."""
        ...

    @property
    def final(self) -> type[Message]:
        """The one event that ends the game (carried by MatchEnded.detail)."""
        ...

    def register(self, schemas: Schemas) -> None:
        """Register every payload of the game and its legacy upcasters (explicitly: nothing is
        registered by importing a module)."""
        ...

    def result_of(self, final: Message) -> Result:
        """The result a final event records (what MatchEnded says beside it)."""
        ...


class Lobby(Protocol):
    """The game's settings as rooms and queues know them."""

    @property
    def form(self) -> type[BaseModel]:
        """The JSON form clients send and receive (a pydantic model)."""
        ...

    def defaults(self) -> Message:
        """The settings a quick match is played with (every default filled in)."""
        ...

    def check(self, settings: Message | None) -> Message:
        """The settings with every default filled in; SettingsError names the first bad one."""
        ...

    def from_form(self, form: BaseModel) -> Message:
        """The settings message of a client's JSON form; SettingsError if it is refused."""
        ...

    def to_form(self, settings: Message) -> dict[str, Any]:
        """The JSON form of a settings message."""
        ...


class Client(Protocol):
    """The WebSocket messages the game accepts (each a pydantic model with a ``type``)."""

    @property
    def messages(self) -> tuple[type[BaseModel], ...]: ...

    @property
    def pushes(self) -> frozenset[str]:
        """The ``type`` of every push its views make (the protocol's documents list them)."""
        ...

    @property
    def push_models(self) -> Mapping[str, Any]:
        """Push ``type`` -> the pydantic model (or union of models) of what its views push:
        the protocol's documents describe each push with its model's JSON Schema
        (:mod:`arena_games.pushes`); a push without one is an open object there."""
        ...

    @property
    def relayed(self) -> tuple[type[BaseModel], ...]:
        """Messages that are no command: shown to other viewers by ``views.relay`` (Maths
        Warriors' live preview); empty for most games."""
        ...

    def command(self, message: BaseModel, player_id: str) -> Message:
        """The command a client message becomes; ClientError if it is refused."""
        ...


class Boards(Protocol):
    """A game's boards made from its matches' records (their events read through the seam)."""

    @property
    def daily_model(self) -> type[BaseModel]:
        """The model the read API documents for the daily board."""
        ...

    @property
    def room_model(self) -> type[BaseModel]:
        """The model the read API documents for a room's standings."""
        ...

    def day_bounds(self, day: str) -> tuple[int, int]:
        """The instants (ms) a day's daily games started within; ValueError for a bad day."""
        ...

    def daily(self, day: str, records: Sequence[MatchRecord]) -> BaseModel:
        """The day's leaderboard from its daily games (mode ``daily``, started that day)."""
        ...

    def room(self, code: str, records: Sequence[MatchRecord]) -> BaseModel:
        """A room's standings from its players' games (mode ``room``, that room code)."""
        ...


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who a view is for: a seat (1, 2, …), or a role that holds no seat."""

    seat: int = 0
    #: "spectator" (anyone with the code) or "observer" (e.g. the Maze's), for ``seat`` 0.
    role: str = ""


@dataclass(frozen=True, slots=True)
class Table:
    """The match as the match service folds it, whatever the game: what views may show
    besides the game's own state."""

    match_id: str
    game: str
    seats: tuple[Seat, ...]
    mode: str = CASUAL
    room_code: str = ""
    #: Seat -> reconnect deadline (ms) while that seat's player is away.
    away: Mapping[int, int] = field(default_factory=dict)
    #: The sequence of the stream's last event.
    sequence: int = 0


class EncodedPush(dict[str, Any]):
    """A push whose compact JSON text the game has written already (the Maze cuts its views
    into records of at most 512 bytes as text): the match service sends ``text`` rather than
    writing the object a second time. Both say the same, and neither changes afterwards."""

    __slots__ = ("text",)

    def __init__(self, value: dict[str, Any], text: str) -> None:
        super().__init__(value)
        self.text = text


class Views(Protocol[State_contra]):
    """What each viewer is shown. Views run where the state is (the match service); the
    gateway relays them. A view is a list of JSON objects: most games push one, the Maze splits
    a view into records of at most 512 bytes."""

    def snapshot(
        self, table: Table, state: State_contra, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        """Everything the viewer needs to draw the game now."""
        ...

    def push(
        self, table: Table, state: State_contra, event: Message, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        """What the viewer is pushed for one event of the stream (the state is the one after
        it); empty: nothing for this viewer."""
        ...

    def tick(
        self, table: Table, state: State_contra, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        """The periodic push of a live match (clocks); empty: none."""
        ...

    def ack(self, table: Table, pushed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The result of a seat's accepted command: what it caused, as that seat is pushed."""
        ...

    def relay(
        self, table: Table, state: State_contra, viewer: Viewer, message: BaseModel, now_ms: int
    ) -> tuple[dict[Viewer, list[dict[str, Any]]], dict[str, Any]]:
        """One of ``client.relayed`` from ``viewer``: what the other viewers are pushed, and the
        sender's ack; a GameError (its code to the sender) if it is refused. Decides nothing."""
        ...

    def hidden(self, state: State_contra, viewer: Viewer) -> frozenset[str]:
        """Text that no push made for the viewer with this state may contain: what the game
        hides from them now, as it appears in the compact JSON the gateway writes
        (``separators=(",", ":")``); empty for a game of open information. Checked push by push
        against the state each was made for, since what is hidden may change as a game goes
        (a Maze player sees the cells around them wherever they walk)."""
        ...


@dataclass(frozen=True, slots=True)
class RatedUnit:
    """One unit of play a per-combat ladder rates (a Digits ranked combat)."""

    seat: int
    #: Its number in the match (Digits: the round), unique per seat.
    unit: int
    result: str  # win, draw or loss
    #: The opponent's frozen rating; None: an unrated opponent (a house ghost).
    opponent_rating: int | None
    time_ms: int


@dataclass(frozen=True, slots=True)
class UnitStanding:
    """A player's place on a per-combat ladder: rating, its season, the season's rated units."""

    rating: int
    season: str = ""  # "" : never rated
    season_units: int = 0


@dataclass(frozen=True, slots=True)
class SeasonLine:
    """A player's line in a season, as a per-combat ladder holds it."""

    player_id: str
    display_name: str
    rating: int
    units: int
    games: int
    since_ms: int


class UnitRatings(Protocol):
    """A ladder that rates units of play as they happen (in-game events), not a match's result.

    The rating service keeps, per match, the events of the types in ``follows`` and asks
    ``rated`` which units they rate (each sent once as ``RateUnit``) and ``voided`` whether one
    voids the match (sent as ``VoidMatch``). The ladder answers with ``rate`` and ``take_back``
    and folds each event with ``apply``; every payload is one of proto/arena/v1/rating.proto's
    (``UnitRated``, ``SeasonReset``, ``RatingTakenBack``)."""

    @property
    def follows(self) -> tuple[type[Message], ...]:
        """The game's events the service keeps for ``rated`` and ``voided``."""
        ...

    def rated(self, match: MatchInfo, events: Sequence[tuple[Message, int]]) -> list[RatedUnit]:
        """Every rated unit of these events (each with its time in ms), in order."""
        ...

    def voided(self, event: Message) -> tuple[str, str] | None:
        """(by, why) when this event voids its match, else None."""
        ...

    def rate(self, standing: UnitStanding, request: Any) -> list[Message]:
        """The ladder events of one ``RateUnit`` request on the player's standing."""
        ...

    def apply(self, standing: UnitStanding, event: Message) -> UnitStanding:
        """The player's standing after one of their events (UnitRated, SeasonReset,
        RatingTakenBack)."""
        ...

    def take_back(
        self, game: str, history: Sequence[Message], voided: frozenset[str]
    ) -> list[Message]:
        """The RatingTakenBack events after which the ladder equals its ``history`` (UnitRated
        and SeasonReset, in order) without the ``voided`` matches."""
        ...

    def season_of(self, time_ms: int) -> str:
        """The season of an instant (Digits: the Paris month, ``YYYY-MM``)."""
        ...

    def counts(self, reason: str) -> bool:
        """Whether a finished ranked match ended this way counts towards a season's minimum."""
        ...

    def rating_in_season(self, standing: UnitStanding, season: str) -> int:
        """The rating shown in ``season`` (a season's reset is due before any play in it)."""
        ...

    def season_end_ms(self, season: str) -> int:
        """The first instant after ``season`` (its board closes, its prizes are given); raises
        ValueError for a name that is not a season."""
        ...

    def previous_season(self, time_ms: int) -> str:
        """The season before the one of this instant."""
        ...

    def places(self, entries: Sequence[SeasonLine]) -> list[tuple[int, SeasonLine, int]]:
        """A season's leaderboard from its lines: (place, line, prize) for each listed player,
        never a shared place."""
        ...

    @property
    def min_games(self) -> int:
        """Counted games a player needs in a season to be on its leaderboard."""
        ...

    @property
    def prizes(self) -> tuple[int, ...]:
        """The credits of places 1, 2, … of a season's leaderboard (accounts only)."""
        ...


class Ratings(Protocol):
    """How a result feeds the game's ladder (read by the rating service from MatchEnded)."""

    @property
    def units(self) -> UnitRatings | None:
        """A per-combat ladder's hooks (Digits), or None: matches are rated as a whole."""
        ...

    @property
    def ladder(self) -> str | None:
        """The ladder's name (``ladder-<name>`` stream, leaderboard), or None: no ladder."""
        ...

    @property
    def elo(self) -> bool:
        """False: the ladder keeps statistics only (no Elo)."""
        ...

    @property
    def reasons(self) -> frozenset[str]:
        """Every way a match of the game may end (``Result.reason``); a result naming another
        is refused by the ladder."""
        ...

    @property
    def start(self) -> int:
        """The rating of a player before any rated match."""
        ...

    def rate(self, before: Sequence[int], result: Result) -> tuple[int, ...]:
        """The ratings after a rated result, seat by seat (``before`` is seat by seat too).
        Called only for an Elo ladder and a match ``unrated`` says is rated."""
        ...

    def statistics(self, match: MatchInfo, final: Message) -> list[StatisticsRow]:
        """What a finished match adds to the game's statistics (``final`` is its final event,
        MatchEnded's detail); empty for a game that keeps none."""
        ...

    @property
    def indices(self) -> Mapping[str, tuple[str, str]]:
        """The indices its statistics board shows beside episodes, wins and the mean score:
        name -> (numerator, denominator), two of its rows' ``counts`` (the index of an entry
        whose denominator is 0 is none)."""
        ...

    def unrated(self, match: MatchInfo) -> str:
        """Why this match changes no rating ("casual", "ai_seat", …); "" if it is rated."""
        ...

    def tier(self, rating: int) -> str:
        """The tier shown beside a rating."""
        ...


class Bot(Protocol):
    """A scripted player: reads what its viewer is pushed and answers with legal messages."""

    def observe(self, message: dict[str, Any]) -> None:
        """Take in one push (or one event of an ack)."""
        ...

    def reply(self, seed: int) -> dict[str, Any] | None:
        """A legal client message (``type`` and fields, no ``id``) for its seat now, or None
        when it has nothing to do."""
        ...


class BotFactory(Protocol):
    def __call__(self, viewer: Viewer) -> Bot: ...


class GhostStore(Protocol):
    """A ghost store as a matchmaking stream, pure: matchmaking folds the stream's events with
    ``apply`` and decides each command to it with ``decide`` (the game's events, or a typed
    refusal); it knows no game's store."""

    def initial(self, stream: str) -> Any:
        """The empty store of ``stream``."""
        ...

    def apply(self, state: Any, event: Message) -> Any:
        """The store after one of its events (``state`` is not changed)."""
        ...

    def decide(self, state: Any, command: Message, command_id: str) -> Decision:
        """The events a command to the store appends, or its refusal (``command_id`` seeds any
        draw, so deciding it again draws the same)."""
        ...


@dataclass(frozen=True, slots=True)
class Filing:
    """A command matchmaking sends on a game's behalf, with the id the game gives it (derived
    from its cause, so sending it again changes nothing)."""

    command_id: str
    command: Message


def _none(*_: Any) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Ghosts:
    """A game whose players' saved armies other players meet (Digits): matchmaking keeps them
    on ``stream`` (``ghosts-<game>``), folded and decided by ``store``; ``sharing(player_id,
    sharing)`` is the command on it that records how the owner's armies are served (``login``,
    ``anonymous``, ``none``).

    The hooks below are every command matchmaking sends for the store, each made by the game
    (matchmaking only routes them; a hook answering None sends nothing). Commands to the store
    go on ``stream``, with the id matchmaking derives from the cause where none is given."""

    stream: str
    sharing: Callable[[str, str], Message]
    store: GhostStore
    #: The events (on ``arena.match.events`` or ``arena.rating.events``) the game files in its
    #: store; ``file(event, match_id, time_ms, rating)`` makes each one's command (None:
    #: nothing to file), ``rating(player_id)`` being the player's rating on the game's ladder
    #: as matchmaking last read it (None: never rated).
    files: tuple[type[Message], ...] = ()
    file: Callable[[Message, str, int, Callable[[str], int | None]], Filing | None] = _none
    #: A side-by-side room's games start (id ``room:<first game>``): ``seat_room(room_code,
    #: players, match_ids, missed)`` (players in join order, each one's game and the rounds a
    #: latecomer missed).
    seat_room: Callable[[str, Sequence[str], Sequence[str], Sequence[int]], Message | None] = _none
    #: A side-by-side room's games are all over (id ``close:<match>``): ``close_room(room_code)``.
    close_room: Callable[[str], Message | None] = _none
    #: A duel is accepted, its stakes held (id ``draw:<duel>``): ``draw_duel(duel_id, players)``.
    draw_duel: Callable[[str, Sequence[str]], Message | None] = _none
    #: One of the store's events answered with an army for a match (a seat-0 command to the
    #: match's stream): ``army(event)`` -> (match id, the command), or None.
    army: Callable[[Message], tuple[str, Filing] | None] = _none
    #: One of the store's events answered with a duel's armies: ``duel_armies(event)`` ->
    #: (duel id, the game settings both games add, packed), which start the duel (``StartDuel``).
    duel_armies: Callable[[Message], tuple[str, AnyMessage] | None] = _none


@dataclass(frozen=True, slots=True)
class Duels:
    """A one-seat game's duel mode: both players play the same game, each on their own, and the
    two ends decide the duel. ``side(ended)``: a game's end (``MatchEnded``, the game's own
    record in ``detail``) as the duel records it (``player_id`` left to matchmaking);
    ``outcome(a, b)``: the duel once both games are over (win, draw or cancelled)."""

    side: Callable[[match_pb2.MatchEnded], lobby_pb2.DuelSide]
    outcome: Callable[[lobby_pb2.DuelSide, lobby_pb2.DuelSide], DuelOutcome]


@dataclass(frozen=True)
class GameModule(Generic[State]):
    """One game, found by name in the registry."""

    #: The registered name, e.g. "maths-warriors".
    name: str
    seats: SeatPlan
    #: The modes a match may be played in.
    modes: frozenset[str]
    #: True: a player in a live match of this game plays nothing else meanwhile (real-time
    #: play); False: the game lives for days beside others (Digits).
    exclusive: bool
    rules: Rules[State]
    wire: Wire
    lobby: Lobby
    client: Client
    views: Views[State]
    ratings: Ratings
    bot: BotFactory
    #: The match's replay for the read API (``GET /v1/matches/{id}/replay``), made from what the
    #: read models hold (its events read through the seam): a JSON model, or a document's bytes
    #: (``replay_media_type``). None: the game serves no replay.
    replay: Callable[[MatchRecord], BaseModel | bytes] | None = None
    replay_media_type: str = "application/json"
    #: Boards the read API makes at query time from the matches the read models hold (Digits:
    #: the daily leaderboard and a room's standings). None: the game has none.
    boards: Boards | None = None
    #: True: a match's log reveals what its player keeps to themselves (Digits: the slate, the
    #: answers). The read API then shows its events and replay to its own players only, and a
    #: duel's game to the duel's other player once both games ended, if the owner shares their
    #: login (the ``ghosts-<game>`` stream's preference). False: to any signed-in caller.
    private_log: bool = False
    #: The store of its players' armies, if other players meet them (Digits). None: no store.
    ghosts: Ghosts | None = None
    #: Its duel mode's rule, if it has one (Digits). None: no duels (a challenge is refused).
    duels: Duels | None = None
