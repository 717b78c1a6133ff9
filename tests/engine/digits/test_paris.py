"""Paris time by arithmetic: checked against the tz database (which the engine never reads)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from arena_engine.digits import paris
from hypothesis import given, settings
from hypothesis import strategies as st

PARIS = ZoneInfo("Europe/Paris")
MIN = 60_000


def ms(text: str) -> int:
    """An ISO instant in UTC, as epoch milliseconds."""
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def test_the_march_change_at_one_utc() -> None:
    change = ms("2024-03-31T01:00:00")  # 02:00 winter time becomes 03:00 summer time
    assert paris.offset_ms(change - 1) == paris.WINTER_OFFSET_MS
    assert paris.offset_ms(change) == paris.SUMMER_OFFSET_MS
    assert paris.day_key(change - 1) == paris.day_key(change) == "2024-03-31"
    # That day has 23 hours: its midnight was 23:00 UTC the day before, the next at 22:00 UTC.
    assert paris.day_start_ms(change) == ms("2024-03-30T23:00:00")
    assert paris.next_midnight_ms(change) == ms("2024-03-31T22:00:00")


def test_the_october_change_at_one_utc() -> None:
    change = ms("2024-10-27T01:00:00")  # 03:00 summer time becomes 02:00 winter time
    assert paris.offset_ms(change - 1) == paris.SUMMER_OFFSET_MS
    assert paris.offset_ms(change) == paris.WINTER_OFFSET_MS
    # A 25-hour day.
    assert paris.day_start_ms(change) == ms("2024-10-26T22:00:00")
    assert paris.next_midnight_ms(change) == ms("2024-10-27T23:00:00")


def test_daily_boundary_is_paris_midnight_not_utc() -> None:
    assert paris.day_key(ms("2024-07-14T21:59:59")) == "2024-07-14"
    assert paris.day_key(ms("2024-07-14T22:00:00")) == "2024-07-15"  # 00:00 in Paris
    assert paris.day_key(ms("2024-01-14T22:59:59")) == "2024-01-14"
    assert paris.day_key(ms("2024-01-14T23:00:00")) == "2024-01-15"
    midnight = ms("2024-07-14T22:00:00")
    assert paris.next_midnight_ms(midnight - 1) == midnight
    assert paris.next_midnight_ms(midnight) == midnight + paris.DAY_MS  # strictly after


def test_season_month_and_year_ends() -> None:
    assert paris.season_of(ms("2024-12-31T22:59:59")) == "2024-12"
    assert paris.season_of(ms("2024-12-31T23:00:00")) == "2025-01"  # New Year in Paris
    assert paris.season_of(ms("2024-05-31T21:59:59")) == "2024-05"
    assert paris.season_of(ms("2024-05-31T22:00:00")) == "2024-06"
    assert paris.season_of(ms("2024-02-29T12:00:00")) == "2024-02"  # leap day
    assert paris.season_start_ms("2025-01") == ms("2024-12-31T23:00:00")
    assert paris.season_end_ms("2024-12") == paris.season_start_ms("2025-01")
    assert paris.season_start_ms("2024-04") == ms("2024-03-31T22:00:00")  # summer time
    assert paris.next_season("2024-12") == "2025-01"
    assert paris.next_season("2024-09") == "2024-10"


@pytest.mark.parametrize("bad", ["2024-13", "2024-00", "24-01", "2024-1", "", "2024-01-01"])
def test_bad_season_names_are_refused(bad: str) -> None:
    with pytest.raises(paris.ParisTimeError) as err:
        paris.season_start_ms(bad)
    assert err.value.code == "bad_season"


def test_bad_dates_are_refused() -> None:
    with pytest.raises(paris.ParisTimeError):
        paris.midnight_ms(2023, 2, 29)


@settings(max_examples=1000, deadline=None)
@given(st.integers(ms("1996-01-01T00:00:00"), ms("2100-01-01T00:00:00")))
def test_agrees_with_the_tz_database(instant: int) -> None:
    local = datetime.fromtimestamp(instant / 1000, UTC).astimezone(PARIS)
    offset = local.utcoffset()
    assert offset is not None
    assert paris.offset_ms(instant) == offset // timedelta(milliseconds=1)
    assert paris.day_key(instant) == local.date().isoformat()
    assert paris.season_of(instant) == local.strftime("%Y-%m")
    start = datetime.combine(local.date(), datetime.min.time(), PARIS)
    assert paris.day_start_ms(instant) == int(start.timestamp() * 1000)
    following = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), PARIS)
    assert paris.next_midnight_ms(instant) == int(following.timestamp() * 1000)


@given(st.integers(-1_000_000, 1_000_000))
def test_day_numbers_round_trip(days: int) -> None:
    assert paris.days_from_civil(*paris.civil_from_days(days)) == days


def test_every_change_of_the_years_checked() -> None:
    """Both changes of every year from 1996 to 2037, to the minute, against the tz database."""
    for year in range(1996, 2038):
        for month in (3, 10):
            last = max(
                d
                for d in range(25, 32)
                if datetime(year, month, d, tzinfo=UTC).weekday() == 6  # Sunday
            )
            change = ms(f"{year}-{month:02d}-{last:02d}T01:00:00")
            for instant in (change - MIN, change):
                local = datetime.fromtimestamp(instant / 1000, UTC).astimezone(PARIS)
                offset = local.utcoffset()
                assert offset is not None
                assert paris.offset_ms(instant) == offset // timedelta(milliseconds=1)
