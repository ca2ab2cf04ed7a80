"""The reference pricer: the thesis' sequential algorithm, vectorised over options in NumPy.

It is the oracle every other backend is tested against. Each option's arithmetic is the
thesis' (docs/model.md §1.9) operation for operation, in float32 or float64, including the order
in which the forward step accumulates the three branches into a node. Only the alpha sum is
summed pairwise instead of left to right (a difference of a few ulps).

How it is vectorised: options are grouped by tree width (a small dynamic program trades
padding against per-step overhead), each group is padded to its widest tree, and within a
group options are sorted by height, tallest first, so that at every time step the options
still running are a prefix of the rows: no work is spent on finished options.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..instruments.option import Portfolio
from ..lattice.constants import CALL, FACE_VALUE
from ..model.curve import YieldCurve
from ..model.tree_geometry import probabilities

NAME = "reference"
TARGETS: tuple[str, ...] = ()
#: Per-step cost of one NumPy call sequence, in node updates (measured on the 2-core CPU).
_STEP_OVERHEAD = 4000
#: Largest chunk, in padded nodes per level times rows (bounds memory: ~40 arrays of this size).
_CHUNK_ELEMENTS = 1 << 21


def available(target: str | None = None) -> tuple[bool, str]:
    """The reference runs anywhere NumPy does."""
    return True, "NumPy on the CPU (float32 and float64)"


def price(
    portfolio: Portfolio,
    curve: YieldCurve,
    precision: str = "f64",
    *,
    target: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Prices of a validated portfolio, in input order (float32 for ``"f32"``, float64 for ``"f64"``).

    ``progress(done, total)`` is called after each chunk of options.

    >>> import trinom
    >>> p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
    ...                      term_steps=[5], a=[0.1], sigma=[0.01], option_type=[1])
    >>> print(f"{price(p, trinom.YieldCurve.thesis())[0]:.12f}")
    1.838268649981
    """
    dtype = np.dtype(np.float32 if precision == "f32" else np.float64)
    geometry = portfolio.geometry(dtype)
    prices = np.empty(len(portfolio), dtype=dtype)
    done = 0
    for rows in width_groups(geometry.width, geometry.n):
        prices[rows] = _price_chunk(portfolio, curve, geometry, rows, dtype)
        done += rows.size
        if progress is not None:
            progress(done, len(portfolio))
    return prices


# --- grouping -------------------------------------------------------------------------------
def width_groups(width: np.ndarray, n: np.ndarray) -> list[np.ndarray]:
    """Row indices of the chunks to price together: similar widths, tallest trees first."""
    order = np.argsort(width, kind="stable")
    w_sorted, n_sorted = width[order], n[order]
    distinct, first = np.unique(w_sorted, return_index=True)
    last = np.append(first[1:], w_sorted.size)
    n_sum = np.add.reduceat(n_sorted, first).astype(np.float64)
    n_max = np.maximum.reduceat(n_sorted, first).astype(np.float64)
    cuts = _best_cuts(distinct.astype(np.float64), n_sum, n_max)
    chunks = []
    for lo, hi in cuts:  # a group of distinct widths lo..hi (inclusive)
        rows = order[first[lo]: last[hi]]
        rows = rows[np.argsort(-n[rows], kind="stable")]
        rows_per_chunk = max(1, _CHUNK_ELEMENTS // int(distinct[hi] + n[rows[0]] + 1))
        chunks.extend(rows[k: k + rows_per_chunk] for k in range(0, rows.size, rows_per_chunk))
    return chunks


def _best_cuts(widths: np.ndarray, n_sum: np.ndarray, n_max: np.ndarray) -> list[tuple[int, int]]:
    """Split sorted distinct widths into groups minimising padded work plus per-step overhead."""
    d = widths.size
    prefix = np.concatenate(([0.0], np.cumsum(n_sum)))
    best = np.zeros(d + 1)
    start = np.zeros(d, dtype=np.int64)
    for hi in range(d):
        lo = np.arange(hi + 1)
        group_n_max = np.maximum.accumulate(n_max[hi::-1])[::-1]  # max n over lo..hi
        cost = best[lo] + 2 * _STEP_OVERHEAD * group_n_max + 2 * widths[hi] * (prefix[hi + 1] - prefix[lo])
        k = int(np.argmin(cost))
        best[hi + 1], start[hi] = cost[k], k
    cuts, hi = [], d - 1
    while hi >= 0:
        cuts.append((int(start[hi]), hi))
        hi = int(start[hi]) - 1
    return cuts[::-1]


# --- one chunk ----------------------------------------------------------------------------------
def _price_chunk(portfolio: Portfolio, curve: YieldCurve, geometry, rows: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Price options ``rows`` (sorted by height, tallest first) padded to their widest tree."""
    real = dtype.type
    n = geometry.n[rows]
    jmax = geometry.jmax[rows]
    dt = geometry.dt[rows][:, None]
    dr = geometry.dr[rows][:, None]
    M = geometry.M[rows][:, None]
    expiry_step = geometry.expiry_step[rows]
    strike = portfolio.strike[rows].astype(dtype)
    is_call = portfolio.option_type[rows] == CALL
    term_unit = portfolio.term_unit[rows].astype(np.int64)
    count, J = rows.size, int(jmax.max())
    width, steps = 2 * J + 1, int(n.max())

    j = np.arange(-J, J + 1)
    inside = np.abs(j)[None, :] <= jmax[:, None]  # nodes of each option's own tree
    rate = (j[None, :].astype(dtype) * dr).astype(dtype)  # j * dr, as the thesis precomputes
    pu, pm, pd = probabilities(j[None, :], M, jmax[:, None], dtype)
    interior = inside & (np.abs(j)[None, :] < jmax[:, None])
    pu_in, pm_in, pd_in = (np.where(interior, p, real(0)).astype(dtype) for p in (pu, pm, pd))
    bottom = J - jmax  # column of j = -jmax
    top = J + jmax  # column of j = +jmax
    r = np.arange(count)
    pu_b, pm_b, pd_b = pu[r, bottom], pm[r, bottom], pd[r, bottom]
    pu_c, pm_c, pd_c = pu[r, top], pm[r, top], pd[r, top]
    exp_j = np.where(inside, np.exp(-rate * dt), real(0)).astype(dtype)  # exp(-j dr dt) for the alpha sum

    # Zero-coupon bond prices P(0, (i+2) dt) for every step: the alphas' targets.
    level = np.arange(steps, dtype=np.int64)[None, :]
    ti = ((level + 2).astype(dtype) * dt).astype(dtype)
    R = curve.rate_at(ti, term_unit[:, None], dtype)
    P = np.exp(-R * ti).astype(dtype)

    alphas = np.zeros((count, steps + 1), dtype=dtype)
    alphas[:, 0] = curve.rate_at(dt[:, 0], term_unit, dtype)
    active = np.searchsorted(-n, -np.arange(steps + 1), side="left")  # active[i]: rows with n > i

    # Forward: Arrow-Debreu prices Q and the alphas.
    Q = np.zeros((count, width), dtype=dtype)
    Q[:, J] = 1
    for i in range(steps):
        m = int(active[i])
        rm = r[:m]
        q = Q[:m] * np.exp(-(alphas[:m, i: i + 1] + rate[:m]) * dt[:m])
        Qn = np.zeros_like(q)
        b, t = bottom[:m], top[:m]
        Qn[rm, b + 2] = pu_b[:m] * q[rm, b]  # bottom edge (lowest j) contributes first ...
        Qn[rm, b + 1] = pm_b[:m] * q[rm, b]
        Qn[rm, b] = pd_b[:m] * q[rm, b]
        Qn[:, 1:] += pu_in[:m, :-1] * q[:, :-1]  # ... then the interior nodes, j ascending ...
        Qn += pm_in[:m] * q
        Qn[:, :-1] += pd_in[:m, 1:] * q[:, 1:]
        Qn[rm, t] += pu_c[:m] * q[rm, t]  # ... and the top edge (highest j) last.
        Qn[rm, t - 1] += pm_c[:m] * q[rm, t]
        Qn[rm, t - 2] += pd_c[:m] * q[rm, t]
        s = (Qn * exp_j[:m]).sum(axis=1)
        alphas[:m, i + 1] = np.log(s / P[:m, i]) / dt[:m, 0]
        Q[:m] = Qn

    # Backward: discount from the face value; the payoff replaces the value at the expiry step.
    C = np.full((count, width), FACE_VALUE, dtype=dtype)
    for i in range(steps - 1, -1, -1):
        m = int(active[i])
        rm = r[:m]
        Cm = C[:m]
        discount = np.exp(-(alphas[:m, i: i + 1] + rate[:m]) * dt[:m])
        Cn = np.zeros_like(Cm)
        Cn[:, 1:-1] = (pu_in[:m, 1:-1] * Cm[:, 2:] + pm_in[:m, 1:-1] * Cm[:, 1:-1]
                       + pd_in[:m, 1:-1] * Cm[:, :-2]) * discount[:, 1:-1]
        b, t = bottom[:m], top[:m]
        Cn[rm, b] = (pu_b[:m] * Cm[rm, b + 2] + pm_b[:m] * Cm[rm, b + 1] + pd_b[:m] * Cm[rm, b]) * discount[rm, b]
        Cn[rm, t] = (pu_c[:m] * Cm[rm, t] + pm_c[:m] * Cm[rm, t - 1] + pd_c[:m] * Cm[rm, t - 2]) * discount[rm, t]
        at_expiry = np.flatnonzero(expiry_step[:m] == i)
        if at_expiry.size:
            X = strike[at_expiry, None]
            value = Cn[at_expiry]
            Cn[at_expiry] = np.where(is_call[at_expiry, None], np.maximum(value - X, real(0)),
                                     np.maximum(X - value, real(0)))
        C[:m] = Cn
    return C[:, J]
