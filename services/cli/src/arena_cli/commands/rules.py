"""`arena rules check FILE...`: run rule vectors against the engine."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rules = sub.add_parser("rules", help="rule vectors")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True)
    check = rules_sub.add_parser("check", help="run rule-vector files against the engine")
    check.add_argument("files", nargs="+", type=Path)
    check.add_argument("-v", "--verbose", action="store_true", help="also list skipped cases")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from arena_engine.vectors import check_file

    passed = failed = skipped = 0
    for path in args.files:
        report = check_file(path)
        for r in report.results:
            if r.status == "failed":
                detail = r.reason or (
                    f"expected {json.dumps(r.expected)}, got {json.dumps(r.actual, default=str)}"
                )
                print(f"FAIL {path.name} {r.case_id}: {detail}")
            elif r.status == "skipped" and args.verbose:
                print(f"SKIP {path.name} {r.case_id}: {r.reason}")
        passed += report.count("passed")
        failed += report.count("failed")
        skipped += report.count("skipped")
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed else 0
