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
from dataclasses import dataclass, fields, replace

import numpy as np

from ..conventions.names import Problem
from ..errors import InputError
from ..model.curve import YieldCurve, discount_factors
from ..model.periods import fixed_leg
from ..model.rate_options import basis_ratio
from ..model.volatility import bachelier_price, black_price
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
    vol: np.ndarray | None = None  #: a quoted volatility to price it off beside the lattice (NaN: none; issue 38)
    vol_kind: np.ndarray | None = None  #: its code in ``rate_trades.VOL_KINDS`` (normal, lognormal, shifted)
    shift: np.ndarray | None = None  #: a shifted lognormal vol's shift (decimal; 0 for the others)

    def take(self, positions: np.ndarray) -> CapSpecs:
        """The trades at ``positions``."""
        return replace(self, **{f.name: getattr(self, f.name)[positions] for f in fields(self)
                                if f.name != "as_of" and getattr(self, f.name) is not None})


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


def vol_prices(specs: CapSpecs, curves: Sequence[YieldCurve]) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """Per trade of ``specs``, its price per 100 off its quoted volatility (NaN where it gives none): the sum over its
    caplets of ``100 tau P(e) formula(F, K, (s - as_of) / 365, vol)``, ``F = (P_f(s) / P_f(e) - 1) / tau`` the
    forward on its forecast curve, ``P`` its discount curve, the formula Bachelier's (``normal``) or Black's
    (``lognormal``; ``shifted``: on ``F + shift`` and ``K + shift``), caps calls and floors puts (QuantLib's
    ``BachelierCapFloorEngine`` and ``BlackCapFloorEngine`` on a constant optionlet volatility, ACT/365F). Also
    ``(trade, why)`` for a lognormal cap with a forward at or below ``-shift``: its price is NaN."""
    out = np.full(specs.start.size, np.nan)
    if specs.vol is None or specs.vol_kind is None or specs.shift is None or not np.isfinite(specs.vol).any():
        return out, []
    quoted = np.flatnonzero(np.isfinite(specs.vol))
    part = specs.take(quoted)
    owner, begin, end, tau = _periods(part)
    discount = np.zeros(quoted.size, dtype=np.int64) if part.curve is None else np.asarray(part.curve)
    forecast = discount if part.forecast is None else np.asarray(part.forecast)
    read = {name: discount_factors(curves, index[owner], days - part.as_of, days_in_year=YEAR_DAYS)
            for name, index, days in (("pay", discount, end), ("fix", forecast, begin), ("end", forecast, end))}
    forward = (read["fix"] / read["end"] - 1.0) / tau
    terms = {"forward": forward, "strike": part.rate[owner], "expiry": (begin - part.as_of) / YEAR_DAYS,
             "vol": part.vol[owner], "annuity": 100.0 * tau * read["pay"], "is_call": part.cap[owner]}
    normal = part.vol_kind[owner] == 0
    shift = part.shift[owner]
    with np.errstate(divide="ignore", invalid="ignore"):
        each = np.where(normal, bachelier_price(**terms), black_price(**terms, shift=shift))
    undefined = ~normal & (forward + shift <= 0)
    each[undefined] = np.nan
    out[quoted] = np.bincount(owner, weights=each, minlength=quoted.size)
    said = [(int(quoted[k]), f"a caplet's forward {forward[owner == k].min():.6g} is at or below -shift "
             f"({-part.shift[k]:g}): no lognormal price off vol (give vol_kind shifted, or a larger shift)")
            for k in np.unique(owner[undefined]).tolist()]
    return out, said


def _periods(specs: CapSpecs) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every caplet period of ``specs``: its trade, start and end days, and accrual on the trade's day count."""
    leg = fixed_leg(start=specs.start, end=specs.maturity, frequency=specs.frequency, day_count=specs.day_count)
    mask = np.arange(leg.pay_days.shape[1])[None, :] < leg.count[:, None]
    return np.nonzero(mask)[0], leg.start_days[mask], leg.pay_days[mask], leg.accrual[mask]


def _caplets(specs: CapSpecs, curves: Sequence[YieldCurve] | None) -> tuple[np.ndarray, ...]:
    """Every caplet of ``specs`` (see the module): its trade, start and end days, ``1 + K tau``, basis ratio
    ``beta``, and each trade's caplet count."""
    owner, begin, end, tau = _periods(specs)
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
    return owner, begin, end, growth, beta, np.bincount(owner, minlength=specs.start.size).astype(np.int64)
