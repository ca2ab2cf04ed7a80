"""Wide trees on the GPU (issue 34): dated trades at the default 365 steps a year, whose trees are 894 to 6716 nodes
wide, on the `cuda` engine's block kernel (a bond per block, its levels in registers), against the float64
reference and against the kernel with levels in global memory (``wide_only="global"``).

Tolerances: float64 1e-11 per 100 against the reference and the global-memory kernel (the block kernel finds
E_i = P_{i+1} / sum Q x without the log, so only the last bits differ); float32 1e-4 relative to float64 (the
conformance suite's float32 bond rule)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import trinom
from trinom.instruments import Trades
from trinom.lattice.lowering import lower_bonds
from trinom.model import DatedCurve

pytestmark = pytest.mark.gpu

AS_OF = "2026-11-25"
F64 = 1e-11


def wide_book() -> Trades:
    """Callable, puttable and straight bonds and a Bermudan swaption whose trees cover every block class: a 0.15
    (about 900 nodes wide), 0.1 (1300), 0.05 (2700), 0.03 (4500), 0.025 (5200) and 0.012 (beyond the block kernel: 8800 nodes,
    the global-memory kernel), 3 to 12 years."""
    rows = [  # id, type, issue/start, maturity, coupon/rate, option, exercise, first, last, a
        ("B1", "bond", "2024-03-15", "2029-03-15", 0.05, "call", "bermudan", "2027-03-15", "2028-09-15", 0.15),
        ("B2", "bond", "2025-01-10", "2030-01-10", 0.04, "put", "american", "2027-06-01", "2029-06-01", 0.10),
        ("B3", "bond", "2023-06-30", "2032-06-30", 0.035, "call", "european", "2029-06-29", None, 0.05),
        ("B4", "bond", "2026-01-15", "2034-01-15", 0.045, "call", "bermudan", "2028-01-15", "2033-01-15", 0.025),
        ("B5", "bond", "2022-05-01", "2031-05-01", 0.03, None, None, None, None, 0.05),
        ("B6", "bond", "2026-06-01", "2038-12-01", 0.06, "call", "bermudan", "2029-12-01", "2037-06-01", 0.012),
        ("B7", "bond", "2025-09-01", "2035-09-01", 0.04, "put", "bermudan", "2028-09-01", "2034-09-01", 0.03),
    ]
    columns: dict[str, list] = {name: [] for name in ("id", "type", "issue", "maturity", "coupon", "frequency", "option",
                                                      "exercise", "first_exercise", "last_exercise", "exercise_price",
                                                      "a", "sigma")}
    for ident, kind, issue, maturity, coupon, option, exercise, first, last, a in rows:
        for name, value in (("id", ident), ("type", kind), ("issue", issue), ("maturity", maturity), ("coupon", coupon),
                            ("frequency", 2), ("option", option), ("exercise", exercise), ("first_exercise", first),
                            ("last_exercise", last), ("exercise_price", 100.0 if option else None), ("a", a),
                            ("sigma", 0.012)):
            columns[name].append(value)
    return Trades(as_of=AS_OF, **columns)


@functools.cache
def curves() -> dict[str, DatedCurve]:
    return {"EUR": DatedCurve(as_of=AS_OF, dates=["2027-11-25", "2031-11-25", "2036-11-25"],
                              zero_rates=[0.028, 0.033, 0.037])}


@functools.cache
def reference() -> np.ndarray:
    return trinom.price(wide_book(), curves(), backend="reference").price


def test_the_book_covers_every_block_class():
    from trinom.instruments.trades import lowered

    (_, bonds), = lowered(wide_book(), curves())[0]
    n, jmax = lower_bonds(bonds, ("EUR",)).shape()
    widths = 2 * np.minimum(n, jmax) + 1
    assert widths.min() > 512 and widths.max() > 8192
    assert np.any((widths > 5120) & (widths <= 8192)) and np.any((widths > 4096) & (widths <= 5120))
    assert np.any((widths > 2048) & (widths <= 4096))


def test_block_kernel_matches_the_reference():
    timing: dict = {}
    got = trinom.price(wide_book(), curves(), backend="cuda", timing=timing)
    np.testing.assert_allclose(got.price, reference(), rtol=0, atol=F64)


def test_block_kernel_matches_the_global_memory_kernel():
    new = trinom.price(wide_book(), curves(), backend="cuda").price
    old = trinom.price(wide_book(), curves(), backend="cuda", wide_only="global").price
    np.testing.assert_allclose(new, old, rtol=0, atol=F64)


def test_block_kernel_float32_within_the_float32_rule():
    got = trinom.price(wide_book(), curves(), backend="cuda", precision="f32").price
    ref = reference()
    assert got.dtype == np.float32
    np.testing.assert_array_less(np.abs(got - ref) / np.maximum(1.0, np.abs(ref)), 1e-4)


def test_block_kernel_scenarios_equal_each_scenario_alone():
    from trinom.scenarios import CurveShift, SpreadShift

    scenarios = [None, CurveShift(1e-4), CurveShift(-1e-4), SpreadShift(0.01)]
    grid = trinom.price(wide_book(), curves(), backend="cuda", scenarios=scenarios).price
    reference_grid = trinom.price(wide_book(), curves(), backend="reference", scenarios=scenarios).price
    np.testing.assert_allclose(grid, reference_grid, rtol=0, atol=F64)
    np.testing.assert_allclose(grid[0], reference(), rtol=0, atol=F64)


@pytest.mark.parametrize("variants", ["1,2,4,6", "7,8,9,10", "0,3,5,6", "11,12,13,14,10"])
def test_every_block_variant_matches_the_reference(monkeypatch, variants: str):
    """The block kernel's variants (threads, nodes a thread, probabilities in registers or shared memory), chosen per
    width class by TRINOM_BLOCK_VARIANTS (read at each call)."""
    monkeypatch.setenv("TRINOM_BLOCK_VARIANTS", variants)
    for precision, tolerance in (("f64", F64), ("f32", None)):
        got = trinom.price(wide_book(), curves(), backend="cuda", precision=precision).price
        if tolerance:
            np.testing.assert_allclose(got, reference(), rtol=0, atol=tolerance)
        else:
            np.testing.assert_array_less(np.abs(got - reference()) / np.maximum(1.0, np.abs(reference())), 1e-4)


def one_model_book(order: list[int] | None = None) -> Trades:
    """Bonds of one model (a 0.05, sigma 0.01; trees about 2700 nodes wide): the block kernel runs each model's forward
    pass once, on its tallest tree, and every tree's backward pass from it. Three years is shorter than the tree's
    jmax steps (a narrower tree, in another width class, that reads the first of the model's ratios); calls, puts
    and a straight bond, on two curves.
    ``order``: the rows to take, in that order (default all)."""
    rows = [  # id, issue, maturity, coupon, option, exercise, first, last, curve
        ("M1", "2024-03-15", "2036-03-15", 0.05, "call", "bermudan", "2028-03-15", "2035-09-15", "EUR"),
        ("M2", "2025-01-10", "2031-01-10", 0.04, "put", "american", "2027-06-01", "2030-06-01", "USD"),
        ("M3", "2023-06-30", "2033-06-30", 0.035, "call", "european", "2029-06-29", None, "EUR"),
        ("M4", "2026-01-15", "2029-11-15", 0.045, "call", "bermudan", "2027-01-15", "2029-01-15", "USD"),
        ("M5", "2022-05-01", "2034-05-01", 0.03, None, None, None, None, "EUR"),
        ("M6", "2026-06-01", "2032-12-01", 0.06, "put", "bermudan", "2028-12-01", "2032-06-01", "USD"),
    ]
    rows = [rows[k] for k in (range(len(rows)) if order is None else order)]
    names = ("id", "issue", "maturity", "coupon", "option", "exercise", "first_exercise", "last_exercise", "curve")
    columns: dict[str, list] = {name: [row[k] for row in rows] for k, name in enumerate(names)}
    return Trades(as_of=AS_OF, type=["bond"] * len(rows), frequency=[2] * len(rows),
                  exercise_price=[100.0 if row[4] else None for row in rows], a=0.05, sigma=0.01, **columns)


@functools.cache
def two_curves() -> dict[str, DatedCurve]:
    return {**curves(), "USD": DatedCurve(as_of=AS_OF, dates=["2027-11-25", "2031-11-25", "2036-11-25"],
                                          zero_rates=[0.041, 0.038, 0.036])}


def test_one_forward_pass_a_model_matches_the_reference():
    from trinom.scenarios import CurveShift, SpreadShift

    book, market = one_model_book(), two_curves()
    scenarios = [None, CurveShift(1e-4), SpreadShift(0.01)]
    want = trinom.price(book, market, backend="reference", scenarios=scenarios).price
    got = trinom.price(book, market, backend="cuda", scenarios=scenarios).price
    np.testing.assert_allclose(got, want, rtol=0, atol=F64)
    alone = trinom.price(book, market, backend="cuda").price
    np.testing.assert_allclose(alone, want[0], rtol=0, atol=F64)
    with pytest.MonkeyPatch.context() as patch:  # each tree its own forward pass
        patch.setenv("TRINOM_BLOCK_SHARE", "0")
        np.testing.assert_allclose(trinom.price(book, market, backend="cuda").price, alone, rtol=0, atol=F64)
    f32 = trinom.price(book, market, backend="cuda", precision="f32").price
    np.testing.assert_array_less(np.abs(f32 - want[0]) / np.maximum(1.0, np.abs(want[0])), 1e-4)
    for variants in ("7,8,9,10", "11,12,13,14,10"):  # the few-trees and many-trees variants of every class
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TRINOM_BLOCK_VARIANTS", variants)
            np.testing.assert_allclose(trinom.price(book, market, backend="cuda").price, want[0], rtol=0, atol=F64)


def test_a_shared_forward_pass_gives_each_tree_its_own_price():
    """A tree priced in a book of its model equals it priced alone (the model's forward pass is the tallest tree's,
    whose first n ratios are a shorter tree's own: the same within float64's last bits, which a tree shorter than jmax,
    laid out on fewer threads, sums in another order), and the book's order does not change a price."""
    book, market = one_model_book(), two_curves()
    together = trinom.price(book, market, backend="cuda").price
    backwards = trinom.price(one_model_book(list(range(len(book)))[::-1]), market, backend="cuda").price
    np.testing.assert_allclose(backwards[::-1], together, rtol=0, atol=1e-13)
    for row in range(len(book)):
        alone = trinom.price(one_model_book([row]), market, backend="cuda").price
        np.testing.assert_allclose(alone, together[row:row + 1], rtol=0, atol=F64)


# --- the futhark engine's GPU target: wide trees in the stepped shape (fut/fast-bonds.fut's bonds_stepped) -----------
def futhark_cuda() -> dict:
    from trinom.engines import bonds_futhark_fast

    usable, why = bonds_futhark_fast.available("cuda")
    if not usable:
        pytest.fail(f"the futhark engine's cuda target is not built here: {why}")
    return {"backend": "futhark", "target": "cuda"}


def test_futhark_cuda_wide_trees_match_the_reference():
    """Every tree of the wide book is too wide for a workgroup, so the futhark engine's cuda target prices it in the
    stepped shape; float64 within 1e-11, float32 within the float32 rule, scenarios and two models on two curves."""
    from trinom.scenarios import CurveShift

    options = futhark_cuda()
    np.testing.assert_allclose(trinom.price(wide_book(), curves(), **options).price, reference(), rtol=0, atol=F64)
    f32 = trinom.price(wide_book(), curves(), precision="f32", **options).price
    np.testing.assert_array_less(np.abs(f32 - reference()) / np.maximum(1.0, np.abs(reference())), 1e-4)
    book, market = one_model_book(), two_curves()
    scenarios = [None, CurveShift(1e-4)]
    want = trinom.price(book, market, backend="reference", scenarios=scenarios).price
    np.testing.assert_allclose(trinom.price(book, market, scenarios=scenarios, **options).price, want, rtol=0, atol=F64)
