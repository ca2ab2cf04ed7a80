"""Pricing beyond one process (issues 15, 27): a stateless chunk function, a book priced on its placed shards, and
an OAS search's pricings there.

:func:`price_chunk` prices one slice of a book from its columns and returns plain columns: it keeps no state
between calls and needs nothing but its arguments, so it is what a distributed path calls on a worker, and
what a user hands to Spark's ``mapInArrow``, Ray's ``map_batches`` or a grid scheduler.

:func:`price_on` (``trinom.price(..., client=client)``) prices a book on the shards it is placed in
(:mod:`.placement`), and :class:`PlacedSpreadPricer` runs every pricing of an OAS search there.

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

from ..analytics.spreads import SpreadPricer
from ..checks import check_choice
from ..engines.engine import SEARCH_OUTCOMES, SearchLimits, SpreadSolution
from ..errors import InputError, check_error_mode
from ..instruments.bond import BondPortfolio
from ..instruments.option import Portfolio
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from ..model.market import CurvesLike, Market
from ..model.scenarios import Scenario, scenario_market
from ..pipeline import check_price_arguments, prepare, price_book
from ..result import Prices
from .placement import SPLITS, DistributedBook, _Placement, placed_book
from .tasks import engine_of, price_spreads_placed, solve_spreads_placed


def price_chunk(columns: Mapping[str, npt.ArrayLike] | Any, curves: CurvesLike = None, *, first_row: int = 0,
                backend: str = "auto", precision: str = "f64", target: str | None = None, device: int = 0,
                scenarios: Sequence[Scenario] | None = None, **options: Any) -> dict[str, np.ndarray]:
    """Prices of one slice of a book: ``columns`` are an option or bond portfolio's fields (a mapping of
    name to column, a pandas DataFrame, or a pyarrow Table); the result holds ``row`` (``first_row`` +
    position), ``price`` and ``clean`` (``(scenarios, rows)`` with ``scenarios``) and ``error`` (``""`` for a
    good row). Bad rows are masked, never raised: the caller decides."""
    check_price_arguments(backend=backend, precision=precision, target=target, device=device, errors="mask",
                          max_width=options.get("max_width", DEFAULT_MAX_WIDTH),
                          max_steps=options.get("max_steps", DEFAULT_MAX_STEPS))
    result = price_book(columns, curves, backend=backend, precision=precision, target=target, device=device,
                        errors="mask", scenarios=scenarios, **options)
    count = result.error.size
    return {"row": np.arange(first_row, first_row + count, dtype=np.int64), "price": result.price,
            "clean": result.clean, "error": np.asarray(result.error, dtype=object)}


def price_on(client: Any, instruments: Portfolio | BondPortfolio | DistributedBook, curves: CurvesLike = None, *,
             backend: str = "auto", precision: str = "f64", target: str | None = None, device: int = 0,
             errors: str = "raise", scenarios: Sequence[Scenario] | None = None, shards: int | None = None,
             split: str = "auto", retries: int = 3, rows: npt.ArrayLike | None = None, **options: Any) -> Prices:
    """``instruments`` priced on the Dask cluster of ``client`` (see the module); what :func:`trinom.price`
    returns, rows in input order. ``shards``: how many shards the book is placed in (default: one per worker
    thread); ``split``: ``"auto"``, ``"trees"`` or ``"scenarios"`` (a scenario grid's axis, see
    :func:`choose_split`); ``retries``: how often a task may be run again after its worker fails; ``rows``: price
    only these rows of ``instruments`` (ascending; what ``instruments[rows]`` gives), from its placed shards."""
    check_error_mode(errors)
    check_choice("split", split, SPLITS)
    book = placed_book(client, instruments, shards=shards)
    market = scenario_market(curves, scenarios) if scenarios is not None else Market.of(curves)
    limits = {"max_width": options.pop("max_width", DEFAULT_MAX_WIDTH),
              "max_steps": options.pop("max_steps", DEFAULT_MAX_STEPS)}
    if rows is not None:
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    job = prepare(book.instruments if rows is None else book.instruments[rows], market, **limits)
    if job.problems and errors == "raise":
        raise InputError(job.problems)
    engine = dict(backend=backend, precision=precision, target=target, device=device, **options)
    values, how = book.run(job, market, engine=engine, split=split, retries=retries, limits=limits, rows=rows)
    return job.result(values, f"{backend} on dask ({how})", errors, keep_axis=scenarios is not None)


class PlacedSpreadPricer(SpreadPricer):
    """:class:`trinom.spreads.SpreadPricer` on a book of bonds placed on Dask workers (``trinom.oas(...,
    client=client)`` or ``trinom.oas(placed_book, ...)``): every pricing of an OAS search, and the engine's own
    search, runs on the placed shards, one task per shard; only the rows' spreads and goals travel."""

    def __init__(self, client: Any, bonds: BondPortfolio | DistributedBook, curves: CurvesLike, *,
                 backend: str = "auto", precision: str = "f64", target: str | None = None, device: int = 0,
                 max_width: int = DEFAULT_MAX_WIDTH, max_steps: int = DEFAULT_MAX_STEPS, retries: int = 3,
                 **tuning: Any):
        self.placed = placed_book(client, bonds)
        bonds = self.placed.instruments  # type: ignore[assignment]
        self.market = Market.of(curves)
        limits = {"max_width": max_width, "max_steps": max_steps}
        self.job = prepare(bonds, self.market, **limits)
        self.precision, self.device, self.tuning, self.retries = precision, device, tuning, retries
        book = self.job.book
        self.tree = np.full(len(bonds), -1, dtype=np.int64)  # input row -> tree of the book (-1: a bad row)
        self.tree[np.arange(len(book)) if self.job.rows is None else self.job.rows] = np.arange(len(book))
        self.accrued = bonds.accrued().astype(np.float64)
        self.error = np.full(len(bonds), "", dtype=object)
        for row, _field, message in self.job.problems:
            for r in range(len(bonds)) if row is None else (row,):
                self.error[r] = f"{self.error[r]}; {message}" if self.error[r] else message
        self.owner = np.full(len(book), -1, dtype=np.int64)  # tree -> placed shard, and its place in the shard
        self.local = np.full(len(book), -1, dtype=np.int64)
        self._solves = False
        self.engine_settings = {"backend": backend, "precision": precision, "target": target, "device": device,
                                **tuning}
        self.label = backend
        self.placement = _Placement(book=book, rows=None, shards=[])  # no tree: nothing placed, nothing to run
        if not len(book):
            return
        self.placement, column = self.placed._placement(self.job, self.market, limits)
        for k, shard in enumerate(self.placement.shards):
            trees = shard.trees if column is None else column[shard.trees]
            mine = np.flatnonzero(trees >= 0)
            self.owner[trees[mine]], self.local[trees[mine]] = k, mine
        # the engine is chosen where the tasks run (a worker may have a GPU the caller lacks), once for all shards
        name, chosen, self._solves = self.placed._execute(
            self.placement, [(0, None, engine_of, (backend, precision, target))], retries)[0]
        self.engine_settings.update(backend=name, target=chosen)
        self.label = f"{name}{'/' + chosen if chosen else ''} on dask"

    @property
    def solves(self) -> bool:
        return self._solves

    def dirty(self, rows: npt.ArrayLike, spreads: npt.ArrayLike) -> np.ndarray:
        out, good, trees, spreads = self.entries(rows, spreads)
        if not good.size:
            return out
        order = np.lexsort((self.local[trees], self.owner[trees]))  # entries by shard, then by tree in the shard
        owner = self.owner[trees][order]
        bounds = np.flatnonzero(np.diff(owner)) + 1
        calls, places = [], []
        for part in np.split(np.arange(order.size), bounds):
            entries = order[part]
            places.append(good[entries])
            calls.append((int(owner[part[0]]), None, price_spreads_placed,
                          (self.market, self.local[trees[entries]], spreads[entries], self.engine_settings)))
        for place, values in zip(places, self.placed._execute(self.placement, calls, self.retries), strict=True):
            out[place] = values
        return out

    def solve(self, goal: npt.ArrayLike, limits: SearchLimits) -> SpreadSolution:
        per_tree = self.per_tree(goal)
        calls, places = [], []
        for k, shard in enumerate(self.placement.shards):
            mine = np.flatnonzero(self.owner == k)
            local = np.full(shard.trees.size, np.nan)
            local[self.local[mine]] = per_tree[mine]
            calls.append((k, None, solve_spreads_placed, (self.market, local, limits, self.engine_settings)))
            places.append(mine)
        found = [np.full(len(self.job.book), np.nan), np.full(len(self.job.book), np.nan),
                 np.zeros(len(self.job.book), dtype=np.int64),
                 np.full(len(self.job.book), SEARCH_OUTCOMES.index("skipped"), dtype=np.int64)]
        for mine, part in zip(places, self.placed._execute(self.placement, calls, self.retries), strict=True):
            for whole, values in zip(found, part, strict=True):
                whole[mine] = values[self.local[mine]]
        return self.per_row(SpreadSolution(*found))


__all__ = ["PlacedSpreadPricer", "price_chunk", "price_on"]
