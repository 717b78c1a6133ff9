"""Child process of test_concurrent_migrations: an `arena` process's first step, open_database,
held back until the test releases every child at once."""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from arena_runtime.config import Settings
from arena_runtime.sql import open_database


async def migrate(args: argparse.Namespace) -> None:
    engine = await open_database(Settings(database_url=args.db, data_dir=Path(args.data_dir)))
    await engine.dispose()


def main(args: argparse.Namespace) -> None:
    print("ready", flush=True)  # imports done: only the migration itself is left to race
    go = Path(args.go)
    while not go.exists():
        time.sleep(0.002)
    asyncio.run(migrate(args))
    print("migrated", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--go", required=True, help="a file whose appearance starts the migration")
    main(parser.parse_args())
