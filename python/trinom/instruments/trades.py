"""Dated trades, as a desk writes them: fixed-rate bonds with an optional call or put, and European options on
zero-coupon bonds, given by dates, schedules, day counts and calendars (issue 25; the ``trades.csv`` contract).

A :class:`Trades` book holds one row per trade (the columns of :data:`TRADE_COLUMNS`; an empty cell means "not
applicable" or the default), an as-of date and two optional side tables (:mod:`trinom.instruments.side_tables`; a
pandas DataFrame or a mapping of columns): ``schedule`` (``id,date,price``: explicit and step-down exercise schedules)
and ``notionals`` (``id,date,notional``: amortizing notionals). :func:`trinom.io.trade_files.read_trades` (also
``trinom.read_trades``) reads a book and its side tables from CSV or Parquet. A book validates every row at once (each
problem names the row, the field and, for a file, the line; a side table's also its own file and line) and lowers to
the tree-step instruments every engine prices:

* a ``bond`` to a :class:`~trinom.BondPortfolio` row: its coupon schedule generated backward from maturity
  (:mod:`trinom.conventions`), each coupon ``100 * coupon * accrual fraction`` (the bond's day count) paid on the
  period's (adjusted) end date, 100 repaid at maturity; only the flows after the as-of date are kept;
* a ``bond_option`` to a :class:`~trinom.Portfolio` row of the standard convention; one with a ``coupon``, an option
  on that coupon bond, to two bond trees (:mod:`trinom.instruments.bond_options`).

The bond lowering is :mod:`trinom.instruments.dated_bond` (:func:`~trinom.instruments.dated_bond.lower_dated_bonds`,
on arrays, for any trade that lowers to dated bonds): how dates map to tree steps, how exercise becomes the tree's
window or listed points, and how notice days, amortization and the tree's early cash flows are lowered.

**The tree grid** is ``steps_per_year`` steps a year (default :data:`DEFAULT_STEPS_PER_YEAR`, one step a day), its
time the ACT/365F year fraction from the as-of date (the curves' time). Every date maps to the step nearest its time
(halves up; a cash flow never before step 1); flows that fall on one step are paid together. At the default every
date is a step of its own.

**Exercise** pays the exercise price, clean per 100 of the notional outstanding, plus the interest accrued at the
exercise date by the bond's day count (QuantLib's ``accruedAmount``; 0 on a coupon date, where exercise is ex-coupon:
the holder keeps the coupon). Where it is on dates, each date is a listed exercise point of the tree at its step:

* ``european``: on ``first_exercise`` (or its one ``schedule.csv`` row);
* ``bermudan``: on the coupon dates (adjusted period ends) from ``first_exercise`` to ``last_exercise``, or on exactly
  the trade's ``schedule.csv`` dates, each at its own price;
* ``american``: on every step from ``first_exercise`` to ``last_exercise`` (the tree's own window where its accrued
  interest is the day count's, else listed points: :mod:`trinom.instruments.dated_bond`); with ``schedule.csv`` rows,
  from each listed date to the day before the next at that date's price, the last to ``last_exercise`` (the maturity
  where it is empty).

Exercise dates before the as-of date are gone (a desk's past call dates in ``schedule.csv`` are expired exercise, not
an error): a bond whose exercise has all passed is priced without its option. A bond without an option lowers with a
call at a price no tree value reaches (:data:`NO_EXERCISE_PRICE`), which never binds. A trade with ``schedule.csv``
rows needs ``option`` and ``exercise`` (european: one row); ``first_exercise``, ``last_exercise`` and
``exercise_price`` may be empty, and where given must agree with the schedule (its first date, its last date
(american: ``last_exercise`` on or after it, the end of the last price), its first price) or they are errors; a row's
date must be within the bond's life (issue to maturity) and not repeat.

**Notice days** (``notice_days``, whole calendar days, default 0): the decision is taken that many days before each
exercise date; the point is at the decision date's step and its price is the exercise's value there, discounted from
the exercise date on the trade's curve (:mod:`trinom.instruments.dated_bond`). An exercise whose decision date is not
after the as-of date is gone.

**Amortizing bonds** (``notionals.csv``): from each row's date, a coupon date of the bond (adjusted or not, before
maturity), the outstanding notional is the row's, in the units of the trade's ``notional`` (which the trade must
give); the difference to the one before is repaid on that date, the rest at maturity. Coupons are paid on the
notional outstanding in their period, everything per 100 of the original notional; exercise prices are per 100 of
the notional outstanding at the exercise date. A notional may not increase, be negative or exceed the trade's.

``spread`` is the OAS as a decimal (continuous, added to the short rate; the book's percent times 100). Prices are
per 100 notional: ``price`` (dirty, the tree's root, the value at the as-of date), ``accrued`` (the day count's
interest accrued at the as-of date, QuantLib's ``accruedAmount``) and ``clean = price - accrued``.

The names of the bond lowering (:mod:`~trinom.instruments.dated_bond`) and of the side tables
(:mod:`~trinom.instruments.side_tables`) stay importable from here for one release.

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
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..conventions import to_days
from ..conventions.dates import day_text
from ..conventions.names import Problem
from ..errors import InputError
from ..model.curve import YieldCurve
from ..ragged import runs
from ..result import Prices
from .bond import BondPortfolio
from .bond_options import append_coupon_options
from .bond_rows import BOND_DEFAULTS, amortization_of, dated_bonds_of, exercise_inputs
from .cap import cap_trees, lower_caps, vol_prices, zero_trees
from .constants import CALL, PUT
from .coupon_options import CouponOptions
from .dated_bond import (
    NO_EXERCISE_PRICE,
    Amortization,
    DatedBonds,
    ExerciseDates,
    ExerciseWindows,
    LoweredBonds,
    lower_dated_bonds,
    portfolio_fields,
)
from .floating import FIXED, FIXED_TO_FLOAT, FloatingTerms, floating_lowered, lowered_coupon
from .legs import Legs
from .option import Portfolio
from .rate_trades import RateRows
from .settlement import settlement_dates, settlement_terms
from .side_tables import SIDE_COLUMNS, side_table
from .sigma_pieces import PIECE_TYPES, RowPieces, with_tree_pieces
from .sigma_pieces import rows_part as pieces_part
from .swaption import lower_swaptions
from .trade_checks import (
    _PUT_CELL,
    DEFAULT_STEPS_PER_YEAR,
    EXERCISES,
    MAX_NOTICE_DAYS,
    MAX_STEPS_PER_YEAR,
    PLAUSIBLE_PRICES,
    PLAUSIBLE_SIGMA,
    PLAUSIBLE_SPREAD,
    TRADE_COLUMNS,
    TYPES,
    TradeChecks,
    cells_of,
    size_of,
)
from .tree_steps import YEAR_DAYS, date_of_step, step_before, step_of

#: Trade types that lower to bond trees (the others lower to option trees).
_BOND_FAMILY = (0, 2)
#: Trade kinds priced on option trees (bond options, caps, floors): on bond trees where they have sigma pieces.
_OPTION_TREE_KINDS = (1, 3, 4)


class Trades(TradeChecks):
    """A book of dated trades (one row per trade) and its as-of date; see the module's docstring.

    Every column of :data:`TRADE_COLUMNS` is a keyword (a sequence of cells, one per trade, or a scalar for all);
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
        size = max(size_of(values) for values in columns.values())
        self._size = size
        self._cells: dict[str, np.ndarray] = {}
        self._given_numbers: dict[str, np.ndarray] = {}  # columns given as arrays of numbers, as float64
        for name in TRADE_COLUMNS:
            self._cells[name], numbers = cells_of(columns.get(name), size, name)
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
        self._side = {"schedule": side_table(schedule, "schedule"), "notionals": side_table(notionals, "notionals")}
        self._extra: tuple[Problem, ...] = ()  # problems found outside the book (a model file's), see with_problems
        self._replaced: set[tuple[int | None, str]] = set()  # the book's own problems that those replace
        self._sigma_pieces: RowPieces = {}  # per row, sigma as a step function of dates (with_sigma_pieces)
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
        and ``sigma`` from a calibration (:func:`trinom.cli.calibrate.read_model_file`)."""
        unknown = [name for name in columns if name not in TRADE_COLUMNS]
        if unknown:
            raise InputError([(None, name, f"unknown column '{name}' (trades have: {', '.join(TRADE_COLUMNS)})")
                              for name in unknown])
        book = copy.copy(self)
        book._cells, book._given_numbers, book._memo = dict(self._cells), dict(self._given_numbers), {}
        if "sigma" in columns:  # one sigma a trade now (with_sigma_pieces gives pieces after)
            book._sigma_pieces = {}
        for name, values in columns.items():
            book._cells[name], numbers = cells_of(values, len(self), name)
            book._given_numbers.pop(name, None)
            if numbers is not None:
                book._given_numbers[name] = numbers
        return book

    def explained(self, result: Prices) -> Prices:
        """``result`` with the problems its trees found (the engines' checks of sigma, a tree's width and height) said
        in the trade's terms: after the row's place (its file's line), and a tree too tall as its ``steps_per_year``
        and maturity (not the tree's exercise steps it overflows)."""
        if not result.problems:
            return result
        problems = self.explained_problems(result.problems)
        said: dict[int | None, list[str]] = {}
        for row, _field, message in problems:
            said.setdefault(row, []).append(message)
        error = np.asarray(result.error, dtype=object).copy()
        for row, messages in said.items():
            if row is not None and error[row] != "":
                error[row] = "; ".join(messages)
        failed = error != ""  # a failed row has no accrued interest either (it was 0 or a placeholder's)
        accrued = np.where(failed, np.nan, result.accrued)
        return replace(result, problems=tuple(problems), error=error, accrued=accrued,
                       clean=np.where(failed, np.nan, result.clean))

    def explained_problems(self, problems: Sequence[Problem]) -> list[Problem]:
        """The trees' ``problems`` of these trades' rows in the trade's terms (:meth:`explained`), repeats dropped."""
        spy = self._steps_per_year()
        maturity = self._parsed().dates["maturity"]
        tall_fields = {"first_exercise", "last_exercise", "cashflow_step", "exercise_step", "maturity"}
        said: dict[int | None, list[Problem]] = {}
        for row, field, message in problems:
            placed = self._where is not None and row is not None and message.startswith(self._where[row])
            if row is not None and not placed:
                if field in tall_fields and "0..65535" in message:
                    steps = round((int(maturity[row]) - self.as_of_day) * int(spy[row]) / YEAR_DAYS)
                    field, message = "steps_per_year", (
                        f"steps_per_year {int(spy[row])} gives a tree of about {steps} steps to maturity "
                        f"{day_text(int(maturity[row]))}, more than 65535: lower steps_per_year")
                elif "gives a tree of width" in message:
                    message += f" at steps_per_year {int(spy[row])} (the width grows with steps_per_year / a)"
                if self._where is not None:
                    message = f"{self._where[row]}: {message}"
            if (row, field, message) not in said.setdefault(row, []):
                said[row].append((row, field, message))
        return [item for items in said.values() for item in items]

    def notionals(self) -> np.ndarray:
        """Per trade its notional, 100 where the cell is empty (or bad): prices are per 100 of it, values in its
        currency (:attr:`trinom.Prices.value`)."""
        given = self._parsed().numbers["notional"]
        return np.where(np.isfinite(given) & (given > 0), given, 100.0)

    def vol_prices(self, curve_names: Sequence[str], curves: Sequence[YieldCurve]) -> np.ndarray | None:
        """Per row, a cap's or floor's price per 100 off its quoted ``vol`` (:func:`~trinom.instruments.cap.vol_prices`;
        NaN for the other rows and bad ones), once :meth:`instruments` has checked the rows; None where no row
        quotes one. A cap with no such price says why among :meth:`warnings`."""
        names = tuple(curve_names)
        rate = self._memo.get(("rate", names))
        if rate is None or rate.caps.vol is None or not np.isfinite(rate.caps.vol).any():
            return None
        rows = rate.caps.rows
        caps = replace(rate.caps, curve=self.curve_index(names)[rows], forecast=self.forecast_index(names)[rows])
        prices, why = vol_prices(caps, curves)
        said = self._memo.setdefault("warnings", {})
        for k, message in why:
            said.setdefault(int(rows[k]), message)
        out = np.full(len(self), np.nan)
        out[rows] = prices
        return out

    def settlement_prices(self, curves: Sequence[YieldCurve], price: np.ndarray) -> dict[str, np.ndarray]:
        """Where a bond settles apart from the as-of date (``settlement_days``), per row its settlement date and clean
        price and accrued interest there (:mod:`trinom.instruments.settlement`; ``price``: the rows' at the as-of
        date, one scenario); ``{}`` where none does."""
        terms = self._memo.get("settlement")
        return {} if terms is None or price.ndim != 1 else terms.prices(curves, price)

    def with_settlement(self, days: int) -> Trades:
        """The same book with its bonds whose ``settlement_days`` is empty settling ``days`` business days after the
        as-of date (``trinom price --settlement``)."""
        parsed = self._parsed()
        given = self._given_numbers.get("settlement_days")
        cells = np.array(self.column("settlement_days") if given is None else given, dtype=object)
        cells[~parsed.present["settlement_days"] & (parsed.kind == 0)] = days
        return self.with_columns(settlement_days=cells)

    def warnings(self) -> list[tuple[int, str]]:
        """``(row, message)`` of the rows lowered so far that price as asked but not as a user may expect: a bond
        whose exercise has all passed (dates on or before the as-of date, or moved there by notice days) is priced
        without its option. Each message after the row's place (its file's line)."""
        said = self._memo.get("warnings", {})
        return [(row, message if self._where is None else f"{self._where[row]}: {message}")
                for row, message in sorted(said.items())]

    def with_sigma_pieces(self, pieces: Mapping[str, tuple[Sequence[Any], Sequence[float]]]) -> Trades:
        """The same book with a sigma piecewise constant in time for the trades named (issue 37): ``{id: (until,
        sigmas)}``, ``sigmas[0]`` up to ``until[0]``, ..., the last open-ended (:mod:`trinom.instruments.sigma_pieces`;
        a model file's ``until`` rows give them to ``trinom price --model``). The trade's ``sigma`` becomes its first
        piece's. Bonds and swaptions take pieces (their trees keep one grid and match each step's variance:
        :mod:`trinom.model.piecewise_tree`); the ``futhark`` and ``reference`` engines price them.

        >>> book = Trades(as_of="2026-11-25", id=["B1"], type="bond", issue="2025-03-15", maturity="2034-03-15",
        ...               coupon=0.04, frequency=2, option="call", exercise="bermudan", first_exercise="2028-03-15",
        ...               exercise_price=100, a=0.05, sigma=0.01, steps_per_year=12)
        >>> book.with_sigma_pieces({"B1": (["2028-03-15"], [0.012, 0.009])}).column("sigma").tolist()
        [0.012]
        """
        from .sigma_pieces import read_pieces

        given = read_pieces(pieces, self.ids, self.as_of_day, self._where)
        kinds = self._cells["type"]
        wrong = [(row, "sigma", f"trade {self.ids[row]!r} is a {kinds[row]!r}: sigma pieces apply to "
                  f"{', '.join(PIECE_TYPES)}") for row in given
                 if str(kinds[row]).strip().lower() not in PIECE_TYPES]
        if wrong:
            raise InputError(wrong)
        sigma = np.array(self._cells["sigma"], dtype=object)
        for row, (_until, values) in given.items():
            sigma[row] = float(values[0])
        book = self.with_columns(sigma=sigma)
        book._sigma_pieces = {**self._sigma_pieces, **given}
        return book

    def sigma_pieces(self) -> RowPieces:
        """Per row with sigma pieces (:meth:`with_sigma_pieces`): the days where each piece but the last ends, and
        every piece's sigma."""
        return dict(self._sigma_pieces)

    def with_problems(self, problems: Sequence[Problem], replacing: Sequence[str] = ()) -> Trades:
        """The same book with ``problems`` of its rows found elsewhere (a model file's ``no fit`` for a trade that has
        no parameters of its own): those rows are bad rows like any other, raised or masked (``errors="mask"``), each
        message after the row's place. The book's own problems of the ``replacing`` fields on those rows give way to
        them (``a is missing`` where the model file is what lacks the trade's parameters)."""
        book = copy.copy(self)
        book._memo = {}
        book._extra = self._extra + tuple(problems)
        book._replaced = self._replaced | {(row, field) for row, _f, _m in problems for field in replacing}
        return book

    def divisible(self) -> bool:
        """Whether :meth:`rows` parts price as the whole book does: every side-table row names one trade of the book,
        and no problem found elsewhere is the whole book's (else the whole book's call says so)."""
        owned = all(bool(np.all(self.side_owners(kind) >= 0)) for kind in self._side)
        return owned and all(row is not None for row, _f, _m in self._extra)

    def rows(self, lo: int, hi: int) -> Trades:
        """Trades ``lo`` to ``hi - 1`` as a book of their own, numbered from 0: their cells, places and problems found
        elsewhere, and the side tables' rows that name them (a trade without an id keeps its row in the whole book
        as its id). Its prices are the whole book's rows ``lo:hi`` where :meth:`divisible` (a trade's lowering
        depends on its own row and side rows alone): a large book is lowered and priced a part at a time
        (:func:`trinom.pipeline.price_trades`)."""
        if not 0 <= lo <= hi <= len(self):
            raise ValueError(f"rows {lo}..{hi} are not within the book's {len(self)} trades")
        part = copy.copy(self)
        part._size, part._memo = hi - lo, {}
        part._cells = {name: cells[lo:hi] for name, cells in self._cells.items()}
        part._given_numbers = {name: numbers[lo:hi] for name, numbers in self._given_numbers.items()}
        part._where = None if self._where is None else self._where[lo:hi]
        tables = {kind: table for kind, table in self._side.items() if table is not None and len(table)}
        if tables and any(value is None for value in part._cells["id"].tolist()):
            ids = part._cells["id"].copy()
            empty = np.flatnonzero(np.equal(ids, None))
            ids[empty] = [str(lo + k) for k in empty.tolist()]
            part._cells["id"] = ids
        owners = {kind: self.side_owners(kind) for kind in tables}
        part._side = {kind: None if kind not in tables else
                      tables[kind].take(np.flatnonzero((owners[kind] >= lo) & (owners[kind] < hi)))
                      for kind in self._side}
        part._extra = tuple((row - lo, field, message) for row, field, message in self._extra
                            if row is not None and lo <= row < hi)
        part._replaced = {(row - lo, field) for row, field in self._replaced if row is not None and lo <= row < hi}
        part._sigma_pieces = pieces_part(self._sigma_pieces, lo, hi)
        return part

    def derived(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """``build()``, once per ``key`` and book: what is derived from the book's cells alone is kept with it, as its
        lowering is (a book does not change; :meth:`with_columns` makes another), e.g. a per-trade calibration's
        baskets (:func:`trinom.analytics.baskets.book_baskets`)."""
        key = ("derived", key)
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    # --- lowering --------------------------------------------------------------------------------------
    def steps_per_year(self) -> np.ndarray:
        """Each trade's tree steps a year (its own, or :data:`DEFAULT_STEPS_PER_YEAR`)."""
        return self._steps_per_year().copy()

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
        noticed = curves is not None and (self._has_notice_days() or self.has_two_curves(names))
        key = ("instruments", names, tuple(curves) if noticed else None)  # type: ignore[arg-type]
        if key not in self._memo:
            if noticed:  # lowerings on other curves: the latest few are kept
                older = [k for k in self._memo if isinstance(k, tuple) and k[0] == "instruments" and k[2] is not None]
                for stale in older[:-3]:
                    del self._memo[stale]
            self._memo[key] = self._with_pieces(self._instruments(names, key[2]), names)
        return self._memo[key]

    def _with_pieces(self, blocks: list[tuple[int, Portfolio | BondPortfolio]],
                     names: tuple[str, ...]) -> list[tuple[int, Portfolio | BondPortfolio]]:
        """The blocks with the trades' sigma pieces on their bond trees (:meth:`with_sigma_pieces`)."""
        if not self._sigma_pieces:
            return blocks
        owner = self._memo[("legs", names)].owner
        out, start = [], 0
        for first, block in blocks:
            if isinstance(block, BondPortfolio):
                block = with_tree_pieces(block, owner[start:start + len(block)], self._sigma_pieces, self.as_of_day)
            out.append((first, block))
            start += len(block)
        return out

    def has_two_curves(self, curve_names: Sequence[str]) -> bool:
        """Whether a swaption's, cap's or floating bond's rate is projected on a ``forecast_curve`` apart from its
        ``curve`` (its lowering then needs the curves; its prices depend on both)."""
        return bool(np.any(self.forecast_index(tuple(curve_names)) != self.curve_index(tuple(curve_names))))

    def curve_index(self, curve_names: tuple[str, ...]) -> np.ndarray:
        """Each row's curve, as an index into ``curve_names`` (0 where empty or unknown: the problems say so)."""
        named = self._factorized("curve")
        index = np.array([curve_names.index(name) if name in curve_names else 0
                          for name in ("" if value is None else str(value) for value in named.distinct)], dtype=np.int64)
        return index[named.inverse]

    def forecast_index(self, curve_names: tuple[str, ...]) -> np.ndarray:
        """Each row's forecast curve, as an index into ``curve_names`` (its ``curve`` where empty)."""
        curve = self.curve_index(curve_names)
        named = self._factorized("forecast_curve")
        index = np.array([curve_names.index(name) if name in curve_names else -1
                          for name in ("" if value is None else str(value) for value in named.distinct)], dtype=np.int64)
        forecast = index[named.inverse]
        return np.where(forecast >= 0, forecast, curve)

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
        curve = self.curve_index(curve_names)
        kind = np.where(p.kind < 0, 0, p.kind)  # a row of no type is a bad bond row
        on_coupons = self._on_coupon_bonds()  # two bond trees each
        treed = self._pieced_options(kind, bad) & ~on_coupons
        bond_family = np.isin(kind, _BOND_FAMILY) | treed | on_coupons
        group = np.where(bond_family, 0, 1 + curve)
        starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1]))) if len(self) else np.zeros(0, int)
        bounds = np.append(starts, len(self))
        bond_rows = np.flatnonzero(kind == 0)
        bonds = (self._bonds(bond_rows, bad[bond_rows], curve[bond_rows], problems, curves,
                             self.forecast_index(curve_names)[bond_rows]) if bond_rows.size else None)
        rate = self._memo[("rate", curve_names)]
        if not (rate.swaption_rows.size or rate.cap_rows.size or treed.any() or on_coupons.any()):  # a tree a trade
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
        return self._trees(curve_names, curve, kind, bad, bounds, bonds, bond_rows, problems, rate, curves, treed,
                           on_coupons)

    def _pieced_options(self, kind: np.ndarray, bad: np.ndarray) -> np.ndarray:
        """Per row, whether it is a good cap, floor or bond option with sigma pieces: such a trade is priced on a bond
        tree (:func:`~trinom.instruments.cap.cap_trees`, :meth:`_option_bond_trees`), which takes pieces."""
        out = np.zeros(len(self), dtype=bool)
        if self._sigma_pieces:
            rows = np.fromiter(self._sigma_pieces, dtype=np.int64)
            out[rows] = np.isin(kind[rows], _OPTION_TREE_KINDS) & ~bad[rows]
        return out

    def _option_bond_trees(self, rows: np.ndarray, curve: np.ndarray) -> BondPortfolio:
        """Bond options ``rows`` (options on zero-coupon bonds) as bond trees holding the option as a coupon option
        event: ``100`` times the option on ``P(expiry, maturity)`` struck at ``strike / 100``."""
        p = self._parsed()
        spy = self._steps_per_year()[rows]
        expiry, maturity = p.dates["expiry"][rows], p.dates["maturity"][rows]
        options = CouponOptions.of(counts=np.ones(rows.size, dtype=np.int64),
                                   step=step_before(expiry, self.as_of_day, spy),
                                   expiry=(expiry - self.as_of_day) / YEAR_DAYS,
                                   end=(maturity - self.as_of_day) / YEAR_DAYS, strike=p.numbers["strike"][rows] / 100.0,
                                   amount=np.full(rows.size, 100.0), is_call=p.option[rows] != _PUT_CELL)
        return zero_trees(self.as_of_day, maturity, spy, p.numbers["a"][rows], p.numbers["sigma"][rows], curve[rows],
                          options)

    def _trees(self, curve_names: tuple[str, ...], curve: np.ndarray, kind: np.ndarray, bad: np.ndarray,
               bounds: np.ndarray, bonds: BondPortfolio | None, bond_rows: np.ndarray, problems: list[Problem],
               rate: RateRows, curves: Sequence[YieldCurve] | None, treed: np.ndarray,
               on_coupons: np.ndarray) -> list[tuple[int, Portfolio | BondPortfolio]]:
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
        forecast = self.forecast_index(curve_names)
        specs = replace(rate.swaptions, curve=curve[rate.swaptions.rows], forecast=forecast[rate.swaptions.rows])
        if specs.rows.size:
            lowered = lower_swaptions(specs, curves)
            tree_of = {row: 2 * k for k, row in enumerate(specs.rows.tolist())}  # each swaption's first tree
            late = self._where_prefixed(lowered.problems)  # a late-failing swaption: both its trees carry them
            tables.append(BondPortfolio.with_read_problems(
                [(tree_of[row] + side, f, m) for row, f, m in late for side in (0, 1)],
                accrued=lowered.bonds.accrued(), signed_coupons=lowered.bonds.signed_coupons(),
                **lowered.bonds.as_dict()))
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
            used += bad_swaptions.size
        # caps, floors and bond options with sigma pieces: a bond tree each (their options as events)
        caps_treed = treed[rate.caps.rows]
        if caps_treed.any():
            caps = replace(rate.caps, curve=curve[rate.caps.rows], forecast=forecast[rate.caps.rows])
            part = caps.take(np.flatnonzero(caps_treed))
            tables.append(cap_trees(part, curves))
            first_tree[part.rows] = used + np.arange(part.rows.size)
            used += part.rows.size
        used = append_coupon_options(self, np.flatnonzero(on_coupons), bad, curve, problems, tables, first_tree,
                                     counts, weights, used)
        options_treed = np.flatnonzero(treed & (kind == 1))
        if options_treed.size:
            tables.append(self._option_bond_trees(options_treed, curve))
            first_tree[options_treed] = used + np.arange(options_treed.size)
            used += options_treed.size
        bond_table = BondPortfolio.concatenate(tables) if len(tables) > 1 else tables[0] if tables else None
        # option trees per run (one curve): the bond options and bad caps one each, the good caps' caplets
        on_options = np.flatnonzero(~caps_treed)  # the caps of rate.caps on option trees
        good_caps = rate.caps.rows[on_options]
        blocks: list[tuple[int, Portfolio | BondPortfolio]] = []
        for first, last in itertools.pairwise(bounds):
            rows = np.arange(first, last)
            if np.isin(kind[first], _BOND_FAMILY) or treed[first] or on_coupons[first]:
                blocks.append((int(first), bond_table[runs(first_tree[rows], counts[rows])]))  # type: ignore[index]
                continue
            name = curve_names[curve[first]]
            in_run = np.isin(good_caps, rows)
            plain = np.setdiff1d(rows, good_caps[in_run])
            parts = [self._options(plain, bad[plain], problems, name)] if plain.size else []
            position = np.zeros(size, dtype=np.int64)  # each row's first tree in the run's table
            position[plain] = np.arange(plain.size)
            if in_run.any():
                caps = replace(rate.caps, curve=curve[rate.caps.rows], forecast=forecast[rate.caps.rows])
                lowered_caps = lower_caps(caps.take(on_options[in_run]), curve=name, curves=curves)
                parts.append(lowered_caps.caplets)
                offsets = np.concatenate(([0], np.cumsum(lowered_caps.count)))
                for k, row in enumerate(good_caps[in_run].tolist()):
                    counts[row] = lowered_caps.count[k]
                    weights[row] = lowered_caps.weight[offsets[k]: offsets[k + 1]]
                position[good_caps[in_run]] = plain.size + offsets[:-1]
            table = Portfolio.concatenate(parts) if len(parts) > 1 else parts[0]
            blocks.append((int(first), table[runs(position[rows], counts[rows])]))
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
               curves: Sequence[YieldCurve] | None, forecast: np.ndarray) -> BondPortfolio:
        """The bond rows as a :class:`BondPortfolio` (every bond row, bad ones as placeholders with their problems)."""
        p = self._parsed()
        good = rows[~bad]
        spread = p.numbers["spread"][good]
        terms = self._floating_terms(good, forecast[~bad])
        specs = dated_bonds_of(self, good, coupon=lowered_coupon(terms), spread=np.where(np.isnan(spread), 0.0, spread),
                               curve=curve[~bad], side=np.where(p.option[good] == _PUT_CELL, PUT, CALL).astype(np.int8))
        lag = p.numbers["settlement_days"][good]
        settles = np.isfinite(lag)
        if settles.any():
            calendars = specs.calendar.values()[specs.calendar.inverse]
            specs = replace(specs, settlement=np.where(settles, settlement_dates(
                as_of=self.as_of_day, days=np.nan_to_num(lag).astype(np.int64), calendar=calendars,
                issue=specs.issue), self.as_of_day))
        amortization = amortization_of(self, good)
        lowered = lower_dated_bonds(self.as_of_day, specs, **exercise_inputs(self, good), amortization=amortization,
                                    curves=curves)
        signed = np.zeros(good.size, dtype=bool)
        options = None
        if np.any(terms.kind != FIXED):  # floating coupons: their flows, accrued interest and exercise prices
            lowered, signed, options = floating_lowered(self.as_of_day, lowered, terms, curves, amortization)
        if settles.any():
            self._memo["settlement"] = settlement_terms(self.as_of_day, good, specs, lowered, settles)
        has_option = p.present["option"][good]
        gone = has_option & (lowered.point_counts == 0) & (lowered.strike >= NO_EXERCISE_PRICE)
        said = self._memo.setdefault("warnings", {})
        for k in np.flatnonzero(gone).tolist():
            side = "put" if specs.side[k] == PUT else "call"
            said[int(good[k])] = (f"the {side}'s exercise dates are all on or before the as-of date {self.as_of} "
                                  "(notice days included): priced as a straight bond")
        late = lowered.problems
        count = rows.size
        placeholder = bad.copy()
        placeholder[np.isin(rows, [row for row, _f, _m in late])] = True
        fields, accrued = portfolio_fields(lowered, np.flatnonzero(~bad), placeholder, count)
        local = _rows_problems(problems + self._where_prefixed(late), rows, len(self))
        signs = None
        if signed.any():  # floating bonds' flows and exercise prices may be negative
            signs = np.zeros(count, dtype=bool)
            signs[np.flatnonzero(~bad)[signed]] = True
        if local:
            made = BondPortfolio.with_read_problems(local, accrued=accrued, signed_coupons=signs, **fields)
        else:
            made = BondPortfolio(accrued=accrued, **fields)
            made = made if signs is None else made.with_signed_coupons(signs)
        if options is not None:  # caps and floors on floating coupons, on the rows lowered (placeholders have none)
            at = np.full(count, -1, dtype=np.int64)
            at[np.flatnonzero(~bad)] = np.arange(len(options))
            at[placeholder] = -1
            counts = np.where(at >= 0, options.counts[np.maximum(at, 0)], 0)
            taken = options.take(np.maximum(at, 0))
            keep = np.repeat(at >= 0, taken.counts)
            made = made.with_coupon_options(CouponOptions.of(counts=counts, **{k: v[keep] for k, v in
                                                                               taken.columns().items()}))
        return made

    def _floating_terms(self, good: np.ndarray, forecast: np.ndarray) -> FloatingTerms:
        """The good bond rows' coupon terms (:mod:`trinom.instruments.floating`): fixed, float or fixed-to-float
        (``forecast``: their forecast curves)."""
        p = self._parsed()
        kind = np.maximum(self.coupon_types()[good], FIXED)
        margin = np.nan_to_num(p.numbers["margin"][good])
        switch = np.where(kind == FIXED_TO_FLOAT, p.dates["switch_date"][good], p.dates["issue"][good])
        return FloatingTerms(kind=kind, coupon=np.nan_to_num(p.numbers["coupon"][good]), margin=margin,
                             switch=switch, fixing=p.numbers["fixing"][good], forecast=forecast,
                             cap=p.numbers["cap"][good], floor=p.numbers["floor"][good])


def _rows_problems(problems: Sequence[Problem], rows: np.ndarray, size: int) -> tuple[Problem, ...]:
    """The problems of ``rows`` (distinct rows of a book of ``size``), numbered as ``rows`` numbers them, in that
    order (:func:`trinom.lattice.columns.rows_problems` without a dictionary of every row)."""
    if not problems:
        return ()
    where = np.full(size, -1, dtype=np.int64)
    where[rows] = np.arange(rows.size)
    found = [(int(where[row]), field, message) for row, field, message in problems
             if row is not None and where[row] >= 0]
    return tuple(sorted(found, key=lambda problem: problem[0]))



def trade_curves(trades: Trades, curves: Any) -> Any:
    """The market of ``trades``: dated curves (a :class:`~trinom.model.DatedCurve` or a mapping of names to them, as
    of the trades' date) as :class:`~trinom.YieldCurve` in days from the as-of date; other curves as given."""
    from ..model.dated_curve import DatedCurve

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
    from ..model.market import Market

    market_curves = trade_curves(trades, curves)
    market = Market.of(market_curves)
    return (trades.instruments(market.names, market.curves), market_curves,
            trades.legs(market.names, market.curves))


__all__ = ["BOND_DEFAULTS", "DEFAULT_STEPS_PER_YEAR", "EXERCISES", "MAX_NOTICE_DAYS", "MAX_STEPS_PER_YEAR",
           "NO_EXERCISE_PRICE", "PLAUSIBLE_PRICES", "PLAUSIBLE_SIGMA", "PLAUSIBLE_SPREAD", "SIDE_COLUMNS", "TRADE_COLUMNS",
           "TYPES", "YEAR_DAYS", "Amortization", "DatedBonds", "ExerciseDates", "ExerciseWindows", "LoweredBonds", "Trades",
           "date_of_step", "lower_dated_bonds", "lowered", "single_instrument", "step_of", "trade_curves"]
