"""The match service's snapshots: a graceful stop snapshots every partition it owns, and the next
owner resumes from them plus the tail, holding what a full replay of the log gives."""

from __future__ import annotations

from pathlib import Path

from arena_match.runner import Decider, MatchRunner
from arena_match.service import match_settings
from arena_match.state import stream_of
from arena_match.verify import verify_log
from arena_runtime import metrics, topics
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.snapshots import SnapshotStore

from tests.services.match.harness import (
    ALICE,
    BOB,
    PARTITIONS,
    MatchClient,
    ServiceUnderTest,
    create,
    scripted_move,
)


def loads(outcome: str) -> float:
    return metrics.sample(
        "arena_stream_snapshot_loads_total", {"topic": topics.MATCH_EVENTS, "outcome": outcome}
    )


async def test_a_new_owner_resumes_from_the_snapshot_of_a_graceful_stop(tmp_path: Path) -> None:
    async with ServiceUnderTest(tmp_path, ARENA_MATCH_EVICT_SECONDS="0") as service:
        client = MatchClient(service.log)
        await client.command("done", create("done"))
        await client.command("done", match_pb2.Resign(player_id=BOB))  # finished, then evicted
        await client.command("live", create("live"))
        move = scripted_move(await client.state("live"), seed=1)
        first = await client.command("live", move, command_id="session-1:msg-1")
        assert first.code is None
        assert service.worker is not None
        done = service.worker.runner.view(stream_of("done"))
        assert done is not None and done.state.evicted

        await service.stop()  # graceful: every owned partition is snapshotted
        store = SnapshotStore(service.log, topics.MATCH_EVENTS)
        runner = MatchRunner(service.log, Decider(match_settings(service.settings)))
        used = {await runner.partition_of(stream_of(m)) for m in ("done", "live")}
        snapshot = await store.load(await runner.partition_of(stream_of("done")))
        assert snapshot is not None
        assert [s for s, _, _ in snapshot.resting] == ["match-done"]  # its sequence alone

        resumed_before, replayed_before = loads("snapshot"), loads("replay")
        await service.start()
        # The new owner answers a repeat of a command answered before the stop once: once a
        # later command is answered, so is the repeat sent before it, and nothing was appended.
        await client.send("live", move, command_id="session-1:msg-1")
        probe = await client.command("live", match_pb2.Resign(player_id="p_eve"))
        assert probe.code == "not_a_player"
        events = await client.events("live")
        answers = [e.event_id for e in events if e.causation_id == "session-1:msg-1"]
        assert answers == [e.event_id for e in first.events]
        # What it holds is what a full replay of the log holds (with the finished match
        # evicted, as the service did); compared once it has stopped, so nothing is in flight.
        assert service.worker is not None
        resumed = service.worker.runner
        # The partitions that hold matches resumed from their snapshots; the empty ones have none.
        assert loads("snapshot") - resumed_before == len(used)
        assert loads("replay") - replayed_before == PARTITIONS - len(used)
        await service.stop()
        await runner.catch_up()
        assert runner.evict(stream_of("done"))
        for stream in (stream_of("done"), stream_of("live")):
            ours, theirs = resumed.view(stream), runner.view(stream)
            assert ours is not None and theirs is not None
            assert (ours.state, ours.sequence, ours.batch_id) == (
                theirs.state,
                theirs.sequence,
                theirs.batch_id,
            )
            resumed.compact(stream)
            runner.compact(stream)
            assert ours.answers == theirs.answers
        # … and the game goes on.
        await service.start()
        assert (await client.command("live", match_pb2.Resign(player_id=ALICE))).code is None

        # The evicted match still refuses every command.
        refused = await client.command("done", match_pb2.Resign(player_id=ALICE))
        assert refused.code == "game_over"
        report = await verify_log(service.log)
        assert report.problems == [] and report.unanswered == []
