"""Option-adjusted spreads from market prices, a whole book at once (issue 14, item 3).

:func:`oas` solves every bond's spread (the unit of :attr:`BondPortfolio.spread`: percent per year,
continuous, 1.0 = 100 bp) so that the model price equals the market price. The model price falls as the
spread rises, nearly exponentially, so each bond's root is bracketed and found by a safeguarded secant on
``log(model / market)``, nearly linear in the spread (false position and bisection keep it in the bracket). The book is validated
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
#: The first step from a bond's own spread, for its slope (percent: 1 bp).
START_STEP = 0.01


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
        if progress is not None:  # the bonds done: converged or given up
            progress(float(np.count_nonzero(status != "")), float(n))
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

    # The start: the gap at the bond's own spread and 1 bp above it gives its slope, and a Newton step from
    # there a guess; the guess +- a fiftieth of the step (at least 0.1 bp) nearly always brackets the root
    # (the gap is nearly linear). The bracket is the tightest pair of these four points around the root; an
    # end that none gives moves out to ``bracket``'s (one more pricing of those bonds only).
    own = np.clip(bonds.spread[rows].astype(np.float64), bracket[0], bracket[1] - START_STEP)
    p_own, p_next = model_price(rows, own, own + START_STEP)
    f_own, f_next = gap(p_own, rows), gap(p_next, rows)
    failed = pricer.error[rows] != ""
    status[rows[failed]] = pricer.error[rows][failed]
    overflow = ~failed & ~(np.isfinite(p_own) & np.isfinite(p_next))
    status[rows[overflow]] = "the model price leaves the floating-point range inside the bracket"
    failed |= overflow
    with np.errstate(divide="ignore", invalid="ignore"):
        newton = own - f_own * START_STEP / (f_next - f_own)
    newton = np.clip(np.where(np.isfinite(newton), newton, own), bracket[0], bracket[1])
    width = np.maximum(np.abs(newton - own) / 50, START_STEP / 100)
    near = np.flatnonzero(~failed)
    below, above = np.clip(newton - width, *bracket), np.clip(newton + width, *bracket)
    p_below, p_above = model_price(rows[near], below[near], above[near])
    xs = np.stack([own, own + START_STEP, below, above])
    fs = np.stack([f_own, f_next, np.full(rows.size, np.nan), np.full(rows.size, np.nan)])
    fs[2, near], fs[3, near] = gap(p_below, rows[near]), gap(p_above, rows[near])
    with np.errstate(invalid="ignore"):
        root_above = np.where(fs >= 0, xs, -np.inf)  # points below the root: the low end is the highest
        root_below = np.where(fs <= 0, xs, np.inf)
    pick_low, pick_high = root_above.argmax(axis=0), root_below.argmin(axis=0)
    columns = np.arange(rows.size)
    low, f_low = xs[pick_low, columns], fs[pick_low, columns]
    high, f_high = xs[pick_high, columns], fs[pick_high, columns]
    f_low = np.where(np.isfinite(root_above[pick_low, columns]), f_low, -1.0)  # no low end yet
    f_high = np.where(np.isfinite(root_below[pick_high, columns]), f_high, 1.0)  # no high end yet
    low = np.where(f_low >= 0, low, bracket[0])
    high = np.where(f_high <= 0, high, bracket[1])
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
    # Each iteration: the secant through the bond's last two points where it falls inside the bracket (the
    # gap is nearly linear in the spread, so it converges in a few steps), else false position on the
    # bracket; bisection after three moves of the same end (the bracket must shrink from both sides).
    x0, f0, x1, f1 = low.copy(), f_low.copy(), high.copy(), f_high.copy()
    same = np.zeros(rows.size, dtype=np.int64)  # signed run of moves of one end (+: low, -: high)
    for _ in range(max_iterations):
        if rows.size == 0:
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            secant = x1 - f1 * (x1 - x0) / (f1 - f0)
            position = (low * f_high - high * f_low) / (f_high - f_low)
        inside = np.isfinite(secant) & (secant > low) & (secant < high)
        guess = np.where(inside, secant, position)
        guess = np.where(np.isfinite(guess) & (guess > low) & (guess < high) & (np.abs(same) < 3), guess,
                         0.5 * (low + high))
        (p_guess,) = model_price(rows, guess)
        f_guess = gap(p_guess, rows)
        done = np.abs(p_guess - target_prices[rows]) <= price_tolerance
        spread[rows[done]], model[rows[done]] = guess[done], p_guess[done]
        status[rows[done]] = CONVERGED
        above = f_guess > 0  # the root lies above the guess: the guess is the new low end
        same = np.where(above, np.maximum(same, 0) + 1, np.minimum(same, 0) - 1)
        low, f_low = np.where(above, guess, low), np.where(above, f_guess, f_low)
        high, f_high = np.where(above, high, guess), np.where(above, f_high, f_guess)
        x0, f0, x1, f1 = x1, f1, guess, f_guess
        keep = ~done
        rows, low, high, f_low, f_high = rows[keep], low[keep], high[keep], f_low[keep], f_high[keep]
        x0, f0, x1, f1, same = x0[keep], f0[keep], x1[keep], f1[keep], same[keep]
        spread[rows] = np.where(np.abs(f_low) < np.abs(f_high), low, high)
    status[rows] = NO_CONVERGENCE
    if rows.size:
        (model[rows],) = model_price(rows, spread[rows])
        iterations[rows] -= 1  # the report's pricing is not an iteration
    if progress is not None:
        progress(float(n), float(n))
    return OASResult(oas=spread, price=model, iterations=iterations, status=status.astype(str), pricings=pricings)


__all__ = ["CONVERGED", "NO_CONVERGENCE", "OUTSIDE", "OASResult", "oas"]
