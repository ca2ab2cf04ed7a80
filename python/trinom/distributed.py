"""Pricing beyond one process: a stateless chunk function, and a book sharded by work over Dask (issue 15).

:func:`price_chunk` prices one slice of a book from its columns and returns plain columns: it keeps no state
between calls and needs nothing but its arguments, so it is what a distributed path calls on a worker, and
what a user hands to Spark's ``mapInArrow``, Ray's ``map_batches`` or a grid scheduler.

:func:`price_on` (``trinom.price(..., client=client)``) runs trinom's one execution path with the run step
on the cluster: it validates the book once in the calling process and lowers it to one book of trees,
estimates every tree's work (node updates, :meth:`trinom.book.Book.work`), cuts the trees into shards of
about equal work (runs of consecutive trees where every tree is small against a shard: views, nothing
copied; else dealt largest first, in snake order, so a few large trees balance), sends each shard *as lowered
trees* to one Dask task (:func:`price_trees`: the engine and nothing else; no row is read or validated
twice) and puts the results back in input order, every row with its price or its error. A scenario grid is
cut along the scenario axis too (up to one part per worker). A task whose worker dies is run again
elsewhere (Dask's own retries); nothing is scheduled by trinom.

>>> import trinom
>>> p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[12],
...                      a=[0.1], sigma=[0.01], option_type=["put"])
>>> out = price_chunk(p.as_dict(), first_row=40, backend="reference")
>>> out["row"].tolist(), round(float(out["price"][0]), 6), out["error"].tolist()
([40], 1.813935, [''])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from .api import prepare, price, resolve, run
from .api_arguments import check_client
from .book import Book
from .errors import InputError, check_error_mode
from .instruments.bond import BondPortfolio
from .instruments.option import Portfolio
from .market import CurvesLike, Market
from .result import Prices
from .scenarios import Scenario, scenario_market

#: Shards per worker when the caller does not say (a few per worker keeps them all busy to the end).
SHARDS_PER_WORKER = 4
#: A book is cut into runs of consecutive trees when its largest tree is at most this share of a shard's work.
SPAN_SHARE = 0.02


def price_chunk(columns: Mapping[str, npt.ArrayLike] | Any, curves: CurvesLike = None, *, first_row: int = 0,
                backend: str = "auto", precision: str = "f64", target: str | None = None, device: int = 0,
                scenarios: Sequence[Scenario] | None = None, **options: Any) -> dict[str, np.ndarray]:
    """Prices of one slice of a book: ``columns`` are an option or bond portfolio's fields (a mapping of
    name to column, a pandas DataFrame, or a pyarrow Table); the result holds ``row`` (``first_row`` +
    position), ``price`` and ``clean`` (``(scenarios, rows)`` with ``scenarios``) and ``error`` (``""`` for a
    good row). Bad rows are masked, never raised: the caller decides."""
    result = price(columns, curves, backend=backend, precision=precision, target=target, device=device,
                   errors="mask", scenarios=scenarios, **options)
    count = result.error.size
    return {"row": np.arange(first_row, first_row + count, dtype=np.int64), "price": result.price,
            "clean": result.clean, "error": np.asarray(result.error, dtype=object)}


def shards_by_work(work: np.ndarray, shards: int) -> list[np.ndarray]:
    """Row indices in ``shards`` groups of about equal total ``work``: the rows, largest first, dealt in snake
    order (0, 1, ..., k-1, k-1, ..., 0, ...); each group ascending. Empty groups are dropped.

    >>> [s.tolist() for s in shards_by_work(np.array([1.0, 9.0, 5.0, 5.0, 1.0]), 2)]
    [[0, 1, 4], [2, 3]]
    """
    shards = max(1, min(int(shards), work.size))
    order = np.argsort(-work, kind="stable")
    lap = np.arange(order.size) // shards
    position = np.arange(order.size) % shards
    owner = np.where(lap % 2 == 0, position, shards - 1 - position)
    groups = [np.sort(order[owner == k]) for k in range(shards)]
    return [g for g in groups if g.size]


def price_on(client: Any, instruments: Portfolio | BondPortfolio, curves: CurvesLike = None, *,
             backend: str = "auto", precision: str = "f64", target: str | None = None, device: int = 0,
             errors: str = "raise", scenarios: Sequence[Scenario] | None = None, shards: int | None = None,
             retries: int = 3, **options: Any) -> Prices:
    """``instruments`` priced on the Dask cluster of ``client`` (see the module); what :func:`trinom.price`
    returns, rows in input order. ``shards``: the number of tasks (default: a few per worker); ``retries``:
    how often a task may be run again after its worker fails."""
    check_error_mode(errors)
    check_client(client)
    if not isinstance(instruments, (Portfolio, BondPortfolio)):
        raise InputError([(None, "instruments", "a Dask run takes one trinom.Portfolio or trinom.BondPortfolio, got "
                           f"{type(instruments).__name__}")])
    market = scenario_market(curves, scenarios) if scenarios is not None else Market.of(curves)
    job = prepare(instruments, market, **{k: options[k] for k in ("max_width", "max_steps") if k in options})
    if job.problems and errors == "raise":
        raise InputError(job.problems)
    book = job.book
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    if shards is None:
        shards = SHARDS_PER_WORKER * workers
    tuning = {k: v for k, v in options.items() if k not in ("max_width", "max_steps")}
    # A scenario grid is cut along both axes: up to one scenario part per worker, the trees in the rest.
    lead = len(market)
    cuts = np.array_split(np.arange(lead), min(lead, workers, shards))
    groups = _shards(book, max(1, shards // len(cuts)))
    tasks = {(g, c): client.submit(price_trees, part, _scenarios_of(market, cut), backend=backend,
                                   precision=precision, target=target, device=device, retries=retries, pure=False,
                                   **tuning)
             for g, (_trees, part) in enumerate(groups) for c, cut in enumerate(cuts)}
    parts = dict(zip(tasks, client.gather(list(tasks.values())), strict=True))
    dtype = np.float32 if precision == "f32" else np.float64
    values = np.empty((lead, len(book)), dtype=dtype)
    for (g, c), part in parts.items():
        values[np.ix_(cuts[c], groups[g][0])] = part
    return job.result(values, f"{backend} on dask ({len(tasks)} tasks)", errors, keep_axis=scenarios is not None)


def _shards(book: Book, count: int) -> list[tuple[np.ndarray, Book]]:
    """``count`` shards of ``book`` of about equal work, as (tree indices, trees). Where every tree is a small
    part of a shard (at most :data:`SPAN_SHARE` of one), runs of consecutive trees of equal work: views, no
    copies; else the trees dealt by :func:`shards_by_work` (a few large trees balance only that way)."""
    if not len(book):
        return []
    work = np.maximum(book.work(), 1.0)
    if work.max() * count <= SPAN_SHARE * work.sum():
        total = np.cumsum(work)
        bounds = [0, *np.searchsorted(total, total[-1] * np.arange(1, count) / count).tolist(), len(book)]
        return [(np.arange(a, b), book.span(a, b)) for a, b in pairwise(bounds) if b > a]
    return [(trees, book.take(trees)) for trees in shards_by_work(work, count)]


def price_trees(book: Book, market: Market, *, backend: str = "auto", precision: str = "f64",
                target: str | None = None, device: int = 0, **tuning: Any) -> np.ndarray:
    """The engine's prices of a lowered, already validated ``book`` (a shard of :func:`price_on`), shape
    ``(len(market), len(book))``: the run step of :func:`trinom.price` alone (``auto`` chooses the engine
    where the task runs, which may have a GPU the caller lacks)."""
    engine, chosen = resolve(backend, book, precision, target)
    return run(engine, book, market, precision=precision, target=chosen, device=device, **tuning)


def _scenarios_of(market: Market, cut: np.ndarray) -> Market:
    """The scenarios ``cut`` of ``market`` as a market of their own."""
    if cut.size == len(market):
        return market
    pick = slice(int(cut[0]), int(cut[-1]) + 1)
    return Market(market.names, market.scenarios[pick], sigma_shifts=market.sigma_shifts[pick],
                  spread_shifts=market.spread_shifts[pick])


__all__ = ["SHARDS_PER_WORKER", "price_chunk", "price_on", "price_trees", "shards_by_work"]
