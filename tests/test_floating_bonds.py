"""Floating and fixed-to-float bonds (issue 37, item 2): coupons on a forecast curve's rate plus a margin, lowered to
flows every engine runs (trinom.instruments.floating). Straight bonds against QuantLib 1.44's FloatingRateBond and
its legs on the same two curves (discounting engine), exact at any tree resolution; callable and puttable ones where
the exercise is certain (a margin and a basis above par: always called at the first date, never put), against the
same bond to the first call date; the rows refused, by row and field."""

from __future__ import annotations

import numpy as np
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from trinom.errors import InputError
from trinom.instruments import Trades
from trinom.model import DatedCurve

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
DISCOUNT = [0.025, 0.028, 0.031, 0.033]
FORECAST = [0.028, 0.032, 0.035, 0.036]
A, SIGMA = 0.05, 0.01
FIXING = 0.027  # the running period's rate, fixed on 2026-09-15
#: Per 100: a straight floating bond against QuantLib's discounted flows (measured below 1e-13 at 1 to 365 steps a
#: year: every flow is paid at its date, between steps).
EXACT = 1e-10


@pytest.fixture(scope="module")
def curves() -> dict[str, DatedCurve]:
    return {name: DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=zeros, name=name)
            for name, zeros in (("ESTR", DISCOUNT), ("EUR6M", FORECAST))}


def book(**overrides: object) -> Trades:
    columns: dict[str, object] = dict(
        id=["F"], type="bond", issue="2025-03-15", maturity="2034-03-15", coupon_type="float", margin=0.005,
        fixing=FIXING, frequency=2, day_count="ACT/365F", a=A, sigma=SIGMA, curve="ESTR", forecast_curve="EUR6M",
        steps_per_year=12)
    columns.update(overrides)
    return Trades(as_of=AS_OF, **columns)


def ql_handles(curves: dict[str, DatedCurve]) -> tuple[object, object]:
    today = ql.DateParser.parseISO(AS_OF)
    ql.Settings.instance().evaluationDate = today
    dates = [today] + [ql.DateParser.parseISO(d) for d in PILLARS]
    out = []
    for name in ("ESTR", "EUR6M"):
        discounts = [1.0] + [float(curves[name].discount([d])[0]) for d in PILLARS]
        out.append(ql.YieldTermStructureHandle(ql.DiscountCurve(dates, discounts, ql.Actual365Fixed())))
    return out[0], out[1]


def ql_index(forecast: object) -> object:
    index = ql.IborIndex("E6M", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), forecast)
    index.addFixing(ql.Date(15, 9, 2026), FIXING)
    return index


def schedule(start: str, end: str) -> object:
    return ql.Schedule(ql.DateParser.parseISO(start), ql.DateParser.parseISO(end), ql.Period(6, ql.Months),
                       ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted, ql.DateGeneration.Backward, False)


def ql_floater(curves: dict[str, DatedCurve], margin: float, end: str = "2034-03-15",
               forecast: str = "EUR6M") -> tuple[float, float]:
    """QuantLib's FloatingRateBond from 2025-03-15 to ``end``: dirty price and accrued interest per 100."""
    discount, projected = ql_handles(curves)
    bond = ql.FloatingRateBond(0, 100.0, schedule("2025-03-15", end),
                               ql_index(projected if forecast == "EUR6M" else discount), ql.Actual365Fixed(),
                               ql.Unadjusted, 0, [1.0], [margin])
    bond.setPricingEngine(ql.DiscountingBondEngine(discount))
    return bond.dirtyPrice(), bond.accruedAmount()


@pytest.mark.parametrize("steps_per_year", [1, 2, 12, 365])
def test_a_floater_on_two_curves_is_quantlibs_at_any_resolution(curves: dict[str, DatedCurve],
                                                                 steps_per_year: int) -> None:
    result = trinom.price(book(steps_per_year=steps_per_year), curves, backend="futhark", target="c")
    dirty, accrued = ql_floater(curves, 0.005)
    assert result.price[0] == pytest.approx(dirty, abs=EXACT)
    assert result.accrued[0] == pytest.approx(accrued, abs=1e-12)


def test_a_floater_on_one_curve_and_an_ois_floater(curves: dict[str, DatedCurve]) -> None:
    one = trinom.price(book(forecast_curve=None, margin=-0.001), curves, backend="futhark", target="c").price
    assert one[0] == pytest.approx(ql_floater(curves, -0.001, forecast="ESTR")[0], abs=EXACT)
    ibor = trinom.price(book(), curves, backend="futhark", target="c").price
    ois = trinom.price(book(index="ois"), curves, backend="futhark", target="c").price
    assert np.array_equal(ibor, ois)


def test_every_engine_prices_a_floater_alike(curves: dict[str, DatedCurve]) -> None:
    trades = book(id=["F", "C"], option=[None, "call"], exercise=[None, "bermudan"],
                  first_exercise=[None, "2028-03-15"], last_exercise=[None, "2033-09-15"],
                  exercise_price=[None, 100.0], margin=[0.005, -0.002])
    reference = trinom.price(trades, curves, backend="reference").price
    for target in ("c", "multicore"):
        assert trinom.price(trades, curves, backend="futhark", target=target).price == pytest.approx(reference,
                                                                                                      abs=1e-11)


def test_a_fixed_to_float_bond_is_its_two_legs(curves: dict[str, DatedCurve]) -> None:
    discount, projected = ql_handles(curves)
    fixed = ql.FixedRateLeg(schedule("2025-03-15", "2029-03-15"), ql.Actual365Fixed(), [100.0], [0.04])
    floating = ql.IborLeg([100.0], schedule("2029-03-15", "2034-03-15"), ql_index(projected), ql.Actual365Fixed(),
                          ql.Unadjusted, [0], [1.0], [0.005])
    today = ql.DateParser.parseISO(AS_OF)
    expected = (ql.CashFlows.npv(fixed, discount, False, today, today)
                + ql.CashFlows.npv(floating, discount, False, today, today)
                + 100.0 * discount.discount(ql.Date(15, 3, 2034)))
    for spy in (4, 365):
        result = trinom.price(book(coupon_type="fixed_to_float", coupon=0.04, switch_date="2029-03-15", fixing=None,
                                   steps_per_year=spy), curves, backend="futhark", target="c")
        assert result.price[0] == pytest.approx(expected, abs=EXACT)
        assert result.accrued[0] == pytest.approx(100 * 0.04 * 71 / 365, abs=1e-12)  # the fixed period's


def test_a_callable_floater_above_par_is_called_at_its_first_date(curves: dict[str, DatedCurve]) -> None:
    """A margin and a basis above par make the bond worth more than 100 on every coupon date in every state: the
    issuer calls on the first one, so the bond is the floater to that date (its exercise prices net of the next
    period's principal are right, or it would not be)."""
    for spy in (12, 365):
        called = book(option="call", exercise="bermudan", first_exercise="2028-03-15", last_exercise="2033-09-15",
                      exercise_price=100.0, steps_per_year=spy)
        price = trinom.price(called, curves, backend="futhark", target="c").price[0]
        assert price == pytest.approx(ql_floater(curves, 0.005, end="2028-03-15")[0], abs=EXACT)
        put = book(option="put", exercise="bermudan", first_exercise="2028-03-15", last_exercise="2033-09-15",
                   exercise_price=100.0, steps_per_year=spy)
        assert trinom.price(put, curves, backend="futhark", target="c").price[0] == pytest.approx(
            ql_floater(curves, 0.005)[0], abs=EXACT)


def test_a_puttable_floater_below_par_is_put_at_its_first_date(curves: dict[str, DatedCurve]) -> None:
    put = book(option="put", exercise="european", first_exercise="2029-09-15", exercise_price=100.0,
               margin=-0.01, steps_per_year=52)
    price = trinom.price(put, curves, backend="futhark", target="c").price[0]
    assert price == pytest.approx(ql_floater(curves, -0.01, end="2029-09-15")[0], abs=EXACT)


def test_a_floaters_rate_risk_is_on_its_forecast_curve(curves: dict[str, DatedCurve]) -> None:
    table = trinom.risk(book(steps_per_year=12), curves, backend="futhark", target="c", measures=["duration", "krd"])
    krd = table[table.measure == "krd"]
    forecast = krd[krd.factor.str.startswith("EUR6M")].value.sum()
    discount = krd[krd.factor.str.startswith("ESTR")].value.sum()
    duration = float(table[table.measure == "duration"].value.iloc[0])
    assert forecast + discount == pytest.approx(duration, rel=2e-3)
    assert abs(duration) < 1.0 and forecast < -5.0 < 5.0 < discount  # they offset: a floater's short duration


@pytest.mark.parametrize(("overrides", "field", "words"), [
    ({"fixing": None}, "fixing", "fixing is missing"),
    ({"coupon_type": "floating"}, "coupon_type", "coupon_type must be one of fixed, float, fixed_to_float"),
    ({"coupon": 0.03}, "coupon", "a float bond pays its index plus margin"),
    ({"coupon_type": "fixed", "coupon": 0.04, "margin": None, "fixing": None, "cap": 0.05}, "cap",
     "applies to a floating coupon"),
    ({"cap": 0.02, "floor": 0.03}, "cap", "cap must be at least the floor"),
    ({"margin": 50.0}, "margin", "must be a decimal rate"),
    ({"index": "sofr"}, "index", "index must be one of ibor, ois"),
    ({"option": "call", "exercise": "american", "first_exercise": "2028-03-15", "last_exercise": "2030-03-15",
      "exercise_price": 100.0}, "exercise", "american exercise on a floating bond"),
    ({"option": "call", "exercise": "european", "first_exercise": "2028-04-15", "exercise_price": 100.0}, "exercise",
     "falls inside a floating coupon period"),
    ({"option": "call", "exercise": "european", "first_exercise": "2028-03-15", "exercise_price": 100.0,
      "notice_days": 5}, "notice_days", "notice days move a floating bond's exercise"),
    ({"coupon_type": "fixed_to_float", "coupon": 0.04, "switch_date": "2029-04-01"}, "switch_date",
     "is not a coupon date"),
    ({"coupon_type": "fixed", "coupon": 0.04}, "margin", "applies to float and fixed_to_float bonds"),
])
def test_bad_floating_rows_are_refused_by_row_and_field(curves: dict[str, DatedCurve], overrides: dict[str, object],
                                                         field: str, words: str) -> None:
    trades = Trades(as_of=AS_OF, **{**_two_rows(), **{name: [_two_rows().get(name, [None, None])[0], value]
                                                      for name, value in overrides.items()}})
    result = trinom.price(trades, curves, backend="futhark", target="c", errors="mask")
    assert result.error[0] == "" and np.isfinite(result.price[0])
    assert words in str(result.error[1]) and np.isnan(result.price[1])
    with pytest.raises(InputError) as raised:
        trinom.price(trades, curves, backend="futhark", target="c")
    assert any(row == 1 and f == field and words in m for row, f, m in raised.value.errors)


def _two_rows() -> dict[str, list[object]]:
    """A good floater (row 0) and the same bond (row 1), each column a list of two cells."""
    one: dict[str, object] = dict(id="F", type="bond", issue="2025-03-15", maturity="2034-03-15", coupon_type="float",
                                  margin=0.005, fixing=FIXING, frequency=2, day_count="ACT/365F", a=A, sigma=SIGMA,
                                  curve="ESTR", forecast_curve="EUR6M", steps_per_year=12)
    out = {name: [value, value] for name, value in one.items()}
    out["id"] = ["good", "bad"]
    return out
