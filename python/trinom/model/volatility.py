"""Black (optionally shifted lognormal) and Bachelier (normal) option prices, and their implied volatilities,
vectorised over a batch: the formulas that turn quoted swaption and caplet volatilities into prices.

With forward ``F``, strike ``K``, expiry ``T`` (years), volatility ``s``, annuity ``A`` (a swaption's fixed-leg
annuity ``sum tau_i P(0, t_i)``, or a caplet's ``tau P(0, t_pay)``; 1 for undiscounted prices) and ``w = +1`` for a
call (a payer swaption, a caplet) or ``-1`` for a put (a receiver swaption, a floorlet)::

    Black (shift d):  v = s sqrt(T),  d1 = ln((F + d) / (K + d)) / v + v / 2,  d2 = d1 - v
                      price = A w ((F + d) N(w d1) - (K + d) N(w d2))
    Bachelier:        v = s sqrt(T),  h = w (F - K) / v
                      price = A (w (F - K) N(h) + v n(h))

These are QuantLib's ``blackFormula(type, K, F, v, A, d)`` and ``bachelierBlackFormula(type, K, F, v, A)``.
A zero volatility or expiry gives the discounted intrinsic value.

Implied volatilities invert them element by element, all at once: the price is reduced to the out-of-the-money
option's (put-call parity) and, for Bachelier, solved for ``z = |F - K| / v`` with Newton's method on
``log(n(z) / z - N(-z))`` in ``log z`` (nearly linear near the money, nearly quadratic far from it), for Black
with Newton's method on the log of the normalised out-of-the-money price in ``v``; both are kept inside a
bracket that bisection narrows whenever a Newton step would leave it, so every price inside the arbitrage
bounds converges (to about 1e-14 relative in the price). A price outside the bounds (below the intrinsic value,
or at or above the forward for a Black call) gives NaN.

>>> round(float(bachelier_price(forward=0.03, strike=0.03, expiry=2.0, vol=0.01, annuity=4.5)), 10)
0.0253885313
>>> float(bachelier_implied_vol(price=0.0253885313, forward=0.03, strike=0.03, expiry=2.0, annuity=4.5)).__round__(8)
0.01
>>> p = black_price(forward=0.03, strike=0.035, expiry=1.0, vol=0.2, shift=0.01, is_call=False)
>>> round(float(black_implied_vol(price=p, forward=0.03, strike=0.035, expiry=1.0, shift=0.01, is_call=False)), 12)
0.2
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt


def _erfc(x: np.ndarray) -> np.ndarray:
    """``math.erfc`` element by element (the C library's: accurate in both tails)."""
    flat = np.asarray(x, dtype=np.float64).reshape(-1)
    return np.fromiter(map(math.erfc, flat.tolist()), dtype=np.float64, count=flat.size).reshape(np.shape(x))


_SQRT2: Final[float] = math.sqrt(2.0)
_SQRT2PI: Final[float] = math.sqrt(2.0 * math.pi)
#: The most iterations an implied-volatility solve takes (it converges in far fewer).
MAX_ITERATIONS: Final[int] = 100


def normal_cdf(x: npt.ArrayLike) -> np.ndarray:
    """The standard normal distribution function, accurate in both tails (``erfc``).

    >>> normal_cdf([0.0, -3.0]).round(8).tolist()
    [0.5, 0.0013499]
    """
    return 0.5 * _erfc(-np.asarray(x, dtype=np.float64) / _SQRT2)


def normal_pdf(x: npt.ArrayLike) -> np.ndarray:
    """The standard normal density.

    >>> round(float(normal_pdf(0.0)), 12)
    0.398942280401
    """
    x = np.asarray(x, dtype=np.float64)
    return np.exp(-0.5 * x * x) / _SQRT2PI


def _sign(is_call: npt.ArrayLike) -> np.ndarray:
    return np.where(np.asarray(is_call, dtype=bool), 1.0, -1.0)


def black_stdev_price(*, forward: npt.ArrayLike, strike: npt.ArrayLike, stdev: npt.ArrayLike,
                      is_call: npt.ArrayLike = True) -> np.ndarray:
    """Undiscounted Black price with the total standard deviation ``stdev`` (``s sqrt(T)``); the intrinsic value
    where ``stdev`` is 0, and ``forward`` (call) or 0 (put) where the strike is 0.

    >>> round(float(black_stdev_price(forward=0.9, strike=0.95, stdev=0.02, is_call=False)), 12)
    0.050019389556
    """
    F, K, v, w = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (forward, strike, stdev)),
                                     _sign(is_call))
    live = (v > 0) & (K > 0)
    safe_v = np.where(live, v, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d1 = np.log(np.where(live, F / np.where(live, K, 1.0), 1.0)) / safe_v + 0.5 * safe_v
    d2 = d1 - safe_v
    price = w * (F * normal_cdf(w * d1) - K * normal_cdf(w * d2))
    intrinsic = np.maximum(w * (F - K), 0.0)
    return np.where(live, price, np.where(K == 0, np.where(w > 0, F, 0.0), intrinsic))


def black_price(*, forward: npt.ArrayLike, strike: npt.ArrayLike, expiry: npt.ArrayLike, vol: npt.ArrayLike,
                annuity: npt.ArrayLike = 1.0, shift: npt.ArrayLike = 0.0, is_call: npt.ArrayLike = True) -> np.ndarray:
    """Black's price, shifted lognormal with ``shift`` (``F + shift`` and ``K + shift`` must be > 0 where the
    volatility is positive), times ``annuity``; arrays broadcast.

    >>> round(float(black_price(forward=0.03, strike=0.03, expiry=1.0, vol=0.2, annuity=4.0)), 12)
    0.009558680946
    """
    F, K, T, s, A, d = (np.asarray(x, dtype=np.float64) for x in (forward, strike, expiry, vol, annuity, shift))
    stdev = s * np.sqrt(np.maximum(T, 0.0))
    return A * black_stdev_price(forward=F + d, strike=K + d, stdev=stdev, is_call=is_call)


def bachelier_price(*, forward: npt.ArrayLike, strike: npt.ArrayLike, expiry: npt.ArrayLike, vol: npt.ArrayLike,
                    annuity: npt.ArrayLike = 1.0, is_call: npt.ArrayLike = True) -> np.ndarray:
    """Bachelier's (normal) price times ``annuity``; ``vol`` in absolute rate units (0.01 is 100 basis points).

    >>> round(float(bachelier_price(forward=0.03, strike=0.025, expiry=1.0, vol=0.01, is_call=False)), 12)
    0.001977965574
    """
    F, K, T, s, A = (np.asarray(x, dtype=np.float64) for x in (forward, strike, expiry, vol, annuity))
    w = _sign(is_call)
    v = s * np.sqrt(np.maximum(T, 0.0))
    d = w * (F - K)
    live = v > 0
    safe_v = np.where(live, v, 1.0)
    h = d / safe_v
    return A * np.where(live, d * normal_cdf(h) + safe_v * normal_pdf(h), np.maximum(d, 0.0))


def bachelier_vega(*, forward: npt.ArrayLike, strike: npt.ArrayLike, expiry: npt.ArrayLike, vol: npt.ArrayLike,
                   annuity: npt.ArrayLike = 1.0) -> np.ndarray:
    """``d price / d vol`` of Bachelier's price (the same for calls and puts): ``A sqrt(T) n((F - K) / v)``.

    >>> round(float(bachelier_vega(forward=0.03, strike=0.03, expiry=4.0, vol=0.01)), 12)
    0.797884560803
    """
    F, K, T, s, A = (np.asarray(x, dtype=np.float64) for x in (forward, strike, expiry, vol, annuity))
    root_t = np.sqrt(np.maximum(T, 0.0))
    v = np.maximum(s * root_t, 1e-300)
    return A * root_t * normal_pdf((F - K) / v)


def black_vega(*, forward: npt.ArrayLike, strike: npt.ArrayLike, expiry: npt.ArrayLike, vol: npt.ArrayLike,
               annuity: npt.ArrayLike = 1.0, shift: npt.ArrayLike = 0.0) -> np.ndarray:
    """``d price / d vol`` of Black's price (calls and puts alike): ``A (F + d) sqrt(T) n(d1)``.

    >>> round(float(black_vega(forward=0.03, strike=0.03, expiry=1.0, vol=0.2)), 12)
    0.011908576424
    """
    F, K, T, s, A, d = (np.asarray(x, dtype=np.float64) for x in (forward, strike, expiry, vol, annuity, shift))
    root_t = np.sqrt(np.maximum(T, 0.0))
    v = np.maximum(s * root_t, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        d1 = np.log((F + d) / (K + d)) / v + 0.5 * v
    return A * (F + d) * root_t * normal_pdf(d1)


# --- implied volatilities ------------------------------------------------------------------------------------

def bachelier_implied_vol(*, price: npt.ArrayLike, forward: npt.ArrayLike, strike: npt.ArrayLike,
                          expiry: npt.ArrayLike, annuity: npt.ArrayLike = 1.0,
                          is_call: npt.ArrayLike = True) -> np.ndarray:
    """The normal volatility that gives ``price`` under :func:`bachelier_price`; NaN where no volatility does
    (a price below the intrinsic value, a non-positive expiry or annuity, non-finite input); 0 at the intrinsic
    value.

    >>> p = bachelier_price(forward=0.02, strike=[0.01, 0.02, 0.05], expiry=3.0, vol=0.007)
    >>> bachelier_implied_vol(price=p, forward=0.02, strike=[0.01, 0.02, 0.05], expiry=3.0).round(14).tolist()
    [0.007, 0.007, 0.007]
    """
    P, F, K, T, A = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in
                                          (price, forward, strike, expiry, annuity)))
    w = np.broadcast_to(_sign(is_call), P.shape)
    shape = P.shape
    P, F, K, T, A, w = (x.reshape(-1) for x in (P, F, K, T, A, w))
    out = np.full(P.shape, np.nan)
    ok = np.isfinite(P) & np.isfinite(F) & np.isfinite(K) & (T > 0) & np.isfinite(T) & (A > 0) & np.isfinite(A)
    undiscounted = np.where(ok, P / np.where(ok, A, 1.0), 0.0)
    intrinsic = np.maximum(w * (F - K), 0.0)
    time_value = undiscounted - intrinsic  # the out-of-the-money option's price (put-call parity)
    x = np.abs(F - K)
    at_intrinsic = ok & (np.abs(time_value) <= 4e-16 * np.abs(undiscounted))  # nothing above the rounding
    out[at_intrinsic] = 0.0
    live = ok & (time_value > 0) & ~at_intrinsic
    atm = live & (x == 0)
    out[atm] = time_value[atm] * _SQRT2PI / np.sqrt(T[atm])
    rest = np.flatnonzero(live & (x > 0))
    if rest.size:
        z = _solve_normal_z(time_value[rest] / x[rest])
        out[rest] = x[rest] / z / np.sqrt(T[rest])
    return out.reshape(shape)


def _normal_g(z: np.ndarray) -> np.ndarray:
    """``g(z) = n(z) / z - N(-z)``: the out-of-the-money Bachelier price over ``|F - K|`` at ``z = |F - K| / v``."""
    return normal_pdf(z) / z - normal_cdf(-z)


def _solve_normal_z(target: np.ndarray) -> np.ndarray:
    """``z > 0`` with ``g(z) = target`` (``g`` falls from infinity to 0): safeguarded Newton in ``log z`` on
    ``log g``."""
    log_target = np.log(target)
    # Near the money g ~ 1 / (z sqrt(2 pi)) - 1/2; far from it g ~ n(z) / z^3.
    near = 1.0 / (_SQRT2PI * (target + 0.5))
    far_arg = np.maximum(-2.0 * (log_target + 0.5 * math.log(2.0 * math.pi)), 1.0)
    far = np.sqrt(far_arg)
    for _ in range(3):
        far = np.sqrt(np.maximum(far_arg - 6.0 * np.log(far), 1e-6))
    y = np.log(np.where(target > 0.05, near, far))  # y = log z
    lo = np.full(y.shape, -np.inf)
    hi = np.full(y.shape, np.inf)
    active = np.ones(y.shape, dtype=bool)
    for _ in range(MAX_ITERATIONS):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        yy = y[idx]
        z = np.exp(yy)
        g = _normal_g(z)
        with np.errstate(divide="ignore", invalid="ignore"):
            residual = np.log(np.maximum(g, 1e-320)) - log_target[idx]
            slope = -normal_pdf(z) / (z * np.maximum(g, 1e-320))  # d log g / d log z
        # log g falls as z grows: a positive residual means z is too small
        lo[idx] = np.where(residual > 0, np.maximum(lo[idx], yy), lo[idx])
        hi[idx] = np.where(residual < 0, np.minimum(hi[idx], yy), hi[idx])
        step = -residual / slope
        newton = yy + step
        inside = (newton > lo[idx]) & (newton < hi[idx]) & np.isfinite(newton)
        both = np.isfinite(lo[idx]) & np.isfinite(hi[idx])
        fallback = np.where(both, 0.5 * (lo[idx] + hi[idx]), np.where(residual > 0, yy + 1.0, yy - 1.0))
        done = (np.abs(residual) <= 4e-15) | (inside & (np.abs(step) <= 1e-15 * np.maximum(1.0, np.abs(yy))))
        y[idx] = np.where(inside, newton, np.where(done, yy, fallback))
        active[idx[done]] = False
    return np.exp(y)


def black_implied_vol(*, price: npt.ArrayLike, forward: npt.ArrayLike, strike: npt.ArrayLike,
                      expiry: npt.ArrayLike, annuity: npt.ArrayLike = 1.0, shift: npt.ArrayLike = 0.0,
                      is_call: npt.ArrayLike = True) -> np.ndarray:
    """The (shifted) lognormal volatility that gives ``price`` under :func:`black_price`; NaN where none does
    (``F + shift`` or ``K + shift`` not positive, a price outside the bounds, a non-positive expiry or annuity).

    >>> strikes = [0.01, 0.03, 0.08]
    >>> p = black_price(forward=0.03, strike=strikes, expiry=2.0, vol=0.35, annuity=1.9)
    >>> black_implied_vol(price=p, forward=0.03, strike=strikes, expiry=2.0, annuity=1.9).round(12).tolist()
    [0.35, 0.35, 0.35]
    """
    P, F, K, T, A, d = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in
                                             (price, forward, strike, expiry, annuity, shift)))
    w = np.broadcast_to(_sign(is_call), P.shape)
    shape = P.shape
    P, F, K, T, A, d, w = (x.reshape(-1) for x in (P, F, K, T, A, d, w))
    out = np.full(P.shape, np.nan)
    Fs, Ks = F + d, K + d
    ok = (np.isfinite(P) & (Fs > 0) & (Ks > 0) & np.isfinite(Fs) & np.isfinite(Ks) & (T > 0) & np.isfinite(T)
          & (A > 0) & np.isfinite(A))
    undiscounted = np.where(ok, P / np.where(ok, A, 1.0), 0.0)
    intrinsic = np.maximum(w * (Fs - Ks), 0.0)
    time_value = undiscounted - intrinsic  # the out-of-the-money option's price
    root_fk = np.sqrt(np.where(ok, Fs * Ks, 1.0))
    beta = time_value / root_fk  # normalised out-of-the-money price
    x = -np.abs(np.log(np.where(ok, Fs / Ks, 1.0)))  # <= 0
    upper = np.exp(0.5 * x)  # the normalised price as the volatility grows without bound
    at_intrinsic = ok & (np.abs(time_value) <= 4e-16 * np.abs(undiscounted))  # nothing above the rounding
    out[at_intrinsic] = 0.0
    live = np.flatnonzero(ok & ~at_intrinsic & (beta > 0) & (beta < upper))
    if live.size:
        v = _solve_black_stdev(beta[live], x[live])
        out[live] = v / np.sqrt(T[live])
    return out.reshape(shape)


def _normalised_black(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The normalised out-of-the-money call ``e^(x/2) N(x/v + v/2) - e^(-x/2) N(x/v - v/2)`` for ``x <= 0``."""
    h = x / v
    return np.exp(0.5 * x) * normal_cdf(h + 0.5 * v) - np.exp(-0.5 * x) * normal_cdf(h - 0.5 * v)


def _solve_black_stdev(beta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``v > 0`` with ``_normalised_black(x, v) = beta``: Newton on ``log b(v)`` from the inflection point
    ``sqrt(2 |x|)``, kept in a bracket that bisection narrows."""
    log_beta = np.log(beta)
    v = np.sqrt(2.0 * np.abs(x))
    at_money = v == 0
    # at the money b(v) = 2 N(v/2) - 1: a good start from its inverse's small-volatility limit
    v = np.where(at_money, beta * _SQRT2PI, v)
    v = np.maximum(v, 1e-8)
    lo = np.zeros(v.shape)
    hi = np.full(v.shape, np.inf)
    active = np.ones(v.shape, dtype=bool)
    for _ in range(MAX_ITERATIONS):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        vv, xx = v[idx], x[idx]
        b = _normalised_black(xx, vv)
        vega = np.exp(0.5 * xx) * normal_pdf(xx / vv + 0.5 * vv)
        with np.errstate(divide="ignore", invalid="ignore"):
            residual = np.log(np.maximum(b, 1e-320)) - log_beta[idx]
            slope = vega / np.maximum(b, 1e-320)
        lo[idx] = np.where(residual < 0, np.maximum(lo[idx], vv), lo[idx])
        hi[idx] = np.where(residual > 0, np.minimum(hi[idx], vv), hi[idx])
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = vv - residual / slope
        inside = (newton > lo[idx]) & (newton < hi[idx]) & np.isfinite(newton)
        fallback = np.where(np.isfinite(hi[idx]), 0.5 * (lo[idx] + hi[idx]), 2.0 * vv)
        done = (np.abs(residual) <= 4e-15) | (inside & (np.abs(newton - vv) <= 1e-15 * vv))
        v[idx] = np.where(inside, newton, np.where(done, vv, fallback))
        active[idx[done]] = False
    return v
