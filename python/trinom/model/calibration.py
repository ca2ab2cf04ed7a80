"""Global Hull-White calibration: one ``(a, sigma)`` per curve fitted to its swaption matrix or cap strip, all
curves at once, by a batched Levenberg-Marquardt in NumPy (issue 26).

**Objective** (per curve, QuantLib's ``CalibratedModel::calibrate`` with its helpers' default error): minimise
``sum_i w_i e_i^2`` over the curve's quotes with

* ``error="relative_price"`` (default; QuantLib's ``RelativePriceError``): ``e_i = (model_i - market_i) / market_i``;
* ``error="price"`` (``PriceError``): ``e_i = model_i - market_i`` (per unit notional);
* ``error="vol"`` (``ImpliedVolError``): ``e_i`` = the model price's implied volatility (the quote's kind) minus
  the quoted one.

``model_i`` is the Hull-White price of the quote's instrument (Jamshidian for swaptions, caplets as bond options:
:mod:`trinom.model.hull_white`), ``market_i`` the quote's volatility in Black's or Bachelier's formula
(:mod:`trinom.model.quotes`). ``a`` may be free or fixed (one value, or per curve); ``sigma`` is always free.
The swaptions are priced on the exact Jamshidian root while fitting (``root="exact"``, a smooth objective);
``root="quantlib"`` fits on QuantLib's engine's prices (its Brent root), converging within their noise (about 1e-6).
Per-trade calibration (a basket of co-terminal swaptions per trade) is :mod:`trinom.analytics.baskets`.

**Solver** (:func:`levenberg_marquardt`): a batched, bounded Levenberg-Marquardt: every curve is one element of
the batch with its own parameters, damping, bounds and quotes (rows of unequal length masked), and the Jacobian is
analytic (the bond options' vegas; :func:`trinom.model.hull_white.jamshidian_swaption`). A step is the damped
Gauss-Newton step ``(J'J + mu diag(J'J)) d = -J'r`` on the free parameters not held at a bound, projected onto the
bounds, accepted where it lowers the cost (Nielsen's damping update). An element stops when its projected
gradient, its step or its cost's decrease is negligible (``tolerance``, relative), or after ``max_iterations``.

**Statuses** per curve, each with a message: ``converged``; ``bound`` (converged with a parameter at its bound:
for ``a`` at its floor, the quotes ask for a mean reversion at or below zero; or with a quote out of reach, its
market price below the least or above the greatest Hull-White price within the bounds: the message names such
quotes, and a ``bound`` message the quotes left with the largest errors); ``no fit`` (no quotes, fewer quotes than
free parameters, a price that is not finite, or no convergence within ``max_iterations``). Nothing fails silently
and no quote is dropped: ``result.ok`` is false unless every curve converged, and ``raise_for_status()`` raises.

>>> from trinom.model import DatedCurve
>>> from trinom.model.quotes import VolQuotes
>>> curve = DatedCurve(as_of="2025-01-02", dates=["2045-01-02"], zero_rates=[0.03], name="EUR")
>>> quotes = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "2Y", "5Y", "1Y", "5Y"],
...                                 tenor=["5Y", "5Y", "5Y", "10Y", "10Y"],
...                                 vol=[0.0090, 0.0088, 0.0080, 0.0085, 0.0076], kind="normal")
>>> result = calibrate(curves=curve, quotes=quotes)
>>> result.status.tolist(), round(float(result.a[0]), 6), round(float(result.sigma[0]), 8)
(['converged'], 0.040075, 0.00976565)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .hull_white import ROOTS
from .quotes import QuoteInstruments, VolQuotes, quote_instruments, resolve_curves
from .vol_quotes import as_vol_quotes

#: Calibration errors (QuantLib's CalibrationErrorType).
ERRORS: Final[tuple[str, ...]] = ("relative_price", "price", "vol")
#: Default bounds of ``a`` and ``sigma``.
DEFAULT_BOUNDS: Final[dict[str, tuple[float, float]]] = {"a": (1e-8, 5.0), "sigma": (1e-8, 1.0)}
#: The statuses a curve's calibration ends with.
STATUSES: Final[tuple[str, ...]] = ("converged", "bound", "no fit")

#: A change of the cost below this fraction of it is rounding (sums of many squares of prices' relative errors).
_NOISE: Final[float] = 1e-13
#: A market price beyond the model's range within the bounds by more than this fraction of it is out of reach.
_REACH: Final[float] = 1e-9
#: How many quotes a status message names (then "and N more").
_NAMED: Final[int] = 5
#: Solver outcomes (:class:`LMResult.code`).
CONVERGED: Final[int] = 0
MAX_ITERATIONS: Final[int] = 1
NOT_FINITE: Final[int] = 2
NOT_RUN: Final[int] = 3


# --- the batched solver ----------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LMResult:
    """What :func:`levenberg_marquardt` found, per element of the batch.

    Attributes:
      x: ``(batch, k)`` parameters; cost: ``0.5 sum r^2``; residuals: ``(batch, m)``.
      code: :data:`CONVERGED`, :data:`MAX_ITERATIONS`, :data:`NOT_FINITE` or :data:`NOT_RUN` (an element with no
        active residual, or fewer residuals than free parameters).
      reason: how a converged element stopped (``gradient``, ``step``, ``cost``, ``stalled``: no step, however
        damped, lowers the cost); iterations: accepted and rejected
        steps taken; at_lower, at_upper: ``(batch, k)`` which free parameters end at a bound.
    """

    x: np.ndarray
    cost: np.ndarray
    residuals: np.ndarray
    code: np.ndarray
    reason: np.ndarray
    iterations: np.ndarray
    at_lower: np.ndarray
    at_upper: np.ndarray


ResidualFunction = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def levenberg_marquardt(fun: ResidualFunction, x0: npt.ArrayLike, *, lower: npt.ArrayLike | None = None,
                        upper: npt.ArrayLike | None = None, free: npt.ArrayLike | None = None,
                        mask: npt.ArrayLike | None = None, max_iterations: int = 200, tolerance: float = 1e-12,
                        x_scale: float = 1e-12, damping: float = 1e-3) -> LMResult:
    """Minimise ``0.5 sum_j r_j(x)^2`` for every element of a batch at once, within bounds.

    Args:
      fun: ``fun(x, rows) -> (r, J)``: for the parameters ``x`` ``(b, k)`` of the batch elements ``rows`` ``(b,)``,
        the residuals ``(b, m)`` and their Jacobian ``(b, m, k)``; residuals outside ``mask`` are ignored.
      x0: ``(batch, k)`` starting parameters (clipped to the bounds).
      lower, upper: bounds, ``(batch, k)`` or ``(k,)`` (default unbounded).
      free: which parameters move, ``(batch, k)`` or ``(k,)`` (default all).
      mask: ``(batch, m)``: which residuals count (default all).
      max_iterations: steps per element, accepted or not.
      tolerance: stop where the undamped Gauss-Newton step ``(J'J)^+ J'r`` on the parameters free to move (not
        held at a bound by the gradient) is at most ``tolerance`` relative to every parameter (or the cost is
        exactly 0), where an accepted step moves every free parameter by at most ``tolerance`` relative, or where
        it lowers the cost by less than 1e-13 relative (rounding). Where the Gauss-Newton step would lower the cost
        by less than that, it is taken without comparing costs (which rounding decides) and the element stops.
      x_scale: parameters are measured relative to ``max(|x|, x_scale)``.
      damping: the initial ``mu`` relative to the largest diagonal element of ``J'J``.

    >>> def line(x, rows):  # fit y = p0 + p1 t to two batches of points
    ...     t = np.array([0.0, 1.0, 2.0])
    ...     y = np.array([[1.0, 3.0, 5.0], [2.0, 2.0, 2.0]])[rows]
    ...     r = x[:, :1] + x[:, 1:] * t - y
    ...     return r, np.stack([np.ones_like(r), np.broadcast_to(t, r.shape)], axis=2)
    >>> out = levenberg_marquardt(line, [[0.0, 0.0], [0.0, 0.0]])
    >>> out.x.round(10).tolist(), out.code.tolist()
    ([[1.0, 2.0], [2.0, 0.0]], [0, 0])
    """
    x = np.array(x0, dtype=np.float64, ndmin=2)
    batch, k = x.shape
    lo = np.broadcast_to(np.asarray(-np.inf if lower is None else lower, dtype=np.float64), (batch, k))
    hi = np.broadcast_to(np.asarray(np.inf if upper is None else upper, dtype=np.float64), (batch, k))
    move = np.broadcast_to(np.asarray(True if free is None else free, dtype=bool), (batch, k))
    x = np.clip(x, lo, hi)
    rows_all = np.arange(batch)
    r, J = fun(x, rows_all)
    m = r.shape[1]
    use = np.broadcast_to(np.asarray(True if mask is None else mask, dtype=bool), (batch, m))
    r = np.where(use, r, 0.0)
    J = np.where(use[:, :, None], J, 0.0)
    cost = 0.5 * np.sum(r * r, axis=1)
    code = np.full(batch, MAX_ITERATIONS, dtype=np.int64)
    reason = np.full(batch, "", dtype=object)
    iterations = np.zeros(batch, dtype=np.int64)
    not_run = (use.sum(axis=1) < move.sum(axis=1)) | (use.sum(axis=1) == 0)
    code[not_run] = NOT_RUN
    bad = ~not_run & ~(np.isfinite(cost) & np.isfinite(J).all(axis=(1, 2)))
    code[bad] = NOT_FINITE
    active = ~not_run & ~bad
    mu = np.full(batch, float(damping))  # relative to diag(J'J) (Marquardt's scaling)
    nu = np.full(batch, 2.0)
    eye = np.eye(k)
    for _ in range(max_iterations):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        xi, ri, Ji = x[idx], r[idx], J[idx]
        g = np.einsum("bmi,bm->bi", Ji, ri)
        Hi = np.einsum("bmi,bmj->bij", Ji, Ji)
        blocked = ((xi <= lo[idx]) & (g > 0)) | ((xi >= hi[idx]) & (g < 0))
        step_on = move[idx] & ~blocked
        # the undamped Gauss-Newton step on the parameters that may move: converged where it is negligible
        on = step_on[:, :, None] & step_on[:, None, :]
        newton = np.einsum("bij,bj->bi", np.linalg.pinv(np.where(on, Hi, 0.0)), np.where(step_on, -g, 0.0))
        scale = np.maximum(np.abs(xi), x_scale)
        small_step = np.where(step_on, np.abs(newton) / scale, 0.0).max(axis=1) <= tolerance
        # where the Gauss-Newton step would lower the cost by less than the cost's rounding can show, no comparison
        # of costs can judge it: take it (within the bounds) and stop
        gain = -0.5 * np.einsum("bi,bi->b", g, newton)
        polish = ~small_step & (gain <= _NOISE * cost[idx])
        if polish.any():
            rows = idx[polish]
            x[rows] = np.clip(xi[polish] + newton[polish], lo[rows], hi[rows])
            r_new, J_new = fun(x[rows], rows)
            r[rows] = np.where(use[rows], r_new, 0.0)
            J[rows] = np.where(use[rows][:, :, None], J_new, 0.0)
            cost[rows] = 0.5 * np.sum(r[rows] * r[rows], axis=1)
        stop = small_step | polish | (cost[idx] == 0.0)
        code[idx[stop]] = CONVERGED
        reason[idx[stop]] = "gradient"
        active[idx[stop]] = False
        keep = ~stop
        idx, xi, g, Hi, step_on = idx[keep], xi[keep], g[keep], Hi[keep], step_on[keep]
        if idx.size == 0:
            break
        iterations[idx] += 1
        diag = np.diagonal(Hi, axis1=1, axis2=2)
        floor = 1e-12 * np.maximum(diag.max(axis=1, keepdims=True), 1e-300)
        damped = Hi + mu[idx, None, None] * np.maximum(diag, floor)[:, :, None] * eye
        on = step_on[:, :, None] & step_on[:, None, :]
        system = np.where(on, damped, eye)
        rhs = np.where(step_on, -g, 0.0)
        try:
            delta = np.linalg.solve(system, rhs[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            delta = np.stack([np.linalg.lstsq(s, b, rcond=None)[0] for s, b in zip(system, rhs, strict=True)])
        trial = np.clip(xi + np.where(step_on, delta, 0.0), lo[idx], hi[idx])
        delta = trial - xi
        r_new, J_new = fun(trial, idx)
        r_new = np.where(use[idx], r_new, 0.0)
        J_new = np.where(use[idx][:, :, None], J_new, 0.0)
        cost_new = 0.5 * np.sum(r_new * r_new, axis=1)
        finite = np.isfinite(cost_new) & np.isfinite(J_new).all(axis=(1, 2))
        predicted = -(np.einsum("bi,bi->b", g, delta) + 0.5 * np.einsum("bi,bij,bj->b", delta, Hi, delta))
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.where(predicted > 0, (cost[idx] - cost_new) / predicted, -1.0)
        accept = finite & (rho > 1e-4) & (cost_new <= cost[idx])
        relative_step = np.where(step_on, np.abs(delta) / np.maximum(np.abs(xi), x_scale), 0.0).max(axis=1)
        decrease = cost[idx] - cost_new
        acc = idx[accept]
        x[acc], r[acc], J[acc], cost[acc] = trial[accept], r_new[accept], J_new[accept], cost_new[accept]
        mu[acc] *= np.maximum(1.0 / 3.0, 1.0 - (2.0 * rho[accept] - 1.0) ** 3)
        nu[acc] = 2.0
        rej = idx[~accept]
        mu[rej] *= nu[rej]
        nu[rej] *= 2.0
        step_done = accept & (relative_step <= tolerance)
        cost_done = accept & (decrease <= _NOISE * np.maximum(cost[idx] + decrease, 1e-300))
        stuck = ~accept & (mu[idx] > 1e30)
        for done, why in ((step_done, "step"), (cost_done & ~step_done, "cost"), (stuck, "stalled")):
            code[idx[done]] = CONVERGED
            reason[idx[done]] = np.where(reason[idx[done]] == "", why, reason[idx[done]])
            active[idx[done]] = False
    # a parameter held at a bound by the gradient
    g = np.einsum("bmi,bm->bi", J, r)
    at_lower = move & (x <= lo) & (g >= 0) & np.isfinite(lo)
    at_upper = move & (x >= hi) & (g <= 0) & np.isfinite(hi)
    return LMResult(x=x, cost=cost, residuals=r, code=code, reason=reason, iterations=iterations, at_lower=at_lower,
                    at_upper=at_upper)


# --- calibration -----------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """A calibration's outcome: per curve the parameters and a status, per quote the fit.

    Attributes (per curve, in ``curve_names`` order):
      a, sigma (NaN where there is no fit), a_fixed, status (``converged``, ``bound``, ``no fit``), message,
      iterations, objective (``sum w e^2``), rms (the root mean square of the errors ``e_i`` over the quotes with
      a weight above 0), quote_count (those quotes).
    Attributes (per quote, in the quotes' order):
      market_price, model_price (per unit notional; NaN where the curve has no fit), market_vol, model_vol (the model price's
      implied volatility, the quote's kind), residual (``model - market`` price), error (the objective's ``e_i``),
      weight; least_price, most_price: the least and the greatest Hull-White price within the bounds (``a`` fixed or
      in its bounds, ``sigma`` in its); reachable: whether the market price lies between them (a quote out of reach
      makes its curve's status ``bound``, its message naming the quote); instruments: the quotes' instruments
      (:class:`trinom.model.quotes.QuoteInstruments`).
    """

    curve_names: tuple[str, ...]
    a: np.ndarray
    sigma: np.ndarray
    a_fixed: np.ndarray
    status: np.ndarray
    message: tuple[str, ...]
    iterations: np.ndarray
    objective: np.ndarray
    rms: np.ndarray
    quote_count: np.ndarray
    error_type: str
    instruments: QuoteInstruments
    market_price: np.ndarray
    model_price: np.ndarray
    market_vol: np.ndarray
    model_vol: np.ndarray
    residual: np.ndarray
    error: np.ndarray
    weight: np.ndarray
    reachable: np.ndarray
    least_price: np.ndarray
    most_price: np.ndarray

    @property
    def ok(self) -> bool:
        """Whether every curve converged (a curve at a bound did not)."""
        return bool((self.status == "converged").all())

    def parameters(self) -> dict[str, tuple[float, float]]:
        """``{curve: (a, sigma)}``."""
        return {name: (float(a), float(s)) for name, a, s in zip(self.curve_names, self.a, self.sigma, strict=True)}

    def raise_for_status(self) -> CalibrationResult:
        """This result if every curve converged; else an :class:`trinom.InputError` naming each curve that did
        not and why."""
        bad = [(None, "curve", f"curve {name!r}: {status}: {message}") for name, status, message
               in zip(self.curve_names, self.status, self.message, strict=True) if status != "converged"]
        if bad:
            raise InputError(bad)
        return self

    def curves_frame(self) -> Any:
        """One row per curve: ``curve, a, sigma, a_fixed, status, message, iterations, objective, rms, quotes``."""
        import pandas as pd

        return pd.DataFrame({"curve": list(self.curve_names), "a": self.a, "sigma": self.sigma,
                             "a_fixed": self.a_fixed, "status": self.status, "message": list(self.message),
                             "iterations": self.iterations, "objective": self.objective, "rms": self.rms,
                             "quotes": self.quote_count})

    def to_frame(self) -> Any:
        """One row per quote: its columns (``curve, expiry, tenor, kind, shift, instrument``), the instrument's
        ``exercise, end, forward, strike, annuity, payer`` (payer swaption or cap), and the fit: ``weight,
        market_vol, model_vol, market_price, model_price, residual, error, reachable``, and its curve's ``a, sigma,
        status``; ``where``: the quote's file and line."""
        import pandas as pd

        q = self.instruments.quotes
        basket = self.instruments
        index = basket.curve_index
        return pd.DataFrame({
            "curve": q.curve, "expiry": q.expiry, "tenor": q.tenor, "kind": q.kind, "shift": q.shift,
            "instrument": q.instrument, "exercise": basket.exercise, "end": basket.end, "forward": basket.forward,
            "strike": basket.strike, "annuity": basket.annuity, "payer": basket.is_call, "weight": self.weight,
            "market_vol": self.market_vol, "model_vol": self.model_vol, "market_price": self.market_price,
            "model_price": self.model_price, "residual": self.residual, "error": self.error,
            "reachable": self.reachable, "a": self.a[index], "sigma": self.sigma[index],
            "status": self.status[index], "where": list(q.where)})


def calibrate(*, curves: Any, quotes: VolQuotes | str | Path | Any, as_of: object | None = None,
              a: float | Mapping[str, float] | None = None, weights: npt.ArrayLike | None = None,
              error: str = "relative_price", bounds: Mapping[str, tuple[float, float]] | None = None,
              a_guess: float = 0.05, sigma_guess: float | None = None, max_iterations: int = 200,
              tolerance: float = 1e-12, root: str = "exact") -> CalibrationResult:
    """Fit one Hull-White ``(a, sigma)`` per curve to that curve's quotes, all curves at once.

    Args:
      curves: ``{name: DatedCurve}``, or one :class:`~trinom.model.DatedCurve`.
      quotes: :class:`~trinom.model.quotes.VolQuotes`, a ``vols.csv`` / Parquet path, or a pandas DataFrame of its
        columns.
      as_of: if given, every curve must be as of this date (the quotes' instruments start from the curves').
      a: ``None``: free; a number: fixed for every curve; ``{curve: value}``: fixed for those curves, free elsewhere.
      weights: per quote (default: the quotes' ``weight`` column, 1 unless given); 0 leaves a quote out.
      error: ``relative_price`` (QuantLib's default), ``price`` or ``vol`` (see the module's documentation).
      bounds: ``{"a": (lo, hi), "sigma": (lo, hi)}`` (default :data:`DEFAULT_BOUNDS`; ``a`` and ``sigma`` > 0).
      a_guess: the starting ``a`` where free; sigma_guess: the starting ``sigma`` (default: per curve, the median
        of the quotes' normal volatilities, from their market prices).
      max_iterations, tolerance: the solver's (:func:`levenberg_marquardt`).
      root: the swaptions' Jamshidian root while fitting and in the result's model prices: ``"exact"`` (default: a
        smooth objective, so parameters to about 1e-12) or ``"quantlib"`` (QuantLib's engine; its root error makes
        prices jump by up to about 1e-6 relative between parameters, and the fit stops within that noise).

    Returns:
      :class:`CalibrationResult` (statuses per curve; never raises for a curve that does not fit).
    """
    if error not in ERRORS:
        raise InputError([(None, "error", f"error must be one of {', '.join(ERRORS)}, got {error!r}")])
    if root not in ROOTS:
        raise InputError([(None, "root", f"root must be one of {', '.join(ROOTS)}, got {root!r}")])
    table = resolve_curves(curves)
    if as_of is not None:
        from ..conventions.dates import as_dates, to_days

        day, problems = to_days([as_of], field="as_of")
        if problems:
            raise InputError(problems)
        wanted = as_dates(day)[0]
        wrong = [(None, "as_of", f"curve {name!r} is as of {curve.as_of}, not {wanted}") for name, curve in
                 table.items() if curve.as_of != wanted]
        if wrong:
            raise InputError(wrong)
    quotes = as_vol_quotes(quotes)
    basket = quote_instruments(quotes, table)
    names = basket.curve_names
    n_curves, n = len(names), len(basket)
    w = quotes.weight if weights is None else np.broadcast_to(np.asarray(weights, dtype=np.float64), (n,)).copy()
    bad_w = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad_w.size:
        raise InputError([(int(k), "weight", f"weight must be a finite number >= 0, got {w[k]}") for k in bad_w])
    limits = dict(DEFAULT_BOUNDS)
    limits.update(bounds or {})
    problems = [(None, name, f"bounds[{name!r}] must be 0 < lo <= hi, got {limits[name]}") for name in ("a", "sigma")
                if not (0 < limits[name][0] <= limits[name][1])]
    problems += [(None, name, f"unknown bound {name!r} (a, sigma)") for name in limits if name not in ("a", "sigma")]
    if problems:
        raise InputError(problems)
    a_value = np.full(n_curves, float(a_guess))
    a_is_fixed = np.zeros(n_curves, dtype=bool)
    if isinstance(a, Mapping):
        unknown = [name for name in a if name not in names]
        if unknown:
            raise InputError([(None, "a", f"a is given for curve {name!r}, which has no quotes or is unknown")
                              for name in unknown])
        for name, value in a.items():
            a_value[names.index(name)] = float(value)
            a_is_fixed[names.index(name)] = True
    elif a is not None:
        a_value[:] = float(a)
        a_is_fixed[:] = True
    fixed_bad = [(None, "a", f"a must be a finite number > 0, got {v}") for v in a_value[a_is_fixed]
                 if not (np.isfinite(v) and v > 0)]
    if fixed_bad:
        raise InputError(fixed_bad)

    # quotes of each curve, padded: slot[c, j] is a quote index (or -1)
    order = np.argsort(basket.curve_index, kind="stable")
    counts = np.bincount(basket.curve_index, minlength=n_curves)
    width = max(int(counts.max()) if n_curves else 0, 1)
    slot = np.full((n_curves, width), -1, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.arange(n) - np.repeat(starts, counts)
    slot[basket.curve_index[order], position] = order
    valid = slot >= 0
    take = np.where(valid, slot, 0)
    use = valid & (w[take] > 0)
    market = basket.market_price
    root_w = np.sqrt(w)

    def residuals(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        here = valid[rows]
        quote = take[rows][here]  # each quote once: it belongs to one curve
        owner = np.broadcast_to(np.arange(rows.size)[:, None], here.shape)[here]
        price, d_a, d_s = basket.model_price(a=x[owner, 0], sigma=x[owner, 1], rows=quote, gradient=True, root=root)
        weight = root_w[quote]
        if error == "relative_price":
            scale = weight / market[quote]
            e = (price - market[quote]) * scale
        elif error == "price":
            scale = weight
            e = (price - market[quote]) * scale
        else:
            vol = _implied(basket, quote, price)
            scale = weight / _vega_at(basket, quote, vol)
            e = (vol - quotes.vol[quote]) * weight
        r = np.zeros(here.shape)
        jac = np.zeros((*here.shape, 2))
        r[here] = e
        jac[here] = np.stack([d_a * scale, d_s * scale], axis=1)
        return r, jac

    # starting points: sigma from the quotes' normal volatilities
    if sigma_guess is None:
        normal = _normal_vols(basket)
        sigma0 = np.array([np.nanmedian(normal[take[c][use[c]]]) if use[c].any() else 0.01 for c in range(n_curves)])
        sigma0 = np.where(np.isfinite(sigma0) & (sigma0 > 0), sigma0, 0.01)
    else:
        sigma0 = np.full(n_curves, float(sigma_guess))
    x0 = np.stack([a_value, sigma0], axis=1)
    lower = np.array([limits["a"][0], limits["sigma"][0]])
    upper = np.array([limits["a"][1], limits["sigma"][1]])
    free = np.stack([~a_is_fixed, np.ones(n_curves, dtype=bool)], axis=1)
    lower_b = np.where(free, lower, -np.inf)  # a fixed a is not clipped to the bounds
    upper_b = np.where(free, upper, np.inf)
    with np.errstate(over="ignore", under="ignore"):
        fit = levenberg_marquardt(residuals, x0, lower=lower_b, upper=upper_b, free=free, mask=use,
                                  max_iterations=max_iterations, tolerance=tolerance)
    a_out, sigma_out = fit.x[:, 0].copy(), fit.x[:, 1].copy()
    model = basket.model_price(a=a_out[basket.curve_index], sigma=sigma_out[basket.curve_index], root=root)
    failed = fit.code != CONVERGED  # no fit: no parameters to report (the message keeps the last iterate)
    model[failed[basket.curve_index]] = np.nan
    model_vol = basket.implied_vol(model)
    residual = model - market
    if error == "relative_price":
        err = residual / market
    elif error == "price":
        err = residual
    else:
        err = model_vol - quotes.vol
    used = (w > 0)
    objective = np.bincount(basket.curve_index, weights=np.where(used, w * err * err, 0.0), minlength=n_curves)
    rms = np.sqrt(np.bincount(basket.curve_index, weights=np.where(used, err * err, 0.0), minlength=n_curves)
                  / np.maximum(np.bincount(basket.curve_index, weights=used.astype(float), minlength=n_curves), 1))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        least, most = _reach(basket, a_value, a_is_fixed, limits, root)
    reachable = ~(market < least * (1 - _REACH)) & ~(market > most * (1 + _REACH))
    outcomes = [_status(fit, c, int(use[c].sum()), int(free[c].sum()), a_is_fixed[c], limits, max_iterations, rms[c])
                for c in range(n_curves)]
    status = [s for s, _m in outcomes]
    messages = [m for _s, m in outcomes]
    fitted = _Fit(quotes=quotes, market=market, model_vol=model_vol, residual=residual, err=err, least=least,
                  most=most, limits=limits, a_fixed=a_is_fixed, a_value=a_value)
    for c in range(n_curves):
        mine = take[c][use[c]]
        if status[c] == "no fit":
            if fit.code[c] == NOT_FINITE:
                messages[c] += _not_finite(basket, mine, x0[c], root)
            continue
        away = mine[~reachable[mine]]
        if away.size:  # a quote no parameters within the bounds reach: the fit cannot be "converged"
            messages[c] = (f"{_out_of_reach(fitted, away, c)}; {messages[c]}" if status[c] == "bound" else
                           f"{_out_of_reach(fitted, away, c)}; {messages[c].replace('converged', 'otherwise converged', 1)}")
            status[c] = "bound"
        if status[c] == "bound":
            messages[c] += _largest_errors(fitted, mine[reachable[mine]])
    a_out[failed], sigma_out[failed] = np.nan, np.nan
    return CalibrationResult(curve_names=names, a=a_out, sigma=sigma_out, a_fixed=a_is_fixed,
                             status=np.array(status, dtype=object), message=tuple(messages),
                             iterations=fit.iterations, objective=objective, rms=rms,
                             quote_count=use.sum(axis=1), error_type=error, instruments=basket, market_price=market,
                             model_price=model, market_vol=quotes.vol.copy(), model_vol=model_vol, residual=residual,
                             error=err, weight=w, reachable=reachable, least_price=least, most_price=most)


@dataclass(frozen=True)
class _Fit:
    """What the status messages quote: per quote its fit, and the calibration's bounds."""

    quotes: VolQuotes
    market: np.ndarray
    model_vol: np.ndarray
    residual: np.ndarray
    err: np.ndarray
    least: np.ndarray
    most: np.ndarray
    limits: Mapping[str, tuple[float, float]]
    a_fixed: np.ndarray
    a_value: np.ndarray


def _reach(basket: QuoteInstruments, a_value: np.ndarray, a_fixed: np.ndarray,
           limits: Mapping[str, tuple[float, float]], root: str) -> tuple[np.ndarray, np.ndarray]:
    """Per quote, the least and the greatest Hull-White price within the bounds (``a`` fixed or in its bounds,
    ``sigma`` in its): prices rise with ``sigma`` and fall with ``a``, so the extremes are corners of the box."""
    index = basket.curve_index
    a_low = np.where(a_fixed, a_value, limits["a"][0])[index]
    a_high = np.where(a_fixed, a_value, limits["a"][1])[index]
    corners = np.stack([basket.model_price(a=a, sigma=sigma, root=root) for a in (a_low, a_high)
                        for sigma in limits["sigma"]])
    corners = np.where(np.isfinite(corners), corners, np.nan)
    everywhere_nan = np.isnan(corners).all(axis=0)
    least = np.where(everywhere_nan, -np.inf, np.nanmin(np.where(everywhere_nan, 0.0, corners), axis=0))
    most = np.where(everywhere_nan, np.inf, np.nanmax(np.where(everywhere_nan, 0.0, corners), axis=0))
    return least, most


def _describe(quotes: VolQuotes, k: int) -> str:
    """A quote for a message: where it is and what it quotes."""
    strike = "" if np.isnan(quotes.strike[k]) else f", strike {quotes.strike[k]:g}"
    return (f"{quotes.where[k]} ({quotes.instrument[k]} expiry {quotes.expiry[k]}, tenor {quotes.tenor[k]}{strike}, "
            f"{quotes.kind[k]} vol {quotes.vol[k]:g})")


def _out_of_reach(fit: _Fit, rows: np.ndarray, curve: int) -> str:
    """The message naming the quotes whose market prices no parameters within the bounds reach."""
    lo, hi = fit.limits["a"], fit.limits["sigma"]
    a_text = f"a = {fit.a_value[curve]:g}" if fit.a_fixed[curve] else f"a in [{lo[0]:g}, {lo[1]:g}]"
    parts = []
    for k in rows[:_NAMED].tolist():
        side = (f"below the least Hull-White price {fit.least[k]:.6g}" if fit.market[k] < fit.least[k] else
                f"above the greatest Hull-White price {fit.most[k]:.6g}")
        parts.append(f"{_describe(fit.quotes, k)}: its market price {fit.market[k]:.6g} is {side}; the fit leaves "
                     f"it at model vol {fit.model_vol[k]:.6g} (residual {fit.residual[k]:.3g})")
    more = f"; and {rows.size - _NAMED} more" if rows.size > _NAMED else ""
    return (f"{rows.size} quote(s) out of reach of the model with {a_text}, sigma in [{hi[0]:g}, {hi[1]:g}]: "
            + "; ".join(parts) + more)


def _largest_errors(fit: _Fit, rows: np.ndarray) -> str:
    """The quotes ``rows`` (within reach) with the largest errors, for a curve whose fit ended at a bound."""
    if rows.size == 0:
        return ""
    order = rows[np.argsort(-np.abs(np.nan_to_num(fit.err[rows], nan=np.inf)), kind="stable")][:_NAMED]
    parts = [f"{_describe(fit.quotes, k)}: model vol {fit.model_vol[k]:.6g}, error {fit.err[k]:.3g}"
             for k in order.tolist()]
    return "; largest errors: " + "; ".join(parts)


def _not_finite(basket: QuoteInstruments, rows: np.ndarray, x0: np.ndarray, root: str) -> str:
    """The quotes whose model price or derivative is not finite at the starting point (for a message)."""
    with np.errstate(all="ignore"):
        price, d_a, d_sigma = basket.model_price(a=x0[0], sigma=x0[1], rows=rows, gradient=True, root=root)
    bad = rows[~(np.isfinite(price) & np.isfinite(d_a) & np.isfinite(d_sigma))]
    if bad.size == 0:
        return ""
    return ": " + "; ".join(_describe(basket.quotes, k) for k in bad[:_NAMED].tolist()) + (
        f"; and {bad.size - _NAMED} more" if bad.size > _NAMED else "")


def _implied(basket: QuoteInstruments, flat: np.ndarray, price: np.ndarray) -> np.ndarray:
    """Implied volatilities of ``price`` for the quotes ``flat`` (a quote may repeat)."""
    full = np.full(len(basket), np.nan)
    full[flat] = price
    return basket.implied_vol(full)[flat]


def _vega_at(basket: QuoteInstruments, flat: np.ndarray, vol: np.ndarray) -> np.ndarray:
    """The quotes' vegas at ``vol`` (at the quoted volatility where ``vol`` is not finite)."""
    full = basket.quotes.vol.copy()
    full[flat] = np.where(np.isfinite(vol), vol, basket.quotes.vol[flat])
    return basket.vega(full)[flat]


def _normal_vols(basket: QuoteInstruments) -> np.ndarray:
    """Each quote's market price as a Bachelier volatility (its forward, strike, annuity and expiry)."""
    from .volatility import bachelier_implied_vol

    return bachelier_implied_vol(price=basket.market_price, forward=basket.forward, strike=basket.strike,
                                 expiry=basket.expiry_time, annuity=basket.annuity, is_call=basket.is_call)


def _status(fit: LMResult, c: int, quotes: int, free: int, a_fixed: bool, limits: Mapping[str, tuple[float, float]],
            max_iterations: int, rms: float) -> tuple[str, str]:
    code = int(fit.code[c])
    if code == NOT_RUN:
        if quotes == 0:
            return "no fit", "no quotes with a weight above 0"
        return "no fit", f"{quotes} quote(s) for {free} free parameters"
    if code == NOT_FINITE or not np.isfinite(fit.cost[c]):
        return "no fit", "a model price or its derivative is not finite at the starting point"
    if code == MAX_ITERATIONS:
        return "no fit", (f"no convergence in {max_iterations} iterations (last a={fit.x[c, 0]:.6g}, "
                          f"sigma={fit.x[c, 1]:.6g})")
    hits = bound_hits(fit, c, limits)
    if hits:
        return "bound", hits + f"; rms error {rms:.3g}"
    fixed = ", a fixed" if a_fixed else ""
    return "converged", (f"converged ({fit.reason[c]}) in {int(fit.iterations[c])} iterations{fixed}; rms error "
                         f"{rms:.3g}")


def bound_hits(fit: LMResult, row: int, limits: dict[str, tuple[float, float]]) -> str:
    """Which of ``a`` and ``sigma`` fit row ``row`` left at a bound, as a message ("" where neither)."""
    hits = []
    for j, name in enumerate(("a", "sigma")):
        if fit.at_lower[row, j]:
            hits.append(f"{name} at its lower bound {limits[name][0]:g}")
        if fit.at_upper[row, j]:
            hits.append(f"{name} at its upper bound {limits[name][1]:g}")
    if not hits:
        return ""
    hint = " (the quotes ask for a mean reversion at or below zero)" if fit.at_lower[row, 0] else ""
    return "; ".join(hits) + hint
