"""`arena digits balance`: the Digits balance report from seeded bot games."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    digits = sub.add_parser("digits", help="Digits tools")
    digits_sub = digits.add_subparsers(dest="digits_command", required=True)
    balance = digits_sub.add_parser(
        "balance", help="win rate per digit at equal gold, and the spread of the 384 arrangements"
    )
    balance.add_argument("--games", type=int, default=500, help="bot games to simulate")
    balance.add_argument("--seed", type=int, default=1)
    balance.add_argument(
        "--spread", type=int, default=40, help="matchups to predict over all 384 arrangements"
    )
    balance.add_argument(
        "--strict", action="store_true", help="exit 1 when a digit is outside 40-60%%"
    )
    balance.set_defaults(func=run_balance)


def run_balance(args: argparse.Namespace) -> int:
    from arena_engine.digits.balance import simulate

    if args.games < 1 or args.spread < 0:
        print("--games must be at least 1 and --spread at least 0")
        return 2
    report = simulate(games=args.games, seed=args.seed, spread_samples=args.spread)
    for line in report.lines():
        print(line)
    outliers = report.outliers()
    print(f"outside 40-60%: {', '.join(outliers) if outliers else 'none'}")
    return 1 if args.strict and outliers else 0
