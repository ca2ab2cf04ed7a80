"""The Hull-White trinomial tree's math, defined once for NumPy: its constants and limits, conventions, geometry,
probabilities, work (the model's: the instruments' validation bounds a tree by it, the lattice and the engines build
on it; formerly ``trinom/lattice/geometry.py``, and ``trinom.lattice.geometry`` is the same module).

Two rounding conventions are a parameter of the lattice (:class:`Convention`):

* ``THESIS`` — the thesis' sequential pricer (docs/model.md): 365-day years, ``n = int(steps *
  ceil(365 / term_unit) * T)``, every constant computed in the working precision ``dtype``, the
  probabilities' ``3 (j M)``. float32 and float64 results match the thesis' outputs.
* ``PAPER`` — the ARRAY'21 paper's bond pricer (docs/paper-instrument.md §2-§3): 360-day years,
  ``n = ceil(...)``, the tree's shape and ``dr`` in float64 with the C library's ``exp``, the reals
  rounded to the working type, the probabilities' ``(3 j) M``. It reproduces ``out64``/``out32``.

The constants are defined once for Python (:mod:`trinom.lattice.constants` gathers them with the instruments' own);
the same numbers are defined once in Futhark (``fut/constants.fut``) and once in CUDA (``cuda/trinom_constants.h``),
and ``tests/test_constants.py`` checks that the three agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

import numpy as np
import numpy.typing as npt

# --- constants and limits ------------------------------------------------------------------------------
#: Days in a year: a term unit of 365 days means yearly terms (``ceil(DAYS_IN_YEAR / term_unit)``).
DAYS_IN_YEAR: Final[int] = 365
#: Hull-White's bound on the tree's half width: ``jmax = int(JMAX_FACTOR / M) + 1``, ``M = exp(-a dt) - 1``.
JMAX_FACTOR: Final[float] = -0.184
#: The largest Hull-White sigma accepted: an absolute short-rate volatility of 100 percentage points a year (the
#: desk's are about 0.01). Beyond it the trees' values leave the floating-point range, and the reformulated kernels
#: would return 0 where the reference overflows.
SIGMA_LIMIT: Final[float] = 1.0
#: Default limit on a tree's width (``2 jmax + 1``); wider trees are rejected as bad input.
DEFAULT_MAX_WIDTH: Final[int] = 65535
#: Default limit on a tree's number of time steps (its height less one): with the width limit it bounds
#: a tree's memory and work, checked before any pricing. The paper's file format stores steps as uint16.
DEFAULT_MAX_STEPS: Final[int] = 65535
#: Days in a year for bonds (the ARRAY'21 paper's instrument, docs/paper-instrument.md): a term unit of 360 days is
#: one year (``ceil(BOND_DAYS_IN_YEAR / term_unit)``).
BOND_DAYS_IN_YEAR: Final[int] = 360
#: Spreads are given in percent: the per-step OAS factor is ``exp(-(spread / SPREAD_UNIT) dt)``.
SPREAD_UNIT: Final[float] = 100.0


class Convention(IntEnum):
    """Whose rounding conventions a tree follows (a per-tree parameter of the lattice)."""

    THESIS = 0  #: the thesis' options on zero-coupon bonds
    PAPER = 1  #: the ARRAY'21 paper's coupon bonds


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


def probability_table(j: np.ndarray, M: np.ndarray, dtype: npt.DTypeLike = np.float64,
                      convention: Convention = Convention.THESIS) -> dict[str, np.ndarray]:
    """The nine branching probabilities of node ``j`` for each case (Hull-White Exhibits 1A/1B/1C).

    Keys ``pu_a``, ``pm_a``, ``pd_a`` (interior, to j+1, j, j-1), ``*_b`` (bottom edge ``j = -jmax``:
    to j+2, j+1, j) and ``*_c`` (top edge ``j = jmax``: to j, j-1, j-2); ``pu`` always goes to the
    highest destination. Arrays broadcast; ``j*j*M*M`` is evaluated left to right. The conventions
    differ in rounding only: the thesis computes its constants (``1/6``...) in ``dtype`` and
    ``3 (j M)``, the paper rounds double constants to ``dtype`` and computes ``(3 j) M``.
    """
    real = np.dtype(dtype).type
    j = np.asarray(j)
    M = np.asarray(M).astype(real)
    jjMM = ((j * j).astype(real) * M) * M
    jM = j.astype(real) * M
    if convention == Convention.THESIS:
        one, two, three, six, seven, half = real(1), real(2), real(3), real(6), real(7), real(0.5)
        sixth, two_thirds, minus_third, seven_sixths = one / six, two / three, -one / three, seven / six
        two_jM, three_jM = two * jM, three * jM
    else:
        half = real(0.5)
        sixth, two_thirds = real(1.0 / 6.0), real(2.0 / 3.0)
        minus_third, seven_sixths = real(-1.0 / 3.0), real(7.0 / 6.0)
        two_jM, three_jM = (2 * j).astype(real) * M, (3 * j).astype(real) * M
    return {
        "pu_a": sixth + (jjMM + jM) * half, "pm_a": two_thirds - jjMM, "pd_a": sixth + (jjMM - jM) * half,
        "pu_b": sixth + (jjMM - jM) * half, "pm_b": (minus_third - jjMM) + two_jM,
        "pd_b": seven_sixths + (jjMM - three_jM) * half,
        "pu_c": seven_sixths + (jjMM + three_jM) * half, "pm_c": (minus_third - jjMM) - two_jM,
        "pd_c": sixth + (jjMM + jM) * half,
    }


def probabilities(j: np.ndarray, M: np.ndarray, jmax: np.ndarray, dtype: npt.DTypeLike = np.float64,
                  convention: Convention = Convention.THESIS):
    """Branching probabilities ``(pu, pm, pd)`` of node ``j``: case B at ``j == -jmax``, C at ``j == jmax``,
    A elsewhere (see :func:`probability_table`)."""
    p = probability_table(j, M, dtype, convention)
    j = np.asarray(j)
    bottom, top = j == -jmax, j == jmax
    return tuple(np.where(bottom, p[f"{k}_b"], np.where(top, p[f"{k}_c"], p[f"{k}_a"])) for k in ("pu", "pm", "pd"))


def work(n: npt.ArrayLike, jmax: npt.ArrayLike) -> np.ndarray:
    """Node updates of both passes per option: ``2 * sum_{i<n} (2 min(i, jmax) + 1)`` (docs/model.md §1.11)."""
    n = np.asarray(n, dtype=np.int64)
    jmax = np.asarray(jmax, dtype=np.int64)
    k = np.minimum(n, jmax + 1)  # steps i < k still grow: 2i+1 nodes each
    grow = k * k  # sum_{i<k} (2i+1)
    flat = (n - k) * (2 * jmax + 1)
    return 2 * (grow + flat)


# --- the paper's convention (coupon bonds) ---------------------------------------------------------------
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
    return _distinct(_EXP, x)


def libm_log(x: npt.ArrayLike) -> np.ndarray:
    """``log`` of the C library, element by element, in float64 (see :func:`libm_exp`)."""
    return _distinct(_LOG, x)


def _distinct(function: Any, x: npt.ArrayLike) -> np.ndarray:
    """``function`` (a NumPy ufunc of Python's) of every element of ``x``, called once per distinct value: a book's
    trees share their few ``a``, ``dt`` and spreads."""
    values = np.asarray(x, dtype=np.float64)
    if values.size < 64:
        return function(values).astype(np.float64)
    unique, inverse = np.unique(values, return_inverse=True)
    return function(unique).astype(np.float64)[inverse.reshape(values.shape)]


def _c_exp(x: float) -> float:
    """The C library's ``exp``, which returns inf where Python's raises OverflowError."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _c_log(x: float) -> float:
    """The C library's ``log``: -inf at 0, NaN below (Python raises ValueError)."""
    try:
        return math.log(x)
    except ValueError:
        return -math.inf if x == 0 else math.nan


_EXP = np.frompyfunc(_c_exp, 1, 1)
_LOG = np.frompyfunc(_c_log, 1, 1)


def _to_int(x: np.ndarray) -> np.ndarray:
    """Truncate toward zero; NaN, inf and huge values become -1 (validation reports them)."""
    ok = np.isfinite(x) & (np.abs(x) < 2**40)
    return np.where(ok, np.where(ok, x, 0), -1).astype(np.int64)
