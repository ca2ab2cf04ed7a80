"""Dated curve files: ``curve,date,discount`` or ``curve,date,zero`` tables, CSV or Parquet, as
:class:`~trinom.model.DatedCurve` objects (the model's curves import no file format).

``trinom.model.read_dated_curves`` and the former path ``trinom.model.dated_curve.read_dated_curves`` are
:func:`read_dated_curves`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..conventions.dates import as_dates, to_days
from ..errors import InputError
from ..model.dated_curve import AS_OF_TOLERANCE, INTERPOLATIONS, DatedCurve, implausible_rate
from .csvtable import read_table_lines


def read_dated_curves(path: str | Path, *, as_of: object,
                      interpolation: str = "log-linear-discount") -> dict[str, DatedCurve]:
    """The curves of a ``curve,date,discount`` or ``curve,date,zero`` table (CSV, or Parquet by its ``.parquet`` /
    ``.pq`` suffix), in the order the file first names them; a curve's rows may come in any order.

    Every bad cell is reported at once, naming the file, the line (Parquet: the row) and the column: an empty
    curve name, a date that is not ``YYYY-MM-DD``, a value that is no finite number, a discount factor <= 0 or
    not 1 at the as-of date, a date before the as-of date, a date given twice for one curve (both lines), a zero rate
    (given, or implied by a discount factor) outside :data:`~trinom.model.dated_curve.PLAUSIBLE_ZERO_RATES` (negative
    rates are legal; 2.5 is said to look like percent).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "curve.csv"
    >>> _ = f.write_text("curve,date,zero\\nUSD,2030-01-02,0.04\\nEUR,2026-01-02,0.02\\nUSD,2026-01-02,0.03\\n")
    >>> curves = read_dated_curves(f, as_of="2025-01-02")
    >>> list(curves), curves["USD"].dates.tolist()[0].isoformat()
    (['USD', 'EUR'], '2026-01-02')
    """
    path = Path(path)
    if interpolation not in INTERPOLATIONS:
        raise InputError([(None, "interpolation", f"interpolation must be one of {', '.join(INTERPOLATIONS)}, "
                           f"got {interpolation!r}")])
    header, rows, places = _read_rows(path)
    value_field = _value_column(path, header)
    as_of_days, problems = to_days([as_of], field="as_of")
    if problems:
        raise InputError(problems)
    column = {name: k for k, name in enumerate(header)}
    problems = []
    points: dict[str, list[tuple[int, float, str]]] = {}
    for row, place in zip(rows, places, strict=True):
        name = row[column["curve"]].strip()
        text_date = row[column["date"]].strip()
        text_value = row[column[value_field]].strip()
        if not name:
            problems.append((None, "curve", f"{place}: curve name is empty"))
        day, date_problems = to_days([text_date], field="date")
        if date_problems or not text_date:
            problems.append((None, "date", f"{place}: date {text_date!r} is not a date (YYYY-MM-DD, 1901..2199)"))
        elif day[0] < as_of_days[0]:
            problems.append((None, "date", f"{place}: date {text_date} is before the as-of date "
                             f"{as_dates(as_of_days)[0]}"))
        try:
            value = float(text_value)
        except ValueError:
            problems.append((None, value_field, f"{place}: {value_field} must be a number, got {text_value!r}"))
            continue
        if not math.isfinite(value):
            problems.append((None, value_field, f"{place}: {value_field} must be finite, got {text_value!r}"))
        elif value_field == "discount" and value <= 0:
            problems.append((None, value_field, f"{place}: discount must be > 0, got {text_value}"))
        elif (value_field == "discount" and not date_problems and day[0] == as_of_days[0]
              and abs(value - 1.0) > AS_OF_TOLERANCE):
            problems.append((None, value_field, f"{place}: the discount factor at the as-of date must be 1, got "
                             f"{text_value}"))
        else:
            years = (int(day[0]) - int(as_of_days[0])) / 365.0 if not date_problems and text_date else 0.0
            implausible = implausible_rate(value_field, value, years)
            if implausible:
                problems.append((None, value_field, f"{place}: {implausible}"))
        if name and not date_problems and text_date:
            points.setdefault(name, []).append((int(day[0]), value, place))
    for name, found in points.items():
        seen: dict[int, str] = {}
        for day, _value, place in found:
            if day in seen:
                problems.append((None, "date", f"{place}: curve {name!r} has date {as_dates(np.array([day]))[0]} "
                                 f"already at {seen[day]}"))
            seen.setdefault(day, place)
    if problems:
        raise InputError(problems)
    if not points:
        raise InputError([(None, "file", f"{path}: no curve points")])
    curves = {}
    for name, found in points.items():
        found.sort()
        days = np.array([day for day, _v, _p in found], dtype=np.int64)
        values = np.array([v for _d, v, _p in found])
        given = {"discount_factors" if value_field == "discount" else "zero_rates": values}
        try:
            curves[name] = DatedCurve(as_of=as_dates(as_of_days)[0], dates=as_dates(days), interpolation=interpolation,
                                      name=name, **given)
        except InputError as err:
            raise InputError([(None, f, f"{path}: {m}") for _r, f, m in err.errors]) from None
    return curves


def _value_column(path: Path, header: Sequence[str]) -> str:
    """``discount`` or ``zero``: the one value column of a curve table."""
    known = ("curve", "date", "discount", "zero")
    problems = [(None, name, f"{path}: unknown column {name!r} (columns: curve, date, and discount or zero)")
                for name in header if name not in known]
    problems += [(None, name, f"{path}: the header lacks column {name!r}") for name in ("curve", "date")
                 if name not in header]
    values = [name for name in ("discount", "zero") if name in header]
    if len(values) != 1:
        problems.append((None, "discount", f"{path}: a curve table has one of the columns discount or zero, "
                         f"got {values or 'neither'}"))
    if len(set(header)) != len(header):
        problems.append((None, "file", f"{path}: a column appears twice in the header"))
    if problems:
        raise InputError(problems)
    return values[0]


def _read_rows(path: Path) -> tuple[list[str], list[list[str]], list[str]]:
    """A curve table's header, its rows as text cells, and where each row is (``file line N`` or ``file row N``)."""
    if not path.exists():
        raise InputError([(None, "file", f"{path}: no such file")])
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as err:  # pyarrow's errors are of several types
            raise InputError([(None, "file", f"{path}: not a Parquet file ({err})")]) from None
        header = list(table.column_names)
        columns = [_texts(table.column(name).to_pylist()) for name in header]
        rows = [list(cells) for cells in zip(*columns, strict=True)] if columns else []
        return header, rows, [f"{path.name} row {k + 1}" for k in range(len(rows))]
    header_only = _csv_header(path)
    table, lines = read_table_lines(path, [n for n in ("curve", "date") if n in header_only],
                                    [n for n in header_only if n not in ("curve", "date")])
    header = list(table)
    rows = [list(cells) for cells in zip(*table.values(), strict=True)] if header else []
    return header, rows, [f"{path.name} line {line}" for line in lines]


def _csv_header(path: Path) -> list[str]:
    """The names of a CSV file's header (so that the strict table reader takes exactly them)."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            first = next(csv.reader(handle), [])
    except UnicodeDecodeError as err:
        raise InputError([(None, "file", f"{path}: not a UTF-8 text file (byte {err.start}: {err.reason})")]) from None
    header = [name.strip() for name in first]
    _value_column(path, header)
    return header


def _texts(values: list[object]) -> list[str]:
    """Parquet cells as text: dates as ``YYYY-MM-DD`` (a timestamp only at midnight), numbers by ``repr``."""
    import datetime

    cells = []
    for value in values:
        if value is None:
            cells.append("")
        elif isinstance(value, datetime.datetime):
            midnight = value.hour == value.minute == value.second == value.microsecond == 0
            cells.append(value.date().isoformat() if midnight else value.isoformat())
        elif isinstance(value, datetime.date):
            cells.append(value.isoformat())
        elif isinstance(value, float):
            cells.append(repr(value))
        else:
            cells.append(str(value))
    return cells


__all__ = ["read_dated_curves"]
