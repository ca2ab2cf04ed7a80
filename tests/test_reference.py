"""The reference pricer against the thesis' sequential C++ outputs (float64 and float32)."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import load_thesis
from trinom import io

F64_TOLERANCE = 1e-12  # absolute, on prices of order 1..100
F32_TOLERANCE = 1.2e-4

SMALL = ["book", "options-1000", "0_UNIFORM_1000", "1_RAND_1000", "2_RANDCONSTHEIGHT_1000", "3_RANDCONSTWIDTH_1000"]
LARGE = ["0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
         "6_SKEWEDCONSTWIDTH", "options-60000", "0_UNIFORM_10000", "1_RAND_10000", "2_RANDCONSTHEIGHT_10000",
         "3_RANDCONSTWIDTH_10000", "0_UNIFORM_30000", "1_RAND_30000", "2_RANDCONSTHEIGHT_30000", "3_RANDCONSTWIDTH_30000"]


@pytest.mark.parametrize("precision,tolerance", [("f64", F64_TOLERANCE), ("f32", F32_TOLERANCE)])
@pytest.mark.parametrize("name", SMALL)
def test_small_datasets_match_thesis(name, precision, tolerance, thesis_curve):
    portfolio, expected = load_thesis(name, precision)
    prices = trinom.price(portfolio, thesis_curve, backend="reference", precision=precision).price
    assert prices.dtype == (np.float32 if precision == "f32" else np.float64)
    np.testing.assert_allclose(prices, expected, rtol=0, atol=tolerance)


@pytest.mark.parametrize("precision,tolerance", [("f64", F64_TOLERANCE), ("f32", F32_TOLERANCE)])
@pytest.mark.parametrize("name", ["4_SKEWED", "5_SKEWEDCONSTHEIGHT", "6_SKEWEDCONSTWIDTH", "options-60000"])
def test_large_dataset_samples_match_thesis(name, precision, tolerance, thesis_curve):
    """Every 64th option of the big files (CI time); `make test-full` prices them whole."""
    portfolio, expected = load_thesis(name, precision)
    rows = np.arange(0, len(portfolio), 64)
    prices = trinom.price(portfolio[rows], thesis_curve, backend="reference", precision=precision).price
    np.testing.assert_allclose(prices, expected[rows], rtol=0, atol=tolerance)


@pytest.mark.slow
@pytest.mark.parametrize("precision,tolerance", [("f64", F64_TOLERANCE), ("f32", F32_TOLERANCE)])
@pytest.mark.parametrize("name", LARGE)
def test_full_dataset_matches_thesis(name, precision, tolerance, thesis_dir, thesis_curve):
    if precision == "f32" and not (thesis_dir / "out32" / f"{name}.out").exists():
        pytest.skip(f"no float32 reference output for {name}")
    portfolio, expected = load_thesis(name, precision)
    prices = trinom.price(portfolio, thesis_curve, backend="reference", precision=precision).price
    np.testing.assert_allclose(prices, expected, rtol=0, atol=tolerance)


def test_book_table_of_the_model_spec(thesis_curve):
    """docs/model.md §1.9: the book put at 1..365 steps a year, to the printed digits."""
    steps = [1, 2, 3, 4, 5, 10, 25, 100, 365]
    expected = [1.8799573149849877, 1.866727229742843, 1.8544246044211292, 1.8452558323215045,
                1.838268649981311, 1.8185118385413241, 1.811206881529591, 1.8105391119623084, 1.809688866520674]
    book = trinom.Portfolio(strike=63.0 * np.ones(9), maturity=9.0 * np.ones(9), expiry=3.0 * np.ones(9),
                            term_unit=365 * np.ones(9), term_steps=steps, a=0.1 * np.ones(9),
                            sigma=0.01 * np.ones(9), option_type=np.ones(9))
    np.testing.assert_allclose(trinom.price(book, thesis_curve, backend="reference").price, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(book.widths(), [5, 9, 13, 17, 21, 39, 95, 371, 1345])
    np.testing.assert_array_equal(book.heights(), [10, 19, 28, 37, 46, 91, 226, 901, 3286])


def test_maturity_not_after_expiry_gives_the_bond_price(thesis_curve):
    """The thesis quirk: the expiry step is never reached, the zero-coupon bond's value is returned."""
    bond = trinom.Portfolio(strike=[50.0, 50.0], maturity=[1.0, 1.0], expiry=[3.0, 1.0], term_unit=[365, 365],
                            term_steps=[12, 12], a=[0.1, 0.1], sigma=[0.01, 0.01], option_type=[1, 0],
                            convention="thesis")
    prices = trinom.price(bond, thesis_curve, backend="reference").price
    # P(0, 1 year) = exp(-r(365 days) * 1): the tree is fitted to the curve at (i+2) dt, so close.
    zero = 100 * np.exp(-thesis_curve.rate_at(np.array([1.0]), 365)[0] * 1.0)
    assert prices[0] == prices[1]
    assert abs(prices[0] - zero) < 0.05
    assert 95.0 < prices[0] < 95.1  # the 95.03 of 1_RAND's one-year options


def test_order_and_grouping_do_not_change_prices(thesis_curve):
    """Prices come back in input order and each option's price is independent of the others."""
    portfolio, expected = load_thesis("1_RAND_1000")
    rows = np.random.default_rng(3).permutation(len(portfolio))[:300]
    shuffled = trinom.price(portfolio[rows], thesis_curve, backend="reference").price
    np.testing.assert_allclose(shuffled, expected[rows], rtol=0, atol=F64_TOLERANCE)
    alone = [trinom.price(portfolio[int(k)], thesis_curve, backend="reference").price[0] for k in rows[:5]]
    np.testing.assert_allclose(alone, expected[rows[:5]], rtol=0, atol=F64_TOLERANCE)


def test_call_put_and_textual_types_agree(thesis_curve):
    base = dict(strike=[60.0] * 2, maturity=[9.0] * 2, expiry=[3.0] * 2, term_unit=[365] * 2, term_steps=[4] * 2,
                a=[0.1] * 2, sigma=[0.01] * 2)
    by_number = trinom.price(trinom.Portfolio(**base, option_type=[0, 1]), thesis_curve, backend="reference").price
    by_name = trinom.price(trinom.Portfolio(**base, option_type=["CALL", "put"]), thesis_curve, backend="reference").price
    np.testing.assert_array_equal(by_number, by_name)
    assert by_number[0] > 0 and by_number[1] > 0


def test_written_prices_read_back_exactly(tmp_path, thesis_curve):
    portfolio, _ = load_thesis("book")
    prices = trinom.price(portfolio, thesis_curve, backend="reference").price
    io.write_prices(tmp_path / "p.out", prices)
    np.testing.assert_array_equal(io.read_prices(tmp_path / "p.out"), prices)
