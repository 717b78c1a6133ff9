"""The Maze's game module beyond the contract suite: its views are the engine's records, a
player is pushed a view exactly when what they see changed, whole games through the module to a
win and to a draw inside the finish window, forfeits, timers from a refolded log, the wire's
exact round trip, settings, ratings, client messages and the bot."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from arena_engine.maze import MazeSettings, project, replay, view_records
from arena_engine.maze.views import View
from arena_engine.rating import elo_maze
from arena_games.contract import (
    CASUAL,
    RANKED,
    Inputs,
    MatchInfo,
    Result,
    Seat,
    SeatKind,
    SeatResult,
    SettingsError,
    Viewer,
    unpack,
)
from arena_games.maze import MODULE, lobby, ratings, wire
from arena_games.maze.bot import MazeBot
from arena_games.maze.rules import MazeMatch
from arena_games.maze.views import role_of
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as pb
from arena_games.registry import STANDARD
from arena_runtime.envelope import Codec, Event, Schemas
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection as StreamRejection
from google.protobuf.message import Message
from pydantic import ValidationError

from tests.engine.maze.play import explorer_game
from tests.games.maze_match import (
    CLIENT_MESSAGES,
    OBSERVER,
    P1,
    P2,
    RULES,
    START_MS,
    VIEWERS,
    VIEWS,
    Match,
    refold,
)
from tests.wire_schemas import check_push

SMALL = pb.MazeSettings(width=7, height=7, vision_pairs=4, cooldown_ms=100, countdown_ms=500)


@pytest.fixture(scope="module")
def games() -> list[Match]:
    """Bot games to their end (default and small mazes) and random scripts of commands."""
    played = []
    for seed in (3, 5):
        for settings in (pb.MazeSettings(), SMALL):
            match = Match(settings, seed)
            match.play()
            played.append(match)
    played += [random_script(seed) for seed in range(4)]
    return played


def random_script(seed: int, steps: int = 400) -> Match:
    """Moves and drops of both seats at random server times (some stamped early, some in
    the same millisecond), the timers fired when due, until decided or ``steps`` commands."""
    rng = random.Random(seed)
    match = Match(pb.MazeSettings(width=6, height=6, vision_pairs=3, cooldown_ms=80), seed)
    at = START_MS
    for _ in range(steps):
        if match.result is not None:
            break
        at += rng.choice((0, 1, 30, 90, 150, 400))
        match.fire_timers(at)
        if match.result is not None:
            break
        seat = rng.choice((1, 2))
        stamped = at - rng.choice((0, 0, 0, 50))
        command: Message = (
            pb.Drop(player_id=f"p_{seat}")
            if rng.random() < 0.15
            else pb.Move(player_id=f"p_{seat}", dir=rng.choice(list(wire.DIRECTION.values())))
        )
        decided = match.decide(seat, command, stamped)
        assert not isinstance(decided, StreamRejection), decided
    return match


def content(view: View) -> View:
    """A view with its state sequence aside (what a player sees of the maze)."""
    return dataclasses.replace(view, state_seq=0)


def engine_records(match_state: MazeMatch, viewer: Viewer) -> list[dict[str, Any]]:
    assert match_state.game is not None
    return [json.loads(r) for r in view_records(project(match_state.game, role_of(viewer)))]


def states_along(match: Match) -> Iterator[tuple[MazeMatch, Message, MazeMatch]]:
    """(state before, event, state after) for every event of the match's log."""
    state = match.initial
    for time_ms, event in match.log:
        after = RULES.apply(state, event, time_ms)
        yield state, event, after
        state = after


# -- views ---------------------------------------------------------------------------------------


def test_every_push_of_a_view_is_the_engine_s_records_for_that_role(games: list[Match]) -> None:
    checked = Counter[str]()
    for match in games:
        for viewer in VIEWERS:
            by_event: dict[int, tuple[MazeMatch, list[dict[str, Any]]]] = {}
            for event, state, message in match.pushes[viewer]:
                if message["type"] == "maze_view":
                    by_event.setdefault(id(event), (state, []))[1].append(message)
            for state, records in by_event.values():
                assert records == engine_records(state, viewer)
                checked[str(role_of(viewer))] += 1
                for record in records:  # as the gateway writes it: the engine's very bytes
                    text = json.dumps(record, separators=(",", ":"))
                    assert text in view_records(project(state.game, role_of(viewer)))
                    assert len(text.encode()) <= 512
    assert min(checked.values()) > 100, checked


def test_a_snapshot_is_the_match_then_the_view_rebuilt_from_the_state(games: list[Match]) -> None:
    match = games[0]
    for _, _, state in list(states_along(match))[::25]:
        for viewer in VIEWERS:
            head, *records = VIEWS.snapshot(match.table(), state, viewer, 123)
            assert head["type"] == "maze_match" and head["server_time_ms"] == 123
            assert head["role"] == {P1: "1", P2: "2", OBSERVER: "observer"}[viewer]
            # The room's form, its mode too (the match's), and every seat's kind.
            mode = match.table().mode
            assert head["settings"] == {**lobby.to_form(match.settings), "mode": mode}
            assert {seat["kind"] for seat in head["seats"]} == {"human"}
            check_push(head)
            assert head["countdown_end_ms"] == START_MS + match.settings.countdown_ms
            assert records == engine_records(state, viewer)


def test_a_viewer_is_pushed_a_view_exactly_when_what_they_see_changed(
    games: list[Match],
) -> None:
    seen = Counter[tuple[str, bool]]()
    for match in games:
        pushed = {
            viewer: {id(e) for e, _, m in match.pushes[viewer] if m["type"] == "maze_view"}
            for viewer in VIEWERS
        }
        for before, event, after in states_along(match):
            assert after.game is not None
            for viewer in VIEWERS:
                role = role_of(viewer)
                changed = before.game is None or content(project(before.game, role)) != content(
                    project(after.game, role)
                )
                # The logged event and the pushed one are the same object.
                assert (id(event) in pushed[viewer]) == changed, (viewer, event)
                actor = getattr(event, "player", None)
                if isinstance(event, pb.Moved) and viewer.seat not in (0, actor):
                    seen[("the other player", changed)] += 1
    # Both sides of the rule were met: the other's moves in and out of sight.
    assert seen[("the other player", True)] > 20 and seen[("the other player", False)] > 20


def test_a_refused_command_is_told_to_its_sender_alone(games: list[Match]) -> None:
    told = 0
    for match in games:
        for _, event in match.log:
            if not isinstance(event, pb.CommandRefused):
                continue
            for viewer in VIEWERS:
                mine = [m for e, _, m in match.pushes[viewer] if e is event]
                if viewer.seat == event.player:
                    assert mine == [
                        {
                            "type": "maze_refused",
                            "match_id": match.info.match_id,
                            "command_seq": event.command_seq,
                            "code": wire.REFUSAL_OF[event.code],
                            "t": event.t,
                        }
                    ]
                    told += 1
                else:
                    assert mine == []
    assert told > 20


def test_an_ack_carries_the_refusal_or_the_sequence_of_the_view_and_no_record() -> None:
    match = Match(SMALL, 2)
    table = match.table()
    refused = match.send(1, {"type": "maze_move", "dir": "N"}, START_MS + 1)  # the countdown
    assert not isinstance(refused, StreamRejection)
    pushed = [m for e, _, m in match.pushes[P1] if e in refused]
    assert VIEWS.ack(table, pushed) == {
        "match_id": "m-maze",
        "events": [pushed[-1]],
        "seq": None,
    }
    assert pushed[-1]["code"] == "countdown"
    match.play(rounds=10, until_result=False)
    last = match.decisions[-1]
    pushed = [m for e, _, m in match.pushes[Viewer(last.seat)] if e in last.events]
    ack = VIEWS.ack(table, pushed)
    assert ack["events"] == [] and ack["seq"] == match.game.state_seq


def test_the_opponent_and_observers_are_told_of_a_disconnect_but_not_the_player() -> None:
    match = Match(SMALL, 2)
    match.disconnect(2, START_MS + 10)
    match.reconnect(2, START_MS + 20)
    for viewer in VIEWERS:
        told = [m["type"] for e, _, m in match.pushes[viewer] if not isinstance(e, pb.MazeStarted)]
        expected = [] if viewer == P2 else ["opponent_disconnected", "opponent_reconnected"]
        assert told == expected


# -- whole games ---------------------------------------------------------------------------------


def test_a_bot_game_through_the_module_ends_in_a_win_that_decides_again(
    games: list[Match],
) -> None:
    match = games[0]
    result = match.result
    assert result is not None and result.reason == "exit"
    winner = result.winners[0]
    assert [s.rank for s in result.seats] == [1 if s == winner else 2 for s in (1, 2)]
    assert match.game.position.player(winner).exited
    # The final event closes the log, records the result, and rides in MatchEnded.
    final = match.log[-1][1]
    assert isinstance(final, pb.MazeDecided) and wire.result_of(final) == result
    ended = result.to_proto("m-maze", "maze", final)
    assert unpack(ended.detail, pb.MazeDecided) == final
    # MatchEnded, as the service writes the final event, folds as its detail.
    assert refold([*match.log[:-1], (0, ended)], match.initial) == match.state
    # Every decision again, with the same inputs, gives the same events.
    for step in match.decisions:
        assert tuple(RULES.decide(step.before, step.seat, step.command, step.inputs)) == step.events
    # The messages stand for exactly the engine's events.
    engine = [e for _, m in match.log for e in wire.engine_events(m)]
    assert replay(engine) == match.game


@pytest.mark.parametrize(("gap", "draw"), [(0, True), (137, True), (200, True), (201, False)])
def test_two_exits_within_200_ms_are_a_draw_and_one_more_is_a_win(gap: int, draw: bool) -> None:
    match = Match(seed=11)
    match.play(hold_exits=True)
    assert match.ready_to_exit(1) and match.ready_to_exit(2) and match.result is None
    out = {seat: match.bots[Viewer(seat)].reply(0) for seat in (1, 2)}
    first = match.now + 1_000  # well past both cooldowns
    match.send(2, out[2], first)
    timers = RULES.timers(match.state)
    assert [t.command_id for t in timers] == [f"timer:window:{first + 201}"]
    second = match.send(1, out[1], first + gap)
    assert not isinstance(second, StreamRejection)
    if not draw:  # the second exit's time closed the window: refused, the first out wins
        assert [type(e) for e in second] == [pb.CommandQueued, pb.CommandRefused, pb.MazeDecided]
        assert second[1].code == pb.REFUSAL_FINISHED  # type: ignore[attr-defined]
        assert match.result == Result("exit", (SeatResult(1, 2, 0), SeatResult(2, 1, 0)))
        # Folded in this order, the state is the engine's (decision first, then the refusal).
        engine = [e for _, m in match.log for e in wire.engine_events(m)]
        engine[-2:] = engine[-1:] + engine[-2:-1]
        assert replay(engine) == match.game
        return
    assert [type(e) for e in second] == [pb.CommandQueued, pb.Exited, pb.MazeDecided]
    assert match.result == Result("window", (SeatResult(1, 1, 0), SeatResult(2, 1, 0)))
    assert RULES.timers(match.state) == []
    for viewer in VIEWERS:  # everyone's last view says so
        views = match.pushes[viewer]
        last = [m for _, _, m in views if m["type"] == "maze_view" and m["chunk"] == 0][-1]
        assert last["status"]["result"] == {"draw": True, "reason": "window", "at": first + gap}


def test_the_first_out_wins_when_the_window_timer_fires() -> None:
    match = Match(seed=11)
    match.play(hold_exits=True)
    out = match.bots[P1].reply(0)
    first = match.now + 1_000
    match.send(1, out, first)
    match.fire_timers(first + 10_000)
    assert match.result == Result("exit", (SeatResult(1, 1, 0), SeatResult(2, 2, 0)))
    assert match.game.result is not None and match.game.result.at_ms == first + 201


def test_a_seat_away_past_its_reconnect_window_forfeits_by_disconnect() -> None:
    match = Match(SMALL, 4)
    match.play(rounds=12, until_result=False)
    away = match.now
    match.disconnect(2, away)
    deadline = away + 30_000
    assert RULES.forfeit(match.state, 2, Inputs(deadline - 1)) == [
        pb.MazeDecided(winner=1, reason=pb.REASON_FORFEIT, at_ms=deadline - 1)
    ]  # still inside the window: that would be a resignation
    decided = match.forfeit(2, deadline)
    assert decided == [pb.MazeDecided(winner=1, reason=pb.REASON_DISCONNECT, at_ms=deadline)]
    assert match.result == Result("disconnect", (SeatResult(1, 1, 0), SeatResult(2, 2, 0)))
    assert isinstance(match.forfeit(1, deadline + 1), StreamRejection)
    assert RULES.timers(match.state) == []


def test_a_player_back_in_time_who_resigns_forfeits() -> None:
    match = Match(SMALL, 4)
    match.play(rounds=12, until_result=False)
    match.disconnect(1, match.now)
    match.reconnect(1, match.now + 5)
    decided = match.forfeit(1, match.now + 40_000)
    assert decided == [pb.MazeDecided(winner=2, reason=pb.REASON_FORFEIT, at_ms=match.now + 40_000)]


def test_a_forfeit_after_the_finish_window_closed_leaves_the_first_out_the_winner() -> None:
    match = Match(seed=11)
    match.play(hold_exits=True)
    first = match.now + 1_000
    match.send(1, match.bots[P1].reply(0), first)
    decided = match.forfeit(2, first + 500)
    assert not isinstance(decided, StreamRejection)
    assert decided[-1] == pb.MazeDecided(winner=1, reason=pb.REASON_EXIT, at_ms=first + 500)


def test_timers_are_re_armed_from_a_log_read_back_and_refolded() -> None:
    codec = Codec(schemas())
    armed = set()
    for gap in (150, 400):
        match = Match(seed=11)
        match.play(hold_exits=True)
        first = match.now + 1_000
        match.send(2, match.bots[P2].reply(0), first)
        match.send(1, match.bots[P1].reply(0), first + gap)
        match.fire_timers(first + 10_000)
        assert match.result is not None
        read: list[tuple[int, Message]] = []
        for number, (time_ms, event) in enumerate(match.log, 1):
            if isinstance(event, pb.MazeDecided):  # written inside MatchEnded
                event = match.result.to_proto("m-maze", "maze", event)
            type_ = codec.schemas.type_of(event)
            when = datetime.fromtimestamp(time_ms / 1000, UTC)
            record = Event(f"e{number}", "match-m-maze", number, type_, event, when)
            back = codec.decode_event(codec.encode_event(record))
            read.append((round(back.time.timestamp() * 1000), back.payload))
        for count in range(1, len(read) + 1):
            live = refold(match.log[:count], match.initial)
            again = refold(read[:count], match.initial)
            assert again == live
            timers = RULES.timers(again)
            assert timers == RULES.timers(live)
            armed.update(t.command_id for t in timers)
        assert RULES.timers(again) == []
    play = START_MS + 3_000
    # The countdown's end, the time limit after it, and each game's first exit + 201 ms.
    assert {a for a in armed if "window" not in a} == {
        f"timer:countdown:{play}",
        f"timer:time-limit:{play + 600_000}",
    }
    assert len([a for a in armed if a.startswith("timer:window:")]) == 2


def test_a_timer_is_refused_unless_it_is_the_match_s_deadline_and_due() -> None:
    match = Match(SMALL, 2)
    [timer] = RULES.timers(match.state)
    assert timer.command_id == f"timer:countdown:{START_MS + 500}"
    before = match.state
    for deadline, at in ((timer.due_ms, timer.due_ms - 1), (timer.due_ms + 1, timer.due_ms + 5)):
        refused = RULES.decide(before, 0, pb.Advance(deadline_ms=deadline), Inputs(at))
        assert isinstance(refused, StreamRejection) and refused.code == "stale_timer"
    started = RULES.decide(before, 0, timer.payload, Inputs(timer.due_ms + 3))
    assert started == [pb.ClockAdvanced(t=timer.due_ms + 3), pb.PlayStarted(at_ms=timer.due_ms)]
    assert RULES.decide(before, 0, pb.Move(dir=pb.DIRECTION_N), Inputs(0)) == (
        StreamRejection("unknown_command", "Move is not a timer")
    )
    assert match.state == before


# -- the wire ------------------------------------------------------------------------------------


def test_every_engine_event_round_trips_through_its_message_and_the_envelope() -> None:
    codec = Codec(schemas())
    seen = Counter[str]()
    logs = [
        explorer_game(settings, seed)[1]
        for seed in range(6)
        for settings in (MazeSettings(width=7, height=7, vision_pairs=4), MazeSettings())
    ]
    logs += [[e for _, m in random_script(s).log for e in wire.engine_events(m)] for s in range(3)]
    for log in logs:
        messages = wire.events_to_proto(log)
        assert [e for m in messages for e in wire.engine_events(m)] == log
        for message in messages:
            if isinstance(message, pb.MazeDecided):  # written inside MatchEnded
                message = wire.result_of(message).to_proto("m", "maze", message)
            type_ = codec.schemas.type_of(message)
            record = Event("e", "match-m", 1, type_, message, datetime.now(UTC))
            assert codec.decode_event(codec.encode_event(record)).payload == message
        seen.update(e.type for e in log)
    for kind in ("players_met", "key_picked_up", "compass_read", "artifact_taken", "exit_opened"):
        assert seen[kind] > 3, seen
    assert seen["key_dropped"] and seen["command_refused"] and seen["exited"]


def test_a_resolution_without_its_move_is_refused() -> None:
    from arena_engine.maze.events import ArtifactTaken, PlayStarted

    with pytest.raises(ValueError, match="does not follow"):
        wire.events_to_proto([PlayStarted(0), ArtifactTaken(1, 3)])


def test_registration_writes_the_final_event_only_inside_match_ended() -> None:
    registry = schemas()
    assert registry.type_of(pb.Moved()) == "arena.games.maze.v1.Moved"
    assert registry.type_of(pb.Advance()) == "arena.games.maze.v1.Advance"
    assert "arena.games.maze.v1.MazeDecided" not in registry.types()
    assert registry.type_of(match_pb2.MatchEnded()) == "arena.v1.MatchEnded"


def schemas() -> Schemas:
    registry = Schemas()
    STANDARD.register_schemas(registry)
    return registry


# -- settings, ratings, client, bot --------------------------------------------------------------


def test_default_settings_are_the_engine_s_and_no_time_limit_is_zero() -> None:
    played = lobby.defaults()
    assert wire.engine_settings(played) == MazeSettings()
    endless = lobby.check(pb.MazeSettings(time_limit_ms=0, width=41))
    assert wire.engine_settings(endless) == MazeSettings(width=41, time_limit_ms=None)
    assert wire.settings_to_proto(MazeSettings(time_limit_ms=None)) == lobby.check(
        pb.MazeSettings(time_limit_ms=0)
    )
    form = lobby.SettingsForm(width=9, cooldown_ms=0, mode="ranked")
    assert lobby.check(lobby.from_form(form)) == lobby.check(
        pb.MazeSettings(width=9, cooldown_ms=0)
    )
    with pytest.raises(ValidationError):
        lobby.SettingsForm(height=3)


def test_settings_of_another_game_are_refused() -> None:
    from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw

    refused = RULES.settings(mw.MathsWarriorsSettings())
    assert isinstance(refused, StreamRejection) and refused.code == "invalid_settings"
    with pytest.raises(SettingsError) as bad:
        MODULE.lobby.check(mw.MathsWarriorsSettings())
    assert bad.value.code == "invalid_settings"
    refused = RULES.settings(pb.MazeSettings(cooldown_ms=700_000))
    assert refused == StreamRejection("invalid_cooldown", "cooldown_ms 700000 not in 0..600000")


def test_a_draw_moves_ratings_toward_each_other_and_casual_games_are_unrated() -> None:
    draw = Result("window", (SeatResult(1, 1, 0), SeatResult(2, 1, 0)))
    assert ratings.rate(1200, 1000, draw) == elo_maze(1200, 1000, 0.5)
    assert ratings.rate(1200, 1000, draw).delta < 0
    won = Result("exit", (SeatResult(1, 2, 0), SeatResult(2, 1, 0)))
    assert ratings.rate(1000, 1000, won) == elo_maze(1000, 1000, 0)
    people = (Seat(1, "p_1"), Seat(2, "p_2"))
    assert MODULE.ratings.unrated(MatchInfo("m", "maze", people, RANKED)) == ""
    assert MODULE.ratings.unrated(MatchInfo("m", "maze", people, CASUAL)) == "casual"
    assert MODULE.ratings.ladder == "maze" and MODULE.ratings.elo


def test_the_module_is_two_people_casual_or_ranked_and_exclusive() -> None:
    assert MODULE.name == "maze" and STANDARD.find("maze") is MODULE
    assert MODULE.seats.seats == 2 and MODULE.seats.min_humans == MODULE.seats.max_humans == 2
    assert MODULE.seats.kinds == {SeatKind.HUMAN} and MODULE.seats.default_fill is None
    assert MODULE.modes == {"casual", "ranked"} and MODULE.exclusive
    bot_seat = (Seat(1, "p_1"), Seat(2, "bot", kind=SeatKind.SCRIPTED, policy="explorer"))
    assert MODULE.seats.problem(bot_seat)
    assert MODULE.rules.reconnect.presence.value == "forfeit"
    assert MODULE.rules.reconnect.window_ms is None  # the service's 30 s


def test_client_messages_become_commands_and_bad_shapes_are_refused() -> None:
    move = CLIENT_MESSAGES.validate_python({"type": "maze_move", "id": "1", "dir": "W"})
    assert MODULE.client.command(move, "p_7") == pb.Move(player_id="p_7", dir=pb.DIRECTION_W)
    drop = CLIENT_MESSAGES.validate_python({"type": "maze_drop", "id": "2"})
    assert MODULE.client.command(drop, "p_7") == pb.Drop(player_id="p_7")
    for bad in (
        {"type": "maze_move", "id": "3", "dir": "NE"},
        {"type": "maze_move", "id": "3"},
        {"type": "maze_drop", "id": "4", "cell": 3},
    ):
        with pytest.raises(ValidationError):
            CLIENT_MESSAGES.validate_python(bad)


def test_a_move_without_a_direction_or_from_no_seat_is_refused_and_changes_nothing() -> None:
    match = Match(SMALL, 1)
    match.play(rounds=3, until_result=False)
    before = match.state
    for seat, command in ((1, pb.Move()), (3, pb.Move(dir=pb.DIRECTION_N)), (1, pb.Advance())):
        refused = RULES.decide(before, seat, command, Inputs(match.now))
        assert isinstance(refused, StreamRejection), refused
    assert match.state == before


def test_after_the_decision_every_command_is_refused() -> None:
    match = Match(SMALL, 6)
    match.play()
    for seat, command in ((1, pb.Move(dir=pb.DIRECTION_N)), (2, pb.Drop())):
        refused = RULES.decide(match.state, seat, command, Inputs(match.now + 1))
        assert refused == StreamRejection("finished", "the match is decided")


def test_the_bot_puts_views_back_together_from_their_records_and_observers_never_move() -> None:
    match = Match(seed=2)
    match.play(rounds=30, until_result=False)
    game = match.game
    # Under the vision effect a player's view takes several records.
    me = game.position.player(1)
    seeing = dataclasses.replace(
        match.state,
        game=dataclasses.replace(
            game, position=game.position.with_player(1, dataclasses.replace(me, vision=10))
        ),
    )
    player, observer = MazeBot(P1), MazeBot(OBSERVER)
    pushed = VIEWS.snapshot(match.table(), seeing, P1, 0)
    assert len(pushed) > 2 and [m["chunk"] for m in pushed[1:]] == list(range(len(pushed) - 1))
    for message in pushed:
        player.observe(message)
    assert seeing.game is not None and player.view == project(seeing.game, 1)
    assert player.reply(0) is not None
    for message in VIEWS.snapshot(match.table(), match.state, OBSERVER, 0):
        observer.observe(message)
    assert observer.view is None and observer.reply(1) is None


def test_a_rejection_of_the_engine_keeps_its_code() -> None:
    match = Match(SMALL, 1)
    refused = RULES.forfeit(match.state, 5, Inputs(match.now))
    assert isinstance(refused, StreamRejection) and refused.code == "bad_command"
