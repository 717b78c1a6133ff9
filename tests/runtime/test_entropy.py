"""Ids and seeds from blocks of the kernel's random source (arena_runtime.entropy)."""

from __future__ import annotations

import threading
import uuid

from arena_runtime.entropy import RandomBytes, new_uuid, random_bits


def test_ids_are_version_4_uuids_and_never_repeat() -> None:
    ids = [new_uuid() for _ in range(20_000)]  # several blocks
    assert len(set(ids)) == len(ids)
    parsed = [uuid.UUID(i) for i in ids[:100]]
    assert all(u.version == 4 and u.variant == uuid.RFC_4122 for u in parsed)
    assert all(str(u) == i for u, i in zip(parsed, ids, strict=False))


def test_bits_stay_in_range_and_use_all_of_it() -> None:
    seeds = [random_bits(63) for _ in range(2000)]
    assert all(0 <= s < 2**63 for s in seeds)
    assert max(seeds) > 2**62  # the top bit is used (probability of failing: 2**-2000)
    assert {random_bits(1) for _ in range(200)} == {0, 1}
    assert all(0 <= random_bits(5) < 32 for _ in range(200))


def test_threads_never_get_the_same_slice() -> None:
    source = RandomBytes(block=64)  # a small block: many refills while the threads race
    taken: list[bytes] = []

    def take() -> None:
        chunks = [source.take(16) for _ in range(2000)]
        taken.extend(chunks)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(taken) == 8000 and len(set(taken)) == 8000
