"""Per-trade (basket) Hull-White calibration: each trade's co-terminal European swaptions priced from a volatility
surface, and one ``(a, sigma)`` per trade fitted to them, every trade in one batched Levenberg-Marquardt (issue 26).

**Baskets** (:class:`Baskets`, built by :func:`trade_baskets` from per-trade arrays, or by :func:`book_baskets` (also
named :func:`bond_baskets`) from the swaptions and the callable and puttable bonds of a
:class:`~trinom.instruments.trades.Trades` book): per trade an id, a curve,
its exercise dates, the common end date (the trade's final maturity), the deal's fixed rate, the fixed leg's
frequency and day count, and payer or receiver. Exercise date ``e`` stands for the European swaption exercised on
``e`` into the swap from ``e`` to the end, its fixed leg generated forward from ``e``, unadjusted
(:meth:`~trinom.model.hull_white.Swaptions.on_curve`): the co-terminal swaptions of a Bermudan exercise.

**Quotes.** Each swaption's volatility is the surface's (:class:`~trinom.model.quotes.VolSurface`) at expiry
``(e - as_of) / 365`` and tenor ``(end - e) / 365`` years (bilinear, flat outside the grid), of the curve's kind;
its strike is the forward swap rate (``strike="atm"``) or the deal's rate (``"deal"``), its side the trade's; its
market price is Black's or Bachelier's formula (:mod:`trinom.model.volatility`) times its annuity. Exercise dates
on or before the as-of date are left out (named in the trade's message).

**The fit** is :func:`trinom.model.calibration.calibrate`'s, per trade: minimise ``sum_i e_i^2`` over the trade's
quotes (``error``: ``relative_price``, ``price`` or ``vol``), ``sigma`` always free, ``a`` free (``a=None``), fixed
for all (a number) or per trade (an array; NaN: free), by :func:`~trinom.model.calibration.levenberg_marquardt`
with all trades as one batch (masks for baskets of different sizes) and the analytic Jacobian.

**Statuses** per trade, each with a message; nothing fails silently:

* ``converged``: every quote is repriced within the solver's tolerance where the fit is exact (``sigma`` alone to
  one quote: 1e-12 of the volatility), and the residuals are reported otherwise;
* ``bound``: converged with a parameter at its bound (``a`` at its floor: the quotes ask for a mean reversion at or
  below zero);
* ``no fit``: no quote (no exercise date after the as-of date, an unknown curve, no volatility matrix for the
  curve, no positive market price, a trade without an option), a model price that is not finite, or no convergence
  in ``max_iterations``; ``a`` and ``sigma`` are NaN and the message says why.

**Scenarios** (a risk run's recalibration: the same baskets on moved curves and volatilities).
:func:`prepare_baskets` does once what no scenario moves: the quotes, their fixed legs' dates and accrual
fractions (one schedule per trade whose exercise dates lie on it, each quote's leg a tail of it, exactly the leg
generated from its own date; the other quotes' legs on their own), expiries, tenors and the surface's
volatilities; what of it depends on the baskets alone is kept with them for the next preparation, and a book's
baskets with the book (:func:`book_baskets`). Quotes that are alike (the same curve, exercise, leg, side and, for
``strike="deal"``, rate: in a book, the same co-terminal swaptions of many trades) are priced once per scenario:
:meth:`PreparedBaskets.quotes` prices them on a scenario's curves (discount factors once per date of the legs,
forward swap rates, annuities, strikes, market prices: the same numbers as quote by quote).
:func:`calibrate_prepared` fits many scenarios in batched calls, each trade from a start of its own (``x0``: a warm
start, such as its fit in the base scenario), a Futhark target taking what the scenarios share once and per
scenario only its distinct quotes' market data and its discount factors
(:func:`~trinom.model.calibration_kernel.levenberg_marquardt_scenarios`); :func:`calibrate_scenarios` returns the
trades' fits alone (no per-quote outcome); :func:`calibrate_baskets` takes prepared baskets too.

A basket of **one quote with** ``a`` **free** cannot determine both parameters: ``a`` is held at its guess
(``a_guess``) and ``sigma`` fitted, exactly; the status is ``converged`` and the message says ``a`` was held.

>>> from trinom.model import DatedCurve
>>> from trinom.model.quotes import VolQuotes
>>> curve = DatedCurve(as_of="2025-01-02", dates=["2045-01-02"], zero_rates=[0.03], name="EUR")
>>> vols = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "1Y", "5Y", "5Y"], tenor=["2Y", "10Y", "2Y", "10Y"],
...                               vol=[0.0095, 0.0085, 0.0080, 0.0075], kind="normal")
>>> baskets = trade_baskets(id=["T1", "T2"], curve="EUR", exercise=[["2026-01-02", "2027-01-04"], ["2028-01-03"]],
...                         end=["2031-01-02", "2033-01-03"], rate=[0.03, 0.035], frequency=1, day_count="30/360",
...                         side=["receiver", "payer"])
>>> fit = calibrate_baskets(curves=curve, vols=vols, as_of="2025-01-02", baskets=baskets, a=0.03)
>>> fit.status.tolist(), fit.sigma.round(6).tolist(), fit.rmse.round(6).tolist()
(['converged', 'converged'], [0.009542, 0.009226], [0.000107, 0.0])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..conventions.dates import as_dates, to_days
from ..conventions.day_counts import ACT_ACT_ICMA, DAY_COUNTS, parse_day_counts
from ..conventions.frequencies import parse_frequencies
from ..conventions.names import Problem
from ..errors import InputError
from .calibration import CONVERGED, DEFAULT_BOUNDS, ERRORS, MAX_ITERATIONS, NOT_FINITE, bound_hits, levenberg_marquardt
from .dated_curve import DAYS_PER_YEAR
from .hull_white import ROOTS, Swaptions
from .periods import fixed_leg
from .quotes import VolQuotes, VolSurface, resolve_curves
from .volatility import (
    bachelier_implied_vol,
    bachelier_price,
    bachelier_vega,
    black_implied_vol,
    black_price,
    black_vega,
)

#: How a basket's swaptions are struck.
STRIKES: Final[tuple[str, ...]] = ("atm", "deal")
#: A quote whose market price is its intrinsic value within this fraction has no volatility to fit: left out.
_NO_TIME_VALUE: Final[float] = 1e-12
#: A solver outcome of this module: converged on a flat objective (no quote's price moves).
_FLAT: Final[int] = 4
#: Spellings of a trade's side.
SIDES: Final[dict[str, bool]] = {"payer": True, "pay": True, "p": True, "receiver": False, "receive": False,
                                 "rec": False, "r": False}


@dataclass(frozen=True, eq=False)
class Baskets:
    """Per trade its co-terminal European swaptions (see the module's documentation); build with
    :func:`trade_baskets` or :func:`book_baskets`.

    Attributes:
      id, curve: text per trade (``curve`` empty: the only curve).
      offsets, exercise: trade ``k``'s exercise dates are ``exercise[offsets[k]:offsets[k + 1]]`` (ascending,
        ``datetime64[D]``).
      end: ``datetime64[D]`` per trade; rate: the deal's fixed rate (NaN: none); frequency: fixed-leg periods a
        year; day_count: canonical names; payer: ``True`` for a payer swaption.
      note: per trade, why it has no exercise date (``""`` otherwise): its message where it has no fit.
      where: per trade, where it came from (``trades.csv line 3``), for messages.
    """

    id: np.ndarray
    curve: np.ndarray
    offsets: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    rate: np.ndarray
    frequency: np.ndarray
    day_count: np.ndarray
    payer: np.ndarray
    note: np.ndarray
    where: tuple[str, ...]
    #: What is derived from the baskets alone, kept with them (:func:`_quote_structure`).
    _memo: dict[Any, Any] = dataclass_field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.id.size)

    @property
    def counts(self) -> np.ndarray:
        """Exercise dates per trade."""
        return np.diff(self.offsets)

    def exercise_dates(self, trade: int) -> np.ndarray:
        """One trade's exercise dates."""
        return self.exercise[self.offsets[trade]:self.offsets[trade + 1]]

    def to_frame(self) -> Any:
        """One row per (trade, exercise date): ``id, curve, exercise, end, rate, frequency, day_count, payer``."""
        import pandas as pd

        owner = np.repeat(np.arange(len(self)), self.counts)
        return pd.DataFrame({"id": self.id[owner], "curve": self.curve[owner], "exercise": self.exercise,
                             "end": self.end[owner], "rate": self.rate[owner], "frequency": self.frequency[owner],
                             "day_count": self.day_count[owner], "payer": self.payer[owner]})


def _per_trade(values: Any, n: int, field: str) -> np.ndarray:
    array = np.asarray(values, dtype=object).reshape(-1)
    if array.size == 1 and n != 1:
        array = np.full(n, array[0], dtype=object)
    if array.size != n:
        raise InputError([(None, field, f"{field} has {array.size} values, expected one per trade ({n})")])
    return array


def trade_baskets(*, id: Sequence[Any] | np.ndarray, curve: Any = "", exercise: Sequence[Sequence[Any]],
                  end: Any, rate: Any = None, frequency: Any = 1, day_count: Any = "30/360", side: Any = "payer",
                  note: Any = None, where: Sequence[str] | None = None) -> Baskets:
    """Baskets from per-trade values (one value for all trades, or one per trade).

    Args:
      id: the trades' ids (distinct).
      curve: each trade's curve name (empty: the only curve).
      exercise: per trade, its exercise dates (a sequence of ``YYYY-MM-DD`` text, ``datetime64`` or
        ``datetime.date``; empty: no option), each before ``end``; sorted here, none twice.
      end: the common end date (the final maturity).
      rate: the deal's fixed rate as a decimal (needed for ``strike="deal"``; None or NaN: none).
      frequency: fixed-leg periods a year (1, 2, 4, 12 or a name); day_count: the fixed leg's (ACT/ACT-ICMA: the
        leg's own periods as reference periods, :func:`~trinom.model.periods.fixed_leg`).
      side: ``payer`` or ``receiver`` (``True``: payer); a callable bond's call is a receiver swaption, a
        puttable bond's put a payer.
      note: per trade, why it has no exercise date (shown where it has no fit).
      where: per trade, where it came from, for messages.

    Every bad value is reported at once, as an :class:`~trinom.InputError` naming the trade's row and field.

    >>> b = trade_baskets(id=["A"], exercise=[["2027-06-15", "2026-06-15"]], end="2030-06-15", side="receiver")
    >>> [str(d) for d in b.exercise_dates(0)], b.payer.tolist(), b.day_count.tolist()
    (['2026-06-15', '2027-06-15'], [False], ['30/360'])
    """
    ids = [str(v) for v in np.asarray(id, dtype=object).reshape(-1).tolist()]
    n = len(ids)
    places = list(where) if where is not None else [f"trade {k} ({ids[k]!r})" for k in range(n)]
    if len(places) != n:
        raise InputError([(None, "where", f"where has {len(places)} entries for {n} trades")])
    problems: list[Problem] = []

    def bad(row: int, field: str, message: str) -> None:
        problems.append((row, field, f"{places[row]}: {message}"))

    seen: dict[str, int] = {}
    for k, value in enumerate(ids):
        if value in seen:
            bad(k, "id", f"id {value!r} is already trade {seen[value]}'s")
        seen.setdefault(value, k)
    curves = ["" if c is None or (isinstance(c, float) and np.isnan(c)) else str(c).strip()
              for c in _per_trade(curve, n, "curve").tolist()]
    lists = list(exercise)
    if len(lists) != n:
        raise InputError([(None, "exercise", f"exercise has {len(lists)} lists of dates, expected one per trade ({n})")])
    counts = np.array([len(dates) for dates in lists], dtype=np.int64)
    owner = np.repeat(np.arange(n), counts)
    if all(isinstance(dates, np.ndarray) and dates.dtype.kind == "M" for dates in lists):  # dates as dates: no parsing
        given = np.concatenate(lists) if lists else np.zeros(0, dtype="datetime64[D]")
    else:
        flat = [d for dates in lists for d in dates]
        given = np.array(flat, dtype=object) if flat else np.zeros(0, dtype=object)
    days, found = to_days(given, field="exercise")
    for row, field, message in found:
        bad(int(owner[row]), field, message)
    end_days, found = to_days(_per_trade(end, n, "end"), field="end")
    for row, field, message in found:
        bad(int(row), field, message)
    rates = np.full(n, np.nan)
    for k, value in enumerate(_per_trade(rate, n, "rate").tolist()):
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        try:
            rates[k] = float(value)
        except (TypeError, ValueError):
            bad(k, "rate", f"rate {value!r} is not a number")
            continue
        if np.isinf(rates[k]):
            bad(k, "rate", f"rate must be finite, got {value!r}")
    per_year, found = parse_frequencies(_per_trade(frequency, n, "frequency"))
    for row, field, message in found:
        bad(int(row), field, message)
    codes, found = parse_day_counts(_per_trade(day_count, n, "day_count"))
    for row, field, message in found:
        bad(int(row), field, message)
    payer = np.zeros(n, dtype=bool)
    for k, value in enumerate(_per_trade(side, n, "side").tolist()):
        if isinstance(value, (bool, np.bool_)):
            payer[k] = bool(value)
        elif isinstance(value, str) and value.strip().lower() in SIDES:
            payer[k] = SIDES[value.strip().lower()]
        else:
            bad(k, "side", f"side must be payer or receiver, got {value!r}")
    notes = ["" if v is None else str(v) for v in _per_trade(note, n, "note").tolist()]
    # per trade: sorted, distinct, before the end
    order = np.lexsort((days, owner))
    days = days[order]
    bad_dates = {row for row, field, _m in problems if field in ("exercise", "end")}
    offsets = np.concatenate([[0], np.cumsum(counts)])
    twice = np.flatnonzero((np.diff(days) == 0) & (owner[1:] == owner[:-1]))  # the first of two equal dates
    late = days >= end_days[owner]
    for k in sorted((set(owner[twice].tolist()) | set(owner[late].tolist())) - bad_dates):  # in order, as reported
        mine = days[offsets[k]:offsets[k + 1]]
        for j in np.flatnonzero(np.diff(mine) == 0):
            bad(k, "exercise", f"exercise date {as_dates(mine[j:j + 1])[0]} is given twice")
        after = mine[mine >= end_days[k]]
        if after.size:
            bad(k, "exercise", f"exercise date {as_dates(after[:1])[0]} is not before the end "
                f"{as_dates(end_days[k:k + 1])[0]}")
    if problems:
        raise InputError(sorted(problems, key=lambda p: p[0]))
    return Baskets(id=np.array(ids, dtype=object), curve=np.array(curves, dtype=object), offsets=offsets,
                   exercise=as_dates(days).copy(), end=as_dates(end_days).copy(), rate=rates,
                   frequency=per_year.astype(np.int64), day_count=np.array([DAY_COUNTS.canonical[c] for c in codes],
                                                                           dtype=object),
                   payer=payer, note=np.array(notes, dtype=object), where=tuple(places))


#: The ``a`` and ``sigma`` a book is checked with while its baskets are built: its own cells are the calibration's
#: to find (empty, or anything), so they are not checked.
_CHECK_A: Final[float] = 0.05
_CHECK_SIGMA: Final[float] = 0.01
#: Why a row of these types has no basket.
_NO_BASKET: Final[dict[str, str]] = {
    "bond_option": "a bond option (on a zero-coupon bond) has no swaption basket: not calibrated per trade",
    "cap": "a cap is calibrated to a cap strip, one (a, sigma) per curve (trinom calibrate without a trades file, "
           "the curve's cap quotes), not per trade to swaptions: no basket",
    "floor": "a floor is calibrated to a cap strip, one (a, sigma) per curve (trinom calibrate without a trades "
             "file, the curve's cap quotes), not per trade to swaptions: no basket",
}


def book_baskets(trades: Any, curve_names: Sequence[str] | None = None) -> Baskets:
    """The baskets of a :class:`~trinom.instruments.trades.Trades` book: one per trade, in the book's order.

    * A **swaption** (:mod:`trinom.instruments.swaption`): its exercise dates are exactly the tree's, found by the
      lowering's own :func:`~trinom.instruments.swaption.fixed_leg_periods`: the start dates of the fixed leg's
      periods (its schedule generated backward from maturity, adjusted) from ``first_exercise`` to ``last_exercise``
      (``european``: the one on ``first_exercise``, default the start). The end is the swap's maturity, the strike
      its fixed rate, the leg its fixed leg's frequency and day count, the side the trade's (a payer swaption's
      basket is of payer swaptions). A window without a fixed-leg start date is a note (``no fit``).
    * A **bond with a call or put**: ``european``: ``first_exercise``; ``bermudan``: the coupon dates (its schedule's
      adjusted period ends) from ``first_exercise`` to ``last_exercise`` (the dates the tree exercises on);
      ``american``: ``first_exercise`` and the coupon dates after it up to ``last_exercise`` (one swaption a coupon
      period: the co-terminal basket of a continuous window). A bond with ``schedule.csv`` rows (the book's
      ``schedule``) takes its listed dates instead: ``european`` and ``bermudan`` exactly those, ``american`` those
      and the coupon dates from the first to ``last_exercise`` (default the maturity). Dates on or after maturity
      (no swap left) are dropped, with a note. The end is the maturity, the strike the coupon, the fixed leg the
      bond's frequency and day count; a call is a receiver swaption (the issuer's right to stop paying the coupon),
      a put a payer. Amortization (``notionals.csv``) and exercise prices do not move the basket.
    * Any other row (a cap or floor: calibrated to a cap strip per curve; a bond option; a bond without an option)
      has an empty basket and a note saying why (its status ``no fit``).

    Exercise dates on or before the as-of date stay in the basket: :func:`calibrate_baskets` leaves them out, as the
    tree does, and names them in the trade's message. The book's bad cells (``a`` and ``sigma`` aside: the
    calibration finds them) are an :class:`~trinom.InputError` naming the file, line and field. The baskets are
    built once per book and curves and kept with the book (:meth:`~trinom.instruments.trades.Trades.derived`).
    """
    names = None if curve_names is None else tuple(curve_names)
    return trades.derived(("baskets", names), lambda: _book_baskets(trades, names))


def _book_baskets(trades: Any, curve_names: Sequence[str] | None) -> Baskets:
    """:func:`book_baskets`, built."""
    checked = trades.with_columns(a=_CHECK_A, sigma=_CHECK_SIGMA)
    problems = checked.problems(curve_names)
    if problems:
        raise InputError(problems)
    n = len(trades)
    column = trades.column
    kind = _lowered(column("type"))
    option = _lowered(column("option"))
    notes = np.full(n, "", dtype=object)
    for name, why in _NO_BASKET.items():
        notes[kind == name] = why
    notes[(kind == "bond") & (option == "")] = "a bond without a call or put: nothing to calibrate"
    exercise: list[np.ndarray] = [_NO_DATES] * n
    end = np.full(n, np.datetime64(trades.as_of + 1, "D"), dtype="datetime64[D]")
    rate = np.full(n, np.nan)
    frequency = np.ones(n, dtype=np.int64)
    day_count = np.full(n, "30/360", dtype=object)
    side = np.where(option == "put", "payer", "receiver").astype(object)
    legs = (exercise, end, rate, frequency, day_count, side, notes)
    bonds = np.flatnonzero((kind == "bond") & (option != ""))
    if bonds.size:
        _bond_legs(trades, bonds, legs)
    _swaption_legs(checked, curve_names, legs)
    places = [_where(trades, k).rstrip(": ") or f"trade {k}" for k in range(n)]
    return trade_baskets(id=trades.ids, curve=["" if v is None else str(v) for v in column("curve").tolist()],
                         exercise=exercise, end=end, rate=rate, frequency=frequency, day_count=day_count, side=side,
                         note=notes, where=places)


#: The name this function had while it covered bonds only (kept: the same function).
bond_baskets = book_baskets

#: Per trade: its exercise dates, end, fixed rate, frequency, day count, side and note (filled in place).
_Legs = tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: No exercise dates.
_NO_DATES: Final[np.ndarray] = np.zeros(0, dtype="datetime64[D]")


def _bond_legs(trades: Any, rows: np.ndarray, legs: _Legs) -> None:
    """The baskets of the bonds ``rows`` (each with a call or put) into ``legs``."""
    from ..conventions import generate_schedules
    from ..instruments.trades import BOND_DEFAULTS

    exercise, end, rate, frequency, day_count, _side, notes = legs
    column = trades.column

    def cells(name: str, default: str | None = None) -> np.ndarray:
        values = column(name)[rows]
        if default is not None:
            values = np.array([default if v is None else v for v in values.tolist()], dtype=object)
        return values

    def dates(name: str) -> tuple[np.ndarray, np.ndarray]:
        values = cells(name)
        given = np.array([v is not None for v in values.tolist()], dtype=bool)
        days = np.zeros(rows.size, dtype=np.int64)
        if given.any():
            days[given] = to_days(np.array([_date_text(v) for v in values[given].tolist()], dtype=object),
                                  field=name)[0]
        return days, given

    maturity = dates("maturity")[0]
    first, _has_first = dates("first_exercise")
    last, has_last = dates("last_exercise")
    per_year = parse_frequencies(cells("frequency"))[0]
    schedules = generate_schedules(effective=as_dates(dates("issue")[0]), termination=as_dates(maturity),
                                   frequency=per_year, calendar=cells("calendar", BOND_DEFAULTS["calendar"]),
                                   convention=cells("convention", BOND_DEFAULTS["convention"]), errors="mask",
                                   rows=rows, fields={"effective": "issue", "termination": "maturity"})
    if schedules.problems:
        raise InputError([(row, field, f"{_where(trades, row)}{message}") for row, field, message
                          in schedules.problems])
    kinds = _lowered(cells("exercise"))
    listed = _listed_dates(trades)
    scheduled = np.array([int(row) in listed for row in rows.tolist()], dtype=bool)
    for k in np.flatnonzero(scheduled):  # the window a schedule spans (american: to last_exercise or maturity)
        days = listed[int(rows[k])]
        first[k] = days[0]
        last[k] = (last[k] if has_last[k] else maturity[k]) if kinds[k] == "american" else days[-1]
    last = np.where(kinds == "european", first, last)
    coupon_end = schedules.period_bounds()[1]
    owner = np.repeat(np.arange(rows.size), np.maximum(schedules.counts - 1, 0))
    on_coupons = (kinds == "american") | ((kinds == "bermudan") & ~scheduled)
    inside = (coupon_end >= first[owner]) & (coupon_end <= last[owner]) & on_coupons[owner]
    picked: list[set[int]] = [set() for _ in range(rows.size)]
    for k, day in zip(owner[inside].tolist(), coupon_end[inside].tolist(), strict=True):
        picked[k].add(day)
    for k, row in enumerate(rows.tolist()):
        days = picked[k]
        if scheduled[k]:
            days |= {int(d) for d in listed[row]}
        elif kinds[k] in ("european", "american"):
            days.add(int(first[k]))
        kept = sorted(d for d in days if d < maturity[k])
        if len(kept) < len(days):
            notes[row] = "an exercise on the maturity date (no swap left) is left out"
        if not kept:
            notes[row] = "no exercise date before maturity: nothing to calibrate"
        exercise[row] = as_dates(np.array(kept, dtype=np.int64))
    end[rows] = as_dates(maturity)
    rate[rows] = np.array([float(v) for v in cells("coupon").tolist()])
    frequency[rows] = per_year
    day_count[rows] = cells("day_count", BOND_DEFAULTS["day_count"])


def _swaption_legs(checked: Any, curve_names: Sequence[str] | None, legs: _Legs) -> None:
    """The baskets of the book's swaptions into ``legs``: their exercise dates are the lowering's own
    (:func:`~trinom.instruments.swaption.fixed_leg_periods`) on the rows the book checked (``checked``, its
    problems found and none left)."""
    from ..instruments.swaption import fixed_leg_periods

    specs = _checked_swaptions(checked, curve_names)
    if specs.rows.size == 0:
        return
    exercise, end, rate, frequency, day_count, side, notes = legs
    periods = fixed_leg_periods(specs)
    if periods.schedules.problems:
        raise InputError([(row, field, f"{_where(checked, row)}{message}") for row, field, message
                          in periods.schedules.problems])
    counts = np.bincount(periods.owner[periods.in_window], minlength=specs.rows.size)
    starts = periods.begin[periods.in_window]  # swaption by swaption, ascending
    for k, (row, days) in enumerate(zip(specs.rows.tolist(), np.split(starts, np.cumsum(counts)[:-1]), strict=True)):
        exercise[row] = as_dates(days)
        if not days.size:
            notes[row] = (f"no fixed-leg start date between first_exercise {_day(specs.first_exercise[k])} and "
                          f"last_exercise {_day(specs.last_exercise[k])}: a swaption is exercised on the start dates "
                          "of its fixed leg's periods")
    rows = specs.rows
    end[rows] = as_dates(specs.maturity)
    rate[rows] = specs.rate
    frequency[rows] = specs.frequency
    day_count[rows] = specs.day_count
    side[rows] = np.where(specs.payer, "payer", "receiver")


def _checked_swaptions(checked: Any, curve_names: Sequence[str] | None) -> Any:
    """The swaption rows of a book whose :meth:`~trinom.instruments.trades.Trades.problems` found none, as the
    lowering takes them (:class:`~trinom.instruments.swaption.SwaptionSpecs`): the book keeps the specs its check
    built (:func:`~trinom.instruments.rate_trades.check_rate_rows`), every swaption row among them."""
    from ..instruments.swaption import SwaptionSpecs

    key = ("rate", None if curve_names is None else tuple(curve_names))
    rate = checked._memo.get(key)
    specs = getattr(rate, "swaptions", None)
    if not isinstance(specs, SwaptionSpecs) or specs.rows.size != rate.swaption_rows.size:
        raise RuntimeError("the trades book did not keep its checked swaption rows (Trades.problems first)")
    return specs


def _listed_dates(trades: Any) -> dict[int, np.ndarray]:
    """Per trade row with ``schedule.csv`` rows, its listed exercise dates (day numbers, ascending), as the book read
    and checked them."""
    rows = trades._side_rows("schedule")[0]
    if rows.row.size == 0:
        return {}
    starts = np.flatnonzero(np.concatenate([[True], rows.row[1:] != rows.row[:-1]]))
    return {int(rows.row[s]): np.asarray(days, dtype=np.int64)
            for s, days in zip(starts.tolist(), np.split(rows.day, starts[1:]), strict=True)}


def _lowered(values: np.ndarray) -> np.ndarray:
    """Text cells stripped and in lower case (``""`` where empty)."""
    return np.array(["" if v is None else str(v).strip().lower() for v in values.tolist()], dtype=object)


def _day(day: int | np.integer) -> str:
    return str(np.datetime64(int(day), "D"))


def _where(trades: Any, row: int) -> str:
    """``trades.csv line 3: `` for a book read from a file (its rows' places), else ``""``."""
    places = getattr(trades, "_where", None)
    return f"{places[row]}: " if places else ""


def _date_text(value: object) -> object:
    if hasattr(value, "isoformat") and not isinstance(value, str):
        return value.isoformat()[:10]
    return str(value).strip()


# --- the calibration -------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class BasketCalibration:
    """A per-trade calibration's outcome.

    Per trade (in the baskets' order): ``id, curve, a, sigma`` (NaN where there is no fit), ``a_fixed``,
    ``status`` (``converged``, ``bound``, ``no fit``), ``message``, ``rmse`` (the root mean square of the quotes'
    ``model_vol - market_vol``, in the surface's kind: rate units for normal), ``iterations``, ``quote_count``.

    Per quote (trade by trade, exercise dates ascending): ``trade`` (the trade's index), ``exercise``, ``end``
    (dates), ``expiry``, ``tenor`` (years: the surface's coordinates), ``strike``, ``forward``, ``annuity``,
    ``payer``, ``kind``, ``shift``, ``market_vol``, ``market_price``, ``model_price`` (per unit notional),
    ``model_vol`` (the model price's implied volatility of the quote's kind), ``residual`` (``model_vol -
    market_vol``), ``price_residual`` (``model_price - market_price``), ``error`` (the objective's ``e_i``).
    """

    id: np.ndarray
    curve: np.ndarray
    a: np.ndarray
    sigma: np.ndarray
    a_fixed: np.ndarray
    status: np.ndarray
    message: np.ndarray
    rmse: np.ndarray
    iterations: np.ndarray
    quote_count: np.ndarray
    error_type: str
    trade: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    strike: np.ndarray
    forward: np.ndarray
    annuity: np.ndarray
    payer: np.ndarray
    kind: np.ndarray
    shift: np.ndarray
    market_vol: np.ndarray
    market_price: np.ndarray
    model_price: np.ndarray
    model_vol: np.ndarray
    residual: np.ndarray
    price_residual: np.ndarray
    error: np.ndarray

    def __len__(self) -> int:
        return int(self.id.size)

    @property
    def ok(self) -> bool:
        """Whether every trade converged."""
        return bool((self.status == "converged").all())

    def parameters(self) -> dict[str, tuple[float, float]]:
        """``{id: (a, sigma)}`` of the trades with a fit."""
        return {str(i): (float(a), float(s)) for i, a, s, status in zip(self.id, self.a, self.sigma, self.status,
                                                                         strict=True) if status != "no fit"}

    def trades_frame(self) -> Any:
        """One row per trade: ``id, a, sigma, status, message, curve, rmse, quotes, iterations, a_fixed``."""
        import pandas as pd

        return pd.DataFrame({"id": self.id, "a": self.a, "sigma": self.sigma, "status": self.status,
                             "message": self.message, "curve": self.curve, "rmse": self.rmse,
                             "quotes": self.quote_count, "iterations": self.iterations, "a_fixed": self.a_fixed})

    def quotes_frame(self) -> Any:
        """One row per quote: ``id, curve, exercise, end, expiry, tenor, strike, forward, payer, kind, shift,
        market_vol, market_price, model_price, model_vol, residual, price_residual, error``."""
        import pandas as pd

        return pd.DataFrame({"id": self.id[self.trade], "curve": self.curve[self.trade], "exercise": self.exercise,
                             "end": self.end, "expiry": self.expiry, "tenor": self.tenor, "strike": self.strike,
                             "forward": self.forward, "payer": self.payer, "kind": self.kind, "shift": self.shift,
                             "market_vol": self.market_vol, "market_price": self.market_price,
                             "model_price": self.model_price, "model_vol": self.model_vol, "residual": self.residual,
                             "price_residual": self.price_residual, "error": self.error})


# --- preparation: what every scenario shares --------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _CurveLegs:
    """The fixed legs of one curve's quotes as per-trade tables of flows that a trade's quotes share.

    A trade's table starts with the schedule generated forward from its first quoted exercise date to its end
    (:func:`~trinom.model.periods.fixed_leg`); a quote whose exercise date lies on that schedule, on the same day of
    the month, has as its leg the schedule's periods from its exercise date on: the very leg that generating forward
    from that date gives (its dates are the schedule's, and so are its accrual fractions). Any other quote's leg (an
    exercise date off the schedule, or an ACT/ACT-ICMA leg of one period, whose reference period differs) is
    generated on its own and appended to its trade's table.

    Attributes:
      name: the curve; rows: its quotes (indices into the prepared quotes, trade by trade).
      trades: its trades (indices), in order; local: per quote of ``rows``, its trade's row of the tables.
      time, accrual: ``(trades, f)``: each flow's payment date in ACT/365F years from the as-of date (padding: the
        trade's end) and accrual fraction (padding: 0).
      schedule: per trade, how many of its flows are its schedule's (the rest: quotes' own legs, then padding).
      dates: the distinct dates of the tables' flows and of the quotes' exercises, in ACT/365F years (ascending);
        at: ``(trades, f)``: each flow's date as an index into ``dates``; start_at: per quote of ``rows``, its
        exercise date's index. A scenario's discount factors are taken once per date (``dates``) and looked up.
    """

    name: str
    rows: np.ndarray
    trades: np.ndarray
    local: np.ndarray
    time: np.ndarray
    accrual: np.ndarray
    schedule: np.ndarray
    dates: np.ndarray
    at: np.ndarray
    start_at: np.ndarray


@dataclass(frozen=True, eq=False)
class PreparedBaskets:
    """The part of a per-trade calibration that no scenario moves (:func:`prepare_baskets`): the baskets' quotes,
    their fixed legs' dates and accrual fractions, their expiries and tenors and the surface's volatilities at them.
    :meth:`quotes` prices them on curves (discount factors, forward swap rates, annuities, strikes and market prices);
    :func:`calibrate_baskets` and :func:`calibrate_prepared` take it in place of :class:`Baskets`.

    Attributes:
      baskets, as_of, surface, strike: as given; curve_names: the curves the trades may name.
      curve: per trade, its curve (a trade naming none: the only curve); usable: per trade, whether that curve is
        among ``curve_names`` and has volatilities; notes: per trade, what its message says before any pricing.
      trade, exercise, end, expiry, tenor, payer, kind, shift, market_vol: per quote (each exercise date after the
        as-of date of a usable trade, trade by trade): as :class:`BasketCalibration` names them (``market_vol``: the
        surface's, before any move).
      exercise_time: per quote, ``expiry`` in the curves' ACT/365F years; first, count: its fixed leg is ``count``
        flows of its trade's table (:class:`_CurveLegs`) from ``first``.
      legs: per curve with quotes, its tables.
      structure: what of this depends on the baskets alone (:class:`_QuoteStructure`, shared by every preparation of
        the same baskets on the same date and curves).
    """

    baskets: Baskets
    as_of: np.datetime64
    surface: VolSurface
    strike: str
    curve_names: tuple[str, ...]
    curve: np.ndarray
    usable: np.ndarray
    notes: tuple[str, ...]
    trade: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    payer: np.ndarray
    kind: np.ndarray
    shift: np.ndarray
    market_vol: np.ndarray
    exercise_time: np.ndarray
    first: np.ndarray
    count: np.ndarray
    kinds: dict[str, str]
    legs: tuple[_CurveLegs, ...]
    structure: _QuoteStructure

    def __len__(self) -> int:
        return len(self.baskets)

    def quotes(self, curves: Any, vol_shift: float = 0.0, *, quantlib_forward: bool = False) -> _QuoteSet:
        """The quotes priced on ``curves`` (``{name: DatedCurve}`` or one curve, as of :attr:`as_of`, every name of
        :attr:`curve_names` among them) with every volatility moved by ``vol_shift``: discount factors once per
        date of the trades' tables, then per quote its annuity, forward swap rate, strike and market price
        (``quantlib_forward``: also the curve's forward rate at each expiry, for ``root="quantlib"``), each worked
        out once for the quotes that are alike (:meth:`_priced`)."""
        return self._quote_set(self._priced(curves, vol_shift, quantlib_forward=quantlib_forward), vol_shift)

    @property
    def _plan(self) -> _QuotePlan:
        """The distinct quotes and tables of flows (:func:`_quote_plan`)."""
        return self.structure.plan

    @cached_property
    def _distinct_market(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per distinct quote its volatility (before any move), its curve's shift, and whether it is normal."""
        first = self._plan.first
        return self.market_vol[first], self.shift[first], self.kind[first] == "normal"

    def _priced(self, curves: Any, vol_shift: float = 0.0, *, quantlib_forward: bool = False) -> _Priced:
        """The distinct quotes (:class:`_QuotePlan`) priced on ``curves``, volatilities moved by ``vol_shift``: each
        curve's discount factors at its dates, then per distinct quote what :meth:`quotes` gives per quote (the same
        arithmetic on the same numbers: the same values)."""
        table = _checked_curves(curves, self.as_of, self.curve_names)
        plan = self._plan
        v = plan.first.size
        discount_start = np.empty(v)
        annuity = np.empty(v)
        last = np.empty(v)
        forward_exercise = np.zeros(v)
        discounts = []
        for legs, part in zip(self.legs, plan.curves, strict=True):
            curve = table[legs.name]
            df = curve.discount(legs.dates)
            discounts.append(df)
            d = part.quotes
            discount_start[d] = df[part.start_at]
            if quantlib_forward:
                from .hull_white import quantlib_forward_rate

                forward_exercise[d] = quantlib_forward_rate(curve.discount, plan.exercise_time[d])
            annuity[d] = _leg_sums(part.schedule, part.table, plan.leg_first[d], plan.leg_count[d],
                                   part.accrual * df[part.at])
            last[d] = df[part.last_at]
        with np.errstate(divide="ignore", invalid="ignore"):
            forward = (discount_start - last) / annuity
        strike = forward if self.strike == "atm" else plan.rate
        vol, shift, normal = self._distinct_market
        market_vol = vol + vol_shift if vol_shift else vol
        market_price = _formula_prices(normal, forward=forward, strike=strike, expiry=plan.exercise_time,
                                       annuity=annuity, vol=market_vol, shift=shift, payer=plan.payer)
        return _Priced(discounts=tuple(discounts), discount_start=discount_start, annuity=annuity, forward=forward,
                       strike=np.array(strike, dtype=np.float64), market_vol=market_vol, market_price=market_price,
                       forward_exercise=forward_exercise)

    def _quote_set(self, priced: _Priced, vol_shift: float) -> _QuoteSet:
        """Every quote's market data from the distinct quotes' (:meth:`_priced`)."""
        of = self._plan.of
        return _QuoteSet(trade=self.trade, exercise=self.exercise, end=self.end, expiry=self.expiry, tenor=self.tenor,
                         strike=priced.strike[of], forward=priced.forward[of], annuity=priced.annuity[of],
                         payer=self.payer, kind=self.kind, shift=self.shift,
                         market_vol=self.market_vol + vol_shift if vol_shift else self.market_vol,
                         market_price=priced.market_price[of], kinds=self.kinds, exercise_time=self.exercise_time,
                         discount_start=priced.discount_start[of], first=self.first, count=self.count, legs=self.legs,
                         curve_discounts=priced.discounts, forward_exercise=priced.forward_exercise[of])

    @cached_property
    def _kernel_layout(self) -> _KernelLayout:
        """The slots and tables every scenario's call of the kernel shares (:class:`_KernelLayout`; built per
        preparation, not kept with the baskets: it is as large as the quotes and quick to build)."""
        return _KernelLayout.of(self.structure)

    def _distinct_quote_set(self, priced: _Priced) -> _QuoteSet:
        """The distinct quotes (:class:`_QuotePlan`) as a quote set of their own, each distinct table of flows a
        trade: what :meth:`_QuoteSet.matching_sigma` takes, with one ``a`` for all, once per distinct quote."""
        plan = self._plan
        first = plan.first
        trade = np.zeros(first.size, dtype=np.int64)
        legs = []
        tables = 0
        for legs_c, part in zip(self.legs, plan.curves, strict=True):
            size = part.rows.size
            trade[part.quotes] = tables + part.table
            legs.append(_CurveLegs(name=legs_c.name, rows=part.quotes, trades=tables + np.arange(size),
                                   local=part.table, time=legs_c.time[part.rows], accrual=part.accrual,
                                   schedule=part.schedule, dates=legs_c.dates, at=part.at, start_at=part.start_at))
            tables += size
        shift = self._distinct_market[1]
        return _QuoteSet(trade=trade, exercise=self.exercise[first], end=self.end[first], expiry=self.expiry[first],
                         tenor=self.tenor[first], strike=priced.strike, forward=priced.forward, annuity=priced.annuity,
                         payer=plan.payer, kind=self.kind[first], shift=shift, market_vol=priced.market_vol,
                         market_price=priced.market_price, kinds=self.kinds, exercise_time=plan.exercise_time,
                         discount_start=priced.discount_start, first=plan.leg_first, count=plan.leg_count,
                         legs=tuple(legs), curve_discounts=priced.discounts, forward_exercise=priced.forward_exercise)

    @cached_property
    def _trade_kinds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per trade its curve's volatility kind (``""``: no usable curve) and that kind's unit in messages."""
        unit = {"normal": " (normal, rate units)", "lognormal": " (lognormal)"}
        kinds = np.array([self.kinds.get(c, "") if ok else "" for c, ok in
                          zip(self.curve.tolist(), self.usable.tolist(), strict=True)], dtype=object)
        return np.array([unit.get(k, "") for k in kinds.tolist()], dtype=object), kinds


@dataclass(frozen=True, eq=False)
class _CurvePlan:
    """One curve's part of a :class:`_QuotePlan`: its distinct tables of flows (trades whose tables are equal share
    one) and its distinct quotes' places in them.

    Attributes:
      rows: per distinct table, the first of the curve's trades' tables that has it (a row of :class:`_CurveLegs`).
      accrual, at, schedule: per distinct table, as :class:`_CurveLegs` has them per trade.
      quotes: the distinct quotes on the curve (indices into the plan's arrays); table: per one of them, its
        trade's distinct table; start_at, last_at: the indices into the curve's dates of its exercise and of its
        leg's last payment.
    """

    rows: np.ndarray
    accrual: np.ndarray
    at: np.ndarray
    schedule: np.ndarray
    quotes: np.ndarray
    table: np.ndarray
    start_at: np.ndarray
    last_at: np.ndarray


@dataclass(frozen=True, eq=False)
class _QuotePlan:
    """The prepared quotes that are alike, priced once in each scenario: two quotes are alike where their curve,
    exercise, end, side, deal rate (``strike="deal"``) and leg (the same flows: equal tables of their trades, the
    same first flow and count) are, so that every number a scenario gives them is the same (their volatility too: it
    is the curve's at their expiry and tenor).

    Attributes:
      of: per quote, its distinct quote; first: per distinct quote, the first quote that it stands for.
      group, exercise_time, payer, rate (the deal's), leg_first, leg_count: per distinct quote, its first quote's
        (``group``: its curve's number among the prepared legs).
      curves: per curve of the prepared legs, its :class:`_CurvePlan`.
    """

    of: np.ndarray
    first: np.ndarray
    group: np.ndarray
    exercise_time: np.ndarray
    payer: np.ndarray
    rate: np.ndarray
    leg_first: np.ndarray
    leg_count: np.ndarray
    curves: tuple[_CurvePlan, ...]


def _quote_plan(structure: _QuoteStructure) -> _QuotePlan:
    """The distinct tables of flows per curve and the distinct quotes of ``structure`` (see :class:`_QuotePlan`)."""
    nq = structure.trade.size
    payer = structure.baskets.payer[structure.trade]
    rate = structure.baskets.rate[structure.trade]
    keys = np.zeros((nq, 8 if structure.strike == "deal" else 7), dtype=np.int64)
    keys[:, 2] = structure.first
    keys[:, 3] = structure.count
    keys[:, 4] = structure.end.astype(np.int64)
    keys[:, 5] = payer
    if structure.strike == "deal":
        keys[:, 7] = rate.view(np.int64)
    tables = []
    for number, legs in enumerate(structure.legs):
        table_keys = np.concatenate([legs.at.astype(np.int64), legs.accrual.view(np.int64), legs.schedule[:, None]],
                                    axis=1)
        first, table_of = _distinct_rows(table_keys)
        tables.append((first, table_of))
        keys[legs.rows, 0] = number
        keys[legs.rows, 1] = table_of[legs.local]
        keys[legs.rows, 6] = legs.start_at
    first, of = _distinct_rows(keys)
    group = keys[first, 0]
    curves = []
    position = np.empty(nq, dtype=np.int64)
    for number, (legs, (rows, table_of)) in enumerate(zip(structure.legs, tables, strict=True)):
        mine = np.flatnonzero(group == number)
        q = first[mine]  # a quote of each distinct quote on the curve, among legs.rows
        position[legs.rows] = np.arange(legs.rows.size)
        table = table_of[legs.local[position[q]]]
        at = legs.at[rows]
        curves.append(_CurvePlan(rows=rows, accrual=legs.accrual[rows], at=at, schedule=legs.schedule[rows],
                                 quotes=mine, table=table, start_at=legs.start_at[position[q]],
                                 last_at=at[table, structure.first[q] + structure.count[q] - 1]))
    return _QuotePlan(of=of, first=first, group=group, exercise_time=structure.exercise_time[first],
                      payer=payer[first], rate=rate[first], leg_first=structure.first[first],
                      leg_count=structure.count[first], curves=tuple(curves))


def _distinct_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``keys`` (``(N, K)`` int64): per distinct row the first row that has it (ascending), and
    per row its distinct row's number. Rows are grouped by a hash of their values and then compared in full, so
    that two rows share a number only where they are equal."""
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    weights = np.random.default_rng(26).integers(1, 2**63, size=keys.shape[1], dtype=np.uint64) | np.uint64(1)
    hashed = (np.ascontiguousarray(keys).view(np.uint64) * weights).sum(axis=1, dtype=np.uint64)  # mod 2**64
    _values, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(keys, keys[first[inverse]]):  # two rows of one hash: the exact (slower) way
        _rows, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")  # numbered by first appearance
    number = np.empty(order.size, dtype=np.int64)
    number[order] = np.arange(order.size)
    return first[order].astype(np.int64), number[inverse]


@dataclass(frozen=True, eq=False)
class _Priced:
    """One scenario's prices of a :class:`_QuotePlan`'s distinct quotes: per curve its discount factors at its dates
    (:attr:`_CurveLegs.dates`), and per distinct quote ``P(0, T)``, annuity, forward swap rate, strike, volatility,
    market price and (``root="quantlib"``) the curve's forward rate at the expiry."""

    discounts: tuple[np.ndarray, ...]
    discount_start: np.ndarray
    annuity: np.ndarray
    forward: np.ndarray
    strike: np.ndarray
    market_vol: np.ndarray
    market_price: np.ndarray
    forward_exercise: np.ndarray


def _leg_sums(schedule: np.ndarray, local: np.ndarray, first: np.ndarray, count: np.ndarray,
              values: np.ndarray) -> np.ndarray:
    """Per quote (its row ``local`` of the tables, its leg ``count`` flows from ``first``), the sum of ``values``
    (``(tables, f)``; ``schedule``: per table, how many of its flows are its schedule's) over its leg's flows: a
    tail of its table's schedule from the reverse cumulative sums of the schedules, a leg of its own as one
    segment."""
    out = np.empty(first.size)
    columns = np.arange(values.shape[1])[None, :]
    own = first >= schedule[local]
    if (~own).any():
        tails = np.cumsum(np.where(columns < schedule[:, None], values, 0.0)[:, ::-1], axis=1)[:, ::-1]
        out[~own] = tails[local[~own], first[~own]]
    if own.any():
        start = local[own] * values.shape[1] + first[own]
        bounds = np.stack([start, start + count[own]], axis=1).reshape(-1)
        flat = np.concatenate([values.reshape(-1), [0.0]])
        out[own] = np.add.reduceat(flat, bounds)[::2]
    return out


def _curve_names(curves: Any) -> tuple[str, ...]:
    """The names of ``curves``: a mapping's keys, one DatedCurve's name, or a sequence of names."""
    if isinstance(curves, (list, tuple)) and all(isinstance(c, str) for c in curves):
        return tuple(curves)
    return tuple(resolve_curves(curves))


def _checked_curves(curves: Any, today: np.datetime64, names: Sequence[str]) -> dict[str, Any]:
    """``curves`` as ``{name: DatedCurve}``, each as of ``today`` and every one of ``names`` among them."""
    table = resolve_curves(curves)
    wrong = [(None, "as_of", f"curve {name!r} is as of {c.as_of}, not {today}") for name, c in table.items()
             if c.as_of != today]
    wrong += [(None, "curves", f"curve {name!r} (named when the baskets were prepared) is not among the curves "
               f"({', '.join(map(repr, table)) or 'none'})") for name in names if name not in table]
    if wrong:
        raise InputError(wrong)
    return table


def prepare_baskets(baskets: Baskets, vols: VolSurface | VolQuotes | str | Path | Any, as_of: object, *,
                    curves: Any, strike: str = "atm") -> PreparedBaskets:
    """What a per-trade calibration of ``baskets`` needs before any curve: the quotes (each exercise date after
    ``as_of`` of a trade whose curve is known and has volatilities), their fixed legs' dates and accruals (one
    schedule per trade where its exercise dates lie on it, :class:`_CurveLegs`), expiries, tenors and volatilities,
    and each trade's notes. Scenarios that move the curves and the volatilities share it:
    :meth:`PreparedBaskets.quotes` prices it on each scenario's curves, :func:`calibrate_prepared` fits them all.

    Args:
      baskets: :class:`Baskets`.
      vols: a :class:`~trinom.model.quotes.VolSurface` or the quotes it is built from.
      as_of: the valuation date.
      curves: the curves the trades name: their names, or ``{name: DatedCurve}`` / one DatedCurve (only the names are
        taken here; a trade naming no curve takes the only one).
      strike: ``atm`` or ``deal``, as :func:`calibrate_baskets`.

    An :class:`~trinom.InputError` for bad input, as :func:`calibrate_baskets`. What depends on the baskets alone
    (the quotes, their legs, :class:`_QuoteStructure`) is kept with them and reused by the next preparation of the
    same baskets on the same date and curves.
    """
    if strike not in STRIKES:
        raise InputError([(None, "strike", f"strike must be one of {', '.join(STRIKES)}, got {strike!r}")])
    day, problems = to_days([as_of], field="as_of")
    if problems:
        raise InputError([(None, "as_of", f"the as-of date {as_of!r} is not a date (YYYY-MM-DD)")])
    today = as_dates(day)[0]
    surface = vols if isinstance(vols, VolSurface) else VolSurface.from_quotes(vols, as_of=today)
    if surface.as_of != today:
        raise InputError([(None, "vols", f"the volatility surface is as of {surface.as_of}, not {today}")])
    names = _curve_names(curves)
    curve = np.array([c if c or len(names) != 1 else names[0] for c in baskets.curve.tolist()], dtype=object)
    messages = [str(v) for v in baskets.note.tolist()]
    distinct = dict.fromkeys(curve.tolist())
    known_of = {c: c in names for c in distinct}
    vols_of = {c: surface.has(c) for c in distinct}
    known = np.array([known_of[c] for c in curve.tolist()], dtype=bool)
    has_vols = np.array([vols_of[c] for c in curve.tolist()], dtype=bool)
    for k in np.flatnonzero(~known):
        messages[k] = (f"curve {curve[k]!r} is not among the curves ({', '.join(map(repr, names)) or 'none'})"
                       if curve[k] else f"the trade names no curve and there are {len(names)} ({', '.join(names)})")
    for k in np.flatnonzero(known & ~has_vols):
        messages[k] = (f"no volatility matrix for curve {curve[k]!r} (the vols have "
                       f"{', '.join(map(repr, surface.curve_names))})")
    if strike == "deal":
        missing = np.flatnonzero(np.isnan(baskets.rate) & (baskets.counts > 0))
        if missing.size:
            raise InputError([(int(k), "rate", f"{baskets.where[k]}: strike='deal' needs the deal's fixed rate")
                              for k in missing])
    # the quotes (every exercise date after the as-of date, on a known curve with volatilities) and their legs
    usable = known & has_vols
    structure = _quote_structure(baskets, today, names, strike, curve, usable)
    past_count, some = structure.past_count, structure.some
    for k in np.flatnonzero(~some & usable & (baskets.counts > 0) & (past_count == baskets.counts)):
        messages[k] = f"no exercise date after the as-of date {today} ({past_count[k]} on or before it)"
    for k in np.flatnonzero(~some & usable & (baskets.counts == 0) & ~np.array([bool(m) for m in messages],
                                                                                 dtype=bool)):
        messages[k] = "no exercise date: nothing to calibrate"
    # the market: per distinct quote (its curve, expiry and tenor) its kind, shift and volatility
    plan = structure.plan
    v = plan.first.size
    kind_of = np.empty(v, dtype=object)
    shift_of = np.zeros(v)
    vol_of = np.zeros(v)
    kinds: dict[str, str] = {}
    for number, legs in enumerate(structure.legs):
        name = legs.name
        mine = np.flatnonzero(plan.group == number)
        grid = surface.grids[name] if name in surface.grids else surface.grids[next(iter(surface.grids))]
        kinds[name] = surface.kind(name)
        kind_of[mine] = kinds[name]
        shift_of[mine] = surface.shift(name)
        vol_of[mine] = grid.lookup(structure.expiry[plan.first[mine]], structure.tenor[plan.first[mine]])
    trade, of = structure.trade, plan.of
    return PreparedBaskets(baskets=baskets, as_of=today, surface=surface, strike=strike, curve_names=names,
                           curve=curve, usable=usable, notes=tuple(messages), trade=trade,
                           exercise=structure.exercise, end=structure.end, expiry=structure.expiry,
                           tenor=structure.tenor, payer=baskets.payer[trade], kind=kind_of[of], shift=shift_of[of],
                           market_vol=vol_of[of], exercise_time=structure.exercise_time, first=structure.first,
                           count=structure.count, kinds=kinds, legs=structure.legs, structure=structure)


@dataclass(frozen=True, eq=False)
class _QuoteStructure:
    """What prepared baskets take from the baskets alone (their exercise dates and legs, the as-of date, the curves'
    names, the strike and which trades have a usable curve): the quotes, their expiries and tenors, their legs as
    per-curve tables of flows (:class:`_CurveLegs`), and, built when first asked for, the distinct quotes
    (:class:`_QuotePlan`). :func:`_quote_structure` keeps it with the baskets: preparing them again (other
    volatilities, another risk run) reuses it.

    Attributes:
      baskets, strike: as prepared; curves: the curves with quotes, in the order of their first quote.
      trade, exercise, end, exercise_time, expiry, tenor, first, count: per quote, as :class:`PreparedBaskets`.
      legs: per curve of ``curves``, its tables; past_count: per trade, its exercise dates on or before the as-of
        date; some: per trade, whether it has a quote.
    """

    baskets: Baskets
    strike: str
    curves: tuple[str, ...]
    trade: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    exercise_time: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    first: np.ndarray
    count: np.ndarray
    legs: tuple[_CurveLegs, ...]
    past_count: np.ndarray
    some: np.ndarray

    @cached_property
    def plan(self) -> _QuotePlan:
        """The distinct quotes and tables of flows (:func:`_quote_plan`)."""
        return _quote_plan(self)


#: Structures kept per baskets (the latest): a book is prepared on one date, set of curves and strike.
_KEPT_STRUCTURES: Final[int] = 1


def _quote_structure(baskets: Baskets, today: np.datetime64, names: tuple[str, ...], strike: str, curve: np.ndarray,
                     usable: np.ndarray) -> _QuoteStructure:
    """The :class:`_QuoteStructure` of ``baskets`` as of ``today`` on the curves ``names`` (``curve``: each trade's,
    ``usable``: whether it is known and has volatilities), built once and kept with the baskets."""
    key = (int(today.astype(np.int64)), names, strike, usable.tobytes())
    memo = baskets._memo
    if key not in memo:
        while len(memo) >= _KEPT_STRUCTURES:  # the oldest goes
            del memo[next(iter(memo))]
        memo[key] = _build_structure(baskets, today, strike, curve, usable)
    return memo[key]


def _build_structure(baskets: Baskets, today: np.datetime64, strike: str, curve: np.ndarray,
                     usable: np.ndarray) -> _QuoteStructure:
    """The quotes of ``baskets`` and their legs (see :class:`_QuoteStructure`, :class:`_CurveLegs`)."""
    from ..conventions.dates import day_of_month, month_index

    n = len(baskets)
    owner_all = np.repeat(np.arange(n), baskets.counts)
    past = baskets.exercise <= today
    take = ~past & usable[owner_all]
    past_count = np.bincount(owner_all[past], minlength=n)
    some = np.bincount(owner_all[take], minlength=n) > 0
    trade = owner_all[take]
    exercise = baskets.exercise[take]
    end = baskets.end[trade]
    nq = trade.size
    today_day = int(today.astype(np.int64))
    exercise_days = exercise.astype(np.int64)
    end_days = end.astype(np.int64)
    exercise_time = (exercise_days - today_day) / DAYS_PER_YEAR
    expiry = (exercise - today).astype(np.int64) / 365.0
    tenor = (end - exercise).astype(np.int64) / 365.0
    first = np.zeros(nq, dtype=np.int64)
    count = np.zeros(nq, dtype=np.int64)
    legs: list[_CurveLegs] = []
    # the curves with quotes, in the order of their first quote; each quote's curve as a number
    quoted = np.flatnonzero(np.bincount(trade, minlength=n) > 0)
    groups = {name: k for k, name in enumerate(dict.fromkeys(curve[quoted].tolist()))}
    group_of_trade = np.full(n, -1, dtype=np.int64)
    group_of_trade[quoted] = [groups[c] for c in curve[quoted].tolist()]
    group = group_of_trade[trade]
    codes = parse_day_counts(baskets.day_count)[0].astype(np.int64)
    months_of = 12 // baskets.frequency
    for name, number in groups.items():
        rows = np.flatnonzero(group == number)
        owner = trade[rows]
        e = exercise_days[rows]
        begins = np.concatenate([[True], owner[1:] != owner[:-1]])
        local = np.cumsum(begins) - 1
        trades = owner[begins]
        anchor = e[begins][local]
        months = months_of[owner]
        moved = month_index(e) - month_index(anchor)
        on = (moved % months == 0) & (day_of_month(e) == day_of_month(anchor))
        # each trade's schedule from its first quoted exercise date
        schedule = _distinct_legs(anchor[begins], end_days[rows][begins], baskets.frequency[trades], codes[trades])
        periods = schedule.count
        offset = np.where(on, moved // months, 0)
        length = periods[local] - offset
        # an ACT/ACT-ICMA leg of one period takes another reference period than the schedule's last: its own leg
        on &= ~((codes[owner] == ACT_ACT_ICMA) & (length == 1) & (offset > 0)) & (length >= 1)
        own = np.flatnonzero(~on)
        extra = np.zeros(trades.size, dtype=np.int64)
        if own.size:
            leg = _distinct_legs(e[own], end_days[rows][own], baskets.frequency[owner[own]], codes[owner[own]])
            np.add.at(extra, local[own], leg.count)
            before = np.cumsum(leg.count) - leg.count  # each own leg's place after its trade's schedule
            group_start = np.concatenate([[True], local[own][1:] != local[own][:-1]])
            base = np.maximum.accumulate(np.where(group_start, before, 0))
            offset[own] = periods[local[own]] + before - base
            length[own] = leg.count
        width = int((periods + extra).max())
        pay = np.repeat(end_days[rows][begins][:, None], width, axis=1)
        accrual = np.zeros((trades.size, width))
        columns = np.arange(schedule.pay_days.shape[1])[None, :]
        inside = columns < periods[:, None]
        pay[:, :inside.shape[1]][inside] = schedule.pay_days[inside]
        accrual[:, :inside.shape[1]][inside] = schedule.accrual[inside]
        if own.size:
            live = np.arange(leg.pay_days.shape[1])[None, :] < leg.count[:, None]
            at_row = np.broadcast_to(local[own][:, None], live.shape)[live]
            at_column = (offset[own][:, None] + np.arange(leg.pay_days.shape[1])[None, :])[live]
            pay[at_row, at_column] = leg.pay_days[live]
            accrual[at_row, at_column] = leg.accrual[live]
        first[rows] = offset
        count[rows] = length
        # the distinct dates of the flows and exercises (whole days: a table of days present), each flow's index
        lowest = int(min(pay.min(), e.min()))
        present = np.zeros(int(max(pay.max(), e.max())) - lowest + 1, dtype=bool)
        present[pay.reshape(-1) - lowest] = True
        present[e - lowest] = True
        index = np.cumsum(present) - 1
        legs.append(_CurveLegs(name=name, rows=rows, trades=trades, local=local,
                               time=(pay - today_day) / DAYS_PER_YEAR, accrual=accrual, schedule=periods,
                               dates=(np.flatnonzero(present) + lowest - today_day) / DAYS_PER_YEAR,
                               at=index[pay - lowest], start_at=index[e - lowest]))
    return _QuoteStructure(baskets=baskets, strike=strike, curves=tuple(groups), trade=trade, exercise=exercise, end=end,
                           exercise_time=exercise_time, expiry=expiry, tenor=tenor, first=first, count=count,
                           legs=tuple(legs), past_count=past_count, some=some)


def _distinct_legs(start: np.ndarray, end: np.ndarray, frequency: np.ndarray, codes: np.ndarray) -> Any:
    """:func:`~trinom.model.periods.fixed_leg` of each (start, end, frequency, day count code), generated once per
    distinct one (its rows are its legs': a leg is a function of these alone, and the legs are padded to the
    longest, which the distinct ones have)."""
    from .periods import FixedLeg

    keys = np.stack([start, end, frequency, codes], axis=1).astype(np.int64)
    first, of = _distinct_rows(keys)
    legs = fixed_leg(start=start[first], end=end[first], frequency=frequency[first],
                     day_count=[DAY_COUNTS.canonical[c] for c in codes[first].tolist()])
    return FixedLeg(start_days=legs.start_days[of], pay_days=legs.pay_days[of], accrual=legs.accrual[of],
                    count=legs.count[of])


def calibrate_baskets(*, curves: Any, vols: VolSurface | VolQuotes | str | Path | Any = None, as_of: object = None,
                      baskets: Baskets | PreparedBaskets, a: float | npt.ArrayLike | None = None,
                      strike: str | None = None, error: str = "relative_price",
                      bounds: Mapping[str, tuple[float, float]] | None = None, a_guess: float = 0.05,
                      sigma_guess: float | None = None, max_iterations: int = 500, tolerance: float = 1e-12,
                      root: str = "exact", backend: str = "numpy", x0: npt.ArrayLike | None = None,
                      vol_shift: float = 0.0) -> BasketCalibration:
    """Fit one Hull-White ``(a, sigma)`` per trade to its basket's swaptions, all trades at once (see the module's
    documentation).

    Args:
      curves: ``{name: DatedCurve}`` or one :class:`~trinom.model.DatedCurve`, as of ``as_of``.
      vols: a :class:`~trinom.model.quotes.VolSurface`, or quotes it is built from (:class:`VolQuotes`, a
        ``vols.csv`` / Parquet path, a DataFrame); not needed with prepared baskets.
      as_of: the valuation date (prepared baskets: theirs).
      baskets: :class:`Baskets` (:func:`trade_baskets`, :func:`bond_baskets`), or :class:`PreparedBaskets`
        (:func:`prepare_baskets`: the same fit, its state-independent part done once for many calls).
      a: ``None``: free; a number: fixed for every trade; an array: per trade (NaN: free).
      strike: ``atm`` (default; each swaption's forward swap rate) or ``deal`` (the trade's rate); prepared baskets
        have theirs.
      error: ``relative_price`` (default), ``price`` or ``vol``, as :func:`~trinom.model.calibration.calibrate`.
      bounds, a_guess, sigma_guess, max_iterations, tolerance: as :func:`~trinom.model.calibration.calibrate`
        (``sigma_guess`` default: per trade, the median over its quotes of the ``sigma`` that gives each quote's
        normal volatility to first order at ``a``; ``max_iterations`` 500: a few baskets among thousands fit
        ``a`` along a narrow valley, in up to about 300 steps; only they take them).
      root: the Jamshidian root while fitting: ``exact`` (default, a smooth objective) or ``quantlib``.
      backend: where the solver runs: ``numpy`` (default: :func:`~trinom.model.calibration.levenberg_marquardt`),
        a Futhark target (``c``, ``multicore``, ``cuda``, ``opencl``: the same solver in fut/calibrate.fut,
        :mod:`trinom.model.calibration_kernel`, for ``error="relative_price"`` or ``"price"`` with
        ``root="exact"``: the same statuses, sigma with ``a`` fixed to about 1e-10 relative, and with ``a`` free
        the same cost to 1e-10, the parameters apart only along a flat valley in ``a`` where NumPy's own result
        moves as much with its rounding), or ``auto``: ``cuda`` where built and a GPU is here, else ``multicore``
        where built, else (and for ``error="vol"`` or ``root="quantlib"``) NumPy. The quotes, statuses and
        messages are NumPy's on every backend; a Futhark target also returns the model prices at the fit and
        whether any quote's price moves there (a flat objective: ``no fit``), to the last digits NumPy's agree.
      x0: ``(trades, 2)``: per trade a start ``(a, sigma)`` (a warm start, such as another scenario's fit; NaN:
        the default start); ``a`` starts there only where it is free and fitted.
      vol_shift: every quoted volatility moved by this much (in the surface's units) before the fit.

    Returns:
      :class:`BasketCalibration`; raises :class:`~trinom.InputError` only for bad input (never for a trade that
      does not fit), :class:`~trinom.engines.BackendUnavailable` where a Futhark target is not built or usable.
    """
    _check_options(error, root, backend)
    if isinstance(baskets, PreparedBaskets):
        prepared = baskets
        if strike is not None and strike != prepared.strike:
            raise InputError([(None, "strike", f"the baskets were prepared with strike={prepared.strike!r}, not "
                               f"{strike!r}")])
        if as_of is not None:
            day, problems = to_days([as_of], field="as_of")
            if problems or as_dates(day)[0] != prepared.as_of:
                raise InputError([(None, "as_of", f"the baskets were prepared as of {prepared.as_of}, not {as_of}")])
    else:
        if strike is not None and strike not in STRIKES:
            raise InputError([(None, "strike", f"strike must be one of {', '.join(STRIKES)}, got {strike!r}")])
        if vols is None:
            raise InputError([(None, "vols", "give the volatilities (vols=)")])
        prepared = prepare_baskets(baskets, vols, as_of, curves=curves, strike=strike or "atm")
    return calibrate_prepared(prepared, [(curves, vol_shift)], x0=None if x0 is None else [x0], a=a, error=error,
                              bounds=bounds, a_guess=a_guess, sigma_guess=sigma_guess, max_iterations=max_iterations,
                              tolerance=tolerance, root=root, backend=backend)[0]


def _check_options(error: str, root: str, backend: str) -> str:
    """The options' errors as :func:`calibrate_baskets` raises them; returns where the solver runs (``numpy`` or a
    Futhark target)."""
    from .calibration_kernel import TARGETS as KERNEL_TARGETS
    from .calibration_kernel import auto_target

    for name, value, choices in (("error", error, ERRORS), ("root", root, ROOTS),
                                 ("backend", backend, ("numpy", "auto", *KERNEL_TARGETS))):
        if value not in choices:
            raise InputError([(None, name, f"{name} must be one of {', '.join(choices)}, got {value!r}")])
    if backend in KERNEL_TARGETS and (error == "vol" or root != "exact"):
        raise InputError([(None, "backend", f"backend {backend!r} fits error='relative_price' or 'price' with "
                           f"root='exact' (got error={error!r}, root={root!r}); use backend='numpy'")])
    if backend == "auto":
        return (auto_target() if error != "vol" and root == "exact" else None) or "numpy"
    if backend in KERNEL_TARGETS:
        from ..engines import BackendUnavailable
        from .calibration_kernel import available

        usable, why = available(backend)
        if not usable:
            raise BackendUnavailable(f"calibration backend {backend!r}: {why}")
    return backend


#: Cells per call of the kernel (per scenario its trades' outcomes, starts and bounds, and its distinct quotes' and
#: dates' market data): scenarios beyond it are fitted in further calls, so that what a call holds stays a few
#: hundred megabytes.
_KERNEL_CELLS: Final[int] = 20_000_000
#: The kernel's values per trade before its model prices (calibration_kernel's fixed columns).
_OUTCOME_COLUMNS: Final[int] = 11


@dataclass(frozen=True)
class _Options:
    """A per-trade calibration's options, checked (:func:`_options`): where the solver runs (``engine``), the bounds
    (``limits``), per trade the given ``a`` (NaN: free) and per scenario the start (None: the default)."""

    engine: str
    error: str
    root: str
    limits: dict[str, tuple[float, float]]
    a_given: np.ndarray
    starts: list[np.ndarray | None]
    a_guess: float
    sigma_guess: float | None
    max_iterations: int
    tolerance: float


def _options(prepared: PreparedBaskets, states: int, *, x0: Any, a: Any, error: str,
             bounds: Mapping[str, tuple[float, float]] | None, a_guess: float, sigma_guess: float | None,
             max_iterations: int, tolerance: float, root: str, backend: str) -> _Options:
    """The arguments of :func:`calibrate_prepared`, checked: an :class:`~trinom.InputError` for bad ones."""
    engine = _check_options(error, root, backend)
    limits = dict(DEFAULT_BOUNDS)
    limits.update(bounds or {})
    problems = [(None, name, f"bounds[{name!r}] must be 0 < lo <= hi, got {limits[name]}") for name in ("a", "sigma")
                if not (0 < limits[name][0] <= limits[name][1])]
    problems += [(None, name, f"unknown bound {name!r} (a, sigma)") for name in limits if name not in ("a", "sigma")]
    if problems:
        raise InputError(problems)
    baskets = prepared.baskets
    n = len(baskets)
    a_given = np.full(n, np.nan)
    if a is not None:
        a_given = np.broadcast_to(np.asarray(a, dtype=np.float64), (n,)).copy() if np.ndim(a) == 0 else \
            np.asarray(a, dtype=np.float64).reshape(-1)
        if a_given.size != n:
            raise InputError([(None, "a", f"a has {a_given.size} values, expected one per trade ({n})")])
        bad = np.flatnonzero(~np.isnan(a_given) & ~(np.isfinite(a_given) & (a_given > 0)))
        if bad.size:
            raise InputError([(int(k), "a", f"{baskets.where[k]}: a must be a finite number > 0 (NaN: free), got "
                               f"{a_given[k]}") for k in bad])
    return _Options(engine=engine, error=error, root=root, limits=limits, a_given=a_given,
                    starts=_starts(x0, states, n), a_guess=float(a_guess), sigma_guess=sigma_guess,
                    max_iterations=max_iterations, tolerance=tolerance)


def calibrate_prepared(prepared: PreparedBaskets, states: Sequence[tuple[Any, float]], *,
                       x0: Sequence[npt.ArrayLike | None] | npt.ArrayLike | None = None,
                       a: float | npt.ArrayLike | None = None, error: str = "relative_price",
                       bounds: Mapping[str, tuple[float, float]] | None = None, a_guess: float = 0.05,
                       sigma_guess: float | None = None, max_iterations: int = 500, tolerance: float = 1e-12,
                       root: str = "exact", backend: str = "numpy", details: bool = True) -> list[BasketCalibration]:
    """:func:`calibrate_baskets` of prepared baskets in several scenarios at once: ``states`` is a sequence of
    ``(curves, vol_shift)``, each fitted as :func:`calibrate_baskets` fits it, on a Futhark target in batched calls
    of the kernel (every scenario's trades together, what the scenarios share passed once). ``x0``: one
    ``(trades, 2)`` start for every scenario, or one per scenario (None: the default start). ``details=False`` leaves
    out what a refit in many scenarios does not read: the per-quote model volatilities, vol residuals and rmse (NaN),
    and the messages of trades with a fit (their notes). The other arguments are :func:`calibrate_baskets`'s; one
    :class:`BasketCalibration` per scenario (:func:`calibrate_scenarios`: the trades' fits alone)."""
    options = _options(prepared, len(states), x0=x0, a=a, error=error, bounds=bounds, a_guess=a_guess,
                       sigma_guess=sigma_guess, max_iterations=max_iterations, tolerance=tolerance, root=root,
                       backend=backend)
    return [fit for fit in _scenario_fits(prepared, states, options, details=details, quotes=True)
            if isinstance(fit, BasketCalibration)]


@dataclass(frozen=True, eq=False)
class ScenarioFits:
    """:func:`calibrate_scenarios`' outcome: per scenario (rows) and trade (columns, in the baskets' order) ``a`` and
    ``sigma`` (NaN where there is no fit), ``status`` (``converged``, ``bound``, ``no fit``), ``message`` (a trade
    with a fit: its basket's notes; without: why), ``iterations``, and ``fitted`` (the status is not ``no fit``):
    what :func:`calibrate_prepared` with ``details=False`` says of the trades; ``id`` per trade."""

    id: np.ndarray
    a: np.ndarray
    sigma: np.ndarray
    status: np.ndarray
    message: np.ndarray
    iterations: np.ndarray
    fitted: np.ndarray

    def __len__(self) -> int:
        return int(self.a.shape[0])


def calibrate_scenarios(prepared: PreparedBaskets, states: Sequence[tuple[Any, float]], *,
                        x0: Sequence[npt.ArrayLike | None] | npt.ArrayLike | None = None,
                        a: float | npt.ArrayLike | None = None, error: str = "relative_price",
                        bounds: Mapping[str, tuple[float, float]] | None = None, a_guess: float = 0.05,
                        sigma_guess: float | None = None, max_iterations: int = 500, tolerance: float = 1e-12,
                        root: str = "exact", backend: str = "numpy") -> ScenarioFits:
    """:func:`calibrate_prepared` (``details=False``) of many scenarios, the trades' fits alone (a risk run's
    recalibration: :class:`ScenarioFits`): the same ``a``, ``sigma``, statuses and messages, without the per-quote
    market data and model prices, so that a scenario costs its distinct quotes' prices (quotes that are alike,
    :class:`_QuotePlan`, priced once), the solver and its trades' statuses."""
    options = _options(prepared, len(states), x0=x0, a=a, error=error, bounds=bounds, a_guess=a_guess,
                       sigma_guess=sigma_guess, max_iterations=max_iterations, tolerance=tolerance, root=root,
                       backend=backend)
    n = len(prepared)
    fits = [fit for fit in _scenario_fits(prepared, states, options, details=False, quotes=False)
            if isinstance(fit, _TradeFits)]
    kinds = {"a": np.float64, "sigma": np.float64, "status": object, "message": object, "iterations": np.int64,
             "fitted": bool}  # _TradeFits' fields, each stacked over the scenarios (rows)
    return ScenarioFits(id=prepared.baskets.id.copy(), **{
        name: np.stack([getattr(f, name) for f in fits]) if fits else np.zeros((0, n), dtype=kind)
        for name, kind in kinds.items()})


@dataclass(frozen=True, eq=False)
class _TradeFits:
    """One scenario's fits of the trades alone (:class:`ScenarioFits`' row)."""

    a: np.ndarray
    sigma: np.ndarray
    status: np.ndarray
    message: np.ndarray
    iterations: np.ndarray
    fitted: np.ndarray


def _scenario_fits(prepared: PreparedBaskets, states: Sequence[tuple[Any, float]], options: _Options, *,
                   details: bool, quotes: bool) -> list[BasketCalibration | _TradeFits]:
    """Every scenario of ``states`` fitted: with ``quotes`` a :class:`BasketCalibration` each, else the trades' fits
    (:class:`_TradeFits`). NumPy fits scenario by scenario; a Futhark target takes the scenarios in as few calls of
    the kernel as :data:`_KERNEL_CELLS` allows."""
    results: list[BasketCalibration | _TradeFits] = []
    group: list[_KernelScenario] = []  # scenarios waiting for one call of the kernel
    cells = 0
    for (curves, vol_shift), start in zip(states, options.starts, strict=True):
        if options.engine == "numpy":
            setup = _Setup.of(prepared, prepared.quotes(curves, vol_shift, quantlib_forward=options.root == "quantlib"),
                              options, start)
            results.append(setup.finish(setup.solve_numpy(options), options, details, quotes))
            continue
        scenario = _KernelScenario.of(prepared, prepared._priced(curves, vol_shift), vol_shift, options, start)
        size = scenario.cells(quotes)
        if group and cells + size > _KERNEL_CELLS:
            results += _kernel_group(prepared, group, options, details, quotes)
            group, cells = [], 0
        group.append(scenario)
        cells += size
    if group:
        results += _kernel_group(prepared, group, options, details, quotes)
    return results


def _starts(x0: Any, states: int, n: int) -> list[np.ndarray | None]:
    """Per scenario, the start ``(n, 2)`` or None."""
    if x0 is None:
        return [None] * states
    if not isinstance(x0, (list, tuple)):  # one start for every scenario
        x0 = [x0] * states
    if len(x0) != states:
        raise InputError([(None, "x0", f"x0 has {len(x0)} starts for {states} scenarios")])
    out: list[np.ndarray | None] = []
    for start in x0:
        if start is None:
            out.append(None)
            continue
        array = np.asarray(start, dtype=np.float64)
        if array.shape != (n, 2):
            raise InputError([(None, "x0", f"x0 must be (trades, 2) = ({n}, 2) per scenario, got {array.shape}")])
        out.append(array)
    return out


def _usable_quotes(market: np.ndarray, annuity: np.ndarray, payer: np.ndarray, forward: np.ndarray,
                   strike: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which quotes have a positive market price, and which of those have no time value (the price is the
    intrinsic value within :data:`_NO_TIME_VALUE`): the fit leaves both kinds out."""
    intrinsic = annuity * np.maximum(np.where(payer, 1.0, -1.0) * (forward - strike), 0.0)
    positive = np.isfinite(market) & (market > 0)
    with np.errstate(invalid="ignore"):
        timeless = positive & (market - intrinsic <= _NO_TIME_VALUE * market)
    return positive, timeless


def _note_left_out(messages: list[str], owner: np.ndarray, positive: np.ndarray, timeless: np.ndarray,
                   example: Any) -> None:
    """Per trade with quotes left out (no positive market price, no time value), a note in its message naming how
    many and the first (``example(quote)``: its exercise, forward, strike, kind, vol and shift)."""
    n = len(messages)
    for bad, what in ((~positive, "without a positive market price"),
                      (timeless, "without time value (deep in the money: the price is the intrinsic value)")):
        where = np.flatnonzero(bad)
        if not where.size:
            continue
        left = np.bincount(owner[where], minlength=n)
        trades, at = np.unique(owner[where], return_index=True)
        for k, first in zip(trades.tolist(), where[at].tolist(), strict=True):
            exercise, forward, strike, kind, vol, shift = example(first)
            note = (f"{left[k]} quote(s) {what} left out (e.g. exercise {exercise}: forward {forward:.6g}, strike "
                    f"{strike:.6g}, {kind} vol {vol:.6g}, shift {shift:g})")
            messages[k] = f"{messages[k]}; {note}" if messages[k] else note


def _packed_slots(owner: np.ndarray, taken: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The quotes ``taken`` (quotes come trade by trade, ``owner`` their trades) in padded slots: per trade its count,
    and ``slot[t, j]``, the ``j``-th taken quote of trade ``t`` (or -1), at least one slot wide; and ``good``, the
    taken quotes."""
    good = np.flatnonzero(taken)
    count = np.bincount(owner[good], minlength=n)
    width = max(int(count.max()) if n else 0, 1)
    slot = np.full((n, width), -1, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(count)[:-1]]) if n else np.zeros(0, np.int64)
    slot[owner[good], np.arange(good.size) - np.repeat(starts, count)] = good
    return count, slot, good


@dataclass(frozen=True, eq=False)
class _Start:
    """The solver's start and bounds per trade: ``a`` fixed (given) or held (one quote, ``a`` free: held at its guess),
    which parameters are free, the start ``x0`` and the bounds (free parameters: the limits; others unbounded)."""

    a_fixed: np.ndarray
    held: np.ndarray
    free: np.ndarray
    x0: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, options: _Options, count: np.ndarray, owner: np.ndarray, valid: np.ndarray, fill: np.ndarray,
           start: np.ndarray | None, matching: Any) -> _Start:
        """``count`` quotes per trade in slots (``valid``, ``fill``: each slot's quote, 0 where empty); a trade
        without a start (``start`` None or NaN) starts from the median over its quotes of ``matching(a, rows)`` (the
        sigma matching each quote's normal volatility, :meth:`_QuoteSet.matching_sigma`) or ``sigma_guess``."""
        n = count.size
        limits = options.limits
        a_fixed = ~np.isnan(options.a_given)
        a_start = np.where(a_fixed, options.a_given, options.a_guess)
        held = ~a_fixed & (count == 1)  # one quote cannot fix both: a held at its guess
        free = np.stack([~a_fixed & ~held, np.ones(n, dtype=bool)], axis=1)
        sigma0 = np.full(n, np.nan)
        if start is not None:  # a warm start: a where it is fitted, sigma where given
            a_start = np.where(free[:, 0] & np.isfinite(start[:, 0]), start[:, 0], a_start)
            sigma0 = np.where(np.isfinite(start[:, 1]), start[:, 1], np.nan)
        cold = np.isnan(sigma0)
        if cold.any():
            if options.sigma_guess is None:  # per quote the sigma giving its normal volatility (to first order): median
                nq = owner.size
                rows = np.arange(nq) if cold.all() else np.flatnonzero(cold[owner])
                each = np.full(max(nq, 1), np.nan)
                if rows.size:
                    each[rows] = matching(a_start[owner[rows]], rows)
                median = np.full(n, np.nan)
                some = cold & (valid & np.isfinite(each[fill])).any(axis=1)
                if some.any():
                    median[some] = _nan_medians(np.where(valid, each[fill], np.nan)[some])
                guess = np.clip(np.where(np.isfinite(median) & (median > 0), median, 0.01), limits["sigma"][0],
                                limits["sigma"][1])
            else:
                guess = np.full(n, float(options.sigma_guess))
            sigma0 = np.where(cold, guess, sigma0)
        lower = np.array([limits["a"][0], limits["sigma"][0]])
        upper = np.array([limits["a"][1], limits["sigma"][1]])
        return cls(a_fixed=a_fixed, held=held, free=free, x0=np.stack([a_start, sigma0], axis=1),
                   lower=np.where(free, lower, -np.inf), upper=np.where(free, upper, np.inf))


def _nan_medians(values: np.ndarray) -> np.ndarray:
    """Each row's median of its numbers (NaN left out; every row has one): ``np.nanmedian(values, axis=1)``, its
    arithmetic (the mean of the two middle values, of the one twice for an odd count) without its masked arrays."""
    ordered = np.sort(values, axis=1)  # NaN last
    count = np.count_nonzero(~np.isnan(values), axis=1)
    high = count // 2
    low = np.where(count % 2 == 1, high, high - 1)
    rows = np.arange(values.shape[0])
    return (ordered[rows, low] + ordered[rows, high]) / 2.0


@dataclass(eq=False)
class _Setup:
    """One scenario's fit by NumPy before the solver: its quotes, messages, the solver's padded slots (the priced
    quotes packed) and its start."""

    prepared: PreparedBaskets
    quotes: _QuoteSet
    messages: list[str]
    count: np.ndarray
    priced: np.ndarray
    good: np.ndarray
    valid: np.ndarray
    fill: np.ndarray
    start: _Start

    @classmethod
    def of(cls, prepared: PreparedBaskets, quotes: _QuoteSet, options: _Options, start: np.ndarray | None) -> _Setup:
        messages = list(prepared.notes)
        owner = quotes.trade
        positive, timeless = _usable_quotes(quotes.market_price, quotes.annuity, quotes.payer, quotes.forward,
                                            quotes.strike)
        _note_left_out(messages, owner, positive, timeless,
                       lambda q: (quotes.exercise[q], quotes.forward[q], quotes.strike[q], quotes.kind[q],
                                  quotes.market_vol[q], quotes.shift[q]))
        priced = positive & ~timeless
        count, slot, good = _packed_slots(owner, priced, len(prepared))
        valid = slot >= 0
        fill = np.where(valid, slot, 0)
        return cls(prepared=prepared, quotes=quotes, messages=messages, count=count, priced=priced, good=good,
                   valid=valid, fill=fill, start=_Start.of(options, count, owner, valid, fill, start,
                                                           quotes.matching_sigma))

    def residuals(self, error: str, root: str) -> Any:
        """The NumPy solver's residual function (rows of trades at their parameters)."""
        quotes, valid, fill = self.quotes, self.valid, self.fill
        market = quotes.market_price
        nq = quotes.trade.size

        def residuals(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            here = valid[rows]
            flat = fill[rows][here]
            who = np.broadcast_to(np.arange(rows.size)[:, None], here.shape)[here]
            part = quotes.swaptions if flat.size == nq and np.array_equal(flat, np.arange(nq)) else \
                quotes.swaptions.take(flat)
            price, d_a, d_s = part.price(a=x[who, 0], sigma=x[who, 1], gradient=True, root=root)
            if error == "relative_price":
                scale = 1.0 / market[flat]
                e = (price - market[flat]) * scale
            elif error == "price":
                scale = np.ones(flat.size)
                e = price - market[flat]
            else:
                vol = quotes.implied_vol(price, flat)
                scale = 1.0 / quotes.vega(np.where(np.isfinite(vol), vol, quotes.market_vol[flat]), flat)
                e = vol - quotes.market_vol[flat]
            r = np.zeros(here.shape)
            jac = np.zeros((*here.shape, 2))
            r[here] = e
            jac[here] = np.stack([d_a * scale, d_s * scale], axis=1)
            return r, jac

        return residuals

    def solve_numpy(self, options: _Options) -> Any:
        start = self.start
        with np.errstate(over="ignore", under="ignore"):
            return levenberg_marquardt(self.residuals(options.error, options.root), start.x0, lower=start.lower,
                                       upper=start.upper, free=start.free, mask=self.valid,
                                       max_iterations=options.max_iterations, tolerance=options.tolerance)

    def finish(self, fit: Any, options: _Options, details: bool, with_quotes: bool) -> BasketCalibration | _TradeFits:
        """The scenario's outcome from the solver's ``fit``: a fit that stopped on a flat objective (no quote's price
        moves with the free parameters, its residuals not 0) found nothing: no fit, not converged."""
        code = fit.code.copy()
        check = np.flatnonzero((code == CONVERGED) & (fit.cost > 0))
        if check.size:
            _r, jac = self.residuals(options.error, options.root)(fit.x[check], check)
            moving = (np.abs(jac) * self.start.free[check][:, None, :] > 0).any(axis=(1, 2))
            code[check[~moving]] = _FLAT
        if not with_quotes:
            return _trade_fits(self.prepared, fit, code, self.count, self.start, self.messages, options)
        quotes, owner = self.quotes, self.quotes.trade
        model = np.full(owner.size, np.nan)
        if self.good.size:
            fitted = code == CONVERGED
            good = self.good
            model[good] = quotes.swaptions.take(good).price(a=fit.x[owner[good], 0], sigma=fit.x[owner[good], 1],
                                                            root=options.root)
            model[~fitted[owner]] = np.nan
        return _calibration(self.prepared, quotes, fit, code, model, self.count, self.priced, self.start,
                            self.messages, options, details)


@dataclass(frozen=True, eq=False)
class _KernelLayout:
    """What the kernel takes once for all scenarios of prepared baskets (:func:`levenberg_marquardt_scenarios`): per
    trade its quotes in slots (all its prepared quotes, in order: ``slot``, -1 where empty; ``quote``, the distinct
    quote of each), their legs, and its table of flows, each flow's date an index into a scenario's discount factors
    (the curves' dates one after another, from ``offsets``); per distinct quote its expiry and side."""

    count: np.ndarray
    slot: np.ndarray
    valid: np.ndarray
    fill: np.ndarray
    quote: np.ndarray
    first: np.ndarray
    length: np.ndarray
    pay_time: np.ndarray
    accrual: np.ndarray
    date: np.ndarray
    expiry: np.ndarray
    payer: np.ndarray
    offsets: tuple[int, ...]
    dates: int

    @classmethod
    def of(cls, structure: _QuoteStructure) -> _KernelLayout:
        plan = structure.plan
        n = len(structure.baskets)
        count, slot, _good = _packed_slots(structure.trade, np.ones(structure.trade.size, dtype=bool), n)
        valid = slot >= 0
        fill = np.where(valid, slot, 0)
        only = structure.legs[0] if len(structure.legs) == 1 else None
        if only is not None and only.trades.size == n:  # one curve, every trade quoted: its tables as they are
            pay_time, accrual, date = only.time, only.accrual, only.at
            offsets, offset = [0], only.dates.size
        else:
            flows = max([legs.time.shape[1] for legs in structure.legs] + [1])
            pay_time = np.zeros((n, flows))
            accrual = np.zeros((n, flows))
            date = np.zeros((n, flows), dtype=np.int64)
            offsets = []
            offset = 0
            for legs in structure.legs:
                w = legs.time.shape[1]
                pay_time[legs.trades, :w] = legs.time
                accrual[legs.trades, :w] = legs.accrual
                date[legs.trades, :w] = legs.at + offset
                offsets.append(offset)
                offset += legs.dates.size
        return cls(count=count, slot=slot, valid=valid, fill=fill, quote=np.where(valid, plan.of[fill], -1),
                   first=np.where(valid, structure.first[fill], 0), length=np.where(valid, structure.count[fill], 0),
                   pay_time=pay_time, accrual=accrual, date=date, expiry=plan.exercise_time, payer=plan.payer,
                   offsets=tuple(offsets), dates=offset)


@dataclass(eq=False)
class _KernelScenario:
    """One scenario's fit on a Futhark target before the solver: its distinct quotes priced (``priced``) and which of
    them the fit takes (``usable``), per trade its quote count and message, the slots it uses (``valid``, in the
    layout's slots) and its start."""

    prepared: PreparedBaskets
    priced: _Priced
    vol_shift: float
    usable: np.ndarray
    count: np.ndarray
    valid: np.ndarray
    messages: list[str]
    start: _Start = dataclass_field(init=False)

    @classmethod
    def of(cls, prepared: PreparedBaskets, priced: _Priced, vol_shift: float, options: _Options,
           start: np.ndarray | None) -> _KernelScenario:
        plan, layout = prepared._plan, prepared._kernel_layout
        owner = prepared.trade
        messages = list(prepared.notes)
        positive, timeless = _usable_quotes(priced.market_price, priced.annuity, plan.payer, priced.forward,
                                            priced.strike)
        usable = positive & ~timeless
        count, valid = layout.count, layout.valid
        if not usable.all():  # quotes left out: per quote, from its distinct quote's
            of = plan.of
            _note_left_out(messages, owner, positive[of], timeless[of],
                           lambda q: (prepared.exercise[q], priced.forward[of[q]], priced.strike[of[q]],
                                      prepared.kind[q], priced.market_vol[of[q]], prepared.shift[q]))
            count = np.bincount(owner[usable[of]], minlength=len(prepared))
            valid = layout.valid & usable[np.where(layout.valid, layout.quote, 0)]
        scenario = cls(prepared=prepared, priced=priced, vol_shift=vol_shift, usable=usable, count=count, valid=valid,
                       messages=messages)
        scenario.start = _Start.of(options, count, owner, valid, layout.fill, start, scenario.matching_sigma)
        return scenario

    def matching_sigma(self, a: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """:meth:`_QuoteSet.matching_sigma` of the quotes ``rows`` (``a``: per one, its trade's): where every ``a`` is
        the same, worked out once per distinct quote (the same numbers: the same values)."""
        if a.size and (a == a[0]).all():
            distinct = self.prepared._distinct_quote_set(self.priced)
            return distinct.matching_sigma(np.full(distinct.trade.size, a[0]))[self.prepared._plan.of[rows]]
        return self.quotes.matching_sigma(a, rows)

    @cached_property
    def quotes(self) -> _QuoteSet:
        """Every quote's market data (for a cold start's sigma and for :class:`BasketCalibration`)."""
        return self.prepared._quote_set(self.priced, self.vol_shift)

    def cells(self, with_model: bool) -> int:
        """What the scenario adds to a call of the kernel (:data:`_KERNEL_CELLS`)."""
        n, q = self.prepared._kernel_layout.slot.shape
        return n * (_OUTCOME_COLUMNS + 8 + (2 * q if with_model else 0)) + 5 * self.usable.size + \
            self.prepared._kernel_layout.dates

    def market(self, error: str) -> dict[str, np.ndarray]:
        """The kernel's arrays of this scenario's distinct quotes and dates."""
        priced = self.priced
        market = np.where(self.usable, priced.market_price, 1.0)
        discount = np.concatenate(priced.discounts) if priced.discounts else np.ones(0)
        with np.errstate(over="ignore"):  # a tiny price's scale is huge (its residual is relative)
            scale = 1.0 / market if error == "relative_price" else np.ones(market.size)
        return {"valid": self.usable, "market": market, "scale": scale, "rate": priced.strike,
                "discount_start": priced.discount_start, "discount": discount if discount.size else np.ones(1)}

    def finish(self, fit: Any, options: _Options, details: bool, with_quotes: bool) -> BasketCalibration | _TradeFits:
        """The scenario's outcome from the kernel's ``fit``: a fit that stopped on a flat objective (no quote's price
        moves with the free parameters, its residuals not 0) found nothing: no fit, not converged."""
        code = fit.code.copy()
        check = np.flatnonzero((code == CONVERGED) & (fit.cost > 0))
        code[check[~fit.moving[check]]] = _FLAT
        if not with_quotes:
            return _trade_fits(self.prepared, fit, code, self.count, self.start, self.messages, options)
        quotes = self.quotes
        layout = self.prepared._kernel_layout
        owner = quotes.trade
        model = np.full(owner.size, np.nan)
        model[layout.slot[self.valid]] = fit.model[self.valid]
        model[(code != CONVERGED)[owner]] = np.nan
        priced = self.usable[self.prepared._plan.of]
        return _calibration(self.prepared, quotes, fit, code, model, self.count, priced, self.start, self.messages,
                            options, details)


def _kernel_group(prepared: PreparedBaskets, group: list[_KernelScenario], options: _Options, details: bool,
                  with_quotes: bool) -> list[BasketCalibration | _TradeFits]:
    """Scenarios fitted in one call of the kernel on ``options.engine``: the layout passed once, per scenario its
    starts and its distinct quotes' and dates' market data; then each one's outcome."""
    from .calibration_kernel import levenberg_marquardt_scenarios

    layout = prepared._kernel_layout
    markets = [scenario.market(options.error) for scenario in group]
    stacked = {name: np.stack([m[name] for m in markets]) for name in markets[0]}
    fits = levenberg_marquardt_scenarios(
        x0=np.stack([s.start.x0 for s in group]), lower=np.stack([s.start.lower for s in group]),
        upper=np.stack([s.start.upper for s in group]), free=np.stack([s.start.free for s in group]),
        quote=layout.quote, first=layout.first, count=layout.length, pay_time=layout.pay_time,
        accrual=layout.accrual, date=layout.date, expiry=layout.expiry, notional=np.ones(layout.expiry.size),
        payer=layout.payer, **stacked, target=options.engine, max_iterations=options.max_iterations,
        tolerance=options.tolerance, with_model=with_quotes)
    return [scenario.finish(fit, options, details, with_quotes) for scenario, fit in zip(group, fits, strict=True)]


def _trade_fits(prepared: PreparedBaskets, fit: Any, code: np.ndarray, count: np.ndarray, start: _Start,
                messages: list[str], options: _Options) -> _TradeFits:
    """A scenario's fits of the trades alone (statuses and messages as :class:`BasketCalibration` with
    ``details=False``) from the solver's ``fit`` and its codes ``code`` (a flat objective marked)."""
    fit = replace(fit, code=code)
    units, kinds = prepared._trade_kinds
    status, messages = _statuses(fit, count, start.held, start.a_fixed, options.limits, options.max_iterations,
                                 np.full(count.size, np.nan), messages, options.a_guess, units, kinds, False)
    failed = code != CONVERGED
    a_out, sigma_out = fit.x[:, 0].copy(), fit.x[:, 1].copy()
    a_out[failed], sigma_out[failed] = np.nan, np.nan
    return _TradeFits(a=a_out, sigma=sigma_out, status=status, message=np.array(messages, dtype=object),
                      iterations=fit.iterations, fitted=(count > 0) & ~failed & np.isfinite(fit.cost))


def _calibration(prepared: PreparedBaskets, quotes: _QuoteSet, fit: Any, code: np.ndarray, model: np.ndarray,
                 count: np.ndarray, priced: np.ndarray, start: _Start, messages: list[str], options: _Options,
                 details: bool) -> BasketCalibration:
    """A scenario's :class:`BasketCalibration` from the solver's ``fit``, its codes ``code`` (a flat objective
    marked) and per quote ``model``, the model price at the fit (NaN where the trade has none)."""
    n = len(prepared)
    owner = quotes.trade
    nq = owner.size
    market = quotes.market_price
    fit = replace(fit, code=code)
    a_out, sigma_out = fit.x[:, 0].copy(), fit.x[:, 1].copy()
    failed = code != CONVERGED
    price_residual = model - market
    error = options.error
    if details:
        model_vol = quotes.implied_vol(model, np.arange(nq))
        residual = model_vol - quotes.market_vol
        used = priced & ~failed[owner]
        squares = np.bincount(owner[used], weights=residual[used] ** 2, minlength=n)
        rmse = np.where(count > 0, np.sqrt(squares / np.maximum(count, 1)), np.nan)
        rmse[failed] = np.nan
    else:
        model_vol = residual = np.full(nq, np.nan)
        rmse = np.full(n, np.nan)
    err = (price_residual / market if error == "relative_price" else price_residual if error == "price"
           else residual)
    units, kinds = prepared._trade_kinds
    status, messages = _statuses(fit, count, start.held, start.a_fixed, options.limits, options.max_iterations, rmse,
                                 messages, options.a_guess, units, kinds, details)
    a_out[failed], sigma_out[failed] = np.nan, np.nan
    return BasketCalibration(
        id=prepared.baskets.id.copy(), curve=prepared.curve, a=a_out, sigma=sigma_out,
        a_fixed=start.a_fixed | start.held, status=status, message=np.array(messages, dtype=object), rmse=rmse,
        iterations=fit.iterations, quote_count=count, error_type=error, trade=owner, exercise=quotes.exercise,
        end=quotes.end, expiry=quotes.expiry, tenor=quotes.tenor, strike=quotes.strike, forward=quotes.forward,
        annuity=quotes.annuity, payer=quotes.payer, kind=quotes.kind, shift=quotes.shift,
        market_vol=quotes.market_vol, market_price=market, model_price=model, model_vol=model_vol,
        residual=residual, price_residual=price_residual, error=err)


def _statuses(fit: Any, count: np.ndarray, held: np.ndarray, a_fixed: np.ndarray,
              limits: Mapping[str, tuple[float, float]], max_iterations: int, rmse: np.ndarray, notes: list[str],
              a_guess: float, units: np.ndarray, kinds: np.ndarray, details: bool) -> tuple[np.ndarray, list[str]]:
    """Per trade its status and message (:func:`_status`), the common case (converged, no bound hit) formatted in
    one pass; ``details=False``: only the trades without a fit get their message."""
    n = count.size
    status = _texts(n, "no fit")
    messages = list(notes)
    fitted = (count > 0) & (fit.code == CONVERGED) & np.isfinite(fit.cost)
    hits = fitted & (fit.at_lower.any(axis=1) | fit.at_upper.any(axis=1))
    status[fitted] = "converged"
    status[hits] = "bound"
    plain = np.flatnonzero(fitted & ~hits)
    if details and plain.size:
        how = np.where(held, f", a held at its guess {a_guess:g} (one quote cannot determine both a and sigma)",
                       np.where(a_fixed, ", a fixed", ""))
        for k, reason, steps, held_text, quotes, error, unit in zip(
                plain.tolist(), fit.reason[plain].tolist(), fit.iterations[plain].tolist(), how[plain].tolist(),
                count[plain].tolist(), rmse[plain].tolist(), units[plain].tolist(), strict=True):
            text = f"converged ({reason}) in {steps} iterations{held_text}; {quotes} quote(s), vol rmse {error:.3g}{unit}"
            messages[k] = f"{text}; {messages[k]}" if messages[k] else text
    for k in np.flatnonzero(~fitted | (hits if details else False)):
        status[k], messages[k] = _status(fit, k, int(count[k]), bool(held[k]), bool(a_fixed[k]), limits,
                                         max_iterations, float(rmse[k]), notes[k], a_guess, str(kinds[k]))
    return status, messages


def _texts(shape: int | tuple[int, ...], text: str) -> np.ndarray:
    """An object array of ``shape`` holding ``text`` everywhere (``np.full`` of an object is some 30 times slower)."""
    out = np.empty(shape, dtype=object)
    out.fill(text)
    return out


def _status(fit: Any, k: int, quotes: int, held: bool, a_fixed: bool, limits: Mapping[str, tuple[float, float]],
            max_iterations: int, rmse: float, note: str, a_guess: float, kind: str) -> tuple[str, str]:
    """A trade's status and message (``note``: what the basket itself says)."""
    def with_note(text: str) -> str:
        return f"{text} ({note})" if note and text.startswith("no ") else (f"{text}; {note}" if note else text)

    if quotes == 0:
        return "no fit", note or "no quotes"
    code = int(fit.code[k])
    if code == NOT_FINITE or not np.isfinite(fit.cost[k]):
        return "no fit", with_note("a model price or its derivative is not finite at the starting point")
    if code == MAX_ITERATIONS:
        return "no fit", with_note(f"no convergence in {max_iterations} iterations (last a={fit.x[k, 0]:.6g}, "
                                   f"sigma={fit.x[k, 1]:.6g})")
    if code == _FLAT:
        return "no fit", with_note("no quote's model price moves with sigma at the fit (deep in or out of the money: "
                                   "no time value to fit)")
    if code != CONVERGED:
        return "no fit", with_note(f"{quotes} quote(s) for the free parameters")
    unit = " (normal, rate units)" if kind == "normal" else " (lognormal)" if kind else ""
    tail = f"{quotes} quote(s), vol rmse {rmse:.3g}{unit}"
    hits = bound_hits(fit, k, limits)
    if hits:
        return "bound", with_note(f"{hits}; {tail}")
    how = (f", a held at its guess {a_guess:g} (one quote cannot determine both a and sigma)" if held
           else ", a fixed" if a_fixed else "")
    return "converged", with_note(f"converged ({fit.reason[k]}) in {int(fit.iterations[k])} iterations{how}; {tail}")


@dataclass(frozen=True, eq=False)
class _QuoteSet:
    """The baskets' swaptions priced on curves (:meth:`PreparedBaskets.quotes`; one per kept exercise date, trade by
    trade): their market data and formulas, their legs as the trades' tables of flows (``legs``, with per curve the
    discount factors at its dates, ``curve_discounts``, and on the tables, ``discounts``) and, built when first asked
    for, as :class:`~trinom.model.hull_white.Swaptions`."""

    trade: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    strike: np.ndarray
    forward: np.ndarray
    annuity: np.ndarray
    payer: np.ndarray
    kind: np.ndarray
    shift: np.ndarray
    market_vol: np.ndarray
    market_price: np.ndarray
    kinds: dict[str, str]
    exercise_time: np.ndarray
    discount_start: np.ndarray
    first: np.ndarray
    count: np.ndarray
    legs: tuple[_CurveLegs, ...]
    curve_discounts: tuple[np.ndarray, ...]
    forward_exercise: np.ndarray

    def kind_of(self, curve: str) -> str:
        return self.kinds.get(curve, "")

    @cached_property
    def discounts(self) -> tuple[np.ndarray, ...]:
        """Per curve the discount factors of its trades' tables of flows (``(trades, f)``)."""
        return tuple(df[legs.at] for legs, df in zip(self.legs, self.curve_discounts, strict=True))

    @cached_property
    def swaptions(self) -> Swaptions:
        """Every quote as a swaption, legs padded per curve to its longest (then to the longest of all)."""
        return self.swaptions_of(np.arange(self.trade.size))

    def swaptions_of(self, rows: np.ndarray) -> Swaptions:
        """The quotes ``rows`` (ascending) as swaptions, in that order."""
        nq = self.trade.size
        position = np.full(nq, -1, dtype=np.int64)
        position[rows] = np.arange(rows.size)
        parts: list[Swaptions] = []
        order: list[np.ndarray] = []
        for legs, df in zip(self.legs, self.discounts, strict=True):
            pick = np.flatnonzero(position[legs.rows] >= 0)
            if not pick.size:
                continue
            q, local = legs.rows[pick], legs.local[pick]
            count = self.count[q]
            columns = np.arange(max(int(count.max()), 1))[None, :]
            live = columns < count[:, None]
            # flat positions in the tables: each leg's flows, its last repeated as padding (the end's time)
            at = (local * legs.time.shape[1] + self.first[q])[:, None] + np.minimum(columns, count[:, None] - 1)
            parts.append(Swaptions(exercise=self.exercise_time[q], start=self.exercise_time[q],
                                   pay_time=legs.time.reshape(-1)[at],
                                   accrual=np.where(live, legs.accrual.reshape(-1)[at], 0.0),
                                   discount_start=self.discount_start[q],
                                   discount_pay=np.where(live, df.reshape(-1)[at], 1.0), fixed_rate=self.strike[q],
                                   notional=np.ones(q.size), payer=self.payer[q], count=count,
                                   forward_exercise=self.forward_exercise[q]))
            order.append(position[q])
        if not parts:
            return _no_swaptions()
        together = np.concatenate(order)
        if len(parts) == 1 and np.array_equal(together, np.arange(together.size)):
            return parts[0]
        inverse = np.empty(together.size, dtype=np.int64)
        inverse[together] = np.arange(together.size)
        return Swaptions.concatenate(parts).take(inverse)

    def _args(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {"forward": self.forward[rows], "strike": self.strike[rows], "expiry": self.exercise_time[rows],
                "annuity": self.annuity[rows]}

    def price_at(self, vol: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The formula's price of quotes ``rows`` at ``vol`` (each kind's formula on its quotes only)."""
        return _formula_prices(self.kind[rows] == "normal", forward=self.forward[rows], strike=self.strike[rows],
                               expiry=self.exercise_time[rows], annuity=self.annuity[rows],
                               vol=np.broadcast_to(np.asarray(vol, dtype=np.float64), rows.shape),
                               shift=self.shift[rows], payer=self.payer[rows])

    def vega(self, vol: np.ndarray, rows: np.ndarray) -> np.ndarray:
        args = self._args(rows)
        normal = self.kind[rows] == "normal"
        with np.errstate(all="ignore"):
            return np.where(normal, bachelier_vega(**args, vol=vol),
                            black_vega(**args, vol=vol, shift=self.shift[rows]))

    def implied_vol(self, price: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The volatility of each quote's kind that gives ``price`` (NaN where none does)."""
        out = np.full(rows.size, np.nan)
        normal = self.kind[rows] == "normal"
        for mask, lognormal in ((normal, False), (~normal, True)):
            if not mask.any():
                continue
            r = rows[mask]
            args = {**self._args(r), "price": price[mask], "is_call": self.payer[r]}
            with np.errstate(all="ignore"):
                out[mask] = (black_implied_vol(**args, shift=self.shift[r]) if lognormal
                             else bachelier_implied_vol(**args))
        return out

    def normal_vol(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Each quote's (of ``rows``; None: all) market price as a Bachelier volatility: a normal quote's own (its
        market price is the Bachelier price at it); a lognormal quote's price inverted (at the money, its volatility
        times ``F + shift`` where the price has no time value to invert)."""
        r = np.arange(self.trade.size) if rows is None else rows
        out = self.market_vol[r].copy()
        lognormal = np.flatnonzero(self.kind[r] != "normal")
        if lognormal.size:
            q = r[lognormal]
            with np.errstate(all="ignore"):
                implied = bachelier_implied_vol(price=self.market_price[q], **self._args(q), is_call=self.payer[q])
            fallback = self.market_vol[q] * (self.forward[q] + self.shift[q])
            out[lognormal] = np.where(np.isfinite(implied) & (implied > 0), implied, fallback)
        return out

    def matching_sigma(self, a: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Per quote (of ``rows``, ascending; None: all), the Hull-White ``sigma`` (with mean reversion ``a``, one per
        trade) whose swap rate has the quote's normal volatility to first order: ``vol sqrt(T) / (dS/dx sqrt(B(2a,
        T)))``, with ``dS/dx = (B_n P_n - B_0 P_0 + S sum tau_i B_i P_i) / A`` the swap rate's move with the state
        (``B_i = B(a, t_i - T) = (1 - exp(-a (t_i - T))) / a``: ``sum tau_i B_i P_i = (A - exp(a T) sum tau_i P_i
        exp(-a t_i)) / a``, the sum over a leg from its trade's table). A start for the solver that knows how mean
        reversion damps a long swap's volatility."""
        from .hull_white import bond_factor

        nq = self.trade.size
        r = np.arange(nq) if rows is None else rows
        a_of = np.zeros(int(self.trade.max()) + 1 if nq else 0)
        a_of[self.trade[r]] = a
        position = np.full(nq, -1, dtype=np.int64)
        position[r] = np.arange(r.size)
        weighted = np.empty(r.size)
        last_factor = np.empty(r.size)
        last_discount = np.empty(r.size)
        T = self.exercise_time[r]
        for legs, df in zip(self.legs, self.discounts, strict=True):
            pick = np.flatnonzero(position[legs.rows] >= 0)
            if not pick.size:
                continue
            q, local, at = legs.rows[pick], legs.local[pick], position[legs.rows[pick]]
            a_trade = a_of[legs.trades][:, None]
            with np.errstate(over="ignore", invalid="ignore"):
                sums = _leg_sums(legs.schedule, local, self.first[q], self.count[q],
                                 legs.accrual * df * np.exp(-a_trade * legs.time))
            end = local * legs.time.shape[1] + self.first[q] + self.count[q] - 1
            a_q = a_of[self.trade[q]]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                weighted[at] = (self.annuity[q] - np.exp(a_q * T[at]) * sums) / a_q
            last_factor[at] = bond_factor(a=a_q, tau=legs.time.reshape(-1)[end] - T[at])
            last_discount[at] = df.reshape(-1)[end]
        B0 = bond_factor(a=a, tau=np.zeros(r.size))  # the swap starts at the exercise
        with np.errstate(all="ignore"):
            slope = (last_factor * last_discount - B0 * self.discount_start[r]
                     + self.forward[r] * weighted) / self.annuity[r]
            spread = np.sqrt(np.maximum(bond_factor(a=2.0 * a, tau=T), 0.0))
            return self.normal_vol(None if rows is None else rows) * np.sqrt(np.maximum(T, 0.0)) / (slope * spread)


def _formula_prices(normal: np.ndarray, *, forward: np.ndarray, strike: np.ndarray, expiry: np.ndarray,
                    annuity: np.ndarray, vol: np.ndarray, shift: np.ndarray, payer: np.ndarray) -> np.ndarray:
    """Each quote's price by its kind's formula (``normal``: Bachelier; otherwise shifted Black, NaN where the
    forward or the strike is not above ``-shift``) at ``vol``, times its annuity."""
    out = np.full(normal.size, np.nan)
    for mask, lognormal in ((normal, False), (~normal, True)):
        if not mask.any():
            continue
        args = {"forward": forward[mask], "strike": strike[mask], "expiry": expiry[mask], "annuity": annuity[mask],
                "vol": vol[mask], "is_call": payer[mask]}
        with np.errstate(all="ignore"):
            if lognormal:
                black = black_price(**args, shift=shift[mask])
                bad = (forward[mask] + shift[mask] <= 0) | (strike[mask] + shift[mask] <= 0)
                out[mask] = np.where(bad, np.nan, black)
            else:
                out[mask] = bachelier_price(**args)
    return out


def _no_swaptions() -> Swaptions:
    empty = np.zeros(0)
    return Swaptions(exercise=empty, start=empty, pay_time=np.zeros((0, 1)), accrual=np.zeros((0, 1)),
                     discount_start=empty, discount_pay=np.ones((0, 1)), fixed_rate=empty, notional=empty,
                     payer=np.zeros(0, dtype=bool), count=np.zeros(0, dtype=np.int64), forward_exercise=empty)
