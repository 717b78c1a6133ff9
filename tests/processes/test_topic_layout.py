"""A process finding Arena's topics laid out otherwise than configured stops at start-up."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest
from arena_runtime import topics
from arena_runtime.eventlog.kafka import KafkaEventLog

from tests.processes.arena_process import arena_env, free_port, run_to_exit

EXIT_BAD_CONFIG = 2


@pytest.mark.kafka
async def test_match_refuses_topics_with_another_partition_count(
    tmp_path: Path, kafka_bootstrap: str
) -> None:
    prefix = f"layout{secrets.token_hex(4)}."
    async with KafkaEventLog(kafka_bootstrap, topic_prefix=prefix) as log:
        await topics.ensure_topics(log, partitions=2)
    env = arena_env(
        tmp_path / "var",
        free_port(),
        ARENA_KAFKA_BOOTSTRAP=kafka_bootstrap,
        ARENA_TOPIC_PREFIX=prefix,
        ARENA_PARTITIONS="3",
    )
    result = await asyncio.to_thread(run_to_exit, ["match"], env)
    assert result.returncode == EXIT_BAD_CONFIG, result.stderr
    assert "bad configuration: ARENA_PARTITIONS: topic " + prefix in result.stderr
    assert "exists with partitions 2, not the 3 configured" in result.stderr
    assert "Traceback" not in result.stderr
