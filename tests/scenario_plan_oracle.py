"""The scenario planning as it was before issue 27 (trinom.engines.scenario_batch.batch at 9956db1): a loop over
(candidate, tree) arrays per part. tests/test_scenario_plan.py checks the vectorised planning against it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from trinom.engines.scenario_batch import ScenarioBatch
from trinom.lattice.book import Book
from trinom.model.curve import YieldCurve
from trinom.model.market import Market


def batch_before(book: Book, market: Market) -> ScenarioBatch:
    """The entries that price ``book`` in every scenario of ``market`` (see the module).

    Per sigma move and curve name, the candidate entries are the distinct (moved curve, spread move) pairs of
    the scenarios and the (base curve, spread move) pairs; a tree takes a moved pair where the move reaches
    its horizon and a base pair where some scenario leaves its curve as it is (no sort over scenarios x trees).
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
    source = np.empty((scenarios, count), dtype=np.int64)
    # Per block and (curve name, instrument) part: its trees, candidates (curve id, spread move) and activity.
    parts = []
    for g in range(moves.size):
        members = np.flatnonzero(group == g)
        for k in range(names):
            for bonds in (False, True):
                rows = np.flatnonzero((name_of_tree == k) & (is_bond == bonds))
                if rows.size:
                    parts.append((g, members, k, rows, _candidates(members, k, curve_ids, same_until,
                                                                   spread_moves if bonds else 0 * spread_moves,
                                                                   horizon[rows])))
    per_tree = np.zeros((len(moves), count), dtype=np.int64)
    checkpoint = np.full((len(moves), count), -1, dtype=np.int64)
    n_steps = book.shape()[0]
    step_days = book.step_days()
    resumable = []
    for g, _members, k, rows, (keys, active, _pick) in parts:
        per_tree[g, rows] = active.sum(axis=0)
        # Candidates that equal the first (base curve, same spread move) from a day on: their first step there.
        from_day = np.array([_same_from(market.scenarios[0][k], curves[int(c)]) if keys[0, 0] == curve_ids[0][k]
                             and spread == keys[0, 1] else np.inf for c, spread in keys])
        from_day[0] = np.inf
        first_active = active.argmax(axis=0)  # the tree's first entry is candidate 0 where it is active
        # round(cp * dt * term_unit) >= day from cp >= (day + 0.5) / step days; one step more for rounding.
        need = np.ceil((from_day[:, None] + 0.5) / step_days[rows][None, :]) + 1
        ok = active & np.isfinite(need) & (need < n_steps[rows][None, :]) & (first_active == 0)[None, :]
        ok[0] = False
        cp = np.where(ok, need, -1).max(axis=0).astype(np.int64)
        checkpoint[g, rows] = np.where(ok.any(axis=0), cp, -1)
        resumable.append(ok)
    offset = np.zeros(len(moves) * count + 1, dtype=np.int64)
    np.cumsum(per_tree.reshape(-1), out=offset[1:])
    entry_curve = np.empty(int(offset[-1]), dtype=np.int64)
    entry_spread = np.empty(int(offset[-1]), dtype=np.float64)
    resume = np.zeros(int(offset[-1]), dtype=np.int8)
    for (g, members, _k, rows, (keys, active, pick)), ok in zip(parts, resumable, strict=True):
        start = offset[g * count + rows]  # (rows,)
        rank = np.cumsum(active, axis=0) - 1  # (candidates, rows)
        where = start[None, :] + rank
        candidate = np.broadcast_to(np.arange(len(keys))[:, None], active.shape)
        entry_curve[where[active]] = keys[candidate[active], 0]
        spreads = book.spread[rows]
        entry_spread[where[active]] = (spreads[None, :] + keys[:, 1][:, None])[active]
        resume[where[ok]] = 1
        chosen = pick(horizon[rows])  # (members, rows): each scenario's candidate per tree
        source[np.ix_(members, rows)] = start[None, :] + rank[chosen, np.arange(rows.size)[None, :]]
    return ScenarioBatch(book=book, sigma_moves=moves.astype(np.float64), curves=curves, entry_offset=offset,
                         entry_curve=entry_curve, entry_spread=entry_spread, source=source,
                         checkpoint=checkpoint.reshape(-1), resume=resume)


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
