"""backend="auto": the inspector's statistics, the rule, and that auto always prices correctly."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import load_thesis
from trinom import auto
from trinom.generator import generate


@pytest.mark.parametrize("kind,size", [("uniform", 3), ("skewed", 400), ("random", 50), ("skewed-const-width", 200)])
def test_auto_picks_a_usable_backend_and_prices_correctly(kind, size):
    portfolio = generate(kind, size, seed=5)
    name, options = auto.choose(portfolio)
    assert auto.usable(name, options.get("target"))
    expected = trinom.price(portfolio, backend="reference")
    np.testing.assert_allclose(trinom.price(portfolio, backend="auto"), expected, rtol=0, atol=1e-11)
    np.testing.assert_allclose(trinom.price(portfolio, backend="auto", precision="f32"), expected, rtol=0, atol=2e-3)


def test_auto_matches_the_thesis_outputs(thesis_curve):
    portfolio, expected = load_thesis("book")
    np.testing.assert_allclose(trinom.price(portfolio, thesis_curve), expected, rtol=0, atol=1e-12)


def test_inspector_statistics():
    portfolio, _ = load_thesis("4_SKEWED")
    profile = auto.inspect(portfolio)
    assert profile.options == 65536 and profile.widest == 511
    assert profile.work == pytest.approx(1.787e9, rel=1e-3)  # docs/model.md §1.11
    assert profile.width_skewness == pytest.approx(5.19, abs=0.01)
    assert profile.height_skewness == pytest.approx(2.40, abs=0.01)


def test_rule(monkeypatch):
    """The documented rule, with the availability of each backend simulated."""
    book, _ = load_thesis("book")
    big = generate("skewed", 2000, seed=1)
    available: set[tuple[str, str | None]] = set()
    monkeypatch.setattr(auto, "usable", lambda name, target=None: (name, target) in available)
    assert auto.choose(big) == ("reference", {})
    available |= {("futhark-basic", "c")}
    assert auto.choose(big) == ("futhark-basic", {"target": "c"})
    available |= {("futhark-basic", "multicore")}
    assert auto.choose(big) == ("futhark-basic", {"target": "multicore"})
    assert auto.choose(book) == ("futhark-basic", {"target": "c"})  # tiny: the CPU beats a GPU call
    available |= {("cuda", None)}
    assert auto.choose(big) == ("cuda", {})
    assert auto.choose(book) == ("cuda", {})  # on the H100 cuda beat the c target even on the book
    assert "cuda" in auto.describe_choice(big) and "node updates" in auto.describe_choice(big)
