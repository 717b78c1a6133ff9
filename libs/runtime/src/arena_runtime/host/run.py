"""Run one or several services in this process until SIGTERM or SIGINT.

Order matters: the HTTP server comes up first so /healthz answers while the services join their
groups and catch up (/readyz says 503 until they have); on a signal the services stop first,
each worker finishing its batch and committing, and only then the HTTP server and the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence

from arena_runtime import metrics, telemetry
from arena_runtime.config import ConfigError, Settings, load_settings
from arena_runtime.host import heap
from arena_runtime.host.clock import StartClock
from arena_runtime.host.http import HealthApp, bind, make_server
from arena_runtime.host.metrics import ServiceCollector
from arena_runtime.host.runtime import Runtime, open_runtime
from arena_runtime.host.service import Service, start_together

log = telemetry.get_logger(__name__)

ServiceBuilder = Callable[[Runtime], Awaitable[Service]]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_CONFIG = 2

#: How often the start-up report looks whether every service is ready yet.
READY_POLL_SECONDS = 0.05
#: How long a stop may take from its signal before the process ends anyway (ShutdownWatchdog).
SHUTDOWN_LIMIT_SECONDS = 25.0


def run(builders: Sequence[ServiceBuilder], process_name: str) -> int:
    """The body of `arena serve` and of each single-service command; returns the exit code."""
    clock = StartClock()
    clock.mark("imported")
    try:
        settings = load_settings()
    except ConfigError as exc:
        return _bad_configuration(process_name, exc)
    if "service_name" not in settings.model_fields_set:
        # Traces of `arena match` say arena-match unless ARENA_SERVICE_NAME says otherwise.
        name = "arena" if process_name == "serve" else f"arena-{process_name}"
        settings = settings.model_copy(update={"service_name": name})
    telemetry.configure_telemetry(settings)
    try:
        with asyncio.Runner(loop_factory=_loop_factory(settings)) as runner:
            return runner.run(serve(settings, builders, process_name, clock))
    except ConfigError as exc:
        return _bad_configuration(process_name, exc)
    finally:
        telemetry.shutdown_tracing()


async def _stop_when_orphaned(parent_pid: int, stop: asyncio.Event) -> None:
    """A child of `arena serve` stops when its parent is gone (it is then re-parented)."""
    while not stop.is_set():
        if os.getppid() != parent_pid:
            log.warning("the parent process is gone: stopping", parent_pid=parent_pid)
            stop.set()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


def _loop_factory(settings: Settings) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop unless ARENA_EVENT_LOOP says asyncio: every hop of a move is a socket write or a
    wake-up from one of the log's threads, which libuv's loop does for less CPU."""
    if settings.event_loop == "asyncio":
        return None
    import uvloop

    return uvloop.new_event_loop


def _bad_configuration(process_name: str, exc: ConfigError) -> int:
    print(f"arena {process_name}: bad configuration: {exc}", file=sys.stderr)
    return EXIT_BAD_CONFIG


async def serve(
    settings: Settings,
    builders: Sequence[ServiceBuilder],
    process_name: str = "arena",
    clock: StartClock | None = None,
) -> int:
    clock = clock or StartClock()
    clock.mark("configured")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    watchdog = ShutdownWatchdog(process_name)

    def on_signal() -> None:
        stop.set()
        watchdog.arm()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    try:
        return await _serve(settings, builders, process_name, stop, clock)
    finally:
        watchdog.disarm()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


class ShutdownWatchdog:
    """Ends the process if a stop overruns SHUTDOWN_LIMIT_SECONDS after the signal.

    A graceful stop drains sockets (ARENA_WS_DRAIN_SECONDS), lets workers finish (10 s) and
    gives up an unanswered last commit (5 s); but a client library waiting on a broker that
    stopped answering may ignore all of that (seen in CI after a broker outage: aiokafka's
    stop waited for its request timeout). Everything acknowledged is in the log already, so
    exiting is safe; it is done from a thread, which a stuck event loop cannot hold up, before
    Kubernetes' 30 s grace runs out.
    """

    def __init__(self, process_name: str, limit: float | None = None) -> None:
        self.process_name = process_name
        self.limit = SHUTDOWN_LIMIT_SECONDS if limit is None else limit
        self._timer: threading.Timer | None = None

    def arm(self) -> None:
        if self._timer is None:
            self._timer = threading.Timer(self.limit, self._overran)
            self._timer.daemon = True
            self._timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _overran(self) -> None:
        log.error(
            "the stop overran its limit: exiting now (everything acknowledged is in the log)",
            process=self.process_name,
            seconds=self.limit,
        )
        os._exit(EXIT_FAILED)


async def _serve(
    settings: Settings,
    builders: Sequence[ServiceBuilder],
    process_name: str,
    stop: asyncio.Event,
    clock: StartClock | None = None,
) -> int:
    clock = clock or StartClock()
    try:
        sock = bind(settings.http_host, settings.http_port)
    except OSError as exc:
        where = f"{settings.http_host}:{settings.http_port}"
        raise ConfigError("ARENA_HTTP_PORT", f"cannot listen on {where}: {exc.strerror}") from exc
    try:
        async with open_runtime(settings, clock.mark) as runtime:
            services = [await build(runtime) for build in builders]
            clock.mark("built")
            apps = [s.http_app for s in services if s.http_app is not None]
            app = HealthApp(
                readiness=lambda: {s.name: s.ready() for s in services},
                metrics=metrics.exposition,
                inner=apps[0] if apps else None,
                degraded=lambda: {k: v for s in services for k, v in s.degraded().items()},
            )
            server = make_server(app, sock, settings)
            server_task = asyncio.create_task(server.serve(sockets=[sock]), name="http")
            clock.mark("listening")
            collector = ServiceCollector(services)
            started: list[Service] = []
            exit_code = EXIT_FAILED
            try:
                # Every service at once (`arena serve`): each start waits on the network.
                started.extend(services)
                await start_together(service.start() for service in services)
                clock.mark("workers started")
                heap.settle()
                background = [
                    asyncio.create_task(
                        heap.keep(settings.gc_freeze_seconds, settings.gc_full_seconds, stop),
                        name="gc",
                    ),
                    asyncio.create_task(_report_ready(services, clock, stop), name="ready"),
                ]
                if settings.parent_pid is not None:
                    background.append(
                        asyncio.create_task(_stop_when_orphaned(settings.parent_pid, stop))
                    )
                host, port = sock.getsockname()[:2]
                names = ", ".join(s.name for s in services)
                log.info(
                    "serving", process=process_name, services=names, url=f"http://{host}:{port}"
                )
                exit_code = await _until_stopped(stop, server_task, started)
                stop.set()
                await asyncio.gather(*background)
            finally:
                await asyncio.gather(*(service.stop() for service in started))
                collector.close()
                server.should_exit = True
                await asyncio.gather(server_task, return_exceptions=True)
    finally:
        sock.close()  # also when opening the runtime or building a service failed
    log.info("stopped", process=process_name, exit_code=exit_code)
    return exit_code


async def _report_ready(services: list[Service], clock: StartClock, stop: asyncio.Event) -> None:
    """Log once, when every service is first ready, how long each phase of the start took."""
    while not all(service.ready() for service in services):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), READY_POLL_SECONDS)
        if stop.is_set():
            return
    clock.mark("ready")
    log.info("ready", seconds=clock.phases["ready"], phases=clock.phases)


async def _until_stopped(
    stop: asyncio.Event, server_task: asyncio.Task[None], services: list[Service]
) -> int:
    stop_task = asyncio.create_task(stop.wait())
    failures = [asyncio.create_task(s.wait_failed()) for s in services]
    done, _ = await asyncio.wait(
        [stop_task, server_task, *failures], return_when=asyncio.FIRST_COMPLETED
    )
    for task in [stop_task, *failures]:
        task.cancel()
    if stop_task in done:
        log.info("signal received: stopping")
        return EXIT_OK
    if server_task in done:
        log.error("HTTP server ended unexpectedly")
        return EXIT_FAILED
    error = next(t for t in failures if t in done).result()
    log.error("a worker failed: stopping", exc_info=error)
    return EXIT_FAILED
