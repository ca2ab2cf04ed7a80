"""The lowering of dated bonds to their trees: coupon schedules, coupons and principal on tree steps, exercise
(the tree's own window or listed points), notice days and amortization (issue 25).

:func:`lower_dated_bonds` takes fixed-rate bonds by dates as arrays (:class:`DatedBonds`; exercise as
:class:`ExerciseDates` and :class:`ExerciseWindows`, amortization as :class:`Amortization`) and gives
:class:`LoweredBonds` (:meth:`LoweredBonds.portfolio`: a :class:`~trinom.BondPortfolio`): any trade that lowers to
dated bonds, the ``bond`` rows of a ``trades.csv`` (:mod:`trinom.instruments.trades`, the contract) among them. A
bond's coupon schedule is generated backward from maturity (:mod:`trinom.conventions`), each coupon
``100 * coupon * accrual fraction`` (the bond's day count) paid on the period's (adjusted) end date, 100 repaid at
maturity; only the flows after the as-of date are kept.

**The tree grid** is ``steps_per_year`` steps a year, its time the ACT/365F year fraction from the as-of date (the
curves' time). **A cash flow is paid at its time, between steps** (issue 34): it is valued at the step before it,
from each node, by Hull-White's zero-coupon bond price fitted to the tree (docs/paper-instrument.md, "Flows between
steps"), so that a straight bond is its flows discounted on the curve at any resolution. **An exercise date between
steps** is a listed point at the last step before it with the date (``exercise_time``): the tree decides there and
values the price, paid on the date, from each node as a flow of that date, and the flows paid up to the date are the
holder's whatever is decided, those after it given up (ex-coupon on a coupon date); its price and accrued interest are
the date's. A window's ends and a date in the first step are on the nearest step (halves up: :func:`step_of`); an
american window's listed point at a step is priced at the day holding the step's time (:func:`day_of_step`). At one
step a day (the trades' default) every date is a step of its own.

**Exercise** pays the exercise price, clean per 100 of the notional outstanding, plus the interest accrued at the
exercise date by the bond's day count (QuantLib's ``accruedAmount``; 0 on a coupon date, where exercise is ex-coupon:
the holder keeps the coupon). Where it is on dates (:class:`ExerciseDates`, or a window's coupon dates), each date is
a listed exercise point of the tree (docs/paper-instrument.md, "Listed exercise points") at its step, its dirty
price that sum, exact. An american window (every step of an :class:`ExerciseWindows` entry) is the tree's own (its
window of every step: no memory per step) where the tree's accrued interest is the day count's: the paper's (§6.4)
``(i - S) / (nx - S)`` of the coupon paid at step ``S``, the last cash flow at or before ``i``. That is linear in
steps (ACT days at one step a day) and 0 before the bond's first cash flow after the as-of date: the steps before it
are listed points (at most a coupon period of them). The window is the tree's only for a bond with one window, no
notice days, no amortization and one coupon amount over it: a bond whose coupons change in the window (ACT/360,
ACT/365F, ACT/ACT-ISDA periods of unequal days, business-day adjusted dates; the tree would accrue the previous
coupon's amount), an amortizing bond, several windows (a step-down american schedule) or notice days make every
step of the window a listed point (16 bytes a step: 5.8 kB per year of window at 365 steps a year, 190 B at 12).
What is left of the tree's own accrual: 30/360's days against ACT's (up to 0.005 per 100 against QuantLib), and
resolutions coarser than a day (accrued interest linear in steps between dates).

Where several exercise dates fall on one step (coarse resolutions), the tighter price holds (the lower for a call,
the higher for a put). Exercise dates before the as-of date are gone: a bond whose exercise has all passed is priced
without its option. A bond without an option lowers with a call at a price no tree value reaches
(:data:`NO_EXERCISE_PRICE`), which never binds.

**Notice days**: the decision is taken that many calendar days before each exercise date; the point is at the
decision date's step and its price is the exercise's value there: the dirty price paid on the exercise date and the
bond's cash flows after the decision step up to the exercise date, discounted to the decision date by the bond's
curve's deterministic forward discount factors (no spread; the base curves the bonds are lowered on: curve scenarios
and risk's bumps do not move them, an effect of about shift x notice period). An american window moves that many
days earlier (every step a listed point). An exercise whose decision date is not after the as-of date is gone.

**Amortizing bonds** (:class:`Amortization`): from each entry's date, a coupon date of the bond (adjusted or not,
before maturity; another date is a problem of the bond), the share of the original notional outstanding is the
entry's; the difference to the one before is repaid on that date, the rest at maturity. Coupons are paid on the
notional outstanding in their period, everything per 100 of the original notional; exercise prices are per 100 of
the notional outstanding at the exercise date (after a repayment on it), so a point's dirty price is the price plus
accrued times the outstanding share; the accrued interest at the as-of date is on the notional outstanding then.

Formerly part of :mod:`trinom.instruments.trades`, whose names for these stay importable for one release.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..conventions import (
    Schedules,
    accrual_fractions,
    accrued_interest,
    generate_schedules,
    parse_day_counts,
)
from ..conventions.dates import as_dates, day_text
from ..conventions.day_counts import ACT_ACT_ICMA, fractions_by_code
from ..conventions.icma import QuasiCouponDates, icma_fractions
from ..conventions.names import Problem
from ..errors import InputError
from ..model.curve import YieldCurve
from ..ragged import runs
from .bond import BondPortfolio
from .book_parts import entries_part, in_parts, joined_offsets, part_bounds, rows_part
from .constants import CALL, PUT
from .tree_steps import (  # date_of_step: this module's name for it stays (tests/test_layout.py)
    YEAR_DAYS,
    date_of_step,  # noqa: F401
    day_of_step,
    exercise_step,
    step_after,
    step_of,
)

#: The exercise price of the call a bond without an option lowers with: no tree value reaches it.
NO_EXERCISE_PRICE: Final[float] = 1e30
#: The bonds of a part of a book lowered at once (a book of fewer than twice as many is lowered whole): parts whose
#: arrays stay in the caches and in memory the allocator reuses are faster than one pass over the book.
PART_BONDS: Final[int] = 5000


@dataclass(frozen=True, eq=False)
class DatedBonds:
    """Fixed-rate bonds by dates, one entry per bond (dates as day numbers since 1970-01-01): what
    :func:`lower_dated_bonds` lowers. The name columns (``frequency``, ``day_count``, ``calendar``, ``convention``)
    are arrays of names or :class:`~trinom.conventions.Factorized` columns, already validated."""

    rows: np.ndarray  #: each bond's row in its book (the problems lowering finds name it)
    issue: np.ndarray  #: the schedule's first date (a bond's issue date, a swap's start)
    maturity: np.ndarray  #: the schedule's last date
    coupon: np.ndarray  #: the annual coupon rate, a decimal
    frequency: Any
    day_count: Any
    calendar: Any
    convention: Any
    a: np.ndarray
    sigma: np.ndarray
    spread: np.ndarray  #: the OAS, a decimal (continuous, added to the short rate)
    curve: np.ndarray  #: the index of the bond's curve among the market's
    steps_per_year: np.ndarray
    side: np.ndarray  #: CALL or PUT: what the bond's exercise does (either, for a bond without any)
    settlement: np.ndarray | None = None  #: per bond its settlement day (issue 38), or None: at the as-of date

    def __len__(self) -> int:
        return int(self.issue.size)


@dataclass(frozen=True, eq=False)
class ExerciseDates:
    """Exercise on given dates, one entry per date: its bond (an index into :class:`DatedBonds`), the exercise date,
    the price per 100 of the notional outstanding then, whether that price is clean (the day count's accrued interest
    at the date is added; 0 on a coupon date, ex-coupon) or dirty (paid as it is), and the notice days (the decision
    is taken that many calendar days before the date)."""

    bond: np.ndarray
    date: np.ndarray
    price: np.ndarray
    clean: np.ndarray
    notice: np.ndarray

    @classmethod
    def of(cls, bond: npt.ArrayLike, date: npt.ArrayLike, price: npt.ArrayLike, clean: npt.ArrayLike = True,
           notice: npt.ArrayLike = 0) -> ExerciseDates:
        """From arrays (``price``, ``clean`` and ``notice`` may be one value for all)."""
        bond = np.asarray(bond, dtype=np.int64).reshape(-1)
        size = bond.size
        return cls(bond=bond, date=np.broadcast_to(np.asarray(date, dtype=np.int64), size).copy(),
                   price=np.broadcast_to(np.asarray(price, dtype=np.float64), size).copy(),
                   clean=np.broadcast_to(np.asarray(clean, dtype=bool), size).copy(),
                   notice=np.broadcast_to(np.asarray(notice, dtype=np.int64), size).copy())


@dataclass(frozen=True, eq=False)
class ExerciseWindows:
    """Exercise windows, one entry per window: its bond, first and last exercise date (both included), the clean
    price per 100 of the notional outstanding and the notice days. As ``american`` exercise, every tree step of the
    window; as ``coupon_dates``, the bond's coupon dates in it. A bond may have several windows (a step-down american
    schedule: one per price)."""

    bond: np.ndarray
    first: np.ndarray
    last: np.ndarray
    price: np.ndarray
    notice: np.ndarray

    @classmethod
    def of(cls, bond: npt.ArrayLike, first: npt.ArrayLike, last: npt.ArrayLike, price: npt.ArrayLike,
           notice: npt.ArrayLike = 0) -> ExerciseWindows:
        """From arrays (``notice`` may be one value for all)."""
        bond = np.asarray(bond, dtype=np.int64).reshape(-1)
        size = bond.size
        return cls(bond=bond, first=np.broadcast_to(np.asarray(first, dtype=np.int64), size).copy(),
                   last=np.broadcast_to(np.asarray(last, dtype=np.int64), size).copy(),
                   price=np.broadcast_to(np.asarray(price, dtype=np.float64), size).copy(),
                   notice=np.broadcast_to(np.asarray(notice, dtype=np.int64), size).copy())


@dataclass(frozen=True, eq=False)
class Amortization:
    """Outstanding notionals, one entry per change: from ``date`` (a coupon date of the bond's schedule, adjusted or
    not) on, ``ratio`` of the bond's original notional is outstanding; ``where``: each entry's place, for messages
    (``notionals.csv line 4``)."""

    bond: np.ndarray
    date: np.ndarray
    ratio: np.ndarray
    where: np.ndarray


@dataclass(frozen=True, eq=False)
class _Coupons:
    """Good bonds' coupons: the periods that end after the as-of date, in bond and date order."""

    owner: np.ndarray  #: the period's bond
    end: np.ndarray  #: the period's (adjusted) end date, a day number: the coupon's payment date
    amount: np.ndarray  #: the coupon per 100 of the original notional
    principal: np.ndarray | None  #: the principal repaid at the period's end per 100 (None: 100 at maturity alone)


@dataclass(frozen=True, eq=False)
class _Flows:
    """Bonds' cash flows, in bond and date order (a bond's coupons of one date are one flow), each valued at the tree
    step before its ``step`` (the first step at or after its date)."""

    owner: np.ndarray  #: the flow's bond
    step: np.ndarray  #: its tree step (ascending within a bond)
    date: np.ndarray  #: its payment date (a day number)
    coupon: np.ndarray  #: the coupons paid on the date, per 100
    repayment: np.ndarray  #: the principal paid on the date
    offsets: np.ndarray  #: bond ``k``'s flows are ``[offsets[k]:offsets[k + 1]]``
    time: np.ndarray  #: its time in years (ACT/365F from the as-of date): the tree's ``cashflow_time``

    @property
    def counts(self) -> np.ndarray:
        """Per bond, its number of flows."""
        return np.diff(self.offsets)

    @property
    def last_step(self) -> np.ndarray:
        """Per bond, the step of its last flow (0 without flows): its tree's height."""
        counts = self.counts
        out = np.zeros(counts.size, dtype=np.int64)
        out[counts > 0] = self.step[self.offsets[1:][counts > 0] - 1]
        return out


@dataclass(frozen=True, eq=False)
class LoweredBonds:
    """:func:`lower_dated_bonds`'s result: per bond its cash flows on tree steps, its accrued interest at the as-of
    date, its exercise window (every step from ``window_first`` to ``window_last`` at ``strike`` plus the tree's
    accrued interest; empty, ``(1, 0)``, where the bond has listed points only; a call at :data:`NO_EXERCISE_PRICE`
    on its last step where it has no exercise) and its listed points (a dirty price per 100 at a step), and the
    problems only lowering finds (a bond with one still has its arrays here: :meth:`portfolio` replaces it)."""

    bonds: DatedBonds
    flows: _Flows
    accrued: np.ndarray  #: per bond, per 100 of the original notional
    window_first: np.ndarray
    window_last: np.ndarray
    strike: np.ndarray
    point_offsets: np.ndarray  #: bond ``k``'s points are ``[point_offsets[k]:point_offsets[k + 1]]``
    point_step: np.ndarray
    point_price: np.ndarray
    point_time: np.ndarray  #: years: the exercise date of a point between steps (NaN: at its step)
    problems: list[Problem]
    settlement_accrued: np.ndarray | None = None  #: per bond, at its ``bonds.settlement`` day (None: none given)

    @property
    def point_counts(self) -> np.ndarray:
        """Per bond, its number of listed exercise points."""
        return np.diff(self.point_offsets)

    def portfolio(self) -> BondPortfolio:
        """The bonds as a :class:`BondPortfolio` in their order; a bond with a problem is a placeholder carrying it
        (masked or raised by :func:`trinom.price` like any bad row)."""
        count = len(self.bonds)
        failed = np.zeros(count, dtype=bool)
        position = np.full(int(self.bonds.rows.max(initial=-1)) + 1, -1, dtype=np.int64)
        position[self.bonds.rows] = np.arange(count)
        local = [(int(position[row]), field, message) for row, field, message in self.problems if row is not None]
        failed[[row for row, _f, _m in local]] = True
        fields, accrued = portfolio_fields(self, np.arange(count), failed, count)
        if local:
            return BondPortfolio.with_read_problems(sorted(local, key=lambda item: item[0]), accrued=accrued, **fields)
        return BondPortfolio(accrued=accrued, **fields)


def lower_dated_bonds(as_of: int, bonds: DatedBonds, *, dates: ExerciseDates | None = None,
                      coupon_dates: ExerciseWindows | None = None, american: ExerciseWindows | None = None,
                      amortization: Amortization | None = None,
                      curves: Sequence[YieldCurve] | None = None, threads: int | None = None,
                      part_bonds: int = PART_BONDS) -> LoweredBonds:
    """Dated bonds as tree-step bonds (see the module's docstring): schedules, coupons and principal on tree steps,
    exercise as the tree's window where its own accrued interest is the day count's, else as listed points.

    ``dates``: exercise on those dates; ``coupon_dates``: on the bond's coupon dates within each window (bermudan);
    ``american``: on every step of each window; ``amortization``: outstanding notionals (coupons on the outstanding
    notional, each repayment paid on its date); ``curves``: the market's curves, by :attr:`DatedBonds.curve` (needed
    only where an exercise has notice days: its price is discounted from the exercise date to the decision date).
    A book of at least twice ``part_bonds`` bonds is lowered in parts of about ``part_bonds`` bonds (a bond's lowering
    depends on that bond alone: the parts' results, joined, are the whole book's), on ``threads`` threads at once
    (default: one; :mod:`trinom.instruments.book_parts`)."""
    inputs = {"dates": dates, "coupon_dates": coupon_dates, "american": american, "amortization": amortization}
    bounds = part_bounds(len(bonds), part_bonds)
    if len(bounds) == 2:
        return _lower(as_of, bonds, curves=curves, **inputs)
    return _joined(bonds, in_parts(lambda lo, hi: _lower(
        as_of, rows_part(bonds, lo, hi, len(bonds)), curves=curves,
        **{name: entries_part(value, lo, hi) for name, value in inputs.items()}), bounds, threads))


def _lower(as_of: int, bonds: DatedBonds, *, dates: ExerciseDates | None, coupon_dates: ExerciseWindows | None,
           american: ExerciseWindows | None, amortization: Amortization | None,
           curves: Sequence[YieldCurve] | None) -> LoweredBonds:
    """:func:`lower_dated_bonds` on one thread."""
    late: list[Problem] = []
    count = len(bonds)
    spy = np.asarray(bonds.steps_per_year, dtype=np.int64)
    schedules = generate_schedules(effective=as_dates(bonds.issue), termination=as_dates(bonds.maturity),
                                   frequency=bonds.frequency, calendar=bonds.calendar, convention=bonds.convention,
                                   errors="mask", rows=bonds.rows, fields={"effective": "issue", "termination": "maturity"})
    late += schedules.problems
    codes = np.broadcast_to(parse_day_counts(bonds.day_count)[0].astype(np.int64), (count,))
    if count:
        fractions = accrual_fractions(schedules=schedules, day_count=bonds.day_count)
        accrued = accrued_interest(schedules=schedules, day_count=bonds.day_count, coupon_rate=bonds.coupon,
                                   settlement=np.datetime64(as_of, "D"))
    else:
        fractions, accrued = np.zeros(0), np.zeros(0)
    ratio = period_ratios(bonds, schedules, amortization, late)
    if ratio is not None:
        accrued = accrued * _ratio_at(schedules, ratio, np.arange(count), np.full(count, as_of))
    settled = None
    if bonds.settlement is not None:
        settled = accrued_interest(schedules=schedules, day_count=bonds.day_count, coupon_rate=bonds.coupon,
                                   settlement=bonds.settlement.astype("datetime64[D]")) if count else np.zeros(0)
        if ratio is not None:
            settled = settled * _ratio_at(schedules, ratio, np.arange(count), bonds.settlement)
    coupons = _coupons(as_of, bonds, schedules, fractions, ratio)
    flows = _flows(coupons, spy, as_of)
    amortized = np.zeros(count, dtype=bool)
    if amortization is not None:
        amortized[amortization.bond] = True
    exercise = _Exercise(as_of, bonds, schedules, codes, ratio, flows, amortized, curves, late)
    exercise.add_dates(dates)
    exercise.add_coupon_dates(coupon_dates)
    exercise.add_american(american)
    window_first, window_last, strike, offsets, step, price, time = exercise.finish()
    return LoweredBonds(bonds=bonds, flows=flows, accrued=accrued, window_first=window_first, window_last=window_last,
                        strike=strike, point_offsets=offsets, point_step=step, point_price=price, point_time=time,
                        problems=late, settlement_accrued=settled)


def _joined(bonds: DatedBonds, parts: list[LoweredBonds]) -> LoweredBonds:
    """The lowerings of consecutive parts of ``bonds`` as the whole book's (problems: the parts' in turn)."""
    cat = np.concatenate
    flows = [part.flows for part in parts]
    first = np.cumsum([0] + [len(part.bonds) for part in parts])
    return LoweredBonds(
        bonds=bonds, flows=_Flows(owner=cat([f.owner + lo for f, lo in zip(flows, first, strict=False)]),
                                  step=cat([f.step for f in flows]), date=cat([f.date for f in flows]),
                                  coupon=cat([f.coupon for f in flows]), repayment=cat([f.repayment for f in flows]),
                                  offsets=joined_offsets([f.offsets for f in flows]), time=cat([f.time for f in flows])),
        **{name: cat([getattr(part, name) for part in parts])
           for name in ("accrued", "window_first", "window_last", "strike", "point_step", "point_price", "point_time")},
        point_offsets=joined_offsets([part.point_offsets for part in parts]),
        problems=[problem for part in parts for problem in part.problems],
        settlement_accrued=None if bonds.settlement is None else cat([part.settlement_accrued for part in parts]))


def period_ratios(bonds: DatedBonds, schedules: Schedules, amortization: Amortization | None,
                   late: list[Problem]) -> np.ndarray | None:
    """Per coupon period (flat, in :attr:`Schedules.period_offsets` order), the share of the original notional
    outstanding in it (None where nothing amortizes). An entry whose date is not a coupon date of its bond before
    maturity (or whose coupon date another entry holds already) is a problem of ``late``."""
    if amortization is None or amortization.bond.size == 0:
        return None
    bond, day = amortization.bond, amortization.date
    counts = schedules.counts
    start, stop = schedules.offsets[bond], schedules.offsets[bond + 1]
    found = np.full(bond.size, -1, dtype=np.int64)
    for dates in (schedules.unadjusted, schedules.adjusted):  # the adjusted date wins where both match
        days = dates.view(np.int64)
        at = _segment_search(days, start, stop, day)
        hit = (at < stop) & (days[np.minimum(at, max(days.size - 1, 0))] == day) if days.size else at < 0
        found = np.where(hit, at - start, found)
    good = (found >= 1) & (found <= counts[bond] - 2)
    period = schedules.period_offsets[bond] + np.maximum(found, 0)
    ratio = np.full(int(schedules.period_offsets[-1]), np.nan)
    ratio[schedules.period_offsets[:-1][counts > 1]] = 1.0
    ok = np.flatnonzero(good)
    _periods, first = np.unique(period[ok], return_index=True)
    again = np.ones(ok.size, dtype=bool)
    again[first] = False
    ratio[period[ok]] = amortization.ratio[ok]
    for k in np.flatnonzero(~good):  # the problems only (their bonds become placeholders)
        dates = [str(d) for d in schedules.dates(int(bond[k]))[1:-1]]
        shown = ", ".join(dates[:6]) + (f", ... ({len(dates)} in all)" if len(dates) > 6 else "")
        late.append((int(bonds.rows[bond[k]]), "notionals.date", f"{amortization.where[k]}: date {day_text(day[k])} is "
                     f"not a coupon date of the bond before its maturity (its coupon dates: {shown or 'none'})"))
    for k in ok[again]:
        late.append((int(bonds.rows[bond[k]]), "notionals.date", f"{amortization.where[k]}: date {day_text(day[k])} is "
                     "a coupon date another row of the bond gives too (one adjusted, one not)"))
    # forward fill within each bond: a period without a change keeps the one before it
    index = np.where(np.isnan(ratio), 0, np.arange(ratio.size))
    np.maximum.accumulate(index, out=index)
    return ratio[index]


def _coupons(as_of: int, bonds: DatedBonds, schedules: Schedules, fractions: np.ndarray,
             ratio: np.ndarray | None) -> _Coupons:
    """The periods that end after the as-of date: each coupon ``100 * coupon * accrual fraction`` (times the share
    outstanding), paid on the period's end, and the principal repaid there."""
    count = len(bonds)
    periods = np.maximum(schedules.counts - 1, 0)
    _start, end = schedules.period_bounds() if count else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    live = end > as_of
    owner = np.repeat(np.arange(count), periods)[live]
    coupon = np.asarray(bonds.coupon, dtype=np.float64)
    amount = (100.0 * coupon + 0.0)[owner]  # + 0.0: no coupon of -0.0 (it would sum on a step as 0.0)
    amount *= fractions[live]
    principal = None
    if ratio is not None:
        amount *= ratio[live]
        following = np.zeros(ratio.size)  # the share outstanding after each period's end (0 after the last)
        following[:-1] = ratio[1:]
        following[schedules.period_offsets[1:][periods > 0] - 1] = 0.0
        principal = (100.0 * (ratio - following))[live]
    return _Coupons(owner=owner, end=end[live], amount=amount, principal=principal)


def _flows(coupons: _Coupons, spy: np.ndarray, as_of: int) -> _Flows:
    """The coupons as cash flows paid on their dates (each at its time, on the first step at or after it: ``spy``
    steps a year per bond), the coupons (and repayments) of one date paid together, and the principal: 100 with each
    bond's last coupon, or the amortizing repayments."""
    owner, end, amount = coupons.owner, coupons.end, coupons.amount
    uniform = spy.size > 0 and bool(np.all(spy == spy[0]))  # one tree resolution for the book: no gather
    step = step_after(end, as_of, spy[0] if uniform else spy[owner])
    principal = coupons.principal
    # a bond's flows come in date order: the coupons of one date are adjacent
    merged = np.zeros(end.size, dtype=bool)
    np.equal(end[1:], end[:-1], out=merged[1:])
    merged[1:] &= owner[1:] == owner[:-1]
    if merged.any():
        later = np.flatnonzero(merged)  # the j-th of them joins the flow before it: flow later[j] - j - 1
        first = ~merged
        joined = later - np.arange(1, later.size + 1)
        coupon = amount[first]
        np.add.at(coupon, joined, amount[later])  # in date order, as a sum
        if principal is not None:
            repaid = principal[first]
            np.add.at(repaid, joined, principal[later])
            principal = repaid
        owner, step, end = owner[first], step[first], end[first]
    else:
        coupon = amount
    offsets = np.searchsorted(owner, np.arange(spy.size + 1))  # the flows are in bond order
    counts = np.diff(offsets)
    if principal is None:
        repayment = np.zeros(step.size)
        repayment[offsets[1:][counts > 0] - 1] = 100.0
    else:
        repayment = principal.copy()
    return _Flows(owner=owner, step=step, date=end, coupon=coupon, repayment=repayment, offsets=offsets,
                  time=(end - as_of) / YEAR_DAYS)


def _period_at(schedules: Schedules, bond: np.ndarray, day: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per ``(bond, day)``: the coupon period that holds the day (flat index; the first before the schedule's start,
    the last from its end), and whether the day is strictly inside it (after its start, before its end)."""
    days = schedules.adjusted.view(np.int64)
    start, stop = schedules.offsets[bond], schedules.offsets[bond + 1]
    # the dates of the bonds asked about as one ascending key (bond, date): one search for all
    asked = np.zeros(len(schedules), dtype=bool)
    asked[bond] = True
    counts = schedules.counts
    if asked.all():
        index = None
        owner = np.repeat(np.arange(len(schedules)), counts)
    else:
        index = np.flatnonzero(np.repeat(asked, counts))  # their dates' places in the book's
        owner = np.repeat(np.flatnonzero(asked), counts[asked])
    keys = _bond_day_keys(owner, days if index is None else days[index])
    at = np.searchsorted(keys, _bond_day_keys(bond, day), side="right") - 1
    if index is not None:  # back to the book's places (before a bond's first date: the date before it, as before)
        at = np.where(at >= 0, index[np.maximum(at, 0)], -1)
        before = at < start
        at[before] = start[before] - 1
    local = np.clip(at - start, 0, np.maximum(stop - start - 2, 0))
    inside = (at >= start) & (at < stop - 1)
    inside[inside] = days[at[inside]] < day[inside]
    return schedules.period_offsets[bond] + local, inside


def _bond_day_keys(bond: np.ndarray, day: np.ndarray) -> np.ndarray:
    """``(bond, day)`` pairs as one int64 that orders them by bond, then day."""
    return (bond.astype(np.int64) << 32) + (day + (1 << 31))


def _ratio_at(schedules: Schedules, ratio: np.ndarray, bond: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Per ``(bond, day)``: the share of the original notional outstanding at the day (after a repayment on it)."""
    out = np.ones(bond.size)
    periods = schedules.counts[bond] > 1
    out[periods] = ratio[_period_at(schedules, bond[periods], day[periods])[0]]
    return out


def _accrued_at(schedules: Schedules, codes: np.ndarray, coupon: np.ndarray, bond: np.ndarray,
                day: np.ndarray) -> np.ndarray:
    """Per ``(bond, day)``: the day count's interest accrued at the day per 100 (QuantLib's ``accruedAmount``, as
    :func:`trinom.conventions.accrued_interest`): 0 on a schedule date (ex-coupon), before the first and from the
    last on."""
    out = np.zeros(bond.size)
    if bond.size == 0:
        return out
    period, inside = _period_at(schedules, bond, day)
    days = schedules.adjusted.view(np.int64)
    which = np.flatnonzero(inside)
    local = period[which] - schedules.period_offsets[bond[which]]
    start = days[schedules.offsets[bond[which]] + local]
    code = codes[bond[which]]
    icma = code == ACT_ACT_ICMA
    fraction = np.zeros(which.size)
    plain = np.flatnonzero(~icma)
    if plain.size:
        fraction[plain] = fractions_by_code(start[plain], day[which[plain]], code[plain])
    special = np.flatnonzero(icma)
    if special.size:
        owners, inverse = np.unique(bond[which[special]], return_inverse=True)
        quasi = QuasiCouponDates(schedules, owners)
        fraction[special] = icma_fractions(quasi, inverse, local[special], start[special], day[which[special]])
    out[which] = 100.0 * coupon[bond[which]] * fraction
    return out


class _Exercise:
    """Collects the bonds' exercise (windows and listed points) while lowering: :meth:`finish` gives the arrays."""

    def __init__(self, as_of: int, bonds: DatedBonds, schedules: Schedules, codes: np.ndarray,
                 ratio: np.ndarray | None, flows: _Flows, amortized: np.ndarray, curves: Sequence[YieldCurve] | None,
                 late: list[Problem]):
        self.as_of, self.bonds, self.schedules, self.codes, self.ratio = as_of, bonds, schedules, codes, ratio
        self.flows, self.amortized, self.curves, self.late = flows, amortized, curves, late
        self.spy = np.asarray(bonds.steps_per_year, dtype=np.int64)
        self.height = flows.last_step
        count = len(bonds)
        self.window_first = np.ones(count, dtype=np.int64)  # empty windows until a bond gets one
        self.window_last = np.zeros(count, dtype=np.int64)
        self.strike = np.full(count, NO_EXERCISE_PRICE)
        self.points: list[tuple[np.ndarray, ...]] = []  # (bond, step, exercise date, price, clean, notice, time)

    def add_dates(self, dates: ExerciseDates | None) -> None:
        """Exercise on given dates: a point at the step of each decision date after the as-of date: a date without
        notice between steps at the last step before it, with its time (the engines value its price at the step);
        with notice, at the step nearest the decision date (its price discounted there on the curve: ``finish``)."""
        if dates is None or dates.bond.size == 0:
            return
        decision = dates.date - dates.notice
        spy = self.spy[dates.bond]
        step, time = exercise_step(decision, self.as_of, spy)
        noticed = dates.notice > 0
        step = np.where(noticed, step_of(decision, self.as_of, spy), step)
        time = np.where(noticed, np.nan, time)
        live = (decision > self.as_of) & (step <= self.height[dates.bond])  # a step beyond the height: never reached
        self.points.append((dates.bond[live], step[live], dates.date[live], dates.price[live], dates.clean[live],
                            dates.notice[live], time[live]))

    def add_coupon_dates(self, windows: ExerciseWindows | None) -> None:
        """Exercise on the coupon dates of each window (the schedule's adjusted period ends in it); a window that
        holds none and has not passed is a problem."""
        if windows is None or windows.bond.size == 0:
            return
        days = self.schedules.adjusted.view(np.int64)
        bond = windows.bond
        stop = self.schedules.offsets[bond + 1]
        lo = _segment_search(days, np.minimum(self.schedules.offsets[bond] + 1, stop), stop, windows.first)
        hi = _segment_search(days, lo, stop, windows.last, side="right")
        for k in np.flatnonzero((hi <= lo) & (windows.last > self.as_of) & (self.schedules.counts[bond] > 0)):
            self.late.append((int(self.bonds.rows[bond[k]]), "first_exercise", "no coupon date between first_exercise "
                              f"{day_text(windows.first[k])} and last_exercise {day_text(windows.last[k])}: a bermudan "
                              "option is exercised on coupon dates"))
        counts = np.maximum(hi - lo, 0)
        which = np.repeat(np.arange(bond.size), counts)
        at = runs(lo, counts)
        # on a coupon date the accrued interest is 0 (ex-coupon): the clean price is the dirty one
        self.add_dates(ExerciseDates(bond=bond[which], date=days[at], price=windows.price[which],
                                     clean=np.zeros(which.size, dtype=bool), notice=windows.notice[which]))

    def add_american(self, windows: ExerciseWindows | None) -> None:
        """Exercise on every step of each window: the tree's own window where its accrued interest is the day
        count's (a bond with one window, no notice days, no amortization and coupons of one amount over the window),
        with listed points on the steps before the bond's first cash flow (where the tree accrues none); listed
        points on every step elsewhere."""
        if windows is None or windows.bond.size == 0:
            return
        bond, notice = windows.bond, windows.notice
        first = step_of(np.maximum(windows.first - notice, self.as_of + 1), self.as_of, self.spy[bond])
        last = np.minimum(step_of(windows.last - notice, self.as_of, self.spy[bond]), self.height[bond])
        live = (windows.last - notice > self.as_of) & (first <= last)
        bond, first, last, price, notice = bond[live], first[live], last[live], windows.price[live], notice[live]
        flows = self.flows
        first_flow = np.full(len(self.bonds), np.iinfo(np.int64).max)
        with_flows = flows.counts > 0
        first_flow[with_flows] = flows.step[flows.offsets[:-1][with_flows]]
        windowed = (np.bincount(bond, minlength=len(self.bonds))[bond] == 1) & (notice == 0) & ~self.amortized[bond]
        windowed &= ~self._coupons_change(bond, np.maximum(first, first_flow[bond]), last)
        opens = np.maximum(first, first_flow[bond])  # the tree's window: from the first cash flow on
        own = windowed & (opens <= last)
        self.window_first[bond[own]] = opens[own]
        self.window_last[bond[own]] = last[own]
        self.strike[bond[own]] = price[own]
        stepped_last = np.where(windowed, np.minimum(opens - 1, last), last)  # listed points: the rest
        counts = np.maximum(stepped_last - first + 1, 0)
        which = np.repeat(np.arange(bond.size), counts)
        step = runs(first, counts)
        owner = bond[which]
        self.points.append((owner, step, day_of_step(step, self.as_of, self.spy[owner]) + notice[which], price[which],
                            np.ones(which.size, dtype=bool), notice[which], np.full(which.size, np.nan)))

    def _coupons_change(self, bond: np.ndarray, opens: np.ndarray, last: np.ndarray) -> np.ndarray:
        """Per window, whether a coupon period running in its steps ``opens .. last`` pays another amount than the
        one before it (the tree would accrue the previous coupon's: docs/paper-instrument.md §6.4)."""
        flows = self.flows
        within = np.full(len(self.bonds), -1, dtype=np.int64)  # per bond, its window (at most one here)
        within[bond] = np.arange(bond.size)
        changes = np.zeros(bond.size, dtype=bool)
        if flows.owner.size < 2:
            return changes
        # flow j and the next: the tree accrues flow j's coupon over the steps between them, the day count the next's
        owner, coupon = flows.owner[1:], flows.coupon
        window = within[owner]
        relevant = (window >= 0) & (owner == flows.owner[:-1])
        pairs = np.flatnonzero(relevant)
        w = window[pairs]
        pairs = pairs[(flows.step[pairs + 1] > opens[w]) & (flows.step[pairs] < last[w])]
        differ = np.abs(coupon[pairs + 1] - coupon[pairs]) > 1e-12 * np.maximum(np.abs(coupon[pairs]), 1.0)
        changes[window[pairs[differ]]] = True
        return changes

    def finish(self) -> tuple[np.ndarray, ...]:
        """The windows (first, last, strike; a bond without exercise: a call at :data:`NO_EXERCISE_PRICE` on its
        last step) and the listed points (offsets, steps, dirty prices), one point a step (the tighter price where
        dates share a step: the lower for a call, the higher for a put)."""
        count = len(self.bonds)
        if self.points:
            bond, step, day, price, clean, notice, time = (np.concatenate(parts)
                                                            for parts in zip(*self.points, strict=True))
        else:
            bond = step = day = notice = np.zeros(0, dtype=np.int64)
            price, clean, time = np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0)
        dirty = price.copy()
        if clean.any():
            accrued = _accrued_at(self.schedules, self.codes, np.asarray(self.bonds.coupon, dtype=np.float64),
                                  bond[clean], day[clean])
            dirty[clean] += accrued
        if self.ratio is not None:  # per 100 of the outstanding notional: per 100 of the original
            dirty *= _ratio_at(self.schedules, self.ratio, bond, day)
        noticed = np.flatnonzero(notice > 0)
        if noticed.size:
            dirty[noticed] = self._noticed(bond[noticed], step[noticed], day[noticed], dirty[noticed])
        bond, step, dirty, time = _merged_points(bond, step, dirty, np.asarray(self.bonds.side)[bond] == PUT, time)
        offsets = np.searchsorted(bond, np.arange(count + 1))  # the points are in bond order
        counts = np.diff(offsets)
        window_first, window_last = self.window_first, self.window_last
        none = (window_first > window_last) & (counts == 0)  # no exercise at all: the never-binding call
        window_first[none] = self.height[none]
        window_last[none] = self.height[none]
        return window_first, window_last, self.strike, offsets, step, dirty, time

    def _noticed(self, bond: np.ndarray, step: np.ndarray, day: np.ndarray, dirty: np.ndarray) -> np.ndarray:
        """The value at its decision step (time ``step / spy``, the step nearest the decision date) of each exercise
        with notice paying ``dirty`` on ``day``: the price and the flows paid after the step up to that date (the tree
        values them after the decision), less the flows paid after the date but at or before the step (the tree
        pays them whatever is decided), discounted to the step by the curve's deterministic forward discount
        factors."""
        if self.curves is None:
            raise InputError([(None, "curves", "exercise with notice days discounts its price on the trade's curve: "
                               "lower the trades with their curves")])
        flows = self.flows
        decision = self._discount(bond, step / self.spy[bond])
        value = dirty * self._discount(bond, (day - self.as_of) / YEAR_DAYS) / decision
        start, stop = flows.offsets[bond], flows.offsets[bond + 1]
        after_step = _segment_search(flows.step, start, stop, step, side="right")  # the first flow after the step
        after_date = _segment_search(flows.time, start, stop, (day - self.as_of) / YEAR_DAYS, side="right")
        for sign, lo, hi in ((1.0, after_step, after_date), (-1.0, after_date, after_step)):
            for k in range(int(np.max(hi - lo, initial=0))):  # the few flows between a step and a date
                take = np.flatnonzero(lo + k < hi)
                j = lo[take] + k
                paid = flows.coupon[j] + flows.repayment[j]
                value[take] += sign * paid * self._discount(bond[take], flows.time[j]) / decision[take]
        return value

    def _discount(self, bond: np.ndarray, years: np.ndarray) -> np.ndarray:
        """The discount factor at ``years`` (ACT/365F from the as-of date) of each bond's curve (its zero rate read
        at whole days, as the tree reads it)."""
        out = np.empty(bond.size)
        curve = np.asarray(self.bonds.curve)[bond]
        for index in np.unique(curve):
            mine = np.flatnonzero(curve == index)
            t = years[mine]
            out[mine] = np.exp(-self.curves[int(index)].rate_at(t, YEAR_DAYS) * t)  # type: ignore[index]
        return out


def _merged_points(bond: np.ndarray, step: np.ndarray, price: np.ndarray, put: np.ndarray,
                   time: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Points in bond and step order, one a step: where several share a step, the tighter price holds (the lowest
    for a call, the highest for a put; the earliest of equal ones), with its time."""
    if bond.size < 2:
        return bond, step, price, time
    if bool(np.any(bond[1:] < bond[:-1])):  # parts of the book, each in bond order: a merge of sorted runs
        order = np.argsort(bond, kind="stable")
        bond, step, price, put, time = bond[order], step[order], price[order], put[order], time[order]
    if not bool(np.all((step[1:] >= step[:-1]) | (bond[1:] != bond[:-1]))):  # steps out of order within a bond
        order = np.lexsort((step, bond))  # stable: points sharing a step keep their order
        bond, step, price, put, time = bond[order], step[order], price[order], put[order], time[order]
    # the steps in order within each bond (as the lowering adds them): only the points that share a step are sorted,
    # and the tightest of each such run kept in its place
    shared = (bond[1:] == bond[:-1]) & (step[1:] == step[:-1])
    if not shared.any():
        return bond, step, price, time
    grouped = np.zeros(bond.size, dtype=bool)
    grouped[1:] |= shared
    grouped[:-1] |= shared
    at = np.flatnonzero(grouped)
    signed = np.where(put[at], -price[at], price[at])  # the tighter one is the lowest of these
    order = at[np.lexsort((signed, step[at], bond[at]))]  # by bond, step, then the tighter first (stable: ties)
    first = np.ones(order.size, dtype=bool)
    first[1:] = (bond[order[1:]] != bond[order[:-1]]) | (step[order[1:]] != step[order[:-1]])
    keep = np.ones(bond.size, dtype=bool)
    keep[at] = False
    keep[order[first]] = True
    return bond[keep], step[keep], price[keep], time[keep]


def portfolio_fields(lowered: LoweredBonds, g: np.ndarray, placeholder: np.ndarray,
                      count: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The :class:`BondPortfolio` fields of ``count`` rows: row ``g[k]`` is lowered bond ``k`` (the other rows, and
    those ``placeholder`` marks, are one-step placeholders: one flow of 100 at step 1, no exercise), and the rows'
    accrued interest."""
    flows, bonds = lowered.flows, lowered.bonds
    real = ~placeholder[g]  # the lowered bonds that keep their flows and points
    counts = np.ones(count, dtype=np.int64)
    counts[g[real]] = np.maximum(flows.counts[real], 1)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    # a row without flows of its own (a placeholder, a bond whose flows all passed) has one: 100 at step 1
    lone = np.ones(count, dtype=bool)
    lone[g[real & (flows.counts > 0)]] = False
    lone_slots = offsets[:-1][lone]
    slots = np.ones(offsets[-1], dtype=bool)  # the others: the kept flows, in order
    slots[lone_slots] = False
    kept = None if real.all() else np.repeat(real, flows.counts)
    fields: dict[str, np.ndarray] = {}
    for name, values, filler in (("cashflow_step", flows.step, 1), ("cashflow_time", flows.time, np.nan),
                                 ("coupon", flows.coupon, 0.0), ("repayment", flows.repayment, 100.0)):
        if kept is not None:
            values = values[kept]
        if lone_slots.size:
            out = np.empty(offsets[-1], dtype=values.dtype)
            out[slots] = values
            out[lone_slots] = filler
            values = out
        fields[name] = values
    n = np.ones(count, dtype=np.int64)
    n[g] = np.maximum(flows.last_step, 1)
    n[placeholder] = 1

    def per_row(good_values: npt.ArrayLike, filler: float, dtype: npt.DTypeLike = np.float64) -> np.ndarray:
        out = np.full(count, filler, dtype=dtype)
        out[g] = good_values
        out[placeholder] = filler
        return out

    spy = per_row(bonds.steps_per_year, 1, np.int64)
    fields.update({"term_unit": np.full(count, YEAR_DAYS), "term_steps": spy, "a": per_row(bonds.a, 0.1),
                   "sigma": per_row(bonds.sigma, 0.01), "maturity": (n - 0.5) / spy, "cashflow_count": counts,
                   "spread": per_row(np.asarray(bonds.spread, dtype=np.float64) * 100.0, 0.0),
                   "option_type": per_row(bonds.side, CALL, np.int8),
                   "strike": per_row(lowered.strike, NO_EXERCISE_PRICE),
                   "first_exercise": per_row(lowered.window_first, 1, np.int64),
                   "last_exercise": per_row(lowered.window_last, 1, np.int64),
                   "exercise_frequency": np.ones(count, dtype=np.int64),
                   "curve_index": per_row(bonds.curve, 0, np.int64)})
    points = lowered.point_counts
    if lowered.point_step.size and (points[real] > 0).any():
        fields["exercise_count"] = per_row(np.where(real, points, 0), 0, np.int64)
        keep = np.repeat(real, points)
        fields["exercise_step"] = lowered.point_step[keep]
        fields["exercise_price"] = lowered.point_price[keep]
        fields["exercise_time"] = lowered.point_time[keep]
    return fields, per_row(lowered.accrued, 0.0)


def _segment_search(values: np.ndarray, start: np.ndarray, stop: np.ndarray, target: np.ndarray,
                    side: str = "left") -> np.ndarray:
    """Per segment ``values[start[k]:stop[k]]`` (ascending), the index in ``values`` where ``target[k]`` would go
    (:func:`numpy.searchsorted`'s ``side``): a binary search of every segment at once."""
    lo, hi = start.copy(), stop.copy()
    last = max(values.size - 1, 0)
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        value = values[np.minimum(mid, last)]
        right = open_ & ((value < target) if side == "left" else (value <= target))
        lo = np.where(right, mid + 1, lo)
        hi = np.where(open_ & ~right, mid, hi)
