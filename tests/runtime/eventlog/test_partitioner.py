"""The partitioner is Kafka's: murmur2 as in the Java client, made positive, modulo partitions."""

from __future__ import annotations

import pytest
from aiokafka.partitioner import murmur2 as aiokafka_murmur2
from arena_runtime.eventlog.partitioner import murmur2, partition_for
from hypothesis import given
from hypothesis import strategies as st

# org.apache.kafka.common.utils.UtilsTest#testMurmur2 (signed 32-bit results)
JAVA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize(("key", "expected"), JAVA_VECTORS.items())
def test_murmur2_matches_the_java_client(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


@pytest.mark.parametrize(("key", "expected"), JAVA_VECTORS.items())
def test_partition_is_the_positive_hash_modulo(key: bytes, expected: int) -> None:
    for partitions in (1, 3, 8, 100):
        assert partition_for(key, partitions) == (expected & 0x7FFFFFFF) % partitions


@given(st.binary(max_size=64), st.integers(min_value=1, max_value=512))
def test_agrees_with_aiokafkas_default_partitioner(key: bytes, partitions: int) -> None:
    assert murmur2(key) & 0xFFFFFFFF == aiokafka_murmur2(key)
    assert partition_for(key, partitions) == (aiokafka_murmur2(key) & 0x7FFFFFFF) % partitions


def test_keyless_records_spread_over_every_partition() -> None:
    assert {partition_for(None, 4) for _ in range(8)} == {0, 1, 2, 3}


def test_a_topic_has_partitions() -> None:
    with pytest.raises(ValueError):
        partition_for(b"k", 0)
