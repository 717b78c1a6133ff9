"""Digits in the browser: its page offers a room with the game's own settings form (GET
/v1/games: rounds, shop and Face-off times, guests), games alone (play_solo: ranked for accounts,
casual, the daily, the tutorial, a trial for visitors), and its leaderboards (the Paris-month
season and the ladder) show."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from playwright.sync_api import Browser, expect

from tests.web.players import Person
from tests.web.test_maths_warriors import sign_up


def test_the_digits_page_offers_its_room_form_and_its_leaderboards(
    browser: Browser, server: str, artifacts: Path
) -> None:
    person = Person.arrive(browser, server, "/#/digits")
    try:
        page = person.page
        expect(page.get_by_label("room rounds")).to_have_value("8")
        expect(page.get_by_label("guests allowed")).not_to_be_checked()
        person.check(artifacts, "digits-01-lobby")
        page.get_by_role("link", name="Digits leaderboards: the season and the ladder").click()
        expect(page.get_by_role("heading", name="Digits season")).to_be_visible()
        expect(page.get_by_role("heading", name="Digits leaderboard")).to_be_visible()
        person.check(artifacts, "digits-02-leaderboards")
    finally:
        person.close()


def answer_of(question: str) -> int:
    """A Focus or Training question's answer, as a person works it out."""
    text = question.replace("×", "*").replace("x", "*").replace("÷", "/").replace("−", "-")
    assert re.fullmatch(r"[0-9+*/() -]+", text), question
    value = eval(text)  # digits and operators only, checked above
    assert value == int(value) and 1 <= value <= 16, question
    return int(value)


def test_a_whole_digits_game_in_the_browser(browser: Browser, server: str, artifacts: Path) -> None:
    """A casual Digits game alone, played to its end in the page: every Focus question answered
    (by the pad, or typed), an offer bought each round, the slate rearranged by drag and by
    keyboard, the Face-off's columns swapped and flipped, each combat fought; then a combat's
    report stepped through. (A room needs two players and runs on the host's clock: minutes a
    round, too long here; its form is checked above.)"""
    person = Person.arrive(browser, server, "/#/digits")
    try:
        page = person.page
        page.get_by_role("button", name="Play casual").click()
        game = page.locator("section.digits")
        expect(game).to_have_attribute("data-phase", "focus")
        shot: set[str] = set()
        typed = False
        moved = False
        drags = 0  # a few tries in all, so that a drag that never works fails the test
        arranged = False
        reloaded = False
        for _ in range(600):
            phase = game.get_attribute("data-phase")
            if phase == "over":
                break
            if phase not in shot:
                shot.add(str(phase))
                person.check(artifacts, f"digits-{len(shot) + 2:02d}-{phase}")
            question = page.locator("p.question")
            if question.count():
                answer = answer_of(str(question.get_attribute("data-question")))
                before = question.get_attribute("data-question")
                if typed:
                    page.locator(f"button.pad-key[data-answer='{answer}']").click()
                else:  # once by the keyboard: typed, then Enter
                    page.get_by_label("Your answer").fill(str(answer))
                    page.keyboard.press("Enter")
                    typed = True
                expect(page.locator(f"p.question[data-question='{before}']")).to_have_count(0)
            elif phase == "focus":
                page.locator(".focus button.primary").click()
                expect(page.locator("p.question")).to_have_count(1)
            elif phase == "shop" and not reloaded:
                # A closed and reopened tab comes back to the game where it was.
                gold = page.locator("[data-gold]").get_attribute("data-gold")
                page.reload()
                expect(game).to_have_attribute("data-phase", "shop")
                expect(page.locator("[data-gold]")).to_have_attribute("data-gold", str(gold))
                reloaded = True
            elif phase == "shop":
                offers = page.locator("li.offer button:enabled")
                gold = page.locator("[data-gold]").get_attribute("data-gold")
                if offers.count():
                    offers.first.click()
                    expect(page.locator("[data-gold]")).not_to_have_attribute(
                        "data-gold", str(gold)
                    )
                elif (
                    not moved
                    and drags < 6
                    and page.locator("button.cell[data-cell='1'][draggable=true]").count() == 1
                    and page.locator("button.cell[data-cell='8'][draggable=true]").count() == 0
                ):
                    # By drag: the digit in cell 1 onto cell 8; by keyboard: back again. The
                    # shop's own clock may close it meanwhile on a slow machine: then the next
                    # round's shop tries again, and the game's end asserts it was done once.
                    drags += 1
                    page.locator("button.cell[data-cell='1']").drag_to(
                        page.locator("button.cell[data-cell='8']")
                    )
                    shop = "section.digits[data-phase='shop']"
                    dropped = page.locator(f"{shop} button.cell[data-cell='8'][draggable=true]")
                    try:
                        expect(
                            dropped.or_(page.locator("section.digits:not([data-phase='shop'])"))
                        ).to_have_count(1, timeout=5_000)
                    except AssertionError:
                        # The gesture did not take (seen once in CI, the page still in the shop
                        # and the digit in cell 1): drag again, as a player would.
                        continue
                    if dropped.count():
                        page.locator("button.cell[data-cell='8']").focus()
                        page.keyboard.press("Enter")
                        page.locator("button.cell[data-cell='1']").focus()
                        page.keyboard.press("Enter")
                        back = page.locator("button.cell[data-cell='1'][draggable=true]")
                        expect(
                            back.or_(page.locator("section.digits:not([data-phase='shop'])"))
                        ).to_have_count(1)
                        moved = back.count() == 1 and game.get_attribute("data-phase") == "shop"
                else:
                    page.get_by_role("button", name="End the shop").click()
                    expect(game).not_to_have_attribute("data-phase", "shop")
            elif phase == "faceoff":
                if not arranged:
                    page.get_by_role("button", name="Move column 1 right").click()
                    page.get_by_role("button", name="Swap the front and back of column 2").click()
                    expect(page.get_by_text("arrangement", exact=False).first).to_be_visible()
                    arranged = True
                fought = page.locator(".combats li").count()
                page.get_by_role("button", name="Fight").click()
                expect(page.locator(".combats li")).to_have_count(fought + 1)
            else:  # the army on its way, or the next round: the server's to move
                page.wait_for_timeout(200)
        expect(game).to_have_attribute("data-phase", "over")
        record = page.locator("p.record")
        wins = int(str(record.get_attribute("data-wins")))
        losses = int(str(record.get_attribute("data-losses")))
        assert wins + losses >= 3 and moved and arranged and typed and reloaded
        combats = page.locator(".combats li")
        expect(combats).not_to_have_count(0)
        combats.first.get_by_role("button", name="Replay").click()
        step = page.locator(".combat-replay [data-step]")
        next_step = page.get_by_role("button", name="Next step")
        while next_step.is_enabled():
            next_step.click()
        expect(step).to_contain_text(re.compile(r"(win|loss|draw) [(]"))
        person.check(artifacts, "digits-09-over")
    finally:
        person.close()


def test_a_visitor_plays_the_digits_tutorial_alone_with_predict(
    browser: Browser, server: str, artifacts: Path
) -> None:
    """A visitor (a guest) is offered the modes alone but not ranked (accounts only), and a trial;
    they start the tutorial and play its three rounds in the page: each Focus answered, an offer
    bought, a Predict asked in the Face-off before each fight; the game's own address reloads."""
    person = Person.arrive(browser, server, "/#/digits")
    try:
        page = person.page
        expect(page.get_by_role("button", name="Play ranked")).to_be_disabled()
        expect(page.get_by_role("button", name="Try a game")).to_be_enabled()
        person.check(artifacts, "digits-solo-01-modes")
        page.get_by_role("button", name="Tutorial").click()
        expect(page).to_have_url(re.compile(r"#/digits/game/"))
        game = page.locator("section.digits")
        expect(game).to_have_attribute("data-phase", "focus")
        expect(game.get_by_role("heading", name=re.compile("tutorial"))).to_be_visible()
        page.reload()
        expect(game).to_have_attribute("data-phase", "focus")
        predicted = 0
        for _ in range(400):
            phase = game.get_attribute("data-phase")
            if phase == "over":
                break
            question = page.locator("p.question")
            if question.count():
                before = str(question.get_attribute("data-question"))
                page.locator(f"button.pad-key[data-answer='{answer_of(before)}']").click()
                expect(page.locator(f"p.question[data-question='{before}']")).to_have_count(0)
            elif phase == "focus":
                page.locator(".focus button.primary").click()
                expect(page.locator("p.question")).to_have_count(1)
            elif phase == "shop":
                offers = page.locator("li.offer button:enabled")
                if offers.count() and page.locator("button.cell[draggable=true]").count() < 2:
                    gold = page.locator("[data-gold]").get_attribute("data-gold")
                    offers.first.click()
                    expect(page.locator("[data-gold]")).not_to_have_attribute(
                        "data-gold", str(gold)
                    )
                else:
                    page.get_by_role("button", name="End the shop").click()
                    expect(game).not_to_have_attribute("data-phase", "shop")
            elif phase == "faceoff":
                page.get_by_role("button", name="Move column 1 right").click()
                page.get_by_role("button", name="Predict").click()
                expect(page.locator("[data-predicted]")).to_have_count(1)
                predicted += 1
                if predicted == 1:
                    person.check(artifacts, "digits-solo-02-predict")
                fought = page.locator(".combats li").count()
                page.get_by_role("button", name="Fight").click()
                expect(page.locator(".combats li")).to_have_count(fought + 1)
            else:  # the army on its way, or the next round: the server's to move
                page.wait_for_timeout(200)
        expect(game).to_have_attribute("data-phase", "over")
        assert predicted >= 1
        person.check(artifacts, "digits-solo-03-over")
        page.get_by_role("button", name="Back to Digits").click()
        expect(page.get_by_role("heading", name="Play alone")).to_be_visible()
    finally:
        person.close()


def test_the_ghost_sharing_setting_on_the_profile_page(
    browser: Browser, server: str, artifacts: Path
) -> None:
    """The profile shows the player's ghost setting as GET /v1/players/{id}/ghost-sharing has it
    (anonymous until set), changes it by the socket's ghost_sharing, and a later visit reads the
    change back from the read side (a moment behind: the page is reopened until it shows)."""
    person = Person.arrive(browser, server, "/#/profile")
    try:
        page = person.page
        setting = page.locator("fieldset.ghost-sharing")
        expect(setting).to_have_attribute("data-sharing", "anonymous")
        expect(page.get_by_label("Anonymously")).to_be_checked()
        page.get_by_label("Not at all: withdraw my ghosts").check()
        expect(setting.get_by_text("Saved.")).to_be_visible()  # the ack
        expect(page.get_by_label("Not at all: withdraw my ghosts")).to_be_checked()
        person.check(artifacts, "profile-ghost-sharing")
        for _ in range(100):  # the read side catches up; nothing here is timed
            page.reload()
            expect(setting).not_to_have_attribute("data-sharing", "")
            if setting.get_attribute("data-sharing") == "none":
                break
            page.wait_for_timeout(200)
        expect(setting).to_have_attribute("data-sharing", "none")
        expect(page.get_by_label("Not at all: withdraw my ghosts")).to_be_checked()
    finally:
        person.close()


def test_a_digits_duel_challenged_by_username_and_accepted_by_its_link(
    browser: Browser, server: str, artifacts: Path
) -> None:
    """An account challenges another by username with a stake; the challenged player opens the
    duel's link and accepts; each page then opens its own game."""
    challenger = Person.arrive(browser, server, "/#/digits")
    opponent = Person.arrive(browser, server, "/#/digits")
    try:
        expect(challenger.page.get_by_role("region", name="Duel")).to_contain_text("sign up")
        tag = uuid.uuid4().hex[:6]
        sign_up(challenger, f"duelist_{tag}")
        sign_up(opponent, f"rival_{tag}")
        page = challenger.page
        page.goto("/#/digits")
        page.get_by_label("Opponent's username").fill(f"rival_{tag}")
        page.get_by_label("Stake (credits)").fill("0")
        page.get_by_role("button", name="Challenge to a duel").click()
        offered = page.locator("[data-duel]")
        expect(offered).to_have_attribute("data-status", "offered")
        challenger.check(artifacts, "digits-duel-01-offered")
        link = str(offered.get_by_role("link").get_attribute("href"))
        opponent.page.goto(link)
        opponent.check(artifacts, "digits-duel-02-invite")
        opponent.page.get_by_role("button", name="Accept the duel").click()
        for person in (challenger, opponent):
            expect(person.page).to_have_url(re.compile(r"#/digits/game/"))
            game = person.page.locator("section.digits")
            expect(game).to_have_attribute("data-phase", "focus")
            expect(game.get_by_role("heading", name=re.compile("duel"))).to_be_visible()
        assert challenger.page.url != opponent.page.url  # each their own game
        challenger.check(artifacts, "digits-duel-03-game")
    finally:
        challenger.close()
        opponent.close()
