"""`arena events simulate`: seeded synthetic data, made by real services playing real games.

The match and rating services run in this process on the configured log (the embedded one in a
fresh ``ARENA_DATA_DIR`` is the usual choice); scripted players play through the match service
exactly as the gateway would have them: each seat's player is the game module's ``bot``, shown
the views the game's ``views`` make from the events read back from the log, and its replies go
through the game's ``client`` into commands on ``arena.commands.match``. Nothing here knows a
game's rules: any registered game plays, given its module.

A pool of players is drawn from the seed; each player keeps a skill (the bot's ``level``, for a
bot that has one, e.g. Maths Warriors' AI levels), so that ratings spread as they would. The
choices (pairs, skills, the bots' seeds) follow from the seed; the dice are the match service's
own (unpredictable by design), so two runs agree in shape, not in every roll.

Each match seats ``people`` of the pool (the plan's most, unless told) and fills the other seats
as the plan allows: the AI at a level, or a scripted policy, drawn from the seed. Settings are
the game's defaults with the values given (``--setting NAME=VALUE``; ``NAME=A,B,C``: one drawn
from the seed per match), checked by the game's lobby as a room's would be: a game's clocks are
its own settings (a Digits army's wait, Matrix Games' beat pacing, the Maze's countdown), so a
simulation plays them shorter on the real clock rather than faking time.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena_games.contract import (
    RANKED,
    GameModule,
    MatchInfo,
    Seat,
    SeatKind,
    ServiceSettings,
    SettingsError,
    Table,
    Viewer,
    match_stream,
    pack,
    unpack,
)
from arena_runtime import topics
from arena_runtime.envelope import SCHEMAS, Codec, Command, Event, new_id, now
from arena_runtime.eventlog import EventLog
from arena_runtime.eventlog.partitioner import partition_for
from arena_runtime.proto_gen.arena.v1 import envelope_pb2, match_pb2
from arena_runtime.streams import is_next
from google.protobuf import json_format
from google.protobuf.message import Message
from pydantic import TypeAdapter

from arena_cli.analytics.convert import reading_schemas

REJECTED = envelope_pb2.CommandRejected.DESCRIPTOR.full_name
OPENED = match_pb2.MatchOpened.DESCRIPTOR.full_name
ENDED = match_pb2.MatchEnded.DESCRIPTOR.full_name
#: Moves a match may take before the simulation calls it stuck (a real-time game sends many:
#: the Maze refuses a move in its cooldown as an event, and the player tries again).
MAX_MOVES = 20_000
#: How long to wait for the services to answer one command.
ANSWER_SECONDS = 60.0


class SimulationError(Exception):
    """A simulation that cannot run as asked (an unknown game, a stuck match)."""


class BadRequest(SimulationError):
    """A simulation asked for what the game refuses; nothing was played."""


@dataclass
class Report:
    matches: int = 0
    moves: int = 0
    rejected: int = 0
    #: Units the game's per-unit ladder rates (Digits' ranked combats), each a rating record.
    units: int = 0
    seconds: float = 0.0
    results: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    """One match as the seed drew it."""

    match_id: str
    chosen: list[Player]
    seats: tuple[Seat, ...]
    settings: Message
    seed: int


@dataclass(frozen=True)
class Player:
    player_id: str
    name: str
    #: The bot's level (for a bot with one), the player's skill.
    skill: str


#: A setting's values, one drawn per match: (name, values).
Choice = tuple[str, tuple[Any, ...]]


def parse_setting(text: str) -> Choice:
    """``NAME=VALUE`` or ``NAME=A,B,C``; each value read as JSON (``0``, ``true``), else text."""
    name, sep, values = text.partition("=")
    if not sep or not name.strip() or not values:
        raise BadRequest(f"a setting is NAME=VALUE or NAME=A,B,C; not {text!r}")
    return name.strip(), tuple(_value(v.strip()) for v in values.split(","))


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def game_settings(module: GameModule[Any], chosen: dict[str, Any]) -> Message:
    """The game's defaults with these values, checked by its lobby; SimulationError if refused."""
    settings = module.lobby.defaults()
    try:
        json_format.ParseDict(chosen, settings)
        return module.lobby.check(settings)
    except json_format.ParseError as exc:
        first_line = str(exc).splitlines()[0]
        raise BadRequest(f"{module.name} settings {chosen}: {first_line}") from exc
    except SettingsError as exc:
        raise BadRequest(f"{module.name} settings {chosen}: {exc}") from exc


def check_request(module: GameModule[Any], people: int | None, settings: tuple[Choice, ...]) -> int:
    """How many people a match seats; BadRequest if the plan or the lobby refuses the request
    (every value of every setting is checked before anything is played)."""
    plan = module.seats
    count = plan.max_humans if people is None else people
    if not plan.min_humans <= count <= plan.max_humans:
        raise BadRequest(
            f"{module.name} seats {plan.min_humans}-{plan.max_humans} people a match, not {count}"
        )
    for name, values in settings:
        for value in values:
            game_settings(module, {name: value})
    return count


def players(module: GameModule[Any], count: int, rng: random.Random) -> list[Player]:
    levels = module.seats.ai_levels or ("",)
    # The pool's skills: every level but the strongest (an unbeatable bot makes dull data).
    skills = levels[:-1] if len(levels) > 2 else levels
    return [
        Player(f"sim-{rng.getrandbits(48):012x}", f"Sim {number:03d}", rng.choice(skills))
        for number in range(1, count + 1)
    ]


def client_message(module: GameModule[Any], reply: dict[str, Any], message_id: str) -> Any:
    """The client's pydantic message for a bot's reply (its ``type`` picks the model)."""
    for model in module.client.messages:
        annotation = model.model_fields["type"].annotation
        if getattr(annotation, "__args__", (None,))[0] == reply["type"]:
            return TypeAdapter(model).validate_python({"id": message_id, **reply})
    raise SimulationError(f"{module.name}: the bot sent an unknown message {reply['type']!r}")


class MatchLog:
    """A match stream read back from the log, by the reading rule (docs/events.md)."""

    def __init__(self, log: EventLog, codec: Codec, match_id: str, partitions: int) -> None:
        self.log = log
        self.codec = codec
        self.stream = match_stream(match_id)
        self.partition = partition_for(self.stream.encode(), partitions)
        self.offset = 0
        self.sequence = 0
        self.batch_id = ""

    async def new_events(self) -> list[Event]:
        out: list[Event] = []
        while True:
            records = await self.log.read(topics.MATCH_EVENTS, self.partition, self.offset, 1000)
            if not records:
                return out
            for record in records:
                self.offset = record.offset + 1
                if record.key != self.stream.encode():
                    continue
                event = self.codec.decode_event(record.value)
                if is_next(event, self.sequence, self.batch_id):
                    self.sequence, self.batch_id = event.sequence, event.batch_id
                    out.append(event)


class Simulation:
    def __init__(
        self,
        log: EventLog,
        module: GameModule[Any],
        *,
        seed: int,
        partitions: int,
        mode: str = RANKED,
        people: int | None = None,
        settings: tuple[Choice, ...] = (),
        think_ms: int = 0,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.people = check_request(module, people, settings)
        self.think_ms = think_ms
        self.choices = settings
        self.log = log
        self.module = module
        self.rng = random.Random(seed)
        self.partitions = partitions
        self.mode = mode
        self.progress = progress
        self.schemas = reading_schemas()
        self.codec = Codec(self.schemas)
        self.report = Report()
        self.wait = asyncio.Event()

    async def run(self, matches: int, pool: int, concurrency: int) -> Report:
        if matches < 1 or pool < self.people or concurrency < 1:
            raise BadRequest(f"need at least one match, {self.people} players and one at a time")
        started = time.monotonic()
        people = players(self.module, pool, self.rng)
        # Every choice is drawn now, in order, so the seed alone decides them.
        plans = []
        for number in range(matches):
            chosen = self.rng.sample(people, self.people)
            # The game in the id: simulations of several games can share a log.
            match_id = f"sim-{self.module.name}-{self.rng.getrandbits(64):016x}{number:06d}"
            seats = self._seats(chosen)
            settings = game_settings(
                self.module, {name: self.rng.choice(values) for name, values in self.choices}
            )
            plans.append(Plan(match_id, chosen, seats, settings, self.rng.getrandbits(32)))
        queue: asyncio.Queue[Plan] = asyncio.Queue()
        for plan in plans:
            queue.put_nowait(plan)

        async def worker() -> None:
            while not queue.empty():
                await self.play(queue.get_nowait())
                self.report.matches += 1
                if self.progress is not None and self.report.matches % 10 == 0:
                    self.progress(
                        f"{self.report.matches}/{matches} matches, {self.report.moves} moves, "
                        f"{time.monotonic() - started:.0f} s"
                    )

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        self.report.seconds = time.monotonic() - started
        return self.report

    # -- one match ------------------------------------------------------------------------------

    def _seats(self, chosen: list[Player]) -> tuple[Seat, ...]:
        """The people first, then the AI at a level or a scripted policy drawn from the seed."""
        plan = self.module.seats
        seats = []
        for number in range(1, plan.seats + 1):
            if number <= len(chosen):
                person = chosen[number - 1]
                seats.append(Seat(number, person.player_id, person.name))
            elif SeatKind.AI in plan.kinds:
                level = self.rng.choice(plan.ai_levels)
                seats.append(Seat(number, f"ai-{number}", "AI", SeatKind.AI, level))
            else:
                policy = self.rng.choice(plan.scripted_policies or (plan.default_fill or "",))
                seats.append(Seat(number, f"bot-{number}", policy, SeatKind.SCRIPTED, policy))
        return tuple(seats)

    def _opening(
        self, match_id: str, seats: tuple[Seat, ...], mode: str, settings: Message
    ) -> Message:
        """The command that starts a match, as a room would send it."""
        proto_mode = match_pb2.MATCH_MODE_RANKED if mode == RANKED else match_pb2.MATCH_MODE_CASUAL
        seat_messages = [seat.to_proto() for seat in seats]
        return match_pb2.StartMatch(
            match_id=match_id,
            game=self.module.name,
            seats=seat_messages,
            mode=proto_mode,
            settings=pack(settings),
        )

    async def _send(self, match_id: str, payload: Message) -> str:
        command_id = new_id()
        command = Command(
            command_id=command_id,
            stream=match_stream(match_id),
            type=SCHEMAS.type_of(payload),
            payload=payload,
            time=now(),
            correlation_id=command_id,
        )
        await self.log.append(topics.MATCH_COMMANDS, [Codec(SCHEMAS).command_record(command)])
        return command_id

    async def play(self, plan: Plan) -> None:
        module = self.module
        match_id, chosen, seats = plan.match_id, plan.chosen, plan.seats
        rng = random.Random(plan.seed)
        mode = self.mode if module.ratings.ladder and self.mode in module.modes else "casual"
        stream = MatchLog(self.log, self.codec, match_id, self.partitions)
        opening = self._opening(match_id, seats, mode, plan.settings)
        pending = opening_id = await self._send(match_id, opening)
        bots = {seat.number: module.bot(Viewer(seat.number)) for seat in seats if seat.human}
        for seat in seats:
            level = chosen[seat.number - 1].skill if seat.number <= len(chosen) else ""
            bot = bots.get(seat.number)
            if level and bot is not None and hasattr(bot, "level"):
                bot.level = level  # the player's skill
        state: Any = None
        info: MatchInfo | None = None
        sequence = 0
        shown = False  # the bots have had their snapshot
        deadline = time.monotonic() + ANSWER_SECONDS
        game_events = {m.DESCRIPTOR.full_name for m in module.wire.events}
        ratings = module.ratings
        units = ratings.units if ratings.ladder else None
        followed: list[tuple[Message, int]] = []  # what a per-unit ladder rates
        moves = 0
        last = 0  # the seat whose bot moved last
        while True:
            events = await stream.new_events()
            if not events:
                if time.monotonic() > deadline:
                    raise SimulationError(f"match {match_id}: no answer from the match service")
                await asyncio.sleep(0.005)
                continue
            answered = False
            for event in events:
                sequence = event.sequence
                if event.causation_id == pending or (
                    event.type == REJECTED and event.payload.command_id == pending
                ):
                    answered = True
                    if event.type == REJECTED:
                        self.report.rejected += 1
                if event.type == OPENED:
                    if event.causation_id != opening_id:
                        raise BadRequest(
                            f"match {match_id} is already in the log: simulate into an empty "
                            "ARENA_DATA_DIR, or with another --seed"
                        )
                    info, state = self._opened(event.payload)
                    continue
                if event.type == ENDED:
                    result = event.payload.reason
                    self.report.results[result] = self.report.results.get(result, 0) + 1
                    if units is not None and info is not None and not ratings.unrated(info):
                        self.report.units += len(units.rated(info, followed))
                    return
                if units is not None and isinstance(event.payload, units.follows):
                    followed.append((event.payload, _ms(event)))
                if info is None or event.type not in game_events:
                    continue
                state = module.rules.apply(state, event.payload, _ms(event))
                table = Table(info.match_id, info.game, info.seats, info.mode, "", {}, sequence)
                for number, bot in bots.items():
                    for pushed in module.views.push(
                        table, state, event.payload, Viewer(number), _ms(event)
                    ):
                        bot.observe(pushed)
            if info is None:
                continue
            if not shown:
                shown = True
                table = Table(info.match_id, info.game, info.seats, info.mode, "", {}, sequence)
                for number, bot in bots.items():
                    for pushed in module.views.snapshot(
                        table, state, Viewer(number), _ms(events[-1])
                    ):
                        bot.observe(pushed)
            if not answered and pending:
                continue
            pending = ""
            # From the seat after the last to move: in a game of simultaneous moves every seat
            # gets its turn (in a game of turns only one has a reply).
            order = sorted(bots, key=lambda n: (n <= last, n))
            for number in order:
                reply = bots[number].reply(rng.getrandbits(32))
                if reply is None:
                    continue
                last = number
                if self.think_ms:
                    await asyncio.sleep(self.think_ms / 1000)  # a person reads, then answers
                moves += 1
                if moves > MAX_MOVES:
                    raise SimulationError(f"match {match_id}: over {MAX_MOVES} moves")
                message = client_message(module, reply, f"sim-{rng.getrandbits(32)}")
                command = module.client.command(message, info.seat(number).player_id)
                pending = await self._send(match_id, command)
                self.report.moves += 1
                break
            deadline = time.monotonic() + ANSWER_SECONDS

    def _opened(self, opened: match_pb2.MatchOpened) -> tuple[MatchInfo, Any]:
        module = self.module
        seats = tuple(Seat.from_proto(n, s) for n, s in enumerate(opened.seats, start=1))
        mode = RANKED if opened.mode == match_pb2.MATCH_MODE_RANKED else "casual"
        info = MatchInfo(opened.match_id, opened.game, seats, mode, opened.room_code)
        settings = unpack(opened.settings, module.wire.settings)
        service = ServiceSettings(opened.service.reconnect_ms, opened.service.ai_think_ms)
        return info, module.rules.initial(info, settings, service)


def _ms(event: Event) -> int:
    return int(event.time.timestamp() * 1000)


async def wait_for_ratings(log: EventLog, records: int, within: float = ANSWER_SECONDS) -> None:
    """Until the rating topic holds ``records`` records (each finished match is rated or
    recorded once), so the data set is whole when the simulation returns."""
    deadline = time.monotonic() + within
    while sum((await log.end_offsets(topics.RATING_EVENTS)).values()) < records:
        if time.monotonic() > deadline:
            raise SimulationError("the rating service did not record every match in time")
        await asyncio.sleep(0.05)
