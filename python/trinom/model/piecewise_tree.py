"""The Hull-White tree with a piecewise-constant sigma (issue 37, item 3): one grid for the whole tree, the branching
probabilities of each step matched to that step's own variance.

With ``a`` constant and sigma constant on each step (a piece's sigma applies to the steps that start in it), the
state ``x = r - alpha(t)`` moves over a step of length ``dt`` from ``x`` to mean ``x (1 + M)`` (``M = exp(-a dt) -
1``, the same on every step) with variance ``V_i = sigma_i^2 (1 - exp(-2 a dt)) / (2 a)``. The tree keeps Hull and
White's grid and branching (nodes ``j dx``, ``|j| <= jmax``; from node ``j`` to ``j + 1, j, j - 1`` inside, shifted
by one at the edges) and matches each step's first two moments with probabilities that depend on ``v_i = V_i /
dx^2``: with ``e`` the mean's distance from the middle successor in units of ``dx``,

    p_up = (v + e^2 + e) / 2,    p_mid = 1 - v - e^2,    p_down = (v + e^2 - e) / 2,

which are Hull and White's own (1/6 + ..., 2/3 - ..., 7/6 + ...) where ``v = 1/3``. Every probability is >= 0 when,
with ``E = jmax |M|`` (the edges' drift), ``E (1 - E) <= v <= 1 - (1 - E)^2`` (the interior's bounds are inside
these for ``E <= 1/2``). So one grid holds every piece of a tree whose ``(sigma_max / sigma_min)^2`` is at most
``(2 - E) / (1 - E)``: 2.22 (sigma within a factor 1.49) at Hull and White's own width (``E`` about 0.184), and up to
3 (a factor 1.73) where the tree is widened to ``E = 1/2`` (:func:`piecewise_shape`: the narrowest width that holds
the pieces; ``dx`` puts the largest sigma at the top of the range). Pieces further apart are refused (a grid that
changes between pieces would hold them: not built). A tree whose pieces are all one sigma is Hull and White's tree,
to the bit (:func:`piecewise_shape` gives it no pieces).

The forward pass fits ``alpha_i`` to the curve through the same probabilities, so a tree with pieces reprices the
curve's discount factors exactly, as the one-sigma tree does; the closed forms with the integrated variance
(:mod:`trinom.model.hull_white`, :class:`~trinom.model.sigma.Sigma`) are its limit as ``dt`` goes to 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

import numpy as np
import numpy.typing as npt

from .tree_geometry import JMAX_FACTOR, BondGeometry, libm_exp

#: The largest ``(sigma_max / sigma_min)^2`` of one tree's pieces (the grid widened to ``jmax |M| = 1/2``).
MAX_VARIANCE_RATIO: Final[float] = 3.0
#: The widest edge drift ``jmax |M|`` a tree with pieces is given.
MAX_EDGE_DRIFT: Final[float] = 0.5


@dataclass(frozen=True, eq=False)
class SigmaPieces:
    """Per tree, sigma as a step function of the tree's steps: the tree's own ``sigma`` up to its first piece, then
    piece ``k`` (``sigma[k]``) from step ``step[k]`` on, each tree's pieces ``offset[t]:offset[t + 1]`` with their
    steps ascending (> 0). A piece applies to the steps that start at or after its step.

    >>> pieces = SigmaPieces.of(counts=[0, 2], step=[10, 20], sigma=[0.012, 0.008])
    >>> pieces.offset.tolist(), pieces_of(pieces, np.array([0])), pieces_of(pieces, np.array([1])).step.tolist()
    ([0, 0, 2], None, [10, 20])
    """

    offset: np.ndarray
    step: np.ndarray
    sigma: np.ndarray

    @classmethod
    def of(cls, *, counts: npt.ArrayLike, step: npt.ArrayLike, sigma: npt.ArrayLike) -> SigmaPieces:
        count = np.asarray(counts, dtype=np.int64).reshape(-1)
        offset = np.zeros(count.size + 1, dtype=np.int64)
        np.cumsum(count, out=offset[1:])
        steps = np.asarray(step, dtype=np.int64).reshape(-1)
        values = np.asarray(sigma, dtype=np.float64).reshape(-1)
        for array in (offset, steps, values):
            array.setflags(write=False)
        return cls(offset=offset, step=steps, sigma=values)

    def __len__(self) -> int:
        return int(self.offset.size - 1)

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offset)

    def take(self, rows: np.ndarray) -> SigmaPieces:
        """The pieces of trees ``rows``, in that order."""
        counts = self.counts[rows]
        flat = np.concatenate([np.arange(self.offset[r], self.offset[r + 1]) for r in rows.tolist()]
                              or [np.zeros(0, dtype=np.int64)])
        return SigmaPieces.of(counts=counts, step=self.step[flat], sigma=self.sigma[flat])



def pieces_of(pieces: SigmaPieces | None, rows: np.ndarray) -> SigmaPieces | None:
    """The pieces of trees ``rows`` (in that order), None where none of them has any (one sigma a tree)."""
    if pieces is None:
        return None
    taken = pieces.take(rows)
    return taken if taken.step.size else None


def joined_pieces(parts: list[SigmaPieces | None], sizes: list[int]) -> SigmaPieces | None:
    """The pieces of consecutive parts of ``sizes`` trees each (a part's None: its trees have none), None where no
    part has any."""
    if all(part is None for part in parts):
        return None
    empty = np.zeros(0, dtype=np.int64)
    whole = [part if part is not None else SigmaPieces.of(counts=np.zeros(size, np.int64), step=empty, sigma=[])
             for part, size in zip(parts, sizes, strict=True)]
    return SigmaPieces.of(counts=np.concatenate([p.counts for p in whole]), step=np.concatenate([p.step for p in whole]),
                          sigma=np.concatenate([p.sigma for p in whole]))


@dataclass(frozen=True, eq=False)
class PiecewiseShape:
    """The grid and per-piece variances of trees with sigma pieces (:func:`piecewise_shape`).

    Attributes:
      jmax, dr: per tree (``rows``), its half width and grid step ``dx``.
      v: per tree, per piece (its own sigma's first, then each of ``pieces``' in order): ``V / dx^2``;
        ``v_offset``: tree ``k``'s are ``v[v_offset[k]:v_offset[k + 1]]``, and ``v_step`` their first steps
        (0 for the first).
      ratio: per tree, ``(sigma_max / sigma_min)^2`` over the pieces its steps use.
    """

    jmax: np.ndarray
    dr: np.ndarray
    v: np.ndarray
    v_offset: np.ndarray
    v_step: np.ndarray
    ratio: np.ndarray


def piecewise_shape(*, a: np.ndarray, sigma: np.ndarray, dt: np.ndarray, n: np.ndarray,
                    pieces: SigmaPieces) -> PiecewiseShape:
    """The grid (``jmax``, ``dx``) of each tree with pieces and its pieces' ``v``: Hull and White's width where it
    holds the pieces, else the narrowest that does (``jmax |M| = 1 - 1 / (ratio - 1)``, at most 1/2), and ``dx^2 =
    V_max / v_max`` (``v_max = 1/3`` at Hull and White's width: their own ``dx`` for the largest sigma; else the
    range's top ``1 - (1 - E)^2``). Pieces from the tree's last step on are left out. A ``ratio`` above
    :data:`MAX_VARIANCE_RATIO` gives ``jmax = -1`` (refused by validation).

    >>> pieces = SigmaPieces.of(counts=[2], step=[12, 24], sigma=[0.012, 0.008])
    >>> s = piecewise_shape(a=np.array([0.1]), sigma=np.array([0.01]), dt=np.array([1 / 12]), n=np.array([60]),
    ...                     pieces=pieces)
    >>> int(s.jmax[0]), round(float(s.ratio[0]), 4), np.round(s.v, 4).tolist()
    (25, 2.25, [0.2583, 0.3719, 0.1653])
    """
    a64 = np.asarray(a, dtype=np.float64)
    dt64 = np.asarray(dt, dtype=np.float64)
    count = len(pieces)
    base = np.asarray(sigma, dtype=np.float64)
    M = libm_exp(-a64 * dt64) - 1.0
    spread = (1.0 - libm_exp(-2.0 * a64 * dt64)) / (2.0 * a64)  # V / sigma^2
    jmax = np.empty(count, dtype=np.int64)
    dr = np.empty(count)
    ratio = np.empty(count)
    v_offset = np.zeros(count + 1, dtype=np.int64)
    v_parts, step_parts = [], []
    for k in range(count):
        lo, hi = int(pieces.offset[k]), int(pieces.offset[k + 1])
        steps = np.concatenate([[0], pieces.step[lo:hi]])
        values = np.concatenate([[base[k]], pieces.sigma[lo:hi]])
        used = steps < max(int(n[k]), 1)
        s_max, s_min = float(values[used].max()), float(values[used].min())
        ratio[k] = (s_max / s_min) ** 2
        standard = int(np.trunc(JMAX_FACTOR / M[k])) + 1
        edge = standard * -M[k]
        if ratio[k] * edge * (1.0 - edge) <= 1.0 / 3.0:  # Hull and White's width holds them at v_max = 1/3
            jmax[k], v_max = standard, 1.0 / 3.0
        elif ratio[k] <= MAX_VARIANCE_RATIO:
            wanted = min(1.0 - 1.0 / (ratio[k] - 1.0), MAX_EDGE_DRIFT)
            jmax[k] = int(np.ceil(wanted / -M[k]))
            edge = jmax[k] * -M[k]
            v_max = min(1.0 - (1.0 - edge) ** 2, 1.0 - (edge + M[k]) ** 2)  # the edges', the interior's bound
        else:
            jmax[k], v_max = -1, 1.0 / 3.0
        dr[k] = np.sqrt(s_max * s_max * spread[k] / v_max)
        v_parts.append(values[used] ** 2 * spread[k] / dr[k] ** 2)
        step_parts.append(steps[used])
        v_offset[k + 1] = v_offset[k] + int(used.sum())
    v = np.concatenate(v_parts) if v_parts else np.zeros(0)
    v_step = np.concatenate(step_parts).astype(np.int64) if step_parts else np.zeros(0, dtype=np.int64)
    return PiecewiseShape(jmax=jmax, dr=dr, v=v, v_offset=v_offset, v_step=v_step, ratio=ratio)


def piece_probabilities(j: np.ndarray, M: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """The nine branching probabilities of :func:`~trinom.model.tree_geometry.probability_table` (same keys and
    destinations) at a step whose ``V / dx^2`` is ``v`` (arrays broadcast; float64).

    >>> p = piece_probabilities(np.array([0, 3]), np.array(-0.05), np.array(1 / 3))
    >>> [round(float(p["pu_a"][0]), 6), round(float(p["pm_a"][0]), 6)]
    [0.166667, 0.666667]
    """
    jM = np.asarray(j, dtype=np.float64) * np.asarray(M, dtype=np.float64)
    jjMM = jM * jM
    half_v = 0.5 * np.asarray(v, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    return {
        "pu_a": half_v + (jjMM + jM) * 0.5, "pm_a": (1.0 - v) - jjMM, "pd_a": half_v + (jjMM - jM) * 0.5,
        "pu_b": half_v + (jjMM - jM) * 0.5, "pm_b": (-v - jjMM) + 2.0 * jM, "pd_b": (1.0 + half_v) + (jjMM - 3.0 * jM) * 0.5,
        "pu_c": (1.0 + half_v) + (jjMM + 3.0 * jM) * 0.5, "pm_c": (-v - jjMM) - 2.0 * jM, "pd_c": half_v + (jjMM + jM) * 0.5,
    }


def piecewise_geometry(geometry: BondGeometry, *, a: np.ndarray, sigma: np.ndarray, pieces: SigmaPieces,
                       dtype: npt.DTypeLike = np.float64) -> tuple[BondGeometry, PiecewiseShape]:
    """``geometry`` (:func:`~trinom.model.tree_geometry.bond_geometry` of the same trees) with the grid of the trees
    that have pieces (:func:`piecewise_shape`: ``jmax``, ``dr`` and ``mdrdt`` replaced), and their shape. A tree
    without pieces keeps its own to the bit."""
    real = np.dtype(dtype)
    rows = np.flatnonzero(pieces.counts > 0)
    shape = piecewise_shape(a=np.asarray(a)[rows], sigma=np.asarray(sigma)[rows],
                            dt=np.asarray(geometry.dt, dtype=np.float64)[rows], n=geometry.n[rows],
                            pieces=pieces.take(rows))
    jmax, dr, mdrdt = geometry.jmax.copy(), geometry.dr.copy(), geometry.mdrdt.copy()
    jmax[rows] = np.where(geometry.jmax[rows] > 0, shape.jmax, -1)
    dr[rows] = shape.dr
    mdrdt[rows] = ((-shape.dr) * np.asarray(geometry.dt[rows]).astype(np.float64)).astype(real)
    return replace(geometry, jmax=jmax, dr=dr, mdrdt=mdrdt), shape
