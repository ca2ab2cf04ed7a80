"""Vega per piece of a piecewise-constant sigma (issue 37, item 5): for trades whose sigma is a step function of
dates (:meth:`~trinom.instruments.trades.Trades.with_sigma_pieces`), the move of the price per 0.0001 of each piece
alone, ``(P(sigma_k + v) - P(sigma_k - v)) / (2 v)`` times 0.0001, the other pieces held. The pieces' vegas sum to
the parallel vega (every piece moved at once) to first order. :func:`trinom.risk` adds them to its ``vega`` rows,
factor ``sigma:FROM..TO`` (the piece's dates; the last one's ``TO`` empty: open-ended).

Piece ``k`` of every trade that has one is moved in the same two pricings of the book (two pricings a piece index,
not a trade).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

#: Vega is per 0.0001 of sigma.
_BP = 1e-4


def piece_vegas(trades: Any, curves: Any, sigma_shift: float,
                run: Mapping[str, Any]) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Per piece index ``k``: ``(k, rows, factors, vega)``: the trades (rows) that have a ``k``-th piece, each's
    factor ``sigma:FROM..TO`` and vega per 0.0001 (NaN where a moved pricing failed), from two pricings of the book
    with piece ``k`` of those trades moved by ``+-sigma_shift`` (``run``: the pipeline's options, as
    :func:`trinom.price` takes them)."""
    from ..engines.options import PricingOptions
    from ..pipeline import price_trades

    options = PricingOptions.of(**{k: v for k, v in run.items() if k != "client"})
    pieces = trades.sigma_pieces()
    if not pieces:
        return []
    as_of = str(trades.as_of)
    ids = trades.ids
    out = []
    for k in range(max(len(values) for _until, values in pieces.values())):
        rows = np.array(sorted(row for row, (_u, values) in pieces.items() if len(values) > k), dtype=np.int64)
        moved = []
        for sign in (1.0, -1.0):
            bumped = {}
            for row, (until, values) in pieces.items():
                shifted = values.copy()
                if len(values) > k:
                    shifted[k] = values[k] + sign * sigma_shift
                bumped[ids[row]] = ([str(np.datetime64(int(d), "D")) for d in until], shifted.tolist())
            priced = price_trades(trades.with_sigma_pieces(bumped), curves, options, client=run.get("client"))
            moved.append(np.asarray(priced.price, dtype=np.float64).reshape(-1))
        vega = (moved[0][rows] - moved[1][rows]) / (2.0 * sigma_shift) * _BP
        factors = np.empty(rows.size, dtype=object)
        for m, row in enumerate(rows.tolist()):
            until = pieces[row][0]
            start = as_of if k == 0 else str(np.datetime64(int(until[k - 1]), "D"))
            end = str(np.datetime64(int(until[k]), "D")) if k < until.size else ""
            factors[m] = f"sigma:{start}..{end}"
        out.append((str(k), rows, factors, vega))
    return out


def piece_parts(trades: Any, curves: Any, sigma_shift: float, run: Mapping[str, Any],
                n: int) -> list[tuple[np.ndarray, str, np.ndarray]]:
    """:func:`piece_vegas` as the risk table's parts: per distinct factor, its rows (ascending) and a value per
    trade of the book (NaN outside them)."""
    parts = []
    for _k, rows, factors, vega in piece_vegas(trades, curves, sigma_shift, run):
        for factor in dict.fromkeys(factors.tolist()):
            mine = factors == factor
            value = np.full(n, np.nan)
            value[rows[mine]] = vega[mine]
            parts.append((rows[mine], str(factor), value))
    return parts
