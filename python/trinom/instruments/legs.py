"""How trees add up to trades: a trade may lower to several trees (a swaption to a bond and the same bond with a
call, a cap to one option per caplet), each counted with a weight.

:class:`Legs` maps tree ``k`` to trade ``owner[k]`` with weight ``weight[k]``; a trade's value is the weighted sum of
its trees' values. Owners are ascending and every trade owns at least one tree, so a trade's trees are one run.
Prices, errors and problems of trees become those of their trades (a trade fails where any of its trees fails).

>>> import numpy as np
>>> legs = Legs(owner=np.array([0, 1, 1]), weight=np.array([1.0, 1.0, -1.0]))
>>> legs.combine(np.array([[10.0, 7.0, 2.0]])).tolist()
[[10.0, 5.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ..result import Prices


@dataclass(frozen=True, eq=False)
class Legs:
    """Tree ``k`` counts ``weight[k]`` times in trade ``owner[k]`` (owners ascending, every trade present)."""

    owner: np.ndarray
    weight: np.ndarray
    labels: np.ndarray | None = field(default=None)  #: per trade, what it is ("swaption", ...); None: the trees'

    def __post_init__(self) -> None:
        owner = np.asarray(self.owner, dtype=np.int64).reshape(-1)
        weight = np.asarray(self.weight, dtype=np.float64).reshape(-1)
        if owner.size != weight.size:
            raise ValueError(f"legs: {owner.size} owners for {weight.size} weights")
        steps = np.diff(owner)
        if owner.size and (owner[0] != 0 or np.any((steps != 0) & (steps != 1))):
            raise ValueError("legs: owners must run 0, 1, 2, ... in order, each trade owning at least one tree")
        object.__setattr__(self, "owner", owner)
        object.__setattr__(self, "weight", weight)

    @classmethod
    def one_each(cls, count: int) -> Legs:
        """Every trade one tree of weight 1."""
        return cls(owner=np.arange(count), weight=np.ones(count))

    @classmethod
    def of_counts(cls, counts: npt.ArrayLike, weight: npt.ArrayLike, labels: Sequence[str] | None = None) -> Legs:
        """Trade ``t`` owns the next ``counts[t]`` trees, weighted by ``weight``."""
        counts = np.asarray(counts, dtype=np.int64)
        return cls(owner=np.repeat(np.arange(counts.size), counts), weight=np.asarray(weight, dtype=np.float64),
                   labels=None if labels is None else np.asarray(labels, dtype=object))

    @property
    def trees(self) -> int:
        return int(self.owner.size)

    @property
    def trades(self) -> int:
        return int(self.owner[-1]) + 1 if self.owner.size else 0

    def is_identity(self) -> bool:
        """One tree of weight 1 per trade: nothing to combine."""
        return self.trees == self.trades and bool(np.all(self.weight == 1.0))

    def starts(self) -> np.ndarray:
        """The first tree of every trade."""
        return np.flatnonzero(np.concatenate(([True], self.owner[1:] != self.owner[:-1]))) if self.trees else \
            np.zeros(0, dtype=np.int64)

    def combine(self, values: np.ndarray) -> np.ndarray:
        """``(..., trees)`` values as ``(..., trades)``: each trade's weighted sum (NaN and inf propagate)."""
        if self.is_identity():
            return values
        weighted = values * self.weight.astype(values.dtype)
        return np.add.reduceat(weighted, self.starts(), axis=-1) if self.trees else weighted

    def errors(self, errors: np.ndarray) -> np.ndarray:
        """Per trade, the distinct messages of its trees joined by ``"; "`` (``""``: none)."""
        if self.is_identity():
            return errors
        out = np.full(self.trades, "", dtype=object)
        for k in np.flatnonzero(errors != ""):
            trade = self.owner[k]
            if errors[k] not in out[trade].split("; "):
                out[trade] = errors[k] if not out[trade] else f"{out[trade]}; {errors[k]}"
        return out

    def problems(self, problems: Sequence[tuple[int | None, str, str]]) -> tuple[tuple[int | None, str, str], ...]:
        """Tree problems as trade problems (rows renumbered, repeats dropped, in order)."""
        seen: dict[tuple[int | None, str, str], None] = {}
        for row, name, message in problems:
            seen.setdefault((None if row is None else int(self.owner[row]), name, message), None)
        return tuple(seen)

    def rows(self, found: dict[int, tuple[str, str]]) -> dict[int, tuple[str, str]]:
        """Per-tree ``{tree: (field, message)}`` as per-trade (a trade's first tree's entry)."""
        out: dict[int, tuple[str, str]] = {}
        for tree, entry in sorted(found.items()):
            out.setdefault(int(self.owner[tree]), entry)
        return out

    def prices(self, result: Prices) -> Prices:
        """A result per tree as a result per trade."""
        if self.is_identity() and self.labels is None:
            return result
        price = self.combine(result.price)
        accrued = self.combine(result.accrued)
        error = self.errors(np.asarray(result.error, dtype=object))
        failed = error != ""
        if failed.any():
            price = np.where(failed, np.nan, price)
        labels = self.labels if self.labels is not None else np.asarray(result.instrument)[self.starts()]
        return replace(result, price=price, clean=price - accrued, accrued=accrued, error=error, instrument=labels,
                       problems=self.problems(result.problems), notional=None)
