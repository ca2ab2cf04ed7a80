"""One scenario's priced quotes: discount factors, forward swap rates, annuities, strikes and market prices, and
the swaptions, formula prices, vegas and implied volatilities the fit needs of them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...model.rate_options import Swaptions
from ...model.volatility import (
    bachelier_implied_vol,
    bachelier_price,
    bachelier_vega,
    black_implied_vol,
    black_price,
    black_vega,
)


@dataclass(frozen=True, eq=False)
class _CurveLegs:
    """The fixed legs of one curve's quotes as per-trade tables of flows that a trade's quotes share.

    A trade's table starts with the schedule generated forward from its first quoted exercise date to its end
    (:func:`~trinom.model.periods.fixed_leg`); a quote whose exercise date lies on that schedule, on the same day of
    the month, has as its leg the schedule's periods from its exercise date on: the very leg that generating forward
    from that date gives (its dates are the schedule's, and so are its accrual fractions). Any other quote's leg (an
    exercise date off the schedule, or an ACT/ACT-ICMA leg of one period, whose reference period differs) is
    generated on its own and appended to its trade's table.

    Attributes:
      name: the curve; rows: its quotes (indices into the prepared quotes, trade by trade).
      trades: its trades (indices), in order; local: per quote of ``rows``, its trade's row of the tables.
      time, accrual: ``(trades, f)``: each flow's payment date in ACT/365F years from the as-of date (padding: the
        trade's end) and accrual fraction (padding: 0).
      schedule: per trade, how many of its flows are its schedule's (the rest: quotes' own legs, then padding).
      dates: the distinct dates of the tables' flows and of the quotes' exercises, in ACT/365F years (ascending);
        at: ``(trades, f)``: each flow's date as an index into ``dates``; start_at: per quote of ``rows``, its
        exercise date's index. A scenario's discount factors are taken once per date (``dates``) and looked up.
    """

    name: str
    rows: np.ndarray
    trades: np.ndarray
    local: np.ndarray
    time: np.ndarray
    accrual: np.ndarray
    schedule: np.ndarray
    dates: np.ndarray
    at: np.ndarray
    start_at: np.ndarray


def _leg_sums(schedule: np.ndarray, local: np.ndarray, first: np.ndarray, count: np.ndarray,
              values: np.ndarray) -> np.ndarray:
    """Per quote (its row ``local`` of the tables, its leg ``count`` flows from ``first``), the sum of ``values``
    (``(tables, f)``; ``schedule``: per table, how many of its flows are its schedule's) over its leg's flows: a
    tail of its table's schedule from the reverse cumulative sums of the schedules, a leg of its own as one
    segment."""
    out = np.empty(first.size)
    columns = np.arange(values.shape[1])[None, :]
    own = first >= schedule[local]
    if (~own).any():
        tails = np.cumsum(np.where(columns < schedule[:, None], values, 0.0)[:, ::-1], axis=1)[:, ::-1]
        out[~own] = tails[local[~own], first[~own]]
    if own.any():
        start = local[own] * values.shape[1] + first[own]
        bounds = np.stack([start, start + count[own]], axis=1).reshape(-1)
        flat = np.concatenate([values.reshape(-1), [0.0]])
        out[own] = np.add.reduceat(flat, bounds)[::2]
    return out


@dataclass(frozen=True, eq=False)
class _QuoteSet:
    """The baskets' swaptions priced on curves (:meth:`PreparedBaskets.quotes`; one per kept exercise date, trade by
    trade): their market data and formulas, their legs as the trades' tables of flows (``legs``, with per curve the
    discount factors at its dates, ``curve_discounts``, and on the tables, ``discounts``), their floating legs' basis
    where a forecast curve projects them (``start_basis``, ``basis_time``, ``basis_discount``, ``basis``: as
    :class:`~trinom.model.rate_options.Swaptions` has them) and, built when first asked for, as swaptions."""

    trade: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    strike: np.ndarray
    forward: np.ndarray
    annuity: np.ndarray
    payer: np.ndarray
    kind: np.ndarray
    shift: np.ndarray
    market_vol: np.ndarray
    market_price: np.ndarray
    kinds: dict[str, str]
    exercise_time: np.ndarray
    discount_start: np.ndarray
    first: np.ndarray
    count: np.ndarray
    legs: tuple[_CurveLegs, ...]
    curve_discounts: tuple[np.ndarray, ...]
    forward_exercise: np.ndarray
    start_basis: np.ndarray
    basis_time: np.ndarray
    basis_discount: np.ndarray
    basis: np.ndarray

    def kind_of(self, curve: str) -> str:
        return self.kinds.get(curve, "")

    @cached_property
    def discounts(self) -> tuple[np.ndarray, ...]:
        """Per curve the discount factors of its trades' tables of flows (``(trades, f)``)."""
        return tuple(df[legs.at] for legs, df in zip(self.legs, self.curve_discounts, strict=True))

    @cached_property
    def swaptions(self) -> Swaptions:
        """Every quote as a swaption, legs padded per curve to its longest (then to the longest of all)."""
        return self.swaptions_of(np.arange(self.trade.size))

    def swaptions_of(self, rows: np.ndarray) -> Swaptions:
        """The quotes ``rows`` (ascending) as swaptions, in that order."""
        nq = self.trade.size
        position = np.full(nq, -1, dtype=np.int64)
        position[rows] = np.arange(rows.size)
        parts: list[Swaptions] = []
        order: list[np.ndarray] = []
        for legs, df in zip(self.legs, self.discounts, strict=True):
            pick = np.flatnonzero(position[legs.rows] >= 0)
            if not pick.size:
                continue
            q, local = legs.rows[pick], legs.local[pick]
            count = self.count[q]
            columns = np.arange(max(int(count.max()), 1))[None, :]
            live = columns < count[:, None]
            # flat positions in the tables: each leg's flows, its last repeated as padding (the end's time)
            at = (local * legs.time.shape[1] + self.first[q])[:, None] + np.minimum(columns, count[:, None] - 1)
            parts.append(Swaptions(exercise=self.exercise_time[q], start=self.exercise_time[q],
                                   pay_time=legs.time.reshape(-1)[at],
                                   accrual=np.where(live, legs.accrual.reshape(-1)[at], 0.0),
                                   discount_start=self.discount_start[q],
                                   discount_pay=np.where(live, df.reshape(-1)[at], 1.0), fixed_rate=self.strike[q],
                                   notional=np.ones(q.size), payer=self.payer[q], count=count,
                                   forward_exercise=self.forward_exercise[q], start_basis=self.start_basis[q],
                                   basis_time=self.basis_time[q], basis_discount=self.basis_discount[q],
                                   basis=self.basis[q]))
            order.append(position[q])
        if not parts:
            return _no_swaptions()
        together = np.concatenate(order)
        if len(parts) == 1 and np.array_equal(together, np.arange(together.size)):
            return parts[0]
        inverse = np.empty(together.size, dtype=np.int64)
        inverse[together] = np.arange(together.size)
        return Swaptions.concatenate(parts).take(inverse)

    def _args(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {"forward": self.forward[rows], "strike": self.strike[rows], "expiry": self.exercise_time[rows],
                "annuity": self.annuity[rows]}

    def price_at(self, vol: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The formula's price of quotes ``rows`` at ``vol`` (each kind's formula on its quotes only)."""
        return _formula_prices(self.kind[rows] == "normal", forward=self.forward[rows], strike=self.strike[rows],
                               expiry=self.exercise_time[rows], annuity=self.annuity[rows],
                               vol=np.broadcast_to(np.asarray(vol, dtype=np.float64), rows.shape),
                               shift=self.shift[rows], payer=self.payer[rows])

    def vega(self, vol: np.ndarray, rows: np.ndarray) -> np.ndarray:
        args = self._args(rows)
        normal = self.kind[rows] == "normal"
        with np.errstate(all="ignore"):
            return np.where(normal, bachelier_vega(**args, vol=vol),
                            black_vega(**args, vol=vol, shift=self.shift[rows]))

    def implied_vol(self, price: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The volatility of each quote's kind that gives ``price`` (NaN where none does)."""
        out = np.full(rows.size, np.nan)
        normal = self.kind[rows] == "normal"
        for mask, lognormal in ((normal, False), (~normal, True)):
            if not mask.any():
                continue
            r = rows[mask]
            args = {**self._args(r), "price": price[mask], "is_call": self.payer[r]}
            with np.errstate(all="ignore"):
                out[mask] = (black_implied_vol(**args, shift=self.shift[r]) if lognormal
                             else bachelier_implied_vol(**args))
        return out

    def normal_vol(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Each quote's (of ``rows``; None: all) market price as a Bachelier volatility: a normal quote's own (its
        market price is the Bachelier price at it); a lognormal quote's price inverted (at the money, its volatility
        times ``F + shift`` where the price has no time value to invert)."""
        r = np.arange(self.trade.size) if rows is None else rows
        out = self.market_vol[r].copy()
        lognormal = np.flatnonzero(self.kind[r] != "normal")
        if lognormal.size:
            q = r[lognormal]
            with np.errstate(all="ignore"):
                implied = bachelier_implied_vol(price=self.market_price[q], **self._args(q), is_call=self.payer[q])
            fallback = self.market_vol[q] * (self.forward[q] + self.shift[q])
            out[lognormal] = np.where(np.isfinite(implied) & (implied > 0), implied, fallback)
        return out

    def matching_sigma(self, a: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Per quote (of ``rows``, ascending; None: all), the Hull-White ``sigma`` (with mean reversion ``a``, one per
        trade) whose swap rate has the quote's normal volatility to first order: ``vol sqrt(T) / (dS/dx sqrt(B(2a,
        T)))``, with ``dS/dx = (B_n P_n - B_0 P_0 + S sum tau_i B_i P_i) / A`` the swap rate's move with the state
        (``B_i = B(a, t_i - T) = (1 - exp(-a (t_i - T))) / a``: ``sum tau_i B_i P_i = (A - exp(a T) sum tau_i P_i
        exp(-a t_i)) / a``, the sum over a leg from its trade's table). A start for the solver that knows how mean
        reversion damps a long swap's volatility."""
        from ...model.hull_white import bond_factor

        nq = self.trade.size
        r = np.arange(nq) if rows is None else rows
        a_of = np.zeros(int(self.trade.max()) + 1 if nq else 0)
        a_of[self.trade[r]] = a
        position = np.full(nq, -1, dtype=np.int64)
        position[r] = np.arange(r.size)
        weighted = np.empty(r.size)
        last_factor = np.empty(r.size)
        last_discount = np.empty(r.size)
        T = self.exercise_time[r]
        for legs, df in zip(self.legs, self.discounts, strict=True):
            pick = np.flatnonzero(position[legs.rows] >= 0)
            if not pick.size:
                continue
            q, local, at = legs.rows[pick], legs.local[pick], position[legs.rows[pick]]
            a_trade = a_of[legs.trades][:, None]
            with np.errstate(over="ignore", invalid="ignore"):
                sums = _leg_sums(legs.schedule, local, self.first[q], self.count[q],
                                 legs.accrual * df * np.exp(-a_trade * legs.time))
            end = local * legs.time.shape[1] + self.first[q] + self.count[q] - 1
            a_q = a_of[self.trade[q]]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                weighted[at] = (self.annuity[q] - np.exp(a_q * T[at]) * sums) / a_q
            last_factor[at] = bond_factor(a=a_q, tau=legs.time.reshape(-1)[end] - T[at])
            last_discount[at] = df.reshape(-1)[end]
        B0 = bond_factor(a=a, tau=np.zeros(r.size))  # the swap starts at the exercise
        with np.errstate(all="ignore"):
            slope = (last_factor * last_discount - B0 * self.discount_start[r]
                     + self.forward[r] * weighted) / self.annuity[r]
            spread = np.sqrt(np.maximum(bond_factor(a=2.0 * a, tau=T), 0.0))
            return self.normal_vol(None if rows is None else rows) * np.sqrt(np.maximum(T, 0.0)) / (slope * spread)


def _formula_prices(normal: np.ndarray, *, forward: np.ndarray, strike: np.ndarray, expiry: np.ndarray,
                    annuity: np.ndarray, vol: np.ndarray, shift: np.ndarray, payer: np.ndarray) -> np.ndarray:
    """Each quote's price by its kind's formula (``normal``: Bachelier; otherwise shifted Black, NaN where the
    forward or the strike is not above ``-shift``) at ``vol``, times its annuity."""
    out = np.full(normal.size, np.nan)
    for mask, lognormal in ((normal, False), (~normal, True)):
        if not mask.any():
            continue
        args = {"forward": forward[mask], "strike": strike[mask], "expiry": expiry[mask], "annuity": annuity[mask],
                "vol": vol[mask], "is_call": payer[mask]}
        with np.errstate(all="ignore"):
            if lognormal:
                black = black_price(**args, shift=shift[mask])
                bad = (forward[mask] + shift[mask] <= 0) | (strike[mask] + shift[mask] <= 0)
                out[mask] = np.where(bad, np.nan, black)
            else:
                out[mask] = bachelier_price(**args)
    return out


def _no_swaptions() -> Swaptions:
    empty = np.zeros(0)
    return Swaptions(exercise=empty, start=empty, pay_time=np.zeros((0, 1)), accrual=np.zeros((0, 1)),
                     discount_start=empty, discount_pay=np.ones((0, 1)), fixed_rate=empty, notional=empty,
                     payer=np.zeros(0, dtype=bool), count=np.zeros(0, dtype=np.int64), forward_exercise=empty)
