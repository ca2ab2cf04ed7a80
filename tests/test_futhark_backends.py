"""The Futhark option kernels (futhark-basic, futhark-flat): chunking, input order, interface, options.

Their prices against the thesis' outputs on every target are in the conformance suite
(tests/test_conformance.py). The libraries are built by ``make lib`` beforehand.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import trinom
from conftest import data_dir, load_thesis
from trinom.bonds.generator import generate_bonds
from trinom.engines import (
    BackendUnavailable,
    _futhark,
    bonds_futhark,
    bonds_futhark_fast,
    futhark_basic,
    futhark_fast,
    futhark_flat,
)
from trinom.engines import bonds_reference as bond_reference

F64_TOLERANCE = 1e-11
F32_TOLERANCE = 1.2e-4
BACKENDS = {"futhark-basic": futhark_basic, "futhark-flat": futhark_flat}
#: (dataset, number of leading options used; None = all).
CPU_DATASETS = [("book", None), ("options-1000", None), ("0_UNIFORM_1000", None), ("1_RAND_1000", None),
                ("2_RANDCONSTHEIGHT_1000", None), ("3_RANDCONSTWIDTH_1000", None), ("4_SKEWED", 500),
                ("5_SKEWEDCONSTHEIGHT", 500), ("6_SKEWEDCONSTWIDTH", 500)]
SMALL_DATASETS = [("book", None), ("options-1000", 100)]

_loaded: dict[tuple[str, str], tuple[trinom.Portfolio, np.ndarray]] = {}


def dataset(name: str, count: int | None, precision: str) -> tuple[trinom.Portfolio, np.ndarray]:
    """The first ``count`` options of a thesis dataset and their reference prices (cached)."""
    if (name, precision) not in _loaded:
        _loaded[(name, precision)] = load_thesis(name, precision)
    portfolio, expected = _loaded[(name, precision)]
    if count is None:
        return portfolio, expected
    return portfolio[:count], expected[:count]


def require(backend: str, target: str) -> None:
    """Skip only where the target cannot be built here; a missing CPU library is a failure."""
    module = BACKENDS[backend]
    if target in ("opencl", "pyopencl"):
        if target == "pyopencl" and importlib.util.find_spec("pyopencl") is None:
            pytest.skip("pyopencl is not installed")
        if not _futhark.opencl_platforms():
            pytest.skip("no OpenCL platform here")
    usable, why = module.available(target)
    assert usable, f"{backend} on {target} should be usable here: {why}"


def check(backend: str, target: str, name: str, count: int | None, precision: str, curve: trinom.YieldCurve) -> None:
    portfolio, expected = dataset(name, count, precision)
    prices = BACKENDS[backend].price(portfolio, curve, precision, target=target)
    dtype = np.float64 if precision == "f64" else np.float32
    assert prices.dtype == dtype and prices.shape == expected.shape
    tolerance = F64_TOLERANCE if precision == "f64" else F32_TOLERANCE
    error = np.abs(prices.astype(np.float64) - expected)
    worst = int(np.argmax(error))
    assert error[worst] <= tolerance, (f"{backend}/{target} {name} {precision}: option {worst} priced "
                                       f"{prices[worst]!r}, reference {expected[worst]!r}")


# --- futhark-flat's chunking ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def mixed() -> tuple[trinom.Portfolio, np.ndarray]:
    """300 options of random widths (7..511) and heights (13..1201), some with maturity <= expiry."""
    portfolio, expected = dataset("1_RAND_1000", None, "f64")
    shallow = np.flatnonzero(portfolio.heights() < 120)[:150]  # cheap to price, widths still vary
    rows = np.concatenate([shallow, np.flatnonzero(portfolio.maturity <= portfolio.expiry)[:5]])
    return portfolio[rows], expected[rows]


@pytest.mark.parametrize("options", [{"chunk_width": 1}, {"chunk_width": 64}, {"chunk_width": 100},
                                     {"chunk_width": 1024}, {"whole_portfolio": True}],
                         ids=["w1", "w64", "w100", "w1024", "whole"])
def test_flat_chunkings_agree(mixed, options, thesis_curve):
    """Every option alone (w=1), narrow chunks (many options wider than w), wide chunks and one
    chunk all price exactly."""
    portfolio, expected = mixed
    prices = futhark_flat.price(portfolio, thesis_curve, "f64", target="c", **options)
    assert np.max(np.abs(prices - expected)) <= F64_TOLERANCE


def test_prices_come_back_in_input_order(mixed, thesis_curve):
    portfolio, expected = mixed
    order = np.random.default_rng(7).permutation(len(portfolio))
    for module in BACKENDS.values():
        prices = module.price(portfolio[order], thesis_curve, "f64", target="c")
        assert np.max(np.abs(prices - expected[order])) <= F64_TOLERANCE, module.NAME


# --- interface --------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_interface(backend):
    module = BACKENDS[backend]
    assert module.NAME == backend
    assert module.TARGETS == ("c", "multicore", "opencl", "cuda", "pyopencl")
    for target in (*module.TARGETS, None):
        usable, why = module.available(target)
        assert isinstance(usable, bool) and isinstance(why, str) and why
    assert module.available("no-such-target")[0] is False


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_default_target_is_the_best_built_one(backend):
    target = _futhark.default_target(BACKENDS[backend].PROGRAM)
    if not _futhark.nvidia_gpu_present():
        assert target in ("multicore", "c")
    assert BACKENDS[backend].available(None)[0]


def test_bad_options_are_refused(thesis_curve):
    portfolio, _ = dataset("book", None, "f64")
    with pytest.raises(TypeError, match="chunk_size"):
        futhark_flat.price(portfolio, thesis_curve, target="c", chunk_size=4)
    with pytest.raises(TypeError, match="chunk_width"):
        futhark_basic.price(portfolio, thesis_curve, target="c", chunk_width=4)
    for bad in (0, -3, 2.5, True, 1 << 21):
        with pytest.raises(ValueError, match="chunk_width"):
            futhark_flat.price(portfolio, thesis_curve, target="c", chunk_width=bad)
    with pytest.raises(ValueError, match="precision"):
        futhark_basic.price(portfolio, thesis_curve, "f16", target="c")
    with pytest.raises(ValueError, match="target"):
        futhark_basic.price(portfolio, thesis_curve, target="gpu")


def test_unbuildable_cuda_is_reported(thesis_curve):
    if _futhark.nvidia_gpu_present():
        pytest.skip("a GPU is present: the GPU tests cover cuda")
    usable, why = futhark_basic.available("cuda")
    assert not usable and why
    portfolio, _ = dataset("book", None, "f64")
    with pytest.raises(BackendUnavailable):
        futhark_basic.price(portfolio, thesis_curve, target="cuda")


def test_input_arrays_match_the_entry_contract(thesis_curve):
    portfolio, _ = dataset("book", None, "f64")
    for precision, real in (("f64", np.float64), ("f32", np.float32)):
        arrays = _futhark.input_arrays(portfolio, thesis_curve, precision)
        assert [a.dtype for a in arrays] == [real, real, real, np.int32, np.int32, real, real, np.int32, real, np.int32]
        assert all(a.flags.c_contiguous for a in arrays)
        assert list(arrays[4]) == [1, 2, 3, 4, 5] and list(arrays[9][:2]) == [3, 31]


# --- futhark (fut/fast.fut): the GPU shape's classes, run on the c target ---------------------------------
@pytest.mark.parametrize("dataset", ["1_RAND_1000", "2_RANDCONSTHEIGHT_1000", "options-1000"])
@pytest.mark.parametrize("precision,tolerance", [("f64", 1e-11), ("f32", 1.2e-4)])
def test_fast_gpu_shape_matches_the_thesis_on_the_cpu(dataset, precision, tolerance, thesis_curve):
    """The workgroup-per-option entry (grouped64/32), class by class as on a GPU, equals the thesis' outputs."""
    portfolio, expected = load_thesis(dataset, precision)
    classes = futhark_fast.classes(portfolio, precision)
    assert sorted(np.concatenate([rows for _size, rows in classes]).tolist()) == list(range(len(portfolio)))
    assert all(size % futhark_fast.GROUP_STEP == 0 and size >= futhark_fast.windows(portfolio[rows], precision).max()
               for size, rows in classes)
    prices = futhark_fast.price_grouped(portfolio, thesis_curve, precision, "c", {})
    np.testing.assert_allclose(prices, expected, rtol=0, atol=tolerance)


def test_fast_gpu_shape_prices_the_small_trees_of_the_book():
    """data/book.in has a tree of jmax 2, whose centre node takes both edge nodes' second branches."""
    portfolio, curve = trinom.io.read_input(data_dir() / "book.in")
    assert portfolio.geometry(np.float64).jmax.min() == 2
    prices = futhark_fast.price_grouped(portfolio, curve, "f64", "c", {})
    np.testing.assert_allclose(prices, trinom.io.read_prices(data_dir() / "book.out"), rtol=0, atol=1e-11)


def test_fast_classes_send_wide_windows_to_the_per_option_entry():
    portfolio = trinom.Portfolio(strike=[60.0, 60.0], maturity=[30.0, 1.0], expiry=[1.0, 0.5], term_unit=[365, 365],
                                 term_steps=[365, 12], a=[0.002, 0.1], sigma=[0.01, 0.01], option_type=[0, 1])
    widths = futhark_fast.windows(portfolio, "f64")
    assert widths[0] > futhark_fast.MAX_GROUP
    assert [(size, rows.tolist()) for size, rows in futhark_fast.classes(portfolio, "f64")] == [(0, [0]), (32, [1])]


def test_fast_classes_fit_the_local_memory_of_opencl():
    """OpenCL guarantees 48 KiB of local memory: 558 float64 nodes of 11 levels; 1_RAND's widest trees
    (jmax 255: 513 nodes with the padding) still take one workgroup each."""
    portfolio, _ = load_thesis("1_RAND_1000", "f64")
    assert futhark_fast.widest_group("opencl", "f64") == 558 and futhark_fast.widest_group("cuda", "f64") == 1024
    widths = futhark_fast.windows(portfolio, "f64")
    assert widths.max() == 513
    for size, rows in futhark_fast.classes(portfolio, "f64", "opencl"):
        assert 0 < size <= 558 and widths[rows].max() <= size
        assert size * futhark_fast.LOCAL_LEVELS * 8 <= futhark_fast.LOCAL_MEMORY["opencl"]


# --- futhark bonds (fut/fast-bonds.fut): the GPU shape's classes, run on the c target -----------------------
def _assert_matches_the_reference(price, bonds: trinom.BondPortfolio, curves: list) -> None:
    """``price(bonds, curves, precision, "c", {})`` against the reference: f64 to 1e-11; f32 to 1e-4 of the float64
    reference, relative to max(1, |price|), where the float32 reference is that close (at least half the bonds)."""
    ref64 = bond_reference.price(bonds, curves, "f64")
    np.testing.assert_allclose(price(bonds, curves, "f64", "c", {}), ref64, rtol=0, atol=1e-11)
    scale = np.maximum(1.0, np.abs(ref64))
    close = np.abs(bond_reference.price(bonds, curves, "f32") - ref64) <= 1e-4 * scale
    f32 = price(bonds, curves, "f32", "c", {}).astype(np.float64)
    assert close.mean() > 0.5 and (np.abs(f32 - ref64)[close] <= 1e-4 * scale[close]).all()


@pytest.mark.parametrize("name", ["U1", "R1", "R3", "S1"])
def test_fast_bonds_gpu_shape_matches_the_reference_on_the_cpu(name):
    """bonds_grouped64/32, class by class as on a GPU, equal the reference (f64 to 1e-11; f32 to 1e-4 of the
    float64 reference, relative to max(1, |price|), where the float32 reference is that close)."""
    bonds, curves = generate_bonds(name, 40, seed=5)
    classes = bonds_futhark_fast.classes(bonds)
    assert sorted(np.concatenate([rows for *_, rows in classes]).tolist()) == list(range(len(bonds)))
    width, steps = bonds_futhark_fast.shapes(bonds)
    for w, n, rows in classes:
        assert w >= width[rows].max() and n >= steps[rows].max() and (np.diff(steps[rows]) <= 0).all()
    _assert_matches_the_reference(bonds_futhark_fast.price_grouped, bonds, curves)


def _three_lattices(count: int = 36, name: str = "U1") -> tuple[trinom.BondPortfolio, list]:
    """A book (``name``: U1, or R1 for bonds of many heights) whose bonds fall in three lattices (two sigmas, one
    with two term units), each of bonds of several heights, curves and spreads."""
    bonds, curves = generate_bonds(name, count, seed=7)
    fields = bonds.as_dict()
    pick = np.arange(count) % 3
    fields["a"] = np.full(count, 0.1)
    fields["sigma"] = np.where(pick == 2, 0.02, 0.01)
    fields["term_unit"] = np.where(pick == 1, fields["term_unit"][0], fields["term_unit"])
    return trinom.BondPortfolio(**fields), curves


def test_lattices_number_bonds_by_lattice_with_the_tallest_at_the_head():
    bonds, _ = _three_lattices()
    lattice, heads, steps = bonds_futhark_fast.lattices(bonds)
    keys = list(zip(bonds.term_unit, bonds.term_steps, bonds.a, bonds.sigma, strict=True))
    assert lattice[0] == 0 and (np.diff(np.maximum.accumulate(lattice)) <= 1).all()  # numbered as they appear
    for number, head in enumerate(heads):
        members = np.flatnonzero(lattice == number)
        assert {keys[v] for v in members} == {keys[head]}
        own_steps = bonds_futhark_fast.shapes(bonds[members])[1]
        assert steps[number] == own_steps.max() == bonds_futhark_fast.shapes(bonds[[head]])[1][0]
    assert len({keys[h] for h in heads}) == len(heads)


@pytest.mark.parametrize("precision", ["f64", "f32"])
def test_shared_forward_pass_equals_each_bonds_own(precision, monkeypatch):
    """bonds_shared (one forward pass per lattice) gives the bits of bonds64/32 (each bond its own forward
    pass) on the c target, in one call and in parts of whole lattices; float64 within 1e-11 of the reference."""
    bonds, curves = _three_lattices()
    own = bonds_futhark_fast._run(("one", ()), bonds, curves, precision, "c", {})
    shared = bonds_futhark_fast.price_shared(bonds, curves, precision, "c", {})
    np.testing.assert_array_equal(shared, own)
    monkeypatch.setattr(bonds_futhark_fast, "SHARED_RATIO_BYTES", 1)  # one lattice a call
    np.testing.assert_array_equal(bonds_futhark_fast.price_shared(bonds, curves, precision, "c", {}), own)
    if precision == "f64":
        np.testing.assert_allclose(shared, bond_reference.price(bonds, curves, "f64"), rtol=0, atol=1e-11)


@pytest.mark.parametrize("parts", ["one", "by height", "a tree each"])
def test_stepped_shape_matches_the_reference_on_the_cpu(parts, monkeypatch):
    """bonds_stepped64/32 (the GPU targets' shape for trees wider than a workgroup: each step one map over every
    bond's nodes, one forward pass per lattice) on the c target, in one call, in parts by height and a tree a part:
    f64 within 1e-11 of the reference, f32 within 1e-4 of it where the float32 reference is."""
    bonds, curves = _three_lattices(name="R1")
    if parts != "one":  # parts of one height each, or of one tree
        monkeypatch.setattr(bonds_futhark_fast, "STEPPED_FILL", 0)
        monkeypatch.setattr(bonds_futhark_fast, "STEPPED_HEIGHTS", 1.0)
    if parts == "a tree each":
        monkeypatch.setattr(bonds_futhark_fast, "STEPPED_BYTES", 1)
    width, steps = bonds_futhark_fast.shapes(bonds)
    made = bonds_futhark_fast.stepped_parts(width, steps, "f64")
    assert sorted(np.concatenate(made).tolist()) == list(range(len(bonds)))
    assert len(made) == {"one": 1, "by height": len(np.unique(steps)), "a tree each": len(bonds)}[parts] > 0
    assert all((np.diff(steps[rows]) <= 0).all() for rows in made)
    assert parts != "by height" or (len(made) > 1 and all(len(np.unique(steps[rows])) == 1 for rows in made))
    _assert_matches_the_reference(bonds_futhark_fast.price_stepped, bonds, curves)


def test_stepped_shape_values_flows_between_steps_on_the_cpu():
    """Dated callable and puttable bonds at 12 steps a year (coupons between steps, exercise windows) in the stepped
    shape, against the reference to 1e-11."""
    from trinom.instruments import Trades
    from trinom.instruments.trades import lowered
    from trinom.model import DatedCurve

    count = 12
    trades = Trades(as_of="2026-11-25", id=[f"B{k}" for k in range(count)], type=["bond"] * count,
                    issue=["2025-06-15"] * count, maturity=[f"{2031 + k}-0{1 + k % 9}-1{k % 10}" for k in range(count)],
                    coupon=[0.02 + 0.003 * k for k in range(count)], frequency=[2] * count,
                    option=["call", "put", None] * 4, exercise=["bermudan", "american", None] * 4,
                    first_exercise=["2028-03-01", "2028-06-01", None] * 4,
                    last_exercise=["2030-09-01", "2030-12-01", None] * 4,
                    exercise_price=[100.0, 99.5, None] * 4, a=[0.05, 0.1, 0.05, 0.2] * 3,
                    sigma=[0.01] * 6 + [0.015] * 6, steps_per_year=[12] * count)
    curves = {"default": DatedCurve(as_of="2026-11-25", dates=["2027-11-25", "2036-11-25", "2056-11-25"],
                                    zero_rates=[0.03, 0.035, 0.04])}
    (_, bonds), = lowered(trades, curves)[0]
    market = [curve.to_yield_curve() for curve in curves.values()]
    assert np.isfinite(bonds_futhark.time_arrays(bonds)[0]).any()  # flows between steps
    np.testing.assert_allclose(bonds_futhark_fast.price_stepped(bonds, market, "f64", "c", {}),
                               bond_reference.price(bonds, market, "f64"), rtol=0, atol=1e-11)


def test_fast_bond_classes_fit_the_local_memory_of_opencl():
    bonds, _ = generate_bonds("S2", 60, seed=2)
    for width, steps, rows in bonds_futhark_fast.classes(bonds, "opencl"):
        if width:
            assert bonds_futhark_fast.local_bytes(width, steps, "f64") <= 49136
        else:
            assert (bonds_futhark_fast.shapes(bonds[rows])[1] > 1000).all()
