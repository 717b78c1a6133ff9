"""The pages around the games in a real Chromium: the home page, the tutorial walked through as
the rulebook's worked turn, the account page; each screenshot and checked by axe-core."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.web.players import Person

pytestmark = pytest.mark.slow


def test_the_home_page_and_the_tutorial_s_worked_turn(
    browser: Browser, server: str, artifacts: Path
) -> None:
    person = Person.arrive(browser, server, "/#/")
    try:
        page = person.page
        expect(page.get_by_role("link", name="Play Maths Warriors")).to_be_visible()
        expect(page.locator(".identity .tier")).to_have_attribute("data-tier", "Beginner")
        person.check(artifacts, "00-home")

        page.goto("#/tutorial")
        lesson = page.locator("p.lesson")
        attack = page.locator("button.attack")
        page.get_by_role("button", name="Next").click()
        # The gate: only the step the lesson asks for does anything.
        page.locator("button.die[data-owner=theirs][data-die=D4]").click()
        expect(page.locator("button.die[data-owner=theirs][data-die=D4]")).to_have_attribute(
            "aria-pressed", "false"
        )
        page.locator("button.die[data-owner=theirs][data-die=D20]").click()
        expect(lesson).to_have_attribute("data-lesson", "2")
        page.locator("button.die[data-owner=mine][data-die=D12]").click()
        expect(lesson).to_have_attribute("data-lesson", "3")
        expect(attack).to_be_disabled()  # 11 is not ≥ 19
        page.keyboard.press("m")
        # Switching to Mind carries the chosen die into the expression (§4.3).
        expect(page.locator("output.expression")).to_contain_text("11")
        page.locator("button.die[data-owner=mine][data-die=D8]").click()
        expect(page.locator("output.expression")).to_contain_text("11 + 6")
        expect(attack).to_be_disabled()  # 17 ≠ 19
        page.locator("button.die[data-owner=mine][data-die=D4]").click()
        expect(page.locator("output.expression")).to_contain_text("11 + 6 + 2 = 19")
        expect(lesson).to_have_attribute("data-lesson", "5")
        expect(attack).to_be_enabled()
        person.check(artifacts, "11-tutorial")
        attack.click()
        expect(lesson).to_have_attribute("data-lesson", "6")
        expect(page.locator("button.die[data-owner=theirs][data-die=D20]")).to_have_attribute(
            "data-value", ""
        )
        for die, value in (("D12", "4"), ("D8", "1"), ("D4", "3")):
            expect(page.locator(f"button.die[data-owner=mine][data-die={die}]")).to_have_attribute(
                "data-value", value
            )
        expect(page.locator(".game-over")).to_have_count(0)  # the tutorial has no victory modal

        page.goto("#/account")
        expect(page.get_by_role("button", name="Create account")).to_be_visible()
        person.check(artifacts, "12-sign-up")
    finally:
        person.close()


def test_a_puzzle_solved_on_the_board_and_another_given_up(
    browser: Browser, server: str, artifacts: Path
) -> None:
    from arena_engine.maths_warriors.puzzles import generate

    engine = generate("hard", 4)
    solution = engine.solutions[0]
    person = Person.arrive(browser, server, "/#/puzzles/hard/4")
    try:
        page = person.page
        lesson = page.locator("p.lesson")
        expect(lesson).to_have_attribute("data-target", str(engine.target))
        attack = page.locator("button.attack")
        names = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}
        names.update({"(": "open bracket", ")": "close bracket"})
        page.locator("button.die[data-owner=theirs][data-die=D20]").click()
        page.get_by_role("radio", name="Mind (M)").click()
        for token in solution.tokens:
            if isinstance(token, str):
                page.get_by_role("button", name=names[token], exact=True).click()
            else:
                page.locator(f"button.die[data-owner=mine][data-die={token.die}]").click()
        expect(page.locator("output.expression")).to_contain_text(f"= {engine.target}")
        person.check(artifacts, "13-puzzle")
        attack.click()
        verdict = page.locator(".verdict")
        expect(verdict).to_have_attribute("data-solved", "true")
        expect(page.locator("ul.solutions li")).to_have_count(len(engine.solutions))

        # A new puzzle gets a seed of its own in the address; giving up shows every solution.
        page.get_by_role("button", name="Expert").click()
        expect(page).to_have_url(re.compile(r"#/puzzles/expert/\d+$"))
        seed = int(page.url.rsplit("/", 1)[1])
        expert = generate("expert", seed)
        expect(lesson).to_have_attribute("data-target", str(expert.target))
        page.get_by_role("button", name="Hint").click()
        expect(verdict).to_contain_text("Hint: use ")
        page.get_by_role("button", name="Show the solutions").click()
        expect(page.locator("ul.solutions li")).to_have_count(len(expert.solutions))
        expect(verdict).to_have_attribute("data-solved", "false")
        person.assert_quiet_console()
    finally:
        person.close()
