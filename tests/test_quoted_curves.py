"""Curves as quoted (issue 38, item 2): ``curve.csv``'s ``rate`` with ``compounding`` and ``day_count``, and a
flat-forward row, against QuantLib 1.44's ``InterestRate`` and ``FlatForward`` (exact: a discount factor to 1e-14
relative); the YieldCurve the trees take; a book priced on the quoted file and on its discount factors; the
refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from quantlib_oracle import ql_date
from trinom.errors import InputError
from trinom.model import DatedCurve, read_dated_curves

AS_OF = np.datetime64("2025-01-02")
#: trinom's compounding names and QuantLib's (compounding, frequency).
COMPOUNDINGS = {"continuous": (ql.Continuous, ql.Annual), "simple": (ql.Simple, ql.Annual),
                "annual": (ql.Compounded, ql.Annual), "semiannual": (ql.Compounded, ql.Semiannual),
                "quarterly": (ql.Compounded, ql.Quarterly), "monthly": (ql.Compounded, ql.Monthly)}
DAY_COUNTS = {"ACT/360": ql.Actual360(), "ACT/365F": ql.Actual365Fixed(),
              "30/360": ql.Thirty360(ql.Thirty360.BondBasis), "30E/360": ql.Thirty360(ql.Thirty360.European),
              "ACT/ACT-ISDA": ql.ActualActual(ql.ActualActual.ISDA)}
#: A discount factor from a quote, ours against QuantLib's (relative).
EXACT = 1e-14


def pillar_days() -> np.ndarray:
    rng = np.random.default_rng(38)
    return np.unique(np.concatenate([[1, 31, 59, 182, 366, 1096], rng.integers(400, 40 * 365, 20)]))


@pytest.mark.parametrize("compounding", COMPOUNDINGS)
@pytest.mark.parametrize("day_count", DAY_COUNTS)
def test_a_quoted_rate_gives_quantlibs_discount_factor(tmp_path: Path, compounding: str, day_count: str) -> None:
    days = pillar_days()
    rates = 0.03 + 0.01 * np.sin(days / 900.0)
    rates[2] = -0.004
    rows = [f"EUR,{AS_OF + d},{float(r)!r},{compounding},{day_count}" for d, r in zip(days, rates, strict=True)]
    path = tmp_path / "curve.csv"
    path.write_text("curve,date,rate,compounding,day_count\n" + "\n".join(rows[::-1]) + "\n")
    curve = read_dated_curves(path, as_of=str(AS_OF))["EUR"]
    kind, frequency = COMPOUNDINGS[compounding]
    theirs = np.array([ql.InterestRate(float(r), DAY_COUNTS[day_count], kind, frequency)
                       .discountFactor(ql_date(AS_OF), ql_date(AS_OF + d)) for d, r in zip(days, rates, strict=True)])
    np.testing.assert_allclose(curve.discount(AS_OF + days), theirs, rtol=EXACT, atol=0)
    yc = curve.to_yield_curve()
    np.testing.assert_allclose(np.exp(-yc.rate_at(days / 365.0, 365) * days / 365.0), theirs, rtol=EXACT, atol=0)


@pytest.mark.parametrize("compounding", COMPOUNDINGS)
@pytest.mark.parametrize("day_count", DAY_COUNTS)
def test_a_flat_row_is_quantlibs_flat_forward(tmp_path: Path, compounding: str, day_count: str) -> None:
    path = tmp_path / "curve.csv"
    path.write_text(f"curve,date,rate,compounding,day_count\nUSD,,0.0425,{compounding},{day_count}\n")
    curve = read_dated_curves(path, as_of=str(AS_OF))["USD"]
    kind, frequency = COMPOUNDINGS[compounding]
    flat = ql.FlatForward(ql_date(AS_OF), 0.0425, DAY_COUNTS[day_count], kind, frequency)
    days = np.array([1, 2, 45, 180, 365, 366, 731, 1000, 3653, 10957, 36500])
    theirs = np.array([flat.discount(ql_date(AS_OF + d)) for d in days])
    np.testing.assert_allclose(curve.discount(AS_OF + days), theirs, rtol=EXACT, atol=0)
    yc = curve.to_yield_curve()
    np.testing.assert_allclose(np.exp(-yc.rate_at(days / 365.0, 365) * days / 365.0), theirs, rtol=EXACT, atol=0)
    affine = day_count in ("ACT/360", "ACT/365F") and compounding != "simple"
    assert (len(curve) == 1) == affine


def test_a_flat_zero_row_is_one_continuous_rate(tmp_path: Path) -> None:
    path = tmp_path / "curve.csv"
    path.write_text("curve,date,zero\nEUR,,0.031\nUSD,2030-01-02,0.04\n")
    curves = read_dated_curves(path, as_of=str(AS_OF))
    assert list(curves) == ["EUR", "USD"]
    t = np.array([0.01, 1.0, 7.3, 60.0])
    np.testing.assert_allclose(curves["EUR"].discount(t), np.exp(-0.031 * t), rtol=EXACT)


def test_empty_compounding_and_day_count_cells_are_continuous_act_365f(tmp_path: Path) -> None:
    path = tmp_path / "curve.csv"
    path.write_text("curve,date,rate,compounding,day_count\nEUR,2027-01-02,0.03,,\nEUR,2030-01-02,0.035,simple,\n")
    zero = tmp_path / "zero.csv"
    zero.write_text(f"curve,date,discount\nEUR,2027-01-02,{float(np.exp(-0.03 * 730 / 365))!r}\n"
                    f"EUR,2030-01-02,{1 / (1 + 0.035 * 1826 / 365)!r}\n")
    quoted = read_dated_curves(path, as_of=str(AS_OF))["EUR"]
    given = read_dated_curves(zero, as_of=str(AS_OF))["EUR"]
    np.testing.assert_allclose(quoted.discount_factors, given.discount_factors, rtol=EXACT)


def test_a_book_prices_the_same_on_its_quoted_curve_and_on_its_discount_factors(tmp_path: Path) -> None:
    days = np.array([91, 365, 730, 1826, 3652, 7305])
    rates = np.array([0.021, 0.024, 0.027, 0.03, 0.032, 0.033])
    quoted = tmp_path / "quoted.csv"
    quoted.write_text("curve,date,rate,compounding,day_count\n" + "".join(
        f"EUR,{AS_OF + d},{float(r)!r},semiannual,30/360\n" for d, r in zip(days, rates, strict=True)))
    dc = DAY_COUNTS["30/360"]
    dfs = [ql.InterestRate(float(r), dc, ql.Compounded, ql.Semiannual).discountFactor(ql_date(AS_OF), ql_date(AS_OF + d))
           for d, r in zip(days, rates, strict=True)]
    given = tmp_path / "given.csv"
    given.write_text("curve,date,discount\n" + "".join(f"EUR,{AS_OF + d},{float(f)!r}\n" for d, f in zip(days, dfs,
                                                                                              strict=True)))
    trades = trinom.Trades(as_of=str(AS_OF), id=["bond", "swaption"], type=["bond", "swaption"],
                           issue=["2024-03-15", None], maturity=["2034-03-15", "2033-01-02"],
                           coupon=[0.04, None], frequency=[2, 1], option=["call", "receiver"],
                           exercise=["bermudan", "bermudan"], first_exercise=["2027-03-15", "2027-01-04"],
                           last_exercise=["2033-09-15", "2032-01-02"], exercise_price=[100.0, None],
                           start=[None, "2026-01-02"], rate=[None, 0.03], float_frequency=[None, 2], a=0.05,
                           sigma=0.01, curve="EUR", steps_per_year=24)
    on_quotes = trinom.price(trades, read_dated_curves(quoted, as_of=str(AS_OF)), backend="reference")
    on_factors = trinom.price(trades, read_dated_curves(given, as_of=str(AS_OF)), backend="reference")
    assert np.isfinite(on_quotes.price).all()
    np.testing.assert_allclose(on_quotes.price, on_factors.price, rtol=1e-12)


def test_from_rates_and_flat_in_python() -> None:
    curve = DatedCurve.from_rates(as_of=AS_OF, dates=[AS_OF + 365, AS_OF + 730], rates=[0.03, 0.04],
                                  compounding=["simple", "quarterly"], day_count="ACT/360")
    assert curve.discount_factors[0] == pytest.approx(1 / (1 + 0.03 * 365 / 360), rel=EXACT)
    assert curve.discount_factors[1] == pytest.approx((1 + 0.01) ** (-4 * 730 / 360), rel=EXACT)
    assert DatedCurve.flat(as_of=AS_OF, rate=0.05, compounding="simple").discount([2.0])[0] == pytest.approx(1 / 1.1)


@pytest.mark.parametrize(("text", "field", "words"), [
    ("curve,date,rate,compounding\nEUR,2027-01-02,0.03,daily\n", "compounding", "line 2: compounding 'daily'"),
    ("curve,date,rate,day_count\nEUR,2027-01-02,0.03,ACT/ACT-ICMA\n", "day_count", "line 2: day_count ACT/ACT-ICMA"),
    ("curve,date,rate,day_count\nEUR,2027-01-02,0.03,ACT/999\n", "day_count", "line 2: day_count 'ACT/999'"),
    ("curve,date,zero,compounding\nEUR,2027-01-02,0.03,annual\n", "compounding", "goes with rate"),
    ("curve,date,rate\nEUR,2027-01-02,3.0\n", "rate", "line 2: rate must be a decimal"),
    ("curve,date,rate\nEUR,,0.03\nEUR,2027-01-02,0.03\n", "date", "a flat curve is one row"),
    ("curve,date,discount\nEUR,,0.97\n", "date", "line 2: date is empty"),
    ("curve,date,rate,zero\nEUR,2027-01-02,0.03,0.03\n", "discount", "one of the columns discount, zero or rate"),
    ("curve,date,rate,compounding\nEUR,2027-01-02,-0.9,simple\n", "rate", "rate must be a decimal"),
])
def test_bad_quotes_are_refused_naming_the_line_and_field(tmp_path: Path, text: str, field: str, words: str) -> None:
    path = tmp_path / "curve.csv"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_dated_curves(path, as_of=str(AS_OF))
    assert any(f == field and words in m for _r, f, m in caught.value.errors), caught.value.errors


def test_a_simple_rate_with_no_discount_factor_is_refused() -> None:
    with pytest.raises(InputError, match="gives no discount factor > 0"):
        DatedCurve.from_rates(as_of=AS_OF, dates=[AS_OF + 365 * 30], rates=[-0.19], compounding="simple")
