"""The baskets: per trade its co-terminal swaptions' exercise dates, end, rate, fixed leg and side, from per-trade
arrays (:func:`trade_baskets`) or from a trades book's swaptions and callable and puttable bonds (:func:`book_baskets`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Final

import numpy as np

from ...conventions.dates import as_dates, to_days
from ...conventions.day_counts import DAY_COUNTS, parse_day_counts
from ...conventions.frequencies import parse_frequencies
from ...conventions.names import Problem
from ...errors import InputError

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
    forecast: np.ndarray
    float_frequency: np.ndarray
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
        """One row per (trade, exercise date): ``id, curve, exercise, end, rate, frequency, day_count, payer,
        forecast_curve, float_frequency``."""
        import pandas as pd

        owner = np.repeat(np.arange(len(self)), self.counts)
        return pd.DataFrame({"id": self.id[owner], "curve": self.curve[owner], "exercise": self.exercise,
                             "end": self.end[owner], "rate": self.rate[owner], "frequency": self.frequency[owner],
                             "day_count": self.day_count[owner], "payer": self.payer[owner],
                             "forecast_curve": self.forecast[owner], "float_frequency": self.float_frequency[owner]})


def _per_trade(values: Any, n: int, field: str) -> np.ndarray:
    array = np.asarray(values, dtype=object).reshape(-1)
    if array.size == 1 and n != 1:
        array = np.full(n, array[0], dtype=object)
    if array.size != n:
        raise InputError([(None, field, f"{field} has {array.size} values, expected one per trade ({n})")])
    return array


def trade_baskets(*, id: Sequence[Any] | np.ndarray, curve: Any = "", exercise: Sequence[Sequence[Any]],
                  end: Any, rate: Any = None, frequency: Any = 1, day_count: Any = "30/360", side: Any = "payer",
                  note: Any = None, where: Sequence[str] | None = None, forecast_curve: Any = "",
                  float_frequency: Any = 0) -> Baskets:
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
      forecast_curve: per trade, the curve its swaptions' floating legs are projected on (empty, or its ``curve``:
        one curve); float_frequency: their periods a year (0 or empty: the fixed leg's).

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
    curves = [_name(c) for c in _per_trade(curve, n, "curve").tolist()]
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
    forecast = [_name(v) for v in _per_trade(forecast_curve, n, "forecast_curve").tolist()]
    forecast = ["" if f == c else f for f, c in zip(forecast, curves, strict=True)]  # its own curve: one curve
    floating = _per_trade(float_frequency, n, "float_frequency")
    set_floating = np.flatnonzero([v not in (None, 0, "") and not (isinstance(v, float) and np.isnan(v))
                                   for v in floating.tolist()])
    float_per_year = np.zeros(n, dtype=np.int64)
    if set_floating.size:
        found_per_year, found = parse_frequencies(floating[set_floating])
        for row, _field, message in found:
            bad(int(set_floating[row]), "float_frequency", message.replace("frequency", "float_frequency", 1))
        float_per_year[set_floating] = found_per_year
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
                   payer=payer, note=np.array(notes, dtype=object), where=tuple(places),
                   forecast=np.array(forecast, dtype=object), float_frequency=float_per_year)


def _name(value: object) -> str:
    """A curve's name as a cell gives it (``""``: none)."""
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value).strip()


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
      basket is of payer swaptions). A window without a fixed-leg start date is a note (``no fit``). A swaption
      whose floating leg is projected on a ``forecast_curve`` apart from its curve keeps it and its
      ``float_frequency``: its basket's swaptions are on the two curves
      (:func:`~trinom.analytics.baskets.prepare_baskets`).
    * A **bond with a call or put**: ``european``: ``first_exercise``; ``bermudan``: the coupon dates (its schedule's
      adjusted period ends) from ``first_exercise`` to ``last_exercise`` (the dates the tree exercises on);
      ``american``: ``first_exercise`` and the coupon dates after it up to ``last_exercise`` (one swaption a coupon
      period: the co-terminal basket of a continuous window). A bond with ``schedule.csv`` rows (the book's
      ``schedule``) takes its listed dates instead: ``european`` and ``bermudan`` exactly those, ``american`` those
      and the coupon dates from the first to ``last_exercise`` (default the maturity). Dates on or after maturity
      (no swap left) are dropped, with a note. The end is the maturity, the strike the coupon, the fixed leg the
      bond's frequency and day count; a call is a receiver swaption (the issuer's right to stop paying the coupon),
      a put a payer. Amortization (``notionals.csv``) and exercise prices do not move the basket. A ``float`` bond
      has no basket (its call is on its margin over the forecast rate; a note says so); a ``fixed_to_float`` bond's
      is the swaptions into its fixed part, from its exercise dates before ``switch_date`` to that date, on its
      curve.
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
    forecast = np.full(n, "", dtype=object)
    float_frequency = np.zeros(n, dtype=np.int64)
    legs = (exercise, end, rate, frequency, day_count, side, notes, forecast, float_frequency)
    bonds = np.flatnonzero((kind == "bond") & (option != ""))
    if bonds.size:
        _bond_legs(trades, bonds, legs)
    _swaption_legs(checked, curve_names, legs)
    places = [_where(trades, k).rstrip(": ") or f"trade {k}" for k in range(n)]
    return trade_baskets(id=trades.ids, curve=["" if v is None else str(v) for v in column("curve").tolist()],
                         exercise=exercise, end=end, rate=rate, frequency=frequency, day_count=day_count, side=side,
                         note=notes, where=places, forecast_curve=forecast, float_frequency=float_frequency)


#: The name this function had while it covered bonds only (kept: the same function).
bond_baskets = book_baskets

#: Per trade: its exercise dates, end, fixed rate, frequency, day count, side, note, forecast curve and floating
#: frequency (filled in place).
_Legs = tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
              np.ndarray]
#: No exercise dates.
_NO_DATES: Final[np.ndarray] = np.zeros(0, dtype="datetime64[D]")


def _bond_legs(trades: Any, rows: np.ndarray, legs: _Legs) -> None:
    """The baskets of the bonds ``rows`` (each with a call or put) into ``legs``."""
    from ...conventions import generate_schedules
    from ...instruments.trades import BOND_DEFAULTS

    exercise, end, rate, frequency, day_count, _side, notes, _forecast, _floating = legs
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
    rate[rows] = np.array([np.nan if v is None else float(v) for v in cells("coupon").tolist()])
    frequency[rows] = per_year
    day_count[rows] = cells("day_count", BOND_DEFAULTS["day_count"])
    _floating_bond_legs(trades, rows, dates("switch_date")[0], legs)


def _floating_bond_legs(trades: Any, rows: np.ndarray, switch: np.ndarray, legs: _Legs) -> None:
    """Floating bonds' baskets (``rows``: bonds with a call or put; ``switch``: their switch dates, day numbers):
    a ``float`` bond has none (its call is on its margin over the forecast rate, not on a fixed rate); a
    ``fixed_to_float`` bond's are the swaptions into its fixed part, from each exercise date before the switch to
    the switch date, on its discount curve (the floating part after the switch is worth par at the switch, give or
    take its margin and the deterministic basis, whatever the rates do)."""
    from ...instruments.floating import FIXED_TO_FLOAT, FLOAT

    exercise, end, _rate, _frequency, _day_count, _side, notes, _forecast, _floating = legs
    kind = trades.coupon_types()[rows]
    for k in np.flatnonzero(kind == FLOAT).tolist():
        row = int(rows[k])
        exercise[row] = _NO_DATES
        notes[row] = ("a floating-rate bond's call or put is an option on its margin over the forecast rate, not on a "
                      "fixed rate: no swaption basket (calibrate per curve and price with that model)")
    for k in np.flatnonzero(kind == FIXED_TO_FLOAT).tolist():
        row = int(rows[k])
        days = exercise[row].astype(np.int64)
        kept = days[days < switch[k]]
        end[row] = np.datetime64(int(switch[k]), "D")
        exercise[row] = as_dates(kept)
        if kept.size < days.size:
            notes[row] = (f"exercise dates on or after the switch date {_day(switch[k])} are left out (the bond "
                          "floats from then on): its basket is the swaptions into its fixed part")
        if not kept.size:
            notes[row] = (f"no exercise date before the switch date {_day(switch[k])}: a floating bond's call is on its "
                          "margin, not on a fixed rate (no swaption basket)")


def _swaption_legs(checked: Any, curve_names: Sequence[str] | None, legs: _Legs) -> None:
    """The baskets of the book's swaptions into ``legs``: their exercise dates are the lowering's own
    (:func:`~trinom.instruments.swaption.fixed_leg_periods`) on the rows the book checked (``checked``, its
    problems found and none left)."""
    from ...instruments.swaption import fixed_leg_periods

    specs = _checked_swaptions(checked, curve_names)
    if specs.rows.size == 0:
        return
    exercise, end, rate, frequency, day_count, side, notes, forecast, floating = legs
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
    named = checked.column("forecast_curve")[rows]
    forecast[rows] = ["" if v is None else str(v).strip() for v in named.tolist()]
    floating[rows] = np.asarray(specs.float_frequency, dtype=np.int64)


def _checked_swaptions(checked: Any, curve_names: Sequence[str] | None) -> Any:
    """The swaption rows of a book whose :meth:`~trinom.instruments.trades.Trades.problems` found none, as the
    lowering takes them (:class:`~trinom.instruments.swaption.SwaptionSpecs`): the book keeps the specs its check
    built (:func:`~trinom.instruments.rate_trades.check_rate_rows`), every swaption row among them."""
    from ...instruments.swaption import SwaptionSpecs

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
