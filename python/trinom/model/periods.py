"""Tenors such as ``6M``, ``1Y``, ``10Y``, ``18M``, ``2W``, ``10D``, and fixed legs generated forward from a start
date, for quotes and the instruments built from them.

A period adds to a date as QuantLib's ``Date + Period`` does: years and months move the month and clamp the day
to the month's length (2024-01-31 plus ``1M`` is 2024-02-29), weeks and days add days. A period may combine
units (``1Y6M``). :func:`fixed_leg` generates a leg's dates forward from its start, unadjusted: ``start + k``
periods (each from the start, so the day clamps month by month but never drifts), then the end date, a short
last period where the span is no whole number of periods (QuantLib's ``Schedule(start, end, tenor,
NullCalendar(), Unadjusted, Unadjusted, DateGeneration.Forward, False)``), with each period's accrual fraction
on the day count (:func:`trinom.conventions.year_fractions`). With a ``calendar`` and ``convention`` each inner date
is rolled, as QuantLib's ``Schedule(start, end, tenor, calendar, convention, convention, DateGeneration.Forward,
False)`` (the start and end are the caller's, already rolled), and the periods accrue between the rolled dates.

>>> months, days, problems = parse_periods(["6M", "1Y", "10y", "18M", "2W", "1Y6M", "6X"], field="tenor")
>>> months.tolist(), days.tolist(), [p[0] for p in problems]
([6, 12, 120, 18, 0, 18, 0], [0, 0, 0, 0, 14, 0, 0], [6])
>>> [str(d) for d in add_period(np.array(["2024-01-31"], dtype="datetime64[D]"), months[:1], days[:1])]
['2024-07-31']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from ..conventions import dates as dt
from ..conventions.business_days import UNADJUSTED, parse_conventions, roll_tables, year_range
from ..conventions.calendars import parse_calendars
from ..conventions.day_counts import ACT_ACT_ICMA, fractions_by_code, parse_day_counts
from ..conventions.frequencies import parse_frequencies
from ..conventions.names import Problem, column, raise_problems

_PERIOD: Final = re.compile(r"^\s*((\d+)\s*([DWMY])\s*)+$", re.IGNORECASE)
_PART: Final = re.compile(r"(\d+)\s*([DWMY])", re.IGNORECASE)
#: The longest period a quote may name (in months).
MAX_MONTHS: Final[int] = 12 * 100


def parse_periods(values: npt.ArrayLike, *, field: str,
                  rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray, list[Problem]]:
    """Per row, a period's whole months (years are 12) and days (weeks are 7), and one problem per cell that is
    no period (its months and days are then 0). A period must be longer than zero.

    >>> parse_periods(["3m", "0Y"], field="expiry")[2][0][2]
    "expiry '0Y' is not a period longer than zero (such as 6M, 1Y, 10Y, 2W, 10D)"
    """
    array = column(values, field)
    months = np.zeros(array.size, dtype=np.int64)
    days = np.zeros(array.size, dtype=np.int64)
    row_numbers = np.arange(array.size) if rows is None else np.asarray(rows).reshape(-1)
    problems: list[Problem] = []
    cache: dict[str, tuple[int, int] | None] = {}
    for k, value in enumerate(array.tolist()):
        text = value if isinstance(value, str) else ""
        if text not in cache:
            cache[text] = _period(text)
        parsed = cache[text]
        if parsed is None:
            problems.append((int(row_numbers[k]), field, f"{field} {value!r} is not a period longer than zero (such as "
                             "6M, 1Y, 10Y, 2W, 10D)"))
        else:
            months[k], days[k] = parsed
    return months, days, problems


def _period(text: str) -> tuple[int, int] | None:
    if not _PERIOD.match(text):
        return None
    months = days = 0
    for count, unit in _PART.findall(text):
        n = int(count)
        unit = unit.upper()
        if unit == "Y":
            months += 12 * n
        elif unit == "M":
            months += n
        elif unit == "W":
            days += 7 * n
        else:
            days += n
    if months + days <= 0 or months > MAX_MONTHS or days > 366 * 100:
        return None
    return months, days


def add_period(dates: npt.ArrayLike, months: npt.ArrayLike, days: npt.ArrayLike = 0) -> np.ndarray:
    """``dates`` (``datetime64[D]``) plus whole months (the day clamped to the month's length) and then days, as
    QuantLib's ``Date + Period``.

    >>> [str(d) for d in add_period(np.array(["2024-02-29", "2024-08-31"], dtype="datetime64[D]"), [12, 6], 0)]
    ['2025-02-28', '2025-02-28']
    """
    day_numbers = np.asarray(dates, dtype="datetime64[D]").astype(np.int64)
    moved = dt.add_months(day_numbers, np.asarray(months, dtype=np.int64)) + np.asarray(days, dtype=np.int64)
    return dt.as_dates(moved)


@dataclass(frozen=True, eq=False)
class FixedLeg:
    """Legs generated forward from their start, padded to the longest: ``(n, m)`` accrual start and end (payment)
    day numbers and accrual fractions (0 past a row's ``count``), ``count`` periods per leg."""

    start_days: np.ndarray
    pay_days: np.ndarray
    accrual: np.ndarray
    count: np.ndarray


def fixed_leg(*, start: npt.ArrayLike, end: npt.ArrayLike, frequency: npt.ArrayLike,
              day_count: npt.ArrayLike, calendar: npt.ArrayLike = "NONE", convention: npt.ArrayLike = "U") -> FixedLeg:
    """Legs from ``start`` to ``end`` (day numbers or dates), ``frequency`` periods a year (1, 2, 4, 12 or a name),
    generated forward, with their accrual fractions on ``day_count`` (one or one per leg); the inner dates rolled by
    ``convention`` on ``calendar`` (one or one per leg; default unadjusted). A rolled inner date on or after the end
    is dropped (QuantLib's schedule does the same).

    ACT/ACT-ICMA takes the leg's periods as its reference periods, as QuantLib's ``FixedRateLeg`` with
    ``ActualActual(ISMA)`` does: a regular period accrues ``1 / frequency``; a short last period ``(1 /
    frequency) * days / reference days``, its reference period running from its start one tenor on (a leg of one
    short period: from its end one tenor back).

    >>> leg = fixed_leg(start=np.array(["2024-08-31"], dtype="datetime64[D]"),
    ...                 end=np.array(["2025-02-28"], dtype="datetime64[D]"), frequency=4, day_count="30/360")
    >>> [str(np.datetime64(int(d), "D")) for d in leg.pay_days[0]], leg.accrual.round(6).tolist()
    (['2024-11-30', '2025-02-28'], [[0.25, 0.244444]])
    """
    s = _day_numbers(start, "start")
    e = _day_numbers(end, "end")
    per_year, problems = parse_frequencies(frequency)
    codes, more = parse_day_counts(day_count)
    problems += more
    calendars, calendar_names, more = parse_calendars(calendar, field="calendar")
    problems += more
    rolls, more = parse_conventions(convention)
    problems += more
    count = max(s.size, e.size, per_year.size, codes.size, calendars.size, rolls.size)
    for name, values in (("start", s), ("end", e), ("frequency", per_year), ("day_count", codes),
                         ("calendar", calendars), ("convention", rolls)):
        if values.size not in (1, count):
            problems.append((None, name, f"{name}: {values.size} values for {count} legs"))
    raise_problems(problems)
    s, e = np.broadcast_to(s, (count,)), np.broadcast_to(e, (count,))
    months = np.broadcast_to(12 // per_year, (count,))
    codes = np.broadcast_to(codes.astype(np.int64), (count,))
    problems = [(int(k), "end", "the end must be after the start") for k in np.flatnonzero(e <= s)]
    raise_problems(problems)
    if count == 0:
        empty = np.zeros((0, 1), dtype=np.int64)
        return FixedLeg(empty, empty, np.zeros((0, 1)), np.zeros(0, dtype=np.int64))
    span = dt.month_index(e) - dt.month_index(s)
    most = span // months + 2  # per leg, more periods than fit before the end
    width = int(most.max())
    k = np.minimum(np.arange(1, width + 1, dtype=np.int64)[None, :], most[:, None])  # repeats past a leg's end
    grid = dt.add_months(np.repeat(s, width), (months[:, None] * k).reshape(-1)).reshape(count, width)
    regular = grid < e[:, None]  # dates strictly inside; the end closes every leg
    if np.any(rolls != UNADJUSTED) and calendar_names != ("NONE",):
        tables = roll_tables(calendar_names, *year_range(grid))
        grid = tables.roll(grid, np.broadcast_to(rolls.astype(np.int64), (count,))[:, None],
                           np.broadcast_to(calendars.astype(np.int64), (count,))[:, None])
        regular &= grid < e[:, None]
    inner = regular.sum(axis=1)
    n = inner + 1
    m = int(n.max())
    cols = np.arange(m)[None, :]
    pay = np.where(cols < inner[:, None], grid[:, :m] if grid.shape[1] >= m else np.pad(grid, ((0, 0), (0, m))),
                   e[:, None])
    pay = np.where(cols < n[:, None], pay, e[:, None])
    begin = np.concatenate([s[:, None], pay[:, :-1]], axis=1)
    begin = np.where(cols < n[:, None], begin, e[:, None])
    icma = codes == ACT_ACT_ICMA
    plain = np.where(icma, 0, codes)  # ICMA's rows are set below
    live = cols < n[:, None]
    fractions = np.zeros((count, m))
    fractions[live] = fractions_by_code(begin[live], pay[live], np.broadcast_to(plain[:, None], (count, m))[live])
    if icma.any():
        rows = np.flatnonzero(icma)
        period = months[rows] / 12.0
        last = n[rows] - 1
        last_start = begin[rows, last]
        # QuantLib's FixedRateLeg: a short last period's reference is its start plus a tenor; a short single
        # (first) period's, its end less a tenor
        after = dt.add_months(last_start, months[rows])
        before = dt.add_months(e[rows], -months[rows])
        single = n[rows] == 1
        span = np.where(single, e[rows] - before, after - last_start)
        regular_end = dt.add_months(s[rows], months[rows] * n[rows])
        stub = np.where(e[rows] == regular_end, 1.0, (e[rows] - last_start) / span)
        values = np.broadcast_to(period[:, None], (rows.size, m)).copy()
        values[np.arange(rows.size), last] = period * stub
        fractions[rows] = values
    fractions = np.where(cols < n[:, None], fractions, 0.0)
    return FixedLeg(start_days=begin, pay_days=pay, accrual=fractions, count=n.astype(np.int64))


def _day_numbers(values: npt.ArrayLike, field: str) -> np.ndarray:
    array = values if isinstance(values, np.ndarray) else np.asarray(values)
    if array.dtype.kind in "iu":
        return array.astype(np.int64).reshape(-1)
    days, problems = dt.to_days(array, field=field)
    raise_problems(problems)
    return days
