"""Server time in whole milliseconds: the engine's unit, and what the envelopes record."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def ms_of(moment: datetime) -> int:
    return (moment - _EPOCH) // _MS


def at_ms(ms: int) -> datetime:
    return _EPOCH + ms * _MS


def now_ms() -> int:
    return ms_of(datetime.now(UTC))
