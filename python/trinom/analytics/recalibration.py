"""Model-consistent risk and scenarios: the Hull-White ``(a, sigma)`` refitted to the market's volatilities in every
scenario before the book is priced in it (issue 26: ``trinom.risk(..., recalibrate=)``, ``trinom.price(...,
scenarios=, recalibrate=)``, ``--recalibrate`` on the command line).

A desk's Greeks of a Bermudan are model-consistent: when the curve moves, the model is calibrated again to the
same volatility quotes, so a dv01 holds the vols fixed, not ``sigma``; and vega is the price's move when the
quoted volatilities move (the whole surface by ``vol_shift``), the model refitted to them. :class:`Recalibration`
says how the model is fitted:

* ``per="trade"`` (default, ORE's for Bermudans and callable bonds): each Bermudan swaption and callable or
  puttable bond to its own co-terminal European swaptions (:func:`trinom.analytics.baskets.book_baskets`,
  :func:`~trinom.analytics.baskets.calibrate_scenarios`), the baskets prepared once (and kept with the book) and every
  scenario fitted in batched calls, each trade starting from its fit in the first scenario. A bond without a call
  or put keeps its own ``a`` and ``sigma`` (its price does not depend on them beyond the tree's discretisation); any
  other trade without a basket (a cap, a floor, a bond option) has no fit: its measures are NaN with the reason
  (calibrate those per curve).
* ``per="curve"``: one ``(a, sigma)`` per curve to its swaption matrix or cap strip
  (:func:`trinom.model.calibration.calibrate`), every scenario's curves in one batched call; every trade on a curve
  takes its parameters.

``a``: None (free) or a number (fixed); ``strike``, ``error``: as the calibrations take them. A trade whose fit
fails in a scenario gets NaN there, and its message (the calibration's status and message) says which scenario.

>>> from trinom.model import DatedCurve
>>> curve = DatedCurve(as_of="2025-01-02", dates=["2045-01-02"], zero_rates=[0.03], name="EUR")
>>> from trinom.scenarios import CurveShift
>>> states = dated_states({"EUR": curve}, [None, CurveShift(1e-4, pillar=0)], recalibrating=True)
>>> [round(float(state.curves["EUR"].zero_rates[0]), 6) for state in states]
[0.03, 0.0301]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from ..checks import check_real
from ..errors import InputError

#: How the model is refitted.
PER: Final[tuple[str, ...]] = ("trade", "curve")
#: Between a curve's name and its scenario's number in the batched calibration's curve names.
_SEPARATOR: Final[str] = "\x1f"
#: Statuses whose parameters price a trade (a bound hit is a fit, at its bound).
_FITTED: Final[tuple[str, ...]] = ("converged", "bound")


@dataclass(frozen=True)
class Recalibration:
    """How the model is refitted in every scenario (see the module).

    Args:
      vols: the quotes (:class:`~trinom.model.quotes.VolQuotes`, a ``vols.csv`` / Parquet path, a DataFrame of its
        columns) or, with ``per="trade"``, a :class:`~trinom.model.quotes.VolSurface`.
      per: ``"trade"`` or ``"curve"``.
      a: None (free) or a fixed mean reversion > 0.
      strike: per-trade baskets at the money (``"atm"``) or at the deal's rate (``"deal"``).
      error: the calibration's error (``relative_price``, ``price``, ``vol``).
      vol_shift: vega's move of every quoted volatility, in the quotes' units (1e-4: 1 bp of a normal vol).
      backend: the per-trade calibration's backend (:func:`~trinom.analytics.baskets.calibrate_baskets`).
      piecewise: with ``per="trade"`` and ``a`` fixed, each trade's sigma bootstrapped piece by piece in every
        scenario (:func:`~trinom.analytics.baskets.piecewise.bootstrap_baskets`) and its trees priced on its pieces.
    """

    vols: Any
    per: str = "trade"
    a: float | None = None
    strike: str = "atm"
    error: str = "relative_price"
    vol_shift: float = 1e-4
    backend: str = "numpy"
    piecewise: bool = False

    def __post_init__(self) -> None:
        from ..model.calibration import ERRORS
        from .baskets import STRIKES

        for name, value, choices in (("per", self.per, PER), ("strike", self.strike, STRIKES),
                                     ("error", self.error, ERRORS)):
            if value not in choices:
                raise ValueError(f"Recalibration {name} must be one of {', '.join(choices)}, got {value!r}")
        if self.a is not None:
            object.__setattr__(self, "a", check_real("Recalibration a", self.a, positive=True))
        if self.piecewise and (self.per != "trade" or self.a is None):
            raise ValueError("Recalibration piecewise bootstraps each trade's pieces with a fixed: give per='trade' "
                             "and a")
        object.__setattr__(self, "vol_shift", check_real("Recalibration vol_shift", self.vol_shift, positive=True))
        if isinstance(self.vols, (str, Path)):
            from ..io.quote_files import read_vol_quotes

            object.__setattr__(self, "vols", read_vol_quotes(self.vols))


@dataclass(frozen=True)
class MarketState:
    """One scenario of a recalibrated run: its dated curves, the move of every quoted volatility and of every bond's
    spread (percent), and a label for messages."""

    curves: Mapping[str, Any]
    vol_shift: float = 0.0
    spread_shift: float = 0.0
    label: str = field(default="base")


@dataclass(frozen=True)
class Fits:
    """Per scenario and trade the refitted ``a`` and ``sigma`` (NaN: no fit), why not (``message``), and which trades
    keep their own parameters (``kept``: bonds without an option, in ``per="trade"``)."""

    a: np.ndarray
    sigma: np.ndarray
    message: np.ndarray
    kept: np.ndarray


def fitted_parameters(trades: Any, states: Sequence[MarketState], how: Recalibration) -> Fits:
    """The model of every trade of ``trades`` (:class:`~trinom.instruments.Trades`) in every state (see the module).

    Per trade: the baskets are prepared once (:func:`~trinom.analytics.baskets.prepare_baskets`: their quotes' dates,
    legs and volatilities do not move between states), the first state is fitted, and every other state in batched
    calls (:func:`~trinom.analytics.baskets.calibrate_scenarios`: the trades' fits alone, each distinct quote priced
    once per state) that start each trade from its fit in the first state (a warm start: a scenario moves the fit a
    little)."""
    names = tuple(states[0].curves)
    n, count = len(trades), len(states)
    trade_curve = _trade_curves(trades, names)
    if how.per == "curve":
        return _per_curve(trades, states, how, names, trade_curve)
    from .baskets import book_baskets, calibrate_scenarios, prepare_baskets

    baskets = book_baskets(trades, list(names))
    surface = _surface(how.vols, trades.as_of)
    prepared = prepare_baskets(baskets, surface, trades.as_of, curves=names, strike=how.strike)
    options: dict[str, Any] = {"a": how.a, "error": how.error, "backend": how.backend}
    first = calibrate_scenarios(prepared, [(states[0].curves, states[0].vol_shift)], **options)
    fits = [first]
    if count > 1:
        start = np.stack([first.a[0], first.sigma[0]], axis=1)  # NaN where the first state has no fit: the default
        fits.append(calibrate_scenarios(prepared, [(state.curves, state.vol_shift) for state in states[1:]],
                                        x0=start, **options))
    status = np.concatenate([f.status for f in fits])
    message = np.concatenate([f.message for f in fits])
    kind = _column_text(trades, "type")
    kept = (kind == "bond") & (_column_text(trades, "option") == "")
    ok = np.concatenate([f.fitted for f in fits])  # converged or at a bound: a fit that prices
    a = np.where(ok, np.concatenate([f.a for f in fits]), np.nan)
    sigma = np.where(ok, np.concatenate([f.sigma for f in fits]), np.nan)
    why = _blank((count, n))
    for s, k in zip(*np.nonzero(~ok & ~kept[None, :]), strict=True):
        why[s, k] = f"recalibration{_in(states[s])}: {status[s, k]}: {message[s, k]}"
    return Fits(a=a, sigma=sigma, message=why, kept=kept)


def _per_curve(trades: Any, states: Sequence[MarketState], how: Recalibration, names: tuple[str, ...],
               trade_curve: np.ndarray) -> Fits:
    """One fit per curve and state (:func:`trinom.model.calibration.calibrate`)."""
    from ..model.calibration import calibrate
    from ..model.quotes import VolQuotes, VolSurface

    vols = how.vols
    if isinstance(vols, VolSurface):
        raise InputError([(None, "vols", "per='curve' calibrates to quotes: give the vols.csv quotes, not a surface")])
    quotes = vols if isinstance(vols, VolQuotes) else VolQuotes.from_frame(vols)
    frame = quotes.to_frame()
    quoted = set(frame["curve"].astype(str).tolist())
    parts = []
    projected = {str(c) for c in frame["forecast_curve"].tolist() if c}  # two curves: tagged as the quotes' curves
    for s, state in enumerate(states):
        part = frame[frame["curve"].astype(str).isin(names)].copy()
        part["curve"] = [_tagged(c, s) for c in part["curve"].astype(str).tolist()]
        part["forecast_curve"] = [_tagged(str(c), s) if c else "" for c in part["forecast_curve"].tolist()]
        part["vol"] = part["vol"].astype(float) + state.vol_shift
        parts.append(part)
    import pandas as pd

    curves = {_tagged(name, s): state.curves[name] for s, state in enumerate(states) for name in names
              if name in quoted or name in projected}
    result = calibrate(curves=curves, quotes=VolQuotes.from_frame(pd.concat(parts, ignore_index=True)), a=how.a,
                       error=how.error)
    n, count = len(trades), len(states)
    a, sigma = np.full((count, n), np.nan), np.full((count, n), np.nan)
    why = np.full((count, n), "", dtype=object)
    fitted = {name: k for k, name in enumerate(result.curve_names)}
    for s, state in enumerate(states):
        for name in names:
            rows = np.flatnonzero(trade_curve == name)
            k = fitted.get(_tagged(name, s))
            if k is None:
                why[s, rows] = f"recalibration: no volatility quotes for curve {name!r}"
            elif result.status[k] not in _FITTED:
                why[s, rows] = f"recalibration{_in(state)}: curve {name!r}: {result.status[k]}: {result.message[k]}"
            else:
                a[s, rows], sigma[s, rows] = result.a[k], result.sigma[k]
    return Fits(a=a, sigma=sigma, message=why, kept=np.zeros(n, dtype=bool))


def recalibrated_grid(trades: Any, blocks: Sequence[Any], legs: Any, names: Sequence[str],
                      states: Sequence[MarketState], how: Recalibration, run: Mapping[str, Any]
                      ) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Every tree of ``blocks`` priced in every state with its refitted model: ``(states, trees)`` prices, per state
    and tree the error (``""``: priced), and per state its :class:`~trinom.Prices` of the trees.

    The trees are validated and lowered once (their own parameters, in the first state's market); each state's book
    is that book with the state's ``a`` and ``sigma`` (:meth:`trinom.lattice.book.Book.with_trees`), a tree the new ``a``
    makes wider than ``max_width`` masked with a message, and priced by the engine in the state's market."""
    from ..model.market import Market

    if how.piecewise:
        return _piecewise_grid(trades, blocks, legs, names, states, how, run)
    fits = fitted_parameters(trades, states, how)
    trees = sum(len(b) for b in blocks)
    markets = []
    for state in states:
        curves = tuple(state.curves[name].to_yield_curve() for name in names)
        markets.append(Market(tuple(names), (curves,), sigma_shifts=(0.0,), spread_shifts=(state.spread_shift,)))
    owner = np.arange(trees) if legs is None else legs.owner
    values = np.full((len(states), trees), np.nan)
    errors = _blank((len(states), trees))
    a_of, sigma_of = [fits.a[s][owner] for s in range(len(states))], [fits.sigma[s][owner] for s in range(len(states))]
    if trades.has_two_curves(tuple(names)):  # flows and strikes follow both curves: lowered again in every state
        from ..instruments.trades import lowered

        results = []
        for s, state in enumerate(states):
            again = [block for _first, block in lowered(trades, {name: state.curves[name] for name in names})[0]]
            results += reparameterised_prices(again, [markets[s]], [a_of[s]], [sigma_of[s]], run, keep=fits.kept[owner])
    else:
        results = reparameterised_prices(list(blocks), markets, a_of, sigma_of, run, keep=fits.kept[owner])
    for s, priced in enumerate(results):
        why = fits.message[s][owner]
        values[s] = np.where(why == "", np.asarray(priced.price, dtype=np.float64).reshape(-1), np.nan)
        errors[s] = np.where(why == "", np.asarray(priced.error, dtype=object), why)
    return values, errors, results


def _piecewise_grid(trades: Any, blocks: Sequence[Any], legs: Any, names: Sequence[str], states: Sequence[Any],
                   how: Any, run: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """:func:`recalibrated_grid` with a piecewise-constant sigma (``how.piecewise``, issue 37): in every state each
    trade's basket bootstrapped piece by piece again on the state's curves and volatilities
    (:func:`~trinom.analytics.baskets.piecewise.bootstrap_baskets`, ``a`` fixed) and its trees priced on those pieces
    (:mod:`trinom.instruments.sigma_pieces`); a trade without a fit in a state has its message there, a bond without
    an option keeps its own parameters. ``(states, trees)`` prices, per state and tree the error (``""``: priced),
    and per state its :class:`~trinom.Prices` of the trees."""
    from ..instruments.bond import BondPortfolio
    from ..instruments.sigma_pieces import with_tree_pieces
    from ..model.market import Market
    from .baskets import book_baskets, prepare_baskets
    from .baskets.piecewise import bootstrap_baskets

    baskets = book_baskets(trades, list(names))
    prepared = prepare_baskets(baskets, _surface(how.vols, trades.as_of), trades.as_of, curves=tuple(names),
                               strike=how.strike)
    trees = sum(len(b) for b in blocks)
    owner = np.arange(trees) if legs is None else legs.owner
    kept = (_column_text(trades, "type") == "bond") & (_column_text(trades, "option") == "")
    values = np.full((len(states), trees), np.nan)
    errors = _blank((len(states), trees))
    results = []
    for s, state in enumerate(states):
        fit = bootstrap_baskets(prepared, state.curves, a=float(how.a), vol_shift=state.vol_shift)
        pieces = fit.row_pieces()
        why = np.full(len(trades), "", dtype=object)
        for k in range(len(trades)):
            if k not in pieces and not kept[k]:
                why[k] = f"recalibration{_in(state)}: {fit.status[k]}: {fit.message[k]}"
        state_blocks = blocks
        if trades.has_two_curves(tuple(names)):  # flows and strikes follow both curves: lowered again
            from ..instruments.trades import lowered

            state_blocks = [b for _first, b in lowered(trades, {name: state.curves[name] for name in names})[0]]
        priced_blocks, start = [], 0
        for block in state_blocks:
            own = owner[start:start + len(block)]
            start += len(block)
            if isinstance(block, BondPortfolio):
                fitted = np.isin(own, list(pieces))
                block = with_tree_pieces(block.with_parameters(a=np.where(fitted, float(how.a), block.a),
                                                               sigma=block.sigma), own, pieces, trades.as_of_day)
            priced_blocks.append(block)
        market = Market(tuple(names), (tuple(state.curves[name].to_yield_curve() for name in names),),
                        sigma_shifts=(0.0,), spread_shifts=(state.spread_shift,))
        unmoved = np.full(trees, np.nan)
        priced = reparameterised_prices(priced_blocks, [market], [unmoved], [unmoved], run,
                                        keep=np.ones(trees, dtype=bool))[0]
        tree_why = why[owner]
        values[s] = np.where(tree_why == "", np.asarray(priced.price, dtype=np.float64).reshape(-1), np.nan)
        errors[s] = np.where(tree_why == "", np.asarray(priced.error, dtype=object), tree_why)
        results.append(priced)
    return values, errors, results


def reparameterised_prices(blocks: list[Any], markets: Sequence[Any], a: Sequence[np.ndarray],
                           sigma: Sequence[np.ndarray], run: Mapping[str, Any], keep: np.ndarray) -> list[Any]:
    """:func:`trinom.price` of ``blocks`` (their rows numbered across them) in each market ``k`` with the trees'
    ``a`` and ``sigma`` replaced by ``a[k]``, ``sigma[k]`` (where finite and not ``keep``), validated and lowered
    once: a :class:`~trinom.Prices` per market (errors masked)."""
    from ..engines.running import label as engine_label
    from ..engines.running import resolve
    from ..engines.running import run as run_engine
    from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
    from ..lattice.job import Job, prepare

    max_width = int(run.get("max_width", DEFAULT_MAX_WIDTH))
    job = prepare(blocks, markets[0], max_width=max_width, max_steps=int(run.get("max_steps", DEFAULT_MAX_STEPS)))
    rows = np.arange(job.size) if job.rows is None else job.rows
    engine, target = resolve(str(run.get("backend", "auto")), job.book, str(run.get("precision", "f64")),
                             run.get("target"))
    label = engine_label(engine, target)
    tuning = {k: v for k, v in run.items() if k not in ("backend", "precision", "target", "errors", "max_width",
                                                         "max_steps", "device")}
    from ..engines import lift
    from ..lattice.book import BOND

    bonds_only = bool(len(job.book)) and job.book.instruments() == [BOND]
    out = []
    for market, a_k, sigma_k in zip(markets, a, sigma, strict=True):
        a_rows, sigma_rows = a_k[rows], sigma_k[rows]
        use = ~keep[rows] & np.isfinite(a_rows) & np.isfinite(sigma_rows)
        book = job.book.with_trees(a=np.where(use, a_rows, job.book.a), sigma=np.where(use, sigma_rows, job.book.sigma))
        width = 2 * book.shape()[1] + 1
        wide = np.flatnonzero(width > max_width)
        problems = list(job.problems) + [(int(rows[k]), "a", f"the recalibrated a = {book.a[k]:.6g} gives a tree of "
                                          f"width {int(width[k])}, beyond max_width {max_width}") for k in wide]
        good = np.setdiff1d(np.arange(len(book)), wide) if wide.size else np.arange(len(book))
        part = Job(blocks=job.blocks, starts=job.starts, problems=sorted(problems, key=lambda p: -1 if p[0] is None
                                                                         else p[0]),
                   book=book if not wide.size else book.take(good), rows=None if not problems else rows[good])
        if bonds_only and not wide.size:  # the bond kernels' arrays lifted once, shared by every state's book
            lift.share_bonds(part.book, job.book)
        values = run_engine(engine, part.book, market, precision=str(run.get("precision", "f64")), target=target,
                            device=int(run.get("device", 0)), **tuning)
        out.append(part.result(values, label, "mask"))
    return out


def price_recalibrated(trades: Any, curves: Any, scenarios: Sequence[Any] | None, how: Recalibration,
                       run: Mapping[str, Any]) -> Any:
    """:func:`trinom.price` of dated ``trades`` with the model refitted in every scenario (or in the market as given,
    ``scenarios`` None): prices ``(scenarios, trades)`` (``(trades,)`` without scenarios), a trade's error the
    reasons of every scenario it failed in (its prices NaN there)."""
    from ..instruments.trades import lowered
    from ..model.market import Market
    from ..result import Prices

    dated = dated_curves(trades, curves)
    states = dated_states(dated, [None] if scenarios is None else scenarios, recalibrating=True)
    blocks, market_curves, legs = lowered(trades, dated)
    names = Market.of(market_curves).names
    values, errors, results = recalibrated_grid(trades, [b for _first, b in blocks], legs, names, states, how, run)
    accrued = legs.combine(np.asarray(results[0].accrued, dtype=np.float64))
    per_trade = legs.combine(values)
    trade_errors = np.stack([legs.errors(e) for e in errors])
    failed = trade_errors != ""
    per_trade = np.where(failed, np.nan, per_trade)
    error = np.full(len(trades), "", dtype=object)
    for s, k in zip(*np.nonzero(failed), strict=True):
        text = trade_errors[s, k] if len(states) == 1 else f"{states[s].label}: {trade_errors[s, k]}"
        error[k] = text if not error[k] else f"{error[k]}; {text}"
    problems = tuple((int(k), "sigma", str(error[k])) for k in np.flatnonzero(error != ""))
    base = legs.prices(results[0])
    price_out = per_trade if scenarios is not None else per_trade[0]
    settling = np.flatnonzero(np.not_equal(trades.column("settlement_days"), None) & (error == "")).tolist()
    result = Prices(price=price_out, clean=price_out - accrued, accrued=accrued, error=error,
                    instrument=base.instrument, engine=base.engine, problems=problems,
                    warnings=tuple((int(row), "no clean price at settlement with recalibrate= (the price is the "
                                    "recalibrated model's): price without it to get one") for row in settling),
                    vol_price=None if scenarios is not None else trades.vol_prices(names, Market.of(market_curves).curves))
    if run.get("errors", "raise") == "raise" and problems:
        raise InputError(list(problems))
    return result


def dated_states(curves: Mapping[str, Any], scenarios: Sequence[Any], *, recalibrating: bool) -> list[MarketState]:
    """Scenarios on dated curves as market states: None (the base), a :class:`~trinom.scenarios.CurveShift` (its
    ``pillar`` a dated curve's pillar: a key-rate bump at that date, :meth:`~trinom.model.DatedCurve.bumped`), a
    :class:`~trinom.scenarios.CurveSet` (its YieldCurves read as dated curves,
    :meth:`~trinom.model.DatedCurve.from_yield_curve`), a mapping of names to dated curves (replacing those), a
    :class:`~trinom.scenarios.SpreadShift`, a :class:`MarketState`; and, without recalibration, a
    :class:`~trinom.scenarios.SigmaShift` (kept as such: with recalibration, sigma is fitted, and moving it is an
    error)."""
    from ..model import DatedCurve
    from .scenarios import CurveSet, CurveShift, SigmaShift, SpreadShift

    states: list[MarketState] = []
    problems = []
    for k, scenario in enumerate(scenarios):
        label = f"{k}"
        if scenario is None:
            states.append(MarketState(dict(curves), label=label))
        elif isinstance(scenario, MarketState):
            states.append(scenario)
        elif isinstance(scenario, CurveShift):
            if scenario.curve is not None and scenario.curve not in curves:
                problems.append((None, "scenarios", f"scenario {k}: no curve {scenario.curve!r} (the curves are "
                                 f"{', '.join(map(repr, curves))})"))
                continue
            most = max(len(c) for name, c in curves.items() if scenario.curve in (None, name))
            if scenario.pillar is not None and scenario.pillar >= most:
                problems.append((None, "scenarios", f"scenario {k}: pillar {scenario.pillar} is not one of the {most} "
                                 f"pillars of {scenario.curve or 'the dated curves'}"))
                continue
            states.append(MarketState({name: c.bumped(scenario.shift, scenario.pillar)
                                       if scenario.curve in (None, name) and (scenario.pillar is None
                                                                               or scenario.pillar < len(c)) else c
                                       for name, c in curves.items()}, label=label))
        elif isinstance(scenario, CurveSet):
            as_of = next(iter(curves.values())).as_of
            states.append(MarketState({name: DatedCurve.from_yield_curve(scenario.curves[name], as_of=as_of,
                                                                         name=name)
                                       if name in scenario.curves else c for name, c in curves.items()}, label=label))
        elif isinstance(scenario, Mapping) and all(isinstance(c, DatedCurve) for c in scenario.values()):
            unknown = [name for name in scenario if name not in curves]
            if unknown:
                problems.append((None, "scenarios", f"scenario {k}: no curve {unknown[0]!r}"))
                continue
            states.append(MarketState({**curves, **scenario}, label=label))
        elif isinstance(scenario, SpreadShift):
            states.append(MarketState(dict(curves), spread_shift=scenario.shift, label=label))
        elif isinstance(scenario, SigmaShift) and not recalibrating:
            states.append(MarketState(dict(curves), label=label))
        else:
            why = (" (sigma is fitted to the quotes when recalibrating: move the quotes' volatilities instead)"
                   if isinstance(scenario, SigmaShift) else "")
            problems.append((None, "scenarios", f"scenario {k} must be None, a CurveShift, a CurveSet, a mapping of "
                             f"names to DatedCurves or a SpreadShift; got {type(scenario).__name__}{why}"))
    if problems:
        raise InputError(problems)
    return states


def engine_scenarios(curves: Mapping[str, Any], scenarios: Sequence[Any]) -> list[Any]:
    """Scenarios on dated curves (:func:`dated_states`) as the engine's scenarios on their YieldCurves: a curve move a
    :class:`~trinom.scenarios.CurveSet` of the moved dated curves (key rates at the dated pillars), sigma and spread
    moves as they are."""
    from .scenarios import CurveSet, SigmaShift, SpreadShift

    states = dated_states(curves, scenarios, recalibrating=False)
    out: list[Any] = []
    for scenario, state in zip(scenarios, states, strict=True):
        if scenario is None or isinstance(scenario, (SigmaShift, SpreadShift, CurveSet)):
            out.append(scenario)
        elif state.vol_shift or state.spread_shift:  # a MarketState of more than curves: the engine moves one thing
            raise InputError([(None, "scenarios", f"scenario {state.label} moves the volatility quotes or the "
                               "spread besides the curves: price it with recalibrate=")])
        else:
            out.append(CurveSet({name: c.to_yield_curve() for name, c in state.curves.items()}))
    return out


def dated_curves(trades: Any, curves: Any) -> dict[str, Any]:
    """``curves`` as ``{name: DatedCurve}`` as of the trades' date; an :class:`~trinom.InputError` where they are
    not dated curves (recalibration fits the model to quotes on dates)."""
    from ..model import DatedCurve

    table = {curves.name or "default": curves} if isinstance(curves, DatedCurve) else dict(curves or {})
    wrong = [name for name, c in table.items() if not isinstance(c, DatedCurve)]
    if not table or wrong:
        raise InputError([(None, "curves", "recalibration needs dated curves (a DatedCurve or a mapping of names to "
                           f"them){': ' + ', '.join(map(repr, wrong)) + ' is not one' if wrong else ''}")])
    late = [(None, "curves", f"curve {name!r} is as of {c.as_of}, the trades as of {trades.as_of}")
            for name, c in table.items() if c.as_of != trades.as_of]
    if late:
        raise InputError(late)
    return {str(name): c for name, c in table.items()}


def is_dated(curves: Any) -> bool:
    """Are ``curves`` dated curves (one, or a non-empty mapping of them)?"""
    from ..model import DatedCurve

    if isinstance(curves, DatedCurve):
        return True
    return isinstance(curves, Mapping) and bool(curves) and all(isinstance(c, DatedCurve) for c in curves.values())


def _surface(vols: Any, as_of: Any) -> Any:
    from ..model.quotes import VolSurface

    return vols if isinstance(vols, VolSurface) else VolSurface.from_quotes(vols, as_of=as_of)


def _trade_curves(trades: Any, names: tuple[str, ...]) -> np.ndarray:
    """Each trade's curve name (an empty cell: the only curve)."""
    cells = _column_text(trades, "curve", lower=False)
    return np.array([c if c or len(names) != 1 else names[0] for c in cells.tolist()], dtype=object)


def _column_text(trades: Any, name: str, *, lower: bool = True) -> np.ndarray:
    values = ["" if v is None else str(v).strip() for v in trades.column(name).tolist()]
    return np.array([v.lower() for v in values] if lower else values, dtype=object)


def _blank(shape: tuple[int, ...]) -> np.ndarray:
    """An object array of empty texts (``np.full`` of an object is some 30 times slower)."""
    out = np.empty(shape, dtype=object)
    out.fill("")
    return out


def _tagged(name: str, state: int) -> str:
    return f"{name}{_SEPARATOR}{state}"


def _in(state: MarketState) -> str:
    return "" if state.label == "base" else f" in scenario {state.label}"


__all__ = ["PER", "Fits", "MarketState", "Recalibration", "dated_curves", "dated_states", "engine_scenarios",
           "fitted_parameters", "is_dated", "price_recalibrated", "recalibrated_grid"]
