"""The embedded log's connection threads: calls run in order, in the thread, and their outcome
(a value or an exception) comes back to the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest
from arena_runtime.eventlog.one_thread import OneThread


async def test_calls_run_in_order_in_the_thread_and_answer_on_the_loop() -> None:
    worker = OneThread("test-thread")
    seen: list[tuple[int, str]] = []

    def call(n: int) -> int:
        seen.append((n, threading.current_thread().name))
        return n * n

    try:
        squares = await asyncio.gather(*(worker.run(call, n) for n in range(50)))
        assert squares == [n * n for n in range(50)]
        assert seen == [(n, "test-thread") for n in range(50)]
    finally:
        worker.shutdown()


async def test_an_exception_is_the_caller_s_and_the_thread_goes_on() -> None:
    worker = OneThread("test-thread")

    def fail() -> None:
        raise ValueError("no")

    try:
        with pytest.raises(ValueError, match="no"):
            await worker.run(fail)
        assert await worker.run(len, "abc") == 3
    finally:
        worker.shutdown()


async def test_a_cancelled_call_is_dropped_and_shutdown_waits_for_what_was_given() -> None:
    worker = OneThread("test-thread")
    started, release = threading.Event(), threading.Event()
    done: list[int] = []

    def slow() -> int:
        started.set()
        release.wait(5)
        done.append(1)
        return 1

    cancelled = worker.run(slow)
    later = worker.run(done.append, 2)
    await asyncio.to_thread(started.wait, 5)
    cancelled.cancel()
    release.set()
    assert await later is None
    worker.shutdown()
    assert done == [1, 2] and cancelled.cancelled()
    with pytest.raises(RuntimeError, match="shut down"):
        worker.run(len, "")
