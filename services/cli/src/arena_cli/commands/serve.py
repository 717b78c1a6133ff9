"""`arena serve` (every service in one process, the projections in a child process beside it)
and `arena gateway|match|matchmaking|rating` (and `arena projections`), one service each.

Where they run — embedded log and SQLite under ARENA_DATA_DIR, or Kafka, PostgreSQL and Redis —
comes from the ARENA_* variables alone; the services cannot tell the difference.

The services are named here, not imported: a command imports only the services it runs, so
`arena --help` and every other command answer without loading any of them.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena_runtime.host import Runtime, Service, ServiceBuilder

#: Each service's builder, as ``module:function``.
SERVICES: dict[str, str] = {
    "gateway": "arena_gateway.service:build_service",
    "match": "arena_match.service:build_service",
    "matchmaking": "arena_matchmaking.service:build_service",
    "rating": "arena_rating.service:build_service",
    # Keeps the SQL read models current; one replica (offsets live beside the rows).
    "projections": "arena_runtime.host.projections:build_service",
}


def builder(name: str) -> ServiceBuilder:
    """The builder of service ``name``, imported now."""
    module, function = SERVICES[name].split(":")
    found: ServiceBuilder = getattr(importlib.import_module(module), function)
    return found


async def projections_beside(runtime: Runtime) -> Service:
    """`arena serve`'s projections: a child `arena projections` (ARENA_SERVE_PROJECTIONS=process,
    see arena_runtime.host.companion), or in this process (inline)."""
    from arena_runtime.host import Service
    from arena_runtime.host.companion import Companion
    from arena_runtime.host.projections import NAME, build_service

    if runtime.settings.serve_projections == "inline":
        return await build_service(runtime)
    # Off the path of a move: they read the services' appends every 100 ms, in batches, rather
    # than a few records after every commit (arena_runtime.eventlog.peers).
    env = {**os.environ, "ARENA_EVENTLOG_PEER_WAKEUPS": "false"}
    return Service(NAME, [Companion("projections", env)])


def apart(name: str) -> ServiceBuilder:
    """Service ``name`` in a child `arena <name>` process (ARENA_SERVE_SERVICES), or inline."""

    async def build(runtime: Runtime) -> Service:
        from arena_runtime.host import Service
        from arena_runtime.host.companion import Companion

        if name not in runtime.settings.serve_services.split(","):
            return await builder(name)(runtime)
        return Service(name, [Companion(name)])

    return build


def serve_builders() -> list[ServiceBuilder]:
    """What `arena serve` runs: the gateway, each other service inline or in a child process
    of its own, the projections beside them."""
    return (
        [builder("gateway")]
        + [apart(n) for n in ("match", "matchmaking", "rating")]
        + [projections_beside]
    )


def _run(builders: Callable[[], list[ServiceBuilder]], process_name: str) -> int:
    # No collection while the services are imported and started: each pass walks every object
    # allocated so far, over and over while modules load (a tenth of the imports' CPU). The host
    # collects once, freezes what is left and turns the collector back on when the workers have
    # started (arena_runtime.host.heap.settle).
    gc.disable()
    from arena_runtime.host import run

    from arena_cli import games

    games.install()
    return run(builders(), process_name)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve",
        help="run every service in one process and the projections beside it (embedded by default)",
    )
    serve.set_defaults(func=lambda args: _run(serve_builders, "serve"))
    for name in SERVICES:
        one = sub.add_parser(name, help=f"run the {name} service alone")
        one.set_defaults(func=lambda args, name=name: _run(lambda: [builder(name)], name))
