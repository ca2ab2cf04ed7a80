"""Caps and floors by dates, lowered to the option machinery: one option tree per caplet (issue 26).

A cap from ``start`` to ``maturity`` at the strike ``rate`` is a strip of caplets on the periods of its schedule,
generated forward from ``start``, unadjusted, ``frequency`` periods a year (the last one short where the dates do
not divide), each accruing ``tau`` on the cap's ``day_count``: the caplet of period ``[s, e]`` fixes at ``s`` the
simple rate ``L = (1 / P(s, e) - 1) / tau`` and pays ``notional * tau * max(L - K, 0)`` at ``e``. Valued at ``s``
that is ``notional * (1 + K tau)`` puts on the zero-coupon bond maturing at ``e``, struck at ``1 / (1 + K tau)``;
a floorlet is the call. So each caplet lowers to a European option on a zero-coupon bond
(:class:`~trinom.Portfolio`, standard convention: expiry ``s``, bond maturity ``e``, strike ``100 / (1 + K tau)``
per 100) on the trade's tree grid, weighted ``(1 + K tau)``; the cap is the weighted sum, per 100 of notional. This is
the schedule of :meth:`trinom.model.rate_options.Caps.on_curve`, whose closed form the tree converges to. Every
caplet must fix after the as-of date.

**Two curves** (issue 37): a cap whose rate is projected on its ``forecast_curve`` apart from the discount
curve it is priced on has each caplet struck at ``100 beta / (1 + K tau)`` per 100, ``beta`` the period's basis
ratio between the curves, read at whole days as the tree reads them (the deterministic basis of
:mod:`trinom.model.rate_options`).

Values are per 100 of the trade's notional (the value in currency is :attr:`trinom.Prices.value`).

>>> import numpy as np
>>> specs = CapSpecs(as_of=20_000, start=np.array([20_090]), maturity=np.array([20_820]), rate=np.array([0.03]),
...                  frequency=np.array([4]), day_count=np.array(["ACT/360"], dtype=object), cap=np.array([True]),
...                  notional=np.array([100.0]), a=np.array([0.05]), sigma=np.array([0.01]),
...                  steps_per_year=np.array([365]), rows=np.array([0]))
>>> lowered = lower_caps(specs)
>>> lowered.count.tolist(), len(lowered.caplets)
([8], 8)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..conventions.names import Problem
from ..errors import InputError
from ..model.curve import YieldCurve, discount_factors
from ..model.periods import fixed_leg
from ..model.rate_options import basis_ratio
from .bond import BondPortfolio
from .constants import CALL, PUT
from .coupon_options import CouponOptions
from .dated_bond import NO_EXERCISE_PRICE
from .option import Portfolio
from .tree_steps import YEAR_DAYS, step_before


@dataclass(frozen=True, eq=False)
class CapSpecs:
    """Good cap and floor rows as arrays, one entry per trade (dates as day numbers since 1970-01-01)."""

    as_of: int
    start: np.ndarray
    maturity: np.ndarray
    rate: np.ndarray
    frequency: np.ndarray
    day_count: np.ndarray
    cap: np.ndarray  #: True for a cap, False for a floor
    notional: np.ndarray
    a: np.ndarray
    sigma: np.ndarray
    steps_per_year: np.ndarray
    rows: np.ndarray  #: each trade's row in the book (for messages)
    curve: np.ndarray | None = None  #: the discount curve (an index into the market's curves)
    forecast: np.ndarray | None = None  #: the curve its rates are projected on (None, or ``curve``: one curve)


@dataclass(frozen=True, eq=False)
class LoweredCaps:
    """One option tree per caplet, in trade order, their weights and each trade's caplet count."""

    caplets: Portfolio
    weight: np.ndarray
    count: np.ndarray
    problems: list[Problem]


def lower_caps(specs: CapSpecs, curve: str = "default", curves: Sequence[YieldCurve] | None = None) -> LoweredCaps:
    """The caps and floors of ``specs`` as caplet options on ``curve`` (see the module); ``curves``: the market's,
    by ``specs.curve`` and ``specs.forecast``, needed where a cap's rate is projected apart from its discount curve."""
    size = specs.start.size
    if not size:
        return LoweredCaps(caplets=Portfolio(strike=[], maturity=[], expiry=[], term_unit=[], term_steps=[], a=[],
                                             sigma=[], option_type=np.zeros(0, np.int8), curve=curve),
                           weight=np.zeros(0), count=np.zeros(0, np.int64), problems=[])
    owner, begin, end, growth, beta, count = _caplets(specs, curves)
    spy = specs.steps_per_year[owner]
    caplets = Portfolio(strike=100.0 * beta / growth, maturity=(end - specs.as_of) / YEAR_DAYS,
                        expiry=(begin - specs.as_of) / YEAR_DAYS, term_unit=np.full(owner.size, float(YEAR_DAYS)),
                        term_steps=spy.astype(np.float64), a=specs.a[owner], sigma=specs.sigma[owner],
                        option_type=np.where(specs.cap[owner], PUT, CALL).astype(np.int8), curve=curve)
    return LoweredCaps(caplets=caplets, weight=growth, count=count, problems=[])


def cap_trees(specs: CapSpecs, curves: Sequence[YieldCurve] | None = None) -> BondPortfolio:
    """The caps and floors of ``specs`` as one bond tree each (their curve ``specs.curve``): no flow, and each caplet a
    :mod:`~trinom.instruments.coupon_options` event, ``100 (1 + K tau)`` puts (calls) on ``P(s, e)`` struck at
    ``beta / (1 + K tau)``, valued at its fixing's step from each node. The trees take sigma pieces, which the
    caplet trees of :func:`lower_caps` do not."""
    owner, begin, end, growth, beta, count = _caplets(specs, curves)
    horizon = np.zeros(count.size, dtype=np.int64)
    np.maximum.at(horizon, owner, end)
    options = CouponOptions.of(counts=count, step=step_before(begin, specs.as_of, specs.steps_per_year[owner]),
                               expiry=(begin - specs.as_of) / YEAR_DAYS, end=(end - specs.as_of) / YEAR_DAYS,
                               strike=beta / growth, amount=100.0 * growth, is_call=~specs.cap[owner])
    return zero_trees(specs.as_of, horizon, specs.steps_per_year, specs.a, specs.sigma,
                      np.zeros(count.size, dtype=np.int64) if specs.curve is None else specs.curve, options)


def zero_trees(as_of: int, horizon: np.ndarray, steps_per_year: np.ndarray, a: np.ndarray, sigma: np.ndarray,
               curve: np.ndarray, options: CouponOptions) -> BondPortfolio:
    """Bond trees to the days ``horizon`` that pay nothing (one flow of 0 at the last step) and hold ``options``:
    options on zero-coupon bonds as the bond trees' events."""
    size = horizon.size
    ones = np.ones(size, dtype=np.int64)
    years = (horizon - as_of) / YEAR_DAYS
    height = np.ceil(np.asarray(steps_per_year, dtype=np.float64) * years).astype(np.int64)
    trees = BondPortfolio(term_unit=np.full(size, YEAR_DAYS), term_steps=steps_per_year, a=a, sigma=sigma,
                          maturity=years, cashflow_count=ones, cashflow_step=np.maximum(height, 1),
                          repayment=np.zeros(size), coupon=np.zeros(size), spread=np.zeros(size),
                          option_type=np.zeros(size, dtype=np.int8), strike=np.full(size, NO_EXERCISE_PRICE),
                          first_exercise=ones, last_exercise=ones,
                          exercise_frequency=ones, curve_index=curve, accrued=np.zeros(size))
    return trees.with_coupon_options(options)


def _caplets(specs: CapSpecs, curves: Sequence[YieldCurve] | None) -> tuple[np.ndarray, ...]:
    """Every caplet of ``specs`` (see the module): its trade, start and end days, ``1 + K tau``, basis ratio
    ``beta``, and each trade's caplet count."""
    leg = fixed_leg(start=specs.start, end=specs.maturity, frequency=specs.frequency, day_count=specs.day_count)
    mask = np.arange(leg.pay_days.shape[1])[None, :] < leg.count[:, None]
    owner = np.nonzero(mask)[0]
    begin, end, tau = leg.start_days[mask], leg.pay_days[mask], leg.accrual[mask]
    growth = 1.0 + specs.rate[owner] * tau
    beta = np.ones(owner.size)
    if specs.forecast is not None and specs.curve is not None:
        two = (np.asarray(specs.forecast) != np.asarray(specs.curve))[owner]
        if np.any(two):
            if curves is None:
                raise InputError([(None, "curves", "a cap whose rate is projected on its forecast_curve needs the "
                                   "market's curves when it is lowered: lower the trades with their curves")])
            discount, forecast = np.asarray(specs.curve)[owner[two]], np.asarray(specs.forecast)[owner[two]]
            beta[two] = basis_ratio(**{f"{name}_{side}": discount_factors(curves, index, days[two] - specs.as_of,
                                                                           days_in_year=YEAR_DAYS)
                                       for name, index in (("discount", discount), ("forecast", forecast))
                                       for side, days in (("start", begin), ("end", end))})
    return owner, begin, end, growth, beta, leg.count.astype(np.int64)
