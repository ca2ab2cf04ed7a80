"""Tree geometry of the coupon-bond pricer (docs/paper-instrument.md §2), defined once for NumPy.

The bond pricer's geometry differs from the thesis' (``trinom.model``): years have 360 days,
the height is ``ceil(term_steps * u * maturity)``, and each bond carries an OAS factor ``g``.
The tree's shape (``n``, ``jmax``) is always computed in float64, so that float32 and float64
price the same tree; the reals follow the paper's float build (§9): ``V`` and ``dr`` in double,
``M``, ``mdrdt`` and ``g`` computed in double and rounded to the working type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..constants import BOND_DAYS_IN_YEAR, JMAX_FACTOR, SPREAD_UNIT


@dataclass(frozen=True)
class BondGeometry:
    """Per-bond tree constants; ``n``/``jmax`` int64, ``dt``/``M``/``mdrdt``/``g`` in the working type,
    ``dr`` float64."""

    n: np.ndarray
    jmax: np.ndarray
    dt: np.ndarray
    dr: np.ndarray
    M: np.ndarray
    mdrdt: np.ndarray
    g: np.ndarray


def bond_geometry(term_unit: np.ndarray, term_steps: np.ndarray, a: np.ndarray, sigma: np.ndarray,
                  maturity: np.ndarray, spread: np.ndarray, dtype: npt.DTypeLike = np.float64) -> BondGeometry:
    """The constants of §2 for every bond (arrays broadcast; bad rows give n = jmax = -1).

    >>> g = bond_geometry(np.array([360]), np.array([12]), np.array([0.1]), np.array([0.01]),
    ...                   np.array([9.0]), np.array([0.0]))
    >>> int(g.n[0]), int(g.jmax[0]), float(g.M[0])
    (108, 23, -0.008298707361124036)
    """
    real = np.dtype(dtype)
    with np.errstate(all="ignore"):
        tu = np.maximum(np.asarray(term_unit, dtype=np.int64), 1)
        u = np.ceil(float(BOND_DAYS_IN_YEAR) / tu.astype(np.float64))
        steps = np.maximum(np.asarray(term_steps, dtype=np.int64), 1).astype(np.float64)
        n = _to_int(np.ceil((steps * u) * np.asarray(maturity, dtype=np.float64)))
        dt64 = u / steps
        M64 = libm_exp(-np.asarray(a, dtype=np.float64) * dt64) - 1.0
        jmax = _to_int(np.trunc(JMAX_FACTOR / M64)) + 1
        jmax = np.where(jmax > 0, jmax, -1)
        dt = dt64.astype(real)
        a_r = np.asarray(a).astype(real)
        s_r = np.asarray(sigma).astype(real)
        # V and dr in double from the working-type inputs (exact for float64).
        V = (((s_r * s_r).astype(np.float64)) * (1.0 - libm_exp(((real.type(-2) * a_r) * dt).astype(np.float64)))
             / (real.type(2) * a_r).astype(np.float64))
        dr = np.sqrt(3.0 * V)
        M = (libm_exp(((-a_r) * dt).astype(np.float64)) - 1.0).astype(real)
        mdrdt = ((-dr) * dt.astype(np.float64)).astype(real)
        spread_r = np.asarray(spread).astype(real)
        g = libm_exp(((-(spread_r / real.type(SPREAD_UNIT))) * dt).astype(np.float64)).astype(real)
    return BondGeometry(n=n, jmax=jmax, dt=dt, dr=dr, M=M, mdrdt=mdrdt, g=g)


def libm_exp(x: npt.ArrayLike) -> np.ndarray:
    """``exp`` of the C library, element by element, in float64.

    NumPy's own vectorised ``exp`` differs from the C library's in the last bit for a few
    percent of arguments; the paper's outputs were made with the C library's.
    """
    return _EXP(np.asarray(x, dtype=np.float64)).astype(np.float64)


def libm_log(x: npt.ArrayLike) -> np.ndarray:
    """``log`` of the C library, element by element, in float64 (see :func:`libm_exp`)."""
    return _LOG(np.asarray(x, dtype=np.float64)).astype(np.float64)


_EXP = np.frompyfunc(math.exp, 1, 1)
_LOG = np.frompyfunc(math.log, 1, 1)


def _to_int(x: np.ndarray) -> np.ndarray:
    """Truncate toward zero; NaN, inf and huge values become -1 (validation reports them)."""
    ok = np.isfinite(x) & (np.abs(x) < 2**40)
    return np.where(ok, np.where(ok, x, 0), -1).astype(np.int64)


def bond_work(n: npt.ArrayLike, jmax: npt.ArrayLike) -> np.ndarray:
    """Node updates of both passes per bond (the thesis' work metric applied to bond trees)."""
    from ..model import work

    return work(n, jmax)
