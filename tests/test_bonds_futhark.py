"""The Futhark bond backend (fut/bonds.fut through ``trinom.engines.bonds_futhark``).

Tolerances (measured on the c and multicore targets in brackets):

* float64: the paper's sample within 1e-11 of ``out64`` [0: identical bits], the seven ``*_50``
  files within 1e-11 of the NumPy reference [0];
* float32: the sample within 1e-9 of ``out32``, which has 9 decimals [5e-10: identical floats];
  the ``*_50`` files within 1e-6 relative of the reference's float32 [0: identical bits]. Against
  float64, float32 is within 1.7e-5 relative on every bond whose node rates stay within
  +-1000 %/year (jmax dr <= 10, 242 of the 350); beyond, the trees are ill-conditioned (sigma up
  to 0.9) and float32 differs from float64 by up to 16 %, in the paper's float build as here.

OpenCL runs on PoCL with the sample only (slow to compile); cuda and OpenCL on NVIDIA are
``gpu`` tests with float32 checked against float64 on the well-conditioned bonds.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import PAPER_SAMPLE, gpu_present, load_paper
from trinom.bonds import BondPortfolio
from trinom.engines import bonds_futhark
from trinom.engines import bonds_reference as reference

F64_TOLERANCE = 1e-11
OUT32_TOLERANCE = 1e-9
F32_REFERENCE_RTOL = 1e-6
#: float32 against float64 on well-conditioned bonds (jmax dr <= WELL_CONDITIONED).
F32_VS_F64_RTOL = 5e-5
WELL_CONDITIONED = 10.0
CPU_TARGETS = ["c", "multicore"]
POCL = "Portable Computing Language"

_cache: dict[tuple[str, str], tuple] = {}


def paper(name: str, precision: str = "f64"):
    """``(bonds, curves, expected)``: out64/out32 for the sample, the reference's prices otherwise."""
    key = (name, precision)
    if key not in _cache:
        bonds, curves, expected = load_paper(name, precision)
        if expected is None:
            expected = reference.price(bonds, curves, precision)
        _cache[key] = (bonds, curves, np.asarray(expected, dtype=np.float64))
    return _cache[key]


def require(target: str) -> None:
    usable, why = bonds_futhark.available(target)
    assert usable, f"futhark bonds on {target} should be usable here: {why}"


def worst(got: np.ndarray, expected: np.ndarray) -> tuple[float, int]:
    error = np.abs(got.astype(np.float64) - expected)
    return float(error.max()), int(np.argmax(error))


def well_conditioned(bonds: BondPortfolio) -> np.ndarray:
    """Bonds whose node rates stay within +-1000 %/year: jmax dr <= WELL_CONDITIONED."""
    geometry = bonds.geometry()
    return geometry.jmax * geometry.dr <= WELL_CONDITIONED


def early_exercise_bond() -> BondPortfolio:
    """Sample bond 4 (Bermudan call, 9 coupons from step 12) made exercisable from step 1, before
    its first coupon: the case in which the paper's pointer reads the previous bond's cash flows (Q3)."""
    bonds, _, _ = paper(PAPER_SAMPLE)
    fields = bonds[[4]].as_dict()
    fields["first_exercise"] = np.array([1])
    return BondPortfolio(**fields)


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_price_does_not_depend_on_position(target):
    require(target)
    sample, curves, _ = paper(PAPER_SAMPLE)
    bond = early_exercise_bond()
    alone = reference.price(bond, curves)[0]
    placements = {0: [bond, sample], 1: [sample[[0]], bond, sample[1:]], 4: [sample[:4], bond, sample[4:]],
                  20: [sample, bond]}
    sample_prices = bonds_futhark.price(sample, curves, "f64", target=target)
    for position, parts in placements.items():
        prices = bonds_futhark.price(BondPortfolio.concatenate(parts), curves, "f64", target=target)
        assert prices[position] == pytest.approx(alone, abs=F64_TOLERANCE), f"at position {position}"
        others = np.delete(prices, position)
        assert np.array_equal(others, sample_prices), f"neighbours changed with the bond at {position}"
    # The early exercise right is worth something (the test exercises the Q3 path).
    assert alone < paper(PAPER_SAMPLE)[2][4] - 1e-3


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_float32_tree_has_the_float64_height(target):
    """Maturity 13/12 years is 13.0000005 steps in float32; the tree must still have 13 steps."""
    require(target)
    _, curves, _ = paper(PAPER_SAMPLE)
    bond = BondPortfolio(term_unit=[360], term_steps=[12], a=[0.1], sigma=[0.01], maturity=[13 / 12],
                         cashflow_count=[2], cashflow_step=[12, 13], repayment=[0.0, 100.0], coupon=[5.0, 5.0],
                         spread=[1.0], option_type=["call"], strike=[95.0], first_exercise=[6],
                         last_exercise=[6], exercise_frequency=[1], curve_index=[0])
    assert bond.validate(curves) == [] and int(bond.height()[0]) == 13
    expected64 = reference.price(bond, curves, "f64")
    expected32 = reference.price(bond, curves, "f32")
    got64 = bonds_futhark.price(bond, curves, "f64", target=target)
    got32 = bonds_futhark.price(bond, curves, "f32", target=target)
    assert abs(got64[0] - expected64[0]) <= F64_TOLERANCE
    assert got32[0] == pytest.approx(expected32[0], rel=F32_REFERENCE_RTOL)
    assert got32[0] == pytest.approx(expected64[0], rel=F32_VS_F64_RTOL)


def test_entry_arrays_have_the_entry_types():
    bonds, curves, _ = paper(PAPER_SAMPLE)
    for precision, real in (("f64", np.float64), ("f32", np.float32)):
        arrays = bonds_futhark.entry_arrays(bonds, curves, precision)
        assert len(arrays) == 19
        reals = {2, 3, 4, 7, 8, 9, 11, 17}
        for k, array in enumerate(arrays):
            assert array.dtype == (real if k in reals else np.int32), k
            assert array.flags.c_contiguous
        assert arrays[6].size == int(bonds.cashflow_count.sum()) == 164
        assert arrays[16].tolist() == [11] and arrays[18][-1] == 3653


def test_empty_portfolio_bad_target_and_default_target():
    bonds, curves, _ = paper(PAPER_SAMPLE)
    empty = bonds[np.array([], dtype=np.int64)]
    assert bonds_futhark.price(empty, curves, "f32", target="c").dtype == np.float32
    assert bonds_futhark.price(empty, curves, "f64").shape == (0,)
    with pytest.raises(ValueError, match="unknown target"):
        bonds_futhark.price(bonds, curves, target="pyopencl")
    assert bonds_futhark.available("pyopencl")[0] is False
    with pytest.raises(TypeError, match="unknown option"):
        bonds_futhark.price(bonds, curves, chunk_width=64)
    if not gpu_present()[0]:
        assert bonds_futhark.default_target() == "multicore"


# --- GPU -----------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_is_the_default_target():
    assert bonds_futhark.default_target() == "cuda"
