"""Start the `arena` command as a real subprocess and talk to it over HTTP."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.harness.support import free_port as free_port  # re-exported for the tests

ARENA = Path(sys.executable).parent / "arena"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


def arena_env(data_dir: Path, port: int, **extra: str) -> dict[str, str]:
    """The environment of a test process: embedded, under data_dir, on port; no stray ARENA_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(
        ARENA_DATA_DIR=str(data_dir),
        ARENA_HTTP_HOST="127.0.0.1",
        ARENA_HTTP_PORT=str(port),
        ARENA_LOG_FORMAT="console",
        # Test clients all speak from 127.0.0.1: the per-address caps are out of the way.
        ARENA_GUEST_RATE="1000000",
        ARENA_GUEST_BURST="1000000",
        ARENA_WS_MAX_SOCKETS_PER_ADDRESS="1000000",
    )
    env.update(extra)
    return env


class ArenaProcess:
    def __init__(self, args: list[str], env: dict[str, str], log_path: Path) -> None:
        self.port = int(env["ARENA_HTTP_PORT"])
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [str(ARENA), *args], env=env, stdout=self._log, stderr=subprocess.STDOUT
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=5.0)

    def wait_until(self, path: str, status: int, timeout: float = START_TIMEOUT) -> httpx.Response:
        """Poll path until it answers with status; fail with the process output if it never does."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"arena exited with {self.proc.returncode}:\n{self.output()}")
            try:
                response = self.get(path)
                if response.status_code == status:
                    return response
                last = response.status_code
            except httpx.TransportError as exc:
                last = exc
            time.sleep(0.1)
        raise AssertionError(f"{path} never answered {status} (last: {last}):\n{self.output()}")

    def terminate(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.close()
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-60:])
            raise AssertionError(
                f"arena did not stop within {STOP_TIMEOUT:g} s of signal {sig}; its last lines:\n"
                + tail
            ) from None
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


@contextlib.contextmanager
def serving(data_dir: Path, timeout: float = START_TIMEOUT, **env: str) -> Iterator[ArenaProcess]:
    """`arena serve` under ``data_dir`` on a free port, with these ARENA_* settings besides
    arena_env's, ready (/readyz 200) for the block and stopped (SIGTERM) after it."""
    process = ArenaProcess(
        ["serve"], arena_env(data_dir / "var", free_port(), **env), data_dir / "arena.log"
    )
    try:
        process.wait_until("/readyz", 200, timeout)
        yield process
    finally:
        process.terminate()


def run_to_exit(
    args: list[str], env: dict[str, str], timeout: float = START_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARENA), *args], env=env, capture_output=True, text=True, timeout=timeout
    )
