"""``arena``: the real ``arena`` entry point, run in a thread with a test's settings as its only
``ARENA_*`` environment."""

from __future__ import annotations

import asyncio
import os

import pytest
from arena_cli.main import main
from arena_runtime.config import Settings


async def arena(monkeypatch: pytest.MonkeyPatch, settings: Settings, *argv: str) -> int:
    """Run ``arena <argv>`` and return its exit code (in a thread: it runs its own event loop)."""
    for name in list(os.environ):
        if name.startswith("ARENA_") and not name.startswith("ARENA_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ARENA_DATA_DIR", str(settings.data_dir))
    if settings.database_url is not None:
        monkeypatch.setenv("ARENA_DATABASE_URL", settings.database_url.get_secret_value())
    if settings.kafka_bootstrap:
        monkeypatch.setenv("ARENA_KAFKA_BOOTSTRAP", settings.kafka_bootstrap)
        monkeypatch.setenv("ARENA_TOPIC_PREFIX", settings.topic_prefix)
    return await asyncio.to_thread(main, list(argv))
