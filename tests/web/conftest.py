"""Browser tests: Debian's Chromium, driven by Playwright, against a real `arena serve`.

Chromium is `make install`'s (Debian's package, never a downloaded build); the client is the
build `make install` made. Where either is missing the tests skip with a message, except under CI
(`CI` set), where a missing part fails the run: a suite must not pass by skipping.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.harness.support import unavailable
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "services" / "gateway" / "web"
ARTIFACTS = REPO / "var" / "test-artifacts" / "web"
CHROMIUM = Path(
    os.environ.get("ARENA_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
)
#: Quiet, reproducible, and nothing phoning home; Playwright gives each launch a fresh profile.
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START_TIMEOUT = 240.0  # arena serve on a loaded two-core machine
# Assertions wait for the page up to this long (Playwright's default, 5 s, is short on a shared
# two-core machine); nothing is timed, they return as soon as the page shows what they expect.
expect.set_options(timeout=20_000)


def require(ok: bool, why: str) -> None:
    """A real part missing fails the tests, as a missing server does (the harness's rule: skip
    only where a developer set ARENA_TEST_ALLOW_SKIP=1, never under CI)."""
    if not ok:
        unavailable(why)


def require_parts() -> None:
    require(CHROMIUM.exists(), f"{CHROMIUM} is missing: `make install` as root installs chromium")
    require(
        (WEB / "dist" / "index.html").exists(),
        "the web client is not built: `make install` (needs npm)",
    )


# Per module: while Playwright's sync API is open it holds an event loop in this thread, which
# pytest-asyncio's tests elsewhere in the session cannot share.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    require_parts()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True
        )
        try:
            yield launched
        finally:
            launched.close()


@dataclass(frozen=True)
class Served:
    url: str
    #: The server's ARENA_* environment: a helper process given it shares the server's log.
    env: dict[str, str]


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One `arena serve` for every browser test (each test makes its own players)."""
    require_parts()
    data = tmp_path_factory.mktemp("web-arena")
    env = arena_env(
        data,
        free_port(),
        ARENA_LOG_LEVEL="WARNING",
        ARENA_PARTITIONS="4",
        ARENA_MATCH_AI_THINK_MS="150",
    )
    process = ArenaProcess(["serve"], env, data / "arena.log")
    try:
        process.wait_until("/readyz", 200, timeout=START_TIMEOUT)
        yield Served(process.url, env)
    finally:
        process.terminate()


@pytest.fixture(scope="session")
def server(served: Served) -> str:
    return served.url


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
