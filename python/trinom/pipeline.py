"""The pricing pipeline behind every call (issue 36): one sequence, the same for options, bonds and mixed
books, its stages each in their layer.

    instruments -> portfolios (tables read by :mod:`trinom.io.instrument_tables`)
                -> validate once, mask bad rows, lower to a book (:func:`trinom.lattice.job.prepare`)
                -> choose the engine, run, split by work (:mod:`trinom.engines.running`)
                -> put back in input order (:meth:`~trinom.lattice.job.Job.result`) -> Prices

The options travel in one object (:class:`~trinom.engines.options.PricingOptions`). A book with a Dask client is
handed to the executor (:func:`trinom.distributed.price_on`), whose workers run the same stages on its shards.
:func:`trinom.price` builds the options and hands dated trades' tree blocks here; ``risk``, ``oas`` and the
recalibration take the pipeline or its stages, never :mod:`trinom.api`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import check_client, check_sequence
from .distributed import price_on
from .engines.options import PricingOptions
from .engines.running import label, resolve, run
from .errors import InputError
from .instruments.legs import Legs
from .instruments.trades import Trades, lowered, trade_curves
from .io.instrument_tables import as_blocks
from .lattice.job import Instrument, Job, prepare
from .model.market import CurvesLike, Market
from .model.scenarios import Scenario, scenario_market
from .result import EXTRA_COLUMNS, Prices, joined

#: Resolved calls kept per portfolio (for repeated calls with the same curves and options).
PLANS_KEPT = 8


def price_book(instruments: Any, curves: CurvesLike = None, options: PricingOptions | None = None, *,
               scenarios: Sequence[Scenario] | None = None, keep_axis: bool = False, client: Any = None) -> Prices:
    """The pipeline of a tree-step book: validate once -> mask bad rows -> lower to a book -> choose the engine ->
    run (split by work where a progress bar shows) -> put back in input order. ``instruments``: a portfolio, a table
    of one, a sequence of them, or a book placed on Dask workers (:func:`trinom.distributed.distribute`).
    A repeated call on the same portfolio with the same curves and options reuses its plan (:data:`PLANS_KEPT`).
    ``curves`` may be a market of several scenarios (prices ``(scenarios, rows)``; ``keep_axis``: also for a market
    of one); ``scenarios`` moves the market (:func:`~trinom.model.scenarios.scenario_market`: every scenario in one
    engine call, prices ``(scenarios, rows)``). With a Dask ``client`` (or a placed book) the plan goes to the
    executor, :func:`trinom.distributed.price_on`."""
    options = options if options is not None else PricingOptions()
    if scenarios is not None:
        scenarios = check_sequence("scenarios", scenarios, of="scenarios (None, CurveShift, CurveSet, SigmaShift, "
                                   "SpreadShift)")
    if getattr(instruments, "is_distributed_book", False):  # a book placed on Dask workers (trinom.distribute)
        if client is not None and client is not instruments.client:
            raise ValueError("this DistributedBook is placed through another client: pass client=None or its own")
        client = instruments.client
    if client is not None:
        check_client(client)
        if options.progress is not None:
            raise ValueError("a Dask run shows its progress on Dask's dashboard: pass progress=None with client")
        return price_on(client, instruments, curves, options, scenarios=scenarios)
    if scenarios is not None:
        curves, keep_axis = scenario_market(curves, scenarios), True
    blocks = as_blocks(instruments)
    key = _plan_key(curves, options)
    if key is None or options.progress is not None or len(blocks) != 1 or blocks[0] is not instruments:
        return _planned(blocks, curves, options).call(keep_axis)
    plans: dict[tuple, Plan] = blocks[0].cached("plans", dict)  # a repeated call: validated, lowered, resolved
    ready = plans.get(key)
    if ready is None:
        ready = _planned(blocks, curves, options)
        if len(plans) >= PLANS_KEPT:  # the oldest goes: a loop over new curves must not grow memory
            plans.pop(next(iter(plans)), None)
        plans[key] = ready
    return ready.call(keep_axis)


@dataclass(frozen=True)
class Plan:
    """A call resolved once: the job, the engine's prepared call, and what ran."""

    job: Job
    prepared: Callable[[], np.ndarray]
    label: str
    market: Market
    options: PricingOptions

    def call(self, keep_axis: bool) -> Prices:
        """The plan's prices (``keep_axis``: ``(scenarios, rows)`` for a market of one scenario too)."""
        return self.job.result(self.prepared(), self.label, self.options.errors, keep_axis=keep_axis)


def _planned(blocks: list[Instrument], curves: CurvesLike, options: PricingOptions) -> Plan:
    """The call's plan: validated and lowered (:func:`prepare`), the engine resolved, its call prepared."""
    market = Market.of(curves)
    job = prepare(blocks, market, **options.limits).checked(options.errors)
    engine, chosen = resolve(options.backend, job.book, options.precision, options.target)
    if options.progress is not None or not len(job.book):
        def prepared() -> np.ndarray:
            return run(engine, job.book, market, precision=options.precision, target=chosen, device=options.device,
                       progress=options.progress, **options.knobs)
    else:
        prepared = engine.runner(job.book, market, precision=options.precision, target=chosen,
                                 device=options.device, **options.knobs)
    return Plan(job, prepared, label(engine, chosen), market, options)


def _plan_key(curves: object, options: PricingOptions) -> tuple | None:
    """The key under which a call's plan is kept on its portfolio, or None where the call is not cacheable
    (unhashable curves or knobs such as a ``timing`` dict)."""
    key = ("plan", curves, options)
    try:
        hash(key)
    except TypeError:
        return None
    return key


# --- dated trades -----------------------------------------------------------------------------------------------
#: A dated book of at least this many trades (priced in one market, in this process) is lowered and priced in
#: :data:`OVERLAP_PARTS` parts, each part priced on a thread of its own while this one lowers the next: the engines
#: run outside Python's lock, so a GPU (or the CPU's other cores) prices while the book is lowered. Set it above any
#: book's size to lower the whole book first.
OVERLAP_MIN_TRADES = 4000
#: The parts of a book lowered and priced at once (:data:`OVERLAP_MIN_TRADES`).
OVERLAP_PARTS = 4


def price_trades(trades: Trades, curves: CurvesLike, options: PricingOptions, *,
                 scenarios: Sequence[Scenario] | None = None, client: Any = None) -> Prices:
    """Dated trades priced by the pipeline: their trees' blocks, in row order, on their curves; one result a trade
    (a trade of several trees, such as a cap's caplets, is their sum). A book with two curves (a floating rate
    projected on a ``forecast_curve``) under ``scenarios`` is lowered and priced in each scenario's own curves: its
    trees' cash flows and strikes depend on both curves (:func:`price_per_scenario`). A large book in one market is
    lowered a part at a time, each part priced while the next is lowered (:data:`OVERLAP_MIN_TRADES`); the prices,
    errors and warnings are the same as the whole book's in one go."""
    if scenarios is not None and trades.has_two_curves(Market.of(trade_curves(trades, curves)).names):
        if client is not None:
            raise ValueError("a book with two curves under scenarios is lowered in each scenario's curves, in this "
                             "process: pass client=None")
        return price_per_scenario(trades, curves, options, scenarios)
    if (scenarios is None and client is None and options.progress is None and len(trades) >= OVERLAP_MIN_TRADES
            and OVERLAP_PARTS > 1 and trades.divisible()):
        return _price_overlapped(trades, curves, options)
    return _price_lowered(trades, lowered(trades, curves), options, scenarios=scenarios, client=client)


def _price_lowered(trades: Trades, lowering: tuple[list[tuple[int, Instrument]], Any, Legs],
                   options: PricingOptions, *, scenarios: Sequence[Scenario] | None = None,
                   client: Any = None) -> Prices:
    """``trades``, lowered already (:func:`~trinom.instruments.trades.lowered`), priced as :func:`price_trades`
    says."""
    blocks, market_curves, legs = lowering
    parts = [block for _first, block in blocks]  # one block alone: the pipeline keeps its plan for the next call
    market = Market.of(market_curves)
    try:
        trees = price_book(parts[0] if len(parts) == 1 else parts, market,
                           options if legs.is_identity() else options.replace(errors="mask"), scenarios=scenarios,
                           client=client)
    except InputError as err:  # one tree a trade: its rows are the trades'
        raise InputError(trades.explained_problems(err.errors)) from None
    result = trades.explained(legs.prices(trees))
    if options.errors == "raise" and result.problems:
        raise InputError(list(result.problems))
    vol_price = trades.vol_prices(market.names, market.curves) if result.price.ndim == 1 else None  # one market
    return dataclasses.replace(result, warnings=tuple(trades.warnings()), notional=trades.notionals(),
                               vol_price=vol_price, **trades.settlement_prices(market.curves, result.price))


def _price_overlapped(trades: Trades, curves: CurvesLike, options: PricingOptions) -> Prices:
    """``trades`` in :data:`OVERLAP_PARTS` parts of consecutive rows (kept with the book for the next call): this
    thread lowers part k + 1 while another prices part k; every part masks its bad rows, and the whole book raises
    them after (``errors="raise"``) as one call would."""
    size = len(trades)
    bounds = tuple(int(b) for b in np.linspace(0, size, OVERLAP_PARTS + 1).round())
    parts = trades.derived(("parts", bounds), lambda: [trades.rows(lo, hi) for lo, hi in
                                                       itertools.pairwise(bounds)])
    masked = options.replace(errors="mask")
    timing = dict(options.tuning).get("timing")  # an engine's timings: each part's, summed
    timings: list[dict[str, Any]] = [{} for _ in parts]
    with ThreadPoolExecutor(1, thread_name_prefix="trinom-pricing") as pricing:
        pending = [pricing.submit(_price_lowered, part, lowered(part, curves),
                                  masked if not isinstance(timing, dict) else masked.replace(timing=timings[k]))
                   for k, part in enumerate(parts)]
        result = joined([job.result() for job in pending], bounds[:-1])
    if isinstance(timing, dict):
        timing.update(_summed(timings))
    if options.errors == "raise" and result.problems:
        raise InputError(list(result.problems))
    return result


def _summed(timings: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The numbers of several engine calls' ``timing`` dicts added up, key by key (nested dicts too)."""
    out: dict[str, Any] = {}
    for timing in timings:
        for key, value in timing.items():
            if isinstance(value, dict):
                out[key] = _summed([out.get(key, {}), value])
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = out.get(key, 0) + value
            else:
                out.setdefault(key, value)
    return out


def price_per_scenario(trades: Trades, curves: CurvesLike, options: PricingOptions,
                       scenarios: Sequence[Scenario]) -> Prices:
    """``trades`` lowered and priced in each scenario of ``scenarios`` apart (its curves, sigma and spread moves), the
    prices stacked ``(scenarios, trades)``; a trade's error names every scenario it failed in."""
    market = scenario_market(trade_curves(trades, curves), scenarios)
    results = [price_trades(trades, market.scenario(s), options.replace(errors="mask")) for s in range(len(market))]
    price_grid = np.stack([np.asarray(r.price, dtype=np.float64) for r in results])
    error = np.full(len(trades), "", dtype=object)
    for s, result in enumerate(results):
        for k in np.flatnonzero(np.asarray(result.error) != "").tolist():
            text = str(result.error[k]) if len(results) == 1 else f"scenario {s}: {result.error[k]}"
            error[k] = text if not error[k] else f"{error[k]}; {text}"
    problems = tuple(sorted({p for r in results for p in r.problems}, key=lambda p: -1 if p[0] is None else p[0]))
    if options.errors == "raise" and problems:
        raise InputError(list(problems))
    base = results[0]
    accrued = np.asarray(base.accrued, dtype=np.float64)
    return dataclasses.replace(base, price=price_grid, clean=price_grid - accrued, error=error, problems=problems,
                               **dict.fromkeys(EXTRA_COLUMNS))  # one market's columns: not a grid's


__all__ = ["OVERLAP_MIN_TRADES", "OVERLAP_PARTS", "PLANS_KEPT", "Instrument", "Plan", "PricingOptions", "prepare",
           "price_book", "price_per_scenario", "price_trades"]
