"""A service that one process runs in a child process of its own, as a worker of its own.

`arena serve` runs the projections so (``ARENA_SERVE_PROJECTIONS=process``): they only read the
log and write their tables, so nothing in them waits on the other services' event loop, and in
a process of their own they use the machine's second core instead of the serving process's one
(which, under load, is what bounds a move's latency).

The companion is the child's supervisor. It starts `arena <command>` with the parent's settings,
its own HTTP port and ``ARENA_PARENT_PID``; the child's host stops by itself when that process
is gone (even after a ``kill -9`` of the parent). The companion reports the child's ``/readyz``
as its readiness, stops it with SIGTERM when asked to stop (SIGKILL if it overstays), and fails,
so the parent exits 1 like for any dead worker, if the child ends on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys

from arena_runtime import telemetry
from arena_runtime.host.service import ServiceError

log = telemetry.get_logger(__name__)

#: How often the child's /readyz is asked, and how soon its death is noticed.
PROBE_SECONDS = 0.5
#: How long a child may take to stop after SIGTERM before it is killed.
STOP_SECONDS = 10.0


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class Companion:
    """A worker whose work is a child `arena <command>` process."""

    def __init__(self, command: str, env: dict[str, str] | None = None) -> None:
        self.name = f"{command}:process"
        self.command = command
        self.port = free_port()
        self.env = {
            **(os.environ if env is None else env),
            "ARENA_HTTP_HOST": "127.0.0.1",
            "ARENA_HTTP_PORT": str(self.port),
            "ARENA_PARENT_PID": str(os.getpid()),
        }
        self.process: asyncio.subprocess.Process | None = None
        self._ready = False
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena_cli.main", self.command, env=self.env
        )
        log.info("companion started", command=self.command, pid=self.process.pid, port=self.port)

    async def run(self) -> None:
        process = self.process
        assert process is not None, "start() first"
        exited = asyncio.ensure_future(process.wait())
        try:
            while not self._stopping.is_set():
                stop = asyncio.ensure_future(self._stopping.wait())
                await asyncio.wait([exited, stop], timeout=PROBE_SECONDS)
                stop.cancel()
                if exited.done():
                    raise ServiceError(
                        f"arena {self.command} (pid {process.pid}) exited with {exited.result()}"
                    )
                self._ready = await self._probe()
        finally:
            self._ready = False
            await self._stop_child(process, exited)

    def request_stop(self) -> None:
        self._stopping.set()

    def ready(self) -> bool:
        return self._ready

    async def _probe(self) -> bool:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", self.port), PROBE_SECONDS
            )
        except (OSError, TimeoutError):
            return False  # not listening yet
        try:
            writer.write(b"GET /readyz HTTP/1.1\r\nHost: companion\r\nConnection: close\r\n\r\n")
            status = await asyncio.wait_for(reader.readline(), PROBE_SECONDS)
            return status.split(b" ")[1:2] == [b"200"]
        except (OSError, TimeoutError):
            return False
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _stop_child(
        self, process: asyncio.subprocess.Process, exited: asyncio.Future[int]
    ) -> None:
        if not exited.done():
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.shield(exited), STOP_SECONDS)
            except TimeoutError:
                log.warning("companion did not stop in time: killed", command=self.command)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await exited
        log.info("companion stopped", command=self.command, exit_code=exited.result())
