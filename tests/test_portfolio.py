"""Portfolio construction, validation messages, slicing and statistics; the yield curve."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import load_thesis
from trinom import InputError, Portfolio, YieldCurve


def book(n: int = 3, **overrides) -> dict:
    fields = dict(strike=[63.0] * n, maturity=[9.0] * n, expiry=[3.0] * n, term_unit=[365] * n,
                  term_steps=[12] * n, a=[0.1] * n, sigma=[0.01] * n, option_type=[1] * n)
    fields.update(overrides)
    return fields


@pytest.mark.parametrize("field,value,message", [
    ("sigma", -0.01, "row 1: sigma must be > 0, got -0.01"),
    ("a", 0.0, "row 1: a must be > 0, got 0"),
    ("a", float("nan"), "row 1: a must be a finite number, got nan"),
    ("strike", float("inf"), "row 1: strike must be a finite number, got inf"),
    ("maturity", 0.0, "row 1: maturity must be > 0, got 0"),
    ("expiry", -1.0, "row 1: expiry must be >= 0, got -1"),
    ("term_steps", 0, "row 1: term_steps must be a whole number in 1..65535, got 0"),
    ("term_steps", 2.5, "row 1: term_steps must be a whole number in 1..65535, got 2.5"),
    ("term_unit", -365, "row 1: term_unit must be a whole number in 1..65535, got -365"),
    ("option_type", "straddle", "row 1: option_type must be 0 (call) or 1 (put), got 'straddle'"),
    ("option_type", 7, "row 1: option_type must be 0 (call) or 1 (put), got 7"),
])
def test_bad_value_names_row_and_field(field, value, message):
    fields = book()
    fields[field] = list(fields[field])
    fields[field][1] = value
    portfolio = Portfolio(**fields)
    with pytest.raises(InputError) as info:
        trinom.price(portfolio, backend="reference")
    assert str(info.value) == message
    assert info.value.rows == [1]
    assert info.value.errors[0][1] == field


def test_too_wide_tree_and_no_steps():
    portfolio = Portfolio(convention="thesis", **book(3, a=[0.1, 1e-5, 0.1], maturity=[9.0, 9.0, 0.01]))
    problems = portfolio.validate(max_width=1001)
    assert [(row, field) for row, field, _ in problems] == [(1, "a"), (2, "maturity")]
    assert "width 441603, outside 3..1001" in problems[0][2]
    assert "no time steps" in problems[1][2]
    assert portfolio.validate(max_width=500_001)[0][0] == 2  # the width limit is configurable


def test_mask_mode_prices_good_rows_and_reports_bad_ones_in_order():
    portfolio = Portfolio(**book(4, sigma=[0.01, -1.0, 0.01, float("nan")]))
    result = trinom.price(portfolio, backend="reference", errors="mask")
    prices, messages = result.price, result.error
    assert np.isnan(prices[1]) and np.isnan(prices[3])
    assert prices[0] == prices[2] == pytest.approx(1.81393455260320202, abs=1e-12)
    assert list(messages) == ["", "sigma must be > 0, got -1", "", "sigma must be a finite number, got nan"]


def test_structural_errors():
    with pytest.raises(InputError, match="all fields must have the same length, got strike=2, maturity=3"):
        Portfolio(**book(3, strike=[1.0, 2.0]))
    with pytest.raises(InputError, match="missing field 'sigma'"):
        Portfolio(**{k: v for k, v in book().items() if k != "sigma"})
    with pytest.raises(InputError, match="unknown field 'volatility'"):
        Portfolio(**book(), volatility=[1, 2, 3])
    with pytest.raises(InputError, match="row 2: strike must be a number, got 'x'"):
        Portfolio(**book(3, strike=[1.0, 2.0, "x"]))
    with pytest.raises(InputError, match="one-dimensional"):
        Portfolio(**book(3, strike=np.ones((3, 1))))


def test_price_arguments_are_checked():
    portfolio = Portfolio(**book())
    with pytest.raises(ValueError, match="precision must be one of f32, f64"):
        trinom.price(portfolio, precision="f16")
    with pytest.raises(ValueError, match="errors must be 'raise' or 'mask'"):
        trinom.price(portfolio, errors="ignore")
    with pytest.raises(ValueError, match="unknown engine 'gpu'"):
        trinom.price(portfolio, backend="gpu")


def test_slicing_len_iteration_and_dataframe():
    portfolio, _ = load_thesis("1_RAND_1000")
    assert len(portfolio) == 1000
    assert len(portfolio[10:20]) == 10 and len(portfolio[5]) == 1 and len(portfolio[[1, 3, 5]]) == 3
    assert portfolio[5].strike[0] == portfolio.strike[5]
    first = next(iter(portfolio))
    assert set(first) == set(trinom.FIELDS)
    frame = portfolio[:50].to_dataframe()
    again = Portfolio.from_dataframe(frame)
    for field in trinom.FIELDS:
        np.testing.assert_array_equal(getattr(again, field), getattr(portfolio[:50], field))


def test_widths_heights_and_statistics_match_the_thesis_appendix():
    """docs/model.md §2.2 / thesis A.5: the statistics of 4_SKEWED."""
    portfolio, _ = load_thesis("4_SKEWED")
    stats = portfolio.stats()
    assert (stats["width"]["min"], stats["width"]["max"]) == (7, 511)
    assert (stats["height"]["min"], stats["height"]["max"]) == (13, 1201)
    assert stats["width"]["mean"] == pytest.approx(60.90, abs=0.005)
    assert stats["width"]["std"] == pytest.approx(49.91, abs=0.005)
    assert stats["width"]["skewness"] == pytest.approx(5.19, abs=0.005)
    assert stats["height"]["mean"] == pytest.approx(195.35, abs=0.005)
    assert stats["height"]["std"] == pytest.approx(132.66, abs=0.005)
    assert stats["height"]["skewness"] == pytest.approx(2.40, abs=0.005)


def test_yield_curve_interpolation_rounds_days_half_away_from_zero():
    curve = YieldCurve(rates=[0.01, 0.03, 0.05], days=[10, 20, 30])
    # 15.5 days rounds to 16 (C's round), not to 16 by banker's rounding of 16.5 -> 16:
    np.testing.assert_allclose(curve.rate_at(np.array([15.5, 16.5, 0.0, 10.0, 30.0, 99.0]), 1),
                               [0.022, 0.024, 0.01, 0.01, 0.05, 0.05], rtol=0, atol=1e-15)
    assert curve.rate_at(np.array([1.0]), 365, np.float32).dtype == np.float32


@pytest.mark.parametrize("rates,days,message", [
    ([], [], "yield curve is empty"),
    ([0.01, 0.02], [1], "yield curve has 2 rates but 1 days"),
    ([0.01, 0.02], [5, 5], "point 1 has 5 after 5"),
    ([0.01, float("nan")], [1, 2], "point 1: rate must be finite"),
    ([0.01, 0.02], [1, 2.5], "point 1: days must be a whole number"),
])
def test_bad_yield_curve(rates, days, message):
    with pytest.raises(InputError, match=message):
        YieldCurve(rates, days)


def test_thesis_curve_is_shipped_with_the_package(thesis_curve):
    shipped = YieldCurve.thesis()
    np.testing.assert_array_equal(shipped.rates, thesis_curve.rates)
    np.testing.assert_array_equal(shipped.days, thesis_curve.days)
    assert len(shipped) == 15
