"""The web client's first load in Chromium (docs/client.md): the bytes transferred, compressed,
and the time until the lobby is usable, against a real `arena serve`.

Each load is a fresh browser context (empty cache, no cookie: a first visit, which also makes the
guest). Bytes are the page's own Resource Timing `transferSize` of the document and every request
it made until the lobby was usable (HTTP bodies as sent, gzip where the gateway compresses, plus
headers), the WebSocket handshake excepted. The time is from the navigation's start to the
client's `arena:lobby-ready` mark: lobby drawn, guest session made, socket open and authenticated.
Baseline, same run: the time to load `/healthz` in the same way, the floor of any page load here.

Targets: under 250 KB compressed and under 1 s (median of the loads). Debian's chromium and a
built client are needed (`make install`); without them the bench says so and measures nothing.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.targets import target_line  # noqa: E402
from tests.processes.arena_process import ArenaProcess, arena_env, free_port  # noqa: E402
from tests.web.conftest import CHROMIUM, LAUNCH_ARGS, WEB  # noqa: E402

TARGET_BYTES = 250 * 1024
TARGET_SECONDS = 1.0
READY = "arena:lobby-ready"

MEASURE = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const ready = performance.getEntriesByName('READY')[0];
  const resources = performance.getEntriesByType('resource');
  return {
    ready_ms: ready.startTime,
    bytes: nav.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0),
    decoded: nav.decodedBodySize + resources.reduce((sum, r) => sum + r.decodedBodySize, 0),
    requests: 1 + resources.length,
  };
}""".replace("READY", READY)


def run(quick: bool = False) -> None:
    if not CHROMIUM.exists() or not (WEB / "dist" / "index.html").exists():
        print(f"skipped: needs {CHROMIUM} and a built client (`make install`)")
        return
    from playwright.sync_api import sync_playwright

    loads = 3 if quick else 7
    with tempfile.TemporaryDirectory() as tmp:
        env = arena_env(Path(tmp), free_port(), ARENA_LOG_LEVEL="WARNING", ARENA_PARTITIONS="4")
        process = ArenaProcess(["serve"], env, Path(tmp) / "arena.log")
        try:
            process.wait_until("/readyz", 200, timeout=300)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True
                )
                try:
                    baseline = [_health(browser, process.url) for _ in range(loads)]
                    figures = [_first_load(browser, process.url) for _ in range(loads)]
                finally:
                    browser.close()
        finally:
            process.terminate()
    ready = [f["ready_ms"] / 1000 for f in figures]
    sent = [f["bytes"] for f in figures]
    first = figures[0]
    print(
        f"first load: {statistics.median(sent) / 1024:.1f} KB transferred "
        f"({first['decoded'] / 1024:.1f} KB decoded, {first['requests']} requests); "
        + target_line(statistics.median(sent), "<", TARGET_BYTES, f"{TARGET_BYTES // 1024} KB")
    )
    print(
        f"lobby usable: median {statistics.median(ready):.3f} s, max {max(ready):.3f} s over "
        f"{loads} fresh loads (baseline /healthz load {statistics.median(baseline):.3f} s); "
        + target_line(statistics.median(ready), "<", TARGET_SECONDS, f"{TARGET_SECONDS:g} s")
    )
    print("(timings provisional on a shared, loaded machine)")


def _first_load(browser: Any, url: str) -> dict[str, Any]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url + "/#/mw")
        page.wait_for_function(f"() => performance.getEntriesByName('{READY}').length > 0")
        figures: dict[str, Any] = page.evaluate(MEASURE)
        return figures
    finally:
        context.close()


def _health(browser: Any, url: str) -> float:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url + "/healthz")
        elapsed: float = page.evaluate(
            "() => performance.getEntriesByType('navigation')[0].responseEnd"
        )
        return elapsed / 1000
    finally:
        context.close()
