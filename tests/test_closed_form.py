"""The Hull-White closed form: Hull's book value, parity, edge rows, and the tree converging to it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trinom
from trinom.engines.closed_form import discount_factor, normal_cdf, zero_coupon_bond_option
from trinom.lattice.constants import FACE_VALUE

#: Hull's analytic value of the book option (3-year put on a 9-year bond, X = 63), printed to 4 decimals.
HULL_BOOK_PUT = 1.8093
#: What this module computes for it in float64 (pinned to catch any change of formula or curve use).
BOOK_PUT = 1.8092941675909984
BOOK_CALL = 1.053799622876852


def book(option_type: str = "put", steps_per_year: int = 12) -> trinom.Portfolio:
    return trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
                            term_steps=[steps_per_year], a=[0.1], sigma=[0.01], option_type=[option_type])


def mixed_portfolio(size: int = 40, steps_per_year: int = 12, seed: int = 1) -> trinom.Portfolio:
    """Calls and puts with varied strikes, maturities, expiries, a and sigma (all on whole years)."""
    rng = np.random.default_rng(seed)
    return trinom.Portfolio(
        strike=rng.uniform(50.0, 75.0, size), maturity=rng.integers(4, 11, size).astype(float),
        expiry=rng.integers(1, 4, size).astype(float), term_unit=np.full(size, 365),
        term_steps=np.full(size, steps_per_year), a=rng.uniform(0.03, 0.3, size),
        sigma=rng.uniform(0.005, 0.02, size), option_type=rng.integers(0, 2, size))


def test_book_put_is_hulls_value() -> None:
    value = float(zero_coupon_bond_option(book())[0])
    assert abs(value - HULL_BOOK_PUT) < 0.5e-4  # Hull prints 1.8093: agree to all printed digits
    assert value == pytest.approx(BOOK_PUT, abs=1e-12)
    assert float(zero_coupon_bond_option(book("call"))[0]) == pytest.approx(BOOK_CALL, abs=1e-12)


def test_tree_resolution_does_not_matter() -> None:
    prices = [float(zero_coupon_bond_option(book("put", steps))[0]) for steps in (1, 12, 365)]
    assert prices == [BOOK_PUT] * 3


def test_put_call_parity() -> None:
    portfolio = mixed_portfolio(200)
    fields = portfolio.as_dict()
    calls = zero_coupon_bond_option(trinom.Portfolio(**{**fields, "option_type": np.zeros(len(portfolio))}))
    puts = zero_coupon_bond_option(trinom.Portfolio(**{**fields, "option_type": np.ones(len(portfolio))}))
    curve = trinom.YieldCurve.thesis()
    forward_value = FACE_VALUE * discount_factor(curve, portfolio.maturity) \
        - portfolio.strike * discount_factor(curve, portfolio.expiry)
    np.testing.assert_allclose(calls - puts, forward_value, rtol=0, atol=1e-10)
    assert np.all(calls >= 0) and np.all(puts >= 0)


def test_bounds_and_monotone_in_strike() -> None:
    strikes = np.linspace(0.0, 120.0, 241)
    n = strikes.size
    fields = dict(strike=strikes, maturity=np.full(n, 9.0), expiry=np.full(n, 3.0), term_unit=np.full(n, 365),
                  term_steps=np.full(n, 12), a=np.full(n, 0.1), sigma=np.full(n, 0.01))
    calls = zero_coupon_bond_option(trinom.Portfolio(**fields, option_type=np.zeros(n)))
    puts = zero_coupon_bond_option(trinom.Portfolio(**fields, option_type=np.ones(n)))
    bond = FACE_VALUE * float(discount_factor(trinom.YieldCurve.thesis(), [9.0])[0])
    assert calls[0] == pytest.approx(bond, abs=1e-12) and puts[0] == 0.0  # zero strike: the bond itself
    assert np.all(np.diff(calls) <= 1e-15) and np.all(np.diff(puts) >= -1e-15)
    assert np.all(calls <= bond)


def test_rows_the_tree_treats_specially() -> None:
    curve = trinom.YieldCurve.thesis()
    bond = FACE_VALUE * discount_factor(curve, [2.0, 3.0, 9.0])
    portfolio = trinom.Portfolio(strike=[63.0, 63.0, 63.0, 63.0], maturity=[2.0, 3.0, 9.0, 9.0],
                                 expiry=[3.0, 3.0, 0.0, 0.0], term_unit=[365] * 4, term_steps=[12] * 4,
                                 a=[0.1] * 4, sigma=[0.01] * 4, option_type=["put", "call", "put", "call"],
                                 convention="thesis")
    prices = zero_coupon_bond_option(portfolio, curve)
    assert prices.dtype == np.float64
    # the bond matures at or before expiry: the bond price, as the tree returns
    np.testing.assert_allclose(prices[:2], bond[:2], rtol=0, atol=1e-12)
    # the option expires now: its intrinsic value
    np.testing.assert_allclose(prices[2:], [63.0 - bond[2], 0.0], rtol=0, atol=1e-12)


def test_small_sigma_tends_to_the_discounted_forward_payoff() -> None:
    fields = book().as_dict()
    tiny = zero_coupon_bond_option(trinom.Portfolio(**{**fields, "sigma": [1e-9]}))
    curve = trinom.YieldCurve.thesis()
    forward_put = 63.0 * discount_factor(curve, [3.0]) - FACE_VALUE * discount_factor(curve, [9.0])
    np.testing.assert_allclose(tiny, np.maximum(forward_put, 0.0), rtol=0, atol=1e-9)


def test_normal_cdf() -> None:
    x = np.array([-40.0, -3.0, 0.0, 1.0, 3.0, 40.0, np.inf, -np.inf])
    expected = [0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x]
    np.testing.assert_array_equal(normal_cdf(x), expected)
    assert normal_cdf([-3.0])[0] == pytest.approx(0.0013498980316301, rel=1e-13)
    assert normal_cdf([-30.0])[0] > 0.0  # erfc keeps the far tail (1 - N(30) would be 0)


@pytest.mark.parametrize(("option_type", "closed_form"), [("put", BOOK_PUT), ("call", BOOK_CALL)])
def test_tree_at_365_steps_a_year_converges_to_the_closed_form(option_type: str, closed_form: float) -> None:
    tree = float(trinom.price(book(option_type, 365), backend="reference").price[0])
    assert abs(tree - closed_form) < 1e-3  # measured: 3.95e-4 (docs/convergence.md)


def test_tree_is_close_for_varied_options() -> None:
    """40 calls/puts with varied a, sigma, strike and dates at 100 steps a year.

    The worst distance measured was 1.1e-3 (deep out-of-the-money options oscillate with the grid).
    """
    portfolio = mixed_portfolio(40, steps_per_year=100)
    tree = trinom.price(portfolio, backend="reference").price
    np.testing.assert_allclose(tree, zero_coupon_bond_option(portfolio), rtol=0, atol=3e-3)


def test_bad_rows_raise_input_error_naming_row_and_field() -> None:
    fields = book().as_dict()
    for field, value, text in [("a", 0.0, "row 0: a must be a finite number > 0, got"),
                               ("sigma", -0.01, "row 0: sigma must be a finite number > 0"),
                               ("expiry", np.nan, "row 0: expiry must be a finite number >= 0"),
                               ("strike", -1.0, "row 0: strike must be a finite number >= 0"),
                               ("maturity", 0.0, "row 0: maturity must be a finite number > 0"),
                               ("option_type", 2, "row 0: option_type must be 0 (call) or 1 (put)")]:
        with pytest.raises(trinom.InputError, match=text.replace("(", r"\(").replace(")", r"\)")) as info:
            zero_coupon_bond_option(trinom.Portfolio(**{**fields, field: [value]}))
        assert isinstance(info.value, ValueError)
        assert info.value.errors[0][:2] == (0, field)
