"""Scenario files: a grid of curve moves read from CSV or Parquet, as a market's scenario axis (issue 14). The
scenario types themselves (:class:`CurveShift`, :class:`CurveSet`, :class:`SigmaShift`, :class:`SpreadShift`) and
:func:`scenario_market` are the model's (:mod:`trinom.model.scenarios`), named here too: ``trinom.scenarios`` is
this module.
"""


from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..io.csvtable import read_rows
from ..model.curve import MAX_DAYS, YieldCurve
from ..model.market import CurvesLike, Market
from ..model.scenarios import (
    CurveSet,
    CurveShift,
    Scenario,
    SigmaShift,
    SpreadShift,
    scenario_market,
    shifted,
)

__all__ = ["CurveSet", "CurveShift", "Scenario", "SigmaShift", "SpreadShift", "read_dated_scenarios", "read_scenarios",
           "scenario_market", "shifted"]


def read_scenarios(path: str | Path, curves: CurvesLike) -> tuple[list[str], Market]:
    """A scenario file -> its scenario names (in file order) and the market of their curves.

    A CSV (UTF-8, a byte-order mark allowed) or a Parquet file of the same columns.
    Two forms, told apart by the header (names in any case, spaces around them ignored): ``scenario,curve,days,shift``
    (each row adds ``shift`` to the zero rate of ``curve`` at its pillar ``days``, or to every pillar where ``days``
    is empty or ``*``; a scenario's rows add up) or ``scenario,curve,days,rate`` (the rows of a scenario and curve
    are that curve's points, each day once; curves a scenario does not name stay as they are). ``scenario`` is a
    name that is not empty, ``shift`` or ``rate`` a finite number, ``days`` a whole number. ``curve`` names a curve
    of ``curves`` exactly as the market names it (``default`` for a single curve; a bond CSV's curves by their names
    in ``NAME.curves.csv``, ``00`` and ``EUR`` included; a 19-array file's or a plain sequence's ``0``, ``1``, ...).
    A bad file is an :class:`InputError` naming it; a bad cell one naming the file, the line (a Parquet file's row,
    from 0) and the column.
    """
    path = Path(path)
    base = Market.of(curves)
    rows, places = _scenario_rows(path)
    forms = "scenario,curve,days,shift or scenario,curve,days,rate"
    if not rows:
        raise InputError([(None, "--scenarios", f"{path}: empty file (a header {forms} is needed)")])
    header = [cell.strip().lstrip("\ufeff").strip().lower() for cell in rows[0]]
    if header not in (["scenario", "curve", "days", "shift"], ["scenario", "curve", "days", "rate"]):
        got = ",".join(cell.strip() for cell in rows[0])
        raise InputError([(None, "--scenarios", f"{path}: the header must be {forms}, got {got[:200]!r}")])
    replacing = header[3] == "rate"
    order: list[str] = []
    moved: dict[str, list[YieldCurve]] = {}
    points: dict[tuple[str, str], dict[int, tuple[float, str]]] = {}
    problems: list[tuple[int | None, str, str]] = []
    for place, row in zip(places[1:], rows[1:], strict=True):
        if not "".join(row).strip():
            continue
        where = f"{path} {place}"
        if len(row) != 4:
            problems.append((None, "--scenarios", f"{where}: {len(row)} values, but the header names 4 columns "
                             f"({','.join(header)})"))
            continue
        name, curve, days, value = (cell.strip() for cell in row)
        cell_problems = _cell_problems(where, header[3], name, curve, days, value, base.names, replacing)
        if cell_problems:
            problems += cell_problems
            continue
        number, day, k = float(value), None if days in ("", "*") else int(days), base.index(curve)
        if replacing:
            given, point = points.setdefault((name, curve), {}), int(days)
            if point in given:
                problems.append((None, "days", f"{where}: scenario {name!r}, curve {curve!r}: days {point} given "
                                 f"twice (also on {given[point][1]})"))
                continue
            given[point] = (number, place)
        pillar = None
        if not replacing and day is not None:
            matches = np.flatnonzero(base.curves[k].days == day)
            if matches.size == 0:
                problems.append((None, "days", f"{where}: {day} is not a pillar of curve {curve!r} "
                                 f"(pillars: {', '.join(map(str, base.curves[k].days))})"))
                continue
            pillar = int(matches[0])
        if name not in moved:
            order.append(name)
            moved[name] = list(base.curves)
        if replacing:
            continue
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                moved[name][k] = shifted(moved[name][k], number, pillar)
        except InputError:  # finite shifts whose sum is not
            problems.append((None, header[3], f"{where}: scenario {name!r}, curve {curve!r}: the shifts up to this "
                             "line move a rate beyond the floating-point range"))
    for (name, curve), given in points.items():
        days_list = sorted(given)
        try:
            moved[name][base.index(curve)] = YieldCurve([given[d][0] for d in days_list], days_list)
        except InputError as err:
            problems += [(None, "--scenarios", f"{path}: scenario {name!r}, curve {curve!r}: {p[2]}") for p in err.errors]
    if problems:
        raise InputError(problems)
    if not order:
        raise InputError([(None, "--scenarios", f"{path}: no scenario (the header and no row)")])
    return order, Market(base.names, tuple(tuple(moved[name]) for name in order))


def read_dated_scenarios(path: str | Path, curves: Mapping[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """A scenario file of dated curves -> its scenario names (in file order) and each scenario's curves
    (``{name: DatedCurve}``, every curve; those it does not move as given).

    Header ``scenario,curve,date,shift`` (a CSV, or Parquet of the same columns): each row adds ``shift`` to the zero
    rate of ``curve`` (a name of ``curves``) at its pillar ``date`` (one of the curve's dates, YYYY-MM-DD: a key-rate
    bump, :meth:`trinom.model.DatedCurve.bumped`), or at every pillar where ``date`` is empty or ``*``; a scenario's
    rows add up. A bad cell is an :class:`InputError` naming the file, the line and the column.
    """
    from ..conventions.dates import to_days

    path = Path(path)
    rows, places = _scenario_rows(path)
    header = [cell.strip().lstrip("\ufeff").strip().lower() for cell in rows[0]] if rows else []
    if header != ["scenario", "curve", "date", "shift"]:
        got = ",".join(cell.strip() for cell in rows[0]) if rows else ""
        raise InputError([(None, "--scenarios", f"{path}: the header of dated scenarios must be scenario,curve,date,"
                           f"shift, got {got[:200]!r}")])
    shifts: dict[str, dict[str, np.ndarray]] = {}
    problems: list[tuple[int | None, str, str]] = []
    for place, row in zip(places[1:], rows[1:], strict=True):
        if not "".join(row).strip():
            continue
        where = f"{path} {place}"
        if len(row) != 4:
            problems.append((None, "--scenarios", f"{where}: {len(row)} values, but the header names 4 columns"))
            continue
        name, curve, date, value = (cell.strip() for cell in row)
        found = _cell_problems(where, "shift", name, curve, "", value, list(curves), False)
        if found:
            problems += found
            continue
        dates = curves[curve].dates
        pillars = np.ones(len(dates), dtype=bool)
        if date not in ("", "*"):
            day, bad = to_days([date], field="date")
            pillars = (dates == np.datetime64(int(day[0]), "D")) if not bad else np.zeros(len(dates), dtype=bool)
            if not pillars.any():
                problems.append((None, "date", f"{where}: {_shown(date)} is not a pillar date of curve {curve!r} "
                                 f"(pillars: {', '.join(map(str, dates))}; empty or * for every pillar)"))
                continue
        moved = shifts.setdefault(name, {})
        moved[curve] = moved.get(curve, np.zeros(len(dates))) + np.where(pillars, float(value), 0.0)
    if problems:
        raise InputError(problems)
    if not shifts:
        raise InputError([(None, "--scenarios", f"{path}: no scenario (the header and no row)")])
    out = []
    for moved in shifts.values():
        scenario = dict(curves)
        for curve, zeros in moved.items():
            base = curves[curve]
            scenario[curve] = type(base)(as_of=base.as_of, dates=base.dates, zero_rates=base.zero_rates + zeros,
                                         interpolation=base.interpolation, name=base.name)
        out.append(scenario)
    return list(shifts), out


def _scenario_rows(path: Path) -> tuple[list[list[str]], list[str]]:
    """A scenario file's rows of text (its header first) and where each is (``line 3``, a Parquet file's ``row 2``)."""
    from ..io.parquet import is_parquet, read_text_rows

    if not path.exists():
        raise InputError([(None, "--scenarios", f"{path}: no such file")])
    if is_parquet(path):  # the same columns, as a Parquet table
        rows = read_text_rows(path)
        return rows, ["header", *(f"row {k}" for k in range(len(rows) - 1))]
    rows, ends = read_rows(path, "--scenarios")
    return rows, [f"line {line}" for line in ends]


def _cell_problems(where: str, column: str, name: str, curve: str, days: str, value: str, names: Sequence[str],
                   replacing: bool) -> list[tuple[int | None, str, str]]:
    """What is wrong with a scenario file's row (its cells stripped; ``where``: the file and the line), each
    problem naming its column."""
    problems: list[tuple[int | None, str, str]] = []
    if not name:
        problems.append((None, "scenario", f"{where}: scenario is empty (each row names its scenario)"))
    if curve not in names:
        problems.append((None, "curve", f"{where}: no curve named {_shown(curve)} (curves: {', '.join(names)})"))
    if not (days in ("", "*") and not replacing):
        try:
            day = int(days)
        except ValueError:
            every = "" if replacing else ", or empty or * for every pillar"
            problems.append((None, "days", f"{where}: days must be a whole number of days{every}, got {_shown(days)}"))
        else:
            if not 0 <= day <= MAX_DAYS:
                problems.append((None, "days", f"{where}: days must be in 0..{MAX_DAYS}, got {_shown(days)}"))
    try:
        number = float(value)
    except ValueError:
        problems.append((None, column, f"{where}: {column} must be a number, got {_shown(value)}"))
    else:
        if not math.isfinite(number):
            problems.append((None, column, f"{where}: {column} must be a finite number, got {_shown(value)}"))
    return problems


def _shown(cell: str, limit: int = 60) -> str:
    """A cell as a message quotes it, a long one cut to its first ``limit`` characters."""
    return repr(cell) if len(cell) <= limit else f"{cell[:limit]!r}... ({len(cell)} characters)"


__all__ = ["CurveSet", "CurveShift", "Scenario", "SigmaShift", "SpreadShift", "read_dated_scenarios",
           "read_scenarios", "scenario_market", "shifted"]
