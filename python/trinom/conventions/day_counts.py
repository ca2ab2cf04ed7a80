"""Day-count conventions: the year fraction between two dates, a whole book's at once.

==============  ====================================  ===============================================
name            aliases (case and ``-_()`` ignored)   rule (QuantLib 1.44)
==============  ====================================  ===============================================
ACT/360         ACTUAL/360, A360                      days / 360 (``Actual360``)
ACT/365F        ACT/365, ACTUAL/365 FIXED, A365F      days / 365 (``Actual365Fixed``)
30/360          30/360 BOND BASIS, BOND BASIS         ``Thirty360(BondBasis)``: D1 = 31 -> 30; D2 = 31
                                                      -> 30 where D1 is then 30; (360 dY + 30 dM + dD) / 360
30E/360         30E/360 EUROBOND, EUROBOND BASIS      ``Thirty360(EurobondBasis)``: D1, D2 = 31 -> 30
ACT/ACT-ISDA    ACT/ACT, ACTUAL/ACTUAL (ISDA)         ``ActualActual(ISDA)``: each calendar year's days
                                                      over that year's length
ACT/ACT-ICMA    ACT/ACT ISMA, ACTUAL/ACTUAL (ICMA)    ``ActualActual(ISMA, schedule)``: needs the coupon
                                                      schedule (:mod:`trinom.conventions.icma`)
==============  ====================================  ===============================================
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from . import dates as dt
from .names import Factorized, NameTable, Problem, parse_column, raise_problems

#: The day counts, their codes (index) and aliases.
DAY_COUNTS: Final[NameTable] = NameTable.of("day count", {
    "ACT/360": ("ACTUAL/360", "A/360", "A360"),
    "ACT/365F": ("ACT/365", "ACT/365 FIXED", "ACTUAL/365", "ACTUAL/365F", "ACTUAL/365 FIXED", "A/365F", "A365F"),
    "30/360": ("30/360 BOND BASIS", "BOND BASIS", "BONDBASIS", "360/360"),
    "30E/360": ("30E/360 EUROBOND", "EUROBOND BASIS", "EUROBOND", "30/360 EUROBOND"),
    "ACT/ACT-ISDA": ("ACT/ACT", "ACTUAL/ACTUAL", "ACTUAL/ACTUAL (ISDA)"),
    "ACT/ACT-ICMA": ("ACT/ACT ISMA", "ACTUAL/ACTUAL (ICMA)", "ACTUAL/ACTUAL (ISMA)", "ACT/ACT BOND"),
})
ACT_360: Final[int] = 0
ACT_365F: Final[int] = 1
THIRTY_360: Final[int] = 2
THIRTY_E_360: Final[int] = 3
ACT_ACT_ISDA: Final[int] = 4
ACT_ACT_ICMA: Final[int] = 5


def parse_day_counts(values: npt.ArrayLike | Factorized, *, field: str = "day_count",
                     rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, list[Problem]]:
    """Per row, the code of its day count (the index in ``DAY_COUNTS.canonical``; -1 if bad) and one problem per
    bad row.

    >>> codes, problems = parse_day_counts(["act/360", "Actual/Actual (ICMA)", "30/360", "ACT/366"])
    >>> codes.tolist(), problems[0][0]
    ([0, 5, 2, -1], 3)
    """
    return parse_column(values, table=DAY_COUNTS, field=field, rows=rows)


def day_count_fractions(start: np.ndarray, end: np.ndarray, code: int) -> np.ndarray:
    """Year fractions from day numbers ``start`` to ``end`` under one day count (any but ACT/ACT-ICMA)."""
    if code == ACT_360:
        return (end - start) / 360.0
    if code == ACT_365F:
        return (end - start) / 365.0
    if code in (THIRTY_360, THIRTY_E_360):
        return _thirty_360_days(start, end, european=code == THIRTY_E_360) / 360.0
    if code == ACT_ACT_ISDA:
        return _act_act_isda(start, end)
    raise ValueError(f"day count {DAY_COUNTS.canonical[code]} needs the coupon schedule (trinom.conventions.icma)")


def _day_tables() -> dict[str, np.ndarray]:
    """Per day of the date tables (index ``day - dates.DAY0``): ``thirty`` = 30 * month + min(day of month, 30),
    ``raw`` = 30 * month + day of month, ``year``, and the ACT/ACT-ISDA parts ``to_new_year`` (days to the next
    1 January over the year's length) and ``from_new_year`` (days since 1 January over the year's length)."""
    days = np.arange(dt.DAY0, dt.LAST_DAY + 1, dtype=np.int64)
    month = dt.month_index(days)
    day_of_month = days - dt.month_start(month) + 1
    year = month // 12
    new_year = (year - 1970).astype("datetime64[Y]").astype("datetime64[D]").astype(np.int64)
    next_new_year = (year - 1969).astype("datetime64[Y]").astype("datetime64[D]").astype(np.int64)
    length = (next_new_year - new_year).astype(np.float64)
    tables = {"thirty": 30 * month + np.minimum(day_of_month, 30), "raw": 30 * month + day_of_month, "year": year,
              "to_new_year": (next_new_year - days) / length, "from_new_year": (days - new_year) / length}
    for table in tables.values():
        table.setflags(write=False)
    return tables


_DAY = _day_tables()


def _thirty_360_days(start: np.ndarray, end: np.ndarray, *, european: bool) -> np.ndarray:
    """The 30/360 day count: Bond Basis (D1 = 31 counts as 30; D2 = 31 as 30 only where D1 then is 30) or Eurobond
    Basis (both 31sts count as 30): 360 dY + 30 dM + dD = 30 * (difference of absolute months) + dD."""
    first = _DAY["thirty"][start - dt.DAY0]
    if european:
        return _DAY["thirty"][end - dt.DAY0] - first
    raw, thirty = _DAY["raw"][end - dt.DAY0], _DAY["thirty"][end - dt.DAY0]
    return raw - first - ((raw - thirty == 1) & (first % 30 == 0))  # D2 = 31 (raw one above) with D1 at 30


def _act_act_isda(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """ACT/ACT-ISDA: days in each calendar year over its length (366 in leap years); negative if ``end < start``
    (QuantLib's sum: ``y2 - y1 - 1``, plus the first year's part, plus the last year's)."""
    backward = end < start
    if backward.any():
        d1, d2 = np.minimum(start, end), np.maximum(start, end)
        return np.where(backward, -1.0, 1.0) * np.where(d1 == d2, 0.0, _act_act_isda(d1, d2))
    first, last = start - dt.DAY0, end - dt.DAY0
    fraction = (_DAY["year"][last] - _DAY["year"][first] - 1).astype(np.float64)
    fraction += _DAY["to_new_year"][first]
    fraction += _DAY["from_new_year"][last]
    return np.where(start == end, 0.0, fraction)


def fractions_by_code(start: np.ndarray, end: np.ndarray, codes: np.ndarray | int) -> np.ndarray:
    """Year fractions with a day count per element (or one for all), none of them ACT/ACT-ICMA."""
    if np.ndim(codes) == 0:
        return day_count_fractions(start, end, int(codes))
    out = np.empty(start.shape, dtype=np.float64)
    for code in np.unique(codes):
        mine = np.flatnonzero(codes == code)
        out[mine] = day_count_fractions(start[mine], end[mine], int(code))
    return out


def year_fractions(*, start: npt.ArrayLike, end: npt.ArrayLike, day_count: npt.ArrayLike) -> np.ndarray:
    """Year fractions from ``start`` to ``end`` (QuantLib's ``DayCounter::yearFraction``), per row.

    Args:
      start, end: dates (``datetime64``, ``YYYY-MM-DD`` text, ``datetime.date``), one per row.
      day_count: ``ACT/360``, ``ACT/365F``, ``30/360``, ``30E/360`` or ``ACT/ACT-ISDA`` (or an alias), one or one
        per row. ``ACT/ACT-ICMA`` needs a schedule: use :func:`trinom.conventions.accrual_fractions`.

    >>> year_fractions(start=["2023-12-31", "2024-01-31"], end=["2024-07-01", "2024-03-31"],
    ...                day_count=["ACT/ACT-ISDA", "30/360"]).round(12).tolist()
    [0.50000748559, 0.166666666667]
    """
    s, problems = dt.to_days(start, field="start")
    e, more = dt.to_days(end, field="end")
    problems += more
    codes, more = parse_day_counts(day_count)
    problems += more
    if s.size != e.size:
        problems.append((None, "end", f"end: {e.size} dates for {s.size} start dates"))
    if codes.size not in (1, s.size):
        problems.append((None, "day_count", f"day_count: {codes.size} values for {s.size} dates"))
    rows = np.arange(codes.size)
    problems += [(int(r), "day_count", "day_count ACT/ACT-ICMA needs the coupon schedule: use accrual_fractions or "
                  "accrued_interest") for r in rows[codes == ACT_ACT_ICMA]]
    raise_problems(problems)
    if s.size == 0:
        return np.zeros(0)
    try:
        return fractions_by_code(s, e, codes.astype(np.int64) if codes.size > 1 else int(codes[0]))
    except ValueError as err:  # pragma: no cover - ICMA was refused above
        raise InputError([(None, "day_count", str(err))]) from None
