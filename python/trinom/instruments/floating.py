"""Floating and fixed-to-float bonds (issue 37): coupons on a forecast curve's rate, lowered to the events every
engine runs.

A bond row's ``coupon_type`` is ``fixed`` (the default), ``float`` (each period pays the forecast rate for the period
plus ``margin``) or ``fixed_to_float`` (``coupon`` until ``switch_date``, a coupon date of its schedule, then
floating). The rate is projected on the row's ``forecast_curve`` (empty: its ``curve``) with ``index`` ``ibor`` (a
term rate fixed at the period's start) or ``ois`` (compounded overnight: its forward is the same discount-factor
ratio); ``fixing`` is the rate of a floating period running on the as-of date (fixed before it). The basis between
the curves is deterministic (:mod:`trinom.model.rate_options`): a floating period ``[s, e]`` fixing after the as-of
date pays at ``e`` what is worth ``beta P(t, s) - P(t, e)`` at every node before ``s``, ``beta`` its basis ratio. So
the bond lowers to the fixed-rate bond of its fixed coupons and ``margin`` (:mod:`trinom.instruments.dated_bond`),
and, per 100 of the notional outstanding in each such period, a flow of ``+100 beta`` at its start and ``-100`` at
its end; a running period pays ``100 * fixing * tau`` at its end. The principal then cancels: a floater's value is
carried by the flows at its coupon dates, as its interest rate risk is.

**Exercise** (calls and puts as for fixed-rate bonds, European and Bermudan, ``schedule.csv`` dates) must fall on a
date where no floating period is running (a coupon date, or any date of the fixed part): inside a period the coupon
fixed at its start depends on the path, which a recombining tree does not hold. At a floating period's start ``s_j``
the flow ``+100 beta_j`` belongs to the bond after the exercise, and the tree pays a date's flows whatever is
decided; so the exercise price there is lowered by ``100 beta_j`` (the leg's prices may be negative: the bonds carry
signed amounts, :meth:`~trinom.BondPortfolio.with_signed_coupons`). American exercise and notice days are refused
(they exercise inside periods).

**Caps and floors** on the coupon (``cap``, ``floor``: bounds on the rate plus ``margin``) are, per floating period
fixing after the as-of date, a caplet the holder gives up and a floorlet it gets: options on the period's rate that
the tree values at the step of its fixing, before that step's exercise (:mod:`trinom.instruments.coupon_options`). A
running period's coupon is known: its fixing plus margin within the bounds, a flow.

>>> FLOAT_COLUMNS
('coupon_type', 'margin', 'cap', 'floor', 'switch_date', 'fixing')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from ..conventions import accrual_fractions, accrued_interest, generate_schedules
from ..conventions.dates import as_dates, day_text
from ..model.curve import YieldCurve, discount_factors
from ..model.rate_options import basis_ratio
from .coupon_options import CouponOptions
from .dated_bond import Amortization, DatedBonds, LoweredBonds, _Flows, period_ratios
from .tree_steps import YEAR_DAYS, step_after, step_before

#: The columns floating bonds add to the trades contract (appended at its end).
FLOAT_COLUMNS: Final[tuple[str, ...]] = ("coupon_type", "margin", "cap", "floor", "switch_date", "fixing")
#: Coupon types, by index.
COUPON_TYPES: Final[tuple[str, ...]] = ("fixed", "float", "fixed_to_float")
FIXED, FLOAT, FIXED_TO_FLOAT = range(3)


@dataclass(frozen=True, eq=False)
class FloatingTerms:
    """The floating terms of lowered bonds, one entry per bond (fixed-rate bonds: ``kind`` :data:`FIXED`)."""

    kind: np.ndarray  #: index into :data:`COUPON_TYPES`
    coupon: np.ndarray  #: the fixed coupon (a fixed-to-float bond's before the switch; 0 for a floater)
    margin: np.ndarray  #: added to the floating rate, a decimal
    switch: np.ndarray  #: the first floating period's start (a day number; a floater: its issue date)
    fixing: np.ndarray  #: the running floating period's rate (NaN: not given)
    forecast: np.ndarray  #: the forecast curve, an index into the market's curves
    cap: np.ndarray | None = None  #: the cap on a floating coupon (rate plus margin), a decimal (NaN: none)
    floor: np.ndarray | None = None  #: the floor on it (NaN: none)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per bond, its cap and floor (NaN: none)."""
        none = np.full(self.kind.size, np.nan)
        return (none if self.cap is None else np.asarray(self.cap, dtype=np.float64),
                none if self.floor is None else np.asarray(self.floor, dtype=np.float64))


def lowered_coupon(terms: FloatingTerms) -> np.ndarray:
    """The coupon rate each bond lowers with as a fixed-rate bond: a floater's ``margin``, else its ``coupon``."""
    return np.where(terms.kind == FLOAT, terms.margin, terms.coupon)


def floating_lowered(as_of: int, lowered: LoweredBonds, terms: FloatingTerms, curves: Sequence[YieldCurve] | None,
                     amortization: Amortization | None) -> tuple[LoweredBonds, np.ndarray, CouponOptions | None]:
    """``lowered`` (the bonds as fixed-rate bonds paying :func:`lowered_coupon`) with the floating periods' flows,
    accrued interest and exercise prices (see the module), per bond whether its amounts are signed, and the caps'
    and floors' options on the coupons (:mod:`trinom.instruments.coupon_options`; None: no bond has any). A bond
    whose floating terms cannot be lowered gets a problem of ``lowered.problems`` (naming its row)."""
    bonds = lowered.bonds
    failed = np.zeros(len(bonds), dtype=bool)  # bonds the lowering found bad already: placeholders
    if lowered.problems:
        where = np.full(int(bonds.rows.max(initial=-1)) + 1, -1, dtype=np.int64)
        where[bonds.rows] = np.arange(len(bonds))
        named = where[[row for row, _f, _m in lowered.problems if row is not None and 0 <= row < where.size]]
        failed[named[named >= 0]] = True
    which = np.flatnonzero((terms.kind != FIXED) & ~failed)
    signed = np.zeros(len(bonds), dtype=bool)
    if not which.size:
        return lowered, signed, None
    problems = list(lowered.problems)

    def take(values: object) -> object:
        return values.take(which) if hasattr(values, "take") and not isinstance(values, np.ndarray) else \
            np.asarray(values)[which]

    schedules = generate_schedules(effective=as_dates(bonds.issue[which]), termination=as_dates(bonds.maturity[which]),
                                   frequency=take(bonds.frequency), calendar=take(bonds.calendar),
                                   convention=take(bonds.convention), errors="mask", rows=bonds.rows[which],
                                   fields={"effective": "issue", "termination": "maturity"})
    day_count = take(bonds.day_count)
    fractions = accrual_fractions(schedules=schedules, day_count=day_count)
    part = None if amortization is None else _part_amortization(amortization, which)
    ratio = period_ratios(replace(bonds, rows=bonds.rows[which]), schedules, part, [])
    begin, end = schedules.period_bounds()
    local = np.repeat(np.arange(which.size), np.maximum(schedules.counts - 1, 0))
    owner = which[local]
    share = np.ones(begin.size) if ratio is None else ratio
    floating = (begin >= terms.switch[owner]) & (end > as_of)
    bad = np.zeros(len(bonds), dtype=bool)
    key = owner.astype(np.int64) * (1 << 32) + begin  # periods by (bond, start), ascending
    # the switch: a date of the schedule
    switching = which[terms.kind[which] == FIXED_TO_FLOAT]
    at_start = np.searchsorted(key, switching * (1 << 32) + terms.switch[switching])
    on_schedule = key[np.minimum(at_start, max(key.size - 1, 0))] == switching * (1 << 32) + terms.switch[switching]
    for k in switching[~on_schedule].tolist():
        bad[k] = True
        problems.append((int(bonds.rows[k]), "switch_date", f"switch_date {day_text(terms.switch[k])} is not a "
                         "coupon date of the bond's schedule before its maturity: the first floating period starts on "
                         "one"))
    running = floating & (begin <= as_of)
    for p in np.flatnonzero(running & np.isnan(terms.fixing[owner])).tolist():
        k = int(owner[p])
        bad[k] = True
        problems.append((int(bonds.rows[k]), "fixing", f"fixing is missing: the floating period from "
                         f"{day_text(begin[p])} to {day_text(end[p])} fixed before the as-of date (its rate, a decimal)"))
    future = floating & (begin > as_of)
    beta = np.ones(begin.size)
    two = future & (terms.forecast[owner] != np.asarray(bonds.curve)[owner])
    if two.any():
        if curves is None:
            from ..errors import InputError

            raise InputError([(None, "curves", "a bond whose coupons are projected on its forecast_curve needs the "
                               "market's curves when it is lowered: lower the trades with their curves")])
        beta[two] = basis_ratio(**{f"{name}_{side}": discount_factors(curves, index[two], days[two] - as_of,
                                                                        days_in_year=YEAR_DAYS)
                                   for name, index in (("discount", np.asarray(bonds.curve)[owner]),
                                                       ("forecast", terms.forecast[owner]))
                                   for side, days in (("start", begin), ("end", end))})
    # the flows: a floating period's rate part, and the margin in place of a fixed-to-float bond's coupon
    swapped = floating & (terms.kind[owner] == FIXED_TO_FLOAT)
    coupon_change = 100.0 * (terms.margin - terms.coupon)[owner] * fractions * share
    fixed_rate = np.where(np.isnan(terms.fixing), 0.0, terms.fixing)[owner]
    cap, floor = terms.bounds()
    # a running period's coupon is known: its rate plus margin within the cap and floor (the clamp is a flow)
    paid_rate = fixed_rate + terms.margin[owner]
    clamped = np.fmax(np.fmin(paid_rate, cap[owner]), floor[owner])
    fixed_rate = fixed_rate + np.where(running, clamped - paid_rate, 0.0)
    parts = [(owner[future], begin[future], 100.0 * share[future] * beta[future]),
             (owner[future], end[future], -100.0 * share[future]),
             (owner[running], end[running], 100.0 * fixed_rate[running] * fractions[running] * share[running]),
             (owner[swapped], end[swapped], coupon_change[swapped])]
    flows = _with_flows(lowered.flows, parts, as_of, np.asarray(bonds.steps_per_year, dtype=np.int64), bad)
    # accrued interest: the running floating period's rate and margin in place of the coupon it was lowered with
    accrued = lowered.accrued.copy()
    held = np.flatnonzero(running & ~bad[owner])
    delta = np.zeros(which.size)
    delta[local[held]] = fixed_rate[held] + terms.margin[owner[held]] - lowered_coupon(terms)[owner[held]]
    running_share = 1.0 if ratio is None else _running_share(share, local, running, which.size)

    def running_accrued(days: np.ndarray) -> np.ndarray:
        """Per bond of ``which``, what its running period's accrued interest at ``days`` gains over the coupon it was
        lowered with."""
        return accrued_interest(schedules=schedules, day_count=day_count, coupon_rate=delta, settlement=days) \
            * running_share

    if held.size:
        accrued[which] += running_accrued(np.datetime64(as_of, "D"))
    settled = _settlement_accrued(lowered, owner, begin, future, bad, problems, which,
                                  running_accrued if held.size else None)
    # exercise: on a floating period's start the price is lowered by 100 beta; inside a running period it is refused
    price = lowered.point_price.copy()
    point_owner = np.repeat(np.arange(len(bonds)), lowered.point_counts)
    spy = np.asarray(bonds.steps_per_year, dtype=np.int64)[point_owner]
    point_day = np.where(np.isnan(lowered.point_time),
                         as_of + (lowered.point_step * YEAR_DAYS + spy // 2) // spy,
                         as_of + np.round(np.nan_to_num(lowered.point_time) * YEAR_DAYS).astype(np.int64))
    point_key = point_owner.astype(np.int64) * (1 << 32) + point_day
    at = np.minimum(np.searchsorted(key, point_key, side="right") - 1, key.size - 1)  # the period started by then
    mine = (at >= 0) & (owner[np.maximum(at, 0)] == point_owner)
    at = np.maximum(at, 0)
    starts = mine & (begin[at] == point_day) & future[at]
    price[starts] -= 100.0 * share[at[starts]] * beta[at[starts]]
    inside = mine & floating[at] & (point_day > begin[at]) & (point_day < end[at])
    refused = np.flatnonzero(inside & ~bad[point_owner])
    owners, first = np.unique(point_owner[refused], return_index=True)  # each bond's first such point
    bad[owners] = True
    for k, day in zip(owners.tolist(), point_day[refused[first]].tolist(), strict=True):
        problems.append((int(bonds.rows[k]), "exercise", f"exercise on {day_text(day)} falls inside a floating "
                         "coupon period, whose rate fixed at its start: a floating bond is exercised on its coupon "
                         "dates (period starts) or in its fixed part"))
    signed[which] = True
    options = _coupon_options(as_of, bonds, terms, owner, future & ~bad[owner], begin, end, fractions, share, beta,
                              problems)
    return (replace(lowered, flows=flows, accrued=accrued, point_price=price, problems=problems,
                    settlement_accrued=settled), signed, options)


def _coupon_options(as_of: int, bonds: DatedBonds, terms: FloatingTerms, owner: np.ndarray, future: np.ndarray,
                    begin: np.ndarray, end: np.ndarray, fractions: np.ndarray, share: np.ndarray, beta: np.ndarray,
                    problems: list[tuple[int | None, str, str]]) -> CouponOptions | None:
    """The caplets and floorlets of the floating periods ``future`` fixes after the as-of date, per bond of
    ``bonds`` (:mod:`trinom.instruments.coupon_options`); a bound that leaves no positive ``1 + tau (bound -
    margin)`` is a problem of its row."""
    cap, floor = terms.bounds()
    parts = []
    for bound, is_call, sign in ((cap, False, -1.0), (floor, True, 1.0)):
        period = np.flatnonzero(future & ~np.isnan(bound[owner]))
        if not period.size:
            continue
        k = owner[period]
        c = 1.0 + fractions[period] * (bound[k] - terms.margin[k])
        bad = c <= 0
        for p in np.flatnonzero(bad).tolist():
            problems.append((int(bonds.rows[k[p]]), "cap" if sign < 0 else "floor", "the bound less the margin is "
                             f"below -1 / accrual ({1 / fractions[period[p]]:.4g}) for the period from "
                             f"{day_text(begin[period[p]])}: no coupon can reach it"))
        period, k, c = period[~bad], k[~bad], c[~bad]
        spy = np.asarray(bonds.steps_per_year, dtype=np.int64)[k]
        parts.append((k, step_before(begin[period], as_of, spy), (begin[period] - as_of) / YEAR_DAYS,
                      (end[period] - as_of) / YEAR_DAYS, beta[period] / c, sign * 100.0 * share[period] * c,
                      np.full(period.size, is_call)))
    if not parts:
        return None
    k, step, expiry, pay, strike, amount, call = (np.concatenate(column) for column in zip(*parts, strict=True))
    order = np.lexsort((np.arange(k.size), step, k))  # per bond, by step (a period's cap before its floor)
    return CouponOptions.of(counts=np.bincount(k, minlength=len(bonds)), step=step[order], expiry=expiry[order],
                            end=pay[order], strike=strike[order], amount=amount[order], is_call=call[order])


def _settlement_accrued(lowered: LoweredBonds, owner: np.ndarray, begin: np.ndarray, future: np.ndarray,
                        bad: np.ndarray, problems: list, which: np.ndarray,
                        running_accrued: Callable[[np.ndarray], np.ndarray] | None) -> np.ndarray | None:
    """The floating bonds' accrued interest at their settlement dates (issue 38): the running period's known rate and
    margin in place of the coupon they were lowered with (``running_accrued``, as at the as-of date). A settlement
    date after the start of a floating period that fixes after the as-of date needs that fixing: the bond is refused
    (``bad``, a problem naming ``settlement_days``)."""
    bonds = lowered.bonds
    if lowered.settlement_accrued is None or bonds.settlement is None:
        return lowered.settlement_accrued
    settled = lowered.settlement_accrued.copy()
    settle = bonds.settlement[owner]
    for p in np.flatnonzero(future & (begin < settle) & ~bad[owner]).tolist():
        k = int(owner[p])
        if not bad[k]:
            bad[k] = True
            problems.append((int(bonds.rows[k]), "settlement_days", f"the bond settles on {day_text(settle[p])}, inside "
                             f"the floating period from {day_text(begin[p])}, whose rate fixes after the as-of date: its "
                             "accrued interest at settlement needs that fixing (not yet)"))
    if running_accrued is not None:
        settled[which] += np.nan_to_num(running_accrued(bonds.settlement[which].astype("datetime64[D]")))
    return settled


def _part_amortization(amortization: Amortization, which: np.ndarray) -> Amortization | None:
    """The amortization entries of bonds ``which``, renumbered among them."""
    position = np.full(int(max(which.max(initial=-1), amortization.bond.max(initial=-1))) + 1, -1, dtype=np.int64)
    position[which] = np.arange(which.size)
    kept = position[amortization.bond] >= 0
    if not kept.any():
        return None
    return Amortization(bond=position[amortization.bond[kept]], date=amortization.date[kept],
                        ratio=amortization.ratio[kept], where=amortization.where[kept])


def _running_share(share: np.ndarray, local: np.ndarray, running: np.ndarray, size: int) -> np.ndarray:
    """Per bond (of ``size``), the share outstanding in its running period (1 without one)."""
    out = np.ones(size)
    out[local[running]] = share[running]
    return out


def _with_flows(flows: _Flows, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], as_of: int, spy: np.ndarray,
                bad: np.ndarray) -> _Flows:
    """``flows`` with the amounts of ``parts`` (bond, date, coupon amount) added, flows of one bond and date merged,
    in bond and date order (the bonds ``bad`` marks keep theirs: they become placeholders). Most amounts fall on a
    date the bond pays on already (a coupon date) and are added there; the others make flows of their own."""
    owner = np.concatenate([p[0] for p in parts])
    date = np.concatenate([p[1] for p in parts])
    amount = np.concatenate([p[2] for p in parts])
    keep = ~bad[owner]
    owner, date, amount = owner[keep], date[keep], amount[keep]
    existing = flows.owner.astype(np.int64) * (1 << 32) + flows.date
    added = owner.astype(np.int64) * (1 << 32) + date
    at = np.minimum(np.searchsorted(existing, added), max(existing.size - 1, 0))
    hit = (existing[at] == added) if existing.size else np.zeros(added.size, dtype=bool)
    coupon = flows.coupon + np.bincount(at[hit], weights=amount[hit], minlength=existing.size)
    if hit.all():
        return replace(flows, coupon=coupon)
    owner = np.concatenate([flows.owner, owner[~hit]])
    date = np.concatenate([flows.date, date[~hit]])
    coupon = np.concatenate([coupon, amount[~hit]])
    repayment = np.concatenate([flows.repayment, np.zeros(int((~hit).sum()))])
    order = np.argsort(owner.astype(np.int64) * (1 << 32) + date, kind="stable")
    owner, date, coupon, repayment = owner[order], date[order], coupon[order], repayment[order]
    new = np.ones(owner.size, dtype=bool)
    new[1:] = (owner[1:] != owner[:-1]) | (date[1:] != date[:-1])
    group = np.cumsum(new) - 1
    size = int(new.sum())
    merged_owner, merged_date = owner[new], date[new]
    counts = np.bincount(merged_owner, minlength=flows.offsets.size - 1)
    return _Flows(owner=merged_owner, step=step_after(merged_date, as_of, spy[merged_owner]), date=merged_date,
                  coupon=np.bincount(group, weights=coupon, minlength=size),
                  repayment=np.bincount(group, weights=repayment, minlength=size),
                  offsets=np.concatenate(([0], np.cumsum(counts))), time=(merged_date - as_of) / YEAR_DAYS)
