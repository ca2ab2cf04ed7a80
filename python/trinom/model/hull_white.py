"""Hull-White one-factor closed forms, vectorised over a batch: zero-coupon bond options, caplets and floorlets,
caps and floors, and European swaptions by Jamshidian's decomposition (issue 26).

The model is ``dr = (theta(t) - a r) dt + sigma dW`` fitted to a discount curve ``P(0, t)``; times are years
(ACT/365F from the curve's as-of date, as :class:`trinom.model.DatedCurve` measures them) and every function
takes the discount factors it needs, so that one call prices a batch on many curves with an ``a`` and a
``sigma`` per element (arrays broadcast). With ``B(t, T) = (1 - exp(-a (T - t))) / a`` and
``V(T) = sigma^2 (1 - exp(-2 a T)) / (2 a)``:

* **Bond option** (expiry ``T``, a bond from ``s >= T`` to ``m``; ``s = T`` is the usual option on the bond
  maturing at ``m``, a later ``s`` values the ratio ``P(T, m) / P(T, s)``): the total standard deviation is
  ``v = sqrt(V(T)) exp(-a (s - T)) B(s, m)`` and the price is Black's, undiscounted, with forward ``P(0, m)``
  and strike ``X P(0, s)``: call ``P(0, m) N(d1) - X P(0, s) N(d2)``, put ``X P(0, s) N(-d2) - P(0, m) N(-d1)``.
  (QuantLib's ``HullWhite::discountBondOption``; for ``s > T`` QuantLib sums exponentials whose differences
  cancel, which loses digits as ``a`` shrinks; the product form here does not.)
* **Caplet / floorlet** on the simple rate over ``[s, e]`` with accrual ``tau`` and strike ``K``, fixing at ``s``:
  ``(1 + K tau)`` puts (caplet) or calls (floorlet) on ``P(s, e)`` struck at ``1 / (1 + K tau)``, expiring at
  ``s``, per unit notional (QuantLib's ``AnalyticCapFloorEngine``). A cap or floor is the sum of its caplets.
* **European swaption** (Jamshidian): exercise at ``T`` into a swap starting at ``t0 >= T`` whose fixed leg pays
  ``c_i`` at ``t_i`` (``K tau_i N``, the last one plus the notional ``N``); single curve, the floating leg is worth
  ``N`` at ``t0``. With the state ``x = r(T) - f(0, T) - ...`` chosen so that
  ``P(T, t) = P(0, t) / P(0, T) exp(-B(T, t) x - B(T, t)^2 V(T) / 2)``, ``x*`` solves
  ``sum c_i P(T, t_i; x*) = N P(T, t0; x*)`` (Newton's method, all swaptions at once; the left side is convex
  and falls in ``x``), and with ``d_i = x* / sqrt(V) + B(T, t_i) sqrt(V)`` and ``d_0 = x* / sqrt(V) +
  B(T, t0) sqrt(V)``::

      payer    = N P(0, t0) N(-d_0) - sum c_i P(0, t_i) N(-d_i)
      receiver = sum c_i P(0, t_i) N(d_i) - N P(0, t0) N(d_0)

  which is the sum of the bond options of the decomposition (strikes ``P(T, t_i; x*) / P(T, t0; x*)``, puts for a
  payer, calls for a receiver) with the root's identity used to gather their strike terms.

**Two roots** (``root=``). ``"exact"`` solves for ``x*`` to machine precision (Newton's method) and prices by the
gathered form above. ``"quantlib"`` (the default) reproduces QuantLib 1.44's ``JamshidianSwaptionEngine`` step for
step: the critical short rate ``r* = x* + f(0, T)`` by Brent's method (:func:`brent_roots`, QuantLib's
``Brent::solve(f, 1e-8, 0.05, -10, 10)``, iterate for iterate), where ``f(0, T)`` is the curve's instantaneous
forward rate at the expiry as QuantLib's ``forwardRate(T, T, Continuous)`` takes it (a difference quotient over
``1e-4`` years: :func:`quantlib_forward_rate`); then the sum of the bond options struck at that root (whose strike
terms no longer sum to ``N`` exactly), each with QuantLib's ``HullWhite::discountBondOption(type, strike, T, t0,
t_i)`` volatility, a sum of exponentials that loses digits as ``a`` shrinks (evaluated, where that matters, with the
C library's ``exp`` that QuantLib's own calls); and ``a`` below ``sqrt(eps)`` taken as 0, as QuantLib's
``HullWhite::B`` does. The engine's root is within about ``5e-9`` of the exact one, so the two differ by up to about
``1e-6`` of the price (and by QuantLib's cancellation, ``1e-7`` at ``a = 0.001``): far below any tree's error, and
one keyword apart.

The sensitivities to ``a`` and ``sigma`` (:func:`jamshidian_swaption` with ``gradient=True``) are the sums of the
bond options' vegas times ``d v_i / d a`` and ``d v_i / d sigma``: the strikes move with the parameters too, but
their effects cancel, because every option of the decomposition is at its boundary at the same ``x*`` and
``sum c_i K_i`` is fixed. The calibration uses them as its Jacobian (with the exact root: a smooth objective); with
``root="quantlib"`` they are the same formula at QuantLib's root.

>>> import numpy as np
>>> times = np.array([[2.0, 3.0, 4.0]])
>>> dfs = np.exp(-0.03 * times)
>>> price = jamshidian_swaption(a=0.05, sigma=0.01, expiry=1.0, start=1.0, pay_times=times,
...                             amounts=np.array([[0.03, 0.03, 1.03]]), discount_start=np.exp(-0.03),
...                             discount_pay=dfs, is_payer=True)
>>> round(float(price[0]), 10)
0.0108563325
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .sigma import Sigma
from .volatility import black_stdev_price, normal_cdf, normal_pdf

#: Newton iterations of the Jamshidian root (quadratic convergence: a handful are used).
MAX_ROOT_ITERATIONS: Final[int] = 60
#: Below this ``a * t`` the bond factor's derivative in ``a`` uses its series.
_SMALL: Final[float] = 1e-3
#: The Jamshidian roots: QuantLib's engine's (Brent) or the exact one (Newton).
ROOTS: Final[tuple[str, ...]] = ("quantlib", "exact")
#: QuantLib's JamshidianSwaptionEngine: ``Brent::solve(f, accuracy, guess, lower, upper)`` on the short rate, with
#: ``setMaxEvaluations(10000)``.
QUANTLIB_ROOT_ACCURACY: Final[float] = 1e-8
QUANTLIB_ROOT_GUESS: Final[float] = 0.05
QUANTLIB_ROOT_BRACKET: Final[tuple[float, float]] = (-10.0, 10.0)
QUANTLIB_MAX_EVALUATIONS: Final[int] = 10000
#: QuantLib's ``YieldTermStructure::forwardRate(t, t)``: a difference quotient over this many years.
QUANTLIB_FORWARD_STEP: Final[float] = 1e-4
_EPS: Final[float] = float(np.finfo(np.float64).eps)
#: QuantLib's ``close(x, y)`` tolerance: 42 machine epsilons.
_CLOSE: Final[float] = 42.0 * _EPS
#: Below ``sqrt(eps)`` QuantLib's HullWhite takes ``a`` as 0 (``B(t, T) = T - t``).
_QL_SMALL_A: Final[float] = math.sqrt(_EPS)
#: Where QuantLib's bond-option variance sum is below this, its cancellation magnifies the last bit of each ``exp``:
#: those elements are evaluated with the C library's ``exp`` (QuantLib's), the others with NumPy's.
_LIBM_BELOW: Final[float] = 0.05


def _f64(x: npt.ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def bond_factor(*, a: npt.ArrayLike, tau: npt.ArrayLike) -> np.ndarray:
    """``B = (1 - exp(-a tau)) / a`` (``tau`` where ``a`` is 0), ``tau = T - t``.

    >>> bond_factor(a=[0.1, 0.0], tau=2.0).round(12).tolist()
    [1.81269246922, 2.0]
    """
    a, tau = np.broadcast_arrays(_f64(a), _f64(tau))
    zero = a == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        value = -np.expm1(-a * tau) / np.where(zero, 1.0, a)
    return np.where(zero, tau, value)


def short_rate_variance(*, a: npt.ArrayLike, sigma: npt.ArrayLike, t: npt.ArrayLike) -> np.ndarray:
    """``V(t) = sigma^2 (1 - exp(-2 a t)) / (2 a)`` (``sigma^2 t`` where ``a`` is 0): the variance of ``r(t)``
    (``sigma`` a :class:`~trinom.model.sigma.Sigma`: ``int_0^t sigma(u)^2 exp(-2 a (t - u)) du``).

    >>> round(float(short_rate_variance(a=0.1, sigma=0.01, t=1.0)), 16)
    9.0634623461e-05
    """
    if isinstance(sigma, Sigma):  # a term structure: the integral over its pieces
        return sigma.variance(a=a, t=t)
    a, sigma, t = _f64(a), _f64(sigma), _f64(t)
    return sigma * sigma * bond_factor(a=2.0 * a, tau=t)


def bond_option_stdev(*, a: npt.ArrayLike, sigma: npt.ArrayLike, expiry: npt.ArrayLike, start: npt.ArrayLike,
                      maturity: npt.ArrayLike) -> np.ndarray:
    """The total standard deviation of ``log(P(T, m) / P(T, s))`` up to the expiry ``T``:
    ``sqrt(V(T)) exp(-a (s - T)) B(s, m)``.

    >>> round(float(bond_option_stdev(a=0.1, sigma=0.01, expiry=3.0, start=3.0, maturity=9.0)), 12)
    0.067767558327
    """
    a, T, s, m = (_f64(x) for x in (a, expiry, start, maturity))
    return (np.sqrt(short_rate_variance(a=a, sigma=sigma, t=T)) * np.exp(-a * (s - T))
            * bond_factor(a=a, tau=m - s))


def zero_bond_option(*, a: npt.ArrayLike, sigma: npt.ArrayLike, expiry: npt.ArrayLike, maturity: npt.ArrayLike,
                     strike: npt.ArrayLike, discount_expiry: npt.ArrayLike, discount_maturity: npt.ArrayLike,
                     is_call: npt.ArrayLike = True, start: npt.ArrayLike | None = None,
                     discount_start: npt.ArrayLike | None = None) -> np.ndarray:
    """European calls and puts on zero-coupon bonds of face 1 (QuantLib's ``HullWhite.discountBondOption``).

    Args:
      a, sigma: the model's parameters (> 0; ``a`` may be 0).
      expiry, maturity: the option's expiry ``T`` and the bond's maturity ``m`` (years, ``T <= m``).
      strike: per unit face.
      discount_expiry, discount_maturity: ``P(0, T)`` and ``P(0, m)``.
      is_call: ``True`` for a call, ``False`` for a put.
      start, discount_start: a bond from ``s >= T`` (the option on ``P(T, m) / P(T, s)``, paid ``P(T, s)``);
        default ``s = T``.

    >>> zero_bond_option(a=0.1, sigma=0.01, expiry=3.0, maturity=9.0, strike=0.74, discount_expiry=np.exp(-0.15),
    ...                  discount_maturity=np.exp(-0.45), is_call=[False, True]).round(10).tolist()
    [0.0168758454, 0.0175800945]
    """
    T = _f64(expiry)
    s = T if start is None else _f64(start)
    p_start = _f64(discount_expiry if discount_start is None else discount_start)
    v = bond_option_stdev(a=a, sigma=sigma, expiry=T, start=s, maturity=maturity)
    return black_stdev_price(forward=_f64(discount_maturity), strike=_f64(strike) * p_start, stdev=v,
                             is_call=is_call)


def caplet(*, a: npt.ArrayLike, sigma: npt.ArrayLike, start: npt.ArrayLike, end: npt.ArrayLike,
           accrual: npt.ArrayLike, strike: npt.ArrayLike, discount_start: npt.ArrayLike,
           discount_end: npt.ArrayLike, is_cap: npt.ArrayLike = True, basis: npt.ArrayLike = 1.0) -> np.ndarray:
    """Caplets (``is_cap``) or floorlets per unit notional on the simple rate over ``[start, end]`` (years), paid at
    ``end``: ``(1 + K tau)`` bond puts (calls) struck at ``1 / (1 + K tau)`` expiring at ``start``. ``basis``: the
    period's basis ratio ``beta`` where the rate is projected on a forecast curve apart from the discount curve
    (:mod:`trinom.model.rate_options`): the strike is then ``beta / (1 + K tau)``.

    >>> caplet(a=0.05, sigma=0.01, start=1.0, end=1.5, accrual=0.5, strike=0.03, discount_start=np.exp(-0.03),
    ...        discount_end=np.exp(-0.045), is_cap=[True, False]).round(12).tolist()
    [0.001919386669, 0.001811297181]
    """
    tau, K = _f64(accrual), _f64(strike)
    gross = 1.0 + K * tau
    is_cap = np.asarray(is_cap, dtype=bool)
    return gross * zero_bond_option(a=a, sigma=sigma, expiry=start, maturity=end, strike=_f64(basis) / gross,
                                    discount_expiry=discount_start, discount_maturity=discount_end, is_call=~is_cap)


def jamshidian_swaption(*, a: npt.ArrayLike, sigma: npt.ArrayLike, expiry: npt.ArrayLike, start: npt.ArrayLike,
                        pay_times: npt.ArrayLike, amounts: npt.ArrayLike, discount_start: npt.ArrayLike,
                        discount_pay: npt.ArrayLike, notional: npt.ArrayLike = 1.0, is_payer: npt.ArrayLike = True,
                        gradient: bool = False, root: str = "quantlib",
                        forward_rate: npt.ArrayLike | None = None,
                        ) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """European swaptions by Jamshidian's decomposition (QuantLib's ``JamshidianSwaptionEngine``), one per row.

    Args:
      a, sigma: per swaption (or one for all), ``a >= 0``, ``sigma > 0``.
      expiry: the exercise time ``T``; start: the swap's start ``t0 >= T`` (where the floating leg is worth the
        notional).
      pay_times: ``(n, m)``: the fixed leg's payment times, after ``t0``; rows padded with any time where
        ``amounts`` is 0.
      amounts: ``(n, m)``: the fixed leg's cash flows ``c_i`` (coupon ``K tau_i N``, the last also the notional
        ``N``), >= 0.
      discount_start, discount_pay: ``P(0, t0)`` and ``P(0, t_i)`` (``(n, m)``).
      notional: ``N``; is_payer: payer (the right to pay fixed) or receiver.
      gradient: also return ``d price / d a`` and ``d price / d sigma``.
      root: ``"quantlib"`` (default): the engine's numerics, its Brent root on the short rate included (see the
        module's documentation); ``"exact"``: the root to machine precision.
      forward_rate: with ``root="quantlib"``, the curve's instantaneous forward rate at the expiry as QuantLib
        takes it (:func:`quantlib_forward_rate`; :class:`Swaptions` carries it): Brent's bracket and guess are short
        rates ``r = x + f(0, T)``. Without it (0) the search runs on ``x`` itself: a Brent root all the same, but not
        the engine's iterates.

    Returns:
      the prices ``(n,)`` (NaN where no root was found: a leg with negative cash flows), and with ``gradient`` the
      two derivatives. Where QuantLib's bracket holds no root (``|r*| > 10``, where the engine fails), the exact
      root is used.

    >>> times = np.array([[2.0, 3.0]])
    >>> args = dict(a=0.05, sigma=0.01, expiry=1.0, start=1.0, pay_times=times, amounts=np.array([[0.03, 1.03]]),
    ...             discount_start=np.exp(-0.03), discount_pay=np.exp(-0.03 * times), forward_rate=0.03)
    >>> ql, exact = jamshidian_swaption(**args), jamshidian_swaption(**args, root="exact")
    >>> round(float(exact[0]), 10), bool(abs(ql[0] / exact[0] - 1) < 1e-6)
    (0.0075125037, True)
    """
    if root not in ROOTS:
        raise InputError([(None, "root", f"root must be one of {', '.join(ROOTS)}, got {root!r}")])
    c = _f64(amounts)
    if c.ndim != 2:
        raise InputError([(None, "amounts", f"amounts must be (swaptions, cash flows), got shape {c.shape}")])
    n = c.shape[0]
    t = np.broadcast_to(_f64(pay_times), c.shape)
    P = np.broadcast_to(_f64(discount_pay), c.shape)
    piecewise = isinstance(sigma, Sigma)
    if piecewise and (root == "quantlib" or gradient):
        raise InputError([(None, "sigma", "a piecewise sigma prices with root='exact' and no gradient (QuantLib's "
                           "HullWhite engine, which root='quantlib' reproduces, has one sigma)")])
    a, T, t0, P0, N = (np.broadcast_to(_f64(x), (n,)) for x in (a, expiry, start, discount_start, notional))
    if not piecewise:
        sigma = np.broadcast_to(_f64(sigma), (n,))
    quantlib = root == "quantlib"
    if quantlib:  # QuantLib's HullWhite: B(t, T) = T - t below sqrt(eps)
        a = np.where(a < _QL_SMALL_A, 0.0, a)
    payer = np.broadcast_to(np.asarray(is_payer, dtype=bool), (n,))
    V = short_rate_variance(a=a, sigma=sigma, t=T)
    root_v = np.sqrt(V)
    B0 = bond_factor(a=a, tau=t0 - T)
    Bi = bond_factor(a=a[:, None], tau=t - T[:, None])
    beta = Bi - B0[:, None]  # the exponent of P(T, t_i) / P(T, t0), >= 0
    gamma = 0.5 * beta * (Bi + B0[:, None]) * V[:, None]
    live = c != 0
    weight = np.where(live, c * P / P0[:, None], 0.0)
    x = _jamshidian_root(weight, beta, gamma, N)
    cp = np.where(live, c * P, 0.0)
    sign = np.where(payer, -1.0, 1.0)  # payer: puts, N(-d); receiver: calls, N(d)
    if quantlib:
        offset = np.broadcast_to(_f64(0.0 if forward_rate is None else forward_rate), (n,))
        found = _quantlib_root(weight, np.where(live, beta, 0.0), np.where(live, gamma, 0.0), N, offset)
        x = np.where(np.isfinite(found), found, x)
        with np.errstate(over="ignore", invalid="ignore"):
            strike = P * np.exp(-beta * x[:, None] - gamma)  # P(0, t0) K_i, K_i = P(T, t_i; x) / P(T, t0; x)
            stdev = _quantlib_bond_option_stdev(a, sigma, T, t0, t)
            options = black_stdev_price(forward=P, strike=strike, stdev=stdev, is_call=~payer[:, None])
        price = np.where(np.isfinite(x), np.sum(np.where(live, c * options, 0.0), axis=1), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(root_v > 0, root_v, 1.0)
        d0 = np.where(root_v > 0, x / safe + B0 * root_v, np.where(x > 0, np.inf, -np.inf))
        di = np.where(root_v[:, None] > 0, x[:, None] / safe[:, None] + Bi * root_v[:, None],
                      np.where(x[:, None] > 0, np.inf, -np.inf))
    if not quantlib:
        price = sign * (np.sum(cp * normal_cdf(sign[:, None] * di), axis=1) - N * P0 * normal_cdf(sign * d0))
        price = np.maximum(price, 0.0)
    if not gradient:
        return price
    # d price / d theta = sum c_i P_i n(d_i) d v_i / d theta, v_i = sqrt(V) beta_i
    v = root_v[:, None] * beta
    vega = np.where(live, cp * normal_pdf(di), 0.0)
    d_sigma = np.sum(vega * v, axis=1) / sigma
    tau0 = t0 - T
    dlog_v = (_dlog_bond_factor(a[:, None], t - t0[:, None]) - tau0[:, None]
              + _dlog_bond_factor(2.0 * a, T)[:, None])  # log v_i = log sigma + log B(2a, T) / 2 - a tau0 + log B
    d_a = np.sum(vega * v * dlog_v, axis=1)
    return price, d_a, d_sigma


def quantlib_forward_rate(discount: Callable[[np.ndarray], np.ndarray], t: npt.ArrayLike) -> np.ndarray:
    """The instantaneous forward rate at ``t`` (years) as QuantLib's ``YieldTermStructure::forwardRate(t, t,
    Continuous)`` takes it: ``log(P(t1) / P(t2)) / (t2 - t1)`` with ``t1 = max(t - 5e-5, 0)``, ``t2 = t1 + 1e-4``
    (``discount``: a curve's discount factors at year fractions).

    >>> round(float(quantlib_forward_rate(lambda t: np.exp(-0.03 * t), [2.0])[0]), 10)
    0.03
    """
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    t1 = np.maximum(t - QUANTLIB_FORWARD_STEP / 2.0, 0.0)
    t2 = t1 + QUANTLIB_FORWARD_STEP
    both = np.asarray(discount(np.concatenate([t1, t2])), dtype=np.float64)
    compound = both[:t.size] / both[t.size:]
    return np.where(compound == 1.0, 0.0, np.log(compound) / (t2 - t1))


def _quantlib_root(weight: np.ndarray, beta: np.ndarray, gamma: np.ndarray, notional: np.ndarray,
                   offset: np.ndarray) -> np.ndarray:
    """The engine's root as a state ``x = r - offset``: Brent on ``N - sum_i w_i exp(-beta_i x - gamma_i)`` over
    short rates ``r`` in QuantLib's bracket from its guess; NaN where the bracket holds no root."""

    def excess(r: np.ndarray, rows: np.ndarray) -> np.ndarray:
        xx = (r - offset[rows])[:, None]
        with np.errstate(over="ignore"):
            return notional[rows] - np.sum(weight[rows] * np.exp(-beta[rows] * xx - gamma[rows]), axis=1)

    lower, upper = QUANTLIB_ROOT_BRACKET
    r, _evaluations = brent_roots(excess, size=weight.shape[0], lower=lower, upper=upper, guess=QUANTLIB_ROOT_GUESS,
                                  accuracy=QUANTLIB_ROOT_ACCURACY, max_evaluations=QUANTLIB_MAX_EVALUATIONS)
    return r - offset


def _quantlib_bond_option_stdev(a: np.ndarray, sigma: np.ndarray, T: np.ndarray, t0: np.ndarray,
                                t: np.ndarray) -> np.ndarray:
    """``(n, m)``: QuantLib's ``HullWhite::discountBondOption(type, strike, T, t0, t_i)`` volatility, operation for
    operation: ``sigma / (a sqrt(2a)) sqrt(e^(-2a(t0-T)) - e^(-2a t0) - 2 (e^(-a(t0+t_i-2T)) - e^(-a(t0+t_i))) +
    e^(-2a(t_i-T)) - e^(-2a t_i))``, and ``sigma (t_i - t0) sqrt(T)`` where ``a`` is 0. The sum cancels to about
    ``2aT (a (t_i - t0))^2``, magnifying each ``exp``'s last bit: where it is small the C library's ``exp``
    (QuantLib's) evaluates it, so that the rounding is QuantLib's too."""
    shape = t.shape
    A, S, M, B = (np.broadcast_to(x, shape) for x in (a[:, None], sigma[:, None], T[:, None], t0[:, None]))
    exact = bond_option_stdev(a=A, sigma=S, expiry=M, start=B, maturity=t)
    positive = A > 0
    if not positive.any():
        return exact
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        terms = _ql_variance_sum(A, M, B, t, np.exp)
        libm = positive & (terms < _LIBM_BELOW)
        if libm.any():
            terms[libm] = _ql_variance_sum(A[libm], M[libm], B[libm], t[libm], _libm_exp)
        v = S / (A * np.sqrt(2.0 * A)) * np.sqrt(np.maximum(terms, 0.0))
    return np.where(positive, v, exact)


def _ql_variance_sum(a: np.ndarray, m: np.ndarray, s: np.ndarray, e: np.ndarray,
                     exp: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """QuantLib's sum of exponentials for a bond option expiring at ``m`` on the bond from ``s`` to ``e``, in its
    order of operations."""
    two_a = -2.0 * a
    return (exp(two_a * (s - m)) - exp(two_a * s)
            - 2.0 * (exp(-a * ((s + e) - 2.0 * m)) - exp(-a * (s + e)))
            + exp(two_a * (e - m)) - exp(two_a * e))


def _libm_exp(x: np.ndarray) -> np.ndarray:
    """``exp`` of the C library (``math.exp``), element by element: NumPy's vectorised ``exp`` may differ in the
    last bit."""
    flat = np.asarray(x, dtype=np.float64).reshape(-1)
    return np.fromiter(map(math.exp, flat.tolist()), dtype=np.float64, count=flat.size).reshape(np.shape(x))


def brent_roots(fun: Callable[[np.ndarray, np.ndarray], np.ndarray], *, size: int, lower: npt.ArrayLike,
                upper: npt.ArrayLike, guess: npt.ArrayLike, accuracy: float,
                max_evaluations: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Roots of ``size`` functions at once by Brent's method (Brent 1973, as QuantLib's ``Brent`` and
    ``Solver1D::solve(f, accuracy, guess, xMin, xMax)`` run it, iterate for iterate).

    Per element: ``f(lower)``, ``f(upper)`` (a root if ``close`` to 0: within ``(42 eps)^2``); they must have
    opposite signs (else NaN); then from ``guess``, inverse quadratic interpolation or the secant where it stays
    well inside the bracket, bisection otherwise, each step at least ``2 eps |x| + accuracy / 2``; it stops where
    half the bracket is within that (or ``f`` is ``close`` to 0) and returns the point of smaller ``|f|``.
    ``accuracy`` is floored at ``eps``.

    Args:
      fun: ``fun(x, rows) -> f``: the functions ``rows`` (indices) at the points ``x`` (both ``(k,)``).
      lower, upper, guess: the bracket and the first interior point (one, or one per element).
      max_evaluations: per element, as QuantLib's ``setMaxEvaluations`` (NaN past it).

    Returns:
      the roots ``(size,)`` (NaN where none was bracketed or found) and the evaluations each took.

    >>> roots, evaluations = brent_roots(lambda x, rows: x * x - np.array([2.0, 3.0])[rows], size=2, lower=0.0,
    ...                                  upper=10.0, guess=1.0, accuracy=1e-12)
    >>> roots.round(12).tolist(), evaluations.tolist()
    ([1.414213562373, 1.732050807569], [11, 11])
    """
    acc = max(float(accuracy), _EPS)
    lo = np.broadcast_to(_f64(lower), (size,)).astype(np.float64)
    hi = np.broadcast_to(_f64(upper), (size,)).astype(np.float64)
    rows = np.arange(size)
    with np.errstate(over="ignore", invalid="ignore"):
        f_lo = np.asarray(fun(lo, rows), dtype=np.float64)
        f_hi = np.asarray(fun(hi, rows), dtype=np.float64)
        result = np.full(size, np.nan)
        done = _close_to_zero(f_lo)
        result[done] = lo[done]
        at_hi = ~done & _close_to_zero(f_hi)
        result[at_hi] = hi[at_hi]
        done |= at_hi
        done |= ~(f_lo * f_hi < 0.0)  # no root bracketed (or NaN): NaN
        root = np.broadcast_to(_f64(guess), (size,)).astype(np.float64)
        f_root = np.full(size, np.nan)
        evaluations = np.full(size, 2, dtype=np.int64)
        go = np.flatnonzero(~done)
        f_root[go] = fun(root[go], go)
        evaluations[go] += 1
    # Brent's start: the guess on one side, both ends of the bracket on the other
    flip = f_root * f_lo < 0.0
    x_min = np.where(flip, lo, hi)
    f_min = np.where(flip, f_lo, f_hi)
    x_max, f_max = x_min.copy(), f_min.copy()
    d = root - x_max
    e = d.copy()
    active = ~done
    while True:
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        r, fr, xn, fn, xx, fx, dd, ee = (v[idx] for v in (root, f_root, x_min, f_min, x_max, f_max, d, e))
        same = ((fr > 0.0) & (fx > 0.0)) | ((fr < 0.0) & (fx < 0.0))  # rename x_min, root, x_max
        xx, fx = np.where(same, xn, xx), np.where(same, fn, fx)
        dd = np.where(same, r - xn, dd)
        ee = np.where(same, dd, ee)
        swap = np.abs(fx) < np.abs(fr)  # keep the root the best point
        xn, r, xx = np.where(swap, r, xn), np.where(swap, xx, r), np.where(swap, r, xx)
        fn, fr, fx = np.where(swap, fr, fn), np.where(swap, fx, fr), np.where(swap, fr, fx)
        tol = 2.0 * _EPS * np.abs(r) + 0.5 * acc
        mid = (xx - r) / 2.0
        converged = (np.abs(mid) <= tol) | _close_to_zero(fr)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            s = fr / fn
            secant = _close(xn, xx)
            q1, r1 = fn / fx, fr / fx
            p = np.where(secant, 2.0 * mid * s, s * (2.0 * mid * q1 * (q1 - r1) - (r - xn) * (r1 - 1.0)))
            q = np.where(secant, 1.0 - s, (q1 - 1.0) * (r1 - 1.0) * (s - 1.0))
            q = np.where(p > 0.0, -q, q)
            p = np.abs(p)
            bound = np.minimum(3.0 * mid * q - np.abs(tol * q), np.abs(ee * q))
            interpolate = (np.abs(ee) >= tol) & (np.abs(fn) > np.abs(fr)) & (2.0 * p < bound)
            new_d = np.where(interpolate, p / q, mid)
            new_e = np.where(interpolate, dd, mid)
        step = np.where(np.abs(new_d) > tol, new_d, np.where(mid >= 0.0, tol, -tol))
        result[idx[converged]] = r[converged]
        x_min[idx], f_min[idx], x_max[idx], f_max[idx] = r, fr, xx, fx
        root[idx] = np.where(converged, r, r + step)
        d[idx], e[idx] = new_d, new_e
        active[idx[converged]] = False
        go = idx[~converged]
        if go.size:
            with np.errstate(over="ignore", invalid="ignore"):
                f_root[go] = fun(root[go], go)
            evaluations[go] += 1
            over = go[evaluations[go] > max_evaluations]
            active[over] = False
    return result, evaluations


def _close(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """QuantLib's ``close(x, y)``: equal, or within ``42 eps`` of both relative (``(42 eps)^2`` absolute at 0)."""
    diff = np.abs(x - y)
    zero = (x == 0.0) | (y == 0.0)
    near = np.where(zero, diff < _CLOSE * _CLOSE, (diff <= _CLOSE * np.abs(x)) & (diff <= _CLOSE * np.abs(y)))
    return (x == y) | near


def _close_to_zero(x: np.ndarray) -> np.ndarray:
    return (x == 0.0) | (np.abs(x) < _CLOSE * _CLOSE)


def _dlog_bond_factor(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """``d log B(tau) / d a = (a tau / (exp(a tau) - 1) - 1) / a`` (``-tau / 2 + a tau^2 / 12`` for small ``a tau``)."""
    a, tau = np.broadcast_arrays(a, tau)
    y = a * tau
    small = np.abs(y) < _SMALL
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = (y / np.expm1(np.where(small, 1.0, y)) - 1.0) / np.where(small, 1.0, a)
    series = -0.5 * tau + y * tau / 12.0 - y ** 3 * tau / 720.0
    return np.where(small, series, exact)


def _jamshidian_root(weight: np.ndarray, beta: np.ndarray, gamma: np.ndarray, notional: np.ndarray) -> np.ndarray:
    """``x`` with ``sum_i w_i exp(-beta_i x - gamma_i) = N`` per row (``w_i = c_i P_i / P_0``): Newton's method
    from ``x = 0``; the sum is convex and falls in ``x``, so after at most one step past the root the iterates
    rise to it monotonically, until a step is negligible or the residual is within its rounding (then one more
    step). NaN where it does not converge (negative weights)."""
    x = np.zeros(weight.shape[0])
    converged = np.zeros(x.shape, dtype=bool)
    idx = np.arange(x.size)  # the rows still iterating, and their data (compressed as rows converge)
    w, b, g, n = weight, beta, gamma, notional
    xx = x.copy()
    for _ in range(MAX_ROOT_ITERATIONS):
        if idx.size == 0:
            break
        terms = w * np.exp(-b * xx[:, None] - g)
        h = terms.sum(axis=1) - n
        slope = -(terms * b).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = -h / slope
        step = np.where(np.isfinite(step), np.clip(step, -1.0, 1.0), 0.0)
        total = terms.sum(axis=1)
        # converged: a negligible step, or a residual within its own rounding (a flat sum, whose steps would only
        # chase rounding)
        done = ((np.abs(step) <= 1e-15 * np.maximum(1.0, np.abs(xx)) + 1e-300)
                | (np.abs(h) <= 4.0 * _EPS * (total + np.abs(n))))
        xx = xx + step
        x[idx] = xx
        converged[idx[done]] = True
        if done.any():
            keep = ~done
            idx, w, b, g, n, xx = idx[keep], w[keep], b[keep], g[keep], n[keep], xx[keep]
    x[~converged] = np.nan
    return x
