"""Dates as whole days, and their calendar arithmetic through look-up tables.

Every date is a day number (days since 1970-01-01, the integer of ``numpy.datetime64[D]``), and every
month an absolute month index (``12 * year + month - 1``). Converting a ``datetime64[D]`` array to
months or days of the month costs NumPy a calendar computation per element; here it is one table
look-up (``MONTH_OF_DAY``, ``MONTH_START``), which keeps a book's millions of coupon dates cheap.

The tables cover 1899-01-01 to 2202-01-31, beyond QuantLib's range of dates (1901-01-01 to 2199-12-31:
:data:`FIRST_DATE`, :data:`LAST_DATE`, what trinom accepts) by more than the two coupon periods that
the ACT/ACT-ICMA quasi-coupon dates may reach outside a schedule.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .names import Problem

#: The first and last dates trinom accepts (QuantLib's range).
FIRST_DATE: Final = np.datetime64("1901-01-01", "D")
LAST_DATE: Final = np.datetime64("2199-12-31", "D")

_FIRST_MONTH = np.datetime64("1899-01", "M")
_MONTHS = np.arange(_FIRST_MONTH, np.datetime64("2202-02", "M") + np.timedelta64(1, "M"))
#: Absolute month index of the tables' first month.
MONTH0: Final[int] = 1899 * 12
#: ``MONTH_START[i - MONTH0]``: the day number of the first day of month ``i`` (one extra month at the end).
MONTH_START: Final[np.ndarray] = _MONTHS.astype("datetime64[D]").astype(np.int64)
#: Day number of the tables' first day.
DAY0: Final[int] = int(MONTH_START[0])
#: ``MONTH_OF_DAY[d - DAY0]``: the absolute month index of day ``d``.
MONTH_OF_DAY: Final[np.ndarray] = np.repeat(np.arange(MONTH0, MONTH0 + _MONTHS.size - 1, dtype=np.int64),
                                            np.diff(MONTH_START))
#: The last day the tables hold.
LAST_DAY: Final[int] = DAY0 + MONTH_OF_DAY.size - 1
for _table in (MONTH_START, MONTH_OF_DAY):
    _table.setflags(write=False)


def to_days(values: npt.ArrayLike, *, field: str, rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, list[Problem]]:
    """Day numbers (``int64``) of dates given as ``datetime64``, ISO strings (``YYYY-MM-DD``) or ``datetime.date``,
    and one problem per row that is no date or lies outside 1901-01-01..2199-12-31 (its day number is then 0).

    >>> days, problems = to_days(["2024-02-29", "2024-02-30", "1800-01-01"], field="maturity")
    >>> bool(days[0] == np.datetime64("2024-02-29").astype(int)), [p[0] for p in problems]
    (True, [1, 2])
    """
    raw = values if isinstance(values, np.ndarray) else np.asarray(values)
    flat = raw.reshape(-1)
    row_numbers = np.arange(flat.size) if rows is None else np.asarray(rows).reshape(-1)
    problems: list[Problem] = []
    if flat.size == 0:
        return np.zeros(0, dtype=np.int64), problems
    bad = np.zeros(flat.size, dtype=bool)
    if flat.dtype.kind == "M":
        dates = flat.astype("datetime64[D]")
        with_time = (dates != flat) & ~np.isnat(flat)
        for k in np.flatnonzero(with_time):
            problems.append((int(row_numbers[k]), field, f"{field} must be a date without a time of day, got {flat[k]}"))
        bad |= with_time
    elif flat.dtype.kind in "USO":
        dates = _parsed_dates(flat)
        if dates is None:  # some cell is no date: find which, one at a time
            dates = np.empty(flat.size, dtype="datetime64[D]")
            for k, value in enumerate(flat.tolist()):
                parsed = _parsed_dates(np.array([value], dtype=object))
                if parsed is None:
                    dates[k] = np.datetime64("NaT")
                    bad[k] = True
                    problems.append((int(row_numbers[k]), field, f"{field} {value!r} is not a date (YYYY-MM-DD)"))
                else:
                    dates[k] = parsed[0]
    else:
        raise InputError([(None, field, f"{field} must be dates (datetime64, YYYY-MM-DD text or datetime.date), "
                                        f"got {flat.dtype} values")])
    days = dates.astype(np.int64)
    missing = np.isnat(dates) & ~bad
    for k in np.flatnonzero(missing):
        problems.append((int(row_numbers[k]), field, f"{field} is missing (not a date)"))
    outside = ~np.isnat(dates) & ~bad & ((dates < FIRST_DATE) | (dates > LAST_DATE))
    for k in np.flatnonzero(outside):
        problems.append((int(row_numbers[k]), field, f"{field} {dates[k]} is outside {FIRST_DATE}..{LAST_DATE}"))
    days[bad | missing | outside | np.isnat(dates)] = 0
    return days, problems


def _parsed_dates(cells: np.ndarray) -> np.ndarray | None:
    """``cells`` (text, ``datetime.date``, ``datetime64``) as ``datetime64[D]``, or ``None`` if one is no whole date
    (text must be ``YYYY-MM-DD``: NumPy would read ``"2024-02"`` as 1 February)."""
    if cells.dtype.kind in "US" or (cells.size and all(isinstance(v, str) for v in cells.tolist())):
        text = np.char.strip(cells.astype(str))
        if np.any(np.char.str_len(text) != 10):
            return None
        cells = text
    elif cells.dtype.kind == "O" and any(isinstance(v, (int, float, str)) for v in cells.tolist()):
        return None
    try:
        dates = cells.astype("datetime64[D]")
    except (TypeError, ValueError):
        return None
    if cells.dtype.kind == "O":  # a datetime with a time of day would lose it
        for value in cells.tolist():
            if hasattr(value, "hour") and (value.hour or value.minute or value.second or value.microsecond):
                return None
    return dates


def as_dates(days: npt.ArrayLike) -> np.ndarray:
    """Day numbers as ``datetime64[D]`` (a view where ``days`` is an ``int64`` array)."""
    return np.asarray(days, dtype=np.int64).view("datetime64[D]")


def day_text(day: int | np.integer) -> str:
    """A day number as its ``YYYY-MM-DD`` text (for messages).

    >>> day_text(20_000)
    '2024-10-04'
    """
    return str(np.datetime64(int(day), "D"))


def month_index(days: np.ndarray) -> np.ndarray:
    """The absolute month index (``12 * year + month - 1``) of each day."""
    return MONTH_OF_DAY[days - DAY0]


def month_start(months: np.ndarray) -> np.ndarray:
    """The day number of the first day of each absolute month."""
    return MONTH_START[months - MONTH0]


def days_in_month(months: np.ndarray) -> np.ndarray:
    """The number of days of each absolute month."""
    index = months - MONTH0
    return MONTH_START[index + 1] - MONTH_START[index]


def day_of_month(days: np.ndarray) -> np.ndarray:
    """The day of the month (1..31) of each day."""
    return days - MONTH_START[MONTH_OF_DAY[days - DAY0] - MONTH0] + 1


def end_of_month(days: np.ndarray) -> np.ndarray:
    """The last day of each day's month (QuantLib's ``Date::endOfMonth``)."""
    return MONTH_START[MONTH_OF_DAY[days - DAY0] - MONTH0 + 1] - 1


def add_months(days: np.ndarray, months: npt.ArrayLike) -> np.ndarray:
    """``days`` moved by whole ``months``, the day clamped to the target month's length (QuantLib's
    ``Date + n * Months``: 31 January plus one month is 28 or 29 February).

    >>> d = np.array([np.datetime64("2024-01-31").astype(int)])
    >>> as_dates(add_months(d, 1))[0], as_dates(add_months(d, -14))[0]
    (np.datetime64('2024-02-29'), np.datetime64('2022-11-30'))
    """
    target = MONTH_OF_DAY[days - DAY0] + months
    first = month_start(target)
    return first + np.minimum(day_of_month(days), days_in_month(target)) - 1


def year(days: np.ndarray) -> np.ndarray:
    """The calendar year of each day."""
    return MONTH_OF_DAY[days - DAY0] // 12
