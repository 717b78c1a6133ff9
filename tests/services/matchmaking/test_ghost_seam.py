"""Matchmaking keeps ghost stores through the registry (``GameModule.ghosts``), not Digits':
a second game that keeps armies is one more registration (docs/games.md). Its hooks make every
command matchmaking sends for the store (a room's start and close, a duel's draw, the match
events it files, what the store's draws become) and its duel rule (``GameModule.duels``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from arena_games import digits
from arena_games.contract import Duels, Filing, GameModule, pack
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg
from arena_games.registry import STANDARD, Registry
from arena_games.stakes import DuelOutcome
from arena_matchmaking.context import LobbyContext
from arena_matchmaking.duels import Duel, decide_duel
from arena_matchmaking.ghosts import apply_ghosts, decide_ghosts, initial_ghosts
from arena_matchmaking.matchmaking import duel_side, ghost_filings
from arena_matchmaking.reactions import follow_ups
from arena_matchmaking.rooms import ALL_ENDED, player_game
from arena_runtime import topics
from arena_runtime.envelope import Command, Event
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Answer, Rejection
from google.protobuf.message import Message

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_second_game_keeping_armies_gets_its_store_from_the_registry() -> None:
    assert digits.MODULE.ghosts is not None
    other = replace(
        digits.MODULE,
        name="digits-two",
        ghosts=replace(digits.MODULE.ghosts, stream="ghosts-digits-two"),
    )
    registry = Registry()
    registry.register(digits.MODULE)
    registry.register(other)
    assert registry.ghost_games() == ("digits", "digits-two")

    log = initial_ghosts("ghosts-digits-two", registry)
    sharing = dg.SetGhostSharing(player_id="p_ann", sharing="none")
    decided = decide_ghosts(log, sharing, command_id="c1")
    assert decided == [dg.GhostSharingSet(player_id="p_ann", sharing="none")]
    log = apply_ghosts(log, decided[0])

    # The game's own refusals come through; a stream no game keeps refuses everything.
    bad = decide_ghosts(log, dg.SetGhostSharing(player_id="", sharing="none"), command_id="c2")
    assert isinstance(bad, Rejection) and bad.code == "invalid_player"
    nobody = decide_ghosts(initial_ghosts("ghosts-nobody", registry), sharing, command_id="c3")
    assert isinstance(nobody, Rejection) and nobody.code == "unknown_command"


# -- a second army-keeping game's hooks: every command matchmaking sends for its store --------

TWO = "digits-two"
TWO_STREAM = f"ghosts-{TWO}"


def _two() -> GameModule[Any]:
    """A second game keeping armies: Digits' rules, its own store and hooks, each making a
    command of its own (told apart from Digits' by what it carries), and its own duel rule."""
    assert digits.MODULE.ghosts is not None
    ghosts = replace(
        digits.MODULE.ghosts,
        stream=TWO_STREAM,
        files=(match_pb2.MatchEnded,),
        file=lambda event, match, time_ms, rating: Filing(
            f"two-file:{match}", dg.WithdrawGhosts(match_id=match, day=f"{time_ms}:{rating('p_a')}")
        ),
        seat_room=lambda code, players, games, missed: dg.WithdrawGhosts(
            room_code=f"seat:{code}:{','.join(players)}:{','.join(games)}"
        ),
        close_room=lambda code: dg.WithdrawGhosts(room_code=f"close:{code}"),
        draw_duel=lambda duel, players: dg.WithdrawGhosts(day=f"draw:{duel}:{','.join(players)}"),
        army=lambda event: (
            ("m_x", Filing("two-army", dg.DrawArmy(round=9)))
            if isinstance(event, dg.GhostFiled)
            else None
        ),
        duel_armies=lambda event: (
            ("d_x", pack(dg.DigitsSettings(player_seed=5)))
            if isinstance(event, dg.GhostsWithdrawn)
            else None
        ),
    )
    duels = Duels(
        side=lambda ended: pb.DuelSide(over=True, wins=7),
        outcome=lambda a, b: DuelOutcome("draw", None, None, f"two:{a.wins}:{b.wins}"),
    )
    return replace(digits.MODULE, name=TWO, ghosts=ghosts, duels=duels)


@pytest.fixture
def two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(STANDARD._games, TWO, _two())


def _command(stream: str, payload: Message) -> Command:
    return Command("c", stream, payload.DESCRIPTOR.full_name, payload, T0)


def _sent(stream: str, event: Message, game: str = "") -> list[tuple[str, str, str, Message]]:
    answer = Answer(
        "c", stream, (Event("e", stream, 1, event.DESCRIPTOR.full_name, event, T0, "c"),)
    )
    return [
        (f.topic, f.stream, f.command_id, f.payload)
        for f in follow_ups(_command(stream, pb.StartDuel()), answer, game)
    ]


def _to_two(command_id: str, payload: Message) -> tuple[str, str, str, Message]:
    return (topics.MATCHMAKING_COMMANDS, TWO_STREAM, command_id, payload)


@pytest.mark.usefixtures("two")
def test_a_second_game_keeping_armies_makes_every_command_for_its_store() -> None:
    room = pb.RoomSettings(game=TWO, mode=match_pb2.MATCH_MODE_ROOM)
    seats = [pb.LobbyPlayer(player_id="p_a"), pb.LobbyPlayer(player_id="p_b")]
    started = _sent(
        "room-ABCDE", pb.RoomMatchStarted(match_id="m", code="ABCDE", seats=seats, settings=room)
    )
    games = (player_game("m", "p_a"), player_game("m", "p_b"))
    seated = dg.WithdrawGhosts(room_code=f"seat:ABCDE:p_a,p_b:{','.join(games)}")
    assert started[-1] == _to_two("room:m", seated)

    late = pb.RoomGameStarted(
        match_id="m2", player=seats[1], settings=room, players=["p_b"], match_ids=["m2"]
    )
    seated = dg.WithdrawGhosts(room_code="seat:ABCDE:p_b:m2")
    assert _sent("room-ABCDE", late)[-1] == _to_two("room:m2", seated)

    finished = pb.RoomMatchFinished(match_id="m", reason=ALL_ENDED)
    closed = dg.WithdrawGhosts(room_code="close:ABCDE")
    assert _sent("room-ABCDE", finished, TWO) == [_to_two("close:m", closed)]

    accepted = pb.DuelAccepted(players=["p_a", "p_b"])
    drawn = dg.WithdrawGhosts(day="draw:d:p_a,p_b")
    assert _sent("duel-d", accepted, TWO) == [_to_two("draw:d", drawn)]
    held = pb.DuelStakeHeld(all_held=True, players=["p_a", "p_b"])
    assert _sent("duel-d", held, TWO) == [_to_two("draw:d", drawn)]

    # What the store's events become: an army for a match, a duel's armies.
    army = _sent(TWO_STREAM, dg.GhostFiled(match_id="m"))
    assert army == [(topics.MATCH_COMMANDS, "match-m_x", "two-army", dg.DrawArmy(round=9))]
    start = pb.StartDuel(settings=pack(dg.DigitsSettings(player_seed=5)))
    assert _sent(TWO_STREAM, dg.GhostsWithdrawn()) == [
        (topics.MATCHMAKING_COMMANDS, "duel-d_x", "start:d_x", start)
    ]

    # The match events it files, with the ratings of its own ladder.
    ended = match_pb2.MatchEnded(match_id="m", game=TWO)
    event = Event("e", "match-m", 3, ended.DESCRIPTOR.full_name, ended, T0, "c")
    filings = ghost_filings(event, {TWO: {"p_a": 1234}})
    filed = dg.WithdrawGhosts(match_id="m", day=f"{int(T0.timestamp() * 1000)}:1234")
    assert [(f.topic, f.stream, f.command_id, f.payload) for f in filings] == [
        _to_two("two-file:m", filed)
    ]


@pytest.mark.usefixtures("two")
def test_a_second_game_with_duels_records_and_decides_them_by_its_own_rule() -> None:
    ended = match_pb2.MatchEnded(match_id="m", game=TWO)
    assert duel_side(ended) == pb.DuelSide(over=True, wins=7)

    settings = pb.RoomSettings(game=TWO, mode=match_pb2.MATCH_MODE_DUEL)
    duel = Duel(
        "d",
        offered=pb.DuelOffered(duel_id="d", settings=settings),
        started=pb.DuelStarted(match_ids=["g1", "g2"], game=TWO),
        sides={"g1": pb.DuelSide(over=True, wins=3)},
    )
    ended_side = pb.DuelGameEnded(match_id="g2", side=pb.DuelSide(over=True, wins=4))
    decided = decide_duel(duel, ended_side, cast(LobbyContext, None), command_id="c")
    assert isinstance(decided, list)
    assert decided[-1].reason == "two:3:4"
