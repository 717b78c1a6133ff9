"""The Maze in the browser: a room made from the game's settings form (GET /v1/games), joined by
its code from a second browser; the room starts with its two players and both pages show the
same match."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, expect
from playwright.sync_api import Error as PlaywrightError

from tests.web.players import Person


def test_a_maze_room_made_in_the_browser_and_joined_by_code(
    browser: Browser, server: str, artifacts: Path
) -> None:
    host = Person.arrive(browser, server, "/#/maze")
    guest = Person.arrive(browser, server, "/#/maze")
    try:
        page = host.page
        page.get_by_label("width").fill("9")
        page.get_by_label("height").fill("9")
        host.check(artifacts, "maze-01-create")
        page.get_by_role("button", name="Create room").click()
        code = page.locator("[data-room-code]").get_attribute("data-room-code", timeout=20_000)
        assert code
        host.check(artifacts, "maze-02-room")
        guest.page.get_by_label("Room code").first.fill(code)
        guest.page.get_by_role("button", name="Join", exact=True).click()
        # Two seats: the room starts when the second player sits.
        for person in (host, guest):
            expect(person.page.locator("[data-room-code]")).to_have_count(0)
        for person in (host, guest):
            person.assert_quiet_console()
    finally:
        host.close()
        guest.close()


def test_a_maze_game_two_browser_players_and_an_observer(
    browser: Browser, server: str, artifacts: Path
) -> None:
    """Two people play a small maze in their browsers, one by the arrow keys, the other by the
    on-screen buttons, each seeing only what is around them, while an observer sees the whole
    maze; the game ends (at an exit, or by its time limit) and the three pages say the same."""
    host = Person.arrive(browser, server, "/#/maze")
    guest = Person.arrive(browser, server, "/#/")
    observer = Person.arrive(browser, server, "/#/")
    try:
        page = host.page
        page.get_by_label("Width").fill("5")
        page.get_by_label("Height").fill("5")
        page.get_by_label("Cooldown (ms)").fill("0")
        page.get_by_label("Countdown (ms)").fill("1000")
        page.locator("summary", has_text="More settings").click()
        page.get_by_label("Time limit (ms)").fill("30000")
        page.get_by_role("button", name="Create room").click()
        code = page.locator("[data-room-code]").get_attribute("data-room-code", timeout=20_000)
        observer.page.goto(f"/#/maze/watch/{code}")
        expect(observer.page.get_by_text("Waiting for the game to start.")).to_be_visible()
        guest.page.goto(f"/#/maze/join/{code}")
        for person in (host, guest, observer):
            expect(person.page.locator("section.maze")).to_have_attribute(
                "data-phase", "playing", timeout=30_000
            )
        expect(page.locator("section.maze")).to_have_attribute("data-role", "1")
        expect(guest.page.locator("section.maze")).to_have_attribute("data-role", "2")
        expect(observer.page.locator("section.maze")).to_have_attribute("data-role", "observer")
        # The observer sees every cell; a player only those around them.
        expect(observer.page.locator("rect.maze-visible")).to_have_count(25)
        host.check(artifacts, "maze-03-player")
        observer.check(artifacts, "maze-04-observer")

        keys = {"N": "ArrowUp", "E": "ArrowRight", "S": "ArrowDown", "W": "ArrowLeft"}
        step_of = {"N": -5, "E": 1, "S": 5, "W": -1}
        moved = {"host": 0, "guest": 0}
        # Each player explores depth first from what their page shows: their cell, and the
        # directions whose button is enabled (an open passage).
        visited: dict[str, set[int]] = {"host": set(), "guest": set()}
        paths: dict[str, list[int]] = {"host": [], "guest": []}

        def over() -> bool:
            return any(p.page.locator("p.step[data-result]").count() for p in (host, guest))

        def choose(name: str, person: Person, seat: str) -> str | None:
            marker = person.page.locator(f"g.maze-player[data-seat='{seat}']")
            cell = int(str(marker.get_attribute("data-cell", timeout=2_000)))
            visited[name].add(cell)
            enabled = person.page.locator("button.move:enabled").all()
            open_ = [str(b.get_attribute("class")).split("-")[-1] for b in enabled]
            if person.page.locator("[data-exit=open]").count():  # on the open exit: out
                exit_ = person.page.locator(f"g.maze-object[data-kind=exit][data-owner='{seat}']")
                side = str(exit_.get_attribute("data-variant", timeout=2_000))
                if side in open_:
                    return side
            for direction in open_:
                if cell + step_of[direction] not in visited[name]:
                    paths[name].append(cell)
                    return direction
            while paths[name]:
                back = paths[name].pop()
                for direction in open_:
                    if cell + step_of[direction] == back:
                        return direction
            return open_[0] if open_ else None

        for _ in range(200):
            if over():
                break
            for name, person, seat in (("host", host, "1"), ("guest", guest, "2")):
                mover = person.page
                board = mover.locator("section.maze")
                try:
                    if over():
                        break
                    direction = choose(name, person, seat)
                    if direction is None:
                        continue
                    before = board.get_attribute("data-seq")
                    if name == "host":  # the arrow keys
                        mover.keyboard.press(keys[direction])
                    else:  # the on-screen buttons
                        mover.locator(f"button.move-{direction}").click(timeout=2_000)
                except PlaywrightError:
                    if over():  # the game ended under the pointer
                        break
                    raise
                expect(board).not_to_have_attribute("data-seq", str(before))
                moved[name] += 1
        assert moved["host"] > 0 and moved["guest"] > 0
        results = []
        for person in (host, guest, observer):
            result = person.page.locator("p.step[data-result]")
            expect(result).to_have_count(1, timeout=60_000)
            results.append(result.get_attribute("data-result"))
        assert len(set(results)) == 1, results
        host.check(artifacts, "maze-05-over")
        observer.check(artifacts, "maze-06-observer-over")
    finally:
        for person in (host, guest, observer):
            person.close()


def test_a_maze_player_keeps_the_map_they_revealed_across_a_reload(
    browser: Browser, server: str
) -> None:
    """A reload gets a snapshot of the current view only: the page keeps the cells seen before
    (in the tab's sessionStorage) and draws them again; the game's end forgets them."""
    host = Person.arrive(browser, server, "/#/maze")
    guest = Person.arrive(browser, server, "/#/")
    try:
        page = host.page
        page.get_by_label("Cooldown (ms)").fill("0")
        page.get_by_label("Countdown (ms)").fill("0")
        page.get_by_role("button", name="Create room").click()
        code = page.locator("[data-room-code]").get_attribute("data-room-code", timeout=20_000)
        guest.page.goto(f"/#/maze/join/{code}")
        board = page.locator("section.maze")
        expect(board).to_have_attribute("data-phase", "playing", timeout=30_000)
        expect(board).to_have_attribute("data-role", "1")

        def seen() -> set[tuple[str, str]]:
            return {
                (str(r.get_attribute("x")), str(r.get_attribute("y")))
                for r in page.locator("rect.maze-seen").all()
            }

        # Walk on (never straight back) until some cell seen is out of sight.
        back = {"N": "S", "S": "N", "E": "W", "W": "E"}
        keys = {"N": "ArrowUp", "E": "ArrowRight", "S": "ArrowDown", "W": "ArrowLeft"}
        came = ""
        for _ in range(12):
            if page.locator("rect.maze-seen").count() > page.locator("rect.maze-visible").count():
                break
            enabled = [
                str(b.get_attribute("class")).split("-")[-1]
                for b in page.locator("button.move:enabled").all()
            ]
            direction = next((d for d in enabled if d != back.get(came)), enabled[0])
            before = board.get_attribute("data-seq")
            page.keyboard.press(keys[direction])
            expect(board).not_to_have_attribute("data-seq", str(before))
            came = direction
        explored = seen()
        assert len(explored) > page.locator("rect.maze-visible").count()

        page.reload()
        expect(board).to_have_attribute("data-phase", "playing", timeout=30_000)
        expect(page.locator("rect.maze-seen")).to_have_count(len(explored))
        assert seen() == explored

        page.on("dialog", lambda d: d.accept())
        page.get_by_role("button", name="Resign").click()
        expect(page.locator("p.step[data-result]")).to_have_count(1)
        assert page.evaluate("() => sessionStorage.getItem('arena.maze.seen')") is None
        host.assert_quiet_console()
    finally:
        host.close()
        guest.close()
