"""Duel results and the credits ledger (stakes held, paid or returned; never below zero)."""

from __future__ import annotations

from arena_engine.digits import credits as cr
from arena_engine.digits.commands import Rejection
from arena_engine.digits.duels import DuelSide, duel_outcome, settle_stakes, stake_hold_id
from hypothesis import given
from hypothesis import strategies as st


def done(player: str, wins: int, losses: int, margin: int = 0, focus: int = 30) -> DuelSide:
    return DuelSide(player, True, True, False, wins, losses, margin, focus)


def test_the_best_record_wins_in_the_seeds_order() -> None:
    cases = [
        (done("a", 8, 2), done("b", 7, 0), "wins"),
        (done("a", 5, 2), done("b", 5, 3), "losses"),
        (done("a", 5, 3, 40), done("b", 5, 3, 39), "margin"),
        (done("a", 5, 3, 40, 61), done("b", 5, 3, 40, 60), "focus_right"),
    ]
    for a, b, criterion in cases:
        for first, second in ((a, b), (b, a)):
            outcome = duel_outcome(first, second, at_deadline=False)
            assert outcome is not None and outcome.result == "win"
            assert (outcome.winner, outcome.loser, outcome.decided_by) == ("a", "b", criterion)


def test_a_full_tie_is_a_draw_and_returns_both_stakes() -> None:
    outcome = duel_outcome(done("a", 5, 3, 7, 50), done("b", 5, 3, 7, 50), at_deadline=False)
    assert outcome is not None and (outcome.result, outcome.reason) == ("draw", "tie")
    assert settle_stakes(outcome, "d1", 20, ("a", "b")) == {
        "a": [cr.Release(stake_hold_id("d1", "a"))],
        "b": [cr.Release(stake_hold_id("d1", "b"))],
    }


def test_undecided_until_both_are_over_or_the_deadline() -> None:
    playing = DuelSide("b", started=True, wins=9)
    assert duel_outcome(done("a", 8, 0), playing, at_deadline=False) is None
    outcome = duel_outcome(done("a", 8, 0), playing, at_deadline=True)  # unfinished counts
    assert outcome is not None and outcome.winner == "b"


def test_deadline_rules_never_started_forfeits_neither_cancels() -> None:
    never = DuelSide("b")
    outcome = duel_outcome(done("a", 0, 3), never, at_deadline=True)
    assert outcome is not None and (outcome.winner, outcome.reason) == ("a", "not_started")
    outcome = duel_outcome(DuelSide("a"), DuelSide("b"), at_deadline=True)
    assert outcome is not None and (outcome.result, outcome.winner) == ("cancelled", None)
    assert settle_stakes(outcome, "d", 5, ("a", "b"))["a"] == [cr.Release(stake_hold_id("d", "a"))]


def test_forfeiting_loses_whatever_the_record() -> None:
    quitter = DuelSide("a", True, True, True, wins=7, losses=0, margin=99)
    outcome = duel_outcome(quitter, DuelSide("b", started=True), at_deadline=False)
    assert outcome is not None and (outcome.winner, outcome.reason) == ("b", "forfeit")
    both = duel_outcome(quitter, DuelSide("b", True, True, True), at_deadline=False)
    assert both is not None and (both.result, both.reason) == ("draw", "both_forfeited")


def play(ledger: cr.Ledger, command: cr.LedgerCommand) -> tuple[cr.Ledger, object]:
    decided = cr.decide(ledger, command)
    if isinstance(decided, list):
        for event in decided:
            ledger = cr.apply(ledger, event)
    return ledger, decided


def test_a_duel_paid_through_both_ledgers() -> None:
    a, b = cr.Ledger(), cr.Ledger()
    a, _ = play(a, cr.Credit("prize", 30, "season_prize"))
    b, _ = play(b, cr.Credit("prize", 30, "season_prize"))
    for name in ("a", "b"):
        ledger = a if name == "a" else b
        ledger, decided = play(ledger, cr.Hold(stake_hold_id("d", name), 20, "duel_stake"))
        assert decided == [cr.Held(stake_hold_id("d", name), 20, "duel_stake", 10)]
        a, b = (ledger, b) if name == "a" else (a, ledger)
    assert (a.balance, a.held) == (10, 20)
    outcome = duel_outcome(done("a", 8, 1), done("b", 3, 3), at_deadline=False)
    assert outcome is not None
    orders = settle_stakes(outcome, "d", 20, ("a", "b"))
    for command in orders["a"]:
        a, _ = play(a, command)
    for command in orders["b"]:
        b, _ = play(b, command)
    assert (a.balance, a.held, b.balance, b.held) == (50, 0, 10, 0)
    for command in orders["a"]:  # retried after a crash: nothing moves twice
        a, decided = play(a, command)
        assert decided == []
    assert a.balance == 50


def test_the_balance_never_goes_below_zero_and_bad_input_changes_nothing() -> None:
    ledger, _ = play(cr.Ledger(), cr.Credit("c1", 10, "season_prize"))
    for command, code in (
        (cr.Debit("d1", 11, "shop"), "insufficient_credits"),
        (cr.Hold("h1", 11, "duel_stake"), "insufficient_credits"),
        (cr.Credit("c2", 0, "x"), "bad_amount"),
        (cr.Credit("c2", -5, "x"), "bad_amount"),
        (cr.Credit("", 5, "x"), "bad_id"),
        (cr.Credit("c2", 5, ""), "bad_reason"),
        (cr.Release("nope"), "unknown_hold"),
        (cr.Capture("nope", "duel_lost"), "unknown_hold"),
    ):
        assert cr.decide(ledger, command) == Rejection(code)
    assert cr.decide(ledger, cr.Credit("c1", 10, "season_prize")) == []  # already recorded


def test_season_prizes_as_ledger_credits() -> None:
    credits = cr.season_prize_credits("2024-03", {"ann": 150, "guest": 0, "bob": 25})
    assert credits == {
        "ann": cr.Credit("season-prize:2024-03:ann", 150, "season_prize"),
        "bob": cr.Credit("season-prize:2024-03:bob", 25, "season_prize"),
    }


ledger_commands = st.one_of(
    st.builds(cr.Credit, st.sampled_from("abcdef"), st.integers(-2, 30), st.just("r")),
    st.builds(cr.Debit, st.sampled_from("ghijk"), st.integers(-2, 30), st.just("r")),
    st.builds(cr.Hold, st.sampled_from("lmn"), st.integers(-2, 30), st.just("r")),
    st.builds(cr.Release, st.sampled_from("lmnz")),
    st.builds(cr.Capture, st.sampled_from("lmnz"), st.just("r")),
)


@given(st.lists(ledger_commands, max_size=40))
def test_every_movement_is_an_event_and_the_balance_adds_up(commands: list) -> None:
    ledger = cr.Ledger()
    credited = debited = captured = 0
    for command in commands:
        before = ledger
        ledger, decided = play(ledger, command)
        if not isinstance(decided, list):
            assert ledger is before
            continue
        for event in decided:
            assert event.balance >= 0
            credited += event.amount if isinstance(event, cr.Credited) else 0
            debited += event.amount if isinstance(event, cr.Debited) else 0
            captured += event.amount if isinstance(event, cr.Captured) else 0
        assert ledger.balance >= 0 and all(v > 0 for v in ledger.holds.values())
    assert ledger.balance + ledger.held == credited - debited - captured
