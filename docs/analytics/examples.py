"""The worked examples of docs/analytics.md: DuckDB queries over a Parquet export, their results
as Markdown tables, and their plots as PNG.

    arena events simulate ...     # each game, into one empty ARENA_DATA_DIR: docs/analytics.md
    arena events export --out /tmp/arena-export --format parquet
    python docs/analytics/examples.py /tmp/arena-export --out docs/analytics

A query over a type no event of the export has fails (no table); the simulated data set of the
suite has every one (tests/analytics/test_examples.py).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb


def table(export: Path, type_: str) -> str:
    """The FROM clause of one event type's table in an export."""
    return f"read_parquet('{export}/parquet/{type_}/*/*/*.parquet', hive_partitioning = true)"


@dataclass(frozen=True)
class Example:
    name: str
    title: str
    sql: str


def examples(export: Path) -> list[Example]:
    started = table(export, "arena.v1.GameStarted")
    ended = table(export, "arena.v1.MatchEnded")
    rated = table(export, "arena.v1.MatchRated")
    mind = table(export, "arena.v1.MindAttacked")
    strength = table(export, "arena.v1.StrengthAttacked")
    opened = table(export, "arena.v1.MatchOpened")
    units = table(export, "arena.v1.UnitRated")
    shops = table(export, "arena.games.digits.v1.ShopOpened")
    bought = table(export, "arena.games.digits.v1.Bought")
    closing = table(export, "arena.games.digits.v1.ShopClosing")
    fought = table(export, "arena.games.digits.v1.CombatFought")
    episodes = table(export, "arena.games.matrix_games.v1.EpisodeEnded")
    maze_started = table(export, "arena.games.maze.v1.MazeStarted")
    exited = table(export, "arena.games.maze.v1.Exited")
    maze_decided = table(export, "arena.games.maze.v1.MazeDecided")
    return [
        Example(
            "first_mover",
            "Maths Warriors: first-mover win rate by rating band",
            f"""
WITH started AS (SELECT stream, first FROM {started} WHERE game = 'maths-warriors'),
ended AS (
  SELECT stream, match_id, list_filter(seats, lambda s: s.rank = 1)[1].seat AS winner_seat
  FROM {ended} WHERE game = 'maths-warriors'
),
rated AS (
  SELECT match_id, list_filter(seats, lambda r: r.player.seat = 1)[1].before AS before1,
         list_filter(seats, lambda r: r.player.seat = 2)[1].before AS before2
  FROM {rated}
)
SELECT
  CAST(floor(CASE WHEN s.first = 1 THEN before1 ELSE before2 END / 50) * 50 AS INTEGER) AS band,
  count(*) AS matches,
  round(avg(CASE WHEN e.winner_seat = s.first THEN 1.0 ELSE 0.0 END), 3) AS first_mover_wins
FROM started s JOIN ended e USING (stream) JOIN rated r USING (match_id)
GROUP BY band ORDER BY band
""",
        ),
        Example(
            "mind_captures",
            "Maths Warriors: how often captures are Mind attacks, by target die",
            f"""
WITH captures AS (
  SELECT target, 'mind' AS attack FROM {mind} WHERE game = 'maths-warriors'
  UNION ALL
  SELECT target, 'strength' AS attack FROM {strength} WHERE game = 'maths-warriors'
)
SELECT target, count(*) AS captures,
       count(*) FILTER (WHERE attack = 'mind') AS by_mind,
       round(avg(CASE WHEN attack = 'mind' THEN 1.0 ELSE 0.0 END), 3) AS mind_share
FROM captures
GROUP BY target ORDER BY CAST(substr(target, 2) AS INTEGER)
""",
        ),
        Example(
            "ratings",
            "Maths Warriors: the distribution of ratings after the last rated match",
            f"""
WITH sides AS (
  SELECT seat.player.player_id AS player, seat.after AS rating, time, "offset"
  FROM (SELECT unnest(seats) AS seat, time, "offset" FROM {rated} WHERE game = 'maths-warriors')
),
latest AS (SELECT player, arg_max(rating, (time, "offset")) AS rating FROM sides GROUP BY player)
SELECT CAST(floor(rating / 25) * 25 AS INTEGER) AS band, count(*) AS players
FROM latest GROUP BY band ORDER BY band
""",
        ),
        Example(
            "digits_balance",
            "Digits: pick rate and win rate of each digit, by round",
            f"""
WITH shops AS (
  SELECT stream, sequence, round, list_append(offers, nullif(bright, '')) AS offers
  FROM {shops} WHERE game = 'digits'
),
offered AS (
  SELECT round, digit, count(*) AS offered
  FROM (SELECT round, unnest(offers) AS digit FROM shops) WHERE digit IS NOT NULL GROUP BY ALL
),
picked AS (
  SELECT s.round, b.kind AS digit, count(*) AS picked
  FROM {bought} b
  ASOF JOIN shops s ON b.stream = s.stream AND b.sequence >= s.sequence
  GROUP BY ALL
),
held AS (
  SELECT DISTINCT stream, round, cell.kind AS digit
  FROM (SELECT stream, round, unnest(slate.cells) AS cell FROM {closing})
  WHERE cell.kind <> ''
),
fought AS (
  SELECT round, digit, count(*) AS armies,
         sum(CASE result WHEN 'win' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END) AS points
  FROM held JOIN {fought} USING (stream, round)
  GROUP BY ALL
),
banded AS (
  SELECT digit, (round - 1) // 4 AS band, offered, coalesce(picked, 0) AS picked,
         armies, points
  FROM offered LEFT JOIN picked USING (round, digit) LEFT JOIN fought USING (round, digit)
)
SELECT digit, sum(offered) AS offered,
       round(sum(picked) FILTER (band = 0) / sum(offered) FILTER (band = 0), 2) AS pick_1_4,
       round(sum(picked) FILTER (band = 1) / sum(offered) FILTER (band = 1), 2) AS pick_5_8,
       round(sum(picked) FILTER (band = 2) / sum(offered) FILTER (band = 2), 2) AS pick_9_12,
       round(sum(points) FILTER (band = 0) / sum(armies) FILTER (band = 0), 2) AS win_1_4,
       round(sum(points) FILTER (band = 1) / sum(armies) FILTER (band = 1), 2) AS win_5_8,
       round(sum(points) FILTER (band = 2) / sum(armies) FILTER (band = 2), 2) AS win_9_12
FROM banded GROUP BY digit ORDER BY sum(picked) DESC, offered DESC, digit
""",
        ),
        Example(
            "matrix_cooperation",
            "Matrix Games: cooperation rate by variant and policy",
            f"""
WITH seats AS (
  SELECT stream, generate_subscripts(seats, 1) AS seat, unnest(seats) AS s
  FROM {opened} WHERE game = 'matrix-games'
),
outcomes AS (SELECT stream, variant, unnest(seats) AS o FROM {episodes})
SELECT variant,
       CASE WHEN s.kind = 'SEAT_KIND_SCRIPTED' THEN s.policy ELSE 'person' END AS policy,
       count(*) AS seats, sum(o.mass) AS tokens,
       round(sum(o.coop_mass) / sum(o.mass), 3) AS cooperation
FROM outcomes JOIN seats USING (stream)
WHERE seats.seat = o.seat
GROUP BY ALL ORDER BY variant, policy
""",
        ),
        Example(
            "maze_finish",
            "The Maze: time to the first exit and draw rate, by maze size",
            f"""
WITH started AS (
  SELECT stream, settings.width || '×' || settings.height AS size, settings.width AS width,
         countdown_end_ms
  FROM {maze_started} WHERE game = 'maze'
),
first_out AS (SELECT stream, min(t) AS t FROM {exited} GROUP BY stream),
decided AS (SELECT stream, winner FROM {maze_decided})
SELECT size, count(*) AS matches,
       round(median(first_out.t - countdown_end_ms) / 1000, 1) AS median_s,
       round(quantile_cont(first_out.t - countdown_end_ms, 0.9) / 1000, 1) AS p90_s,
       round(avg(CASE WHEN winner = 0 THEN 1.0 ELSE 0.0 END), 3) AS draw_rate
FROM started JOIN decided USING (stream) LEFT JOIN first_out USING (stream)
GROUP BY size, width ORDER BY width
""",
        ),
        Example(
            "ladders",
            "Every ladder: the distribution of ratings after each player's last rated match",
            f"""
WITH elo AS (
  SELECT game, seat.player.player_id AS player, seat.after AS rating, time, "offset"
  FROM (SELECT game, unnest(seats) AS seat, time, "offset" FROM {rated})
),
per_combat AS (
  SELECT game, player.player_id AS player, after AS rating, time, "offset" FROM {units}
),
latest AS (
  SELECT game, player, arg_max(rating, (time, "offset")) AS rating
  FROM (SELECT * FROM elo UNION ALL SELECT * FROM per_combat) GROUP BY ALL
)
SELECT game, count(*) AS players, min(rating) AS lowest,
       CAST(quantile_cont(rating, 0.1) AS INTEGER) AS p10,
       CAST(median(rating) AS INTEGER) AS median,
       CAST(quantile_cont(rating, 0.9) AS INTEGER) AS p90, max(rating) AS highest
FROM latest GROUP BY game ORDER BY game
""",
        ),
        Example(
            "digits_season",
            "Digits: ratings through a season, by combats played in it",
            f"""
WITH combats AS (
  SELECT player.player_id AS player, season, (season_units - 1) // 10 AS stage, season_units,
         after
  FROM {units} WHERE game = 'digits'
),
reached AS (
  SELECT season, stage, player, arg_max(after, season_units) AS rating
  FROM combats GROUP BY ALL
)
SELECT season, (stage * 10 + 1) || '-' || (stage * 10 + 10) AS combats, count(*) AS players,
       CAST(quantile_cont(rating, 0.1) AS INTEGER) AS p10,
       CAST(median(rating) AS INTEGER) AS median,
       CAST(quantile_cont(rating, 0.9) AS INTEGER) AS p90
FROM reached GROUP BY season, stage ORDER BY season, stage
""",
        ),
    ]


def markdown(columns: list[str], rows: list[tuple[object, ...]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


Rows = list[tuple[object, ...]]


def plot(example: Example, columns: list[str], rows: Rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    draw = DRAWINGS.get(example.name, _bars)
    figure = draw(plt, columns, rows)
    figure.suptitle(example.title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})
    plt.close(figure)


def _bars(plt: Any, columns: list[str], rows: Rows) -> Any:
    """The last column by the first."""
    figure, axes = plt.subplots(figsize=(6, 3.2), dpi=100)
    axes.bar([str(r[0]) for r in rows], [float(r[-1]) for r in rows], color=BLUE)  # type: ignore[arg-type]
    axes.set_xlabel(columns[0])
    axes.set_ylabel(columns[-1])
    return figure


def _first_mover(plt: Any, columns: list[str], rows: Rows) -> Any:
    figure = _bars(plt, columns, rows)
    axes = figure.axes[0]
    axes.axhline(0.5, color=GREY, linewidth=0.8, linestyle="--")
    axes.set_ylim(0, 1)
    return figure


def _grouped(axes: Any, labels: list[str], series: dict[str, list[float]]) -> None:
    """Bars of several series side by side for each label (a missing value: no bar)."""
    width = 0.8 / max(len(series), 1)
    for number, (name, values) in enumerate(series.items()):
        places = [i + number * width for i in range(len(labels))]
        axes.bar(places, values, width, label=name, color=PALETTE[number % len(PALETTE)])
    axes.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(labels))], labels)


def _digits_balance(plt: Any, columns: list[str], rows: Rows) -> Any:
    picked = [r for r in rows if any((v or 0) > 0 for v in r[2:5])]  # type: ignore[operator]
    labels = [str(r[0]) for r in picked]
    figure, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4), dpi=100, sharey=True)
    bands = ("rounds 1-4", "rounds 5-8", "rounds 9-12")
    _grouped(left, labels, {b: [_num(r[2 + i]) for r in picked] for i, b in enumerate(bands)})
    _grouped(right, labels, {b: [_num(r[5 + i]) for r in picked] for i, b in enumerate(bands)})
    left.set_ylabel("pick rate (bought / offered)")
    right.set_ylabel("win rate of armies holding it")
    right.axhline(0.5, color=GREY, linewidth=0.8, linestyle="--")
    left.set_ylim(0, 1)
    right.legend(fontsize=7)
    return figure


def _matrix_cooperation(plt: Any, columns: list[str], rows: Rows) -> Any:
    variants = sorted({str(r[0]) for r in rows})
    policies = sorted({str(r[1]) for r in rows})
    value = {(str(r[0]), str(r[1])): _num(r[-1]) for r in rows}
    figure, axes = plt.subplots(figsize=(7, 3.4), dpi=100)
    _grouped(axes, policies, {v: [value.get((v, p), 0.0) for p in policies] for v in variants})
    axes.set_ylabel("cooperation tokens / tokens")
    axes.set_ylim(0, 1)
    axes.tick_params(axis="x", labelsize=8)
    axes.legend(fontsize=7)
    return figure


def _maze_finish(plt: Any, columns: list[str], rows: Rows) -> Any:
    labels = [str(r[0]) for r in rows]
    figure, (left, right) = plt.subplots(1, 2, figsize=(7, 3.2), dpi=100)
    _grouped(
        left, labels, {"median": [_num(r[2]) for r in rows], "p90": [_num(r[3]) for r in rows]}
    )
    left.set_ylabel("seconds to the first exit")
    left.legend(fontsize=7)
    right.bar(labels, [_num(r[4]) for r in rows], color=BLUE)
    right.set_ylabel("draw rate")
    right.set_ylim(0, 1)
    for axes in (left, right):
        axes.set_xlabel("maze (width × height)")
    return figure


def _spread(plt: Any, labels: list[str], rows: Rows, first: int) -> Any:
    """p10, median and p90 (columns first..first+2) as a band around a line."""
    figure, axes = plt.subplots(figsize=(6, 3.2), dpi=100)
    places = list(range(len(labels)))
    low, middle, high = ([_num(r[first + i]) for r in rows] for i in range(3))
    axes.fill_between(places, low, high, color=BLUE, alpha=0.25, label="p10-p90")
    axes.plot(places, middle, color=BLUE, marker="o", label="median")
    axes.set_xticks(places, labels)
    axes.set_ylabel("rating")
    axes.legend(fontsize=7)
    return figure


def _ladders(plt: Any, columns: list[str], rows: Rows) -> Any:
    figure, axes = plt.subplots(figsize=(6, 3.2), dpi=100)
    labels = [str(r[0]) for r in rows]
    # lowest, p10, median, p90, highest as a box without a box's quartiles
    for place, row in enumerate(rows):
        axes.vlines(place, _num(row[2]), _num(row[6]), color=GREY)
        axes.vlines(place, _num(row[3]), _num(row[5]), color=BLUE, linewidth=8)
        axes.plot(place, _num(row[4]), marker="_", color="white", markersize=12)
    axes.set_xticks(range(len(labels)), labels)
    axes.set_ylabel("rating (range, p10-p90, median)")
    return figure


def _digits_season(plt: Any, columns: list[str], rows: Rows) -> Any:
    figure = _spread(plt, [str(r[1]) for r in rows], rows, 3)
    figure.axes[0].set_xlabel("combats played in the season")
    return figure


def _num(value: object) -> float:
    return float("nan") if value is None else float(value)  # type: ignore[arg-type]


BLUE, GREY = "#3b6ea5", "#999999"
PALETTE = ("#3b6ea5", "#e08a3c", "#5a9e5a", "#b05a7a", "#7a6ab0", "#999999")
DRAWINGS = {
    "first_mover": _first_mover,
    "digits_balance": _digits_balance,
    "matrix_cooperation": _matrix_cooperation,
    "maze_finish": _maze_finish,
    "ladders": _ladders,
    "digits_season": _digits_season,
}


def run(export: Path, out: Path) -> dict[str, tuple[list[str], list[tuple[object, ...]]]]:
    """Every example's (columns, rows); writes <name>.png under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    connection = duckdb.connect()
    for example in examples(export):
        relation = connection.sql(example.sql)
        columns, rows = list(relation.columns), relation.fetchall()
        results[example.name] = (columns, rows)
        plot(example, columns, rows, out / f"{example.name}.png")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("export", type=Path, help="an `arena events export` directory")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = parser.parse_args(argv)
    if not (args.export / "parquet").is_dir():
        print(f"{args.export} holds no Parquet export", file=sys.stderr)
        return 2
    for name, (columns, rows) in run(args.export, args.out).items():
        print(f"## {name}\n\n{markdown(columns, rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
