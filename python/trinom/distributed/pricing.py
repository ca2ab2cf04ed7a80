"""Pricing beyond one process (issues 15, 27): a stateless chunk function and the executor that prices a book on its
placed shards.

:func:`price_chunk` prices one slice of a book from its columns and returns plain columns: it keeps no state
between calls and needs nothing but its arguments, so it is what a distributed path calls on a worker, and
what a user hands to Spark's ``mapInArrow``, Ray's ``map_batches`` or a grid scheduler.

:func:`price_on` (``trinom.price(..., client=client)``) prices a book on the shards it is placed in
(:mod:`.placement`); :class:`trinom.analytics.placed_spreads.PlacedSpreadPricer` runs every pricing of an OAS search
there.

>>> import trinom
>>> p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[12],
...                      a=[0.1], sigma=[0.01], option_type=["put"])
>>> out = price_chunk(p.as_dict(), first_row=40, backend="reference")
>>> out["row"].tolist(), round(float(out["price"][0]), 6), out["error"].tolist()
([40], 1.813935, [''])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..checks import check_choice
from ..engines.options import PricingOptions
from ..engines.running import price_job
from ..instruments.bond import BondPortfolio
from ..instruments.option import Portfolio
from ..io.instrument_tables import as_blocks
from ..lattice.job import prepare
from ..model.market import CurvesLike, Market
from ..model.scenarios import Scenario, scenario_market
from ..result import Prices
from .placement import SPLITS, DistributedBook, placed_book


def price_chunk(columns: Mapping[str, npt.ArrayLike] | Any, curves: CurvesLike = None, *, first_row: int = 0,
                backend: str = "auto", precision: str = "f64", target: str | None = None, device: int = 0,
                scenarios: Sequence[Scenario] | None = None, **options: Any) -> dict[str, np.ndarray]:
    """Prices of one slice of a book: ``columns`` are an option or bond portfolio's fields (a mapping of
    name to column, a pandas DataFrame, or a pyarrow Table); the result holds ``row`` (``first_row`` +
    position), ``price`` and ``clean`` (``(scenarios, rows)`` with ``scenarios``) and ``error`` (``""`` for a
    good row). Bad rows are masked, never raised: the caller decides. The pipeline's stages, in this process."""
    settings = PricingOptions.of(backend=backend, precision=precision, target=target, device=device, errors="mask",
                                 **options)
    result = price_locally(columns, curves, settings, scenarios=scenarios)
    count = result.error.size
    return {"row": np.arange(first_row, first_row + count, dtype=np.int64), "price": result.price,
            "clean": result.clean, "error": np.asarray(result.error, dtype=object)}


def price_locally(instruments: Any, curves: CurvesLike, options: PricingOptions, *,
                  scenarios: Sequence[Scenario] | None = None) -> Prices:
    """The pipeline's stages on a worker or a chunk, in this process: portfolios from the input
    (:func:`~trinom.io.instrument_tables.as_blocks`), validated and lowered (:func:`~trinom.lattice.job.prepare`),
    priced (:func:`~trinom.engines.running.price_job`)."""
    market = scenario_market(curves, scenarios) if scenarios is not None else Market.of(curves)
    job = prepare(as_blocks(instruments), market, **options.limits).checked(options.errors)
    return price_job(job, market, options, keep_axis=scenarios is not None)


def price_on(client: Any, instruments: Portfolio | BondPortfolio | DistributedBook, curves: CurvesLike = None,
             options: PricingOptions | None = None, *, scenarios: Sequence[Scenario] | None = None,
             rows: npt.ArrayLike | None = None) -> Prices:
    """The executor: ``instruments`` priced on the Dask cluster of ``client`` (see the module) as ``options`` say;
    what :func:`trinom.price` returns, rows in input order. The executor's own knobs travel with the engine's in
    ``options``: ``shards`` (how many shards the book is placed in; default one per worker thread), ``split``
    (``"auto"``, ``"trees"`` or ``"scenarios"``: a scenario grid's axis, see :func:`choose_split`) and ``retries``
    (how often a task may be run again after its worker fails; 3). ``rows``: price only these rows of
    ``instruments`` (ascending; what ``instruments[rows]`` gives), from its placed shards."""
    options = options if options is not None else PricingOptions()
    knobs = dict(options.tuning)
    shards, split, retries = knobs.pop("shards", None), knobs.pop("split", "auto"), knobs.pop("retries", 3)
    check_choice("split", split, SPLITS)
    book = placed_book(client, instruments, shards=shards)
    market = scenario_market(curves, scenarios) if scenarios is not None else Market.of(curves)
    if rows is not None:
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    job = prepare(book.instruments if rows is None else book.instruments[rows], market,
                  **options.limits).checked(options.errors)
    engine = dict(backend=options.backend, precision=options.precision, target=options.target,
                  device=options.device, **knobs)
    values, how = book.run(job, market, engine=engine, split=split, retries=retries, limits=options.limits,
                           rows=rows)
    return job.result(values, f"{options.backend} on dask ({how})", options.errors, keep_axis=scenarios is not None)


__all__ = ["price_chunk", "price_locally", "price_on"]
