"""Digits games written to the log as the match service writes them: ``MatchOpened``, the game's
own events (each in its own batch, with the time it was decided), and ``MatchEnded`` carrying
``DigitsEnded``. The games are real: played through the Digits module's rules (the Face-off's
armies given by hand, with their frozen ratings), so the rating service reads what a game gives.
"""

from __future__ import annotations

from datetime import UTC, datetime

from arena_games.contract import Inputs, MatchInfo, Seat
from arena_games.digits import wire
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb
from arena_games.registry import READING
from arena_runtime import topics
from arena_runtime.envelope import Event, new_id
from arena_runtime.eventlog import EventLog
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.schemas.match import MODES
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from tests.games.test_digits import RULES, Game, army_of

STRONG = ["delta"] * 8


def army(rating: int, strong: bool = False) -> pb.Army:
    made = army_of(STRONG if strong else ["plus", None, None, None, None, None, None, None])
    made.rating = rating
    return made


def play(
    start_ms: int,
    ratings: list[int],
    mode: str = "ranked",
    step_ms: int = 86_400_000,
    fast_round: int | None = None,
) -> list[tuple[Message, int]]:
    return play_game(start_ms, ratings, mode, step_ms, fast_round)[1]


def play_game(
    start_ms: int,
    ratings: list[int],
    mode: str = "ranked",
    step_ms: int = 86_400_000,
    fast_round: int | None = None,
    settings: pb.DigitsSettings | None = None,
) -> tuple[Game, list[tuple[Message, int]]]:
    """A game against armies of these frozen ratings (weak ones first, then strong ones, so it
    has wins and losses), each round ``step_ms`` apart; every event with its time; ended by
    forfeit if the armies run out first. In ``fast_round`` the first Focus page is answered
    faster than a person can (the game voids itself)."""
    g = Game(mode, settings, now=start_ms)
    timed: list[tuple[Message, int]] = [(e, start_ms) for e in g.events]

    def stamp() -> None:
        timed.extend((e, g.now) for e in g.events[len(timed) :])

    for number, rating in enumerate(ratings):
        if g.state.over:
            break
        if number + 1 == fast_round:
            g.do(pb.StartFocus())
            g.do(pb.AnswerFocus(answer=g.game.question.answer), after_ms=50)
            while g.game.question is not None:
                g.do(pb.AnswerFocus(answer=g.game.question.answer), after_ms=2000)
        else:
            g.focus()
        for offer in range(5):  # buy what the gold pays for
            decided = RULES.decide(g.state, 1, pb.Buy(offer=offer), Inputs(g.now + 1000, 11))
            if not isinstance(decided, Rejection):
                g.do(pb.Buy(offer=offer))
        g.do(pb.EndShop())
        strong = number >= len(ratings) // 2
        g.do(pb.DrawArmy(round=g.game.round_no, army=army(rating, strong)), seat=0, after_ms=10)
        g.do(pb.Fight())
        stamp()
        g.now += step_ms
    if not g.state.over:
        g.now += 1000
        decided = RULES.forfeit(g.state, 1, Inputs(g.now, 1))
        assert not isinstance(decided, Rejection), decided
        g._fold(list(decided))
        stamp()
    return g, timed


def events(
    match_id: str, player: str, timed: list[tuple[Message, int]], mode: str = "ranked"
) -> list[Event]:
    """The match stream: MatchOpened, the game's events, MatchEnded (if the game ended)."""
    info = MatchInfo(match_id, wire.GAME, (Seat(1, player, player.upper()),), mode)
    opened = match_pb2.MatchOpened(
        match_id=match_id,
        game=wire.GAME,
        seats=[s.to_proto() for s in info.seats],
        mode=MODES[mode],
    )
    payloads: list[tuple[Message, int]] = [(opened, timed[0][1])]
    for event, time_ms in timed:
        if isinstance(event, pb.DigitsEnded):
            ended = wire.result_of(event).to_proto(match_id, wire.GAME, event)
            payloads.append((ended, time_ms))
        else:
            payloads.append((event, time_ms))
    return stream(match_id, payloads)


def stream(match_id: str, payloads: list[tuple[Message, int]], first: int = 1) -> list[Event]:
    return [
        Event(
            event_id=new_id(),
            stream=f"match-{match_id}",
            sequence=number,
            type=READING.schemas.type_of(payload),
            payload=payload,
            time=datetime.fromtimestamp(time_ms / 1000, UTC),
            batch_id=new_id(),
        )
        for number, (payload, time_ms) in enumerate(payloads, start=first)
    ]


def voided(match_id: str, after: list[Event], time_ms: int, by: str = "ops") -> list[Event]:
    """The match's GameVoided, as the match service writes it after an operator's VoidGame."""
    payload = pb.GameVoided(reason="operator", by=by, note="test void")
    return stream(match_id, [(payload, time_ms)], first=after[-1].sequence + 1)


def decided(game: Game, command: Message, after: list[Event], time_ms: int) -> list[Event]:
    """What the match service writes for a service command (seat 0) on this game: the rules'
    events, after the match's last one."""
    out = RULES.decide(game.state, 0, command, Inputs(time_ms, 1))
    assert not isinstance(out, Rejection), out
    return stream(match_id_of(after), [(e, time_ms) for e in out], first=after[-1].sequence + 1)


def match_id_of(written: list[Event]) -> str:
    return written[0].stream.removeprefix("match-")


async def append(log: EventLog, written: list[Event]) -> None:
    await log.append(topics.MATCH_EVENTS, [READING.event_record(e) for e in written])
