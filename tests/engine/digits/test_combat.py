"""Combat rules, one at a time, on small hand-worked slates."""

from __future__ import annotations

from arena_engine.digits.catalogue import load
from arena_engine.digits.combat import fight
from arena_engine.digits.reference_combat import reference_fight
from arena_engine.digits.slate import Digit, make_slate
from arena_engine.digits.targeting import target_cell
from hypothesis import given, settings
from hypothesis import strategies as st

CAT = load()
D = Digit


def slate(**cells: Digit) -> tuple[Digit | None, ...]:
    return make_slate({int(k[1:]): v for k, v in cells.items()})


def start_of(report: tuple[dict[str, object], ...] | None, step: str) -> dict[str, object]:
    assert report is not None
    return next(e for e in report if e.get("step") == step or e.get("type") == step)


def test_target_order_left_first_then_back_row() -> None:
    assert target_cell(2, [True, True, False, True] + [False] * 4) == 1
    assert target_cell(1, [True, False, True, False] + [False] * 4) == 0
    assert target_cell(0, [False] * 4 + [False, True, True, False]) == 5
    assert target_cell(0, [False] * 8) is None


def test_hand_worked_even_against_odd_both_emptied_more_hp_wins() -> None:
    # Even 2/6 and Odd 2/5 both get +2: 4 a hit; after exchange 1: 2 HP vs 1 HP; both fall in 2.
    r = fight(slate(c1=D("even")), slate(c1=D("odd")))
    assert (r.result, r.end, r.exchanges, r.margin) == ("win", "both_emptied", 2, 0)


def test_minus_never_below_zero_and_zero_cuts_hits() -> None:
    # Minus L3 takes 4 from a Zero L3 (ATK 4): 0, so it never hits; Zero cuts 4 by 3 to 1.
    r = fight(slate(c1=D("zero", 3), c5=D("minus", 3)), slate(c1=D("zero", 3)), report=True)
    after = start_of(r.report, "additions")["sides"]
    assert after[1][0]["atk"] == 0  # type: ignore[index]
    first = next(e for e in r.report or () if e.get("n") == 1)
    assert first["hits"] == [  # only our Zero hits: 0-ATK digits do not hit
        {"from": [0, 1], "to": [1, 1], "hit": 4, "ignored": False, "shield": 0, "damage": 1}
    ]


def test_plus_and_power_raise_the_column_mate() -> None:
    r = fight(slate(c1=D("odd"), c5=D("plus")), slate(c1=D("zero")), report=True)
    assert start_of(r.report, "additions")["sides"][0][0]["atk"] == 2 + 3  # type: ignore[index]
    r = fight(slate(c1=D("odd"), c5=D("power")), slate(c1=D("zero")), report=True)
    # ATK 2: 2² - 2 = 2 more (cap 3).
    assert start_of(r.report, "power")["sides"][0][0]["atk"] == 4  # type: ignore[index]


def test_twins_pair_and_sigma_and_square() -> None:
    r = fight(
        slate(c1=D("twins"), c2=D("twins"), c5=D("sigma"), c6=D("square")),
        slate(c1=D("zero")),
        report=True,
    )
    twins = start_of(r.report, "twins")["sides"][0]  # type: ignore[index]
    assert twins[0]["atk"] == 2 + 2 and twins[0]["hp"] == 4 + 2  # type: ignore[index]
    assert start_of(r.report, "sigma")["sides"][0][4]["atk"] == 2 + 3  # type: ignore[index]
    shields = start_of(r.report, "shields")["sides"][0]  # type: ignore[index]
    assert shields[5]["shield"] == 2 and shields[1]["shield"] == 2  # type: ignore[index]


def test_average_one_per_side_highest_level() -> None:
    r = fight(
        slate(c1=D("average"), c2=D("average", 2), c3=D("plus"), c4=D("even")),
        slate(c1=D("zero")),
        report=True,
    )
    # ATK 3, 4, 1, 2 -> average 10 // 4 = 2; the level-2 Average (value 1) raises 1 to 3.
    atks = [c["atk"] for c in start_of(r.report, "average")["sides"][0][:4]]  # type: ignore[index]
    assert atks == [3, 4, 3, 2]


def test_modulo_ignores_multiples() -> None:
    # Modulo L3 (modulus 2) ignores the even hits of a Twins (ATK 2): the Twins can never win.
    r = fight(slate(c1=D("twins")), slate(c1=D("modulo", 3)), report=True)
    first = next(e for e in r.report or () if e.get("n") == 1)
    assert first["hits"][0]["ignored"] is True  # type: ignore[index]
    assert r.result == "loss"


def test_splitter_splits_on_the_digit_behind() -> None:
    r = fight(slate(c1=D("splitter")), slate(c1=D("plus"), c5=D("twins")))
    # Splitter 3/8: 2 + 2 on Plus (5 HP) and Twins (5 HP) each exchange; both fall at the
    # third, while the Plus hit it for 1 a time.
    assert (r.result, r.margin, r.exchanges) == ("win", 5, 3)


def test_half_hits_at_least_half_the_target_hp() -> None:
    r = fight(slate(c1=D("half")), slate(c1=D("zero", 3)), report=True)
    first = next(e for e in r.report or () if e.get("n") == 1)
    assert first["hits"][0]["hit"] == 6  # Zero L3 has 12 HP; ATK 3 < 6


def test_double_multiplies_the_mate_and_reach_hits_from_the_back() -> None:
    r = fight(slate(c1=D("odd"), c5=D("double")), slate(c1=D("zero", 3)), report=True)
    first = next(e for e in r.report or () if e.get("n") == 1)
    assert first["hits"][0]["hit"] == (2 + 2) * 2
    r = fight(slate(c1=D("zero", 3), c5=D("fibo")), slate(c1=D("zero", 3)), report=True)
    first = next(e for e in r.report or () if e.get("n") == 1)
    assert [h["from"] for h in first["hits"]] == [[0, 1], [0, 5], [1, 1]]  # type: ignore[index]


def test_pi_hits_the_whole_row_on_exchange_three() -> None:
    r = fight(
        slate(c1=D("pi", 3), c5=D("square", 3)),
        slate(c1=D("plus"), c2=D("plus"), c3=D("plus"), c4=D("plus")),
        report=True,
    )
    hits = {
        e["n"]: [h["to"] for h in e["hits"] if h["from"] == [0, 1]]  # type: ignore[index]
        for e in r.report or ()
        if e["type"] == "exchange"
    }
    # Pi L3 (ATK 5) needs two exchanges per Plus (6 HP); at exchange 3 it hits the whole row.
    assert hits[1] == [[1, 1]] and hits[2] == [[1, 1]]
    assert hits[3] == [[1, 2], [1, 3], [1, 4]] and hits[4] == [[1, 2]]


def test_carry_gives_its_atk_to_the_digit_moving_up() -> None:
    r = fight(
        slate(c1=D("pi"), c5=D("square")),
        slate(c1=D("carry"), c2=D("modulo", 3), c5=D("delta")),
        report=True,
    )
    carry = next(e for e in r.report or () if e.get("carries"))
    assert carry["carries"] == [{"from": [1, 1], "to": [1, 5], "atk": 3}]
    assert carry["moves"] == [[1, 5, 1]]


def test_after_exchange_twelve_by_hp_then_draw() -> None:
    us = slate(c1=D("zero", 3), c5=D("minus", 3))
    assert fight(us, slate(c1=D("zero", 2), c5=D("minus", 3))).to_json() == {
        "result": "win", "margin": 2, "exchanges": 12, "hp": [18, 16], "end": "after_limit",
    }  # fmt: skip
    assert fight(us, us).result == "draw"


def test_report_ends_with_the_result_and_does_not_change_it() -> None:
    a = slate(c1=D("pi"), c2=D("delta", 2), c5=D("double"), c6=D("carry"))
    b = slate(c1=D("splitter"), c2=D("prime", 3), c3=D("half"), c7=D("abacus"))
    plain, full = fight(a, b), fight(a, b, report=True)
    assert full.report is not None and full.report[-1]["type"] == "end"
    assert full.report[-1]["result"] == plain.result
    assert (plain.result, plain.margin, plain.exchanges) == (
        full.result, full.margin, full.exchanges,
    )  # fmt: skip


digits = st.one_of(st.none(), st.builds(Digit, st.sampled_from(CAT.names()), st.integers(1, 3)))
slates = st.tuples(*[digits] * 8)


@settings(max_examples=150, deadline=None)
@given(slates, slates)
def test_both_sides_follow_the_same_rules(
    a: tuple[Digit | None, ...], b: tuple[Digit | None, ...]
) -> None:
    ours, theirs = fight(a, b), fight(b, a)
    mirror = {"win": "loss", "loss": "win", "draw": "draw"}
    assert theirs.result == mirror[ours.result]
    assert theirs.margin == -ours.margin
    assert ours.hp == (theirs.hp[1], theirs.hp[0])


@settings(max_examples=300, deadline=None)
@given(slates, slates)
def test_fast_combat_agrees_with_the_reference(
    a: tuple[Digit | None, ...], b: tuple[Digit | None, ...]
) -> None:
    fast = fight(a, b)
    assert (fast.result, fast.margin, fast.exchanges) == reference_fight(a, b)
