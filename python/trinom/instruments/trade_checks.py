"""The checks of a dated trades book (:class:`~trinom.instruments.trades.Trades`): its cells parsed into typed arrays
once (:class:`ParsedTrades`), and every problem of its rows and of its side tables (``schedule.csv``,
``notionals.csv``: :mod:`trinom.instruments.side_tables`) against the ``trades.csv`` contract, each naming the row, the
field and, for a file, the line (and a side table's row its own file and line).

:class:`TradeChecks` is the base of :class:`~trinom.instruments.trades.Trades` that holds them (``Trades.problems``);
the book's construction, its lowering to the trees and its results' explanations are :mod:`trinom.instruments.trades`'.
The contract's columns, types and plausible values (:data:`TRADE_COLUMNS`, :data:`TYPES`, ...) are defined here and
stay importable from :mod:`trinom.instruments.trades`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ..conventions import (
    Factorized,
    parse_calendars,
    parse_conventions,
    parse_day_counts,
    parse_frequencies,
    to_days,
)
from ..conventions.dates import day_text
from ..conventions.names import Problem
from ..errors import InputError
from .floating import COUPON_TYPES, FIXED, FIXED_TO_FLOAT, FLOAT, FLOAT_COLUMNS
from .rate_trades import RATE_COLUMNS, RATE_TYPES, VOL_COLUMNS, RateRows, TradeColumns, check_rate_rows
from .settlement import MAX_SETTLEMENT_DAYS
from .side_tables import SIDE_COLUMNS, SideRows, SideTable

#: The columns of ``trades.csv``, in the contract's order (a file may hold them in any order, and leave out those
#: it does not use).
TRADE_COLUMNS: Final[tuple[str, ...]] = (
    "id", "type", "notional", "issue", "maturity", "coupon", "frequency", "day_count", "calendar", "convention",
    "option", "exercise", "first_exercise", "last_exercise", "exercise_price", "expiry", "strike", "a", "sigma",
    "spread", "curve", "steps_per_year", "notice_days", *RATE_COLUMNS, *FLOAT_COLUMNS, *VOL_COLUMNS,
    "settlement_days")
#: Trade types.
TYPES: Final[tuple[str, ...]] = ("bond", "bond_option", *RATE_TYPES)
#: Exercise prices (``exercise_price``, ``schedule.csv``'s ``price``), clean per 100 of the notional, a market may
#: quote; outside them a price is refused as a unit mistake (1.03 for 103: a fraction of par).
PLAUSIBLE_PRICES: Final[tuple[float, float]] = (10.0, 1000.0)
#: The largest OAS (``spread``, a decimal rate) taken: beyond it a value is percent or basis points.
PLAUSIBLE_SPREAD: Final[float] = 1.0
#: The largest Hull-White sigma (an absolute short-rate volatility, a decimal) a trade may give: 0.2 is 2000 bp a year;
#: beyond it a value is percent (1 for 1%).
PLAUSIBLE_SIGMA: Final[float] = 0.2
#: Exercise styles of a bond's call or put.
EXERCISES: Final[tuple[str, ...]] = ("european", "bermudan", "american")
#: Tree steps a year where a trade gives none: one a day, so that every date is a step of its own.
DEFAULT_STEPS_PER_YEAR: Final[int] = 365
#: Most steps a year a trade may ask for.
MAX_STEPS_PER_YEAR: Final[int] = 36500
#: Most notice days an exercise may have (a hundred years of calendar days).
MAX_NOTICE_DAYS: Final[int] = 36500
#: Fields that only a bond or only a bond option may fill.
_BOND_ONLY = ("issue", "coupon", "frequency", "day_count", "calendar", "convention", "exercise", "first_exercise",
              "last_exercise", "exercise_price", "notice_days", "settlement_days")
_OPTION_ONLY = ("expiry", "strike")
#: The cells a bond_option on a coupon bond gives beyond a bond option's: its bond's terms and its exercise (issue 38).
_COUPON_OPTION_FIELDS = ("issue", "coupon", "frequency", "day_count", "calendar", "convention", "exercise",
                         "first_exercise")
#: A bond's option cells, and its exercise styles by index in :data:`EXERCISES`.
_OPTIONS = ("call", "put")
#: A put's index in the parsed ``option`` column.
_PUT_CELL: Final[int] = _OPTIONS.index("put")
_EUROPEAN, _BERMUDAN, _AMERICAN = range(3)


def cells_of(values: object, size: int, field: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A column as an object array of ``size`` cells (None where empty: ``None``, ``""``, NaN), and, where it was
    given as an array of numbers, those numbers as ``float64`` (NaN where empty)."""
    if values is None:
        return np.full(size, None, dtype=object), None
    array: np.ndarray | None = None
    if isinstance(values, np.ndarray) and values.size == size:  # no object copy of a column of numbers or text
        raw = values.reshape(-1)
    else:
        array = np.asarray(values, dtype=object).reshape(-1)
        if array.size == 1 and size != 1 and np.ndim(values) == 0:  # a scalar is every trade's; a list of one not
            array = np.full(size, array[0], dtype=object)
        if array.size != size:
            hint = " (one value for every trade is given as a scalar, not a list of one)" if array.size == 1 else ""
            raise InputError([(None, field, f"{field} has {array.size} values, expected one per trade ({size})"
                               f"{hint}")])
        raw = np.asarray(values).reshape(-1)
    if raw.size == size and raw.dtype.kind in "fiu":  # numbers: only NaN is empty (booleans are no numbers)
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
        elif value is None or (isinstance(value, float) and math.isnan(value)) or _missing_marker(value):
            out[k] = None
        elif isinstance(value, (np.datetime64,)) and np.isnat(value):
            out[k] = None
        else:
            out[k] = value
    return out, None


def _implausible_price(field: str, value: float) -> str:
    """Why an exercise price outside :data:`PLAUSIBLE_PRICES` is refused, saying what it looks like."""
    low, high = PLAUSIBLE_PRICES
    hint = f": it looks like a fraction of par ({value:g} is {100 * value:g} per 100)" if 0 < value < 10 else ""
    return f"{field} must be a clean price per 100 of the notional in {low:g}..{high:g}, got {value:g}{hint}"


def _implausible_spread(value: float) -> str:
    """Why a spread beyond :data:`PLAUSIBLE_SPREAD` is refused, saying what it looks like."""
    hint = (f": it looks like basis points ({value:g} bp is {value / 1e4:g})" if abs(value) >= 10 else
            f": it looks like percent ({value:g}% is {value / 100:g})")
    return (f"spread must be a decimal rate in -{PLAUSIBLE_SPREAD:g}..{PLAUSIBLE_SPREAD:g} (0.005 for 50 bp), got "
            f"{value:g}{hint}")


def _missing_marker(value: object) -> bool:
    """pandas' markers of a missing cell: ``pd.NaT`` (``read_csv(parse_dates=...)``) and ``pd.NA`` (nullable dtypes),
    read as empty cells, as NaN and None are."""
    return type(value).__name__ in ("NaTType", "NAType")


def size_of(values: object) -> int:
    """The number of cells of a column (a scalar is one)."""
    if isinstance(values, np.ndarray):
        return int(values.size)
    return int(np.asarray(values, dtype=object).reshape(-1).size)


@dataclass(frozen=True, eq=False)
class ParsedTrades:
    """The trades' cells parsed into typed arrays, and every problem found (rows numbered in the book)."""

    kind: np.ndarray  #: index into :data:`TYPES` (-1: bad)
    numbers: dict[str, np.ndarray]  #: float columns (NaN where empty)
    dates: dict[str, np.ndarray]  #: day numbers (0 where empty or bad)
    present: dict[str, np.ndarray]  #: which cells were given
    option: np.ndarray  #: index into ``("call", "put")`` (-1: empty or bad)
    exercise: np.ndarray  #: index into :data:`EXERCISES` (-1: empty or bad)
    problems: list[Problem]


class TradeChecks:
    """The checks of a trades book, the base of :class:`~trinom.instruments.trades.Trades` (whose constructor sets the
    cells, places and side tables below): the cells parsed once, every problem found once per set of curve names,
    and the side tables' rows read against the book (each kept in the book's memo)."""

    as_of_day: int
    as_of: np.datetime64
    _cells: dict[str, np.ndarray]  #: per column, its cells (None where empty)
    _given_numbers: dict[str, np.ndarray]  #: the columns given as arrays of numbers, as float64
    _where: list[str] | None  #: per row, where it came from
    _side: dict[str, SideTable | None]  #: ``schedule`` and ``notionals``
    _extra: tuple[Problem, ...]  #: problems found outside the book
    _replaced: set[tuple[int | None, str]]  #: the book's own problems that those replace
    _memo: dict[object, Any]

    # --- the cells, parsed once ----------------------------------------------------------------------------
    def _parsed(self) -> ParsedTrades:
        if "parsed" not in self._memo:
            self._memo["parsed"] = self._parse()
        return self._memo["parsed"]

    def _on_coupon_bonds(self) -> np.ndarray:
        """Per row, whether it is an option on a coupon bond: a ``bond_option`` that gives the bond's ``coupon``."""
        p = self._parsed()
        return (p.kind == 1) & p.present["coupon"]

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

    def _parse(self) -> ParsedTrades:
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
                     "notice_days", "margin", "cap", "floor", "fixing", "vol", "shift", "settlement_days"):
            if name in self._given_numbers:  # an array of numbers: NaN is empty, only an infinite one is bad
                values = self._given_numbers[name].copy()
                for k in np.flatnonzero(np.isinf(values)):
                    problems.append((int(k), name, f"{name} must be a finite number, got {cells[name][k]!r}"))
                numbers[name] = values
                continue
            values = np.full(size, np.nan)
            given = np.flatnonzero(present[name])
            column = cells[name][given].tolist()
            kinds = set(map(type, column))  # a CSV's cells are text: no cell needs a look one by one
            booleans = (np.array([isinstance(value, (bool, np.bool_)) for value in column], dtype=bool)
                        if bool in kinds or np.bool_ in kinds else np.zeros(given.size, dtype=bool))
            for k in given[booleans]:  # True is no 100% coupon
                problems.append((int(k), name, f"{name} {cells[name][k]!r} is a boolean, not a number"))
            given = given[~booleans] if booleans.size else given
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
        for name in ("issue", "maturity", "first_exercise", "last_exercise", "expiry", "start", "switch_date"):
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
        return ParsedTrades(kind=kind, numbers=numbers, dates=dates, present=present, option=option,
                            exercise=exercise, problems=problems)

    def _steps_per_year(self) -> np.ndarray:
        """Each trade's tree steps a year: its own where it is good, else :data:`DEFAULT_STEPS_PER_YEAR`."""
        if "steps_per_year" not in self._memo:
            spy = self._parsed().numbers["steps_per_year"]
            good = np.isfinite(spy) & (spy >= 1) & (spy <= MAX_STEPS_PER_YEAR)
            self._memo["steps_per_year"] = np.where(good, np.round(np.where(good, spy, 1)),
                                                    DEFAULT_STEPS_PER_YEAR).astype(np.int64)
        return self._memo["steps_per_year"]

    # --- the rows' problems --------------------------------------------------------------------------------
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
        on_coupons = self._on_coupon_bonds()  # the bond's terms in the row

        def need(mask: np.ndarray, field: str, what: str) -> None:
            for row in np.flatnonzero(mask & ~present[field]):
                problems.append((int(row), field, f"{field} is missing: {what}"))

        def rule(mask: np.ndarray, field: str, text: str | Callable[[float], str]) -> None:
            """A problem of every given cell of ``field`` that ``mask`` marks: ``text`` with the cell as ``{value}``,
            or ``text(number)`` where the message depends on the number (what it looks like)."""
            for row in np.flatnonzero(mask & present[field]):
                if (row, field) not in bad_cells:
                    problems.append((int(row), field, text(float(n[field][row])) if callable(text) else
                                     text.format(value=self._cells[field][row])))

        for field in _OPTION_ONLY:
            rule(is_bond, field, f"{field} does not apply to a bond (it is a bond option's), got {{value!r}}")
        for field in _BOND_ONLY:
            rule(is_option & ~(on_coupons & (field in _COUPON_OPTION_FIELDS)), field,
                 f"{field} does not apply to a bond_option (it is a bond's), got {{value!r}}")
        need(on_coupons, "issue", "the bond's issue date (a bond_option with a coupon is on that coupon bond)")
        need(on_coupons, "frequency", "the bond's coupons a year: 1, 2, 4 or 12")
        american = p.exercise == _AMERICAN  # the parsed style (-1: empty, the default european, or no style)
        styled = american | (p.exercise == _EUROPEAN) | ~present["exercise"]
        for row in np.flatnonzero(on_coupons & ~styled):
            problems.append((int(row), "exercise", f"a bond_option is european or american, got "
                             f"{self._cells['exercise'][row]!r}"))
        rule(on_coupons & ~american, "first_exercise", "first_exercise opens an american option's window; a european "
             "option is exercised on its expiry, got {value!r}")
        need(p.kind >= 0, "maturity", "the bond's maturity date (YYYY-MM-DD)")
        need(p.kind >= 0, "a", "the Hull-White mean reversion a")
        need(p.kind >= 0, "sigma", "the Hull-White volatility sigma")
        need(is_bond, "issue", "the bond's issue date (its schedule runs from it)")
        coupon_type = self.coupon_types()
        floating = is_bond & (coupon_type != FIXED)
        need(is_bond & (coupon_type != FLOAT), "coupon", "the annual coupon rate as a decimal (0.05), 0 for a "
             "zero-coupon bond")
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
            rule((n["strike"] > 0) & (n["strike"] < 1), "strike", "strike must be a price per 100 of the bond's face, "
                 "got {value}: it looks like a fraction of par (0.85 is 85 per 100)")
            rule(n["sigma"] > PLAUSIBLE_SIGMA, "sigma", f"sigma must be an absolute short-rate volatility as a decimal, "
                 f"at most {PLAUSIBLE_SIGMA:g} (0.01 for 100 bp a year), got {{value}}: it looks like percent")
            rule(n["exercise_price"] < 0, "exercise_price", "exercise_price must be >= 0, got {value}")
            price = n["exercise_price"]
            rule((price >= 0) & ((price < PLAUSIBLE_PRICES[0]) | (price > PLAUSIBLE_PRICES[1])), "exercise_price",
                 lambda value: _implausible_price("exercise_price", value))
            rule(np.abs(n["spread"]) > PLAUSIBLE_SPREAD, "spread", _implausible_spread)
            spy = n["steps_per_year"]
            rule((spy < 1) | (spy > MAX_STEPS_PER_YEAR) | (spy != np.round(spy)), "steps_per_year",
                 f"steps_per_year must be a whole number in 1..{MAX_STEPS_PER_YEAR}, got {{value}}")
            notice = n["notice_days"]
            rule((notice < 0) | (notice > MAX_NOTICE_DAYS) | (notice != np.round(notice)), "notice_days",
                 f"notice_days must be a whole number of calendar days in 0..{MAX_NOTICE_DAYS}, got {{value}}")
            lag = n["settlement_days"]
            rule((lag < 0) | (lag > MAX_SETTLEMENT_DAYS) | (lag != np.round(lag)), "settlement_days",
                 f"settlement_days must be a whole number of business days in 0..{MAX_SETTLEMENT_DAYS}, got {{value}}")
        for field, parse in (("frequency", parse_frequencies), ("day_count", parse_day_counts),
                             ("convention", parse_conventions)):
            rows = np.flatnonzero((is_bond | on_coupons) & present[field])
            if rows.size:
                problems += parse(self._factorized(field).take(rows), field=field, rows=rows)[1]
        rows = np.flatnonzero((is_bond | on_coupons) & present["calendar"])
        if rows.size:
            problems += parse_calendars(self._factorized("calendar").take(rows), field="calendar", rows=rows)[2]
        # options: call/put; a bond's also needs an exercise style, dates and a price
        classic = is_bond | is_option
        for field in RATE_COLUMNS:
            projected = floating if field in ("forecast_curve", "index") else np.zeros(len(self), dtype=bool)
            rule(is_bond & ~projected, field, f"{field} does not apply to a bond (it is a swaption's or a cap's"
                 f"{', or a float bond' if field in ('forecast_curve', 'index') else ''}), got {{value!r}}")
            rule(is_option, field, f"{field} does not apply to a bond_option (it is a swaption's or a cap's), got "
                                   "{value!r}")
        problems += self._floating_problems(is_bond, is_option, coupon_type, rule, need)
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
        for row in np.flatnonzero((is_bond | on_coupons) & ok["issue"] & ok["maturity"]
                                  & (d["maturity"] <= d["issue"])):
            problems.append((int(row), "maturity", f"maturity {day_text(d['maturity'][row])} must be after the issue date "
                             f"{day_text(d['issue'][row])}"))
        for row in np.flatnonzero((p.kind >= 0) & ok["maturity"] & (d["maturity"] <= as_of)):
            problems.append((int(row), "maturity", f"maturity {day_text(d['maturity'][row])} is not after the as-of date "
                             f"{self.as_of}: the bond has matured"))
        for row in np.flatnonzero(is_option & ok["expiry"] & (d["expiry"] < as_of)):
            problems.append((int(row), "expiry", f"expiry {day_text(d['expiry'][row])} is before the as-of date "
                             f"{self.as_of}: the option has expired"))
        for row in np.flatnonzero(is_option & ok["expiry"] & ok["maturity"] & (d["expiry"] > d["maturity"])):
            problems.append((int(row), "expiry", f"expiry {day_text(d['expiry'][row])} is after the bond's maturity "
                             f"{day_text(d['maturity'][row])}"))
        for name in ("first_exercise", "last_exercise"):
            outside = has_option & ok[name] & ok["issue"] & ok["maturity"] & (
                (d[name] < d["issue"]) | (d[name] > d["maturity"]))
            for row in np.flatnonzero(outside):
                problems.append((int(row), name, f"{name} {day_text(d[name][row])} is outside the bond's life "
                                 f"({day_text(d['issue'][row])} to {day_text(d['maturity'][row])})"))
        window = windowed & ok["first_exercise"] & ok["last_exercise"] & (d["last_exercise"] < d["first_exercise"])
        for row in np.flatnonzero(window):
            problems.append((int(row), "last_exercise", f"last_exercise {day_text(d['last_exercise'][row])} is before "
                             f"first_exercise {day_text(d['first_exercise'][row])}"))
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
            forecasts = self._factorized("forecast_curve")
            unknown = np.array([str(value) not in names for value in forecasts.distinct], dtype=bool)[forecasts.inverse]
            for row in np.flatnonzero((p.kind >= 0) & present["forecast_curve"] & unknown):
                problems.append((int(row), "forecast_curve", f"forecast_curve {self._cells['forecast_curve'][row]!r} is "
                                 f"not one of the curves ({', '.join(names)})"))
        rate = self._rate_rows(problems, ok)
        self._memo[("rate", None if curve_names is None else tuple(curve_names))] = rate
        own = [item for item in problems + rate.problems if (item[0], item[1]) not in self._replaced]
        problems = self._where_prefixed(own + list(self._extra))
        problems.sort(key=lambda item: -1 if item[0] is None else item[0])
        return problems

    def coupon_types(self) -> np.ndarray:
        """Per row, its ``coupon_type`` as an index into :data:`~trinom.instruments.floating.COUPON_TYPES` (empty:
        fixed; -1: not a coupon type)."""
        index, empty = self._choices("coupon_type", COUPON_TYPES)
        return np.where(empty, FIXED, index)

    def _floating_problems(self, is_bond: np.ndarray, is_option: np.ndarray, coupon_type: np.ndarray,
                           rule: Callable[..., None], need: Callable[[np.ndarray, str, str], None]) -> list[Problem]:
        """The float and fixed-to-float bond rows' problems (:mod:`trinom.instruments.floating`); ``rule`` and
        ``need`` add to the book's problems as :meth:`_find_problems` defines them."""
        p = self._parsed()
        present, n, d = p.present, p.numbers, p.dates
        found: list[Problem] = []
        for field in FLOAT_COLUMNS:
            rule(is_option, field, f"{field} does not apply to a bond_option (it is a floating bond's), got {{value!r}}")
        for row in np.flatnonzero(is_bond & (coupon_type < 0)):
            found.append((int(row), "coupon_type", f"coupon_type must be one of {', '.join(COUPON_TYPES)}, got "
                          f"{self._cells['coupon_type'][row]!r}"))
        fixed, floater, switching = (is_bond & (coupon_type == k) for k in (FIXED, FLOAT, FIXED_TO_FLOAT))
        for field in ("margin", "switch_date", "fixing"):
            rule(fixed, field, f"{field} applies to float and fixed_to_float bonds (coupon_type), got {{value!r}}")
        rule(floater, "coupon", "coupon is a fixed rate: a float bond pays its index plus margin (coupon_type "
             "fixed_to_float pays coupon until switch_date), got {value!r}")
        rule(floater, "switch_date", "switch_date applies to fixed_to_float bonds, got {value!r}")
        need(switching, "switch_date", "the first floating period's start, a coupon date (coupon_type fixed_to_float)")
        for field in ("cap", "floor"):
            rule(fixed, field, f"{field} applies to a floating coupon (coupon_type float or fixed_to_float), got "
                 "{value!r}")
        live = floater | switching
        with np.errstate(invalid="ignore"):
            rule(live & (n["cap"] < n["floor"]), "cap", "cap must be at least the floor, got {value}")
            for field in ("margin", "fixing", "cap", "floor"):
                rule(live & (np.abs(n[field]) > 1), field, f"{field} must be a decimal rate (0.002 for 20 bp), got "
                     "{value}")
        rule(live & (p.exercise == _AMERICAN), "exercise", "american exercise on a floating bond falls inside its "
             "coupon periods, whose rates fixed at their starts: give bermudan (its coupon dates) or a schedule")
        with np.errstate(invalid="ignore"):
            rule(live & (n["notice_days"] > 0), "notice_days", "notice days move a floating bond's exercise inside a "
                 "coupon period, whose rate fixed at its start: not priced; give 0, got {value}")
        index = np.array(["ibor" if v is None else str(v).strip().lower() for v in self._cells["index"].tolist()],
                         dtype=object)
        for row in np.flatnonzero(live & present["index"] & ~np.isin(index, ("ibor", "ois"))):
            found.append((int(row), "index", f"index must be one of ibor, ois, got {self._cells['index'][row]!r}"))
        inside = switching & present["switch_date"] & present["issue"] & present["maturity"] & (
            (d["switch_date"] <= d["issue"]) | (d["switch_date"] >= d["maturity"]))
        for row in np.flatnonzero(inside):
            found.append((int(row), "switch_date", f"switch_date {day_text(d['switch_date'][row])} must be after the "
                          f"issue date and before the maturity"))
        return found

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
    def _side_rows(self, kind: str) -> tuple[SideRows, list[Problem], np.ndarray]:
        """A side table's readable rows (of a trade of the book, with a date and a value that read), in trade-row and
        date order; the problems of its cells; and the trade rows any of its rows names."""
        key = ("side", kind)
        if key not in self._memo:
            self._memo[key] = self._read_side(kind)
        return self._memo[key]

    def side_owners(self, kind: str) -> np.ndarray:
        """Per row of the ``kind`` side table, the trade row its id names (-1: none, -2: several; empty: no table)."""
        return self._side_owners(kind)[0]

    def _side_owners(self, kind: str) -> tuple[np.ndarray, Factorized, dict[str, list[int]]]:
        """:meth:`side_owners`, the table's ids and each trade id's rows."""
        key = ("side owners", kind)
        if key not in self._memo:
            table = self._side[kind]
            size = 0 if table is None else len(table)
            rows_of: dict[str, list[int]] = {}
            for row, name in enumerate(self.ids if size else ()):  # no table: no trade to find
                rows_of.setdefault(name, []).append(row)
            ids = Factorized.of(cells_of(None if table is None else table.ids, size, f"{kind}.id")[0], f"{kind}.id")

            def trade_of(value: object) -> int:  # the one row of the id; -1: none, -2: several
                found = [] if value is None else rows_of.get(str(value), [])
                return found[0] if len(found) == 1 else -1 if not found else -2

            trade = np.array([trade_of(value) for value in ids.distinct], dtype=np.int64)
            self._memo[key] = (trade[ids.inverse] if size else np.zeros(0, dtype=np.int64), ids, rows_of)
        return self._memo[key]

    def _read_side(self, kind: str) -> tuple[SideRows, list[Problem], np.ndarray]:
        table = self._side[kind]
        if table is None or len(table) == 0:
            return SideRows.empty(), [], np.zeros(0, dtype=np.int64)
        problems: list[Problem] = []
        size = len(table)
        where = np.array(table.where, dtype=object)
        value_name = SIDE_COLUMNS[kind][2]
        row, ids, rows_of = self._side_owners(kind)
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
        dates = cells_of(table.dates, size, f"{kind}.date")[0]
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
        cells, numbers = cells_of(table.values, size, f"{kind}.{value_name}")
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
        if kind == "schedule":  # a clean price per 100 of the notional: 1.03 is a fraction of par, not a price
            low, high = PLAUSIBLE_PRICES
            with np.errstate(invalid="ignore"):
                odd = known & ~bad & ((values < low) | (values > high))
            for k in np.flatnonzero(odd):
                why = _implausible_price(value_name, values[k])
                problems.append((int(row[k]), f"{kind}.{value_name}", f"{where[k]}: {why}"))
            bad |= odd
        readable &= ~bad
        order = np.flatnonzero(readable)
        order = order[np.lexsort((day[order], row[order]))]
        rows = SideRows(row=row[order], day=day[order], value=values[order], where=where[order])
        return rows, problems, np.unique(row[known])

    def _side_checked(self, kind: str) -> tuple[SideRows, list[Problem], ParsedTrades]:
        """A side table's rows in trade order, the problems of reading it (a new list) and the trades' parsed cells."""
        rows, problems, _named = self._side_rows(kind)
        return rows, list(problems), self._parsed()

    def _schedule_problems(self, ok: Mapping[str, np.ndarray]) -> list[Problem]:
        """Problems of the schedule rows against their trades: a bond option's or an optionless bond's rows, dates
        outside the bond's life or given twice, a european with several dates, and ``first_exercise``,
        ``last_exercise`` or ``exercise_price`` cells that disagree with the schedule."""
        rows, problems, p = self._side_checked("schedule")
        if rows.row.size == 0:
            return problems
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
            problems.append((int(r[k]), "schedule.date", f"{where[k]}: date {day_text(day[k])} is outside the bond's life "
                             f"({day_text(d['issue'][r[k]])} to {day_text(d['maturity'][r[k]])})"))
        for k in np.flatnonzero((r[1:] == r[:-1]) & (day[1:] == day[:-1])) + 1:
            problems.append((int(r[k]), "schedule.date", f"{where[k]}: date {day_text(day[k])} is repeated for trade "
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
                problems.append((int(row[j]), field, f"{field} {day_text(d[field][row[j]])} disagrees with the schedule "
                                 f"({where[at[j]]}: {day_text(listed[j])}): leave {field} empty or make them agree"))
        for j in np.flatnonzero(american & ok["last_exercise"][row] & (d["last_exercise"][row] < day[final])):
            problems.append((int(row[j]), "last_exercise", f"last_exercise {day_text(d['last_exercise'][row[j]])} is before "
                             f"the schedule's last date ({where[final[j]]}: {day_text(day[final[j]])}): an american "
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
        rows, problems, p = self._side_checked("notionals")
        if rows.row.size == 0:
            return problems
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
        with np.errstate(invalid="ignore"):  # 0.6 of a notional of 1e6: a fraction of it, not an amount
            fraction = bond & (value > 0) & (value <= 1) & (notional >= 100)
        for k in np.flatnonzero(fraction):
            problems.append((int(r[k]), "notionals.notional", f"{where[k]}: notional {value[k]:g} looks like a "
                             f"fraction of the trade's notional {notional[k]:g} ({value[k]:g} of it is "
                             f"{value[k] * notional[k]:g}): give the outstanding amount, in the notional's units"))
        same = (r[1:] == r[:-1]) & bond[1:]
        for k in np.flatnonzero(same & (day[1:] == day[:-1])) + 1:
            problems.append((int(r[k]), "notionals.date", f"{where[k]}: date {day_text(day[k])} is repeated for trade "
                             f"{ids[r[k]]!r} ({where[k - 1]} gives it too)"))
        for k in np.flatnonzero(same & (day[1:] > day[:-1]) & (value[1:] > value[:-1])) + 1:
            problems.append((int(r[k]), "notionals.notional", f"{where[k]}: notional {value[k]:g} is more than the "
                             f"{value[k - 1]:g} outstanding before it ({where[k - 1]}): an amortizing notional only "
                             "decreases"))
        return problems


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


def _date_text(value: object) -> object:
    """A cell as what :func:`trinom.conventions.to_days` reads (dates and timestamps as ISO text)."""
    if hasattr(value, "isoformat") and not isinstance(value, str):
        text = value.isoformat()
        return text[:10] if len(text) > 10 and text[10:].strip("T0:") == "" else text
    return str(value)
