"""`arena verify [MATCH] [--strict]`: re-run the engine over the match log and confirm it."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena_match.verify import Report

EXIT_MISMATCH = 1
EXIT_BAD_CONFIG = 2
#: Problems printed in full; the rest are counted.
SHOWN = 50


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = sub.add_parser(
        "verify",
        help="re-decide every match command with its recorded time and seeds; compare with the log",
    )
    verify.add_argument("match", nargs="?", help="a match id (default: every match)")
    verify.add_argument(
        "--strict",
        action="store_true",
        help="also fail on commands with no answer in the log (use when the service is idle)",
    )
    verify.set_defaults(func=run_verify)


async def _verify(match: str | None) -> Report:
    from arena_match.verify import verify_log
    from arena_runtime.config import load_settings
    from arena_runtime.eventlog.factory import open_event_log

    from arena_cli import games

    games.install()
    settings = load_settings()
    async with open_event_log(settings) as event_log:
        return await verify_log(event_log, match)


def run_verify(args: argparse.Namespace) -> int:
    from arena_runtime.config import ConfigError

    try:
        report = asyncio.run(_verify(args.match))
    except ConfigError as exc:
        print(f"arena verify: {exc}", file=sys.stderr)
        return EXIT_BAD_CONFIG
    print(
        f"{report.matches} matches, {report.commands} commands, {report.events} events "
        f"verified; {report.ignored} ignored (lost races), {report.malformed} malformed; "
        f"{report.ghost_armies} ghost store armies chosen again"
    )
    for title, problems in (("mismatch", report.problems), ("unanswered", report.unanswered)):
        for problem in problems[:SHOWN]:
            print(f"{title}: {problem}")
        if len(problems) > SHOWN:
            print(f"… and {len(problems) - SHOWN} more {title}")
    if args.match is not None and report.matches == 0:
        print(f"arena verify: no match {args.match!r} in the log", file=sys.stderr)
        return EXIT_MISMATCH
    if not report.ok(args.strict):
        print(
            f"FAILED: {len(report.problems)} mismatches, {len(report.unanswered)} unanswered",
            file=sys.stderr,
        )
        return EXIT_MISMATCH
    print("OK")
    return 0
