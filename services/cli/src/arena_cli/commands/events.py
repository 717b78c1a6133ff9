"""`arena events catalogue|tail|export|simulate`: the event topics as an analyst's data source
(docs/analytics.md). Each works on the log the ARENA_* settings name, embedded or Kafka."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena_games.contract import GameModule
    from arena_runtime.config import Settings

    from arena_cli.analytics.simulate import Choice
    from arena_cli.analytics.simulate import Report as SimulationReport

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def _time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _offsets(text: str) -> tuple[int, int | None]:
    start, _, end = text.partition(":")
    try:
        first, last = int(start or 0), (int(end) if end else None)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"offsets are START:END, e.g. 0:5000; not {text!r}"
        ) from exc
    if first < 0 or (last is not None and last < first):
        raise argparse.ArgumentTypeError(f"offsets must be 0 <= START <= END; not {text!r}")
    return first, last


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    events = sub.add_parser("events", help="the event topics for analysts: catalogue, tail, export")
    events_sub = events.add_subparsers(dest="events_command", required=True)

    catalogue = events_sub.add_parser(
        "catalogue", help="the AsyncAPI document of the Kafka topics, from the code's registry"
    )
    catalogue.add_argument("--write", type=Path, help="write it to this file (default: stdout)")
    catalogue.add_argument(
        "--check", type=Path, help="exit 1 if this file is not the document the code makes"
    )
    catalogue.set_defaults(func=run_catalogue)

    tail = events_sub.add_parser("tail", help="follow event topics live, decoded (JSON lines)")
    tail.add_argument("--topic", action="append", help="an event topic (default: all of them)")
    tail.add_argument("--game", action="append", default=[], help="only this game's events")
    tail.add_argument("--type", action="append", default=[], help="e.g. MatchEnded")
    tail.add_argument("--stream", action="append", default=[], help="a stream id, or prefix*")
    tail.add_argument("--player", default="", help="only events of or naming this player id")
    tail.add_argument("--from-start", action="store_true", help="from the first record")
    tail.add_argument("--limit", type=int, help="stop after this many events")
    tail.add_argument(
        "--no-follow", action="store_true", help="stop at the end of the topics instead of waiting"
    )
    tail.set_defaults(func=run_tail)

    export = events_sub.add_parser(
        "export", help="a range of the event topics to JSON Lines and Parquet (resumable)"
    )
    export.add_argument("--out", type=Path, required=True, help="output directory")
    export.add_argument("--topic", action="append", help="an event topic (default: all of them)")
    export.add_argument("--since", type=_time, help="events at or after this time (ISO 8601)")
    export.add_argument("--until", type=_time, help="events before this time (ISO 8601)")
    export.add_argument(
        "--offsets", type=_offsets, default=(0, None), help="START:END per partition (END excl.)"
    )
    export.add_argument(
        "--format", action="append", choices=("jsonl", "parquet"), help="default: both"
    )
    export.add_argument(
        "--pseudonymise",
        action="store_true",
        help="player identifiers as a keyed hash (ARENA_EXPORT_PSEUDONYM_KEY)",
    )
    export.add_argument("--chunk", type=int, default=20_000, help="records per file and step")
    export.add_argument("--quiet", action="store_true", help="no progress lines")
    export.set_defaults(func=run_export)

    simulate = events_sub.add_parser(
        "simulate", help="seeded synthetic data: scripted players play through the services"
    )
    simulate.add_argument("--game", default="maths-warriors")
    simulate.add_argument("--matches", type=int, default=100)
    simulate.add_argument("--players", type=int, default=24, help="size of the player pool")
    simulate.add_argument("--seed", type=int, default=1)
    simulate.add_argument("--concurrency", type=int, default=8, help="matches played at once")
    simulate.add_argument("--casual", action="store_true", help="casual (unrated) matches")
    simulate.add_argument(
        "--people", type=int, help="seats people take (default: the most the game allows)"
    )
    simulate.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="NAME=VALUE[,VALUE...]",
        help="a game setting (several values: one drawn per match), e.g. army_wait_ms=0",
    )
    simulate.add_argument(
        "--think-ms",
        type=int,
        default=0,
        help="how long a player waits before each move, on the real clock (a game may void "
        "answers faster than a person's, e.g. Digits' human_answer_ms)",
    )
    simulate.set_defaults(func=run_simulate)


def _settings() -> Settings | None:
    from arena_runtime.config import ConfigError, load_settings

    try:
        return load_settings()
    except ConfigError as exc:
        print(f"arena events: {exc}", file=sys.stderr)
        return None


# -- catalogue -----------------------------------------------------------------------------------


def run_catalogue(args: argparse.Namespace) -> int:
    from arena_cli.analytics.catalogue import render

    text = render()
    if args.check is not None:
        if not args.check.exists() or args.check.read_text() != text:
            print(
                f"{args.check} is not the catalogue the code makes: "
                f"run `arena events catalogue --write {args.check}`",
                file=sys.stderr,
            )
            return EXIT_FAILED
        return 0
    if args.write is not None:
        args.write.write_text(text)
        return 0
    sys.stdout.write(text)
    return 0


# -- tail ----------------------------------------------------------------------------------------


def _event_topics(given: list[str] | None) -> tuple[str, ...] | None:
    from arena_runtime import topics

    chosen = tuple(given or topics.EVENTS)
    unknown = [t for t in chosen if t not in topics.EVENTS]
    if unknown:
        print(
            f"arena events: not an event topic: {', '.join(unknown)} "
            f"(they are {', '.join(topics.EVENTS)})",
            file=sys.stderr,
        )
        return None
    return chosen


def run_tail(args: argparse.Namespace) -> int:
    from arena_runtime.eventlog.factory import open_event_log

    from arena_cli.analytics.tail import Filters, tail

    settings = _settings()
    chosen = _event_topics(args.topic)
    if settings is None or chosen is None:
        return EXIT_BAD_INPUT
    if args.limit is not None and args.limit < 1:
        print("arena events tail: --limit must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    filters = Filters(
        games=frozenset(args.game),
        types=frozenset(args.type),
        streams=tuple(args.stream),
        player=args.player,
    )

    def write(line: str) -> None:
        print(line, flush=True)

    async def follow() -> int:
        async with open_event_log(settings) as log:
            return await tail(
                log,
                chosen,
                filters,
                write=write,
                from_start=args.from_start,
                limit=args.limit,
                follow=not args.no_follow,
            )

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(follow())
    return 0


# -- export --------------------------------------------------------------------------------------


def run_export(args: argparse.Namespace) -> int:
    from arena_runtime.eventlog.factory import open_event_log
    from arena_runtime.privacy import Pseudonymiser

    from arena_cli.analytics.export import Exporter, ExportError, Range, stderr_progress

    settings = _settings()
    chosen = _event_topics(args.topic)
    if settings is None or chosen is None:
        return EXIT_BAD_INPUT
    pseudonym = None
    if args.pseudonymise:
        if settings.export_pseudonym_key is None:
            print(
                "arena events export: --pseudonymise needs ARENA_EXPORT_PSEUDONYM_KEY",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        pseudonym = Pseudonymiser(settings.export_pseudonym_key.get_secret_value())
    start, end = args.offsets
    range_ = Range(chosen, start, end, args.since, args.until)

    async def export() -> int:
        async with open_event_log(settings) as log:
            exporter = Exporter(
                log,
                args.out,
                formats=args.format or ("jsonl", "parquet"),
                pseudonym=pseudonym,
                chunk=args.chunk,
                progress=None if args.quiet else stderr_progress,
            )
            report = await exporter.run(range_)
        skipped = sum(report.skipped.values())
        print(
            f"{report.events} events exported to {args.out}"
            f"{' (resumed)' if report.resumed else ''}; {report.outside} outside the time range, "
            f"{skipped} undecodable{f' {report.skipped}' if skipped else ''}"
        )
        return 0

    try:
        return asyncio.run(export())
    except ExportError as exc:
        print(f"arena events export: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


# -- simulate ------------------------------------------------------------------------------------


def run_simulate(args: argparse.Namespace) -> int:
    from arena_games.contract import CASUAL, RANKED
    from arena_games.registry import STANDARD, UnknownGameError

    from arena_cli.analytics.simulate import (
        BadRequest,
        SimulationError,
        check_request,
        parse_setting,
    )

    settings = _settings()
    if settings is None:
        return EXIT_BAD_INPUT
    try:
        module = STANDARD.find(args.game)
    except UnknownGameError as exc:
        print(
            f"arena events simulate: {exc.message} (games: {', '.join(STANDARD.names())})",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    mode = CASUAL if args.casual else RANKED
    try:
        choices = tuple(parse_setting(text) for text in args.setting)
        check_request(module, args.people, choices)  # before the log is opened
        if not 0 <= args.think_ms <= 60_000:
            raise BadRequest(f"--think-ms is 0..60000, not {args.think_ms}")
        report = asyncio.run(_simulate(settings, module, args, mode, choices))
    except SimulationError as exc:
        print(f"arena events simulate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT if isinstance(exc, BadRequest) else EXIT_FAILED
    print(
        f"{report.matches} {module.name} matches, {report.moves} moves ({report.rejected} "
        f"refused) in {report.seconds:.1f} s; endings {dict(sorted(report.results.items()))}"
    )
    return 0


def _quiet_services_on_stderr() -> None:
    """The services' logs: warnings and worse, on stderr (stdout is the command's answer)."""
    import logging

    from arena_runtime import telemetry

    telemetry.configure_logging("WARNING", "console")
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(sys.stderr)


async def _simulate(
    settings: Settings,
    module: GameModule[Any],
    args: argparse.Namespace,
    mode: str,
    choices: tuple[Choice, ...],
) -> SimulationReport:
    from arena_match.service import build_service as match_service
    from arena_rating.service import build_service as rating_service
    from arena_runtime import topics
    from arena_runtime.host import open_runtime

    from arena_cli.analytics.simulate import Simulation, wait_for_ratings

    _quiet_services_on_stderr()
    async with open_runtime(settings) as runtime:
        services = [await match_service(runtime), await rating_service(runtime)]
        rated_before = sum((await runtime.log.end_offsets(topics.RATING_EVENTS)).values())
        for service in services:
            await service.start()
        try:
            simulation = Simulation(
                runtime.log,
                module,
                seed=args.seed,
                partitions=settings.partitions,
                mode=mode,
                people=args.people,
                settings=choices,
                think_ms=args.think_ms,
                progress=lambda line: print(line, file=sys.stderr, flush=True),
            )
            report = await simulation.run(args.matches, args.players, args.concurrency)
            if module.ratings.ladder:
                await wait_for_ratings(runtime.log, rated_before + report.matches + report.units)
        finally:
            for service in reversed(services):
                await service.stop()
        return report
