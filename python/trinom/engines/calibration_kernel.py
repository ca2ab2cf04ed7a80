"""The per-trade Levenberg-Marquardt of :mod:`trinom.analytics.baskets` as a Futhark program (fut/calibrate.fut),
on the CPU (targets ``c``, ``multicore``) or a GPU (``cuda``, ``opencl``) (issue 26).

The program fits ``(a, sigma)`` per trade to the trade's swaptions, priced by Jamshidian's decomposition with the
exact root and the analytic derivatives (:func:`trinom.model.hull_white.jamshidian_swaption` with
``root="exact", gradient=True``), by the same bounded Levenberg-Marquardt as
:func:`trinom.model.calibration.levenberg_marquardt`, every step and stopping rule included: one trade per map
element, all iterations inside the program. It returns what that function returns (:class:`LMResult`), so that
the caller builds the same statuses. Only rounding differs (sums in order, a series for ``expm1``): the iterates
follow NumPy's to about 1e-12 while the cost is above its rounding, and the fits end with the same codes, bound
hits and cost (to 1e-10); where the objective is flat along ``a`` the two stop at different points of the valley,
as NumPy's own result moves when its rounding changes (tests/test_calibration_kernel.py).

The inputs are padded per trade: ``q`` quote slots per trade (``valid`` says which hold a quote) and a table of ``f``
cash flows per trade (pay time, accrual fraction, discount factor) that the trade's quotes share: quote ``k``'s fixed
leg is ``count[k]`` flows of its trade's table from ``first[k]``, its cash flows ``K tau_i N`` (the notional added to
the last) made in the program as :attr:`~trinom.model.rate_options.Swaptions.amounts` makes them. A trade whose
exercise dates lie on one schedule passes that schedule once (its co-terminal swaptions' legs are its tails);
:func:`per_quote_flows` lays out legs given per quote. Besides the fit the program returns, at the fitted
parameters, each quote's model price and whether a free parameter moves any quote's price (a flat objective where
not): :class:`KernelFit`. :func:`levenberg_marquardt_scenarios` fits many scenarios of the same trades in one call
(a risk run's recalibration): what the scenarios share (the slots' legs, the tables of flows) is passed once, and
per scenario only the quotes' market data and the discount factors at the tables' dates. The libraries are built by
``make lib`` as
``trinom._lib._futhark_calibrate_<target>``; a target that is not built (or has no device here) raises
:class:`~trinom.engines.BackendUnavailable` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..model.calibration import LMResult

#: The Futhark targets the program is built for.
TARGETS: Final[tuple[str, ...]] = ("c", "multicore", "opencl", "cuda")
PROGRAM: Final[str] = "calibrate"
ENTRY: Final[str] = "calibrate64"
#: The entry point of many scenarios of the same trades (:func:`levenberg_marquardt_scenarios`).
SCENARIOS_ENTRY: Final[str] = "calibrate_scenarios64"
#: The program's reason codes, as :attr:`LMResult.reason` spells them.
REASONS: Final[tuple[str, ...]] = ("", "gradient", "step", "cost", "stalled")
#: Columns of the program's result before the residuals (the fit's ten, then the flat-objective flag).
_FIXED_COLUMNS: Final[int] = 11


@dataclass(frozen=True, eq=False)
class KernelFit(LMResult):
    """:class:`~trinom.model.calibration.LMResult` and, at the fitted parameters, ``model``: ``(n, q)`` each slot's
    model price (0 in empty slots), ``moving``: ``(n,)`` whether some free parameter moves some quote's residual
    (``False``: a flat objective)."""

    model: np.ndarray
    moving: np.ndarray


def available(target: str) -> tuple[bool, str]:
    """``(usable, reason)``: is the program built for ``target`` and usable here?"""
    from . import _futhark

    if target not in TARGETS:
        return False, f"unknown target {target!r}; choose one of {', '.join(TARGETS)}"
    return _futhark.available(PROGRAM, target)


def auto_target() -> str | None:
    """The target ``backend="auto"`` picks: ``cuda`` where it is built and a GPU is here, else ``multicore``
    where it is built, else None (NumPy)."""
    from . import _futhark

    if _futhark.nvidia_gpu_present() and available("cuda")[0]:
        return "cuda"
    if available("multicore")[0]:
        return "multicore"
    return None


def _reals(values: npt.ArrayLike) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64)


def _flags(values: npt.ArrayLike) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=bool), dtype=np.int8)


def levenberg_marquardt_kernel(*, x0: npt.ArrayLike, lower: npt.ArrayLike, upper: npt.ArrayLike,
                               free: npt.ArrayLike, valid: npt.ArrayLike, expiry: npt.ArrayLike,
                               start: npt.ArrayLike, discount_start: npt.ArrayLike, notional: npt.ArrayLike,
                               payer: npt.ArrayLike, market: npt.ArrayLike, scale: npt.ArrayLike,
                               rate: npt.ArrayLike, first: npt.ArrayLike, count: npt.ArrayLike,
                               pay_time: npt.ArrayLike, accrual: npt.ArrayLike, discount_pay: npt.ArrayLike,
                               target: str = "multicore", max_iterations: int = 200, tolerance: float = 1e-12,
                               x_scale: float = 1e-12, damping: float = 1e-3, **options: Any) -> KernelFit:
    """Fit ``(a, sigma)`` per trade on a Futhark target; the arguments of
    :func:`~trinom.model.calibration.levenberg_marquardt` with the residual function's data spelt out.

    Args:
      x0, lower, upper: ``(n, 2)``: start and bounds of ``(a, sigma)`` (``-inf``/``inf``: unbounded; the start is
        clipped to them).
      free: ``(n, 2)`` bool: which parameters move.
      valid: ``(n, q)`` bool: which quote slots hold a quote (the mask of the residuals).
      expiry, start, discount_start, notional, payer: ``(n, q)``: each swaption's exercise time ``T``, its swap's
        start ``t0``, ``P(0, t0)``, notional and side (payer: True).
      market: ``(n, q)``: market prices; scale: ``(n, q)``: the residual is ``(model - market) * scale``
        (``1 / market`` for ``error="relative_price"``, 1 for ``"price"``).
      rate: ``(n, q)``: each swaption's fixed rate ``K``; first, count: ``(n, q)`` integers: its fixed leg is
        ``count`` flows of its trade's table from ``first`` (within ``f``).
      pay_time, accrual, discount_pay: ``(n, f)``: each trade's table of fixed-leg flows: payment times, accrual
        fractions and ``P(0, t_i)``; a quote's cash flows are ``K tau_i N``, the last plus ``N`` (one of 0 pays
        nothing).
      target: ``c``, ``multicore``, ``opencl`` or ``cuda``.
      max_iterations, tolerance, x_scale, damping: the solver's, as :func:`levenberg_marquardt`.
      options: context options (``num_threads``, ``device``, ``platform``, ``build_options``).

    Returns:
      :class:`KernelFit` (``residuals`` and ``model``: ``(n, q)``, 0 in empty slots).
    """
    from . import _futhark
    from .outcomes import BackendUnavailable

    if target not in TARGETS:
        raise BackendUnavailable(f"unknown calibration target {target!r}; choose one of {', '.join(TARGETS)}")
    context_options, _ = _futhark.split_options(options, (), "calibration kernel")
    x = _reals(x0).reshape(-1, 2)
    n = x.shape[0]
    use = _flags(valid).reshape(n, -1)
    q = use.shape[1]
    times = _reals(pay_time).reshape(n, -1)
    lo = np.ascontiguousarray(np.broadcast_to(_reals(lower), (n, 2)))
    hi = np.ascontiguousarray(np.broadcast_to(_reals(upper), (n, 2)))
    if n == 0 or q == 0 or times.shape[1] == 0:  # no quote anywhere: every trade NOT_RUN, as NumPy's solver says
        return _not_run(np.clip(x, lo, hi), q)
    legs = _legs(first, count, use != 0, times.shape[1])
    per_quote = [np.ascontiguousarray(np.broadcast_to(_reals(v), (n, q))) for v in (expiry, start, discount_start,
                                                                                      notional)]
    arguments = [np.int32(max_iterations), np.float64(tolerance), np.float64(x_scale), np.float64(damping), x, lo, hi,
                 np.ascontiguousarray(np.broadcast_to(_flags(free), (n, 2))), use, *per_quote,
                 np.ascontiguousarray(np.broadcast_to(_flags(payer), (n, q))), _reals(market).reshape(n, q),
                 np.ascontiguousarray(np.broadcast_to(_reals(scale), (n, q))),
                 np.ascontiguousarray(np.broadcast_to(_reals(rate), (n, q))), *legs, times,
                 _reals(accrual).reshape(times.shape), _reals(discount_pay).reshape(times.shape)]
    library = _futhark.usable_context(PROGRAM, target, context_options)
    out = np.asarray(library.call(ENTRY, *arguments), dtype=np.float64).reshape(n, _FIXED_COLUMNS + 2 * q)
    return _fit_of(out, out[:, _FIXED_COLUMNS:_FIXED_COLUMNS + q], out[:, _FIXED_COLUMNS + q:])


def _legs(first: npt.ArrayLike, count: npt.ArrayLike, used: np.ndarray, flows: int) -> list[np.ndarray]:
    """The quotes' legs ``(first, count)`` as ``(n, q)`` int64 arrays, checked inside their trades' tables of
    ``flows`` flows where ``used``."""
    legs = [np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype=np.int64), used.shape)) for v in (first, count)]
    if (legs[0][used] < 0).any() or (np.where(used, legs[0] + legs[1], 0) > flows).any():
        raise ValueError("a quote's leg (first, count) reaches outside its trade's table of flows")
    return legs


def _fit_of(rows: np.ndarray, residuals: np.ndarray, model: np.ndarray) -> KernelFit:
    """A :class:`KernelFit` from the kernel's rows (one per trade: its fixed columns first)."""
    return KernelFit(x=rows[:, :2].copy(), cost=rows[:, 2].copy(), residuals=residuals,
                     code=rows[:, 3].astype(np.int64), reason=np.array(REASONS, dtype=object)[rows[:, 4].astype(np.int64)],
                     iterations=rows[:, 5].astype(np.int64), at_lower=rows[:, 6:8] != 0, at_upper=rows[:, 8:10] != 0,
                     model=model, moving=rows[:, 10] != 0)


def levenberg_marquardt_scenarios(*, x0: npt.ArrayLike, lower: npt.ArrayLike, upper: npt.ArrayLike,
                                  free: npt.ArrayLike, quote: npt.ArrayLike, first: npt.ArrayLike,
                                  count: npt.ArrayLike, pay_time: npt.ArrayLike, accrual: npt.ArrayLike,
                                  date: npt.ArrayLike, expiry: npt.ArrayLike, notional: npt.ArrayLike,
                                  payer: npt.ArrayLike, valid: npt.ArrayLike, market: npt.ArrayLike,
                                  scale: npt.ArrayLike, rate: npt.ArrayLike, discount_start: npt.ArrayLike,
                                  discount: npt.ArrayLike, target: str = "multicore", max_iterations: int = 200,
                                  tolerance: float = 1e-12, x_scale: float = 1e-12, damping: float = 1e-3,
                                  with_model: bool = False, **options: Any) -> list[KernelFit]:
    """:func:`levenberg_marquardt_kernel` of ``s`` scenarios of the same ``n`` trades in one call: per scenario the
    fit of each trade to the quotes in its slots, from what the scenarios share passed once.

    Args:
      x0, lower, upper, free: ``(s, n, 2)``: per scenario and trade, as :func:`levenberg_marquardt_kernel`.
      quote: ``(n, q)`` integers: each slot's quote (an index into the per-quote arrays; -1: an empty slot; slots of
        quotes that are alike may name one quote); first, count: ``(n, q)``: its leg, ``count`` flows of its trade's
        table from ``first``.
      pay_time, accrual: ``(n, f)``: each trade's table of flows; date: ``(n, f)`` integers: each flow's date as an
        index into a scenario's ``discount``.
      expiry, notional, payer: ``(v,)``: per quote its exercise time (its swap starts there), notional and side.
      valid, market, scale, rate, discount_start: ``(s, v)``: per scenario and quote whether the fit takes it, its
        market price, the residual's scale, its fixed rate and ``P(0, T)``.
      discount: ``(s, u)``: per scenario the discount factors at the tables' dates.
      target, max_iterations, tolerance, x_scale, damping, options: as :func:`levenberg_marquardt_kernel`.
      with_model: also each slot's model price at the fit (``model``; otherwise ``(n, 0)``, as ``residuals``).

    Returns:
      Per scenario a :class:`KernelFit`, the one :func:`levenberg_marquardt_kernel` gives for the scenario's valid
      quotes in its trades' slots (a slot whose quote is not valid adds exact zeros to the sums: the same bits as
      those quotes packed into fewer slots); ``residuals`` (with ``with_model``) ``(model - market) * scale`` in the
      used slots, 0 elsewhere.
    """
    from . import _futhark
    from .outcomes import BackendUnavailable

    if target not in TARGETS:
        raise BackendUnavailable(f"unknown calibration target {target!r}; choose one of {', '.join(TARGETS)}")
    context_options, _ = _futhark.split_options(options, (), "calibration kernel")
    slots = np.ascontiguousarray(quote, dtype=np.int64)
    n, q = slots.shape
    factors = _reals(discount)
    states = factors.shape[0]
    x = _reals(x0).reshape(states, n, 2)
    times = _reals(pay_time).reshape(n, -1)
    lo = np.ascontiguousarray(np.broadcast_to(_reals(lower), (states, n, 2)))
    hi = np.ascontiguousarray(np.broadcast_to(_reals(upper), (states, n, 2)))
    if states == 0 or n == 0 or q == 0 or times.shape[1] == 0 or not (slots >= 0).any():
        return [_not_run(np.clip(x[k], lo[k], hi[k]), q if with_model else 0) for k in range(states)]
    used = slots >= 0
    legs = _legs(first, count, used, times.shape[1])
    per_quote = [_reals(v).reshape(-1) for v in (expiry, notional)]
    v = per_quote[0].size
    if slots.max() >= v:
        raise ValueError(f"a slot names quote {int(slots.max())} of {v}")
    dates = np.ascontiguousarray(date, dtype=np.int64).reshape(times.shape)
    if dates.size and (dates.min() < 0 or dates.max() >= factors.shape[1]):
        raise ValueError("a flow's date reaches outside the discount factors")
    per_scenario = [np.ascontiguousarray(np.broadcast_to(_reals(a), (states, v))) for a in (market, scale, rate,
                                                                                           discount_start)]
    flags = np.ascontiguousarray(np.broadcast_to(_flags(valid), (states, v)))
    arguments = [np.int32(max_iterations), np.float64(tolerance), np.float64(x_scale), np.float64(damping),
                 bool(with_model), x, lo, hi, np.ascontiguousarray(np.broadcast_to(_flags(free), (states, n, 2))),
                 slots, *legs, times, _reals(accrual).reshape(times.shape), dates, *per_quote,
                 np.ascontiguousarray(np.broadcast_to(_flags(payer), (v,))), flags, *per_scenario, factors]
    library = _futhark.usable_context(PROGRAM, target, context_options)
    width = _FIXED_COLUMNS + (q if with_model else 0)
    out = np.asarray(library.call(SCENARIOS_ENTRY, *arguments), dtype=np.float64).reshape(states, n, width)
    at = np.where(used, slots, 0)
    fits = []
    for k in range(states):
        rows = out[k]
        model = rows[:, _FIXED_COLUMNS:]
        residuals = model
        if with_model:
            taken = used & (flags[k][at] != 0)
            residuals = np.where(taken, (model - per_scenario[0][k][at]) * per_scenario[1][k][at], 0.0)
        fits.append(_fit_of(rows, residuals, model))
    return fits


def per_quote_flows(*, valid: npt.ArrayLike, pay_time: npt.ArrayLike, accrual: npt.ArrayLike,
                    discount_pay: npt.ArrayLike, count: npt.ArrayLike) -> dict[str, np.ndarray]:
    """Legs given per quote slot (``(n, q, c)`` arrays, ``count`` ``(n, q)`` flows each) as the program's per-trade
    tables: each slot's leg its own segment (``first = k c``). The arguments ``first``, ``count``, ``pay_time``,
    ``accrual``, ``discount_pay`` of :func:`levenberg_marquardt_kernel`."""
    t = _reals(pay_time)
    n, q, c = t.shape
    used = np.asarray(valid, dtype=bool).reshape(n, q)
    return {"first": np.broadcast_to(np.arange(q, dtype=np.int64) * c, (n, q)).copy(),
            "count": np.where(used, np.asarray(count, dtype=np.int64).reshape(n, q), 0),
            "pay_time": t.reshape(n, q * c), "accrual": _reals(accrual).reshape(n, q * c),
            "discount_pay": _reals(discount_pay).reshape(n, q * c)}


def _not_run(x: np.ndarray, q: int) -> KernelFit:
    from ..model.calibration import NOT_RUN

    n = x.shape[0]
    return KernelFit(x=x.copy(), cost=np.zeros(n), residuals=np.zeros((n, q)), code=np.full(n, NOT_RUN, np.int64),
                     reason=np.full(n, "", dtype=object), iterations=np.zeros(n, np.int64),
                     at_lower=np.zeros((n, 2), bool), at_upper=np.zeros((n, 2), bool), model=np.zeros((n, q)),
                     moving=np.zeros(n, dtype=bool))
