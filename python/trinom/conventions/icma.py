"""ACT/ACT-ICMA year fractions from a schedule, as QuantLib 1.44's ``ActualActual(ISMA, schedule)``.

The reference periods are the schedule's periods, with notional coupon dates in place of an irregular
first or last one (QuantLib's ``getListOfPeriodDatesIncludingQuasiPayments``):

* an irregular first period: its start is replaced by the notional coupon one tenor before the second date
  (``calendar.advance(date[1], -tenor, convention, endOfMonth)``), and, where that notional date is after
  the first date (a long first period), one more notional date a tenor earlier is put in front;
* an irregular last period: the date at index ``n - 1`` of that list is replaced by the notional coupon a
  tenor after the next-to-last date, and, where that is before the last date (a long last period), one more
  notional date a tenor later is appended. (Where a date was put in front, index ``n - 1`` is the
  next-to-last schedule date, as in QuantLib.)

A year fraction from ``d1`` to ``d2`` sums, over the reference periods ``[a, b)`` it overlaps, the days of the
overlap over ``(b - a) * coupons``, ``coupons = round(12 / round(12 (b - a) / 365))`` (or one year's days from
the overlap's start, and one coupon, for a reference period shorter than 16 days).

Only an irregular first or last period (and, where a notional date was put in front and the last is irregular,
the one before the last) can see notional dates, so they are computed over a window of reference periods;
every other period is its own reference period: ``1 / coupons``.
"""

from __future__ import annotations

import numpy as np

from . import dates as dt
from .business_days import PRECEDING, UNADJUSTED, RollTables
from .schedules import Schedules


def advance(days: np.ndarray, months: np.ndarray, convention: np.ndarray, calendar: np.ndarray,
            end_of_month: np.ndarray, tables: RollTables) -> np.ndarray:
    """QuantLib's ``Calendar::advance(date, months * Months, convention, endOfMonth)``, per element.

    From a month's end with ``end_of_month``, the result is the target month's end: its last calendar day
    (``Unadjusted``; "month's end" by calendar days) or its last business day (other conventions; "month's end"
    meaning no business day is left in the month). Otherwise the date moved by whole months, rolled.
    """
    moved = dt.add_months(days, months)
    unadjusted = convention == UNADJUSTED
    calendar_end = tables.is_end_of_month(days, calendar)
    last_day = dt.end_of_month(moved)
    to_last_day = end_of_month & unadjusted & (dt.end_of_month(days) == days)
    to_last_business_day = end_of_month & ~unadjusted & calendar_end
    rolled = tables.roll(moved, convention, calendar)
    last_business_day = tables.roll(last_day, np.full_like(convention, PRECEDING), calendar)
    return np.where(to_last_day, last_day, np.where(to_last_business_day, last_business_day, rolled))


class QuasiCouponDates:
    """The reference dates of a set of bonds' schedules, addressed by (bond, position) without building the lists.

    ``bonds``: indices into ``schedules``; every array attribute is per one of them.
    """

    def __init__(self, schedules: Schedules, bonds: np.ndarray):
        if schedules.tables is None:
            raise ValueError("schedules without roll tables")
        tables = schedules.tables
        self.bonds = bonds
        self.first = schedules.offsets[bonds]
        self.count = schedules.offsets[bonds + 1] - self.first
        self.days = schedules.adjusted.view(np.int64)
        period_offsets = schedules.period_offsets
        months = schedules.months[bonds]
        convention = schedules.convention[bonds].astype(np.int64)
        calendar = schedules.calendar[bonds].astype(np.int64)
        eom = schedules.end_of_month[bonds]
        last = self.first + self.count - 1
        self.irregular_first = ~schedules.regular[period_offsets[bonds]]
        self.irregular_last = ~schedules.regular[period_offsets[bonds + 1] - 1]

        def step(days: np.ndarray, sign: int) -> np.ndarray:
            return advance(days, sign * months, convention, calendar, eom, tables)

        self.notional_first = step(self.days[self.first + 1], -1)
        self.shift = (self.irregular_first & (self.notional_first > self.days[self.first])).astype(np.int64)
        self.prior = step(self.notional_first, -1)
        self.notional_last = step(self.days[last - 1], +1)
        self.appended = self.irregular_last & (self.notional_last < self.days[last])
        self.after = step(self.notional_last, +1)
        self.size = self.count + self.shift + self.appended

    def at(self, which: np.ndarray, position: np.ndarray) -> np.ndarray:
        """The reference date at ``position`` of bond ``which`` (indices into ``bonds``); positions in range."""
        count, shift = self.count[which], self.shift[which]
        base_index = np.clip(position - shift, 0, count - 1) + self.first[which]
        value = self.days[base_index]
        value = np.where(self.irregular_first[which] & (position == shift), self.notional_first[which], value)
        value = np.where((shift == 1) & (position == 0), self.prior[which], value)
        value = np.where(self.irregular_last[which] & (position == count - 1), self.notional_last[which], value)
        return np.where(self.appended[which] & (position == count + shift), self.after[which], value)


def reference_fraction(start: np.ndarray, end: np.ndarray, reference_start: np.ndarray,
                       reference_end: np.ndarray) -> np.ndarray:
    """The fraction of ``[start, end]`` (inside one reference period) in coupon periods over coupons a year."""
    reference_days = (reference_end - reference_start).astype(np.float64)
    months = np.floor(12.0 * reference_days / 365.0 + 0.5)
    coupons = np.floor(12.0 / np.where(months > 0, months, 1.0) + 0.5)
    short = reference_days < 16
    if short.any():
        one_year = (dt.add_months(start, 12) - start).astype(np.float64)
        reference_days = np.where(short, one_year, reference_days)
        coupons = np.where(short, 1.0, coupons)
    return (end - start) / (reference_days * coupons)


def _whole_period_table(longest: int = 740) -> np.ndarray:
    """``reference_fraction`` of a whole reference period of ``d`` days, for ``d`` in 16..``longest`` (by table)."""
    days = np.arange(longest + 1, dtype=np.int64)
    table = np.full(days.size, np.nan)
    table[16:] = reference_fraction(days[16:], days[16:] * 2, days[16:], days[16:] * 2)
    table.setflags(write=False)
    return table


_WHOLE_PERIOD = _whole_period_table()


def whole_period_fractions(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The ACT/ACT-ICMA fraction of periods that are their own reference period: ``1 / coupons a year``
    (QuantLib's ``days / (days * coupons)``), by table for periods of 16 to 740 days (longer ones: none a year)."""
    days = end - start
    inside = (days >= 16) & (days < _WHOLE_PERIOD.size)
    if inside.all():
        return _WHOLE_PERIOD[days]
    out = np.empty(days.size, dtype=np.float64)
    out[inside] = _WHOLE_PERIOD[days[inside]]
    rest = ~inside
    out[rest] = reference_fraction(start[rest], end[rest], start[rest], end[rest])
    return out


def special_periods(quasi: QuasiCouponDates) -> tuple[np.ndarray, np.ndarray]:
    """The coupon periods whose reference periods are not themselves: ``(which, period)`` pairs, ``which`` an index
    into ``quasi.bonds``. The first, where it is irregular; the last, where it is irregular, and (with a notional
    date put in front, which shifts the index QuantLib overwrites) the one before it."""
    which = np.arange(quasi.bonds.size)
    last = quasi.count - 2
    first = quasi.irregular_first
    final = quasi.irregular_last & (last > 0)
    before = quasi.irregular_last & (quasi.shift == 1) & (last > 1)
    pairs = [(which[first], np.zeros(int(first.sum()), dtype=np.int64)), (which[final], last[final]),
             (which[before], last[before] - 1)]
    return np.concatenate([w for w, _p in pairs]), np.concatenate([p for _w, p in pairs])


def icma_fractions(quasi: QuasiCouponDates, which: np.ndarray, period: np.ndarray, start: np.ndarray,
                   end: np.ndarray) -> np.ndarray:
    """Year fractions from ``start`` to ``end`` (day numbers, ``start <= end``) within coupon ``period`` of bond
    ``which`` (an index into ``quasi.bonds``), summed over the reference periods around that coupon."""
    total = np.zeros(start.size, dtype=np.float64)
    centre = period + quasi.shift[which]
    last_pair = quasi.size[which] - 2
    for offset in (-2, -1, 0, 1, 2):
        j = centre + offset
        valid = (j >= 0) & (j <= last_pair)
        if not valid.any():
            continue
        j = np.where(valid, j, 0)
        a = quasi.at(which, j)
        b = quasi.at(which, j + 1)
        overlap = valid & (start < b) & (end > a)
        lo, hi = np.maximum(start, a), np.minimum(end, b)
        with np.errstate(divide="ignore", invalid="ignore"):  # pairs that do not overlap may be empty
            piece = reference_fraction(lo, hi, a, b)
        total += np.where(overlap, piece, 0.0)
    return total
