"""Risk measures of a whole book by bump and reprice, as one long table (issue 14, item 2).

:func:`risk` prices the book once under every scenario it needs, in one :func:`trinom.price` call over a
market's scenario axis: base, parallel +-shift, +-shift at each pillar of each curve, sigma +-``sigma_shift``
(vega) and the spread +-shift (spread duration). The engine prices only what differs per tree (a bump at
a pillar beyond a tree's last step, or on a curve it does not use, is its base price) and, on ``cuda``,
runs one forward pass per tree and sigma and one backward pass per scenario.
Prices are a bond's dirty price and an option's value; the OAS (a bond's ``spread``) is held fixed under
curve shifts. Measures, with ``P0`` the base price, ``h`` the curve shift and 1 bp = 1e-4:

* ``dv01``: ``(P(curve - h) - P0) * (1 bp / h)``, the price change for a fall of the zero curve, per 1 bp
  (with the float64 default ``h`` = 1 bp: ``P(curve - 1 bp) - P0``);
* ``duration``: ``(P(-h) - P(+h)) / (2 P0 h)``; ``convexity``: ``(P(+h) + P(-h) - 2 P0) / (P0 h^2)``;
* ``krd``: the duration for a triangular bump at each pillar of the curve the row uses (factor
  ``NAME:DAYS``, the curve's name as the market names it; trinom.scenarios; they sum to ``duration`` up to
  the curvature term);
* ``vega``: ``(P(sigma + v) - P(sigma - v)) / (2 v)`` times 0.0001 (per 0.0001 of sigma);
* ``spread_duration`` (bonds): ``(P(s - d) - P(s + d)) / (2 P0 h)`` with ``d`` = ``h`` in the spread's
  unit (percent: ``d = 100 h``).

A move that a row cannot take (``sigma - v <= 0``: any row with sigma <= v) fails only the measure that needs
it: vega is then the one-sided difference ``(P(sigma + v) - P0) / v`` (and likewise for a spread move the
row cannot take), and only where neither side can be priced is the measure NaN, with the reason in ``error``;
the row's other measures are computed. Those rows are priced in a second call, without the moves they
cannot take.

Rows ORE style: ``id, measure, factor, shift, base, value, error``; a row that cannot be priced has NaN
values and its message in ``error`` (``errors="mask"``), or raises :class:`trinom.InputError` naming the row
and the field (``errors="raise"``, the default), before any pricing where the input shows it.

**float32.** Float32 prices carry a rounding noise of about 3e-6 relative (1e-5 of the price at worst on
ordinary books), which a 1 bp difference turns into noise. So in float32 the default shifts are 10 bp
(``shift=1e-3``) and ``sigma_shift=1e-3``, and smaller ones are refused; ``convexity`` (a second difference
divided by ``h^2``: several percent of noise even at 10 bp) is refused, and left out of the default measures.
Against float64 at the same shifts, on books whose float32 prices are within 1e-5 of float64's (ordinary
volatilities; trees of extreme sigma, like some of the paper's generated bonds, price differently in float32,
and so do their measures): ``dv01`` and ``vega`` (price units) within 2e-3 of their value plus 2e-6 of the
base price; ``duration``, ``spread_duration`` and each key-rate duration (years) within 2e-3 times
``max(1, |duration|)`` (tests/test_risk.py, reference and futhark engines, options and 7- to 20-year callable
bonds; measured at most 3.5e-4 of that scale, spread duration, and 5e-5 for the others).

>>> import trinom
>>> p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[12],
...                      a=[0.1], sigma=[0.01], option_type=["put"])
>>> table = risk(p, backend="reference", measures=("dv01", "duration"))
>>> table[["measure", "factor"]].values.tolist()
[['dv01', 'parallel'], ['duration', 'parallel']]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..checks import check_client, check_real, check_sequence
from ..engines.options import PricingOptions, check_price_arguments
from ..errors import InputError
from ..instruments.bond import BondPortfolio
from ..instruments.legs import Legs
from ..instruments.option import Portfolio
from ..instruments.trades import Trades, single_instrument
from ..io.instrument_tables import as_portfolio
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from ..lattice.job import row_problems
from ..model.market import CurvesLike, Market
from ..pipeline import price_book
from .recalibration import MarketState, Recalibration, dated_curves, is_dated, recalibrated_grid
from .scenarios import CurveSet, CurveShift, Scenario, SigmaShift, SpreadShift, scenario_market

MEASURES = ("dv01", "duration", "convexity", "krd", "vega", "spread_duration")
#: The smallest and largest curve, sigma and spread moves risk takes.
F64_SHIFTS = (1e-8, 0.05)
#: Columns of the table.
COLUMNS = ["id", "measure", "factor", "shift", "base", "value", "error"]
#: One basis point: what dv01 is per, and what vega is per (of sigma).
BP = 1e-4
#: Per precision, the default curve shift and sigma shift; float32's are also the smallest it accepts.
DEFAULT_SHIFTS = {"f64": (1e-4, 1e-4), "f32": (1e-3, 1e-3)}
#: Measures float32 cannot make meaningful, and why.
F32_REFUSED = {"convexity": "convexity divides a second difference of prices by shift^2, and float32 prices carry "
                            "about 3e-6 relative rounding noise: several percent of noise even at a 10 bp shift; "
                            "use precision='f64'"}


def risk(instruments: Portfolio | BondPortfolio, curves: CurvesLike = None, *,
         measures: Sequence[str] | None = None, shift: float | None = None, sigma_shift: float | None = None,
         ids: Sequence[Any] | None = None, backend: str = "auto", precision: str = "f64", target: str | None = None,
         errors: str = "raise", progress: Callable[[float, float], None] | None = None,
         recalibrate: Recalibration | None = None, **options: Any) -> Any:
    """The ``measures`` of every row of ``instruments`` (options or bonds: one portfolio, or a table of one, or
    a book placed on Dask workers by :func:`trinom.distribute`: priced there, nothing sent again) as a pandas
    table (see the module).

    ``measures``: names from :data:`MEASURES` (None: every measure that applies to the book and the precision;
    an unknown or repeated one, none at all, ``spread_duration`` on options or ``convexity`` in float32 is a
    ``ValueError`` before any pricing); ``shift``: the curve shift (None: 1e-4 = 1 bp in float64, 1e-3 in
    float32); ``sigma_shift``: vega's move of sigma (None: 1e-4, float32 1e-3); ``ids``: the rows' names, one
    per row (default their numbers); ``errors``: ``"raise"`` (a bad row raises :class:`trinom.InputError`
    naming the row and the field) or ``"mask"`` (its values NaN, its message in the ``error`` column);
    ``progress(done, total)``: the book's node updates as its slices are priced (every scenario of a slice at
    once); ``options`` go to :func:`trinom.price` (``device``, ``max_width``, ``max_steps``, ``client``, knobs).

    Dated trades (:class:`~trinom.instruments.Trades`) on dated curves take their key rates at the dated curves'
    pillars (factor ``NAME:YYYY-MM-DD``). ``recalibrate`` (:class:`trinom.analytics.Recalibration`, dated trades
    only): the model is fitted again to the volatility quotes in every scenario (the base included), and ``vega``
    is the move of the price per 0.0001 of every quoted volatility (factor ``vol``), the model refitted
    (:mod:`trinom.analytics.recalibration`)."""
    check_price_arguments(backend=backend, precision=precision, target=target, device=options.get("device", 0),
                          errors=errors, max_width=options.get("max_width", DEFAULT_MAX_WIDTH),
                          max_steps=options.get("max_steps", DEFAULT_MAX_STEPS), progress=progress)
    if "scenarios" in options:
        raise TypeError("risk builds its own scenarios: price a scenario grid with trinom.price(..., scenarios=)")
    if getattr(instruments, "is_distributed_book", False):  # placed on Dask workers: priced there, nothing resent
        if options.get("client") not in (None, instruments.client):  # type: ignore[union-attr]
            raise ValueError("this DistributedBook is placed through another client: pass client=None or its own")
        options["client"] = instruments.client  # type: ignore[union-attr]
        instruments = instruments.instruments  # type: ignore[union-attr]
    legs: Legs | None = None
    trades: Trades | None = None
    forecast: np.ndarray | None = None  # two curves: each trade's forecast curve (a position in the market's names)
    dated: dict[str, Any] | None = None
    if recalibrate is not None and not isinstance(recalibrate, Recalibration):
        raise TypeError(f"recalibrate must be a trinom.analytics.Recalibration, got {type(recalibrate).__name__}")
    given_curves = curves
    if isinstance(instruments, Trades):  # dated trades of one kind: their tree-step instrument, named by their ids
        trades = instruments
        ids = instruments.ids if ids is None else ids
        dated = dated_curves(trades, curves) if recalibrate is not None or is_dated(curves) else None
        instruments, curves, legs = single_instrument(instruments, curves)
        legs = None if legs.is_identity() else legs
        if trades.has_two_curves(Market.of(curves).names):  # its flows and strikes follow both curves
            forecast = trades.forecast_index(Market.of(curves).names)
            if recalibrate is None:  # (a recalibrated run lowers it again in every state itself)
                options["lower_in"] = _lowering_of(trades)
    elif recalibrate is not None:
        raise TypeError("recalibrate needs dated trades (trinom.instruments.Trades) on dated curves: the model is "
                        "fitted to quotes on dates")
    block = as_portfolio(instruments)
    if block is None:
        raise TypeError("instruments must be one trinom.Portfolio or trinom.BondPortfolio (or a table of one); got "
                        f"{type(instruments).__name__} (price a mixed book's parts one at a time)")
    bonds = isinstance(block, BondPortfolio)
    chosen = _chosen_measures(measures, bonds, precision)
    shift, sigma_shift = _shifts(shift, sigma_shift, precision)
    n = len(block)
    names = _row_ids(ids, n if legs is None else legs.trades)
    market = Market.of(curves)
    limits = {"max_width": options.get("max_width", DEFAULT_MAX_WIDTH),
              "max_steps": options.get("max_steps", DEFAULT_MAX_STEPS)}
    # Curve scenarios: base, -h, +h, then -h and +h at pillar k of every curve (each row is on one curve, so
    # it sees the bump of its own curve's pillar k: 2 scenarios per pillar, not per pillar and curve).
    plan = _plan_scenarios(market, dated, chosen, shift, sigma_shift, recalibrate, two_curves=forecast is not None)
    scenarios, sides = plan.scenarios, plan.sides
    moves = sorted(sides.values())
    run = dict(backend=backend, precision=precision, target=target, errors="mask", **options)
    frame: _Frame | None = None  # the table's columns that need no price, where they are built while pricing
    if recalibrate is not None:  # the model fitted again in every scenario: one pricing per scenario
        base_bad, failures = _move_failures(block, market, scenarios, [], limits, errors, legs)
        grid, failures = _recalibrated(trades, block, legs, market, plan, recalibrate, run, base_bad)
    else:
        base_bad, failures = _move_failures(block, market, scenarios, moves, limits, errors, legs)
        if errors == "raise":  # a measure that neither of its moves can give is an error before any pricing
            _raise_unmeasurable(sides, _of_trades(failures, legs))
        grid_market = _scenario_market(market, scenarios)
        if run.get("client") is not None:  # on a cluster this process waits: the table's frame is built meanwhile
            with ThreadPoolExecutor(1) as pool:
                pricing = pool.submit(_priced, block, grid_market, run, progress=progress)
                frame = _frame(_layout(chosen, plan.pillars, _rows_of_curves(block, market, legs), shift,
                                       sigma_shift, recalibrate), names, legs.trades if legs is not None else n)
                priced = pricing.result()
        else:
            priced = _priced(block, grid_market, run, progress=progress)
        # The engine's arrays as they are, not copied (float64 already in f64; they may be the engine's own, e.g. a
        # cached error column or a result over shared memory): _Grid.own copies them before a repricing below
        # changes them, which most runs never need.
        grid = _Grid(np.asarray(np.atleast_2d(priced.price), dtype=np.float64), np.asarray(priced.error, dtype=object),
                     list(priced.problems))
        if failures:  # rows that some move fails: priced again without those moves, all their other scenarios kept
            _reprice_without(block, market, scenarios, failures, grid, run)
        late = sorted({row for row, _f, _m in grid.problems if row is not None} - base_bad)
        if late and moves:  # rows whose trees left the float range in some scenario: which one, measure by measure
            _isolate_moves(block, market, scenarios, moves, late, failures, grid, run)
    if errors == "raise":  # rows named as the caller knows them: trades, not their trees
        if grid.problems:
            raise InputError(list(grid.problems) if legs is None else list(legs.problems(grid.problems)))
        _raise_unmeasurable(sides, _of_trades(failures, legs))
    values, row_error = grid.values, grid.row_error
    used = _curve_of_rows(block, market)
    if legs is not None:  # trades of several trees (swaptions, caps): their trees' prices summed, then measured
        values, row_error, n = legs.combine(values), legs.errors(row_error), legs.trades
        failures = {s: legs.rows(rows) for s, rows in failures.items()}
        used = used[legs.starts()]
    p0, down, up = values[0], values[1], values[2]
    parts: list[_Part] = []

    row_failed = row_error != ""
    clean_rows = not row_failed.any()  # the common case: no row's message to carry into every measure

    def checked(measure: str, size: float, value: np.ndarray, message: np.ndarray | None) -> _Part:
        """A measure of every row (``factor`` and ``rows`` still to be set) with its error: the row's own, else the
        failure of a move it needs (``message``; None: no row has one), else why the value is not finite."""
        if message is None:  # no move failed: the rows' own errors (None: none has one)
            error = None if clean_rows else row_error
        else:
            error = message if clean_rows else np.where(row_failed, row_error, message)
        finite = np.isfinite(value)
        unsaid = None if finite.all() else ~finite if error is None else ~finite & (error == "")
        if unsaid is not None and unsaid.any():  # a measure the prices cannot give: NaN and why, never a bare NaN
            error = np.full(n, "", dtype=object) if error is None else error.copy()
            error[unsaid] = np.where(p0[unsaid] == 0, f"{measure} is undefined for a base price of 0 (it divides by the "
                                     "price)", f"{measure} is not a finite number: the difference of prices over the shift "
                                     f"{size:g} left the floating-point range (base price {p0[unsaid][0]:.3g})")
            value = np.where(unsaid, np.nan, value)
        return _Part(None, measure, "", size, value, error)

    def add(part: _Part, factor: str, rows: np.ndarray | None = None) -> None:  # rows None: every row
        parts.append(replace(part, factor=factor, rows=rows))

    def why(*used_scenarios: int) -> np.ndarray | None:  # a scenario's failure, where a measure needs it (None: none)
        if not any(failures.get(s) for s in used_scenarios):
            return None
        message = np.full(n, "", dtype=object)
        for s in reversed(used_scenarios):
            for row, (_field, text) in failures.get(s, {}).items():
                message[row] = text
        return message

    with np.errstate(divide="ignore", invalid="ignore"):
        for measure in chosen:
            if measure == "dv01":
                add(checked("dv01", shift, (down - p0) * (BP / shift), why(1)), "parallel")
            elif measure == "duration":
                add(checked("duration", shift, (down - up) / (2 * p0 * shift), why(1, 2)), "parallel")
            elif measure == "convexity":
                add(checked("convexity", shift, (up + down - 2 * p0) / (p0 * shift * shift), why(1, 2)), "parallel")
            elif measure == "krd" and plan.per_curve is not None:  # two curves: a row's key rates on each of them
                for j, (name, k) in enumerate(plan.per_curve):
                    position = market.names.index(name)
                    rows = np.flatnonzero((used == position) | (forecast == position))  # type: ignore[operator]
                    value = (values[3 + 2 * j] - values[4 + 2 * j]) / (2 * p0 * shift)
                    part = checked("krd", shift, value, why(3 + 2 * j, 4 + 2 * j))
                    add(part, f"{name}:{plan.pillars[name][k]}", None if rows.size == n else rows)
            elif measure == "krd":
                # Pillar k's measure is the same for every row whatever its curve (and so is the reason of a NaN,
                # which names the first such row of the book): computed once per k, each curve takes its rows.
                pillar: dict[int, _Part] = {}
                curve_rows = _curve_rows(used, market.names, n)
                for name, labels in plan.pillars.items():
                    rows = curve_rows(name)
                    for k, label in enumerate(labels):
                        if k not in pillar:
                            k_down, k_up = values[3 + 2 * k], values[4 + 2 * k]
                            pillar[k] = checked("krd", shift, (k_down - k_up) / (2 * p0 * shift), why(3 + 2 * k, 4 + 2 * k))
                        add(pillar[k], f"{name}:{label}", rows)
            elif measure == "vega":
                size = sigma_shift if recalibrate is None else recalibrate.vol_shift
                slope, message = _difference(values, p0, sides, "vega", size, failures, n)
                add(checked("vega", size, slope * BP, message), "sigma" if recalibrate is None else "vol")
                if recalibrate is None and trades is not None and trades.sigma_pieces():  # and each piece's
                    from .piece_vega import piece_parts

                    for rows, factor, value in piece_parts(trades, given_curves, size, {
                            k: v for k, v in run.items() if k != "lower_in"}, n):
                        add(checked("vega", size, value, None), factor, rows)
            elif measure == "spread_duration":
                slope, message = _difference(values, p0, sides, "spread_duration", shift, failures, n)
                add(checked("spread_duration", shift, slope / p0, message), "spread")
    if errors == "raise":  # a measure the prices cannot give (a base price of 0, a difference out of range)
        found = {}
        for part in parts:
            if part.error is not None:
                covered = np.arange(n) if part.rows is None else part.rows
                for row in covered[part.error[covered] != ""].tolist():
                    found.setdefault(int(row), (part.measure, str(part.error[row])))
        if found:
            raise InputError([(row, measure, message) for row, (measure, message) in sorted(found.items())])
    return _table(parts, names, p0, n, frame)


def _curve_rows(used: np.ndarray, names: Sequence[str], n: int) -> Callable[[str], np.ndarray | None]:
    """Per curve name, the rows on it (ascending; None: every row), given each row's curve position ``used``."""
    def rows(name: str) -> np.ndarray | None:
        found = np.flatnonzero(used == names.index(name)) if name in names else np.zeros(0, dtype=np.intp)
        return None if found.size == n else found
    return rows


def _rows_of_curves(block: Portfolio | BondPortfolio, market: Market,
                    legs: Legs | None) -> Callable[[str], np.ndarray | None]:
    """:func:`_curve_rows` of the table's rows (trades where ``legs`` sums trees)."""
    used = _curve_of_rows(block, market)
    if legs is not None:
        used = used[legs.starts()]
    return _curve_rows(used, market.names, len(used))


#: One measure and factor of the table as laid out before any price: measure, factor, shift, rows (None: all).
_Slot = tuple[str, str, float, "np.ndarray | None"]


def _layout(chosen: list[str], pillars: dict[str, list[str]], curve_rows: Callable[[str], np.ndarray | None],
            shift: float, sigma_shift: float, recalibrate: Recalibration | None) -> list[_Slot]:
    """The table's measures and factors in order, as the measure loop of :func:`risk` adds them."""
    slots: list[_Slot] = []
    for measure in chosen:
        if measure in ("dv01", "duration", "convexity"):
            slots.append((measure, "parallel", shift, None))
        elif measure == "krd":
            for name, labels in pillars.items():
                rows = curve_rows(name)
                slots += [("krd", f"{name}:{label}", shift, rows) for label in labels]
        elif measure == "vega":
            slots.append(("vega", "sigma" if recalibrate is None else "vol",
                          sigma_shift if recalibrate is None else recalibrate.vol_shift, None))
        elif measure == "spread_duration":
            slots.append(("spread_duration", "spread", shift, None))
    return slots


@dataclass
class _Frame:
    """A table's columns that need no price (ids, measures, factors, shifts), filled, and the others allocated and
    their pages taken: built while a cluster prices (:func:`risk`), used by :func:`_table` where its layout is the
    parts' (else ignored)."""

    slots: list[tuple[str, str, float, int]]  #: measure, factor, shift, rows
    rows: list[np.ndarray | None]
    columns: dict[str, np.ndarray]


def _frame(slots: list[_Slot], names: np.ndarray, n: int) -> _Frame:
    sizes = [n if rows is None else rows.size for *_head, rows in slots]
    total = sum(sizes)
    ids, measures, factors, errors = (np.empty(total, dtype=object) for _ in range(4))
    shifts, base, value = np.empty(total), np.zeros(total), np.zeros(total)  # zeros: the pages taken now
    of_rows: dict[int, np.ndarray] = {}
    start = 0
    for (measure, factor, size, rows), count in zip(slots, sizes, strict=True):
        span = slice(start, start + count)
        start += count
        measures[span], factors[span], shifts[span] = measure, factor, size
        if rows is None:
            ids[span] = names
        else:
            if id(rows) not in of_rows:
                of_rows[id(rows)] = names[rows]
            ids[span] = of_rows[id(rows)]
    return _Frame([(m, f, z, c) for (m, f, z, _r), c in zip(slots, sizes, strict=True)], [r for *_h, r in slots],
                  dict(zip(COLUMNS, (ids, measures, factors, shifts, base, value, errors), strict=True)))


def _table(parts: list[_Part], names: np.ndarray, p0: np.ndarray, n: int, frame: _Frame | None = None) -> Any:
    """One table in the order of the rows' ids within each measure and factor: each column allocated once and filled
    part by part (no per-part copies, no index arrays of the whole table); the columns of ``frame`` where its layout
    is the parts' (built while pricing)."""
    import pandas as pd

    sizes = [n if part.rows is None else part.rows.size for part in parts]
    total = sum(sizes)
    value_type = np.result_type(*(part.value for part in parts)) if parts else np.float64
    fits = (frame is not None and p0.dtype == np.float64 and value_type == np.float64
            and frame.slots == [(p.measure, p.factor, p.size, z) for p, z in zip(parts, sizes, strict=True)]
            and all(a is b or (a is not None and b is not None and np.array_equal(a, b))
                    for a, b in zip(frame.rows, [p.rows for p in parts], strict=True)))
    if fits:
        ids, measures, factors, shifts, base, value, errors = frame.columns.values()  # type: ignore[union-attr]
    else:
        # Text columns stay NumPy object arrays: a string dtype would copy millions of strings one by one.
        ids, measures, factors, errors = (np.empty(total, dtype=object) for _ in range(4))
        shifts, base = np.empty(total, dtype=np.float64), np.empty(total, dtype=p0.dtype)
        value = np.empty(total, dtype=value_type)
    clean = all(part.error is None for part in parts)
    if clean:  # no row has a message: the whole column at once (slice assignment; np.full is slower for objects)
        errors[:] = ""
    # Per rows array (a curve's rows, shared by its pillars' parts): their prices, and their ids (not with a frame)
    prices_of: dict[int, np.ndarray] = {}
    ids_of: dict[int, np.ndarray] = {}
    start = 0
    for part, size in zip(parts, sizes, strict=True):
        span = slice(start, start + size)
        start += size
        if not fits:
            measures[span], factors[span], shifts[span] = part.measure, part.factor, part.size
        if part.rows is None:
            base[span], value[span] = p0, part.value
            if not fits:
                ids[span] = names
        else:
            key = id(part.rows)
            if key not in prices_of:  # a curve's rows: gathered once for all its pillars
                prices_of[key] = p0[part.rows]
                if not fits:
                    ids_of[key] = names[part.rows]
            if not fits:
                ids[span] = ids_of[key]
            base[span] = prices_of[key]
            value[span] = part.value[part.rows]
        if part.error is not None:
            errors[span] = part.error if part.rows is None else part.error[part.rows]
        elif not clean:
            errors[span] = ""
    # Series of explicit dtype: pandas neither copies them nor scans the object columns to infer a type; one block
    # a column (consolidating would copy millions of object pointers).
    index = pd.RangeIndex(total)
    columns = dict(zip(COLUMNS, (ids, measures, factors, shifts, base, value, errors), strict=True))
    return pd.DataFrame({name: pd.Series(column, index=index, dtype=column.dtype, copy=False)
                         for name, column in columns.items()}, copy=False)


@dataclass(frozen=True)
class _ScenarioPlan:
    """A risk run's scenarios (for the engine's scenario axis), the same as dated market states (dated trades), the
    scenarios of each measure's moves, and per curve its key-rate pillars' labels (days, or dated pillars' dates)."""

    scenarios: list[Scenario]
    states: list[MarketState]
    sides: dict[tuple[str, str], int]
    pillars: dict[str, list[str]]
    #: Two curves: the key-rate scenarios bump one curve each, ``(curve, pillar)`` in scenario order (None: every
    #: curve's pillar k at once).
    per_curve: list[tuple[str, int]] | None = None


def _plan_scenarios(market: Market, dated: dict[str, Any] | None, chosen: list[str], shift: float,
                    sigma_shift: float, recalibrate: Recalibration | None, two_curves: bool = False) -> _ScenarioPlan:
    """Base, -h, +h, then -h and +h at pillar k of every curve (each row is on one curve, so it sees the bump of its
    own curve's pillar k: 2 scenarios per pillar, not per pillar and curve), then vega's and the spread's moves.
    On dated curves the bumps are the dated curves' (:meth:`~trinom.model.DatedCurve.bumped`) at their pillars.
    ``two_curves`` (a row on a discount and a forecast curve): each key-rate bump moves one curve's pillar, 2
    scenarios per pillar and curve."""
    krd = "krd" in chosen
    names = market.names if dated is None else tuple(dated)
    sizes = [len(c) for c in market.curves] if dated is None else [len(c) for c in dated.values()]
    per_curve = [(name, k) for name, size in zip(names, sizes, strict=True) for k in range(size)] if two_curves else None
    bumps: list[tuple[str | None, int]] = (list(per_curve) if per_curve is not None
                                           else [(None, k) for k in range(max(sizes))]) if krd else []
    if dated is None:
        scenarios: list[Scenario] = [None, CurveShift(-shift), CurveShift(shift)]
        pillars = {name: [str(day) for day in curve.days] for name, curve in zip(market.names, market.curves,
                                                                                  strict=True)}
        for name, k in bumps:
            scenarios += [CurveShift(-shift, pillar=k, curve=name), CurveShift(shift, pillar=k, curve=name)]
        states: list[MarketState] = []
    else:
        def moved(h: float, pillar: int | None = None, only: str | None = None) -> dict[str, Any]:
            return {name: c.bumped(h, pillar) if (pillar is None or pillar < len(c)) and only in (None, name) else c
                    for name, c in dated.items()}

        pillars = {name: [str(date) for date in curve.dates] for name, curve in dated.items()}
        states = [MarketState(dict(dated)), MarketState(moved(-shift), label="parallel down"),
                  MarketState(moved(shift), label="parallel up")]
        for name, k in bumps:
            where = f"pillar {k}" if name is None else f"{name} pillar {k}"
            states += [MarketState(moved(-shift, k, name), label=f"{where} down"),
                       MarketState(moved(shift, k, name), label=f"{where} up")]
        scenarios = [None] + [CurveSet({name: c.to_yield_curve() for name, c in state.curves.items()})
                              for state in states[1:]]
    if not krd:
        pillars = {name: [] for name in pillars}
    sides: dict[tuple[str, str], int] = {}  # (measure, side) -> its scenario
    if "vega" in chosen:
        sides[("vega", "up")], sides[("vega", "down")] = len(scenarios), len(scenarios) + 1
        if recalibrate is None:
            scenarios += [SigmaShift(sigma_shift), SigmaShift(-sigma_shift)]
        else:  # every quoted volatility moved, the model refitted
            v = recalibrate.vol_shift
            scenarios += [None, None]
            states += [MarketState(dict(states[0].curves), vol_shift=v, label="vols up"),
                       MarketState(dict(states[0].curves), vol_shift=-v, label="vols down")]
    if "spread_duration" in chosen:  # the spread is in percent; "up" is the price's side: the spread falls
        sides[("spread_duration", "up")], sides[("spread_duration", "down")] = len(scenarios), len(scenarios) + 1
        scenarios += [SpreadShift(-100.0 * shift), SpreadShift(100.0 * shift)]
        if states:
            states += [MarketState(dict(states[0].curves), spread_shift=-100.0 * shift, label="spread down"),
                       MarketState(dict(states[0].curves), spread_shift=100.0 * shift, label="spread up")]
    return _ScenarioPlan(scenarios, states, sides, pillars, per_curve if krd else None)


def _recalibrated(trades: Trades | None, block: Portfolio | BondPortfolio, legs: Legs | None, market: Market,
                  plan: _ScenarioPlan, how: Recalibration, run: dict[str, Any], base_bad: set[int]
                  ) -> tuple[_Grid, Failures]:
    """Every scenario priced with the model refitted in it (:func:`trinom.analytics.recalibration.recalibrated_grid`),
    as the grid of prices (base errors per tree) and, per scenario, the trees it fails that the base does not."""
    values, errors, results = recalibrated_grid(trades, [block], legs, market.names, plan.states, how, run)
    base_problems = list(results[0].problems)
    base_error = errors[0].copy()
    for row, message in enumerate(base_error.tolist()):  # a base without a fit: the row's error
        if message and not any(p[0] == row for p in base_problems):
            base_problems.append((row, "sigma", message))
    failures: Failures = {}
    for s in range(1, len(plan.states)):
        for row in np.flatnonzero((errors[s] != "") & (base_error == "")).tolist():
            if row not in base_bad:
                failures.setdefault(s, {})[row] = ("sigma", f"{plan.states[s].label}: {errors[s][row]}")
    base_problems.sort(key=lambda p: -1 if p[0] is None else p[0])
    return _Grid(values, base_error, base_problems), failures


def _chosen_measures(measures: Sequence[str] | None, bonds: bool, precision: str) -> list[str]:
    """The measures to compute, checked before any pricing (see :func:`risk`)."""
    if measures is None:
        return [m for m in MEASURES if (bonds or m != "spread_duration") and not (precision == "f32" and m in F32_REFUSED)]
    listed = check_sequence("measures", measures, of=f"measure names ({', '.join(MEASURES)})")
    if not listed:
        raise ValueError(f"measures must name at least one measure; choose from {', '.join(MEASURES)}")
    odd = [m for m in listed if not isinstance(m, str)]
    if odd:
        raise TypeError(f"measures must be names (strings), got {odd[0]!r}")
    unknown = [m for m in listed if m not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {', '.join(map(repr, unknown))}; choose from {', '.join(MEASURES)}")
    repeated = sorted({m for m in listed if listed.count(m) > 1})
    if repeated:
        raise ValueError(f"measures lists {', '.join(map(repr, repeated))} more than once")
    if "spread_duration" in listed and not bonds:
        raise ValueError("spread_duration applies to bonds only, and the book holds options: it applies to no row")
    refused = [m for m in listed if precision == "f32" and m in F32_REFUSED]
    if refused:
        raise ValueError(f"{refused[0]} in float32: {F32_REFUSED[refused[0]]}")
    return list(listed)


def _shifts(shift: float | None, sigma_shift: float | None, precision: str) -> tuple[float, float]:
    """The curve and sigma shifts: the precision's defaults for None; checked (float32: not below its defaults)."""
    default_shift, default_sigma = DEFAULT_SHIFTS[precision]
    moves = {"shift": (default_shift if shift is None else check_real("shift", shift, positive=True), default_shift),
             "sigma_shift": (default_sigma if sigma_shift is None else check_real("sigma_shift", sigma_shift,
                                                                                  positive=True), default_sigma)}
    for name, (value, _least) in moves.items():
        if not F64_SHIFTS[0] <= value <= F64_SHIFTS[1]:
            raise ValueError(f"{name}={value:g} is outside {F64_SHIFTS[0]:g}..{F64_SHIFTS[1]:g}: a smaller move is lost in "
                             "the prices' rounding (and its square, which convexity divides by, underflows); a larger one "
                             "is no small bump")
    if precision == "f32":
        for name, (value, least) in moves.items():
            if value < least:
                raise ValueError(f"{name}={value:g} is below float32's least of {least:g}: float32 prices carry about "
                                 f"3e-6 relative rounding noise, which a smaller move turns into noise; use {name} >= "
                                 f"{least:g} (the float32 default) or precision='f64'")
    return moves["shift"][0], moves["sigma_shift"][0]


#: The default row names "0" .. "n-1" of the last few book sizes, read-only: a large book's 100000s of strings cost
#: more than its table (kept here, not on the book, which would carry them wherever it is pickled).
_ROW_NUMBERS: dict[int, np.ndarray] = {}
_ROW_NUMBERS_KEPT = 2


def _row_ids(ids: Sequence[Any] | None, n: int) -> np.ndarray:
    """The rows' names as an object array of strings: ``ids`` (one per row, unique), or the numbers 0..n-1 (shared,
    read-only)."""
    if ids is None:
        numbers = _ROW_NUMBERS.get(n)
        if numbers is None:
            numbers = np.array([str(i) for i in range(n)], dtype=object)
            numbers.setflags(write=False)
            while len(_ROW_NUMBERS) >= _ROW_NUMBERS_KEPT:
                _ROW_NUMBERS.pop(next(iter(_ROW_NUMBERS)), None)
            _ROW_NUMBERS[n] = numbers
        return numbers
    listed = [str(i) for i in check_sequence("ids", ids, of="row names, one per row")]
    if len(listed) != n:
        raise ValueError(f"ids has {len(listed)} entries, expected one per row ({n})")
    repeated = sorted({i for i in listed if listed.count(i) > 1}) if len(set(listed)) != n else []
    if repeated:
        raise ValueError(f"ids must be unique; {', '.join(map(repr, repeated[:5]))} repeated")
    names = np.empty(n, dtype=object)
    names[:] = listed
    return names


#: Per move scenario (an index into the scenarios), the rows it fails, each with ``(field, message)``.
Failures = dict[int, dict[int, tuple[str, str]]]


@dataclass(frozen=True)
class _Part:
    """One measure and factor of the table: the rows it covers (None: every row, ascending), its shift, and per row
    of the book its value and error (None: no row has a message)."""

    rows: np.ndarray | None
    measure: str
    factor: str
    size: float
    value: np.ndarray
    error: np.ndarray | None


@dataclass
class _Grid:
    """The prices of every scenario, ``(scenarios, rows)`` float64, each row's error and every problem. ``values``
    and ``row_error`` may be the engine's own arrays until :meth:`own` copies them, before any change."""

    values: np.ndarray
    row_error: np.ndarray
    problems: list[tuple[int | None, str, str]]
    owned: bool = False

    def own(self) -> None:
        """Writable copies of ``values`` and ``row_error`` (once), before the first change."""
        if not self.owned:
            self.values, self.row_error, self.owned = self.values.astype(np.float64), self.row_error.copy(), True

    def replace(self, rows: list[int], scenarios: list[int], part: Any) -> None:
        """Rows ``rows`` priced again (``part``, a :class:`trinom.Prices` of ``scenarios``): their prices there, their
        errors and problems those of ``part``."""
        self.own()
        self.values[np.ix_(scenarios, rows)] = np.asarray(part.price).reshape(len(scenarios), len(rows))
        self.row_error[rows] = np.asarray(part.error, dtype=object)
        redone = set(rows)
        self.problems = sorted([p for p in self.problems if p[0] not in redone]
                               + [(None if row is None else rows[row], field, message)
                                  for row, field, message in part.problems], key=lambda p: -1 if p[0] is None else p[0])


#: Scenario markets by their content (the base market's names and curves, and the scenarios): the last few, kept
#: because building a risk run's 30-odd scenarios of shifted curves costs more than its table.
_SCENARIO_MARKETS: dict[tuple[Any, ...], Market] = {}
_SCENARIO_MARKETS_KEPT = 8


def _scenario_market(market: Market, scenarios: Sequence[Scenario]) -> Market:
    """:func:`trinom.scenarios.scenario_market` of ``market`` (one scenario, no moves of its own, immutable curves),
    the same market again for the same content; anything else (dated curve sets) built each time."""
    if len(market) != 1 or market.moves_trees or not all(isinstance(s, (CurveShift, SigmaShift, SpreadShift))
                                                         or s is None for s in scenarios):
        return scenario_market(market, scenarios)
    key = (market.names, tuple((type(c), c.rates.tobytes(), c.days.tobytes()) for c in market.curves), tuple(scenarios))
    found = _SCENARIO_MARKETS.get(key)
    if found is None:
        found = scenario_market(market, scenarios)
        while len(_SCENARIO_MARKETS) >= _SCENARIO_MARKETS_KEPT:
            _SCENARIO_MARKETS.pop(next(iter(_SCENARIO_MARKETS)), None)
        _SCENARIO_MARKETS[key] = found
    return found


def _move_failures(block: Portfolio | BondPortfolio, market: Market, scenarios: list[Scenario], moves: list[int],
                   limits: dict[str, int], errors: str, legs: Legs | None = None) -> tuple[set[int], Failures]:
    """The rows bad in the base market, and per move scenario (index into ``scenarios``) the other rows that it
    makes invalid. With ``errors="raise"``, a bad row of the base market raises here, before any pricing (naming
    its trade where ``legs`` say which trees make up trades)."""
    base = row_problems(block, market, **limits)
    if errors == "raise" and base:
        raise InputError(list(base) if legs is None else list(legs.problems(base)))
    bad = {int(row) for row, _f, _m in base if row is not None}
    if any(row is None for row, _f, _m in base):
        return bad, {}
    failures: Failures = {}
    for s in moves:
        found = row_problems(block, scenario_market(market, [scenarios[s]]), **limits)
        failed = {int(row): (field, message) for row, field, message in found if row is not None and row not in bad}
        if failed:
            failures[s] = failed
    return bad, failures


def _of_trades(failures: Failures, legs: Legs | None) -> Failures:
    """Per-tree failures as per-trade ones (a trade's first failing tree speaks for it)."""
    return failures if legs is None else {s: legs.rows(rows) for s, rows in failures.items()}


def _raise_unmeasurable(sides: dict[tuple[str, str], int], failures: Failures) -> None:
    """An :class:`InputError` naming every row and measure that neither of the measure's moves can give."""
    found = []
    for (measure, side), up in sides.items():
        if side != "up":
            continue
        down = sides[(measure, "down")]
        for row in sorted(set(failures.get(up, {})) & set(failures.get(down, {}))):
            found.append((row, failures[up][row][0], _neither(measure, failures[up][row][1], failures[down][row][1])))
    if found:
        raise InputError(sorted(found))


def _neither(measure: str, up: str, down: str) -> str:
    return f"{measure} needs a move either side and this row can take neither: {up}; {down}"


def _reprice_without(block: Portfolio | BondPortfolio, market: Market, scenarios: list[Scenario], failures: Failures,
                     grid: _Grid, run: dict[str, Any]) -> None:
    """The rows that some moves fail, priced under every other scenario (one call per set of failing moves);
    their prices under the failing moves are NaN, and their errors are those of the new call."""
    grid.own()
    failing: dict[int, set[int]] = {}
    for s, rows in failures.items():
        for row in rows:
            failing.setdefault(row, set()).add(s)
    groups: dict[frozenset[int], list[int]] = {}
    for row, moves in sorted(failing.items()):
        groups.setdefault(frozenset(moves), []).append(row)
    for moves, rows in groups.items():
        keep = [s for s in range(len(scenarios)) if s not in moves]
        grid.replace(rows, keep, _price_rows(block, rows, scenario_market(market, [scenarios[s] for s in keep]), run))
        grid.values[np.ix_(sorted(moves), rows)] = np.nan


def _price_rows(block: Portfolio | BondPortfolio, rows: list[int], market: Market, run: dict[str, Any]) -> Any:
    """``block[rows]`` priced in ``market`` (:func:`_priced`: on a Dask cluster, from the shards placed there)."""
    return _priced(block, market, run, rows=rows)


def _priced(block: Portfolio | BondPortfolio, market: Market, run: dict[str, Any], *, rows: list[int] | None = None,
            progress: Callable[[float, float], None] | None = None) -> Any:
    """``block`` (or its ``rows``) priced in ``market`` by the pipeline (the arguments in ``run``): with a Dask
    ``client`` there, on its workers from the block's shards placed there (trinom.distributed: no row sent again)."""
    options = PricingOptions.of(**{k: v for k, v in run.items() if k not in ("client", "lower_in")}, progress=progress)
    lower_in = run.get("lower_in")
    if lower_in is not None:  # a book with two curves: lowered again in each scenario's curves, priced there
        if run.get("client") is not None:
            raise ValueError("a book with two curves is lowered again in every scenario, in this process: pass "
                             "client=None")
        return _stacked([price_book(lower_in(market.scenario(s)) if rows is None else lower_in(market.scenario(s))[rows],
                                    market.scenario(s), options) for s in range(len(market))])
    if run.get("client") is None:
        return price_book(block if rows is None else block[rows], market, options)
    check_client(run["client"])
    if progress is not None:
        raise ValueError("a Dask run shows its progress on Dask's dashboard: pass progress=None with client")
    from ..distributed import price_on

    return price_on(run["client"], block, market, options, rows=rows)


def _lowering_of(trades: Trades) -> Callable[[Market], Portfolio | BondPortfolio]:
    """``trades``' tree-step instrument in a market of one scenario (the same trees in every market; their cash
    flows and strikes follow the curves)."""
    return lambda market: single_instrument(trades, market)[0]


def _stacked(results: list[Any]) -> Any:
    """Prices of one scenario each as one result ``(scenarios, rows)``: a row's error and problems from every
    scenario."""
    price_grid = np.stack([np.asarray(r.price, dtype=np.float64).reshape(-1) for r in results])
    error = np.full(price_grid.shape[1], "", dtype=object)
    for result in results:
        for k in np.flatnonzero(np.asarray(result.error) != "").tolist():
            error[k] = str(result.error[k]) if not error[k] else f"{error[k]}; {result.error[k]}"
    problems = tuple(sorted({p for r in results for p in r.problems}, key=lambda p: -1 if p[0] is None else p[0]))
    return replace(results[0], price=price_grid, error=error, problems=problems)


def _isolate_moves(block: Portfolio | BondPortfolio, market: Market, scenarios: list[Scenario], moves: list[int],
                   rows: list[int], failures: Failures, grid: _Grid, run: dict[str, Any]) -> None:
    """Rows that some scenario's tree took out of the float range (which masks the whole row): priced again
    under the curve scenarios alone, and where those price, under each move alone, so that a move that leaves the
    range fails only the measure that needs it (its reason goes to ``failures``)."""
    grid.own()
    curve_scenarios = list(range(moves[0]))
    grid.replace(rows, curve_scenarios, _price_rows(block, rows, scenario_market(market, scenarios[:moves[0]]), run))
    good = [row for row in rows if grid.row_error[row] == ""]
    for s in moves:
        take = [row for row in good if row not in failures.get(s, {})]
        if not take:
            continue
        part = _price_rows(block, take, scenario_market(market, [scenarios[s]]), run)
        grid.values[s, take] = np.asarray(part.price, dtype=np.float64).reshape(-1)
        for row, field, message in part.problems:
            for hit in take if row is None else [take[row]]:
                failures.setdefault(s, {})[hit] = (field, f"in the scenario {scenarios[s]}: {message}")


def _difference(values: np.ndarray, p0: np.ndarray, sides: dict[tuple[str, str], int], measure: str, step: float,
                failures: dict[int, dict[int, tuple[str, str]]], n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The slope of the price over a move of size ``step`` per row (the central difference of the ``up`` and
    ``down`` sides; one-sided where a side fails; NaN where both do) and, where NaN, the reason (None: no row
    fails both sides)."""
    up, down = sides[(measure, "up")], sides[(measure, "down")]
    central = (values[up] - values[down]) / (2 * step)
    if not failures.get(up) and not failures.get(down):  # the common case: every row takes both moves
        return central, None
    up_ok, down_ok = np.ones(n, dtype=bool), np.ones(n, dtype=bool)
    up_ok[list(failures.get(up, {}))] = False
    down_ok[list(failures.get(down, {}))] = False
    slope = np.where(up_ok & down_ok, central, np.where(up_ok, (values[up] - p0) / step,
                                                        np.where(down_ok, (p0 - values[down]) / step, np.nan)))
    neither = np.flatnonzero(~up_ok & ~down_ok)
    if not neither.size:
        return slope, None
    message = np.full(n, "", dtype=object)
    for row in neither:
        message[row] = _neither(measure, failures[up][int(row)][1], failures[down][int(row)][1])
    return slope, message


def _curve_of_rows(instruments: Portfolio | BondPortfolio, market: Market) -> np.ndarray:
    """The curve each row is priced on, as its position in ``market.names`` (options: the first; bonds: their
    ``curve_index``; a bond whose index names no curve, a bad row, is listed under the nearest one, with its
    error). Positions, not names: a curve's rows are then found by comparing numbers, not strings."""
    if isinstance(instruments, BondPortfolio):
        index = np.nan_to_num(instruments.curve_index.astype(np.float64), nan=0.0)
        return np.clip(index, 0, len(market.names) - 1).astype(np.int64)
    return np.zeros(len(instruments), dtype=np.int64)


__all__ = ["BP", "COLUMNS", "DEFAULT_SHIFTS", "F32_REFUSED", "MEASURES", "risk"]
