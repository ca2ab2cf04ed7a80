"""An OAS search on a book of bonds placed on Dask workers (``trinom.oas(..., client=client)``): every pricing of the
search, and the engine's own search, runs on the placed shards (:mod:`trinom.distributed`), one task per shard."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..distributed.placement import DistributedBook, _Placement, placed_book
from ..distributed.tasks import engine_of, price_spreads_placed, solve_spreads_placed
from ..engines.engine import SEARCH_OUTCOMES, SearchLimits, SpreadSolution
from ..instruments.bond import BondPortfolio
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from ..lattice.job import prepare
from ..model.market import CurvesLike, Market
from .spreads import SpreadPricer


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
