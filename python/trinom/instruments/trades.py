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
from ..bonds.portfolio import BondPortfolio
from ..columns import rows_problems
from ..constants import CALL, JMAX_FACTOR, PUT
from ..conventions import (
    accrual_fractions,
    accrued_interest,
    generate_schedules,
    parse_calendars,
    parse_conventions,
    parse_day_counts,
    parse_frequencies,
    to_days,
)
from ..conventions.names import Problem, distinct_values
from ..csvtable import read_table_lines
from ..errors import InputError
from ..portfolio import Portfolio
from ..row_ids import check_row_ids

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



def _cells(values: object, size: int, field: str) -> np.ndarray:
    """A column as an object array of ``size`` cells (None where empty: ``None``, ``""``, NaN)."""
    if values is None:
        return np.full(size, None, dtype=object)
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
        return out
    if raw.size == size and raw.dtype.kind == "U":  # text (a CSV's cells): blank is empty
        stripped = np.char.strip(raw)
        out = stripped.astype(object)
        out[stripped == ""] = None
        return out
    out = np.empty(size, dtype=object)
    for k, value in enumerate(array.tolist()):
        if isinstance(value, str):
            value = value.strip()
            out[k] = value if value else None
        elif value is None or (isinstance(value, float) and math.isnan(value)):
            out[k] = None
        elif isinstance(value, (np.datetime64,)) and np.isnat(value):
            out[k] = None
        else:
            out[k] = value
    return out


@dataclass(frozen=True, eq=False)
class _Parsed:
    """The trades' cells parsed into typed arrays, and every problem found (rows numbered in the book)."""

    kind: np.ndarray  #: index into :data:`TYPES` (-1: bad)
    numbers: dict[str, np.ndarray]  #: float columns (NaN where empty)
    dates: dict[str, np.ndarray]  #: day numbers (0 where empty or bad)
    present: dict[str, np.ndarray]  #: which cells were given
    text: dict[str, np.ndarray]  #: the text columns as given
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
        size = max(int(np.asarray(values, dtype=object).reshape(-1).size) for values in columns.values())
        self._size = size
        self._cells = {name: _cells(columns.get(name), size, name) for name in TRADE_COLUMNS}
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

    def _parse(self) -> _Parsed:
        problems: list[Problem] = []
        cells = self._cells
        size = len(self)
        present = {name: np.not_equal(cells[name], None) for name in TRADE_COLUMNS}
        text = {name: np.array(["" if v is None else str(v).strip().lower() for v in cells[name].tolist()],
                               dtype=object) for name in ("type", "option", "exercise")}
        kind = np.full(size, -1, dtype=np.int64)
        for k, value in enumerate(text["type"].tolist()):
            if value in TYPES:
                kind[k] = TYPES.index(value)
            elif not value:
                problems.append((k, "type", "type is missing: bond or bond_option"))
            else:
                problems.append((k, "type", f"type {cells['type'][k]!r} is not a trade type (bond, bond_option)"))
        numbers: dict[str, np.ndarray] = {}
        for name in ("notional", "coupon", "exercise_price", "strike", "a", "sigma", "spread", "steps_per_year"):
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
            if rows.size:
                values = cells[name][rows]
                if not all(isinstance(v, str) for v in values.tolist()):
                    values = np.array([_date_text(v) for v in values.tolist()], dtype=object)
                found, bad = to_days(values, field=name, rows=rows)
                days[rows] = found
                problems += bad
            dates[name] = days
        return _Parsed(kind=kind, numbers=numbers, dates=dates, present=present, text=text, problems=problems)

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
                problems += parse(self._cells[field][rows], field=field, rows=rows)[1]
        rows = np.flatnonzero(is_bond & present["calendar"])
        if rows.size:
            problems += parse_calendars(self._cells["calendar"][rows], field="calendar", rows=rows)[2]
        # options: call/put; a bond's also needs an exercise style, dates and a price
        for row in np.flatnonzero(present["option"] & (p.kind >= 0)):
            value = p.text["option"][row]
            if value not in ("call", "put"):
                problems.append((int(row), "option", f"option must be call or put, got {self._cells['option'][row]!r}"))
        has_option = is_bond & present["option"]
        need(has_option, "exercise", "european, bermudan or american (the bond has an option)")
        need(has_option, "first_exercise", "the first exercise date (the bond has an option)")
        need(has_option, "exercise_price", "the exercise price, clean per 100 (the bond has an option)")
        for row in np.flatnonzero(has_option & present["exercise"]):
            if p.text["exercise"][row] not in EXERCISES:
                problems.append((int(row), "exercise", f"exercise must be european, bermudan or american, got "
                                 f"{self._cells['exercise'][row]!r}"))
        windowed = has_option & np.isin(p.text["exercise"], ["bermudan", "american"])
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
        european = has_option & (p.text["exercise"] == "european") & present["last_exercise"] & ok["first_exercise"]
        for row in np.flatnonzero(european & ok["last_exercise"] & (d["last_exercise"] != d["first_exercise"])):
            problems.append((int(row), "last_exercise", "a european option has one exercise date: leave last_exercise "
                             "empty or equal to first_exercise"))
        if curve_names is not None:
            names = list(curve_names)
            for row in np.flatnonzero((p.kind >= 0) & present["curve"]):
                if str(self._cells["curve"][row]) not in names:
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
        spy = self._parsed().numbers["steps_per_year"]
        good = np.isfinite(spy) & (spy >= 1) & (spy <= MAX_STEPS_PER_YEAR)
        return np.where(good, np.round(np.where(good, spy, 1)), DEFAULT_STEPS_PER_YEAR).astype(np.int64)

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
        distinct, inverse = np.unique(np.where(np.equal(self._cells["curve"], None), "", self._cells["curve"]).astype(str),
                                      return_inverse=True)
        index = np.array([curve_names.index(name) if name in curve_names else 0 for name in distinct.tolist()],
                         dtype=np.int64)
        curve = index[inverse] if len(self) else np.zeros(0, dtype=np.int64)
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
            rows = np.arange(first, last)
            if kind[first] == 0:
                blocks.append((int(first), bonds[where_in_bonds[rows]]))  # type: ignore[index]
            else:
                blocks.append((int(first), self._options(rows, bad[rows], problems, curve_names[curve[first]])))
        return blocks

    def _options(self, rows: np.ndarray, bad: np.ndarray, problems: list[Problem], curve: str) -> Portfolio:
        p = self._parsed()
        spy = self.steps_per_year()[rows]
        years = {name: (p.dates[name][rows] - self.as_of_day) / YEAR_DAYS for name in ("maturity", "expiry")}
        fields = {"strike": np.where(bad, 100.0, p.numbers["strike"][rows]),
                  "maturity": np.where(bad, 1.0, years["maturity"]),
                  "expiry": np.where(bad, 0.0, years["expiry"]),
                  "term_unit": np.full(rows.size, float(YEAR_DAYS)), "term_steps": spy.astype(np.float64),
                  "a": np.where(bad, 0.1, p.numbers["a"][rows]), "sigma": np.where(bad, 0.01, p.numbers["sigma"][rows]),
                  "option_type": np.where(p.text["option"][rows] == "put", PUT, CALL).astype(np.int8)}
        local = rows_problems(problems, rows)
        return Portfolio.with_read_problems(local, curve=curve, **fields) if local else Portfolio(curve=curve, **fields)

    def _bonds(self, rows: np.ndarray, bad: np.ndarray, curve: np.ndarray, problems: list[Problem]) -> BondPortfolio:
        """The bond rows as a :class:`BondPortfolio` (every bond row, bad ones as placeholders with their problems)."""
        p = self._parsed()
        count = rows.size
        good = ~bad
        cell = {name: self._cells[name][rows] for name in ("frequency", "day_count", "calendar", "convention")}
        for name, default in BOND_DEFAULTS.items():
            cell[name] = np.where(np.equal(cell[name], None), default, cell[name])
        g = np.flatnonzero(good)
        spy = self.steps_per_year()[rows]
        as_of = self.as_of_day
        # schedules, coupons and accrued interest of the good bonds, all at once
        schedules = generate_schedules(effective=p.dates["issue"][rows[g]].astype("datetime64[D]"),
                                       termination=p.dates["maturity"][rows[g]].astype("datetime64[D]"),
                                       frequency=cell["frequency"][g], calendar=cell["calendar"][g],
                                       convention=cell["convention"][g], errors="mask", rows=rows[g],
                                       fields={"effective": "issue", "termination": "maturity"})
        late = list(schedules.problems)
        coupon = p.numbers["coupon"][rows[g]]
        fractions = accrual_fractions(schedules=schedules, day_count=cell["day_count"][g]) if g.size else np.zeros(0)
        accrued_good = (accrued_interest(schedules=schedules, day_count=cell["day_count"][g], coupon_rate=coupon,
                                         settlement=np.datetime64(as_of, "D")) if g.size else np.zeros(0))
        # a european option's exercise date: the accrued interest its exercise pays, by the bond's day count
        european = p.present["option"][rows[g]] & (p.text["exercise"][rows[g]] == "european")
        european_accrued = np.zeros(g.size)
        if european.any():
            e = np.flatnonzero(european)
            names, which = distinct_values(cell["day_count"][g][e])
            for k, name in enumerate(names):  # one call per day count: a name column costs a Python loop
                bonds = e[which == k]
                european_accrued[bonds] = accrued_interest(
                    schedules=schedules.take(bonds), day_count=name, coupon_rate=coupon[bonds],
                    settlement=p.dates["first_exercise"][rows[g][bonds]].astype("datetime64[D]"))
        period_owner = np.repeat(np.arange(g.size), np.maximum(schedules.counts - 1, 0))
        _start, end = schedules.period_bounds()
        amount = 100.0 * coupon[period_owner] * fractions
        is_last_period = np.zeros(end.size, dtype=bool)
        period_offsets = schedules.period_offsets
        has_periods = period_offsets[1:] > period_offsets[:-1]
        is_last_period[period_offsets[1:][has_periods] - 1] = True
        repayment = np.where(is_last_period, 100.0, 0.0)
        live = end > as_of
        owner, end, amount, repayment = period_owner[live], end[live], amount[live], repayment[live]
        step = np.maximum((2 * (end - as_of) * spy[g][owner] + YEAR_DAYS) // (2 * YEAR_DAYS), 1)
        # flows that fall on one step are paid together (a bond's flows come in date order: equal steps are adjacent)
        new = np.ones(step.size, dtype=bool)
        new[1:] = (owner[1:] != owner[:-1]) | (step[1:] != step[:-1])
        first_of = np.flatnonzero(new)
        inverse = np.cumsum(new) - 1
        flow_owner = owner[first_of]
        flow_step = step[first_of]
        flow_coupon = np.bincount(inverse, weights=amount, minlength=first_of.size)
        flow_repayment = np.bincount(inverse, weights=repayment, minlength=first_of.size)
        flows_per_good = np.bincount(flow_owner, minlength=g.size)
        # per bond: the last step, the exercise window
        n_good = np.zeros(g.size, dtype=np.int64)
        if flow_step.size:
            np.maximum.at(n_good, flow_owner, flow_step)
        first_ex, last_ex, every, strike, side = self._exercise(rows[g], spy[g], n_good, flow_owner, flow_step,
                                                                unique_dates=end[first_of], late=late,
                                                                flow_coupon=flow_coupon,
                                                                european_accrued=european_accrued)
        # a flow the tree pays before its width is full misses its outermost nodes: paid in full where no exercise
        # sees it (at or before the first exercise step); the maturity's is on every node already
        early = np.flatnonzero((flow_step <= EDGE_STEPS) & (flow_step <= first_ex[flow_owner])
                               & (flow_step < n_good[flow_owner]))
        if early.size:
            bonds, which = np.unique(flow_owner[early], return_inverse=True)
            shares = _edge_shares(p.numbers["a"][rows[g]][bonds], p.numbers["sigma"][rows[g]][bonds], spy[g][bonds])
            missed = shares[which, flow_step[early] - 1]
            flow_repayment[early] += (flow_coupon[early] + flow_repayment[early]) * (missed / (1.0 - missed))
        # every bond row: good rows from the above, bad (or late-failing) rows as placeholders
        late_rows = {row for row, _f, _m in late}
        placeholder = bad.copy()
        placeholder[np.isin(rows, list(late_rows))] = True
        counts = np.ones(count, dtype=np.int64)
        counts[g] = np.maximum(flows_per_good, 1)
        counts[placeholder] = 1
        offsets = np.concatenate(([0], np.cumsum(counts)))
        step_all = np.ones(offsets[-1], dtype=np.int64)
        coupon_all = np.zeros(offsets[-1])
        repay_all = np.full(offsets[-1], 100.0)
        keep = ~placeholder[g][flow_owner]
        position = offsets[g][flow_owner] + (np.arange(flow_owner.size) - np.concatenate(([0], np.cumsum(flows_per_good)))[
            flow_owner])
        step_all[position[keep]] = flow_step[keep]
        coupon_all[position[keep]] = flow_coupon[keep]
        repay_all[position[keep]] = flow_repayment[keep]
        n = np.ones(count, dtype=np.int64)
        n[g] = np.maximum(n_good, 1)
        n[placeholder] = 1
        spy_all = np.where(placeholder, 1, spy)

        def per_bond(good_values: np.ndarray, filler: float) -> np.ndarray:
            out = np.full(count, filler, dtype=np.float64)
            out[g] = good_values
            out[placeholder] = filler
            return out

        accrued = per_bond(accrued_good, 0.0)
        spread = np.where(np.isnan(p.numbers["spread"][rows]), 0.0, p.numbers["spread"][rows]) * 100.0
        fields = {"term_unit": np.full(count, YEAR_DAYS), "term_steps": spy_all,
                  "a": np.where(placeholder, 0.1, p.numbers["a"][rows]),
                  "sigma": np.where(placeholder, 0.01, p.numbers["sigma"][rows]),
                  "maturity": (n - 0.5) / spy_all, "cashflow_count": counts, "cashflow_step": step_all,
                  "repayment": repay_all, "coupon": coupon_all,
                  "spread": np.where(placeholder, 0.0, spread),
                  "option_type": per_bond(side, CALL).astype(np.int8), "strike": per_bond(strike, NO_EXERCISE_PRICE),
                  "first_exercise": per_bond(first_ex, 1).astype(np.int64),
                  "last_exercise": per_bond(last_ex, 1).astype(np.int64),
                  "exercise_frequency": per_bond(every, 1).astype(np.int64),
                  "curve_index": np.where(placeholder, 0, curve)}
        local = rows_problems(problems + self._where_prefixed(late), rows)
        if local:
            return BondPortfolio.with_read_problems(local, accrued=accrued, **fields)
        return BondPortfolio(accrued=accrued, **fields)

    def _exercise(self, rows: np.ndarray, spy: np.ndarray, n: np.ndarray, flow_owner: np.ndarray,
                  flow_step: np.ndarray, unique_dates: np.ndarray, late: list[Problem], flow_coupon: np.ndarray,
                  european_accrued: np.ndarray):
        """Per good bond: the exercise window's first and last step, its period, price and side (a bond without a
        live option: a call at :data:`NO_EXERCISE_PRICE` on its last step). A european option's price is lowered
        so that the tree pays ``exercise_price`` plus ``european_accrued`` (the day count's accrued interest at the
        exercise date) in place of its own accrued interest at that step (:func:`_tree_accrued`)."""
        p = self._parsed()
        count = rows.size
        as_of = self.as_of_day
        style = p.text["exercise"][rows]
        has = p.present["option"][rows]
        first_date, last_date = p.dates["first_exercise"][rows], p.dates["last_exercise"][rows]
        last_date = np.where(style == "european", first_date, last_date)

        def step_of(day: np.ndarray) -> np.ndarray:
            return np.maximum((2 * (day - as_of) * spy + YEAR_DAYS) // (2 * YEAR_DAYS), 1)

        first = step_of(np.maximum(first_date, as_of + 1))
        last = np.minimum(step_of(last_date), n)
        every = np.ones(count, dtype=np.int64)
        bermudan = has & (style == "bermudan")
        if bermudan.any():  # the coupon dates in the window: exercise on their steps only
            in_window = (unique_dates >= first_date[flow_owner]) & (unique_dates <= last_date[flow_owner])
            in_window &= bermudan[flow_owner] & (unique_dates > as_of)
            lo = np.full(count, np.iinfo(np.int64).max)
            hi = np.full(count, -1)
            np.minimum.at(lo, flow_owner[in_window], flow_step[in_window])
            np.maximum.at(hi, flow_owner[in_window], flow_step[in_window])
            first = np.where(bermudan, lo, first)
            last = np.where(bermudan, hi, last)
            every = np.where(bermudan, 65535, every)
            for k in np.flatnonzero(bermudan & (hi < 0) & (last_date > as_of)):
                late.append((int(rows[k]), "first_exercise", "no coupon date between first_exercise "
                             f"{_day(first_date[k])} and last_exercise {_day(last_date[k])}: a bermudan option is "
                             "exercised on coupon dates"))
        live = has & (last_date > as_of) & (first <= last)
        american = live & (style == "american")
        if american.any():  # the tree accrues no interest before its first cash flow: not priced right there yet
            first_flow = np.full(count, np.iinfo(np.int64).max)
            np.minimum.at(first_flow, flow_owner, flow_step)
            first_coupon = np.full(count, np.iinfo(np.int64).max)
            np.minimum.at(first_coupon, flow_owner, unique_dates)
            for k in np.flatnonzero(american & (first < first_flow)):
                late.append((int(rows[k]), "first_exercise", f"an american window open before the bond's next coupon "
                             f"({_day(first_coupon[k])}) is not priced yet: the tree pays no accrued interest before "
                             "its first cash flow (up to 1.8 per 100 off); start first_exercise on or after "
                             f"{_day(first_coupon[k])}, or price the right as european or bermudan"))
        strike = np.where(live, p.numbers["exercise_price"][rows], NO_EXERCISE_PRICE)
        european = live & (style == "european")
        if european.any():
            tree = _tree_accrued(np.flatnonzero(european), first[european], flow_owner, flow_step, flow_coupon)
            strike[european] = np.maximum(strike[european] + european_accrued[european] - tree, 0.0)
        side = np.where(live & (p.text["option"][rows] == "put"), PUT, CALL)
        first = np.where(live, first, n)
        last = np.where(live, last, n)
        every = np.where(live, every, 1)
        return first, last, every, strike, side


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


def _tree_accrued(bonds: np.ndarray, step: np.ndarray, flow_owner: np.ndarray, flow_step: np.ndarray,
                  flow_coupon: np.ndarray) -> np.ndarray:
    """The accrued interest the tree adds to the exercise price of bond ``bonds[k]`` at step ``step[k]``
    (docs/paper-instrument.md §6.4, operation for operation): ``(i - S) / (nx - S)`` of the coupon paid at ``S``,
    the bond's last cash-flow step at or before ``i``, ``nx`` the next; 0 before its first cash flow and on one.
    ``flow_*``: the bonds' cash flows, by bond and then step (every bond has at least one)."""
    start = np.searchsorted(flow_owner, bonds, side="left")
    lo, hi = start.copy(), np.searchsorted(flow_owner, bonds, side="right")
    while True:  # lo: the first of the bond's flows after the step (a binary search, all bonds at once)
        open_ = lo < hi
        if not open_.any():
            break
        mid = (lo + hi) // 2
        after = open_ & (flow_step[np.minimum(mid, flow_step.size - 1)] > step)
        lo = np.where(open_ & ~after, mid + 1, lo)
        hi = np.where(after, mid, hi)
    at = lo - 1  # the last flow at or before the step
    valid = at >= start
    valid[valid] = flow_step[at[valid]] < step[valid]  # on a cash-flow step: 0, the holder keeps the coupon
    out = np.zeros(bonds.size)
    k = at[valid]
    span = (flow_step[k + 1] - flow_step[k]).astype(np.float64)
    left = np.maximum(flow_step[k + 1] - step[valid], 0).astype(np.float64)
    out[valid] = ((span - left) / span) * flow_coupon[k]
    return out


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


def single_instrument(trades: Trades, curves: Any) -> tuple[Portfolio | BondPortfolio, Any]:
    """``trades`` as one tree-step instrument (what :func:`trinom.risk` and :func:`trinom.oas` take) and the market's
    curves; a book of bonds and options, or of options on several curves, is an error saying so."""
    blocks, market_curves = lowered(trades, curves)
    if len(blocks) == 1:  # consecutive trades of one kind (and options of one curve) are one block
        return blocks[0][1], market_curves
    raise InputError([(None, "instruments", "these trades mix bonds and bond options (or options on several curves): "
                       "run risk or OAS on each kind apart")])


def lowered(trades: Trades, curves: Any) -> tuple[list[tuple[int, Portfolio | BondPortfolio]], Any]:
    """``trades`` as tree-step instruments on ``curves`` (see :meth:`Trades.instruments`) and the curves as the
    market takes them."""
    from ..market import Market

    market_curves = trade_curves(trades, curves)
    names = Market.of(market_curves).names
    return trades.instruments(names), market_curves

