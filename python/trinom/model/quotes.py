"""The instruments and market prices that volatility quotes define on dated curves.

**The quotes** are :class:`VolQuotes` (:mod:`trinom.model.vol_quotes`: a ``vols.csv``'s columns ``curve, expiry, tenor,
vol, kind`` and the optional ones), read from CSV or Parquet by :func:`trinom.io.quote_files.read_vol_quotes`. **A
volatility surface** (:class:`VolSurface`, :mod:`trinom.model.vol_surface`) is a curve's at-the-money swaption matrix
looked up at any (expiry, tenor) in years. Both stay importable from here (``read_vol_quotes`` and
``read_vol_surface`` too: ``trinom``'s ``__init__`` sets them, as the model may not import ``io``).

**The instrument of a quote** (as-of date ``d``, the curve's):

* a **swaption** is the European swaption exercised on ``d + expiry`` (no spot lag, unadjusted) into the swap
  from that date to ``start + tenor``, whose fixed leg pays ``frequency`` times a year on ``day_count``, its dates
  generated forward from the start, unadjusted, with a short last period where the tenor is no whole number of
  periods (:func:`trinom.model.periods.fixed_leg`); single curve: the floating leg is worth par at the start.
  Its forward swap rate is ``F = (P(start) - P(end)) / sum tau_i P(t_i)`` and its annuity
  ``A = sum tau_i P(t_i)`` (per unit notional); the at-the-money strike is ``F``. As QuantLib's
  ``SwaptionHelper`` does, a quote prices the out-of-the-money side: a receiver where ``strike <= F`` (so at
  the money), a payer otherwise.
* a **cap** (``floor``) is the strip of caplets (floorlets) on the periods from ``d + expiry`` to
  ``d + expiry + tenor`` (``d + tenor`` with ``tenor_from=as_of``), generated the same way, each fixing at its
  start and paid at its end on the simple forward ``F_i = (P(s_i) / P(e_i) - 1) / tau_i``; the at-the-money
  strike is the forward swap rate ``(P(s_1) - P(e_n)) / sum_j tau_j P(t_j)`` of a fixed leg over the same span
  (by default the caplets' own periods, ``t_j = e_j``). A standard 5-year cap on 3-month rates whose first
  caplet is excluded is ``expiry 3M, tenor 5Y, tenor_from as_of`` (QuantLib's ``CapHelper(5Y, ...,
  includeFirstSwaplet=False)`` on an index of 0 fixing days; ``expiry 3M, tenor 4Y9M`` is the same cap unless
  the as-of date is near a month's end).

**The market price** is the quote's volatility in its formula (:mod:`trinom.model.volatility`) with the expiry
in ACT/365F years from ``d``: a swaption ``A * Bachelier(F, K, T, vol)`` or ``A * Black(F, K, T, vol, shift)``
(payer: call, receiver: put); a cap the sum over its caplets of ``tau_i P(e_i) * formula(F_i, K, s_i, vol)``
(one flat volatility for the strip), floors with puts.

>>> quotes = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "2Y"], tenor="5Y", vol=[0.0085, 0.2],
...                                 kind=["normal", "lognormal"])
>>> len(quotes), quotes.kind.tolist(), quotes.frequency.tolist(), quotes.day_count.tolist()
(2, ['normal', 'lognormal'], [1, 1], ['30/360', '30/360'])
>>> from trinom.model import DatedCurve
>>> curve = DatedCurve(as_of="2025-01-02", dates=["2040-01-02"], zero_rates=[0.03], name="EUR")
>>> basket = quote_instruments(quotes, {"EUR": curve})
>>> basket.forward.round(6).tolist(), basket.market_price.round(8).tolist()
([0.030471, 0.030472], [0.0150506, 0.01476041])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..conventions.business_days import adjust, advance_business_days
from ..conventions.dates import as_dates
from ..conventions.names import Problem
from ..errors import InputError
from .periods import add_period
from .rate_options import Caps, Swaptions
from .vol_quotes import INSTRUMENTS, KINDS, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, TENOR_FROM, VolQuotes, as_vol_quotes
from .vol_surface import SurfaceGrid, VolSurface
from .volatility import (
    bachelier_implied_vol,
    bachelier_price,
    bachelier_vega,
    black_implied_vol,
    black_price,
    black_vega,
)


@dataclass(frozen=True, eq=False)
class QuoteInstruments:
    """Each quote's instrument on its curve, its forward, strike, annuity and market price, ready to price in
    Hull-White with an ``a`` and a ``sigma`` per quote (:meth:`model_price`).

    Attributes:
      quotes: the quotes; curve_names: the curves in order; curve_index: each quote's curve.
      exercise, start, end: dates (``datetime64[D]``): the option's expiry (a cap's first fixing), the swap's or the
        cap's first and last date.
      expiry_time: ACT/365F years to ``exercise``; forward, strike, annuity: per unit notional (a cap's annuity is
        ``sum tau_i P(e_i)``); is_call: payer swaption or cap.
      market_price: per unit notional.
      swaptions, swaption_rows; caps, cap_rows: the instruments and the quotes they belong to.
    """

    quotes: VolQuotes
    curve_names: tuple[str, ...]
    curve_index: np.ndarray
    exercise: np.ndarray
    start: np.ndarray
    end: np.ndarray
    expiry_time: np.ndarray
    forward: np.ndarray
    strike: np.ndarray
    annuity: np.ndarray
    is_call: np.ndarray
    market_price: np.ndarray
    swaptions: Swaptions | None
    swaption_rows: np.ndarray
    caps: Caps | None
    cap_rows: np.ndarray

    def __len__(self) -> int:
        return len(self.quotes)

    def model_price(self, *, a: npt.ArrayLike, sigma: npt.ArrayLike, rows: npt.ArrayLike | None = None,
                    gradient: bool = False,
                    root: str = "quantlib") -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Hull-White prices (per unit notional) of the quotes ``rows`` (indices; default all, in order) with ``a``
        and ``sigma`` per priced quote (or one for all); with ``gradient`` also ``d price / d a`` and
        ``d price / d sigma``; ``root``: the swaptions' Jamshidian root (:func:`~trinom.model.hull_white.
        jamshidian_swaption`: ``"quantlib"``, QuantLib's engine, or ``"exact"``)."""
        quotes = np.arange(len(self)) if rows is None else np.asarray(rows, dtype=np.int64).reshape(-1)
        n = quotes.size
        a = np.broadcast_to(np.asarray(a, dtype=np.float64), (n,))
        sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (n,))
        price, d_a, d_sigma = np.zeros(n), np.zeros(n), np.zeros(n)
        position = self._positions()
        for which, instrument in ((0, self.swaptions), (1, self.caps)):
            mine = np.flatnonzero(position[0][quotes] == which)
            if instrument is None or mine.size == 0:
                continue
            part = instrument.take(position[1][quotes[mine]])
            options = {"root": root} if which == 0 else {}
            if gradient:
                price[mine], d_a[mine], d_sigma[mine] = part.price(a=a[mine], sigma=sigma[mine], gradient=True,
                                                                   **options)
            else:
                price[mine] = part.price(a=a[mine], sigma=sigma[mine], **options)
        return (price, d_a, d_sigma) if gradient else price

    def _positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Per quote, its instrument (0 swaptions, 1 caps) and its row there."""
        kind = np.zeros(len(self), dtype=np.int64)
        row = np.zeros(len(self), dtype=np.int64)
        row[self.swaption_rows] = np.arange(self.swaption_rows.size)
        kind[self.cap_rows] = 1
        row[self.cap_rows] = np.arange(self.cap_rows.size)
        return kind, row

    def price_from_vol(self, vol: npt.ArrayLike) -> np.ndarray:
        """Each quote's price with volatility ``vol`` in its own formula (the market price at the quoted vol)."""
        vol = np.broadcast_to(np.asarray(vol, dtype=np.float64), (len(self),))
        out = np.zeros(len(self))
        rows = self.swaption_rows
        if rows.size:
            out[rows] = _formula(self.quotes.kind[rows], forward=self.forward[rows], strike=self.strike[rows],
                                 expiry=self.expiry_time[rows], vol=vol[rows], annuity=self.annuity[rows],
                                 shift=self.quotes.shift[rows], is_call=self.is_call[rows])
        if self.cap_rows.size and self.caps is not None:
            out[self.cap_rows] = self._cap_prices(vol[self.cap_rows])[0]
        return out

    def vega(self, vol: npt.ArrayLike) -> np.ndarray:
        """``d price / d vol`` of each quote's formula at ``vol``."""
        vol = np.broadcast_to(np.asarray(vol, dtype=np.float64), (len(self),))
        out = np.zeros(len(self))
        rows = self.swaption_rows
        if rows.size:
            out[rows] = _vega(self.quotes.kind[rows], forward=self.forward[rows], strike=self.strike[rows],
                              expiry=self.expiry_time[rows], vol=vol[rows], annuity=self.annuity[rows],
                              shift=self.quotes.shift[rows])
        if self.cap_rows.size and self.caps is not None:
            out[self.cap_rows] = self._cap_prices(vol[self.cap_rows])[1]
        return out

    def implied_vol(self, price: npt.ArrayLike) -> np.ndarray:
        """The volatility of each quote's kind that gives ``price`` (NaN where none does)."""
        price = np.broadcast_to(np.asarray(price, dtype=np.float64), (len(self),))
        out = np.full(len(self), np.nan)
        rows = self.swaption_rows
        if rows.size:
            kinds = self.quotes.kind[rows]
            for kind in ("normal", "lognormal"):
                mine = rows[kinds == kind]
                if not mine.size:
                    continue
                args = {"price": price[mine], "forward": self.forward[mine], "strike": self.strike[mine],
                        "expiry": self.expiry_time[mine], "annuity": self.annuity[mine], "is_call": self.is_call[mine]}
                out[mine] = (bachelier_implied_vol(**args) if kind == "normal"
                             else black_implied_vol(**args, shift=self.quotes.shift[mine]))
        if self.cap_rows.size and self.caps is not None:
            out[self.cap_rows] = self._cap_implied_vol(price[self.cap_rows])
        return out

    # caps: one flat volatility for all caplets
    def _cap_prices(self, vol: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        caps = self.caps
        assert caps is not None
        rows = self.cap_rows
        live = caps.accrual > 0
        weight = np.where(live, caps.accrual * caps.discount_end, 0.0) * caps.notional[:, None]
        kinds = np.broadcast_to(self.quotes.kind[rows][:, None], live.shape)
        args = {"forward": caps.caplet_forwards, "strike": caps.strike[:, None], "expiry": caps.start,
                "vol": vol[:, None], "annuity": weight, "shift": self.quotes.shift[rows][:, None]}
        price = _formula(kinds, **args, is_call=caps.cap[:, None])
        vega = _vega(kinds, **args)
        return np.where(live, price, 0.0).sum(axis=1), np.where(live, vega, 0.0).sum(axis=1)

    def _cap_implied_vol(self, price: np.ndarray) -> np.ndarray:
        """Flat cap volatilities by Newton's method from the quoted ones, bisection-guarded (prices rise with vol)."""
        vol = self.quotes.vol[self.cap_rows].copy()
        lo, hi = np.zeros_like(vol), np.full_like(vol, np.inf)
        done = np.zeros(vol.shape, dtype=bool)
        for _ in range(100):
            value, vega = self._cap_prices(vol)
            gap = value - price
            lo = np.where(gap < 0, np.maximum(lo, vol), lo)
            hi = np.where(gap > 0, np.minimum(hi, vol), hi)
            with np.errstate(divide="ignore", invalid="ignore"):
                new = vol - gap / vega
            inside = np.isfinite(new) & (new > lo) & (new < hi)
            new = np.where(inside, new, np.where(np.isfinite(hi), 0.5 * (lo + hi), 2.0 * vol))
            done |= np.abs(gap) <= 1e-15 * np.maximum(np.abs(price), 1e-300)
            vol = np.where(done, vol, new)
            if done.all():
                break
        return np.where(done & np.isfinite(price) & (price > 0), vol, np.nan)


def _formula(kind: np.ndarray, *, forward: Any, strike: Any, expiry: Any, vol: Any, annuity: Any, shift: Any,
             is_call: Any) -> np.ndarray:
    normal = np.asarray(kind == "normal")
    with np.errstate(divide="ignore", invalid="ignore"):
        bach = bachelier_price(forward=forward, strike=strike, expiry=expiry, vol=vol, annuity=annuity, is_call=is_call)
        black = black_price(forward=forward, strike=strike, expiry=expiry, vol=vol, annuity=annuity, shift=shift,
                            is_call=is_call)
    return np.where(normal, bach, black)


def _vega(kind: np.ndarray, *, forward: Any, strike: Any, expiry: Any, vol: Any, annuity: Any,
          shift: Any) -> np.ndarray:
    normal = np.asarray(kind == "normal")
    with np.errstate(divide="ignore", invalid="ignore"):
        bach = bachelier_vega(forward=forward, strike=strike, expiry=expiry, vol=vol, annuity=annuity)
        black = black_vega(forward=forward, strike=strike, expiry=expiry, vol=vol, annuity=annuity, shift=shift)
    return np.where(normal, bach, black)


def resolve_curves(curves: Any) -> dict[str, Any]:
    """Curves as ``{name: DatedCurve}``: a mapping as it is, one curve under its name (or ``""``)."""
    from .dated_curve import DatedCurve

    if isinstance(curves, DatedCurve):
        return {curves.name: curves}
    if isinstance(curves, Mapping):
        out = {str(name): curve for name, curve in curves.items()}
        bad = [name for name, curve in out.items() if not isinstance(curve, DatedCurve)]
        if bad:
            raise InputError([(None, "curves", f"curve {name!r} is no DatedCurve") for name in bad])
        return out
    raise InputError([(None, "curves", "curves must be a DatedCurve or a mapping of names to DatedCurves, got "
                       f"{type(curves).__name__}")])


def quote_instruments(quotes: VolQuotes, curves: Any) -> QuoteInstruments:
    """The instruments of ``quotes`` on their curves (``{name: DatedCurve}``, or one curve), their forwards, strikes,
    annuities and market prices. A quote naming no curve takes the only one. Each of these is an InputError naming
    the quote (its file and line) and the field: an unknown curve; an instrument ending after its curve's last date
    (no extrapolation, as QuantLib's curves by default), or not after its start (``tenor_from=as_of``); the same
    instrument quoted twice; a lognormal quote whose forward (a cap: any caplet's) or strike plus shift is not
    positive; a market price that is not positive."""
    table = resolve_curves(curves)
    names = tuple(table)
    problems: list[Problem] = []
    index = np.zeros(len(quotes), dtype=np.int64)
    for k, name in enumerate(quotes.curve.tolist()):
        if not name and len(names) == 1:
            index[k] = 0
        elif name in table:
            index[k] = names.index(name)
        else:
            problems.append((k, "curve", f"{quotes.where[k]}: curve {name!r} is not among the curves "
                             f"({', '.join(map(repr, names)) or 'none'})"))
    forecast = index.copy()  # each quote's forecast curve (its own curve where it names none)
    for k, name in enumerate(quotes.forecast_curve.tolist()):
        if name and name in table:
            forecast[k] = names.index(name)
        elif name:
            problems.append((k, "forecast_curve", f"{quotes.where[k]}: forecast_curve {name!r} is not among the curves "
                             f"({', '.join(map(repr, names))})"))
    if problems:
        raise InputError(problems)
    n = len(quotes)
    as_of = np.array([table[name].as_of for name in names], dtype="datetime64[D]")[index]
    exercise, start, end = _quote_dates(quotes, as_of)
    problems = _date_problems(quotes, names, index, start, end, [table[name] for name in names], forecast)
    if problems:
        raise InputError(problems)
    is_swaption = quotes.instrument == "swaption"
    swaption_rows, cap_rows = np.flatnonzero(is_swaption), np.flatnonzero(~is_swaption)
    forward, annuity, strike = np.zeros(n), np.zeros(n), np.zeros(n)
    is_call = np.zeros(n, dtype=bool)
    expiry_time = np.zeros(n)
    swaption_parts: list[tuple[np.ndarray, Swaptions]] = []
    cap_parts: list[tuple[np.ndarray, Caps]] = []
    for c, f in sorted(set(zip(index.tolist(), forecast.tolist(), strict=True))):
        curve = table[names[c]]
        projected = None if f == c else table[names[f]]  # two curves: the floating rates projected on another
        pair = (index == c) & (forecast == f)
        rows = swaption_rows[pair[swaption_rows]]
        if rows.size:
            swaptions = Swaptions.on_curve(curve, exercise=exercise[rows], start=start[rows], end=end[rows],
                                           frequency=quotes.frequency[rows], day_count=quotes.day_count[rows],
                                           forecast_curve=projected, float_frequency=quotes.float_frequency[rows],
                                           calendar=quotes.calendar[rows], convention=quotes.convention[rows])
            atm = swaptions.forward_rate
            k_rate = np.where(np.isnan(quotes.strike[rows]), atm, quotes.strike[rows])
            payer = k_rate > atm  # out of the money: a receiver at or below the forward (QuantLib's SwaptionHelper)
            swaption_parts.append((rows, swaptions.replace_rates(k_rate, payer)))
            forward[rows], strike[rows], is_call[rows] = atm, k_rate, payer
            annuity[rows] = swaptions.annuity
            expiry_time[rows] = swaptions.exercise
        rows = cap_rows[pair[cap_rows]]
        if rows.size:
            caps = Caps.on_curve(curve, start=exercise[rows], end=end[rows], frequency=quotes.frequency[rows],
                                 day_count=quotes.day_count[rows], cap=quotes.instrument[rows] == "cap",
                                 forecast_curve=projected)
            atm = caps.forward_rate
            other = (quotes.atm_frequency[rows] != quotes.frequency[rows]) | (quotes.atm_day_count[rows]
                                                                              != quotes.day_count[rows])
            if other.any():  # the swap rate of another fixed leg over the caplets' span (QuantLib's CapHelper)
                leg = Swaptions.on_curve(curve, exercise=exercise[rows[other]], end=end[rows[other]],
                                         frequency=quotes.atm_frequency[rows[other]],
                                         day_count=quotes.atm_day_count[rows[other]], forecast_curve=projected,
                                         float_frequency=quotes.frequency[rows[other]])
                atm = atm.copy()
                atm[other] = leg.forward_rate
            k_rate = np.where(np.isnan(quotes.strike[rows]), atm, quotes.strike[rows])
            cap_parts.append((rows, replace(caps, strike=k_rate.astype(np.float64))))
            forward[rows], strike[rows], is_call[rows] = atm, k_rate, caps.cap
            annuity[rows] = caps.annuity
            expiry_time[rows] = caps.start[:, 0]
    swaption_order = np.concatenate([rows for rows, _ in swaption_parts]) if swaption_parts else np.zeros(0, np.int64)
    cap_order = np.concatenate([rows for rows, _ in cap_parts]) if cap_parts else np.zeros(0, np.int64)
    all_swaptions = Swaptions.concatenate([s for _, s in swaption_parts]) if swaption_parts else None
    all_caps = _concatenate_caps([c for _, c in cap_parts]) if cap_parts else None
    shift = quotes.shift
    lognormal = quotes.kind == "lognormal"
    problems = [(int(k), "shift", f"{quotes.where[k]}: a lognormal quote needs forward + shift > 0, got forward "
                 f"{forward[k]:.6g} and shift {shift[k]:.6g} (a larger shift, or a normal vol)")
                for k in np.flatnonzero(lognormal & (forward + shift <= 0))]
    problems += [(int(k), "strike", f"{quotes.where[k]}: a lognormal quote needs strike + shift > 0, got strike "
                  f"{strike[k]:.6g} and shift {shift[k]:.6g} (a larger shift, or a normal vol)")
                 for k in np.flatnonzero(lognormal & (forward + shift > 0) & (strike + shift <= 0))]
    if all_caps is not None:
        live = all_caps.accrual > 0
        lowest = np.where(live, all_caps.caplet_forwards, np.inf).min(axis=1)
        problems += [(int(k), "shift", f"{quotes.where[k]}: a lognormal cap needs every caplet's forward + shift > 0, got "
                      f"a forward of {low:.6g} with shift {shift[k]:.6g} (a larger shift, or a normal vol)")
                     for k, low in zip(cap_order, lowest, strict=True)
                     if lognormal[k] and low + shift[k] <= 0 < forward[k] + shift[k]]
    if problems:
        raise InputError(sorted(problems, key=lambda p: p[0]))
    basket = QuoteInstruments(quotes=quotes, curve_names=names, curve_index=index, exercise=exercise,
                              start=start, end=end, expiry_time=expiry_time, forward=forward, strike=strike,
                              annuity=annuity, is_call=is_call, market_price=np.zeros(n), swaptions=all_swaptions,
                              swaption_rows=swaption_order, caps=all_caps, cap_rows=cap_order)
    market = basket.price_from_vol(quotes.vol)
    bad = np.flatnonzero(~(market > 0) | ~np.isfinite(market))
    if bad.size:
        raise InputError([(int(k), "vol", f"{quotes.where[k]}: the quote's market price is {market[k]!r}; a "
                           "calibration needs prices > 0") for k in bad])
    basket.market_price[:] = market
    return basket


def _quote_dates(quotes: VolQuotes, as_of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per quote (``as_of`` its curve's), its exercise, start and end dates: ``as_of + expiry`` rolled, its start
    ``spot_lag`` business days after the exercise date (from the following business day where the exercise date is
    a holiday: an unadjusted convention), its end ``tenor`` after the start (``tenor_from=as_of``: after the as-of date)
    rolled, on its calendar and convention (none and unadjusted by default: the start is the exercise date)."""
    exercise = adjust(dates=add_period(as_of, quotes.expiry_months, quotes.expiry_days), convention=quotes.convention,
                      calendar=quotes.calendar)
    # QuantLib 1.44's helper: the index's value date of the exercise date rolled to a business day (following)
    start = adjust(dates=exercise, convention="F", calendar=quotes.calendar)
    lagged = np.flatnonzero(quotes.spot_lag > 0)
    for name in dict.fromkeys(quotes.calendar[lagged].tolist()):
        mine = lagged[quotes.calendar[lagged] == name]
        start[mine] = as_dates(advance_business_days(start[mine].astype(np.int64), quotes.spot_lag[mine], name))
    base = np.where(quotes.tenor_from == "as_of", as_of, start)
    end = adjust(dates=add_period(base, quotes.tenor_months, quotes.tenor_days), convention=quotes.convention,
                 calendar=quotes.calendar)
    return exercise, start, end


def _date_problems(quotes: VolQuotes, names: tuple[str, ...], index: np.ndarray, start: np.ndarray,
                   end: np.ndarray, curves: list[Any], forecast: np.ndarray) -> list[Problem]:
    """The quotes' instruments that end beyond their curve or 2199, or not after their start, and any instrument
    quoted twice (the same curve, instrument, dates, strike and legs), each naming the quote."""
    where = quotes.where
    problems: list[Problem] = []
    ends = np.array([curve.dates[-1] for curve in curves], dtype="datetime64[D]")
    shorter = ends[forecast] < ends[index]  # two curves: the shorter of the two bounds the quote
    last_date = np.where(shorter, ends[forecast], ends[index])
    bounding = np.where(shorter, forecast, index)
    empty = end <= start
    beyond = ~empty & (end > last_date)
    for k in np.flatnonzero(empty | beyond | (end > np.datetime64("2199-12-31"))).tolist():
        what = f"{where[k]}: the {quotes.instrument[k]} (expiry {quotes.expiry[k]}, tenor {quotes.tenor[k]}"
        if empty[k]:
            problems.append((k, "tenor", f"{what} from the as-of date) ends on {end[k]}, not after its start "
                             f"{start[k]}"))
        elif beyond[k]:
            problems.append((k, "tenor", f"{what}) ends on {end[k]}, after curve {names[bounding[k]]!r}'s last date "
                             f"{last_date[k]}: extend the curve (trinom does not extrapolate a quote's curve)"))
        else:
            problems.append((k, "tenor", f"{what}) ends on {end[k]}, after 2199-12-31"))
    seen: dict[tuple[Any, ...], int] = {}
    for k in range(len(quotes)):
        strike = "ATM" if np.isnan(quotes.strike[k]) else float(quotes.strike[k])
        key = (int(index[k]), int(forecast[k]), quotes.instrument[k], start[k], end[k], strike,
               int(quotes.frequency[k]), quotes.day_count[k], int(quotes.atm_frequency[k]), quotes.atm_day_count[k],
               int(quotes.float_frequency[k]), quotes.calendar[k], quotes.convention[k],
               int(quotes.spot_lag[k]))
        first = seen.setdefault(key, k)
        if first != k:
            problems.append((k, "tenor", f"{where[k]}: the same {quotes.instrument[k]} as {where[first]} (curve "
                             f"{names[index[k]]!r}, {start[k]} to {end[k]}, strike {strike}, {quotes.frequency[k]} a "
                             f"year {quotes.day_count[k]}): quote each instrument once (a weight gives it more say)"))
    return sorted(problems, key=lambda p: p[0])


def _concatenate_caps(parts: list[Caps]) -> Caps:
    width = max(p.start.shape[1] for p in parts)

    def pad(x: np.ndarray, fill: float) -> np.ndarray:
        return np.pad(x, ((0, 0), (0, width - x.shape[1])), constant_values=fill)

    return Caps(start=np.concatenate([pad(p.start, 1.0) for p in parts]),
                end=np.concatenate([pad(p.end, 1.0) for p in parts]),
                accrual=np.concatenate([pad(p.accrual, 0.0) for p in parts]),
                discount_start=np.concatenate([pad(p.discount_start, 1.0) for p in parts]),
                discount_end=np.concatenate([pad(p.discount_end, 1.0) for p in parts]),
                strike=np.concatenate([p.strike for p in parts]), notional=np.concatenate([p.notional for p in parts]),
                cap=np.concatenate([p.cap for p in parts]), count=np.concatenate([p.count for p in parts]),
                basis=np.concatenate([pad(p.basis, 1.0) for p in parts]))


__all__ = ["INSTRUMENTS", "KINDS", "OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "TENOR_FROM", "QuoteInstruments", "SurfaceGrid",
           "VolQuotes", "VolSurface", "as_vol_quotes", "quote_instruments", "resolve_curves"]
