"""What every scenario of a calibration shares: the baskets' quotes, their fixed legs' dates and accrual fractions,
expiries, tenors and the surface's volatilities (:func:`prepare_baskets`, :class:`PreparedBaskets`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import numpy as np

from ...conventions.dates import as_dates, to_days
from ...conventions.day_counts import ACT_ACT_ICMA, DAY_COUNTS, parse_day_counts
from ...errors import InputError
from ...model.dated_curve import DAYS_PER_YEAR
from ...model.periods import fixed_leg
from ...model.quotes import VolQuotes, VolSurface, resolve_curves
from .building import Baskets
from .quote_set import _CurveLegs, _formula_prices, _leg_sums, _QuoteSet

#: How a basket's swaptions are struck.
STRIKES: Final[tuple[str, ...]] = ("atm", "deal")


@dataclass(frozen=True, eq=False)
class PreparedBaskets:
    """The part of a per-trade calibration that no scenario moves (:func:`prepare_baskets`): the baskets' quotes,
    their fixed legs' dates and accrual fractions, their expiries and tenors and the surface's volatilities at them.
    :meth:`quotes` prices them on curves (discount factors, forward swap rates, annuities, strikes and market prices);
    :func:`calibrate_baskets` and :func:`calibrate_prepared` take it in place of :class:`Baskets`.

    Attributes:
      baskets, as_of, surface, strike: as given; curve_names: the curves the trades may name.
      curve: per trade, its curve (a trade naming none: the only curve); usable: per trade, whether that curve is
        among ``curve_names`` and has volatilities; notes: per trade, what its message says before any pricing.
      trade, exercise, end, expiry, tenor, payer, kind, shift, market_vol: per quote (each exercise date after the
        as-of date of a usable trade, trade by trade): as :class:`BasketCalibration` names them (``market_vol``: the
        surface's, before any move).
      exercise_time: per quote, ``expiry`` in the curves' ACT/365F years; first, count: its fixed leg is ``count``
        flows of its trade's table (:class:`_CurveLegs`) from ``first``.
      legs: per curve with quotes, its tables.
      structure: what of this depends on the baskets alone (:class:`_QuoteStructure`, shared by every preparation of
        the same baskets on the same date and curves).
    """

    baskets: Baskets
    as_of: np.datetime64
    surface: VolSurface
    strike: str
    curve_names: tuple[str, ...]
    curve: np.ndarray
    usable: np.ndarray
    notes: tuple[str, ...]
    trade: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    payer: np.ndarray
    kind: np.ndarray
    shift: np.ndarray
    market_vol: np.ndarray
    exercise_time: np.ndarray
    first: np.ndarray
    count: np.ndarray
    kinds: dict[str, str]
    legs: tuple[_CurveLegs, ...]
    structure: _QuoteStructure

    def __len__(self) -> int:
        return len(self.baskets)

    def quotes(self, curves: Any, vol_shift: float = 0.0, *, quantlib_forward: bool = False) -> _QuoteSet:
        """The quotes priced on ``curves`` (``{name: DatedCurve}`` or one curve, as of :attr:`as_of`, every name of
        :attr:`curve_names` among them) with every volatility moved by ``vol_shift``: discount factors once per
        date of the trades' tables, then per quote its annuity, forward swap rate, strike and market price
        (``quantlib_forward``: also the curve's forward rate at each expiry, for ``root="quantlib"``), each worked
        out once for the quotes that are alike (:meth:`_priced`)."""
        return self._quote_set(self._priced(curves, vol_shift, quantlib_forward=quantlib_forward), vol_shift)

    @property
    def _plan(self) -> _QuotePlan:
        """The distinct quotes and tables of flows (:func:`_quote_plan`)."""
        return self.structure.plan

    @cached_property
    def _distinct_market(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per distinct quote its volatility (before any move), its curve's shift, and whether it is normal."""
        first = self._plan.first
        return self.market_vol[first], self.shift[first], self.kind[first] == "normal"

    def _priced(self, curves: Any, vol_shift: float = 0.0, *, quantlib_forward: bool = False) -> _Priced:
        """The distinct quotes (:class:`_QuotePlan`) priced on ``curves``, volatilities moved by ``vol_shift``: each
        curve's discount factors at its dates, then per distinct quote what :meth:`quotes` gives per quote (the same
        arithmetic on the same numbers: the same values)."""
        table = _checked_curves(curves, self.as_of, self.curve_names)
        plan = self._plan
        v = plan.first.size
        discount_start = np.empty(v)
        annuity = np.empty(v)
        last = np.empty(v)
        forward_exercise = np.zeros(v)
        discounts = []
        for legs, part in zip(self.legs, plan.curves, strict=True):
            curve = table[legs.name]
            df = curve.discount(legs.dates)
            discounts.append(df)
            d = part.quotes
            discount_start[d] = df[part.start_at]
            if quantlib_forward:
                from ...model.hull_white import quantlib_forward_rate

                forward_exercise[d] = quantlib_forward_rate(curve.discount, plan.exercise_time[d])
            annuity[d] = _leg_sums(part.schedule, part.table, plan.leg_first[d], plan.leg_count[d],
                                   part.accrual * df[part.at])
            last[d] = df[part.last_at]
        basis = self._basis(table)
        floating = discount_start - last
        if basis["basis"].size or np.any(basis["start_basis"] != 0.0):
            floating = floating + basis["start_basis"] * discount_start + np.sum(basis["basis"] * basis["basis_discount"],
                                                                                 axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            forward = floating / annuity
        strike = forward if self.strike == "atm" else plan.rate
        vol, shift, normal = self._distinct_market
        market_vol = vol + vol_shift if vol_shift else vol
        market_price = _formula_prices(normal, forward=forward, strike=strike, expiry=plan.exercise_time,
                                       annuity=annuity, vol=market_vol, shift=shift, payer=plan.payer)
        return _Priced(discounts=tuple(discounts), discount_start=discount_start, annuity=annuity, forward=forward,
                       strike=np.array(strike, dtype=np.float64), market_vol=market_vol, market_price=market_price,
                       forward_exercise=forward_exercise, **basis)

    @property
    def two_curves(self) -> bool:
        """Whether some quote's floating leg is projected on a forecast curve apart from its discount curve."""
        return bool(np.any(self.structure.forecast != ""))

    def _basis(self, table: dict[str, Any]) -> dict[str, np.ndarray]:
        """Per distinct quote, the basis of its floating leg (:class:`~trinom.model.rate_options.Swaptions`'
        ``start_basis``, ``basis_time``, ``basis_discount``, ``basis``; none on one curve): its periods from the
        exercise date to the end, ``float_frequency`` a year, generated forward and unadjusted, projected on its
        forecast curve and discounted on its curve (:func:`~trinom.model.rate_options.Swaptions.on_curve`'s)."""
        from ...model.rate_options import floating_basis

        plan = self._plan
        v = plan.first.size
        out = {"start_basis": np.zeros(v), "basis_time": np.zeros((v, 0)), "basis_discount": np.ones((v, 0)),
               "basis": np.zeros((v, 0))}
        two = np.flatnonzero(plan.forecast != "")
        if not two.size:
            return out
        exercise_days = self.structure.exercise[plan.first].astype(np.int64)
        end_days = self.structure.end[plan.first].astype(np.int64)
        pairs = [(self.legs[g].name, f) for g, f in zip(plan.group[two].tolist(), plan.forecast[two].tolist(),
                                                          strict=True)]
        parts = []
        for pair in dict.fromkeys(pairs):
            rows = two[[p == pair for p in pairs]]
            parts.append((rows, floating_basis(table[pair[0]], table[pair[1]], exercise_days[rows], end_days[rows],
                                                plan.float_frequency[rows])))
        width = max(part["basis"].shape[1] for _rows, part in parts)
        out = {"start_basis": out["start_basis"], "basis_time": np.zeros((v, width)),
               "basis_discount": np.ones((v, width)), "basis": np.zeros((v, width))}
        for rows, part in parts:
            out["start_basis"][rows] = part["start_basis"]
            for name in ("basis_time", "basis_discount", "basis"):
                out[name][rows, :part[name].shape[1]] = part[name]
        return out

    def _quote_set(self, priced: _Priced, vol_shift: float) -> _QuoteSet:
        """Every quote's market data from the distinct quotes' (:meth:`_priced`)."""
        of = self._plan.of
        return _QuoteSet(trade=self.trade, exercise=self.exercise, end=self.end, expiry=self.expiry, tenor=self.tenor,
                         strike=priced.strike[of], forward=priced.forward[of], annuity=priced.annuity[of],
                         payer=self.payer, kind=self.kind, shift=self.shift,
                         market_vol=self.market_vol + vol_shift if vol_shift else self.market_vol,
                         market_price=priced.market_price[of], kinds=self.kinds, exercise_time=self.exercise_time,
                         discount_start=priced.discount_start[of], first=self.first, count=self.count, legs=self.legs,
                         curve_discounts=priced.discounts, forward_exercise=priced.forward_exercise[of],
                         start_basis=priced.start_basis[of], basis_time=priced.basis_time[of],
                         basis_discount=priced.basis_discount[of], basis=priced.basis[of])

    @cached_property
    def _kernel_layout(self) -> _KernelLayout:
        """The slots and tables every scenario's call of the kernel shares (:class:`_KernelLayout`; built per
        preparation, not kept with the baskets: it is as large as the quotes and quick to build)."""
        return _KernelLayout.of(self.structure)

    def _distinct_quote_set(self, priced: _Priced) -> _QuoteSet:
        """The distinct quotes (:class:`_QuotePlan`) as a quote set of their own, each distinct table of flows a
        trade: what :meth:`_QuoteSet.matching_sigma` takes, with one ``a`` for all, once per distinct quote."""
        plan = self._plan
        first = plan.first
        trade = np.zeros(first.size, dtype=np.int64)
        legs = []
        tables = 0
        for legs_c, part in zip(self.legs, plan.curves, strict=True):
            size = part.rows.size
            trade[part.quotes] = tables + part.table
            legs.append(_CurveLegs(name=legs_c.name, rows=part.quotes, trades=tables + np.arange(size),
                                   local=part.table, time=legs_c.time[part.rows], accrual=part.accrual,
                                   schedule=part.schedule, dates=legs_c.dates, at=part.at, start_at=part.start_at))
            tables += size
        shift = self._distinct_market[1]
        return _QuoteSet(trade=trade, exercise=self.exercise[first], end=self.end[first], expiry=self.expiry[first],
                         tenor=self.tenor[first], strike=priced.strike, forward=priced.forward, annuity=priced.annuity,
                         payer=plan.payer, kind=self.kind[first], shift=shift, market_vol=priced.market_vol,
                         market_price=priced.market_price, kinds=self.kinds, exercise_time=plan.exercise_time,
                         discount_start=priced.discount_start, first=plan.leg_first, count=plan.leg_count,
                         legs=tuple(legs), curve_discounts=priced.discounts, forward_exercise=priced.forward_exercise,
                         start_basis=priced.start_basis, basis_time=priced.basis_time,
                         basis_discount=priced.basis_discount, basis=priced.basis)

    @cached_property
    def _trade_kinds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per trade its curve's volatility kind (``""``: no usable curve) and that kind's unit in messages."""
        unit = {"normal": " (normal, rate units)", "lognormal": " (lognormal)"}
        kinds = np.array([self.kinds.get(c, "") if ok else "" for c, ok in
                          zip(self.curve.tolist(), self.usable.tolist(), strict=True)], dtype=object)
        return np.array([unit.get(k, "") for k in kinds.tolist()], dtype=object), kinds


@dataclass(frozen=True, eq=False)
class _CurvePlan:
    """One curve's part of a :class:`_QuotePlan`: its distinct tables of flows (trades whose tables are equal share
    one) and its distinct quotes' places in them.

    Attributes:
      rows: per distinct table, the first of the curve's trades' tables that has it (a row of :class:`_CurveLegs`).
      accrual, at, schedule: per distinct table, as :class:`_CurveLegs` has them per trade.
      quotes: the distinct quotes on the curve (indices into the plan's arrays); table: per one of them, its
        trade's distinct table; start_at, last_at: the indices into the curve's dates of its exercise and of its
        leg's last payment.
    """

    rows: np.ndarray
    accrual: np.ndarray
    at: np.ndarray
    schedule: np.ndarray
    quotes: np.ndarray
    table: np.ndarray
    start_at: np.ndarray
    last_at: np.ndarray


@dataclass(frozen=True, eq=False)
class _QuotePlan:
    """The prepared quotes that are alike, priced once in each scenario: two quotes are alike where their curve,
    exercise, end, side, deal rate (``strike="deal"``) and leg (the same flows: equal tables of their trades, the
    same first flow and count) are, so that every number a scenario gives them is the same (their volatility too: it
    is the curve's at their expiry and tenor).

    Attributes:
      of: per quote, its distinct quote; first: per distinct quote, the first quote that it stands for.
      group, exercise_time, payer, rate (the deal's), leg_first, leg_count, forecast, float_frequency: per distinct
        quote, its first quote's (``group``: its curve's number among the prepared legs).
      curves: per curve of the prepared legs, its :class:`_CurvePlan`.
    """

    of: np.ndarray
    first: np.ndarray
    group: np.ndarray
    exercise_time: np.ndarray
    payer: np.ndarray
    rate: np.ndarray
    leg_first: np.ndarray
    leg_count: np.ndarray
    curves: tuple[_CurvePlan, ...]
    forecast: np.ndarray
    float_frequency: np.ndarray


def _quote_plan(structure: _QuoteStructure) -> _QuotePlan:
    """The distinct tables of flows per curve and the distinct quotes of ``structure`` (see :class:`_QuotePlan`)."""
    nq = structure.trade.size
    payer = structure.baskets.payer[structure.trade]
    rate = structure.baskets.rate[structure.trade]
    keys = np.zeros((nq, 10 if structure.strike == "deal" else 9), dtype=np.int64)
    keys[:, 2] = structure.first
    keys[:, 3] = structure.count
    keys[:, 4] = structure.end.astype(np.int64)
    keys[:, 5] = payer
    forecasts = {name: k for k, name in enumerate(dict.fromkeys(structure.forecast.tolist()))}
    keys[:, 7] = [forecasts[name] for name in structure.forecast.tolist()]
    keys[:, 8] = np.where(structure.forecast != "", structure.float_frequency, 0)
    if structure.strike == "deal":
        keys[:, 9] = rate.view(np.int64)
    tables = []
    for number, legs in enumerate(structure.legs):
        table_keys = np.concatenate([legs.at.astype(np.int64), legs.accrual.view(np.int64), legs.schedule[:, None]],
                                    axis=1)
        first, table_of = _distinct_rows(table_keys)
        tables.append((first, table_of))
        keys[legs.rows, 0] = number
        keys[legs.rows, 1] = table_of[legs.local]
        keys[legs.rows, 6] = legs.start_at
    first, of = _distinct_rows(keys)
    group = keys[first, 0]
    curves = []
    position = np.empty(nq, dtype=np.int64)
    for number, (legs, (rows, table_of)) in enumerate(zip(structure.legs, tables, strict=True)):
        mine = np.flatnonzero(group == number)
        q = first[mine]  # a quote of each distinct quote on the curve, among legs.rows
        position[legs.rows] = np.arange(legs.rows.size)
        table = table_of[legs.local[position[q]]]
        at = legs.at[rows]
        curves.append(_CurvePlan(rows=rows, accrual=legs.accrual[rows], at=at, schedule=legs.schedule[rows],
                                 quotes=mine, table=table, start_at=legs.start_at[position[q]],
                                 last_at=at[table, structure.first[q] + structure.count[q] - 1]))
    return _QuotePlan(of=of, first=first, group=group, exercise_time=structure.exercise_time[first],
                      payer=payer[first], rate=rate[first], leg_first=structure.first[first],
                      leg_count=structure.count[first], curves=tuple(curves), forecast=structure.forecast[first],
                      float_frequency=structure.float_frequency[first])


def _distinct_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``keys`` (``(N, K)`` int64): per distinct row the first row that has it (ascending), and
    per row its distinct row's number. Rows are grouped by a hash of their values and then compared in full, so
    that two rows share a number only where they are equal."""
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    weights = np.random.default_rng(26).integers(1, 2**63, size=keys.shape[1], dtype=np.uint64) | np.uint64(1)
    hashed = (np.ascontiguousarray(keys).view(np.uint64) * weights).sum(axis=1, dtype=np.uint64)  # mod 2**64
    _values, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(keys, keys[first[inverse]]):  # two rows of one hash: the exact (slower) way
        _rows, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")  # numbered by first appearance
    number = np.empty(order.size, dtype=np.int64)
    number[order] = np.arange(order.size)
    return first[order].astype(np.int64), number[inverse]


@dataclass(frozen=True, eq=False)
class _Priced:
    """One scenario's prices of a :class:`_QuotePlan`'s distinct quotes: per curve its discount factors at its dates
    (:attr:`_CurveLegs.dates`), and per distinct quote ``P(0, T)``, annuity, forward swap rate, strike, volatility,
    market price, (``root="quantlib"``) the curve's forward rate at the expiry, and its floating leg's basis (two
    curves: :meth:`PreparedBaskets._basis`)."""

    discounts: tuple[np.ndarray, ...]
    discount_start: np.ndarray
    annuity: np.ndarray
    forward: np.ndarray
    strike: np.ndarray
    market_vol: np.ndarray
    market_price: np.ndarray
    forward_exercise: np.ndarray
    start_basis: np.ndarray
    basis_time: np.ndarray
    basis_discount: np.ndarray
    basis: np.ndarray


def _curve_names(curves: Any) -> tuple[str, ...]:
    """The names of ``curves``: a mapping's keys, one DatedCurve's name, or a sequence of names."""
    if isinstance(curves, (list, tuple)) and all(isinstance(c, str) for c in curves):
        return tuple(curves)
    return tuple(resolve_curves(curves))


def _checked_curves(curves: Any, today: np.datetime64, names: Sequence[str]) -> dict[str, Any]:
    """``curves`` as ``{name: DatedCurve}``, each as of ``today`` and every one of ``names`` among them."""
    table = resolve_curves(curves)
    wrong = [(None, "as_of", f"curve {name!r} is as of {c.as_of}, not {today}") for name, c in table.items()
             if c.as_of != today]
    wrong += [(None, "curves", f"curve {name!r} (named when the baskets were prepared) is not among the curves "
               f"({', '.join(map(repr, table)) or 'none'})") for name in names if name not in table]
    if wrong:
        raise InputError(wrong)
    return table


def prepare_baskets(baskets: Baskets, vols: VolSurface | VolQuotes | str | Path | Any, as_of: object, *,
                    curves: Any, strike: str = "atm") -> PreparedBaskets:
    """What a per-trade calibration of ``baskets`` needs before any curve: the quotes (each exercise date after
    ``as_of`` of a trade whose curve is known and has volatilities), their fixed legs' dates and accruals (one
    schedule per trade where its exercise dates lie on it, :class:`_CurveLegs`), expiries, tenors and volatilities,
    and each trade's notes. Scenarios that move the curves and the volatilities share it:
    :meth:`PreparedBaskets.quotes` prices it on each scenario's curves, :func:`calibrate_prepared` fits them all.

    Args:
      baskets: :class:`Baskets`.
      vols: a :class:`~trinom.model.quotes.VolSurface` or the quotes it is built from.
      as_of: the valuation date.
      curves: the curves the trades name: their names, or ``{name: DatedCurve}`` / one DatedCurve (only the names are
        taken here; a trade naming no curve takes the only one).
      strike: ``atm`` or ``deal``, as :func:`calibrate_baskets`.

    **Two curves.** A trade whose floating leg is projected on a forecast curve (:attr:`Baskets.forecast`) takes
    the volatilities of its (discount) ``curve``'s matrix, read as those of the swaps it trades; each quote's
    forward swap rate, at-the-money strike and market price take both curves, and its model price is Jamshidian's
    with the deterministic basis (:class:`~trinom.model.rate_options.Swaptions`), so that the fitted sigma is the
    one a curve calibration of the same quote gives (``vols.csv``'s ``forecast_curve``). A forecast curve not among
    ``curves`` is the trade's message (``no fit``). The Futhark kernel prices swaptions on one curve: ``backend``
    ``auto`` fits such baskets in NumPy, a Futhark target is refused.

    An :class:`~trinom.InputError` for bad input, as :func:`calibrate_baskets`. What depends on the baskets alone
    (the quotes, their legs, :class:`_QuoteStructure`) is kept with them and reused by the next preparation of the
    same baskets on the same date and curves.
    """
    if strike not in STRIKES:
        raise InputError([(None, "strike", f"strike must be one of {', '.join(STRIKES)}, got {strike!r}")])
    day, problems = to_days([as_of], field="as_of")
    if problems:
        raise InputError([(None, "as_of", f"the as-of date {as_of!r} is not a date (YYYY-MM-DD)")])
    today = as_dates(day)[0]
    surface = vols if isinstance(vols, VolSurface) else VolSurface.from_quotes(vols, as_of=today)
    if surface.as_of != today:
        raise InputError([(None, "vols", f"the volatility surface is as of {surface.as_of}, not {today}")])
    names = _curve_names(curves)
    curve = np.array([c if c or len(names) != 1 else names[0] for c in baskets.curve.tolist()], dtype=object)
    messages = [str(v) for v in baskets.note.tolist()]
    distinct = dict.fromkeys(curve.tolist())
    known_of = {c: c in names for c in distinct}
    vols_of = {c: surface.has(c) for c in distinct}
    known = np.array([known_of[c] for c in curve.tolist()], dtype=bool)
    has_vols = np.array([vols_of[c] for c in curve.tolist()], dtype=bool)
    for k in np.flatnonzero(~known):
        messages[k] = (f"curve {curve[k]!r} is not among the curves ({', '.join(map(repr, names)) or 'none'})"
                       if curve[k] else f"the trade names no curve and there are {len(names)} ({', '.join(names)})")
    for k in np.flatnonzero(known & ~has_vols):
        messages[k] = (f"no volatility matrix for curve {curve[k]!r} (the vols have "
                       f"{', '.join(map(repr, surface.curve_names))})")
    forecast = baskets.forecast
    unknown_forecast = np.array([bool(f) and f not in names for f in forecast.tolist()], dtype=bool)
    for k in np.flatnonzero(unknown_forecast & known & has_vols):
        messages[k] = f"forecast_curve {forecast[k]!r} is not among the curves ({', '.join(map(repr, names))})"
    if strike == "deal":
        missing = np.flatnonzero(np.isnan(baskets.rate) & (baskets.counts > 0))
        if missing.size:
            raise InputError([(int(k), "rate", f"{baskets.where[k]}: strike='deal' needs the deal's fixed rate")
                              for k in missing])
    # the quotes (every exercise date after the as-of date, on a known curve with volatilities) and their legs
    usable = known & has_vols & ~unknown_forecast
    structure = _quote_structure(baskets, today, names, strike, curve, usable)
    past_count, some = structure.past_count, structure.some
    for k in np.flatnonzero(~some & usable & (baskets.counts > 0) & (past_count == baskets.counts)):
        messages[k] = f"no exercise date after the as-of date {today} ({past_count[k]} on or before it)"
    for k in np.flatnonzero(~some & usable & (baskets.counts == 0) & ~np.array([bool(m) for m in messages],
                                                                                 dtype=bool)):
        messages[k] = "no exercise date: nothing to calibrate"
    # the market: per distinct quote (its curve, expiry and tenor) its kind, shift and volatility
    plan = structure.plan
    v = plan.first.size
    kind_of = np.empty(v, dtype=object)
    shift_of = np.zeros(v)
    vol_of = np.zeros(v)
    kinds: dict[str, str] = {}
    for number, legs in enumerate(structure.legs):
        name = legs.name
        mine = np.flatnonzero(plan.group == number)
        grid = surface.grids[name] if name in surface.grids else surface.grids[next(iter(surface.grids))]
        kinds[name] = surface.kind(name)
        kind_of[mine] = kinds[name]
        shift_of[mine] = surface.shift(name)
        vol_of[mine] = grid.lookup(structure.expiry[plan.first[mine]], structure.tenor[plan.first[mine]])
    trade, of = structure.trade, plan.of
    return PreparedBaskets(baskets=baskets, as_of=today, surface=surface, strike=strike, curve_names=names,
                           curve=curve, usable=usable, notes=tuple(messages), trade=trade,
                           exercise=structure.exercise, end=structure.end, expiry=structure.expiry,
                           tenor=structure.tenor, payer=baskets.payer[trade], kind=kind_of[of], shift=shift_of[of],
                           market_vol=vol_of[of], exercise_time=structure.exercise_time, first=structure.first,
                           count=structure.count, kinds=kinds, legs=structure.legs, structure=structure)


@dataclass(frozen=True, eq=False)
class _QuoteStructure:
    """What prepared baskets take from the baskets alone (their exercise dates and legs, the as-of date, the curves'
    names, the strike and which trades have a usable curve): the quotes, their expiries and tenors, their legs as
    per-curve tables of flows (:class:`_CurveLegs`), and, built when first asked for, the distinct quotes
    (:class:`_QuotePlan`). :func:`_quote_structure` keeps it with the baskets: preparing them again (other
    volatilities, another risk run) reuses it.

    Attributes:
      baskets, strike: as prepared; curves: the curves with quotes, in the order of their first quote.
      trade, exercise, end, exercise_time, expiry, tenor, first, count: per quote, as :class:`PreparedBaskets`.
      legs: per curve of ``curves``, its tables; past_count: per trade, its exercise dates on or before the as-of
        date; some: per trade, whether it has a quote.
      forecast, float_frequency: per quote, its trade's forecast curve (``""``: one curve) and floating periods a
        year (the fixed leg's where its trade gives none).
    """

    baskets: Baskets
    strike: str
    curves: tuple[str, ...]
    trade: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    exercise_time: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    first: np.ndarray
    count: np.ndarray
    legs: tuple[_CurveLegs, ...]
    past_count: np.ndarray
    some: np.ndarray
    forecast: np.ndarray
    float_frequency: np.ndarray

    @cached_property
    def plan(self) -> _QuotePlan:
        """The distinct quotes and tables of flows (:func:`_quote_plan`)."""
        return _quote_plan(self)


#: Structures kept per baskets (the latest): a book is prepared on one date, set of curves and strike.
_KEPT_STRUCTURES: Final[int] = 1


def _quote_structure(baskets: Baskets, today: np.datetime64, names: tuple[str, ...], strike: str, curve: np.ndarray,
                     usable: np.ndarray) -> _QuoteStructure:
    """The :class:`_QuoteStructure` of ``baskets`` as of ``today`` on the curves ``names`` (``curve``: each trade's,
    ``usable``: whether it is known and has volatilities), built once and kept with the baskets."""
    key = (int(today.astype(np.int64)), names, strike, usable.tobytes())
    memo = baskets._memo
    if key not in memo:
        while len(memo) >= _KEPT_STRUCTURES:  # the oldest goes
            del memo[next(iter(memo))]
        memo[key] = _build_structure(baskets, today, strike, curve, usable)
    return memo[key]


def _build_structure(baskets: Baskets, today: np.datetime64, strike: str, curve: np.ndarray,
                     usable: np.ndarray) -> _QuoteStructure:
    """The quotes of ``baskets`` and their legs (see :class:`_QuoteStructure`, :class:`_CurveLegs`)."""
    from ...conventions.dates import day_of_month, month_index

    n = len(baskets)
    owner_all = np.repeat(np.arange(n), baskets.counts)
    past = baskets.exercise <= today
    take = ~past & usable[owner_all]
    past_count = np.bincount(owner_all[past], minlength=n)
    some = np.bincount(owner_all[take], minlength=n) > 0
    trade = owner_all[take]
    exercise = baskets.exercise[take]
    end = baskets.end[trade]
    nq = trade.size
    today_day = int(today.astype(np.int64))
    exercise_days = exercise.astype(np.int64)
    end_days = end.astype(np.int64)
    exercise_time = (exercise_days - today_day) / DAYS_PER_YEAR
    expiry = (exercise - today).astype(np.int64) / 365.0
    tenor = (end - exercise).astype(np.int64) / 365.0
    first = np.zeros(nq, dtype=np.int64)
    count = np.zeros(nq, dtype=np.int64)
    legs: list[_CurveLegs] = []
    # the curves with quotes, in the order of their first quote; each quote's curve as a number
    quoted = np.flatnonzero(np.bincount(trade, minlength=n) > 0)
    groups = {name: k for k, name in enumerate(dict.fromkeys(curve[quoted].tolist()))}
    group_of_trade = np.full(n, -1, dtype=np.int64)
    group_of_trade[quoted] = [groups[c] for c in curve[quoted].tolist()]
    group = group_of_trade[trade]
    codes = parse_day_counts(baskets.day_count)[0].astype(np.int64)
    months_of = 12 // baskets.frequency
    for name, number in groups.items():
        rows = np.flatnonzero(group == number)
        owner = trade[rows]
        e = exercise_days[rows]
        begins = np.concatenate([[True], owner[1:] != owner[:-1]])
        local = np.cumsum(begins) - 1
        trades = owner[begins]
        anchor = e[begins][local]
        months = months_of[owner]
        moved = month_index(e) - month_index(anchor)
        on = (moved % months == 0) & (day_of_month(e) == day_of_month(anchor))
        # each trade's schedule from its first quoted exercise date
        schedule = _distinct_legs(anchor[begins], end_days[rows][begins], baskets.frequency[trades], codes[trades])
        periods = schedule.count
        offset = np.where(on, moved // months, 0)
        length = periods[local] - offset
        # an ACT/ACT-ICMA leg of one period takes another reference period than the schedule's last: its own leg
        on &= ~((codes[owner] == ACT_ACT_ICMA) & (length == 1) & (offset > 0)) & (length >= 1)
        own = np.flatnonzero(~on)
        extra = np.zeros(trades.size, dtype=np.int64)
        if own.size:
            leg = _distinct_legs(e[own], end_days[rows][own], baskets.frequency[owner[own]], codes[owner[own]])
            np.add.at(extra, local[own], leg.count)
            before = np.cumsum(leg.count) - leg.count  # each own leg's place after its trade's schedule
            group_start = np.concatenate([[True], local[own][1:] != local[own][:-1]])
            base = np.maximum.accumulate(np.where(group_start, before, 0))
            offset[own] = periods[local[own]] + before - base
            length[own] = leg.count
        width = int((periods + extra).max())
        pay = np.repeat(end_days[rows][begins][:, None], width, axis=1)
        accrual = np.zeros((trades.size, width))
        columns = np.arange(schedule.pay_days.shape[1])[None, :]
        inside = columns < periods[:, None]
        pay[:, :inside.shape[1]][inside] = schedule.pay_days[inside]
        accrual[:, :inside.shape[1]][inside] = schedule.accrual[inside]
        if own.size:
            live = np.arange(leg.pay_days.shape[1])[None, :] < leg.count[:, None]
            at_row = np.broadcast_to(local[own][:, None], live.shape)[live]
            at_column = (offset[own][:, None] + np.arange(leg.pay_days.shape[1])[None, :])[live]
            pay[at_row, at_column] = leg.pay_days[live]
            accrual[at_row, at_column] = leg.accrual[live]
        first[rows] = offset
        count[rows] = length
        # the distinct dates of the flows and exercises (whole days: a table of days present), each flow's index
        lowest = int(min(pay.min(), e.min()))
        present = np.zeros(int(max(pay.max(), e.max())) - lowest + 1, dtype=bool)
        present[pay.reshape(-1) - lowest] = True
        present[e - lowest] = True
        index = np.cumsum(present) - 1
        legs.append(_CurveLegs(name=name, rows=rows, trades=trades, local=local,
                               time=(pay - today_day) / DAYS_PER_YEAR, accrual=accrual, schedule=periods,
                               dates=(np.flatnonzero(present) + lowest - today_day) / DAYS_PER_YEAR,
                               at=index[pay - lowest], start_at=index[e - lowest]))
    return _QuoteStructure(baskets=baskets, strike=strike, curves=tuple(groups), trade=trade, exercise=exercise, end=end,
                           exercise_time=exercise_time, expiry=expiry, tenor=tenor, first=first, count=count,
                           legs=tuple(legs), past_count=past_count, some=some, forecast=baskets.forecast[trade],
                           float_frequency=np.where(baskets.float_frequency[trade] > 0, baskets.float_frequency[trade],
                                                    baskets.frequency[trade]))


def _distinct_legs(start: np.ndarray, end: np.ndarray, frequency: np.ndarray, codes: np.ndarray) -> Any:
    """:func:`~trinom.model.periods.fixed_leg` of each (start, end, frequency, day count code), generated once per
    distinct one (its rows are its legs': a leg is a function of these alone, and the legs are padded to the
    longest, which the distinct ones have)."""
    from ...model.periods import FixedLeg

    keys = np.stack([start, end, frequency, codes], axis=1).astype(np.int64)
    first, of = _distinct_rows(keys)
    legs = fixed_leg(start=start[first], end=end[first], frequency=frequency[first],
                     day_count=[DAY_COUNTS.canonical[c] for c in codes[first].tolist()])
    return FixedLeg(start_days=legs.start_days[of], pay_days=legs.pay_days[of], accrual=legs.accrual[of],
                    count=legs.count[of])


@dataclass(frozen=True, eq=False)
class _KernelLayout:
    """What the kernel takes once for all scenarios of prepared baskets (:func:`levenberg_marquardt_scenarios`): per
    trade its quotes in slots (all its prepared quotes, in order: ``slot``, -1 where empty; ``quote``, the distinct
    quote of each), their legs, and its table of flows, each flow's date an index into a scenario's discount factors
    (the curves' dates one after another, from ``offsets``); per distinct quote its expiry and side."""

    count: np.ndarray
    slot: np.ndarray
    valid: np.ndarray
    fill: np.ndarray
    quote: np.ndarray
    first: np.ndarray
    length: np.ndarray
    pay_time: np.ndarray
    accrual: np.ndarray
    date: np.ndarray
    expiry: np.ndarray
    payer: np.ndarray
    offsets: tuple[int, ...]
    dates: int

    @classmethod
    def of(cls, structure: _QuoteStructure) -> _KernelLayout:
        plan = structure.plan
        n = len(structure.baskets)
        count, slot, _good = _packed_slots(structure.trade, np.ones(structure.trade.size, dtype=bool), n)
        valid = slot >= 0
        fill = np.where(valid, slot, 0)
        only = structure.legs[0] if len(structure.legs) == 1 else None
        if only is not None and only.trades.size == n:  # one curve, every trade quoted: its tables as they are
            pay_time, accrual, date = only.time, only.accrual, only.at
            offsets, offset = [0], only.dates.size
        else:
            flows = max([legs.time.shape[1] for legs in structure.legs] + [1])
            pay_time = np.zeros((n, flows))
            accrual = np.zeros((n, flows))
            date = np.zeros((n, flows), dtype=np.int64)
            offsets = []
            offset = 0
            for legs in structure.legs:
                w = legs.time.shape[1]
                pay_time[legs.trades, :w] = legs.time
                accrual[legs.trades, :w] = legs.accrual
                date[legs.trades, :w] = legs.at + offset
                offsets.append(offset)
                offset += legs.dates.size
        return cls(count=count, slot=slot, valid=valid, fill=fill, quote=np.where(valid, plan.of[fill], -1),
                   first=np.where(valid, structure.first[fill], 0), length=np.where(valid, structure.count[fill], 0),
                   pay_time=pay_time, accrual=accrual, date=date, expiry=plan.exercise_time, payer=plan.payer,
                   offsets=tuple(offsets), dates=offset)


def _packed_slots(owner: np.ndarray, taken: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The quotes ``taken`` (quotes come trade by trade, ``owner`` their trades) in padded slots: per trade its count,
    and ``slot[t, j]``, the ``j``-th taken quote of trade ``t`` (or -1), at least one slot wide; and ``good``, the
    taken quotes."""
    good = np.flatnonzero(taken)
    count = np.bincount(owner[good], minlength=n)
    width = max(int(count.max()) if n else 0, 1)
    slot = np.full((n, width), -1, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(count)[:-1]]) if n else np.zeros(0, np.int64)
    slot[owner[good], np.arange(good.size) - np.repeat(starts, count)] = good
    return count, slot, good
