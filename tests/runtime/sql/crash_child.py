"""Child process of test_crash: runs the Ledger projection over a real event log, announcing each
record as it is applied (before its batch commits), until killed or caught up.

With ``--pause-at-commits`` it also announces every SQL commit, just after it returned, and then
waits for a line on stdin before going on: the parent kills it there, or lets it go.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from arena_runtime.config import Settings
from arena_runtime.eventlog.factory import open_event_log
from arena_runtime.sql import ProjectionRunner, create_engine, session_factory
from sqlalchemy import event
from sqlalchemy.orm import Session

from tests.runtime.sql.ledger import Ledger


def pause_after_commit(session: Any) -> None:
    """Blocks the whole process (the event loop with it) until the parent answers."""
    print("committed", flush=True)
    sys.stdin.readline()


async def main(args: argparse.Namespace) -> None:
    if args.pause_at_commits:
        event.listen(Session, "after_commit", pause_after_commit)
    settings = Settings(
        data_dir=Path(args.data_dir), kafka_bootstrap=args.kafka, topic_prefix=args.prefix
    )
    engine = create_engine(args.db)
    async with open_event_log(settings) as log:
        runner = ProjectionRunner(
            Ledger(delay=args.delay, announce=True), log, session_factory(engine), batch_size=20
        )
        await runner.catch_up()
    await engine.dispose()
    print("done", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--kafka", default=None)
    parser.add_argument("--prefix", default="")
    parser.add_argument("--delay", type=float, default=0.002, help="seconds per record")
    parser.add_argument("--pause-at-commits", action="store_true")
    asyncio.run(main(parser.parse_args()))
