"""Maths Warriors in a real Chromium: people who sign up, share a room link, play a whole game by
clicking, ask for a rematch and resign; a player against the AI by keyboard alone, through a
reload, to the end and its replay. Every screen is screenshot (var/test-artifacts/web/) and
checked by axe-core."""

from __future__ import annotations

import asyncio
import queue
import re
import threading
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.test_games import room_game
from tests.harness.support import run_sync
from tests.web.players import GAME_WAIT_MS, MOVE_WAIT_MS, Person, play_to_the_end

pytestmark = pytest.mark.slow


def sign_up(person: Person, username: str) -> None:
    page = person.page
    page.goto("#/account")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("correct horse battery staple")
    expect(page.get_by_label("Keep this guest's games (upgrade)")).to_be_checked()
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name=f"Signed in as {username}")).to_be_visible()
    expect(page.locator(".identity .name")).to_have_text(username)
    expect(page.locator(".conn")).to_have_text("● online", timeout=MOVE_WAIT_MS)


def test_two_people_play_a_ranked_room_game_then_a_rematch(
    browser: Browser, server: str, artifacts: Path
) -> None:
    host = Person.arrive(browser, server)
    guest = Person.arrive(browser, server)
    try:
        # Arriving needs no form: each is a guest at once, with a tier from local wins.
        expect(host.page.locator(".identity .name")).to_have_text(re.compile(r"^Guest_\w{4}$"))
        host.check(artifacts, "01-lobby")
        tag = uuid.uuid4().hex[:6]
        sign_up(host, f"host_{tag}")
        host.check(artifacts, "02-account")
        sign_up(guest, f"visitor_{tag}")

        # The host creates a ranked room with a short clock and shares the link.
        host.page.goto("#/mw")
        host.page.get_by_label("Game clock (minutes)").fill("1")
        host.page.get_by_label("Ranked (two accounts)").check()
        host.page.get_by_role("button", name="Create room").click()
        code = host.page.locator("[data-room-code]").get_attribute("data-room-code")
        assert code and re.fullmatch(r"[23456789A-HJ-NP-Z]{5}", code)
        link = host.page.locator("a.share-link").get_attribute("href")
        assert link == f"{server}/#/mw/join/{code}"
        host.check(artifacts, "03-room")

        guest.page.goto(link)
        for person in (host, guest):
            expect(person.page.locator("[data-match]")).to_be_visible(timeout=MOVE_WAIT_MS)
        expect(host.page.get_by_text(f"Room {code}")).to_be_visible()
        expect(host.page.get_by_text("Ranked", exact=True)).to_be_visible()
        host.check(artifacts, "04-board")

        play_to_the_end(host, guest)
        reasons = {p.page.locator(".reason").get_attribute("data-reason") for p in (host, guest)}
        assert len(reasons) == 1 and reasons <= {"all_captured", "timeout"}
        winners = {p.page.locator(".game-over").get_attribute("data-winner") for p in (host, guest)}
        assert len(winners) == 1
        headings = sorted(p.page.locator("#game-over-title").inner_text() for p in (host, guest))
        assert headings == ["You lost", "You won!"]
        host.check(artifacts, "05-game-over")

        # A rematch: one asks, the other accepts, a new game starts for both (seats swapped).
        first_match = host.page.locator("[data-match]").get_attribute("data-match")
        host.page.get_by_role("button", name="Rematch").click(timeout=MOVE_WAIT_MS)
        guest.page.get_by_role("button", name="Accept rematch").click(timeout=MOVE_WAIT_MS)
        for person in (host, guest):
            expect(person.page.locator("[data-status=playing]")).to_be_visible(timeout=MOVE_WAIT_MS)
        assert host.page.locator("[data-match]").get_attribute("data-match") != first_match

        # The host's profile, open in someone else's browser before the game ends, shows it
        # once it is in the read models, without a reload.
        host_id = host.context.request.get(f"{server}/v1/me").json()["player_id"]
        onlooker = Person.arrive(browser, server, f"/#/profile/{host_id}")
        expect(onlooker.page.locator("ul.history li")).to_have_count(1, timeout=MOVE_WAIT_MS)

        # Forfeit: the guest resigns, both see it.
        guest.page.get_by_role("button", name="Resign…").click()
        guest.page.get_by_role("button", name="Yes, resign").click()
        for person, heading in ((host, "You won!"), (guest, "You lost")):
            expect(person.page.locator("#game-over-title")).to_have_text(heading)
            expect(person.page.locator(".reason")).to_have_attribute("data-reason", "forfeit")
        expect(onlooker.page.locator("ul.history li")).to_have_count(2, timeout=MOVE_WAIT_MS)
        onlooker.close()

        # Both ranked games are on the leaderboard and in each profile, with a tier.
        host.page.goto("#/leaderboard")
        board = host.page.locator("table.leaderboard")
        expect(board).to_contain_text(f"host_{tag}", timeout=GAME_WAIT_MS)
        expect(board).to_contain_text(f"visitor_{tag}", timeout=GAME_WAIT_MS)
        host.check(artifacts, "06-leaderboard")
        host.page.goto("#/profile")
        expect(host.page.locator("table td[data-tier]")).to_have_text(re.compile(r"^[A-Z]\w+$"))
        expect(host.page.locator("ul.history li")).to_have_count(2, timeout=GAME_WAIT_MS)
        host.check(artifacts, "07-profile")

        # Signing out leaves a new guest; signing in brings the account back.
        guest.page.goto("#/account")
        guest.page.get_by_role("button", name="Sign out").click()
        expect(guest.page.locator(".identity .name")).to_have_text(re.compile(r"^Guest_"))
        guest.page.get_by_role("button", name="I have an account").click()
        guest.page.get_by_label("Username").fill(f"visitor_{tag}")
        guest.page.get_by_label("Password").fill("correct horse battery staple")
        guest.page.locator("form button[type=submit]").click()
        expect(guest.page.locator(".identity .name")).to_have_text(f"visitor_{tag}")
        for person in (host, guest):
            person.assert_quiet_console()
    finally:
        host.close()
        guest.close()


def start_ai_game(person: Person) -> str:
    page = person.page
    page.get_by_label("Game clock (minutes)").fill("1")
    page.get_by_role("button", name="Easy").click()
    board = page.locator("[data-match]")
    expect(board).to_be_visible(timeout=MOVE_WAIT_MS)
    return str(board.get_attribute("data-match"))


def value_keys(value: int, shift: bool = False) -> list[str]:
    return [f"{'Shift+' if shift else ''}Digit{digit}" for digit in str(value)]


def test_a_move_by_keyboard_alone(browser: Browser, server: str, artifacts: Path) -> None:
    person = Person.arrive(browser, server)
    try:
        page = person.page
        page.keyboard.press("Tab")  # the skip link: the page is reachable from the keyboard
        expect(page.locator(".skip-link")).to_be_focused()
        start_ai_game(person)
        person.wait_turn_or_over()
        if not person.my_turn():
            pytest.fail("the game ended before a move")
        move = person.choose()
        mine, theirs = person.dice("mine"), person.dice("theirs")
        page.locator("main").focus()
        if move.kind == "skip":
            page.locator("button.skip").focus()
            page.keyboard.press("Enter")
        else:
            for key in value_keys(theirs[move.target], shift=True):
                page.keyboard.press(key)
            expect(
                page.locator(f"button.die[data-die={move.target}][data-owner=theirs]")
            ).to_have_attribute("aria-pressed", "true")
            page.keyboard.press("m" if move.kind == "mind" else "s")
            for die in move.dice:
                if die != move.dice[0] and move.op != "+":
                    page.keyboard.press({"+": "+", "-": "-", "*": "x", "/": "/"}[move.op])
                for key in value_keys(mine[die]):
                    page.keyboard.press(key)
                expect(
                    page.locator(f"button.die[data-die={die}][data-owner=mine]")
                ).to_have_attribute("aria-pressed", "true")
            expect(page.locator("button.attack")).to_be_enabled()
            person.check(artifacts, "08-keyboard-move")
            page.keyboard.press("Enter")
        person.wait_moved()
        if move.kind != "skip":
            expect(
                page.locator(f"button.die[data-die={move.target}][data-owner=theirs]")
            ).to_have_attribute("data-value", "")
    finally:
        person.close()


def test_against_the_ai_through_a_reload_to_the_end_and_its_replay(
    browser: Browser, server: str, artifacts: Path
) -> None:
    person = Person.arrive(browser, server)
    try:
        page = person.page
        match_id = start_ai_game(person)
        person.wait_turn_or_over()
        if person.my_turn():
            person.play_turn()
        # A reload (a closed and reopened tab) comes back to the same game.
        page.reload()
        board = page.locator("[data-match]")
        expect(board).to_have_attribute("data-match", match_id, timeout=MOVE_WAIT_MS)
        expect(board).to_have_attribute("data-status", "playing")
        person.check(artifacts, "09-ai-board")
        moves = 0
        while True:
            person.wait_turn_or_over(timeout=GAME_WAIT_MS)
            if person.over():
                break
            person.play_turn()
            moves += 1
        expect(page.locator(".reason")).to_have_attribute(
            "data-reason", re.compile("all_captured|timeout")
        )
        won = page.locator("#game-over-title").inner_text() == "You won!"
        if won:  # a guest's tier counts the wins of this browser
            page.goto("#/profile")
            expect(page.get_by_text("from 1 win in this browser")).to_be_visible()
            page.goto("#/mw")

        # The replay steps through every state of the game.
        page.get_by_role("link", name="Replay").click()
        step = page.locator("p.step")
        expect(step).to_have_attribute("data-step", "0", timeout=GAME_WAIT_MS)
        steps = int(str(step.get_attribute("data-steps")))
        assert steps >= moves + 2  # the start, every move, the end
        expect(step).to_contain_text("the dice are rolled")
        next_button = page.get_by_role("button", name="Next move")
        for shown in range(1, steps):
            next_button.click()
            expect(step).to_have_attribute("data-step", str(shown))
            if shown == 1:  # the first move, rated by the post-game review
                expect(page.locator("p.review")).to_have_attribute(
                    "data-verdict",
                    re.compile("^(best|good|inaccuracy|mistake|missed_capture|forced)$"),
                )
        expect(next_button).to_be_disabled()
        expect(step).to_contain_text("wins")
        person.check(artifacts, "10-replay")
    finally:
        person.close()


def test_a_replay_opened_during_its_game_shows_once_the_game_ends(
    browser: Browser, server: str
) -> None:
    """The read API answers 409 match_in_progress until the read models have a game's end (right
    after the last move, for a moment); the replay page waits it out instead of giving up. Here
    the page is open before the game ends: two protocol clients play it, and resign once the page
    has asked."""
    started: queue.Queue[str] = queue.Queue()
    asked = threading.Event()

    async def game() -> None:
        seats, snapshot, _ = await room_game(server)
        match_id = str(snapshot["match_id"])
        async with httpx.AsyncClient(base_url=server) as http:
            for _ in range(200):  # until the read models know the match (404 before)
                if (await http.get(f"/v1/matches/{match_id}/replay")).status_code == 409:
                    break
                await asyncio.sleep(0.05)
        started.put(match_id)
        try:
            assert await asyncio.to_thread(asked.wait, 60)
            await seats[1].ok("resign")
        finally:
            for player in seats.values():
                await player.close()

    players = threading.Thread(target=run_sync, args=(game,), daemon=True)
    players.start()
    person = Person.arrive(browser, server)
    try:
        page = person.page
        match_id = started.get(timeout=60)
        with page.expect_response(lambda r: f"/v1/matches/{match_id}/replay" in r.url) as first:
            page.goto(f"#/replay/{match_id}")
        assert first.value.status == 409  # still being played
        asked.set()
        step = page.locator("p.step")
        expect(step).to_have_attribute("data-step", "0")
        expect(page.get_by_role("alert")).to_have_count(0)
        person.assert_quiet_console()  # the 409s asked through are the only refusals
    finally:
        asked.set()
        players.join(timeout=60)
        person.close()
