"""A market's scenario axis as part of one batch: which (tree, curve, spread) prices a set of scenarios needs.

An engine asked for a book in a market of ``S`` scenarios returns ``(S, len(book))`` prices. Most of those
prices are the same computation: a key-rate bump at a pillar the tree never looks at (beyond its last
step, or on another curve), a spread move of an option, leave the tree's inputs bit for bit as they are.
:func:`batch` finds, per tree, the distinct *entries* its scenarios need:

* trees: the book's trees, and after them a copy for every distinct sigma move (the only move that
  changes a tree's geometry and probabilities);
* per tree, its entries ``entry_offset[t]:entry_offset[t + 1]``, each a curve (an index into
  ``curves``, the distinct curves of the market) and a spread;
* ``source[s, i]``: the entry that holds scenario ``s``'s price of book tree ``i``.

A curve moved only after a tree's horizon (:meth:`Book.horizon_days`; same pillar days, equal rates up to
the pillar at or after the horizon) counts as the base curve for that tree. A curve moved only *before* a
time (a key-rate bump below the last pillar) gives the base's values at every later step: such an entry
may *resume* from the tree's first entry's level at a ``checkpoint`` step and price the steps before it
only. Engines then price every entry in one batch: the ``cuda`` engine runs one forward pass per tree,
one backward pass per entry, from the checkpoint where it may (the forward pass of the reformulated tree
depends on neither the curve nor the spread); others price :func:`expanded`, a book of one tree per
entry in a market of one scenario, in one call.

>>> import trinom
>>> from trinom.lattice.lowering import lower_options
>>> from trinom.scenarios import CurveShift, SigmaShift, scenario_market
>>> p = trinom.Portfolio(strike=[63.0], maturity=[4.0], expiry=[1.0], term_unit=[365], term_steps=[12],
...                      a=[0.1], sigma=[0.01], option_type=["put"])
>>> market = scenario_market(None, [None, CurveShift(1e-4), CurveShift(1e-4, pillar=14), SigmaShift(1e-4)])
>>> plan = batch(lower_options(p), market)
>>> len(plan.trees), plan.entry_offset.tolist(), plan.source[:, 0].tolist()
(2, [0, 2, 3], [0, 1, 0, 2])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..lattice.book import Book
from ..model.curve import YieldCurve
from ..model.market import Market

#: Prices a block of :meth:`ScenarioBatch.gather` takes (about 1 MiB of float64).
GATHER_BLOCK = 1 << 17


@dataclass(frozen=True)
class ScenarioBatch:
    """The entries a book's scenarios need (see the module)."""

    book: Book  #: the book priced
    sigma_moves: np.ndarray  #: float64, one block of trees per move: the book with ``sigma + move``
    curves: tuple[YieldCurve, ...]  #: the distinct curves of the market
    entry_offset: np.ndarray  #: int64, ``len(trees) + 1``
    entry_curve: np.ndarray  #: int64 index into ``curves``
    entry_spread: np.ndarray  #: float64, the tree's spread plus the scenario's move
    source: np.ndarray  #: int64 ``(scenarios, len(book))``: the entry of each scenario's price
    #: int64 per tree, -1 or the step from which every resuming entry of the tree equals its first entry
    checkpoint: np.ndarray | None = None
    #: int8 per entry: 1 where the entry may start from its tree's first entry's level at ``checkpoint``
    resume: np.ndarray | None = None

    @property
    def entries(self) -> int:
        return int(self.entry_offset[-1])

    @property
    def trees(self) -> Book:
        """The trees the entries belong to: the book once per sigma move (built on first use)."""
        def build() -> Book:
            blocks = [self.book if move == 0.0 else self.book.with_trees(sigma=self.book.sigma + move)
                      for move in self.sigma_moves]
            return blocks[0] if len(blocks) == 1 else Book.concatenate(blocks)
        return self.book.cached(("scenario-trees", self.sigma_moves.tobytes()), build)

    def gather(self, entry_prices: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``(scenarios, len(book))`` prices from the entries' prices (``entry_prices[source]``; into ``out`` where
        given), a block of trees at a time: a block's entries stay in the cache while every scenario takes its own
        (3x faster than one gather on a million trees)."""
        scenarios, count = self.source.shape
        if out is None:
            out = np.empty((scenarios, count), dtype=entry_prices.dtype)
        step = max(1024, GATHER_BLOCK // max(scenarios, 1))
        for first in range(0, count, step):
            np.take(entry_prices, self.source[:, first:first + step], out=out[:, first:first + step], mode="clip")
        return out

    def scratch(self, dtype: np.dtype) -> np.ndarray:
        """An array for every entry's price, of ``dtype``: the one :meth:`keep_scratch` kept last, else a new one
        (a worker pricing the same grid again writes its entries into the same memory: no new pages to fault)."""
        held: dict = self.book.cached("scenario-scratch", dict)
        buffer = held.pop(np.dtype(dtype).str, None)  # taken: a second thread on this plan gets a new one
        return buffer if buffer is not None and buffer.shape == (self.entries,) else np.empty(self.entries, dtype)

    def keep_scratch(self, buffer: np.ndarray) -> None:
        """Keep ``buffer`` (entries read for the last time) for the next :meth:`scratch`."""
        if buffer.shape == (self.entries,):
            self.book.cached("scenario-scratch", dict)[buffer.dtype.str] = buffer

    def part(self, trees: np.ndarray) -> tuple[ScenarioBatch, np.ndarray]:
        """The entries of ``trees`` (indices into :attr:`trees`) as a batch of their own (its book: those trees,
        sigma moves applied; no scenario map), and where its entries are among this batch's."""
        from .bond_arrays import entries_of

        where = entries_of(self.entry_offset, trees)
        counts = np.diff(self.entry_offset)[trees]
        return ScenarioBatch(book=self.trees.take(trees), sigma_moves=np.zeros(1), curves=self.curves,
                             entry_offset=np.concatenate(([0], np.cumsum(counts))), entry_curve=self.entry_curve[where],
                             entry_spread=self.entry_spread[where], source=np.zeros((0, 0), dtype=np.int64)), where


def planned(book: Book, market: Market) -> ScenarioBatch:
    """:func:`batch`, kept on the book for the last market it planned: a grid priced again in an equal market (the
    same curves bit for bit, the same moves) plans nothing. One plan per book: another market replaces it."""
    key = _market_key(market)
    held: dict = book.cached("scenario-plan", dict)
    plan = held.get(key)
    if plan is None:
        held.clear()
        plan = held[key] = batch(book, market)
    return plan


def _market_key(market: Market) -> tuple:
    """What a plan depends on in ``market``: its names, moves and curves' bits."""
    curves = tuple(tuple((np.asarray(c.days, dtype=np.int64).tobytes(), np.asarray(c.rates, dtype=np.float64).tobytes())
                         for c in scenario) for scenario in market.scenarios)
    return market.names, market.sigma_shifts, market.spread_shifts, curves


def batch(book: Book, market: Market) -> ScenarioBatch:
    """The entries that price ``book`` in every scenario of ``market`` (see the module).

    Per sigma move and curve name, the candidate entries are the distinct (moved curve, spread move) pairs of
    the scenarios and the (base curve, spread move) pairs; a tree takes a moved pair where the move reaches
    its horizon and a base pair where some scenario leaves its curve as it is. Which of them a tree takes
    depends on its horizon only through the days up to which the scenarios leave its curve as it is, so the
    choice is made once per *pattern* (the interval of those days the horizon falls in: a parallel shift gives
    every tree one) and the trees take their pattern's entries: no work per tree and scenario but writing the
    arrays.
    """
    scenarios, count = len(market), len(book)
    curve_ids, curves = _distinct_curves(market)
    names = len(market.names)
    name_of_tree = np.array([market.index(name) for name in book.curve_names], dtype=np.int64)[book.curve]
    horizon = book.horizon_days()
    is_bond = book.instrument != 0
    same_until = np.array([[_same_until(market.scenarios[0][k], market.scenarios[s][k]) for k in range(names)]
                           for s in range(scenarios)])  # (scenarios, names)
    sigma = np.array([market.sigma_shift(s) for s in range(scenarios)])
    spread_moves = np.array([market.spread_shift(s) for s in range(scenarios)])
    moves, group = np.unique(sigma, return_inverse=True)
    # The trees of each (curve name, instrument) part: the same in every block of a sigma move.
    tree_parts = []
    for k in range(names):
        for bonds in (False, True):
            rows = np.flatnonzero((name_of_tree == k) & (is_bond == bonds))
            if rows.size:
                tree_parts.append((k, bonds, rows))
    parts = []
    for g in range(moves.size):
        members = np.flatnonzero(group == g)
        for k, bonds, rows in tree_parts:
            parts.append(_Part.of(g, members, k, rows, horizon[rows], curve_ids, same_until,
                                  spread_moves if bonds else 0 * spread_moves))
    per_tree = np.zeros((len(moves), count), dtype=np.int64)
    for part in parts:
        per_tree[part.block, part.rows] = part.count[part.pattern]
    offset = np.zeros(len(moves) * count + 1, dtype=np.int64)
    np.cumsum(per_tree.reshape(-1), out=offset[1:])
    entries = int(offset[-1])
    entry_curve = np.empty(entries, dtype=np.int64)
    entry_spread = np.zeros(entries, dtype=np.float64)  # pages never written stay unallocated (options: all 0)
    resume = np.zeros(entries, dtype=np.int8)
    checkpoint = np.full((len(moves), count), -1, dtype=np.int64)
    source = np.empty((scenarios, count), dtype=np.int64)
    for part in parts:
        start = offset[part.block * count + part.rows]
        part.fill(start, entry_curve, entry_spread, book.spread[part.rows])
        part.fill_source(source, start)
        # Candidates after the first (the base curve, candidate 0) with its spread move that equal it from a day
        # on: where the tree's first entry is candidate 0, they may resume from its level at their first step there.
        base, keys = market.scenarios[0][part.name], part.keys
        from_day = [np.inf] + [_same_from(base, curves[int(c)]) if spread == keys[0, 1] else np.inf
                               for c, spread in keys[1:]]
        resumable = [c for c in range(1, len(keys)) if np.isfinite(from_day[c])]
        if not resumable:
            continue
        rows, pattern = part.rows, part.pattern
        n_steps, step_days = book.shape()[0][rows], book.step_days()[rows]
        first = part.first_active[pattern] == 0
        rank = part.rank
        step = np.full(rows.size, -1.0)
        for c in resumable:
            # round(cp * dt * term_unit) >= day from cp >= (day + 0.5) / step days; one step more for rounding.
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                need = np.ceil((from_day[c] + 0.5) / step_days) + 1
            ok = part.active[c, pattern] & np.isfinite(need) & (need < n_steps) & first
            step = np.where(ok, np.maximum(step, need), step)
            resume[start[ok] + rank[c, pattern[ok]]] = 1
        checkpoint[part.block, rows] = step.astype(np.int64)
    for array in (offset, entry_curve, entry_spread, resume, checkpoint, source):  # a plan is kept and shared
        array.setflags(write=False)
    return ScenarioBatch(book=book, sigma_moves=moves.astype(np.float64), curves=curves, entry_offset=offset,
                         entry_curve=entry_curve, entry_spread=entry_spread, source=source,
                         checkpoint=checkpoint.reshape(-1), resume=resume)


@dataclass(frozen=True)
class _Part:
    """The trees of one sigma move's block on one curve name and of one instrument (``rows``), the scenarios of
    that move (``members``), and their candidate entries per *pattern*: the trees of a pattern (their horizons
    between two neighbouring days of ``bounds``) take the same candidates in the same order."""

    block: int  #: the sigma move's block
    members: np.ndarray  #: the scenarios of the move
    name: int  #: the curve name
    rows: np.ndarray  #: the trees, ascending
    keys: np.ndarray  #: (candidates, 2): curve id and spread move
    active: np.ndarray  #: bool (candidates, patterns): the candidates a tree of the pattern takes
    pattern: np.ndarray  #: int64 per tree of ``rows``
    chosen: np.ndarray  #: (members, patterns): each scenario's candidate for a tree of the pattern

    @classmethod
    def of(cls, block: int, members: np.ndarray, name: int, rows: np.ndarray, horizon: np.ndarray,
           curve_ids: list[np.ndarray], same_until: np.ndarray, spread_moves: np.ndarray) -> _Part:
        """The part's candidates: a tree's choice depends on its horizon only through the days up to which the
        scenarios leave its curve as it is (``horizon > day`` or not), so each pattern (the horizons in
        ``(bounds[j - 1], bounds[j]]``) is decided once, at ``bounds[j]`` (NaN: a horizon that is no number)."""
        bounds = np.unique(np.concatenate((same_until[members, name], [-np.inf, np.inf])))
        at = np.append(bounds, np.nan)
        keys, active, pick = _candidates(members, name, curve_ids, same_until, spread_moves, at)
        return cls(block, members, name, rows, keys, active, np.searchsorted(bounds, horizon, side="left"), pick(at))

    @property
    def count(self) -> np.ndarray:
        """Entries per tree of each pattern."""
        return self.active.sum(axis=0)

    @property
    def rank(self) -> np.ndarray:
        """(candidates, patterns): a candidate's place among its tree's entries (where active)."""
        return np.cumsum(self.active, axis=0) - 1

    @property
    def first_active(self) -> np.ndarray:
        """Per pattern, the candidate of a tree's first entry (0 where none is active)."""
        return self.active.argmax(axis=0)

    def uniform(self) -> int | None:
        """The pattern of every tree, where they share one."""
        first = int(self.pattern[0])
        return first if bool(np.all(self.pattern == first)) else None

    def fill(self, start: np.ndarray, entry_curve: np.ndarray, entry_spread: np.ndarray, spreads: np.ndarray) -> None:
        """Write the trees' entries (their curve, and their tree's spread plus the move where it is not +0.0) from
        ``start`` (each tree's first entry)."""
        count = self.count
        _pattern, candidate = np.nonzero(self.active.T)  # pattern-major: each pattern's candidates in order
        table_curve = self.keys[candidate, 0].astype(np.int64)
        table_spread = self.keys[candidate, 1]
        table_start = np.concatenate(([0], np.cumsum(count)[:-1]))
        per_tree = count[self.pattern]
        total = int(per_tree.sum())
        if not total:
            return
        # Every spread and move +0.0: the entries' +0.0 (-0.0 only from -0.0 + -0.0), what the array holds.
        zero = bool(np.all(spreads == 0) and np.all(table_spread == 0)
                    and not (np.signbit(spreads).any() and np.signbit(table_spread).any()))
        low = int(start[0])
        contiguous = int(start[-1] + per_tree[-1]) - low == total
        shared = self.uniform()
        if contiguous and shared is not None:  # one pattern over a run of entries: a broadcast, no index arrays
            first, size = int(table_start[shared]), int(count[shared])
            entry_curve[low:low + total].reshape(-1, size)[:] = table_curve[first:first + size]
            if not zero:
                np.add(spreads[:, None], table_spread[None, first:first + size],
                       out=entry_spread[low:low + total].reshape(-1, size))
            return
        local = np.cumsum(per_tree) - per_tree  # each tree's first entry among the part's
        step = np.arange(total)
        table = np.repeat(table_start[self.pattern] - local, per_tree) + step
        where: slice | np.ndarray = slice(low, low + total) if contiguous else np.repeat(start - local, per_tree) + step
        entry_curve[where] = table_curve[table]
        if not zero:
            entry_spread[where] = np.repeat(spreads, per_tree) + table_spread[table]

    def fill_source(self, source: np.ndarray, start: np.ndarray) -> None:
        """Write ``source[members, rows]``: each scenario's entry of each tree."""
        entry = np.take_along_axis(self.rank, self.chosen, axis=0)  # (members, patterns)
        shared = self.uniform()
        chosen = entry[:, shared, None] if shared is not None else entry[:, self.pattern]
        members, rows = _run(self.members), _run(self.rows)
        if members is not None and rows is not None:
            np.add(start[None, :], chosen, out=source[members, rows])
        else:
            source[np.ix_(self.members, self.rows)] = start[None, :] + chosen


def _run(index: np.ndarray) -> slice | None:
    """``index`` (ascending) as a slice where it is a run of consecutive numbers."""
    return slice(int(index[0]), int(index[-1]) + 1) if index.size and index[-1] - index[0] + 1 == index.size else None


def _candidates(members: np.ndarray, name: int, curve_ids: list[np.ndarray], same_until: np.ndarray,
                spread_moves: np.ndarray, horizon: np.ndarray) -> tuple[np.ndarray, np.ndarray, Callable]:
    """For the trees of one curve name (their ``horizon``) and the scenarios ``members``: the candidate keys
    ``(curve id, spread move)`` (a float array of two columns), which candidates each tree needs
    ``(candidates, trees)``, and a function of the horizons giving each scenario's candidate per tree."""
    base = int(curve_ids[0][name])
    curve = np.array([curve_ids[s][name] for s in members])
    until = np.where(curve == base, np.inf, same_until[members, name])
    spread = spread_moves[members]
    keys: dict[tuple[int, float], int] = {}
    moved_key = np.empty(members.size, dtype=np.int64)
    base_key = np.empty(members.size, dtype=np.int64)
    for m in range(members.size):
        base_key[m] = keys.setdefault((base, float(spread[m])), len(keys))
        moved_key[m] = keys.setdefault((int(curve[m]), float(spread[m])), len(keys))
    # A moved candidate is needed where some scenario's move reaches the tree (until < horizon); a base one
    # where some scenario leaves the tree's curve as it is (horizon <= until).
    first_reach = np.full(len(keys), np.inf)
    last_base = np.full(len(keys), -np.inf)
    np.minimum.at(first_reach, moved_key, np.where(moved_key != base_key, until, np.inf))
    np.maximum.at(last_base, base_key, until)
    active = (first_reach[:, None] < horizon[None, :]) | (horizon[None, :] <= last_base[:, None])
    table = np.array(list(keys), dtype=np.float64).reshape(-1, 2)

    def pick(h: np.ndarray) -> np.ndarray:
        return np.where(until[:, None] < h[None, :], moved_key[:, None], base_key[:, None])

    return table, active, pick


def expanded(plan: ScenarioBatch) -> tuple[Book, Market]:
    """One tree per entry (its curve and spread set) and a market of one scenario holding every curve: what an
    engine without a native scenario axis prices in one call."""
    tree_of_entry = np.repeat(np.arange(len(plan.trees)), np.diff(plan.entry_offset))
    names = tuple(f"curve {k}" for k in range(len(plan.curves)))
    flat = plan.trees.take(tree_of_entry).with_trees(curve_names=names, curve=plan.entry_curve,
                                                     spread=plan.entry_spread)
    return flat, Market(names, (plan.curves,))


def _distinct_curves(market: Market) -> tuple[list[np.ndarray], tuple[YieldCurve, ...]]:
    """Per scenario, the index of each named curve among the market's distinct curves, and those curves."""
    index: dict[tuple[bytes, bytes], int] = {}
    curves: list[YieldCurve] = []
    ids = []
    for scenario in market.scenarios:
        row = []
        for curve in scenario:
            key = (np.asarray(curve.days, dtype=np.int64).tobytes(), np.asarray(curve.rates, dtype=np.float64).tobytes())
            if key not in index:
                index[key] = len(curves)
                curves.append(curve)
            row.append(index[key])
        ids.append(np.array(row, dtype=np.int64))
    return ids, tuple(curves)


def _same_from(base: YieldCurve, moved: YieldCurve) -> float:
    """The first day from which ``moved`` gives every lookup the bits of ``base`` (inf: none)."""
    if moved is base:
        return 0.0
    if base.days.size != moved.days.size or np.any(base.days != moved.days):
        return np.inf
    differ = np.flatnonzero(np.asarray(base.rates) != np.asarray(moved.rates))
    if not differ.size:
        return 0.0
    last = int(differ[-1])
    # A day after the pillar past the last moved one interpolates between unmoved pillars only (at that pillar
    # itself the moved one still enters the interpolation).
    return float(base.days[last + 1]) + 1 if last + 1 < base.days.size else np.inf


def _same_until(base: YieldCurve, moved: YieldCurve) -> float:
    """The last day up to which ``moved`` gives every lookup the bits of ``base`` (inf: the same curve; -inf:
    none, or pillars on other days)."""
    if moved is base:
        return np.inf
    if base.days.size != moved.days.size or np.any(base.days != moved.days):
        return -np.inf
    differ = np.flatnonzero(np.asarray(base.rates) != np.asarray(moved.rates))
    if not differ.size:
        return np.inf
    first = int(differ[0])
    # A day up to the pillar before the first moved one interpolates between unmoved pillars only.
    return float(base.days[first - 1]) if first > 0 else -np.inf


__all__ = ["ScenarioBatch", "batch", "expanded", "planned"]
