"""The serving process's garbage-collector schedule (arena_runtime.host.heap)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

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


async def test_keep_freezes_on_its_schedule_and_stops_when_asked() -> None:
    gc.unfreeze()
    stop = asyncio.Event()
    node = cycle()
    dead = weakref.ref(node)
    keeping = asyncio.create_task(heap.keep(0.01, 0.05, stop))
    await asyncio.sleep(0.02)  # frozen alive by a first freeze, most likely
    del node
    for _ in range(200):
        await asyncio.sleep(0.01)
        if gc.get_freeze_count() > 0 and dead() is None:
            break
    assert gc.get_freeze_count() > 0
    assert dead() is None  # freed by a young collection or by the full pass
    stop.set()
    await asyncio.wait_for(keeping, 5)


async def test_keep_with_both_periods_off_does_nothing() -> None:
    gc.unfreeze()
    await asyncio.wait_for(heap.keep(0, 0, asyncio.Event()), 1)
    assert gc.get_freeze_count() == 0
