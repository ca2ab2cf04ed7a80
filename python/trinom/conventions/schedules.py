"""Coupon schedules of a whole book, generated backward from maturity as QuantLib 1.44 does, in one pass.

For each bond, ``Schedule(effective, termination, Period(frequency), calendar, convention,
termination_convention, DateGeneration.Backward, end_of_month)``:

1. Dates are rolled back from the termination date by whole tenors (12 / frequency months; the day
   clamped to the month's length, or the month's last day with the end-of-month rule where the
   termination date is a month's last day) while they are on or after the effective date. The effective
   date starts the schedule unless it rolls (``convention``) onto the same day as the earliest rolled date:
   a short front stub, never a long one.
2. The end-of-month rule applies where ``end_of_month`` is set and the termination date is the last
   business day of its month on the calendar: every date strictly inside the schedule moves to its month's
   last calendar day.
3. The first and inner dates are rolled by ``convention``, the last by ``termination_convention``.
4. A schedule that rolls to a single date is bad input (QuantLib: "degenerate single date schedule"; its
   checks that merge periods whose dates rolled across each other cannot fire on longer schedules with
   tenors of a month or more).

The result, :class:`Schedules`, holds all bonds' dates in one flat array with per-bond offsets (CSR): bond
``k``'s dates are ``adjusted[offsets[k]:offsets[k + 1]]`` and its periods
``regular[period_offsets[k]:period_offsets[k + 1]]``. ``unadjusted`` holds the same dates before step 3 (the
end-of-month rule applied), index for index.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ..errors import check_error_mode
from ..ragged import segments
from . import dates as dt
from .business_days import RollTables, parse_conventions, roll_tables, year_range
from .calendars import parse_calendars
from .frequencies import parse_frequencies
from .names import Factorized, Problem, column, raise_problems


@dataclass(frozen=True, eq=False)
class Schedules:
    """The coupon schedules of a book of bonds, flat (CSR), with what generated them.

    Attributes:
      offsets: ``int64`` (bonds + 1): bond ``k``'s dates are ``[offsets[k]:offsets[k + 1]]``.
      unadjusted: ``datetime64[D]``: the dates before business-day rolling (end-of-month rule applied).
      adjusted: ``datetime64[D]``: the schedule's dates (QuantLib's ``Schedule.dates()``).
      regular: ``bool``, one per period (``period_offsets``): QuantLib's ``isRegular`` (a stub is irregular).
      months: per bond, the tenor in months (12 / coupons a year).
      convention, termination_convention: per bond, business-day convention codes (``U`` 0, ``F`` 1, ``MF`` 2,
        ``P`` 3).
      end_of_month: per bond, the end-of-month flag as given.
      calendar: per bond, the index of its calendar in ``calendar_names``.
      problems: the bad rows' ``(row, field, message)`` (``errors="mask"``: their schedules are empty).
    """

    offsets: np.ndarray
    unadjusted: np.ndarray
    adjusted: np.ndarray
    regular: np.ndarray
    months: np.ndarray
    convention: np.ndarray
    termination_convention: np.ndarray
    end_of_month: np.ndarray
    calendar: np.ndarray
    calendar_names: tuple[str, ...]
    problems: tuple[Problem, ...] = ()
    tables: RollTables | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def counts(self) -> np.ndarray:
        """The number of dates of each bond's schedule (0 for a bad row)."""
        return np.diff(self.offsets)

    @property
    def period_offsets(self) -> np.ndarray:
        """Offsets of each bond's periods (one fewer than its dates) in per-period arrays."""
        out = np.zeros(self.offsets.size, dtype=np.int64)
        np.cumsum(np.maximum(self.counts - 1, 0), out=out[1:])
        return out

    @property
    def good(self) -> np.ndarray:
        """Which bonds have a schedule (all of them unless ``errors="mask"`` dropped bad rows)."""
        return self.counts > 0

    def dates(self, bond: int, *, adjusted: bool = True) -> np.ndarray:
        """One bond's dates."""
        source = self.adjusted if adjusted else self.unadjusted
        return source[self.offsets[bond]: self.offsets[bond + 1]]

    def take(self, bonds: npt.ArrayLike) -> Schedules:
        """The schedules of ``bonds`` (indices, in that order) alone, without the book's problems."""
        bonds = np.asarray(bonds, dtype=np.int64).reshape(-1)
        offsets, dates = segments(self.offsets, bonds)
        _period_offsets, periods = segments(self.period_offsets, bonds)
        return replace(self, offsets=offsets, unadjusted=self.unadjusted[dates], adjusted=self.adjusted[dates],
                       regular=self.regular[periods], months=self.months[bonds], convention=self.convention[bonds],
                       termination_convention=self.termination_convention[bonds],
                       end_of_month=self.end_of_month[bonds], calendar=self.calendar[bonds], problems=())

    def period_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Every period's start and end date (adjusted; day numbers), flat in ``period_offsets`` order."""
        days = self.adjusted.view(np.int64)
        counts = self.counts
        is_last = np.zeros(days.size, dtype=bool)
        is_last[self.offsets[1:][counts > 0] - 1] = True
        is_first = np.zeros(days.size, dtype=bool)
        is_first[self.offsets[:-1][counts > 0]] = True
        return days[~is_last], days[~is_first]


def generate_schedules(*, effective: npt.ArrayLike, termination: npt.ArrayLike, frequency: npt.ArrayLike | Factorized,
                       calendar: npt.ArrayLike | Factorized = "NONE", convention: npt.ArrayLike | Factorized = "F",
                       termination_convention: npt.ArrayLike | None = None, end_of_month: npt.ArrayLike = False,
                       errors: str = "raise", rows: npt.ArrayLike | None = None,
                       fields: Mapping[str, str] | None = None) -> Schedules:
    """The coupon schedules of a book of bonds, generated backward from maturity (QuantLib's
    ``DateGeneration.Backward``), all at once.

    Args:
      effective, termination: per bond, the first and last date (unadjusted; issue and maturity), ``effective``
        before ``termination``; ``datetime64``, ``YYYY-MM-DD`` text or ``datetime.date``.
      frequency: coupons a year, 1, 2, 4 or 12 (or ``"annual"``, ``"6M"``, ...), one or one per bond.
      calendar: a calendar name (``NONE``, ``WEEKENDS``, ``TARGET``, ``NYSE``, ``USGOVT``, ``TARGET+NYSE``...).
      convention: the business-day convention of all dates but the last (``U``, ``F``, ``MF``, ``P``).
        ``frequency``, ``calendar`` and ``convention`` may also be :class:`~trinom.conventions.Factorized` columns
        (each distinct name parsed once).
      termination_convention: the last date's (default: ``convention``, as QuantLib's ``MakeSchedule``).
      end_of_month: the end-of-month rule (QuantLib's ``endOfMonth``).
      errors: ``"raise"``: bad input raises :class:`trinom.InputError` naming every bad row and field;
        ``"mask"``: bad rows get empty schedules and their problems are in ``problems``.
      rows: the row number to name for each bond in messages (default 0, 1, ...).
      fields: how to name the arguments in messages (e.g. ``{"termination": "maturity"}``).

    Returns:
      :class:`Schedules`, one per bond in input order.

    >>> s = generate_schedules(effective=["2024-01-15"], termination=["2026-03-31"], frequency=2,
    ...                        calendar="TARGET", convention="MF", end_of_month=True)
    >>> [str(d) for d in s.adjusted], s.regular.tolist()
    (['2024-01-15', '2024-03-28', '2024-09-30', '2025-03-31', '2025-09-30', '2026-03-31'], [False, True, True, True, True])
    """
    check_error_mode(errors)
    name = dict(fields or {})
    label = {f: name.get(f, f) for f in ("effective", "termination", "frequency", "calendar", "convention",
                                         "termination_convention", "end_of_month")}
    parsed: dict[str, tuple[np.ndarray, list[Problem]]] = {
        "effective": dt.to_days(effective, field=label["effective"]),
        "termination": dt.to_days(termination, field=label["termination"]),
        "frequency": parse_frequencies(frequency, field=label["frequency"]),
        "convention": parse_conventions(convention, field=label["convention"]),
        "end_of_month": _flags(end_of_month, label["end_of_month"]),
    }
    parsed["termination_convention"] = parsed["convention"] if termination_convention is None else parse_conventions(
        termination_convention, field=label["termination_convention"])
    cal, calendar_names, more = parse_calendars(calendar, field=label["calendar"])
    parsed["calendar"] = (cal, more)
    sizes = [values.size for values, _p in parsed.values() if values.size != 1]  # one value is for every bond
    count = sizes[0] if sizes else 1
    raise_problems([(None, label[f], f"{label[f]}: {values.size} values for {count} bonds")
                    for f, (values, _p) in parsed.items() if values.size not in (1, count)])
    problems: list[Problem] = []
    bad = np.zeros(count, dtype=bool)
    for f, (values, found) in parsed.items():
        if f == "termination_convention" and termination_convention is None:
            continue
        for row, what, message in found:
            if values.size == 1 and count > 1:  # one value for the whole book: no row to name
                problems.append((None, what, message))
                bad[:] = True
            else:
                problems.append((row, what, message))
                bad[row] = True
    E, T, per_year, conv, eom, tconv, cal = (np.broadcast_to(values, (count,)) for values, _p in parsed.values())
    order_bad = ~bad & (E >= T)
    for k in np.flatnonzero(order_bad):
        problems.append((int(k), label["effective"], f"{label['effective']} {dt.as_dates(E[k:k + 1])[0]} must be "
                         f"before {label['termination']} {dt.as_dates(T[k:k + 1])[0]}"))
    bad |= order_bad
    good = np.flatnonzero(~bad)
    tables = roll_tables(calendar_names or ("NONE",), *year_range(E[good], T[good])) if good.size else None
    if good.size:
        offsets, unadjusted, adjusted, regular, single = _generate(
            E[good], T[good], 12 // per_year[good], eom[good], conv[good].astype(np.int64),
            tconv[good].astype(np.int64), cal[good].astype(np.int64), tables)
    else:
        offsets, unadjusted, adjusted, regular, single = (np.zeros(1, dtype=np.int64), np.zeros(0, np.int64),
                                                          np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, bool))
    for k in np.flatnonzero(single):
        row = int(good[k])
        problems.append((row, label["termination"], f"the schedule from {dt.as_dates(E[row:row + 1])[0]} to "
                         f"{dt.as_dates(T[row:row + 1])[0]} rolls to a single date"))
    if single.any():
        offsets, unadjusted, adjusted, regular = _without(single, offsets, unadjusted, adjusted, regular)
    counts = np.zeros(count, dtype=np.int64)
    counts[good] = np.diff(offsets)
    all_offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(counts, out=all_offsets[1:])
    row_numbers = None if rows is None else np.asarray(rows).reshape(-1)
    if row_numbers is not None:
        problems = [(None if r is None else int(row_numbers[r]), f, m) for r, f, m in problems]
    if errors == "raise":
        raise_problems(problems)
    return Schedules(offsets=all_offsets, unadjusted=dt.as_dates(unadjusted), adjusted=dt.as_dates(adjusted),
                     regular=regular, months=(12 // np.where(per_year > 0, per_year, 12)).astype(np.int64),
                     convention=np.asarray(conv, dtype=np.int8).copy(),
                     termination_convention=np.asarray(tconv, dtype=np.int8).copy(),
                     end_of_month=np.asarray(eom, dtype=bool).copy(), calendar=np.asarray(cal, dtype=np.int32).copy(),
                     calendar_names=calendar_names, problems=tuple(sorted(problems, key=_row_key)), tables=tables)


def _flags(values: npt.ArrayLike, field: str) -> tuple[np.ndarray, list[Problem]]:
    """A column of true/false flags, and one problem per value that is no bool."""
    array = column(values, field)
    if array.dtype == np.bool_:
        return array, []
    cells = array.tolist()
    problems: list[Problem] = [(k, field, f"{field} must be true or false, got {v!r}")
                               for k, v in enumerate(cells) if not isinstance(v, bool)]
    return np.array([v is True for v in cells], dtype=bool), problems


def _row_key(problem: Problem) -> int:
    return -1 if problem[0] is None else problem[0]


def _generate(E: np.ndarray, T: np.ndarray, months: np.ndarray, eom: np.ndarray, conv: np.ndarray, tconv: np.ndarray,
              cal: np.ndarray, tables: RollTables) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The schedules of good bonds: offsets, unadjusted and adjusted day numbers, regular flags, and which bonds
    rolled to a single date (their dates are still in the arrays)."""
    count = T.size
    month_T = dt.month_index(T)
    day_T = T - dt.month_start(month_T) + 1
    rolls_to_month_end = eom & (dt.end_of_month(T) == T)  # QuantLib's advance(..., endOfMonth) from a month's end
    month_E = dt.month_index(E)

    def rolled_date(month: np.ndarray, day_of_termination: np.ndarray, to_month_end: np.ndarray) -> np.ndarray:
        length = dt.days_in_month(month)
        return dt.month_start(month) + np.where(to_month_end, length, np.minimum(day_of_termination, length)) - 1

    # K: how many whole tenors back from the termination date stay on or after the effective date.
    back = (month_T - month_E) // months
    month_K = month_T - back * months
    earliest = rolled_date(month_K, day_T, rolls_to_month_end)
    short = earliest < E
    back -= short
    month_K += short * months
    earliest = np.where(short, rolled_date(month_K, day_T, rolls_to_month_end), earliest)
    stub = tables.roll(earliest, conv, cal) != tables.roll(E, conv, cal)
    counts = back + 1 + stub

    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    firsts, lasts = offsets[:-1], offsets[1:] - 1
    # Date j of a bond (0-based) lies in month month_T - (counts - 1 - j) * months: one multiply-add per date
    # (in place: a book's dates are millions, and fresh arrays cost their pages).
    lead = month_T - (counts - 1) * months - dt.MONTH0 - firsts * months
    index = np.arange(total, dtype=np.int64)
    index *= np.repeat(months, counts)
    index += np.repeat(lead, counts)
    start = dt.MONTH_START[index]
    unadjusted = dt.MONTH_START[1:][index]  # the next month's start: minus start, the month's length
    del index
    unadjusted -= start
    # Inner dates go to the month's end under either end-of-month rule: QuantLib's roll from a month's last day,
    # or its rule (endOfMonth and calendar.isEndOfMonth(termination)) for the dates strictly inside.
    to_month_end = rolls_to_month_end | (eom & tables.is_end_of_month(T, cal))
    np.minimum(unadjusted, np.repeat(np.where(to_month_end, 31, day_T), counts), out=unadjusted)
    unadjusted += start
    unadjusted -= 1
    del start
    unadjusted[firsts] = np.where(stub, E, earliest)
    unadjusted[lasts] = T
    rows = np.repeat(conv * len(tables.names) + cal, counts)
    rows[lasts] = tconv * len(tables.names) + cal
    rows *= tables.size
    rows += unadjusted
    rows -= tables.first_day
    adjusted = tables.rolled[rows]
    del rows
    period_offsets = offsets - np.arange(count + 1)
    regular = np.ones(total - count, dtype=bool)
    # QuantLib 1.44 (PR 2511): the stub is regular where the effective date is one tenor before the earliest
    # rolled date (NullCalendar().advance(earliest, -tenor, convention, endOfMonth)).
    one_back = dt.add_months(earliest, -months)
    one_back = np.where(eom & (dt.end_of_month(earliest) == earliest), dt.end_of_month(one_back), one_back)
    regular[period_offsets[:-1][stub]] = one_back[stub] == E[stub]
    single = counts < 2

    # QuantLib's safety checks drop a next-to-last date rolled onto or past the last one, and a second date
    # rolled onto or before the first. With tenors of a month or more they can only fire on a two-date schedule,
    # which they leave with a single date: the rolled dates are a tenor apart and rolls move a date by days,
    # rolling is monotone, and the stub date is kept only where it rolls apart from the earliest rolled date.
    crossed = ~single & (adjusted[np.maximum(lasts - 1, 0)] >= adjusted[lasts])
    crossed |= ~single & (adjusted[np.minimum(firsts + 1, total - 1)] <= adjusted[firsts])
    if np.any(crossed & (counts > 2)):  # pragma: no cover - see above
        raise AssertionError("a rolled schedule date crossed its neighbour")
    single |= crossed
    return offsets, unadjusted, adjusted, regular, single


def _without(drop: np.ndarray, offsets: np.ndarray, unadjusted: np.ndarray, adjusted: np.ndarray,
             regular: np.ndarray) -> tuple[np.ndarray, ...]:
    """The schedules with bonds ``drop`` emptied (their dates and periods removed, offsets kept per bond)."""
    counts = np.diff(offsets)
    keep = np.repeat(~drop, counts)
    keep_periods = np.repeat(~drop, np.maximum(counts - 1, 0))
    counts = np.where(drop, 0, counts)
    new_offsets = np.zeros_like(offsets)
    np.cumsum(counts, out=new_offsets[1:])
    return new_offsets, unadjusted[keep], adjusted[keep], regular[keep_periods]
