"""Hull-White tree geometry and branching probabilities (the model's formulas, once, in NumPy).

Every formula follows the thesis' sequential pricer (model spec §1.3-1.4) operation for
operation, in the working precision ``dtype``, so that float32 results match the thesis'
float32 outputs too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .constants import DAYS_IN_YEAR, JMAX_FACTOR


@dataclass(frozen=True)
class TreeGeometry:
    """Per-option tree constants (arrays of one length, one entry per option)."""

    n: np.ndarray  #: number of time steps (the tree's height is ``n + 1``)
    dt: np.ndarray  #: time step in years
    dr: np.ndarray  #: rate step
    M: np.ndarray  #: ``exp(-a dt) - 1``
    jmax: np.ndarray  #: half width: nodes ``j`` in ``-jmax..jmax``
    expiry_step: np.ndarray  #: the step where the payoff applies: ``int(expiry / dt)``

    @property
    def width(self) -> np.ndarray:
        """Tree width ``2 jmax + 1``."""
        return 2 * self.jmax + 1

    @property
    def height(self) -> np.ndarray:
        """Tree height ``n + 1`` (levels including the root)."""
        return self.n + 1


def tree_geometry(
    maturity: npt.ArrayLike,
    expiry: npt.ArrayLike,
    term_unit: npt.ArrayLike,
    term_steps: npt.ArrayLike,
    a: npt.ArrayLike,
    sigma: npt.ArrayLike,
    dtype: npt.DTypeLike = np.float64,
) -> TreeGeometry:
    """Tree constants of each option, computed in ``dtype`` as the thesis does.

    >>> g = tree_geometry([9.0], [3.0], [365], [12], [0.1], [0.01])
    >>> int(g.width[0]), int(g.height[0])
    (47, 109)
    """
    real = np.dtype(dtype).type
    T = np.asarray(maturity).astype(real)
    L = np.asarray(expiry).astype(real)
    steps = np.asarray(term_steps).astype(real)
    a_ = np.asarray(a).astype(real)
    s = np.asarray(sigma).astype(real)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms_per_year = np.ceil(real(DAYS_IN_YEAR) / np.asarray(term_unit).astype(real))
        n = _trunc_int(steps * terms_per_year * T)
        dt = terms_per_year / steps
        V = s * s * (real(1) - np.exp(real(-2) * a_ * dt)) / (real(2) * a_)
        dr = np.sqrt(real(3) * V)
        M = np.exp(-a_ * dt) - real(1)
        jmax = _trunc_int(real(JMAX_FACTOR) / M) + 1
        expiry_step = _trunc_int(L / dt)
    return TreeGeometry(n=n, dt=dt, dr=dr, M=M, jmax=jmax, expiry_step=expiry_step)


def _trunc_int(x: np.ndarray) -> np.ndarray:
    """C's ``(int)x``: truncation toward zero; non-finite or huge values become -1."""
    x = np.asarray(x)
    ok = np.abs(x) < 2**62  # False for NaN and inf too
    if ok.all():
        return x.astype(np.int64)  # a cast truncates toward zero
    return np.where(ok, np.where(ok, x, 0).astype(np.int64), -1)


def probabilities(j: np.ndarray, M: np.ndarray, jmax: np.ndarray, dtype: npt.DTypeLike = np.float64):
    """Branching probabilities ``(pu, pm, pd)`` of node ``j`` (Hull-White Exhibits 1A/1B/1C).

    Case B at ``j == -jmax`` (branches to j+2, j+1, j), case C at ``j == jmax`` (to j, j-1,
    j-2), case A elsewhere (to j+1, j, j-1). ``pu`` always goes to the highest destination.
    Arrays broadcast; evaluation order is the thesis' (``j*j*M*M`` left to right).
    """
    real = np.dtype(dtype).type
    j = np.asarray(j)
    jr = j.astype(real)
    M = np.asarray(M).astype(real)
    jjMM = (j * j).astype(real) * M * M
    jM = jr * M
    one, two, three, six, seven, half = real(1), real(2), real(3), real(6), real(7), real(0.5)
    pu_a = one / six + (jjMM + jM) * half
    pm_a = two / three - jjMM
    pd_a = one / six + (jjMM - jM) * half
    pu_b = one / six + (jjMM - jM) * half
    pm_b = -one / three - jjMM + two * jM
    pd_b = seven / six + (jjMM - three * jM) * half
    pu_c = seven / six + (jjMM + three * jM) * half
    pm_c = -one / three - jjMM - two * jM
    pd_c = one / six + (jjMM + jM) * half
    bottom, top = j == -jmax, j == jmax
    pu = np.where(bottom, pu_b, np.where(top, pu_c, pu_a))
    pm = np.where(bottom, pm_b, np.where(top, pm_c, pm_a))
    pd = np.where(bottom, pd_b, np.where(top, pd_c, pd_a))
    return pu, pm, pd


def work(n: npt.ArrayLike, jmax: npt.ArrayLike) -> np.ndarray:
    """Node updates of both passes per option: ``2 * sum_{i<n} (2 min(i, jmax) + 1)`` (anchors.md)."""
    n = np.asarray(n, dtype=np.int64)
    jmax = np.asarray(jmax, dtype=np.int64)
    k = np.minimum(n, jmax + 1)  # steps i < k still grow: 2i+1 nodes each
    grow = k * k  # sum_{i<k} (2i+1)
    flat = (n - k) * (2 * jmax + 1)
    return 2 * (grow + flat)
