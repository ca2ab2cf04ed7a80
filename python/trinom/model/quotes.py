"""Volatility quotes (``vols.csv``) and the instruments and market prices they define on dated curves.

**The file.** ``curve,expiry,tenor,vol,kind`` and optionally ``shift``, ``strike``, ``frequency``, ``day_count``,
``weight``, ``instrument``, ``tenor_from``, ``atm_frequency``, ``atm_day_count`` (CSV, or Parquet by its
``.parquet`` / ``.pq`` suffix; an empty cell is the default):

* ``curve``: the curve the quote belongs to (empty: the only curve);
* ``expiry``, ``tenor``: periods such as ``6M``, ``1Y``, ``10Y``, ``18M``, ``2W``, ``10D`` (``1Y6M`` too);
* ``vol``, ``kind``: ``normal`` (Bachelier, in decimal rate units: 0.0085 is 85 basis points) or ``lognormal``
  (Black, with the optional ``shift``, a decimal rate);
* ``strike``: a decimal rate, empty (or ``ATM``) for the at-the-money strike;
* ``frequency``, ``day_count``: the fixed leg's (swaptions: 1 and ``30/360``) or the caplets' (caps and floors:
  4 and ``ACT/360``) periods a year and day count;
* ``weight``: the quote's weight in a calibration (default 1; 0 leaves it out);
* ``instrument``: ``swaption`` (default), ``cap`` or ``floor``;
* ``tenor_from``: ``expiry`` (default: the instrument ends ``tenor`` after its start) or ``as_of`` (it ends
  ``tenor`` after the as-of date: QuantLib's ``CapHelper``, whose cap of length ``tenor`` leaves out the first
  caplet, ``as_of`` to ``as_of + expiry``);
* ``atm_frequency``, ``atm_day_count``: caps and floors: the fixed leg whose forward swap rate is the
  at-the-money strike (default: the caplets' ``frequency`` and ``day_count``; QuantLib's ``CapHelper`` takes its
  ``fixedLegFrequency`` and ``fixedLegDayCounter``). A swaption's is its own fixed leg.

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

**A volatility surface** (:class:`VolSurface`) is a curve's at-the-money swaption matrix looked up at any
(expiry, tenor) in years: bilinear between nodes, flat outside, one kind per curve, a full grid.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "vols.csv"
>>> _ = f.write_text("curve,expiry,tenor,vol,kind\\nEUR,1Y,5Y,0.0085,normal\\nEUR,2Y,5Y,0.2,lognormal\\n")
>>> quotes = read_vol_quotes(f)
>>> len(quotes), quotes.kind.tolist(), quotes.frequency.tolist(), quotes.day_count.tolist()
(2, ['normal', 'lognormal'], [1, 1], ['30/360', '30/360'])
>>> from trinom.model import DatedCurve
>>> curve = DatedCurve(as_of="2025-01-02", dates=["2040-01-02"], zero_rates=[0.03], name="EUR")
>>> basket = quote_instruments(quotes, {"EUR": curve})
>>> basket.forward.round(6).tolist(), basket.market_price.round(8).tolist()
([0.030471, 0.030472], [0.0150506, 0.01476041])
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..conventions.day_counts import ACT_ACT_ICMA, DAY_COUNTS, parse_day_counts
from ..conventions.frequencies import parse_frequencies
from ..conventions.names import Problem
from ..errors import InputError
from .hull_white import Caps, Swaptions
from .periods import add_period, parse_periods
from .volatility import (
    bachelier_implied_vol,
    bachelier_price,
    bachelier_vega,
    black_implied_vol,
    black_price,
    black_vega,
)

#: The columns of a quote file: required, then optional.
REQUIRED_COLUMNS: Final[tuple[str, ...]] = ("curve", "expiry", "tenor", "vol", "kind")
OPTIONAL_COLUMNS: Final[tuple[str, ...]] = ("shift", "strike", "frequency", "day_count", "weight", "instrument",
                                            "tenor_from", "atm_frequency", "atm_day_count")
#: Volatility kinds and their spellings.
KINDS: Final[dict[str, str]] = {"normal": "normal", "n": "normal", "bachelier": "normal", "bp": "normal",
                                "lognormal": "lognormal", "ln": "lognormal", "black": "lognormal",
                                "shiftedlognormal": "lognormal", "sln": "lognormal"}
#: Instruments a quote may name, and their default frequency and day count.
INSTRUMENTS: Final[dict[str, tuple[int, str]]] = {"swaption": (1, "30/360"), "cap": (4, "ACT/360"),
                                                  "floor": (4, "ACT/360")}
#: Where a quote's tenor counts from: its expiry (default) or the as-of date (QuantLib's ``CapHelper``).
TENOR_FROM: Final[tuple[str, ...]] = ("expiry", "as_of")


@dataclass(frozen=True, eq=False)
class VolQuotes:
    """Volatility quotes, one per row (see the module's documentation); build with :meth:`from_columns`,
    :meth:`from_frame` or :func:`read_vol_quotes`.

    Attributes:
      curve, expiry, tenor, kind, day_count, instrument: text per quote (``kind`` ``normal``/``lognormal``,
        ``day_count`` canonical, ``instrument`` ``swaption``/``cap``/``floor``).
      vol, shift, strike, weight: ``float64`` (``strike`` NaN: at the money).
      frequency: periods a year.
      tenor_from: ``expiry`` or ``as_of``; atm_frequency, atm_day_count: the fixed leg whose swap rate is the
        at-the-money strike (resolved: a swaption's own leg, by default a cap's caplets').
      expiry_months, expiry_days, tenor_months, tenor_days: the periods.
      where: per quote, where it came from (``vols.csv line 3``), for messages.
    """

    curve: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    vol: np.ndarray
    kind: np.ndarray
    shift: np.ndarray
    strike: np.ndarray
    frequency: np.ndarray
    day_count: np.ndarray
    weight: np.ndarray
    instrument: np.ndarray
    tenor_from: np.ndarray
    atm_frequency: np.ndarray
    atm_day_count: np.ndarray
    expiry_months: np.ndarray
    expiry_days: np.ndarray
    tenor_months: np.ndarray
    tenor_days: np.ndarray
    where: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.vol.size)

    def __repr__(self) -> str:
        return f"VolQuotes({len(self)} quotes, curves {sorted(set(self.curve.tolist()))})"

    def take(self, rows: npt.ArrayLike) -> VolQuotes:
        """The quotes at ``rows`` (indices), in that order."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        fields = {name: getattr(self, name)[rows] for name in self.__dataclass_fields__ if name != "where"}
        return VolQuotes(**fields, where=tuple(self.where[k] for k in rows))

    def to_frame(self) -> Any:
        """The quotes as a pandas DataFrame (the file's columns)."""
        import pandas as pd

        return pd.DataFrame({"curve": self.curve, "expiry": self.expiry, "tenor": self.tenor, "vol": self.vol,
                             "kind": self.kind, "shift": self.shift, "strike": self.strike,
                             "frequency": self.frequency, "day_count": self.day_count, "weight": self.weight,
                             "instrument": self.instrument, "tenor_from": self.tenor_from,
                             "atm_frequency": self.atm_frequency, "atm_day_count": self.atm_day_count})

    @classmethod
    def from_frame(cls, frame: Any) -> VolQuotes:
        """Quotes from a pandas DataFrame with the file's columns (anything else is a ``TypeError`` saying what the
        quotes may be)."""
        if not (hasattr(frame, "columns") and hasattr(frame, "__getitem__")):
            raise TypeError(f"quotes must be VolQuotes, a vols.csv or Parquet path, or a pandas DataFrame of its "
                            f"columns, got {type(frame).__name__}")
        unknown = [name for name in frame.columns if name not in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)]
        if unknown:
            raise InputError([(None, str(name), f"unknown column {name!r} (columns: "
                               f"{', '.join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)})") for name in unknown])
        columns = {str(name): [None if _missing(v) else v for v in frame[name].tolist()] for name in frame.columns}
        return cls.from_columns(**columns)

    @classmethod
    def from_columns(cls, *, curve: Any, expiry: Any, tenor: Any, vol: Any, kind: Any, shift: Any = None,
                     strike: Any = None, frequency: Any = None, day_count: Any = None, weight: Any = None,
                     instrument: Any = None, tenor_from: Any = None, atm_frequency: Any = None,
                     atm_day_count: Any = None, where: Sequence[str] | None = None) -> VolQuotes:
        """Quotes from columns (a value for all rows or one per row; ``None`` or an empty cell is the default).
        Every bad cell is reported at once, as an :class:`~trinom.InputError` naming the row, the field and (with
        ``where``) the file's line.

        >>> q = VolQuotes.from_columns(curve="USD", expiry=["1Y", "2Y"], tenor="5Y", vol=[0.009, 0.0088],
        ...                            kind="normal", strike=[None, 0.04])
        >>> q.strike.tolist(), q.expiry_months.tolist()
        ([nan, 0.04], [12, 24])
        """
        given = {"curve": curve, "expiry": expiry, "tenor": tenor, "vol": vol, "kind": kind, "shift": shift,
                 "strike": strike, "frequency": frequency, "day_count": day_count, "weight": weight,
                 "instrument": instrument, "tenor_from": tenor_from, "atm_frequency": atm_frequency,
                 "atm_day_count": atm_day_count}
        cells = {name: _cells(value) for name, value in given.items()}
        sizes = {len(v) for v in cells.values() if len(v) != 1}
        if len(sizes) > 1:
            raise InputError([(None, name, f"{name}: {len(v)} values, but other columns have "
                               f"{', '.join(map(str, sorted(sizes)))}") for name, v in cells.items() if len(v) != 1])
        count = sizes.pop() if sizes else 1
        cells = {name: v * count if len(v) == 1 else v for name, v in cells.items()}
        places = list(where) if where is not None else [f"quote {k}" for k in range(count)]
        if len(places) != count:
            raise InputError([(None, "where", f"where: {len(places)} places for {count} quotes")])
        problems: list[Problem] = []

        def bad(row: int, field: str, message: str) -> None:
            problems.append((row, field, f"{places[row]}: {message}"))

        curves = ["" if c is None else str(c).strip() for c in cells["curve"]]
        instruments = []
        for k, value in enumerate(cells["instrument"]):
            text = "swaption" if _blank(value) else str(value).strip().lower()
            if text not in INSTRUMENTS:
                bad(k, "instrument", f"instrument {value!r} is not one of {', '.join(INSTRUMENTS)}")
                text = "swaption"
            instruments.append(text)
        kinds = []
        for k, value in enumerate(cells["kind"]):
            key = "" if _blank(value) else str(value).strip().lower().translate(str.maketrans("", "", " -_"))
            if key not in KINDS:
                bad(k, "kind", f"kind {value!r} is not normal or lognormal")
            kinds.append(KINDS.get(key, "normal"))
        periods = {}
        for field in ("expiry", "tenor"):
            texts = ["" if _blank(v) else str(v).strip() for v in cells[field]]
            months, days, found = parse_periods(np.array(texts, dtype=object), field=field)
            for row, f, message in found:
                bad(int(row), f, message)
            periods[field] = (texts, months, days)
        vols = _numbers(cells["vol"], "vol", bad, default=None, rule=lambda x: x > 0, text="> 0")
        shifts = _numbers(cells["shift"], "shift", bad, default=0.0, rule=lambda x: x >= 0, text=">= 0")
        for k in range(count):
            if not _blank(cells["shift"][k]) and kinds[k] == "normal" and shifts[k] != 0:
                bad(k, "shift", "a shift applies to lognormal quotes only")
        strike_cells = [None if (isinstance(v, str) and v.strip().upper() == "ATM") else v for v in cells["strike"]]
        strikes = _numbers(strike_cells, "strike", bad, default=math.nan, rule=None, text="")
        weights = _numbers(cells["weight"], "weight", bad, default=1.0, rule=lambda x: x >= 0, text=">= 0")
        frequency_cells = [INSTRUMENTS[instruments[k]][0] if _blank(v) else v for k, v in enumerate(cells["frequency"])]
        per_year, found = parse_frequencies(np.array(frequency_cells, dtype=object))
        for row, f, message in found:
            bad(int(row), f, message)
        day_cells = [INSTRUMENTS[instruments[k]][1] if _blank(v) else str(v) for k, v in enumerate(cells["day_count"])]
        codes, found = parse_day_counts(np.array(day_cells, dtype=object))
        for row, f, message in found:
            bad(int(row), f, message)
        for k in np.flatnonzero(codes == ACT_ACT_ICMA):
            bad(int(k), "day_count", "day_count ACT/ACT-ICMA is not supported for quotes; use ACT/ACT-ISDA, 30/360, "
                "30E/360, ACT/360 or ACT/365F")
        tenor_from = []
        for k, value in enumerate(cells["tenor_from"]):
            text = "expiry" if _blank(value) else str(value).strip().lower().replace("-", "_").replace(" ", "_")
            if text not in TENOR_FROM:
                bad(k, "tenor_from", f"tenor_from {value!r} is not one of {', '.join(TENOR_FROM)}")
                text = "expiry"
            tenor_from.append(text)
        # the at-the-money leg: given cells parsed, blank ones the quote's own frequency and day count
        given = np.array([not _blank(v) for v in cells["atm_frequency"]])
        parsed, found = parse_frequencies(np.array([v if g else 1 for v, g in zip(cells["atm_frequency"], given,
                                                                                  strict=True)], dtype=object),
                                          field="atm_frequency")
        for row, f, message in found:
            bad(int(row), f, message)
        atm_per_year = np.where(given, parsed, per_year)
        given = np.array([not _blank(v) for v in cells["atm_day_count"]])
        parsed, found = parse_day_counts(np.array([str(v) if g else "ACT/360" for v, g in zip(cells["atm_day_count"],
                                                                                              given, strict=True)],
                                                  dtype=object), field="atm_day_count")
        for row, f, message in found:
            bad(int(row), f, message)
        atm_codes = np.where(given, parsed, codes)
        for k in np.flatnonzero(given & (parsed == ACT_ACT_ICMA)):
            bad(int(k), "atm_day_count", "atm_day_count ACT/ACT-ICMA is not supported for quotes; use ACT/ACT-ISDA, "
                "30/360, 30E/360, ACT/360 or ACT/365F")
        for k in np.flatnonzero((np.array(instruments) == "swaption") & (codes >= 0) & (atm_codes >= 0)
                                & (per_year > 0) & (atm_per_year > 0)
                                & ((atm_per_year != per_year) | (atm_codes != codes))):
            field = "atm_frequency" if atm_per_year[k] != per_year[k] else "atm_day_count"
            bad(int(k), field, f"{field} applies to caps and floors: a swaption's at-the-money strike is its own fixed "
                "leg's swap rate (frequency, day_count)")
        if problems:
            raise InputError(sorted(problems, key=lambda p: p[0]))
        return cls(curve=np.array(curves, dtype=object), expiry=np.array(periods["expiry"][0], dtype=object),
                   tenor=np.array(periods["tenor"][0], dtype=object), vol=vols, kind=np.array(kinds, dtype=object),
                   shift=shifts, strike=strikes, frequency=per_year.astype(np.int64),
                   day_count=np.array([DAY_COUNTS.canonical[c] for c in codes], dtype=object), weight=weights,
                   instrument=np.array(instruments, dtype=object), tenor_from=np.array(tenor_from, dtype=object),
                   atm_frequency=atm_per_year.astype(np.int64),
                   atm_day_count=np.array([DAY_COUNTS.canonical[c] for c in atm_codes], dtype=object),
                   expiry_months=periods["expiry"][1],
                   expiry_days=periods["expiry"][2], tenor_months=periods["tenor"][1], tenor_days=periods["tenor"][2],
                   where=tuple(places))


def _cells(value: Any) -> list[Any]:
    if value is None:
        return [None]
    if isinstance(value, (str, bytes, int, float, np.generic)):
        return [value.item() if isinstance(value, np.generic) else value]
    return [v.item() if isinstance(v, np.generic) else v for v in np.asarray(value, dtype=object).reshape(-1).tolist()]


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or _missing(value)


def _missing(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _numbers(cells: list[Any], field: str, bad: Any, *, default: float | None, rule: Any, text: str) -> np.ndarray:
    out = np.empty(len(cells))
    for k, value in enumerate(cells):
        if _blank(value):
            if default is None:
                bad(k, field, f"{field} is missing")
                out[k] = math.nan
            else:
                out[k] = default
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            bad(k, field, f"{field} must be a number, got {value!r}")
            out[k] = math.nan
            continue
        if not math.isfinite(number) or (rule is not None and not rule(number)):
            bad(k, field, f"{field} must be a finite number{' ' + text if text else ''}, got {value!r}")
        out[k] = number
    return out


def read_vol_quotes(path: str | Path) -> VolQuotes:
    """The quotes of a ``vols.csv`` (or a Parquet table of its columns); messages name the file and the line
    (Parquet: the row). Unknown columns and missing required ones are errors."""
    from ..io import parquet
    from ..io.csvtable import read_table_lines

    path = Path(path)
    if parquet.is_parquet(path):
        header, *rows = parquet.read_text_rows(path)
        unknown = [name for name in header if name not in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)]
        missing = [name for name in REQUIRED_COLUMNS if name not in header]
        if unknown or missing:
            raise InputError([(None, name, f"{path}: unknown column '{name}' (columns: "
                               f"{', '.join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)})") for name in unknown]
                             + [(None, name, f"{path}: missing column '{name}'") for name in missing])
        columns = {name: [row[k] for row in rows] for k, name in enumerate(header)}
        where = [f"{path.name} row {k + 1}" for k in range(len(rows))]
    else:
        columns, lines = read_table_lines(path, REQUIRED_COLUMNS, OPTIONAL_COLUMNS)
        where = [f"{path.name} line {line}" for line in lines]
    if not where:
        raise InputError([(None, "file", f"{path}: no quotes")])
    return VolQuotes.from_columns(**columns, where=where)


# --- the quotes' instruments on curves -------------------------------------------------------------------------

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
    if problems:
        raise InputError(problems)
    n = len(quotes)
    exercise = np.empty(n, dtype="datetime64[D]")
    end = np.empty(n, dtype="datetime64[D]")
    from_as_of = quotes.tenor_from == "as_of"
    for c, name in enumerate(names):
        mine = np.flatnonzero(index == c)
        as_of = np.full(mine.size, table[name].as_of, dtype="datetime64[D]")
        exercise[mine] = add_period(as_of, quotes.expiry_months[mine], quotes.expiry_days[mine])
        base = np.where(from_as_of[mine], as_of, exercise[mine])
        end[mine] = add_period(base, quotes.tenor_months[mine], quotes.tenor_days[mine])
    problems = _date_problems(quotes, names, index, exercise, end, [table[name] for name in names])
    if problems:
        raise InputError(problems)
    is_swaption = quotes.instrument == "swaption"
    swaption_rows, cap_rows = np.flatnonzero(is_swaption), np.flatnonzero(~is_swaption)
    forward, annuity, strike = np.zeros(n), np.zeros(n), np.zeros(n)
    is_call = np.zeros(n, dtype=bool)
    expiry_time = np.zeros(n)
    swaption_parts: list[tuple[np.ndarray, Swaptions]] = []
    cap_parts: list[tuple[np.ndarray, Caps]] = []
    for c, name in enumerate(names):
        curve = table[name]
        rows = swaption_rows[index[swaption_rows] == c]
        if rows.size:
            swaptions = Swaptions.on_curve(curve, exercise=exercise[rows], end=end[rows],
                                           frequency=quotes.frequency[rows], day_count=quotes.day_count[rows])
            atm = swaptions.forward_rate
            k_rate = np.where(np.isnan(quotes.strike[rows]), atm, quotes.strike[rows])
            payer = k_rate > atm  # out of the money: a receiver at or below the forward (QuantLib's SwaptionHelper)
            swaption_parts.append((rows, swaptions.replace_rates(k_rate, payer)))
            forward[rows], strike[rows], is_call[rows] = atm, k_rate, payer
            annuity[rows] = swaptions.annuity
            expiry_time[rows] = swaptions.exercise
        rows = cap_rows[index[cap_rows] == c]
        if rows.size:
            caps = Caps.on_curve(curve, start=exercise[rows], end=end[rows], frequency=quotes.frequency[rows],
                                 day_count=quotes.day_count[rows], cap=quotes.instrument[rows] == "cap")
            atm = caps.forward_rate
            other = (quotes.atm_frequency[rows] != quotes.frequency[rows]) | (quotes.atm_day_count[rows]
                                                                              != quotes.day_count[rows])
            if other.any():  # the swap rate of another fixed leg over the caplets' span (QuantLib's CapHelper)
                leg = Swaptions.on_curve(curve, exercise=exercise[rows[other]], end=end[rows[other]],
                                         frequency=quotes.atm_frequency[rows[other]],
                                         day_count=quotes.atm_day_count[rows[other]])
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
                              start=exercise.copy(), end=end, expiry_time=expiry_time, forward=forward, strike=strike,
                              annuity=annuity, is_call=is_call, market_price=np.zeros(n), swaptions=all_swaptions,
                              swaption_rows=swaption_order, caps=all_caps, cap_rows=cap_order)
    market = basket.price_from_vol(quotes.vol)
    bad = np.flatnonzero(~(market > 0) | ~np.isfinite(market))
    if bad.size:
        raise InputError([(int(k), "vol", f"{quotes.where[k]}: the quote's market price is {market[k]!r}; a "
                           "calibration needs prices > 0") for k in bad])
    basket.market_price[:] = market
    return basket


def _date_problems(quotes: VolQuotes, names: tuple[str, ...], index: np.ndarray, exercise: np.ndarray,
                   end: np.ndarray, curves: list[Any]) -> list[Problem]:
    """The quotes' instruments that end beyond their curve or 2199, or not after their start, and any instrument
    quoted twice (the same curve, instrument, dates, strike and legs), each naming the quote."""
    where = quotes.where
    problems: list[Problem] = []
    last_date = np.array([curve.dates[-1] for curve in curves], dtype="datetime64[D]")[index]
    empty = end <= exercise
    beyond = ~empty & (end > last_date)
    for k in np.flatnonzero(empty | beyond | (end > np.datetime64("2199-12-31"))).tolist():
        what = f"{where[k]}: the {quotes.instrument[k]} (expiry {quotes.expiry[k]}, tenor {quotes.tenor[k]}"
        if empty[k]:
            problems.append((k, "tenor", f"{what} from the as-of date) ends on {end[k]}, not after its start "
                             f"{exercise[k]}"))
        elif beyond[k]:
            problems.append((k, "tenor", f"{what}) ends on {end[k]}, after curve {names[index[k]]!r}'s last date "
                             f"{last_date[k]}: extend the curve (trinom does not extrapolate a quote's curve)"))
        else:
            problems.append((k, "tenor", f"{what}) ends on {end[k]}, after 2199-12-31"))
    seen: dict[tuple[Any, ...], int] = {}
    for k in range(len(quotes)):
        strike = "ATM" if np.isnan(quotes.strike[k]) else float(quotes.strike[k])
        key = (int(index[k]), quotes.instrument[k], exercise[k], end[k], strike, int(quotes.frequency[k]),
               quotes.day_count[k], int(quotes.atm_frequency[k]), quotes.atm_day_count[k])
        first = seen.setdefault(key, k)
        if first != k:
            problems.append((k, "tenor", f"{where[k]}: the same {quotes.instrument[k]} as {where[first]} (curve "
                             f"{names[index[k]]!r}, {exercise[k]} to {end[k]}, strike {strike}, {quotes.frequency[k]} a "
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
                cap=np.concatenate([p.cap for p in parts]), count=np.concatenate([p.count for p in parts]))


# --- volatility surfaces -----------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class SurfaceGrid:
    """One curve's at-the-money swaption volatilities on a full ``expiry x tenor`` grid.

    Attributes:
      expiry, tenor: the grid's axes in ACT/365F years (ascending): ``(as_of + period - as_of) / 365``.
      vol: ``(expiries, tenors)``; kind: ``normal`` or ``lognormal``; shift: the lognormal shift (0 for normal).
      expiry_labels, tenor_labels: the periods as quoted (the first spelling of each).
    """

    expiry: np.ndarray
    tenor: np.ndarray
    vol: np.ndarray
    kind: str
    shift: float
    expiry_labels: tuple[str, ...]
    tenor_labels: tuple[str, ...]

    def lookup(self, expiry: np.ndarray, tenor: np.ndarray) -> np.ndarray:
        """Bilinear in expiry and tenor (years), flat outside the grid."""
        i, u = _axis_weights(self.expiry, expiry)
        j, w = _axis_weights(self.tenor, tenor)
        v = self.vol
        i1 = np.minimum(i + 1, v.shape[0] - 1)
        j1 = np.minimum(j + 1, v.shape[1] - 1)
        return ((1.0 - u) * ((1.0 - w) * v[i, j] + w * v[i, j1])
                + u * ((1.0 - w) * v[i1, j] + w * v[i1, j1]))


def _axis_weights(grid: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ``grid`` holding each ``x`` (clamped to the grid: flat extrapolation) and the weight of its
    upper end (0 at the lower node, 1 at the upper)."""
    x = np.clip(np.asarray(x, dtype=np.float64), grid[0], grid[-1])
    if grid.size == 1:
        return np.zeros(x.shape, dtype=np.int64), np.zeros(x.shape)
    i = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
    return i, (x - grid[i]) / (grid[i + 1] - grid[i])


@dataclass(frozen=True, eq=False)
class VolSurface:
    """At-the-money swaption volatility matrices, one per curve, looked up at any (expiry, tenor) in years.

    A curve's quotes (``curve, expiry, tenor, vol, kind[, shift]``) are its grid's nodes at the ACT/365F year
    fractions of their periods from the as-of date: ``(as_of + expiry - as_of) / 365`` and ``(as_of + tenor -
    as_of) / 365`` (``6M`` and ``1Y`` from 2025-01-02: 181/365 and 1). :meth:`vol` interpolates bilinearly in
    expiry and tenor between the four nodes around a point and is flat outside the grid (an expiry before the
    first, or a tenor beyond the last, takes the edge's volatilities). A node is returned exactly.

    Rules, each an :class:`~trinom.InputError` naming the quotes (file and line): one kind per curve (normal or
    lognormal: a curve mixing them is refused, naming the rows of the rarer kind) and one shift per curve; at-the-money
    swaption quotes only (a strike, a cap or a floor is refused); each (expiry, tenor) once (``12M`` and ``1Y`` are
    the same); and a full grid: every expiry of a curve quoted at every tenor of that curve (a missing node is
    refused, naming it: fill the matrix rather than have trinom invent a volatility). The quotes' ``frequency``,
    ``day_count`` and ``weight`` do not enter a surface.

    >>> quotes = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "1Y", "5Y", "5Y"], tenor=["5Y", "10Y", "5Y", "10Y"],
    ...                                 vol=[0.0090, 0.0080, 0.0070, 0.0060], kind="normal")
    >>> surface = VolSurface.from_quotes(quotes, as_of="2025-01-02")
    >>> surface.grids["EUR"].expiry.round(4).tolist(), surface.grids["EUR"].tenor.round(4).tolist()
    ([1.0, 5.0027], [5.0027, 10.0055])
    >>> surface.vol(curve="EUR", expiry=[1.0, 3.0, 20.0], tenor=[5.0027, 7.5, 1.0]).round(5).tolist()
    [0.009, 0.0075, 0.007]
    """

    as_of: np.datetime64
    grids: dict[str, SurfaceGrid]

    @property
    def curve_names(self) -> tuple[str, ...]:
        return tuple(self.grids)

    def kind(self, curve: str) -> str:
        """The volatility kind of ``curve``'s matrix."""
        return self._grid(curve).kind

    def shift(self, curve: str) -> float:
        """The lognormal shift of ``curve``'s matrix (0 for normal)."""
        return self._grid(curve).shift

    def _grid(self, curve: str) -> SurfaceGrid:
        if curve not in self.grids:
            if not curve and len(self.grids) == 1:
                return next(iter(self.grids.values()))
            raise InputError([(None, "curve", f"no volatility matrix for curve {curve!r} (the surface has "
                               f"{', '.join(map(repr, self.grids)) or 'none'})")])
        return self.grids[curve]

    def has(self, curve: str) -> bool:
        """Whether ``curve`` has a matrix (an empty name: the only one)."""
        return curve in self.grids or (not curve and len(self.grids) == 1)

    def vol(self, *, curve: npt.ArrayLike, expiry: npt.ArrayLike, tenor: npt.ArrayLike) -> np.ndarray:
        """Volatilities at ``expiry`` and ``tenor`` (ACT/365F years; arrays broadcast) on each point's ``curve``
        (a name, or one per point), bilinear inside each curve's grid and flat outside."""
        e, t = np.broadcast_arrays(np.asarray(expiry, dtype=np.float64), np.asarray(tenor, dtype=np.float64))
        names = np.broadcast_to(np.asarray(curve, dtype=object), e.shape)
        out = np.full(e.shape, np.nan)
        distinct, inverse = np.unique(names.reshape(-1).astype(str), return_inverse=True)
        flat_e, flat_t, flat_out = e.reshape(-1), t.reshape(-1), out.reshape(-1)
        for k, name in enumerate(distinct.tolist()):
            mine = inverse == k
            flat_out[mine] = self._grid(name).lookup(flat_e[mine], flat_t[mine])
        return flat_out.reshape(e.shape)

    def to_frame(self) -> Any:
        """The nodes: ``curve, expiry, tenor, expiry_years, tenor_years, vol, kind, shift``."""
        import pandas as pd

        rows = []
        for name, g in self.grids.items():
            for i, e in enumerate(g.expiry_labels):
                for j, t in enumerate(g.tenor_labels):
                    rows.append((name, e, t, float(g.expiry[i]), float(g.tenor[j]), float(g.vol[i, j]), g.kind,
                                 g.shift))
        return pd.DataFrame(rows, columns=["curve", "expiry", "tenor", "expiry_years", "tenor_years", "vol", "kind",
                                           "shift"])

    @classmethod
    def from_quotes(cls, quotes: VolQuotes | str | Path | Any, *, as_of: object) -> VolSurface:
        """The surface of ``quotes`` (:class:`VolQuotes`, a ``vols.csv`` / Parquet path, or a DataFrame of its
        columns) as of ``as_of`` (see the class's rules)."""
        from ..conventions.dates import as_dates, to_days

        if isinstance(quotes, (str, Path)):
            quotes = read_vol_quotes(quotes)
        elif not isinstance(quotes, VolQuotes):
            quotes = VolQuotes.from_frame(quotes)
        day, problems = to_days([as_of], field="as_of")
        if problems:
            raise InputError([(None, "as_of", f"the as-of date {as_of!r} is not a date (YYYY-MM-DD)")])
        start = as_dates(day)[0]
        n = len(quotes)
        base = np.full(n, start, dtype="datetime64[D]")
        expiry_years = (add_period(base, quotes.expiry_months, quotes.expiry_days) - base).astype(np.int64) / 365.0
        tenor_years = (add_period(base, quotes.tenor_months, quotes.tenor_days) - base).astype(np.int64) / 365.0
        where = quotes.where
        problems = []
        for k in np.flatnonzero(quotes.instrument != "swaption"):
            problems.append((int(k), "instrument", f"{where[k]}: a volatility surface takes swaption quotes, this one "
                             f"is a {quotes.instrument[k]}"))
        for k in np.flatnonzero(~np.isnan(quotes.strike)):
            problems.append((int(k), "strike", f"{where[k]}: a volatility surface takes at-the-money quotes, this one "
                             f"has strike {quotes.strike[k]:g}"))
        for k in np.flatnonzero(quotes.tenor_from != "expiry"):
            problems.append((int(k), "tenor_from", f"{where[k]}: a volatility surface's tenor is the swap's length "
                             f"from the expiry; tenor_from {quotes.tenor_from[k]} is for caps"))
        grids: dict[str, SurfaceGrid] = {}
        for name in dict.fromkeys(quotes.curve.tolist()):
            rows = np.flatnonzero(quotes.curve == name)
            problems += _one_value(quotes, rows, name, "kind", quotes.kind, lambda v: str(v))
            problems += _one_value(quotes, rows, name, "shift", quotes.shift, lambda v: f"{v:g}")
            e_axis, e_index = np.unique(expiry_years[rows], return_inverse=True)
            t_axis, t_index = np.unique(tenor_years[rows], return_inverse=True)
            node = e_index * t_axis.size + t_index
            seen: dict[int, int] = {}
            for k, key in zip(rows.tolist(), node.tolist(), strict=True):
                if key in seen:
                    first = seen[key]
                    problems.append((k, "tenor", f"{where[k]}: curve {name!r} has expiry {quotes.expiry[k]}, tenor "
                                     f"{quotes.tenor[k]} already at {where[first]}"))
                else:
                    seen[key] = k
            e_labels = tuple(str(quotes.expiry[rows[np.argmax(e_index == i)]]) for i in range(e_axis.size))
            t_labels = tuple(str(quotes.tenor[rows[np.argmax(t_index == j)]]) for j in range(t_axis.size))
            missing = [(i, j) for i in range(e_axis.size) for j in range(t_axis.size) if i * t_axis.size + j not in seen]
            for i, j in missing:
                problems.append((None, "tenor", f"curve {name!r}: the volatility matrix has no quote at expiry "
                                 f"{e_labels[i]}, tenor {t_labels[j]}: its expiries ({', '.join(e_labels)}) and "
                                 f"tenors ({', '.join(t_labels)}) must form a full grid"))
            vol = np.full((e_axis.size, t_axis.size), np.nan)
            vol[e_index, t_index] = quotes.vol[rows]
            grids[str(name)] = SurfaceGrid(expiry=e_axis, tenor=t_axis, vol=vol, kind=str(quotes.kind[rows[0]]),
                                           shift=float(quotes.shift[rows[0]]), expiry_labels=e_labels,
                                           tenor_labels=t_labels)
        if problems:
            raise InputError(sorted(problems, key=lambda p: -1 if p[0] is None else p[0]))
        return cls(as_of=start, grids=grids)


def _one_value(quotes: VolQuotes, rows: np.ndarray, curve: str, field: str, values: np.ndarray,
               show: Any) -> list[Problem]:
    """One problem per quote of ``rows`` whose ``field`` is not the curve's most common value (ties: the first
    quoted), naming a quote that has that value."""
    distinct, inverse, counts = np.unique(values[rows].astype(object if field == "kind" else np.float64),
                                          return_inverse=True, return_counts=True)
    if distinct.size <= 1:
        return []
    first = np.array([np.argmax(inverse == d) for d in range(distinct.size)])
    keep = int(sorted(range(distinct.size), key=lambda d: (-counts[d], first[d]))[0])
    other = quotes.where[rows[first[keep]]]
    word = "kinds" if field == "kind" else "shifts"
    return [(int(k), field, f"{quotes.where[k]}: curve {curve!r} mixes volatility {word}: this quote's {field} is "
             f"{show(values[k])}, {other}'s (and {int(counts[keep]) - 1} more) {show(distinct[keep])}; a surface "
             f"holds one {field} per curve")
            for k in rows[inverse != keep]]


def read_vol_surface(path: str | Path, *, as_of: object) -> VolSurface:
    """The :class:`VolSurface` of a ``vols.csv`` (or Parquet) file as of ``as_of``."""
    return VolSurface.from_quotes(read_vol_quotes(path), as_of=as_of)
