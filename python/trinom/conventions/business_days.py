"""Business-day conventions (``U``, ``F``, ``MF``, ``P``) and the rolling of dates on calendars, by table.

Rolling is NumPy's ``busday_offset`` with each calendar's ``numpy.busdaycalendar``
(:func:`trinom.conventions.calendars.business_day_calendar`), run once over every day of a range of years
and kept as a table (:class:`RollTables`, cached per calendars and range): rolling a book's millions of
dates is then one table look-up each, whatever their conventions and calendars.

==========  ======================  =============================================================
code        aliases                 rule (QuantLib's ``BusinessDayConvention``)
==========  ======================  =============================================================
U           UNADJUSTED, NONE        the date itself
F           FOLLOWING               the first business day on or after the date
MF          MODIFIEDFOLLOWING       following, unless that is in the next month: then preceding
P           PRECEDING               the last business day on or before the date
==========  ======================  =============================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import numpy as np
import numpy.typing as npt

from . import dates as dt
from .calendars import business_day_calendar, parse_calendars
from .names import Factorized, NameTable, Problem, parse_column, raise_problems

#: The conventions, their codes (index) and aliases.
CONVENTIONS: Final[NameTable] = NameTable.of("business-day convention", {
    "U": ("UNADJUSTED", "NONE", "NOADJUSTMENT"),
    "F": ("FOLLOWING", "FOL", "FOLLOW"),
    "MF": ("MODIFIEDFOLLOWING", "MODFOL", "MODF"),
    "P": ("PRECEDING", "PREC", "PRE"),
})
UNADJUSTED: Final[int] = 0
FOLLOWING: Final[int] = 1
MODIFIED_FOLLOWING: Final[int] = 2
PRECEDING: Final[int] = 3
_ROLLS: Final[tuple[str, ...]] = ("following", "modifiedfollowing", "preceding")


def parse_conventions(values: npt.ArrayLike | Factorized, *, field: str = "convention",
                      rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, list[Problem]]:
    """Per row, the code of its business-day convention (``U`` 0, ``F`` 1, ``MF`` 2, ``P`` 3; -1 if bad), and
    one problem per bad row.

    >>> codes, problems = parse_conventions(["following", "MF", "u", "nearest"])
    >>> codes.tolist(), problems[0][2]
    ([1, 2, 0, -1], "convention 'nearest' is not a business-day convention; valid: U, F, MF, P")
    """
    return parse_column(values, table=CONVENTIONS, field=field, rows=rows)


@dataclass(frozen=True, eq=False)
class RollTables:
    """Every day of a range rolled by every convention on every calendar of ``names``:
    ``rolled[(convention * len(names) + calendar) * size + day - first_day]``."""

    names: tuple[str, ...]
    first_day: int
    size: int
    rolled: np.ndarray

    def roll(self, days: np.ndarray, convention: np.ndarray | int, calendar: np.ndarray | int) -> np.ndarray:
        """``days`` rolled by ``convention`` on ``calendar`` (codes; arrays of the days' shape, or scalars)."""
        if days.size and (int(days.min()) < self.first_day or int(days.max()) >= self.first_day + self.size):
            raise ValueError("a date outside the roll tables' range")  # the range is chosen from the data
        row = np.asarray(convention, dtype=np.int64) * len(self.names) + calendar
        if row.ndim == 0:
            return self.rolled[days + (int(row) * self.size - self.first_day)]
        return self.rolled[row * self.size + (days - self.first_day)]

    def is_business_day(self, days: np.ndarray, calendar: np.ndarray | int) -> np.ndarray:
        """Whether each day is a business day of its calendar."""
        return self.roll(days, FOLLOWING, calendar) == days

    def is_end_of_month(self, days: np.ndarray, calendar: np.ndarray | int) -> np.ndarray:
        """QuantLib's ``Calendar::isEndOfMonth``: the next business day after the day is in a later month."""
        return dt.month_index(days) != dt.month_index(self.roll(days + 1, FOLLOWING, calendar))

    def end_of_month(self, days: np.ndarray, calendar: np.ndarray | int) -> np.ndarray:
        """QuantLib's ``Calendar::endOfMonth``: the last business day of the day's month."""
        return self.roll(dt.end_of_month(days), PRECEDING, calendar)


def year_range(*day_arrays: np.ndarray, margin: int = 3) -> tuple[int, int]:
    """The years that rolling dates of ``day_arrays`` (and of dates up to ``margin`` years around them) needs,
    widened to whole 50-year blocks so that books of one era share their cached tables."""
    low = min(int(a.min()) for a in day_arrays if a.size)
    high = max(int(a.max()) for a in day_arrays if a.size)
    first = int(dt.year(np.array([low]))[0]) - margin
    last = int(dt.year(np.array([high]))[0]) + margin
    return max(first // 50 * 50, 1899), min(last // 50 * 50 + 49, 2201)


@lru_cache(maxsize=32)
def roll_tables(names: tuple[str, ...], first_year: int, last_year: int) -> RollTables:
    """The :class:`RollTables` of canonical calendar ``names`` over ``first_year..last_year`` (cached)."""
    start = np.datetime64(f"{first_year}-01-01", "D")
    days = np.arange(start, np.datetime64(f"{last_year + 1}-01-01", "D"))
    size = days.size
    rolled = np.empty((4, len(names), size), dtype=np.int64)
    rolled[UNADJUSTED] = days.astype(np.int64)
    for k, name in enumerate(names):
        calendar = business_day_calendar(name, first_year, last_year)
        for code, roll in zip((FOLLOWING, MODIFIED_FOLLOWING, PRECEDING), _ROLLS, strict=True):
            rolled[code, k] = np.busday_offset(days, 0, roll=roll, busdaycal=calendar).astype(np.int64)
    rolled = rolled.reshape(-1)
    rolled.setflags(write=False)
    return RollTables(names, int(start.astype(np.int64)), size, rolled)


def adjust(*, dates: npt.ArrayLike, convention: npt.ArrayLike = "F", calendar: npt.ArrayLike = "NONE") -> np.ndarray:
    """Dates rolled to business days (QuantLib's ``Calendar::adjust``), per row or one for all.

    Args:
      dates: ``datetime64``, ``YYYY-MM-DD`` text or ``datetime.date``, 1901-01-01..2199-12-31.
      convention: ``U``, ``F``, ``MF`` or ``P`` (or an alias), one or one per date.
      calendar: a calendar name (``TARGET``, ``NYSE+TARGET``...), one or one per date.

    Returns:
      ``datetime64[D]``, one per date. Bad input raises :class:`trinom.InputError` naming every bad row.

    >>> adjust(dates=["2024-03-30", "2024-03-30", "2024-12-25"], convention=["F", "MF", "P"], calendar="TARGET")
    array(['2024-04-02', '2024-03-28', '2024-12-24'], dtype='datetime64[D]')
    """
    days, problems = dt.to_days(dates, field="dates")
    conventions, more = parse_conventions(convention)
    problems += more
    calendars, names, more = parse_calendars(calendar)
    problems += more
    for field, values in (("convention", conventions), ("calendar", calendars)):
        if values.size not in (1, days.size):
            problems.append((None, field, f"{field}: {values.size} values for {days.size} dates"))
    raise_problems(problems)
    if days.size == 0:
        return dt.as_dates(days)
    tables = roll_tables(names, *year_range(days))
    conv = conventions.astype(np.int64) if conventions.size > 1 else int(conventions[0])
    cal = calendars.astype(np.int64) if calendars.size > 1 else int(calendars[0])
    return dt.as_dates(tables.roll(days, conv, cal))


def advance_business_days(days: np.ndarray, count: npt.ArrayLike, calendar: str) -> np.ndarray:
    """QuantLib's ``Calendar::advance(date, n, Days)`` on one canonical ``calendar``: ``n > 0`` business days after each
    day (counted from the day itself, a holiday too), ``n = 0`` the day rolled to the following business day; day
    numbers in and out.

    >>> d = np.array(["2025-12-06", "2025-12-06", "2025-12-24"], dtype="datetime64[D]").astype(np.int64)
    >>> dt.as_dates(advance_business_days(d, [2, 0, 2], "TARGET")).astype(str).tolist()
    ['2025-12-09', '2025-12-08', '2025-12-30']
    """
    days = np.asarray(days, dtype=np.int64)
    lag = np.broadcast_to(np.asarray(count, dtype=np.int64), days.shape)
    if days.size == 0:
        return days.copy()
    first, last = year_range(days, margin=1)
    business = business_day_calendar(calendar, first, last)
    start = days.astype("datetime64[D]")
    rolled = np.where(lag > 0, np.busday_offset(start, 0, roll="backward", busdaycal=business),
                      np.busday_offset(start, 0, roll="forward", busdaycal=business))
    return np.busday_offset(rolled, lag, roll="forward", busdaycal=business).astype("datetime64[D]").astype(np.int64)


def is_business_day(*, dates: npt.ArrayLike, calendar: npt.ArrayLike = "NONE") -> np.ndarray:
    """Whether each date is a business day of its calendar.

    >>> is_business_day(dates=["2024-12-25", "2024-12-27"], calendar="TARGET").tolist()
    [False, True]
    """
    days, problems = dt.to_days(dates, field="dates")
    calendars, names, more = parse_calendars(calendar)
    raise_problems(problems + more)
    if days.size == 0:
        return np.zeros(0, dtype=bool)
    tables = roll_tables(names, *year_range(days))
    return tables.is_business_day(days, calendars.astype(np.int64) if calendars.size > 1 else int(calendars[0]))
