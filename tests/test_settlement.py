"""Settlement apart from the valuation date (issue 38, item 1): ``settlement_days`` on a bond row (and ``--settlement``,
``Trades.with_settlement``) give the settlement date, the accrued interest and the clean price there beside the price
at the valuation date, against QuantLib 1.44: ``Bond::settlementDate`` and ``accruedAmount`` exactly, a straight bond's
``cleanPrice`` (``DiscountingBondEngine``) to 1e-9 per 100 (a coupon paid between the valuation and settlement dates
goes to the seller), a callable's (``TreeCallableFixedRateBondEngine``, converged) to the tree comparison's 0.01, a
floating bond's (``FloatingRateBond``, settling inside its running period) to 1e-8."""

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

AS_OF = np.datetime64("2026-11-25")  # a Wednesday
#: A straight bond's clean price at settlement against QuantLib's discounted flows (per 100).
STRAIGHT = 1e-9
#: A callable bond's against QuantLib's converged tree (per 100): the tree comparisons' tolerance.
CALLABLE = 0.01
CALENDARS = {"TARGET": ql.TARGET(), "NONE": ql.NullCalendar(), "NYSE": ql.UnitedStates(ql.UnitedStates.NYSE)}
DAY_COUNTS = {"30/360": ql.Thirty360(ql.Thirty360.BondBasis), "ACT/360": ql.Actual360(),
              "ACT/365F": ql.Actual365Fixed()}
#: (id, issue, maturity, coupon, frequency, day_count, calendar, settlement_days)
BONDS = [
    ("t2", "2021-05-15", "2031-05-15", 0.045, 2, "30/360", "TARGET", 2),
    ("coupon-in-lag", "2020-11-27", "2030-11-27", 0.05, 2, "ACT/360", "TARGET", 3),  # pays 2026-11-27, before T+3
    ("coupon-on-settle", "2020-11-27", "2032-11-27", 0.04, 4, "30/360", "NONE", 2),  # pays on the settlement date
    ("t0", "2024-02-29", "2034-02-28", 0.035, 1, "ACT/365F", "NYSE", 0),
    ("t1-thanksgiving", "2025-06-10", "2035-06-10", 0.06, 12, "ACT/360", "NYSE", 1),
    ("not-yet-issued", "2026-11-27", "2036-11-27", 0.05, 2, "30/360", "TARGET", 1),
]


@pytest.fixture(autouse=True)
def _evaluation_date():
    yield from on_date(AS_OF)


def curves() -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    days = np.array([1, 7, 30, 91, 182, 365, 730, 1095, 1826, 2557, 3652, 5479])
    zeros = 0.024 + 0.011 * (1 - np.exp(-days / 365.0 / 3.0))
    dfs = np.exp(-zeros * days / 365.0)
    ours = DatedCurve(as_of=AS_OF, dates=AS_OF + days, discount_factors=dfs, name="EUR")
    theirs = ql.DiscountCurve([ql_date(AS_OF), *(ql_date(AS_OF + d) for d in days)], [1.0, *dfs], ql.Actual365Fixed())
    return ours, ql.YieldTermStructureHandle(theirs)


def trades(rows: list[tuple], **columns: object) -> trinom.Trades:
    c = list(zip(*rows, strict=True))
    cells = {"id": list(c[0]), "type": "bond", "issue": list(c[1]), "maturity": list(c[2]), "coupon": list(c[3]),
             "frequency": list(c[4]), "day_count": list(c[5]), "calendar": list(c[6]), "convention": "F", "a": 0.05,
             "sigma": 0.01, "curve": "EUR", "settlement_days": list(c[7])}
    return trinom.Trades(as_of=str(AS_OF), **(cells | columns))


def quantlib_bond(row: tuple, handle: ql.YieldTermStructureHandle, calls: list[tuple[str, float]] = (),
                  model: ql.HullWhite | None = None, steps: int = 0) -> ql.Bond:
    _id, issue, maturity, coupon, frequency, day_count, calendar, lag = row
    schedule = ql.Schedule(ql_date(np.datetime64(issue)), ql_date(np.datetime64(maturity)),
                           ql.Period(12 // frequency, ql.Months), CALENDARS[calendar], ql.Following, ql.Following,
                           ql.DateGeneration.Backward, False)
    if not calls:
        bond = ql.FixedRateBond(lag, 100.0, schedule, [coupon], DAY_COUNTS[day_count], ql.Following, 100.0,
                                ql_date(np.datetime64(issue)), CALENDARS[calendar])
        bond.setPricingEngine(ql.DiscountingBondEngine(handle))
        return bond
    schedule_of_calls = ql.CallabilitySchedule()
    for day, price in calls:
        schedule_of_calls.append(ql.Callability(ql.BondPrice(price, ql.BondPrice.Clean), ql.Callability.Call,
                                                ql_date(np.datetime64(day))))
    bond = ql.CallableFixedRateBond(lag, 100.0, schedule, [coupon], DAY_COUNTS[day_count], ql.Following, 100.0,
                                    ql_date(np.datetime64(issue)), schedule_of_calls)
    bond.setPricingEngine(ql.TreeCallableFixedRateBondEngine(model, steps))
    return bond


def iso(day: ql.Date) -> str:
    return f"{day.year():04d}-{day.month():02d}-{day.dayOfMonth():02d}"


def test_straight_bonds_settle_as_quantlibs_fixed_rate_bonds() -> None:
    ours, theirs = curves()
    result = trinom.price(trades(BONDS), {"EUR": ours}, backend="reference")
    assert result.ok.all() and result.settlement is not None
    for k, row in enumerate(BONDS):
        bond = quantlib_bond(row, theirs)
        assert str(result.settlement[k]) == iso(bond.settlementDate()), row[0]
        assert result.settlement_accrued[k] == pytest.approx(bond.accruedAmount(), abs=1e-12), row[0]
        assert result.settlement_clean[k] == pytest.approx(bond.cleanPrice(), abs=STRAIGHT), row[0]
        assert result.price[k] == pytest.approx(sum(cf.amount() * theirs.discount(cf.date()) for cf in bond.cashflows()
                                                    if cf.date() > ql_date(AS_OF)), abs=STRAIGHT), row[0]
    assert str(result.settlement[1]) == "2026-11-30" and str(result.settlement[4]) == "2026-11-27"  # T+3; Thanksgiving


def test_a_callable_bond_settles_as_quantlibs_tree_engine() -> None:
    ours, theirs = curves()
    row = ("callable", "2024-03-15", "2034-03-15", 0.05, 2, "30/360", "TARGET", 3)
    calls = [(f"{year}-03-15", 101.0) for year in range(2028, 2034)] + [(f"{y}-09-15", 101.0) for y in range(2028, 2034)]
    book = trades([row], option="call", exercise="bermudan", first_exercise="2028-03-15", last_exercise="2033-09-15",
                  exercise_price=101.0, steps_per_year=365)
    result = trinom.price(book, {"EUR": ours}, backend="reference")
    model = ql.HullWhite(theirs, 0.05, 0.01)
    coarse = quantlib_bond(row, theirs, sorted(calls), model, 1000).cleanPrice()
    fine = quantlib_bond(row, theirs, sorted(calls), model, 2000)
    assert abs(fine.cleanPrice() - coarse) < 2e-3
    assert str(result.settlement[0]) == iso(fine.settlementDate())
    assert result.settlement_accrued[0] == pytest.approx(fine.accruedAmount(), abs=1e-12)
    assert result.settlement_clean[0] == pytest.approx(fine.cleanPrice(), abs=CALLABLE)


def test_rows_without_settlement_days_have_none_and_with_settlement_fills_them() -> None:
    ours, _theirs = curves()
    book = trades(BONDS[:2], settlement_days=[None, 3])
    result = trinom.price(book, {"EUR": ours}, backend="reference")
    assert np.isnat(result.settlement[0]) and np.isnan(result.settlement_clean[0])
    assert str(result.settlement[1]) == "2026-11-30"
    filled = trinom.price(book.with_settlement(2), {"EUR": ours}, backend="reference")
    assert str(filled.settlement[0]) == "2026-11-27" and str(filled.settlement[1]) == "2026-11-30"
    plain = trinom.price(trades(BONDS[:1], settlement_days=[None]), {"EUR": ours}, backend="reference")
    assert plain.settlement is None
    assert list(result.to_pandas().columns)[-3:] == ["settlement", "settlement_clean", "settlement_accrued"]


def test_the_command_line_settles_and_appends_its_columns(tmp_path: Path) -> None:
    ours, theirs = curves()
    pd.DataFrame({"curve": "EUR", "date": [str(d) for d in ours.dates], "discount": ours.discount_factors}).to_csv(
        tmp_path / "curve.csv", index=False)
    rows = BONDS[:3]
    pd.DataFrame({"id": [r[0] for r in rows], "type": "bond", "issue": [r[1] for r in rows],
                  "maturity": [r[2] for r in rows], "coupon": [r[3] for r in rows], "frequency": [r[4] for r in rows],
                  "day_count": [r[5] for r in rows], "calendar": [r[6] for r in rows], "convention": "F", "a": 0.05,
                  "sigma": 0.01, "curve": "EUR", "settlement_days": [None, 3, 2]}).to_csv(tmp_path / "trades.csv",
                                                                                       index=False)
    assert main(["price", str(tmp_path / "trades.csv"), "--curve", str(tmp_path / "curve.csv"), "--as-of",
                 str(AS_OF), "--backend", "reference", "--settlement", "2", "--out", str(tmp_path / "out.csv")]) == 0
    table = pd.read_csv(tmp_path / "out.csv")
    assert list(table.columns) == ["id", "price", "clean", "accrued", "error", "value", "settlement",
                                   "settlement_clean", "settlement_accrued"]
    for k, row in enumerate(rows):
        lag = 2 if k == 0 else row[7]
        bond = quantlib_bond((*row[:7], lag), theirs)
        assert table["settlement"][k] == iso(bond.settlementDate())
        assert table["settlement_clean"][k] == pytest.approx(bond.cleanPrice(), abs=STRAIGHT)


def test_a_floating_bond_settles_as_quantlibs_floating_rate_bond() -> None:
    """Settling inside the running period: its accrued interest at settlement at the known fixing plus margin."""
    ours, theirs = curves()
    book = trinom.Trades(as_of=str(AS_OF), id=["float", "fixed-to-float"], type="bond",
                         issue=["2025-03-15", "2021-03-15"], maturity=["2034-03-15", "2031-03-15"],
                         coupon_type=["float", "fixed_to_float"], coupon=[None, 0.03], switch_date=[None, "2026-03-15"],
                         margin=0.005, fixing=0.027, frequency=2, day_count="ACT/365F", calendar="NONE", a=0.05,
                         sigma=0.01, curve="EUR", settlement_days=2)
    result = trinom.price(book, {"EUR": ours}, backend="reference")
    assert result.ok.all(), result.error
    for k, issue in enumerate(["2025-03-15", "2021-03-15"]):
        index = ql.IborIndex(f"SETTLED{k}", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(),
                             ql.Unadjusted, False, ql.Actual365Fixed(), theirs)  # its own name: fixings are global
        index.addFixing(ql.Date(15, 9, 2026), 0.027, True)
        schedule = ql.Schedule(ql_date(np.datetime64(issue)), ql_date(np.datetime64(book.column("maturity")[k])),
                               ql.Period(6, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                               ql.DateGeneration.Backward, False)
        bond = ql.FloatingRateBond(2, 100.0, schedule, index, ql.Actual365Fixed(), ql.Unadjusted, 0, [1.0], [0.005])
        bond.setPricingEngine(ql.DiscountingBondEngine(theirs))
        assert str(result.settlement[k]) == iso(bond.settlementDate()) == "2026-11-27"
        assert result.settlement_accrued[k] == pytest.approx(bond.accruedAmount(), abs=1e-12)
        # the fixed-to-float bond switched before the as-of date: its flows from then are QuantLib's floater's
        assert result.settlement_clean[k] == pytest.approx(bond.cleanPrice(), abs=1e-8)


def test_a_floating_bond_settling_in_a_period_not_yet_fixed_is_refused() -> None:
    ours, _theirs = curves()
    book = trinom.Trades(as_of=str(AS_OF), id=["ok", "crossing"], type="bond", issue=["2025-03-15", "2025-11-26"],
                         maturity=["2034-03-15", "2030-11-26"], coupon_type="float", margin=0.005, fixing=0.027,
                         frequency=2, day_count="ACT/365F", calendar="NONE", a=0.05, sigma=0.01, curve="EUR",
                         settlement_days=2)
    result = trinom.price(book, {"EUR": ours}, backend="reference", errors="mask")
    assert result.ok.tolist() == [True, False]
    assert any(r == 1 and f == "settlement_days" and "whose rate fixes after the as-of date" in m
               for r, f, m in result.problems), result.problems


@pytest.mark.parametrize(("cells", "field", "words"), [
    ({"settlement_days": 2.5}, "settlement_days", "a whole number of business days in 0..30"),
    ({"settlement_days": 45}, "settlement_days", "in 0..30"),
    ({"settlement_days": -1}, "settlement_days", "in 0..30"),
])
def test_bad_settlement_is_refused_naming_the_row_and_field(cells: dict, field: str, words: str) -> None:
    ours, _theirs = curves()
    book = trades(BONDS[:2], **{name: [BONDS[0][3] if name == "coupon" else None, value]
                                    for name, value in cells.items()})
    result = trinom.price(book, {"EUR": ours}, backend="reference", errors="mask")
    assert result.ok.tolist() == [True, False]
    assert any(r == 1 and f == field and words in m for r, f, m in result.problems), result.problems


def test_settlement_days_do_not_apply_to_swaptions_or_tree_step_books(tmp_path: Path) -> None:
    ours, _theirs = curves()
    book = trinom.Trades(as_of=str(AS_OF), id=["s"], type="swaption", start="2027-11-25", maturity="2032-11-25",
                         rate=0.03, option="payer", settlement_days=2, a=0.05, sigma=0.008, curve="EUR")
    result = trinom.price(book, {"EUR": ours}, backend="reference", errors="mask")
    assert any(f == "settlement_days" and "does not apply to a swaption" in m for _r, f, m in result.problems)


def test_with_accuracy_the_settlement_price_is_said_missing_not_dropped() -> None:
    ours, _theirs = curves()
    book = trinom.Trades(as_of=str(AS_OF), id=["b"], type="bond", issue="2021-05-15", maturity="2031-05-15",
                         coupon=0.045, frequency=2, a=0.05, sigma=0.01, curve="EUR", settlement_days=2)
    result = trinom.price(book, {"EUR": ours}, backend="reference", accuracy=1e-3)
    assert result.settlement is None
    assert any("no clean price at settlement with accuracy=" in message for _row, message in result.warnings)
