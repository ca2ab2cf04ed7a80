"""Dated trades, as a desk writes them: fixed-rate bonds with an optional call or put, and European options on
zero-coupon bonds, given by dates, schedules, day counts and calendars (issue 25; the ``trades.csv`` contract).

A :class:`Trades` book holds one row per trade (the columns of :data:`TRADE_COLUMNS`; an empty cell means "not
applicable" or the default), an as-of date and two optional side tables (:data:`SIDE_COLUMNS`; a pandas DataFrame or a
mapping of columns, or read by :func:`read_trades` from CSV or Parquet): ``schedule`` (``id,date,price``: explicit and
step-down exercise schedules) and ``notionals`` (``id,date,notional``: amortizing notionals). It validates every row
at once (each problem names the row, the field and, for a file, the line; a side table's also its own file and line)
and lowers to the tree-step instruments every engine prices:

* a ``bond`` to a :class:`~trinom.BondPortfolio` row: its coupon schedule generated backward from maturity
  (:mod:`trinom.conventions`), each coupon ``100 * coupon * accrual fraction`` (the bond's day count) paid on the
  period's (adjusted) end date, 100 repaid at maturity; only the flows after the as-of date are kept;
* a ``bond_option`` to a :class:`~trinom.Portfolio` row of the standard convention.

The bond lowering is :func:`lower_dated_bonds`, on arrays (:class:`DatedBonds`; exercise as :class:`ExerciseDates`
and :class:`ExerciseWindows`, amortization as :class:`Amortization`), for any trade that lowers to dated bonds.

**The tree grid** is ``steps_per_year`` steps a year (default :data:`DEFAULT_STEPS_PER_YEAR`, one step a day), its
time the ACT/365F year fraction from the as-of date (the curves' time). **Every date maps to the step nearest its
time** (halves up; a cash flow never before step 1); flows that fall on one step are paid together. At the default
every date is a step of its own.

**Exercise** pays the exercise price, clean per 100 of the notional outstanding, plus the interest accrued at the
exercise date by the bond's day count (QuantLib's ``accruedAmount``; 0 on a coupon date, where exercise is ex-coupon:
the holder keeps the coupon). Where it is on dates, each date is a listed exercise point of the tree
(docs/paper-instrument.md, "Listed exercise points") at its step, its dirty price that sum, exact:

* ``european``: on ``first_exercise`` (or its one ``schedule.csv`` row);
* ``bermudan``: on the coupon dates (adjusted period ends) from ``first_exercise`` to ``last_exercise``, or on exactly
  the trade's ``schedule.csv`` dates, each at its own price;
* ``american``: on every step from ``first_exercise`` to ``last_exercise``; with ``schedule.csv`` rows, from each
  listed date to the day before the next at that date's price, the last to ``last_exercise`` (the maturity where it
  is empty).

An american window is the tree's own (its window of every step: no memory per step) where the tree's accrued
interest is the day count's: the paper's (§6.4) ``(i - S) / (nx - S)`` of the coupon paid at step ``S``, the last cash
flow at or before ``i``. That is linear in steps (ACT days at one step a day) and 0 before the bond's first cash flow
after the as-of date: the steps before it are listed points (at most a coupon period of them). The window is the
tree's only for a bond with one window, no notice days, no amortization and one coupon amount over it: a bond whose
coupons change in the window (ACT/360, ACT/365F, ACT/ACT-ISDA periods of unequal days, business-day adjusted dates;
the tree would accrue the previous coupon's amount), an amortizing bond, an american schedule or notice days make
every step of the window a listed point (16 bytes a step: 5.8 kB per year of window at the default 365 steps a
year, 190 B at 12). What is left of the tree's own accrual: 30/360's days against ACT's (up to 0.005 per 100 against
QuantLib), and resolutions coarser than a day (accrued interest linear in steps between dates).

Where several exercise dates fall on one step (coarse resolutions), the tighter price holds (the lower for a call,
the higher for a put). Exercise dates before the as-of date are gone (a desk's past call dates in ``schedule.csv``
are expired exercise, not an error): a bond whose exercise has all passed is priced without its option. A bond
without an option lowers with a call at a price no tree value reaches (:data:`NO_EXERCISE_PRICE`), which never binds.
A trade with ``schedule.csv`` rows needs ``option`` and ``exercise`` (european: one row); ``first_exercise``,
``last_exercise`` and ``exercise_price`` may be empty, and where given must agree with the schedule (its first date,
its last date (american: ``last_exercise`` on or after it, the end of the last price), its first price) or they are
errors; a row's date must be within the bond's life (issue to maturity) and not repeat.

**Notice days** (``notice_days``, whole calendar days, default 0): the decision is taken that many days before each
exercise date; the point is at the decision date's step and its price is the exercise's value there: the dirty price
paid on the exercise date and the bond's cash flows after the decision step up to the exercise date, discounted to the
decision date by the trade's curve's deterministic forward discount factors (no spread; the base curves the trades are
lowered on: curve scenarios and risk's bumps do not move them, an effect of about shift x notice period). An american
window moves that many days earlier (every step a listed point). An exercise whose decision date is not after the
as-of date is gone.

**Amortizing bonds** (``notionals.csv``): from each row's date, a coupon date of the bond (adjusted or not, before
maturity), the outstanding notional is the row's, in the units of the trade's ``notional`` (which the trade must
give); the difference to the one before is repaid on that date, the rest at maturity. Coupons are paid on the
notional outstanding in their period, everything per 100 of the original notional; exercise prices are per 100 of
the notional outstanding at the exercise date (after a repayment on it), so a point's dirty price is the price plus
accrued times the outstanding share; the accrued interest at the as-of date is on the notional outstanding then. A
notional may not increase, be negative or exceed the trade's.

**Early cash flows.** The tree adds a flow of step ``s`` to the nodes of step ``s - 1``'s width (the paper's Q1), so
while it grows the two outermost nodes of step ``s`` miss it: a third of a flow at step 1, 5.6% at step 2, 0.9% at
step 3 (at any resolution: a coupon in the next half month of a 12-steps-a-year tree, or tomorrow's at the default).
Every flow at or before the first exercise step (every one of a bond without an option), but the maturity's (paid on
every node), is raised by the share it misses, which depends on ``a``, ``sigma`` and the step only
(:func:`_edge_shares`), so that its value is the curve's. One after the first exercise step is not (an exercise
before it sees it): a window opening in the first few steps misses that share of the flows in them.

``spread`` is the OAS as a decimal (continuous, added to the short rate; the book's percent times 100). Prices are
per 100 notional: ``price`` (dirty, the tree's root, the value at the as-of date), ``accrued`` (the day count's
interest accrued at the as-of date, QuantLib's ``accruedAmount``) and ``clean = price - accrued``.

>>> import trinom
>>> from trinom.model import DatedCurve
>>> curve = DatedCurve(as_of="2026-11-25", dates=["2027-11-25", "2036-11-25"], zero_rates=[0.03, 0.04])
>>> trades = Trades(as_of="2026-11-25", id=["B1"], type=["bond"], issue=["2024-03-15"], maturity=["2030-03-15"],
...                 coupon=[0.05], frequency=[2], day_count=["30/360"], a=[0.03], sigma=[0.01])
>>> result = trinom.price(trades, {"EUR": curve}, backend="reference")
>>> round(float(result.accrued[0]), 6), round(float(result.clean[0]), 2)
(0.972222, 103.72)
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .. import parquet
from ..constants import CALL, JMAX_FACTOR, PUT
from ..conventions import (
    Factorized,
    Schedules,
    accrual_fractions,
    accrued_interest,
    generate_schedules,
    parse_calendars,
    parse_conventions,
    parse_day_counts,
    parse_frequencies,
    to_days,
)
from ..conventions.dates import as_dates
from ..conventions.day_counts import ACT_ACT_ICMA, fractions_by_code
from ..conventions.icma import QuasiCouponDates, icma_fractions
from ..conventions.names import Problem
from ..csvtable import read_table_lines
from ..curve import YieldCurve
from ..errors import InputError
from ..row_ids import check_row_ids
from .bond import BondPortfolio
from .cap import CapSpecs, lower_caps
from .legs import Legs
from .option import Portfolio
from .rate_trades import RATE_COLUMNS, RATE_TYPES, RateRows, TradeColumns, check_rate_rows
from .swaption import lower_swaptions

#: The columns of ``trades.csv``, in the contract's order (a file may hold them in any order, and leave out those
#: it does not use).
TRADE_COLUMNS: Final[tuple[str, ...]] = (
    "id", "type", "notional", "issue", "maturity", "coupon", "frequency", "day_count", "calendar", "convention",
    "option", "exercise", "first_exercise", "last_exercise", "exercise_price", "expiry", "strike", "a", "sigma",
    "spread", "curve", "steps_per_year", "notice_days", *RATE_COLUMNS)
#: The columns of the optional ``schedule.csv`` (explicit and step-down exercise schedules: a trade's exercise dates
#: and their clean prices per 100 of the outstanding notional) and ``notionals.csv`` (amortizing notionals: from a
#: coupon date on, the notional outstanding, in the trade's notional units), by the name each is given as.
SIDE_COLUMNS: Final[dict[str, tuple[str, ...]]] = {"schedule": ("id", "date", "price"),
                                                   "notionals": ("id", "date", "notional")}
#: Trade types.
TYPES: Final[tuple[str, ...]] = ("bond", "bond_option", *RATE_TYPES)
#: Trade types that lower to bond trees (the others lower to option trees).
_BOND_FAMILY = (0, 2)
#: Exercise styles of a bond's call or put.
EXERCISES: Final[tuple[str, ...]] = ("european", "bermudan", "american")
#: Tree steps a year where a trade gives none: one a day, so that every date is a step of its own.
DEFAULT_STEPS_PER_YEAR: Final[int] = 365
#: Most steps a year a trade may ask for.
MAX_STEPS_PER_YEAR: Final[int] = 36500
#: Most notice days an exercise may have (a hundred years of calendar days).
MAX_NOTICE_DAYS: Final[int] = 36500
#: The exercise price of the call a bond without an option lowers with: no tree value reaches it.
NO_EXERCISE_PRICE: Final[float] = 1e30
#: Defaults of a bond's conventions where its cells are empty.
BOND_DEFAULTS: Final[dict[str, str]] = {"day_count": "30/360", "calendar": "NONE", "convention": "F"}
#: Whole days in the curves' year (ACT/365F).
YEAR_DAYS: Final[int] = 365
#: The steps within which the lowering pays a cash flow in full (beyond, the tree misses less than 1e-16 of it).
EDGE_STEPS: Final[int] = 24
#: Fields that only a bond or only a bond option may fill.
_BOND_ONLY = ("issue", "coupon", "frequency", "day_count", "calendar", "convention", "exercise", "first_exercise",
              "last_exercise", "exercise_price", "notice_days")
_OPTION_ONLY = ("expiry", "strike")
#: A bond's option cells, and its exercise styles by index in :data:`EXERCISES`.
_OPTIONS = ("call", "put")
_PUT_CELL = 1
_EUROPEAN, _BERMUDAN, _AMERICAN = range(3)



def _cells(values: object, size: int, field: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A column as an object array of ``size`` cells (None where empty: ``None``, ``""``, NaN), and, where it was
    given as an array of numbers, those numbers as ``float64`` (NaN where empty)."""
    if values is None:
        return np.full(size, None, dtype=object), None
    array: np.ndarray | None = None
    if isinstance(values, np.ndarray) and values.size == size:  # no object copy of a column of numbers or text
        raw = values.reshape(-1)
    else:
        array = np.asarray(values, dtype=object).reshape(-1)
        if array.size == 1 and size != 1:
            array = np.full(size, array[0], dtype=object)
        if array.size != size:
            raise InputError([(None, field, f"{field} has {array.size} values, expected one per trade ({size})")])
        raw = np.asarray(values).reshape(-1)
    if raw.size == size and raw.dtype.kind in "fiub":  # numbers: only NaN is empty
        out = raw.astype(object)
        if raw.dtype.kind == "f":
            out[np.isnan(raw)] = None
        return out, raw.astype(np.float64)
    if raw.size == size and raw.dtype.kind == "U":  # text (a CSV's cells): blank is empty
        stripped = np.char.strip(raw)
        out = stripped.astype(object)
        out[stripped == ""] = None
        return out, None
    cells = (np.asarray(values, dtype=object).reshape(-1) if array is None else array).tolist()
    out = np.empty(size, dtype=object)
    if set(map(type, cells)) <= {str, type(None)}:  # text and empty cells (a frame's): one pass
        out[:] = [(value and value.strip()) or None for value in cells]
        return out, None
    for k, value in enumerate(cells):
        if isinstance(value, str):
            value = value.strip()
            out[k] = value if value else None
        elif value is None or (isinstance(value, float) and math.isnan(value)):
            out[k] = None
        elif isinstance(value, (np.datetime64,)) and np.isnat(value):
            out[k] = None
        else:
            out[k] = value
    return out, None


def _size(values: object) -> int:
    """The number of cells of a column (a scalar is one)."""
    if isinstance(values, np.ndarray):
        return int(values.size)
    return int(np.asarray(values, dtype=object).reshape(-1).size)


@dataclass(frozen=True, eq=False)
class _Parsed:
    """The trades' cells parsed into typed arrays, and every problem found (rows numbered in the book)."""

    kind: np.ndarray  #: index into :data:`TYPES` (-1: bad)
    numbers: dict[str, np.ndarray]  #: float columns (NaN where empty)
    dates: dict[str, np.ndarray]  #: day numbers (0 where empty or bad)
    present: dict[str, np.ndarray]  #: which cells were given
    option: np.ndarray  #: index into ``("call", "put")`` (-1: empty or bad)
    exercise: np.ndarray  #: index into :data:`EXERCISES` (-1: empty or bad)
    problems: list[Problem]


class Trades:
    """A book of dated trades (one row per trade) and its as-of date; see the module's docstring.

    Every column of :data:`TRADE_COLUMNS` is a keyword (a sequence of cells, one per trade, or one value for all);
    the ones a book does not use may be left out. ``where``: per row, where it came from (``"trades.csv line 3"``),
    prefixed to its messages. ``schedule``: explicit or step-down exercise schedules, a table (a DataFrame or a
    mapping of columns) ``id,date,price``; ``notionals``: amortizing notionals, ``id,date,notional`` (see the
    module's docstring). Construction checks the shape only; :meth:`problems` checks the values.
    """

    def __init__(self, *, as_of: Any, where: Sequence[str] | None = None, schedule: Any = None, notionals: Any = None,
                 **columns: Any):
        unknown = [name for name in columns if name not in TRADE_COLUMNS]
        if unknown:
            raise InputError([(None, name, f"unknown column '{name}' (trades have: {', '.join(TRADE_COLUMNS)})")
                              for name in unknown])
        if "type" not in columns:
            raise InputError([(None, "type", f"a trade needs its type ({', '.join(TYPES)}): missing column 'type'")])
        # the trades' count: the longest column's (a single value is every trade's)
        size = max(_size(values) for values in columns.values())
        self._size = size
        self._cells: dict[str, np.ndarray] = {}
        self._given_numbers: dict[str, np.ndarray] = {}  # columns given as arrays of numbers, as float64
        for name in TRADE_COLUMNS:
            self._cells[name], numbers = _cells(columns.get(name), size, name)
            if numbers is not None:
                self._given_numbers[name] = numbers
        days, problems = to_days(np.array([as_of], dtype=object) if isinstance(as_of, str) else np.asarray([as_of]),
                                 field="as_of")
        if problems:
            raise InputError([(None, "as_of", f"the as-of date {as_of!r} is not a date (YYYY-MM-DD)")])
        self.as_of_day = int(days[0])
        self.as_of = np.datetime64(self.as_of_day, "D")
        self._where = None if where is None else [str(w) for w in where]
        if self._where is not None and len(self._where) != size:
            raise InputError([(None, "where", f"where has {len(self._where)} entries, expected {size}")])
        self._side = {"schedule": _side_table(schedule, "schedule"), "notionals": _side_table(notionals, "notionals")}
        self._memo: dict[object, Any] = {}

    @classmethod
    def from_frame(cls, frame: Any, *, as_of: Any, schedule: Any = None, notionals: Any = None) -> Trades:
        """From a pandas DataFrame (or a mapping of column name to values) with the ``trades.csv`` columns (and the
        optional schedule and notionals tables)."""
        if hasattr(frame, "columns") and hasattr(frame, "to_numpy"):
            columns = {str(c): frame[c].to_numpy(dtype=object) for c in frame.columns}
        else:
            columns = {str(k): v for k, v in dict(frame).items()}
        return cls(as_of=as_of, schedule=schedule, notionals=notionals, **columns)

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"Trades({len(self)} trades as of {self.as_of})"

    @property
    def ids(self) -> list[str]:
        """The trades' ids (row numbers where the ``id`` column is empty)."""
        return [str(v) if v is not None else str(k) for k, v in enumerate(self._cells["id"].tolist())]

    def column(self, name: str) -> np.ndarray:
        """One column's cells as given (None where empty)."""
        return self._cells[name]

    def with_columns(self, **columns: Any) -> Trades:
        """The same book (as-of date, rows' places, schedules and notionals) with ``columns`` replaced, e.g. ``a``
        and ``sigma`` from a calibration (:func:`trinom.calibrate_cli.read_model_file`)."""
        unknown = [name for name in columns if name not in TRADE_COLUMNS]
        if unknown:
            raise InputError([(None, name, f"unknown column '{name}' (trades have: {', '.join(TRADE_COLUMNS)})")
                              for name in unknown])
        book = copy.copy(self)
        book._cells, book._given_numbers, book._memo = dict(self._cells), dict(self._given_numbers), {}
        for name, values in columns.items():
            book._cells[name], numbers = _cells(values, len(self), name)
            book._given_numbers.pop(name, None)
            if numbers is not None:
                book._given_numbers[name] = numbers
        return book

    # --- parsing and validation --------------------------------------------------------------------------
    def _parsed(self) -> _Parsed:
        if "parsed" not in self._memo:
            self._memo["parsed"] = self._parse()
        return self._memo["parsed"]

    def _factorized(self, name: str) -> Factorized:
        """One column's cells as their distinct values and each row's index among them (once per column): each
        distinct cell is parsed once."""
        key = ("factorized", name)
        if key not in self._memo:
            self._memo[key] = Factorized.of(self._cells[name], name)
        return self._memo[key]

    def _choices(self, name: str, choices: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the index in ``choices`` of a text column's cell (stripped, in lower case; -1: empty or another
        value), and whether the cell is empty."""
        cells = self._factorized(name)
        text = ["" if value is None else str(value).strip().lower() for value in cells.distinct]
        index = np.array([choices.index(value) if value in choices else -1 for value in text], dtype=np.int64)
        return index[cells.inverse], np.array([not value for value in text], dtype=bool)[cells.inverse]

    def _parse(self) -> _Parsed:
        problems: list[Problem] = []
        cells = self._cells
        size = len(self)
        present = {name: ~np.isnan(self._given_numbers[name]) if name in self._given_numbers
                   else np.not_equal(cells[name], None) for name in TRADE_COLUMNS}
        kind, no_type = self._choices("type", TYPES)
        option, _empty = self._choices("option", _OPTIONS)
        exercise, _empty = self._choices("exercise", EXERCISES)
        for k in np.flatnonzero(kind < 0):
            if no_type[k]:
                problems.append((int(k), "type", f"type is missing: {', '.join(TYPES)}"))
            else:
                problems.append((int(k), "type", f"type {cells['type'][k]!r} is not a trade type ({', '.join(TYPES)})"))
        numbers: dict[str, np.ndarray] = {}
        for name in ("notional", "coupon", "exercise_price", "strike", "a", "sigma", "spread", "steps_per_year", "rate",
                     "notice_days"):
            if name in self._given_numbers:  # an array of numbers: NaN is empty, only an infinite one is bad
                values = self._given_numbers[name].copy()
                for k in np.flatnonzero(np.isinf(values)):
                    problems.append((int(k), name, f"{name} must be a finite number, got {cells[name][k]!r}"))
                numbers[name] = values
                continue
            values = np.full(size, np.nan)
            given = np.flatnonzero(present[name])
            try:  # every cell a number (or a number's text): one conversion
                values[given] = np.asarray(cells[name][given].tolist(), dtype=np.float64)
                given = given[~np.isfinite(values[given])]  # only the non-finite ones need a look
            except (TypeError, ValueError):
                pass
            for k in given:
                try:
                    values[k] = float(cells[name][k])
                except (TypeError, ValueError):
                    problems.append((int(k), name, f"{name} {cells[name][k]!r} is not a number"))
                    continue
                if not math.isfinite(values[k]):
                    problems.append((int(k), name, f"{name} must be a finite number, got {cells[name][k]!r}"))
            numbers[name] = values
        dates: dict[str, np.ndarray] = {}
        for name in ("issue", "maturity", "first_exercise", "last_exercise", "expiry", "start"):
            rows = np.flatnonzero(present[name])
            days = np.zeros(size, dtype=np.int64)
            if rows.size:  # each distinct date once
                given = self._factorized(name).take(rows)
                values = given.values()
                if not all(isinstance(v, str) for v in values.tolist()):
                    values = np.array([_date_text(v) for v in values.tolist()], dtype=object)
                found, bad = to_days(values, field=name)
                days[rows] = found[given.inverse]
                problems += _expanded(bad, given.inverse, rows)
            dates[name] = days
        return _Parsed(kind=kind, numbers=numbers, dates=dates, present=present, option=option, exercise=exercise,
                       problems=problems)

    def problems(self, curve_names: Sequence[str] | None = None) -> list[Problem]:
        """Every problem as ``(row, field, message)``, in row order (``curve_names``: the curves a trade may name;
        None: any). Cached per set of names."""
        key = ("problems", None if curve_names is None else tuple(curve_names))
        if key not in self._memo:
            self._memo[key] = self._find_problems(curve_names)
        return list(self._memo[key])

    def _find_problems(self, curve_names: Sequence[str] | None) -> list[Problem]:
        p = self._parsed()
        problems = list(p.problems)
        bad_cells = {(row, field) for row, field, _m in problems}
        is_bond, is_option = p.kind == 0, p.kind == 1
        n, d, present = p.numbers, p.dates, p.present

        def need(mask: np.ndarray, field: str, what: str) -> None:
            for row in np.flatnonzero(mask & ~present[field]):
                problems.append((int(row), field, f"{field} is missing: {what}"))

        def rule(mask: np.ndarray, field: str, text: str) -> None:
            for row in np.flatnonzero(mask & present[field]):
                if (row, field) not in bad_cells:
                    problems.append((int(row), field, text.format(value=self._cells[field][row])))

        for field in _OPTION_ONLY:
            rule(is_bond, field, f"{field} does not apply to a bond (it is a bond option's), got {{value!r}}")
        for field in _BOND_ONLY:
            rule(is_option, field, f"{field} does not apply to a bond_option (it is a bond's), got {{value!r}}")
        need(p.kind >= 0, "maturity", "the bond's maturity date (YYYY-MM-DD)")
        need(p.kind >= 0, "a", "the Hull-White mean reversion a")
        need(p.kind >= 0, "sigma", "the Hull-White volatility sigma")
        need(is_bond, "issue", "the bond's issue date (its schedule runs from it)")
        need(is_bond, "coupon", "the annual coupon rate as a decimal (0.05), 0 for a zero-coupon bond")
        need(is_bond, "frequency", "coupons a year: 1, 2, 4 or 12")
        need(is_option, "expiry", "the option's expiry date (YYYY-MM-DD)")
        need(is_option, "strike", "the strike per 100 of the bond's face")
        need(is_option, "option", "call or put")
        with np.errstate(invalid="ignore"):
            rule(n["a"] <= 0, "a", "a must be > 0, got {value}")
            rule(n["sigma"] <= 0, "sigma", "sigma must be > 0, got {value}")
            rule(n["notional"] <= 0, "notional", "notional must be > 0, got {value}")
            rule(n["coupon"] < 0, "coupon", "coupon must be >= 0 (a decimal annual rate), got {value}")
            rule(n["coupon"] > 1, "coupon", "coupon must be a decimal annual rate (0.05 for 5%), got {value}")
            rule(n["strike"] < 0, "strike", "strike must be >= 0, got {value}")
            rule(n["exercise_price"] < 0, "exercise_price", "exercise_price must be >= 0, got {value}")
            spy = n["steps_per_year"]
            rule((spy < 1) | (spy > MAX_STEPS_PER_YEAR) | (spy != np.round(spy)), "steps_per_year",
                 f"steps_per_year must be a whole number in 1..{MAX_STEPS_PER_YEAR}, got {{value}}")
            notice = n["notice_days"]
            rule((notice < 0) | (notice > MAX_NOTICE_DAYS) | (notice != np.round(notice)), "notice_days",
                 f"notice_days must be a whole number of calendar days in 0..{MAX_NOTICE_DAYS}, got {{value}}")
        for field, parse in (("frequency", parse_frequencies), ("day_count", parse_day_counts),
                             ("convention", parse_conventions)):
            rows = np.flatnonzero(is_bond & present[field])
            if rows.size:
                problems += parse(self._factorized(field).take(rows), field=field, rows=rows)[1]
        rows = np.flatnonzero(is_bond & present["calendar"])
        if rows.size:
            problems += parse_calendars(self._factorized("calendar").take(rows), field="calendar", rows=rows)[2]
        # options: call/put; a bond's also needs an exercise style, dates and a price
        classic = is_bond | is_option
        for field in RATE_COLUMNS:
            rule(is_bond, field, f"{field} does not apply to a bond (it is a swaption's or a cap's), got {{value!r}}")
            rule(is_option, field, f"{field} does not apply to a bond_option (it is a swaption's or a cap's), got "
                                   "{value!r}")
        for row in np.flatnonzero(present["option"] & classic & (p.option < 0)):
            problems.append((int(row), "option", f"option must be call or put, got {self._cells['option'][row]!r}"))
        has_option = is_bond & present["option"]
        scheduled = np.zeros(len(self), dtype=bool)  # trades that schedule.csv rows name: it gives their exercise
        scheduled[self._side_rows("schedule")[2]] = True
        need(has_option, "exercise", "european, bermudan or american (the bond has an option)")
        need(has_option & ~scheduled, "first_exercise", "the first exercise date (the bond has an option and no "
             "schedule rows)")
        need(has_option & ~scheduled, "exercise_price", "the exercise price, clean per 100 (the bond has an option "
             "and no schedule rows)")
        for row in np.flatnonzero(has_option & present["exercise"] & (p.exercise < 0)):
            problems.append((int(row), "exercise", f"exercise must be european, bermudan or american, got "
                             f"{self._cells['exercise'][row]!r}"))
        windowed = has_option & ((p.exercise == _BERMUDAN) | (p.exercise == _AMERICAN))
        need(windowed & ~scheduled, "last_exercise", "the last exercise date (a bermudan or american option has a "
             "window)")
        for field in ("exercise", "first_exercise", "last_exercise", "exercise_price", "notice_days"):
            rule(is_bond & ~present["option"], field, f"{field} is given but option is empty (call or put?), "
                                                      "got {value!r}")
        # dates: order and the bond's life
        ok = {name: present[name].copy() for name in d}
        for row, field in bad_cells:
            if field in ok and row is not None:
                ok[field][row] = False
        as_of = self.as_of_day
        for row in np.flatnonzero(is_bond & ok["issue"] & ok["maturity"] & (d["maturity"] <= d["issue"])):
            problems.append((int(row), "maturity", f"maturity {_day(d['maturity'][row])} must be after the issue date "
                             f"{_day(d['issue'][row])}"))
        for row in np.flatnonzero((p.kind >= 0) & ok["maturity"] & (d["maturity"] <= as_of)):
            problems.append((int(row), "maturity", f"maturity {_day(d['maturity'][row])} is not after the as-of date "
                             f"{self.as_of}: the bond has matured"))
        for row in np.flatnonzero(is_option & ok["expiry"] & (d["expiry"] < as_of)):
            problems.append((int(row), "expiry", f"expiry {_day(d['expiry'][row])} is before the as-of date "
                             f"{self.as_of}: the option has expired"))
        for row in np.flatnonzero(is_option & ok["expiry"] & ok["maturity"] & (d["expiry"] > d["maturity"])):
            problems.append((int(row), "expiry", f"expiry {_day(d['expiry'][row])} is after the bond's maturity "
                             f"{_day(d['maturity'][row])}"))
        for name in ("first_exercise", "last_exercise"):
            outside = has_option & ok[name] & ok["issue"] & ok["maturity"] & (
                (d[name] < d["issue"]) | (d[name] > d["maturity"]))
            for row in np.flatnonzero(outside):
                problems.append((int(row), name, f"{name} {_day(d[name][row])} is outside the bond's life "
                                 f"({_day(d['issue'][row])} to {_day(d['maturity'][row])})"))
        window = windowed & ok["first_exercise"] & ok["last_exercise"] & (d["last_exercise"] < d["first_exercise"])
        for row in np.flatnonzero(window):
            problems.append((int(row), "last_exercise", f"last_exercise {_day(d['last_exercise'][row])} is before "
                             f"first_exercise {_day(d['first_exercise'][row])}"))
        european = has_option & (p.exercise == _EUROPEAN) & present["last_exercise"] & ok["first_exercise"]
        for row in np.flatnonzero(european & ok["last_exercise"] & (d["last_exercise"] != d["first_exercise"])):
            problems.append((int(row), "last_exercise", "a european option has one exercise date: leave last_exercise "
                             "empty or equal to first_exercise"))
        problems += self._schedule_problems(ok)
        problems += self._notionals_problems()
        if curve_names is not None:
            names = list(curve_names)
            curves = self._factorized("curve")
            unknown = np.array([str(value) not in names for value in curves.distinct], dtype=bool)[curves.inverse]
            for row in np.flatnonzero((p.kind >= 0) & present["curve"] & unknown):
                problems.append((int(row), "curve", f"curve {self._cells['curve'][row]!r} is not one of the curves "
                                 f"({', '.join(names)})"))
            if len(names) != 1:
                need(p.kind >= 0, "curve", f"the curve's name: the market has {len(names)} curves ({', '.join(names)})")
        rate = self._rate_rows(problems, ok)
        self._memo[("rate", None if curve_names is None else tuple(curve_names))] = rate
        problems = self._where_prefixed(problems + rate.problems)
        problems.sort(key=lambda item: -1 if item[0] is None else item[0])
        return problems

    def _rate_rows(self, found: list[Problem], read: Mapping[str, np.ndarray]) -> RateRows:
        """The swaption, cap and floor rows checked (:mod:`trinom.instruments.rate_trades`), given the problems the
        book found already and which date cells it read."""
        p = self._parsed()
        types = np.array([TYPES[k] if k >= 0 else "" for k in p.kind.tolist()], dtype=object)
        earlier = {int(row) for row, _f, _m in found if row is not None and p.kind[row] >= 2}
        book = TradeColumns(cells=self._cells, numbers=p.numbers, dates=p.dates, read=dict(read),
                            as_of_day=self.as_of_day, steps_per_year=self._steps_per_year())
        return check_rate_rows(book, types, earlier)

    def _where_prefixed(self, problems: list[Problem]) -> list[Problem]:
        if self._where is None:
            return problems
        return [(row, field, message if row is None else f"{self._where[row]}: {message}")
                for row, field, message in problems]

    # --- schedule.csv and notionals.csv ----------------------------------------------------------------
    def _side_rows(self, kind: str) -> tuple[_SideRows, list[Problem], np.ndarray]:
        """A side table's readable rows (of a trade of the book, with a date and a value that read), in trade-row and
        date order; the problems of its cells; and the trade rows any of its rows names."""
        key = ("side", kind)
        if key not in self._memo:
            self._memo[key] = self._read_side(kind)
        return self._memo[key]

    def _read_side(self, kind: str) -> tuple[_SideRows, list[Problem], np.ndarray]:
        table = self._side[kind]
        if table is None or len(table) == 0:
            return _SideRows.empty(), [], np.zeros(0, dtype=np.int64)
        problems: list[Problem] = []
        size = len(table)
        where = np.array(table.where, dtype=object)
        value_name = SIDE_COLUMNS[kind][2]
        rows_of: dict[str, list[int]] = {}
        for row, name in enumerate(self.ids):
            rows_of.setdefault(name, []).append(row)
        ids = Factorized.of(_cells(table.ids, size, f"{kind}.id")[0], f"{kind}.id")

        def trade_of(value: object) -> int:  # the one row of the id; -1: none, -2: several
            found = [] if value is None else rows_of.get(str(value), [])
            return found[0] if len(found) == 1 else -1 if not found else -2

        trade = np.array([trade_of(value) for value in ids.distinct], dtype=np.int64)
        row = trade[ids.inverse] if size else np.zeros(0, dtype=np.int64)
        for k in np.flatnonzero(row < 0):
            name = ids[int(k)]
            if name is None:
                text = "the id is empty: each row names the trade it belongs to"
            elif row[k] == -1:
                text = f"id {str(name)!r} is not a trade of the book"
            else:
                text = f"id {str(name)!r} names several trades of the book (rows {rows_of[str(name)]}): ids must be unique"
            problems.append((None, f"{kind}.id", f"{where[k]}: {text}"))
        known = row >= 0
        readable = known.copy()
        dates = _cells(table.dates, size, f"{kind}.date")[0]
        day = np.zeros(size, dtype=np.int64)
        given = np.flatnonzero(known & np.not_equal(dates, None))
        for k in np.flatnonzero(known & np.equal(dates, None)):
            problems.append((int(row[k]), f"{kind}.date", f"{where[k]}: date is missing"))
            readable[k] = False
        if given.size:
            cells = Factorized.of(dates[given], f"{kind}.date")
            found, bad = to_days(np.array([_date_text(v) for v in cells.distinct], dtype=object), field=f"{kind}.date")
            day[given] = found[cells.inverse]
            bad_values = np.zeros(len(cells.distinct), dtype=bool)
            bad_values[[int(value) for value, _f, _m in bad]] = True
            for k in given[bad_values[cells.inverse]]:
                problems.append((int(row[k]), f"{kind}.date", f"{where[k]}: date {dates[k]!r} is not a date "
                                 "(YYYY-MM-DD)"))
                readable[k] = False
        cells, numbers = _cells(table.values, size, f"{kind}.{value_name}")
        present = np.not_equal(cells, None)
        values = numbers.copy() if numbers is not None else np.full(size, np.nan)
        if numbers is None:
            given = np.flatnonzero(present)
            try:  # every cell a number's text: one conversion
                values[given] = np.asarray(cells[given].tolist(), dtype=np.float64)
            except (TypeError, ValueError):
                for k in given:
                    try:
                        values[k] = float(cells[k])
                    except (TypeError, ValueError):
                        values[k] = np.nan
        with np.errstate(invalid="ignore"):
            bad = known & (~present | ~np.isfinite(values) | (values < 0))
        for k in np.flatnonzero(bad):
            text = (f"{value_name} is missing" if not present[k] else
                    f"{value_name} must be a finite number >= 0, got {cells[k]!r}")
            problems.append((int(row[k]), f"{kind}.{value_name}", f"{where[k]}: {text}"))
        readable &= ~bad
        order = np.flatnonzero(readable)
        order = order[np.lexsort((day[order], row[order]))]
        rows = _SideRows(row=row[order], day=day[order], value=values[order], where=where[order])
        return rows, problems, np.unique(row[known])

    def _schedule_problems(self, ok: Mapping[str, np.ndarray]) -> list[Problem]:
        """Problems of the schedule rows against their trades: a bond option's or an optionless bond's rows, dates
        outside the bond's life or given twice, a european with several dates, and ``first_exercise``,
        ``last_exercise`` or ``exercise_price`` cells that disagree with the schedule."""
        rows, problems, _named = self._side_rows("schedule")
        problems = list(problems)
        if rows.row.size == 0:
            return problems
        p = self._parsed()
        d, r, where, day = p.dates, rows.row, rows.where, rows.day
        ids = self.ids
        starts, stops = rows.bounds()
        for k in starts[p.kind[r[starts]] == 1]:
            problems.append((int(r[k]), "schedule.id", f"{where[k]}: a bond_option takes no exercise schedule (its "
                             "expiry and strike are its exercise)"))
        for k in starts[p.kind[r[starts]] >= 2]:
            problems.append((int(r[k]), "schedule.id", f"{where[k]}: a {TYPES[p.kind[r[k]]]} takes no exercise "
                             "schedule (schedule.csv is for bonds; a swaption's dates are its fixed leg's)"))
        bond = p.kind[r] == 0
        for k in starts[bond[starts] & ~p.present["option"][r[starts]]]:
            problems.append((int(r[k]), "option", f"option is missing: {where[k]} gives the bond an exercise schedule, "
                             "but the bond has no call or put"))
        life = bond & ok["issue"][r] & ok["maturity"][r]
        for k in np.flatnonzero(life & ((day < d["issue"][r]) | (day > d["maturity"][r]))):
            problems.append((int(r[k]), "schedule.date", f"{where[k]}: date {_day(day[k])} is outside the bond's life "
                             f"({_day(d['issue'][r[k]])} to {_day(d['maturity'][r[k]])})"))
        for k in np.flatnonzero((r[1:] == r[:-1]) & (day[1:] == day[:-1])) + 1:
            problems.append((int(r[k]), "schedule.date", f"{where[k]}: date {_day(day[k])} is repeated for trade "
                             f"{ids[r[k]]!r} ({where[k - 1]} gives it too)"))
        style = p.exercise[r[starts]]
        optioned = bond[starts] & p.present["option"][r[starts]]
        for k, stop in zip(starts[optioned & (style == _EUROPEAN) & (stops - starts > 1)],
                           stops[optioned & (style == _EUROPEAN) & (stops - starts > 1)], strict=True):
            problems.append((int(r[k]), "schedule.date", f"{where[k + 1]}: a european option has one exercise date, "
                             f"but trade {ids[r[k]]!r} has {stop - k} schedule rows ({where[k]}, ...): make it "
                             "bermudan"))
        # the row's own exercise cells, where given, agree with its schedule
        first, final = starts[optioned], stops[optioned] - 1
        row = r[first]
        american = p.exercise[row] == _AMERICAN
        for field, listed, at, mask in (("first_exercise", day[first], first, np.ones(row.size, dtype=bool)),
                                        ("last_exercise", day[final], final, ~american)):
            for j in np.flatnonzero(mask & ok[field][row] & (d[field][row] != listed)):
                problems.append((int(row[j]), field, f"{field} {_day(d[field][row[j]])} disagrees with the schedule "
                                 f"({where[at[j]]}: {_day(listed[j])}): leave {field} empty or make them agree"))
        for j in np.flatnonzero(american & ok["last_exercise"][row] & (d["last_exercise"][row] < day[final])):
            problems.append((int(row[j]), "last_exercise", f"last_exercise {_day(d['last_exercise'][row[j]])} is before "
                             f"the schedule's last date ({where[final[j]]}: {_day(day[final[j]])}): an american "
                             "schedule's last price holds from its date to last_exercise"))
        price = p.numbers["exercise_price"][row]
        for j in np.flatnonzero(np.isfinite(price) & (price != rows.value[first])):
            problems.append((int(row[j]), "exercise_price", f"exercise_price {price[j]:g} disagrees with the "
                             f"schedule's first price ({where[first[j]]}: {rows.value[first[j]]:g}): leave "
                             "exercise_price empty or make them agree"))
        return problems

    def _notionals_problems(self) -> list[Problem]:
        """Problems of the notionals rows against their trades: a bond option's rows, a bond without its notional,
        notionals above it or increasing, dates given twice (a date that is no coupon date: when lowering)."""
        rows, problems, _named = self._side_rows("notionals")
        problems = list(problems)
        if rows.row.size == 0:
            return problems
        p = self._parsed()
        r, where, day, value = rows.row, rows.where, rows.day, rows.value
        ids = self.ids
        starts, _stops = rows.bounds()
        for k in starts[p.kind[r[starts]] >= 1]:
            problems.append((int(r[k]), "notionals.id", f"{where[k]}: a {TYPES[p.kind[r[k]]]} does not amortize "
                             "(notionals.csv is for bonds)"))
        bond = p.kind[r] == 0
        notional = p.numbers["notional"][r]
        for k in starts[bond[starts] & ~p.present["notional"][r[starts]]]:
            problems.append((int(r[k]), "notional", f"notional is missing: {where[k]} gives the bond's outstanding "
                             "notionals, in the units of its notional"))
        for k in np.flatnonzero(bond & (value > notional)):
            problems.append((int(r[k]), "notionals.notional", f"{where[k]}: notional {value[k]:g} is more than the "
                             f"trade's notional {notional[k]:g}"))
        same = (r[1:] == r[:-1]) & bond[1:]
        for k in np.flatnonzero(same & (day[1:] == day[:-1])) + 1:
            problems.append((int(r[k]), "notionals.date", f"{where[k]}: date {_day(day[k])} is repeated for trade "
                             f"{ids[r[k]]!r} ({where[k - 1]} gives it too)"))
        for k in np.flatnonzero(same & (day[1:] > day[:-1]) & (value[1:] > value[:-1])) + 1:
            problems.append((int(r[k]), "notionals.notional", f"{where[k]}: notional {value[k]:g} is more than the "
                             f"{value[k - 1]:g} outstanding before it ({where[k - 1]}): an amortizing notional only "
                             "decreases"))
        return problems

    # --- lowering --------------------------------------------------------------------------------------
    def steps_per_year(self) -> np.ndarray:
        """Each trade's tree steps a year (its own, or :data:`DEFAULT_STEPS_PER_YEAR`)."""
        return self._steps_per_year().copy()

    def _steps_per_year(self) -> np.ndarray:
        if "steps_per_year" not in self._memo:
            spy = self._parsed().numbers["steps_per_year"]
            good = np.isfinite(spy) & (spy >= 1) & (spy <= MAX_STEPS_PER_YEAR)
            self._memo["steps_per_year"] = np.where(good, np.round(np.where(good, spy, 1)),
                                                    DEFAULT_STEPS_PER_YEAR).astype(np.int64)
        return self._memo["steps_per_year"]

    def legs(self, curve_names: Sequence[str], curves: Sequence[YieldCurve] | None = None) -> Legs:
        """How the trees of :meth:`instruments` add up to trades: one tree of weight 1 per bond, bond option and bad
        trade; two per swaption, one per caplet of a cap or floor."""
        self.instruments(curve_names, curves)
        return self._memo[("legs", tuple(curve_names))]

    def instruments(self, curve_names: Sequence[str],
                    curves: Sequence[YieldCurve] | None = None) -> list[tuple[int, Portfolio | BondPortfolio]]:
        """The trades as tree-step instruments, ``(first row, block)`` in row order: runs of consecutive trades of one
        type (and, for options, one curve), each lowered whole; a bad row is a row of its block carrying its
        problems (masked or raised by :func:`trinom.price` like any bad row). ``curves``: the market's curves in the
        order of ``curve_names``, needed where an exercise has notice days (its price is discounted on its curve)."""
        names = tuple(curve_names)
        noticed = curves is not None and self._has_notice_days()
        key = ("instruments", names, tuple(curves) if noticed else None)  # type: ignore[arg-type]
        if key not in self._memo:
            if noticed:  # lowerings on other curves: the latest few are kept
                older = [k for k in self._memo if isinstance(k, tuple) and k[0] == "instruments" and k[2] is not None]
                for stale in older[:-3]:
                    del self._memo[stale]
            self._memo[key] = self._instruments(names, key[2])
        return self._memo[key]

    def _has_notice_days(self) -> bool:
        """Whether a bond with an option has notice days (its lowering needs the curves)."""
        p = self._parsed()
        notice = p.numbers["notice_days"]
        with np.errstate(invalid="ignore"):
            return bool(np.any((p.kind == 0) & p.present["option"] & (notice > 0)))

    def _instruments(self, curve_names: tuple[str, ...],
                     curves: Sequence[YieldCurve] | None) -> list[tuple[int, Portfolio | BondPortfolio]]:
        p = self._parsed()
        problems = self.problems(curve_names)
        bad = np.zeros(len(self), dtype=bool)
        bad[[row for row, _f, _m in problems if row is not None]] = True
        if any(row is None for row, _f, _m in problems):
            raise InputError([problem for problem in problems if problem[0] is None])
        named = self._factorized("curve")
        index = np.array([curve_names.index(name) if name in curve_names else 0
                          for name in ("" if value is None else str(value) for value in named.distinct)], dtype=np.int64)
        curve = index[named.inverse]
        kind = np.where(p.kind < 0, 0, p.kind)  # a row of no type is a bad bond row
        bond_family = np.isin(kind, _BOND_FAMILY)
        group = np.where(bond_family, 0, 1 + curve)
        starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1]))) if len(self) else np.zeros(0, int)
        bounds = np.append(starts, len(self))
        bond_rows = np.flatnonzero(kind == 0)
        bonds = (self._bonds(bond_rows, bad[bond_rows], curve[bond_rows], problems, curves) if bond_rows.size
                 else None)
        rate = self._memo[("rate", curve_names)]
        if not (rate.swaption_rows.size or rate.cap_rows.size):  # bonds and bond options: a tree a trade
            self._memo[("legs", curve_names)] = Legs.one_each(len(self))
            where_in_bonds = np.full(len(self), -1, dtype=np.int64)
            where_in_bonds[bond_rows] = np.arange(bond_rows.size)
            blocks: list[tuple[int, Portfolio | BondPortfolio]] = []
            for first, last in itertools.pairwise(bounds):
                if kind[first] == 0:  # a run of bonds: all of them (a book of bonds) or a part
                    run = bonds if last - first == bond_rows.size else bonds[where_in_bonds[first:last]]  # type: ignore[index]
                    blocks.append((int(first), run))  # type: ignore[arg-type]
                else:
                    rows = np.arange(first, last)
                    blocks.append((int(first), self._options(rows, bad[rows], problems, curve_names[curve[first]])))
            return blocks
        return self._trees(curve_names, curve, kind, bad, bounds, bonds, bond_rows, problems, rate)

    def _trees(self, curve_names: tuple[str, ...], curve: np.ndarray, kind: np.ndarray, bad: np.ndarray,
               bounds: np.ndarray, bonds: BondPortfolio | None, bond_rows: np.ndarray, problems: list[Problem],
               rate: RateRows) -> list[tuple[int, Portfolio | BondPortfolio]]:
        """The blocks of a book with swaptions, caps or floors: each run's trees in trade order (a swaption's two, a
        cap's caplets, one for every other trade and every bad one), and the legs that add them up."""
        size = len(self)
        counts = np.ones(size, dtype=np.int64)
        weights: list[np.ndarray] = [np.ones(1)] * size
        # bond trees: the bonds, then two per good swaption, then one placeholder per bad swaption
        tables: list[BondPortfolio] = [] if bonds is None else [bonds]
        first_tree = np.full(size, -1, dtype=np.int64)
        first_tree[bond_rows] = np.arange(bond_rows.size)
        used = bond_rows.size
        specs = replace(rate.swaptions, curve=curve[rate.swaptions.rows])
        if specs.rows.size:
            lowered = lower_swaptions(specs)
            tree_of = {row: 2 * k for k, row in enumerate(specs.rows.tolist())}  # each swaption's first tree
            late = self._where_prefixed(lowered.problems)  # a late-failing swaption: both its trees carry them
            tables.append(BondPortfolio.with_read_problems(
                [(tree_of[row] + side, f, m) for row, f, m in late for side in (0, 1)],
                accrued=lowered.bonds.accrued(), **lowered.bonds.as_dict()))
            failed = {row for row, _f, _m in late}
            for row, tree in tree_of.items():
                first_tree[row] = used + tree
                if row not in failed:
                    counts[row], weights[row] = 2, lowered.weight[tree: tree + 2]
            used += 2 * specs.rows.size
        bad_swaptions = np.setdiff1d(rate.swaption_rows, specs.rows)
        if bad_swaptions.size:
            tables.append(self._placeholder_bonds(bad_swaptions, problems))
            first_tree[bad_swaptions] = used + np.arange(bad_swaptions.size)
        bond_table = BondPortfolio.concatenate(tables) if len(tables) > 1 else tables[0] if tables else None
        # option trees per run (one curve): the bond options and bad caps one each, the good caps' caplets
        good_caps = rate.caps.rows
        blocks: list[tuple[int, Portfolio | BondPortfolio]] = []
        for first, last in itertools.pairwise(bounds):
            rows = np.arange(first, last)
            if np.isin(kind[first], _BOND_FAMILY):
                index = np.concatenate([first_tree[r] + np.arange(counts[r]) for r in rows.tolist()])
                blocks.append((int(first), bond_table[index]))  # type: ignore[index]
                continue
            name = curve_names[curve[first]]
            in_run = np.isin(good_caps, rows)
            plain = np.setdiff1d(rows, good_caps[in_run])
            parts = [self._options(plain, bad[plain], problems, name)] if plain.size else []
            position = {int(r): k for k, r in enumerate(plain.tolist())}
            if in_run.any():
                lowered_caps = lower_caps(_take_caps(rate.caps, np.flatnonzero(in_run)), curve=name)
                parts.append(lowered_caps.caplets)
                offsets = np.concatenate(([0], np.cumsum(lowered_caps.count)))
                for k, row in enumerate(good_caps[in_run].tolist()):
                    counts[row] = lowered_caps.count[k]
                    weights[row] = lowered_caps.weight[offsets[k]: offsets[k + 1]]
                    position[int(row)] = plain.size + int(offsets[k])
            table = Portfolio.concatenate(parts) if len(parts) > 1 else parts[0]
            index = np.concatenate([position[int(r)] + np.arange(counts[r]) for r in rows.tolist()])
            blocks.append((int(first), table[index]))
        types = np.array([TYPES[k] for k in kind.tolist()], dtype=object)
        self._memo[("legs", curve_names)] = Legs.of_counts(counts, np.concatenate(weights), labels=types)
        return blocks

    def _placeholder_bonds(self, rows: np.ndarray, problems: list[Problem]) -> BondPortfolio:
        """One-step bond trees standing for bad trades ``rows``, carrying their problems."""
        count = rows.size
        ones = np.ones(count, dtype=np.int64)
        fields = {"term_unit": np.full(count, YEAR_DAYS), "term_steps": ones, "a": np.full(count, 0.1),
                  "sigma": np.full(count, 0.01), "maturity": np.full(count, 0.5), "cashflow_count": ones,
                  "cashflow_step": ones, "repayment": np.full(count, 100.0), "coupon": np.zeros(count),
                  "spread": np.zeros(count), "option_type": np.zeros(count, dtype=np.int8),
                  "strike": np.full(count, NO_EXERCISE_PRICE), "first_exercise": ones, "last_exercise": ones,
                  "exercise_frequency": ones, "curve_index": np.zeros(count, dtype=np.int64)}
        return BondPortfolio.with_read_problems(list(_rows_problems(problems, rows, len(self))),
                                                accrued=np.zeros(count), **fields)

    def _options(self, rows: np.ndarray, bad: np.ndarray, problems: list[Problem], curve: str) -> Portfolio:
        p = self._parsed()
        spy = self._steps_per_year()[rows]
        years = {name: (p.dates[name][rows] - self.as_of_day) / YEAR_DAYS for name in ("maturity", "expiry")}
        fields = {"strike": np.where(bad, 100.0, p.numbers["strike"][rows]),
                  "maturity": np.where(bad, 1.0, years["maturity"]),
                  "expiry": np.where(bad, 0.0, years["expiry"]),
                  "term_unit": np.full(rows.size, float(YEAR_DAYS)), "term_steps": spy.astype(np.float64),
                  "a": np.where(bad, 0.1, p.numbers["a"][rows]), "sigma": np.where(bad, 0.01, p.numbers["sigma"][rows]),
                  "option_type": np.where(p.option[rows] == _PUT_CELL, PUT, CALL).astype(np.int8)}
        local = _rows_problems(problems, rows, len(self))
        return Portfolio.with_read_problems(local, curve=curve, **fields) if local else Portfolio(curve=curve, **fields)

    def _bonds(self, rows: np.ndarray, bad: np.ndarray, curve: np.ndarray, problems: list[Problem],
               curves: Sequence[YieldCurve] | None) -> BondPortfolio:
        """The bond rows as a :class:`BondPortfolio` (every bond row, bad ones as placeholders with their problems)."""
        p = self._parsed()
        good = rows[~bad]
        names = {name: self._factorized(name).filled(default).take(good) for name, default in BOND_DEFAULTS.items()}
        spread = p.numbers["spread"][good]
        specs = DatedBonds(rows=good, issue=p.dates["issue"][good], maturity=p.dates["maturity"][good],
                           coupon=p.numbers["coupon"][good], frequency=self._factorized("frequency").take(good),
                           day_count=names["day_count"], calendar=names["calendar"], convention=names["convention"],
                           a=p.numbers["a"][good], sigma=p.numbers["sigma"][good],
                           spread=np.where(np.isnan(spread), 0.0, spread), curve=curve[~bad],
                           steps_per_year=self._steps_per_year()[good],
                           side=np.where(p.option[good] == _PUT_CELL, PUT, CALL).astype(np.int8))
        lowered = lower_dated_bonds(self.as_of_day, specs, **self._exercise_inputs(good),
                                    amortization=self._amortization(good), curves=curves)
        late = lowered.problems
        count = rows.size
        placeholder = bad.copy()
        placeholder[np.isin(rows, [row for row, _f, _m in late])] = True
        fields, accrued = _portfolio_fields(lowered, np.flatnonzero(~bad), placeholder, count)
        local = _rows_problems(problems + self._where_prefixed(late), rows, len(self))
        if local:
            return BondPortfolio.with_read_problems(local, accrued=accrued, **fields)
        return BondPortfolio(accrued=accrued, **fields)

    def _exercise_inputs(self, good: np.ndarray) -> dict[str, Any]:
        """The good bond rows' exercise as :func:`lower_dated_bonds` takes it (bonds numbered among ``good``):
        european on ``first_exercise`` and the european and bermudan schedule rows as dates, bermudan windows on
        coupon dates, american windows (a schedule's: one per listed date, to the next one)."""
        p = self._parsed()
        count = good.size
        has = p.present["option"][good]
        style = p.exercise[good]
        notice = np.where(p.present["notice_days"][good], p.numbers["notice_days"][good], 0).astype(np.int64)
        price = p.numbers["exercise_price"][good]
        first, last = p.dates["first_exercise"][good], p.dates["last_exercise"][good]
        schedule = self._side_rows("schedule")[0]
        position = np.full(len(self), -1, dtype=np.int64)
        position[good] = np.arange(count)
        listed = position[schedule.row] >= 0
        bond, day, listed_price = position[schedule.row[listed]], schedule.day[listed], schedule.value[listed]
        scheduled = np.zeros(count, dtype=bool)
        scheduled[bond] = True
        european = np.flatnonzero(has & (style == _EUROPEAN) & ~scheduled)
        on_dates = style[bond] != _AMERICAN
        dates = ExerciseDates.of(np.concatenate([european, bond[on_dates]]),
                                 np.concatenate([first[european], day[on_dates]]),
                                 np.concatenate([price[european], listed_price[on_dates]]), True,
                                 np.concatenate([notice[european], notice[bond[on_dates]]]))
        bermudan = np.flatnonzero(has & (style == _BERMUDAN) & ~scheduled)
        coupon_dates = ExerciseWindows.of(bermudan, first[bermudan], last[bermudan], price[bermudan], notice[bermudan])
        american = np.flatnonzero(has & (style == _AMERICAN) & ~scheduled)
        stepped = ~on_dates  # an american schedule: from each listed date to the day before the next one
        s_bond, s_day = bond[stepped], day[stepped]
        ends = np.where(p.present["last_exercise"][good], last, p.dates["maturity"][good])
        final = np.ones(s_bond.size, dtype=bool)
        final[:-1] = s_bond[1:] != s_bond[:-1]
        s_last = np.where(final, ends[s_bond], np.append(s_day[1:], 0) - 1)
        windows = ExerciseWindows.of(np.concatenate([american, s_bond]), np.concatenate([first[american], s_day]),
                                     np.concatenate([last[american], s_last]),
                                     np.concatenate([price[american], listed_price[stepped]]),
                                     np.concatenate([notice[american], notice[s_bond]]))
        return {"dates": dates, "coupon_dates": coupon_dates, "american": windows}

    def _amortization(self, good: np.ndarray) -> Amortization | None:
        """The good bond rows' outstanding notionals (``notionals.csv`` rows, as shares of the trade's notional)."""
        rows = self._side_rows("notionals")[0]
        if rows.row.size == 0:
            return None
        position = np.full(len(self), -1, dtype=np.int64)
        position[good] = np.arange(good.size)
        kept = position[rows.row] >= 0
        notional = self._parsed().numbers["notional"][rows.row[kept]]
        return Amortization(bond=position[rows.row[kept]], date=rows.day[kept], ratio=rows.value[kept] / notional,
                            where=rows.where[kept])


@dataclass(frozen=True, eq=False)
class _SideTable:
    """A ``schedule.csv`` or ``notionals.csv`` as given: its cells (id, date, value) and each row's place."""

    kind: str  #: ``schedule`` or ``notionals``
    ids: np.ndarray
    dates: np.ndarray
    values: np.ndarray
    where: list[str]

    def __len__(self) -> int:
        return len(self.where)


@dataclass(frozen=True, eq=False)
class _SideRows:
    """A side table's readable rows, in trade-row and date order: each one's trade row, date (a day number), value
    and place."""

    row: np.ndarray
    day: np.ndarray
    value: np.ndarray
    where: np.ndarray

    @classmethod
    def empty(cls) -> _SideRows:
        return cls(row=np.zeros(0, dtype=np.int64), day=np.zeros(0, dtype=np.int64), value=np.zeros(0),
                   where=np.zeros(0, dtype=object))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per run of one trade's rows, its first and one-past-last index."""
        new = np.ones(self.row.size, dtype=bool)
        new[1:] = self.row[1:] != self.row[:-1]
        starts = np.flatnonzero(new)
        return starts, np.append(starts[1:], self.row.size)


def _side_table(table: Any, kind: str) -> _SideTable | None:
    """A schedule or notionals table given as a DataFrame or a mapping of its columns (or read already)."""
    if table is None or isinstance(table, _SideTable):
        return table
    columns = SIDE_COLUMNS[kind]
    if hasattr(table, "columns") and hasattr(table, "to_numpy"):
        given = {str(c): table[c].to_numpy(dtype=object) for c in table.columns}
    elif isinstance(table, Mapping):
        given = {str(k): v for k, v in table.items()}
    else:
        raise InputError([(None, kind, f"{kind} must be a DataFrame or a mapping of its columns "
                           f"({', '.join(columns)}), got {type(table).__name__}")])
    _check_side_columns(list(given), kind, kind)
    cells = [np.asarray(given[name], dtype=object).reshape(-1) for name in columns]
    sizes = {cell.size for cell in cells}
    if len(sizes) != 1:
        raise InputError([(None, kind, f"{kind}: columns of different lengths ("
                           f"{', '.join(f'{n} {c.size}' for n, c in zip(columns, cells, strict=True))})")])
    return _SideTable(kind, *cells, where=[f"{kind} row {k}" for k in range(cells[0].size)])


def _check_side_columns(header: Sequence[str], kind: str, name: object) -> None:
    """A side table's columns must be exactly its contract's: an unknown or missing one is an error naming it."""
    columns = SIDE_COLUMNS[kind]
    problems: list[Problem] = [(None, f"{kind}.{c}", f"{name}: unknown column '{c}' ({kind} has: {', '.join(columns)})")
                               for c in header if c not in columns]
    problems += [(None, f"{kind}.{c}", f"{name}: missing column '{c}' ({kind} has: {', '.join(columns)})")
                 for c in columns if c not in header]
    if problems:
        raise InputError(problems)


def read_side_table(path: str | Path, kind: str) -> _SideTable:
    """A ``schedule.csv`` (``id,date,price``) or ``notionals.csv`` (``id,date,notional``), or a Parquet table of the
    same columns, with each row's place (``schedule.csv line 4``) for messages."""
    path = Path(path)
    columns = SIDE_COLUMNS[kind]
    if parquet.is_parquet(path):
        header, *cells = parquet.read_text_rows(path)
        _check_side_columns(header, kind, path)
        table = {name: [row[k] for row in cells] for k, name in enumerate(header)}
        where = [f"{path} row {k}" for k in range(len(cells))]
    else:
        table, lines = read_table_lines(path, columns)
        where = [f"{path} line {line}" for line in lines]
    cells = [np.array(table[name], dtype=object).reshape(-1) for name in columns]
    return _SideTable(kind, *cells, where=where)


# --- lowering dated bonds: arrays in, tree-step bonds out ------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class DatedBonds:
    """Fixed-rate bonds by dates, one entry per bond (dates as day numbers since 1970-01-01): what
    :func:`lower_dated_bonds` lowers. The name columns (``frequency``, ``day_count``, ``calendar``, ``convention``)
    are arrays of names or :class:`~trinom.conventions.Factorized` columns, already validated."""

    rows: np.ndarray  #: each bond's row in its book (the problems lowering finds name it)
    issue: np.ndarray  #: the schedule's first date (a bond's issue date, a swap's start)
    maturity: np.ndarray  #: the schedule's last date
    coupon: np.ndarray  #: the annual coupon rate, a decimal
    frequency: Any
    day_count: Any
    calendar: Any
    convention: Any
    a: np.ndarray
    sigma: np.ndarray
    spread: np.ndarray  #: the OAS, a decimal (continuous, added to the short rate)
    curve: np.ndarray  #: the index of the bond's curve among the market's
    steps_per_year: np.ndarray
    side: np.ndarray  #: CALL or PUT: what the bond's exercise does (either, for a bond without any)

    def __len__(self) -> int:
        return int(self.issue.size)


@dataclass(frozen=True, eq=False)
class ExerciseDates:
    """Exercise on given dates, one entry per date: its bond (an index into :class:`DatedBonds`), the exercise date,
    the price per 100 of the notional outstanding then, whether that price is clean (the day count's accrued interest
    at the date is added; 0 on a coupon date, ex-coupon) or dirty (paid as it is), and the notice days (the decision
    is taken that many calendar days before the date)."""

    bond: np.ndarray
    date: np.ndarray
    price: np.ndarray
    clean: np.ndarray
    notice: np.ndarray

    @classmethod
    def of(cls, bond: npt.ArrayLike, date: npt.ArrayLike, price: npt.ArrayLike, clean: npt.ArrayLike = True,
           notice: npt.ArrayLike = 0) -> ExerciseDates:
        """From arrays (``price``, ``clean`` and ``notice`` may be one value for all)."""
        bond = np.asarray(bond, dtype=np.int64).reshape(-1)
        size = bond.size
        return cls(bond=bond, date=np.broadcast_to(np.asarray(date, dtype=np.int64), size).copy(),
                   price=np.broadcast_to(np.asarray(price, dtype=np.float64), size).copy(),
                   clean=np.broadcast_to(np.asarray(clean, dtype=bool), size).copy(),
                   notice=np.broadcast_to(np.asarray(notice, dtype=np.int64), size).copy())


@dataclass(frozen=True, eq=False)
class ExerciseWindows:
    """Exercise windows, one entry per window: its bond, first and last exercise date (both included), the clean
    price per 100 of the notional outstanding and the notice days. As ``american`` exercise, every tree step of the
    window; as ``coupon_dates``, the bond's coupon dates in it. A bond may have several windows (a step-down american
    schedule: one per price)."""

    bond: np.ndarray
    first: np.ndarray
    last: np.ndarray
    price: np.ndarray
    notice: np.ndarray

    @classmethod
    def of(cls, bond: npt.ArrayLike, first: npt.ArrayLike, last: npt.ArrayLike, price: npt.ArrayLike,
           notice: npt.ArrayLike = 0) -> ExerciseWindows:
        """From arrays (``notice`` may be one value for all)."""
        bond = np.asarray(bond, dtype=np.int64).reshape(-1)
        size = bond.size
        return cls(bond=bond, first=np.broadcast_to(np.asarray(first, dtype=np.int64), size).copy(),
                   last=np.broadcast_to(np.asarray(last, dtype=np.int64), size).copy(),
                   price=np.broadcast_to(np.asarray(price, dtype=np.float64), size).copy(),
                   notice=np.broadcast_to(np.asarray(notice, dtype=np.int64), size).copy())


@dataclass(frozen=True, eq=False)
class Amortization:
    """Outstanding notionals, one entry per change: from ``date`` (a coupon date of the bond's schedule, adjusted or
    not) on, ``ratio`` of the bond's original notional is outstanding; ``where``: each entry's place, for messages
    (``notionals.csv line 4``)."""

    bond: np.ndarray
    date: np.ndarray
    ratio: np.ndarray
    where: np.ndarray


@dataclass(frozen=True, eq=False)
class _Coupons:
    """Good bonds' coupons: the periods that end after the as-of date, in bond and date order."""

    owner: np.ndarray  #: the period's bond
    end: np.ndarray  #: the period's (adjusted) end date, a day number: the coupon's payment date
    amount: np.ndarray  #: the coupon per 100 of the original notional
    principal: np.ndarray | None  #: the principal repaid at the period's end per 100 (None: 100 at maturity alone)


@dataclass(frozen=True, eq=False)
class _Flows:
    """Bonds' cash flows on tree steps, in bond and step order (a bond's coupons of one step are one flow)."""

    owner: np.ndarray  #: the flow's bond
    step: np.ndarray  #: its tree step (ascending within a bond)
    date: np.ndarray  #: the date of the step's first coupon (a day number)
    coupon: np.ndarray  #: the coupons paid at the step, per 100
    repayment: np.ndarray  #: the principal paid at the step (and the share the tree misses: _pay_early_flows_in_full)
    offsets: np.ndarray  #: bond ``k``'s flows are ``[offsets[k]:offsets[k + 1]]``

    @property
    def counts(self) -> np.ndarray:
        """Per bond, its number of flows."""
        return np.diff(self.offsets)

    @property
    def last_step(self) -> np.ndarray:
        """Per bond, the step of its last flow (0 without flows): its tree's height."""
        counts = self.counts
        out = np.zeros(counts.size, dtype=np.int64)
        out[counts > 0] = self.step[self.offsets[1:][counts > 0] - 1]
        return out


@dataclass(frozen=True, eq=False)
class LoweredBonds:
    """:func:`lower_dated_bonds`'s result: per bond its cash flows on tree steps, its accrued interest at the as-of
    date, its exercise window (every step from ``window_first`` to ``window_last`` at ``strike`` plus the tree's
    accrued interest; empty, ``(1, 0)``, where the bond has listed points only; a call at :data:`NO_EXERCISE_PRICE`
    on its last step where it has no exercise) and its listed points (a dirty price per 100 at a step), and the
    problems only lowering finds (a bond with one still has its arrays here: :meth:`portfolio` replaces it)."""

    bonds: DatedBonds
    flows: _Flows
    accrued: np.ndarray  #: per bond, per 100 of the original notional
    window_first: np.ndarray
    window_last: np.ndarray
    strike: np.ndarray
    point_offsets: np.ndarray  #: bond ``k``'s points are ``[point_offsets[k]:point_offsets[k + 1]]``
    point_step: np.ndarray
    point_price: np.ndarray
    problems: list[Problem]

    @property
    def point_counts(self) -> np.ndarray:
        """Per bond, its number of listed exercise points."""
        return np.diff(self.point_offsets)

    def portfolio(self) -> BondPortfolio:
        """The bonds as a :class:`BondPortfolio` in their order; a bond with a problem is a placeholder carrying it
        (masked or raised by :func:`trinom.price` like any bad row)."""
        count = len(self.bonds)
        failed = np.zeros(count, dtype=bool)
        position = np.full(int(self.bonds.rows.max(initial=-1)) + 1, -1, dtype=np.int64)
        position[self.bonds.rows] = np.arange(count)
        local = [(int(position[row]), field, message) for row, field, message in self.problems if row is not None]
        failed[[row for row, _f, _m in local]] = True
        fields, accrued = _portfolio_fields(self, np.arange(count), failed, count)
        if local:
            return BondPortfolio.with_read_problems(sorted(local, key=lambda item: item[0]), accrued=accrued, **fields)
        return BondPortfolio(accrued=accrued, **fields)


def lower_dated_bonds(as_of: int, bonds: DatedBonds, *, dates: ExerciseDates | None = None,
                      coupon_dates: ExerciseWindows | None = None, american: ExerciseWindows | None = None,
                      amortization: Amortization | None = None,
                      curves: Sequence[YieldCurve] | None = None) -> LoweredBonds:
    """Dated bonds as tree-step bonds (see the module's docstring): schedules, coupons and principal on tree steps,
    exercise as the tree's window where its own accrued interest is the day count's, else as listed points.

    ``dates``: exercise on those dates; ``coupon_dates``: on the bond's coupon dates within each window (bermudan);
    ``american``: on every step of each window; ``amortization``: outstanding notionals (coupons on the outstanding
    notional, each repayment paid on its date); ``curves``: the market's curves, by :attr:`DatedBonds.curve` (needed
    only where an exercise has notice days: its price is discounted from the exercise date to the decision date)."""
    late: list[Problem] = []
    count = len(bonds)
    spy = np.asarray(bonds.steps_per_year, dtype=np.int64)
    schedules = generate_schedules(effective=as_dates(bonds.issue), termination=as_dates(bonds.maturity),
                                   frequency=bonds.frequency, calendar=bonds.calendar, convention=bonds.convention,
                                   errors="mask", rows=bonds.rows, fields={"effective": "issue", "termination": "maturity"})
    late += schedules.problems
    codes = np.broadcast_to(parse_day_counts(bonds.day_count)[0].astype(np.int64), (count,))
    if count:
        fractions = accrual_fractions(schedules=schedules, day_count=bonds.day_count)
        accrued = accrued_interest(schedules=schedules, day_count=bonds.day_count, coupon_rate=bonds.coupon,
                                   settlement=np.datetime64(as_of, "D"))
    else:
        fractions, accrued = np.zeros(0), np.zeros(0)
    ratio = _period_ratios(bonds, schedules, amortization, late)
    if ratio is not None:
        accrued = accrued * _ratio_at(schedules, ratio, np.arange(count), np.full(count, as_of))
    coupons = _coupons(as_of, bonds, schedules, fractions, ratio)
    flows = _flows(coupons, spy, as_of)
    amortized = np.zeros(count, dtype=bool)
    if amortization is not None:
        amortized[amortization.bond] = True
    exercise = _Exercise(as_of, bonds, schedules, codes, ratio, flows, amortized, curves, late)
    exercise.add_dates(dates)
    exercise.add_coupon_dates(coupon_dates)
    exercise.add_american(american)
    window_first, window_last, strike, offsets, step, price = exercise.finish()
    first_exercise = np.minimum(np.where(window_first <= window_last, window_first, flows.last_step),
                                flows.last_step)
    has_points = np.diff(offsets) > 0
    first_exercise[has_points] = np.minimum(first_exercise[has_points], step[offsets[:-1][has_points]])
    _pay_early_flows_in_full(flows, first_exercise, np.asarray(bonds.a, dtype=np.float64),
                             np.asarray(bonds.sigma, dtype=np.float64), spy)
    return LoweredBonds(bonds=bonds, flows=flows, accrued=accrued, window_first=window_first, window_last=window_last,
                        strike=strike, point_offsets=offsets, point_step=step, point_price=price, problems=late)


def _period_ratios(bonds: DatedBonds, schedules: Schedules, amortization: Amortization | None,
                   late: list[Problem]) -> np.ndarray | None:
    """Per coupon period (flat, in :attr:`Schedules.period_offsets` order), the share of the original notional
    outstanding in it (None where nothing amortizes). An entry whose date is not a coupon date of its bond before
    maturity (or whose coupon date another entry holds already) is a problem of ``late``."""
    if amortization is None or amortization.bond.size == 0:
        return None
    bond, day = amortization.bond, amortization.date
    counts = schedules.counts
    start, stop = schedules.offsets[bond], schedules.offsets[bond + 1]
    found = np.full(bond.size, -1, dtype=np.int64)
    for dates in (schedules.unadjusted, schedules.adjusted):  # the adjusted date wins where both match
        days = dates.view(np.int64)
        at = _segment_search(days, start, stop, day)
        hit = (at < stop) & (days[np.minimum(at, max(days.size - 1, 0))] == day) if days.size else at < 0
        found = np.where(hit, at - start, found)
    good = (found >= 1) & (found <= counts[bond] - 2)
    period = schedules.period_offsets[bond] + np.maximum(found, 0)
    ratio = np.full(int(schedules.period_offsets[-1]), np.nan)
    ratio[schedules.period_offsets[:-1][counts > 1]] = 1.0
    ok = np.flatnonzero(good)
    _periods, first = np.unique(period[ok], return_index=True)
    again = np.ones(ok.size, dtype=bool)
    again[first] = False
    ratio[period[ok]] = amortization.ratio[ok]
    for k in np.flatnonzero(~good):  # the problems only (their bonds become placeholders)
        dates = [str(d) for d in schedules.dates(int(bond[k]))[1:-1]]
        shown = ", ".join(dates[:6]) + (f", ... ({len(dates)} in all)" if len(dates) > 6 else "")
        late.append((int(bonds.rows[bond[k]]), "notionals.date", f"{amortization.where[k]}: date {_day(day[k])} is "
                     f"not a coupon date of the bond before its maturity (its coupon dates: {shown or 'none'})"))
    for k in ok[again]:
        late.append((int(bonds.rows[bond[k]]), "notionals.date", f"{amortization.where[k]}: date {_day(day[k])} is "
                     "a coupon date another row of the bond gives too (one adjusted, one not)"))
    # forward fill within each bond: a period without a change keeps the one before it
    index = np.where(np.isnan(ratio), 0, np.arange(ratio.size))
    np.maximum.accumulate(index, out=index)
    return ratio[index]


def _coupons(as_of: int, bonds: DatedBonds, schedules: Schedules, fractions: np.ndarray,
             ratio: np.ndarray | None) -> _Coupons:
    """The periods that end after the as-of date: each coupon ``100 * coupon * accrual fraction`` (times the share
    outstanding), paid on the period's end, and the principal repaid there."""
    count = len(bonds)
    periods = np.maximum(schedules.counts - 1, 0)
    _start, end = schedules.period_bounds() if count else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    live = end > as_of
    owner = np.repeat(np.arange(count), periods)[live]
    coupon = np.asarray(bonds.coupon, dtype=np.float64)
    amount = (100.0 * coupon + 0.0)[owner]  # + 0.0: no coupon of -0.0 (it would sum on a step as 0.0)
    amount *= fractions[live]
    principal = None
    if ratio is not None:
        amount *= ratio[live]
        following = np.zeros(ratio.size)  # the share outstanding after each period's end (0 after the last)
        following[:-1] = ratio[1:]
        following[schedules.period_offsets[1:][periods > 0] - 1] = 0.0
        principal = (100.0 * (ratio - following))[live]
    return _Coupons(owner=owner, end=end[live], amount=amount, principal=principal)


def _flows(coupons: _Coupons, spy: np.ndarray, as_of: int) -> _Flows:
    """The coupons on tree steps (``spy`` steps a year per bond; each date on the step nearest its time, halves up,
    never before step 1), the coupons (and repayments) of one step paid together, and the principal: 100 with each
    bond's last coupon, or the amortizing repayments."""
    owner, end, amount = coupons.owner, coupons.end, coupons.amount
    uniform = spy.size > 0 and bool(np.all(spy == spy[0]))  # one tree resolution for the book: no gather
    step = end - as_of
    step *= 2
    step *= spy[0] if uniform else spy[owner]
    step += YEAR_DAYS
    step //= 2 * YEAR_DAYS
    np.maximum(step, 1, out=step)
    principal = coupons.principal
    # a bond's flows come in date order: the coupons of one step are adjacent
    merged = np.zeros(step.size, dtype=bool)
    np.equal(step[1:], step[:-1], out=merged[1:])
    merged[1:] &= owner[1:] == owner[:-1]
    if merged.any():
        later = np.flatnonzero(merged)  # the j-th of them joins the flow before it: flow later[j] - j - 1
        first = ~merged
        joined = later - np.arange(1, later.size + 1)
        coupon = amount[first]
        np.add.at(coupon, joined, amount[later])  # in date order, as a sum
        if principal is not None:
            repaid = principal[first]
            np.add.at(repaid, joined, principal[later])
            principal = repaid
        owner, step, end = owner[first], step[first], end[first]
    else:
        coupon = amount
    counts = np.bincount(owner, minlength=spy.size)
    offsets = np.zeros(spy.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if principal is None:
        repayment = np.zeros(step.size)
        repayment[offsets[1:][counts > 0] - 1] = 100.0
    else:
        repayment = principal.copy()
    return _Flows(owner=owner, step=step, date=end, coupon=coupon, repayment=repayment, offsets=offsets)


def step_of(days: np.ndarray, as_of: int, steps_per_year: np.ndarray | int) -> np.ndarray:
    """The tree step nearest each date (halves up), never before step 1."""
    return np.maximum((2 * (days - as_of) * steps_per_year + YEAR_DAYS) // (2 * YEAR_DAYS), 1)


def date_of_step(steps: np.ndarray, as_of: int, steps_per_year: np.ndarray | int) -> np.ndarray:
    """The date nearest each step's time (halves up): the step's date (at one step a day, ``as_of + step``)."""
    return as_of + (2 * steps * YEAR_DAYS + steps_per_year) // (2 * steps_per_year)


def _period_at(schedules: Schedules, bond: np.ndarray, day: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per ``(bond, day)``: the coupon period that holds the day (flat index; the first before the schedule's start,
    the last from its end), and whether the day is strictly inside it (after its start, before its end)."""
    days = schedules.adjusted.view(np.int64)
    start, stop = schedules.offsets[bond], schedules.offsets[bond + 1]
    owner = np.repeat(np.arange(len(schedules)), schedules.counts)
    # every bond's dates as one ascending key (bond, date): one search for all
    at = np.searchsorted(_bond_day_keys(owner, days), _bond_day_keys(bond, day), side="right") - 1
    local = np.clip(at - start, 0, np.maximum(stop - start - 2, 0))
    inside = (at >= start) & (at < stop - 1)
    inside[inside] = days[at[inside]] < day[inside]
    return schedules.period_offsets[bond] + local, inside


def _bond_day_keys(bond: np.ndarray, day: np.ndarray) -> np.ndarray:
    """``(bond, day)`` pairs as one int64 that orders them by bond, then day."""
    return (bond.astype(np.int64) << 32) + (day + (1 << 31))


def _ratio_at(schedules: Schedules, ratio: np.ndarray, bond: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Per ``(bond, day)``: the share of the original notional outstanding at the day (after a repayment on it)."""
    out = np.ones(bond.size)
    periods = schedules.counts[bond] > 1
    out[periods] = ratio[_period_at(schedules, bond[periods], day[periods])[0]]
    return out


def _accrued_at(schedules: Schedules, codes: np.ndarray, coupon: np.ndarray, bond: np.ndarray,
                day: np.ndarray) -> np.ndarray:
    """Per ``(bond, day)``: the day count's interest accrued at the day per 100 (QuantLib's ``accruedAmount``, as
    :func:`trinom.conventions.accrued_interest`): 0 on a schedule date (ex-coupon), before the first and from the
    last on."""
    out = np.zeros(bond.size)
    if bond.size == 0:
        return out
    period, inside = _period_at(schedules, bond, day)
    days = schedules.adjusted.view(np.int64)
    which = np.flatnonzero(inside)
    local = period[which] - schedules.period_offsets[bond[which]]
    start = days[schedules.offsets[bond[which]] + local]
    code = codes[bond[which]]
    icma = code == ACT_ACT_ICMA
    fraction = np.zeros(which.size)
    plain = np.flatnonzero(~icma)
    if plain.size:
        fraction[plain] = fractions_by_code(start[plain], day[which[plain]], code[plain])
    special = np.flatnonzero(icma)
    if special.size:
        owners, inverse = np.unique(bond[which[special]], return_inverse=True)
        quasi = QuasiCouponDates(schedules, owners)
        fraction[special] = icma_fractions(quasi, inverse, local[special], start[special], day[which[special]])
    out[which] = 100.0 * coupon[bond[which]] * fraction
    return out


class _Exercise:
    """Collects the bonds' exercise (windows and listed points) while lowering: :meth:`finish` gives the arrays."""

    def __init__(self, as_of: int, bonds: DatedBonds, schedules: Schedules, codes: np.ndarray,
                 ratio: np.ndarray | None, flows: _Flows, amortized: np.ndarray, curves: Sequence[YieldCurve] | None,
                 late: list[Problem]):
        self.as_of, self.bonds, self.schedules, self.codes, self.ratio = as_of, bonds, schedules, codes, ratio
        self.flows, self.amortized, self.curves, self.late = flows, amortized, curves, late
        self.spy = np.asarray(bonds.steps_per_year, dtype=np.int64)
        self.height = flows.last_step
        count = len(bonds)
        self.window_first = np.ones(count, dtype=np.int64)  # empty windows until a bond gets one
        self.window_last = np.zeros(count, dtype=np.int64)
        self.strike = np.full(count, NO_EXERCISE_PRICE)
        self.points: list[tuple[np.ndarray, ...]] = []  # (bond, step, exercise date, price, clean, notice)

    def add_dates(self, dates: ExerciseDates | None) -> None:
        """Exercise on given dates: a point at the step of each decision date after the as-of date."""
        if dates is None or dates.bond.size == 0:
            return
        decision = dates.date - dates.notice
        step = step_of(decision, self.as_of, self.spy[dates.bond])
        live = (decision > self.as_of) & (step <= self.height[dates.bond])  # a step beyond the height: never reached
        self.points.append((dates.bond[live], step[live], dates.date[live], dates.price[live], dates.clean[live],
                            dates.notice[live]))

    def add_coupon_dates(self, windows: ExerciseWindows | None) -> None:
        """Exercise on the coupon dates of each window (the schedule's adjusted period ends in it); a window that
        holds none and has not passed is a problem."""
        if windows is None or windows.bond.size == 0:
            return
        days = self.schedules.adjusted.view(np.int64)
        bond = windows.bond
        stop = self.schedules.offsets[bond + 1]
        lo = _segment_search(days, np.minimum(self.schedules.offsets[bond] + 1, stop), stop, windows.first)
        hi = _segment_search(days, lo, stop, windows.last, side="right")
        for k in np.flatnonzero((hi <= lo) & (windows.last > self.as_of) & (self.schedules.counts[bond] > 0)):
            self.late.append((int(self.bonds.rows[bond[k]]), "first_exercise", "no coupon date between first_exercise "
                              f"{_day(windows.first[k])} and last_exercise {_day(windows.last[k])}: a bermudan "
                              "option is exercised on coupon dates"))
        counts = np.maximum(hi - lo, 0)
        which = np.repeat(np.arange(bond.size), counts)
        at = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(which.size)
        # on a coupon date the accrued interest is 0 (ex-coupon): the clean price is the dirty one
        self.add_dates(ExerciseDates(bond=bond[which], date=days[at], price=windows.price[which],
                                     clean=np.zeros(which.size, dtype=bool), notice=windows.notice[which]))

    def add_american(self, windows: ExerciseWindows | None) -> None:
        """Exercise on every step of each window: the tree's own window where its accrued interest is the day
        count's (a bond with one window, no notice days, no amortization and coupons of one amount over the window),
        with listed points on the steps before the bond's first cash flow (where the tree accrues none); listed
        points on every step elsewhere."""
        if windows is None or windows.bond.size == 0:
            return
        bond, notice = windows.bond, windows.notice
        first = step_of(np.maximum(windows.first - notice, self.as_of + 1), self.as_of, self.spy[bond])
        last = np.minimum(step_of(windows.last - notice, self.as_of, self.spy[bond]), self.height[bond])
        live = (windows.last - notice > self.as_of) & (first <= last)
        bond, first, last, price, notice = bond[live], first[live], last[live], windows.price[live], notice[live]
        flows = self.flows
        first_flow = np.full(len(self.bonds), np.iinfo(np.int64).max)
        with_flows = flows.counts > 0
        first_flow[with_flows] = flows.step[flows.offsets[:-1][with_flows]]
        windowed = (np.bincount(bond, minlength=len(self.bonds))[bond] == 1) & (notice == 0) & ~self.amortized[bond]
        windowed &= ~self._coupons_change(bond, np.maximum(first, first_flow[bond]), last)
        opens = np.maximum(first, first_flow[bond])  # the tree's window: from the first cash flow on
        own = windowed & (opens <= last)
        self.window_first[bond[own]] = opens[own]
        self.window_last[bond[own]] = last[own]
        self.strike[bond[own]] = price[own]
        stepped_last = np.where(windowed, np.minimum(opens - 1, last), last)  # listed points: the rest
        counts = np.maximum(stepped_last - first + 1, 0)
        which = np.repeat(np.arange(bond.size), counts)
        step = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(which.size)
        owner = bond[which]
        self.points.append((owner, step, date_of_step(step, self.as_of, self.spy[owner]) + notice[which], price[which],
                            np.ones(which.size, dtype=bool), notice[which]))

    def _coupons_change(self, bond: np.ndarray, opens: np.ndarray, last: np.ndarray) -> np.ndarray:
        """Per window, whether a coupon period running in its steps ``opens .. last`` pays another amount than the
        one before it (the tree would accrue the previous coupon's: docs/paper-instrument.md §6.4)."""
        flows = self.flows
        within = np.full(len(self.bonds), -1, dtype=np.int64)  # per bond, its window (at most one here)
        within[bond] = np.arange(bond.size)
        changes = np.zeros(bond.size, dtype=bool)
        if flows.owner.size < 2:
            return changes
        # flow j and the next: the tree accrues flow j's coupon over the steps between them, the day count the next's
        owner, coupon = flows.owner[1:], flows.coupon
        window = within[owner]
        relevant = (window >= 0) & (owner == flows.owner[:-1])
        pairs = np.flatnonzero(relevant)
        w = window[pairs]
        pairs = pairs[(flows.step[pairs + 1] > opens[w]) & (flows.step[pairs] < last[w])]
        differ = np.abs(coupon[pairs + 1] - coupon[pairs]) > 1e-12 * np.maximum(np.abs(coupon[pairs]), 1.0)
        changes[window[pairs[differ]]] = True
        return changes

    def finish(self) -> tuple[np.ndarray, ...]:
        """The windows (first, last, strike; a bond without exercise: a call at :data:`NO_EXERCISE_PRICE` on its
        last step) and the listed points (offsets, steps, dirty prices), one point a step (the tighter price where
        dates share a step: the lower for a call, the higher for a put)."""
        count = len(self.bonds)
        if self.points:
            bond, step, day, price, clean, notice = (np.concatenate(parts) for parts in zip(*self.points, strict=True))
        else:
            bond = step = day = notice = np.zeros(0, dtype=np.int64)
            price, clean = np.zeros(0), np.zeros(0, dtype=bool)
        dirty = price.copy()
        if clean.any():
            accrued = _accrued_at(self.schedules, self.codes, np.asarray(self.bonds.coupon, dtype=np.float64),
                                  bond[clean], day[clean])
            dirty[clean] += accrued
        if self.ratio is not None:  # per 100 of the outstanding notional: per 100 of the original
            dirty *= _ratio_at(self.schedules, self.ratio, bond, day)
        noticed = np.flatnonzero(notice > 0)
        if noticed.size:
            dirty[noticed] = self._noticed(bond[noticed], step[noticed], day[noticed], dirty[noticed])
        bond, step, dirty = _merged_points(bond, step, dirty, np.asarray(self.bonds.side)[bond] == PUT)
        counts = np.bincount(bond, minlength=count)
        offsets = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        window_first, window_last = self.window_first, self.window_last
        none = (window_first > window_last) & (counts == 0)  # no exercise at all: the never-binding call
        window_first[none] = self.height[none]
        window_last[none] = self.height[none]
        return window_first, window_last, self.strike, offsets, step, dirty

    def _noticed(self, bond: np.ndarray, step: np.ndarray, day: np.ndarray, dirty: np.ndarray) -> np.ndarray:
        """The value at the decision step of exercise with notice: the dirty price paid on the exercise date ``day``
        and the bond's cash flows after the decision step up to that date, discounted to the decision step by the
        curve's deterministic forward discount factors."""
        if self.curves is None:
            raise InputError([(None, "curves", "exercise with notice days discounts its price on the trade's curve: "
                               "lower the trades with their curves")])
        spy = self.spy[bond].astype(np.float64)
        decision = self._discount(bond, step / spy)
        value = dirty * self._discount(bond, (day - self.as_of) / YEAR_DAYS) / decision
        flows = self.flows
        start, stop = flows.offsets[bond], flows.offsets[bond + 1]
        lo = _segment_search(flows.step, start, stop, step, side="right")  # the first flow after the decision step
        hi = _segment_search(flows.date, lo, stop, day, side="right")  # the first one after the exercise date
        for k in range(int(np.max(hi - lo, initial=0))):  # the few flows of a notice period
            take = np.flatnonzero(lo + k < hi)
            j = lo[take] + k
            paid = flows.coupon[j] + flows.repayment[j]
            value[take] += paid * self._discount(bond[take], flows.step[j] / spy[take]) / decision[take]
        return value

    def _discount(self, bond: np.ndarray, years: np.ndarray) -> np.ndarray:
        """The discount factor of each bond's curve at ``years`` (ACT/365F from the as-of date; its zero rate read at
        whole days, as the tree reads it)."""
        out = np.empty(bond.size)
        curve = np.asarray(self.bonds.curve)[bond]
        for index in np.unique(curve):
            mine = np.flatnonzero(curve == index)
            t = years[mine]
            out[mine] = np.exp(-self.curves[int(index)].rate_at(t, YEAR_DAYS) * t)  # type: ignore[index]
        return out


def _merged_points(bond: np.ndarray, step: np.ndarray, price: np.ndarray,
                   put: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points in bond and step order, one a step: where several share a step, the tighter price holds (the lowest
    for a call, the highest for a put)."""
    if bond.size < 2:
        return bond, step, price
    if bool(np.any(bond[1:] < bond[:-1])):  # parts of the book, each in bond order: a merge of sorted runs
        order = np.argsort(bond, kind="stable")
        bond, step, price, put = bond[order], step[order], price[order], put[order]
    if bool(np.all((step[1:] > step[:-1]) | (bond[1:] != bond[:-1]))):
        return bond, step, price
    key = bond * (np.int64(1) << 32) + step  # a bond's points from several parts, or dates sharing a step
    order = np.argsort(key, kind="stable")
    bond, step, price, put, key = bond[order], step[order], price[order], put[order], key[order]
    new = np.ones(key.size, dtype=bool)
    new[1:] = key[1:] != key[:-1]
    if new.all():
        return bond, step, price
    signed = np.where(put, -price, price)  # the tighter one is the lowest of these
    starts = np.flatnonzero(new)
    tightest = np.minimum.reduceat(signed, starts)
    put = put[starts]
    return bond[starts], step[starts], np.where(put, -tightest, tightest)


def _portfolio_fields(lowered: LoweredBonds, g: np.ndarray, placeholder: np.ndarray,
                      count: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The :class:`BondPortfolio` fields of ``count`` rows: row ``g[k]`` is lowered bond ``k`` (the other rows, and
    those ``placeholder`` marks, are one-step placeholders: one flow of 100 at step 1, no exercise), and the rows'
    accrued interest."""
    flows, bonds = lowered.flows, lowered.bonds
    real = ~placeholder[g]  # the lowered bonds that keep their flows and points
    counts = np.ones(count, dtype=np.int64)
    counts[g[real]] = np.maximum(flows.counts[real], 1)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    # a row without flows of its own (a placeholder, a bond whose flows all passed) has one: 100 at step 1
    lone = np.ones(count, dtype=bool)
    lone[g[real & (flows.counts > 0)]] = False
    lone_slots = offsets[:-1][lone]
    slots = np.ones(offsets[-1], dtype=bool)  # the others: the kept flows, in order
    slots[lone_slots] = False
    kept = None if real.all() else np.repeat(real, flows.counts)
    fields: dict[str, np.ndarray] = {}
    for name, values, filler in (("cashflow_step", flows.step, 1), ("coupon", flows.coupon, 0.0),
                                 ("repayment", flows.repayment, 100.0)):
        if kept is not None:
            values = values[kept]
        if lone_slots.size:
            out = np.empty(offsets[-1], dtype=values.dtype)
            out[slots] = values
            out[lone_slots] = filler
            values = out
        fields[name] = values
    n = np.ones(count, dtype=np.int64)
    n[g] = np.maximum(flows.last_step, 1)
    n[placeholder] = 1

    def per_row(good_values: npt.ArrayLike, filler: float, dtype: npt.DTypeLike = np.float64) -> np.ndarray:
        out = np.full(count, filler, dtype=dtype)
        out[g] = good_values
        out[placeholder] = filler
        return out

    spy = per_row(bonds.steps_per_year, 1, np.int64)
    fields.update({"term_unit": np.full(count, YEAR_DAYS), "term_steps": spy, "a": per_row(bonds.a, 0.1),
                   "sigma": per_row(bonds.sigma, 0.01), "maturity": (n - 0.5) / spy, "cashflow_count": counts,
                   "spread": per_row(np.asarray(bonds.spread, dtype=np.float64) * 100.0, 0.0),
                   "option_type": per_row(bonds.side, CALL, np.int8),
                   "strike": per_row(lowered.strike, NO_EXERCISE_PRICE),
                   "first_exercise": per_row(lowered.window_first, 1, np.int64),
                   "last_exercise": per_row(lowered.window_last, 1, np.int64),
                   "exercise_frequency": np.ones(count, dtype=np.int64),
                   "curve_index": per_row(bonds.curve, 0, np.int64)})
    points = lowered.point_counts
    if lowered.point_step.size and (points[real] > 0).any():
        fields["exercise_count"] = per_row(np.where(real, points, 0), 0, np.int64)
        keep = np.repeat(real, points)
        fields["exercise_step"] = lowered.point_step[keep]
        fields["exercise_price"] = lowered.point_price[keep]
    return fields, per_row(lowered.accrued, 0.0)


def _pay_early_flows_in_full(flows: _Flows, first_exercise: np.ndarray, a: np.ndarray, sigma: np.ndarray,
                             spy: np.ndarray) -> None:
    """Raise the flows that the tree pays before its width is full, which miss its outermost nodes, by the share they
    miss (:func:`_edge_shares`): those where no exercise sees them (at or before the first exercise step), but a
    bond's last (the maturity's is on every node already)."""
    candidates = np.flatnonzero(flows.step <= EDGE_STEPS)
    owner, step = flows.owner[candidates], flows.step[candidates]
    early = candidates[(step <= first_exercise[owner]) & (step < flows.last_step[owner])]
    if early.size == 0:
        return
    owner = flows.owner[early]  # ascending: each bond's early flows are adjacent
    new = np.ones(owner.size, dtype=bool)
    np.not_equal(owner[1:], owner[:-1], out=new[1:])
    bonds, which = owner[new], np.cumsum(new) - 1
    shares = _edge_shares(a[bonds], sigma[bonds], spy[bonds])
    missed = shares[which, flows.step[early] - 1]
    flows.repayment[early] += (flows.coupon[early] + flows.repayment[early]) * (missed / (1.0 - missed))


def _edge_shares(a: np.ndarray, sigma: np.ndarray, steps_per_year: np.ndarray) -> np.ndarray:
    """Per bond, the share of a cash flow at step ``s = 1 .. EDGE_STEPS`` (column ``s - 1``) that the tree does not
    pay (docs/paper-instrument.md §6.3, Q1).

    The tree adds a flow of step ``s`` to the nodes of step ``s - 1``'s width, so while it grows (``s <= jmax``) the
    two outermost nodes of step ``s`` miss it: their share of the step's state prices. A node's state price is the
    product of the branchings and node discounts of its paths times factors common to the step (the curve's
    ``exp(-alpha dt)``, the spread's), so the share does not depend on the curve or the spread; the outermost
    nodes have one path each, ``prod_k pu_k x_(+-k)`` (``pu_k`` the interior up-branching of node ``k``,
    ``x_(+-k) = exp(-+k dr dt)``), and the step's total is ``1 + (dr dt)^2 (s-1) s (2s-1) / 36`` to second order
    (its rounding is below 1e-11 of the flow even at one step a year). 0 from step ``jmax + 1``. NumPy's ``exp``:
    the tree's constants to rounding, and so the share."""
    dt = 1.0 / steps_per_year.astype(np.float64)  # docs/paper-instrument.md §2 with a term unit of 365 days
    M = np.expm1(-a * dt)
    jmax = np.trunc(JMAX_FACTOR / M) + 1
    d = (np.sqrt(3.0 * (sigma * sigma) * -np.expm1(-2.0 * a * dt) / (2.0 * a)) * dt)[:, None]
    k = np.arange(EDGE_STEPS, dtype=np.float64)[None, :]
    M = M[:, None]
    pu = 1.0 / 6.0 + ((k * k) * M * M + k * M) * 0.5
    outer = np.cumprod(pu * np.exp(-d * k), axis=1) + np.cumprod(pu * np.exp(d * k), axis=1)
    s = k + 1.0
    total = 1.0 + d * d * ((s - 1.0) * s * (2.0 * s - 1.0) / 36.0)
    return np.where(s <= jmax[:, None], outer / total, 0.0)


def _expanded(found: Sequence[Problem], inverse: np.ndarray, rows: np.ndarray) -> list[Problem]:
    """Problems found on a column's distinct values (numbered by value) as the problems of the rows that hold those
    values (``rows[k]`` holds value ``inverse[k]``), in row order."""
    if not found:
        return []
    by_value: dict[int, list[tuple[str, str]]] = {}
    for value, field, message in found:
        by_value.setdefault(int(value), []).append((field, message))  # type: ignore[arg-type]
    hit = np.flatnonzero(np.isin(inverse, np.fromiter(by_value, dtype=np.int64, count=len(by_value))))
    return [(int(rows[k]), field, message) for k in hit.tolist() for field, message in by_value[int(inverse[k])]]


def _rows_problems(problems: Sequence[Problem], rows: np.ndarray, size: int) -> tuple[Problem, ...]:
    """The problems of ``rows`` (distinct rows of a book of ``size``), numbered as ``rows`` numbers them, in that
    order (:func:`trinom.columns.rows_problems` without a dictionary of every row)."""
    if not problems:
        return ()
    where = np.full(size, -1, dtype=np.int64)
    where[rows] = np.arange(rows.size)
    found = [(int(where[row]), field, message) for row, field, message in problems
             if row is not None and where[row] >= 0]
    return tuple(sorted(found, key=lambda problem: problem[0]))


def _segment_search(values: np.ndarray, start: np.ndarray, stop: np.ndarray, target: np.ndarray,
                    side: str = "left") -> np.ndarray:
    """Per segment ``values[start[k]:stop[k]]`` (ascending), the index in ``values`` where ``target[k]`` would go
    (:func:`numpy.searchsorted`'s ``side``): a binary search of every segment at once."""
    lo, hi = start.copy(), stop.copy()
    last = max(values.size - 1, 0)
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        value = values[np.minimum(mid, last)]
        right = open_ & ((value < target) if side == "left" else (value <= target))
        lo = np.where(right, mid + 1, lo)
        hi = np.where(open_ & ~right, mid, hi)


def _date_text(value: object) -> object:
    """A cell as what :func:`trinom.conventions.to_days` reads (dates and timestamps as ISO text)."""
    if hasattr(value, "isoformat") and not isinstance(value, str):
        text = value.isoformat()
        return text[:10] if len(text) > 10 and text[10:].strip("T0:") == "" else text
    return str(value)


def _day(day: int | np.integer) -> str:
    return str(np.datetime64(int(day), "D"))


def read_trades(path: str | Path, *, as_of: Any, schedule: Any = None, notionals: Any = None) -> Trades:
    """A ``trades.csv`` (or a Parquet table of the same columns) as :class:`Trades`; each row's messages name the file
    and its line. Unknown columns are an error naming them; ``id`` and ``type`` are required. ``schedule`` and
    ``notionals``: the paths of a ``schedule.csv`` (``id,date,price``) and a ``notionals.csv`` (``id,date,notional``),
    CSV or Parquet (or tables, as :class:`Trades` takes them); their messages name their file and line."""
    path = Path(path)
    side = {kind: read_side_table(table, kind) if isinstance(table, (str, Path)) else table
            for kind, table in (("schedule", schedule), ("notionals", notionals))}

    required = ("id", "type")
    optional = [name for name in TRADE_COLUMNS if name not in required]
    if parquet.is_parquet(path):
        header, *cells = parquet.read_text_rows(path)
        unknown = [name for name in header if name not in TRADE_COLUMNS]
        missing = [name for name in required if name not in header]
        if unknown or missing:
            raise InputError([(None, name, f"{path}: unknown column '{name}' (trades have: {', '.join(TRADE_COLUMNS)})")
                              for name in unknown] + [(None, name, f"{path}: missing column '{name}'") for name in missing])
        columns = {name: [row[k] for row in cells] for k, name in enumerate(header)}
        lines = None
        where = [f"{path} row {k}" for k in range(len(cells))]
    else:
        columns, lines = read_table_lines(path, required, optional)
        where = [f"{path} line {line}" for line in lines]
    trades = Trades(as_of=as_of, where=where, **side, **columns)
    check_row_ids([None if v is None else str(v) for v in trades.column("id").tolist()], path, lines=lines)
    return trades


def trade_curves(trades: Trades, curves: Any) -> Any:
    """The market of ``trades``: dated curves (a :class:`~trinom.model.DatedCurve` or a mapping of names to them, as
    of the trades' date) as :class:`~trinom.YieldCurve` in days from the as-of date; other curves as given."""
    from ..model import DatedCurve

    def converted(name: str, curve: Any) -> Any:
        if isinstance(curve, DatedCurve):
            if curve.as_of != trades.as_of:
                raise InputError([(None, "curves", f"curve {name!r} is as of {curve.as_of}, the trades as of "
                                   f"{trades.as_of}: price them on curves of their as-of date")])
            return curve.to_yield_curve()
        return curve

    if isinstance(curves, DatedCurve):
        return {curves.name or "default": converted(curves.name or "default", curves)}
    if isinstance(curves, Mapping):
        return {str(name): converted(str(name), curve) for name, curve in curves.items()}
    if curves is None:
        raise InputError([(None, "curves", "dated trades need their curves (a DatedCurve or a mapping of names to "
                           "them, as of the trades' date)")])
    return curves


def single_instrument(trades: Trades, curves: Any) -> tuple[Portfolio | BondPortfolio, Any, Legs]:
    """``trades`` as one tree-step instrument (what :func:`trinom.risk` and :func:`trinom.oas` take), the market's
    curves and how the trees add up to trades; a book of bonds and options, or of options on several curves, is an
    error saying so."""
    blocks, market_curves, legs = lowered(trades, curves)
    if len(blocks) == 1:  # consecutive trades of one kind (and options of one curve) are one block
        return blocks[0][1], market_curves, legs
    raise InputError([(None, "instruments", "these trades mix bonds and bond options (or options on several curves): "
                       "run risk or OAS on each kind apart")])


def lowered(trades: Trades, curves: Any) -> tuple[list[tuple[int, Portfolio | BondPortfolio]], Any, Legs]:
    """``trades`` as tree-step instruments on ``curves`` (see :meth:`Trades.instruments`), the curves as the market
    takes them, and how the trees add up to trades (:meth:`Trades.legs`)."""
    from ..market import Market

    market_curves = trade_curves(trades, curves)
    market = Market.of(market_curves)
    return (trades.instruments(market.names, market.curves), market_curves,
            trades.legs(market.names, market.curves))


def _take_caps(specs: CapSpecs, positions: np.ndarray) -> CapSpecs:
    """The caps at ``positions`` of ``specs``."""
    return replace(specs, **{f.name: getattr(specs, f.name)[positions] for f in fields(specs) if f.name != "as_of"})
