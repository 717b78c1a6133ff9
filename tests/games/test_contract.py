"""The contract every game implements (docs/games.md), tested the same way on every registered game.

Each game is played through its module alone (tests/games/play.py): default settings, the
game's bot in every seat people may take (and its AI or scripted players in the others), until a
Result. Then: folding the events again gives the same states; deciding every command again with
the same inputs gives the same events; every event and command survives the envelope; every
timer is a ``timer:<kind>:<deadline>`` command of the game's, and once the state moved on it
changes nothing; a refused command changes nothing; no viewer is shown what the game hides from
them; bad settings are refused with typed errors.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from arena_games.contract import (
    RANKED,
    GameModule,
    Inputs,
    Result,
    ServiceSettings,
    SettingsError,
    Viewer,
    match_stream,
    pack,
    unpack,
)
from arena_games.maths_warriors.lobby import SettingsForm
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as digits
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as mg
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as maze
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_games.registry import STANDARD, Registry, UnknownGameError, standard
from arena_runtime.envelope import Codec, Command, Event, Schemas
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from tests.games.play import START_MS, Played, play, table
from tests.wire_schemas import check_push

GAMES = STANDARD.names()
#: The games some seats of which are played by the server (AI or scripted policies), and those
#: that serve a replay: the tests of those hooks run over these, so none is skipped.
WITH_SERVER_SEATS = [
    name for name in GAMES if STANDARD.find(name).seats.min_humans < STANDARD.find(name).seats.seats
]
WITH_REPLAY = [name for name in GAMES if STANDARD.find(name).replay is not None]
WHEN = datetime(2026, 12, 1, tzinfo=UTC)

#: Settings each game must refuse, with the code it refuses them with. A game registered without
#: an entry here fails test_every_game_lists_settings_it_refuses.
BAD_SETTINGS: dict[str, list[tuple[Message, str]]] = {
    "maths-warriors": [
        (mw.MathsWarriorsSettings(game_seconds=59), "invalid_game_clock"),
        (mw.MathsWarriorsSettings(game_seconds=3601), "invalid_game_clock"),
        (mw.MathsWarriorsSettings(move_seconds=121), "invalid_move_clock"),
        (
            mw.MathsWarriorsSettings(ruleset=mw.MatchRuleset(timeout_winner="most_dice")),
            "invalid_ruleset",
        ),
    ],
    "maze": [
        (maze.MazeSettings(width=4), "invalid_size"),
        (maze.MazeSettings(height=42), "invalid_size"),
        (maze.MazeSettings(cooldown_ms=600_001), "invalid_cooldown"),
        (maze.MazeSettings(countdown_ms=86_400_001), "invalid_countdown"),
        (maze.MazeSettings(vision_pairs=21), "invalid_vision_pairs"),
        (maze.MazeSettings(loops_percent=0), "invalid_loops"),
        (maze.MazeSettings(time_limit_ms=999), "invalid_time_limit"),
        (maze.MazeSettings(time_limit_ms=86_400_001), "invalid_time_limit"),
    ],
    "digits": [
        (digits.DigitsSettings(room_rounds=7), "invalid_room_rounds"),
        (digits.DigitsSettings(room_rounds=14), "invalid_room_rounds"),
        (digits.DigitsSettings(room_shop_seconds=29), "invalid_shop_time"),
        (digits.DigitsSettings(faceoff_seconds=301), "invalid_faceoff_time"),
        (digits.DigitsSettings(room_combat_seconds=301), "invalid_combat_time"),
        (digits.DigitsSettings(army_wait_ms=60_001), "invalid_army_wait"),
        (digits.DigitsSettings(human_answer_ms=99), "invalid_answer_threshold"),
        (digits.DigitsSettings(room_rounds=6, missed_rounds=6), "invalid_missed_rounds"),
        (digits.DigitsSettings(opponents=[digits.Army()]), "invalid_opponents"),
    ],
    "matrix-games": [
        (mg.MatrixGamesSettings(variant="tic-tac-toe"), "unknown_variant"),
        (mg.MatrixGamesSettings(beats=25), "setting_out_of_range"),
        (mg.MatrixGamesSettings(ticks_per_beat=9), "setting_out_of_range"),
        (mg.MatrixGamesSettings(token_respawn_ticks=201), "setting_out_of_range"),
        (mg.MatrixGamesSettings(player_connect_timeout_seconds=601), "setting_out_of_range"),
        (
            # 600 + 3 + 2 x 20 s of connect wait and decisions do not fit in 0.6 x 1000 s.
            mg.MatrixGamesSettings(
                player_connect_timeout_seconds=600, episode_timeout_seconds=1000
            ),
            "settings_inconsistent",
        ),
    ],
}


@pytest.fixture(scope="module", params=GAMES)
def played(request: pytest.FixtureRequest) -> Played:
    return play(STANDARD.find(request.param), seed=7)


@pytest.fixture(scope="module", params=WITH_SERVER_SEATS)
def played_against_ai(request: pytest.FixtureRequest) -> Played:
    """The same game with one person fewer: AI or scripted seats move through timers."""
    module = STANDARD.find(request.param)
    plan = module.seats
    fewer: GameModule[Any] = dataclasses.replace(
        module, seats=dataclasses.replace(plan, max_humans=plan.min_humans)
    )
    return play(fewer, seed=11)


def test_the_optional_hooks_are_tested_on_some_game() -> None:
    """Server-played seats and replays are each some game's (their tests run over those)."""
    assert WITH_SERVER_SEATS and WITH_REPLAY


def seam_schemas() -> Schemas:
    schemas = Schemas()
    STANDARD.register_schemas(schemas)
    return schemas


# -- the registry ------------------------------------------------------------------------------


def test_the_registry_finds_games_by_name_and_refuses_unknown_ones() -> None:
    registry = standard()
    assert registry.names() == GAMES and "maths-warriors" in GAMES
    assert registry.find("maths-warriors").name == "maths-warriors"
    with pytest.raises(UnknownGameError) as refused:
        registry.find("chess")
    assert refused.value.code == "unknown_game"
    again = Registry()
    again.register(registry.find("maths-warriors"))
    with pytest.raises(ValueError, match="registered already"):
        again.register(registry.find("maths-warriors"))


# -- a whole game ------------------------------------------------------------------------------


def test_a_game_with_defaults_and_bots_ends_in_a_result(played: Played) -> None:
    result = played.result
    assert isinstance(result, Result)
    assert [s.seat for s in result.seats] == [s.number for s in played.info.seats]
    assert all(s.rank >= 1 for s in result.seats) and min(s.rank for s in result.seats) == 1
    assert result.reason
    # The game's final event is the last one, and it records the same result.
    final = played.events[-1]
    assert isinstance(final, played.module.wire.final)
    assert played.module.wire.result_of(final) == result
    assert len(played.steps) > 2


def test_ai_and_scripted_seats_play_through_timers(played_against_ai: Played) -> None:
    timers = [step for step in played_against_ai.steps if step.seat == 0]
    assert timers and played_against_ai.result is not None


def test_folding_the_events_again_gives_the_same_states(played: Played) -> None:
    module = played.module
    state = module.rules.initial(played.info, played.settings, ServiceSettings(ai_think_ms=500))
    for event in played.opening:
        state = module.rules.apply(state, event, START_MS)
    assert state == (played.steps[0].before if played.steps else played.state)
    for step in played.steps:
        for event in step.events:
            state = module.rules.apply(state, event, step.inputs.now_ms)
        assert state == step.after
    assert state == played.state


def test_deciding_again_with_the_same_inputs_gives_the_same_events(
    played: Played, played_against_ai: Played
) -> None:
    for game in (played, played_against_ai):
        rules = game.module.rules
        for step in game.steps:
            inputs = Inputs(step.inputs.now_ms, step.inputs.seed, step.inputs.ai_seed)
            again = rules.decide(step.before, step.seat, step.command, inputs)
            assert not isinstance(again, Rejection)
            assert tuple(again) == step.events, step.command


def test_every_event_and_command_round_trips_through_the_envelope(played: Played) -> None:
    codec = Codec(seam_schemas())
    stream = match_stream(played.info.match_id)
    for number, event in enumerate(played.events, start=1):
        type_ = codec.schemas.type_of(event) if not _final(played, event) else None
        if type_ is None:  # the final event travels inside MatchEnded
            event = played.result.to_proto(played.info.match_id, played.info.game, event)  # type: ignore[union-attr]
            type_ = codec.schemas.type_of(event)
        record = Event(f"e{number}", stream, number, type_, event, WHEN)
        assert codec.decode_event(codec.encode_event(record)) == record
    for number, step in enumerate(played.steps):
        type_ = codec.schemas.type_of(step.command)
        command = Command(f"c{number}", stream, type_, step.command, WHEN)
        assert codec.decode_command(codec.encode_command(command)) == command
    assert played.module.wire.final.DESCRIPTOR.full_name not in _written_types(codec.schemas)


def test_every_timer_is_a_command_and_a_stale_copy_changes_nothing(
    played: Played, played_against_ai: Played
) -> None:
    seen = 0
    for game in (played, played_against_ai):
        rules, timer_types = game.module.rules, game.module.wire.timers
        for step in game.steps:
            armed = rules.timers(step.before)
            for timer in armed:
                assert re.fullmatch(r"timer:[a-z0-9-]+:\d+", timer.command_id), timer
                assert timer.command_id.endswith(f":{timer.due_ms}")
                assert isinstance(timer.payload, timer_types)
            gone = [t for t in armed if t not in rules.timers(step.after)]
            for timer in gone:  # fired, or moved on by the step: deciding it again is refused
                seen += 1
                later = Inputs(max(timer.due_ms, step.inputs.now_ms) + 1, 5, 6)
                before = copy.deepcopy(step.after)
                decided = rules.decide(step.after, 0, timer.payload, later)
                assert isinstance(decided, Rejection), (timer, decided)
                assert step.after == before
    assert seen, "no timer was ever armed"


def test_a_refused_command_changes_nothing(played: Played) -> None:
    module, refused = played.module, 0
    for step in played.steps[:40]:
        if step.seat == 0:
            continue
        for seat in played.info.seats:
            # Another seat sending what the seat on move sent, and every command left empty
            # (by the seat on move too: a one-seat game has no other seat).
            empty = tuple(kind() for kind in module.wire.commands)
            for command in empty if seat.number == step.seat else (step.command, *empty):
                before = copy.deepcopy(step.before)
                decided = module.rules.decide(step.before, seat.number, command, step.inputs)
                if isinstance(decided, Rejection):
                    refused += 1
                    assert decided.code and step.before == before
    assert refused, "no command was refused"


def test_no_viewer_is_shown_what_the_game_hides(played: Played) -> None:
    hidden = played.module.views.hidden
    secrets = 0
    for viewer, shown in played.views.items():
        assert shown, f"{viewer} was shown nothing"
        for message, state in zip(shown, played.view_states[viewer], strict=True):
            # As the gateway writes it; what is hidden depends on the state the push was made
            # for (a Maze player may see a cell later that is hidden now).
            text = json.dumps(message, separators=(",", ":"))
            for secret in hidden(state, viewer):
                secrets += 1
                assert secret not in text, (viewer, secret, message)
    if any(hidden(state, viewer) for state in played.states() for viewer in played.views):
        assert secrets, "the game hides something, and no push was checked against it"


def test_views_are_json_and_an_ack_carries_the_pushes(played: Played) -> None:
    views = played.module.views
    for shown in played.views.values():
        for message in shown:
            assert json.loads(json.dumps(message)) == message and message["type"]
    now = table(played, len(played.events) + 1)
    seat = Viewer(played.info.seats[0].number)
    assert views.snapshot(now, played.state, seat, 0)[0]["type"]
    pushed = [{"type": "x"}]
    assert views.ack(now, pushed)["events"] == pushed


def test_every_push_is_what_the_protocol_document_says(played: Played) -> None:
    """Each view the game's bots were shown validates against its push's schema in
    docs/asyncapi.yaml, written from the game's models (``client.push_models``); the e2e
    client checks the pushes of real matches alike (tests/wire_schemas.py)."""
    modelled = played.module.client.push_models
    checked = 0
    for shown in played.views.values():
        for message in shown:
            check_push(message)
            checked += message["type"] in modelled
    assert checked or not modelled, "no push of a model was shown"


# -- settings ----------------------------------------------------------------------------------


def test_every_game_lists_settings_it_refuses() -> None:
    assert set(BAD_SETTINGS) == set(GAMES)


@pytest.mark.parametrize("game", GAMES)
def test_settings_checks_refuse_bad_values_with_typed_errors(game: str) -> None:
    lobby = STANDARD.find(game).lobby
    for settings, code in BAD_SETTINGS[game]:
        with pytest.raises(SettingsError) as refused:
            lobby.check(settings)
        assert refused.value.code == code


@pytest.mark.parametrize("game", GAMES)
def test_default_settings_pass_their_checks_and_the_json_form(game: str) -> None:
    module = STANDARD.find(game)
    defaults = module.lobby.defaults()
    assert module.lobby.check(defaults) == defaults
    assert module.lobby.check(None) == defaults
    form = module.lobby.form.model_validate(module.lobby.to_form(defaults))
    assert module.lobby.check(module.lobby.from_form(form)) == defaults
    assert unpack(pack(defaults), module.wire.settings) == defaults
    played = module.rules.settings(defaults)
    assert not isinstance(played, Rejection)


def test_maths_warriors_refuses_an_unknown_rule_option_in_the_form() -> None:
    form = SettingsForm(rules={"house_rule": "on"})
    with pytest.raises(SettingsError) as refused:
        STANDARD.find("maths-warriors").lobby.from_form(form)
    assert refused.value.code == "bad_message"


# -- helpers -----------------------------------------------------------------------------------


def _final(played: Played, event: Message) -> bool:
    return isinstance(event, played.module.wire.final)


def _written_types(schemas: Schemas) -> set[str]:
    written = set()
    for type_ in schemas.types():
        try:
            schemas.current(type_)
        except Exception:
            continue
        written.add(type_)
    return written


def test_match_ended_carries_the_final_event(played: Played) -> None:
    assert played.result is not None
    ended = played.result.to_proto(played.info.match_id, played.info.game, played.events[-1])
    assert isinstance(ended, match_pb2.MatchEnded) and ended.game == played.info.game
    assert unpack(ended.detail, played.module.wire.final) == played.events[-1]
    assert [(s.seat, s.rank, s.score) for s in ended.seats] == [
        (s.seat, s.rank, s.score) for s in played.result.seats
    ]


# -- results feed ratings ----------------------------------------------------------------------


def test_a_result_feeds_its_ladder_as_its_ratings_say(played: Played) -> None:
    """What the rating service asks of a game's ``ratings``, on a result the game gave: the
    reason is one it knows; an Elo game rates every seat (the seat ranked first alone gains,
    equal ranks between equal ratings change nothing); statistics rows are the game's sums."""
    result, ratings = played.result, played.module.ratings
    assert result is not None
    assert result.reason in ratings.reasons
    seats = len(played.info.seats)
    if ratings.elo and not ratings.unrated(dataclasses.replace(played.info, mode=RANKED)):
        after = ratings.rate([ratings.start] * seats, result)
        assert len(after) == seats and all(isinstance(r, int) for r in after)
        for seat in result.seats:
            tied = sum(s.rank == seat.rank for s in result.seats) == seats
            if tied:
                assert after[seat.seat - 1] == ratings.start
            elif seat.seat in result.winners and len(result.winners) == 1:
                assert after[seat.seat - 1] > ratings.start
    rows = ratings.statistics(played.info, played.events[-1])
    counted = {name for _, pair in ratings.indices.items() for name in pair}
    for row in rows:
        assert row.kind in {"player", "policy"} and row.key and row.episodes >= 1
        assert counted <= dict(row.counts).keys()
    if not ratings.elo:
        assert rows, "a game that keeps statistics only adds rows for a played match"


@pytest.mark.parametrize("played", WITH_REPLAY, indirect=True)
def test_a_game_s_replay_is_made_from_its_record(played: Played) -> None:
    """The read API's replay: the module's, from the match's events read through the seam."""
    from arena_runtime.readmodels.queries import MatchRecord, MatchSeat

    module = played.module
    assert module.replay is not None
    assert played.result is not None
    opened = match_pb2.MatchOpened(
        match_id=played.info.match_id,
        game=played.info.game,
        seats=[s.to_proto() for s in played.info.seats],
        settings=pack(played.settings),
    )
    payloads = [
        opened,
        *played.events[:-1],
        played.result.to_proto(played.info.match_id, played.info.game, played.events[-1]),
    ]
    events = [
        Event(f"e{n}", match_stream(played.info.match_id), n, type(p).DESCRIPTOR.full_name, p, WHEN)
        for n, p in enumerate(payloads, start=1)
    ]
    seats = [
        MatchSeat(
            seat=s.number,
            player_id=s.player_id,
            display_name=s.display_name,
            ai=s.kind.value == "ai",
            kind=s.kind.value,
            rank=played.result.of(s.number).rank,
        )
        for s in played.info.seats
    ]
    made = module.replay(MatchRecord(played.info.match_id, {}, seats, events))
    text = made if isinstance(made, bytes) else made.model_dump_json().encode()
    assert json.loads(text)


def _thinks_only_about_what_it_names(game: Played) -> int:
    """The match service lets a game think (in a thread) only before the commands its
    ``rules.thinks`` names: about any other command the game must have nothing to think.
    Returns how many of the game's commands were of those."""
    rules = game.module.rules
    named = 0
    for step in game.steps:
        if isinstance(step.command, rules.thinks):
            named += 1
        else:
            assert rules.think(step.before, step.command, 1) is None, step.command
    return named


def test_a_game_thinks_only_about_the_commands_it_names(played: Played) -> None:
    _thinks_only_about_what_it_names(played)


def test_ai_seats_think_only_about_the_commands_their_game_names(
    played_against_ai: Played,
) -> None:
    named = _thinks_only_about_what_it_names(played_against_ai)
    if played_against_ai.module.name == "maths-warriors":
        assert named  # the AI's moves are its timers, thought about
