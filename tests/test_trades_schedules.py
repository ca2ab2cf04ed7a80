"""Exercise schedules, amortizing notionals and notice days of dated trades (issue 25): ``schedule.csv``
(``id,date,price``), ``notionals.csv`` (``id,date,notional``) and the ``notice_days`` column.

* Step-down call and put schedules (a clean price per date; european, bermudan and american) within 0.01 per 100 of
  QuantLib 1.44's ``CallableFixedRateBond`` with a ``CallabilitySchedule`` of those prices, priced by
  ``TreeCallableFixedRateBondEngine`` where it has converged (N and 2N within 1e-3), ours at the default 365 steps a
  year; one call within a week of a coupon date.
* Straight amortizing bonds within 1e-6 per 100 of QuantLib's ``AmortizingFixedRateBond`` discounted on the same
  curve; accrued interest on the outstanding notional. An amortizing callable: monotone in its call price, below the
  straight bond, and the bullet bond's price where the schedule repays nothing early.
* Notice days: with (almost) no volatility, the price is the curve's (exercise paid on its date, discounted to the
  decision date, with the coupons of the notice period); an exercise whose decision date has passed is gone.
* Every bad input names its file, line and field; ``errors="mask"`` prices the other rows; the command line takes
  ``--schedule`` and ``--notionals``, CSV or Parquet.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from trinom.cli import main
from trinom.conventions import generate_schedules
from trinom.instruments import TRADE_COLUMNS, Trades, read_trades
from trinom.model import DatedCurve
from trinom.scenarios import CurveShift

AS_OF = "2026-11-25"
PILLAR_DAYS = (0, 182, 365, 730, 1825, 3650, 5475, 7300, 14600)
ZERO_RATES = (0.030, 0.031, 0.032, 0.034, 0.037, 0.040, 0.041, 0.042, 0.043)
A, SIGMA = 0.03, 0.01
PRICE_TOLERANCE, CONVERGED = 0.01, 1e-3
QL_DAY_COUNT = {"ACT/360": lambda s: ql.Actual360(), "ACT/365F": lambda s: ql.Actual365Fixed(),
                "30/360": lambda s: ql.Thirty360(ql.Thirty360.BondBasis),
                "ACT/ACT-ICMA": lambda s: ql.ActualActual(ql.ActualActual.ISMA, s)}
QL_CALENDAR = {"NONE": ql.NullCalendar(), "TARGET": ql.TARGET()}
QL_CONVENTION = {"U": ql.Unadjusted, "F": ql.Following, "MF": ql.ModifiedFollowing}
QL_FREQUENCY = {1: ql.Annual, 2: ql.Semiannual, 4: ql.Quarterly, 12: ql.Monthly}


def ql_date(text: str) -> ql.Date:
    year, month, day = (int(x) for x in str(text).split("-"))
    return ql.Date(day, month, year)


def dated_curve(shift: float = 0.0) -> DatedCurve:
    dates = [str(np.datetime64(AS_OF) + days) for days in PILLAR_DAYS]
    return DatedCurve(as_of=AS_OF, dates=dates, zero_rates=np.array(ZERO_RATES) + shift, interpolation="linear-zero")


CURVES = {"EUR": dated_curve()}


def days_after(date: str) -> int:
    """Days from the as-of date: the date's tree step at the default 365 steps a year."""
    return int((np.datetime64(date) - np.datetime64(AS_OF)).astype(np.int64))


@pytest.fixture
def quantlib_curve() -> Iterator[ql.YieldTermStructureHandle]:
    """QuantLib's copy of the test curve, evaluation date the as-of date (restored afterwards)."""
    settings = ql.Settings.instance()
    before = settings.evaluationDate
    settings.evaluationDate = ql_date(AS_OF)
    curve = ql.ZeroCurve([ql_date(AS_OF) + days for days in PILLAR_DAYS], list(ZERO_RATES), ql.Actual365Fixed(),
                         ql.NullCalendar(), ql.Linear(), ql.Continuous)
    yield ql.YieldTermStructureHandle(curve)
    settings.evaluationDate = before


def bond(name: str, issue: str, maturity: str, coupon: float, frequency: int, day_count: str = "30/360",
         calendar: str = "NONE", convention: str = "F", option: str | None = None, exercise: str | None = None,
         **cells: Any) -> dict[str, Any]:
    """One bond trade's cells."""
    return {"id": name, "type": "bond", "issue": issue, "maturity": maturity, "coupon": coupon, "frequency": frequency,
            "day_count": day_count, "calendar": calendar, "convention": convention, "option": option,
            "exercise": exercise, "a": A, "sigma": SIGMA, "curve": "EUR", **cells}


def trades(rows: Sequence[dict[str, Any]], schedule: Sequence[tuple[str, str, float]] = (),
           notionals: Sequence[tuple[str, str, float]] = ()) -> Trades:
    """A book of ``rows`` with its schedule and notionals rows (``(id, date, value)``)."""
    names = sorted({name for row in rows for name in row}, key=TRADE_COLUMNS.index)
    frame = pd.DataFrame({name: [row.get(name) for row in rows] for name in names})
    side = {}
    if schedule:
        side["schedule"] = pd.DataFrame(list(schedule), columns=["id", "date", "price"])
    if notionals:
        side["notionals"] = pd.DataFrame(list(notionals), columns=["id", "date", "notional"])
    return Trades.from_frame(frame, as_of=AS_OF, **side)


def price(book: Trades, **options: Any) -> trinom.Prices:
    return trinom.price(book, CURVES, backend="reference", **options)


# --- step-down schedules against QuantLib ---------------------------------------------------------------------------
def quantlib_callable(case: dict[str, Any], schedule: Sequence[tuple[str, float]], handle: ql.YieldTermStructureHandle,
                      steps: int) -> float:
    """QuantLib's dirty price (NPV, notional 100) of ``case`` with a callability at each ``(date, clean price)`` of
    ``schedule`` (american: every day from each date to the day before the next, the last to ``end``)."""
    calendar, convention = QL_CALENDAR[case["calendar"]], QL_CONVENTION[case["convention"]]
    dates = ql.Schedule(ql_date(case["issue"]), ql_date(case["maturity"]), ql.Period(QL_FREQUENCY[case["frequency"]]),
                        calendar, convention, convention, ql.DateGeneration.Backward, False)
    side = ql.Callability.Call if case["option"] == "call" else ql.Callability.Put
    calls = ql.CallabilitySchedule()
    days: list[tuple[ql.Date, float]] = []
    if case["exercise"] == "american":
        ends = [ql_date(d) - 1 for d, _p in schedule[1:]] + [ql_date(case.get("last_exercise") or case["maturity"])]
        for (start, value), end in zip(schedule, ends, strict=True):
            days += [(ql_date(start) + k, value) for k in range(end - ql_date(start) + 1)]
    else:
        days = [(ql_date(d), value) for d, value in schedule]
    for day, value in days:
        if day > ql_date(AS_OF):
            calls.append(ql.Callability(ql.BondPrice(value, ql.BondPrice.Clean), side, day))
    model = ql.HullWhite(handle, A, SIGMA)
    result = ql.CallableFixedRateBond(0, 100.0, dates, [case["coupon"]], QL_DAY_COUNT[case["day_count"]](dates),
                                      convention, 100.0, ql_date(case["issue"]), calls)
    result.setPricingEngine(ql.TreeCallableFixedRateBondEngine(model, steps))
    return result.NPV()


def converged(case: dict[str, Any], schedule: Sequence[tuple[str, float]], handle: ql.YieldTermStructureHandle,
              steps: int) -> float:
    coarse, fine = (quantlib_callable(case, schedule, handle, n) for n in (steps, 2 * steps))
    assert abs(fine - coarse) < CONVERGED, (case["id"], coarse, fine)
    return fine


#: Bonds with step-down schedules: (case, its schedule rows (date, clean price), QuantLib's N).
STEP_DOWN = [
    pytest.param(bond("sd-berm-call", "2024-03-15", "2036-03-15", 0.05, 2, "30/360", "NONE", "F", "call", "bermudan"),
                 [("2028-03-15", 103.0), ("2029-03-15", 102.0), ("2030-03-15", 101.0), ("2031-03-15", 100.5),
                  ("2032-03-15", 100.0)], 1600, id="bermudan-call-12y"),
    pytest.param(bond("sd-off-coupon", "2024-03-15", "2036-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "call",
                      "bermudan"),
                 [("2027-06-30", 104.0), ("2028-01-20", 103.0), ("2029-09-10", 101.5), ("2031-03-08", 100.0)], 1600,
                 id="bermudan-call-off-coupon-dates"),
    pytest.param(bond("sd-week", "2024-03-15", "2036-03-15", 0.05, 2, "30/360", "NONE", "F", "call", "bermudan"),
                 [("2028-09-11", 102.0), ("2030-03-20", 101.0), ("2031-09-01", 100.0)], 1600,
                 id="call-within-a-week-of-a-coupon"),
    pytest.param(bond("sd-put", "2025-06-30", "2033-06-30", 0.035, 1, "ACT/365F", "TARGET", "MF", "put", "bermudan"),
                 [("2028-06-30", 98.0), ("2029-07-02", 99.0), ("2030-07-01", 100.0)], 1600, id="step-up-put"),
    pytest.param(bond("sd-euro", "2024-01-15", "2031-01-15", 0.045, 4, "ACT/360", "TARGET", "MF", "call", "european"),
                 [("2028-05-22", 101.25)], 800, id="european-schedule-row"),
    pytest.param(bond("sd-amer", "2024-03-15", "2036-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "call", "american",
                      last_exercise="2031-03-14"),
                 [("2028-03-15", 103.0), ("2029-03-15", 102.0), ("2030-03-15", 101.0)], 1600, marks=pytest.mark.slow,
                 id="american-step-down"),
]


@pytest.mark.parametrize(("case", "schedule", "steps"), STEP_DOWN)
def test_step_down_schedules_match_quantlib(quantlib_curve, case, schedule, steps):
    book = trades([case], schedule=[(case["id"], d, p) for d, p in schedule])
    ours = price(book)
    expected = converged(case, schedule, quantlib_curve, steps)
    print(f"{case['id']}: trinom {ours.price[0]:.6f} QuantLib {expected:.6f} diff {ours.price[0] - expected:+.2e}")
    assert abs(ours.price[0] - expected) <= PRICE_TOLERANCE
    # the listed points: one per live date, at its price plus the day count's accrued interest
    (_first, bonds), = book.instruments(["EUR"])
    if case["exercise"] != "american":
        steps_, prices = bonds.listed(0)
        assert steps_.tolist() == [(np.datetime64(d) - np.datetime64(AS_OF)).astype(int) for d, _p in schedule]
        assert (prices >= [p for _d, p in schedule]).all()


def test_a_schedule_equals_the_window_it_spells_out():
    """A bermudan schedule of the coupon dates at one price is the bermudan window; a european schedule row is the
    european trade; the american schedule of one date is the american window."""
    window = bond("W", "2024-03-15", "2033-03-15", 0.05, 2, "ACT/ACT-ICMA", "TARGET", "MF", "call", "bermudan",
                  first_exercise="2027-03-15", last_exercise="2032-09-15", exercise_price=100.0)
    dates = generate_schedules(effective="2024-03-15", termination="2033-03-15", frequency=2, calendar="TARGET",
                               convention="MF").dates(0)
    rolled = [str(d) for d in dates if "2027-03-15" <= str(d) <= "2032-09-15"]
    listed = {**window, "id": "L", "first_exercise": None, "last_exercise": None, "exercise_price": None}
    euro = bond("E", "2024-03-15", "2033-03-15", 0.05, 2, "30/360", "NONE", "F", "put", "european",
                first_exercise="2029-07-20", exercise_price=99.5)
    euro_listed = {**euro, "id": "EL", "first_exercise": None, "exercise_price": None}
    amer = bond("Am", "2024-03-15", "2033-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "call", "american",
                first_exercise="2027-06-01", last_exercise="2029-03-01", exercise_price=101.0)
    amer_listed = {**amer, "id": "AL", "first_exercise": None, "exercise_price": None}
    book = trades([window, listed, euro, euro_listed, amer, amer_listed],
                  schedule=[("L", d, 100.0) for d in rolled] + [("EL", "2029-07-20", 99.5), ("AL", "2027-06-01", 101.0)])
    result = price(book)
    assert (result.error == "").all(), result.error
    np.testing.assert_allclose(result.price[[1, 3, 5]], result.price[[0, 2, 4]], rtol=0, atol=1e-11)


def test_past_schedule_dates_are_expired_exercise():
    """A desk keeps past call dates in its file: they are exercise that is gone, not an error."""
    case = bond("C", "2022-03-15", "2034-03-15", 0.05, 2, "30/360", "NONE", "F", "call", "bermudan")
    future = [("C", "2028-03-15", 101.0), ("C", "2030-03-15", 100.0)]
    with_past = trades([case], schedule=[("C", "2024-03-15", 103.0), ("C", "2026-03-16", 102.0), *future])
    assert with_past.problems(["EUR"]) == []
    assert price(with_past).price[0] == price(trades([case], schedule=future)).price[0]


# --- american exercise and accrued interest -------------------------------------------------------------------------
def test_american_windows_before_the_first_flow_and_over_unequal_coupons_pay_the_day_count_s_accrued():
    """Listed points on the steps before the bond's first cash flow (the tree accrues nothing there), and on every
    step where the coupons change (ACT/360): at the clean price plus the day count's accrued interest."""
    seasoned = bond("S", "2024-03-15", "2031-03-15", 0.05, 2, "30/360", "NONE", "F", "put", "american",
                    first_exercise="2026-12-01", last_exercise="2027-06-01", exercise_price=102.0)
    unequal = bond("U", "2024-03-15", "2031-03-15", 0.05, 2, "ACT/360", "NONE", "F", "call", "american",
                   first_exercise="2027-04-01", last_exercise="2027-12-01", exercise_price=101.0)
    (_first, bonds), = trades([seasoned, unequal]).instruments(["EUR"])
    steps, prices = bonds.listed(0)
    assert steps.tolist() == list(range(6, 110))  # 2026-12-01 .. 2027-03-14; the window from the coupon on
    assert (int(bonds.first_exercise[0]), int(bonds.last_exercise[0])) == (110, 188)
    days_30_360 = (steps - 6) + 76  # from 2026-09-15, 30/360: 2026-12-01 is day 76, then a 30-day month of days
    assert prices[0] == pytest.approx(102.0 + 5.0 * days_30_360[0] / 360, abs=1e-12)
    steps, prices = bonds.listed(1)
    assert steps.tolist() == list(range(127, 372)) and bonds.first_exercise[1] > bonds.last_exercise[1]  # all points
    coupon_day = days_after("2027-09-15")
    running = 5.0 * (np.datetime64("2027-09-15") - np.datetime64("2027-03-15")).astype(int) / 360
    assert prices[coupon_day - 127] == 101.0 and prices[coupon_day - 128] == pytest.approx(101.0 + running * 183 / 184)


# --- amortizing bonds -----------------------------------------------------------------------------------------------
#: Straight amortizing bonds: case, notional, notionals rows (date, notional).
AMORTIZING = [
    (bond("AM1", "2024-03-15", "2034-03-15", 0.05, 2, "30/360", "NONE", "F", notional=1_000_000.0),
     [("2026-03-15", 800_000.0), ("2028-09-15", 500_000.0), ("2031-03-15", 200_000.0)]),
    (bond("AM2", "2025-01-10", "2033-01-10", 0.042, 4, "ACT/360", "TARGET", "MF", notional=100.0),
     [("2027-01-11", 75.0), ("2029-01-10", 50.0), ("2031-01-10", 25.0), ("2032-01-12", 0.0)]),
    (bond("AM3", "2026-11-26", "2031-11-26", 0.06, 12, "ACT/ACT-ICMA", "NONE", "U", notional=5000.0),
     [("2026-12-26", 4900.0), ("2027-01-26", 4800.0), ("2029-05-26", 2000.0)]),
]


def quantlib_amortizing(case: dict[str, Any], rows: Sequence[tuple[str, float]],
                        handle: ql.YieldTermStructureHandle) -> ql.AmortizingFixedRateBond:
    """QuantLib's amortizing bond: per period its notional (the trade's until the first change)."""
    calendar, convention = QL_CALENDAR[case["calendar"]], QL_CONVENTION[case["convention"]]
    dates = ql.Schedule(ql_date(case["issue"]), ql_date(case["maturity"]), ql.Period(QL_FREQUENCY[case["frequency"]]),
                        calendar, convention, convention, ql.DateGeneration.Backward, False)
    changes = {ql_date(d): value for d, value in rows}
    notionals, outstanding = [], case["notional"]
    for start in list(dates)[:-1]:
        outstanding = changes.get(start, outstanding)
        notionals.append(outstanding)
    result = ql.AmortizingFixedRateBond(0, notionals, dates, [case["coupon"]], QL_DAY_COUNT[case["day_count"]](dates),
                                        convention, ql_date(case["issue"]))
    result.setPricingEngine(ql.DiscountingBondEngine(handle))
    return result


def test_straight_amortizing_bonds_match_quantlib(quantlib_curve):
    book = trades([case for case, _rows in AMORTIZING],
                  notionals=[(case["id"], d, v) for case, rows in AMORTIZING for d, v in rows])
    result = price(book)
    assert (result.error == "").all(), result.error
    for k, (case, rows) in enumerate(AMORTIZING):
        quantlib = quantlib_amortizing(case, rows, quantlib_curve)
        scale = 100.0 / case["notional"]
        outstanding = quantlib.notional(ql_date(AS_OF)) / case["notional"]
        print(f"{case['id']}: trinom {result.price[k]:.9f} QuantLib {quantlib.NPV() * scale:.9f}")
        assert result.price[k] == pytest.approx(quantlib.NPV() * scale, abs=1e-6)
        assert result.accrued[k] == pytest.approx(quantlib.accruedAmount() * outstanding, abs=1e-10)


def test_an_amortizing_callable_is_sane():
    """Monotone in its call price, under the straight bond, and the bullet bond where nothing is repaid early (the
    schedule's notional the trade's); exercise prices per 100 of the outstanding notional."""
    rows = [("2028-03-15", 700.0), ("2030-03-15", 400.0)]
    cases = [bond(f"K{k}", "2024-03-15", "2034-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "call", style,
                  notional=1000.0, first_exercise="2027-03-15", last_exercise="2033-03-15", exercise_price=strike)
             for k, (style, strike) in enumerate([(s, p) for s in ("bermudan", "american") for p in (99.0, 100.0, 101.0)])]
    straight = {**cases[0], "id": "ST", "option": None, "exercise": None, "first_exercise": None,
                "last_exercise": None, "exercise_price": None}
    amortizing = price(trades([*cases, straight], notionals=[(c["id"], d, v) for c in [*cases, straight]
                                                             for d, v in rows]))
    assert (amortizing.error == "").all(), amortizing.error
    for style in (slice(0, 3), slice(3, 6)):
        assert (np.diff(amortizing.price[style]) > 0).all() and (amortizing.price[style] < amortizing.price[6]).all()
    bullet = price(trades(cases))
    unchanged = price(trades(cases, notionals=[(c["id"], d, 1000.0) for c in cases for d, _v in rows]))
    np.testing.assert_allclose(unchanged.price, bullet.price, rtol=0, atol=1e-10)
    # at a listed date, the dirty price is the outstanding share of (price + accrued)
    one = trades([cases[0]], notionals=[("K0", d, v) for d, v in rows])
    (_first, bonds), = one.instruments(["EUR"])
    steps, prices = bonds.listed(0)
    day = days_after("2030-09-16")
    assert day not in steps.tolist() and prices[steps.tolist().index(day - 1)] == pytest.approx(99.0 * 0.4)


# --- notice days ----------------------------------------------------------------------------------------------------
def discounted(flows: Sequence[tuple[str, float]]) -> float:
    """The curve's value of ``(date, amount)`` flows (its zero rate at whole days)."""
    curve = dated_curve().to_yield_curve()
    days = np.array([(np.datetime64(d) - np.datetime64(AS_OF)).astype(int) for d, _a in flows])
    t = days / 365.0
    return float(np.dot([a for _d, a in flows], np.exp(-curve.rate_at(t, 365) * t)))


def test_notice_days_discount_the_exercise_to_the_decision_date():
    """With almost no volatility the tree is the curve: a european call at 98 (always exercised) with 45 notice days
    is worth the coupons to the exercise date (the one in the notice period included) and the exercise price plus
    accrued interest paid on its date; without notice the same; the decision date moves, the payment does not."""
    calm = {"sigma": 1e-7}
    cases = [bond(f"N{notice}", "2024-03-15", "2031-03-15", 0.05, 2, "30/360", "NONE", "F", "call", "european",
                  first_exercise="2028-04-14", exercise_price=98.0, notice_days=notice, **calm) for notice in (0, 45)]
    book = trades(cases)
    result = price(book)
    coupons = [(f"{y}-{m:02d}-15", 2.5) for y in (2027, 2028) for m in (3, 9) if f"{y}-{m:02d}-15" <= "2028-04-14"]
    expected = discounted([*coupons, ("2028-04-14", 98.0 + 5.0 * 29 / 360)])
    np.testing.assert_allclose(result.price, expected, rtol=0, atol=2e-6)
    (_first, bonds), = book.instruments(["EUR"], [dated_curve().to_yield_curve()])
    assert [int(bonds.listed(k)[0][0]) for k in (0, 1)] == [506, 461]  # 2028-04-14 and 45 days before
    # a decision date before the as-of date: that exercise is gone
    gone = bond("G", "2024-03-15", "2031-03-15", 0.05, 2, option="call", exercise="european",
                first_exercise="2026-12-05", exercise_price=90.0, notice_days=15)
    straight = {**gone, "id": "P", "option": None, "exercise": None, "first_exercise": None, "exercise_price": None,
                "notice_days": None}
    both = price(trades([gone, straight]))
    assert both.price[0] == both.price[1]


def test_notice_days_of_an_american_window_move_it_earlier():
    case = bond("AN", "2024-03-15", "2031-03-15", 0.05, 2, "ACT/ACT-ICMA", "NONE", "F", "call", "american",
                first_exercise="2027-06-01", last_exercise="2028-06-01", exercise_price=101.0, notice_days=30)
    book = trades([case])
    (_first, bonds), = book.instruments(["EUR"], [dated_curve().to_yield_curve()])
    steps, _prices = bonds.listed(0)
    first = days_after("2027-06-01")
    last = days_after("2028-06-01")
    assert steps.tolist() == list(range(first - 30, last - 30 + 1)) and bonds.first_exercise[0] > bonds.last_exercise[0]
    without = price(trades([{**case, "notice_days": 0}])).price[0]
    assert price(book).price[0] > without  # the issuer's option is worth less when it must be decided early


def test_curve_scenarios_do_not_move_the_notice_discount_factor():
    """The discount factor from exercise to decision is the base curve's: a scenario's curve prices the tree, not the
    lowering (an effect of about shift x notice period); without notice a scenario is the shifted curve."""
    cases = [bond(f"N{notice}", "2024-03-15", "2031-03-15", 0.05, 2, option="call", exercise="bermudan",
                  first_exercise="2027-03-15", last_exercise="2030-09-15", exercise_price=101.0, notice_days=notice)
             for notice in (0, 30)]
    book = trades(cases)
    scenario = trinom.price(book, CURVES, scenarios=[CurveShift(0.01)], backend="reference").price[0]
    shifted = trinom.price(book, {"EUR": dated_curve(0.01)}, backend="reference").price
    assert scenario[0] == pytest.approx(shifted[0], abs=1e-10)
    assert 1e-6 < abs(scenario[1] - shifted[1]) < 100 * 0.01 * 30 / 365


# --- bad input ------------------------------------------------------------------------------------------------------
TRADES_ROWS = {
    "C1": "C1,bond,,2024-03-15,2034-03-15,0.05,2,30/360,NONE,F,call,bermudan,,,,,,0.03,0.01,,EUR,,",
    "A1": "A1,bond,,2024-03-15,2034-03-15,0.05,2,ACT/ACT-ICMA,NONE,F,put,american,,2031-03-15,,,,0.03,0.01,,EUR,,",
    "M1": "M1,bond,1000000,2024-03-15,2034-03-15,0.05,2,30/360,NONE,F,,,,,,,,0.03,0.01,,EUR,,",
    "P1": "P1,bond,,2024-03-15,2034-03-15,0.05,2,30/360,NONE,F,,,,,,,,0.03,0.01,,EUR,,",
    "E1": "E1,bond,,2024-03-15,2034-03-15,0.05,2,30/360,NONE,F,call,european,,,,,,0.03,0.01,,EUR,,",
    "Z1": "Z1,bond_option,,,2034-11-25,,,,,,put,,,,,2029-11-25,63,0.1,0.01,,EUR,,",
}
SCHEDULE = ["C1,2028-03-15,102", "C1,2030-03-15,101", "C1,2032-03-15,100", "A1,2028-01-10,99", "A1,2029-01-10,100",
            "E1,2029-06-01,100.5"]
NOTIONALS = ["M1,2028-03-15,600000", "M1,2031-03-15,300000"]
#: One bad line appended to (or replacing a line of) schedule.csv or notionals.csv, the trade, field and message part.
BAD = [
    pytest.param("schedule", "X9,2028-03-15,100", None, "schedule.id", "id 'X9' is not a trade of the book",
                 id="unknown-id"),
    pytest.param("schedule", "C1,2028-13-15,100", "C1", "schedule.date", "is not a date", id="bad-date"),
    pytest.param("schedule", "C1,2035-03-15,100", "C1", "schedule.date", "outside the bond's life", id="after-maturity"),
    pytest.param("schedule", "C1,2023-03-15,100", "C1", "schedule.date", "outside the bond's life", id="before-issue"),
    pytest.param("schedule", "C1,2030-03-15,99", "C1", "schedule.date", "is repeated for trade 'C1'", id="duplicate"),
    pytest.param("schedule", "C1,2031-03-15,-1", "C1", "schedule.price", "must be a finite number >= 0",
                 id="negative-price"),
    pytest.param("schedule", "C1,2031-03-15,par", "C1", "schedule.price", "must be a finite number >= 0",
                 id="price-not-a-number"),
    pytest.param("schedule", "C1,2031-03-15,", "C1", "schedule.price", "price is missing", id="price-missing"),
    pytest.param("schedule", "P1,2031-03-15,100", "P1", "option", "but the bond has no call or put",
                 id="bond-without-option"),
    pytest.param("schedule", "Z1,2029-11-25,63", "Z1", "schedule.id", "a bond_option takes no exercise schedule",
                 id="bond-option"),
    pytest.param("schedule", "E1,2030-06-01,100", "E1", "schedule.date", "a european option has one exercise date",
                 id="european-two-dates"),
    pytest.param("notionals", "X9,2028-03-15,100", None, "notionals.id", "id 'X9' is not a trade of the book",
                 id="notionals-unknown-id"),
    pytest.param("notionals", "M1,2029-04-15,500000", "M1", "notionals.date", "is not a coupon date of the bond",
                 id="not-a-coupon-date"),
    pytest.param("notionals", "M1,2033-03-15,400000", "M1", "notionals.notional", "an amortizing notional only "
                 "decreases", id="increasing"),
    pytest.param("notionals", "M1,2033-03-15,-5", "M1", "notionals.notional", "must be a finite number >= 0",
                 id="negative-notional"),
    pytest.param("notionals", "M1,2026-03-16,2000000", "M1", "notionals.notional", "is more than the trade's notional",
                 id="above-the-notional"),
    pytest.param("notionals", "M1,2031-03-15,200000", "M1", "notionals.date", "is repeated for trade 'M1'",
                 id="notionals-duplicate"),
    pytest.param("notionals", "Z1,2029-11-25,50", "Z1", "notionals.id", "a bond_option does not amortize",
                 id="notionals-bond-option"),
    pytest.param("notionals", "P1,2030-03-15,50", "P1", "notional", "notional is missing", id="no-trade-notional"),
]


def write_files(tmp_path: Path, schedule: Sequence[str] = SCHEDULE,
                notionals: Sequence[str] = NOTIONALS) -> tuple[Path, Path, Path, Path]:
    files = tmp_path / "trades.csv", tmp_path / "schedule.csv", tmp_path / "notionals.csv", tmp_path / "curve.csv"
    files[0].write_text(",".join(TRADE_COLUMNS[:23]) + "\n" + "\n".join(TRADES_ROWS.values()) + "\n")
    files[1].write_text("id,date,price\n" + "\n".join(schedule) + "\n")
    files[2].write_text("id,date,notional\n" + "\n".join(notionals) + "\n")
    files[3].write_text("curve,date,zero\nEUR,2027-11-25,0.03\nEUR,2046-11-25,0.04\n")
    return files


def test_the_good_files_price(tmp_path):
    trades_file, schedule, notionals, _curve = write_files(tmp_path)
    book = read_trades(trades_file, as_of=AS_OF, schedule=schedule, notionals=notionals)
    result = trinom.price(book, {"EUR": dated_curve()}, backend="reference")
    assert (result.error == "").all(), result.error
    assert result.accrued[2] == pytest.approx(100 * 0.05 * 70 / 360)  # on the whole notional until 2028-03-15


@pytest.mark.parametrize(("kind", "line", "trade", "field", "message"), BAD)
def test_a_bad_schedule_or_notionals_row_names_its_file_line_and_field(tmp_path, kind, line, trade, field, message):
    rows = {"schedule": list(SCHEDULE), "notionals": list(NOTIONALS)}
    rows[kind].append(line)
    trades_file, schedule, notionals, _curve = write_files(tmp_path, rows["schedule"], rows["notionals"])
    book = read_trades(trades_file, as_of=AS_OF, schedule=schedule, notionals=notionals)
    where = f"{tmp_path / (kind + '.csv')} line {len(rows[kind]) + 1}"
    with pytest.raises(trinom.InputError) as raised:
        trinom.price(book, CURVES, backend="reference")
    ids = list(TRADES_ROWS)
    row = None if trade is None else ids.index(trade)
    named = [(r, f, m) for r, f, m in raised.value.errors if f == field and message in m]
    assert named and named[0][0] == row and where in named[0][2], raised.value.errors
    assert all(r == row for r, _f, _m in raised.value.errors), raised.value.errors  # nothing else is named
    if row is None:
        return
    masked = trinom.price(book, CURVES, backend="reference", errors="mask")
    assert np.isnan(masked.price[row]) and message in masked.error[row] and where in masked.error[row]
    others = [k for k in range(len(ids)) if k != row]
    assert np.isfinite(masked.price[others]).all() and (masked.error[others] == "").all()


@pytest.mark.parametrize(("cells", "field", "message"), [
    ({"first_exercise": "2028-03-16"}, "first_exercise", "disagrees with the schedule"),
    ({"last_exercise": "2032-03-14"}, "last_exercise", "disagrees with the schedule"),
    ({"exercise_price": 101.0}, "exercise_price", "disagrees with the schedule's first price"),
    ({"notice_days": -3}, "notice_days", "whole number of calendar days"),
    ({"notice_days": 2.5}, "notice_days", "whole number of calendar days"),
    ({"option": None, "exercise": None, "notice_days": 5}, "notice_days", "option is empty"),
])
def test_a_trade_s_own_cells_must_agree_with_its_schedule(cells, field, message):
    case = {**bond("C1", "2024-03-15", "2034-03-15", 0.05, 2, option="call", exercise="bermudan"), **cells}
    schedule = [("C1", "2028-03-15", 102.0), ("C1", "2032-03-15", 100.0)] if case["option"] else []
    book = trades([case, bond("P1", "2024-03-15", "2034-03-15", 0.05, 2)], schedule=schedule)
    with pytest.raises(trinom.InputError) as raised:
        price(book)
    assert any(r == 0 and f == field and message in m for r, f, m in raised.value.errors), raised.value.errors
    masked = price(book, errors="mask")
    assert np.isnan(masked.price[0]) and np.isfinite(masked.price[1])


def test_agreeing_cells_and_an_american_schedule_s_end_are_accepted():
    case = bond("C1", "2024-03-15", "2034-03-15", 0.05, 2, option="call", exercise="bermudan",
                first_exercise="2028-03-15", last_exercise="2032-03-15", exercise_price=102.0)
    amer = bond("A1", "2024-03-15", "2034-03-15", 0.05, 2, option="put", exercise="american",
                last_exercise="2033-01-10")
    book = trades([case, amer], schedule=[("C1", "2028-03-15", 102.0), ("C1", "2032-03-15", 100.0),
                                          ("A1", "2028-03-15", 99.0), ("A1", "2033-01-10", 100.0)])
    assert book.problems(["EUR"]) == []
    assert np.isfinite(price(book).price).all()


def test_side_tables_must_have_their_columns(tmp_path):
    with pytest.raises(trinom.InputError, match="unknown column 'strike'"):
        Trades(as_of=AS_OF, id=["C1"], type="bond", schedule={"id": ["C1"], "date": ["2028-03-15"], "strike": [1.0]})
    trades_file, schedule, _notionals, _curve = write_files(tmp_path)
    schedule.write_text("id,day,price\nC1,2028-03-15,100\n")
    with pytest.raises(trinom.InputError, match=r"schedule\.csv: CSV header lacks column 'date'"):
        read_trades(trades_file, as_of=AS_OF, schedule=schedule)


# --- command line, Parquet, engines ---------------------------------------------------------------------------------
def test_the_command_line_takes_schedule_and_notionals(tmp_path, capsys):
    trades_file, schedule, notionals, curve = write_files(tmp_path)
    out = tmp_path / "prices.csv"
    assert main(["price", str(trades_file), "--curve", str(curve), "--as-of", AS_OF, "--schedule", str(schedule),
                 "--notionals", str(notionals), "--backend", "reference", "--out", str(out)]) == 0
    table = pd.read_csv(out, keep_default_na=False)
    assert table.id.tolist() == list(TRADES_ROWS) and (table.error == "").all()
    # Parquet side tables read as their CSVs
    for path in (schedule, notionals):
        pd.read_csv(path, dtype=str).to_parquet(path.with_suffix(".parquet"))
    again = tmp_path / "again.csv"
    assert main(["price", str(trades_file), "--curve", str(curve), "--as-of", AS_OF, "--schedule",
                 str(schedule.with_suffix(".parquet")), "--notionals", str(notionals.with_suffix(".parquet")),
                 "--backend", "reference", "--out", str(again)]) == 0
    np.testing.assert_array_equal(pd.read_csv(again).price, table.price)
    # without the schedule the trades that need it fail, naming the field
    assert main(["price", str(trades_file), "--curve", str(curve), "--as-of", AS_OF, "--backend", "reference"]) == 2
    assert "first_exercise is missing" in capsys.readouterr().err
    # a bad line names the file
    schedule.write_text("id,date,price\nC1,2028-02-30,100\n")
    assert main(["price", str(trades_file), "--curve", str(curve), "--as-of", AS_OF, "--schedule", str(schedule),
                 "--backend", "reference"]) == 2
    assert f"{schedule} line 2: date '2028-02-30' is not a date" in capsys.readouterr().err
    assert main(["risk", str(trades_file), "--curve", str(curve), "--as-of", AS_OF, "--schedule",
                 str(tmp_path / "none.csv"), "--out", str(tmp_path / "r.csv")]) == 2
    assert "none.csv: no such file" in capsys.readouterr().err


def test_a_tree_step_book_refuses_the_side_files(tmp_path, capsys):
    book = tmp_path / "book.csv"
    book.write_text(",".join(trinom.FIELDS) + "\n63,9,3,365,12,0.1,0.01,put\n")
    assert main(["price", str(book), "--schedule", str(tmp_path / "schedule.csv")]) == 2
    assert "--schedule applies to trades files" in capsys.readouterr().err


@pytest.mark.parametrize(("backend", "target"), [("futhark", "c"), ("futhark-paper", "c")])
def test_cpu_engines_agree_with_the_reference(tmp_path, backend, target):
    trades_file, schedule, notionals, _curve = write_files(tmp_path)
    book = read_trades(trades_file, as_of=AS_OF, schedule=schedule, notionals=notionals)
    rows = [k for k, name in enumerate(TRADES_ROWS) if name != "Z1"]
    bonds = Trades.from_frame(pd.read_csv(trades_file, dtype=str, keep_default_na=False).iloc[rows], as_of=AS_OF,
                              schedule=pd.read_csv(schedule, dtype=str), notionals=pd.read_csv(notionals, dtype=str))
    reference = trinom.price(book, CURVES, backend="reference").price[rows]
    np.testing.assert_allclose(trinom.price(bonds, CURVES, backend=backend, target=target).price, reference,
                               rtol=1e-11, atol=0)


def test_a_scenario_that_moves_sigma_out_of_range_masks_that_scenario_only():
    """Issue 35: a trade that a negative SigmaShift makes invalid is NaN in that scenario, its base price kept."""
    from trinom.scenarios import SigmaShift

    book = trades([bond("C", "2024-03-15", "2031-03-15", 0.05, 2, option="call", exercise="bermudan",
                        first_exercise="2027-03-15", last_exercise="2030-09-15", exercise_price=101.0)])
    base = trinom.price(book, CURVES, backend="reference").price[0]
    result = trinom.price(book, CURVES, scenarios=[None, SigmaShift(-2 * SIGMA)], backend="reference", errors="mask")
    assert result.price[0, 0] == pytest.approx(base, abs=1e-12) and np.isnan(result.price[1, 0])
    assert "moves sigma by -0.02" in result.error[0]
    with pytest.raises(trinom.InputError, match=r"moves sigma by -0\.02"):
        trinom.price(book, CURVES, scenarios=[None, SigmaShift(-2 * SIGMA)], backend="reference")
