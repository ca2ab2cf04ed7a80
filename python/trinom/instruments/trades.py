"""Dated trades, as a desk writes them: fixed-rate bonds with an optional call or put, and European options on
zero-coupon bonds, given by dates, schedules, day counts and calendars (issue 25; the ``trades.csv`` contract).

A :class:`Trades` book holds one row per trade (the columns of :data:`TRADE_COLUMNS`; an empty cell means "not
applicable" or the default) and an as-of date. It validates every row at once (each problem names the row, the
field and, for a file, the line) and lowers to the tree-step instruments every engine prices:

* a ``bond`` to a :class:`~trinom.BondPortfolio` row: its coupon schedule generated backward from maturity
  (:mod:`trinom.conventions`), each coupon ``100 * coupon * accrual fraction`` (the bond's day count) paid on the
  period's (adjusted) end date, 100 repaid at maturity; only the flows after the as-of date are kept;
* a ``bond_option`` to a :class:`~trinom.Portfolio` row of the standard convention.

**The tree grid** is ``steps_per_year`` steps a year (default :data:`DEFAULT_STEPS_PER_YEAR`, one step a day), its
time the ACT/365F year fraction from the as-of date (the curves' time). **Every date maps to the step nearest its
time** (halves up; a cash flow never before step 1); flows that fall on one step are paid together. At the default
every date is a step of its own. Exercise:

* ``european``: on the step of ``first_exercise``;
* ``bermudan``: on the coupon dates from ``first_exercise`` to ``last_exercise`` (the steps of those coupons);
* ``american``: on every step from ``first_exercise`` to ``last_exercise``.

Exercise pays ``exercise_price`` (clean, per 100) plus the interest accrued since the last coupon; 0 on a coupon date,
where exercise is ex-coupon (the holder keeps the coupon), so ``bermudan`` exercise pays the price alone. A
``european`` option pays the accrued interest of the bond's day count at its date (QuantLib's): its price is lowered
to ``exercise_price`` plus that, less what the tree itself adds at its step (:func:`_tree_accrued`). ``american``
exercise pays the tree's own accrued interest, the paper's (docs/paper-instrument.md §6.4): at step ``i``,
``(i - S) / (nx - S)`` of the coupon paid at step ``S``, the last cash flow at or before ``i``, ``nx`` the next. That
is linear in steps (ACT days at one step a day) where the day count need not be; it is the previous coupon's amount
where the running period's may differ; and it is 0 before the first cash flow after the as-of date, where a bond
issued before then has accrued interest. Against QuantLib (tests/test_trades_quantlib.py), an american call window
open before a seasoned bond's next coupon would be off by the accrued interest it does not pay (-1.8 per 100 there):
such a window is refused as input (``first_exercise``, naming the coupon date); one over periods of unequal coupons
(ACT/360, ACT/365F semiannual) is off by 0.012 per 100, and 30/360's days against ACT's cost up to 0.005. Lowering
cannot mend the first two while cash flows must pay amounts >= 0 (a zero-paying flow at step 1 with a strike shift,
and the running period's coupon in ``coupon`` with the rest in ``repayment``, would:
1e-5 and 0.0034 then, on ACT/ACT-ICMA and ACT/365F). Exercise dates before the as-of date are gone: a bond whose
whole window has passed is priced without its option. A bond without an option lowers with a call at a price no tree
value reaches (:data:`NO_EXERCISE_PRICE`), which never binds.

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

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from .. import parquet
from ..constants import CALL, JMAX_FACTOR, PUT
from ..conventions import (
    Factorized,
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
from ..conventions.names import Problem
from ..csvtable import read_table_lines
from ..errors import InputError
from ..row_ids import check_row_ids
from .bond import BondPortfolio
from .legs import Legs
from .option import Portfolio

#: The columns of ``trades.csv``, in the contract's order (a file may hold them in any order, and leave out those
#: it does not use).
TRADE_COLUMNS: Final[tuple[str, ...]] = (
    "id", "type", "notional", "issue", "maturity", "coupon", "frequency", "day_count", "calendar", "convention",
    "option", "exercise", "first_exercise", "last_exercise", "exercise_price", "expiry", "strike", "a", "sigma",
    "spread", "curve", "steps_per_year")
#: Trade types.
TYPES: Final[tuple[str, ...]] = ("bond", "bond_option")
#: Exercise styles of a bond's call or put.
EXERCISES: Final[tuple[str, ...]] = ("european", "bermudan", "american")
#: Tree steps a year where a trade gives none: one a day, so that every date is a step of its own.
DEFAULT_STEPS_PER_YEAR: Final[int] = 365
#: Most steps a year a trade may ask for.
MAX_STEPS_PER_YEAR: Final[int] = 36500
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
              "last_exercise", "exercise_price")
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
    prefixed to its messages. Construction checks the shape only; :meth:`problems` checks the values.
    """

    def __init__(self, *, as_of: Any, where: Sequence[str] | None = None, **columns: Any):
        unknown = [name for name in columns if name not in TRADE_COLUMNS]
        if unknown:
            raise InputError([(None, name, f"unknown column '{name}' (trades have: {', '.join(TRADE_COLUMNS)})")
                              for name in unknown])
        if "type" not in columns:
            raise InputError([(None, "type", "a trade needs its type (bond or bond_option): missing column 'type'")])
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
        self._memo: dict[object, Any] = {}

    @classmethod
    def from_frame(cls, frame: Any, *, as_of: Any) -> Trades:
        """From a pandas DataFrame (or a mapping of column name to values) with the ``trades.csv`` columns."""
        if hasattr(frame, "columns") and hasattr(frame, "to_numpy"):
            return cls(as_of=as_of, **{str(c): frame[c].to_numpy(dtype=object) for c in frame.columns})
        return cls(as_of=as_of, **{str(k): v for k, v in dict(frame).items()})

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
                problems.append((int(k), "type", "type is missing: bond or bond_option"))
            else:
                problems.append((int(k), "type", f"type {cells['type'][k]!r} is not a trade type (bond, bond_option)"))
        numbers: dict[str, np.ndarray] = {}
        for name in ("notional", "coupon", "exercise_price", "strike", "a", "sigma", "spread", "steps_per_year"):
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
        for name in ("issue", "maturity", "first_exercise", "last_exercise", "expiry"):
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
        for field, parse in (("frequency", parse_frequencies), ("day_count", parse_day_counts),
                             ("convention", parse_conventions)):
            rows = np.flatnonzero(is_bond & present[field])
            if rows.size:
                problems += parse(self._factorized(field).take(rows), field=field, rows=rows)[1]
        rows = np.flatnonzero(is_bond & present["calendar"])
        if rows.size:
            problems += parse_calendars(self._factorized("calendar").take(rows), field="calendar", rows=rows)[2]
        # options: call/put; a bond's also needs an exercise style, dates and a price
        for row in np.flatnonzero(present["option"] & (p.kind >= 0) & (p.option < 0)):
            problems.append((int(row), "option", f"option must be call or put, got {self._cells['option'][row]!r}"))
        has_option = is_bond & present["option"]
        need(has_option, "exercise", "european, bermudan or american (the bond has an option)")
        need(has_option, "first_exercise", "the first exercise date (the bond has an option)")
        need(has_option, "exercise_price", "the exercise price, clean per 100 (the bond has an option)")
        for row in np.flatnonzero(has_option & present["exercise"] & (p.exercise < 0)):
            problems.append((int(row), "exercise", f"exercise must be european, bermudan or american, got "
                             f"{self._cells['exercise'][row]!r}"))
        windowed = has_option & ((p.exercise == _BERMUDAN) | (p.exercise == _AMERICAN))
        need(windowed, "last_exercise", "the last exercise date (a bermudan or american option has a window)")
        for field in ("exercise", "first_exercise", "last_exercise", "exercise_price"):
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
        if curve_names is not None:
            names = list(curve_names)
            curves = self._factorized("curve")
            unknown = np.array([str(value) not in names for value in curves.distinct], dtype=bool)[curves.inverse]
            for row in np.flatnonzero((p.kind >= 0) & present["curve"] & unknown):
                problems.append((int(row), "curve", f"curve {self._cells['curve'][row]!r} is not one of the curves "
                                 f"({', '.join(names)})"))
            if len(names) != 1:
                need(p.kind >= 0, "curve", f"the curve's name: the market has {len(names)} curves ({', '.join(names)})")
        problems = self._where_prefixed(problems)
        problems.sort(key=lambda item: -1 if item[0] is None else item[0])
        return problems

    def _where_prefixed(self, problems: list[Problem]) -> list[Problem]:
        if self._where is None:
            return problems
        return [(row, field, message if row is None else f"{self._where[row]}: {message}")
                for row, field, message in problems]

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

    def legs(self, curve_names: Sequence[str]) -> Legs:
        """How the trees of :meth:`instruments` add up to trades (one tree of weight 1 per bond and bond option)."""
        return Legs.one_each(len(self))

    def instruments(self, curve_names: Sequence[str]) -> list[tuple[int, Portfolio | BondPortfolio]]:
        """The trades as tree-step instruments, ``(first row, block)`` in row order: runs of consecutive trades of one
        type (and, for options, one curve), each lowered whole; a bad row is a row of its block carrying its
        problems (masked or raised by :func:`trinom.price` like any bad row)."""
        key = ("instruments", tuple(curve_names))
        if key not in self._memo:
            self._memo[key] = self._instruments(tuple(curve_names))
        return self._memo[key]

    def _instruments(self, curve_names: tuple[str, ...]) -> list[tuple[int, Portfolio | BondPortfolio]]:
        p = self._parsed()
        problems = self.problems(curve_names)
        bad = np.zeros(len(self), dtype=bool)
        bad[[row for row, _f, _m in problems if row is not None]] = True
        if any(row is None for row, _f, _m in problems):
            raise InputError([problem for problem in problems if problem[0] is None])
        curves = self._factorized("curve")
        index = np.array([curve_names.index(name) if name in curve_names else 0
                          for name in ("" if value is None else str(value) for value in curves.distinct)], dtype=np.int64)
        curve = index[curves.inverse]
        kind = np.where(p.kind < 0, 0, p.kind)  # a row of no type is a bad bond row
        group = np.where(kind == 1, 1 + curve, 0)
        starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1]))) if len(self) else np.zeros(0, int)
        bounds = np.append(starts, len(self))
        blocks: list[tuple[int, Portfolio | BondPortfolio]] = []
        bond_rows = np.flatnonzero(kind == 0)
        bonds = self._bonds(bond_rows, bad[bond_rows], curve[bond_rows], problems) if bond_rows.size else None
        where_in_bonds = np.full(len(self), -1, dtype=np.int64)
        where_in_bonds[bond_rows] = np.arange(bond_rows.size)
        for first, last in itertools.pairwise(bounds):
            if kind[first] == 0:  # a run of bonds: all of them (a book of bonds) or a part
                run = bonds if last - first == bond_rows.size else bonds[where_in_bonds[first:last]]  # type: ignore[index]
                blocks.append((int(first), run))  # type: ignore[arg-type]
            else:
                rows = np.arange(first, last)
                blocks.append((int(first), self._options(rows, bad[rows], problems, curve_names[curve[first]])))
        return blocks

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

    def _bonds(self, rows: np.ndarray, bad: np.ndarray, curve: np.ndarray, problems: list[Problem]) -> BondPortfolio:
        """The bond rows as a :class:`BondPortfolio` (every bond row, bad ones as placeholders with their problems)."""
        p = self._parsed()
        good = rows[~bad]
        spy = self._steps_per_year()[good]
        late: list[Problem] = []  # problems only lowering finds (a schedule of one date, an exercise window)
        coupons = self._coupons(good, late)
        flows = _flows(coupons, spy, self.as_of_day)
        exercise = self._exercise(good, spy, flows, late, coupons.european_accrued)
        _pay_early_flows_in_full(flows, exercise.first, p.numbers["a"][good], p.numbers["sigma"][good], spy)
        return self._bond_portfolio(rows, bad, curve, problems, late, coupons.accrued, flows, exercise)

    def _coupons(self, rows: np.ndarray, late: list[Problem]) -> _Coupons:
        """The coupon schedules of good bond ``rows`` (:mod:`trinom.conventions`, generated backward from maturity),
        the coupon of each period that ends after the as-of date (``100 * coupon * accrual fraction``, paid on the
        period's end), and the accrued interest at the as-of date and at a european exercise date. A schedule that
        rolls to a single date is a problem of ``late`` (and has no periods)."""
        p = self._parsed()
        as_of = self.as_of_day
        names = {name: self._factorized(name).filled(default).take(rows) for name, default in BOND_DEFAULTS.items()}
        schedules = generate_schedules(effective=as_dates(p.dates["issue"][rows]),
                                       termination=as_dates(p.dates["maturity"][rows]),
                                       frequency=self._factorized("frequency").take(rows), calendar=names["calendar"],
                                       convention=names["convention"], errors="mask", rows=rows,
                                       fields={"effective": "issue", "termination": "maturity"})
        late += schedules.problems
        coupon = p.numbers["coupon"][rows]
        day_count = names["day_count"]
        if rows.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return _Coupons(owner=empty, end=empty, amount=np.zeros(0), accrued=np.zeros(0),
                            european_accrued=np.zeros(0))
        fractions = accrual_fractions(schedules=schedules, day_count=day_count)
        accrued = accrued_interest(schedules=schedules, day_count=day_count, coupon_rate=coupon,
                                   settlement=np.datetime64(as_of, "D"))
        # a european option's exercise date: the accrued interest its exercise pays, by the bond's day count
        european = np.flatnonzero(p.present["option"][rows] & (p.exercise[rows] == _EUROPEAN))
        european_accrued = np.zeros(rows.size)
        if european.size:
            european_accrued[european] = accrued_interest(
                schedules=schedules.take(european), day_count=day_count.take(european), coupon_rate=coupon[european],
                settlement=as_dates(p.dates["first_exercise"][rows[european]]))
        _start, end = schedules.period_bounds()
        live = end > as_of
        owner = np.repeat(np.arange(rows.size), np.maximum(schedules.counts - 1, 0))[live]
        amount = (100.0 * coupon + 0.0)[owner]  # + 0.0: no coupon of -0.0 (it would sum on a step as 0.0)
        amount *= fractions[live]
        return _Coupons(owner=owner, end=end[live], amount=amount, accrued=accrued, european_accrued=european_accrued)

    def _exercise(self, rows: np.ndarray, spy: np.ndarray, flows: _Flows, late: list[Problem],
                  european_accrued: np.ndarray) -> _Exercise:
        """Per good bond: the exercise window's first and last step, its period, price and side (a bond without a
        live option: a call at :data:`NO_EXERCISE_PRICE` on its last step). A european option's price is lowered
        so that the tree pays ``exercise_price`` plus ``european_accrued`` (the day count's accrued interest at the
        exercise date) in place of its own accrued interest at that step (:func:`_tree_accrued`)."""
        p = self._parsed()
        count = rows.size
        as_of = self.as_of_day
        n = flows.last_step
        style = p.exercise[rows]
        has = p.present["option"][rows]
        first_date, last_date = p.dates["first_exercise"][rows], p.dates["last_exercise"][rows]
        last_date = np.where(style == _EUROPEAN, first_date, last_date)

        def step_of(day: np.ndarray) -> np.ndarray:
            return np.maximum((2 * (day - as_of) * spy + YEAR_DAYS) // (2 * YEAR_DAYS), 1)

        first = step_of(np.maximum(first_date, as_of + 1))
        last = np.minimum(step_of(last_date), n)
        every = np.ones(count, dtype=np.int64)
        bermudan = np.flatnonzero(has & (style == _BERMUDAN))
        if bermudan.size:  # the coupon dates in the window: exercise on their steps only (a bond's dates ascend)
            start, stop = flows.offsets[bermudan], flows.offsets[bermudan + 1]
            lo = _segment_search(flows.date, start, stop, first_date[bermudan], side="left")
            hi = _segment_search(flows.date, lo, stop, last_date[bermudan], side="right")
            inside = lo < hi
            first[bermudan] = np.iinfo(np.int64).max  # no coupon date in the window: never live
            last[bermudan] = -1
            first[bermudan[inside]] = flows.step[lo[inside]]
            last[bermudan[inside]] = flows.step[hi[inside] - 1]
            every[bermudan] = 65535
            for k in bermudan[~inside & (last_date[bermudan] > as_of)]:
                late.append((int(rows[k]), "first_exercise", "no coupon date between first_exercise "
                             f"{_day(first_date[k])} and last_exercise {_day(last_date[k])}: a bermudan option is "
                             "exercised on coupon dates"))
        live = has & (last_date > as_of) & (first <= last)
        american = live & (style == _AMERICAN)
        if american.any():  # the tree accrues no interest before its first cash flow: not priced right there yet
            first_flow = np.full(count, np.iinfo(np.int64).max)
            first_coupon = np.full(count, np.iinfo(np.int64).max)
            with_flows = np.flatnonzero(flows.counts > 0)
            first_flow[with_flows] = flows.step[flows.offsets[with_flows]]
            first_coupon[with_flows] = flows.date[flows.offsets[with_flows]]
            for k in np.flatnonzero(american & (first < first_flow)):
                late.append((int(rows[k]), "first_exercise", f"an american window open before the bond's next coupon "
                             f"({_day(first_coupon[k])}) is not priced yet: the tree pays no accrued interest before "
                             "its first cash flow (up to 1.8 per 100 off); start first_exercise on or after "
                             f"{_day(first_coupon[k])}, or price the right as european or bermudan"))
        strike = np.where(live, p.numbers["exercise_price"][rows], NO_EXERCISE_PRICE)
        european = live & (style == _EUROPEAN)
        if european.any():
            tree = _tree_accrued(np.flatnonzero(european), first[european], flows)
            strike[european] = np.maximum(strike[european] + european_accrued[european] - tree, 0.0)
        side = np.where(live & (p.option[rows] == _PUT_CELL), PUT, CALL)
        return _Exercise(first=np.where(live, first, n), last=np.where(live, last, n), every=np.where(live, every, 1),
                         strike=strike, side=side)

    def _bond_portfolio(self, rows: np.ndarray, bad: np.ndarray, curve: np.ndarray, problems: list[Problem],
                        late: list[Problem], accrued_good: np.ndarray, flows: _Flows,
                        exercise: _Exercise) -> BondPortfolio:
        """Every bond row: the good ones from their flows and exercise, and in place of a bad (or late-failing) one a
        placeholder (one flow of 100 at step 1), each row carrying its problems."""
        p = self._parsed()
        count = rows.size
        g = np.flatnonzero(~bad)
        placeholder = bad.copy()
        placeholder[np.isin(rows, [row for row, _f, _m in late])] = True
        real = ~placeholder[g]  # the good bonds that keep their flows
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
        cashflows = {}
        for name, values, filler in (("cashflow_step", flows.step, 1), ("coupon", flows.coupon, 0.0),
                                     ("repayment", flows.repayment, 100.0)):
            if kept is not None:
                values = values[kept]
            if lone_slots.size:
                out = np.empty(offsets[-1], dtype=values.dtype)
                out[slots] = values
                out[lone_slots] = filler
                values = out
            cashflows[name] = values
        n = np.ones(count, dtype=np.int64)
        n[g] = np.maximum(flows.last_step, 1)
        n[placeholder] = 1
        spy = self._steps_per_year()[rows]
        spy_all = np.where(placeholder, 1, spy)

        def per_bond(good_values: np.ndarray, filler: float) -> np.ndarray:
            out = np.full(count, filler, dtype=np.float64)
            out[g] = good_values
            out[placeholder] = filler
            return out

        spread = np.where(np.isnan(p.numbers["spread"][rows]), 0.0, p.numbers["spread"][rows]) * 100.0
        fields = {"term_unit": np.full(count, YEAR_DAYS), "term_steps": spy_all,
                  "a": np.where(placeholder, 0.1, p.numbers["a"][rows]),
                  "sigma": np.where(placeholder, 0.01, p.numbers["sigma"][rows]),
                  "maturity": (n - 0.5) / spy_all, "cashflow_count": counts, **cashflows,
                  "spread": np.where(placeholder, 0.0, spread),
                  "option_type": per_bond(exercise.side, CALL).astype(np.int8),
                  "strike": per_bond(exercise.strike, NO_EXERCISE_PRICE),
                  "first_exercise": per_bond(exercise.first, 1).astype(np.int64),
                  "last_exercise": per_bond(exercise.last, 1).astype(np.int64),
                  "exercise_frequency": per_bond(exercise.every, 1).astype(np.int64),
                  "curve_index": np.where(placeholder, 0, curve)}
        accrued = per_bond(accrued_good, 0.0)
        local = _rows_problems(problems + self._where_prefixed(late), rows, len(self))
        if local:
            return BondPortfolio.with_read_problems(local, accrued=accrued, **fields)
        return BondPortfolio(accrued=accrued, **fields)


@dataclass(frozen=True, eq=False)
class _Coupons:
    """Good bonds' coupons: the periods that end after the as-of date, in bond and date order."""

    owner: np.ndarray  #: the period's bond (an index among the good bonds)
    end: np.ndarray  #: the period's (adjusted) end date, a day number: the coupon's payment date
    amount: np.ndarray  #: the coupon per 100
    accrued: np.ndarray  #: per bond, the day count's accrued interest at the as-of date
    european_accrued: np.ndarray  #: per bond, that at its european exercise date (0 for the others)


@dataclass(frozen=True, eq=False)
class _Flows:
    """Good bonds' cash flows on tree steps, in bond and step order (a bond's coupons of one step are one flow)."""

    owner: np.ndarray  #: the flow's bond (an index among the good bonds)
    step: np.ndarray  #: its tree step (ascending within a bond)
    date: np.ndarray  #: the date of the step's first coupon (a day number)
    coupon: np.ndarray  #: the coupons paid at the step, per 100
    repayment: np.ndarray  #: 100 at the bond's last flow (and the share the tree misses: _pay_early_flows_in_full)
    offsets: np.ndarray  #: bond ``k``'s flows are ``[offsets[k]:offsets[k + 1]]``

    @property
    def counts(self) -> np.ndarray:
        """Per bond, its number of flows."""
        return np.diff(self.offsets)

    @property
    def last_step(self) -> np.ndarray:
        """Per bond, the step of its last flow (0 without flows)."""
        counts = self.counts
        out = np.zeros(counts.size, dtype=np.int64)
        out[counts > 0] = self.step[self.offsets[1:][counts > 0] - 1]
        return out


@dataclass(frozen=True, eq=False)
class _Exercise:
    """Good bonds' exercise: window (first and last step), period in steps, price and side."""

    first: np.ndarray
    last: np.ndarray
    every: np.ndarray
    strike: np.ndarray
    side: np.ndarray


def _flows(coupons: _Coupons, spy: np.ndarray, as_of: int) -> _Flows:
    """The coupons on tree steps (``spy`` steps a year per bond; each date on the step nearest its time, halves up,
    never before step 1), the coupons of one step paid together, and 100 repaid with each bond's last coupon."""
    owner, end, amount = coupons.owner, coupons.end, coupons.amount
    uniform = spy.size > 0 and bool(np.all(spy == spy[0]))  # one tree resolution for the book: no gather
    step = end - as_of
    step *= 2
    step *= spy[0] if uniform else spy[owner]
    step += YEAR_DAYS
    step //= 2 * YEAR_DAYS
    np.maximum(step, 1, out=step)
    # a bond's flows come in date order: the coupons of one step are adjacent
    merged = np.zeros(step.size, dtype=bool)
    np.equal(step[1:], step[:-1], out=merged[1:])
    merged[1:] &= owner[1:] == owner[:-1]
    if merged.any():
        later = np.flatnonzero(merged)  # the j-th of them joins the flow before it: flow later[j] - j - 1
        first = ~merged
        coupon = amount[first]
        np.add.at(coupon, later - np.arange(1, later.size + 1), amount[later])  # in date order, as a sum
        owner, step, end = owner[first], step[first], end[first]
    else:
        coupon = amount
    counts = np.bincount(owner, minlength=spy.size)
    offsets = np.zeros(spy.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    repayment = np.zeros(step.size)
    repayment[offsets[1:][counts > 0] - 1] = 100.0
    return _Flows(owner=owner, step=step, date=end, coupon=coupon, repayment=repayment, offsets=offsets)


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


def _tree_accrued(bonds: np.ndarray, step: np.ndarray, flows: _Flows) -> np.ndarray:
    """The accrued interest the tree adds to the exercise price of bond ``bonds[k]`` at step ``step[k]``
    (docs/paper-instrument.md §6.4, operation for operation): ``(i - S) / (nx - S)`` of the coupon paid at ``S``,
    the bond's last cash-flow step at or before ``i``, ``nx`` the next; 0 before its first cash flow and on one."""
    start = flows.offsets[bonds]
    at = _segment_search(flows.step, start, flows.offsets[bonds + 1], step, side="right") - 1  # the last at or before
    valid = at >= start
    valid[valid] = flows.step[at[valid]] < step[valid]  # on a cash-flow step: 0, the holder keeps the coupon
    out = np.zeros(bonds.size)
    k = at[valid]
    span = (flows.step[k + 1] - flows.step[k]).astype(np.float64)
    left = np.maximum(flows.step[k + 1] - step[valid], 0).astype(np.float64)
    out[valid] = ((span - left) / span) * flows.coupon[k]
    return out


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


def read_trades(path: str | Path, *, as_of: Any) -> Trades:
    """A ``trades.csv`` (or a Parquet table of the same columns) as :class:`Trades`; each row's messages name the file
    and its line. Unknown columns are an error naming them; ``id`` and ``type`` are required."""
    path = Path(path)

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
    trades = Trades(as_of=as_of, where=where, **columns)
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
    names = Market.of(market_curves).names
    return trades.instruments(names), market_curves, trades.legs(names)
