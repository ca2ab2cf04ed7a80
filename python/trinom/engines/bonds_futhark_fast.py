"""Bonds on the ``futhark`` engine: fut/fast-bonds.fut, the `cuda` backend's reformulation in Futhark.

The forward pass needs no ``log`` or ``exp`` per step (``E_i = (P_{i+1} / P_i) (S_{i-1} / S_i)`` from the
level sums of the scaled Arrow-Debreu prices), the coefficient tables are made once per tree, only the
live window is held; the backward pass keeps true values for the exercise and the cash flows, in the
spec's order (docs/paper-instrument.md; the quirks as fut/bonds.fut keeps them). float64 agrees with the
reference to about 1e-12; float32 with the float64 reference wherever the float32 reference does.

On the CPU targets every bond is one map element (``bonds_shared64``/``bonds_shared32``), and the forward
pass runs once per lattice (:func:`lattices`: bonds of one term unit, steps per unit, ``a`` and ``sigma``
share it, whatever their curve, spread or cash flows), so a book in one Hull-White model costs little more
than its backward passes. On the GPU targets bonds are
binned by level width (``2 min(jmax, n) + 3``) and by height (the step table's length), tallest first in
a class (:func:`classes`), and each class is priced by
``bonds_grouped64``/``bonds_grouped32``: one bond per workgroup, levels and step arrays in local memory.
Bonds whose class would not fit a workgroup (levels wider than 1024 nodes, or beyond the target's local memory)
take the stepped shape (:func:`price_stepped`, ``bonds_stepped64``/``bonds_stepped32``): the steps an outer loop,
each step one map over all nodes of all bonds of a part (parts of similar height, :func:`stepped_parts`), the
forward pass once per lattice, all lattices side by side, and each bond's events (cash flows, exercise, listed
points) for all steps at once before the backward passes. ``fut/bonds.fut`` (the
paper's program, operation by operation) stays as the ``futhark-paper`` engine's bond pricer. Trees with sigma
pieces (:meth:`~trinom.BondPortfolio.with_sigma_pieces`) take ``bonds_pieces64``/``bonds_pieces32`` on every
target (:func:`price_pieces`: one bond per map element with its own forward pass, each step's branching from its
piece), and so do bonds with options on coupon rates (caps and floors on floating coupons,
:mod:`trinom.engines.coupon_option_terms`). Options: ``device``, ``platform``, ``build_options``,
``num_threads`` (as every Futhark backend).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..instruments.bond import BondPortfolio
from ..model.curve import YieldCurve
from ..model.piecewise_tree import PiecewiseShape
from . import _futhark, bonds_futhark, futhark_fast
from .coupon_option_terms import WIDTH, option_terms

NAME = "futhark"
TARGETS: tuple[str, ...] = ("c", "multicore", "opencl", "cuda")
PROGRAM = "fastbonds"
ENTRIES = {("one", "f64"): "bonds_listed64", ("one", "f32"): "bonds_listed32",
           ("shared", "f64"): "bonds_shared64", ("shared", "f32"): "bonds_shared32",
           ("grouped", "f64"): "bonds_grouped64", ("grouped", "f32"): "bonds_grouped32",
           ("stepped", "f64"): "bonds_stepped64", ("stepped", "f32"): "bonds_stepped32",
           ("pieces", "f64"): "bonds_pieces64", ("pieces", "f32"): "bonds_pieces32"}
#: It prices trees with sigma pieces (:meth:`~trinom.engines.engine.KernelEngine.prices_sigma_pieces`).
SIGMA_PIECES = True
#: It prices options on coupon rates (:meth:`~trinom.engines.engine.KernelEngine.prices_coupon_options`), on the
#: entry of trees with pieces.
COUPON_OPTIONS = True
#: Bytes of the shared forward ratios (one float64 a step per lattice) one ``bonds_shared`` call may hold;
#: a book of more distinct lattices is priced in parts of whole lattices.
SHARED_RATIO_BYTES = 64 << 20
#: Local memory of one workgroup, read off the generated kernels: eight levels of the width (the pu, pd and
#: node-discount tables, two levels per pass, the level sums' scratch) in the working precision, and the
#: per-step table of ``ceil(steps / width)`` columns of the width in float64 (8 bytes a step, and up to one
#: more float64 level for the rounding).
LEVELS = 8
STEP_BYTES = 8


def local_bytes(width: np.ndarray, steps: np.ndarray, precision: str) -> np.ndarray:
    """Bytes of local memory a workgroup of ``width`` nodes and ``steps`` steps uses (an upper bound)."""
    itemsize = np.dtype(_futhark.REAL_DTYPES[precision]).itemsize
    return width * (LEVELS * itemsize + STEP_BYTES) + steps * STEP_BYTES


def available(target: str | None = None) -> tuple[bool, str]:
    """``(usable, reason)``: is the library built for ``target`` (default: the best one) and usable here?"""
    if target is not None and target not in TARGETS:
        return False, f"unknown target {target!r}; choose one of {', '.join(TARGETS)}"
    return _futhark.available(PROGRAM, target)


def shapes(portfolio: BondPortfolio) -> tuple[np.ndarray, np.ndarray]:
    """Each bond's level width ``2 min(jmax, max(n, 1)) + 3`` and step count ``max(n, 1) + 1``."""
    geometry = portfolio.geometry()
    height = np.maximum(geometry.n, 1).astype(np.int64)
    return 2 * np.minimum(geometry.jmax, height) + 3, height + 1


def classes(portfolio: BondPortfolio, target: str = "cuda", precision: str = "f64") -> list[tuple[int, int, np.ndarray]]:
    """``(width, steps, rows)`` of the GPU shape, rows tallest first; ``(0, 0, rows)``: the bonds whose
    class would not fit one workgroup on ``target`` (they take the stepped shape, :func:`price_stepped`).

    Widths are rounded up to a multiple of 32 and step counts to a power of two (few classes, few
    calls); where that would not fit the local memory, step counts are rounded up to a multiple of an
    eighth of that power of two instead, and then widths kept exact.
    """
    width, steps = shapes(portfolio)
    limit = futhark_fast.LOCAL_MEMORY.get(target, futhark_fast.LOCAL_MEMORY["cuda"])
    group = -(-width // futhark_fast.GROUP_STEP) * futhark_fast.GROUP_STEP
    power = np.maximum(32, 2 ** np.ceil(np.log2(steps)).astype(np.int64))
    eighth = np.maximum(8, power // 8)
    bucket = np.where(local_bytes(group, power, precision) <= limit, power, -(-steps // eighth) * eighth)
    group = np.where(local_bytes(group, bucket, precision) <= limit, group, width)
    fits = (group <= futhark_fast.MAX_GROUP) & (local_bytes(group, bucket, precision) <= limit)
    group, bucket = np.where(fits, group, 0), np.where(fits, bucket, 0)
    order = np.lexsort((-steps, bucket, group))
    keys = np.stack([group[order], bucket[order]])
    starts = np.flatnonzero(np.r_[True, np.any(keys[:, 1:] != keys[:, :-1], axis=0)])
    return [(int(group[order[a]]), int(bucket[order[a]]), order[a:b])
            for a, b in zip(starts, [*starts[1:], len(order)], strict=True)]


#: The narrowest tree (half width) this program's formulation prices; narrower ones go to fut/bonds.fut (its edge
#: branches assume two nodes on either side of the centre).
MIN_JMAX = 2


def price(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str = "f64", *,
          target: str | None = None, **options: Any) -> np.ndarray:
    """Dirty prices (per 100 face) of a validated portfolio, in input order (float32 for ``"f32"``)."""
    context_options = bonds_futhark.checked_options(precision, target, options)
    if len(portfolio) == 0:
        return np.zeros(0, dtype=_futhark.REAL_DTYPES[precision])
    chosen = target if target is not None else _futhark.default_target(PROGRAM)
    pieces, coupon = portfolio.sigma_pieces(), portfolio.coupon_options()
    if pieces is not None or coupon is not None:  # trees with sigma pieces or coupon options: their own entry
        out = np.empty(len(portfolio), dtype=_futhark.REAL_DTYPES[precision])
        special = np.zeros(len(portfolio), dtype=bool)
        for table in (pieces, coupon):
            if table is not None:
                special |= table.counts > 0
        pieced = np.flatnonzero(special)
        out[pieced] = price_pieces(portfolio[pieced], curves, precision, chosen, context_options)
        rest = np.setdiff1d(np.arange(len(portfolio)), pieced)
        if rest.size:
            out[rest] = price(portfolio[rest], curves, precision, target=chosen, **options)
        return out
    narrow = np.flatnonzero(portfolio.jmax() < MIN_JMAX)
    if narrow.size:  # trees of half width 1: the paper's program (fut/bonds.fut), which prices them right
        out = np.empty(len(portfolio), dtype=_futhark.REAL_DTYPES[precision])
        out[narrow] = bonds_futhark.price(portfolio[narrow], curves, precision, target=chosen, **options)
        rest = np.setdiff1d(np.arange(len(portfolio)), narrow)
        if rest.size:
            out[rest] = price(portfolio[rest], curves, precision, target=chosen, **options)
        return out
    if not futhark_fast.gpu_shape(chosen):
        return price_shared(portfolio, curves, precision, chosen, context_options)
    return price_grouped(portfolio, curves, precision, chosen, context_options)


def price_pieces(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str, target: str,
                 context_options: dict[str, Any]) -> np.ndarray:
    """Bonds with sigma pieces or options on coupon rates: ``bonds_pieces`` with each tree's grid (``jmax``,
    ``mdrdt``), its pieces' first steps and ``V / dx^2`` (:func:`~trinom.model.piecewise_tree.piecewise_geometry`)
    and its options' terms (:func:`~trinom.engines.coupon_option_terms.option_terms`); a tree narrower than this
    formulation takes (half width below :data:`MIN_JMAX`) on the reference engine."""
    from . import bonds_reference

    dtype = _futhark.REAL_DTYPES[precision]
    geometry, shape = portfolio.piecewise(dtype)  # the shape's trees: the bonds with pieces, in order
    narrow = geometry.jmax < MIN_JMAX
    if narrow.any():
        out = np.empty(len(portfolio), dtype=dtype)
        out[narrow] = bonds_reference.price(portfolio[np.flatnonzero(narrow)], curves, precision)
        rest = np.flatnonzero(~narrow)
        if rest.size:
            out[rest] = price_pieces(portfolio[rest], curves, precision, target, context_options)
        return out
    arrays = [*bonds_futhark.entry_arrays(portfolio, curves, precision), *bonds_futhark.listed_arrays(portfolio, precision),
              *bonds_futhark.time_arrays(portfolio),
              np.ascontiguousarray(geometry.jmax, dtype=np.int64), np.ascontiguousarray(geometry.mdrdt, dtype=dtype),
              *_piece_arrays(portfolio, shape), *_option_arrays(portfolio, curves, dtype)]
    return _futhark.call_entry(PROGRAM, ENTRIES["pieces", precision], arrays, precision, target, context_options,
                               targets=TARGETS)


def _piece_arrays(portfolio: BondPortfolio, shape: PiecewiseShape | None) -> list[np.ndarray]:
    """``bonds_pieces``' piece counts (0: one sigma), first steps and ``V / dx^2`` of the bonds."""
    counts = np.zeros(len(portfolio), dtype=np.int32)
    if shape is None:
        return [counts, np.zeros(0, dtype=np.int32), np.zeros(0)]
    counts[portfolio.sigma_pieces().counts > 0] = np.diff(shape.v_offset)  # type: ignore[union-attr]
    return [counts, np.ascontiguousarray(shape.v_step, dtype=np.int32), np.ascontiguousarray(shape.v, dtype=np.float64)]


def _option_arrays(portfolio: BondPortfolio, curves: Sequence[YieldCurve], dtype: np.dtype) -> list[np.ndarray]:
    """``bonds_pieces``' option counts, steps and terms of the bonds."""
    options = portfolio.coupon_options()
    if options is None:
        return [np.zeros(len(portfolio), dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros((0, WIDTH))]
    return [options.counts.astype(np.int32), np.ascontiguousarray(options.step, dtype=np.int32),
            np.ascontiguousarray(option_terms(portfolio, curves, dtype))]


def lattices(portfolio: BondPortfolio) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lattice, heads, steps)``: each bond's lattice number (bonds of equal term unit, steps per unit,
    ``a`` and ``sigma``, numbered in order of first appearance), the tallest bond of each lattice and
    that bond's step count ``max(n, 1) + 1`` (n its last cash-flow step, as the kernel counts it)."""
    counts = np.asarray(portfolio.cashflow_count, dtype=np.int64)
    last = np.asarray(portfolio.cashflow_step, dtype=np.int64)[np.cumsum(counts) - 1]
    keys = np.rec.fromarrays([np.asarray(portfolio.term_unit, dtype=np.int64),
                              np.asarray(portfolio.term_steps, dtype=np.int64),
                              np.asarray(portfolio.a, dtype=np.float64), np.asarray(portfolio.sigma, dtype=np.float64)])
    _, first, lattice = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first)  # numbered as they first appear
    lattice = np.argsort(order)[lattice.reshape(-1)]
    steps = np.maximum(last, 1) + 1
    tallest = np.lexsort((-steps, lattice))  # by lattice, tallest first
    starts = np.flatnonzero(np.r_[True, lattice[tallest][1:] != lattice[tallest][:-1]])
    heads = tallest[starts]
    return lattice.astype(np.int64), heads.astype(np.int64), steps[heads]


def price_shared(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str, target: str,
                 context_options: dict[str, Any]) -> np.ndarray:
    """The CPU shape: ``bonds_shared`` calls of whole lattices, each holding at most
    :data:`SHARED_RATIO_BYTES` of forward ratios (one call for a book of few lattices)."""
    lattice, heads, steps = lattices(portfolio)
    out = np.empty(len(portfolio), dtype=_futhark.REAL_DTYPES[precision])
    per_call = max(1, SHARED_RATIO_BYTES // (8 * int(steps.max())))
    if len(heads) <= per_call:
        parts = [np.arange(len(portfolio))]
    else:
        parts = [np.flatnonzero((lattice >= first) & (lattice < first + per_call))
                 for first in range(0, len(heads), per_call)]
    for rows in parts:
        part = portfolio if len(rows) == len(portfolio) else portfolio[rows]
        first = int(lattice[rows].min())
        local = lattice[rows] - first
        local_heads = np.searchsorted(rows, heads[first:first + int(local.max()) + 1])
        arguments = [local, local_heads, np.int64(steps[first:first + len(local_heads)].max())]
        out[rows] = _run(("shared", arguments), part, curves, precision, target, context_options)
    return out


#: Which of the 19 entry arrays hold one entry per bond (the others: cash flows, then curves).
PER_BOND = (0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 13, 14, 15)
#: Where the 19 arrays start among the inputs of ``bonds_grouped`` (after ``w``, ``N`` and the cash-flow offsets) and
#: of ``bonds_stepped`` (after ``w``, the lattices, their heads and the offsets); the listed points' steps and prices,
#: then the cash flows' times and the points' dates, come 21 inputs later (after the bonds' offsets into the points
#: and their counts).
FIRST_ARRAY = {"grouped": 3, "stepped": 4}
#: The stepped shape's parts (:func:`stepped_parts`): a part takes trees, tallest first, while the shortest is at
#: least :data:`STEPPED_HEIGHTS` of the tallest (a tree idles until its height is reached) or while the part has fewer
#: than :data:`STEPPED_FILL` nodes a level (a step's kernels would not fill the GPU), within
#: :data:`STEPPED_BYTES` of levels and tables (seven levels of the width a tree) and of each tree's events and
#: forward ratios (:data:`STEPPED_STEP_BYTES` a step of the part's tallest tree).
STEPPED_HEIGHTS = 0.75
STEPPED_FILL = 1 << 18
STEPPED_BYTES = 4 << 30
STEPPED_LEVELS = 7
STEPPED_STEP_BYTES = 96


def stepped_parts(width: np.ndarray, steps: np.ndarray, precision: str) -> list[np.ndarray]:
    """Rows of bonds of level widths ``width`` and step counts ``steps`` in the parts the stepped shape prices in one
    call each (every row in one part; tallest first within a part)."""
    order = np.argsort(-steps, kind="stable")
    itemsize = np.dtype(_futhark.REAL_DTYPES[precision]).itemsize
    parts: list[np.ndarray] = []
    start = 0
    while start < len(order):
        end, wide = start + 1, int(width[order[start]])
        while end < len(order):
            grown = max(wide, int(width[order[end]]))
            tree_bytes = grown * STEPPED_LEVELS * itemsize + int(steps[order[start]]) * STEPPED_STEP_BYTES
            if (end + 1 - start) * tree_bytes > STEPPED_BYTES:
                break
            if steps[order[end]] < STEPPED_HEIGHTS * steps[order[start]] and (end - start) * wide >= STEPPED_FILL:
                break
            end, wide = end + 1, grown
        parts.append(order[start:end])
        start = end
    return parts


def price_grouped(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str, target: str,
                  context_options: dict[str, Any]) -> np.ndarray:
    """The GPU shape on any target (the tests run it on c): one ``bonds_grouped`` call per class (:func:`classes`),
    and the bonds too wide for a workgroup in the stepped shape (:func:`price_stepped`)."""
    return _price_classes(portfolio, curves, precision, target, context_options,
                          classes(portfolio, target, precision))


def price_stepped(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str, target: str,
                  context_options: dict[str, Any]) -> np.ndarray:
    """The stepped shape on any target: ``bonds_stepped`` calls of the parts :func:`stepped_parts` makes, each step of
    a part a map over all its bonds' nodes (for trees wider than a workgroup holds)."""
    return _price_classes(portfolio, curves, precision, target, context_options, [(0, 0, np.arange(len(portfolio)))])


def _price_classes(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str, target: str,
                   context_options: dict[str, Any], shapes_of: list[tuple[int, int, np.ndarray]]) -> np.ndarray:
    """Prices of the ``(width, steps, rows)`` classes ``shapes_of``: ``bonds_grouped`` for a width, the stepped shape
    for width 0. The entry arrays are made once; a call takes its bonds' rows of the per-bond arrays and the whole
    cash-flow, curve and listed-point arrays (copied to the device once), with each bond's offsets into them."""
    out = np.empty(len(portfolio), dtype=_futhark.REAL_DTYPES[precision])
    arrays = bonds_futhark.entry_arrays(portfolio, curves, precision)
    counts = arrays[5].astype(np.int64)
    offsets = np.cumsum(counts) - counts
    point_counts, *points = bonds_futhark.listed_arrays(portfolio, precision)
    point_offsets = np.ascontiguousarray(portfolio.exercise_offset[:-1])
    resident: dict[str, tuple[dict[int, Any], list[Any]]] = {}

    def inputs(shape: str, rows: np.ndarray) -> list[Any]:
        """The 19 arrays' rows ``rows`` and the listed points of entry ``shape``, the shared arrays copied to the
        device once for every call."""
        entry = ENTRIES[shape, precision]
        if shape not in resident:
            library = _futhark.usable_context(PROGRAM, target, context_options)
            first = FIRST_ARRAY[shape]
            shared = {i: library.resident(entry, first + i, column) for i, column in enumerate(arrays) if i not in PER_BOND}
            tail = [*points, *bonds_futhark.time_arrays(portfolio)]
            resident[shape] = shared, [library.resident(entry, first + 21 + j, column) for j, column in enumerate(tail)]
        shared, listed = resident[shape]
        part = [column[rows] if i in PER_BOND else shared[i] for i, column in enumerate(arrays)]
        return [offsets[rows], *part, point_offsets[rows], point_counts[rows], *listed]

    def call(shape: str, head: list[Any], rows: np.ndarray) -> np.ndarray:
        return _futhark.call_entry(PROGRAM, ENTRIES[shape, precision], [*head, *inputs(shape, rows)], precision,
                                   target, context_options, targets=TARGETS)

    for width, steps, rows in shapes_of:
        if width:
            out[rows] = call("grouped", [np.int64(width), np.int64(steps)], rows)
            continue
        wide, tall = shapes(portfolio[rows])
        for part in stepped_parts(wide, tall, precision):
            lattice, heads, _ = lattices(portfolio[rows[part]])
            out[rows[part]] = call("stepped", [np.int64(wide[part].max()), lattice, heads], rows[part])
    return out


def _run(shape: tuple[str, tuple[Any, ...]], portfolio: BondPortfolio, curves: Sequence[YieldCurve],
         precision: str, target: str, context_options: dict[str, Any]) -> np.ndarray:
    arrays = [*bonds_futhark.entry_arrays(portfolio, curves, precision), *bonds_futhark.listed_arrays(portfolio, precision),
              *bonds_futhark.time_arrays(portfolio)]
    return _futhark.call_entry(PROGRAM, ENTRIES[shape[0], precision], [*shape[1], *arrays], precision, target,
                               context_options, targets=TARGETS)
