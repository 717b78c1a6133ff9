"""`arena serve` (every service in one process, the projections in a child process beside it)
and `arena gateway|match|matchmaking|rating` (and `arena projections`), one service each.

Where they run — embedded log and SQLite under ARENA_DATA_DIR, or Kafka, PostgreSQL and Redis —
comes from the ARENA_* variables alone; the services cannot tell the difference.
"""

from __future__ import annotations

import argparse

import arena_gateway.service
import arena_match.service
import arena_matchmaking.service
import arena_rating.service
import arena_runtime.host.projections
from arena_runtime.host import Runtime, Service, ServiceBuilder, run
from arena_runtime.host.companion import Companion

SERVICES: dict[str, ServiceBuilder] = {
    "gateway": arena_gateway.service.build_service,
    "match": arena_match.service.build_service,
    "matchmaking": arena_matchmaking.service.build_service,
    "rating": arena_rating.service.build_service,
    # Keeps the SQL read models current; any number may run (offsets live beside the rows).
    "projections": arena_runtime.host.projections.build_service,
}


async def projections_beside(runtime: Runtime) -> Service:
    """`arena serve`'s projections: a child `arena projections` (ARENA_SERVE_PROJECTIONS=process,
    see arena_runtime.host.companion), or in this process (inline)."""
    if runtime.settings.serve_projections == "inline":
        return await arena_runtime.host.projections.build_service(runtime)
    return Service(arena_runtime.host.projections.NAME, [Companion("projections")])


#: What `arena serve` runs: every service, the projections beside them.
SERVE: dict[str, ServiceBuilder] = {**SERVICES, "projections": projections_beside}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve",
        help="run every service in one process and the projections beside it (embedded by default)",
    )
    serve.set_defaults(func=lambda args: run(list(SERVE.values()), "serve"))
    for name, builder in SERVICES.items():
        one = sub.add_parser(name, help=f"run the {name} service alone")
        one.set_defaults(func=lambda args, name=name, builder=builder: run([builder], name))
