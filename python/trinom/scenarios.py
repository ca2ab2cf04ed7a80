"""Scenario curves: parallel and key-rate shifts of the zero curves, as a market's scenario axis (issue 14).

A trinom curve holds zero rates at pillar days, linear in days between pillars and flat beyond the first
and the last, so adding ``shift`` to one pillar's rate is exactly ORE's triangular key-rate bump: the full
shift at that pillar, falling linearly to nothing at its neighbours, flat beyond the end pillars. The
key-rate bumps of a curve sum to its parallel shift at every day.

>>> import trinom
>>> curve = trinom.YieldCurve([0.03, 0.04], [365, 730])
>>> shifted(curve, 1e-4).rates.round(6).tolist(), shifted(curve, 1e-4, pillar=1).rates.round(6).tolist()
([0.0301, 0.0401], [0.03, 0.0401])
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .curve import YieldCurve
from .errors import InputError
from .market import CurvesLike, Market


def shifted(curve: YieldCurve, shift: float, pillar: int | None = None) -> YieldCurve:
    """``curve`` with ``shift`` added to every zero rate (``pillar`` None) or to pillar ``pillar``'s only."""
    rates = np.array(curve.rates, dtype=np.float64)
    if pillar is None:
        rates += shift
    else:
        rates[pillar] += shift
    return YieldCurve(rates, curve.days)


@dataclass(frozen=True)
class CurveShift:
    """One scenario: ``shift`` added to the zero rates of curve ``curve`` (None: every curve), at every
    pillar (``pillar`` None: a parallel shift) or at one (a key-rate bump)."""

    shift: float
    curve: str | None = None
    pillar: int | None = None

    def apply(self, names: Sequence[str], curves: Sequence[YieldCurve]) -> tuple[YieldCurve, ...]:
        return tuple(shifted(c, self.shift, self.pillar) if self.curve in (None, name) else c
                     for name, c in zip(names, curves, strict=True))


def scenario_market(curves: CurvesLike, shifts: Sequence[CurveShift | None]) -> Market:
    """A market whose scenario ``s`` is the base curves moved by ``shifts[s]`` (None: the base itself)."""
    base = Market.of(curves)
    for shift in shifts:
        if shift is not None and shift.curve is not None:
            base.index(shift.curve)  # an unknown curve name is an error naming the known ones
    return Market(base.names, tuple(base.curves if s is None else s.apply(base.names, base.curves) for s in shifts))




def read_scenarios(path: str | Path, curves: CurvesLike) -> tuple[list[str], Market]:
    """A scenario file -> its scenario names (in file order) and the market of their curves.

    Two forms, told apart by the header: ``scenario,curve,days,shift`` (each row adds ``shift`` to the zero
    rate of ``curve`` at its pillar ``days``, or to every pillar where ``days`` is empty or ``*``; a
    scenario's rows add up) or ``scenario,curve,days,rate`` (the rows of a scenario and curve are that
    curve's points; curves a scenario does not name stay as they are). ``curve`` names a curve of
    ``curves`` (``default`` for a single one; a bond file's curves are ``0``, ``1``, ...). A bad cell is an
    :class:`InputError` naming the file and the line.
    """
    path = Path(path)
    base = Market.of(curves)
    if not path.exists():
        raise InputError([(None, "--scenarios", f"{path}: no such file")])
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    header = [cell.strip().lower() for cell in rows[0]] if rows else []
    if header not in (["scenario", "curve", "days", "shift"], ["scenario", "curve", "days", "rate"]):
        raise InputError([(None, "--scenarios", f"{path}: the header must be scenario,curve,days,shift or "
                           "scenario,curve,days,rate")])
    replacing = header[3] == "rate"
    order: list[str] = []
    moved: dict[str, list[YieldCurve]] = {}
    points: dict[tuple[str, str], list[tuple[int, float]]] = {}
    problems = []
    for line, row in enumerate(rows[1:], start=2):
        if not "".join(row).strip():
            continue
        where = f"{path} line {line}"
        if len(row) != 4:
            problems.append((None, "--scenarios", f"{where}: expected 4 cells, got {len(row)}"))
            continue
        name, curve, days, value = (cell.strip() for cell in row)
        if curve not in base.names:
            problems.append((None, "--scenarios", f"{where}: no curve named {curve!r} (curves: {', '.join(base.names)})"))
            continue
        try:
            number = float(value)
            day = None if days in ("", "*") and not replacing else int(days)
        except ValueError:
            problems.append((None, "--scenarios", f"{where}: days {days!r} and {header[3]} {value!r} must be numbers"))
            continue
        if name not in moved:
            order.append(name)
            moved[name] = list(base.curves)
        k = base.index(curve)
        if replacing:
            points.setdefault((name, curve), []).append((int(day), number))  # type: ignore[arg-type]
            continue
        pillar = None
        if day is not None:
            matches = np.flatnonzero(base.curves[k].days == day)
            if matches.size == 0:
                problems.append((None, "--scenarios", f"{where}: {day} is not a pillar of curve {curve!r} "
                                 f"(pillars: {', '.join(map(str, base.curves[k].days))})"))
                continue
            pillar = int(matches[0])
        moved[name][k] = shifted(moved[name][k], number, pillar)
    for (name, curve), pairs in points.items():
        days_list, rates = zip(*sorted(pairs), strict=True)
        try:
            moved[name][base.index(curve)] = YieldCurve(list(rates), list(days_list))
        except InputError as err:
            problems += [(None, "--scenarios", f"{path}: scenario {name!r}, curve {curve!r}: {p[2]}") for p in err.errors]
    if problems:
        raise InputError(problems)
    if not order:
        raise InputError([(None, "--scenarios", f"{path}: no scenario")])
    return order, Market(base.names, tuple(tuple(moved[name]) for name in order))


__all__ = ["CurveShift", "read_scenarios", "scenario_market", "shifted"]
