"""Recalibration with a piecewise-constant sigma (issue 37, item 5; :class:`~trinom.analytics.Recalibration` with
``piecewise=True``): in every scenario each trade's basket is bootstrapped piece by piece again on the scenario's
curves and volatilities (:func:`~trinom.analytics.baskets.piecewise.bootstrap_baskets`, ``a`` fixed) and its trees
priced on those pieces (:mod:`trinom.instruments.sigma_pieces`), so that a risk run's measures move the pieces with
the market as a desk's daily recalibration does. A trade without a fit in a scenario has its message there (its
prices NaN); a bond without an option keeps its own parameters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..instruments.bond import BondPortfolio
from ..instruments.sigma_pieces import with_tree_pieces


def piecewise_grid(trades: Any, blocks: Sequence[Any], legs: Any, names: Sequence[str], states: Sequence[Any],
                   how: Any, run: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """:func:`~trinom.analytics.recalibration.recalibrated_grid` with pieces: ``(states, trees)`` prices, per state
    and tree the error (``""``: priced), and per state its :class:`~trinom.Prices` of the trees."""
    from ..model.market import Market
    from .baskets import book_baskets, prepare_baskets
    from .baskets.piecewise import bootstrap_baskets
    from .recalibration import _blank, _column_text, _in, _surface, reparameterised_prices

    baskets = book_baskets(trades, list(names))
    prepared = prepare_baskets(baskets, _surface(how.vols, trades.as_of), trades.as_of, curves=tuple(names),
                               strike=how.strike)
    trees = sum(len(b) for b in blocks)
    owner = np.arange(trees) if legs is None else legs.owner
    kept = (_column_text(trades, "type") == "bond") & (_column_text(trades, "option") == "")
    values = np.full((len(states), trees), np.nan)
    errors = _blank((len(states), trees))
    results = []
    for s, state in enumerate(states):
        fit = bootstrap_baskets(prepared, state.curves, a=float(how.a), vol_shift=state.vol_shift)
        pieces = fit.row_pieces()
        why = np.full(len(trades), "", dtype=object)
        for k in range(len(trades)):
            if k not in pieces and not kept[k]:
                why[k] = f"recalibration{_in(state)}: {fit.status[k]}: {fit.message[k]}"
        state_blocks = blocks
        if trades.has_two_curves(tuple(names)):  # flows and strikes follow both curves: lowered again
            from ..instruments.trades import lowered

            state_blocks = [b for _first, b in lowered(trades, {name: state.curves[name] for name in names})[0]]
        priced_blocks, start = [], 0
        for block in state_blocks:
            own = owner[start:start + len(block)]
            start += len(block)
            if isinstance(block, BondPortfolio):
                fitted = np.isin(own, list(pieces))
                block = with_tree_pieces(block.with_parameters(a=np.where(fitted, float(how.a), block.a),
                                                               sigma=block.sigma), own, pieces, trades.as_of_day)
            priced_blocks.append(block)
        market = Market(tuple(names), (tuple(state.curves[name].to_yield_curve() for name in names),),
                        sigma_shifts=(0.0,), spread_shifts=(state.spread_shift,))
        unmoved = np.full(trees, np.nan)
        priced = reparameterised_prices(priced_blocks, [market], [unmoved], [unmoved], run,
                                        keep=np.ones(trees, dtype=bool))[0]
        tree_why = why[owner]
        values[s] = np.where(tree_why == "", np.asarray(priced.price, dtype=np.float64).reshape(-1), np.nan)
        errors[s] = np.where(tree_why == "", np.asarray(priced.error, dtype=object), tree_why)
        results.append(priced)
    return values, errors, results
