"""The `arena` command line. Each subcommand lives in its own module under arena_cli.commands."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules that each add their subcommands with `register(subparsers)`.
COMMAND_MODULES = [
    "arena_cli.commands.rules",
    "arena_cli.commands.serve",
    "arena_cli.commands.digits",
    "arena_cli.commands.rebuild",
    "arena_cli.commands.migrate",
    "arena_cli.commands.verify",
    "arena_cli.commands.events",
    "arena_cli.commands.admin",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="Arena game backend")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result = args.func(args)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
