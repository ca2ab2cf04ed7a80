"""Listed exercise points on the CUDA bond engines (the warp-segment and the wide-tree kernel of ``cuda``, the
``futhark`` and ``futhark-paper`` engines on their cuda target), the scenario batch and the library's spread search,
against the NumPy reference. The bonds are tests/test_listed_exercise.py's.

Tolerances: float64 1e-11 absolute (tests/test_bonds_cuda_gpu.py's); float32 1e-4 relative to the float64 reference
(these trees are small and well conditioned: float's range holds them).
"""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from test_listed_exercise import CURVES, as_listed, coupon_bond, portfolio, schedules, step_down, windows
from trinom.bonds import BondPortfolio
from trinom.bonds.generator import a_for_width
from trinom.engines import bonds_cuda, bonds_futhark, bonds_futhark_fast
from trinom.engines import bonds_reference as reference
from trinom.lattice.constants import PUT

pytestmark = pytest.mark.gpu

F64 = 1e-11
F32_RELATIVE = 1e-4


def wide_schedules() -> BondPortfolio:
    """Step-down calls and puts on trees 601 and 777 nodes wide (past the warp kernel's 512)."""
    a = a_for_width(np.array([601, 777]))
    return portfolio(step_down(a=float(a[0])), step_down(side=PUT, a=float(a[1]), sigma=0.02, window=(36, 96, 6),
                                                         strike=99.0))


def cases() -> dict[str, BondPortfolio]:
    """The bonds of the CPU tests: step-down schedules, windows as listed points, puts, an empty window, a point at
    the maturity step, a window and a point at one step, wide trees, and bonds without points among them."""
    return {
        "step-down": schedules(),
        "windows-as-points": as_listed(windows()),
        "put": portfolio(step_down(side=PUT, sigma=0.02), step_down(side=PUT, sigma=0.02, shift=-101.0)),
        "empty-window": portfolio(coupon_bond(6.0, window=(30, 20, 1), strike=0.0, points=[(24, 100.0), (36, 100.0)])),
        "point-at-maturity": portfolio(coupon_bond(5.0, points=[(24, 99.0), (60, 50.0)])),
        "window-and-point": portfolio(coupon_bond(5.0, window=(24, 24, 1), strike=101.0, points=[(24, 99.0)]),
                                      coupon_bond(5.0, side=PUT, window=(24, 24, 1), strike=99.0, points=[(24, 101.0)])),
        "wide": wide_schedules(),
        "mixed": BondPortfolio.concatenate([windows(), schedules(), wide_schedules(), windows()]),
    }


def engines() -> dict[str, object]:
    found = {"cuda": lambda b, p="f64": bonds_cuda.price(b, CURVES, p),
             "cuda-wide-only": lambda b, p="f64": bonds_cuda.price(b, CURVES, p, wide_only=True),
             "cuda-block-32": lambda b, p="f64": bonds_cuda.price(b, CURVES, p, block_size=32)}
    if bonds_futhark.available("cuda")[0]:
        found["futhark-paper/cuda"] = lambda b, p="f64": bonds_futhark.price(b, CURVES, p, target="cuda")
    if bonds_futhark_fast.available("cuda")[0]:
        found["futhark/cuda"] = lambda b, p="f64": bonds_futhark_fast.price(b, CURVES, p, target="cuda")
    return found


ENGINES = ("cuda", "cuda-wide-only", "cuda-block-32", "futhark-paper/cuda", "futhark/cuda")


def engine(name: str):
    found = engines()
    if name not in found:
        pytest.skip(f"{name} is not built here")
    return found[name]


@pytest.mark.parametrize("case", sorted(cases()))
@pytest.mark.parametrize("name", ENGINES)
def test_listed_points_on_every_cuda_engine_equal_the_reference(name: str, case: str):
    bonds = cases()[case]
    assert bonds.validate(CURVES) == []
    got = engine(name)(bonds)
    expected = reference.price(bonds, CURVES)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=0, atol=F64, err_msg=f"{name} on {case}")


@pytest.mark.parametrize("name", ENGINES)
def test_float32_on_every_cuda_engine(name: str):
    bonds = BondPortfolio.concatenate([schedules(), wide_schedules()])
    got = engine(name)(bonds, "f32")
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, reference.price(bonds, CURVES), rtol=F32_RELATIVE, err_msg=name)


def test_windows_as_points_reproduce_the_windows_on_cuda():
    bonds = windows()
    for wide_only in (False, True):
        np.testing.assert_allclose(bonds_cuda.price(as_listed(bonds), CURVES, wide_only=wide_only),
                                   bonds_cuda.price(bonds, CURVES, wide_only=wide_only), rtol=0, atol=1e-12)


def test_bonds_without_points_keep_their_bits_beside_bonds_with_them():
    plain = windows()
    mixed = cases()["mixed"]
    for wide_only in (False, True):
        alone = bonds_cuda.price(plain, CURVES, wide_only=wide_only)
        np.testing.assert_array_equal(bonds_cuda.price(mixed, CURVES, wide_only=wide_only)[:len(plain)], alone)


def test_scenario_batch_on_cuda():
    """Scenario entries (one forward pass per bond, a backward pass per entry, resuming from a checkpoint where a
    key rate moves only early on) carry the listed points, as each scenario priced alone by the reference."""
    from trinom.scenarios import CurveShift, SigmaShift, SpreadShift

    bonds = BondPortfolio.concatenate([schedules(), wide_schedules(), windows()])
    scenarios = [None, CurveShift(1e-4), CurveShift(-1e-4, pillar=1), CurveShift(1e-4, pillar=0), SigmaShift(1e-4),
                 SpreadShift(0.01), SpreadShift(-0.02)]
    expected = trinom.price(bonds, CURVES, scenarios=scenarios, backend="reference").price
    for knobs in ({}, {"wide_only": True}):
        got = trinom.price(bonds, CURVES, scenarios=scenarios, backend="cuda", **knobs).price
        np.testing.assert_allclose(got, expected, rtol=0, atol=F64, err_msg=str(knobs))
    futhark = trinom.price(bonds, CURVES, scenarios=scenarios, backend="futhark", target="cuda").price
    np.testing.assert_allclose(futhark, expected, rtol=0, atol=F64)


@pytest.mark.parametrize("wide_only", [False, True], ids=["warp-segments", "wide-kernel"])
def test_the_librarys_spread_search_with_listed_points(wide_only: bool):
    """The search inside the library carries d price / d spread = 0 where a listed point binds: Newton converges
    in few steps, to the spreads that reprice the market on the reference."""
    from trinom.analytics.oas import oas

    bonds = BondPortfolio.concatenate([schedules(), wide_schedules()])
    model = reference.price(bonds, CURVES) - bonds.accrued()
    market = model * (1 + np.linspace(-0.03, 0.03, len(bonds)))
    knobs = {"wide_only": True} if wide_only else {}
    result = oas(bonds, CURVES, market, backend="cuda", search="engine", **knobs)
    assert (result.status == "converged").all(), result.status
    assert result.pricings == 1 and result.iterations.max() <= 12
    again = BondPortfolio(**{**bonds.as_dict(), "spread": result.oas})
    np.testing.assert_allclose(reference.price(again, CURVES) - again.accrued(), market, rtol=0, atol=1e-8)
    batched = oas(bonds, CURVES, market, backend="cuda", search="batched", **knobs)
    np.testing.assert_allclose(result.oas, batched.oas, rtol=0, atol=1e-7)
