"""The fit: one ``(a, sigma)`` per trade by a batched Levenberg-Marquardt, in NumPy or the Futhark kernel, for one
market (:func:`calibrate_baskets`) or many scenarios (:func:`calibrate_prepared`, :func:`calibrate_scenarios`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ...conventions.dates import as_dates, to_days
from ...errors import InputError
from ...model.calibration import CONVERGED, DEFAULT_BOUNDS, ERRORS, levenberg_marquardt
from ...model.hull_white import ROOTS
from ...model.quotes import VolQuotes, VolSurface
from .building import Baskets
from .preparation import STRIKES, PreparedBaskets, _packed_slots, _Priced, prepare_baskets
from .quote_set import _QuoteSet
from .results import _FLAT, BasketCalibration, _statuses

#: A quote whose market price is its intrinsic value within this fraction has no volatility to fit: left out.
_NO_TIME_VALUE: Final[float] = 1e-12


def calibrate_baskets(*, curves: Any, vols: VolSurface | VolQuotes | str | Path | Any = None, as_of: object = None,
                      baskets: Baskets | PreparedBaskets, a: float | npt.ArrayLike | None = None,
                      strike: str | None = None, error: str = "relative_price",
                      bounds: Mapping[str, tuple[float, float]] | None = None, a_guess: float = 0.05,
                      sigma_guess: float | None = None, max_iterations: int = 500, tolerance: float = 1e-12,
                      root: str = "exact", backend: str = "numpy", x0: npt.ArrayLike | None = None,
                      vol_shift: float = 0.0) -> BasketCalibration:
    """Fit one Hull-White ``(a, sigma)`` per trade to its basket's swaptions, all trades at once (see the module's
    documentation).

    Args:
      curves: ``{name: DatedCurve}`` or one :class:`~trinom.model.DatedCurve`, as of ``as_of``.
      vols: a :class:`~trinom.model.quotes.VolSurface`, or quotes it is built from (:class:`VolQuotes`, a
        ``vols.csv`` / Parquet path, a DataFrame); not needed with prepared baskets.
      as_of: the valuation date (prepared baskets: theirs).
      baskets: :class:`Baskets` (:func:`trade_baskets`, :func:`bond_baskets`), or :class:`PreparedBaskets`
        (:func:`prepare_baskets`: the same fit, its state-independent part done once for many calls).
      a: ``None``: free; a number: fixed for every trade; an array: per trade (NaN: free).
      strike: ``atm`` (default; each swaption's forward swap rate) or ``deal`` (the trade's rate); prepared baskets
        have theirs.
      error: ``relative_price`` (default), ``price`` or ``vol``, as :func:`~trinom.model.calibration.calibrate`.
      bounds, a_guess, sigma_guess, max_iterations, tolerance: as :func:`~trinom.model.calibration.calibrate`
        (``sigma_guess`` default: per trade, the median over its quotes of the ``sigma`` that gives each quote's
        normal volatility to first order at ``a``; ``max_iterations`` 500: a few baskets among thousands fit
        ``a`` along a narrow valley, in up to about 300 steps; only they take them).
      root: the Jamshidian root while fitting: ``exact`` (default, a smooth objective) or ``quantlib``.
      backend: where the solver runs: ``numpy`` (default: :func:`~trinom.model.calibration.levenberg_marquardt`),
        a Futhark target (``c``, ``multicore``, ``cuda``, ``opencl``: the same solver in fut/calibrate.fut,
        :mod:`trinom.engines.calibration_kernel`, for ``error="relative_price"`` or ``"price"`` with
        ``root="exact"``: the same statuses, sigma with ``a`` fixed to about 1e-10 relative, and with ``a`` free
        the same cost to 1e-10, the parameters apart only along a flat valley in ``a`` where NumPy's own result
        moves as much with its rounding), or ``auto``: ``cuda`` where built and a GPU is here, else ``multicore``
        where built, else (and for ``error="vol"`` or ``root="quantlib"``) NumPy. The quotes, statuses and
        messages are NumPy's on every backend; a Futhark target also returns the model prices at the fit and
        whether any quote's price moves there (a flat objective: ``no fit``), to the last digits NumPy's agree.
      x0: ``(trades, 2)``: per trade a start ``(a, sigma)`` (a warm start, such as another scenario's fit; NaN:
        the default start); ``a`` starts there only where it is free and fitted.
      vol_shift: every quoted volatility moved by this much (in the surface's units) before the fit.

    Returns:
      :class:`BasketCalibration`; raises :class:`~trinom.InputError` only for bad input (never for a trade that
      does not fit), :class:`~trinom.engines.BackendUnavailable` where a Futhark target is not built or usable.
    """
    _check_options(error, root, backend)
    if isinstance(baskets, PreparedBaskets):
        prepared = baskets
        if strike is not None and strike != prepared.strike:
            raise InputError([(None, "strike", f"the baskets were prepared with strike={prepared.strike!r}, not "
                               f"{strike!r}")])
        if as_of is not None:
            day, problems = to_days([as_of], field="as_of")
            if problems or as_dates(day)[0] != prepared.as_of:
                raise InputError([(None, "as_of", f"the baskets were prepared as of {prepared.as_of}, not {as_of}")])
    else:
        if strike is not None and strike not in STRIKES:
            raise InputError([(None, "strike", f"strike must be one of {', '.join(STRIKES)}, got {strike!r}")])
        if vols is None:
            raise InputError([(None, "vols", "give the volatilities (vols=)")])
        prepared = prepare_baskets(baskets, vols, as_of, curves=curves, strike=strike or "atm")
    return calibrate_prepared(prepared, [(curves, vol_shift)], x0=None if x0 is None else [x0], a=a, error=error,
                              bounds=bounds, a_guess=a_guess, sigma_guess=sigma_guess, max_iterations=max_iterations,
                              tolerance=tolerance, root=root, backend=backend)[0]


def _check_options(error: str, root: str, backend: str) -> str:
    """The options' errors as :func:`calibrate_baskets` raises them; returns where the solver runs (``numpy`` or a
    Futhark target)."""
    from ...engines.calibration_kernel import TARGETS as KERNEL_TARGETS
    from ...engines.calibration_kernel import auto_target

    for name, value, choices in (("error", error, ERRORS), ("root", root, ROOTS),
                                 ("backend", backend, ("numpy", "auto", *KERNEL_TARGETS))):
        if value not in choices:
            raise InputError([(None, name, f"{name} must be one of {', '.join(choices)}, got {value!r}")])
    if backend in KERNEL_TARGETS and (error == "vol" or root != "exact"):
        raise InputError([(None, "backend", f"backend {backend!r} fits error='relative_price' or 'price' with "
                           f"root='exact' (got error={error!r}, root={root!r}); use backend='numpy'")])
    if backend == "auto":
        return (auto_target() if error != "vol" and root == "exact" else None) or "numpy"
    if backend in KERNEL_TARGETS:
        from ...engines import BackendUnavailable
        from ...engines.calibration_kernel import available

        usable, why = available(backend)
        if not usable:
            raise BackendUnavailable(f"calibration backend {backend!r}: {why}")
    return backend


#: Cells per call of the kernel (per scenario its trades' outcomes, starts and bounds, and its distinct quotes' and
#: dates' market data): scenarios beyond it are fitted in further calls, so that what a call holds stays a few
#: hundred megabytes.
_KERNEL_CELLS: Final[int] = 20_000_000
#: The kernel's values per trade before its model prices (calibration_kernel's fixed columns).
_OUTCOME_COLUMNS: Final[int] = 11


@dataclass(frozen=True)
class _Options:
    """A per-trade calibration's options, checked (:func:`_options`): where the solver runs (``engine``), the bounds
    (``limits``), per trade the given ``a`` (NaN: free) and per scenario the start (None: the default)."""

    engine: str
    error: str
    root: str
    limits: dict[str, tuple[float, float]]
    a_given: np.ndarray
    starts: list[np.ndarray | None]
    a_guess: float
    sigma_guess: float | None
    max_iterations: int
    tolerance: float


def _options(prepared: PreparedBaskets, states: int, *, x0: Any, a: Any, error: str,
             bounds: Mapping[str, tuple[float, float]] | None, a_guess: float, sigma_guess: float | None,
             max_iterations: int, tolerance: float, root: str, backend: str) -> _Options:
    """The arguments of :func:`calibrate_prepared`, checked: an :class:`~trinom.InputError` for bad ones."""
    engine = _check_options(error, root, backend)
    if engine != "numpy" and prepared.two_curves:  # the kernel's swaptions are on one curve
        if backend != "auto":
            raise InputError([(None, "backend", f"backend {backend!r} fits swaptions on one curve; some trades' "
                               "floating legs are projected on a forecast curve: use backend='numpy' or 'auto'")])
        engine = "numpy"
    limits = dict(DEFAULT_BOUNDS)
    limits.update(bounds or {})
    problems = [(None, name, f"bounds[{name!r}] must be 0 < lo <= hi, got {limits[name]}") for name in ("a", "sigma")
                if not (0 < limits[name][0] <= limits[name][1])]
    problems += [(None, name, f"unknown bound {name!r} (a, sigma)") for name in limits if name not in ("a", "sigma")]
    if problems:
        raise InputError(problems)
    baskets = prepared.baskets
    n = len(baskets)
    a_given = np.full(n, np.nan)
    if a is not None:
        a_given = np.broadcast_to(np.asarray(a, dtype=np.float64), (n,)).copy() if np.ndim(a) == 0 else \
            np.asarray(a, dtype=np.float64).reshape(-1)
        if a_given.size != n:
            raise InputError([(None, "a", f"a has {a_given.size} values, expected one per trade ({n})")])
        bad = np.flatnonzero(~np.isnan(a_given) & ~(np.isfinite(a_given) & (a_given > 0)))
        if bad.size:
            raise InputError([(int(k), "a", f"{baskets.where[k]}: a must be a finite number > 0 (NaN: free), got "
                               f"{a_given[k]}") for k in bad])
    return _Options(engine=engine, error=error, root=root, limits=limits, a_given=a_given,
                    starts=_starts(x0, states, n), a_guess=float(a_guess), sigma_guess=sigma_guess,
                    max_iterations=max_iterations, tolerance=tolerance)


def calibrate_prepared(prepared: PreparedBaskets, states: Sequence[tuple[Any, float]], *,
                       x0: Sequence[npt.ArrayLike | None] | npt.ArrayLike | None = None,
                       a: float | npt.ArrayLike | None = None, error: str = "relative_price",
                       bounds: Mapping[str, tuple[float, float]] | None = None, a_guess: float = 0.05,
                       sigma_guess: float | None = None, max_iterations: int = 500, tolerance: float = 1e-12,
                       root: str = "exact", backend: str = "numpy", details: bool = True) -> list[BasketCalibration]:
    """:func:`calibrate_baskets` of prepared baskets in several scenarios at once: ``states`` is a sequence of
    ``(curves, vol_shift)``, each fitted as :func:`calibrate_baskets` fits it, on a Futhark target in batched calls
    of the kernel (every scenario's trades together, what the scenarios share passed once). ``x0``: one
    ``(trades, 2)`` start for every scenario, or one per scenario (None: the default start). ``details=False`` leaves
    out what a refit in many scenarios does not read: the per-quote model volatilities, vol residuals and rmse (NaN),
    and the messages of trades with a fit (their notes). The other arguments are :func:`calibrate_baskets`'s; one
    :class:`BasketCalibration` per scenario (:func:`calibrate_scenarios`: the trades' fits alone)."""
    options = _options(prepared, len(states), x0=x0, a=a, error=error, bounds=bounds, a_guess=a_guess,
                       sigma_guess=sigma_guess, max_iterations=max_iterations, tolerance=tolerance, root=root,
                       backend=backend)
    return [fit for fit in _scenario_fits(prepared, states, options, details=details, quotes=True)
            if isinstance(fit, BasketCalibration)]


@dataclass(frozen=True, eq=False)
class ScenarioFits:
    """:func:`calibrate_scenarios`' outcome: per scenario (rows) and trade (columns, in the baskets' order) ``a`` and
    ``sigma`` (NaN where there is no fit), ``status`` (``converged``, ``bound``, ``no fit``), ``message`` (a trade
    with a fit: its basket's notes; without: why), ``iterations``, and ``fitted`` (the status is not ``no fit``):
    what :func:`calibrate_prepared` with ``details=False`` says of the trades; ``id`` per trade."""

    id: np.ndarray
    a: np.ndarray
    sigma: np.ndarray
    status: np.ndarray
    message: np.ndarray
    iterations: np.ndarray
    fitted: np.ndarray

    def __len__(self) -> int:
        return int(self.a.shape[0])


def calibrate_scenarios(prepared: PreparedBaskets, states: Sequence[tuple[Any, float]], *,
                        x0: Sequence[npt.ArrayLike | None] | npt.ArrayLike | None = None,
                        a: float | npt.ArrayLike | None = None, error: str = "relative_price",
                        bounds: Mapping[str, tuple[float, float]] | None = None, a_guess: float = 0.05,
                        sigma_guess: float | None = None, max_iterations: int = 500, tolerance: float = 1e-12,
                        root: str = "exact", backend: str = "numpy") -> ScenarioFits:
    """:func:`calibrate_prepared` (``details=False``) of many scenarios, the trades' fits alone (a risk run's
    recalibration: :class:`ScenarioFits`): the same ``a``, ``sigma``, statuses and messages, without the per-quote
    market data and model prices, so that a scenario costs its distinct quotes' prices (quotes that are alike,
    :class:`_QuotePlan`, priced once), the solver and its trades' statuses."""
    options = _options(prepared, len(states), x0=x0, a=a, error=error, bounds=bounds, a_guess=a_guess,
                       sigma_guess=sigma_guess, max_iterations=max_iterations, tolerance=tolerance, root=root,
                       backend=backend)
    n = len(prepared)
    fits = [fit for fit in _scenario_fits(prepared, states, options, details=False, quotes=False)
            if isinstance(fit, _TradeFits)]
    kinds = {"a": np.float64, "sigma": np.float64, "status": object, "message": object, "iterations": np.int64,
             "fitted": bool}  # _TradeFits' fields, each stacked over the scenarios (rows)
    return ScenarioFits(id=prepared.baskets.id.copy(), **{
        name: np.stack([getattr(f, name) for f in fits]) if fits else np.zeros((0, n), dtype=kind)
        for name, kind in kinds.items()})


@dataclass(frozen=True, eq=False)
class _TradeFits:
    """One scenario's fits of the trades alone (:class:`ScenarioFits`' row)."""

    a: np.ndarray
    sigma: np.ndarray
    status: np.ndarray
    message: np.ndarray
    iterations: np.ndarray
    fitted: np.ndarray


def _scenario_fits(prepared: PreparedBaskets, states: Sequence[tuple[Any, float]], options: _Options, *,
                   details: bool, quotes: bool) -> list[BasketCalibration | _TradeFits]:
    """Every scenario of ``states`` fitted: with ``quotes`` a :class:`BasketCalibration` each, else the trades' fits
    (:class:`_TradeFits`). NumPy fits scenario by scenario; a Futhark target takes the scenarios in as few calls of
    the kernel as :data:`_KERNEL_CELLS` allows."""
    results: list[BasketCalibration | _TradeFits] = []
    group: list[_KernelScenario] = []  # scenarios waiting for one call of the kernel
    cells = 0
    for (curves, vol_shift), start in zip(states, options.starts, strict=True):
        if options.engine == "numpy":
            setup = _Setup.of(prepared, prepared.quotes(curves, vol_shift, quantlib_forward=options.root == "quantlib"),
                              options, start)
            results.append(setup.finish(setup.solve_numpy(options), options, details, quotes))
            continue
        scenario = _KernelScenario.of(prepared, prepared._priced(curves, vol_shift), vol_shift, options, start)
        size = scenario.cells(quotes)
        if group and cells + size > _KERNEL_CELLS:
            results += _kernel_group(prepared, group, options, details, quotes)
            group, cells = [], 0
        group.append(scenario)
        cells += size
    if group:
        results += _kernel_group(prepared, group, options, details, quotes)
    return results


def _starts(x0: Any, states: int, n: int) -> list[np.ndarray | None]:
    """Per scenario, the start ``(n, 2)`` or None."""
    if x0 is None:
        return [None] * states
    if not isinstance(x0, (list, tuple)):  # one start for every scenario
        x0 = [x0] * states
    if len(x0) != states:
        raise InputError([(None, "x0", f"x0 has {len(x0)} starts for {states} scenarios")])
    out: list[np.ndarray | None] = []
    for start in x0:
        if start is None:
            out.append(None)
            continue
        array = np.asarray(start, dtype=np.float64)
        if array.shape != (n, 2):
            raise InputError([(None, "x0", f"x0 must be (trades, 2) = ({n}, 2) per scenario, got {array.shape}")])
        out.append(array)
    return out


def _usable_quotes(market: np.ndarray, annuity: np.ndarray, payer: np.ndarray, forward: np.ndarray,
                   strike: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which quotes have a positive market price, and which of those have no time value (the price is the
    intrinsic value within :data:`_NO_TIME_VALUE`): the fit leaves both kinds out."""
    intrinsic = annuity * np.maximum(np.where(payer, 1.0, -1.0) * (forward - strike), 0.0)
    positive = np.isfinite(market) & (market > 0)
    with np.errstate(invalid="ignore"):
        timeless = positive & (market - intrinsic <= _NO_TIME_VALUE * market)
    return positive, timeless


def _note_left_out(messages: list[str], owner: np.ndarray, positive: np.ndarray, timeless: np.ndarray,
                   example: Any) -> None:
    """Per trade with quotes left out (no positive market price, no time value), a note in its message naming how
    many and the first (``example(quote)``: its exercise, forward, strike, kind, vol and shift)."""
    n = len(messages)
    for bad, what in ((~positive, "without a positive market price"),
                      (timeless, "without time value (deep in the money: the price is the intrinsic value)")):
        where = np.flatnonzero(bad)
        if not where.size:
            continue
        left = np.bincount(owner[where], minlength=n)
        trades, at = np.unique(owner[where], return_index=True)
        for k, first in zip(trades.tolist(), where[at].tolist(), strict=True):
            exercise, forward, strike, kind, vol, shift = example(first)
            note = (f"{left[k]} quote(s) {what} left out (e.g. exercise {exercise}: forward {forward:.6g}, strike "
                    f"{strike:.6g}, {kind} vol {vol:.6g}, shift {shift:g})")
            messages[k] = f"{messages[k]}; {note}" if messages[k] else note


@dataclass(frozen=True, eq=False)
class _Start:
    """The solver's start and bounds per trade: ``a`` fixed (given) or held (one quote, ``a`` free: held at its guess),
    which parameters are free, the start ``x0`` and the bounds (free parameters: the limits; others unbounded)."""

    a_fixed: np.ndarray
    held: np.ndarray
    free: np.ndarray
    x0: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, options: _Options, count: np.ndarray, owner: np.ndarray, valid: np.ndarray, fill: np.ndarray,
           start: np.ndarray | None, matching: Any) -> _Start:
        """``count`` quotes per trade in slots (``valid``, ``fill``: each slot's quote, 0 where empty); a trade
        without a start (``start`` None or NaN) starts from the median over its quotes of ``matching(a, rows)`` (the
        sigma matching each quote's normal volatility, :meth:`_QuoteSet.matching_sigma`) or ``sigma_guess``."""
        n = count.size
        limits = options.limits
        a_fixed = ~np.isnan(options.a_given)
        a_start = np.where(a_fixed, options.a_given, options.a_guess)
        held = ~a_fixed & (count == 1)  # one quote cannot fix both: a held at its guess
        free = np.stack([~a_fixed & ~held, np.ones(n, dtype=bool)], axis=1)
        sigma0 = np.full(n, np.nan)
        if start is not None:  # a warm start: a where it is fitted, sigma where given
            a_start = np.where(free[:, 0] & np.isfinite(start[:, 0]), start[:, 0], a_start)
            sigma0 = np.where(np.isfinite(start[:, 1]), start[:, 1], np.nan)
        cold = np.isnan(sigma0)
        if cold.any():
            if options.sigma_guess is None:  # per quote the sigma giving its normal volatility (to first order): median
                nq = owner.size
                rows = np.arange(nq) if cold.all() else np.flatnonzero(cold[owner])
                each = np.full(max(nq, 1), np.nan)
                if rows.size:
                    each[rows] = matching(a_start[owner[rows]], rows)
                median = np.full(n, np.nan)
                some = cold & (valid & np.isfinite(each[fill])).any(axis=1)
                if some.any():
                    median[some] = _nan_medians(np.where(valid, each[fill], np.nan)[some])
                guess = np.clip(np.where(np.isfinite(median) & (median > 0), median, 0.01), limits["sigma"][0],
                                limits["sigma"][1])
            else:
                guess = np.full(n, float(options.sigma_guess))
            sigma0 = np.where(cold, guess, sigma0)
        lower = np.array([limits["a"][0], limits["sigma"][0]])
        upper = np.array([limits["a"][1], limits["sigma"][1]])
        return cls(a_fixed=a_fixed, held=held, free=free, x0=np.stack([a_start, sigma0], axis=1),
                   lower=np.where(free, lower, -np.inf), upper=np.where(free, upper, np.inf))


def _nan_medians(values: np.ndarray) -> np.ndarray:
    """Each row's median of its numbers (NaN left out; every row has one): ``np.nanmedian(values, axis=1)``, its
    arithmetic (the mean of the two middle values, of the one twice for an odd count) without its masked arrays."""
    ordered = np.sort(values, axis=1)  # NaN last
    count = np.count_nonzero(~np.isnan(values), axis=1)
    high = count // 2
    low = np.where(count % 2 == 1, high, high - 1)
    rows = np.arange(values.shape[0])
    return (ordered[rows, low] + ordered[rows, high]) / 2.0


@dataclass(eq=False)
class _Setup:
    """One scenario's fit by NumPy before the solver: its quotes, messages, the solver's padded slots (the priced
    quotes packed) and its start."""

    prepared: PreparedBaskets
    quotes: _QuoteSet
    messages: list[str]
    count: np.ndarray
    priced: np.ndarray
    good: np.ndarray
    valid: np.ndarray
    fill: np.ndarray
    start: _Start

    @classmethod
    def of(cls, prepared: PreparedBaskets, quotes: _QuoteSet, options: _Options, start: np.ndarray | None) -> _Setup:
        messages = list(prepared.notes)
        owner = quotes.trade
        positive, timeless = _usable_quotes(quotes.market_price, quotes.annuity, quotes.payer, quotes.forward,
                                            quotes.strike)
        _note_left_out(messages, owner, positive, timeless,
                       lambda q: (quotes.exercise[q], quotes.forward[q], quotes.strike[q], quotes.kind[q],
                                  quotes.market_vol[q], quotes.shift[q]))
        priced = positive & ~timeless
        count, slot, good = _packed_slots(owner, priced, len(prepared))
        valid = slot >= 0
        fill = np.where(valid, slot, 0)
        return cls(prepared=prepared, quotes=quotes, messages=messages, count=count, priced=priced, good=good,
                   valid=valid, fill=fill, start=_Start.of(options, count, owner, valid, fill, start,
                                                           quotes.matching_sigma))

    def residuals(self, error: str, root: str) -> Any:
        """The NumPy solver's residual function (rows of trades at their parameters)."""
        quotes, valid, fill = self.quotes, self.valid, self.fill
        market = quotes.market_price
        nq = quotes.trade.size

        def residuals(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            here = valid[rows]
            flat = fill[rows][here]
            who = np.broadcast_to(np.arange(rows.size)[:, None], here.shape)[here]
            part = quotes.swaptions if flat.size == nq and np.array_equal(flat, np.arange(nq)) else \
                quotes.swaptions.take(flat)
            price, d_a, d_s = part.price(a=x[who, 0], sigma=x[who, 1], gradient=True, root=root)
            if error == "relative_price":
                scale = 1.0 / market[flat]
                e = (price - market[flat]) * scale
            elif error == "price":
                scale = np.ones(flat.size)
                e = price - market[flat]
            else:
                vol = quotes.implied_vol(price, flat)
                scale = 1.0 / quotes.vega(np.where(np.isfinite(vol), vol, quotes.market_vol[flat]), flat)
                e = vol - quotes.market_vol[flat]
            r = np.zeros(here.shape)
            jac = np.zeros((*here.shape, 2))
            r[here] = e
            jac[here] = np.stack([d_a * scale, d_s * scale], axis=1)
            return r, jac

        return residuals

    def solve_numpy(self, options: _Options) -> Any:
        start = self.start
        with np.errstate(over="ignore", under="ignore"):
            return levenberg_marquardt(self.residuals(options.error, options.root), start.x0, lower=start.lower,
                                       upper=start.upper, free=start.free, mask=self.valid,
                                       max_iterations=options.max_iterations, tolerance=options.tolerance)

    def finish(self, fit: Any, options: _Options, details: bool, with_quotes: bool) -> BasketCalibration | _TradeFits:
        """The scenario's outcome from the solver's ``fit``: a fit that stopped on a flat objective (no quote's price
        moves with the free parameters, its residuals not 0) found nothing: no fit, not converged."""
        code = fit.code.copy()
        check = np.flatnonzero((code == CONVERGED) & (fit.cost > 0))
        if check.size:
            _r, jac = self.residuals(options.error, options.root)(fit.x[check], check)
            moving = (np.abs(jac) * self.start.free[check][:, None, :] > 0).any(axis=(1, 2))
            code[check[~moving]] = _FLAT
        if not with_quotes:
            return _trade_fits(self.prepared, fit, code, self.count, self.start, self.messages, options)
        quotes, owner = self.quotes, self.quotes.trade
        model = np.full(owner.size, np.nan)
        if self.good.size:
            fitted = code == CONVERGED
            good = self.good
            model[good] = quotes.swaptions.take(good).price(a=fit.x[owner[good], 0], sigma=fit.x[owner[good], 1],
                                                            root=options.root)
            model[~fitted[owner]] = np.nan
        return _calibration(self.prepared, quotes, fit, code, model, self.count, self.priced, self.start,
                            self.messages, options, details)


@dataclass(eq=False)
class _KernelScenario:
    """One scenario's fit on a Futhark target before the solver: its distinct quotes priced (``priced``) and which of
    them the fit takes (``usable``), per trade its quote count and message, the slots it uses (``valid``, in the
    layout's slots) and its start."""

    prepared: PreparedBaskets
    priced: _Priced
    vol_shift: float
    usable: np.ndarray
    count: np.ndarray
    valid: np.ndarray
    messages: list[str]
    start: _Start = dataclass_field(init=False)

    @classmethod
    def of(cls, prepared: PreparedBaskets, priced: _Priced, vol_shift: float, options: _Options,
           start: np.ndarray | None) -> _KernelScenario:
        plan, layout = prepared._plan, prepared._kernel_layout
        owner = prepared.trade
        messages = list(prepared.notes)
        positive, timeless = _usable_quotes(priced.market_price, priced.annuity, plan.payer, priced.forward,
                                            priced.strike)
        usable = positive & ~timeless
        count, valid = layout.count, layout.valid
        if not usable.all():  # quotes left out: per quote, from its distinct quote's
            of = plan.of
            _note_left_out(messages, owner, positive[of], timeless[of],
                           lambda q: (prepared.exercise[q], priced.forward[of[q]], priced.strike[of[q]],
                                      prepared.kind[q], priced.market_vol[of[q]], prepared.shift[q]))
            count = np.bincount(owner[usable[of]], minlength=len(prepared))
            valid = layout.valid & usable[np.where(layout.valid, layout.quote, 0)]
        scenario = cls(prepared=prepared, priced=priced, vol_shift=vol_shift, usable=usable, count=count, valid=valid,
                       messages=messages)
        scenario.start = _Start.of(options, count, owner, valid, layout.fill, start, scenario.matching_sigma)
        return scenario

    def matching_sigma(self, a: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """:meth:`_QuoteSet.matching_sigma` of the quotes ``rows`` (``a``: per one, its trade's): where every ``a`` is
        the same, worked out once per distinct quote (the same numbers: the same values)."""
        if a.size and (a == a[0]).all():
            distinct = self.prepared._distinct_quote_set(self.priced)
            return distinct.matching_sigma(np.full(distinct.trade.size, a[0]))[self.prepared._plan.of[rows]]
        return self.quotes.matching_sigma(a, rows)

    @cached_property
    def quotes(self) -> _QuoteSet:
        """Every quote's market data (for a cold start's sigma and for :class:`BasketCalibration`)."""
        return self.prepared._quote_set(self.priced, self.vol_shift)

    def cells(self, with_model: bool) -> int:
        """What the scenario adds to a call of the kernel (:data:`_KERNEL_CELLS`)."""
        n, q = self.prepared._kernel_layout.slot.shape
        return n * (_OUTCOME_COLUMNS + 8 + (2 * q if with_model else 0)) + 5 * self.usable.size + \
            self.prepared._kernel_layout.dates

    def market(self, error: str) -> dict[str, np.ndarray]:
        """The kernel's arrays of this scenario's distinct quotes and dates."""
        priced = self.priced
        market = np.where(self.usable, priced.market_price, 1.0)
        discount = np.concatenate(priced.discounts) if priced.discounts else np.ones(0)
        with np.errstate(over="ignore"):  # a tiny price's scale is huge (its residual is relative)
            scale = 1.0 / market if error == "relative_price" else np.ones(market.size)
        return {"valid": self.usable, "market": market, "scale": scale, "rate": priced.strike,
                "discount_start": priced.discount_start, "discount": discount if discount.size else np.ones(1)}

    def finish(self, fit: Any, options: _Options, details: bool, with_quotes: bool) -> BasketCalibration | _TradeFits:
        """The scenario's outcome from the kernel's ``fit``: a fit that stopped on a flat objective (no quote's price
        moves with the free parameters, its residuals not 0) found nothing: no fit, not converged."""
        code = fit.code.copy()
        check = np.flatnonzero((code == CONVERGED) & (fit.cost > 0))
        code[check[~fit.moving[check]]] = _FLAT
        if not with_quotes:
            return _trade_fits(self.prepared, fit, code, self.count, self.start, self.messages, options)
        quotes = self.quotes
        layout = self.prepared._kernel_layout
        owner = quotes.trade
        model = np.full(owner.size, np.nan)
        model[layout.slot[self.valid]] = fit.model[self.valid]
        model[(code != CONVERGED)[owner]] = np.nan
        priced = self.usable[self.prepared._plan.of]
        return _calibration(self.prepared, quotes, fit, code, model, self.count, priced, self.start, self.messages,
                            options, details)


def _kernel_group(prepared: PreparedBaskets, group: list[_KernelScenario], options: _Options, details: bool,
                  with_quotes: bool) -> list[BasketCalibration | _TradeFits]:
    """Scenarios fitted in one call of the kernel on ``options.engine``: the layout passed once, per scenario its
    starts and its distinct quotes' and dates' market data; then each one's outcome."""
    from ...engines.calibration_kernel import levenberg_marquardt_scenarios

    layout = prepared._kernel_layout
    markets = [scenario.market(options.error) for scenario in group]
    stacked = {name: np.stack([m[name] for m in markets]) for name in markets[0]}
    fits = levenberg_marquardt_scenarios(
        x0=np.stack([s.start.x0 for s in group]), lower=np.stack([s.start.lower for s in group]),
        upper=np.stack([s.start.upper for s in group]), free=np.stack([s.start.free for s in group]),
        quote=layout.quote, first=layout.first, count=layout.length, pay_time=layout.pay_time,
        accrual=layout.accrual, date=layout.date, expiry=layout.expiry, notional=np.ones(layout.expiry.size),
        payer=layout.payer, **stacked, target=options.engine, max_iterations=options.max_iterations,
        tolerance=options.tolerance, with_model=with_quotes)
    return [scenario.finish(fit, options, details, with_quotes) for scenario, fit in zip(group, fits, strict=True)]


def _trade_fits(prepared: PreparedBaskets, fit: Any, code: np.ndarray, count: np.ndarray, start: _Start,
                messages: list[str], options: _Options) -> _TradeFits:
    """A scenario's fits of the trades alone (statuses and messages as :class:`BasketCalibration` with
    ``details=False``) from the solver's ``fit`` and its codes ``code`` (a flat objective marked)."""
    fit = replace(fit, code=code)
    units, kinds = prepared._trade_kinds
    status, messages = _statuses(fit, count, start.held, start.a_fixed, options.limits, options.max_iterations,
                                 np.full(count.size, np.nan), messages, options.a_guess, units, kinds, False)
    failed = code != CONVERGED
    a_out, sigma_out = fit.x[:, 0].copy(), fit.x[:, 1].copy()
    a_out[failed], sigma_out[failed] = np.nan, np.nan
    return _TradeFits(a=a_out, sigma=sigma_out, status=status, message=np.array(messages, dtype=object),
                      iterations=fit.iterations, fitted=(count > 0) & ~failed & np.isfinite(fit.cost))


def _calibration(prepared: PreparedBaskets, quotes: _QuoteSet, fit: Any, code: np.ndarray, model: np.ndarray,
                 count: np.ndarray, priced: np.ndarray, start: _Start, messages: list[str], options: _Options,
                 details: bool) -> BasketCalibration:
    """A scenario's :class:`BasketCalibration` from the solver's ``fit``, its codes ``code`` (a flat objective
    marked) and per quote ``model``, the model price at the fit (NaN where the trade has none)."""
    n = len(prepared)
    owner = quotes.trade
    nq = owner.size
    market = quotes.market_price
    fit = replace(fit, code=code)
    a_out, sigma_out = fit.x[:, 0].copy(), fit.x[:, 1].copy()
    failed = code != CONVERGED
    price_residual = model - market
    error = options.error
    if details:
        model_vol = quotes.implied_vol(model, np.arange(nq))
        residual = model_vol - quotes.market_vol
        used = priced & ~failed[owner]
        squares = np.bincount(owner[used], weights=residual[used] ** 2, minlength=n)
        rmse = np.where(count > 0, np.sqrt(squares / np.maximum(count, 1)), np.nan)
        rmse[failed] = np.nan
    else:
        model_vol = residual = np.full(nq, np.nan)
        rmse = np.full(n, np.nan)
    err = (price_residual / market if error == "relative_price" else price_residual if error == "price"
           else residual)
    units, kinds = prepared._trade_kinds
    status, messages = _statuses(fit, count, start.held, start.a_fixed, options.limits, options.max_iterations, rmse,
                                 messages, options.a_guess, units, kinds, details)
    a_out[failed], sigma_out[failed] = np.nan, np.nan
    return BasketCalibration(
        id=prepared.baskets.id.copy(), curve=prepared.curve, a=a_out, sigma=sigma_out,
        a_fixed=start.a_fixed | start.held, status=status, message=np.array(messages, dtype=object), rmse=rmse,
        iterations=fit.iterations, quote_count=count, error_type=error, trade=owner, exercise=quotes.exercise,
        end=quotes.end, expiry=quotes.expiry, tenor=quotes.tenor, strike=quotes.strike, forward=quotes.forward,
        annuity=quotes.annuity, payer=quotes.payer, kind=quotes.kind, shift=quotes.shift,
        market_vol=quotes.market_vol, market_price=market, model_price=model, model_vol=model_vol,
        residual=residual, price_residual=price_residual, error=err)
