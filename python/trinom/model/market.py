"""The market an engine prices a book in: named yield curves along a scenario axis.

A :class:`Market` holds one set of named curves per scenario (``scenarios[s][name]``) and, per
scenario, a move of every tree's volatility (``sigma_shifts[s]``, added to sigma) and of every bond's
spread (``spread_shifts[s]``, percent, added to the spread). :func:`trinom.price` builds a market of
one scenario from what the user passes; scenario grids (trinom.scenarios: shifted, bumped or
replaced curves, sigma and spread moves) fill the axis. Every engine returns prices of shape
``(scenarios, len(book))``.

>>> import trinom
>>> market = Market.of({"EUR": trinom.YieldCurve([0.03], [365]), "USD": trinom.YieldCurve([0.04], [365])})
>>> market.names, len(market)
(('EUR', 'USD'), 1)

Curve names are strings, kept exactly as given (``"00"`` and ``"0"`` are two names); a sequence of curves
is named by position (``"0"``, ``"1"``, ...) unless it is :class:`NamedCurves` (a bond file's curves, named
in its ``NAME.curves.csv``), whose names it keeps.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .curve import YieldCurve


class NamedCurves(tuple):
    """Yield curves with their names: a tuple of :class:`YieldCurve` (indexed by position, as before) whose
    ``names`` say what each is called; :meth:`Market.of` keeps them (a plain sequence is named ``0``, ``1``, ...).

    >>> curves = NamedCurves(["EUR", "00"], [YieldCurve([0.03], [365]), YieldCurve([0.04], [365])])
    >>> curves.names, Market.of(curves).names, len(curves)
    (('EUR', '00'), ('EUR', '00'), 2)
    """

    names: tuple[str, ...]

    def __new__(cls, names: Iterable[str], curves: Iterable[YieldCurve]) -> NamedCurves:
        names, curves = tuple(names), tuple(curves)
        problems = _name_problems(names)
        if len(names) != len(curves):
            problems.append((None, "curves", f"{len(names)} curve names for {len(curves)} curves"))
        problems += [(None, "curves", f"curve {name!r} must be a YieldCurve, got {type(curve).__name__}")
                     for name, curve in zip(names, curves, strict=False) if not isinstance(curve, YieldCurve)]
        if problems:
            raise InputError(problems)
        made = super().__new__(cls, curves)
        made.names = names
        return made

    def __getnewargs__(self) -> tuple[Any, ...]:  # type: ignore[override]
        return (self.names, tuple(self))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedCurves) and self.names == other.names and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self.names, tuple(self)))

    def __repr__(self) -> str:
        return f"NamedCurves({', '.join(f'{name!r}: {curve!r}' for name, curve in zip(self.names, self, strict=True))})"

    def as_dict(self) -> dict[str, YieldCurve]:
        """The curves by name, in order."""
        return dict(zip(self.names, self, strict=True))


def _name_problems(names: Sequence[object]) -> list[tuple[int | None, str, str]]:
    """Curve names that are not strings, or repeated."""
    problems: list[tuple[int | None, str, str]] = [
        (None, "curves", f"curve names must be strings, got {name!r} ({type(name).__name__})")
        for name in names if not isinstance(name, str)]
    repeated = sorted({name for name in names if isinstance(name, str) and names.count(name) > 1})
    if repeated:
        problems.append((None, "curves", f"curve names must be unique, got {', '.join(map(repr, repeated))} more "
                         "than once"))
    return problems


@dataclass(frozen=True)
class Market:
    """Named curves per scenario: ``scenarios[s]`` is a tuple of curves in the order of ``names``."""

    names: tuple[str, ...]
    scenarios: tuple[tuple[YieldCurve, ...], ...]
    #: Per scenario, added to every tree's sigma (empty: none).
    sigma_shifts: tuple[float, ...] = ()
    #: Per scenario, added to every bond's spread, in its unit (percent; empty: none).
    spread_shifts: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not self.names:
            raise InputError([(None, "curves", "a market needs at least one yield curve")])
        problems = _name_problems(list(self.names))
        if problems:
            raise InputError(problems)
        for s, curves in enumerate(self.scenarios):
            if len(curves) != len(self.names):
                raise InputError([(None, "curves", f"scenario {s} has {len(curves)} curves, expected one per name "
                                   f"({', '.join(self.names)})")])
        for field in ("sigma_shifts", "spread_shifts"):
            values = tuple(float(v) for v in getattr(self, field))
            if values and len(values) != len(self.scenarios):
                raise InputError([(None, field, f"{field} has {len(values)} entries, expected one per scenario "
                                   f"({len(self.scenarios)})")])
            if not all(np.isfinite(values)):
                raise InputError([(None, field, f"{field} must be finite numbers, got {list(values)}")])
            object.__setattr__(self, field, values if any(values) else ())

    @property
    def moves_trees(self) -> bool:
        """Whether a scenario moves sigma or the spread (beside the curves)."""
        return bool(self.sigma_shifts or self.spread_shifts)

    def sigma_shift(self, scenario: int) -> float:
        """What scenario ``scenario`` adds to sigma."""
        return self.sigma_shifts[scenario] if self.sigma_shifts else 0.0

    def spread_shift(self, scenario: int) -> float:
        """What scenario ``scenario`` adds to a bond's spread (percent)."""
        return self.spread_shifts[scenario] if self.spread_shifts else 0.0

    def __len__(self) -> int:
        """The number of scenarios."""
        return len(self.scenarios)

    @property
    def curves(self) -> tuple[YieldCurve, ...]:
        """The curves of the first (base) scenario, in the order of ``names``."""
        return self.scenarios[0]

    def index(self, name: str) -> int:
        """The position of curve ``name`` (an :class:`InputError` naming the known curves if absent)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise InputError([(None, "curve", f"no yield curve named {name!r} (curves: {', '.join(self.names)})")]) from None

    def scenario(self, scenario: int) -> Market:
        """Scenario ``scenario`` alone: a market of one scenario, its curves and moves."""
        return Market(self.names, (self.scenarios[scenario],),
                      sigma_shifts=(self.sigma_shift(scenario),) if self.sigma_shifts else (),
                      spread_shifts=(self.spread_shift(scenario),) if self.spread_shifts else ())

    def aligned(self, names: Sequence[str], scenario: int = 0) -> tuple[YieldCurve, ...]:
        """The curves of ``scenario`` in the order of ``names`` (a book's ``curve_names``)."""
        return tuple(self.scenarios[scenario][self.index(name)] for name in names)

    @classmethod
    def of(cls, curves: CurvesLike = None) -> Market:
        """One scenario from a curve (named ``default``), a sequence (named ``0``, ``1``, ...), curves with their
        names (:class:`NamedCurves`), a mapping of names to curves (names are strings, kept as given; a whole
        number ``k`` is the name ``str(k)``), or a market (returned as it is); ``None``: the thesis curve."""
        if isinstance(curves, Market):
            return curves
        if curves is None:
            return cls(("default",), ((YieldCurve.thesis(),),))
        if isinstance(curves, YieldCurve):
            return cls(("default",), ((curves,),))
        table = _curve_table(curves)
        if table is not None:
            return cls(("default",), ((table,),))
        if isinstance(curves, NamedCurves):
            return cls(curves.names, (tuple(curves),))
        if isinstance(curves, Mapping):
            named = _named(curves)
        elif isinstance(curves, Sequence) and not isinstance(curves, (str, bytes)):
            named = {str(k): v for k, v in enumerate(curves)}
        else:
            raise InputError([(None, "curves", f"curves must be a YieldCurve, a sequence or mapping of them, or a "
                               f"Market; got {type(curves).__name__}")])
        for name, curve in named.items():
            curve = _curve_table(curve) or curve
            if not isinstance(curve, YieldCurve):
                dated = type(curve).__name__ == "DatedCurve"  # dated trades take their curves by name
                raise InputError([(None, "curves", f"curve {name!r} must be a YieldCurve (or a table with columns "
                                   f"days and rate), got {type(curve).__name__}" + (
                                       ": dated curves are given by the names the trades use, as a mapping "
                                       "({'EUR': curve})" if dated else ""))])
            named[name] = curve
        return cls(tuple(named), (tuple(named.values()),))


def _named(curves: Mapping[Any, Any]) -> dict[str, Any]:
    """A mapping's curves under their names: a string as it is, a whole number as its digits; any other key, or
    two keys of one name (``0`` and ``"0"``), is an :class:`InputError`."""
    names = [str(int(key)) if isinstance(key, numbers.Integral) and not isinstance(key, bool) else key
             for key in curves]
    problems = _name_problems(names)
    if problems:
        raise InputError(problems)
    return dict(zip(names, curves.values(), strict=True))


def _curve_table(value: object) -> YieldCurve | None:
    """A curve from a table with columns ``days`` and ``rate`` (a DataFrame or a mapping), else None."""
    if hasattr(value, "columns") and hasattr(value, "to_numpy"):
        columns = {str(c) for c in value.columns}  # type: ignore[attr-defined]
    elif isinstance(value, Mapping):
        columns = {str(k) for k in value}
    else:
        return None
    if columns != {"days", "rate"}:
        return None
    return YieldCurve(value["rate"], value["days"])  # type: ignore[index]


#: What :meth:`Market.of` accepts: a curve, a sequence or a mapping of curves, a market, or None.
CurvesLike = YieldCurve | Sequence[YieldCurve] | NamedCurves | Mapping[str, YieldCurve] | Market | None
