"""The server harness cannot let a run pass by skipping: a server it cannot find or start fails
the tests that need it, saying what to start, unless a developer opts into skipping outside CI."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from tests.harness import postgres, redis, support
from tests.harness.support import free_port

NOTHING = f"127.0.0.1:{free_port()}"  # a port nothing listens on (just let go)


def outcome(server: contextlib.AbstractContextManager[Any]) -> BaseException:
    """How looking for a server ended: the test's failure or skip (caught here, so that a skip
    cannot pass for this test's own success)."""
    try:
        server.__enter__()
    except (pytest.fail.Exception, pytest.skip.Exception) as ended:
        return ended
    raise AssertionError("a server was found")


def failed(server: contextlib.AbstractContextManager[Any]) -> str:
    ended = outcome(server)
    assert isinstance(ended, pytest.fail.Exception), f"not a failure: {ended!r}"
    return str(ended)


@pytest.fixture
def developer(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Neither CI nor an opt-in to skipping."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(support.ALLOW_SKIP, raising=False)
    return monkeypatch


def test_a_named_server_that_does_not_answer_fails_with_what_to_start(
    developer: pytest.MonkeyPatch,
) -> None:
    developer.setenv("ARENA_TEST_POSTGRES", f"postgresql://postgres@{NOTHING}/postgres")
    developer.setenv("ARENA_TEST_REDIS", f"redis://{NOTHING}/0")
    assert f"PostgreSQL: nothing answers at {NOTHING}" in failed(postgres.postgres_server())
    assert f"Redis: nothing answers at {NOTHING}" in failed(redis.redis_server())


def test_with_nothing_found_or_startable_the_tests_fail(developer: pytest.MonkeyPatch) -> None:
    developer.delenv("ARENA_TEST_POSTGRES", raising=False)
    developer.delenv("ARENA_TEST_REDIS", raising=False)
    for module in (postgres, redis):
        developer.setattr(module, "listening", lambda host, port: False)
        developer.setattr(module, "docker_reachable", lambda: False)
    developer.setattr(postgres, "server_binaries", lambda: None)
    developer.setattr(redis.shutil, "which", lambda name: None)
    assert "install the PostgreSQL server package" in failed(postgres.postgres_server())
    assert "put redis-server on PATH" in failed(redis.redis_server())


def test_only_a_developer_outside_ci_may_skip(developer: pytest.MonkeyPatch) -> None:
    developer.setenv("ARENA_TEST_REDIS", f"redis://{NOTHING}/0")
    developer.setenv(support.ALLOW_SKIP, "1")
    assert isinstance(outcome(redis.redis_server()), pytest.skip.Exception)
    developer.setenv("CI", "true")
    failed(redis.redis_server())
