"""Resolution by accuracy (issue 34, item 5): each dated trade's steps a year chosen so that its price reaches a
requested accuracy per 100 of notional, instead of one ``steps_per_year`` for the book.

The trades are priced on grids of :data:`START_STEPS_PER_YEAR` steps a year, doubled each time. With its prices
``P_0, P_1, ...`` on those grids, a trade's estimate at grid ``k >= 2`` is ``max(|P_k - P_k-1|, |P_k-1 - P_k-2| / 2)``:
for a tree that converges in first order (docs/convergence.md) the gap between two grids is the error of the finer
one, and the half of the gap before guards against two grids that cross by chance. A trade is done at the first grid
whose estimate is at most the accuracy, and keeps that grid's price (not an extrapolation: the trees' convergence
oscillates around its first-order trend). Only the trades not done yet go on to the finer grid; the others are priced
again at their own grid, which costs little beside the finer one.

A trade that does not reach the accuracy by :data:`MAX_STEPS_PER_YEAR` steps a year, or whose next grid is refused
(a tree taller than ``max_steps`` or wider than ``max_width``), keeps its finest price with a warning naming its
estimate: it is priced, not refused, and the estimate says how far it is from the accuracy asked.
The estimate is the two-grid gap, not a bound.

    >>> import trinom
    >>> from trinom.instruments import Trades
    >>> from trinom.model import DatedCurve
    >>> curve = DatedCurve(as_of="2026-11-25", dates=["2031-11-25", "2036-11-25"], zero_rates=[0.03, 0.035],
    ...                    name="EUR")
    >>> book = Trades(as_of="2026-11-25", id=["C"], type=["bond"], issue=["2025-03-15"], maturity=["2034-03-15"],
    ...               coupon=[0.045], frequency=[2], option=["call"], exercise=["bermudan"],
    ...               first_exercise=["2029-03-15"], last_exercise=["2033-09-15"], exercise_price=[100.0],
    ...               a=0.05, sigma=0.01, curve="EUR")
    >>> result = trinom.price(book, {"EUR": curve}, backend="reference", accuracy=0.01)
    >>> bool(result.accuracy[0] <= 0.01), int(result.steps_per_year[0]) >= 48
    (True, True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Final

import numpy as np

from ..instruments.trades import Trades
from ..result import Prices

#: The first grid's steps a year; each further grid doubles it.
START_STEPS_PER_YEAR: Final[int] = 12
#: The finest grid (12 * 2**8: about eight steps a day).
MAX_STEPS_PER_YEAR: Final[int] = 3072


def check_accuracy(accuracy: object, trades: object) -> float:
    """``accuracy`` as a positive float for a book of dated trades whose ``steps_per_year`` is left to it; a
    ``TypeError`` or ``ValueError`` naming what is wrong otherwise."""
    if not isinstance(trades, Trades):
        raise TypeError("accuracy chooses dated trades' steps a year: it needs trinom.instruments.Trades, got "
                        f"{type(trades).__name__}")
    if isinstance(accuracy, bool) or not isinstance(accuracy, (int, float, np.floating, np.integer)):
        raise TypeError(f"accuracy must be a number (per 100 of notional), got {type(accuracy).__name__}")
    value = float(accuracy)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"accuracy must be a positive number (per 100 of notional), got {accuracy!r}")
    given = [k for k, cell in enumerate(trades.column("steps_per_year").tolist()) if cell is not None]
    if given:
        raise ValueError(f"accuracy chooses each trade's steps_per_year, but {len(given)} trade(s) give one (the "
                         f"first: row {given[0]}, id {trades.ids[given[0]]}): leave the steps_per_year column empty, "
                         "or price without accuracy")
    return value


def priced_to_accuracy(trades: Trades, accuracy: float, price: Callable[[Trades, str], Prices],
                       errors: str) -> Prices:
    """``trades`` priced on doubling grids until each reaches ``accuracy`` (module docstring). ``price(book,
    errors)`` prices a book of the same trades with its ``steps_per_year`` column set; ``errors`` is the caller's
    (``"raise"`` raises for a bad row on the first grid, as a plain pricing would)."""
    rows = len(trades)
    spy = np.full(rows, START_STEPS_PER_YEAR, dtype=np.int64)
    first = price(trades.with_columns(steps_per_year=spy), errors)
    if first.price.ndim != 1:
        raise ValueError("accuracy prices one market: pass scenarios=None")
    good = first.error == ""
    history = [first.price.copy()]  # each row's prices on its grids so far (the last: its best)
    estimate = np.full(rows, np.inf)
    estimate[~good] = np.nan
    done = ~good
    stopped: dict[int, str] = {}
    result = first
    while not done.all():
        refine = ~done & (spy * 2 <= MAX_STEPS_PER_YEAR)
        if not refine.any():
            break
        spy = np.where(refine, spy * 2, spy)
        result = price(trades.with_columns(steps_per_year=spy), "mask")
        refused = refine & (result.error != "")
        for row in np.flatnonzero(refused):
            stopped[int(row)] = (f"finer trees refused at steps_per_year {int(spy[row])} "
                                 f"({result.error[row]})")
        spy = np.where(refused, spy // 2, spy)
        taken = refine & ~refused
        done |= refused
        now = np.where(taken, result.price, history[-1])
        if len(history) >= 2:
            gap = np.abs(now - history[-1])
            before = np.abs(history[-1] - history[-2]) / 2
            estimate = np.where(taken, np.maximum(gap, before), estimate)
        history.append(now)
        done |= taken & (estimate <= accuracy)
    warnings = list(result.warnings)
    for row in np.flatnonzero(good & ~(estimate <= accuracy)):
        why = stopped.get(int(row), f"the finest grid, steps_per_year {int(spy[row])}")
        warnings.append((int(row), f"accuracy {accuracy:g} not reached: estimate {estimate[row]:.3g} per 100 at "
                                   f"steps_per_year {int(spy[row])} ({why})"))
    best = history[-1]
    clean = np.where(good, best - first.accrued, first.clean)
    settled = {}
    if first.settlement is not None:  # a clean price at settlement is the price's: one grid's, not the best's
        settled = {"settlement": None, "settlement_clean": None, "settlement_accrued": None}
        warnings += [(int(row), "no clean price at settlement with accuracy= (each trade's best price is another "
                      "grid's): price at a steps_per_year to get it") for row in np.flatnonzero(~np.isnat(
                          first.settlement))]
    return dataclasses.replace(first, price=np.where(good, best, first.price), clean=clean, engine=result.engine,
                               warnings=tuple(sorted(warnings)), steps_per_year=np.where(good, spy, 0),
                               accuracy=estimate, **settled)
