"""Paris time from epoch milliseconds, by arithmetic: the daily boundary and the season month.

No time-zone files and no clock: the engine must give the same answer on every machine and in
replay. Paris is UTC+1 in winter and UTC+2 in summer; summer time runs from the last Sunday of
March to the last Sunday of October, both changes at 01:00 UTC (the EU rule, exact since 1996;
it is applied to every year, so earlier instants get the rule, not their historical offset).
Dates are proleptic Gregorian; days are counted from 1970-01-01 (a Thursday).
"""

from __future__ import annotations

import re

from .errors import DigitsError

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
WINTER_OFFSET_MS = HOUR_MS
SUMMER_OFFSET_MS = 2 * HOUR_MS

_SEASON = re.compile(r"^(\d{4})-(\d{2})$")


class ParisTimeError(DigitsError):
    """A season name that is not `YYYY-MM`, or a date outside the calendar."""


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to this date (H. Hinnant's algorithm, exact for every year)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """The (year, month, day) of a day number (the inverse of `days_from_civil`)."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def days_in_month(year: int, month: int) -> int:
    if month == 12:
        return 31
    return days_from_civil(year, month + 1, 1) - days_from_civil(year, month, 1)


def _last_sunday_1am_utc(year: int, month: int) -> int:
    last = days_from_civil(year, month, days_in_month(year, month))
    weekday = (last + 4) % 7  # 0 = Sunday: day 0 was a Thursday
    return (last - weekday) * DAY_MS + HOUR_MS


def summer_time(epoch_ms: int) -> bool:
    """Whether Paris is on summer time (UTC+2) at this instant."""
    year = civil_from_days(epoch_ms // DAY_MS)[0]
    return _last_sunday_1am_utc(year, 3) <= epoch_ms < _last_sunday_1am_utc(year, 10)


def offset_ms(epoch_ms: int) -> int:
    """Paris local time minus UTC at this instant."""
    return SUMMER_OFFSET_MS if summer_time(epoch_ms) else WINTER_OFFSET_MS


def local_date(epoch_ms: int) -> tuple[int, int, int]:
    """The (year, month, day) in Paris at this instant."""
    return civil_from_days((epoch_ms + offset_ms(epoch_ms)) // DAY_MS)


def midnight_ms(year: int, month: int, day: int) -> int:
    """The instant Paris enters this date. Clocks change at 02:00 or 03:00 local, never near
    midnight, so exactly one of the two offsets gives back a midnight on that offset."""
    if not (1 <= month <= 12 and 1 <= day <= days_in_month(year, month)):
        raise ParisTimeError("bad_date")
    local = days_from_civil(year, month, day) * DAY_MS
    winter = local - WINTER_OFFSET_MS
    return winter if not summer_time(winter) else local - SUMMER_OFFSET_MS


def day_key(epoch_ms: int) -> str:
    """The Paris date of this instant, `YYYY-MM-DD`: the daily challenge's day."""
    year, month, day = local_date(epoch_ms)
    return f"{year:04d}-{month:02d}-{day:02d}"


def day_start_ms(epoch_ms: int) -> int:
    """The Paris midnight that began this instant's day."""
    return midnight_ms(*local_date(epoch_ms))


def next_midnight_ms(epoch_ms: int) -> int:
    """The first Paris midnight strictly after this instant: when a daily challenge stops."""
    year, month, day = local_date(epoch_ms)
    return midnight_ms(*civil_from_days(days_from_civil(year, month, day) + 1))


def season_of(epoch_ms: int) -> str:
    """The season (calendar month in Paris) of this instant, `YYYY-MM`."""
    year, month, _ = local_date(epoch_ms)
    return f"{year:04d}-{month:02d}"


def parse_season(season: str) -> tuple[int, int]:
    match = _SEASON.match(season) if isinstance(season, str) else None
    if match is None or not 1 <= int(match.group(2)) <= 12:
        raise ParisTimeError("bad_season")
    return int(match.group(1)), int(match.group(2))


def next_season(season: str) -> str:
    year, month = parse_season(season)
    return f"{year + month // 12:04d}-{month % 12 + 1:02d}"


def season_start_ms(season: str) -> int:
    """Paris midnight on the 1st of the season's month: when its ratings are reset."""
    return midnight_ms(*parse_season(season), 1)


def season_end_ms(season: str) -> int:
    """The first instant after the season: its leaderboard closes and its prizes are given."""
    return season_start_ms(next_season(season))
