"""`arena --help` (and building the parser of every command) loads no service, runtime or engine
module: each command imports what it runs when it runs, so the command line answers at once."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from arena_cli.main import build_parser
build_parser().format_help()
print(json.dumps(sorted(m for m in sys.modules if m.startswith("arena_"))))
"""


def test_the_parser_imports_no_service() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    loaded = json.loads(out)
    assert loaded, "the probe saw no arena module at all"
    assert [m for m in loaded if not m.startswith("arena_cli")] == []


def test_help_answers() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena_cli.main", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    for command in ("serve", "gateway", "match", "verify", "rebuild", "rules"):
        assert command in done.stdout
