"""Kafka's default partitioner: murmur2 of the key, made positive, modulo the partition count.

This is byte-for-byte the Java client's ``Utils.murmur2`` / ``Utils.toPositive`` (and aiokafka's
``DefaultPartitioner``), so a key lands on the same partition in the embedded log as on Kafka and
a log can move from one to the other without reshuffling streams.
"""

from __future__ import annotations

import functools
import itertools
import struct

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF

_round_robin = itertools.count()


def murmur2(data: bytes) -> int:
    """The Java client's murmur2 hash of ``data`` as a signed 32-bit int."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - length % 4
    for (k,) in struct.iter_unpack("<I", data[:whole]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = length % 4
    if tail == 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: bytes | None, partitions: int) -> int:
    """The partition a record with this key goes to among ``partitions``.

    Keyless records carry no stream, so any partition will do; they are spread round-robin.
    """
    if partitions < 1:
        raise ValueError(f"a topic has at least one partition, not {partitions}")
    if key is None:
        return next(_round_robin) % partitions
    return _keyed(key, partitions)


# Keys are stream ids, and a stream appends many times: remember the recent ones.
@functools.lru_cache(maxsize=65536)
def _keyed(key: bytes, partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % partitions
