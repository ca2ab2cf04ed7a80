"""Volatility surfaces: a curve's at-the-money swaption matrix (:class:`VolSurface`, built from :class:`VolQuotes`)
looked up at any (expiry, tenor) in years: bilinear between nodes, flat outside, one kind per curve, a full grid.

``trinom.model.quotes.VolSurface`` is this class; ``read_vol_surface`` (a ``vols.csv`` or Parquet file's surface) is
:func:`trinom.io.quote_files.read_vol_surface`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..conventions.names import Problem
from ..errors import InputError
from .periods import add_period
from .vol_quotes import VolQuotes, as_vol_quotes


@dataclass(frozen=True, eq=False)
class SurfaceGrid:
    """One curve's at-the-money swaption volatilities on a full ``expiry x tenor`` grid.

    Attributes:
      expiry, tenor: the grid's axes in ACT/365F years (ascending): ``(as_of + period - as_of) / 365``.
      vol: ``(expiries, tenors)``; kind: ``normal`` or ``lognormal``; shift: the lognormal shift (0 for normal).
      expiry_labels, tenor_labels: the periods as quoted (the first spelling of each).
    """

    expiry: np.ndarray
    tenor: np.ndarray
    vol: np.ndarray
    kind: str
    shift: float
    expiry_labels: tuple[str, ...]
    tenor_labels: tuple[str, ...]

    def lookup(self, expiry: np.ndarray, tenor: np.ndarray) -> np.ndarray:
        """Bilinear in expiry and tenor (years), flat outside the grid."""
        i, u = _axis_weights(self.expiry, expiry)
        j, w = _axis_weights(self.tenor, tenor)
        v = self.vol
        i1 = np.minimum(i + 1, v.shape[0] - 1)
        j1 = np.minimum(j + 1, v.shape[1] - 1)
        return ((1.0 - u) * ((1.0 - w) * v[i, j] + w * v[i, j1])
                + u * ((1.0 - w) * v[i1, j] + w * v[i1, j1]))


def _axis_weights(grid: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ``grid`` holding each ``x`` (clamped to the grid: flat extrapolation) and the weight of its
    upper end (0 at the lower node, 1 at the upper)."""
    x = np.clip(np.asarray(x, dtype=np.float64), grid[0], grid[-1])
    if grid.size == 1:
        return np.zeros(x.shape, dtype=np.int64), np.zeros(x.shape)
    i = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
    return i, (x - grid[i]) / (grid[i + 1] - grid[i])


@dataclass(frozen=True, eq=False)
class VolSurface:
    """At-the-money swaption volatility matrices, one per curve, looked up at any (expiry, tenor) in years.

    A curve's quotes (``curve, expiry, tenor, vol, kind[, shift]``) are its grid's nodes at the ACT/365F year
    fractions of their periods from the as-of date: ``(as_of + expiry - as_of) / 365`` and ``(as_of + tenor -
    as_of) / 365`` (``6M`` and ``1Y`` from 2025-01-02: 181/365 and 1). :meth:`vol` interpolates bilinearly in
    expiry and tenor between the four nodes around a point and is flat outside the grid (an expiry before the
    first, or a tenor beyond the last, takes the edge's volatilities). A node is returned exactly.

    Rules, each an :class:`~trinom.InputError` naming the quotes (file and line): one kind per curve (normal or
    lognormal: a curve mixing them is refused, naming the rows of the rarer kind) and one shift per curve; at-the-money
    swaption quotes only (a strike, a cap or a floor is refused); each (expiry, tenor) once (``12M`` and ``1Y`` are
    the same); and a full grid: every expiry of a curve quoted at every tenor of that curve (a missing node is
    refused, naming it: fill the matrix rather than have trinom invent a volatility). The quotes' ``frequency``,
    ``day_count`` and ``weight`` do not enter a surface.

    >>> quotes = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "1Y", "5Y", "5Y"], tenor=["5Y", "10Y", "5Y", "10Y"],
    ...                                 vol=[0.0090, 0.0080, 0.0070, 0.0060], kind="normal")
    >>> surface = VolSurface.from_quotes(quotes, as_of="2025-01-02")
    >>> surface.grids["EUR"].expiry.round(4).tolist(), surface.grids["EUR"].tenor.round(4).tolist()
    ([1.0, 5.0027], [5.0027, 10.0055])
    >>> surface.vol(curve="EUR", expiry=[1.0, 3.0, 20.0], tenor=[5.0027, 7.5, 1.0]).round(5).tolist()
    [0.009, 0.0075, 0.007]
    """

    as_of: np.datetime64
    grids: dict[str, SurfaceGrid]

    @property
    def curve_names(self) -> tuple[str, ...]:
        return tuple(self.grids)

    def kind(self, curve: str) -> str:
        """The volatility kind of ``curve``'s matrix."""
        return self._grid(curve).kind

    def shift(self, curve: str) -> float:
        """The lognormal shift of ``curve``'s matrix (0 for normal)."""
        return self._grid(curve).shift

    def _grid(self, curve: str) -> SurfaceGrid:
        if curve not in self.grids:
            if not curve and len(self.grids) == 1:
                return next(iter(self.grids.values()))
            raise InputError([(None, "curve", f"no volatility matrix for curve {curve!r} (the surface has "
                               f"{', '.join(map(repr, self.grids)) or 'none'})")])
        return self.grids[curve]

    def has(self, curve: str) -> bool:
        """Whether ``curve`` has a matrix (an empty name: the only one)."""
        return curve in self.grids or (not curve and len(self.grids) == 1)

    def vol(self, *, curve: npt.ArrayLike, expiry: npt.ArrayLike, tenor: npt.ArrayLike) -> np.ndarray:
        """Volatilities at ``expiry`` and ``tenor`` (ACT/365F years; arrays broadcast) on each point's ``curve``
        (a name, or one per point), bilinear inside each curve's grid and flat outside."""
        e, t = np.broadcast_arrays(np.asarray(expiry, dtype=np.float64), np.asarray(tenor, dtype=np.float64))
        names = np.broadcast_to(np.asarray(curve, dtype=object), e.shape)
        out = np.full(e.shape, np.nan)
        distinct, inverse = np.unique(names.reshape(-1).astype(str), return_inverse=True)
        flat_e, flat_t, flat_out = e.reshape(-1), t.reshape(-1), out.reshape(-1)
        for k, name in enumerate(distinct.tolist()):
            mine = inverse == k
            flat_out[mine] = self._grid(name).lookup(flat_e[mine], flat_t[mine])
        return flat_out.reshape(e.shape)

    def to_frame(self) -> Any:
        """The nodes: ``curve, expiry, tenor, expiry_years, tenor_years, vol, kind, shift``."""
        import pandas as pd

        rows = []
        for name, g in self.grids.items():
            for i, e in enumerate(g.expiry_labels):
                for j, t in enumerate(g.tenor_labels):
                    rows.append((name, e, t, float(g.expiry[i]), float(g.tenor[j]), float(g.vol[i, j]), g.kind,
                                 g.shift))
        return pd.DataFrame(rows, columns=["curve", "expiry", "tenor", "expiry_years", "tenor_years", "vol", "kind",
                                           "shift"])

    @classmethod
    def from_quotes(cls, quotes: VolQuotes | str | Path | Any, *, as_of: object) -> VolSurface:
        """The surface of ``quotes`` (:class:`VolQuotes`, a ``vols.csv`` / Parquet path, or a DataFrame of its
        columns) as of ``as_of`` (see the class's rules)."""
        from ..conventions.dates import as_dates, to_days

        quotes = as_vol_quotes(quotes)
        day, problems = to_days([as_of], field="as_of")
        if problems:
            raise InputError([(None, "as_of", f"the as-of date {as_of!r} is not a date (YYYY-MM-DD)")])
        start = as_dates(day)[0]
        n = len(quotes)
        base = np.full(n, start, dtype="datetime64[D]")
        expiry_years = (add_period(base, quotes.expiry_months, quotes.expiry_days) - base).astype(np.int64) / 365.0
        tenor_years = (add_period(base, quotes.tenor_months, quotes.tenor_days) - base).astype(np.int64) / 365.0
        where = quotes.where
        problems = []
        for k in np.flatnonzero(quotes.instrument != "swaption"):
            problems.append((int(k), "instrument", f"{where[k]}: a volatility surface takes swaption quotes, this one "
                             f"is a {quotes.instrument[k]}"))
        for k in np.flatnonzero(~np.isnan(quotes.strike)):
            problems.append((int(k), "strike", f"{where[k]}: a volatility surface takes at-the-money quotes, this one "
                             f"has strike {quotes.strike[k]:g}"))
        for k in np.flatnonzero(quotes.tenor_from != "expiry"):
            problems.append((int(k), "tenor_from", f"{where[k]}: a volatility surface's tenor is the swap's length "
                             f"from the expiry; tenor_from {quotes.tenor_from[k]} is for caps"))
        grids: dict[str, SurfaceGrid] = {}
        for name in dict.fromkeys(quotes.curve.tolist()):
            rows = np.flatnonzero(quotes.curve == name)
            problems += _one_value(quotes, rows, name, "kind", quotes.kind, lambda v: str(v))
            problems += _one_value(quotes, rows, name, "shift", quotes.shift, lambda v: f"{v:g}")
            e_axis, e_index = np.unique(expiry_years[rows], return_inverse=True)
            t_axis, t_index = np.unique(tenor_years[rows], return_inverse=True)
            node = e_index * t_axis.size + t_index
            seen: dict[int, int] = {}
            for k, key in zip(rows.tolist(), node.tolist(), strict=True):
                if key in seen:
                    first = seen[key]
                    problems.append((k, "tenor", f"{where[k]}: curve {name!r} has expiry {quotes.expiry[k]}, tenor "
                                     f"{quotes.tenor[k]} already at {where[first]}"))
                else:
                    seen[key] = k
            e_labels = tuple(str(quotes.expiry[rows[np.argmax(e_index == i)]]) for i in range(e_axis.size))
            t_labels = tuple(str(quotes.tenor[rows[np.argmax(t_index == j)]]) for j in range(t_axis.size))
            missing = [(i, j) for i in range(e_axis.size) for j in range(t_axis.size) if i * t_axis.size + j not in seen]
            for i, j in missing:
                problems.append((None, "tenor", f"curve {name!r}: the volatility matrix has no quote at expiry "
                                 f"{e_labels[i]}, tenor {t_labels[j]}: its expiries ({', '.join(e_labels)}) and "
                                 f"tenors ({', '.join(t_labels)}) must form a full grid"))
            vol = np.full((e_axis.size, t_axis.size), np.nan)
            vol[e_index, t_index] = quotes.vol[rows]
            grids[str(name)] = SurfaceGrid(expiry=e_axis, tenor=t_axis, vol=vol, kind=str(quotes.kind[rows[0]]),
                                           shift=float(quotes.shift[rows[0]]), expiry_labels=e_labels,
                                           tenor_labels=t_labels)
        if problems:
            raise InputError(sorted(problems, key=lambda p: -1 if p[0] is None else p[0]))
        return cls(as_of=start, grids=grids)


def _one_value(quotes: VolQuotes, rows: np.ndarray, curve: str, field: str, values: np.ndarray,
               show: Any) -> list[Problem]:
    """One problem per quote of ``rows`` whose ``field`` is not the curve's most common value (ties: the first
    quoted), naming a quote that has that value."""
    distinct, inverse, counts = np.unique(values[rows].astype(object if field == "kind" else np.float64),
                                          return_inverse=True, return_counts=True)
    if distinct.size <= 1:
        return []
    first = np.array([np.argmax(inverse == d) for d in range(distinct.size)])
    keep = int(sorted(range(distinct.size), key=lambda d: (-counts[d], first[d]))[0])
    other = quotes.where[rows[first[keep]]]
    word = "kinds" if field == "kind" else "shifts"
    return [(int(k), field, f"{quotes.where[k]}: curve {curve!r} mixes volatility {word}: this quote's {field} is "
             f"{show(values[k])}, {other}'s (and {int(counts[keep]) - 1} more) {show(distinct[keep])}; a surface "
             f"holds one {field} per curve")
            for k in rows[inverse != keep]]
