"""Bad configuration stops a process at start-up, with exit code 2 and the variable's name."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.processes.arena_process import arena_env, free_port, run_to_exit

EXIT_BAD_CONFIG = 2


# One bad value per command: each value's own message is checked in-process by
# tests/runtime/test_config.py, for a fraction of a process start (several seconds) each.
@pytest.mark.parametrize(
    ("command", "variable", "value"),
    [
        ("serve", "ARENA_HTTP_PORT", "eighty"),
        ("match", "ARENA_PARTITIONS", "0"),
        ("matchmaking", "ARENA_DATABASE_URL", "mysql://db/arena"),
        ("rating", "ARENA_LOG_LEVEL", "LOUD"),
        ("gateway", "ARENA_PARTITONS", "8"),  # a misspelt variable is not silently ignored
    ],
)
def test_bad_value_names_the_variable(
    tmp_path: Path, command: str, variable: str, value: str
) -> None:
    env = arena_env(tmp_path / "var", free_port(), **{variable: value})
    result = run_to_exit([command], env)
    assert result.returncode == EXIT_BAD_CONFIG, result.stderr
    assert variable in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "var").exists()  # stopped before touching any state


def test_taken_port_names_the_port_variable(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_to_exit(["serve"], arena_env(tmp_path / "var", port))
    assert result.returncode == EXIT_BAD_CONFIG, result.stderr
    assert "ARENA_HTTP_PORT" in result.stderr


def test_unusable_data_dir_names_the_data_dir_variable(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("in the way")
    result = run_to_exit(["serve"], arena_env(not_a_dir / "var", free_port()))
    assert result.returncode == EXIT_BAD_CONFIG, result.stderr
    assert "ARENA_DATA_DIR" in result.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ARENA_KAFKA_BOOTSTRAP", "127.0.0.1:{port}"),
        ("ARENA_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:{port}/arena"),
        ("ARENA_REDIS_URL", "redis://127.0.0.1:{port}/0"),
    ],
)
def test_unreachable_server_names_its_variable(tmp_path: Path, variable: str, value: str) -> None:
    nothing_listens = free_port()
    env = arena_env(tmp_path / "var", free_port(), **{variable: value.format(port=nothing_listens)})
    result = run_to_exit(["match"], env)
    assert result.returncode == EXIT_BAD_CONFIG, result.stderr
    assert f"bad configuration: {variable}" in result.stderr
