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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .curve import YieldCurve
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


__all__ = ["CurveShift", "scenario_market", "shifted"]
