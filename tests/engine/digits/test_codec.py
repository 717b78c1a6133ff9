"""Events and commands survive JSON both ways; bad records are refused whole."""

from __future__ import annotations

import json

import pytest
from arena_engine.digits import game as g
from arena_engine.digits.codec import (
    CodecError,
    command_from_dict,
    event_from_dict,
    to_dict,
)

from tests.engine.digits.test_game import STRONG, Game


def test_every_event_of_a_game_round_trips_through_json() -> None:
    game = Game()
    game.open_training()
    assert game.s.training_question is not None
    game.do(g.AnswerTraining(game.s.training_question.answer))
    game.do(g.Reroll())
    game.do(g.EndShop(), opponent=STRONG)
    game.do(g.Arrange(7))
    game.do(g.Fight())
    decoded = [event_from_dict(json.loads(json.dumps(to_dict(e)))) for e in game.events]
    assert decoded == game.events
    assert g.replay(decoded) == game.state
    assert {type(e).__name__ for e in game.events} >= {
        "GameStarted",
        "QuestionShown",
        "ShopOpened",
        "Bought",
        "TrainingShown",
        "TrainingAnswered",
        "Rerolled",
        "ShopEnded",
        "Arranged",
        "CombatFought",
        "RoundStarted",
    }


def test_commands_round_trip() -> None:
    for command in (g.StartGame("room", 1, 2, room_rounds=8), g.Buy("bright", 5), g.Move(1, 8)):
        assert command_from_dict(json.loads(json.dumps(to_dict(command)))) == command


@pytest.mark.parametrize(
    ("record", "code"),
    [
        ({"type": "Nope"}, "unknown_type"),
        ({"type": "Moved", "src": 1, "dst": 2, "extra": 0}, "unknown_field"),
        ({"type": "Moved", "src": 1}, "bad_field"),
        (
            {
                "type": "ShopEnded",
                "saved": [1],
                "reserve": 0,
                "opponent": None,
                "opponent_info": None,
                "faceoff_deadline_ms": None,
            },
            "bad_field",
        ),
    ],
)
def test_bad_records_are_refused(record: dict[str, object], code: str) -> None:
    with pytest.raises(CodecError) as err:
        event_from_dict(record)
    assert err.value.code == code
