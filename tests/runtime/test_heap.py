"""The serving process's garbage-collector schedule (arena_runtime.host.heap)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable, Iterator

import pytest
from arena_runtime.host import heap


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> Node:
    """One node of a reference cycle of two."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()  # leave the test process's collector as it found it


def test_survivors_are_frozen_and_a_full_pass_frees_their_dead_cycles() -> None:
    gc.unfreeze()
    node = cycle()
    alive = weakref.ref(node)
    heap.freeze_survivors()
    assert gc.get_freeze_count() > 0
    assert all(o is not node for o in gc.get_objects())  # frozen: no generation walks it
    del node  # now the cycle is garbage
    gc.collect()
    assert alive() is not None  # a frozen cycle is not collected, even once it is garbage
    heap.settle()
    assert alive() is None  # the full pass unfreezes, collects it, and freezes the rest again
    assert gc.get_freeze_count() > 0


def frozen(node: Node) -> bool:
    """No generation holds ``node``: a freeze took it."""
    return all(o is not node for o in gc.get_objects())


async def until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


async def test_keep_freezes_survivors_on_its_schedule_and_stops_when_asked() -> None:
    gc.unfreeze()
    stop = asyncio.Event()
    held = [cycle()]
    dead = weakref.ref(held[0])
    keeping = asyncio.create_task(heap.keep(0.01, 0, stop))  # no full pass
    try:
        await until(lambda: gc.get_freeze_count() > 0, "a first freeze")
        assert frozen(held[0])  # a freeze takes whatever lives, the cycle with it
        held.clear()
        gc.collect()
        assert dead() is not None  # garbage, but frozen: only a full pass could free it
    finally:
        stop.set()
        await asyncio.wait_for(keeping, 5)


async def test_keeps_full_pass_frees_frozen_cycles_and_freezes_the_rest() -> None:
    gc.unfreeze()
    stop = asyncio.Event()
    held = [cycle()]
    dead = weakref.ref(held[0])
    heap.freeze_survivors()
    held.clear()
    gc.collect()
    assert dead() is not None  # a frozen cycle that became garbage
    keeping = asyncio.create_task(heap.keep(0, 0.02, stop))  # the full pass only
    try:
        await until(lambda: dead() is None, "the full pass freed the frozen cycle")
        assert gc.get_freeze_count() > 0  # and froze what lives again
    finally:
        stop.set()
        await asyncio.wait_for(keeping, 5)


async def test_keep_with_both_periods_off_does_nothing() -> None:
    gc.unfreeze()
    await asyncio.wait_for(heap.keep(0, 0, asyncio.Event()), 1)
    assert gc.get_freeze_count() == 0


def test_settling_turns_the_collector_back_on() -> None:
    """`arena <service>` starts with the collector off; settling after start-up must turn it on,
    or reference cycles would never be freed for the life of the process."""
    gc.disable()
    try:
        heap.settle()
        assert gc.isenabled()
    finally:
        gc.enable()
