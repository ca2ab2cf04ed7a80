"""File formats: the thesis' array files, Futhark's textual data, CSV, and price files.

* ``*.in`` with 8 arrays: a thesis portfolio (strike, maturity, expiry, term unit, steps,
  a, sigma, type), one Futhark-style bracketed array per line.
* ``*.in`` with 10 arrays: the input of the Futhark programs' ``main`` (the 8 arrays, then the
  yield curve's rates and days).
* ``yield.in``: 2 arrays (rates, days).
* ``*.csv``: one option per row with a header naming the fields (see ``trinom.FIELDS``) and, optionally,
  an ``id`` column naming the rows in results (else they are named by their row numbers) and a ``convention``
  column (``standard`` or ``thesis``, the same on every row; without it the book is of the standard convention).
* Prices: ``*.out`` holds one bracketed array (17 significant digits, ``f64.nan`` for a row
  that has no price); ``*.csv`` holds ``id,price,error`` rows.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import InputError, check_error_mode
from ..instruments.option import FIELDS, Portfolio, book_convention
from ..model.curve import YieldCurve
from .csvtable import read_table, read_table_lines
from .files import BOOK_FORMATS, output_format, replacing
from .row_ids import check_row_ids, row_numbers
from .textdata import format_array, format_float, read_arrays

_INT_FIELDS = ("term_unit", "term_steps", "option_type")


# --- portfolios --------------------------------------------------------------------------------
def read_input(path: str | Path, errors: str = "raise") -> tuple[Portfolio, YieldCurve | None]:
    """A portfolio file, and the yield curve if the file holds one (10-array Futhark input).

    With ``errors="mask"`` a cell (CSV) or an array item (``.in``) that is no number becomes NaN and its row's
    problem, reported by :meth:`Portfolio.validate` (and priced as a bad row by ``trinom.price(..., errors="mask")``);
    an unreadable yield curve is an error either way.
    """
    path = Path(path)
    check_error_mode(errors)
    if path.suffix.lower() == ".csv":
        return read_csv_portfolio(path, errors), None
    unread: list[tuple[int, int, str]] = []
    arrays = read_arrays(path, unread if errors == "mask" else None)
    if len(arrays) not in (len(FIELDS), len(FIELDS) + 2):
        raise InputError([(None, "file", f"{path}: {len(arrays)} arrays: an option file holds {len(FIELDS)} (a thesis "
                           f"portfolio) or {len(FIELDS) + 2} (portfolio and yield curve), a bond file 19")])
    in_curve = [message for array, _item, message in unread if array >= len(FIELDS)]
    if in_curve:
        raise InputError([(None, "curve", message) for message in in_curve])
    sizes = [array.size for array in arrays[: len(FIELDS)]]
    if len(set(sizes)) > 1:  # say which arrays of the file differ from the others
        common = max(set(sizes), key=sizes.count)
        raise InputError([(None, name, f"{path}: array {k + 1} ({name}) holds {size} values, the others {common} (one "
                           "per option)") for k, (name, size) in enumerate(zip(FIELDS, sizes, strict=True))
                          if size != common])
    if unread:
        problems = sorted((item, list(FIELDS)[array], message) for array, item, message in unread)
        portfolio = Portfolio.with_read_problems(problems, convention="thesis",
                                                 **dict(zip(FIELDS, arrays[: len(FIELDS)], strict=True)))
    else:  # the thesis' files keep the thesis' convention (README: conventions)
        portfolio = Portfolio.from_arrays(arrays[: len(FIELDS)], convention="thesis")
    curve = YieldCurve(arrays[len(FIELDS)], arrays[len(FIELDS) + 1]) if len(arrays) > len(FIELDS) else None
    return portfolio, curve


def read_portfolio(path: str | Path, errors: str = "raise") -> Portfolio:
    """A portfolio from a thesis ``.in``, a 10-array Futhark input or a ``.csv`` file (``errors`` as for
    :func:`read_input`)."""
    return read_input(path, errors)[0]


def read_csv_portfolio(path: str | Path, errors: str = "raise") -> Portfolio:
    """One option per row; the header names the fields (any order, ``type`` may be call/put) and may name an
    ``id`` column and a ``convention`` column (see :func:`read_csv_options`); ``errors`` as for :func:`read_input`."""
    return read_csv_options(path, errors)[0]


def read_csv_options(path: str | Path, errors: str = "raise") -> tuple[Portfolio, list[str]]:
    """:func:`read_csv_portfolio`, and the rows' ids: the optional ``id`` column (none empty or repeated,
    :mod:`trinom.io.row_ids`), else the row numbers. The optional ``convention`` column gives the portfolio's
    convention (``standard`` or ``thesis``, the same on every row: another value, or one that differs from the first
    row's, is an error naming the row, the line and the field with either ``errors``); without it, ``standard``."""
    check_error_mode(errors)
    columns, lines = read_table_lines(path, list(FIELDS), ["id", "convention"])
    ids = check_row_ids(columns.pop("id"), path, lines) if "id" in columns else row_numbers(len(lines))
    convention = _convention(path, columns.pop("convention"), lines) if "convention" in columns else "standard"
    fields: dict[str, object] = {}
    problems: list[tuple[int, str, str]] = []
    for f, values in columns.items():
        if f == "option_type":
            fields[f] = [int(v) if v.lstrip("-").isdigit() else v for v in values]
            continue
        fields[f] = _parsed(path, f, values, rows=True, problems=problems if errors == "mask" else None, lines=lines)
    if problems:
        return Portfolio.with_read_problems(sorted(problems, key=lambda p: p[0]), convention=convention, **fields), ids
    return Portfolio(convention=convention, **fields), ids


def _convention(path: str | Path, cells: list[str], lines: Sequence[int]) -> str:
    """The one convention of an option CSV's ``convention`` column (``standard`` where it has no row); a cell that
    names none of :data:`trinom.instruments.option.CONVENTIONS`, or another than the first row's, is an error naming its
    row and line."""
    places = [f"{path} line {line}: " for line in lines]
    return book_convention(cells, places, f"line {lines[0]}" if lines else "") or "standard"


def read_option_book(path: str | Path, errors: str = "raise") -> tuple[Portfolio, YieldCurve | None, list[str]]:
    """:func:`read_input`, and the rows' ids (a CSV's ``id`` column, else the row numbers)."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        portfolio, ids = read_csv_options(path, errors)
        return portfolio, None, ids
    portfolio, curve = read_input(path, errors)
    return portfolio, curve, row_numbers(len(portfolio))


def _parsed(path: str | Path, field: str, cells: list[str], rows: bool = False,
            problems: list[tuple[int, str, str]] | None = None, lines: Sequence[int] | None = None) -> list[float]:
    """A CSV column as floats (Futhark's ``f64.inf``/``f64.nan`` spellings too); a bad cell names its line
    (``lines``: each cell's, default the cell's index plus 2) and, for a table of instruments, its row. Where
    ``problems`` is given, a bad cell is NaN and its problem is added there instead of raised."""
    values = []
    for k, cell in enumerate(cells):
        try:
            values.append(float(cell.replace("f64.", "").replace("f32.", "")))
        except ValueError:
            message = f"{path} line {lines[k] if lines is not None else k + 2}: {field} must be a number, got {cell!r}"
            if problems is None:
                raise InputError([(k if rows else None, field, message)]) from None
            problems.append((k, field, message))
            values.append(float("nan"))
    return values


def write_portfolio(portfolio: Portfolio, path: str | Path, curve: YieldCurve | None = None) -> None:
    """Write as ``.csv``, as ``.in`` (8 arrays; 10 with ``curve``: the Futhark ``main`` input) or as ``.parquet``
    (:func:`trinom.io.parquet.write_book`), by the suffix (any other is an :class:`InputError`); whole or not at all.
    A CSV holds no curve: ``curve`` with a ``.csv`` path is an error, not dropped. A CSV of a thesis-convention
    portfolio has a ``convention`` column (``thesis`` on every row), so that it reads back as it was written; a
    standard one has none. A ``.in`` file has no place for a convention: it reads back as the thesis'."""
    path = Path(path)
    kind = output_format(path, BOOK_FORMATS, "file", "an option book")
    if kind == "parquet":
        from .parquet import write_book

        write_book(path, portfolio, None if curve is None else [curve])
        return
    if kind == "csv" and curve is not None:
        raise InputError([(None, "curve", f"{path}: an option CSV holds no yield curve; write .in or .parquet to keep "
                           "it, or write the curve apart (write_yield_curve)")])
    with replacing([path]) as (temporary,):
        if kind == "csv":
            with open(temporary, "w", newline="") as handle:
                writer = csv.writer(handle)
                thesis = [portfolio.convention] if portfolio.convention != "standard" else []
                writer.writerow([*FIELDS, *(["convention"] if thesis else [])])
                columns = [portfolio.as_dict()[f] for f in FIELDS]
                for k in range(len(portfolio)):
                    writer.writerow([*(int(c[k]) if f in _INT_FIELDS else format_float(float(c[k]))
                                       for f, c in zip(FIELDS, columns, strict=True)), *thesis])
            return
        lines = [format_array(getattr(portfolio, f), integer=f in _INT_FIELDS) for f in FIELDS]
        if curve is not None:
            lines += [format_array(curve.rates), format_array(curve.days, integer=True)]
        temporary.write_text("\n".join(lines) + "\n")


# --- yield curves ---------------------------------------------------------------------------------
def read_yield_curve(path: str | Path) -> YieldCurve:
    """A curve from ``yield.in`` (rates then days), or a CSV or Parquet table with columns ``days,rate``."""
    path = Path(path)
    if not path.exists():
        raise InputError([(None, "file", f"{path}: no such file")])
    from .parquet import is_parquet, read_text_rows

    if is_parquet(path):
        header, *rows = read_text_rows(path)
        if sorted(header) != ["days", "rate"]:
            raise InputError([(None, "file", f"{path}: a curve table has the columns days and rate, got {header}")])
        cells = {name: [row[k] for row in rows] for k, name in enumerate(header)}
        return YieldCurve(_parsed(path, "rate", cells["rate"]), _parsed(path, "days", cells["days"]))
    if path.suffix.lower() == ".csv":
        table = read_table(path, ["days", "rate"])
        return YieldCurve(_parsed(path, "rate", table["rate"]), _parsed(path, "days", table["days"]))
    arrays = read_arrays(path)
    if len(arrays) != 2:
        raise InputError([(None, "file", f"{path}: a yield curve file holds 2 arrays (rates, days), found {len(arrays)}")])
    return YieldCurve(arrays[0], arrays[1])


def write_yield_curve(curve: YieldCurve, path: str | Path) -> None:
    """Write as ``yield.in`` (2 arrays) or CSV (``days,rate``); whole or not at all."""
    path = Path(path)
    with replacing([path]) as (temporary,):
        if path.suffix.lower() == ".csv":
            with open(temporary, "w", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(["days", "rate"])
                writer.writerows([int(d), format_float(float(r))] for d, r in zip(curve.days, curve.rates, strict=True))
            return
        temporary.write_text(format_array(curve.rates) + "\n" + format_array(curve.days, integer=True) + "\n")


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


def write_prices(path: str | Path, prices: np.ndarray, errors: Sequence[str] | None = None,
                 ids: Sequence[object] | None = None) -> None:
    """Write ``.out`` (17 significant digits) or ``.csv`` (``id,price,error``; ``ids`` default to the row
    numbers), by the suffix (any other is an :class:`InputError`: a Parquet result is written by
    :class:`trinom.io.parquet.ResultWriter`); whole or not at all."""
    path = Path(path)
    kind = output_format(path, {".out": "out", ".csv": "csv"}, "file", "prices")
    prices = np.asarray(prices, dtype=np.float64)
    with replacing([path]) as (temporary,):
        if kind == "csv":
            with open(temporary, "w", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(["id", "price", "error"])
                for k, p in enumerate(prices):
                    message = errors[k] if errors is not None else ""
                    writer.writerow([k if ids is None else ids[k], "" if np.isnan(p) else format_float(float(p), digits17=True),
                                     message])
            return
        temporary.write_text(format_array(prices, digits17=True) + "\n")
