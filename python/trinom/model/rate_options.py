"""European swaptions, caps and floors on dated curves, ready to price by the Hull-White closed forms
(:mod:`trinom.model.hull_white`): their legs as times, accruals and discount factors, on one curve or on two.

**Two curves** (issue 37): a swap's floating leg or a cap's rate may be projected on a forecast curve ``F`` apart
from the discount curve ``D`` the model is fitted to. The basis between them is deterministic: the model's ``F``
moves with ``D``'s state, so that ``P_F(t, T) / P_D(t, T)`` is ``P_F(0, T) P_D(0, t) / (P_F(0, t) P_D(0, T))`` at
every state (QuantLib's ``FdHullWhiteSwaptionEngine`` builds its forwarding curve this way: a Hull-White model on the
forecast curve driven by the same state). A floating period ``[s, e]`` then pays ``beta P_D(t, s) / P_D(t, e) - 1``
per unit notional at ``e``, with the period's basis ratio ``beta = (P_F(0, s) / P_F(0, e)) / (P_D(0, s) / P_D(0,
e))``: its value at ``t <= s`` is ``beta P_D(t, s) - P_D(t, e)``, par plus ``(beta - 1)`` paid at ``s``. So

* a swap's floating leg from its start ``t0`` is worth ``N beta_0`` at ``t0`` less ``N`` at the end, plus ``N
  (beta_k - 1)`` at each later period's start ``s_k``: the European swaption is Jamshidian's on the fixed leg with
  those basis flows subtracted, struck at ``N beta_0`` (the decomposition holds for flows of either sign while the
  leg's value falls in the state, as it does for any basis of a plausible size);
* a caplet on the forecast rate is ``(1 + K tau)`` puts on ``P_D(s, e)`` struck at ``beta / (1 + K tau)``.

An overnight-compounded period is valued the same way: its compounded rate's forward over ``[s, e]`` is ``P_F(0,
s) / P_F(0, e) - 1``. With one curve every ``beta`` is 1 and the forms are the single-curve ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .hull_white import _dlog_bond_factor, _f64, bond_option_stdev, caplet, jamshidian_swaption, quantlib_forward_rate
from .sigma import Sigma
from .volatility import normal_pdf


@dataclass(frozen=True, eq=False)
class Swaptions:
    """European swaptions' fixed legs as times and discount factors (padded to the longest leg), ready to price.

    Attributes:
      exercise, start: ``(n,)`` years from the as-of date (``start >= exercise``).
      pay_time, accrual: ``(n, m)``: fixed-leg payment times and accrual fractions (0 past a row's ``count``).
      discount_start, discount_pay: ``P(0, start)`` ``(n,)``, ``P(0, pay_time)`` ``(n, m)``.
      fixed_rate, notional: ``(n,)``; payer: ``(n,)`` bool; count: ``(n,)`` fixed-leg periods per swaption.
      forward_exercise: ``(n,)``: the curve's instantaneous forward rate at the exercise as QuantLib takes it
        (:func:`quantlib_forward_rate`), for ``root="quantlib"``; 0 where unknown.
      start_basis: ``(n,)``: ``beta_0 - 1``, the basis of the floating leg's first period (0 on one curve).
      basis_time, basis_discount, basis: ``(n, b)``: the later floating periods' starts ``s_k`` (years),
        ``P_D(0, s_k)`` and ``beta_k - 1`` (0 where padded; ``b = 0`` on one curve). See the module.
    """

    exercise: np.ndarray
    start: np.ndarray
    pay_time: np.ndarray
    accrual: np.ndarray
    discount_start: np.ndarray
    discount_pay: np.ndarray
    fixed_rate: np.ndarray
    notional: np.ndarray
    payer: np.ndarray
    count: np.ndarray
    forward_exercise: np.ndarray
    start_basis: np.ndarray = None  # type: ignore[assignment]
    basis_time: np.ndarray = None  # type: ignore[assignment]
    basis_discount: np.ndarray = None  # type: ignore[assignment]
    basis: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        n = self.exercise.size
        defaults = {"start_basis": np.zeros(n), "basis_time": np.zeros((n, 0)), "basis_discount": np.ones((n, 0)),
                    "basis": np.zeros((n, 0))}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return int(self.exercise.size)

    @property
    def two_curves(self) -> bool:
        """Whether any swaption's floating leg is projected apart from its discount curve (a basis not 0)."""
        return bool(np.any(self.start_basis != 0.0) or np.any(self.basis != 0.0))

    @property
    def annuity(self) -> np.ndarray:
        """``N sum tau_i P(0, t_i)``: the fixed leg's value per unit rate."""
        return self.notional * np.sum(self.accrual * self.discount_pay, axis=1)

    @property
    def forward_rate(self) -> np.ndarray:
        """The forward swap rate: the floating leg's value over the annuity, ``(beta_0 P(0, t0) - P(0, t_n) + sum_k
        (beta_k - 1) P(0, s_k)) / sum tau_i P(0, t_i)`` (on one curve ``(P(0, t0) - P(0, t_n)) / sum tau_i P(0,
        t_i)``)."""
        last = self.discount_pay[np.arange(len(self)), np.maximum(self.count - 1, 0)]
        floating = self.discount_start - last
        if self.two_curves:
            floating = floating + self.start_basis * self.discount_start + np.sum(self.basis * self.basis_discount,
                                                                                  axis=1)
        return floating / np.sum(self.accrual * self.discount_pay, axis=1)

    @property
    def amounts(self) -> np.ndarray:
        """The fixed leg's cash flows ``K tau_i N``, the notional added to the last."""
        flows = self.fixed_rate[:, None] * self.accrual * self.notional[:, None]
        flows[np.arange(len(self)), np.maximum(self.count - 1, 0)] += self.notional
        return np.where(np.arange(flows.shape[1])[None, :] < self.count[:, None], flows, 0.0)

    def take(self, rows: npt.ArrayLike) -> Swaptions:
        """The swaptions at ``rows`` (indices), in that order."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        return Swaptions(**{name: getattr(self, name)[rows] for name in self.__dataclass_fields__})

    def replace_rates(self, fixed_rate: npt.ArrayLike, payer: npt.ArrayLike | None = None) -> Swaptions:
        """The same swaptions with other fixed rates (and, if given, payer flags)."""
        return replace(self, fixed_rate=np.broadcast_to(_f64(fixed_rate), self.exercise.shape).copy(),
                       payer=self.payer if payer is None else np.broadcast_to(np.asarray(payer, bool),
                                                                              self.exercise.shape).copy())

    def price(self, *, a: npt.ArrayLike, sigma: npt.ArrayLike | Sigma, gradient: bool = False,
              root: str | None = None) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Hull-White prices (Jamshidian) with ``a`` and ``sigma`` per swaption or for all (``sigma`` a
        :class:`~trinom.model.Sigma`: a term structure, one step function a swaption or one for all); with
        ``gradient`` also ``d price / d a`` and ``d price / d sigma`` (one sigma). ``root``: ``"quantlib"`` (the
        default with one sigma; QuantLib's ``JamshidianSwaptionEngine`` to about 1e-12) or ``"exact"`` (the default
        and the only one with a term structure; see :func:`jamshidian_swaption`)."""
        n = len(self)
        a = np.broadcast_to(_f64(a), (n,))
        piecewise = isinstance(sigma, Sigma)
        root = root if root is not None else "exact" if piecewise else "quantlib"
        sigma = sigma.take(np.arange(n)) if piecewise else np.broadcast_to(_f64(sigma), (n,))
        amounts = self.amounts
        if self.two_curves:  # the basis flows join the fixed leg; the strike is N beta_0 (see the module)
            return jamshidian_swaption(a=a, sigma=sigma, expiry=self.exercise, start=self.start,
                                       pay_times=np.concatenate([self.pay_time, self.basis_time], axis=1),
                                       amounts=np.concatenate([amounts, -self.basis * self.notional[:, None]], axis=1),
                                       discount_start=self.discount_start,
                                       discount_pay=np.concatenate([self.discount_pay, self.basis_discount], axis=1),
                                       notional=self.notional * (1.0 + self.start_basis), is_payer=self.payer,
                                       gradient=gradient, root=root, forward_rate=self.forward_exercise)
        # legs of very different lengths: price them in groups of similar length (at most twice the shortest), each
        # on its own columns, rather than all on the longest's
        group = np.ceil(np.log2(np.maximum(self.count, 1))).astype(np.int64)
        groups = np.unique(group)
        if groups.size <= 1 or self.pay_time.shape[1] <= 8:
            return jamshidian_swaption(a=a, sigma=sigma, expiry=self.exercise, start=self.start,
                                       pay_times=self.pay_time, amounts=amounts, discount_start=self.discount_start,
                                       discount_pay=self.discount_pay, notional=self.notional, is_payer=self.payer,
                                       gradient=gradient, root=root, forward_rate=self.forward_exercise)
        out = [np.zeros(n) for _ in range(3 if gradient else 1)]
        for g in groups.tolist():
            rows = np.flatnonzero(group == g)
            width = int(self.count[rows].max()) if rows.size else 1
            values = jamshidian_swaption(a=a[rows], sigma=sigma.take(rows) if piecewise else sigma[rows],
                                         expiry=self.exercise[rows],
                                         start=self.start[rows], pay_times=self.pay_time[rows, :width],
                                         amounts=amounts[rows, :width], discount_start=self.discount_start[rows],
                                         discount_pay=self.discount_pay[rows, :width], notional=self.notional[rows],
                                         is_payer=self.payer[rows], gradient=gradient, root=root,
                                         forward_rate=self.forward_exercise[rows])
            for target, value in zip(out, values if gradient else (values,), strict=True):
                target[rows] = value
        return tuple(out) if gradient else out[0]  # type: ignore[return-value]

    @classmethod
    def concatenate(cls, parts: list[Swaptions]) -> Swaptions:
        """Several sets of swaptions as one (legs padded to the longest)."""
        width = max([p.pay_time.shape[1] for p in parts] + [1])
        basis_width = max([p.basis.shape[1] for p in parts] + [0])

        def pad(x: np.ndarray, fill: float, to: int = width) -> np.ndarray:
            return np.pad(x, ((0, 0), (0, to - x.shape[1])), constant_values=fill)

        return cls(exercise=np.concatenate([p.exercise for p in parts]),
                   start=np.concatenate([p.start for p in parts]),
                   pay_time=np.concatenate([pad(p.pay_time, 0.0) for p in parts]),
                   accrual=np.concatenate([pad(p.accrual, 0.0) for p in parts]),
                   discount_start=np.concatenate([p.discount_start for p in parts]),
                   discount_pay=np.concatenate([pad(p.discount_pay, 1.0) for p in parts]),
                   fixed_rate=np.concatenate([p.fixed_rate for p in parts]),
                   notional=np.concatenate([p.notional for p in parts]),
                   payer=np.concatenate([p.payer for p in parts]),
                   count=np.concatenate([p.count for p in parts]),
                   forward_exercise=np.concatenate([p.forward_exercise for p in parts]),
                   start_basis=np.concatenate([p.start_basis for p in parts]),
                   basis_time=np.concatenate([pad(p.basis_time, 0.0, basis_width) for p in parts]),
                   basis_discount=np.concatenate([pad(p.basis_discount, 1.0, basis_width) for p in parts]),
                   basis=np.concatenate([pad(p.basis, 0.0, basis_width) for p in parts]))

    @classmethod
    def on_curve(cls, curve: object, *, exercise: npt.ArrayLike, end: npt.ArrayLike, start: npt.ArrayLike | None = None,
                 fixed_rate: npt.ArrayLike | None = None, frequency: npt.ArrayLike = 1,
                 day_count: npt.ArrayLike = "30/360", payer: npt.ArrayLike = True,
                 notional: npt.ArrayLike = 1.0, forecast_curve: object = None,
                 float_frequency: npt.ArrayLike | None = None, calendar: npt.ArrayLike = "NONE",
                 convention: npt.ArrayLike = "U") -> Swaptions:
        """Swaptions on a :class:`~trinom.model.DatedCurve`, from dates: exercise on ``exercise`` into the swap from
        ``start`` (default: the exercise date) to ``end`` whose fixed leg pays ``fixed_rate`` (default: the forward
        swap rate, at the money) ``frequency`` times a year on the ``day_count``, its dates generated forward from
        the start, unadjusted (QuantLib's ``Schedule(start, end, tenor, NullCalendar(), Unadjusted, Unadjusted,
        DateGeneration.Forward, False)``: a short last period where the tenor is no whole number of periods).
        ``forecast_curve`` (a DatedCurve of the same as-of date): the floating leg's rates are projected on it, its
        periods ``float_frequency`` a year (default: the fixed leg's) generated the same way, and ``curve``
        discounts (two curves, see the module). ``calendar`` and ``convention`` roll the legs' inner dates
        (QuantLib's ``SwaptionHelper`` schedules on its index's calendar and convention); the start and end are
        taken as given.

        >>> from trinom.model import DatedCurve
        >>> curve = DatedCurve(as_of="2025-01-02", dates=["2035-01-02"], zero_rates=[0.03])
        >>> s = Swaptions.on_curve(curve, exercise=["2026-01-02"], end=["2031-01-02"])
        >>> round(float(s.forward_rate[0]), 12), s.count.tolist()
        (0.030471457811, [5])
        >>> euribor = DatedCurve(as_of="2025-01-02", dates=["2035-01-02"], zero_rates=[0.032])
        >>> two = Swaptions.on_curve(curve, exercise=["2026-01-02"], end=["2031-01-02"], forecast_curve=euribor,
        ...                          float_frequency=2)
        >>> round(float(two.forward_rate[0]), 12), two.basis.shape
        (0.032519194853, (1, 9))
        """
        from .periods import fixed_leg

        exercise_days = _days(exercise, "exercise")
        start_days = exercise_days if start is None else _days(start, "start")
        end_days = _days(end, "end")
        count = max(exercise_days.size, start_days.size, end_days.size)
        exercise_days, start_days, end_days = (np.broadcast_to(d, (count,)) for d in (exercise_days, start_days,
                                                                                      end_days))
        problems = [(int(k), "start", "the swap must start on or after the exercise date")
                    for k in np.flatnonzero(start_days < exercise_days)]
        if problems:
            raise InputError(problems)
        leg = fixed_leg(start=start_days, end=end_days, frequency=frequency, day_count=day_count, calendar=calendar,
                        convention=convention)
        times = curve.year_fractions  # type: ignore[attr-defined]
        discount = curve.discount  # type: ignore[attr-defined]
        pay_time = times(_dates(leg.pay_days)).reshape(leg.pay_days.shape)
        discount_pay = discount(pay_time.reshape(-1)).reshape(pay_time.shape)
        mask = np.arange(pay_time.shape[1])[None, :] < leg.count[:, None]
        start_time = times(_dates(start_days))
        exercise_time = times(_dates(exercise_days))
        result = cls(exercise=exercise_time, start=start_time, pay_time=pay_time,
                     accrual=np.where(mask, leg.accrual, 0.0), discount_start=discount(start_time),
                     discount_pay=np.where(mask, discount_pay, 1.0), fixed_rate=np.zeros(count),
                     notional=np.broadcast_to(_f64(notional), (count,)).copy(),
                     payer=np.broadcast_to(np.asarray(payer, dtype=bool), (count,)).copy(), count=leg.count,
                     forward_exercise=quantlib_forward_rate(discount, exercise_time),
                     **({} if forecast_curve is None else floating_basis(
                         curve, forecast_curve, start_days, end_days,
                         frequency if float_frequency is None else float_frequency, calendar, convention)))
        rate = result.forward_rate if fixed_rate is None else np.broadcast_to(_f64(fixed_rate), (count,))
        return result.replace_rates(rate)


def basis_ratio(*, discount_start: npt.ArrayLike, discount_end: npt.ArrayLike, forecast_start: npt.ArrayLike,
                forecast_end: npt.ArrayLike) -> np.ndarray:
    """The basis ratio ``beta = (P_F(0, s) / P_F(0, e)) / (P_D(0, s) / P_D(0, e))`` of periods ``[s, e]`` (see the
    module): 1 where the two curves are one.

    >>> float(basis_ratio(discount_start=0.99, discount_end=0.98, forecast_start=0.99, forecast_end=0.98))
    1.0
    """
    return (_f64(forecast_start) / _f64(forecast_end)) * (_f64(discount_end) / _f64(discount_start))


def floating_basis(curve: object, forecast: object, start_days: np.ndarray, end_days: np.ndarray,
                    frequency: npt.ArrayLike, calendar: npt.ArrayLike = "NONE",
                    convention: npt.ArrayLike = "U") -> dict[str, np.ndarray]:
    """The basis fields of swaptions whose floating legs from ``start_days`` to ``end_days`` (``frequency``
    periods a year, generated forward, their inner dates rolled by ``convention`` on ``calendar``) are projected on
    ``forecast`` and discounted on ``curve``."""
    from .periods import fixed_leg

    _check_same_date(curve, forecast)
    leg = fixed_leg(start=start_days, end=end_days, frequency=frequency, day_count="ACT/365F", calendar=calendar,
                    convention=convention)
    mask = np.arange(leg.pay_days.shape[1])[None, :] < leg.count[:, None]
    begin = np.where(mask, leg.start_days, start_days[:, None])
    finish = np.where(mask, leg.pay_days, end_days[:, None])
    times = curve.year_fractions  # type: ignore[attr-defined]
    s, e = (times(_dates(d)).reshape(mask.shape) for d in (begin, finish))
    discount, projected = curve.discount, forecast.discount  # type: ignore[attr-defined]
    d_s, d_e = (discount(t.reshape(-1)).reshape(mask.shape) for t in (s, e))
    beta = basis_ratio(discount_start=d_s, discount_end=d_e, forecast_start=projected(s.reshape(-1)).reshape(mask.shape),
                       forecast_end=projected(e.reshape(-1)).reshape(mask.shape))
    later = mask[:, 1:]
    return {"start_basis": beta[:, 0] - 1.0, "basis_time": np.where(later, s[:, 1:], 0.0),
            "basis_discount": np.where(later, d_s[:, 1:], 1.0), "basis": np.where(later, beta[:, 1:] - 1.0, 0.0)}


@dataclass(frozen=True, eq=False)
class Caps:
    """Caps and floors as their caplets' times, accruals and discount factors (padded to the longest strip).

    Attributes:
      start, end, accrual: ``(n, m)``: each caplet's fixing/accrual start and payment time (years) and accrual
        fraction (0 past a row's ``count``).
      discount_start, discount_end: ``(n, m)``.
      strike, notional: ``(n,)``; cap: ``(n,)`` bool (a floor where false); count: ``(n,)`` caplets.
      basis: ``(n, m)``: each caplet's basis ratio ``beta`` where its rate is projected on a forecast curve (1 on
        one curve; see the module).
    """

    start: np.ndarray
    end: np.ndarray
    accrual: np.ndarray
    discount_start: np.ndarray
    discount_end: np.ndarray
    strike: np.ndarray
    notional: np.ndarray
    cap: np.ndarray
    count: np.ndarray
    basis: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.basis is None:
            object.__setattr__(self, "basis", np.ones(self.start.shape))

    def __len__(self) -> int:
        return int(self.strike.size)

    @property
    def annuity(self) -> np.ndarray:
        """``N sum tau_i P(0, e_i)``."""
        return self.notional * np.sum(self.accrual * self.discount_end, axis=1)

    @property
    def forward_rate(self) -> np.ndarray:
        """The at-the-money cap rate: the forward swap rate of the caplets' periods, ``sum_i (beta_i P(s_i) - P(e_i))
        / sum tau_i P(e_i)`` (on one curve, periods contiguous: ``(P(s_1) - P(e_n)) / sum tau_i P(e_i)``)."""
        rows = np.arange(len(self))
        annuity = np.sum(self.accrual * self.discount_end, axis=1)
        if np.any(self.basis != 1.0):
            floating = np.where(self.accrual > 0, self.basis * self.discount_start - self.discount_end, 0.0)
            return np.sum(floating, axis=1) / annuity
        last = self.discount_end[rows, np.maximum(self.count - 1, 0)]
        return (self.discount_start[:, 0] - last) / annuity

    @property
    def caplet_forwards(self) -> np.ndarray:
        """Each caplet's simple forward rate ``(beta P(s) / P(e) - 1) / tau``, on the forecast curve (0 past a row's
        count)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            f = (self.basis * self.discount_start / self.discount_end - 1.0) / self.accrual
        return np.where(self.accrual > 0, f, 0.0)

    def take(self, rows: npt.ArrayLike) -> Caps:
        """The caps at ``rows`` (indices), in that order."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        return Caps(**{name: getattr(self, name)[rows] for name in self.__dataclass_fields__})

    def caplet_prices(self, *, a: npt.ArrayLike, sigma: npt.ArrayLike | Sigma) -> np.ndarray:
        """``(n, m)``: each caplet's (floorlet's) Hull-White price times the notional (0 past a row's count)."""
        a = np.broadcast_to(_f64(a), self.strike.shape)[:, None]
        if isinstance(sigma, Sigma):  # a term structure: one step function a cap (or one for all)
            sigma = sigma.take(np.arange(len(self)))
        else:
            sigma = np.broadcast_to(_f64(sigma), self.strike.shape)[:, None]
        value = caplet(a=a, sigma=sigma, start=self.start, end=self.end, accrual=self.accrual,
                       strike=self.strike[:, None], discount_start=self.discount_start, discount_end=self.discount_end,
                       is_cap=self.cap[:, None], basis=self.basis)
        return np.where(self.accrual > 0, value * self.notional[:, None], 0.0)

    def price(self, *, a: npt.ArrayLike, sigma: npt.ArrayLike | Sigma,
              gradient: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Hull-White prices: the sums of the caplets' (``sigma`` may be a :class:`~trinom.model.Sigma`); with
        ``gradient`` (one sigma) also ``d price / d a`` and ``d price / d sigma`` (each caplet's vega ``(1 + K tau)
        P(0, e) n(d1)`` times ``d v / d a``, ``d v / d sigma``)."""
        value = self.caplet_prices(a=a, sigma=sigma).sum(axis=1)
        if not gradient:
            return value
        if isinstance(sigma, Sigma):
            raise InputError([(None, "sigma", "the gradient is d price / d sigma of one sigma: not of a term structure")])
        a = np.broadcast_to(_f64(a), self.strike.shape)[:, None]
        sigma = np.broadcast_to(_f64(sigma), self.strike.shape)[:, None]
        live = self.accrual > 0
        gross = 1.0 + self.strike[:, None] * self.accrual
        v = bond_option_stdev(a=a, sigma=sigma, expiry=self.start, start=self.start, maturity=self.end)
        safe = np.where(live & (v > 0), v, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            d1 = np.log(self.discount_end * gross / (self.basis * self.discount_start)) / safe + 0.5 * safe
        vega = np.where(live & (v > 0), gross * self.discount_end * normal_pdf(d1), 0.0) * self.notional[:, None]
        dlog_v = _dlog_bond_factor(a, self.end - self.start) + _dlog_bond_factor(2.0 * a, self.start)
        return value, np.sum(vega * v * dlog_v, axis=1), np.sum(vega * v, axis=1) / sigma[:, 0]

    @classmethod
    def on_curve(cls, curve: object, *, start: npt.ArrayLike, end: npt.ArrayLike, strike: npt.ArrayLike | None = None,
                 frequency: npt.ArrayLike = 4, day_count: npt.ArrayLike = "ACT/360", cap: npt.ArrayLike = True,
                 notional: npt.ArrayLike = 1.0, forecast_curve: object = None) -> Caps:
        """Caps (floors) on a :class:`~trinom.model.DatedCurve` from ``start`` to ``end``: caplets on the periods
        generated forward from the start, unadjusted, ``frequency`` a year, accruing on ``day_count``, each fixing
        at its start and paid at its end; ``strike`` default: the at-the-money rate (:attr:`forward_rate`).
        Every caplet must start after the curve's as-of date. ``forecast_curve`` (a DatedCurve of the same as-of
        date): the caplets' rates are projected on it and ``curve`` discounts (two curves, see the module).

        >>> from trinom.model import DatedCurve
        >>> curve = DatedCurve(as_of="2025-01-02", dates=["2035-01-02"], zero_rates=[0.03])
        >>> caps = Caps.on_curve(curve, start=["2025-04-02"], end=["2027-04-02"], strike=0.03)
        >>> caps.count.tolist(), round(float(caps.price(a=0.05, sigma=0.01)[0]), 10)
        ([8], 0.0072339078)
        >>> euribor = DatedCurve(as_of="2025-01-02", dates=["2035-01-02"], zero_rates=[0.032])
        >>> two = Caps.on_curve(curve, start=["2025-04-02"], end=["2027-04-02"], strike=0.03, forecast_curve=euribor)
        >>> round(float(two.price(a=0.05, sigma=0.01)[0]), 10) > round(float(caps.price(a=0.05, sigma=0.01)[0]), 10)
        True
        """
        from .periods import fixed_leg

        start_days, end_days = _days(start, "start"), _days(end, "end")
        count = max(start_days.size, end_days.size)
        start_days, end_days = (np.broadcast_to(d, (count,)) for d in (start_days, end_days))
        leg = fixed_leg(start=start_days, end=end_days, frequency=frequency, day_count=day_count)
        times = curve.year_fractions  # type: ignore[attr-defined]
        discount = curve.discount  # type: ignore[attr-defined]
        mask = np.arange(leg.pay_days.shape[1])[None, :] < leg.count[:, None]
        begin_days = np.where(mask, leg.start_days, start_days[:, None])
        pay_days = np.where(mask, leg.pay_days, end_days[:, None])
        begin = times(_dates(begin_days)).reshape(mask.shape)
        finish = times(_dates(pay_days)).reshape(mask.shape)
        bad = np.flatnonzero(begin[:, 0] <= 0)
        if bad.size:
            raise InputError([(int(k), "start", "a cap's first caplet must fix after the as-of date") for k in bad])
        discount_start = discount(begin.reshape(-1)).reshape(mask.shape)
        discount_end = discount(finish.reshape(-1)).reshape(mask.shape)
        basis = None
        if forecast_curve is not None:
            _check_same_date(curve, forecast_curve)
            projected = forecast_curve.discount  # type: ignore[attr-defined]
            basis = np.where(mask, basis_ratio(discount_start=discount_start, discount_end=discount_end,
                                               forecast_start=projected(begin.reshape(-1)).reshape(mask.shape),
                                               forecast_end=projected(finish.reshape(-1)).reshape(mask.shape)), 1.0)
        result = cls(start=begin, end=finish, accrual=np.where(mask, leg.accrual, 0.0), discount_start=discount_start,
                     discount_end=discount_end, strike=np.zeros(count),
                     notional=np.broadcast_to(_f64(notional), (count,)).copy(),
                     cap=np.broadcast_to(np.asarray(cap, dtype=bool), (count,)).copy(), count=leg.count, basis=basis)
        rate = result.forward_rate if strike is None else np.broadcast_to(_f64(strike), (count,))
        return replace(result, strike=np.asarray(rate, dtype=np.float64).copy())


def _check_same_date(curve: object, forecast: object) -> None:
    """An InputError unless the discount and forecast curves are of one as-of date."""
    if getattr(forecast, "as_of", None) != getattr(curve, "as_of", None):
        raise InputError([(None, "forecast_curve", f"the forecast curve is as of {getattr(forecast, 'as_of', None)}, "
                           f"the discount curve as of {getattr(curve, 'as_of', None)}: give curves of one date")])


def _dates(days: np.ndarray) -> np.ndarray:
    """Day numbers as a flat ``datetime64[D]`` array."""
    return np.ascontiguousarray(days, dtype=np.int64).reshape(-1).view("datetime64[D]")


def _days(values: npt.ArrayLike, field: str) -> np.ndarray:
    """Dates as day numbers (``int64``); an InputError names the bad rows."""
    from ..conventions.dates import to_days

    days, problems = to_days(values, field=field)
    if problems:
        raise InputError(problems)
    return days
