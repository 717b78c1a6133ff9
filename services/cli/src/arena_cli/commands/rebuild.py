"""`arena rebuild [--projection NAME]...`: empty projections and replay them from the log."""

from __future__ import annotations

import argparse
import asyncio
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rebuild = sub.add_parser(
        "rebuild",
        help="drop every projection's rows and replay it from the start of the event log",
    )
    rebuild.add_argument(
        "--projection",
        action="append",
        metavar="NAME",
        help="rebuild only this projection (repeatable; default: all registered)",
    )
    rebuild.set_defaults(func=run_rebuild)


def run_rebuild(args: argparse.Namespace) -> int:
    from arena_runtime.config import ConfigError, load_settings
    from arena_runtime.sql.projection import ProjectionError
    from arena_runtime.sql.rebuild import rebuild_from_settings

    from arena_cli import games

    games.install()
    try:
        settings = load_settings()
        done = asyncio.run(rebuild_from_settings(settings, args.projection))
    except (ConfigError, ProjectionError) as exc:
        print(f"arena rebuild: {exc}", file=sys.stderr)
        return 2
    for item in done:
        print(f"rebuilt {item.projection}: {item.records} records in {item.seconds:.2f} s")
    return 0
