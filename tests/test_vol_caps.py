"""Caps and floors priced off a quoted volatility beside the lattice (issue 38, item 5): ``vol``, ``vol_kind``
(``normal``, ``lognormal``, ``shifted``) and ``shift`` on a cap or floor row give ``Prices.vol_price``, within 1e-10
relative of QuantLib 1.44's ``BachelierCapFloorEngine`` and ``BlackCapFloorEngine`` (displaced) on one curve and on
two; the command line writes the column; bad cells are refused naming the row and field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from quantlib_oracle import on_date, ql_date
from trinom.cli import main
from trinom.model import DatedCurve

AS_OF = np.datetime64("2026-11-25")
#: A cap's price off a quoted vol against QuantLib's engine (relative; the curves are read at whole days alike).
VOL_PRICE = 1e-10
DAY_COUNTS = {"ACT/360": ql.Actual360(), "ACT/365F": ql.Actual365Fixed(), "30/360": ql.Thirty360(ql.Thirty360.BondBasis)}
#: (type, start, maturity, strike, frequency, day_count, vol, vol_kind, shift)
CASES = [
    ("cap", "2027-02-25", "2031-11-25", 0.031, 4, "ACT/360", 0.0085, "normal", None),
    ("floor", "2027-01-15", "2036-01-15", 0.028, 2, "30/360", 0.0102, "normal", None),
    ("cap", "2027-05-31", "2033-05-31", 0.035, 4, "ACT/365F", 0.22, "lognormal", None),
    ("floor", "2026-12-25", "2030-12-25", 0.025, 1, "ACT/360", 0.31, "lognormal", None),
    ("cap", "2027-03-10", "2034-09-10", 0.005, 4, "ACT/360", 0.18, "shifted", 0.02),
    ("floor", "2027-03-10", "2034-09-10", -0.004, 2, "ACT/360", 0.25, "shifted", 0.01),
]


@pytest.fixture(autouse=True)
def _evaluation_date():
    yield from on_date(AS_OF)


def quantlib_value(case: tuple, discount: ql.YieldTermStructureHandle, forecast: ql.YieldTermStructureHandle,
                   notional: float) -> float:
    """QuantLib's value of one case: an Ibor leg of 0 fixing days on the forecast curve, the cap's own dates
    (forward, unadjusted) and day count, Bachelier's or Black's engine on the discount curve."""
    kind, start, end, strike, frequency, day_count, vol, vol_kind, shift = case
    dc = DAY_COUNTS[day_count]
    index = ql.IborIndex("capindex", ql.Period(12 // frequency, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(),
                         ql.Unadjusted, False, dc, forecast)
    schedule = ql.Schedule(ql_date(np.datetime64(start)), ql_date(np.datetime64(end)),
                           ql.Period(12 // frequency, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                           ql.DateGeneration.Forward, False)
    leg = ql.IborLeg([notional], schedule, index, paymentDayCounter=dc, paymentConvention=ql.Unadjusted,
                     fixingDays=[0])
    option = (ql.Cap if kind == "cap" else ql.Floor)(leg, [strike])
    normal = vol_kind == "normal"
    surface = ql.OptionletVolatilityStructureHandle(ql.ConstantOptionletVolatility(
        0, ql.NullCalendar(), ql.Unadjusted, vol, ql.Actual365Fixed(), ql.Normal if normal else ql.ShiftedLognormal,
        shift or 0.0))
    engine = ql.BachelierCapFloorEngine if normal else ql.BlackCapFloorEngine
    option.setPricingEngine(engine(discount, surface))
    return option.NPV()


def upward_curves(name: str = "EUR", lift: float = 0.0) -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    """A smooth upward curve of 24 pillars over 15 years (log-linear discount factors, positive forwards), ours and
    QuantLib's DiscountCurve."""
    days = np.unique(np.concatenate([[7, 30, 91, 182], np.linspace(365, 15 * 365, 20).round().astype(int)]))
    zeros = lift + 0.024 + 0.012 * (1 - np.exp(-days / 365.0 / 4.0))
    dfs = np.exp(-zeros * days / 365.0)
    ours = DatedCurve(as_of=AS_OF, dates=AS_OF + days, discount_factors=dfs, name=name)
    theirs = ql.DiscountCurve([ql_date(AS_OF), *(ql_date(AS_OF + d) for d in days)], [1.0, *dfs], ql.Actual365Fixed())
    return ours, ql.YieldTermStructureHandle(theirs)


def trades(cases: list[tuple], *, forecast: str | None = None, notional: float = 1e6) -> trinom.Trades:
    columns = list(zip(*cases, strict=True))
    return trinom.Trades(as_of=str(AS_OF), id=[f"t{k}" for k in range(len(cases))], type=list(columns[0]),
                         start=list(columns[1]), maturity=list(columns[2]), rate=list(columns[3]),
                         frequency=list(columns[4]), day_count=list(columns[5]), vol=list(columns[6]),
                         vol_kind=list(columns[7]), shift=list(columns[8]), notional=notional, a=0.05, sigma=0.008,
                         curve="EUR", forecast_curve=forecast, steps_per_year=12)


def test_one_curve_matches_bachelier_and_black_engines() -> None:
    ours, theirs = upward_curves()
    result = trinom.price(trades(CASES), {"EUR": ours}, backend="reference")
    assert result.vol_price is not None and result.ok.all()
    expected = np.array([quantlib_value(case, theirs, theirs, 1e6) for case in CASES]) / 1e4
    np.testing.assert_allclose(result.vol_price, expected, rtol=VOL_PRICE, atol=0)


def test_two_curves_project_on_the_forecast_curve_and_discount_on_the_other() -> None:
    ours, theirs = upward_curves()
    spread, forecast = upward_curves("FWD", lift=0.004)
    result = trinom.price(trades(CASES, forecast="FWD"), {"EUR": ours, "FWD": spread}, backend="reference")
    expected = np.array([quantlib_value(case, theirs, forecast, 1e6) for case in CASES]) / 1e4
    np.testing.assert_allclose(result.vol_price, expected, rtol=VOL_PRICE, atol=0)


def test_rows_without_a_vol_have_no_vol_price_and_a_book_without_any_has_none() -> None:
    curve = DatedCurve.flat(as_of=AS_OF, rate=0.03)
    mixed = trinom.Trades(as_of=str(AS_OF), id=["quoted", "model only"], type="cap", start="2027-02-25",
                          maturity="2030-02-25", rate=0.03, vol=[0.009, None], a=0.05, sigma=0.008, curve="EUR")
    result = trinom.price(mixed, {"EUR": curve}, backend="reference")
    assert np.isfinite(result.vol_price[0]) and np.isnan(result.vol_price[1])
    assert list(result.to_pandas().columns)[-1] == "vol_price"
    plain = trinom.Trades(as_of=str(AS_OF), id=["x"], type="cap", start="2027-02-25", maturity="2030-02-25",
                          rate=0.03, a=0.05, sigma=0.008, curve="EUR")
    assert trinom.price(plain, {"EUR": curve}, backend="reference").vol_price is None


def test_a_lognormal_cap_whose_forward_is_below_minus_shift_is_said() -> None:
    curve = DatedCurve.flat(as_of=AS_OF, rate=-0.01)
    book = trinom.Trades(as_of=str(AS_OF), id=["neg"], type="floor", start="2027-02-25", maturity="2030-02-25",
                         rate=0.01, vol=0.3, vol_kind="lognormal", a=0.05, sigma=0.008, curve="EUR")
    result = trinom.price(book, {"EUR": curve}, backend="reference")
    assert np.isnan(result.vol_price[0]) and np.isfinite(result.price[0])
    assert any("at or below -shift" in message for _row, message in result.warnings)


def test_the_command_line_appends_vol_price(tmp_path: Path) -> None:
    (tmp_path / "trades.csv").write_text(
        "id,type,notional,maturity,frequency,day_count,a,sigma,curve,start,rate,vol,vol_kind,shift\n"
        "c1,cap,1000000,2031-11-25,4,ACT/360,0.05,0.008,EUR,2027-02-25,0.031,0.0085,normal,\n"
        "f1,floor,1000000,2031-11-25,4,ACT/360,0.05,0.008,EUR,2027-02-25,0.004,0.2,shifted,0.01\n"
        "c2,cap,1000000,2031-11-25,4,ACT/360,0.05,0.008,EUR,2027-02-25,0.031,,,\n")
    (tmp_path / "curve.csv").write_text("curve,date,rate,compounding,day_count\nEUR,,0.03,annual,ACT/365F\n")
    assert main(["price", str(tmp_path / "trades.csv"), "--curve", str(tmp_path / "curve.csv"), "--as-of", str(AS_OF),
                 "--backend", "reference", "--out", str(tmp_path / "prices.csv")]) == 0
    table = pd.read_csv(tmp_path / "prices.csv")
    assert list(table.columns) == ["id", "price", "clean", "accrued", "error", "value", "vol_price"]
    flat = ql.YieldTermStructureHandle(ql.FlatForward(ql_date(AS_OF), 0.03, ql.Actual365Fixed(), ql.Compounded,
                                                      ql.Annual))
    expected = [quantlib_value(("cap", "2027-02-25", "2031-11-25", 0.031, 4, "ACT/360", 0.0085, "normal", None),
                               flat, flat, 1e6) / 1e4,
                quantlib_value(("floor", "2027-02-25", "2031-11-25", 0.004, 4, "ACT/360", 0.2, "shifted", 0.01),
                               flat, flat, 1e6) / 1e4]
    np.testing.assert_allclose(table["vol_price"][:2], expected, rtol=VOL_PRICE)
    assert np.isnan(table["vol_price"][2])


@pytest.mark.parametrize(("cells", "field", "words"), [
    ({"vol": 0.5}, "vol", "a normal vol must be in (0, 0.1]"),
    ({"vol": 20.0, "vol_kind": "lognormal"}, "vol", "a lognormal vol must be in (0, 5]"),
    ({"vol": -0.01}, "vol", "a normal vol must be in"),
    ({"vol": 0.01, "vol_kind": "sabr"}, "vol_kind", "vol_kind must be one of normal, lognormal, shifted"),
    ({"vol_kind": "normal"}, "vol_kind", "vol_kind goes with vol"),
    ({"shift": 0.01}, "shift", "shift goes with vol"),
    ({"vol": 0.01, "shift": 0.01}, "shift", "a shift goes with a lognormal or shifted vol"),
    ({"vol": 0.2, "vol_kind": "shifted"}, "shift", "a shifted vol needs shift"),
    ({"vol": 0.2, "vol_kind": "shifted", "shift": 3.0}, "shift", "shift must be a decimal in 0..1"),
    ({"vol": 0.2, "vol_kind": "lognormal", "rate": -0.01}, "rate", "needs rate + shift > 0"),
])
def test_bad_vol_cells_are_refused_naming_the_row_and_field(cells: dict, field: str, words: str) -> None:
    row = {"as_of": str(AS_OF), "id": ["ok", "bad"], "type": "cap", "start": "2027-02-25", "maturity": "2030-02-25",
           "rate": 0.03, "a": 0.05, "sigma": 0.008, "curve": "EUR"}
    row.update({name: [None if name != "rate" else 0.03, value] for name, value in cells.items()})
    result = trinom.price(trinom.Trades(**row), {"EUR": DatedCurve.flat(as_of=AS_OF, rate=0.03)},
                          backend="reference", errors="mask")
    assert result.ok.tolist() == [True, False]
    assert any(r == 1 and f == field and words in m for r, f, m in result.problems), result.problems


def test_a_swaption_or_bond_may_not_quote_a_vol() -> None:
    book = trinom.Trades(as_of=str(AS_OF), id=["s"], type="swaption", start="2027-11-25", maturity="2032-11-25",
                         rate=0.03, option="payer", vol=0.01, a=0.05, sigma=0.008, curve="EUR")
    result = trinom.price(book, {"EUR": DatedCurve.flat(as_of=AS_OF, rate=0.03)}, backend="reference",
                          errors="mask")
    assert any(f == "vol" and "does not apply to a swaption" in m for _r, f, m in result.problems)
