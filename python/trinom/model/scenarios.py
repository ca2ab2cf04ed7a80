"""Scenarios: parallel and key-rate shifts of the zero curves, replacement curves, and moves of sigma and
of the spread, as a market's scenario axis (issue 14). The pipeline prices them (``scenarios=``); their files are
:mod:`trinom.analytics.scenarios`' (also ``trinom.scenarios``).

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..checks import check_real, check_text, check_whole
from ..errors import InputError
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
    pillar (``pillar`` None: a parallel shift) or at one (a key-rate bump; with ``curve`` None, pillar
    ``pillar`` of every curve that has one: each instrument, on one curve, sees the bump of its own).
    ``shift`` is a finite number (1e-4 = 1 bp), ``curve`` a curve's name (a string) or None, ``pillar`` a
    whole number >= 0 or None; anything else is a ``TypeError`` or ``ValueError`` naming the argument."""

    shift: float
    curve: str | None = None
    pillar: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shift", check_real("CurveShift shift", self.shift))
        if self.curve is not None and not isinstance(self.curve, str):
            raise TypeError(f"CurveShift curve must be a curve's name (a string, e.g. {str(self.curve)!r}) or None, "
                            f"got {self.curve!r}")
        if self.pillar is not None:
            object.__setattr__(self, "pillar", check_whole("CurveShift pillar", self.pillar, minimum=0))

    def apply(self, names: Sequence[str], curves: Sequence[YieldCurve]) -> tuple[YieldCurve, ...]:
        return tuple(shifted(c, self.shift, self.pillar)
                     if self.curve in (None, name) and (self.pillar is None or self.pillar < len(c)) else c
                     for name, c in zip(names, curves, strict=True))


@dataclass(frozen=True)
class SigmaShift:
    """One scenario: ``shift`` added to every tree's sigma (vega's bump), the curves as they are (``shift``: a
    finite number)."""

    shift: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "shift", check_real("SigmaShift shift", self.shift))


@dataclass(frozen=True)
class SpreadShift:
    """One scenario: ``shift`` (percent, the unit of a bond's ``spread``) added to every bond's spread (``shift``:
    a finite number)."""

    shift: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "shift", check_real("SpreadShift shift", self.shift))


@dataclass(frozen=True)
class CurveSet:
    """One scenario: the named curves of ``curves`` replaced (a mapping of name, a string, to
    :class:`YieldCurve`; curves it does not name stay as they are)."""

    curves: Mapping[str, YieldCurve]

    def __post_init__(self) -> None:
        if not isinstance(self.curves, Mapping):
            raise TypeError(f"CurveSet curves must be a mapping of curve name to YieldCurve (e.g. {{'EUR': curve}}), "
                            f"got {type(self.curves).__name__}")
        for name, curve in self.curves.items():
            check_text("CurveSet curve name", name)
            if not isinstance(curve, YieldCurve):
                raise TypeError(f"CurveSet curve {name!r} must be a YieldCurve, got {type(curve).__name__}")
        object.__setattr__(self, "curves", dict(self.curves))

    def apply(self, names: Sequence[str], curves: Sequence[YieldCurve]) -> tuple[YieldCurve, ...]:
        return tuple(self.curves.get(name, c) for name, c in zip(names, curves, strict=True))


#: What a scenario may be: None (the base market), a curve shift, a replacement set, a sigma or spread move.
Scenario = CurveShift | CurveSet | SigmaShift | SpreadShift | None


def scenario_market(curves: CurvesLike, scenarios: Sequence[Scenario]) -> Market:
    """A market whose scenario ``s`` is the base market moved by ``scenarios[s]`` (None: the base itself).

    >>> import trinom
    >>> market = scenario_market(trinom.YieldCurve([0.03], [365]), [None, CurveShift(1e-4), SigmaShift(1e-4)])
    >>> len(market), market.sigma_shifts
    (3, (0.0, 0.0, 0.0001))
    """
    base = Market.of(curves)
    if base.moves_trees or len(base) != 1:
        raise InputError([(None, "scenarios", "scenarios move a market of one scenario; got one of "
                           f"{len(base)} scenarios")])
    sets, sigma, spread = [], [], []
    for k, scenario in enumerate(scenarios):
        moved = base.curves
        if isinstance(scenario, CurveShift):
            pillars = max(len(c) for c in base.curves)
            if scenario.curve is not None:  # an unknown curve name is an error naming the known ones
                pillars = len(base.curves[base.index(scenario.curve)])
            if scenario.pillar is not None and not 0 <= scenario.pillar < pillars:
                raise InputError([(None, "scenarios", f"scenario {k}: pillar {scenario.pillar} is not one of the "
                                   f"{pillars} pillars of {scenario.curve or 'the curves'}")])
            moved = scenario.apply(base.names, base.curves)
        elif isinstance(scenario, CurveSet):
            for name, curve in scenario.curves.items():
                base.index(name)
                if not isinstance(curve, YieldCurve):
                    raise InputError([(None, "scenarios", f"scenario {k}: curve {name!r} must be a YieldCurve, got "
                                       f"{type(curve).__name__}")])
            moved = scenario.apply(base.names, base.curves)
        elif scenario is not None and not isinstance(scenario, (SigmaShift, SpreadShift)):
            raise InputError([(None, "scenarios", f"scenario {k} must be None, a CurveShift, a CurveSet, a SigmaShift "
                               f"or a SpreadShift; got {type(scenario).__name__}")])
        sets.append(moved)
        sigma.append(scenario.shift if isinstance(scenario, SigmaShift) else 0.0)
        spread.append(scenario.shift if isinstance(scenario, SpreadShift) else 0.0)
    if not sets:
        raise InputError([(None, "scenarios", "scenarios must hold at least one scenario")])
    return Market(base.names, tuple(sets), sigma_shifts=tuple(sigma), spread_shifts=tuple(spread))
