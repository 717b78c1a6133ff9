"""Digits through the services over one embedded log: matchmaking starts one-seat games alone
(PlaySolo), keeps the ghost store (every ShopClosing filed, served by its owner's preference)
and answers each game waiting for its army with DrawArmy; the match service (a real worker)
opens the Face-off against it. The daily rule (one counted game a Paris day) is tested across
a Paris midnight with the service's own clock parameter set to the instants wanted."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from arena_engine.digits import paris
from arena_games.contract import unpack
from arena_games.digits import ghost_store as gs
from arena_games.digits.ghost_log import GHOST_STREAM, draw_seed, save_command_id
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg
from arena_match.verify import verify_log
from arena_matchmaking.rooms import player_game
from arena_rating.service import ladder_runner
from arena_runtime import topics
from arena_runtime.envelope import CODEC, Event, new_command
from arena_runtime.host import Service, command_worker
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2, rating_pb2

from tests.services.match.harness import MatchClient
from tests.services.match.harness import ServiceUnderTest as MatchService
from tests.services.matchmaking.harness import LobbyClient, eventually, player
from tests.services.matchmaking.harness import ServiceUnderTest as Matchmaking
from tests.services.matchmaking.test_service import create_room


def solo(player_id: str, mode: match_pb2.MatchMode.ValueType, request: str = "r1") -> pb.PlaySolo:
    who = player(player_id)
    who.kind = pb.PLAYER_KIND_ACCOUNT
    return pb.PlaySolo(
        request_id=request, player=who, settings=pb.RoomSettings(game="digits", mode=mode)
    )


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[tuple[MatchService, Matchmaking]]:
    async with MatchService(tmp_path) as match, Matchmaking(match.log, match.settings) as mm:
        yield match, mm


async def start_solo(
    lobby: LobbyClient, player_id: str, mode: match_pb2.MatchMode.ValueType, request: str = "r1"
) -> str:
    answer = await lobby.command(f"player-{player_id}", solo(player_id, mode, request))
    requested = answer[-1]
    assert isinstance(requested, pb.SoloMatchRequested), answer
    return requested.match_id


async def close_shop(
    client: MatchClient, match_id: str, player_id: str, wait: bool = True
) -> dg.ShopEnded | None:
    """Round 1 to its Face-off: the Focus answered wrong (a fast wrong answer voids nothing),
    the shop ended; the army comes from matchmaking (``wait``: wait for it)."""
    await client.wait_for(match_id, lambda e: isinstance(e.payload, dg.DigitsStarted))
    reply = await client.command(match_id, dg.StartFocus(player_id=player_id))
    assert reply.code is None, reply.code
    while True:
        shown = [p for p in reply.payloads if isinstance(p, dg.QuestionShown)]
        if not shown:
            break
        wrong = shown[-1].question.answer % 16 + 1
        reply = await client.command(match_id, dg.AnswerFocus(player_id=player_id, answer=wrong))
        assert reply.code is None, reply.code
    assert any(isinstance(p, dg.ShopOpened) for p in reply.payloads)
    reply = await client.command(match_id, dg.EndShop(player_id=player_id))
    assert reply.code is None and isinstance(reply.payloads[0], dg.ShopClosing), reply.payloads
    if not wait:
        return None
    event = await client.wait_for(match_id, lambda e: isinstance(e.payload, dg.ShopEnded))
    ended: dg.ShopEnded = event.payload
    return ended


async def test_ghosts_saved_served_by_preference_and_drawn_into_the_faceoff(
    services: tuple[MatchService, Matchmaking],
) -> None:
    await check_ghosts(services[0])


@pytest.mark.kafka
async def test_ghosts_and_armies_on_the_broker(
    tmp_path: Path, kafka_bootstrap: str, topic_prefix: str
) -> None:
    """The same on the distributed log (Kafka, Tansu in the tests)."""
    env = {
        "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "ARENA_TOPIC_PREFIX": f"{topic_prefix}digits{secrets.token_hex(3)}.",
    }
    async with MatchService(tmp_path, **env) as match, Matchmaking(match.log, match.settings):
        await check_ghosts(match)


async def check_ghosts(match: MatchService) -> None:
    lobby, client = LobbyClient(match.log), MatchClient(match.log)
    # Alice plays first: the store is empty, so her army is a house ghost (drawn by the store,
    # built by the game).
    alice = await start_solo(lobby, "p_alice", match_pb2.MATCH_MODE_CASUAL)
    start = await lobby.create_match(alice)
    assert start.game == "digits" and start.mode == match_pb2.MATCH_MODE_CASUAL
    first = await close_shop(client, alice, "p_alice")
    assert first is not None
    assert first.army.house and first.army.pool == "house" and first.army.store_position == 0
    # The army came from the store, not from the game's army timer.
    assert [c.command_id for c in await client_commands(lobby, alice, dg.DrawArmy)] == [
        f"army:{alice}:1"
    ]
    # Bob, same round and record: Alice's ghost, anonymous (the default preference).
    bob = await start_solo(lobby, "p_bob", match_pb2.MATCH_MODE_RANKED)
    second = await close_shop(client, bob, "p_bob")
    assert second is not None
    assert not second.army.house and second.army.position == 0 and second.army.shown_as == ""
    assert second.army.tier == "record" and second.army.pool == gs.GENERAL
    assert second.army.seed == draw_seed(save_command_id(bob, 1))
    # Alice shares her login: Carol meets Alice's or Bob's ghost, under Alice's name if hers.
    shared = await lobby.command(
        GHOST_STREAM, dg.SetGhostSharing(player_id="p_alice", sharing="login")
    )
    assert shared == [dg.GhostSharingSet(player_id="p_alice", sharing="login")]
    refused = await lobby.command(
        GHOST_STREAM, dg.SetGhostSharing(player_id="p_alice", sharing="all")
    )
    assert refused[0].code == "invalid_settings"
    # Bob withdraws his: Carol can only meet Alice's, under her login.
    await lobby.command(GHOST_STREAM, dg.SetGhostSharing(player_id="p_bob", sharing="none"))
    carol = await start_solo(lobby, "p_carol", match_pb2.MATCH_MODE_CASUAL)
    third = await close_shop(client, carol, "p_carol")
    assert third is not None
    assert third.army.position == 0 and third.army.shown_as == "P_ALICE"
    # Alice and Carol withdraw theirs too: Dan meets a house ghost.
    await lobby.command(GHOST_STREAM, dg.SetGhostSharing(player_id="p_alice", sharing="none"))
    await lobby.command(GHOST_STREAM, dg.SetGhostSharing(player_id="p_carol", sharing="none"))
    dan = await start_solo(lobby, "p_dan", match_pb2.MATCH_MODE_CASUAL)
    fourth = await close_shop(client, dan, "p_dan")
    assert fourth is not None
    assert fourth.army.house
    # The store's log re-decides every army from its position and seed, as `arena verify` does,
    # and every match command is decided again (the DrawArmy ones included).
    filed = [e.payload for e in await lobby.events(GHOST_STREAM)]
    entries = [entry for entry in map(gs.entry_of, filed) if entry is not None]
    assert len(entries) == 8  # four slates, four preferences
    report = await verify_log(match.log)
    assert report.ghost_armies == 4
    assert report.ok(strict=True), [str(p) for p in report.problems + report.unanswered]
    decisions = await ghost_decisions(lobby)
    checked, problems = gs.verify_draws([*decisions[:1], *decisions[2:]])  # a filing lost
    assert problems and checked < 4


async def ghost_decisions(lobby: LobbyClient) -> list[tuple[str, list[Any]]]:
    """The ghost store's stream as ``arena verify`` reads it: each decision's events, by the
    command that caused them."""
    decisions: list[tuple[str, list[Any]]] = []
    for event in await lobby.events(GHOST_STREAM):
        if decisions and event.batch_index > 0 and decisions[-1][0] == event.causation_id:
            decisions[-1][1].append(event.payload)
        else:
            decisions.append((event.causation_id, [event.payload]))
    return decisions


def tampered(
    decisions: list[tuple[str, list[Any]]], kind: type, change: Any
) -> list[tuple[str, list[Any]]]:
    """The decisions with the first one holding a ``kind`` event changed by ``change``."""
    out, done = [], False
    for command_id, messages in decisions:
        if not done and any(isinstance(m, kind) for m in messages):
            copies = [type(m).FromString(m.SerializeToString()) for m in messages]
            change(copies)
            out.append((command_id, copies))
            done = True
        else:
            out.append((command_id, messages))
    assert done, f"no {kind.__name__} to tamper with"
    return out


async def client_commands(lobby: LobbyClient, match_id: str, kind: type) -> list[Any]:
    return [c for c in await lobby.match_commands(match_id) if isinstance(c.payload, kind)]


async def test_the_store_is_rebuilt_from_its_stream_after_a_restart(
    services: tuple[MatchService, Matchmaking],
) -> None:
    match, matchmaking = services
    lobby, client = LobbyClient(match.log), MatchClient(match.log)
    alice = await start_solo(lobby, "p_alice", match_pb2.MATCH_MODE_CASUAL)
    await close_shop(client, alice, "p_alice")
    await matchmaking.stop()
    await matchmaking.start()  # a new instance: the store is only in the log
    bob = await start_solo(lobby, "p_bob", match_pb2.MATCH_MODE_CASUAL)
    ended = await close_shop(client, bob, "p_bob")
    assert ended is not None
    army = ended.army
    assert not army.house and army.position == 0


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


async def test_one_counted_daily_game_a_paris_day_across_midnight(tmp_path: Path) -> None:
    """23:50 in Paris (22:50 UTC in December): the first daily game counts, with the day's
    shared shop seed; a second that day is casual. Past Paris midnight (23:05 UTC) a new day:
    a daily game counts again, with the new day's seed."""
    now = {"t": at("2026-12-07T22:50:00")}
    clock = lambda: now["t"]  # noqa: E731  # the service's clock parameter
    async with MatchService(tmp_path) as match, Matchmaking(match.log, match.settings, clock):
        lobby = LobbyClient(match.log)
        stream = "player-p_alice"
        first = (await lobby.command(stream, solo("p_alice", match_pb2.MATCH_MODE_DAILY, "a")))[-1]
        assert first.counted and first.day == "2026-12-07"
        assert first.settings.mode == match_pb2.MATCH_MODE_DAILY
        seed = unpack(first.settings.settings, dg.DigitsSettings).shop_seed
        bob = (await lobby.command("player-p_bob", solo("p_bob", match_pb2.MATCH_MODE_DAILY, "b")))[
            -1
        ]
        assert unpack(bob.settings.settings, dg.DigitsSettings).shop_seed == seed  # shared
        second = (await lobby.command(stream, solo("p_alice", match_pb2.MATCH_MODE_DAILY, "c")))[-1]
        assert not second.counted and second.settings.mode == match_pb2.MATCH_MODE_CASUAL
        assert not unpack(second.settings.settings, dg.DigitsSettings).HasField("shop_seed")
        start = await lobby.create_match(second.match_id)
        assert start.mode == match_pb2.MATCH_MODE_CASUAL
        now["t"] = at("2026-12-07T23:05:00")  # 00:05 on the 8th in Paris
        assert paris.day_key(int(now["t"].timestamp() * 1000)) == "2026-12-08"
        third = (await lobby.command(stream, solo("p_alice", match_pb2.MATCH_MODE_DAILY, "d")))[-1]
        assert third.counted and third.day == "2026-12-08"
        assert unpack(third.settings.settings, dg.DigitsSettings).shop_seed != seed
        start = await lobby.create_match(third.match_id)
        assert start.mode == match_pb2.MATCH_MODE_DAILY
        # The match service plays it as a daily game: stopped at the next Paris midnight.
        client = MatchClient(match.log)
        began = await client.wait_for(
            third.match_id, lambda e: isinstance(e.payload, dg.DigitsStarted)
        )
        assert began.payload.mode == "daily"
        # It stops at the next Paris midnight after its start (the match service's clock).
        ends_ms = began.payload.ends_ms
        assert paris.day_key(ends_ms) != paris.day_key(ends_ms - 1)  # a Paris midnight
        match.advance((ends_ms - match.clock()) / 1000 + 1)
        stopped = await client.wait_for(
            third.match_id, lambda e: isinstance(e.payload, match_pb2.MatchEnded)
        )
        assert stopped.payload.reason == "midnight"
        refused = (await lobby.command(stream, solo("p_alice", match_pb2.MATCH_MODE_DUEL, "e")))[-1]
        assert refused.code == "mode_not_available"
        guest = pb.PlaySolo(
            request_id="g",
            player=player("p_guest"),
            settings=pb.RoomSettings(game="digits", mode=match_pb2.MATCH_MODE_RANKED),
        )
        assert (await lobby.command("player-p_guest", guest))[-1].code


async def test_a_room_of_three_players_side_by_side(
    services: tuple[MatchService, Matchmaking],
) -> None:
    """A Digits room: three players, each with a game of their own started together with the
    same offers and clock; round 1's armies are the others' slates in turn."""
    match, _ = services
    lobby, client = LobbyClient(match.log), MatchClient(match.log)
    room_settings = pb.RoomSettings(game="digits", mode=match_pb2.MATCH_MODE_ROOM)
    opened = await create_room(lobby, "p_alice", room_settings)
    assert opened.settings.seats == 1  # one seat a game; the room takes up to eight players
    room = f"room-{opened.code}"
    for name in ("p_bob", "p_cy"):
        joined = await lobby.command(room, pb.JoinRoom(player=player(name)))
        assert [type(e) for e in joined] == [pb.RoomJoined]
    gus = player("p_gus")
    gus.kind = pb.PLAYER_KIND_GUEST  # the host did not let guests in (the default)
    assert (await lobby.command(room, pb.JoinRoom(player=gus)))[0].code == "guests_not_allowed"
    refused = await lobby.command(room, pb.StartRoom(player_id="p_bob"))
    assert refused[0].code == "not_host"
    started = (await lobby.command(room, pb.StartRoom(player_id="p_alice")))[-1]
    assert isinstance(started, pb.RoomMatchStarted)
    assert [p.player_id for p in started.seats] == ["p_alice", "p_bob", "p_cy"]
    shared = unpack(started.settings.settings, dg.DigitsSettings)
    assert shared.HasField("shop_seed") and shared.HasField("room_started_ms")
    games = {p.player_id: player_game(started.match_id, p.player_id) for p in started.seats}
    for name, game in games.items():
        start = await lobby.create_match(game)
        assert start.mode == match_pb2.MATCH_MODE_ROOM and start.room_code == opened.code
        assert [s.player_id for s in start.seats] == [name]
        assert unpack(start.settings, dg.DigitsSettings) == shared
    closings = {}
    for name, game in games.items():
        await client.wait_for(game, lambda e: isinstance(e.payload, dg.RoundStarted))
        await close_shop(client, game, name, wait=False)
        closing = await client.wait_for(game, lambda e: isinstance(e.payload, dg.ShopClosing))
        closings[name] = closing.payload
    faced = {"p_alice": "p_bob", "p_bob": "p_cy", "p_cy": "p_alice"}  # round 1: the next one
    for name, game in games.items():
        event = await client.wait_for(game, lambda e: isinstance(e.payload, dg.ShopEnded))
        army = event.payload.army
        assert army.tier == "room" and army.pool == f"room:{opened.code}"
        assert army.slate == closings[faced[name]].slate and army.shown_as == ""
        commands = await client_commands(lobby, game, dg.DrawArmy)
        assert [c.command_id for c in commands] == [f"army:{game}:1"]
    # `arena verify` takes the room's turn again; a turn drawn otherwise (two armies swapped, or
    # another seed) is reported.
    report = await verify_log(match.log)
    assert report.ghost_armies == 3
    assert report.ok(), [str(p) for p in report.problems]
    decisions = await ghost_decisions(lobby)
    assert gs.verify_draws(decisions) == (3, [])

    # (The three slates are alike here: all ended the shop at once with the same offers.)
    def named(messages: list[Any]) -> None:
        next(m for m in messages if isinstance(m, dg.ArmyDrawn)).army.shown_as = "P_BOB"

    def reseed(messages: list[Any]) -> None:
        next(m for m in messages if isinstance(m, dg.ArmyDrawn)).army.seed += 1

    for change in (named, reseed):
        _, problems = gs.verify_draws(tampered(decisions, dg.ArmyDrawn, change))
        assert len(problems) == 1 and "draws" in problems[0], problems
    # Dee joins while round 1 is on: that round counts lost, her game starts at once and waits
    # for round 2, which the four play together on the host's clock.
    joined, late = await lobby.command(room, pb.JoinRoom(player=player("p_dee")))
    assert isinstance(joined, pb.RoomJoined) and isinstance(late, pb.RoomGameStarted)
    assert list(late.missed) == [0, 0, 0, 1] and late.players[-1] == "p_dee"
    dee = late.match_id
    start = await lobby.create_match(dee)
    assert unpack(start.settings, dg.DigitsSettings).missed_rounds == 1
    missed = await client.wait_for(dee, lambda e: isinstance(e.payload, dg.RoundsMissed))
    assert missed.payload.count == 1
    games["p_dee"] = dee
    match.advance(shared.room_shop_seconds + shared.faceoff_seconds + 40)  # round 2 opens
    for name, game in games.items():
        await client.wait_for(
            game, lambda e: isinstance(e.payload, dg.RoundStarted) and e.payload.round == 2
        )
        reply = await client.command(game, dg.StartFocus(player_id=name))
        assert reply.code is None, (name, reply.code)
        while shown := [p for p in reply.payloads if isinstance(p, dg.QuestionShown)]:
            wrong = shown[-1].question.answer % 16 + 1
            reply = await client.command(game, dg.AnswerFocus(player_id=name, answer=wrong))
        assert (await client.command(game, dg.EndShop(player_id=name))).code is None
    for name, game in games.items():
        event = await client.wait_for(
            game, lambda e: isinstance(e.payload, dg.ShopEnded) and e.payload.army.round == 2
        )
        assert event.payload.army.tier == "room", name  # another player's slate, not a house


def account(player_id: str) -> pb.LobbyPlayer:
    who = player(player_id)
    who.kind = pb.PLAYER_KIND_ACCOUNT
    return who


async def test_a_duel_to_its_deadline(services: tuple[MatchService, Matchmaking]) -> None:
    """Ann challenges Bob; at acceptance the store draws the same 12 armies for both and both
    games start with the same seeds and the deadline 24 h later. Ann plays a round, Bob never
    starts; past the deadline both games stop by themselves and the duel is Ann's."""
    match, _ = services
    lobby, client = LobbyClient(match.log), MatchClient(match.log)
    duel = "duel-d1"
    settings = pb.RoomSettings(game="digits", mode=match_pb2.MATCH_MODE_DUEL)
    guest = pb.ChallengeDuel(challenger=account("p_ann"), opponent=player("p_gus"))
    guest.settings.CopyFrom(settings)
    assert (await lobby.command("duel-d0", guest))[0].code == "ranked_requires_accounts"
    challenge = pb.ChallengeDuel(
        challenger=account("p_ann"), opponent=account("p_bob"), settings=settings
    )
    offered = await lobby.command(duel, challenge)
    assert isinstance(offered[0], pb.DuelOffered)
    assert (await lobby.command(duel, pb.AcceptDuel(player_id="p_ann")))[0].code == (
        "not_challenged"
    )
    accepted = (await lobby.command(duel, pb.AcceptDuel(player_id="p_bob")))[0]
    assert isinstance(accepted, pb.DuelAccepted)
    assert accepted.deadline_ms - accepted.accepted_ms == 24 * 3_600_000
    started = await lobby.wait_event(duel, pb.DuelStarted)
    ann, bob = started.match_ids
    # `arena verify` draws the 12 armies again; 12 drawn otherwise are reported.
    report = await verify_log(match.log)
    assert report.ghost_armies == 12 and report.ok(), [str(p) for p in report.problems]
    decisions = await ghost_decisions(lobby)

    def reorder(messages: list[Any]) -> None:
        drawn = next(m for m in messages if isinstance(m, dg.DuelArmiesDrawn))
        armies = list(drawn.armies)
        del drawn.armies[:]
        drawn.armies.extend([armies[1], armies[0], *armies[2:]])

    assert gs.verify_draws(decisions) == (12, [])
    _, problems = gs.verify_draws(tampered(decisions, dg.DuelArmiesDrawn, reorder))
    assert len(problems) == 1 and "other armies" in problems[0], problems
    for game, name in ((ann, "p_ann"), (bob, "p_bob")):
        start = await lobby.create_match(game)
        assert start.mode == match_pb2.MATCH_MODE_DUEL and start.seats[0].player_id == name
        played = unpack(start.settings, dg.DigitsSettings)
        assert len(played.opponents) == 12 and played.ends_ms == accepted.deadline_ms
        assert (played.player_seed, played.shop_seed) == (
            accepted.player_seed,
            accepted.shop_seed,
        )
    assert unpack((await lobby.create_match(ann)).settings, dg.DigitsSettings) == unpack(
        (await lobby.create_match(bob)).settings, dg.DigitsSettings
    )
    first = await close_shop(client, ann, "p_ann")  # the Face-off opens at once
    assert first is not None and first.army == played.opponents[0]
    fought = await client.command(ann, dg.Fight(player_id="p_ann"))
    assert any(isinstance(p, dg.CombatFought) for p in fought.payloads)
    match.advance(24 * 3600 + 60)  # past the deadline: both games stop
    for game in (ann, bob):
        ended = await client.wait_for(game, lambda e: isinstance(e.payload, match_pb2.MatchEnded))
        assert ended.payload.reason == "deadline"
    settled = await lobby.wait_event(duel, pb.DuelSettled)
    assert (settled.result, settled.winner, settled.loser, settled.reason) == (
        "win",
        "p_ann",
        "p_bob",
        "not_started",
    )


async def credit(log: Any, player_id: str, amount: int) -> None:
    command = new_command(
        f"credits-{player_id}",
        rating_pb2.CreditCredits(movement_id=f"gift-{player_id}", amount=amount, reason="gift"),
        command_id=f"gift-{player_id}",
    )
    await log.append(topics.RATING_COMMANDS, [CODEC.command_record(command)])


async def balance(log: Any, player_id: str) -> tuple[int, int]:
    ledger = (await ladder_runner(log).load(f"credits-{player_id}")).state.ledger
    return ledger.balance, sum(ledger.holds.values())


async def test_duel_stakes_held_then_captured_or_returned(
    services: tuple[MatchService, Matchmaking],
) -> None:
    """With the rating service's ledgers running: both stakes are held before the games start;
    the winner gets the loser's; a stake that cannot be held cancels the duel and returns the
    other."""
    match, _ = services
    log = match.log
    ledgers = Service(
        "rating",
        [
            command_worker(
                log, "rating", (topics.RATING_COMMANDS,), ladder_runner(log).handle_record
            )
        ],
    )
    await ledgers.start()
    try:
        lobby, client = LobbyClient(log), MatchClient(log)
        for name, amount in (("p_ann", 100), ("p_bob", 100), ("p_cy", 10)):
            await credit(log, name, amount)
        settings = pb.RoomSettings(game="digits", mode=match_pb2.MATCH_MODE_DUEL)
        # Cy cannot hold 50: cancelled, and Ann's stake comes back.
        poor = pb.ChallengeDuel(
            challenger=account("p_ann"), opponent=account("p_cy"), stake=50, settings=settings
        )
        await lobby.command("duel-poor", poor)
        await lobby.command("duel-poor", pb.AcceptDuel(player_id="p_cy"))
        cancelled = await lobby.wait_event("duel-poor", pb.DuelSettled)
        assert (cancelled.result, cancelled.reason) == ("cancelled", "stake_refused")

        async def settled_back() -> bool:
            return await balance(log, "p_ann") == (100, 0) and await balance(log, "p_cy") == (10, 0)

        await eventually(settled_back, "Ann's stake returned")
        assert not [
            e for e in await lobby.events("duel-poor") if isinstance(e.payload, pb.DuelStarted)
        ]
        # Ann and Bob stake 50 each; Bob never starts: Ann wins his stake.
        rich = pb.ChallengeDuel(
            challenger=account("p_ann"), opponent=account("p_bob"), stake=50, settings=settings
        )
        await lobby.command("duel-rich", rich)
        await lobby.command("duel-rich", pb.AcceptDuel(player_id="p_bob"))
        started = await lobby.wait_event("duel-rich", pb.DuelStarted)
        assert await balance(log, "p_ann") == (50, 50) and await balance(log, "p_bob") == (50, 50)
        ann = started.match_ids[0]
        await close_shop(client, ann, "p_ann")
        await client.command(ann, dg.Fight(player_id="p_ann"))
        match.advance(24 * 3600 + 60)
        settled = await lobby.wait_event("duel-rich", pb.DuelSettled)
        assert (settled.winner, settled.reason) == ("p_ann", "not_started")

        async def paid() -> bool:
            return await balance(log, "p_ann") == (150, 0) and await balance(log, "p_bob") == (
                50,
                0,
            )

        await eventually(paid, "the stakes settled")
    finally:
        await ledgers.stop()


async def test_a_ghost_is_frozen_with_the_rating_last_read(
    services: tuple[MatchService, Matchmaking],
) -> None:
    """Matchmaking follows the Digits ladder's ratings and files each ghost with its owner's."""
    match, matchmaking = services
    lobby, client = LobbyClient(match.log), MatchClient(match.log)
    rated = rating_pb2.UnitRated(
        match_id="earlier",
        game="digits",
        player=rating_pb2.LadderPlayer(player_id="p_ann"),
        unit=1,
        before=1000,
        after=1234,
    )
    event = Event(
        event_id="rated-1",
        stream="ladder-digits",
        sequence=1,
        type=rated.DESCRIPTOR.full_name,
        payload=rated,
        time=new_command("x", pb.Dequeue()).time,
    )
    await match.log.append(topics.RATING_EVENTS, [CODEC.event_record(event)])

    async def read() -> bool:
        return matchmaking.matchmaking.ghost_ratings["digits"].get("p_ann") == 1234

    await eventually(read, "the rating read")
    ann = await start_solo(lobby, "p_ann", match_pb2.MATCH_MODE_RANKED)
    await close_shop(client, ann, "p_ann")
    filed = [e.payload for e in await lobby.events(GHOST_STREAM)]
    (filing,) = [p for p in filed if isinstance(p, dg.GhostFiled)]
    assert filing.rating == 1234 and filing.closing.player_id == "p_ann"


async def rate(log: Any, player_id: str, sequence: int, after: int) -> None:
    """A Digits rating on the ladder's stream, as the rating service writes it."""
    rated = rating_pb2.UnitRated(
        match_id=f"earlier-{sequence}",
        game="digits",
        player=rating_pb2.LadderPlayer(player_id=player_id),
        unit=1,
        before=1000,
        after=after,
    )
    event = Event(
        event_id=f"rated-{sequence}",
        stream="ladder-digits",
        sequence=sequence,
        type=rated.DESCRIPTOR.full_name,
        payload=rated,
        time=new_command("x", pb.Dequeue()).time,
    )
    await log.append(topics.RATING_EVENTS, [CODEC.event_record(event)])


async def test_a_restart_changes_no_frozen_rating(
    services: tuple[MatchService, Matchmaking],
) -> None:
    await check_rating_after_restart(*services)


@pytest.mark.kafka
async def test_a_restart_changes_no_frozen_rating_on_the_broker(
    tmp_path: Path, kafka_bootstrap: str, topic_prefix: str
) -> None:
    env = {
        "ARENA_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "ARENA_TOPIC_PREFIX": f"{topic_prefix}digits{secrets.token_hex(3)}.",
    }
    async with (
        MatchService(tmp_path, **env) as match,
        Matchmaking(match.log, match.settings) as matchmaking,
    ):
        await check_rating_after_restart(match, matchmaking)


async def check_rating_after_restart(match: MatchService, matchmaking: Matchmaking) -> None:
    """Ann's ghost is filed at 1234; she is rated 1300 (read), matchmaking restarts (its events
    group resumes past that rating), and her next ghost is filed at 1300, as without the
    restart, not at her latest ghost's 1234."""
    lobby, client = LobbyClient(match.log), MatchClient(match.log)

    async def read(rating: int) -> None:
        async def seen() -> bool:
            return matchmaking.matchmaking.ghost_ratings["digits"].get("p_ann") == rating

        await eventually(seen, f"the rating {rating} read")

    await rate(match.log, "p_ann", 1, 1234)
    await read(1234)
    first = await start_solo(lobby, "p_ann", match_pb2.MATCH_MODE_RANKED)
    await close_shop(client, first, "p_ann")
    await rate(match.log, "p_ann", 2, 1300)
    await read(1300)
    await matchmaking.stop()
    await matchmaking.start()
    second = await start_solo(lobby, "p_ann", match_pb2.MATCH_MODE_RANKED, "r2")
    await close_shop(client, second, "p_ann")
    filings = {
        e.payload.match_id: e.payload.rating
        for e in await lobby.events(GHOST_STREAM)
        if isinstance(e.payload, dg.GhostFiled)
    }
    assert filings == {first: 1234, second: 1300}


async def test_a_voided_games_ghosts_are_never_served(
    services: tuple[MatchService, Matchmaking],
) -> None:
    """Ann answers faster than a person can: her game voids itself, and the store withdraws its
    ghosts, so Bob, with the same record, meets a house ghost."""
    match, _ = services
    lobby, client = LobbyClient(match.log), MatchClient(match.log)
    ann = await start_solo(lobby, "p_ann", match_pb2.MATCH_MODE_CASUAL)
    await client.wait_for(ann, lambda e: isinstance(e.payload, dg.DigitsStarted))
    reply = await client.command(ann, dg.StartFocus(player_id="p_ann"))
    shown = [p for p in reply.payloads if isinstance(p, dg.QuestionShown)][-1]
    right = dg.AnswerFocus(player_id="p_ann", answer=shown.question.answer)
    reply = await client.command(ann, right)  # well under 300 ms after the page was shown
    assert any(isinstance(p, dg.GameVoided) for p in reply.payloads)

    async def withdrawn() -> bool:
        return any(
            isinstance(e.payload, dg.GhostsWithdrawn) and e.payload.match_id == ann
            for e in await lobby.events(GHOST_STREAM)
        )

    await eventually(withdrawn, "the voided game's ghosts withdrawn")
    while shown_now := [p for p in reply.payloads if isinstance(p, dg.QuestionShown)]:
        wrong = shown_now[-1].question.answer % 16 + 1
        reply = await client.command(ann, dg.AnswerFocus(player_id="p_ann", answer=wrong))
    await client.command(ann, dg.EndShop(player_id="p_ann"))
    await client.wait_for(ann, lambda e: isinstance(e.payload, dg.ShopEnded))
    bob = await start_solo(lobby, "p_bob", match_pb2.MATCH_MODE_CASUAL)
    faced = await close_shop(client, bob, "p_bob")
    assert faced is not None and faced.army.house


async def test_the_tutorial_and_a_trial_are_played_alone_and_never_saved(
    services: tuple[MatchService, Matchmaking],
) -> None:
    match, _ = services
    lobby, client = LobbyClient(match.log), MatchClient(match.log)
    visitor = pb.PlaySolo(
        request_id="t",
        player=player("p_visitor"),  # a guest may try
        settings=pb.RoomSettings(game="digits", mode=match_pb2.MATCH_MODE_TRIAL),
    )
    trial = (await lobby.command("player-p_visitor", visitor))[-1].match_id
    tutorial = await start_solo(lobby, "p_ann", match_pb2.MATCH_MODE_TUTORIAL)
    for game, name in ((trial, "p_visitor"), (tutorial, "p_ann")):
        faced = await close_shop(client, game, name)
        assert faced is not None and faced.army.house  # the game's own ghost, at once
        assert await client_commands(lobby, game, dg.DrawArmy) == []
    assert (await lobby.events(GHOST_STREAM)) == []  # nothing filed


async def test_a_duel_player_who_only_answered_wrong_has_started(
    services: tuple[MatchService, Matchmaking],
) -> None:
    """ "Started" is any action the player took: Bob answers every Focus page wrong and never
    fights; he has started, so the duel is decided on the record, not as "not_started"."""
    match, _ = services
    lobby, client = LobbyClient(match.log), MatchClient(match.log)
    duel = "duel-wrong"
    settings = pb.RoomSettings(game="digits", mode=match_pb2.MATCH_MODE_DUEL)
    challenge = pb.ChallengeDuel(
        challenger=account("p_ann"), opponent=account("p_bob"), settings=settings
    )
    await lobby.command(duel, challenge)
    await lobby.command(duel, pb.AcceptDuel(player_id="p_bob"))
    started = await lobby.wait_event(duel, pb.DuelStarted)
    ann, bob = started.match_ids
    await close_shop(client, ann, "p_ann")
    await client.command(ann, dg.Fight(player_id="p_ann"))
    await client.wait_for(bob, lambda e: isinstance(e.payload, dg.DigitsStarted))
    reply = await client.command(bob, dg.StartFocus(player_id="p_bob"))
    while shown := [p for p in reply.payloads if isinstance(p, dg.QuestionShown)]:
        wrong = shown[-1].question.answer % 16 + 1
        reply = await client.command(bob, dg.AnswerFocus(player_id="p_bob", answer=wrong))
    match.advance(24 * 3600 + 60)
    await client.wait_for(bob, lambda e: isinstance(e.payload, match_pb2.MatchEnded))
    settled = await lobby.wait_event(duel, pb.DuelSettled)
    sides = [
        e.payload.side
        for e in await lobby.events(duel)
        if isinstance(e.payload, pb.DuelGameRecorded)
    ]
    assert {s.player_id: s.started for s in sides} == {"p_ann": True, "p_bob": True}
    assert sides and all(s.focus_right == 0 for s in sides if s.player_id == "p_bob")
    assert settled.reason != "not_started", settled
