"""One thread that runs blocking calls for the event loop, one at a time, in the order given.

The embedded log's SQLite connections each live in a thread of their own. ``run_in_executor``
with a one-thread pool did the same at about forty Python calls a hand-off (the pool's future,
its work item, its locks and thread count, the asyncio future chained to it), three to four
hand-offs a move; here a hand-off is a queue put and, back on the loop, one callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


class OneThread:
    """A thread taking calls from the event loop; ``run`` returns an asyncio future of each."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()
        self._closed = False

    def run(self, call: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """``call(*args)`` in the thread, after every call given before. Cancelling the future
        does not stop a call under way (its result is dropped)."""
        if self._closed:
            raise RuntimeError(f"{self._thread.name} is shut down")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((loop, future, call, args))
        return future

    def shutdown(self) -> None:
        """Stop taking calls; the thread ends after those already given (waited for)."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(None)
        self._thread.join()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            loop, future, call, args = job
            try:
                outcome, ok = call(*args), True
            except BaseException as exc:  # handed to the caller, like run_in_executor
                outcome, ok = exc, False
            # A closed loop: nobody waits for it any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future, outcome, ok)


def _settle(future: asyncio.Future[Any], outcome: Any, ok: bool) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(outcome)
    else:
        future.set_exception(outcome)
