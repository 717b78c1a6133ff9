"""`arena verify`: a faithful log verifies; a forged, reordered or doubled answer does not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as pb
from arena_match.verify import verify_log
from arena_runtime import topics
from arena_runtime.envelope import CODEC, Event, new_id
from arena_runtime.proto_gen.arena.v1 import match_pb2

from tests.processes.arena_process import arena_env, free_port, run_to_exit
from tests.services.match.harness import ALICE, MatchClient, ServiceUnderTest, create


async def _append_after(client: MatchClient, match_id: str, forged: Event) -> None:
    last = (await client.events(match_id))[-1]
    event = replace(
        forged, event_id=new_id(), sequence=last.sequence + 1, batch_id=new_id(), batch_index=0
    )
    await client.log.append(topics.MATCH_EVENTS, [CODEC.event_record(event)])


async def test_verify_confirms_a_faithful_log_and_names_a_forged_event(tmp_path: Path) -> None:
    async with ServiceUnderTest(tmp_path) as service:
        client = MatchClient(service.log)
        await client.command("v1", create("v1"))
        await client.command("v2", create("v2"))
        state = await client.state("v1")
        mover = state.seat(state.game.to_move).player_id
        skip_id = await client.send("v1", pb.Skip(player_id=mover))
        skipped = (await client.answer("v1", skip_id)).events[0]
        assert (await verify_log(service.log)).ok(strict=True)
        await service.stop()

        # The same command answered again (as by a zombie writer that won the sequence race).
        await _append_after(client, "v1", skipped)
        # A timeout skip with no timer command behind it.
        forged = replace(skipped, stream="match-v2", causation_id="timer:move:1")
        await _append_after(client, "v2", forged)

        report = await verify_log(service.log)
        problems = {(p.stream, p.what) for p in report.problems}
        assert ("match-v1", "answered twice") in problems
        assert any(s == "match-v2" and "no command" in what for s, what in problems)
        only_v2 = await verify_log(service.log, "v2")
        assert {p.stream for p in only_v2.problems} == {"match-v2"}


async def test_verify_catches_an_event_the_engine_would_not_decide(tmp_path: Path) -> None:
    async with ServiceUnderTest(tmp_path) as service:
        client = MatchClient(service.log)
        await client.command("t", create("t"))
        state = await client.state("t")
        mover = state.seat(state.game.to_move).player_id
        await service.stop()
        # A command answered by hand with an event the rules never produce for it.
        command_id = await client.send("t", pb.Skip(player_id=mover))
        started = (await client.events("t"))[1]
        lie = pb.TurnSkipped(player=3 - state.game.to_move, reason="skip")
        forged = replace(started, type="arena.v1.TurnSkipped", payload=lie, causation_id=command_id)
        await _append_after(client, "t", forged)
        report = await verify_log(service.log)
        assert len(report.problems) == 1 and "engine decides" in report.problems[0].what


async def test_arena_verify_exits_non_zero_with_a_report(tmp_path: Path) -> None:
    async with ServiceUnderTest(tmp_path) as service:
        client = MatchClient(service.log)
        await client.command("cli", create("cli"))
        await client.command("cli", match_pb2.Resign(player_id=ALICE))
        await service.stop()
        env = arena_env(tmp_path, free_port())
        good = run_to_exit(["verify", "--strict"], env)
        assert good.returncode == 0, good.stdout + good.stderr
        assert "OK" in good.stdout and "1 matches" in good.stdout

        missing = run_to_exit(["verify", "nope"], env)
        assert missing.returncode == 1 and "no match" in missing.stderr

        await client.send("cli", pb.Skip(player_id=ALICE))  # never answered: the service is down
        assert (await verify_log(service.log, "cli")).ok(strict=False)
        strict = run_to_exit(["verify", "--strict", "cli"], env)
        assert strict.returncode == 1
        assert "unanswered: match-cli" in strict.stdout and "FAILED" in strict.stderr
