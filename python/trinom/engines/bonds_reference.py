"""The bond reference pricer: docs/paper-instrument.md's sequential algorithm, vectorised in NumPy.

It is the oracle of every bond backend. Each bond's arithmetic is the spec's operation for
operation (§3-§6, no fused multiply-add; the alpha sum left to right), so float64 reproduces
the paper's ``out64`` to the last bit wherever NumPy's ``exp``/``log`` equal the C library's.
float32 follows the paper's float build (§9: double ``exp``/``log``, alpha held in double).

Kept from the paper (documented in the README): the edge-node cash flow (Q1), accrued interest
from the previous coupon (Q2) and the Bermudan grid counted from cash-flow dates (Q4). Not kept:
the dependence of one bond's price on the bond before it (Q3): the cash-flow pointer never leaves
the bond's own schedule, so every bond is priced from its own data alone. Added: listed exercise
points (docs/paper-instrument.md, "Listed exercise points"), each a cap (call) or floor (put) at its
own dirty price at its step, applied after the window's exercise of that step; and sigma pieces
(:meth:`~trinom.BondPortfolio.with_sigma_pieces`, :mod:`trinom.model.piecewise_tree`): a tree with pieces keeps one
grid and takes each step's branching probabilities from that step's variance, in both passes.

Vectorisation is the thesis reference's: bonds grouped by tree width, padded to the widest,
sorted by height so that the bonds still running at a step are a prefix of the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..instruments.bond import BondPortfolio
from ..lattice.constants import CALL, SPREAD_UNIT
from ..model.curve import YieldCurve
from ..model.piecewise_tree import piece_probabilities
from ..model.tree_geometry import BondGeometry, Convention, libm_exp, libm_log, probability_table
from .coupon_option_terms import node_values, option_terms
from .reference import width_groups

NAME = "reference"
TARGETS: tuple[str, ...] = ()
#: It prices trees with sigma pieces (:meth:`~trinom.engines.engine.KernelEngine.prices_sigma_pieces`).
SIGMA_PIECES = True
#: It prices options on coupon rates (:meth:`~trinom.engines.engine.KernelEngine.prices_coupon_options`).
COUPON_OPTIONS = True


def available(target: str | None = None) -> tuple[bool, str]:
    """The reference runs anywhere NumPy does."""
    return True, "NumPy on the CPU (float32 and float64)"


def price(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str = "f64", *,
          target: str | None = None, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Dirty prices (per 100 face) of a validated bond portfolio, in input order.

    >>> from trinom.bonds.generator import sample_bond
    >>> bonds, curves = sample_bond()
    >>> print(f"{price(bonds, curves)[0]:.10f}")
    53.2440404246
    """
    dtype = np.dtype(np.float32 if precision == "f32" else np.float64)
    geometry = portfolio.geometry(dtype)
    prices = np.empty(len(portfolio), dtype=dtype)
    terms = option_terms(portfolio, curves, dtype) if portfolio.coupon_options() is not None else None
    done = 0
    for rows in width_groups(2 * geometry.jmax + 1, geometry.n):
        with np.errstate(over="ignore"):  # float32 trees of extreme volatility overflow; inf is mapped as in C
            prices[rows] = _price_group(portfolio, curves, geometry, rows, dtype, terms)
        done += rows.size
        if progress is not None:
            progress(done, len(portfolio))
    return prices


@dataclass(frozen=True)
class _Tree:
    """The per-node tables of a group of bonds padded to its widest tree (columns j = -J..J)."""

    n: np.ndarray      #: tree heights (tallest first)
    jmax: np.ndarray
    J: int             #: the widest jmax of the group
    inside: np.ndarray  #: |j| <= jmax per bond
    x: np.ndarray      #: exp(mdrdt * j), 0 outside each bond's tree
    interior: tuple[np.ndarray, np.ndarray, np.ndarray]  #: pu, pm, pd of case A (0 elsewhere)
    edge: dict[str, np.ndarray]  #: pu/pm/pd of the bottom (b) and top (c) edge, per bond
    bottom: np.ndarray  #: column of j = -jmax
    top: np.ndarray     #: column of j = +jmax
    pieces: _StepVariances | None = None  #: the trees with sigma pieces: their steps' own probabilities

    def at_step(self, i: int, m: int) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], dict[str, np.ndarray]]:
        """The interior and edge probabilities of the first ``m`` trees for the move from step ``i`` to ``i + 1``
        (a tree with sigma pieces: its step's own, else its one table)."""
        interior = tuple(p[:m] for p in self.interior)
        edge = {k: v[:m] for k, v in self.edge.items()}
        if self.pieces is None:
            return interior, edge  # type: ignore[return-value]
        return self.pieces.tables(i, m, interior, edge, self)  # type: ignore[arg-type]


def _tree(geometry: BondGeometry, rows: np.ndarray, dtype: np.dtype,
          portfolio: BondPortfolio | None = None) -> _Tree:
    """Node discounts and branching probabilities of bonds ``rows`` (§3), built once per group (``portfolio``: the
    bonds, whose sigma pieces give their trees per-step probabilities)."""
    real = dtype.type
    n, jmax = geometry.n[rows], geometry.jmax[rows]
    J = int(jmax.max())
    j = np.arange(-J, J + 1)
    inside = np.abs(j)[None, :] <= jmax[:, None]
    x = np.where(inside, libm_exp((geometry.mdrdt[rows][:, None] * j.astype(dtype)).astype(np.float64)), 0).astype(dtype)
    p = probability_table(j[None, :], geometry.M[rows][:, None], dtype, Convention.PAPER)
    is_interior = inside & (np.abs(j)[None, :] < jmax[:, None])
    interior = tuple(np.where(is_interior, p[k], real(0)).astype(dtype) for k in ("pu_a", "pm_a", "pd_a"))
    r = np.arange(rows.size)
    bottom, top = J - jmax, J + jmax
    edge = {k: p[k][r, bottom if k.endswith("b") else top] for k in ("pu_b", "pm_b", "pd_b", "pu_c", "pm_c", "pd_c")}
    pieces = None
    if portfolio is not None and portfolio.sigma_pieces() is not None:
        pieces = _StepVariances.of(portfolio, geometry, rows, dtype)
    return _Tree(n=n, jmax=jmax, J=J, inside=inside, x=x, interior=interior, edge=edge, bottom=bottom, top=top,
                 pieces=pieces)


@dataclass(frozen=True)
class _StepVariances:
    """The trees of a group that have sigma pieces (``local``: their group rows, ascending) and, per tree and step,
    ``V_i / dx^2`` (``v``, ``(trees, steps)``): each step's branching probabilities come from it
    (:func:`~trinom.model.piecewise_tree.piece_probabilities`)."""

    local: np.ndarray
    v: np.ndarray
    M: np.ndarray
    dtype: np.dtype

    @classmethod
    def of(cls, portfolio: BondPortfolio, geometry: BondGeometry, rows: np.ndarray,
           dtype: np.dtype) -> _StepVariances | None:
        counts = portfolio.sigma_pieces().counts  # type: ignore[union-attr]
        local = np.flatnonzero(counts[rows] > 0)
        if not local.size:
            return None
        shape = portfolio.piecewise(dtype)[1]  # the trees with pieces, in book order
        at_shape = (np.cumsum(counts > 0) - 1)[rows[local]]  # each one's place among them
        steps = int(geometry.n[rows].max())
        v = np.zeros((local.size, steps))
        for k, s in enumerate(at_shape.tolist()):
            lo, hi = int(shape.v_offset[s]), int(shape.v_offset[s + 1])  # type: ignore[union-attr]
            at = np.searchsorted(shape.v_step[lo:hi], np.arange(steps), side="right") - 1  # type: ignore[union-attr]
            v[k] = shape.v[lo:hi][at]  # type: ignore[union-attr]
        return cls(local=local, v=v, M=geometry.M[rows][local].astype(np.float64), dtype=dtype)

    def tables(self, i: int, m: int, interior: tuple[np.ndarray, ...], edge: dict[str, np.ndarray],
               tree: _Tree) -> tuple[tuple[np.ndarray, ...], dict[str, np.ndarray]]:
        """``interior`` and ``edge`` (the first ``m`` trees' one tables) with the rows of the trees with pieces
        replaced by step ``i``'s probabilities."""
        active = self.local < m
        if not active.any():
            return interior, edge
        k = np.flatnonzero(active)
        at = self.local[k]
        j = np.arange(-tree.J, tree.J + 1)[None, :]
        p = piece_probabilities(j, self.M[k][:, None], self.v[k, i][:, None])
        is_interior = np.abs(j) < tree.jmax[at][:, None]
        interior = tuple(np.array(table) for table in interior)
        for table, key in zip(interior, ("pu_a", "pm_a", "pd_a"), strict=True):
            table[at] = np.where(is_interior, p[key], 0.0).astype(self.dtype)
        edge = {key: np.array(values) for key, values in edge.items()}
        bottom, top = tree.bottom[at], tree.top[at]
        for key in edge:
            column = bottom if key.endswith("b") else top
            edge[key][at] = p[key][np.arange(at.size), column].astype(self.dtype)
        return interior, edge


def _discount_factors(portfolio: BondPortfolio, curves: Sequence[YieldCurve], geometry: BondGeometry,
                      rows: np.ndarray, tree: _Tree, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Forward pass (§5): ``E[r, i] = exp(-alpha_i dt)`` for every step ``i < n`` of bond ``rows[r]``, and the
    curve's ``P[r, i] = P(0, (i + 1) dt)`` (double)."""
    n, J, x, bottom, top = tree.n, tree.J, tree.x, tree.bottom, tree.top
    dt = geometry.dt[rows]
    count, steps = rows.size, int(n.max())
    r = np.arange(count)

    # Rates R((i+1) dt) for i = 0..steps-1 on each bond's own curve (t_0 = dt is alpha_0's).
    t = (np.arange(1, steps + 1)[None, :].astype(dtype) * dt[:, None]).astype(dtype)
    R = np.empty((count, steps), dtype=dtype)
    curve_of = portfolio.curve_index[rows]
    for c in np.unique(curve_of):
        mine = curve_of == c
        R[mine] = curves[int(c)].rate_at(t[mine], portfolio.term_unit[rows][mine][:, None], dtype)
    P = libm_exp(((-R) * t).astype(np.float64))  # P(0, (i+1) dt), in double as the C code has it

    dt64 = dt.astype(np.float64)
    E = np.zeros((count, steps), dtype=dtype)
    E[:, 0] = libm_exp(-R[:, 0].astype(np.float64) * dt64)
    active = np.searchsorted(-n, -np.arange(steps + 1), side="left")  # active[i]: bonds with n > i
    Q = np.zeros((count, 2 * J + 1), dtype=dtype)
    Q[:, J] = 1
    for i in range(1, steps):
        m = int(active[i])
        rm, b, tp = r[:m], bottom[:m], top[:m]
        (pu_in, pm_in, pd_in), edge = tree.at_step(i - 1, m)  # the move from step i - 1 to i
        q = (Q[:m] * E[:m, i - 1: i]) * x[:m]
        Qn = np.zeros_like(q)
        Qn[rm, b + 2] = edge["pu_b"][:m] * q[rm, b]  # sources in increasing order: the bottom edge first,
        Qn[rm, b + 1] = edge["pm_b"][:m] * q[rm, b]
        Qn[rm, b] = edge["pd_b"][:m] * q[rm, b]
        Qn[:, 1:] += pu_in[:m, :-1] * q[:, :-1]  # then the interior nodes,
        Qn += pm_in[:m] * q
        Qn[:, :-1] += pd_in[:m, 1:] * q[:, 1:]
        Qn[rm, tp] += edge["pu_c"][:m] * q[rm, tp]  # and the top edge last
        Qn[rm, tp - 1] += edge["pm_c"][:m] * q[rm, tp]
        Qn[rm, tp - 2] += edge["pd_c"][:m] * q[rm, tp]
        A = np.cumsum(Qn * x[:m], axis=1)[:, -1]  # left to right, as the C loop sums
        alpha = (libm_log(A.astype(np.float64) / P[:m, i]) / dt64[:m]).astype(dtype).astype(np.float64)
        E[:m, i] = libm_exp(-alpha * dt64[:m])
        Q[:m] = Qn
    return E, P


def _price_group(portfolio: BondPortfolio, curves: Sequence[YieldCurve], geometry: BondGeometry,
                 rows: np.ndarray, dtype: np.dtype, terms: np.ndarray | None = None) -> np.ndarray:
    """Backward pass (§6) for bonds ``rows`` (sorted by height, tallest first), padded to the widest (``terms``: the
    portfolio's coupon options', :func:`~trinom.engines.coupon_option_terms.option_terms`)."""
    real = dtype.type
    tree = _tree(geometry, rows, dtype, portfolio)
    E, P = _discount_factors(portfolio, curves, geometry, rows, tree, dtype)
    n, jmax, J, inside, x, bottom, top = tree.n, tree.jmax, tree.J, tree.inside, tree.x, tree.bottom, tree.top
    count, steps = rows.size, int(n.max())
    j = np.arange(-J, J + 1)
    r = np.arange(count)
    g = geometry.g[rows][:, None]

    steps_cf = portfolio.cashflow_step
    paid = portfolio.repayment.astype(dtype) + portfolio.coupon.astype(dtype)  # added in the working type, as in C
    times = portfolio.cashflow_time
    between = _FlowsBetweenSteps(portfolio, curves, geometry, rows, E, P) if portfolio.has_flow_times() else None
    coupon = portfolio.coupon.astype(dtype)
    first_cf = portfolio.cashflow_offset[rows]
    # Initialisation at step n: the maturity cash flow on every node of the tree (one with a time, paid before step
    # n, is taken at step n - 1 as the other flows between steps are).
    ptr = portfolio.cashflow_offset[rows + 1] - 1
    timed_last = np.isfinite(times[ptr])
    Val = np.where(inside & ~timed_last[:, None], paid[ptr][:, None], real(0)).astype(dtype)
    left = portfolio.cashflow_count[rows] - 1 + timed_last  # cash flows not yet added (r in the spec)
    S = steps_cf[ptr]
    move = (ptr > first_cf) & (S <= n) & (left > 0) & ~timed_last
    ptr = ptr - move
    S = steps_cf[ptr]

    strike = portfolio.strike[rows].astype(dtype)
    is_call = portfolio.option_type[rows] == CALL
    first_ex, last_ex = portfolio.first_exercise[rows], portfolio.last_exercise[rows]
    freq = portfolio.exercise_frequency[rows]
    listed = _ListedCursor(portfolio, rows, n, dtype) if portfolio.has_listed() else None
    options = _options_by_step(portfolio, rows) if terms is not None else {}
    big, tiny = real(np.finfo(dtype).max), real(np.finfo(dtype).tiny)
    active = np.searchsorted(-n, -np.arange(steps + 1), side="left")
    for i in range(steps - 1, -1, -1):
        m = int(active[i])
        rm, b, tp = r[:m], bottom[:m], top[:m]
        (pu_in, pm_in, pd_in), edge = tree.at_step(i, m)  # the move from step i to i + 1
        h = np.minimum(i, jmax[:m])
        live = np.abs(j)[None, :] <= h[:, None]  # |j| <= h: the nodes of step i
        exercise = (first_ex[:m] <= i) & (i <= last_ex[:m]) & ((S[:m] - i) % freq[:m] == 0)
        point_at, point_pay, point_time = listed.take(i, m) if listed is not None else (None, None, None)
        timed: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, flows) paid between steps i and i+1
        while (cash := np.flatnonzero((S[:m] == i + 1) & (left[:m] > 0))).size:
            on_step = np.ones(cash.size, dtype=bool) if between is None else ~np.isfinite(times[ptr[cash]])
            stepped = cash[on_step]  # the cash flow of step i+1, on the nodes of step i only (Q1)
            Val[stepped] += np.where(live[stepped], paid[ptr[stepped]][:, None], real(0))
            if not on_step.all():
                timed.append((cash[~on_step], ptr[cash[~on_step]]))
            advance = cash[(ptr[cash] > first_cf[cash]) & (S[cash] <= n[cash])]
            ptr[advance] -= 1
            S[advance] = steps_cf[ptr[advance]]
            left[cash] -= 1
            if between is None:  # flows on steps: one a step
                break
        V = Val[:m]
        cont = np.zeros_like(V)
        cont[:, 1:-1] = (pu_in[:m, 1:-1] * V[:, 2:] + pm_in[:m, 1:-1] * V[:, 1:-1]) + pd_in[:m, 1:-1] * V[:, :-2]
        cont[rm, b] = (edge["pu_b"][:m] * V[rm, b + 2] + edge["pm_b"][:m] * V[rm, b + 1]) + edge["pd_b"][:m] * V[rm, b]
        cont[rm, tp] = (edge["pu_c"][:m] * V[rm, tp] + edge["pm_c"][:m] * V[rm, tp - 1]) + edge["pd_c"][:m] * V[rm, tp - 2]
        cont *= (E[:m, i: i + 1] * x[:m]) * g[:m]
        kept = None  # flows paid by a listed point's date between steps: the holder's whatever is decided
        if timed:  # flows between steps i and i+1, valued at step i (before the step's exercise, or after)
            date = np.full(m, np.nan)  # per bond, its listed point's date at this step, if it has one
            if point_at is not None and point_at.size:
                date[point_at] = point_time
            c0, c1, a0, a1 = np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m)  # summed in double
            for at, flows in timed:
                k0, k1 = between.coefficients(at, times[flows], paid[flows], i)
                after = times[flows] <= date[at]
                np.add.at(c0, at[~after], k0[~after])
                np.add.at(c1, at[~after], k1[~after])
                np.add.at(a0, at[after], k0[after])
                np.add.at(a1, at[after], k1[after])
            at = np.unique(np.concatenate([rows_ for rows_, _flows in timed]))
            cont[at] += (c0[at, None] + c1[at, None] * x[at].astype(np.float64)).astype(dtype)
            kept = (at, a0, a1) if bool(np.any(a0[at] != 0) or np.any(a1[at] != 0)) else None
        if i in options:  # options on coupon rates fixing at step i or before step i + 1, valued before its exercise
            at, which = options[i]
            with np.errstate(divide="ignore", invalid="ignore"):  # log 0 outside a narrower tree: never read
                values = node_values(terms[which], np.log(x[at].astype(np.float64)))  # type: ignore[index]
            total = np.zeros((m, cont.shape[1]))  # a bond's options summed in double, in their order
            np.add.at(total, at, values)
            held = np.unique(at)
            cont[held] += total[held].astype(dtype)
        ex_rows = np.flatnonzero(exercise)
        if ex_rows.size:
            accrued = np.zeros(ex_rows.size, dtype=dtype)
            has = (S[ex_rows] != 0) & (left[ex_rows] > 0)
            k = ex_rows[has]
            if k.size:
                nxt = steps_cf[ptr[k] + 1]
                span = (nxt - S[k]).astype(dtype)
                remaining = np.maximum(nxt - i, 0).astype(dtype)
                accrued[has] = ((span - remaining) / span) * coupon[ptr[k]]
            pay = (strike[ex_rows] + accrued)[:, None]
            c = cont[ex_rows]
            cont[ex_rows] = np.where(is_call[ex_rows, None], np.where(c > pay, pay, c), np.where(pay > c, pay, c))
        if point_at is not None and point_at.size:  # after the window's exercise: both cap (call) or both floor (put)
            at = point_at
            price = np.broadcast_to(point_pay[:, None], (at.size, cont.shape[1])).astype(dtype)
            dated = np.isfinite(point_time)
            if dated.any():  # paid on its date between steps: its value at step i from each node, as a flow's
                k0, k1 = between.coefficients(at[dated], point_time[dated], point_pay[dated].astype(np.float64), i)
                price[dated] = (k0[:, None] + k1[:, None] * x[at[dated]].astype(np.float64)).astype(dtype)
            c = cont[at]
            cont[at] = np.where(is_call[at, None], np.where(c > price, price, c), np.where(price > c, price, c))
        if kept is not None:
            at, a0, a1 = kept
            cont[at] += (a0[at, None] + a1[at, None] * x[at].astype(np.float64)).astype(dtype)
        cont[cont == np.inf] = big
        cont[cont == -np.inf] = tiny
        Val[:m] = np.where(live, cont, real(0))
    return Val[:, J]


def _options_by_step(portfolio: BondPortfolio, rows: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The coupon options of bonds ``rows`` by step: per step, the group rows that have one there and the options'
    indices in the portfolio's order."""
    options = portfolio.coupon_options()
    if options is None:
        return {}
    counts = options.counts[rows]
    group_row = np.repeat(np.arange(rows.size), counts)
    flat = np.concatenate([np.arange(options.offset[r], options.offset[r + 1]) for r in rows.tolist()]
                          or [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    steps = options.step[flat]
    order = np.lexsort((flat, steps))
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    bounds = np.flatnonzero(np.r_[True, steps[order][1:] != steps[order][:-1], True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        out[int(steps[order][lo])] = (group_row[order][lo:hi], flat[order][lo:hi])
    return out


class _FlowsBetweenSteps:
    """Cash flows paid between two steps (``cashflow_time`` t in (t_i, t_i+1]), valued at step i from each node j:
    ``paid * W * ((1 - lambda) + lambda x_j)``, Hull-White's zero-coupon bond price P(t_i, t | r) with its
    dependence on the node's rate exp(-B(t_i, t) r) to first order (``lambda = B(t - t_i) / B(dt)``: the tree's own
    one-step discount x_j where t = t_i+1, a constant where t = t_i) and its level ``W`` fitted so that the tree
    prices the curve's discount factor P(0, t) (with the spread) exactly: the tree's Arrow-Debreu prices of step i
    sum to P(0, t_i), their products with x_j to P(0, t_i+1) / E_i. Arithmetic in double, as in every engine."""

    def __init__(self, portfolio: BondPortfolio, curves: Sequence[YieldCurve], geometry: BondGeometry,
                 rows: np.ndarray, E: np.ndarray, P: np.ndarray):
        self.portfolio, self.curves, self.rows, self.E, self.P = portfolio, curves, rows, E, P
        self.a = portfolio.a[rows].astype(np.float64)
        self.dt = geometry.dt[rows].astype(np.float64)
        self.spread = portfolio.spread[rows].astype(np.float64) / SPREAD_UNIT

    def coefficients(self, at: np.ndarray, t: np.ndarray, paid: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The values ``c0 + c1 x_j`` at step ``i`` of amounts ``paid`` (in the working type) at times ``t`` (in
        ``(t_i, t_i+1]``), one each of bonds ``at`` (group rows), as ``(c0, c1)`` in double."""
        p = self.portfolio
        a, dt = self.a[at], self.dt[at]
        tau = t - i * dt
        lam = (1.0 - libm_exp(-a * tau)) / (1.0 - libm_exp(-a * dt))
        rate = np.empty(at.size)
        curve_of = p.curve_index[self.rows[at]]
        for c in np.unique(curve_of):
            mine = curve_of == c
            rate[mine] = self.curves[int(c)].rate_at(t[mine], p.term_unit[self.rows[at]][mine], np.float64)
        at_flow = libm_exp(-rate * t) * libm_exp(-self.spread[at] * tau)
        before = self.P[at, i - 1] if i > 0 else np.ones(at.size)
        after = self.P[at, i] / self.E[at, i].astype(np.float64)
        level = at_flow / ((1.0 - lam) * before + lam * after)
        amount = np.asarray(paid).astype(np.float64) * level
        return amount * (1.0 - lam), amount * lam


class _ListedCursor:
    """The bonds' listed exercise points walked from the last down, one pointer per bond (the cash-flow pointer's
    way): ``take(i, m)`` gives the rows among the first ``m`` with a point at step ``i`` and those points' dirty
    prices. A point at the maturity step n is never reached, as the window's exercise never is there."""

    def __init__(self, portfolio: BondPortfolio, rows: np.ndarray, n: np.ndarray, dtype: np.dtype):
        self.steps = portfolio.exercise_step
        self.prices = portfolio.exercise_price.astype(dtype)
        self.times = portfolio.exercise_time
        self.first = portfolio.exercise_offset[rows]
        self.at = portfolio.exercise_offset[rows + 1] - 1
        self.at -= (self.at >= self.first) & (self.steps[np.maximum(self.at, 0)] >= n)  # a point at n: never taken
        self.step = self._step_at(self.at, self.first)

    def _step_at(self, at: np.ndarray, first: np.ndarray) -> np.ndarray:
        """The step of point ``at``, or -1 where the bond has no point left."""
        return np.where(at >= first, self.steps[np.maximum(at, 0)], -1)

    def take(self, i: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows (of the first ``m``) with a listed point at step ``i``, its prices and its dates in years (NaN: at
        the step); the pointers move down."""
        due = np.flatnonzero(self.step[:m] == i)
        if not due.size:
            return due, self.prices[:0], self.times[:0]
        prices, times = self.prices[self.at[due]], self.times[self.at[due]]
        self.at[due] -= 1
        self.step[due] = self._step_at(self.at[due], self.first[due])
        return due, prices, times
