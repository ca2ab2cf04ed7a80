"""What every engine needs to value a bond's options on coupon rates (:mod:`trinom.instruments.coupon_options`) from
each node of its tree, found once a pricing on the host: the engines then only evaluate :func:`node_values`' formula.

At step ``i`` (time ``t``) the zero-coupon bond maturing at ``T`` is worth, from a node whose one-step discount is
``D = E_i x_j = exp(-R dt)`` (``R`` the node's rate over the step, the spread left out), Hull and White's analytic
price in the tree's rate (Hull, *Options, Futures and Other Derivatives*, "Hull-White tree: bond prices at nodes")::

    P(t, T) = A exp(-B^ R) = exp(ln A + beta ln D),   beta = B(T - t) / B(dt),   B(u) = (1 - exp(-a u)) / a,
    ln A = ln P(0, T) - ln P(0, t) - beta ln(P(0, t + dt) / P(0, t)) - V(t) B(T - t) (B(T - t) - B(dt)) / 2,

``V(t)`` the variance of the short rate at ``t`` (``sigma^2 (1 - exp(-2 a t)) / (2 a)``; with sigma pieces each
piece's share). An option expiring at ``s`` on the bond ``P(s, e)`` is then Black's formula on ``F = P(t, e)``,
``K = strike P(t, s)`` with the standard deviation ``sigma_i sqrt((1 - exp(-2 a (s - t))) / (2 a)) B(e - s)``
(``sigma_i`` the step's sigma; zero where ``s = t``: the intrinsic value). The terms (``ln A`` and ``beta`` of ``s``
and ``e``, the deviation, the strike, the amount and the side) are per option, in float64, in every engine alike.

>>> from trinom.instruments.bond import BondPortfolio
>>> from trinom.instruments.coupon_options import CouponOptions
>>> from trinom.model.curve import YieldCurve
>>> bonds = BondPortfolio(term_unit=[365], term_steps=[12], a=[0.1], sigma=[0.01], maturity=[2.0],
...     cashflow_count=[1], cashflow_step=[24], repayment=[100.0], coupon=[0.0], spread=[0.0], option_type=[0],
...     strike=[100.0], first_exercise=[1], last_exercise=[0], exercise_frequency=[1], curve_index=[0])
>>> bonds = bonds.with_coupon_options(CouponOptions.of(counts=[1], step=[12], expiry=[1.0], end=[1.25],
...                                   strike=[0.99], amount=[-100.0], is_call=[False]))
>>> terms = option_terms(bonds, [YieldCurve(rates=[0.03], days=[365])])
>>> terms[0, :2].tolist()  # the fixing on the step: P(t, s) = 1
[0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..instruments.bond import BondPortfolio
from ..model.curve import YieldCurve
from ..model.volatility import normal_cdf

#: The columns of :func:`option_terms`.
COLUMNS = ("log_a_expiry", "beta_expiry", "log_a_end", "beta_end", "stdev", "strike", "amount", "is_call")
WIDTH = len(COLUMNS)


def _b(a: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Hull-White's ``B(u) = (1 - exp(-a u)) / a`` (``u`` where ``a`` is 0)."""
    safe = np.where(a == 0, 1.0, a)
    return np.where(a == 0, u, -np.expm1(-a * u) / safe)


def _decay_integral(a: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``(1 - exp(-2 a u)) / (2 a)`` (``u`` where ``a`` is 0)."""
    safe = np.where(a == 0, 1.0, a)
    return np.where(a == 0, u, -np.expm1(-2.0 * a * u) / (2.0 * safe))


def option_terms(portfolio: BondPortfolio, curves: Sequence[YieldCurve],
                 dtype: np.dtype | type = np.float64, curve: int | None = None) -> np.ndarray:
    """Per option of ``portfolio`` (its :meth:`~BondPortfolio.coupon_options`, in order), the float64 terms of
    :data:`COLUMNS` (``(options, WIDTH)``; no row where it has none) on its bond's own curve of ``curves`` (or on
    ``curves[curve]`` for every option: a scenario's), its tree's ``dt`` in ``dtype`` (the engine's working
    precision)."""
    options = portfolio.coupon_options()
    if options is None:
        return np.zeros((0, WIDTH))
    owner = np.repeat(np.arange(len(portfolio)), options.counts)
    geometry = portfolio.geometry(dtype)
    dt = np.asarray(geometry.dt, dtype=np.float64)[owner]
    a = np.asarray(portfolio.a, dtype=np.float64)[owner]
    t = options.step * dt
    on = np.asarray(portfolio.curve_index)[owner] if curve is None else np.full(owner.size, curve)
    unit = np.asarray(portfolio.term_unit)[owner]

    def log_discount(times: np.ndarray) -> np.ndarray:
        out = np.empty(times.size)
        for c in np.unique(on).tolist():
            mine = on == c
            out[mine] = -curves[int(c)].rate_at(times[mine], unit[mine], np.float64) * times[mine]
        return np.where(times == 0, 0.0, out)

    log_t, log_next = log_discount(t), log_discount(t + dt)
    variance, sigma_now = _variance(portfolio, owner, options.step, t, dt, a)
    b_dt = _b(a, dt)
    terms = np.empty((owner.size, WIDTH))
    for column, T in ((0, options.expiry), (2, options.end)):
        b_t = _b(a, T - t)
        beta = b_t / b_dt
        terms[:, column + 1] = beta
        terms[:, column] = (log_discount(T) - log_t - beta * (log_next - log_t)
                            - 0.5 * variance * b_t * (b_t - b_dt))
    left = options.expiry - t  # the time to the fixing: below a step, and nothing where the fixing is on the step
    left = np.where(left > 1e-12, left, 0.0)
    terms[:, 4] = sigma_now * np.sqrt(_decay_integral(a, left)) * _b(a, options.end - options.expiry)
    terms[:, 5], terms[:, 6], terms[:, 7] = options.strike, options.amount, options.is_call
    return terms


def _variance(portfolio: BondPortfolio, owner: np.ndarray, step: np.ndarray, t: np.ndarray, dt: np.ndarray,
              a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per option, the short rate's variance at its step's time ``t`` and the sigma of its step."""
    sigma = np.asarray(portfolio.sigma, dtype=np.float64)[owner]
    pieces = portfolio.sigma_pieces()
    if pieces is None:
        return sigma * sigma * _decay_integral(a, t), sigma
    variance = np.zeros(owner.size)
    now = sigma.copy()
    for k in np.unique(owner).tolist():  # a bond's pieces: its own sigma from step 0, then each from its step
        mine = np.flatnonzero(owner == k)
        lo, hi = int(pieces.offset[k]), int(pieces.offset[k + 1])
        starts = np.concatenate([[0], pieces.step[lo:hi]])
        values = np.concatenate([[portfolio.sigma[k]], pieces.sigma[lo:hi]])
        ends = np.concatenate([starts[1:], [np.iinfo(np.int64).max // 4]])
        for first, last, value in zip(starts.tolist(), ends.tolist(), values.tolist(), strict=True):
            t_lo = first * dt[mine]
            t_hi = np.minimum(last * dt[mine], t[mine])
            inside = t_hi > t_lo
            # sigma^2 * integral over [t_lo, t_hi] of exp(-2 a (t - u)) du
            part = value * value * (_decay_integral(a[mine], t[mine] - t_lo) - _decay_integral(a[mine], t[mine] - t_hi))
            variance[mine] += np.where(inside, part, 0.0)
            now[mine] = np.where((step[mine] >= first) & (step[mine] < last), value, now[mine])
    return variance, now


def node_values(terms: np.ndarray, log_discount: np.ndarray) -> np.ndarray:
    """The options' values (``amount`` times the option) from nodes whose one-step discount's log is
    ``log_discount`` (``(options, nodes)``, float64): the formula every engine evaluates."""
    p_s = np.exp(terms[:, 0, None] + terms[:, 1, None] * log_discount)
    p_e = np.exp(terms[:, 2, None] + terms[:, 3, None] * log_discount)
    stdev, strike, amount = terms[:, 4, None], terms[:, 5, None] * p_s, terms[:, 6, None]
    call = terms[:, 7, None] != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(stdev > 0, stdev, 1.0)
        d1 = np.log(p_e / strike) / safe + 0.5 * safe
        black_call = p_e * normal_cdf(d1) - strike * normal_cdf(d1 - safe)
        black_put = strike * normal_cdf(safe - d1) - p_e * normal_cdf(-d1)
    intrinsic = np.where(call, np.maximum(p_e - strike, 0.0), np.maximum(strike - p_e, 0.0))
    value = np.where(stdev > 0, np.where(call, black_call, black_put), intrinsic)
    return amount * np.where(np.isfinite(value), value, 0.0)
