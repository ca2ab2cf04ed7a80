"""Every bond backend agrees with the reference pricer (CPU targets here, GPU ones under `make test-gpu`)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import PAPER_SAMPLE, load_paper
from trinom.backends import BackendUnavailable
from trinom.bonds import backends, price_bonds, reference
from trinom.bonds.generator import generate_bonds

CPU_TARGETS = [("futhark", "c"), ("futhark", "multicore")]
GPU_TARGETS = [("cuda", None), ("futhark", "cuda"), ("futhark", "opencl")]


def require(name: str, target: str | None) -> None:
    try:
        ok, why = backends.get(name).available(target)
    except BackendUnavailable as err:
        ok, why = False, str(err)
    if not ok:
        pytest.fail(f"bond backend {name}/{target} is not usable here: {why}")


@pytest.fixture(scope="module")
def mixed():
    """Small slices of every paper dataset in one portfolio: all styles, both types, 4 curves."""
    from trinom.bonds import BondPortfolio
    from trinom.bonds.generator import DATASETS

    parts = [generate_bonds(name, 6 if name in ("R1", "R2", "R3") else 10, seed=21)[0] for name in DATASETS]
    bonds = BondPortfolio.concatenate(parts)
    curves = generate_bonds("U1", 1, seed=0)[1]
    return bonds, curves, reference.price(bonds, curves, "f64")


def check(name: str, target: str | None, mixed) -> None:
    bonds, curves, expected = mixed
    options = {"target": target} if target else {}
    got = price_bonds(bonds, curves, backend=name, **options).dirty
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-11)
    sample, sample_curves, out64 = load_paper(PAPER_SAMPLE)
    np.testing.assert_allclose(price_bonds(sample, sample_curves, backend=name, **options).dirty, out64, rtol=0, atol=1e-11)


@pytest.mark.parametrize("name,target", CPU_TARGETS, ids=[f"{n}-{t}" for n, t in CPU_TARGETS])
def test_cpu_backends_agree_with_the_reference(name, target, mixed):
    require(name, target)
    check(name, target, mixed)


@pytest.mark.gpu
@pytest.mark.parametrize("name,target", GPU_TARGETS, ids=[f"{n}-{t}" if t else n for n, t in GPU_TARGETS])
def test_gpu_backends_agree_with_the_reference(name, target, mixed):
    require(name, target)
    check(name, target, mixed)


def test_auto_picks_a_usable_backend_and_prices_correctly(mixed):
    bonds, curves, expected = mixed
    name, options = backends.choose()
    assert backends.usable(name, options.get("target"))
    np.testing.assert_allclose(price_bonds(bonds, curves).dirty, expected, rtol=0, atol=1e-11)
