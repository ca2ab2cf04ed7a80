"""A bond book validated and lowered once, priced at any spreads: what an OAS search calls every iteration.

:class:`SpreadPricer` prepares a book the way :func:`trinom.price` does (validate once, mask bad rows, lower,
choose the engine) and then prices chosen bonds at chosen spreads, several per bond if asked, as one
engine call with one scenario *entry* per (bond, spread) (trinom.engines.scenario_batch): the ``cuda``
engine runs one forward pass per bond and one backward pass per spread (the forward pass of the
reformulated tree does not depend on the spread); other engines price a book of one tree per entry.
Where the engine searches spreads itself (:meth:`~trinom.engines.Engine.solves_spreads`: ``cuda``),
:meth:`SpreadPricer.solve` hands it the whole search: one engine call for the book.

>>> import numpy as np
>>> from trinom.bonds.generator import generate_bonds
>>> bonds, curves = generate_bonds("S1", 3, seed=1)
>>> pricer = SpreadPricer(bonds, curves, backend="reference")
>>> dirty = pricer.dirty(np.array([0, 0, 2]), np.array([0.0, 1.0, 0.5]))
>>> bool(dirty[0] > dirty[1])
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..engines.engine import SEARCH_OUTCOMES, SearchLimits, SpreadSolution
from ..engines.running import label, resolve
from ..engines.scenario_batch import ScenarioBatch
from ..instruments.bond import BondPortfolio
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from ..lattice.job import prepare
from ..model.market import CurvesLike, Market


class SpreadPricer:
    """``bonds`` in ``curves`` on one engine, ready to be priced at any spreads (see the module)."""

    def __init__(self, bonds: BondPortfolio, curves: CurvesLike, *, backend: str = "auto", precision: str = "f64",
                 target: str | None = None, device: int = 0, max_width: int = DEFAULT_MAX_WIDTH,
                 max_steps: int = DEFAULT_MAX_STEPS, **tuning: Any):
        self.market = Market.of(curves)
        self.job = prepare(bonds, self.market, max_width=max_width, max_steps=max_steps)
        self.engine, self.target = resolve(backend, self.job.book, precision, target)
        self.precision, self.device, self.tuning = precision, device, tuning
        self.label = label(self.engine, self.target)
        book = self.job.book
        self.tree = np.full(len(bonds), -1, dtype=np.int64)  # input row -> tree of the book (-1: a bad row)
        self.tree[np.arange(len(book)) if self.job.rows is None else self.job.rows] = np.arange(len(book))
        names = np.array([self.market.index(name) for name in book.curve_names], dtype=np.int64)
        self.curve = names[book.curve] if len(book) else np.zeros(0, dtype=np.int64)
        self.accrued = bonds.accrued().astype(np.float64)
        self.error = np.full(len(bonds), "", dtype=object)
        for row, _field, message in self.job.problems:
            for r in range(len(bonds)) if row is None else (row,):
                self.error[r] = f"{self.error[r]}; {message}" if self.error[r] else message

    def dirty(self, rows: npt.ArrayLike, spreads: npt.ArrayLike) -> np.ndarray:
        """Dirty prices of input rows ``rows`` at ``spreads`` (one each; a row may repeat), NaN for a bad row."""
        out, good, trees, spreads = self.entries(rows, spreads)
        if not good.size:
            return out
        order = np.argsort(trees, kind="stable")  # entries grouped by tree, in book order
        book = self.job.book
        offset = np.zeros(len(book) + 1, dtype=np.int64)
        np.cumsum(np.bincount(trees, minlength=len(book)), out=offset[1:])
        plan = ScenarioBatch(book=book, sigma_moves=np.zeros(1), curves=self.market.curves,
                             entry_offset=offset, entry_curve=self.curve[trees[order]],
                             entry_spread=spreads[order], source=np.zeros((0, 0), dtype=np.int64))
        values = self.engine.price_entries(plan, self.precision, self.target, self.device, self.tuning)
        out[good[order]] = values
        return out

    @property
    def solves(self) -> bool:
        """Whether the engine searches spreads itself (:meth:`solve`)."""
        return self.engine.solves_spreads(self.job.book)

    def solve(self, goal: npt.ArrayLike, limits: SearchLimits) -> SpreadSolution:
        """Per input row, the spread at which its dirty price equals ``goal`` (NaN: not searched) within
        ``limits``, in one engine call (only where :attr:`solves`); a bad row is not searched (``skipped``, NaN)."""
        found = self.engine.solve_spreads(self.job.book, self.market, self.per_tree(goal), limits,
                                          precision=self.precision, target=self.target, device=self.device,
                                          **self.tuning)
        return self.per_row(found)

    def entries(self, rows: npt.ArrayLike, spreads: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                             np.ndarray]:
        """:meth:`dirty`'s arguments checked: its output (NaN), the entries of good rows, their trees and their
        spreads."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        spreads = np.asarray(spreads, dtype=np.float64).reshape(-1)
        if rows.size != spreads.size:
            raise ValueError(f"rows and spreads must have one entry each, got {rows.size} and {spreads.size}")
        good = np.flatnonzero(self.tree[rows] >= 0)
        return np.full(rows.size, np.nan), good, self.tree[rows[good]], spreads[good]

    def per_tree(self, goal: npt.ArrayLike) -> np.ndarray:
        """Per input row's ``goal`` as one per tree of the book (a bad row has none)."""
        goal = np.asarray(goal, dtype=np.float64).reshape(-1)
        good = np.flatnonzero(self.tree >= 0)
        per_tree = np.full(len(self.job.book), np.nan)
        per_tree[self.tree[good]] = goal[good]
        return per_tree

    def per_row(self, found: SpreadSolution) -> SpreadSolution:
        """A search's outcome per tree as one per input row (a bad row: ``skipped``, NaN)."""
        rows = len(self.tree)
        good = np.flatnonzero(self.tree >= 0)
        out = SpreadSolution(np.full(rows, np.nan), np.full(rows, np.nan), np.zeros(rows, dtype=np.int64),
                             np.full(rows, SEARCH_OUTCOMES.index("skipped"), dtype=np.int64))
        for mine, theirs in zip(out, found, strict=True):
            mine[good] = theirs[self.tree[good]]
        return out


__all__ = ["SpreadPricer"]
