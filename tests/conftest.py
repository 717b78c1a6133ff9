"""Shared fixtures. The real-service harness (broker, PostgreSQL, Redis) lives in tests/harness."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_games.registry import STANDARD
from arena_runtime.envelope import SCHEMAS

pytest_plugins = [
    "tests.harness.kafka",
    "tests.harness.postgres",
    "tests.harness.redis",
]

REPO_ROOT = Path(__file__).resolve().parents[1]

# Every game's payloads, registered explicitly in the test process as `arena` does where it
# starts (nothing registers itself on import; docs/games.md).
STANDARD.register_schemas(SCHEMAS)


def _shared_dir() -> Path:
    # CI lays shared/ beside the clone; developers have it at ../shared too.
    for candidate in (REPO_ROOT.parent / "shared", REPO_ROOT / "shared"):
        if (candidate / "vectors").is_dir():
            return candidate
    raise RuntimeError("shared/ (seeds and vectors) not found beside the repository")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return _shared_dir()


@pytest.fixture(scope="session")
def vectors_dir(shared_dir: Path) -> Path:
    return shared_dir / "vectors"
