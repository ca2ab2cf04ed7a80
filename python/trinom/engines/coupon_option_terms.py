"""What every engine needs to value a bond's options on coupon rates (:mod:`trinom.instruments.coupon_options`) from
each node of its tree, found once a pricing on the host: the engines then only evaluate :func:`node_values`' formula.

At step ``i`` (time ``t``) node ``j`` of the tree is the Hull-White state ``x = j dx`` (the short rate less its
deterministic part; the tree's level shift ``alpha_i`` is that part), and the zero-coupon bond maturing at ``T`` is
worth there Hull and White's analytic price in that state::

    P(t, T) = P(0, T) / P(0, t) exp(-B(T - t) x - V(t) B(T - t)^2 / 2 - W(t) B(T - t)) = exp(ln C + beta ln x_j),
    B(u) = (1 - exp(-a u)) / a,   beta = B(T - t) / dt,
    ln C = ln P(0, T) - ln P(0, t) - V(t) B(T - t)^2 / 2 - W(t) B(T - t),

``x_j = exp(-j dx dt)`` the tree's own node factor (so ``-B x = beta ln x_j``), ``V(t) = int_0^t sigma(u)^2
exp(-2 a (t - u)) du`` the variance of the short rate at ``t`` and ``W(t) = int_0^t sigma(u)^2 exp(-a (t - u))
B(t - u) du`` the drift its deterministic part carries beyond the forward rate (``sigma^2 (1 - exp(-a t))^2 / (2
a^2)`` for one sigma; with sigma pieces each piece's share). No one-step forward of the curve enters (at steps shorter
than a day the curve's rates, read at whole days, would make it noisy). An option
expiring at ``s`` on the bond ``P(s, e)`` is then Black's formula on ``F = P(t, e)``, ``K = strike P(t, s)`` with
the standard deviation ``sigma_i sqrt((1 - exp(-2 a (s - t))) / (2 a)) B(e - s)`` (``sigma_i`` the step's sigma; zero
where ``s = t``: the intrinsic value). The terms (``ln C`` and ``beta`` of ``s`` and ``e``, the deviation, the
strike, the amount and the side) are per option, in float64, in every engine alike.

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
from ..model.hull_white import bond_factor
from ..model.volatility import normal_cdf

#: The columns of :func:`option_terms`.
COLUMNS = ("log_c_expiry", "beta_expiry", "log_c_end", "beta_end", "stdev", "strike", "amount", "is_call")
WIDTH = len(COLUMNS)


def _b(a: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Hull-White's ``B(u) = (1 - exp(-a u)) / a``."""
    return bond_factor(a=a, tau=u)


def _decay_integral(a: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``(1 - exp(-2 a u)) / (2 a)``: ``B`` at ``2 a``."""
    return bond_factor(a=2.0 * a, tau=u)


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

    log_t = log_discount(t)
    variance, drift, sigma_now = _variance(portfolio, owner, options.step, t, a)
    terms = np.empty((owner.size, WIDTH))
    for column, T in ((0, options.expiry), (2, options.end)):
        b_t = _b(a, np.maximum(T - t, 0.0))
        terms[:, column + 1] = b_t / dt
        terms[:, column] = log_discount(T) - log_t - 0.5 * variance * b_t * b_t - drift * b_t
    left = options.expiry - t  # the time to the fixing: below a step, and nothing where the fixing is on the step
    left = np.where(left > 1e-12, left, 0.0)
    terms[:, 4] = sigma_now * np.sqrt(_decay_integral(a, left)) * _b(a, options.end - options.expiry)
    terms[:, 5], terms[:, 6], terms[:, 7] = options.strike, options.amount, options.is_call
    return terms


def _variance(portfolio: BondPortfolio, owner: np.ndarray, step: np.ndarray, t: np.ndarray,
              a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per option, at its step's time ``t``: the short rate's variance ``V``, the drift ``W`` (see the module) and
    the sigma of its step."""
    sigma = np.asarray(portfolio.sigma, dtype=np.float64)[owner]
    pieces = portfolio.sigma_pieces()
    geometry_dt = np.asarray(portfolio.geometry(np.float64).dt, dtype=np.float64)[owner]
    starts_of = {k: (np.array([0]), np.array([float(portfolio.sigma[k])])) for k in np.unique(owner).tolist()}
    if pieces is not None:
        for k in starts_of:
            lo, hi = int(pieces.offset[k]), int(pieces.offset[k + 1])
            starts_of[k] = (np.concatenate([[0], pieces.step[lo:hi]]),
                            np.concatenate([[portfolio.sigma[k]], pieces.sigma[lo:hi]]))
    variance, drift, now = np.zeros(owner.size), np.zeros(owner.size), sigma.copy()
    for k, (starts, values) in starts_of.items():  # a bond's pieces: its own sigma from step 0, then each from its step
        mine = np.flatnonzero(owner == k)
        ends = np.concatenate([starts[1:], [np.iinfo(np.int64).max // 4]])
        for first, last, value in zip(starts.tolist(), ends.tolist(), values.tolist(), strict=True):
            t_lo = first * geometry_dt[mine]
            t_hi = np.minimum(last * geometry_dt[mine], t[mine])
            inside = t_hi > t_lo
            near, far = t[mine] - t_hi, t[mine] - t_lo  # the piece's span, as times before t
            square = value * value
            part_v = square * (_decay_integral(a[mine], far) - _decay_integral(a[mine], near))
            part_w = square / a[mine] * ((_b(a[mine], far) - _b(a[mine], near))
                                         - (_decay_integral(a[mine], far) - _decay_integral(a[mine], near)))
            variance[mine] += np.where(inside, part_v, 0.0)
            drift[mine] += np.where(inside, part_w, 0.0)
            now[mine] = np.where((step[mine] >= first) & (step[mine] < last), value, now[mine])
    return variance, drift, now


def node_values(terms: np.ndarray, log_x: np.ndarray) -> np.ndarray:
    """The options' values (``amount`` times the option) from nodes whose factor ``x_j``'s log is ``log_x``
    (``(options, nodes)``, float64): the formula every engine evaluates."""
    p_s = np.exp(terms[:, 0, None] + terms[:, 1, None] * log_x)
    p_e = np.exp(terms[:, 2, None] + terms[:, 3, None] * log_x)
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
