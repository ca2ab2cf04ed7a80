"""Piecewise-constant sigma bootstrapped to co-terminal swaptions (issue 37, item 4: ORE's "bootstrap" of a
Bermudan's model, QuantLib's ``Gsr.calibrateVolatilitiesIterative``), every trade at once.

A trade's basket holds European swaptions expiring at ``T_1 < ... < T_m`` (its exercise dates) with market prices;
``a`` is fixed. The piece of sigma ending at ``T_i`` is fitted to the swaption expiring there, in order. With ``a``
constant a European swaption's Hull-White price depends on sigma only through the short rate's variance ``V(T_i)``
(:mod:`trinom.model.sigma`), and the variance grows piece by piece:

    V(T_i) = V(T_{i-1}) exp(-2 a (T_i - T_{i-1})) + sigma_i^2 (1 - exp(-2 a (T_i - T_{i-1}))) / (2 a)

So each quote's variance is found on its own (the constant sigma that reprices it alone, ``V = sigma^2 (1 -
exp(-2 a T)) / (2 a)``: one batched Brent search over every quote of every trade), and the pieces follow from the
differences. A quote whose variance is below what the earlier pieces already give it cannot be reached with a
positive sigma: its piece is ``bound`` (at :data:`MIN_SIGMA`) and the next pieces start from what that leaves. The
last piece holds on after ``T_m``.

>>> from trinom.model import DatedCurve, Swaptions
>>> curve = DatedCurve(as_of="2025-01-02", dates=["2040-01-02"], zero_rates=[0.03])
>>> s = Swaptions.on_curve(curve, exercise=["2026-01-02", "2027-01-02"], end="2035-01-02")
>>> prices = s.price(a=0.05, sigma=Sigma(times=[[1.0]], values=[[0.009, 0.011]]))
>>> fit = bootstrap_sigma(s, prices, trade=[0, 0], a=0.05)
>>> fit.sigma.values.round(10).tolist(), fit.status.tolist()
([[0.009, 0.011]], ['fitted', 'fitted'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .hull_white import bond_factor, brent_roots
from .rate_options import Swaptions
from .sigma import Sigma

#: The smallest and largest sigma a piece may take (a piece below the smallest is ``bound``).
MIN_SIGMA: Final[float] = 1e-6
MAX_SIGMA: Final[float] = 0.5
#: The Brent search's accuracy on a quote's own sigma.
SIGMA_ACCURACY: Final[float] = 1e-14


@dataclass(frozen=True, eq=False)
class Bootstrap:
    """A bootstrap's result: per trade its step function, per quote (piece) how it was fitted.

    Attributes:
      sigma: one step function a trade (pieces ending at its quotes' expiries but the last; padded with the last
        value and ``inf`` times where a trade has fewer quotes).
      status: per quote, ``fitted``, ``bound`` (its price is below what the earlier pieces give it: its piece at
        :data:`MIN_SIGMA`) or ``no fit`` (its price is out of the model's reach with one sigma in
        ``MIN_SIGMA..MAX_SIGMA``).
      quote_sigma: per quote, the constant sigma that reprices it alone.
    """

    sigma: Sigma
    status: np.ndarray
    quote_sigma: np.ndarray


def bootstrap_sigma(swaptions: Swaptions, market_price: npt.ArrayLike, *, trade: npt.ArrayLike,
                    a: npt.ArrayLike) -> Bootstrap:
    """Fit each trade's piecewise-constant sigma to its co-terminal swaptions (see the module).

    Args:
      swaptions: the quotes' European swaptions (:class:`~trinom.model.Swaptions`), trade by trade, each trade's in
        expiry order.
      market_price: per quote, in the swaptions' units.
      trade: per quote, its trade (0, 1, ...; ascending).
      a: the mean reversion, per trade or one for all (> 0).
    """
    price = np.asarray(market_price, dtype=np.float64).reshape(-1)
    owner = np.asarray(trade, dtype=np.int64).reshape(-1)
    n = len(swaptions)
    if price.size != n or owner.size != n:
        raise InputError([(None, "market_price", f"{n} swaptions, {price.size} prices and {owner.size} trades: give "
                           "one price and one trade a swaption")])
    if n and (np.any(np.diff(owner) < 0) or owner[0] != 0):
        raise InputError([(None, "trade", "the quotes go trade by trade, the trades numbered 0, 1, ... in order")])
    trades = int(owner.max()) + 1 if n else 0
    a_trade = np.broadcast_to(np.asarray(a, dtype=np.float64), (trades,))
    if np.any(~(a_trade > 0)):
        raise InputError([(None, "a", "a must be > 0 for every trade")])
    expiry = swaptions.exercise
    later = np.ones(n, dtype=bool)
    later[1:] = (owner[1:] != owner[:-1]) | (expiry[1:] > expiry[:-1])
    if not later.all():
        raise InputError([(int(np.flatnonzero(~later)[0]), "exercise", "a trade's swaptions must expire in increasing "
                           "order: one piece of sigma a date")])
    a_quote = a_trade[owner]

    def excess(s: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return swaptions.take(rows).price(a=a_quote[rows], sigma=s, root="exact") - price[rows]

    own, _evaluations = brent_roots(excess, size=n, lower=MIN_SIGMA, upper=MAX_SIGMA, guess=0.01,
                                    accuracy=SIGMA_ACCURACY)
    variance = own ** 2 * bond_factor(a=2.0 * a_quote, tau=expiry)
    status = np.where(np.isfinite(own), "fitted", "no fit").astype(object)
    first = np.ones(n, dtype=bool)
    first[1:] = owner[1:] != owner[:-1]
    width = int(np.bincount(owner, minlength=trades).max()) if n else 1
    values = np.full((trades, width), np.nan)
    times = np.full((trades, max(width - 1, 0)), np.inf)
    column = np.arange(n) - np.searchsorted(owner, owner)
    previous_v = np.zeros(n)
    previous_t = np.zeros(n)
    carried = np.zeros(trades)  # per trade, V at its last expiry so far
    carried_t = np.zeros(trades)
    for k in range(width):  # piece k of every trade at once
        rows = np.flatnonzero(column == k)
        t_row, o = expiry[rows], owner[rows]
        previous_v[rows], previous_t[rows] = carried[o], carried_t[o]
        decay = np.exp(-2.0 * a_quote[rows] * (t_row - carried_t[o]))
        span = bond_factor(a=2.0 * a_quote[rows], tau=t_row - carried_t[o])
        left = variance[rows] - carried[o] * decay
        ok = np.isfinite(left) & (left > (MIN_SIGMA ** 2) * span)
        piece = np.where(ok, np.sqrt(np.where(ok, left, 1.0) / span), MIN_SIGMA)
        status[rows[~ok & (status[rows] == "fitted")]] = "bound"
        values[o, k] = piece
        if k < width - 1:
            times[o, k] = t_row
        carried[o] = carried[o] * decay + piece ** 2 * span
        carried_t[o] = t_row
    # a trade with fewer quotes: its last piece holds on (its padding repeats it, its times stay inf)
    last = np.bincount(owner, minlength=trades) - 1 if n else np.zeros(0, dtype=np.int64)
    for k in range(width):
        short = last < k
        values[short, k] = values[short, np.maximum(last[short], 0)]
    has_quotes = np.bincount(owner, minlength=trades) > 0 if n else np.zeros(0, dtype=bool)
    ends = np.where(np.arange(max(width - 1, 0))[None, :] < last[:, None], times, np.inf) if width > 1 else times
    made = object.__new__(Sigma)
    object.__setattr__(made, "times", ends)
    object.__setattr__(made, "values", np.where(has_quotes[:, None], values, np.nan))
    return Bootstrap(sigma=made, status=status, quote_sigma=own)


__all__ = ["MAX_SIGMA", "MIN_SIGMA", "SIGMA_ACCURACY", "Bootstrap", "bootstrap_sigma"]
