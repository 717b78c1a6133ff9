"""Settings ranges and order validation: bad input is a typed error and changes nothing."""

from __future__ import annotations

import pytest
from arena_engine.matrix_games import Order, OrderError, Settings, SettingsError, Sim
from arena_engine.matrix_games.orders import clean_text, gather, hold, hunt


def test_defaults() -> None:
    s = Settings()
    assert (s.matrix, s.beats, s.ticks_per_beat, s.max_ticks) == (
        "running-with-scissors",
        12,
        50,
        600,
    )
    assert s.play_deadline_seconds == 720
    assert Settings.from_json(s.to_json()) == s


@pytest.mark.parametrize(
    ("key", "value", "code"),
    [
        ("num_agents", 7, "setting_out_of_range"),
        ("beats", 25, "setting_out_of_range"),
        ("ticksPerBeat", 9, "setting_out_of_range"),
        ("tokenCap", 1, "setting_out_of_range"),
        ("beamRange", 9, "setting_out_of_range"),
        ("viewRadius", 0, "setting_out_of_range"),
        ("stepCooldownTicks", 11, "setting_out_of_range"),
        ("tokenRespawnTicks", 4, "setting_out_of_range"),
        ("beats", "12", "invalid_setting"),
        ("beats", True, "invalid_setting"),
        ("matrix", "nope", "unknown_variant"),
        ("colour", 1, "unknown_setting"),
        ("episodeTimeoutSeconds", 300, "settings_inconsistent"),
    ],
)
def test_bad_settings(key: str, value: object, code: str) -> None:
    with pytest.raises(SettingsError) as err:
        Settings.from_json({key: value})
    assert err.value.code == code


def test_bad_orders_change_nothing() -> None:
    sim = Sim(Settings(matrix="prisoners-dilemma", beats=1))
    good = [gather(0)] * 8
    for bad, code in (
        ([gather(2), *good[1:]], "token_out_of_range"),
        ([hunt(0), *good[1:]], "invalid_target"),
        ([Order("dance"), *good[1:]], "unknown_intent"),
        (good[:7], "wrong_order_count"),
        ([Order("hold", token=1), *good[1:]], "unexpected_argument"),
    ):
        with pytest.raises(OrderError) as err:
            sim.install_orders(bad)
        assert err.value.code == code
        assert sim.events == [] and sim.orders[0] == hold()
    sim.install_orders(good)
    assert len(sim.events) == 8


def test_clean_text_cuts_on_code_points_and_marks_the_cut() -> None:
    assert clean_text(" a\nb ", 64) == "a b"
    assert clean_text("é" * 70, 64) == "é" * 63 + "\u2026"
    assert clean_text("x" * 64, 64) == "x" * 64
