"""Digits played through real WebSockets against the gateway, match and matchmaking services in
this process (embedded log), each player a scripted client (the module's bot) reading only what
its socket is pushed: games started alone (ranked against stored ghosts, the tutorial, a trial,
a daily across a Paris midnight), a room of three side by side, a duel to its deadline, and a
player who leaves mid-Focus and comes back to a game whose clock ran on.

The services run on their own clock parameter (as tests/services/matchmaking/test_digits_online.py
does), which the test moves forward: a Paris midnight or a duel's 24 hours pass in a moment, and
every timer the match service keeps fires as it would have. The clock only ever moves forward,
so the module's tests share one server in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_cli.commands.serve import builder
from arena_engine.digits import paris
from arena_games.contract import Viewer
from arena_games.digits.bot import DigitsBot
from arena_games.registry import STANDARD
from arena_match.clock import now_ms
from arena_match.service import build_worker
from arena_match.worker import MatchWorker
from arena_matchmaking.service import build_workers
from arena_runtime import topics
from arena_runtime.config import Settings
from arena_runtime.envelope import SCHEMAS
from arena_runtime.host import Runtime, Service

from tests.e2e.client import WAIT, Player, signed_in
from tests.e2e.digits import armies, play
from tests.e2e.servers import _ready as ready
from tests.e2e.servers import host_run, settings_for

PASSWORD = "digits-online-e2e"


class ServerClock:
    """The services' clock: real time plus an offset the test moves forward."""

    def __init__(self) -> None:
        self.offset_ms = 0
        self.workers: list[MatchWorker] = []

    def ms(self) -> int:
        return now_ms() + self.offset_ms

    def moment(self) -> datetime:
        return datetime.now(UTC) + timedelta(milliseconds=self.offset_ms)

    def advance_to(self, ms: int) -> None:
        self.advance_ms(max(0, ms - self.ms()))

    def advance_ms(self, ms: int) -> None:
        self.offset_ms += ms
        for worker in self.workers:
            worker.timers.poke()


def builders(clock: ServerClock) -> list[Any]:
    async def match(runtime: Runtime) -> Service:
        await topics.ensure_topics(runtime.log, runtime.settings.partitions)
        worker = build_worker(runtime.log, runtime.settings, clock.ms)
        clock.workers.append(worker)
        return Service("match", [worker])

    async def matchmaking(runtime: Runtime) -> Service:
        STANDARD.register_schemas(SCHEMAS)
        await topics.ensure_topics(runtime.log, runtime.settings.partitions)
        _, workers = build_workers(runtime.log, runtime.settings, clock.moment)
        return Service("matchmaking", workers)

    return [builder("gateway"), match, matchmaking, builder("projections")]


@contextlib.asynccontextmanager
async def serving(settings: Settings, clock: ServerClock) -> AsyncIterator[str]:
    stop = asyncio.Event()
    task = asyncio.create_task(host_run._serve(settings, builders(clock), "test", stop))
    url = f"http://127.0.0.1:{settings.http_port}"
    try:
        await ready(url, task)
        yield url
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


@pytest.fixture(scope="module")
def clock() -> ServerClock:
    return ServerClock()


@pytest.fixture(scope="module")
async def url(tmp_path_factory: pytest.TempPathFactory, clock: ServerClock) -> AsyncIterator[str]:
    # The bots answer as fast as their pushes come.
    settings = settings_for(
        Path(tmp_path_factory.mktemp("digits")), ws_rate_limit=1000, projection_poll_ms=50
    )
    async with serving(settings, clock) as base:
        yield base


async def account(url: str) -> Player:
    """A new account, signed in on its own WebSocket."""
    username = f"d{secrets.token_hex(5)}"
    async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
        response = await http.post(
            "/v1/accounts", json={"username": username, "password": PASSWORD}
        )
        response.raise_for_status()
    body = response.json()
    player = Player(url)
    player.player_id, player.name, player.token = body["player_id"], body["username"], body["token"]
    await player.connect()
    return player


async def error_code(player: Player, type_: str, **fields: Any) -> str:
    answer = await player.request(type_, **fields)
    assert answer["type"] == "error", answer
    return str(answer["code"])


async def sharing_of(url: str, player: Player) -> str:
    headers = {"Authorization": f"Bearer {player.token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers) as http:
        answer = await http.get(f"/v1/players/{player.player_id}/ghost-sharing")
    assert answer.status_code == 200, answer.text
    assert answer.json()["player_id"] == player.player_id
    return str(answer.json()["sharing"])


async def test_bad_input_is_refused_and_changes_nothing(url: str) -> None:
    guest = await signed_in(url)
    assert await error_code(guest, "play_solo", game="digits", mode="room") == "bad_message"
    assert await error_code(guest, "play_solo", game="digits", mode="duel") == "bad_message"
    assert await error_code(guest, "play_solo", game="chess", mode="casual") == "bad_message"
    # A game of two seats is not played alone.
    assert await error_code(guest, "play_solo", game="maze", mode="casual") == "invalid_seats"
    assert await error_code(guest, "play_solo", game="digits", mode="ranked") == (
        "ranked_requires_accounts"
    )
    assert await error_code(guest, "ghost_sharing", sharing="everyone") == "bad_message"
    assert await error_code(guest, "challenge_duel", opponent="nobody-here") == "unknown_player"
    somebody = await account(url)
    assert await error_code(guest, "challenge_duel", opponent=somebody.name) == (
        "ranked_requires_accounts"
    )
    assert await error_code(somebody, "challenge_duel", opponent=somebody.name) == (
        "invalid_player"
    )
    assert await error_code(somebody, "challenge_duel", opponent="x", stake=10_001) == (
        "bad_message"
    )
    assert await error_code(somebody, "accept_duel", duel_id="d_none") == "unknown_duel"
    assert not [p for p in guest.pushes + somebody.pushes if p["type"].startswith("digits")]
    # The setting, twice (the same value again is answered too), read back over HTTP.
    assert await sharing_of(url, somebody) == "anonymous"
    assert await somebody.ok("ghost_sharing", sharing="login") == {"sharing": "login"}
    assert await somebody.ok("ghost_sharing", sharing="login") == {"sharing": "login"}
    async with asyncio.timeout(WAIT):
        # The read side follows the store's stream a moment behind.
        while (sharing := await sharing_of(url, somebody)) != "login":
            assert sharing == "anonymous", sharing
            await asyncio.sleep(0.05)
    headers = {"Authorization": f"Bearer {guest.token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers) as http:
        theirs = await http.get(f"/v1/players/{somebody.player_id}/ghost-sharing")
    assert theirs.status_code == 403 and theirs.json()["detail"]["code"] == "not_your_account"
    for player in (guest, somebody):
        await player.close()


async def test_a_ranked_game_to_its_end_against_stored_ghosts(url: str) -> None:
    """Ann's casual game leaves a ghost each round (under her login: her setting); Bob's ranked
    game meets them, shown under her name, and is played to its end."""
    ann, bob = await account(url), await account(url)
    await ann.ok("ghost_sharing", sharing="login")
    started = await ann.ok("play_solo", game="digits", mode="casual")
    assert started["mode"] == "casual" and not started["counted"]
    ann_pushes = await play(ann)
    assert ann_pushes[-1]["match_id"] == started["match_id"]
    ann_rounds = ann_pushes[-1]["round"]
    ranked = await bob.ok("play_solo", game="digits", mode="ranked")
    assert ranked["mode"] == "ranked"
    pushes = await play(bob)
    over = pushes[-1]
    assert over["match_id"] == ranked["match_id"] and over["phase"] == "over"
    assert over["status"] in ("won", "lost", "closed")
    faced = armies(pushes)
    assert 1 in faced and not faced[1]["house"] and faced[1]["shown_as"] == ann.name
    # Every round Ann played has her ghost for Bob's round of the same number.
    for number, army in faced.items():
        if number <= ann_rounds:
            assert not army["house"], (number, army)
    assert [p for p in pushes if p["type"] == "digits_combat_fought"]
    for player in (ann, bob):
        await player.close()


async def test_the_tutorial_and_a_trial(url: str) -> None:
    visitor = await signed_in(url)
    tutorial = await visitor.ok("play_solo", game="digits", mode="tutorial")
    assert tutorial["mode"] == "tutorial"
    pushes = await play(visitor)
    assert pushes[-1]["match_id"] == tutorial["match_id"] and pushes[-1]["round"] <= 3
    faced = armies(pushes)
    assert faced and all(a["tutorial"] for a in faced.values())
    assert [p for p in pushes if p["type"] == "digits_predicted"]  # Predict, the tutorial's
    trial = await visitor.ok("play_solo", game="digits", mode="trial")
    assert trial["mode"] == "trial"
    pushes = await play(visitor)
    assert pushes[-1]["match_id"] == trial["match_id"]
    faced = armies(pushes)
    assert faced and all(a["house"] for a in faced.values())
    await visitor.close()


async def test_a_player_leaves_mid_focus_and_comes_back_to_the_clock_having_run(
    url: str, clock: ServerClock
) -> None:
    player = await signed_in(url)
    started = await player.ok("play_solo", game="digits", mode="casual")
    game = await player.push("digits_game")
    assert game["phase"] == "focus" and not game["focus"]["started"]
    await player.ok("digits_start_focus")
    page = await player.push("digits_game", wait=WAIT)
    while page["focus"]["page"] is None:
        page = await player.push("digits_game")
    first = page["focus"]
    assert first["index"] == 0
    await player.close()  # the page is open, unanswered
    # Two pages' time passes while away (6 s each): both go by unanswered.
    clock.advance_to(first["page"]["deadline_ms"] + 6_000 + 500)
    back = Player(url)
    back.player_id, back.name, back.token = player.player_id, player.name, player.token
    await back.connect()
    await asyncio.sleep(0)  # nothing to wait for: the snapshot comes after the ack

    async def later() -> dict[str, Any]:
        while True:
            await back.ok("reconnect", match_id=started["match_id"], player_id=back.player_id)
            snapshot = await back.push("digits_game")
            if snapshot["phase"] != "focus" or snapshot["focus"]["index"] >= 2:
                return snapshot

    snapshot = await asyncio.wait_for(later(), WAIT)
    assert snapshot["match_id"] == started["match_id"] and snapshot["phase"] == "focus"
    assert snapshot["focus"]["index"] >= 2 and snapshot["focus"]["right"] == 0
    assert snapshot["server_time_ms"] >= first["page"]["deadline_ms"] + 6_000
    await back.close()


async def test_a_daily_across_a_paris_midnight(url: str, clock: ServerClock) -> None:
    """At 23:50 in Paris the first daily game of the day counts and a second is casual; the
    counted one stops at midnight; after it a daily counts again, with the new day's offers."""
    # The next Paris midnight (a day is 23 to 25 hours long).
    midnight_ms = paris.day_start_ms(paris.day_start_ms(clock.ms()) + 30 * 3_600_000)
    clock.advance_to(midnight_ms - 10 * 60_000)
    player = await signed_in(url)
    first = await player.ok("play_solo", game="digits", mode="daily")
    assert first == {"match_id": first["match_id"], "mode": "daily", "counted": True}
    opened = await player.push("digits_game", match_id=first["match_id"])
    assert opened["mode"] == "daily" and opened["ends_ms"] == midnight_ms
    offers_at_midnight = await focus_to_shop(player, first["match_id"], opened)
    other = await signed_in(url)
    others = await other.ok("play_solo", game="digits", mode="daily")
    assert (
        await focus_to_shop(other, others["match_id"]) == offers_at_midnight
    )  # the day's offers, shared
    second = await player.ok("play_solo", game="digits", mode="daily")
    assert second["mode"] == "casual" and not second["counted"]
    await player.push("digits_game")
    # Back to the daily game, then past midnight: it stops by itself.
    await player.ok("reconnect", match_id=first["match_id"], player_id=player.player_id)
    clock.advance_to(midnight_ms + 1_000)
    stopped = await player.push("digits_game", over=True, match_id=first["match_id"])
    assert stopped["status"] == "closed"
    assert (await player.push("digits_digits_ended"))["reason"] == "midnight"
    third = await player.ok("play_solo", game="digits", mode="daily")
    assert third["mode"] == "daily" and third["counted"]
    assert await focus_to_shop(player, third["match_id"]) != offers_at_midnight  # a new day's
    for p in (player, other):
        await p.close()


async def focus_to_shop(
    player: Player, match_id: str, opened: dict[str, Any] | None = None
) -> list[Any]:
    """Round 1's Focus answered wrong to its end (``opened``: the game's first push, taken
    already); the shop's first offers (their names)."""
    bot = DigitsBot(Viewer(1))
    if opened is not None:
        bot.observe(opened)
    pushes = await play(
        player,
        lambda p: p["type"] == "digits_game" and p["phase"] == "shop",
        bot=bot,
        match_id=match_id,
    )
    return [o and o["name"] for o in pushes[-1]["shop"]["offers"]]


async def test_a_room_of_three_side_by_side(url: str, clock: ServerClock) -> None:
    """Three players, each a game of their own, rounds opening together on the host's clock;
    every round's army is another player's slate; the room finishes when every game ended."""
    host, second, third = await signed_in(url), await signed_in(url), await signed_in(url)
    form = {
        "room_rounds": 6,
        "room_shop_seconds": 30,
        "faceoff_seconds": 10,
        "room_combat_seconds": 0,
        "guests_allowed": True,
    }
    assert await error_code(host, "create_room", game="digits", settings={"room_rounds": 7}) == (
        "invalid_room_rounds"
    )
    assert await error_code(host, "create_room", game="maze", mode="room") == ("mode_not_available")
    code = (await host.ok("create_room", game="digits", mode="room", settings=form))["code"]
    await second.ok("join_room", code=code)
    await third.ok("join_room", code=code)
    room_match = (await host.ok("start_room"))["match_id"]
    players = (host, second, third)
    opened = {p.player_id: await p.push("digits_game") for p in players}
    games = {p.player_id: opened[p.player_id]["match_id"] for p in players}
    assert len(set(games.values())) == 3 and room_match not in games.values()
    bots = {p.player_id: DigitsBot(Viewer(1)) for p in players}
    for p in players:
        bots[p.player_id].observe(opened[p.player_id])
    # A round: shop (30 s) + Face-off (10 s) + combat (0 s) + the army's wait (5 s).
    period_ms = 45_000
    faced: dict[str, dict[int, dict[str, Any]]] = {p.player_id: {} for p in players}
    for number in range(1, 7):

        def between_rounds(push: dict[str, Any], number: int = number) -> bool:
            return push["type"] == "digits_game" and (
                push["over"] or (push["round"] == number and push["phase"] == "waiting")
            )

        shown = await asyncio.gather(
            *(
                play(p, between_rounds, bot=bots[p.player_id], match_id=games[p.player_id])
                for p in players
            )
        )
        for p, pushes in zip(players, shown, strict=True):
            faced[p.player_id] |= armies(pushes)
        if all(pushes[-1]["over"] for pushes in shown):
            break
        clock.advance_ms(period_ms)
    # After the last round's combat the games wait for the room's clock to close them.
    for p in players:
        over = await p.push("digits_game", over=True, match_id=games[p.player_id])
        assert over["round"] == 6 and over["status"] == "closed"
    for p in players:
        assert sorted(faced[p.player_id]) == [1, 2, 3, 4, 5, 6]
        assert not any(a["house"] for a in faced[p.player_id].values()), faced[p.player_id]
    finished = await host.push("lobby", event="room_match_finished")
    assert finished["data"]["reason"] == "all_ended"
    for p in players:
        await p.close()


async def test_a_duel_to_its_deadline(url: str, clock: ServerClock) -> None:
    """Ann challenges Bob by his username; Bob accepts; both games start, the same for both.
    Ann plays a round, Bob never starts; at the deadline both stop and the duel is Ann's."""
    ann, bob = await account(url), await account(url)
    declined = (await ann.ok("challenge_duel", opponent=bob.name))["duel_id"]
    # Bob's sockets are told of the challenge (no need to pass the id on), Ann of his answer.
    offered = (await bob.push("lobby", event="duel_offered"))["data"]
    assert (offered["duel_id"], offered["challenger"]["player_id"]) == (declined, ann.player_id)
    assert await bob.ok("decline_duel", duel_id=declined) == {"duel_id": declined}
    assert (await ann.push("lobby", event="duel_declined"))["stream"] == f"duel-{declined}"
    assert await error_code(bob, "accept_duel", duel_id=declined) == "duel_answered"
    duel = (await ann.ok("challenge_duel", opponent=bob.name.upper(), id="challenge"))["duel_id"]
    assert duel != declined
    # The same message again (a lost ack): the same duel, offered once.
    again = await ann.ok("challenge_duel", opponent=bob.name, id="challenge")
    assert again == {"duel_id": duel}
    assert await error_code(ann, "accept_duel", duel_id=duel) == "not_challenged"
    assert (await bob.push("lobby", event="duel_offered"))["data"]["duel_id"] == duel
    assert await bob.ok("accept_duel", duel_id=duel) == {"duel_id": duel}
    accepted = (await ann.push("lobby", event="duel_accepted"))["data"]
    assert accepted["player_id"] == bob.player_id and "shop_seed" not in accepted
    started = await ann.push("lobby", event="duel_started", wait=30)
    assert "settings" not in started["data"]  # the games' seeds and armies
    ann_game, bob_game = started["data"]["match_ids"]
    bobs = await bob.push("digits_game", match_id=bob_game)
    assert bobs["mode"] == "duel" and bobs["phase"] == "focus"
    fought = await play(ann, lambda p: p["type"] == "digits_combat_fought", match_id=ann_game)
    assert armies(fought)[1]["slate"]
    clock.advance_to(bobs["ends_ms"] + 60_000)
    for player, game in ((ann, ann_game), (bob, bob_game)):
        assert (await player.push("digits_game", over=True, match_id=game))["over"]
        assert (await player.push("digits_digits_ended"))["reason"] == "deadline"
    settled = await bob.push("lobby", event="duel_settled", wait=30)
    data = settled["data"]
    assert (data["result"], data["winner"], data["loser"], data["reason"]) == (
        "win",
        ann.player_id,
        bob.player_id,
        "not_started",
    )
    for player in (ann, bob):
        await player.close()
