"""File formats: the thesis' array files, Futhark's textual data, CSV, and price files.

* ``*.in`` with 8 arrays: a thesis portfolio (strike, maturity, expiry, term unit, steps,
  a, sigma, type), one Futhark-style bracketed array per line.
* ``*.in`` with 10 arrays: the input of the Futhark programs' ``main`` (the 8 arrays, then the
  yield curve's rates and days).
* ``yield.in``: 2 arrays (rates, days).
* ``*.csv``: one option per row with a header naming the fields (see ``trinom.FIELDS``).
* Prices: ``*.out`` holds one bracketed array (17 significant digits, ``f64.nan`` for a row
  that has no price); ``*.csv`` holds ``id,price,error`` rows.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .curve import YieldCurve
from .errors import InputError
from .portfolio import FIELDS, Portfolio

_SUFFIX = re.compile(r"(?<=[0-9.])(?:f16|f32|f64|i8|i16|i32|i64|u8|u16|u32|u64)\b")
_ARRAY = re.compile(r"\[([^\[\]]*)\]|empty\(\[0\][a-z0-9]+\)")
_INT_FIELDS = ("term_unit", "term_steps", "option_type")


# --- Futhark-style textual arrays ---------------------------------------------------------
def read_arrays(path: str | Path) -> list[np.ndarray]:
    """Every one-dimensional array in a Futhark textual data file, as float64 arrays."""
    text = Path(path).read_text()
    arrays = []
    for match in _ARRAY.finditer(text):
        body = _SUFFIX.sub("", match.group(1) or "").replace("f64.nan", "nan").replace("f32.nan", "nan")
        items = [item for item in body.replace("\n", " ").split(",") if item.strip()]
        try:
            arrays.append(np.array([float(item) for item in items], dtype=np.float64))
        except ValueError as err:
            raise InputError([(None, "file", f"{path}: array {len(arrays) + 1} is not numeric ({err})")]) from None
    return arrays


def format_array(values: np.ndarray, integer: bool = False, digits17: bool = False) -> str:
    """One array in Futhark's textual syntax (floats always carry a decimal point or exponent).

    Floats are written in the shortest form that reads back exactly, or with 17 significant
    digits when ``digits17`` (the thesis' price files).
    """
    if integer:
        return "[" + ", ".join(str(int(v)) for v in values) + "]"
    return "[" + ", ".join(_format_float(float(v), digits17) for v in values) + "]"


def _format_float(v: float, digits17: bool = False) -> str:
    if v != v:
        return "f64.nan"
    if v in (float("inf"), float("-inf")):
        return "f64.inf" if v > 0 else "-f64.inf"
    text = f"{v:.17g}" if digits17 else repr(v)
    return text if any(c in text for c in ".eEn") else text + ".0"


# --- portfolios --------------------------------------------------------------------------------
def read_input(path: str | Path) -> tuple[Portfolio, YieldCurve | None]:
    """A portfolio file, and the yield curve if the file holds one (10-array Futhark input)."""
    path = Path(path)
    if not path.exists():
        raise InputError([(None, "file", f"{path}: no such file")])
    if path.suffix.lower() == ".csv":
        return read_csv_portfolio(path), None
    arrays = read_arrays(path)
    if len(arrays) not in (len(FIELDS), len(FIELDS) + 2):
        raise InputError([(None, "file", f"{path}: expected {len(FIELDS)} arrays (a thesis portfolio) or "
                           f"{len(FIELDS) + 2} (portfolio and yield curve), found {len(arrays)}")])
    portfolio = Portfolio.from_arrays(arrays[: len(FIELDS)])
    curve = YieldCurve(arrays[len(FIELDS)], arrays[len(FIELDS) + 1]) if len(arrays) > len(FIELDS) else None
    return portfolio, curve


def read_portfolio(path: str | Path) -> Portfolio:
    """A portfolio from a thesis ``.in``, a 10-array Futhark input or a ``.csv`` file."""
    return read_input(path)[0]


def read_csv_portfolio(path: str | Path) -> Portfolio:
    """One option per row; the header names the fields (any order, ``type`` may be call/put)."""
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        header = [name.strip() for name in reader.fieldnames or []]
        missing = [f for f in FIELDS if f not in header]
        if missing:
            raise InputError([(None, f, f"{path}: CSV header lacks column '{f}' (need {', '.join(FIELDS)})")
                              for f in missing])
        columns: dict[str, list[str]] = {f: [] for f in FIELDS}
        for row in reader:
            for f in FIELDS:
                columns[f].append((row.get(f) or "").strip())
    fields: dict[str, object] = {}
    for f, values in columns.items():
        if f == "option_type":
            fields[f] = [int(v) if v.lstrip("-").isdigit() else v for v in values]
            continue
        parsed = []
        for k, v in enumerate(values):
            try:
                parsed.append(float(v))
            except ValueError:
                raise InputError([(k, f, f"{f} must be a number, got {v!r}")]) from None
        fields[f] = parsed
    return Portfolio(**fields)


def write_portfolio(portfolio: Portfolio, path: str | Path, curve: YieldCurve | None = None) -> None:
    """Write as ``.csv``, or as ``.in`` (8 arrays; 10 with ``curve``: the Futhark ``main`` input)."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(FIELDS)
            columns = [portfolio.as_dict()[f] for f in FIELDS]
            for k in range(len(portfolio)):
                writer.writerow([int(c[k]) if f in _INT_FIELDS else _format_float(float(c[k]))
                                 for f, c in zip(FIELDS, columns, strict=True)])
        return
    lines = [format_array(getattr(portfolio, f), integer=f in _INT_FIELDS) for f in FIELDS]
    if curve is not None:
        lines += [format_array(curve.rates), format_array(curve.days, integer=True)]
    path.write_text("\n".join(lines) + "\n")


# --- yield curves ---------------------------------------------------------------------------------
def read_yield_curve(path: str | Path) -> YieldCurve:
    """A curve from ``yield.in`` (rates then days) or a CSV with columns ``days,rate``."""
    path = Path(path)
    if not path.exists():
        raise InputError([(None, "file", f"{path}: no such file")])
    if path.suffix.lower() == ".csv":
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
        try:
            return YieldCurve([float(r["rate"]) for r in rows], [float(r["days"]) for r in rows])
        except KeyError:
            raise InputError([(None, "file", f"{path}: a yield-curve CSV needs columns 'days' and 'rate'")]) from None
    arrays = read_arrays(path)
    if len(arrays) != 2:
        raise InputError([(None, "file", f"{path}: a yield curve file holds 2 arrays (rates, days), found {len(arrays)}")])
    return YieldCurve(arrays[0], arrays[1])


def write_yield_curve(curve: YieldCurve, path: str | Path) -> None:
    """Write as ``yield.in`` (2 arrays) or CSV (``days,rate``)."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["days", "rate"])
            writer.writerows([int(d), _format_float(float(r))] for d, r in zip(curve.days, curve.rates, strict=True))
        return
    path.write_text(format_array(curve.rates) + "\n" + format_array(curve.days, integer=True) + "\n")


# --- prices ----------------------------------------------------------------------------------------
def read_prices(path: str | Path) -> np.ndarray:
    """Prices from ``.out`` (one array) or ``.csv`` (``id,price,error``; empty price is NaN)."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        with open(path, newline="") as handle:
            return np.array([float(r["price"]) if r["price"] else np.nan for r in csv.DictReader(handle)])
    arrays = read_arrays(path)
    if len(arrays) != 1:
        raise InputError([(None, "file", f"{path}: a price file holds 1 array, found {len(arrays)}")])
    return arrays[0]


def write_prices(path: str | Path, prices: np.ndarray, errors: Sequence[str] | None = None) -> None:
    """Write ``.out`` (17 significant digits) or ``.csv`` (``id,price,error``), by extension."""
    path = Path(path)
    prices = np.asarray(prices, dtype=np.float64)
    if path.suffix.lower() == ".csv":
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "price", "error"])
            for k, p in enumerate(prices):
                message = errors[k] if errors is not None else ""
                writer.writerow([k, "" if np.isnan(p) else _format_float(float(p), digits17=True), message])
        return
    path.write_text(format_array(prices, digits17=True) + "\n")
