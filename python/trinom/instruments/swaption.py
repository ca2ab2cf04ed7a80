"""Swaptions by dates, lowered to the callable-bond machinery: two bond trees per swaption (issue 26).

A swaption is the right to enter, on an exercise date, a swap from that date to ``maturity`` paying (``payer``) or
receiving (``receiver``) the fixed ``rate`` against the floating rate. Single curve: the floating leg is worth par
(the notional) on each of its reset dates, so on a fixed-leg start date ``x`` the swap a receiver enters is worth
``B(x) - 100`` per 100 of notional, with ``B(x)`` the fixed leg's coupons from ``x`` on plus 100 at maturity: a
*bond*. So

* a **receiver** swaption is a call on that bond struck at par: ``B - B_call`` with ``B_call`` the bond the issuer
  may call at 100 on the exercise dates;
* a **payer** swaption is the put: ``B_put - B``.

The floating leg's frequency plays no part (its resets are taken to include the fixed leg's start dates, where it is
worth par). Both trees are the dated bonds' (:mod:`trinom.instruments.dated_bond`): the fixed leg's schedule generated
backward from ``maturity`` (its ``frequency``, ``day_count``, ``calendar`` and ``convention``), each coupon
``100 * rate * accrual fraction`` paid on its period's (adjusted) end, at its time between the tree's steps; the
exercise is a listed point at each exercise date at the dirty price 100 (the bond is ex-coupon there: the coupon
paid that day belongs to the period before): on its step, or, for a date between steps, at the last step before it
with the date's time (docs/paper-instrument.md, "Flows between steps"). The bond holds the periods that start on or
after the first exercise date. Exercise dates: ``european``, the fixed-leg start date ``first_exercise`` (default:
the swap's start); ``bermudan``, every fixed-leg start date from ``first_exercise`` to ``last_exercise`` (default: from the
start to the last period's start). Only dates after the as-of date count.

**Two curves** (issue 37): a swaption whose floating leg is projected on its ``forecast_curve`` apart from its
``curve`` has a floating leg worth, at the start ``s_0`` of its period, ``100 beta_0`` less 100 at the end, plus ``100
(beta_k - 1)`` at each later period's start ``s_k`` (the deterministic basis of :mod:`trinom.model.rate_options`,
``beta`` read from both curves at whole days). So each bond also pays ``-100 (beta_k - 1)`` at the floating starts
after the first exercise date, and each exercise date, the start of a floating period, has the price ``100 beta``:
the floating leg's periods (``float_frequency``, generated as the fixed leg's) must start on every exercise date.

Values are per 100 of the trade's notional, the difference of the trees (issue 35: one unit for every price; the
value in currency, ``price * notional / 100``, is :attr:`trinom.Prices.value`).

>>> import numpy as np
>>> specs = SwaptionSpecs(as_of=20_000, start=np.array([20_365]), maturity=np.array([22_191]), rate=np.array([0.03]),
...                       frequency=np.array([1]), day_count=np.array(["30/360"], dtype=object),
...                       calendar=np.array(["NONE"], dtype=object), convention=np.array(["U"], dtype=object),
...                       payer=np.array([False]), first_exercise=np.array([20_365]), last_exercise=np.array([20_365]),
...                       notional=np.array([100.0]), a=np.array([0.05]), sigma=np.array([0.01]),
...                       curve=np.array([0]), steps_per_year=np.array([48]), rows=np.array([0]))
>>> lowered = lower_swaptions(specs)
>>> len(lowered.bonds), lowered.weight.tolist(), lowered.bonds.exercise_count.tolist()
(2, [1.0, -1.0], [0, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..conventions import Schedules, accrual_fractions, generate_schedules
from ..conventions.business_days import adjust
from ..conventions.dates import day_text
from ..conventions.names import Problem
from ..errors import InputError
from ..model.curve import YieldCurve, discount_factors
from ..model.rate_options import basis_ratio
from ..ragged import segments
from .bond import BondPortfolio
from .constants import CALL, PUT
from .dated_bond import NO_EXERCISE_PRICE
from .tree_steps import YEAR_DAYS, exercise_step, step_after


@dataclass(frozen=True, eq=False)
class SwaptionSpecs:
    """Good swaption rows as arrays, one entry per swaption (dates as day numbers since 1970-01-01)."""

    as_of: int
    start: np.ndarray
    maturity: np.ndarray
    rate: np.ndarray
    frequency: np.ndarray
    day_count: np.ndarray
    calendar: np.ndarray
    convention: np.ndarray
    payer: np.ndarray
    first_exercise: np.ndarray  #: the window's first date (european: its one date)
    last_exercise: np.ndarray
    notional: np.ndarray
    a: np.ndarray
    sigma: np.ndarray
    curve: np.ndarray
    steps_per_year: np.ndarray
    rows: np.ndarray  #: each swaption's row in the book (for messages)
    float_frequency: np.ndarray | None = None  #: the floating leg's periods a year (None: the fixed leg's)
    forecast: np.ndarray | None = None  #: the curve its floating rates are projected on (None, or ``curve``: one curve)

    def two_curves(self) -> np.ndarray:
        """Per swaption, whether its floating leg is projected on a curve apart from its discount curve."""
        if self.forecast is None:
            return np.zeros(self.start.size, dtype=bool)
        return np.asarray(self.forecast) != np.asarray(self.curve)


@dataclass(frozen=True, eq=False)
class LoweredSwaptions:
    """Two bond trees per swaption (the plain bond, then the bond with the option) and their weights."""

    bonds: BondPortfolio
    weight: np.ndarray
    problems: list[Problem]  #: rows only lowering finds bad (then both their trees are placeholders)


@dataclass(frozen=True, eq=False)
class FixedLegPeriods:
    """The swaptions' fixed-leg periods, flat (swaption by swaption, in date order), and their exercise windows."""

    schedules: Schedules  #: the fixed legs' schedules (a bad one's problems in ``schedules.problems``)
    owner: np.ndarray  #: per period, its swaption (an index into the specs)
    begin: np.ndarray  #: per period, its (adjusted) start date, a day number
    end: np.ndarray  #: per period, its (adjusted) end date
    in_window: np.ndarray  #: per period, whether its start is in the window ``first_exercise..last_exercise``


def fixed_leg_periods(specs: SwaptionSpecs) -> FixedLegPeriods:
    """Each swaption's fixed-leg periods (its schedule generated backward from ``maturity``) and which of them start
    in its exercise window: the swaption's exercise dates are those starts, the tree keeping the ones after the
    as-of date (:func:`lower_swaptions`; per-trade calibration, :func:`trinom.analytics.baskets.book_baskets`, uses the
    same dates)."""
    count = specs.start.size
    schedules = generate_schedules(effective=specs.start.astype("datetime64[D]"),
                                   termination=specs.maturity.astype("datetime64[D]"), frequency=specs.frequency,
                                   calendar=specs.calendar, convention=specs.convention, errors="mask",
                                   rows=specs.rows, fields={"effective": "start", "termination": "maturity"})
    begin, end = schedules.period_bounds()
    owner = np.repeat(np.arange(count), np.maximum(schedules.counts - 1, 0))
    # the window's ends rolled as the starts are (a start on a weekend is exercised on its rolled date)
    first, last = specs.first_exercise, specs.last_exercise
    if count:
        rolled = adjust(dates=np.concatenate([first, last]).astype("datetime64[D]"),
                        convention=np.concatenate([specs.convention, specs.convention]),
                        calendar=np.concatenate([specs.calendar, specs.calendar])).astype(np.int64)
        first, last = rolled[:count], rolled[count:]
    in_window = (begin >= first[owner]) & (begin <= last[owner])
    return FixedLegPeriods(schedules=schedules, owner=owner, begin=begin, end=end, in_window=in_window)


def lower_swaptions(specs: SwaptionSpecs, curves: Sequence[YieldCurve] | None = None) -> LoweredSwaptions:
    """The swaptions of ``specs`` as bond trees (see the module); ``curves``: the market's, by ``specs.curve`` and
    ``specs.forecast``, needed where a floating leg is projected apart from its discount curve."""
    count = specs.start.size
    legs = fixed_leg_periods(specs)
    schedules, begin, end, owner = legs.schedules, legs.begin, legs.end, legs.owner
    problems: list[Problem] = list(schedules.problems)
    fractions = accrual_fractions(schedules=schedules, day_count=specs.day_count) if count else np.zeros(0)
    # exercise dates: the period starts in the window, after the as-of date
    exercisable = legs.in_window & (begin > specs.as_of)
    first_date = np.full(count, np.iinfo(np.int64).max)
    np.minimum.at(first_date, owner[exercisable], begin[exercisable])
    bad = ~schedules.good.copy()
    for k in np.flatnonzero(schedules.good & (first_date == np.iinfo(np.int64).max)):
        bad[k] = True
        if specs.last_exercise[k] <= specs.as_of:  # every exercise date has passed: say so, not the window's cells
            problems.append((int(specs.rows[k]), "first_exercise", f"the swaption has expired: its exercise dates "
                             f"(from {day_text(specs.first_exercise[k])} to {day_text(specs.last_exercise[k])}; "
                             f"first_exercise and last_exercise default to its start) are on or before the as-of date "
                             f"{day_text(specs.as_of)}"))
            continue
        problems.append((int(specs.rows[k]), "first_exercise", "no fixed-leg start date after the as-of date between "
                         f"first_exercise {day_text(specs.first_exercise[k])} and last_exercise "
                         f"{day_text(specs.last_exercise[k])}: a swaption is exercised on the start dates of its fixed "
                         "leg's periods"))
    spy = specs.steps_per_year
    # the bond: the periods that start on or after the first exercise date
    held = (begin >= first_date[owner]) & ~bad[owner]
    f_owner, f_end = owner[held], end[held]
    f_coupon = 100.0 * specs.rate[f_owner] * fractions[held]
    last = np.zeros(f_owner.size, dtype=bool)
    if f_owner.size:
        last[np.flatnonzero(np.diff(np.append(f_owner, -1)) != 0)] = True
    f_repay = np.where(last, 100.0, 0.0)
    x_owner = owner[exercisable & ~bad[owner]]
    x_day = begin[exercisable & ~bad[owner]]
    x_price = np.full(x_owner.size, 100.0)
    two = specs.two_curves()
    if np.any(two & ~bad):  # the floating legs' basis: flows after the first exercise date, strikes 100 beta_0
        basis = floating_basis(specs, np.flatnonzero(two & ~bad), curves)
        problems += basis.problems
        bad[basis.failed] = True
        starts = np.isin(_keyed(x_owner, x_day), _keyed(basis.owner, basis.begin))
        lost = np.unique(x_owner[two[x_owner] & ~starts & ~bad[x_owner]])
        for k in lost.tolist():
            bad[k] = True
            problems.append((int(specs.rows[k]), "float_frequency", "the floating leg's periods must start on every "
                             "exercise date (its fixed leg's start dates): give a float_frequency that is a multiple of "
                             "the fixed leg's frequency"))
        later = (basis.begin > first_date[basis.owner]) & ~bad[basis.owner]
        f_owner = np.concatenate([f_owner, basis.owner[later]])
        f_end = np.concatenate([f_end, basis.begin[later]])
        f_coupon = np.concatenate([f_coupon, -100.0 * (basis.beta[later] - 1.0)])
        f_repay = np.concatenate([f_repay, np.zeros(int(later.sum()))])
        order = np.lexsort((f_end, f_owner))
        f_owner, f_end, f_coupon, f_repay = f_owner[order], f_end[order], f_coupon[order], f_repay[order]
        where = np.searchsorted(_keyed(basis.owner, basis.begin), _keyed(x_owner, x_day))
        on_start = starts & two[x_owner]
        x_price[on_start] = 100.0 * basis.beta[where[on_start]]
        good_points = ~bad[x_owner]
        x_owner, x_day, x_price = x_owner[good_points], x_day[good_points], x_price[good_points]
        held_flows = ~bad[f_owner]
        f_owner, f_end, f_coupon, f_repay = (f_owner[held_flows], f_end[held_flows], f_coupon[held_flows],
                                             f_repay[held_flows])
    f_step = step_after(f_end, specs.as_of, spy[f_owner])  # each flow at its date, valued at the step before
    new = np.ones(f_owner.size, dtype=bool)  # flows on one date are paid together
    new[1:] = (f_owner[1:] != f_owner[:-1]) | (f_end[1:] != f_end[:-1])
    group = np.cumsum(new) - 1
    flow_owner, flow_step, flow_time = f_owner[new], f_step[new], (f_end[new] - specs.as_of) / YEAR_DAYS
    flow_coupon = np.bincount(group, weights=f_coupon, minlength=int(new.sum()))
    flow_repay = np.bincount(group, weights=f_repay, minlength=int(new.sum()))
    x_step, x_time = exercise_step(x_day, specs.as_of, spy[x_owner])
    keep = np.ones(x_owner.size, dtype=bool)  # exercise dates on one step: the first
    keep[1:] = (x_owner[1:] != x_owner[:-1]) | (x_step[1:] != x_step[:-1])
    x_owner, x_step, x_time, x_price = x_owner[keep], x_step[keep], x_time[keep], x_price[keep]
    return LoweredSwaptions(bonds=_trees(specs, bad, flow_owner, flow_step, flow_time, flow_coupon, flow_repay, x_owner,
                                         x_step, x_time, x_price),
                            weight=_weights(specs), problems=problems)


@dataclass(frozen=True, eq=False)
class FloatingBasis:
    """The floating periods of two-curve swaptions, flat (swaption by swaption, in date order), and their basis."""

    owner: np.ndarray  #: per period, its swaption (an index into the specs)
    begin: np.ndarray  #: per period, its (adjusted) start date, a day number
    beta: np.ndarray  #: per period, its basis ratio (:func:`trinom.model.basis_ratio`)
    problems: list[Problem]  #: schedules that could not be generated
    failed: np.ndarray  #: their swaptions (indices into the specs)


def floating_basis(specs: SwaptionSpecs, which: np.ndarray, curves: Sequence[YieldCurve] | None) -> FloatingBasis:
    """The floating legs of the swaptions ``which``: their periods (generated as the fixed legs are, backward from
    ``maturity``, ``float_frequency`` a year) and each period's basis ratio between its forecast and discount curves
    read at whole days, as the trees read them (:mod:`trinom.model.rate_options` states the deterministic basis)."""
    if curves is None:
        raise InputError([(None, "curves", "a swaption whose floating leg is projected on its forecast_curve needs the "
                           "market's curves when it is lowered: lower the trades with their curves")])
    frequency = specs.frequency if specs.float_frequency is None else specs.float_frequency
    schedules = generate_schedules(effective=specs.start[which].astype("datetime64[D]"),
                                   termination=specs.maturity[which].astype("datetime64[D]"), frequency=frequency[which],
                                   calendar=specs.calendar[which], convention=specs.convention[which], errors="mask",
                                   rows=specs.rows[which], fields={"effective": "start", "termination": "maturity"})
    begin, end = schedules.period_bounds()
    owner = which[np.repeat(np.arange(which.size), np.maximum(schedules.counts - 1, 0))]
    discount, forecast = np.asarray(specs.curve)[owner], np.asarray(specs.forecast)[owner]
    beta = basis_ratio(**{f"{name}_{side}": discount_factors(curves, index, days - specs.as_of, days_in_year=YEAR_DAYS)
                          for name, index in (("discount", discount), ("forecast", forecast))
                          for side, days in (("start", begin), ("end", end))})
    problems = [(row, "float_frequency" if field == "frequency" else field, message)
                for row, field, message in schedules.problems]
    return FloatingBasis(owner=owner, begin=begin, beta=beta, problems=problems, failed=which[~schedules.good])


def _keyed(owner: np.ndarray, day: np.ndarray) -> np.ndarray:
    """One sortable key per (swaption, date), in the order of ``owner`` then ``day``."""
    return np.asarray(owner, dtype=np.int64) * (1 << 32) + np.asarray(day, dtype=np.int64)


def _weights(specs: SwaptionSpecs) -> np.ndarray:
    """Per swaption, its two trees' weights: receiver ``(+1, -1)``, payer ``(-1, +1)`` (a value per 100 of the
    notional; the trade's value in currency is that times notional / 100)."""
    sign = np.where(specs.payer, -1.0, 1.0)
    return np.column_stack([sign, -sign]).reshape(-1)


def _trees(specs: SwaptionSpecs, bad: np.ndarray, flow_owner: np.ndarray, flow_step: np.ndarray, flow_time: np.ndarray,
           flow_coupon: np.ndarray, flow_repay: np.ndarray, x_owner: np.ndarray, x_step: np.ndarray,
           x_time: np.ndarray, x_price: np.ndarray) -> BondPortfolio:
    """The bond trees, two per swaption (plain, then with the listed exercise); a bad swaption's are one-step
    placeholders (its problem is the row's)."""
    count = specs.start.size
    flows = np.bincount(flow_owner, minlength=count)
    flows[bad] = 1
    n = np.ones(count, dtype=np.int64)
    if flow_step.size:
        np.maximum.at(n, flow_owner, flow_step)
    spy = np.where(bad, 1, specs.steps_per_year)
    starts = np.concatenate(([0], np.cumsum(flows)))
    steps = np.ones(starts[-1], dtype=np.int64)
    times = np.full(starts[-1], np.nan)  # a bad swaption's placeholder flow: on its step
    coupon = np.zeros(starts[-1])
    repay = np.full(starts[-1], 100.0)
    position = starts[flow_owner] + (np.arange(flow_owner.size) - np.searchsorted(flow_owner, flow_owner))
    steps[position], times[position] = flow_step, flow_time
    coupon[position], repay[position] = flow_coupon, flow_repay
    points = np.bincount(x_owner, minlength=count)
    side = np.where(specs.payer, PUT, CALL).astype(np.int8)

    def twice(values: np.ndarray) -> np.ndarray:  # each swaption's value for both its trees
        return np.repeat(values, 2)

    _offsets, gather = segments(starts, np.repeat(np.arange(count), 2))  # each swaption's flows, once per tree

    def flows_twice(values: np.ndarray) -> np.ndarray:
        return values[gather]

    optioned = np.tile([False, True], count)
    exercise_count = np.where(optioned, twice(points), 0)
    return BondPortfolio(
        term_unit=np.full(2 * count, YEAR_DAYS), term_steps=twice(spy), a=twice(np.where(bad, 0.1, specs.a)),
        sigma=twice(np.where(bad, 0.01, specs.sigma)), maturity=twice((n - 0.5) / spy),
        cashflow_count=twice(flows), cashflow_step=flows_twice(steps), cashflow_time=flows_twice(times),
        repayment=flows_twice(repay),
        coupon=flows_twice(coupon), spread=np.zeros(2 * count),
        option_type=np.where(optioned, twice(side), CALL).astype(np.int8),
        strike=np.where(optioned, 100.0, NO_EXERCISE_PRICE),
        first_exercise=twice(n), last_exercise=np.where(exercise_count > 0, twice(n) - 1, twice(n)),
        exercise_frequency=np.ones(2 * count, dtype=np.int64), curve_index=twice(specs.curve),
        exercise_count=exercise_count, exercise_step=x_step, exercise_price=x_price,
        exercise_time=x_time,
        accrued=np.zeros(2 * count)).with_signed_coupons()
