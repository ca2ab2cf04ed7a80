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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import check_client, check_sequence
from .distributed import price_on
from .engines.options import PricingOptions
from .engines.running import label, resolve, run
from .io.instrument_tables import as_blocks
from .lattice.job import Instrument, Job, prepare
from .model.market import CurvesLike, Market
from .model.scenarios import Scenario, scenario_market
from .result import Prices

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


__all__ = ["PLANS_KEPT", "Instrument", "Plan", "PricingOptions", "prepare", "price_book"]
