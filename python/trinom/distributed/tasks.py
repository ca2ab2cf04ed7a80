"""What runs on a Dask worker, on a placed book (a shard, or the whole book: :mod:`.placement`): its prices in a
market, the engine's prepared call kept on the book for the next call in the same market (:func:`price_placed`);
and an OAS search's pieces on placed bonds: the engine chosen there (:func:`engine_of`), prices at spreads
(:func:`price_spreads_placed`) and the engine's own search (:func:`solve_spreads_placed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..engines.engine import SearchLimits, SpreadSolution
from ..engines.running import resolve, run
from ..engines.scenario_batch import ScenarioBatch
from ..lattice.book import Book
from ..model.market import Market
from .shared_results import Destination, opened_part, write_part

#: Prepared engine calls a worker keeps per placed shard (for repeated calls in the same market).
PLANS_KEPT = 4


def price_placed(book: Book, market: Market, keep: np.ndarray | None, engine: Mapping[str, Any],
                 destination: Destination | None = None, columns: np.ndarray | None = None) -> np.ndarray | None:
    """A task on a worker: the engine's prices of the placed ``book`` (its trees ``keep``; None: all) in
    ``market``, shape ``(len(market), trees)``; None where they were written into ``destination``, the call's
    result in shared memory on this host (:mod:`trinom.shared_results`; at the destination's columns, or at
    ``columns`` where it names none). The engine's prepared call for the whole placed book is kept on it (up to
    :data:`PLANS_KEPT` markets), so a repeated call in the same market only runs the engine."""
    if destination is not None and destination.columns is not None and keep is None:  # straight into the result
        with opened_part(destination) as view:
            if view is not None:
                settings = dict(engine)
                backend, precision, target = settings.pop("backend"), settings.pop("precision"), settings.pop("target")
                chosen_engine, chosen = resolve(backend, book, precision, target)
                chosen_engine.price_into(book, market, view, precision=precision, target=chosen, **settings)
                return None
    return write_part(destination, _placed_prices(book, market, keep, engine), columns)


def _placed_prices(book: Book, market: Market, keep: np.ndarray | None, engine: Mapping[str, Any]) -> np.ndarray:
    settings = dict(engine)
    if keep is not None:
        return price_trees(book.take(keep), market, **settings)
    key = _plan_key(market, settings)
    if key is None:
        return price_trees(book, market, **settings)
    plans: dict[tuple, Any] = book.cached("dask-plans", dict)
    call = plans.get(key)
    if call is None:
        backend, precision, target = settings.pop("backend"), settings.pop("precision"), settings.pop("target")
        chosen_engine, chosen = resolve(backend, book, precision, target)
        call = chosen_engine.runner(book, market, precision=precision, target=chosen, **settings)
        if len(plans) >= PLANS_KEPT:
            plans.pop(next(iter(plans)))
        plans[key] = call
    return call()


def price_trees(book: Book, market: Market, *, backend: str = "auto", precision: str = "f64",
                target: str | None = None, device: int = 0, **tuning: Any) -> np.ndarray:
    """The engine's prices of a lowered, already validated ``book`` (a shard), shape ``(len(market), len(book))``:
    the run step of :func:`trinom.price` alone (``auto`` chooses the engine where the task runs, which may have a
    GPU the caller lacks)."""
    engine, chosen = resolve(backend, book, precision, target)
    return run(engine, book, market, precision=precision, target=chosen, device=device, **tuning)


def _plan_key(market: Market, engine: Mapping[str, Any]) -> tuple | None:
    """A market's and an engine's settings by content (a market arrives as a new object in every task); None where
    a setting is not hashable."""
    curves = tuple((c.days.tobytes(), c.rates.tobytes()) for scenario in market.scenarios for c in scenario)
    key = (market.names, curves, market.sigma_shifts, market.spread_shifts, tuple(sorted(engine.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def engine_of(book: Book, backend: str, precision: str, target: str | None) -> tuple[str, str | None, bool]:
    """A task: the engine ``backend`` resolves to on this worker for ``book``, its target, and whether it searches
    spreads itself."""
    engine, chosen = resolve(backend, book, precision, target)
    return engine.name, chosen, engine.solves_spreads(book)


def price_spreads_placed(book: Book, market: Market, trees: np.ndarray, spreads: np.ndarray,
                         engine: Mapping[str, Any]) -> np.ndarray:
    """A task: the dirty prices of the placed bonds' trees ``trees`` (grouped by tree, in book order; a tree may
    repeat) at ``spreads`` in ``market``'s first scenario, one engine call (what :meth:`SpreadPricer.dirty` does)."""
    settings = dict(engine)
    backend, precision, target, device = (settings.pop(k) for k in ("backend", "precision", "target", "device"))
    chosen_engine, chosen = resolve(backend, book, precision, target)
    offset = np.zeros(len(book) + 1, dtype=np.int64)
    np.cumsum(np.bincount(trees, minlength=len(book)), out=offset[1:])
    names = np.array([market.index(name) for name in book.curve_names], dtype=np.int64)
    plan = ScenarioBatch(book=book, sigma_moves=np.zeros(1), curves=market.curves, entry_offset=offset,
                         entry_curve=names[book.curve][trees], entry_spread=spreads,
                         source=np.zeros((0, 0), dtype=np.int64))
    return chosen_engine.price_entries(plan, precision, chosen, device, settings)


def solve_spreads_placed(book: Book, market: Market, goal: np.ndarray, limits: SearchLimits,
                         engine: Mapping[str, Any]) -> SpreadSolution:
    """A task: the engine's own spread search on the placed bonds (``goal`` per tree, NaN: skip it)."""
    settings = dict(engine)
    backend, precision, target = (settings.pop(k) for k in ("backend", "precision", "target"))
    chosen_engine, chosen = resolve(backend, book, precision, target)
    return chosen_engine.solve_spreads(book, market, goal, limits, precision=precision, target=chosen, **settings)


__all__ = ["PLANS_KEPT", "engine_of", "price_placed", "price_spreads_placed", "price_trees", "solve_spreads_placed"]
