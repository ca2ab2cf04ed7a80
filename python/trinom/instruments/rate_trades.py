"""Swaption, cap and floor rows of a trades book: their fields, validation and specs (issue 26).

Rows of the same ``trades.csv`` (:mod:`trinom.instruments.trades`), with more columns at the end of the contract:
``start`` (the swap's or the cap's first date), ``rate`` (the fixed rate or the cap's strike, a decimal),
``float_frequency`` (a swaption's floating leg: on one curve worth par on its resets, so it plays no part in the
price), then (issue 37) ``forecast_curve`` (the curve the floating rates are projected on, the trade's ``curve``
discounting; empty: ``curve``) and ``index`` (``ibor``, the default, or ``ois`` for a swaption's overnight-compounded
floating leg, valued as its compounded forward on the forecast curve). Two curves: see
:mod:`trinom.instruments.swaption` and :mod:`trinom.instruments.cap`.

* ``swaption``: ``start``, ``maturity``, ``rate``, ``option`` ``payer`` or ``receiver``, ``a``, ``sigma``;
  optional ``exercise`` (``european``, the default, or ``bermudan``), ``first_exercise`` (default ``start``),
  ``last_exercise`` (a bermudan's; default: the last fixed-leg period's start), ``frequency`` (the fixed leg's,
  default 1), ``day_count`` (default ``30/360``), ``calendar`` (default ``NONE``), ``convention`` (default ``F``),
  ``float_frequency`` (default: ``frequency``), ``notional`` (default 100), ``curve``, ``forecast_curve``, ``index``,
  ``steps_per_year``. See :mod:`trinom.instruments.swaption` for the lowering.
* ``cap`` and ``floor``: ``start``, ``maturity``, ``rate`` (the strike), ``a``, ``sigma``; optional ``frequency``
  (default 4), ``day_count`` (default ``ACT/360``), ``notional``, ``curve``, ``forecast_curve``, ``index``
  (``ibor`` only: a caplet on a compounded overnight rate fixes at its period's end, which this lowering does not
  value), ``steps_per_year``, and (issue 38) ``vol``, ``vol_kind`` and ``shift``: a quoted volatility it is also
  priced off, beside the model (:func:`trinom.instruments.cap.vol_prices`, ``Prices.vol_price``). Their dates are
  unadjusted (:mod:`trinom.instruments.cap`).

Values are per the trade's notional. A cell that does not apply to the row's type is an error naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np

from ..conventions import parse_calendars, parse_conventions, parse_day_counts, parse_frequencies
from ..conventions.dates import day_text
from ..conventions.names import Problem
from .cap import CapSpecs
from .swaption import SwaptionSpecs

#: The columns these rows add to the contract (appended at its end).
RATE_COLUMNS: Final[tuple[str, ...]] = ("start", "rate", "float_frequency", "forecast_curve", "index")
#: The columns a cap or floor may give to be priced off a quoted volatility beside the lattice (issue 38; appended at the
#: contract's end): ``vol``, ``vol_kind`` (``normal``: Bachelier; ``lognormal``: Black; ``shifted``: Black on the rate
#: plus ``shift``) and ``shift``.
VOL_COLUMNS: Final[tuple[str, ...]] = ("vol", "vol_kind", "shift")
#: The kinds of a quoted volatility, by code.
VOL_KINDS: Final[tuple[str, ...]] = ("normal", "lognormal", "shifted")
#: The largest normal (absolute) and lognormal volatility a row may quote: beyond them a value is in basis points or
#: percent (0.0085 is 85 bp a year; 0.2 is 20%).
PLAUSIBLE_VOLS: Final[dict[str, float]] = {"normal": 0.1, "lognormal": 5.0}
#: The floating rate indices a row may name: a term rate fixed at its period's start, or overnight compounded.
INDICES: Final[tuple[str, ...]] = ("ibor", "ois")
#: The trade types of this module.
RATE_TYPES: Final[tuple[str, ...]] = ("swaption", "cap", "floor")
#: Per type, the cells a row may fill (any other filled cell is an error).
ALLOWED: Final[dict[str, frozenset[str]]] = {
    "swaption": frozenset({"id", "type", "notional", "start", "maturity", "rate", "frequency", "day_count", "calendar",
                          "convention", "option", "exercise", "first_exercise", "last_exercise", "float_frequency", "a",
                          "sigma", "curve", "forecast_curve", "index", "steps_per_year"}),
    "cap": frozenset({"id", "type", "notional", "start", "maturity", "rate", "frequency", "day_count", "a", "sigma",
                      "curve", "forecast_curve", "index", "steps_per_year", *VOL_COLUMNS}),
}
ALLOWED["floor"] = ALLOWED["cap"]
#: Defaults of empty cells, per type.
DEFAULTS: Final[dict[str, dict[str, object]]] = {
    "swaption": {"frequency": 1, "day_count": "30/360", "calendar": "NONE", "convention": "F", "exercise": "european"},
    "cap": {"frequency": 4, "day_count": "ACT/360"},
}
DEFAULTS["floor"] = DEFAULTS["cap"]


@dataclass(frozen=True, eq=False)
class TradeColumns:
    """What this module reads of a trades book: its cells (None where empty), the numbers and dates the book parsed
    (NaN and 0 where empty or bad: their problems are the book's), which cells read, and its as-of day."""

    cells: dict[str, np.ndarray]
    numbers: dict[str, np.ndarray]
    dates: dict[str, np.ndarray]
    read: dict[str, np.ndarray]  #: per date column, which cells are given and read as dates
    as_of_day: int
    steps_per_year: np.ndarray


@dataclass(frozen=True, eq=False)
class RateRows:
    """The checked rows: problems (book rows), and the good rows' specs."""

    problems: list[Problem]
    swaption_rows: np.ndarray  #: every swaption row, book order
    cap_rows: np.ndarray  #: every cap and floor row, book order
    swaptions: SwaptionSpecs  #: the good swaption rows (``swaptions.rows``; ``curve`` 0 until the market names them)
    caps: CapSpecs  #: the good cap and floor rows (``caps.rows``)


def check_rate_rows(book: TradeColumns, types: np.ndarray, earlier: set[int]) -> RateRows:
    """Validate the swaption, cap and floor rows of ``book`` (``types``: each row's type name, lower case;
    ``earlier``: rows the book found bad already, e.g. a missing ``a``) and build the good rows' specs. The book
    parses every number and date cell (``rate`` and ``start`` too) and checks what every trade has (``maturity``,
    ``a``, ``sigma``, ``notional``, ``steps_per_year``, ``curve``)."""
    problems: list[Problem] = []
    cells, numbers = book.cells, book.numbers
    swaption_rows = np.flatnonzero(types == "swaption")
    cap_rows = np.flatnonzero((types == "cap") | (types == "floor"))
    bad: set[int] = set(earlier)

    def add(row: int, field: str, message: str) -> None:
        problems.append((int(row), field, message))
        bad.add(int(row))

    for rows, kind in ((swaption_rows, "swaption"), (cap_rows, "cap")):
        for field, values in cells.items():
            if field in ALLOWED[kind]:
                continue
            for row in rows[np.not_equal(values[rows], None)]:
                add(row, field, f"{field} does not apply to a {types[row]}, got {values[row]!r}")
    rows = np.concatenate([swaption_rows, cap_rows])
    dates, read = book.dates, book.read
    rate, start = numbers["rate"], dates["start"]  # parsed by the book (a cell that is no number or date: its problem)
    for field, what in (("rate", "the fixed rate or the strike as a decimal (0.03)"),
                        ("start", "the first date (YYYY-MM-DD)")):
        for row in rows[np.equal(cells[field][rows], None)]:
            add(row, field, f"{field} is missing: {what}")
    for row in rows[np.abs(rate[rows]) > 1]:
        add(row, "rate", f"rate must be a decimal rate (0.03 for 3%), got {cells['rate'][row]!r}")
    maturity = dates["maturity"]

    def good(candidates: np.ndarray) -> np.ndarray:
        """Which of ``candidates`` no problem has named yet."""
        named = np.zeros(types.size, dtype=bool)
        named[list(bad)] = True
        return ~named[candidates]

    dated = rows[good(rows) & read["maturity"][rows] & read["start"][rows]]
    ends_first = maturity[dated] <= start[dated]
    fixed = ~ends_first & (types[dated] != "swaption") & (start[dated] <= book.as_of_day)
    for row, early in zip(dated[ends_first | fixed].tolist(), ends_first[ends_first | fixed].tolist(), strict=True):
        if early:
            add(row, "maturity", f"maturity {day_text(maturity[row])} must be after start {day_text(start[row])}")
        else:
            add(row, "start", f"start {day_text(start[row])} must be after the as-of date {day_text(book.as_of_day)}: every "
                "caplet fixes after it (a caplet fixed already needs its fixing)")
    # names: each type's defaults, then parsed
    text: dict[str, np.ndarray] = {}
    is_swaption = types[rows] == "swaption"
    for field in ("frequency", "day_count", "calendar", "convention", "exercise", "float_frequency", "option"):
        column = np.empty(types.size, dtype=object)
        given = cells[field][rows]
        default = np.empty(rows.size, dtype=object)
        default[is_swaption] = DEFAULTS["swaption"].get(field)
        default[~is_swaption] = DEFAULTS["cap"].get(field)
        column[rows] = np.where(np.equal(given, None), default, given)
        text[field] = column
    for field, parse in (("frequency", parse_frequencies), ("day_count", parse_day_counts),
                         ("convention", parse_conventions), ("float_frequency", parse_frequencies)):
        present = rows[np.not_equal(text[field][rows], None)]
        if present.size:
            for row, name, message in parse(text[field][present], field=field, rows=present)[1]:
                add(row, name, message)
    if swaption_rows.size:
        for row, name, message in parse_calendars(text["calendar"][swaption_rows], field="calendar",
                                                  rows=swaption_rows)[2]:
            add(row, name, message)
    side = np.array(["" if value is None else str(value).strip().lower()
                     for value in text["option"][swaption_rows].tolist()], dtype=object)
    style = np.array([str(value).strip().lower() for value in text["exercise"][swaption_rows].tolist()], dtype=object)
    wrong_side = ~np.isin(side, ["payer", "receiver"])
    wrong_style = ~np.isin(style, ["european", "bermudan"])
    for k in np.flatnonzero(wrong_side | wrong_style).tolist():
        row = int(swaption_rows[k])
        if wrong_side[k]:
            add(row, "option", f"option must be payer or receiver (a swaption pays or receives the fixed rate), got "
                f"{cells['option'][row]!r}" if side[k] else "option is missing: payer or receiver")
        if wrong_style[k]:
            add(row, "exercise", f"a swaption's exercise is european or bermudan, got {cells['exercise'][row]!r}")
    index = np.array(["ibor" if value is None else str(value).strip().lower() for value in cells["index"][rows].tolist()],
                     dtype=object)
    for k in np.flatnonzero(~np.isin(index, INDICES) | (~is_swaption & (index == "ois"))).tolist():
        row = int(rows[k])
        if index[k] == "ois":
            add(row, "index", f"a {types[row]} on a compounded overnight rate (index ois) fixes at its periods' ends: "
                "not valued; its caplets take a term rate (index ibor)")
        else:
            add(row, "index", f"index must be one of {', '.join(INDICES)}, got {cells['index'][row]!r}")
    # the exercise window: from first_exercise (default: the start) to last_exercise (a european: its one date;
    # a bermudan: default the day before maturity, so every fixed-leg start date)
    european = np.zeros(types.size, dtype=bool)
    european[swaption_rows[style == "european"]] = True
    first = np.where(read["first_exercise"], dates["first_exercise"], start)
    last = np.where(read["last_exercise"], dates["last_exercise"], np.where(european, first, maturity - 1))
    checked = swaption_rows[good(swaption_rows)]
    one_date = european[checked] & read["last_exercise"][checked] & (last[checked] != first[checked])
    outside = {field: ~one_date & read[field][checked] & ~((start[checked] <= value[checked])
                                                             & (value[checked] < maturity[checked]))
               for field, value in (("first_exercise", first), ("last_exercise", last))}
    reversed_window = (~one_date & ~outside["first_exercise"] & ~outside["last_exercise"]
                       & (last[checked] < first[checked]))
    for k in np.flatnonzero(one_date | outside["first_exercise"] | outside["last_exercise"] | reversed_window).tolist():
        row = int(checked[k])
        if one_date[k]:
            add(row, "last_exercise", "a european swaption has one exercise date: leave last_exercise empty or equal "
                "to first_exercise")
            continue
        for field, value in (("first_exercise", first[row]), ("last_exercise", last[row])):
            if outside[field][k]:
                add(row, field, f"{field} {day_text(value)} is outside the swap ({day_text(start[row])} to "
                    f"{day_text(maturity[row])}): a swaption is exercised on its fixed leg's start dates")
        if reversed_window[k]:
            add(row, "last_exercise", f"last_exercise {day_text(last[row])} is before first_exercise {day_text(first[row])}")
    vol_kind = _vol_kinds(cells, numbers, cap_rows, rate, add)
    g = swaption_rows[good(swaption_rows)].astype(np.int64)
    c = cap_rows[good(cap_rows)].astype(np.int64)
    payer = np.zeros(types.size, dtype=bool)
    payer[swaption_rows[side == "payer"]] = True
    notional = np.where(np.isnan(numbers["notional"]), 100.0, numbers["notional"])
    spy = book.steps_per_year

    def frequencies(rows: np.ndarray) -> np.ndarray:
        return parse_frequencies(text["frequency"][rows])[0] if rows.size else np.zeros(0, np.int64)

    floating = np.zeros(types.size, dtype=np.int64)  # a swaption's floating leg: its own frequency, or the fixed's
    given = swaption_rows[np.not_equal(text["float_frequency"][swaption_rows], None)]
    if given.size:
        floating[given] = parse_frequencies(text["float_frequency"][given])[0]
    swaptions = SwaptionSpecs(
        as_of=book.as_of_day, start=start[g], maturity=maturity[g], rate=rate[g], frequency=frequencies(g),
        day_count=text["day_count"][g], calendar=text["calendar"][g], convention=text["convention"][g],
        payer=payer[g], first_exercise=first[g],
        last_exercise=last[g], notional=notional[g], a=numbers["a"][g], sigma=numbers["sigma"][g],
        curve=np.zeros(g.size, dtype=np.int64), steps_per_year=spy[g], rows=g,
        float_frequency=np.where(floating[g] > 0, floating[g], frequencies(g)), forecast=np.zeros(g.size, dtype=np.int64))
    caps = CapSpecs(as_of=book.as_of_day, start=start[c], maturity=maturity[c], rate=rate[c], frequency=frequencies(c),
                    day_count=text["day_count"][c], cap=types[c] == "cap", notional=notional[c], a=numbers["a"][c],
                    sigma=numbers["sigma"][c], steps_per_year=spy[c], rows=c, curve=np.zeros(c.size, dtype=np.int64),
                    forecast=np.zeros(c.size, dtype=np.int64), vol=np.where(vol_kind[c] >= 0, numbers["vol"][c], np.nan),
                    vol_kind=vol_kind[c], shift=np.where(np.isnan(numbers["shift"][c]), 0.0, numbers["shift"][c]))
    problems.sort(key=lambda item: item[0])
    return RateRows(problems=problems, swaption_rows=swaption_rows, cap_rows=cap_rows, swaptions=swaptions, caps=caps)


def _vol_kinds(cells: dict[str, np.ndarray], numbers: dict[str, np.ndarray], rows: np.ndarray, strike: np.ndarray,
               add: Callable[[int, str, str], None]) -> np.ndarray:
    """Per row, the code in :data:`VOL_KINDS` of a cap's or floor's quoted volatility (-1: none); each bad ``vol``,
    ``vol_kind`` or ``shift`` cell of ``rows`` said through ``add``."""
    codes = np.full(cells["vol_kind"].size, -1, dtype=np.int64)
    vol, shift = numbers["vol"], numbers["shift"]
    given = [np.isfinite(vol[rows]), *(np.not_equal(cells[field][rows], None) for field in ("vol_kind", "shift"))]
    for row in rows[np.logical_or.reduce(given)].tolist():  # the rows that give any of the cells: most give none
        given, kind_cell = bool(np.isfinite(vol[row])), cells["vol_kind"][row]
        kind = "normal" if kind_cell is None else str(kind_cell).strip().lower()
        if not given:
            for field in ("vol_kind", "shift"):
                if cells[field][row] is not None:
                    add(row, field, f"{field} goes with vol (the volatility a {cells['type'][row]} is priced off "
                        "beside the model), which is empty")
            continue
        if kind not in VOL_KINDS:
            add(row, "vol_kind", f"vol_kind must be one of {', '.join(VOL_KINDS)}, got {kind_cell!r}")
            continue
        scale = PLAUSIBLE_VOLS["normal" if kind == "normal" else "lognormal"]
        if not 0 < vol[row] <= scale:
            example = "0.0085 for 85 bp a year" if kind == "normal" else "0.2 for 20%"
            add(row, "vol", f"a {kind} vol must be in (0, {scale:g}] ({example}), got {cells['vol'][row]!r}")
        has_shift = bool(np.isfinite(shift[row]))
        if kind == "normal" and has_shift:
            add(row, "shift", "a shift goes with a lognormal or shifted vol, not a normal one")
        elif kind == "shifted" and not has_shift:
            add(row, "shift", "a shifted vol needs shift (the decimal added to the rate and the strike, 0.01 for 1%)")
        elif has_shift and not 0 <= shift[row] <= 1:
            add(row, "shift", f"shift must be a decimal in 0..1 (0.01 for 1%), got {cells['shift'][row]!r}")
        elif kind != "normal" and np.isfinite(strike[row]) and strike[row] + (shift[row] if has_shift else 0) <= 0:
            add(row, "rate", f"a {kind} vol needs rate + shift > 0, got rate {strike[row]:g}"
                + (f" and shift {shift[row]:g}" if has_shift else ": give vol_kind shifted and a shift"))
        codes[row] = VOL_KINDS.index(kind)
    return codes
