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
#: The search's outcomes (index 0: none, the bond's message stands).
LABELS = ("", CONVERGED, OUTSIDE, NO_CONVERGENCE)
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
    status = np.full(n, "", dtype=object)  # an input's or the pricer's message
    state = np.zeros(n, dtype=np.int8)  # else the search's outcome: an index of LABELS (0: none yet)
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
            progress(float(np.count_nonzero((state != 0) | (status != ""))), float(n))
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

    # The start: the gap at the bond's own spread and 1 bp above it. Then every iteration prices one spread
    # per bond: the secant through its last two points (the gap is nearly linear in the spread, so the
    # first step is nearly Newton's and the next ones converge superlinearly), kept inside the bracket of
    # the points whose gaps have opposite signs, known as soon as both signs are seen; false position on
    # that bracket where the secant leaves it, bisection after three moves of the same end. Before both
    # signs are seen an end of ``bracket`` stands in, and a step that reaches it and keeps the sign means
    # the price is outside the attainable range.
    own = np.clip(bonds.spread[rows].astype(np.float64), bracket[0], bracket[1] - START_STEP)
    p_own, p_next = model_price(rows, own, own + START_STEP)
    f_own, f_next = gap(p_own, rows), gap(p_next, rows)
    failed = pricer.error[rows] != ""
    status[rows[failed]] = pricer.error[rows][failed]
    overflow = ~failed & ~(np.isfinite(p_own) & np.isfinite(p_next))
    status[rows[overflow]] = "the model price leaves the floating-point range inside the bracket"
    failed |= overflow
    for x, f, p_x in ((own, f_own, p_own), (own + START_STEP, f_next, p_next)):  # (and relatively close)
        done = ~failed & (np.abs(p_x - target_prices[rows]) <= price_tolerance) & (np.abs(f) <= 1e-12)
        done &= state[rows] == 0
        spread[rows[done]], model[rows[done]], state[rows[done]] = x[done], p_x[done], LABELS.index(CONVERGED)
    keep = ~failed & (state[rows] == 0)
    rows, x0, f0, f1 = rows[keep], own[keep], f_own[keep], f_next[keep]
    x1 = x0 + START_STEP
    # The bracket: the highest point with a gap >= 0 and the lowest with a gap <= 0 (+-inf: none yet).
    low = np.where(f1 >= 0, x1, np.where(f0 >= 0, x0, bracket[0]))
    high = np.where(f0 <= 0, x0, np.where(f1 <= 0, x1, bracket[1]))
    f_low = np.where(f1 >= 0, f1, np.where(f0 >= 0, f0, np.inf))
    f_high = np.where(f0 <= 0, f0, np.where(f1 <= 0, f1, -np.inf))
    same = np.zeros(rows.size, dtype=np.int64)  # signed run of moves of one end (+: low, -: high)
    for _ in range(max_iterations):
        if rows.size == 0:
            break
        known = np.isfinite(f_low) & np.isfinite(f_high)
        with np.errstate(divide="ignore", invalid="ignore"):
            secant = x1 - f1 * (x1 - x0) / (f1 - f0)
            position = (low * f_high - high * f_low) / (f_high - f_low)
        inside = np.isfinite(secant) & (secant > low) & (secant < high)
        guess = np.where(inside, secant, np.where(known, position, np.clip(secant, low, high)))
        fine = np.isfinite(guess) & (guess >= low) & (guess <= high) & (~known | ((guess > low) & (guess < high)))
        guess = np.where(fine & (np.abs(same) < 3), guess, 0.5 * (low + high))
        (p_guess,) = model_price(rows, guess)
        f_guess = gap(p_guess, rows)
        done = np.abs(p_guess - target_prices[rows]) <= price_tolerance
        spread[rows[done]], model[rows[done]] = guess[done], p_guess[done]
        state[rows[done]] = LABELS.index(CONVERGED)
        beyond = ~done & (((guess >= bracket[1]) & (f_guess > 0)) | ((guess <= bracket[0]) & (f_guess < 0)))
        state[rows[beyond]] = LABELS.index(OUTSIDE)
        above = f_guess > 0  # the root lies above the guess: the guess is the new low end
        same = np.where(above, np.maximum(same, 0) + 1, np.minimum(same, 0) - 1) * known
        low, f_low = np.where(above, guess, low), np.where(above, f_guess, f_low)
        high, f_high = np.where(above, high, guess), np.where(above, f_high, f_guess)
        x0, f0, x1, f1 = x1, f1, guess, f_guess
        keep = ~done & ~beyond
        rows, low, high, f_low, f_high = rows[keep], low[keep], high[keep], f_low[keep], f_high[keep]
        x0, f0, x1, f1, same = x0[keep], f0[keep], x1[keep], f1[keep], same[keep]
        spread[rows] = np.where(np.abs(f_low) < np.abs(f_high), low, high)
    state[rows] = LABELS.index(NO_CONVERGENCE)
    if rows.size:
        (model[rows],) = model_price(rows, spread[rows])
        iterations[rows] -= 1  # the report's pricing is not an iteration
    if progress is not None:
        progress(float(n), float(n))
    return OASResult(oas=spread, price=model, iterations=iterations, status=_statuses(state, status), pricings=pricings)


def _statuses(state: np.ndarray, messages: np.ndarray) -> np.ndarray:
    """Each bond's status (Python strings in an object array, as pandas holds text): its outcome's label,
    or its message where the search never ran; a gather, not a conversion per bond."""
    rare = np.flatnonzero(state == 0)
    out = np.array(LABELS, dtype=object)[state]
    out[rare] = messages[rare]
    return out


__all__ = ["CONVERGED", "NO_CONVERGENCE", "OUTSIDE", "OASResult", "oas"]
