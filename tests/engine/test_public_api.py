"""Every game's package offers the same event-sourced surface, as python-chess offers one Board."""

from __future__ import annotations

import inspect
from types import ModuleType

import arena_engine.digits as digits
import arena_engine.digits.errors as digits_errors
import arena_engine.maths_warriors as maths_warriors
import arena_engine.matrix_games as matrix_games
import arena_engine.maze as maze
import pytest
from arena_engine.digits import (
    codec,
    combat,
    economy,
    faceoff,
    ghosts,
    ladder,
    leaderboards,
    paris,
    questions,
    schedules,
    slate,
    status,
    vector_input,
)
from arena_engine.digits.commands import StartGame

SURFACE = ("decide", "apply", "Rejection", "Event", "Command", "event_to_dict", "event_from_dict")


@pytest.mark.parametrize(
    "game", [digits, maths_warriors, matrix_games, maze], ids=lambda m: m.__name__
)
def test_each_game_exports_the_event_sourced_surface(game: ModuleType) -> None:
    for name in SURFACE:
        assert name in game.__all__, name
        assert getattr(game, name) is not None


def test_every_game_error_is_a_value_error_with_a_code() -> None:
    for error in (
        maths_warriors.MathsWarriorsError(maths_warriors.ErrorCode.INVALID_CLOCKS),
        matrix_games.MatrixGamesError("bad", "bad input"),
        digits.DigitsError("bad"),
        maze.MazeError(maze.ErrorCode.BAD_MAZE),
    ):
        assert isinstance(error, ValueError) and error.code


def test_rejections_share_one_wire_form() -> None:
    assert digits.Rejection("slate_full").to_dict() == {"error": "slate_full"}
    rejection = maths_warriors.decide(
        maths_warriors.GameState(), maths_warriors.Skip(1), maths_warriors.Context(0, 1)
    )
    assert isinstance(rejection, maths_warriors.Rejection)
    assert rejection.to_dict() == {"error": "not_started"}
    refused = matrix_games.decide(None, matrix_games.EndEpisode("complete"))
    assert isinstance(refused, matrix_games.Rejection)
    assert refused.to_dict() == {"error": "not_started"}
    unstarted = maze.decide(None, maze.ProcessNext(), maze.Context())
    assert isinstance(unstarted, maze.Rejection)
    assert unstarted.to_dict() == {"error": "not_started"}


def test_events_round_trip_through_dicts() -> None:
    started = digits.decide(None, StartGame("casual", 1, 2), digits.Context(now_ms=0))
    assert isinstance(started, list)
    for event in started:
        assert digits.event_from_dict(digits.event_to_dict(event)) == event
    begun = matrix_games.decide(None, matrix_games.StartEpisode(matrix_games.Settings(seed=3)))
    assert isinstance(begun, list)
    for event in begun:
        assert matrix_games.event_from_dict(matrix_games.event_to_dict(event)) == event


def test_every_digits_error_is_a_digits_error_with_a_code() -> None:
    modules = (
        codec,
        combat,
        economy,
        faceoff,
        ghosts,
        questions,
        slate,
        status,
        vector_input,
        ladder,
        leaderboards,
        paris,
        schedules,
    )
    errors = [
        cls
        for module in modules
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__ and issubclass(cls, Exception)
    ]
    assert len(errors) == 13
    for cls in errors:
        assert issubclass(cls, digits_errors.DigitsError) and issubclass(cls, ValueError)
        error = cls("some_code")
        assert error.code == "some_code" and str(error) == "some_code"
