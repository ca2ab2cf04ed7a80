"""Dated trades (:class:`trinom.instruments.Trades`) against QuantLib 1.44 and the Hull-White closed form: issue 25's
"must show" checks.

* Callable and puttable bonds within 0.01 per 100 of QuantLib's ``CallableFixedRateBond`` priced by
  ``TreeCallableFixedRateBondEngine(HullWhite(curve, a, sigma), N)`` where QuantLib has converged (its prices at ``N``
  and ``2N`` within 1e-3), on the same curve (``ZeroCurve`` linear in zero rates = ``DatedCurve(...,
  interpolation="linear-zero")``), evaluation and settlement at the as-of date; accrued interest to 1e-10. Bermudan
  calls and puts on coupon dates, european (mid-period, on a coupon date, 3-6 days before one, in the period running
  at the as-of date), american windows (one ending a week before a coupon date), every day count, frequency,
  calendar and convention, bonds issued before the as-of date and one issued after, flows in the tree's first steps;
  american windows open before a seasoned bond's next coupon and over coupons of unequal amounts (ACT/360).
  Measured (N = 1600/3200): bermudan 4.7e-4, european 1.7e-4, american 8.9e-3, near a coupon 7.1e-3, no option 1e-13;
  (N = 800/1600) before the next coupon 4.6e-5, unequal coupons 2.3e-4 (1600/3200, 12 years: 3.4e-3).
  QuantLib snaps an exercise date within a week before a coupon date onto that date (exercised cum-coupon at a price
  scaled by the curve's discount factors), the tree exercises on the day itself: that alone is 7e-3 for a window
  ending a week before a coupon (the same window a day shorter agrees to 6e-6) and 6.7e-3 for a european call 6 days
  before one (8 days before: 2e-4). An american window of equal coupons is the tree's own, which accrues interest
  linearly in days where 30/360 does not (5.4e-3 of the 8.9e-3 above).
* European and bermudan exercise are listed points at the exercise price plus the day count's accrued interest (0 on
  a coupon date); american exercise is the tree's window with listed points on the steps before the bond's first
  cash flow (where the tree accrues nothing) and, where the coupon amounts change in the window, on every step
  (trinom.instruments.dated_bond). Before these, an american window open before the next coupon was refused (-1.80 per
  100) and one over ACT/360 semiannual coupons was 0.0121 per 100 off.
* European options on zero-coupon bonds within 5e-3 per 100 of the closed form and of QuantLib's
  ``HullWhite.discountBondOption`` at the default 365 steps a year.
* OAS from dated market prices recovers the spreads that made them; effective duration equals a bump of the dated
  curve by hand; bad input names the row and the field and ``errors="mask"`` prices the other rows; the CPU engines
  agree with the reference.

``-m slow`` adds a broad QuantLib comparison (about 30 bonds at N = 1600 and 3200: several minutes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from trinom.engines.closed_form import zero_coupon_bond_option
from trinom.instruments import Trades
from trinom.model import DatedCurve

AS_OF = "2026-11-25"
#: The curve's pillars (days after the as-of date; the last beyond every maturity, so that neither curve
#: extrapolates) and continuous ACT/365F zero rates.
PILLAR_DAYS = (0, 182, 365, 730, 1825, 3650, 5475, 7300, 14600)
ZERO_RATES = (0.030, 0.031, 0.032, 0.034, 0.037, 0.040, 0.041, 0.042, 0.043)
A, SIGMA = 0.03, 0.01
#: Tolerances of the issue: dirty price per 100 against QuantLib, QuantLib's own convergence (N against 2N), accrued.
PRICE_TOLERANCE, CONVERGED, ACCRUED_TOLERANCE = 0.01, 1e-3, 1e-10

QL_DAY_COUNT = {"ACT/360": lambda s: ql.Actual360(), "ACT/365F": lambda s: ql.Actual365Fixed(),
                "30/360": lambda s: ql.Thirty360(ql.Thirty360.BondBasis),
                "30E/360": lambda s: ql.Thirty360(ql.Thirty360.EurobondBasis),
                "ACT/ACT-ISDA": lambda s: ql.ActualActual(ql.ActualActual.ISDA),
                "ACT/ACT-ICMA": lambda s: ql.ActualActual(ql.ActualActual.ISMA, s)}
#: Calendars on which trinom's holidays equal QuantLib's over these bonds' lives (tests/test_conventions.py).
QL_CALENDAR = {"NONE": ql.NullCalendar(), "WEEKENDS": ql.WeekendsOnly(), "TARGET": ql.TARGET(),
               "NYSE": ql.UnitedStates(ql.UnitedStates.NYSE),
               "TARGET+NYSE": ql.JointCalendar(ql.TARGET(), ql.UnitedStates(ql.UnitedStates.NYSE))}
QL_CONVENTION = {"U": ql.Unadjusted, "F": ql.Following, "MF": ql.ModifiedFollowing, "P": ql.Preceding}
QL_FREQUENCY = {1: ql.Annual, 2: ql.Semiannual, 4: ql.Quarterly, 12: ql.Monthly}


def bond(name: str, kind: str, issue: str, maturity: str, coupon: float, frequency: int, day_count: str = "30/360",
         calendar: str = "NONE", convention: str = "F", option: str | None = None, exercise: str | None = None,
         first: str | None = None, last: str | None = None, price: float | None = None) -> dict[str, Any]:
    """One bond trade (``kind``: its class in the report of differences)."""
    return {"id": name, "kind": kind, "issue": issue, "maturity": maturity, "coupon": coupon, "frequency": frequency,
            "day_count": day_count, "calendar": calendar, "convention": convention, "option": option,
            "exercise": exercise, "first_exercise": first, "last_exercise": last, "exercise_price": price}


#: QuantLib at N = 800 and 1600 (converged to 1e-3 on each): about 15 s in all.
FAST = [
    bond("berm-call", "bermudan", "2024-03-15", "2033-03-15", 0.05, 2, "30/360", "TARGET", "MF", "call", "bermudan",
         "2027-03-15", "2032-09-15", 100.0),
    bond("berm-put", "bermudan", "2025-06-30", "2032-06-30", 0.035, 1, "ACT/ACT-ICMA", "NYSE", "F", "put", "bermudan",
         "2028-06-30", "2031-06-30", 100.0),
    bond("euro-4d", "near a coupon", "2024-01-15", "2031-01-15", 0.045, 4, "ACT/365F", "TARGET", "MF", "call",
         "european", "2029-04-11", None, 100.0),
    bond("euro-first", "european", "2025-09-30", "2030-09-30", 0.04, 2, "ACT/360", "WEEKENDS", "P", "put", "european",
         "2027-02-10", None, 99.5),
    bond("amer-week", "american", "2024-05-20", "2032-05-20", 0.05, 2, "ACT/ACT-ICMA", "NONE", "U", "call", "american",
         "2028-01-10", "2029-05-13", 101.0),
    bond("plain", "no option", "2025-02-28", "2030-02-28", 0.03, 12, "ACT/360", "TARGET+NYSE", "MF"),
    bond("forward", "bermudan", "2027-03-01", "2033-03-01", 0.045, 2, "30E/360", "TARGET", "F", "call", "bermudan",
         "2029-03-01", "2032-09-01", 100.0),
]

#: QuantLib at N = 1600 and 3200 (``-m slow``).
BROAD = [
    bond("b-call-12y", "bermudan", "2024-03-15", "2036-03-15", 0.05, 2, "30/360", "NONE", "F", "call", "bermudan",
         "2028-03-15", "2035-09-15", 100.0),
    bond("b-put-12y", "bermudan", "2024-03-15", "2036-03-15", 0.05, 2, "30/360", "NONE", "F", "put", "bermudan",
         "2028-03-15", "2035-09-15", 100.0),
    bond("b-call-q-isda", "bermudan", "2023-10-31", "2033-10-31", 0.042, 4, "ACT/ACT-ISDA", "TARGET", "MF", "call",
         "bermudan", "2027-10-31", "2033-07-31", 101.0),
    bond("b-put-m-360", "bermudan", "2025-01-10", "2031-01-10", 0.038, 12, "ACT/360", "NYSE", "MF", "put",
         "bermudan", "2027-01-10", "2030-12-10", 99.0),
    bond("b-call-a-365", "bermudan", "2022-07-01", "2034-07-01", 0.055, 1, "ACT/365F", "WEEKENDS", "P", "call",
         "bermudan", "2027-07-01", "2033-07-01", 100.0),
    bond("b-call-eom", "bermudan", "2024-08-31", "2033-08-31", 0.05, 2, "30/360", "TARGET", "MF", "call", "bermudan",
         "2027-02-28", "2033-02-28", 100.0),
    bond("b-put-30e", "bermudan", "2025-11-30", "2035-11-30", 0.03, 2, "30E/360", "TARGET+NYSE", "F", "put",
         "bermudan", "2028-05-30", "2035-05-30", 100.0),
    bond("e-mid-icma", "european", "2024-06-30", "2032-06-30", 0.045, 2, "ACT/ACT-ICMA", "NONE", "F", "put",
         "european", "2029-03-10", None, 100.0),
    bond("e-mid-365", "european", "2024-03-15", "2034-03-15", 0.05, 2, "ACT/365F", "NONE", "F", "call", "european",
         "2028-07-20", None, 101.0),
    bond("e-on-coupon", "european", "2024-03-15", "2034-03-15", 0.05, 2, "30/360", "TARGET", "MF", "call",
         "european", "2029-03-15", None, 100.0),
    bond("e-eom-30360", "european", "2024-08-31", "2033-08-31", 0.05, 2, "30/360", "NONE", "U", "call", "european",
         "2029-08-20", None, 100.5),
    bond("e-first-30360", "european", "2024-03-15", "2036-03-15", 0.05, 2, "30/360", "NONE", "F", "call",
         "european", "2027-01-10", None, 99.0),
    bond("e-first-isda", "european", "2023-12-20", "2030-12-20", 0.06, 1, "ACT/ACT-ISDA", "TARGET", "F", "put",
         "european", "2027-06-01", None, 102.0),
    bond("e-3d", "near a coupon", "2024-03-15", "2034-03-15", 0.05, 2, "30/360", "NONE", "F", "call", "european",
         "2029-03-12", None, 100.0),
    bond("e-5d-put", "near a coupon", "2024-03-15", "2034-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "put",
         "european", "2029-09-10", None, 100.0),
    bond("e-6d-360", "near a coupon", "2025-04-22", "2033-04-22", 0.04, 4, "ACT/360", "TARGET", "MF", "call",
         "european", "2030-07-16", None, 100.0),
    bond("a-week-call", "near a coupon", "2024-03-15", "2034-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "call",
         "american", "2028-04-01", "2028-09-08", 101.0),
    bond("a-3d-put", "near a coupon", "2024-03-15", "2036-03-15", 0.05, 2, "30/360", "NONE", "F", "put",
         "american", "2029-04-01", "2029-09-12", 99.0),
    bond("a-long-30360", "american", "2024-03-15", "2036-03-15", 0.05, 2, "30/360", "NONE", "F", "call", "american",
         "2028-01-10", "2030-03-08", 101.0),
    bond("a-long-icma-put", "american", "2024-03-15", "2036-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "put",
         "american", "2028-01-10", "2030-03-08", 99.0),
    bond("a-q-30e", "american", "2025-02-14", "2033-02-14", 0.045, 4, "30E/360", "TARGET", "MF", "call", "american",
         "2029-02-14", "2030-02-10", 100.0),
    bond("a-nosnap-icma", "american", "2024-03-15", "2036-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "call",
         "american", "2028-04-01", "2028-09-01", 101.0),
    bond("early-berm", "early flows", "2025-05-27", "2033-05-27", 0.06, 2, "ACT/ACT-ICMA", "NONE", "F", "call",
         "bermudan", "2028-05-27", "2032-11-27", 100.0),
    bond("early-euro", "early flows", "2024-11-26", "2030-11-26", 0.05, 12, "30/360", "NONE", "F", "put", "european",
         "2027-01-20", None, 100.0),
    bond("plain-isda", "no option", "2023-05-05", "2035-05-05", 0.04, 1, "ACT/ACT-ISDA", "NYSE", "MF"),
    bond("plain-30e-m", "no option", "2026-01-31", "2031-01-31", 0.035, 12, "30E/360", "TARGET", "MF"),
    bond("zero-call", "bermudan", "2024-03-15", "2034-03-15", 0.0, 1, "30/360", "NONE", "F", "call", "bermudan",
         "2028-03-15", "2033-03-15", 85.0),
    bond("fwd-put", "bermudan", "2027-06-15", "2035-06-15", 0.04, 2, "ACT/ACT-ICMA", "TARGET", "MF", "put",
         "bermudan", "2029-06-15", "2034-12-15", 100.0),
    bond("a-long-360", "unequal coupons", "2024-03-15", "2036-03-15", 0.05, 2, "ACT/360", "NONE", "F", "call",
         "american", "2028-01-10", "2030-03-08", 101.0),
]

#: American windows the tree's own accrued interest would get wrong (QuantLib at N = 800 and 1600): open before a
#: seasoned bond's next coupon (the tree accrues nothing before its first cash flow; once refused as input) and over
#: coupons of unequal amounts (the tree accrues the previous coupon's).
AMERICAN_POINTS = [
    bond("a-first", "before next coupon", "2024-03-15", "2031-03-15", 0.05, 2, "30/360", "NONE", "F", "call",
         "american", "2026-12-01", "2027-03-01", 99.0),
    bond("a-first-low", "before next coupon", "2023-06-15", "2030-06-15", 0.035, 2, "ACT/365F", "NONE", "F", "call",
         "american", "2026-12-01", "2028-06-01", 99.0),
    bond("a-first-put", "before next coupon", "2024-03-15", "2031-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "put",
         "american", "2026-12-01", "2027-06-01", 102.0),
    bond("amer-360", "unequal coupons", "2025-02-28", "2031-02-28", 0.045, 2, "ACT/360", "TARGET", "MF", "call",
         "american", "2027-03-10", "2028-09-01", 101.0),
]


def ql_date(text: str) -> ql.Date:
    year, month, day = (int(x) for x in str(text).split("-"))
    return ql.Date(day, month, year)


def dated_curve(interpolation: str = "linear-zero", shift: float = 0.0) -> DatedCurve:
    """The test curve (its zero rates moved by ``shift``)."""
    dates = [str(np.datetime64(AS_OF) + days) for days in PILLAR_DAYS]
    return DatedCurve(as_of=AS_OF, dates=dates, zero_rates=np.array(ZERO_RATES) + shift, interpolation=interpolation)


@pytest.fixture
def hull_white() -> Iterator[ql.HullWhite]:
    """QuantLib's Hull-White model on the test curve, evaluation date the as-of date (restored afterwards)."""
    settings = ql.Settings.instance()
    before = settings.evaluationDate
    settings.evaluationDate = ql_date(AS_OF)
    curve = ql.ZeroCurve([ql_date(AS_OF) + days for days in PILLAR_DAYS], list(ZERO_RATES), ql.Actual365Fixed(),
                         ql.NullCalendar(), ql.Linear(), ql.Continuous)
    yield ql.HullWhite(ql.YieldTermStructureHandle(curve), A, SIGMA)
    settings.evaluationDate = before


def bond_trades(cases: Sequence[dict[str, Any]], **columns: Any) -> Trades:
    fields = ("issue", "maturity", "coupon", "frequency", "day_count", "calendar", "convention", "option", "exercise",
              "first_exercise", "last_exercise", "exercise_price")
    return Trades(as_of=AS_OF, id=[c["id"] for c in cases], type=["bond"] * len(cases), a=A, sigma=SIGMA, curve="EUR",
                  **{f: [c[f] for c in cases] for f in fields}, **columns)


def quantlib_bond(case: dict[str, Any], model: ql.HullWhite, steps: int) -> ql.CallableFixedRateBond:
    """``case`` as QuantLib's callable bond: the same schedule (backward, no end-of-month rule), payment on the
    adjusted period ends, a callability (clean price) on every exercise date after the as-of date: the window's
    coupon dates (bermudan), its one date (european) or its every day (american)."""
    calendar, convention = QL_CALENDAR[case["calendar"]], QL_CONVENTION[case["convention"]]
    schedule = ql.Schedule(ql_date(case["issue"]), ql_date(case["maturity"]), ql.Period(QL_FREQUENCY[case["frequency"]]),
                           calendar, convention, convention, ql.DateGeneration.Backward, False)
    calls = ql.CallabilitySchedule()
    if case["option"]:
        first = ql_date(case["first_exercise"])
        last = ql_date(case["last_exercise"] or case["first_exercise"])
        if case["exercise"] == "bermudan":
            days = [d for d in list(schedule)[1:] if first <= d <= last]
        else:
            days = [first + k for k in range(last - first + 1)]
        side = ql.Callability.Call if case["option"] == "call" else ql.Callability.Put
        for day in days:
            if day > ql_date(AS_OF):
                calls.append(ql.Callability(ql.BondPrice(case["exercise_price"], ql.BondPrice.Clean), side, day))
    result = ql.CallableFixedRateBond(0, 100.0, schedule, [case["coupon"]], QL_DAY_COUNT[case["day_count"]](schedule),
                                      convention, 100.0, ql_date(case["issue"]), calls)
    result.setPricingEngine(ql.TreeCallableFixedRateBondEngine(model, steps))
    return result


def quantlib_prices(case: dict[str, Any], model: ql.HullWhite, steps: int) -> tuple[float, float]:
    """QuantLib's converged dirty price at the as-of date (at ``2 * steps``, checked against ``steps``) and accrued
    interest. The price is the bond's ``NPV`` (notional 100): its ``dirtyPrice`` is the value at the settlement date,
    the issue date for a bond not yet issued (a forward price), the as-of date (equal to ``NPV``) for the others."""
    coarse = quantlib_bond(case, model, steps).NPV()
    fine = quantlib_bond(case, model, 2 * steps)
    assert abs(fine.NPV() - coarse) < CONVERGED, (case["id"], steps, coarse, fine.NPV())
    if case["issue"] <= AS_OF:
        assert fine.dirtyPrice() == pytest.approx(fine.NPV(), rel=1e-13, abs=0)
    return fine.NPV(), fine.accruedAmount()


def compare(cases: Sequence[dict[str, Any]], model: ql.HullWhite, steps: int) -> dict[str, float]:
    """Every case within the tolerances of QuantLib; the largest difference of each kind of case (printed)."""
    result = trinom.price(bond_trades(cases), {"EUR": dated_curve()}, backend="reference")
    np.testing.assert_allclose(result.clean, result.price - result.accrued, rtol=0, atol=1e-12)
    worst: dict[str, float] = {}
    lines, failures = [], []
    for k, case in enumerate(cases):
        dirty, accrued = quantlib_prices(case, model, steps)
        gap, accrued_gap = float(result.price[k]) - dirty, float(result.accrued[k]) - accrued
        lines.append(f"{case['id']:>16} {case['kind']:>14}: trinom {result.price[k]:.6f} QuantLib {dirty:.6f} "
                     f"diff {gap:+.2e}, accrued {accrued:.6f} diff {accrued_gap:+.1e}")
        if abs(gap) > PRICE_TOLERANCE or abs(accrued_gap) > ACCRUED_TOLERANCE:
            failures.append(lines[-1])
        worst[case["kind"]] = max(worst.get(case["kind"], 0.0), abs(gap))
    print("\n".join(lines), "\nlargest |trinom - QuantLib| per kind:", worst)
    assert not failures, failures
    return worst


def test_callable_and_puttable_bonds_match_quantlib(hull_white):
    compare(FAST, hull_white, 800)


@pytest.mark.slow
def test_callable_and_puttable_bonds_match_quantlib_broadly(hull_white):
    compare(BROAD, hull_white, 1600)


def test_american_windows_the_tree_alone_would_misprice_match_quantlib(hull_white):
    """Before the bond's next coupon (once refused: the tree accrues nothing there, -1.80 per 100) and over unequal
    coupons (the tree accrues the previous coupon's, 0.012 per 100): listed points pay the day count's accrued
    interest."""
    compare(AMERICAN_POINTS, hull_white, 800)


def test_straight_bonds_are_their_flows_discounted_at_every_resolution(hull_white):
    """Issue 34: a cash flow is paid at its date, between the tree's steps (valued at the step before it by
    Hull-White's zero-coupon bond price fitted to the tree), so a bond without an option is its flows (QuantLib's
    schedule and amounts) discounted on the curve at their dates, to 1e-10 per 100, at 1 to 365 steps a year: flows
    in the first steps (a third of one once missed the tree's outer nodes at step 1), one paid tomorrow, monthly
    coupons several to a step."""
    issues = ["2024-11-26", "2024-11-27", "2024-11-28", "2024-11-30", "2025-12-10", "2025-12-20", "2025-01-02"]
    cases = [bond(f"early-{k}", "early flows", issue, str(np.datetime64(issue) + 365 * 6), 0.05, 2, "ACT/365F")
             for k, issue in enumerate(issues)]
    cases += [bond("matures-in-2-days", "early flows", "2026-05-27", "2026-11-27", 0.05, 2),
              bond("monthly-short", "early flows", "2026-09-26", "2027-01-26", 0.04, 12, "ACT/360"),
              bond("monthly-long", "straight", "2020-02-14", "2049-08-14", 0.045, 12, "30/360"),
              bond("annual-30y", "straight", "2026-03-01", "2056-03-01", 0.03, 1, "ACT/ACT-ICMA"),
              bond("quarterly", "straight", "2023-07-31", "2033-07-31", 0.06, 4, "ACT/360")]
    for curve in (dated_curve(), dated_curve("log-linear-discount")):
        for steps_per_year in (365, 52, 12, 4, 2, 1):
            trades = bond_trades(cases, steps_per_year=steps_per_year)
            prices = trinom.price(trades, {"EUR": curve}, **ENGINE).price
            for case, price in zip(cases, prices, strict=True):
                flows = [(cf.date(), cf.amount()) for cf in quantlib_bond(case, hull_white, 10).cashflows()
                         if cf.date() > ql_date(AS_OF)]
                dates = np.array([f"{d.year():04d}-{d.month():02d}-{d.dayOfMonth():02d}" for d, _a in flows],
                                 dtype="datetime64[D]")
                expected = float(np.dot([amount for _d, amount in flows], curve.discount(dates)))
                assert price == pytest.approx(expected, abs=1e-10), (case["id"], steps_per_year, price - expected)


def test_a_flow_paid_tomorrow_is_worth_it_at_one_step_a_year():
    """The issue's example: a bond paying 102.5 tomorrow priced 99.97 at one step a year (its flow moved to the
    step a year away); paid tomorrow it is 102.5 discounted for a day."""
    trades = Trades(as_of=AS_OF, id=["T"], type=["bond"], issue=["2026-05-26"], maturity=["2026-11-26"],
                    coupon=[0.05], frequency=[2], day_count=["30/360"], a=A, sigma=SIGMA, curve="EUR",
                    steps_per_year=1)
    curve = dated_curve()
    price = trinom.price(trades, {"EUR": curve}, **ENGINE).price[0]
    assert price == pytest.approx(102.5 * float(curve.discount(np.array(["2026-11-26"], dtype="datetime64[D]"))[0]),
                                  abs=1e-10)
    assert price > 102.49


def test_an_exercise_that_always_binds_is_its_dates_flows_and_price_at_every_resolution(hull_white):
    """Issue 34: a put at 900 is always exercised on its one date, so the bond is worth the flows paid up to that date
    (the coupon of a coupon date included: ex-coupon) and 900 plus the interest accrued at the date, paid then,
    discounted on the curve: to 1e-9 per 100 at every resolution, the date on a coupon date, a day after one, between
    two and a day before one (the engines value a date between steps from the last step before it)."""
    curve = dated_curve()
    dates = ["2029-03-15", "2029-03-16", "2029-06-01", "2029-09-14"]
    cases = [bond(f"put-{date}", "always", "2024-03-15", "2034-03-15", 0.05, 2, "30/360", "NONE", "F", "put",
                  "european", date, None, 900.0) for date in dates]
    for steps_per_year in (1, 2, 4, 12, 52, 365):
        prices = trinom.price(bond_trades(cases, steps_per_year=steps_per_year), {"EUR": curve}, **ENGINE).price
        for case, price in zip(cases, prices, strict=True):
            ql_bond = quantlib_bond(case, hull_white, 10)
            exercise = ql_date(case["first_exercise"])
            flows = [(cf.date(), cf.amount()) for cf in ql_bond.cashflows()
                     if ql_date(AS_OF) < cf.date() <= exercise]
            days = np.array([f"{d.year():04d}-{d.month():02d}-{d.dayOfMonth():02d}" for d, _a in flows]
                            + [case["first_exercise"]], dtype="datetime64[D]")
            paid = [amount for _d, amount in flows] + [900.0 + ql_bond.accruedAmount(exercise)]
            expected = float(np.dot(paid, curve.discount(days)))
            assert price == pytest.approx(expected, abs=1e-9), (case["id"], steps_per_year, price - expected)


@pytest.mark.parametrize("steps_per_year", [4, 52])
@pytest.mark.parametrize(("backend", "target"), [("futhark", "c"), ("futhark", "multicore"), ("futhark-paper", "c"),
                                                 ("futhark-paper", "multicore")])
def test_cpu_engines_agree_with_the_reference_between_steps(steps_per_year, backend, target):
    """Flows and exercise dates between steps (every case at 4 and 52 steps a year), with spreads."""
    book = bond_trades(FAST, spread=SPREADS, steps_per_year=steps_per_year)
    expected = trinom.price(book, {"EUR": dated_curve()}, backend="reference").price
    prices = trinom.price(book, {"EUR": dated_curve()}, backend=backend, target=target)
    np.testing.assert_allclose(prices.price, expected, rtol=1e-11, atol=0)


# --- zero-coupon bond options ----------------------------------------------------------------------------------
#: maturity, expiry, strike, call or put, a, sigma.
OPTIONS = [("2031-11-25", "2027-11-25", 85.0, "call", 0.03, 0.01), ("2036-05-15", "2029-02-01", 80.0, "put", 0.05, 0.012),
           ("2046-11-25", "2036-11-25", 66.0, "call", 0.1, 0.008), ("2028-03-10", "2027-06-01", 97.0, "put", 0.02, 0.015),
           ("2056-01-01", "2031-01-01", 40.0, "put", 0.03, 0.01), ("2030-01-02", "2026-12-02", 90.0, "call", 0.2, 0.02)]


def option_trades(rows: Sequence[tuple] = OPTIONS) -> Trades:
    maturity, expiry, strike, option, a, sigma = (list(column) for column in zip(*rows, strict=True))
    return Trades(as_of=AS_OF, id=[f"O{k}" for k in range(len(rows))], type=["bond_option"] * len(rows),
                  maturity=maturity, expiry=expiry, strike=strike, option=option, a=a, sigma=sigma, curve="EUR")


def years(dates: Sequence[str]) -> np.ndarray:
    """ACT/365F years from the as-of date."""
    return (np.array(dates, dtype="datetime64[D]") - np.datetime64(AS_OF)).astype(np.float64) / 365.0


def test_zero_coupon_bond_options_match_the_closed_form_and_quantlib(hull_white):
    result = trinom.price(option_trades(), {"EUR": dated_curve()}, backend="reference")
    maturity, expiry, strike, option, a, sigma = (list(column) for column in zip(*OPTIONS, strict=True))
    same = trinom.Portfolio(strike=strike, maturity=years(maturity), expiry=years(expiry), term_unit=[365] * len(OPTIONS),
                            term_steps=[365] * len(OPTIONS), a=a, sigma=sigma, option_type=option)
    closed = zero_coupon_bond_option(same, dated_curve().to_yield_curve())
    curve = hull_white.termStructure()
    quantlib = [100.0 * ql.HullWhite(curve, a[k], sigma[k]).discountBondOption(
        ql.Option.Call if option[k] == "call" else ql.Option.Put, strike[k] / 100.0, years(expiry)[k], years(maturity)[k])
        for k in range(len(OPTIONS))]
    print("largest |tree - closed form|:", np.abs(result.price - closed).max())
    np.testing.assert_allclose(closed, quantlib, rtol=0, atol=1e-12)  # the two oracles agree
    np.testing.assert_allclose(result.price, closed, rtol=0, atol=5e-3)
    assert np.array_equal(result.accrued, np.zeros(len(OPTIONS))) and (result.error == "").all()


# --- OAS, duration --------------------------------------------------------------------------------------------
ENGINE = {"backend": "futhark", "target": "c"}
SPREADS = [0.0125, -0.004, 0.0, 0.02, 0.0075, 0.001, 0.015]


def test_oas_from_dated_market_prices_recovers_the_spreads():
    curves = {"EUR": dated_curve()}
    market = trinom.price(bond_trades(FAST, spread=SPREADS), curves, **ENGINE)
    found = trinom.oas(bond_trades(FAST), curves, market.clean, **ENGINE)
    assert (found.error == "").all(), found.error
    np.testing.assert_allclose(found.oas, SPREADS, rtol=0, atol=1e-6)
    dirty = trinom.oas(bond_trades(FAST), curves, market.price, price_type="dirty", **ENGINE)
    np.testing.assert_allclose(dirty.oas, SPREADS, rtol=0, atol=1e-6)


@pytest.mark.parametrize("interpolation", ["linear-zero", "log-linear-discount"])
def test_effective_duration_is_a_bump_of_the_dated_curve_by_hand(interpolation):
    """``risk`` shifts the YieldCurve's zero rates in parallel; by hand, the DatedCurve's zero rates move by 1 bp:
    the same move (a dated curve's zero rate at every day moves by as much as its pillars'), so the same duration."""
    h = 1e-4
    for trades in (bond_trades(FAST, spread=SPREADS), option_trades()):
        table = trinom.risk(trades, {"EUR": dated_curve(interpolation)}, measures=["duration"], **ENGINE)
        assert table.id.tolist() == trades.ids and (table.error == "").all()
        p0, down, up = (trinom.price(trades, {"EUR": dated_curve(interpolation, shift)}, **ENGINE).price
                        for shift in (0.0, -h, h))
        np.testing.assert_allclose(table.base, p0, rtol=1e-13)
        np.testing.assert_allclose(table.value, (down - up) / (2 * p0 * h), rtol=1e-6)


# --- bad input ------------------------------------------------------------------------------------------------
GOOD_BOND = {"type": "bond", "issue": "2024-03-15", "maturity": "2031-03-15", "coupon": 0.05, "frequency": 2,
             "day_count": "30/360", "option": "call", "exercise": "bermudan", "first_exercise": "2027-03-15",
             "last_exercise": "2030-09-15", "exercise_price": 100.0, "a": A, "sigma": SIGMA, "curve": "EUR"}
GOOD_OPTION = {"type": "bond_option", "maturity": "2031-11-25", "expiry": "2027-11-25", "strike": 85.0,
               "option": "call", "a": A, "sigma": SIGMA, "curve": "EUR"}
#: One bad row's cells (on a bond, or an option where ``type`` says so), the field its message names, and a part of it.
BAD = [
    pytest.param({"day_count": "ACT/999"}, "day_count", "is not a day count", id="day-count"),
    pytest.param({"calendar": "MARS"}, "calendar", "is not a calendar", id="calendar"),
    pytest.param({"convention": "XX"}, "convention", "is not a business-day convention", id="convention"),
    pytest.param({"frequency": 3}, "frequency", "is not a coupon frequency", id="frequency"),
    pytest.param({"issue": "2024-02-30"}, "issue", "is not a date", id="date-issue"),
    pytest.param({"first_exercise": "15/03/2027"}, "first_exercise", "is not a date", id="date-exercise"),
    pytest.param({**GOOD_OPTION, "expiry": "2027-11"}, "expiry", "is not a date", id="date-expiry"),
    pytest.param({"issue": "2031-06-15", "maturity": "2031-03-15", "option": None, "exercise": None,
                  "first_exercise": None, "last_exercise": None, "exercise_price": None}, "maturity",
                 "must be after the issue date", id="maturity-before-issue"),
    pytest.param({"first_exercise": "2032-03-15"}, "first_exercise", "outside the bond's life", id="exercise-after"),
    pytest.param({"exercise": "european", "first_exercise": "2023-01-10", "last_exercise": None}, "first_exercise",
                 "outside the bond's life", id="exercise-before-issue"),
    pytest.param({"last_exercise": "2026-09-15"}, "last_exercise", "is before first_exercise", id="window-reversed"),
    pytest.param({"coupon": None}, "coupon", "coupon is missing", id="bond-without-coupon"),
    pytest.param({"issue": None}, "issue", "issue is missing", id="bond-without-issue"),
    pytest.param({"exercise_price": None}, "exercise_price", "exercise_price is missing", id="call-without-price"),
    pytest.param({"last_exercise": None}, "last_exercise", "last_exercise is missing", id="bermudan-without-end"),
    pytest.param({"sigma": None}, "sigma", "sigma is missing", id="bond-without-sigma"),
    pytest.param({**GOOD_OPTION, "strike": None}, "strike", "strike is missing", id="option-without-strike"),
    pytest.param({**GOOD_OPTION, "expiry": None}, "expiry", "expiry is missing", id="option-without-expiry"),
    pytest.param({**GOOD_OPTION, "option": None}, "option", "option is missing", id="option-without-side"),
    pytest.param({"strike": 100.0}, "strike", "does not apply to a bond", id="strike-on-a-bond"),
    pytest.param({**GOOD_OPTION, "coupon": 0.05}, "issue", "a bond_option with a coupon is on that coupon bond",
                 id="coupon-on-an-option"),  # issue 38: an option on a coupon bond, whose issue date it then needs
    pytest.param({"option": None, "exercise": None, "first_exercise": None, "last_exercise": None},
                 "exercise_price", "option is empty", id="exercise-price-without-option"),
    pytest.param({"curve": "USD"}, "curve", "is not one of the curves", id="unknown-curve"),
    pytest.param({**GOOD_OPTION, "curve": "USD"}, "curve", "is not one of the curves", id="unknown-curve-option"),
    pytest.param({"issue": "2016-03-15", "maturity": "2026-03-15"}, "maturity", "the bond has matured", id="matured"),
    pytest.param({"maturity": "2026-11-25"}, "maturity", "the bond has matured", id="matures-today"),
    pytest.param({**GOOD_OPTION, "expiry": "2026-11-24"}, "expiry", "the option has expired", id="expired"),
]


def book(rows: Sequence[dict[str, Any]]) -> Trades:
    columns = ("type", "issue", "maturity", "coupon", "frequency", "day_count", "calendar", "convention", "option",
               "exercise", "first_exercise", "last_exercise", "exercise_price", "expiry", "strike", "a", "sigma",
               "curve")
    return Trades(as_of=AS_OF, id=[f"T{k}" for k in range(len(rows))],
                  **{name: [row.get(name) for row in rows] for name in columns})


@pytest.mark.parametrize(("cells", "field", "message"), BAD)
def test_a_bad_trade_names_its_row_and_field_and_mask_prices_the_others(cells, field, message):
    bad = {**(GOOD_OPTION if cells.get("type") == "bond_option" else GOOD_BOND), **cells}
    rows = [GOOD_BOND, GOOD_OPTION, bad, {**GOOD_BOND, "exercise": "american", "option": "put"}]
    curves = {"EUR": dated_curve()}
    with pytest.raises(trinom.InputError) as raised:
        trinom.price(book(rows), curves, **ENGINE)
    errors = raised.value.errors
    assert [(row, name) for row, name, _m in errors if row != 2] == [], errors  # only the bad row is named
    assert any(row == 2 and name == field and message in text for row, name, text in errors), errors
    lines = [line for line in str(raised.value).splitlines() if line.startswith("row 2: ")]
    assert any(field in line for line in lines), str(raised.value)
    masked = trinom.price(book(rows), curves, **ENGINE, errors="mask")
    assert np.isnan(masked.price[2]) and field in masked.error[2] and message in masked.error[2], masked.error[2]
    good = [0, 1, 3]
    alone = trinom.price(book([rows[k] for k in good]), curves, **ENGINE)
    np.testing.assert_array_equal(masked.price[good], alone.price)  # priced, in input order
    assert (masked.error[good] == "").all()


def test_a_book_without_its_curve_names_the_curve():
    with pytest.raises(trinom.InputError, match="curve"):
        trinom.price(book([GOOD_BOND]), {"USD": dated_curve()}, **ENGINE)


# --- engines --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference_prices() -> dict[str, np.ndarray]:
    """The reference engine's prices of the dated bonds (with spreads) and of the bond options."""
    curves = {"EUR": dated_curve()}
    return {"bonds": trinom.price(bond_trades(FAST, spread=SPREADS), curves, backend="reference").price,
            "options": trinom.price(option_trades(), curves, backend="reference").price}


@pytest.mark.parametrize(("backend", "target"), [("futhark", "c"), ("futhark", "multicore"), ("futhark-paper", "c"),
                                                 ("futhark-paper", "multicore")])
def test_cpu_engines_agree_with_the_reference_on_dated_bonds(reference_prices, backend, target):
    prices = trinom.price(bond_trades(FAST, spread=SPREADS), {"EUR": dated_curve()}, backend=backend, target=target)
    np.testing.assert_allclose(prices.price, reference_prices["bonds"], rtol=1e-11, atol=0)


@pytest.mark.parametrize(("backend", "target"), [("futhark", "c"), ("futhark", "multicore"), ("futhark-basic", "c"),
                                                 ("futhark-flat", "c")])
def test_cpu_engines_agree_with_the_reference_on_dated_bond_options(reference_prices, backend, target):
    prices = trinom.price(option_trades(), {"EUR": dated_curve()}, backend=backend, target=target)
    np.testing.assert_allclose(prices.price, reference_prices["options"], rtol=1e-11, atol=0)
