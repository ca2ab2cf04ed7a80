"""Volatility quotes as a table (:class:`VolQuotes`, one quote a row): the columns of a ``vols.csv``, parsed and checked.

**The columns.** ``curve,expiry,tenor,vol,kind`` and optionally ``shift``, ``strike``, ``frequency``, ``day_count``,
``weight``, ``instrument``, ``tenor_from``, ``atm_frequency``, ``atm_day_count``, ``forecast_curve``,
``float_frequency``, ``calendar``, ``convention``, ``spot_lag`` (an empty cell is the default):

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
* ``forecast_curve`` (issue 37): the curve the quote's floating rates are projected on, ``curve`` discounting
  (empty: ``curve``; two curves, :mod:`trinom.model.rate_options`): the forward, the market price and the model's
  price all take both;
* ``float_frequency``: a swaption's floating leg's periods a year (default: its ``frequency``), which matters on two
  curves only.
* ``calendar``, ``convention``, ``spot_lag`` (issue 38): a swaption's dates as QuantLib's ``SwaptionHelper`` makes them
  on its index (``Euribor6M``: ``TARGET``, ``MF``, 2): the exercise is the as-of date plus ``expiry`` rolled by the
  ``convention`` on the ``calendar``; the swap starts ``spot_lag`` business days later (0..30, default 0; counted from
  the following business day where the exercise date is a holiday, as QuantLib 1.44's helper does) and ends
  ``tenor`` after its start, rolled; the legs' inner dates are rolled too. Defaults: no calendar (no rolling); a
  calendar without a convention rolls modified following. Weeks and days of a period are calendar days, then rolled
  (QuantLib counts a ``D`` period in business days). Swaptions only.

The files are read by :func:`trinom.io.quote_files.read_vol_quotes` (CSV, or Parquet by its ``.parquet`` / ``.pq``
suffix; also ``trinom.model.quotes.read_vol_quotes``): the model imports no file format. Where a call of the model
takes the quotes' path (:func:`~trinom.model.calibration.calibrate`, :meth:`~trinom.model.quotes.VolSurface.from_quotes`),
:func:`as_vol_quotes` reads it with the reader that :mod:`trinom.io.quote_files` registers when imported (``import
trinom`` imports it). The quotes' instruments are :mod:`trinom.model.quotes`'.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..conventions.business_days import CONVENTIONS, parse_conventions
from ..conventions.calendars import parse_calendars
from ..conventions.day_counts import ACT_ACT_ICMA, DAY_COUNTS, parse_day_counts
from ..conventions.frequencies import parse_frequencies
from ..conventions.names import Problem
from ..errors import InputError
from .periods import parse_periods

#: The columns of a quote file: required, then optional.
REQUIRED_COLUMNS: Final[tuple[str, ...]] = ("curve", "expiry", "tenor", "vol", "kind")
OPTIONAL_COLUMNS: Final[tuple[str, ...]] = ("shift", "strike", "frequency", "day_count", "weight", "instrument",
                                            "tenor_from", "atm_frequency", "atm_day_count", "forecast_curve",
                                            "float_frequency", "calendar", "convention", "spot_lag")
#: The most business days a swaption quote's start may follow its expiry.
MAX_SPOT_LAG: Final[int] = 30
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
    :meth:`from_frame` or :func:`trinom.io.quote_files.read_vol_quotes`.

    Attributes:
      curve, expiry, tenor, kind, day_count, instrument: text per quote (``kind`` ``normal``/``lognormal``,
        ``day_count`` canonical, ``instrument`` ``swaption``/``cap``/``floor``).
      vol, shift, strike, weight: ``float64`` (``strike`` NaN: at the money).
      frequency: periods a year.
      tenor_from: ``expiry`` or ``as_of``; atm_frequency, atm_day_count: the fixed leg whose swap rate is the
        at-the-money strike (resolved: a swaption's own leg, by default a cap's caplets').
      expiry_months, expiry_days, tenor_months, tenor_days: the periods.
      where: per quote, where it came from (``vols.csv line 3``), for messages.
      forecast_curve: per quote, the curve its floating rates are projected on (``""``: ``curve``).
      float_frequency: per quote, a swaption's floating leg's periods a year (its ``frequency`` by default).
      calendar, convention, spot_lag: per quote, its calendar (canonical name, ``NONE`` by default), business-day
        convention (``U``, ``F``, ``MF`` or ``P``) and the business days from its expiry to its swap's start.
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
    forecast_curve: np.ndarray = None  # type: ignore[assignment]
    float_frequency: np.ndarray = None  # type: ignore[assignment]
    calendar: np.ndarray = None  # type: ignore[assignment]
    convention: np.ndarray = None  # type: ignore[assignment]
    spot_lag: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        for name, fill, kind in (("calendar", "NONE", object), ("convention", "U", object), ("spot_lag", 0, np.int64)):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.full(self.vol.size, fill, dtype=kind))
        if self.forecast_curve is None:
            object.__setattr__(self, "forecast_curve", np.full(self.vol.size, "", dtype=object))
        if self.float_frequency is None:
            object.__setattr__(self, "float_frequency", np.asarray(self.frequency).copy())

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
                             "atm_frequency": self.atm_frequency, "atm_day_count": self.atm_day_count,
                             "forecast_curve": self.forecast_curve,
                             "float_frequency": np.where(self.instrument == "swaption", self.float_frequency, None),
                             **{name: np.where(self.instrument == "swaption", getattr(self, name), None)
                                for name in ("calendar", "convention", "spot_lag")}})

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
                     atm_day_count: Any = None, forecast_curve: Any = None, float_frequency: Any = None,
                     calendar: Any = None, convention: Any = None, spot_lag: Any = None,
                     where: Sequence[str] | None = None) -> VolQuotes:
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
                 "atm_day_count": atm_day_count, "forecast_curve": forecast_curve,
                 "float_frequency": float_frequency, "calendar": calendar, "convention": convention,
                 "spot_lag": spot_lag}
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
        atm_per_year, _given = _frequencies_or(cells["atm_frequency"], "atm_frequency", per_year, bad)
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
        forecasts = ["" if _blank(c) else str(c).strip() for c in cells["forecast_curve"]]
        float_per_year, given = _frequencies_or(cells["float_frequency"], "float_frequency", per_year, bad)
        for k in np.flatnonzero(given & (np.array(instruments) != "swaption")):
            bad(int(k), "float_frequency", "float_frequency applies to swaptions: a cap's caplets are its periods "
                "(frequency)")
        calendars, conventions, lags = _swaption_dates(cells, instruments, bad)
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
                   where=tuple(places), forecast_curve=np.array(forecasts, dtype=object),
                   float_frequency=float_per_year.astype(np.int64), calendar=calendars, convention=conventions,
                   spot_lag=lags)


def _swaption_dates(cells: dict[str, list[Any]], instruments: list[str],
                    bad: Callable[[int, str, str], None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per quote its calendar (canonical), business-day convention (code name; modified following where a calendar
    is given without one, else unadjusted) and spot lag, bad cells reported through ``bad``."""
    names = ["NONE" if _blank(v) else str(v) for v in cells["calendar"]]
    codes, table, found = parse_calendars(np.array(names, dtype=object))
    for row, f, message in found:
        bad(int(row), f, message)
    calendars = np.array([table[c] if c >= 0 else "NONE" for c in codes], dtype=object)
    default = ["MF" if calendars[k] != "NONE" else "U" for k in range(len(names))]
    rolls, found = parse_conventions(np.array([default[k] if _blank(v) else str(v)
                                               for k, v in enumerate(cells["convention"])], dtype=object))
    for row, f, message in found:
        bad(int(row), f, message)
    conventions = np.array([CONVENTIONS.canonical[c] if c >= 0 else "U" for c in rolls], dtype=object)
    lags = _numbers(cells["spot_lag"], "spot_lag", bad, default=0.0,
                    rule=lambda x: x == int(x) and 0 <= x <= MAX_SPOT_LAG, text=f"in whole days 0..{MAX_SPOT_LAG}")
    for field in ("calendar", "convention", "spot_lag"):
        for k, value in enumerate(cells[field]):
            if not _blank(value) and instruments[k] != "swaption":
                bad(k, field, f"{field} applies to swaptions (a cap's dates are unadjusted and fix at their starts)")
    return calendars, conventions, np.where(np.isfinite(lags), lags, 0).astype(np.int64)


def _frequencies_or(cells: list[Any], field: str, default: np.ndarray,
                    bad: Callable[[int, str, str], None]) -> tuple[np.ndarray, np.ndarray]:
    """An optional frequency column: per quote its periods a year (``default`` where the cell is blank, a bad cell
    reported through ``bad``), and whether the cell was given."""
    given = np.array([not _blank(v) for v in cells], dtype=bool)
    parsed, found = parse_frequencies(np.array([v if g else 1 for v, g in zip(cells, given, strict=True)],
                                               dtype=object), field=field)
    for row, f, message in found:
        bad(int(row), f, message)
    return np.where(given, parsed, default), given


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


#: The reader of a quote file's path (:func:`trinom.io.quote_files.read_vol_quotes`), registered by that module when
#: imported (:func:`set_file_reader`): the model takes a path where its calls do, but imports no file format.
_file_reader: Callable[[str | Path], VolQuotes] | None = None


def set_file_reader(reader: Callable[[str | Path], VolQuotes]) -> None:
    """Make ``reader`` the reader of the quote files' paths that :func:`as_vol_quotes` takes (called by
    :mod:`trinom.io.quote_files` when imported)."""
    global _file_reader
    _file_reader = reader


def as_vol_quotes(quotes: VolQuotes | str | Path | Any) -> VolQuotes:
    """``quotes`` as :class:`VolQuotes`: as they are, read from a ``vols.csv`` / Parquet path, or from a pandas
    DataFrame of its columns (anything else is a ``TypeError`` saying what the quotes may be)."""
    if isinstance(quotes, VolQuotes):
        return quotes
    if isinstance(quotes, (str, Path)):
        if _file_reader is None:  # never where trinom is imported: its __init__ imports trinom.io.quote_files
            raise RuntimeError("reading a quote file needs trinom.io.quote_files imported (import trinom)")
        return _file_reader(quotes)
    return VolQuotes.from_frame(quotes)
