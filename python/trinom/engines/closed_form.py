"""Hull-White analytic price of a European option on a zero-coupon bond (Jamshidian; Hull ch. 30).

The trinomial tree converges to this price as the number of steps grows, so it is the
independent check of every backend (see ``docs/convergence.md``): an analytic engine of option books, beside the
tree engines (the formulas of the model's other closed forms are :mod:`trinom.model.hull_white`'s).

With ``P(0, t) = exp(-R(t) t)`` from the yield curve, option expiry ``T``, bond maturity
``s``, face ``L = 100`` and strike ``X``::

    sigma_P = sigma / a * (1 - exp(-a (s - T))) * sqrt((1 - exp(-2 a T)) / (2 a))
    h       = ln(L P(0, s) / (X P(0, T))) / sigma_P + sigma_P / 2
    call    = L P(0, s) N(h) - X P(0, T) N(h - sigma_P)
    put     = X P(0, T) N(-h + sigma_P) - L P(0, s) N(-h)

>>> import trinom
>>> book = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
...                         term_steps=[12], a=[0.1], sigma=[0.01], option_type=["put"])
>>> round(float(zero_coupon_bond_option(book)[0]), 4)
1.8093
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..instruments.columns import show
from ..instruments.option import Portfolio
from ..lattice.constants import CALL, DAYS_IN_YEAR, FACE_VALUE, PUT
from ..model.curve import YieldCurve

_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def normal_cdf(x: npt.ArrayLike) -> np.ndarray:
    """The standard normal distribution function ``N(x)``, accurate in both tails (via ``erfc``).

    >>> normal_cdf([0.0, -1.0]).round(6).tolist()
    [0.5, 0.158655]
    """
    return 0.5 * _erfc(-np.asarray(x, dtype=np.float64) / math.sqrt(2.0))


def discount_factor(curve: YieldCurve, t_years: npt.ArrayLike) -> np.ndarray:
    """``P(0, t) = exp(-R(t) t)``, with ``R`` the curve's zero rate at ``t`` rounded to whole days.

    >>> float(discount_factor(YieldCurve(rates=[0.05], days=[365]), [2.0])[0]) == math.exp(-0.1)
    True
    """
    t = np.asarray(t_years, dtype=np.float64)
    return np.exp(-curve.rate_at(t, DAYS_IN_YEAR) * t)


def zero_coupon_bond_option(portfolio: Portfolio, curve: YieldCurve | None = None) -> np.ndarray:
    """Analytic Hull-White price (float64) of each option of ``portfolio`` on ``curve``.

    ``curve`` defaults to the thesis curve. ``term_unit`` and ``term_steps`` (tree
    resolution) play no part. An option expiring now (``expiry == 0``) gets its intrinsic value,
    and under the standard convention one expiring at its bond's maturity the discounted intrinsic
    value on the face, ``max(L - X, 0) P(0, s)`` (call) or ``max(X - L, 0) P(0, s)`` (put); an
    expiry after maturity is bad input there. Under the thesis' convention (``portfolio.convention
    == "thesis"``) rows whose bond matures at or before the option's expiry get the bond price
    ``L P(0, s)``, as the thesis' tree does (its payoff step is never reached). Bad rows raise
    :class:`trinom.InputError` naming the row and field.

    >>> import trinom
    >>> p = trinom.Portfolio(strike=[63.0, 63.0], maturity=[9.0, 9.0], expiry=[3.0, 3.0],
    ...                      term_unit=[365, 365], term_steps=[1, 1], a=[0.1, 0.1],
    ...                      sigma=[0.01, 0.01], option_type=["put", "call"])
    >>> zero_coupon_bond_option(p).round(6).tolist()
    [1.809294, 1.0538]
    """
    _check(portfolio)
    curve = curve if curve is not None else YieldCurve.thesis()
    expiry, maturity = portfolio.expiry, portfolio.maturity
    a, sigma, strike = portfolio.a, portfolio.sigma, portfolio.strike

    bond = FACE_VALUE * discount_factor(curve, maturity)  # L P(0, s)
    strike_pv = strike * discount_factor(curve, expiry)  # X P(0, T)
    life = np.maximum(maturity - expiry, 0.0)  # s - T
    sigma_p = sigma / a * -np.expm1(-a * life) * np.sqrt(-np.expm1(-2.0 * a * expiry) / (2.0 * a))

    live = sigma_p > 0
    safe_sigma_p = np.where(live, sigma_p, 1.0)
    with np.errstate(divide="ignore"):  # a zero strike gives h = +inf, which N handles
        h = np.log(bond / strike_pv) / safe_sigma_p + safe_sigma_p / 2.0
    call = bond * normal_cdf(h) - strike_pv * normal_cdf(h - safe_sigma_p)
    put = strike_pv * normal_cdf(-h + safe_sigma_p) - bond * normal_cdf(-h)
    is_call = portfolio.option_type == CALL
    option = np.where(is_call, call, put)
    intrinsic = np.where(is_call, np.maximum(bond - strike_pv, 0.0), np.maximum(strike_pv - bond, 0.0))
    option = np.where(live, option, intrinsic)
    if portfolio.convention == "thesis":
        option = np.where(maturity <= expiry, bond, option)
    return option.astype(np.float64)


def _check(portfolio: Portfolio) -> None:
    """Raise :class:`InputError` for every row the formula cannot price."""
    problems: list[tuple[int, str, str]] = []
    with np.errstate(invalid="ignore"):
        rules = [
            ("strike", lambda x: np.isfinite(x) & (x >= 0), "must be a finite number >= 0"),
            ("maturity", lambda x: np.isfinite(x) & (x > 0), "must be a finite number > 0"),
            ("expiry", lambda x: np.isfinite(x) & (x >= 0), "must be a finite number >= 0"),
            ("a", lambda x: np.isfinite(x) & (x > 0), "must be a finite number > 0"),
            ("sigma", lambda x: np.isfinite(x) & (x > 0), "must be a finite number > 0"),
            ("option_type", lambda x: (x == CALL) | (x == PUT), f"must be {CALL} (call) or {PUT} (put)"),
        ]
        for field, good, text in rules:
            values = getattr(portfolio, field)
            for row in np.flatnonzero(~good(values)):
                problems.append((int(row), field, f"{field} {text}, got {values[row]!r}"))
    if portfolio.convention != "thesis" and not problems:
        for row in np.flatnonzero(portfolio.expiry > portfolio.maturity):
            problems.append((int(row), "expiry", f"expiry must be at most the bond's maturity "
                             f"({show(portfolio.maturity[row])} years), got {show(portfolio.expiry[row])}"))
    if problems:
        raise InputError(sorted(problems, key=lambda problem: problem[0]))
