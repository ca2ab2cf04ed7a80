"""Option-adjusted spreads from market prices, a whole book at once (issue 14, item 3).

:func:`oas` solves every bond's spread (the unit of :attr:`BondPortfolio.spread`: percent per year,
continuous, 1.0 = 100 bp) so that the model price equals the market price. The model price falls as the
spread rises, nearly exponentially, so each bond's root is bracketed and found by a safeguarded secant
(Illinois' false position) on ``log(model / market)``, nearly linear in the spread. The book is validated
and lowered once (:class:`trinom.spreads.SpreadPricer`); every iteration is one engine call pricing the
bonds not yet converged at their new spreads (the first prices both ends of every bracket in one call; on
``cuda`` one forward pass per bond serves both), on any engine. Each bond ends with a status; none is lost:

* ``"converged"``: ``|model - market| <= price_tolerance``;
* ``"price outside the attainable range"``: the market price is above the model price at the lowest
  spread of ``bracket`` or below it at the highest;
* ``"no convergence"``: ``max_iterations`` passed (the last spread and price are reported);
* the input's own error message, for a bond that cannot be priced or a market price that is not a
  positive number.

>>> import trinom
>>> from trinom.bonds.generator import generate_bonds
>>> bonds, curves = generate_bonds("S1", 3, seed=1)
>>> model = trinom.price(bonds, curves, backend="reference").clean
>>> result = oas(bonds, curves, model + 1.0, backend="reference")
>>> bool((result.status == "converged").all()), bool((result.oas < bonds.spread).all())
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .bonds.portfolio import BondPortfolio
from .curve import YieldCurve
from .spreads import SpreadPricer

CONVERGED = "converged"
OUTSIDE = "price outside the attainable range"
NO_CONVERGENCE = "no convergence"
#: Half the width of the first bracket around a bond's own spread (percent: 200 bp).
START_WIDTH = 2.0


@dataclass(frozen=True)
class OASResult:
    """Per bond, in input order: ``oas`` (percent, NaN if none), the model ``price`` at it (of
    ``price_type``), ``iterations`` (batched pricings the bond took part in), ``status`` (see the
    module) and ``error`` (``""`` where converged, else the status)."""

    oas: np.ndarray
    price: np.ndarray
    iterations: np.ndarray
    status: np.ndarray
    pricings: int

    @property
    def error(self) -> np.ndarray:
        return np.where(self.status == CONVERGED, "", self.status)

    def to_frame(self, ids: Sequence[str] | None = None) -> Any:
        """A pandas table ``id, oas, price, iterations, error`` (ids default to the row numbers)."""
        import pandas as pd

        rows = [str(i) for i in range(len(self.oas))] if ids is None else list(ids)
        return pd.DataFrame({"id": rows, "oas": self.oas, "price": self.price, "iterations": self.iterations,
                             "error": self.error})


def oas(bonds: BondPortfolio, curves: YieldCurve | Sequence[YieldCurve], market_prices: npt.ArrayLike, *,
        price_type: str = "clean", backend: str = "auto", precision: str = "f64", target: str | None = None,
        bracket: tuple[float, float] = (-20.0, 50.0), price_tolerance: float = 1e-9, max_iterations: int = 60,
        progress: Callable[[float, float], None] | None = None, **options: Any) -> OASResult:
    """Every bond's option-adjusted spread for ``market_prices`` (per 100 face, ``price_type`` ``"clean"``
    or ``"dirty"``); ``bracket``: the lowest and highest spread searched (percent); ``price_tolerance``:
    the largest model-market difference accepted; ``progress(done, total)``: called after every batched
    pricing with the bonds done (converged or given up); ``options`` go to :func:`trinom.price`."""
    if price_type not in ("clean", "dirty"):
        raise ValueError(f"price_type must be 'clean' or 'dirty', got {price_type!r}")
    target_prices = np.asarray(market_prices, dtype=np.float64).reshape(-1)
    if target_prices.size != len(bonds):
        raise ValueError(f"market_prices has {target_prices.size} entries, expected one per bond ({len(bonds)})")
    n = len(bonds)
    status = np.full(n, "", dtype=object)
    spread = np.full(n, np.nan)
    model = np.full(n, np.nan)
    iterations = np.zeros(n, dtype=np.int64)
    pricings = 0

    pricer = SpreadPricer(bonds, curves, backend=backend, precision=precision, target=target, **options)

    def model_price(rows: np.ndarray, *spreads: np.ndarray) -> list[np.ndarray]:
        """The model prices of ``rows`` at each of ``spreads`` (one engine call for all)."""
        nonlocal pricings
        pricings += 1
        iterations[rows] += len(spreads)
        if progress is not None:
            progress(float(n - rows.size), float(n))
        dirty = pricer.dirty(np.tile(rows, len(spreads)), np.concatenate(spreads))
        values = dirty - np.tile(pricer.accrued[rows], len(spreads)) if price_type == "clean" else dirty
        return np.split(values, len(spreads))

    bad_price = ~(np.isfinite(target_prices) & (target_prices > 0))
    status[bad_price] = "market price must be a positive number"
    rows = np.flatnonzero(~bad_price)

    # log(model / market): positive below the root, negative above it.
    def gap(values: np.ndarray, where: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(values / target_prices[where])

    # First bracket: the bond's own spread +- START_WIDTH (most market prices lie within it); the ends that
    # do not bracket the root move out to ``bracket``'s (two more pricings of those bonds only).
    own = np.clip(bonds.spread[rows].astype(np.float64), bracket[0], bracket[1])
    low = np.maximum(own - START_WIDTH, bracket[0])
    high = np.minimum(own + START_WIDTH, bracket[1])
    p_low, p_high = model_price(rows, low, high)
    f_low = gap(p_low, rows)
    f_high = gap(p_high, rows)
    failed = pricer.error[rows] != ""
    status[rows[failed]] = pricer.error[rows][failed]
    overflow = ~failed & ~(np.isfinite(p_low) & np.isfinite(p_high))
    status[rows[overflow]] = "the model price leaves the floating-point range inside the bracket"
    failed |= overflow
    for end, wide in ((0, bracket[0]), (1, bracket[1])):
        values = f_low if end == 0 else f_high
        wrong = ~failed & ((values < 0) if end == 0 else (values > 0))
        if wrong.any():
            points = np.full(int(wrong.sum()), wide)
            (p_wide,) = model_price(rows[wrong], points)
            (low if end == 0 else high)[wrong] = points
            values[wrong] = gap(p_wide, rows[wrong])
    outside = ~failed & ~((f_low >= 0) & (f_high <= 0))
    status[rows[outside]] = OUTSIDE
    keep = ~failed & ~outside
    rows, low, high, f_low, f_high = rows[keep], low[keep], high[keep], f_low[keep], f_high[keep]
    side = np.zeros(rows.size, dtype=np.int8)  # which end moved last (Illinois: halve the other's value)
    for _ in range(max_iterations):
        if rows.size == 0:
            break
        guess = (low * f_high - high * f_low) / (f_high - f_low)
        guess = np.where(np.isfinite(guess) & (guess > low) & (guess < high), guess, 0.5 * (low + high))
        (p_guess,) = model_price(rows, guess)
        f_guess = gap(p_guess, rows)
        done = np.abs(p_guess - target_prices[rows]) <= price_tolerance
        spread[rows[done]], model[rows[done]] = guess[done], p_guess[done]
        status[rows[done]] = CONVERGED
        above = f_guess > 0  # the root lies above the guess: the guess is the new low end
        f_high = np.where(above & (side == 1), 0.5 * f_high, f_high)
        f_low = np.where(~above & (side == -1), 0.5 * f_low, f_low)
        low, f_low = np.where(above, guess, low), np.where(above, f_guess, f_low)
        high, f_high = np.where(above, high, guess), np.where(above, f_high, f_guess)
        side = np.where(above, 1, -1).astype(np.int8)
        keep = ~done
        rows, low, high, f_low, f_high, side = rows[keep], low[keep], high[keep], f_low[keep], f_high[keep], side[keep]
        spread[rows] = np.where(np.abs(f_low) < np.abs(f_high), low, high)
    status[rows] = NO_CONVERGENCE
    if rows.size:
        (model[rows],) = model_price(rows, spread[rows])
        iterations[rows] -= 1  # the report's pricing is not an iteration
    if progress is not None:
        progress(float(n), float(n))
    return OASResult(oas=spread, price=model, iterations=iterations, status=status.astype(str), pricings=pricings)


__all__ = ["CONVERGED", "NO_CONVERGENCE", "OUTSIDE", "OASResult", "oas"]
