"""Accrual fractions of every coupon period, and the accrued interest of fixed-rate bonds at a settlement date.

Both follow QuantLib 1.44's ``FixedRateBond`` built on the same schedule, with the coupon's accrual period
from one (adjusted) schedule date to the next and its payment on the accrual end:

* the accrual fraction of a period is ``dayCounter.yearFraction(start, end)`` (ACT/ACT-ICMA: from the
  schedule's reference periods, :mod:`trinom.conventions.icma`);
* the accrued interest at ``settlement`` (``accruedAmount(settlement)``, per 100 notional) is
  ``100 * rate * yearFraction(start, settlement)`` for the period with ``start < settlement < end``; it is 0 on
  a schedule date, before the first and from the last on.

(QuantLib pays a coupon on its accrual end rolled by the bond's ``paymentConvention``; where that moves the
payment past the accrual end, QuantLib reports the whole coupon as accrued between the two. Here, as with
``paymentConvention=Unadjusted``, payment is on the accrual end; to accrue on unadjusted dates, generate the
schedule with convention ``U``, as one would in QuantLib.)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import dates as dt
from .day_counts import ACT_ACT_ICMA, DAY_COUNTS, day_count_fractions, fractions_by_code, parse_day_counts
from .icma import QuasiCouponDates, icma_fractions, special_periods, whole_period_fractions
from .names import Factorized, Problem, column, raise_problems
from .schedules import Schedules


def _day_count_codes(schedules: Schedules, day_count: npt.ArrayLike | Factorized) -> tuple[np.ndarray, list[Problem]]:
    """Per bond, its day count's code, and the problems of the column (bad names, a count that fits no book)."""
    codes, problems = parse_day_counts(day_count)
    if codes.size not in (1, len(schedules)):
        problems.append((None, "day_count", f"day_count: {codes.size} values for {len(schedules)} bonds"))
    if codes.size == 1 and len(schedules) != 1:  # one value for every bond: no row to name
        problems = [(None, f, m) for _r, f, m in problems]
    if problems:
        return np.zeros(len(schedules), dtype=np.int64), problems
    return np.broadcast_to(codes.astype(np.int64), (len(schedules),)), problems


def accrual_fractions(*, schedules: Schedules, day_count: npt.ArrayLike | Factorized) -> np.ndarray:
    """The accrual fraction of every coupon period of every bond (QuantLib's ``coupon.accrualPeriod()``).

    Args:
      schedules: from :func:`trinom.conventions.generate_schedules`.
      day_count: ``ACT/360``, ``ACT/365F``, ``30/360``, ``30E/360``, ``ACT/ACT-ISDA`` or ``ACT/ACT-ICMA`` (or an
        alias), one or one per bond (or a :class:`~trinom.conventions.Factorized` column).

    Returns:
      ``float64``, one per period, bond ``k``'s at ``[schedules.period_offsets[k]:schedules.period_offsets[k + 1]]``.

    >>> from trinom.conventions import generate_schedules
    >>> s = generate_schedules(effective="2024-02-10", termination="2026-03-31", frequency=2, calendar="WEEKENDS",
    ...                        convention="MF", end_of_month=True)
    >>> accrual_fractions(schedules=s, day_count="ACT/ACT-ICMA").round(6).tolist()
    [0.126374, 0.5, 0.5, 0.5, 0.5]
    """
    codes, problems = _day_count_codes(schedules, day_count)
    raise_problems(problems)
    days = schedules.adjusted.view(np.int64)
    periods = np.maximum(schedules.counts - 1, 0)
    # The periods grouped by day count (bonds in a stable order by code): each group is one slice, no masks.
    order = np.argsort(codes, kind="stable")
    ordered_periods = periods[order]
    group_first = np.zeros(order.size, dtype=np.int64)
    np.cumsum(ordered_periods[:-1], out=group_first[1:])
    ascending = np.arange(int(periods.sum()), dtype=np.int64)
    start_index = np.repeat(schedules.offsets[order] - group_first, ordered_periods) + ascending
    in_order = bool(np.all(codes[1:] >= codes[:-1]))  # e.g. one day count for the book: periods stay in place
    period_index = ascending if in_order else np.repeat(schedules.period_offsets[order] - group_first,
                                                        ordered_periods) + ascending
    bounds = np.zeros(len(DAY_COUNTS.canonical) + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, weights=periods, minlength=len(DAY_COUNTS.canonical)).astype(np.int64),
              out=bounds[1:])
    out = np.empty(ascending.size, dtype=np.float64)
    for code in np.flatnonzero(np.diff(bounds)):
        group = slice(int(bounds[code]), int(bounds[code + 1]))
        where = start_index[group]
        start, end = days[where], days[1:][where]
        # ACT/ACT-ICMA: a period is its own reference period, but for irregular first and last ones (below).
        fractions = (whole_period_fractions(start, end) if code == ACT_ACT_ICMA
                     else day_count_fractions(start, end, int(code)))
        out[group if in_order else period_index[group]] = fractions
    icma = codes == ACT_ACT_ICMA
    if not icma.any():
        return out
    bonds = np.flatnonzero(icma & (periods > 0))
    if bonds.size == 0:
        return out
    quasi = QuasiCouponDates(schedules, bonds)
    which, local = special_periods(quasi)
    flat_dates = schedules.offsets[bonds][which] + local
    out[schedules.period_offsets[bonds][which] + local] = icma_fractions(quasi, which, local, days[flat_dates],
                                                                         days[flat_dates + 1])
    return out


def accrued_interest(*, schedules: Schedules, day_count: npt.ArrayLike | Factorized, coupon_rate: npt.ArrayLike,
                     settlement: npt.ArrayLike) -> np.ndarray:
    """The accrued interest per 100 notional of each fixed-rate bond at its settlement date (QuantLib's
    ``FixedRateBond(...).accruedAmount(settlement)``; payment on the accrual end).

    Args:
      schedules: from :func:`trinom.conventions.generate_schedules`.
      day_count: as for :func:`accrual_fractions`, one or one per bond.
      coupon_rate: the annual coupon rate (0.05 for 5%), one or one per bond.
      settlement: the settlement date, one or one per bond.

    Returns:
      ``float64`` per bond: ``100 * rate * yearFraction(start, settlement)`` inside a period, 0 on a schedule date,
      before the first date and from the last on; NaN for a bond without a schedule (``errors="mask"``).

    >>> from trinom.conventions import generate_schedules
    >>> s = generate_schedules(effective="2024-01-15", termination="2029-01-15", frequency=2)
    >>> accrued_interest(schedules=s, day_count="30/360", coupon_rate=0.05, settlement="2024-03-15").round(10).tolist()
    [0.8333333333]
    """
    count = len(schedules)
    codes, problems = _day_count_codes(schedules, day_count)
    settle, more = dt.to_days(settlement, field="settlement")
    problems += more
    rates = column(coupon_rate, "coupon_rate")
    try:
        rates = rates.astype(np.float64)
    except (TypeError, ValueError):
        raise_problems([(None, "coupon_rate", f"coupon_rate must be numbers, got {rates.dtype} values")])
    problems += [(int(k), "coupon_rate", f"coupon_rate must be a finite number, got {rates[k]}")
                 for k in np.flatnonzero(~np.isfinite(rates))]
    for name, values in (("settlement", settle), ("coupon_rate", rates)):
        if values.size not in (1, count):
            problems.append((None, name, f"{name}: {values.size} values for {count} bonds"))
        if values.size == 1 and count != 1:  # one value for every bond: no row to name
            problems = [(None, f, m) if f == name else (r, f, m) for r, f, m in problems]
    raise_problems(problems)
    settle = np.broadcast_to(settle, (count,))
    rates = np.broadcast_to(rates, (count,))
    counts = schedules.counts
    first = schedules.offsets[:-1]
    days = schedules.adjusted.view(np.int64)
    if days.size == 0:  # no bond has a schedule
        return np.full(count, np.nan)

    # Per bond, how many of its dates are on or before the settlement date (a binary search, all bonds at once).
    lo = np.zeros(count, dtype=np.int64)
    hi = counts.copy()
    while True:
        open_ = lo < hi
        if not open_.any():
            break
        mid = (lo + hi) // 2
        before = open_ & (days[np.minimum(first + mid, days.size - 1)] <= settle)
        lo = np.where(before, mid + 1, lo)
        hi = np.where(open_ & ~before, mid, hi)
    period = lo - 1
    inside = (lo >= 1) & (lo <= counts - 1)
    inside &= days[np.clip(first + period, 0, days.size - 1)] < settle
    fraction = np.zeros(count, dtype=np.float64)
    bonds = np.flatnonzero(inside)
    plain = bonds[codes[bonds] != ACT_ACT_ICMA]
    if plain.size:
        fraction[plain] = fractions_by_code(days[first[plain] + period[plain]], settle[plain], codes[plain])
    icma = bonds[codes[bonds] == ACT_ACT_ICMA]
    if icma.size:
        quasi = QuasiCouponDates(schedules, icma)
        fraction[icma] = icma_fractions(quasi, np.arange(icma.size), period[icma], days[first[icma] + period[icma]],
                                        settle[icma])
    accrued = 100.0 * rates * fraction
    accrued[counts == 0] = np.nan
    return accrued
