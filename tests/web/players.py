"""A person at the web client, as the browser tests play it: they read the board the page shows,
choose a move from it, and click (or type) it. Plus the checks every screen gets: axe-core's
accessibility rules and a console free of errors and secrets."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from tests.web.conftest import ARTIFACTS, WEB

AXE = (WEB / "node_modules" / "axe-core" / "axe.min.js").read_text() if WEB.exists() else ""
MOVE_WAIT_MS = 30_000
PASSED = "[data-status=over], button.skip:disabled"
GAME_WAIT_MS = 240_000
#: Phone-sized, as most players of these games hold them.
PHONE: ViewportSize = {"width": 390, "height": 844}
#: The browser logs every 4xx: a player with no finished game yet has no profile (404).
#: Refusals the pages expect and handle, which Chromium logs all the same: a guest's profile not
#: yet made; a replay asked for before the read models have its match or its end (asked again).
EXPECTED_REFUSALS = re.compile(
    r"status of 404 .*/v1/players/p_[0-9a-f]+$"
    r"|status of 40[49] .*/v1/matches/[0-9a-f]+/(replay|events)$"
)
OPERATORS = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}


@dataclass
class Move:
    kind: str  # strength, mind or skip
    target: str = ""
    dice: tuple[str, ...] = ()
    op: str = ""


@dataclass
class Person:
    context: BrowserContext
    page: Page
    console: list[str] = field(default_factory=list)

    # -- arriving -------------------------------------------------------------------------------

    @classmethod
    def arrive(cls, browser: Browser, url: str, path: str = "/#/mw") -> Person:
        context = browser.new_context(viewport=PHONE, base_url=url)
        page = context.new_page()
        person = cls(context, page)
        page.on(
            "console", lambda m: person.console.append(f"{m.type}: {m.text} {m.location['url']}")
        )
        page.on("pageerror", lambda e: person.console.append(f"pageerror: {e}"))
        page.goto(path)
        expect(page.locator(".conn")).to_have_text("● online", timeout=MOVE_WAIT_MS)
        return person

    def close(self) -> None:
        self.context.close()

    @property
    def session_cookie(self) -> str:
        return next(c["value"] for c in self.context.cookies() if c["name"] == "arena_session")

    def check(self, artifacts: Path, name: str) -> None:
        """Screenshot the screen, run axe on it, and look at the console so far."""
        self.page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)
        assert_accessible(self.page, name)
        self.assert_quiet_console()

    def assert_quiet_console(self) -> None:
        errors = [
            line
            for line in self.console
            if line.startswith(("error", "pageerror")) and not EXPECTED_REFUSALS.search(line)
        ]
        assert not errors, errors
        token = self.session_cookie
        assert not any(token in line for line in self.console), "the session token was logged"

    # -- the board ------------------------------------------------------------------------------

    def dice(self, owner: str) -> dict[str, int]:
        found: dict[str, int] = {}
        for button in self.page.locator(f"button.die[data-owner={owner}]").all():
            value = button.get_attribute("data-value")
            if value:
                found[str(button.get_attribute("data-die"))] = int(value)
        return found

    def over(self) -> bool:
        return self.page.locator("[data-status=over]").count() > 0

    def my_turn(self) -> bool:
        return not self.over() and self.page.locator("button.skip").is_enabled()

    def wait_turn_or_over(self, timeout: float = MOVE_WAIT_MS) -> None:
        self.page.locator("[data-status=over], button.skip:enabled").first.wait_for(timeout=timeout)

    def choose(self) -> Move:
        """The move a sensible player sees: the biggest target they can take, by Strength if
        they can, else by Mind with two dice, else a skip."""
        mine, theirs = self.dice("mine"), self.dice("theirs")
        moved_first = self.page.get_by_text("You moved first").count() > 0
        strict = moved_first and len(theirs) == 1  # the First Player Penalty
        targets = sorted(theirs.items(), key=lambda kv: -kv[1])
        for target, value in targets:
            for die, mine_value in sorted(mine.items(), key=lambda kv: kv[1]):
                if mine_value > value or (mine_value == value and not strict):
                    return Move("strength", target, (die,))
        for target, value in targets:
            for (a, av), (b, bv) in itertools.permutations(mine.items(), 2):
                for op in OPERATORS:
                    if _apply(av, op, bv) == value:
                        return Move("mind", target, (a, b), op)
        return Move("skip")

    def play(self, move: Move) -> None:
        """Click the move, checking on the way that Attack lights up only once it would win."""
        page = self.page
        attack = page.locator("button.attack")
        if move.kind == "skip":
            page.locator("button.skip").click()
        else:
            page.locator(f"button.die[data-owner=theirs][data-die={move.target}]").click()
            expect(attack).to_be_disabled()
            if move.kind == "strength":  # the mode stays as the last turn left it
                page.get_by_role("radio", name="Strength (S)").click()
                self._die(move.dice[0]).click()
            else:
                page.get_by_role("radio", name="Mind (M)").click()
                self._die(move.dice[0]).click()
                expect(attack).to_be_disabled()  # one die is not a Mind attack
                if move.op != "+":  # a die after a die gets its "+" by itself
                    page.get_by_role("button", name=OPERATORS[move.op], exact=True).click()
                self._die(move.dice[1]).click()
            try:
                expect(attack).to_be_enabled()
            except AssertionError as exc:
                page.screenshot(path=str(ARTIFACTS / "failed-move.png"), full_page=True)
                shown = page.locator("output.expression").inner_text()
                said = page.locator("#board-status").inner_text()
                raise AssertionError(f"{move}: the page shows {shown!r}, says {said!r}") from exc
            attack.click()
        self.wait_moved()

    def wait_moved(self) -> None:
        """The turn passed (or the game ended): the server has the move."""
        self.page.locator(PASSED).first.wait_for(timeout=MOVE_WAIT_MS)

    def _die(self, die: str) -> Any:
        return self.page.locator(f"button.die[data-owner=mine][data-die={die}]")

    def play_turn(self) -> Move:
        move = self.choose()
        self.play(move)
        return move


def _apply(a: int, op: str, b: int) -> Fraction | None:
    x, y = Fraction(a), Fraction(b)
    if op == "/" and y == 0:
        return None
    return {"+": x + y, "-": x - y, "*": x * y, "/": x / y if y else None}[op]


def assert_accessible(page: Page, name: str) -> None:
    """axe-core's rules, run in the page: no serious or critical violation."""
    assert AXE, "axe-core is missing: `make install` (npm ci in services/gateway/web)"
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE)  # by the protocol, so the page's CSP does not stop it
    found = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .map(v => ({id: v.id, impact: v.impact, help: v.help,
                        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"""
    )
    serious = [v for v in found if v["impact"] in ("serious", "critical")]
    assert not serious, f"{name}: {serious}"


def play_to_the_end(first: Person, second: Person) -> None:
    """Two people at one game (both boards shown), each moving when their page says it is their
    turn; the turn alternates, so each waits on its own page after the other's move."""
    mover, waiter = (first, second) if first.my_turn() else (second, first)
    while not (first.over() and second.over()):
        if mover.my_turn():
            mover.play_turn()
        waiter.wait_turn_or_over(timeout=GAME_WAIT_MS)
        mover, waiter = waiter, mover
    expect(first.page.locator(".game-over")).to_be_visible()
    expect(second.page.locator(".game-over")).to_be_visible()
