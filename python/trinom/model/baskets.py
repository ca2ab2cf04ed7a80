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
volatilities. :meth:`PreparedBaskets.quotes` prices them on a scenario's curves (discount factors once per
schedule date, forward swap rates, annuities, strikes, market prices), and :func:`calibrate_prepared` fits many
scenarios in one batched call, each trade from a start of its own (``x0``: a warm start, such as its fit in the
base scenario); :func:`calibrate_baskets` takes prepared baskets too.

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
    flat = [d for dates in lists for d in dates]
    owner = np.repeat(np.arange(n), counts)
    days, found = to_days(np.array(flat, dtype=object) if flat else np.zeros(0, dtype=object), field="exercise")
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
    for k in range(n):
        if k in bad_dates:
            continue
        mine = days[offsets[k]:offsets[k + 1]]
        twice = np.flatnonzero(np.diff(mine) == 0)
        for j in twice:
            bad(k, "exercise", f"exercise date {as_dates(mine[j:j + 1])[0]} is given twice")
        late = mine[mine >= end_days[k]]
        if late.size:
            bad(k, "exercise", f"exercise date {as_dates(late[:1])[0]} is not before the end {as_dates(end_days[k:k + 1])[0]}")
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
    calibration finds them) are an :class:`~trinom.InputError` naming the file, line and field.
    """
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
    exercise: list[list[np.datetime64]] = [[] for _ in range(n)]
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
_Legs = tuple[list[list[np.datetime64]], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


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
        exercise[row] = list(as_dates(np.array(kept, dtype=np.int64)))
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
        exercise[row] = list(as_dates(days))
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
    """

    name: str
    rows: np.ndarray
    trades: np.ndarray
    local: np.ndarray
    time: np.ndarray
    accrual: np.ndarray
    schedule: np.ndarray


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

    def __len__(self) -> int:
        return len(self.baskets)

    def quotes(self, curves: Any, vol_shift: float = 0.0, *, quantlib_forward: bool = False) -> _QuoteSet:
        """The quotes priced on ``curves`` (``{name: DatedCurve}`` or one curve, as of :attr:`as_of`, every name of
        :attr:`curve_names` among them) with every volatility moved by ``vol_shift``: discount factors once per
        flow of each trade's table, then per quote its annuity, forward swap rate, strike and market price
        (``quantlib_forward``: also the curve's forward rate at each expiry, for ``root="quantlib"``)."""
        table = _checked_curves(curves, self.as_of, self.curve_names)
        nq = self.trade.size
        discount_start = np.empty(nq)
        annuity = np.empty(nq)
        last = np.empty(nq)
        forward_exercise = np.zeros(nq)
        discounts = []
        for legs in self.legs:
            curve = table[legs.name]
            rows = legs.rows
            df = curve.discount(legs.time.reshape(-1)).reshape(legs.time.shape)
            discounts.append(df)
            discount_start[rows] = curve.discount(self.exercise_time[rows])
            if quantlib_forward:
                from .hull_white import quantlib_forward_rate

                forward_exercise[rows] = quantlib_forward_rate(curve.discount, self.exercise_time[rows])
            annuity[rows] = _leg_sums(legs, legs.local, self.first[rows], self.count[rows], legs.accrual * df)
            last[rows] = df[legs.local, self.first[rows] + self.count[rows] - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            forward = (discount_start - last) / annuity
        rate = forward if self.strike == "atm" else self.baskets.rate[self.trade]
        market_vol = self.market_vol + vol_shift if vol_shift else self.market_vol
        quotes = _QuoteSet(trade=self.trade, exercise=self.exercise, end=self.end, expiry=self.expiry,
                           tenor=self.tenor, strike=np.array(rate, dtype=np.float64), forward=forward, annuity=annuity,
                           payer=self.payer, kind=self.kind, shift=self.shift, market_vol=market_vol,
                           market_price=np.zeros(nq), kinds=self.kinds, exercise_time=self.exercise_time,
                           discount_start=discount_start, first=self.first, count=self.count, legs=self.legs,
                           discounts=tuple(discounts), forward_exercise=forward_exercise)
        quotes.market_price[:] = quotes.price_at(market_vol, np.arange(nq))
        return quotes


def _leg_sums(legs: _CurveLegs, local: np.ndarray, first: np.ndarray, count: np.ndarray,
              values: np.ndarray) -> np.ndarray:
    """Per quote (its trade's row ``local`` of the tables, its leg ``count`` flows from ``first``), the sum of
    ``values`` (``(trades, f)``) over its leg's flows: a tail of its trade's schedule from the reverse cumulative
    sums of the schedules, a leg of its own as one segment."""
    out = np.empty(first.size)
    columns = np.arange(values.shape[1])[None, :]
    own = first >= legs.schedule[local]
    if (~own).any():
        tails = np.cumsum(np.where(columns < legs.schedule[:, None], values, 0.0)[:, ::-1], axis=1)[:, ::-1]
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

    An :class:`~trinom.InputError` for bad input, as :func:`calibrate_baskets`.
    """
    from ..conventions.dates import day_of_month, month_index

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
    n = len(baskets)
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
    # the quotes: every exercise date after the as-of date, on a known curve with volatilities
    owner_all = np.repeat(np.arange(n), baskets.counts)
    past = baskets.exercise <= today
    usable = known & has_vols
    take = ~past & usable[owner_all]
    past_count = np.bincount(owner_all[past], minlength=n)
    some = np.bincount(owner_all[take], minlength=n) > 0
    for k in np.flatnonzero(~some & usable & (baskets.counts > 0) & (past_count == baskets.counts)):
        messages[k] = f"no exercise date after the as-of date {today} ({past_count[k]} on or before it)"
    for k in np.flatnonzero(~some & usable & (baskets.counts == 0) & ~np.array([bool(m) for m in messages],
                                                                                 dtype=bool)):
        messages[k] = "no exercise date: nothing to calibrate"
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
    kind = np.empty(nq, dtype=object)
    shift = np.zeros(nq)
    market_vol = np.zeros(nq)
    first = np.zeros(nq, dtype=np.int64)
    count = np.zeros(nq, dtype=np.int64)
    kinds: dict[str, str] = {}
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
        grid = surface.grids[name] if name in surface.grids else surface.grids[next(iter(surface.grids))]
        kinds[name] = surface.kind(name)
        kind[rows] = kinds[name]
        shift[rows] = surface.shift(name)
        market_vol[rows] = grid.lookup(expiry[rows], tenor[rows])
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
        schedule = fixed_leg(start=anchor[begins], end=end_days[rows][begins], frequency=baskets.frequency[trades],
                             day_count=baskets.day_count[trades])
        periods = schedule.count
        offset = np.where(on, moved // months, 0)
        length = periods[local] - offset
        # an ACT/ACT-ICMA leg of one period takes another reference period than the schedule's last: its own leg
        on &= ~((codes[owner] == ACT_ACT_ICMA) & (length == 1) & (offset > 0)) & (length >= 1)
        own = np.flatnonzero(~on)
        extra = np.zeros(trades.size, dtype=np.int64)
        if own.size:
            leg = fixed_leg(start=e[own], end=end_days[rows][own], frequency=baskets.frequency[owner[own]],
                            day_count=baskets.day_count[owner[own]])
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
        legs.append(_CurveLegs(name=name, rows=rows, trades=trades, local=local,
                               time=(pay - today_day) / DAYS_PER_YEAR, accrual=accrual, schedule=periods))
    return PreparedBaskets(baskets=baskets, as_of=today, surface=surface, strike=strike, curve_names=names,
                           curve=curve, usable=usable, notes=tuple(messages), trade=trade, exercise=exercise, end=end,
                           expiry=expiry, tenor=tenor, payer=baskets.payer[trade], kind=kind, shift=shift,
                           market_vol=market_vol, exercise_time=exercise_time, first=first, count=count, kinds=kinds,
                           legs=tuple(legs))


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
      does not fit), :class:`~trinom.backends.BackendUnavailable` where a Futhark target is not built or usable.
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
        from ..backends import BackendUnavailable
        from .calibration_kernel import available

        usable, why = available(backend)
        if not usable:
            raise BackendUnavailable(f"calibration backend {backend!r}: {why}")
    return backend


#: Padded quote slots (trades times slots, plus the trades' flows) per call of the kernel: scenarios beyond it are
#: fitted in further calls, so that the padded arrays (and the scenarios' quotes held for them) stay a few hundred
#: megabytes.
_KERNEL_CELLS: Final[int] = 20_000_000


def calibrate_prepared(prepared: PreparedBaskets, states: Sequence[tuple[Any, float]], *,
                       x0: Sequence[npt.ArrayLike | None] | npt.ArrayLike | None = None,
                       a: float | npt.ArrayLike | None = None, error: str = "relative_price",
                       bounds: Mapping[str, tuple[float, float]] | None = None, a_guess: float = 0.05,
                       sigma_guess: float | None = None, max_iterations: int = 500, tolerance: float = 1e-12,
                       root: str = "exact", backend: str = "numpy", details: bool = True) -> list[BasketCalibration]:
    """:func:`calibrate_baskets` of prepared baskets in several scenarios at once: ``states`` is a sequence of
    ``(curves, vol_shift)``, each fitted as :func:`calibrate_baskets` fits it, on a Futhark target in one batched call
    of the kernel (every scenario's trades together). ``x0``: one ``(trades, 2)`` start for every scenario, or one per
    scenario (None: the default start). ``details=False`` leaves out what a refit in many scenarios does not read:
    the per-quote model volatilities, vol residuals and rmse (NaN), and the messages of trades with a fit (their
    notes). The other arguments are :func:`calibrate_baskets`'s; one :class:`BasketCalibration` per scenario."""
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
    starts = _starts(x0, len(states), n)
    results: list[BasketCalibration] = []
    group: list[tuple[_Setup, dict[str, np.ndarray]]] = []  # scenarios waiting for one call of the kernel
    cells = 0
    for (curves, vol_shift), start in zip(states, starts, strict=True):
        setup = _Setup.of(prepared, prepared.quotes(curves, vol_shift, quantlib_forward=root == "quantlib"), a_given,
                          limits, a_guess, sigma_guess, start)
        if engine == "numpy":
            results.append(setup.finish(setup.solve_numpy(error, root, max_iterations, tolerance), engine, error, root,
                                        limits, max_iterations, a_guess, details))
            continue
        arrays = setup.kernel_arrays(error)
        size = arrays["valid"].size + arrays["pay_time"].size
        if group and cells + size > _KERNEL_CELLS:
            results += _kernel_group(group, engine, error, root, limits, max_iterations, tolerance, a_guess, details)
            group, cells = [], 0
        group.append((setup, arrays))
        cells += size
    if group:
        results += _kernel_group(group, engine, error, root, limits, max_iterations, tolerance, a_guess, details)
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


@dataclass(eq=False)
class _Setup:
    """One scenario's fit before the solver: its quotes, messages and the solver's padded slots."""

    prepared: PreparedBaskets
    quotes: _QuoteSet
    messages: list[str]
    count: np.ndarray
    priced: np.ndarray
    good: np.ndarray
    slot: np.ndarray
    valid: np.ndarray
    fill: np.ndarray
    a_fixed: np.ndarray
    held: np.ndarray
    free: np.ndarray
    x0: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, prepared: PreparedBaskets, quotes: _QuoteSet, a_given: np.ndarray,
           limits: Mapping[str, tuple[float, float]], a_guess: float, sigma_guess: float | None,
           start: np.ndarray | None) -> _Setup:
        n = len(prepared)
        messages = list(prepared.notes)
        owner = quotes.trade
        nq = owner.size
        market = quotes.market_price
        intrinsic = quotes.annuity * np.maximum(np.where(quotes.payer, 1.0, -1.0) * (quotes.forward - quotes.strike),
                                                0.0)
        positive = np.isfinite(market) & (market > 0)
        with np.errstate(invalid="ignore"):
            timeless = positive & (market - intrinsic <= _NO_TIME_VALUE * market)
        priced = positive & ~timeless
        for bad, what in ((~positive, "without a positive market price"),
                          (timeless, "without time value (deep in the money: the price is the intrinsic value)")):
            where = np.flatnonzero(bad)
            if not where.size:
                continue
            left = np.bincount(owner[where], minlength=n)
            trades, at = np.unique(owner[where], return_index=True)
            for k, first in zip(trades.tolist(), where[at].tolist(), strict=True):
                note = (f"{left[k]} quote(s) {what} left out (e.g. exercise {quotes.exercise[first]}: forward "
                        f"{quotes.forward[first]:.6g}, strike {quotes.strike[first]:.6g}, {quotes.kind[first]} vol "
                        f"{quotes.market_vol[first]:.6g}, shift {quotes.shift[first]:g})")
                messages[k] = f"{messages[k]}; {note}" if messages[k] else note
        count = np.bincount(owner[priced], minlength=n)
        # padded slots: slot[t, j] is a priced quote of trade t (or -1)
        good = np.flatnonzero(priced)
        width = max(int(count.max()) if n else 0, 1)
        slot = np.full((n, width), -1, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(count)[:-1]]) if n else np.zeros(0, np.int64)
        position = np.arange(good.size) - np.repeat(starts, count)
        slot[owner[good], position] = good  # quotes come trade by trade
        valid = slot >= 0
        fill = np.where(valid, slot, 0)
        a_fixed = ~np.isnan(a_given)
        a_start = np.where(a_fixed, a_given, float(a_guess))
        held = ~a_fixed & (count == 1)  # one quote cannot fix both: a held at its guess
        free = np.stack([~a_fixed & ~held, np.ones(n, dtype=bool)], axis=1)
        sigma0 = np.full(n, np.nan)
        if start is not None:  # a warm start: a where it is fitted, sigma where given
            a_start = np.where(free[:, 0] & np.isfinite(start[:, 0]), start[:, 0], a_start)
            sigma0 = np.where(np.isfinite(start[:, 1]), start[:, 1], np.nan)
        cold = np.isnan(sigma0)
        if cold.any():
            if sigma_guess is None:  # per quote the sigma that gives its normal volatility (to first order), their median
                rows = np.arange(nq) if cold.all() else np.flatnonzero(cold[owner])
                each = np.full(max(nq, 1), np.nan)
                if rows.size:
                    each[rows] = quotes.matching_sigma(a_start[owner[rows]], rows)
                median = np.full(n, np.nan)
                some = cold & (valid & np.isfinite(each[fill])).any(axis=1)
                if some.any():
                    median[some] = np.nanmedian(np.where(valid, each[fill], np.nan)[some], axis=1)
                guess = np.clip(np.where(np.isfinite(median) & (median > 0), median, 0.01), limits["sigma"][0],
                                limits["sigma"][1])
            else:
                guess = np.full(n, float(sigma_guess))
            sigma0 = np.where(cold, guess, sigma0)
        lower = np.array([limits["a"][0], limits["sigma"][0]])
        upper = np.array([limits["a"][1], limits["sigma"][1]])
        return cls(prepared=prepared, quotes=quotes, messages=messages, count=count, priced=priced, good=good,
                   slot=slot, valid=valid, fill=fill, a_fixed=a_fixed, held=held, free=free,
                   x0=np.stack([a_start, sigma0], axis=1), lower=np.where(free, lower, -np.inf),
                   upper=np.where(free, upper, np.inf))

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

    def solve_numpy(self, error: str, root: str, max_iterations: int, tolerance: float) -> Any:
        with np.errstate(over="ignore", under="ignore"):
            return levenberg_marquardt(self.residuals(error, root), self.x0, lower=self.lower, upper=self.upper,
                                       free=self.free, mask=self.valid, max_iterations=max_iterations,
                                       tolerance=tolerance)

    def kernel_arrays(self, error: str) -> dict[str, np.ndarray]:
        """The kernel's per-quote and per-trade arrays of this scenario (:func:`levenberg_marquardt_kernel`)."""
        quotes, valid, fill = self.quotes, self.valid, self.fill
        slot_market = np.where(valid, quotes.market_price[fill], 1.0)
        pay_time, accrual, discount = quotes.tables(len(self.prepared))
        expiry = quotes.exercise_time[fill]
        return {"valid": valid, "expiry": expiry, "start": expiry, "discount_start": quotes.discount_start[fill],
                "notional": np.ones(valid.shape), "payer": quotes.payer[fill], "market": slot_market,
                "scale": 1.0 / slot_market if error == "relative_price" else np.ones(valid.shape),
                "rate": quotes.strike[fill], "first": np.where(valid, quotes.first[fill], 0),
                "count": np.where(valid, quotes.count[fill], 0), "pay_time": pay_time, "accrual": accrual,
                "discount_pay": discount}

    def finish(self, fit: Any, engine: str, error: str, root: str, limits: Mapping[str, tuple[float, float]],
               max_iterations: int, a_guess: float, details: bool) -> BasketCalibration:
        """The scenario's outcome from the solver's ``fit``."""
        prepared, quotes, valid, fill = self.prepared, self.quotes, self.valid, self.fill
        n = len(prepared)
        owner = quotes.trade
        nq = owner.size
        market = quotes.market_price
        code = fit.code.copy()
        # a fit that stopped on a flat objective (no quote's price moves with the free parameters, its residuals not
        # 0) found nothing: no fit, not converged
        check = np.flatnonzero((code == CONVERGED) & (fit.cost > 0))
        if engine == "numpy":
            if check.size:
                _r, jac = self.residuals(error, root)(fit.x[check], check)
                moving = (np.abs(jac) * self.free[check][:, None, :] > 0).any(axis=(1, 2))
                code[check[~moving]] = _FLAT
        else:
            code[check[~fit.moving[check]]] = _FLAT
        fit = replace(fit, code=code)
        a_out, sigma_out = fit.x[:, 0].copy(), fit.x[:, 1].copy()
        failed = code != CONVERGED
        model = np.full(nq, np.nan)
        if engine == "numpy":
            if self.good.size:
                good = self.good
                model[good] = quotes.swaptions.take(good).price(a=a_out[owner[good]], sigma=sigma_out[owner[good]],
                                                                root=root)
        else:
            model[fill[valid]] = fit.model[valid]
        model[failed[owner]] = np.nan
        price_residual = model - market
        if details:
            model_vol = quotes.implied_vol(model, np.arange(nq))
            residual = model_vol - quotes.market_vol
            used = self.priced & ~failed[owner]
            squares = np.bincount(owner[used], weights=residual[used] ** 2, minlength=n)
            rmse = np.where(self.count > 0, np.sqrt(squares / np.maximum(self.count, 1)), np.nan)
            rmse[failed] = np.nan
        else:
            model_vol = residual = np.full(nq, np.nan)
            rmse = np.full(n, np.nan)
        err = (price_residual / market if error == "relative_price" else price_residual if error == "price"
               else residual)
        unit = {"normal": " (normal, rate units)", "lognormal": " (lognormal)"}
        units = np.array([unit.get(quotes.kind_of(c), "") if ok else "" for c, ok in
                          zip(prepared.curve.tolist(), prepared.usable.tolist(), strict=True)], dtype=object)
        kinds = np.array([quotes.kind_of(c) if ok else "" for c, ok in
                          zip(prepared.curve.tolist(), prepared.usable.tolist(), strict=True)], dtype=object)
        status, messages = _statuses(fit, self.count, self.held, self.a_fixed, limits, max_iterations, rmse,
                                     self.messages, float(a_guess), units, kinds, details)
        a_out[failed], sigma_out[failed] = np.nan, np.nan
        return BasketCalibration(
            id=prepared.baskets.id.copy(), curve=prepared.curve, a=a_out, sigma=sigma_out,
            a_fixed=self.a_fixed | self.held, status=status, message=np.array(messages, dtype=object), rmse=rmse,
            iterations=fit.iterations, quote_count=self.count, error_type=error, trade=owner, exercise=quotes.exercise,
            end=quotes.end, expiry=quotes.expiry, tenor=quotes.tenor, strike=quotes.strike, forward=quotes.forward,
            annuity=quotes.annuity, payer=quotes.payer, kind=quotes.kind, shift=quotes.shift,
            market_vol=quotes.market_vol, market_price=market, model_price=model, model_vol=model_vol,
            residual=residual, price_residual=price_residual, error=err)


def _kernel_group(group: list[tuple[_Setup, dict[str, np.ndarray]]], target: str, error: str, root: str,
                  limits: Mapping[str, tuple[float, float]], max_iterations: int, tolerance: float, a_guess: float,
                  details: bool) -> list[BasketCalibration]:
    """Scenarios fitted in one call of the kernel on ``target``, their trades stacked (each scenario's slots and
    tables padded to the widest), then each one's outcome."""
    from .calibration_kernel import levenberg_marquardt_kernel

    options = {"target": target, "max_iterations": max_iterations, "tolerance": tolerance}
    if len(group) == 1:
        setup, arrays = group[0]
        fits = [levenberg_marquardt_kernel(x0=setup.x0, lower=setup.lower, upper=setup.upper, free=setup.free,
                                           **arrays, **options)]
    else:
        width = max(arrays["valid"].shape[1] for _s, arrays in group)
        flows = max(arrays["pay_time"].shape[1] for _s, arrays in group)
        trades = sum(arrays["valid"].shape[0] for _s, arrays in group)
        fills = {"valid": False, "market": 1.0, "scale": 1.0, "notional": 1.0, "discount_pay": 1.0}
        stacked = {}
        for name, first in group[0][1].items():
            columns = flows if name in ("pay_time", "accrual", "discount_pay") else width
            whole = np.full((trades, columns), fills.get(name, 0), dtype=first.dtype)
            row = 0
            for _s, arrays in group:
                part = arrays[name]
                whole[row:row + part.shape[0], :part.shape[1]] = part
                row += part.shape[0]
            stacked[name] = whole
        fit = levenberg_marquardt_kernel(x0=np.concatenate([s.x0 for s, _a in group]),
                                         lower=np.concatenate([s.lower for s, _a in group]),
                                         upper=np.concatenate([s.upper for s, _a in group]),
                                         free=np.concatenate([s.free for s, _a in group]), **stacked, **options)
        fits, row = [], 0
        for _s, arrays in group:
            n, q = arrays["valid"].shape
            part = slice(row, row + n)
            fits.append(replace(fit, x=fit.x[part], cost=fit.cost[part], residuals=fit.residuals[part, :q],
                                code=fit.code[part], reason=fit.reason[part], iterations=fit.iterations[part],
                                at_lower=fit.at_lower[part], at_upper=fit.at_upper[part], model=fit.model[part, :q],
                                moving=fit.moving[part]))
            row += n
    return [setup.finish(fit, target, error, root, limits, max_iterations, a_guess, details)
            for (setup, _a), fit in zip(group, fits, strict=True)]


def _statuses(fit: Any, count: np.ndarray, held: np.ndarray, a_fixed: np.ndarray,
              limits: Mapping[str, tuple[float, float]], max_iterations: int, rmse: np.ndarray, notes: list[str],
              a_guess: float, units: np.ndarray, kinds: np.ndarray, details: bool) -> tuple[np.ndarray, list[str]]:
    """Per trade its status and message (:func:`_status`), the common case (converged, no bound hit) formatted in
    one pass; ``details=False``: only the trades without a fit get their message."""
    n = count.size
    status = np.full(n, "no fit", dtype=object)
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
    trade): their market data and formulas, their legs as the trades' tables of flows (``legs``, with the discount
    factors ``discounts`` on them) and, built when first asked for, as :class:`~trinom.model.hull_white.Swaptions`."""

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
    discounts: tuple[np.ndarray, ...]
    forward_exercise: np.ndarray

    def kind_of(self, curve: str) -> str:
        return self.kinds.get(curve, "")

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

    def tables(self, trades: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The trades' tables of flows as ``(trades, f)`` arrays: payment times, accrual fractions and discount factors
        (a trade without quotes: empty)."""
        width = max([legs.time.shape[1] for legs in self.legs] + [1])
        pay_time = np.zeros((trades, width))
        accrual = np.zeros((trades, width))
        discount = np.ones((trades, width))
        for legs, df in zip(self.legs, self.discounts, strict=True):
            w = legs.time.shape[1]
            pay_time[legs.trades, :w] = legs.time
            accrual[legs.trades, :w] = legs.accrual
            discount[legs.trades, :w] = df
        return pay_time, accrual, discount

    def _args(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {"forward": self.forward[rows], "strike": self.strike[rows], "expiry": self.exercise_time[rows],
                "annuity": self.annuity[rows]}

    def price_at(self, vol: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The formula's price of quotes ``rows`` at ``vol`` (each kind's formula on its quotes only)."""
        out = np.full(rows.size, np.nan)
        normal = self.kind[rows] == "normal"
        vol = np.broadcast_to(np.asarray(vol, dtype=np.float64), rows.shape)
        for mask, lognormal in ((normal, False), (~normal, True)):
            if not mask.any():
                continue
            r = rows[mask]
            with np.errstate(all="ignore"):
                if lognormal:
                    black = black_price(**self._args(r), vol=vol[mask], shift=self.shift[r], is_call=self.payer[r])
                    bad = (self.forward[r] + self.shift[r] <= 0) | (self.strike[r] + self.shift[r] <= 0)
                    out[mask] = np.where(bad, np.nan, black)
                else:
                    out[mask] = bachelier_price(**self._args(r), vol=vol[mask], is_call=self.payer[r])
        return out

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
                sums = _leg_sums(legs, local, self.first[q], self.count[q],
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


def _no_swaptions() -> Swaptions:
    empty = np.zeros(0)
    return Swaptions(exercise=empty, start=empty, pay_time=np.zeros((0, 1)), accrual=np.zeros((0, 1)),
                     discount_start=empty, discount_pay=np.ones((0, 1)), fixed_rate=empty, notional=empty,
                     payer=np.zeros(0, dtype=bool), count=np.zeros(0, dtype=np.int64), forward_exercise=empty)
