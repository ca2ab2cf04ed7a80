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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .curve import YieldCurve
from .errors import InputError


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
        if len(set(self.names)) != len(self.names):
            raise InputError([(None, "curves", f"curve names must be unique, got {list(self.names)}")])
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

    def aligned(self, names: Sequence[str], scenario: int = 0) -> tuple[YieldCurve, ...]:
        """The curves of ``scenario`` in the order of ``names`` (a book's ``curve_names``)."""
        return tuple(self.scenarios[scenario][self.index(name)] for name in names)

    @classmethod
    def of(cls, curves: CurvesLike = None) -> Market:
        """One scenario from a curve (named ``default``), a sequence (named ``0``, ``1``, ...), a mapping of
        names to curves, or a market (returned as it is); ``None``: the thesis curve."""
        if isinstance(curves, Market):
            return curves
        if curves is None:
            return cls(("default",), ((YieldCurve.thesis(),),))
        if isinstance(curves, YieldCurve):
            return cls(("default",), ((curves,),))
        table = _curve_table(curves)
        if table is not None:
            return cls(("default",), ((table,),))
        if isinstance(curves, Mapping):
            named = {str(k): v for k, v in curves.items()}
        elif isinstance(curves, Sequence) and not isinstance(curves, (str, bytes)):
            named = {str(k): v for k, v in enumerate(curves)}
        else:
            raise InputError([(None, "curves", f"curves must be a YieldCurve, a sequence or mapping of them, or a "
                               f"Market; got {type(curves).__name__}")])
        for name, curve in named.items():
            curve = _curve_table(curve) or curve
            if not isinstance(curve, YieldCurve):
                raise InputError([(None, "curves", f"curve {name!r} must be a YieldCurve (or a table with columns "
                                   f"days and rate), got {type(curve).__name__}")])
            named[name] = curve
        return cls(tuple(named), (tuple(named.values()),))


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
CurvesLike = YieldCurve | Sequence[YieldCurve] | Mapping[str, YieldCurve] | Market | None
