"""Matrix Games in the browser: the replay viewer plays a match the server played.

The match is a real one: eight seats played through the server's own match service (their
players are the game's bot, `tests/web/matrix_episode.py`), indexed by its read models and served
as `matrix.replay.v1` by `GET /v1/matches/{id}/replay`. The page is stepped, played, paused and
taken to the end, where the scores it shows must be the replay's results.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.web.conftest import REPO, Served
from tests.web.players import Person


@pytest.fixture(scope="module")
def matrix_match(served: Served) -> str:
    made = subprocess.run(
        [sys.executable, "-m", "tests.web.matrix_episode"],
        env=served.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def replay_of(url: str, match_id: str) -> dict[str, Any]:
    with httpx.Client(base_url=url) as http:
        token = http.post("/v1/guests").json()["token"]
        for _ in range(60):  # the read models follow the log; nothing here is timed
            answer = http.get(
                f"/v1/matches/{match_id}/replay", headers={"Authorization": f"Bearer {token}"}
            )
            if answer.status_code == 200 and answer.json()["results"]["reason"]:
                doc: dict[str, Any] = answer.json()
                return doc
            time.sleep(0.5)
    raise AssertionError(f"no replay of {match_id}")


def test_the_replay_viewer_plays_a_matrix_match_to_its_final_scores(
    browser: Browser, served: Served, matrix_match: str, artifacts: Path
) -> None:
    doc = replay_of(served.url, matrix_match)
    assert doc["protocol"] == "matrix.replay.v1"
    assert any(doc["results"]["scores"]), "a replay whose scores are all 0 proves little"
    person = Person.arrive(browser, served.url, f"/#/matrix/replay/{matrix_match}")
    try:
        page = person.page
        step = page.locator("p.step")
        last = len(doc["frames"]) - 1
        expect(step).to_have_attribute("data-at", "0")
        expect(step).to_have_attribute("data-last", str(last))
        expect(page.locator("svg.yard g.cog")).to_have_count(8)
        # The first frame's cogs stand where the replay puts them.
        first = doc["frames"][0]["c"]
        for slot in range(8):
            cog = page.locator(f"svg.yard g.cog[data-slot='{slot}']")
            expect(cog).to_have_attribute("data-x", str(first[slot * 4]))
            expect(cog).to_have_attribute("data-y", str(first[slot * 4 + 1]))
        person.check(artifacts, "matrix-01-replay-start")

        # A tick, a beat, by the buttons and the keyboard.
        page.get_by_role("button", name="Next tick").click()
        expect(step).to_have_attribute("data-at", "1")
        page.get_by_role("button", name="Next beat").click()
        per_beat = doc["config"]["ticksPerBeat"]
        expect(step).to_have_attribute("data-at", str(1 + per_beat))
        expect(step).to_have_attribute("data-beat", "1")
        page.keyboard.press("ArrowLeft")
        expect(step).to_have_attribute("data-at", str(per_beat))

        # Play runs by itself; pause stops it.
        page.get_by_role("button", name="Play").click()
        expect(step).not_to_have_attribute("data-at", str(per_beat))
        page.get_by_role("button", name="Pause").click()
        expect(page.get_by_role("button", name="Play")).to_be_visible()
        paused = step.get_attribute("data-at")
        assert paused is not None and int(paused) > per_beat
        page.locator("p.step").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / "matrix-replay-playing.png"))

        # The end: the scores shown are the replay's results, the winners marked.
        page.get_by_role("button", name="Last").click()
        expect(step).to_have_attribute("data-at", str(last))
        expect(step).to_contain_text("over: complete")
        table = page.locator("table.seats[data-final=true]")
        expect(table).to_be_visible()
        for slot, score in enumerate(doc["results"]["scores"]):
            row = table.locator(f"tr[data-slot='{slot}']")
            expect(row.locator("td.score")).to_have_attribute("data-score", f"{score:.2f}")
            if doc["results"]["win"][slot]:
                expect(row).to_contain_text("winner")
        final = doc["frames"][-1]["c"]
        for slot in range(8):
            cog = page.locator(f"svg.yard g.cog[data-slot='{slot}']")
            expect(cog).to_have_attribute("data-x", str(final[slot * 4]))
        expect(page.locator("ul.mx-events")).to_contain_text("The episode ends: complete")
        person.check(artifacts, "matrix-02-replay-end")
    finally:
        person.close()


def test_a_matrix_room_made_in_the_browser_a_player_by_link_a_fill_a_watcher_and_the_start(
    browser: Browser, server: str, artifacts: Path
) -> None:
    """The lobby of any game, from its settings form (GET /v1/games): the host creates a
    stag-hunt room, a second person joins by the shared link and sees the seats as the host
    does, a third joins and leaves, the host fills a seat with a scripted policy, the third
    person watches by the watch link, the host starts: the match is the same for all three."""
    host = Person.arrive(browser, server, "/#/matrix")
    guest = Person.arrive(browser, server, "/#/")
    watcher = Person.arrive(browser, server, "/#/")
    try:
        page = host.page
        page.get_by_label("Variant").select_option("stag-hunt")
        page.get_by_label("Beats", exact=True).fill("2")
        host.check(artifacts, "matrix-03-create")
        page.get_by_role("button", name="Create room").click()
        code = page.locator("[data-room-code]").get_attribute("data-room-code", timeout=20_000)
        assert code
        link = page.locator("a.share-link").first.get_attribute("href")
        assert link and link.endswith(f"#/matrix/join/{code}")
        guest.page.goto(link)
        # The joiner sees the seats as the host does: the host's and theirs (no push told the
        # joiner of either), then each change.
        seats = page.locator("table.room-seats")
        joined = guest.page.locator("table.room-seats")
        for shown in (seats, joined):
            expect(shown.locator("tr[data-seat='1']")).to_contain_text(f"{guest_name(host)} (host)")
            expect(shown.locator("tr[data-seat='2']")).to_contain_text(guest_name(guest))
        watcher.page.goto(link)
        for shown in (seats, joined):
            expect(shown.locator("tr[data-seat='3']")).to_contain_text(guest_name(watcher))
        watcher.page.get_by_role("button", name="Leave the room").click()
        for shown in (seats, joined):
            expect(shown.locator("tr[data-seat='3']")).to_have_attribute("data-free", "true")
        page.get_by_label("Computer player").select_option("tit-for-tat")
        page.get_by_role("button", name="Fill 3 · Cedar with tit-for-tat").click()
        for shown in (seats, joined):
            expect(shown.locator("tr[data-seat='3']")).to_contain_text("tit-for-tat (computer)")
        watcher.page.goto(f"/#/matrix/watch/{code}")
        expect(watcher.page.get_by_text("Waiting for the game to start.")).to_be_visible()
        host.check(artifacts, "matrix-04-room")
        page.get_by_role("button", name="Start").click()
        started = page.locator("[data-match]")
        expect(started).not_to_have_attribute("data-match", "")
        match_id = started.get_attribute("data-match")
        for other in (guest, watcher):
            expect(other.page.locator("[data-match]")).to_have_attribute(
                "data-match", str(match_id)
            )
        for person in (host, guest, watcher):
            person.assert_quiet_console()
    finally:
        for person in (host, guest, watcher):
            person.close()


def guest_name(person: Person) -> str:
    return person.page.locator(".identity .name").inner_text()


def test_an_episode_with_one_browser_seat_and_a_spectator_page(
    browser: Browser, server: str, artifacts: Path
) -> None:
    """Issue 15: a Matrix Games episode with one browser seat (seven scripted) and a spectator
    page. The seat orders each beat through the form; the spectator sees the whole yard; both end
    on the same scores, and the replay of the match ends on them too."""
    host = Person.arrive(browser, server, "/#/matrix")
    watcher = Person.arrive(browser, server, "/#/")
    try:
        page = host.page
        page.get_by_label("Variant").select_option("stag-hunt")
        page.get_by_label("Beats", exact=True).fill("2")
        page.get_by_label("Ticks per beat").fill("30")
        page.locator("summary", has_text="More settings").click()
        page.get_by_label("Min beat (seconds)").fill("0")
        page.get_by_role("button", name="Create room").click()
        code = page.locator("[data-room-code]").get_attribute("data-room-code", timeout=20_000)
        watcher.page.goto(f"/#/matrix/watch/{code}")
        expect(watcher.page.get_by_text("Waiting for the game to start.")).to_be_visible()
        page.get_by_role("button", name="Start").click()

        # Beat 1: gather stag, with a word for the others.
        form = page.locator("form.order-form")
        expect(form).to_contain_text("Your order for beat 1")
        expect(page.locator("svg.yard g.cog")).not_to_have_count(0)
        host.check(artifacts, "matrix-05-seat")
        page.get_by_role("radio", name="Gather a token").check()
        page.get_by_role("combobox", name="Token").select_option("stag")
        page.get_by_label("Say (others see it)").fill("stag, anyone?")
        page.get_by_role("button", name="Send the order").click()
        # The only person ordered: the beat plays at once and beat 2 opens.
        expect(form).to_contain_text("Your order for beat 2")
        spectator = watcher.page.locator(".matrix-live")
        expect(spectator.locator("svg.yard g.cog")).to_have_count(8)
        # The beat just played is played again on the spectator's yard, tick by tick, from the
        # match's replay so far.
        expect(spectator.locator("[data-playback]")).to_have_count(1)
        watcher.check(artifacts, "matrix-06-spectator")

        # A reloaded tab comes back to the seat, with the beat it is at.
        page.reload()
        expect(page.locator("form.order-form")).to_contain_text("Your order for beat 2")

        # Beat 2 by keyboard alone: the intent's radio, then the button.
        page.get_by_role("radio", name="Hold").focus()
        page.keyboard.press("Space")
        page.get_by_role("button", name="Send the order").focus()
        page.keyboard.press("Enter")

        seat_scores = page.locator("table.seats[data-final=true]")
        expect(seat_scores).to_be_visible()
        expect(spectator).to_have_attribute("data-status", "over")
        expect(watcher.page.locator("p.step")).to_contain_text("Over: complete")
        final = {
            int(str(row.get_attribute("data-slot"))): row.locator("td.score").get_attribute(
                "data-score"
            )
            for row in seat_scores.locator("tbody tr").all()
        }
        assert len(final) == 8
        for slot, score in final.items():
            shown = watcher.page.locator(f"table.seats tr[data-slot='{slot}'] td.score")
            expect(shown).to_have_attribute("data-score", str(score))
        host.check(artifacts, "matrix-07-seat-final")
        watcher.check(artifacts, "matrix-08-spectator-final")

        page.get_by_role("link", name="Replay").click()
        page.get_by_role("button", name="Last").click()
        table = page.locator("table.seats[data-final=true]")
        for slot, score in final.items():
            cell = table.locator(f"tr[data-slot='{slot}'] td.score")
            expect(cell).to_have_attribute("data-score", str(score))
    finally:
        host.close()
        watcher.close()
