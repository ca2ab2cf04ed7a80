"""Dated curve files: ``curve,date,discount``, ``curve,date,zero`` or ``curve,date,rate`` tables (``rate`` with
``compounding`` and ``day_count``), CSV or Parquet, as
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
from ..model.dated_curve import AS_OF_TOLERANCE, INTERPOLATIONS, DatedCurve, implausible_rate, quote_problems
from .csvtable import read_table_lines


def read_dated_curves(path: str | Path, *, as_of: object,
                      interpolation: str = "log-linear-discount") -> dict[str, DatedCurve]:
    """The curves of a ``curve,date,discount``, ``curve,date,zero`` or ``curve,date,rate`` table (CSV, or Parquet by
    its ``.parquet`` / ``.pq`` suffix), in the order the file first names them; a curve's rows may come in any order.

    ``zero`` is a continuous ACT/365F zero rate. ``rate`` is a zero rate as quoted: the optional columns
    ``compounding`` (``continuous``, ``simple``, ``annual``, ``semiannual``, ``quarterly``, ``monthly``; empty:
    continuous) and ``day_count`` (empty: ACT/365F) say how it gives the pillar's discount factor
    (:meth:`DatedCurve.from_rates`). A ``zero`` or ``rate`` row with an empty date, alone in its curve, is a flat
    forward curve (:meth:`DatedCurve.flat`).

    Every bad cell is reported at once, naming the file, the line (Parquet: the row) and the column: an empty
    curve name, a date that is not ``YYYY-MM-DD``, a value that is no finite number, a discount factor <= 0 or
    not 1 at the as-of date, a date before the as-of date, a date given twice for one curve (both lines), a zero rate
    (given, or implied by a discount factor) outside :data:`~trinom.model.dated_curve.PLAUSIBLE_ZERO_RATES` (negative
    rates are legal; 2.5 is said to look like percent), an unknown compounding or day count, a flat row beside others.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "curve.csv"
    >>> _ = f.write_text("curve,date,zero\\nUSD,2030-01-02,0.04\\nEUR,2026-01-02,0.02\\nUSD,2026-01-02,0.03\\n")
    >>> curves = read_dated_curves(f, as_of="2025-01-02")
    >>> list(curves), curves["USD"].dates.tolist()[0].isoformat()
    (['USD', 'EUR'], '2026-01-02')
    >>> _ = f.write_text("curve,date,rate,compounding,day_count\\nEUR,,0.03,annual,ACT/360\\n")
    >>> round(float(read_dated_curves(f, as_of="2025-01-02")["EUR"].discount([1.0])[0]), 12)
    0.970475286737
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
    quoted = _quoting(rows, column, places) if value_field == "rate" else None
    problems = list(quoted[2]) if quoted else []
    points: dict[str, list[tuple[int, float, str, int]]] = {}
    flat: dict[str, list[tuple[float, str, int]]] = {}
    for k, (row, place) in enumerate(zip(rows, places, strict=True)):
        name = row[column["curve"]].strip()
        text_date = row[column["date"]].strip()
        text_value = row[column[value_field]].strip()
        if not name:
            problems.append((None, "curve", f"{place}: curve name is empty"))
        day, date_problems = to_days([text_date], field="date")
        if not text_date and value_field == "discount":
            problems.append((None, "date", f"{place}: date is empty (only a zero or rate row, alone in its curve, "
                             "may leave it empty: a flat curve)"))
        elif text_date and date_problems:
            problems.append((None, "date", f"{place}: date {text_date!r} is not a date (YYYY-MM-DD, 1901..2199)"))
        elif text_date and day[0] < as_of_days[0]:
            problems.append((None, "date", f"{place}: date {text_date} is before the as-of date "
                             f"{as_dates(as_of_days)[0]}"))
        dated = bool(text_date) and not date_problems
        try:
            value = float(text_value)
        except ValueError:
            problems.append((None, value_field, f"{place}: {value_field} must be a number, got {text_value!r}"))
            continue
        if not math.isfinite(value):
            problems.append((None, value_field, f"{place}: {value_field} must be finite, got {text_value!r}"))
        elif value_field == "discount" and value <= 0:
            problems.append((None, value_field, f"{place}: discount must be > 0, got {text_value}"))
        elif value_field == "discount" and dated and day[0] == as_of_days[0] and abs(value - 1.0) > AS_OF_TOLERANCE:
            problems.append((None, value_field, f"{place}: the discount factor at the as-of date must be 1, got "
                             f"{text_value}"))
        else:
            years = (int(day[0]) - int(as_of_days[0])) / 365.0 if dated else 0.0
            implausible = implausible_rate(value_field, value, years)
            if implausible:
                problems.append((None, value_field, f"{place}: {implausible}"))
        if name and dated:
            points.setdefault(name, []).append((int(day[0]), value, place, k))
        elif name and not text_date:
            flat.setdefault(name, []).append((value, place, k))
    for name, found in points.items():
        seen: dict[int, str] = {}
        for day, _value, place, _k in found:
            if day in seen:
                problems.append((None, "date", f"{place}: curve {name!r} has date {as_dates(np.array([day]))[0]} "
                                 f"already at {seen[day]}"))
            seen.setdefault(day, place)
    for name, rows_of in flat.items():
        if len(rows_of) > 1 or name in points:
            problems += [(None, "date", f"{place}: curve {name!r} has a row without a date (a flat curve) and other "
                          "rows: a flat curve is one row") for _v, place, _k in rows_of]
    if problems:
        raise InputError(problems)
    if not points and not flat:
        raise InputError([(None, "file", f"{path}: no curve points")])
    curves = {}
    for name in sorted({**points, **flat}, key=lambda n: min(r[-1] for r in points.get(n, flat.get(n, [])))):
        try:
            curves[name] = _curve(name, points.get(name), flat.get(name), value_field, quoted, as_of_days,
                                  interpolation)
        except InputError as err:
            raise InputError([(None, f, f"{path}: {m}") for _r, f, m in err.errors]) from None
    return curves


def _curve(name: str, points: list[tuple[int, float, str, int]] | None, flat: list[tuple[float, str, int]] | None,
           value_field: str, quoted: tuple[list[str], list[str], list] | None, as_of_days: np.ndarray,
           interpolation: str) -> DatedCurve:
    """One curve of the table: flat (one row without a date) or its dated rows in date order."""
    as_of = as_dates(as_of_days)[0]
    compounding, day_count = (quoted[0], quoted[1]) if quoted else ([], [])
    if flat:  # a zero row's rate is continuous ACT/365F: DatedCurve.flat's defaults
        value, _place, k = flat[0]
        quoting = {"compounding": compounding[k], "day_count": day_count[k]} if quoted else {}
        return DatedCurve.flat(as_of=as_of, rate=value, name=name, **quoting)
    assert points is not None
    points.sort()
    days = as_dates(np.array([day for day, _v, _p, _k in points], dtype=np.int64))
    values = np.array([v for _d, v, _p, _k in points])
    if quoted:
        mine = [k for _d, _v, _p, k in points]
        return DatedCurve.from_rates(as_of=as_of, dates=days, rates=values, interpolation=interpolation, name=name,
                                     compounding=[compounding[k] for k in mine], day_count=[day_count[k] for k in mine])
    given = {"discount_factors" if value_field == "discount" else "zero_rates": values}
    return DatedCurve(as_of=as_of, dates=days, interpolation=interpolation, name=name, **given)


def _quoting(rows: list[list[str]], column: dict[str, int], places: list[str]) -> tuple[list[str], list[str], list]:
    """Per row of a ``rate`` table, its compounding and day count (empty cells: continuous, ACT/365F), and a problem
    per unknown name (ACT/ACT-ICMA, which needs a coupon schedule, is one)."""
    compounding = [row[column["compounding"]].strip() or "continuous" if "compounding" in column else "continuous"
                   for row in rows]
    day_count = [row[column["day_count"]].strip() or "ACT/365F" if "day_count" in column else "ACT/365F"
                 for row in rows]
    found = quote_problems(compounding, day_count)[2] if rows else []
    return compounding, day_count, [(None, field, f"{places[int(r)]}: {message}") for r, field, message in found]


def _value_column(path: Path, header: Sequence[str]) -> str:
    """``discount``, ``zero`` or ``rate``: the one value column of a curve table (``compounding`` and ``day_count``
    go with ``rate``)."""
    known = ("curve", "date", "discount", "zero", "rate", "compounding", "day_count")
    problems = [(None, name, f"{path}: unknown column {name!r} (columns: curve, date, and discount, zero or rate; "
                 "with rate: compounding, day_count)") for name in header if name not in known]
    problems += [(None, name, f"{path}: the header lacks column {name!r}") for name in ("curve", "date")
                 if name not in header]
    values = [name for name in ("discount", "zero", "rate") if name in header]
    if len(values) != 1:
        problems.append((None, "discount", f"{path}: a curve table has one of the columns discount, zero or rate, "
                         f"got {values or 'none'}"))
    elif values[0] != "rate":
        problems += [(None, name, f"{path}: column {name!r} goes with rate (a zero is continuous ACT/365F)")
                     for name in ("compounding", "day_count") if name in header]
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
