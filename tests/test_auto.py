"""backend="auto": the inspector's statistics, the rule, the caller's target, and that auto prices correctly."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import load_thesis
from trinom import auto, backends
from trinom.bonds.generator import generate_bonds
from trinom.generator import generate


@pytest.mark.parametrize("kind,size", [("uniform", 3), ("skewed", 400), ("random", 50), ("skewed-const-width", 200)])
def test_auto_picks_a_usable_engine_and_prices_correctly(kind, size):
    portfolio = generate(kind, size, seed=5)
    name, target = auto.choose(portfolio.lower())
    assert auto.usable(name, target)
    expected = trinom.price(portfolio, backend="reference").price
    result = trinom.price(portfolio, backend="auto")
    assert result.engine == name + (f"/{target}" if target else "")
    np.testing.assert_allclose(result.price, expected, rtol=0, atol=1e-11)
    np.testing.assert_allclose(trinom.price(portfolio, backend="auto", precision="f32").price, expected, rtol=0,
                               atol=2e-3)


def test_auto_prices_bonds_and_mixed_books():
    bonds, curves = generate_bonds("S1", 20, seed=3)
    options = generate("skewed", 30, seed=2)
    expected = np.concatenate([trinom.price(options, curves[0], backend="reference").price,
                               trinom.price(bonds, curves, backend="reference").price])
    np.testing.assert_allclose(trinom.price([options, bonds], curves).price, expected, rtol=0, atol=1e-11)


def test_auto_matches_the_thesis_outputs(thesis_curve):
    portfolio, expected = load_thesis("book")
    np.testing.assert_allclose(trinom.price(portfolio, thesis_curve).price, expected, rtol=0, atol=1e-12)


def test_inspector_statistics():
    portfolio, _ = load_thesis("4_SKEWED")
    profile = auto.inspect(portfolio.lower())
    assert profile.trees == 65536 and profile.widest == 511
    assert profile.work == pytest.approx(1.787e9, rel=1e-3)  # anchors.md
    assert profile.width_skewness == pytest.approx(5.19, abs=0.01)
    assert profile.height_skewness == pytest.approx(2.40, abs=0.01)


def test_rule(monkeypatch):
    """The documented rule, with the availability of each engine simulated."""
    book = load_thesis("book")[0].lower()
    big = generate("skewed", 2000, seed=1).lower()
    available: set[tuple[str, str | None]] = set()
    monkeypatch.setattr(auto, "usable", lambda name, target=None: (name, target) in available)
    assert auto.choose(big) == ("reference", None)
    available |= {("futhark", "c")}
    assert auto.choose(big) == ("futhark", "c")
    available |= {("futhark", "multicore")}
    assert auto.choose(big) == ("futhark", "multicore")
    assert auto.choose(book) == ("futhark", "c")  # tiny: one thread beats the thread pool
    available |= {("futhark", "opencl")}
    monkeypatch.setattr(auto, "opencl_gpu", lambda: False)
    assert auto.choose(big) == ("futhark", "multicore")  # OpenCL on the CPU (PoCL): not a GPU
    monkeypatch.setattr(auto, "opencl_gpu", lambda: True)
    assert auto.inspect(big).work >= auto.OPENCL_GPU_WORK
    assert auto.choose(big) == ("futhark", "opencl")  # an OpenCL GPU (AMD, Intel) and no CUDA
    assert auto.choose(book) == ("futhark", "c")  # tiny: not worth a GPU call
    available |= {("cuda", None)}
    assert auto.choose(big) == ("cuda", None)
    assert auto.choose(book) == ("cuda", None)  # on the H100 cuda beat the c target even on the book
    assert "cuda" in auto.describe_choice(big) and "node updates" in auto.describe_choice(big)


def test_auto_honours_the_callers_target(monkeypatch):
    """A target given with auto is kept (it used to be overridden by auto's own choice)."""
    big = generate("skewed", 2000, seed=1).lower()
    available = {("cuda", None), ("futhark", "c"), ("futhark", "multicore"), ("futhark", "opencl")}
    monkeypatch.setattr(auto, "usable", lambda name, target=None: (name, target) in available)
    assert auto.choose(big, target="c") == ("futhark", "c")
    assert auto.choose(big, target="opencl") == ("futhark", "opencl")
    assert auto.choose(big, target="cuda") == ("cuda", "cuda")
    with pytest.raises(backends.BackendUnavailable, match="no engine can run on target 'pyopencl'"):
        auto.choose(big, target="pyopencl")


def test_auto_with_a_target_prices_there():
    portfolio = generate("uniform", 20, seed=1)
    assert trinom.price(portfolio, target="c").engine == "futhark/c"
