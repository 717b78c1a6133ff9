"""Regenerate arena_games.proto_gen from proto/: ``python -m arena_games.proto_build``.

Each game's proto files are generated here, not in the runtime (which holds no game code); the
runtime's builder does the work (:mod:`arena_runtime.proto_build`), with this package's set and
the runtime's beside it, whose modules the games' files import (match.proto). ``make proto``
runs both builders; the test suite checks that both committed copies equal fresh ones and that
every file under proto/ is in exactly one set.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arena_runtime import proto_build

GAMES = proto_build.ProtoSet(
    "arena_games.proto_gen",
    Path(__file__).resolve().parent / "proto_gen",
    (
        "arena/games/digits/v1/digits.proto",
        "arena/games/matrix_games/v1/matrix_games.proto",
        "arena/games/maze/v1/maze.proto",
        "arena/v1/maths_warriors.proto",
    ),
    "arena_games.proto_build",
)
#: Every proto set, the runtime's first.
SETS = (proto_build.RUNTIME, GAMES)


def generate(out_dir: Path, proto_root: Path = proto_build.PROTO_ROOT) -> list[Path]:
    return proto_build.generate(out_dir, proto_root, GAMES, elsewhere=(proto_build.RUNTIME,))


def main(argv: list[str] | None = None) -> int:
    return proto_build.main(argv, GAMES, elsewhere=(proto_build.RUNTIME,))


if __name__ == "__main__":
    sys.exit(main())
