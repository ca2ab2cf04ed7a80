"""The options' two conventions (issue 24, findings 5 and 6): the standard one is right by default, the thesis'
quirks stay for the thesis' files and ``convention="thesis"``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trinom
from trinom import io
from trinom.engines.closed_form import discount_factor, zero_coupon_bond_option
from trinom.generator import generate

CURVE = trinom.YieldCurve.thesis()


def options(convention: str = "standard", **fields) -> trinom.Portfolio:
    """Hull's put (X 63 on a 9-year bond, expiry 3 years, 12 steps a year), with ``fields`` replacing columns."""
    columns = {"strike": [63.0], "maturity": [9.0], "expiry": [3.0], "term_unit": [365], "term_steps": [12],
               "a": [0.1], "sigma": [0.01], "option_type": ["put"], **fields}
    size = max(len(v) for v in columns.values())
    columns = {k: list(v) * (size // len(v)) for k, v in columns.items()}
    return trinom.Portfolio(convention=convention, **columns)


def test_term_unit_means_days_per_term():
    """A term of 360 days with 12 steps is 12.17 steps a year, rounded to 12: the tree spans the 9 years (the thesis'
    formula spans 36 and prices the put at 45.43)."""
    book = options(term_unit=[365, 360, 30, 1], term_steps=[12, 12, 1, 1])
    assert book.steps_a_year().tolist() == [12.0, 12.0, 12.0, 365.0]
    assert book.heights().tolist() == [109, 109, 109, 3286]
    prices = trinom.price(book, CURVE, backend="reference").price
    assert prices[1] == prices[0] == prices[2]  # the same tree, within one run
    exact = zero_coupon_bond_option(book, CURVE)
    np.testing.assert_allclose(prices, exact, atol=5e-3)  # the tree's discretisation error at 12 steps a year
    assert abs(prices[3] - exact[3]) < 5e-4  # 365 steps a year


def test_thesis_convention_keeps_the_thesis_formula():
    thesis = options("thesis", term_unit=[365, 360])
    prices = trinom.price(thesis, CURVE, backend="reference").price
    assert prices[0] == pytest.approx(1.8139345526, abs=1e-9)
    assert prices[1] == pytest.approx(45.4317, abs=1e-3)  # the tree spans 36 years: the thesis' quirk, kept


def test_the_nearest_step_is_taken():
    """Maturity and expiry map to the nearest step (halves up), so the tree spans the maturity to half a step."""
    book = options(maturity=[9.04, 9.05, 9.0], expiry=[3.0, 3.0, 3.05])
    assert book.heights().tolist() == [109, 110, 109]  # 108.48 -> 108 steps, 108.6 -> 109
    assert book.geometry().expiry_step.tolist() == [36, 36, 37]  # 36.6 -> 37
    thesis = options("thesis", maturity=[9.04, 9.05, 9.0], expiry=[3.0, 3.0, 3.05])
    assert thesis.heights().tolist() == [109, 109, 109]  # the thesis truncates


@pytest.mark.parametrize("backend", ["reference", "futhark"])
def test_an_option_expiring_at_maturity_is_its_discounted_intrinsic_value(backend):
    """Finding 5: put X=63, call X=95 and put X=50 on a 3-year bond expiring at 3 are worth 0, 5 P(0,3) and 0; a put
    X=120 is worth 20 P(0,3). The thesis prices each as the bond (82.767)."""
    book = options(strike=[63.0, 95.0, 50.0, 120.0], maturity=[3.0], expiry=[3.0],
                   option_type=["put", "call", "put", "put"])
    assert book.expires_at_maturity().all()
    prices = trinom.price(book, CURVE, backend=backend).price
    bond = 100 * discount_factor(CURVE, [3.0])[0]
    np.testing.assert_allclose(prices, [0.0, 0.05 * bond, 0.0, 0.2 * bond], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(zero_coupon_bond_option(book, CURVE), prices, rtol=1e-9, atol=1e-12)
    thesis = trinom.price(trinom.Portfolio(convention="thesis", **book.as_dict()), CURVE, backend=backend).price
    np.testing.assert_allclose(thesis, bond, rtol=1e-9)


def test_expiry_at_maturity_moves_with_the_curve_and_not_with_sigma():
    book = options(strike=[95.0], maturity=[3.0], expiry=[3.0], option_type=["call"])
    scenarios = [None, trinom.scenarios.CurveShift(1e-4), trinom.scenarios.SigmaShift(1e-3)]
    prices = trinom.price(book, CURVE, backend="reference", scenarios=scenarios).price[:, 0]
    assert prices[1] < prices[0]  # a higher curve discounts the known payoff more
    assert prices[1] == pytest.approx(prices[0] * np.exp(-1e-4 * 3.0), rel=1e-6)
    assert prices[2] == pytest.approx(prices[0], rel=1e-12)


def test_expiry_after_maturity_is_an_input_error():
    book = options(maturity=[9.0, 2.0], expiry=[3.0, 3.0])
    with pytest.raises(trinom.InputError) as info:
        trinom.price(book, CURVE, backend="reference")
    assert info.value.errors == [(1, "expiry", "expiry must be at most the bond's maturity (2 years): an option "
                                  "cannot expire after its bond has matured, got 3")]
    masked = trinom.price(book, CURVE, backend="reference", errors="mask")
    assert np.isfinite(masked.price[0]) and np.isnan(masked.price[1])
    assert "expiry must be at most" in masked.error[1]
    with pytest.raises(trinom.InputError, match="row 1: expiry must be at most the bond's maturity"):
        zero_coupon_bond_option(book, CURVE)
    thesis = trinom.Portfolio(convention="thesis", **book.as_dict())
    assert thesis.validate() == []  # the thesis' files keep their quirk


def test_the_convention_follows_the_rows():
    book = options("thesis", maturity=[9.0, 3.0])
    assert book[1:].convention == "thesis" and book[[1]].convention == "thesis"
    assert book.replace(sigma=[0.02, 0.02]).convention == "thesis"
    with pytest.raises(trinom.InputError, match="convention must be one of standard, thesis"):
        options("paper")


def test_thesis_files_and_datasets_keep_the_thesis_convention(tmp_path: Path):
    assert generate("skewed", 10, seed=1).convention == "thesis"
    assert io.read_portfolio(Path("data/book.in")).convention == "thesis"
    path = tmp_path / "book.csv"
    path.write_text(",".join(trinom.FIELDS) + "\n63,9,3,360,12,0.1,0.01,put\n")
    book = io.read_portfolio(path)
    assert book.convention == "standard"
    assert trinom.price(book, CURVE, backend="reference").price[0] == pytest.approx(1.8139345526, abs=1e-9)


def test_cpu_engines_agree_on_the_standard_convention():
    rng = np.random.default_rng(5)
    size = 40
    maturity = rng.uniform(0.5, 12.0, size)
    book = trinom.Portfolio(strike=rng.uniform(40, 120, size), maturity=maturity,
                            expiry=np.where(rng.random(size) < 0.3, maturity, rng.uniform(0, 1, size) * maturity),
                            term_unit=rng.choice([365, 360, 30, 90], size), term_steps=rng.integers(1, 8, size),
                            a=rng.uniform(0.05, 0.3, size), sigma=rng.uniform(0.005, 0.02, size),
                            option_type=rng.integers(0, 2, size))
    reference = trinom.price(book, CURVE, backend="reference").price
    for backend, target in [("futhark", "c"), ("futhark-basic", "c"), ("futhark-flat", "c")]:
        np.testing.assert_allclose(trinom.price(book, CURVE, backend=backend, target=target).price, reference,
                                   rtol=1e-11, atol=1e-11)
