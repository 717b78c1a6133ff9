"""The garbage collector's schedule in a serving process.

CPython's full collection walks every tracked object, and while it does the event loop stands
still: every move in flight waits. Under load that was the p99 of a move: 40-100 ms every couple
of seconds, growing with what the services hold (folds of live matches, answered command ids,
the log's tail). So a serving process keeps what has lived a while out of those passes:

* after start-up, everything is collected once and frozen (``gc.freeze``): modules, classes and
  the folds read from the log never need walking again;
* then every ``ARENA_GC_FREEZE_SECONDS`` the young generations are collected and what survived
  is frozen too, so an automatic full pass only walks the objects of the last few seconds;
* every ``ARENA_GC_FULL_SECONDS`` everything is unfrozen, collected once in full, and frozen
  again.

Frozen objects are freed like any other when nothing refers to them; only reference cycles among
them that became garbage wait for the next full pass. The full pass is the one long pause left,
taken rarely and on a schedule (``arena_gc_frozen_objects`` shows what is frozen).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time

from arena_runtime import telemetry

log = telemetry.get_logger(__name__)


def settle() -> None:
    """Collect everything once and freeze what is left (after start-up, and every full pass);
    the collector is on afterwards (`arena <service>` keeps it off while starting)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    gc.enable()


def freeze_survivors() -> None:
    """Collect the young generations and freeze what survived them."""
    gc.collect(1)
    gc.freeze()


async def keep(freeze_seconds: float, full_seconds: float, stop: asyncio.Event) -> None:
    """Freeze survivors every ``freeze_seconds`` and settle every ``full_seconds`` until
    ``stop``; a period of 0 turns that part off."""
    if freeze_seconds <= 0 and full_seconds <= 0:
        return
    now = time.monotonic()
    next_freeze = now + freeze_seconds if freeze_seconds > 0 else float("inf")
    next_full = now + full_seconds if full_seconds > 0 else float("inf")
    while not stop.is_set():
        wait = max(0.0, min(next_freeze, next_full) - time.monotonic())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)
        if stop.is_set():
            return
        now = time.monotonic()
        if now >= next_full:
            started = time.perf_counter()
            settle()
            took = time.perf_counter() - started
            frozen = gc.get_freeze_count()
            log.info("full garbage collection", seconds=round(took, 3), frozen=frozen)
            next_full = now + full_seconds
            next_freeze = now + freeze_seconds if freeze_seconds > 0 else float("inf")
        elif now >= next_freeze:
            freeze_survivors()
            next_freeze = now + freeze_seconds
