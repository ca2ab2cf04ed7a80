"""trinom.conventions against QuantLib 1.44 (the tests' oracle): schedules, accrual fractions, accrued interest,
day counts, business-day rolls and holiday calendars; and the names, bad input and CSR layout."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from trinom import conventions
from trinom.conventions import (
    accrual_fractions,
    accrued_interest,
    adjust,
    generate_schedules,
    holiday_dates,
    is_business_day,
    parse_calendars,
    parse_conventions,
    parse_day_counts,
    parse_frequencies,
    year_fractions,
)
from trinom.conventions.icma import QuasiCouponDates

DAY_COUNTS = ("ACT/360", "ACT/365F", "30/360", "30E/360", "ACT/ACT-ISDA", "ACT/ACT-ICMA")
CONVENTIONS = ("U", "F", "MF", "P")
CALENDARS = ("NONE", "WEEKENDS", "TARGET", "NYSE", "USGOVT", "TARGET+NYSE")
FREQUENCIES = (1, 2, 4, 12)
QL_CONVENTION = {"U": ql.Unadjusted, "F": ql.Following, "MF": ql.ModifiedFollowing, "P": ql.Preceding}
QL_FREQUENCY = {1: ql.Annual, 2: ql.Semiannual, 4: ql.Quarterly, 12: ql.Monthly}
HOLIDAY_YEARS = (1995, 2075)

#: Where the holidays package and QuantLib 1.44 disagree over 2000-2060 (weekdays only): every date is a
#: holiday in the holidays package and a business day in QuantLib. TARGET and NYSE agree on every day.
KNOWN_DIFFERENCES = {
    "TARGET": (),
    "NYSE": (),
    "USGOVT": (
        # The bond market stayed closed the day after 11 September 2001 (SIFMA's record; QuantLib closes the 11th).
        "2001-09-12",
        # Good Friday on the first Friday of April, a payrolls day: QuantLib's rule opens the market (early close)
        # in every such future year; the holidays package lists SIFMA's published early closes only (to 2026).
        "2034-04-07", "2037-04-03", "2042-04-04", "2045-04-07", "2048-04-03", "2053-04-04",
    ),
}
QL_CALENDAR = {"TARGET": ql.TARGET(), "NYSE": ql.UnitedStates(ql.UnitedStates.NYSE),
               "USGOVT": ql.UnitedStates(ql.UnitedStates.GovernmentBond)}


def ql_date(day: np.datetime64) -> ql.Date:
    year, month, date = (int(x) for x in str(np.datetime64(day, "D")).split("-"))
    return ql.Date(date, month, year)


def iso(date: ql.Date) -> str:
    return f"{date.year():04d}-{date.month():02d}-{date.dayOfMonth():02d}"


@pytest.fixture(scope="module")
def same_holidays() -> dict[str, ql.Calendar]:
    """QuantLib calendars with trinom's holidays (weekends and the holidays package's days): schedule logic is
    compared on the same holidays, apart from holiday data."""
    calendars: dict[str, ql.Calendar] = {"NONE": ql.NullCalendar()}
    for name in CALENDARS[1:]:
        calendar = ql.BespokeCalendar(f"trinom-test-{name}")
        calendar.addWeekend(ql.Saturday)
        calendar.addWeekend(ql.Sunday)
        for day in holiday_dates(name, *HOLIDAY_YEARS) if name != "WEEKENDS" else ():
            calendar.addHoliday(ql_date(day))
        calendars[name] = calendar
    return calendars


def random_book(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every combination of day count, convention, calendar, frequency and end-of-month flag once (1152 bonds),
    with random termination conventions and dates: long and short schedules, effective dates near a whole number
    of tenors before maturity (stubs that roll onto the grid, long rolled first and last periods), month ends."""
    combos = np.array(list(itertools.product(range(len(DAY_COUNTS)), range(len(CONVENTIONS)), range(len(CALENDARS)),
                                             range(len(FREQUENCIES)), (False, True))))
    count = len(combos)
    months = 12 // np.array(FREQUENCIES)[combos[:, 3]]
    effective = np.datetime64("2001-01-01") + rng.integers(0, 14000, count)
    family = rng.integers(0, 4, count)
    span = np.where(family == 0, rng.integers(1, 70, count), rng.integers(20, 365 * 20, count))
    termination = effective + span
    month_end = (termination.astype("datetime64[M]") + 1).astype("datetime64[D]") - 1 - rng.integers(0, 3, count)
    termination = np.where(family == 2, month_end, termination)
    tenors = rng.integers(1, 5, count) * months
    on_grid = (termination.astype("datetime64[M]") - tenors).astype("datetime64[D]") + rng.integers(-3, 4, count)
    on_grid += (termination - termination.astype("datetime64[M]").astype("datetime64[D]"))
    effective = np.where((family == 3) & (on_grid < termination), on_grid, effective)
    effective = np.where(effective >= termination, termination - 30, effective)
    return {"effective": effective, "termination": termination,
            "day_count": np.array(DAY_COUNTS)[combos[:, 0]], "convention": np.array(CONVENTIONS)[combos[:, 1]],
            "calendar": np.array(CALENDARS)[combos[:, 2]], "frequency": np.array(FREQUENCIES)[combos[:, 3]],
            "end_of_month": combos[:, 4].astype(bool),
            "termination_convention": np.array(CONVENTIONS)[rng.integers(0, 4, count)],
            "rate": rng.uniform(0.0, 0.12, count)}


def edge_book(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """ACT/ACT-ICMA bonds whose effective date is 1-3 days after a tenor before maturity, rolled back (P) while
    maturity rolls forward (F): one period longer than a tenor, so QuantLib's quasi-coupon list gains a date in
    front or at the end; every frequency, end-of-month flag and calendar."""
    count = 192
    frequency = np.array(FREQUENCIES)[np.arange(count) % 4]
    termination = np.datetime64("2003-01-01") + rng.integers(0, 15000, count)
    back = (termination.astype("datetime64[M]") - 12 // frequency).astype("datetime64[D]")
    effective = back + (termination - termination.astype("datetime64[M]").astype("datetime64[D]"))
    effective = np.minimum(effective + rng.integers(1, 4, count), termination - 10)
    return {"effective": effective, "termination": termination, "day_count": np.full(count, "ACT/ACT-ICMA"),
            "convention": np.where(np.arange(count) % 3 == 0, "MF", "P"), "calendar": np.array(CALENDARS)[
                np.arange(count) % len(CALENDARS)], "frequency": frequency,
            "end_of_month": (np.arange(count) // 4) % 2 == 1, "termination_convention": np.full(count, "F"),
            "rate": rng.uniform(0.0, 0.12, count)}


def ql_day_counter(name: str, schedule: ql.Schedule) -> ql.DayCounter:
    return {"ACT/360": ql.Actual360(), "ACT/365F": ql.Actual365Fixed(), "30/360": ql.Thirty360(ql.Thirty360.BondBasis),
            "30E/360": ql.Thirty360(ql.Thirty360.EurobondBasis), "ACT/ACT-ISDA": ql.ActualActual(ql.ActualActual.ISDA),
            "ACT/ACT-ICMA": ql.ActualActual(ql.ActualActual.ISMA, schedule)}[name]


@pytest.mark.parametrize("seed", [25, 2025])
def test_schedules_accruals_and_accrued_interest_equal_quantlib(same_holidays: dict[str, ql.Calendar], seed: int):
    rng = np.random.default_rng(seed)
    parts = [random_book(rng), edge_book(rng)]
    book = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    count = book["effective"].size
    schedules = generate_schedules(effective=book["effective"], termination=book["termination"],
                                   frequency=book["frequency"], calendar=book["calendar"],
                                   convention=book["convention"], termination_convention=book["termination_convention"],
                                   end_of_month=book["end_of_month"], errors="mask")
    fractions = accrual_fractions(schedules=schedules, day_count=book["day_count"])
    span = (book["termination"] - book["effective"]).astype(np.int64)
    settlements = [book["effective"] + (rng.random(count) * (span + 20)).astype(np.int64) - 10 for _ in range(4)]
    on_date = schedules.adjusted[np.minimum(schedules.offsets[:-1] + rng.integers(0, 1 << 30, count)
                                            % np.maximum(schedules.counts, 1), schedules.adjusted.size - 1)]
    settlements.append(np.where(schedules.counts > 0, on_date, book["effective"]))
    accrued = [accrued_interest(schedules=schedules, day_count=book["day_count"], coupon_rate=book["rate"],
                                settlement=s) for s in settlements]
    period_offsets = schedules.period_offsets

    compared = settled = degenerate = stub_dropped = 0
    worst_fraction = worst_accrued = 0.0
    for k in range(count):
        args = (ql_date(book["effective"][k]), ql_date(book["termination"][k]),
                ql.Period(QL_FREQUENCY[int(book["frequency"][k])]), same_holidays[book["calendar"][k]])
        rule = (ql.DateGeneration.Backward, bool(book["end_of_month"][k]))
        try:
            schedule = ql.Schedule(*args, QL_CONVENTION[book["convention"][k]],
                                   QL_CONVENTION[book["termination_convention"][k]], *rule)
        except RuntimeError as err:  # a schedule that rolls to a single date: bad input for trinom too
            assert "degenerate single date" in str(err)
            assert schedules.counts[k] == 0 and any(p[0] == k for p in schedules.problems)
            assert np.isnan(accrued[0][k])
            degenerate += 1
            continue
        mine = [str(d) for d in schedules.dates(k)]
        assert mine == [iso(d) for d in schedule], k
        periods = slice(period_offsets[k], period_offsets[k + 1])
        assert schedules.regular[periods].tolist() == [schedule.isRegular(i) for i in range(1, len(schedule))], k
        # The unadjusted dates are QuantLib's schedule with both conventions Unadjusted; but where rolling merged the
        # effective date into the earliest rolled date, that schedule keeps the effective date in front (and moves
        # the earliest rolled date, now an inner one, under the end-of-month rule).
        unadjusted = [iso(d) for d in ql.Schedule(*args, ql.Unadjusted, ql.Unadjusted, *rule)]
        mine_unadjusted = [str(d) for d in schedules.dates(k, adjusted=False)]
        if len(unadjusted) == len(mine_unadjusted) + 1:
            assert unadjusted[0] == str(book["effective"][k]) and unadjusted[2:] == mine_unadjusted[1:], k
            assert unadjusted[1][:7] == mine_unadjusted[0][:7] != str(book["effective"][k]), k
            stub_dropped += 1
        else:
            assert unadjusted == mine_unadjusted, k

        bond = ql.FixedRateBond(0, 100.0, schedule, [float(book["rate"][k])],
                                ql_day_counter(book["day_count"][k], schedule), ql.Unadjusted)
        coupons = [ql.as_fixed_rate_coupon(c) for c in bond.cashflows()]
        expected = np.array([c.accrualPeriod() for c in coupons if c is not None])
        assert expected.size == fractions[periods].size
        worst_fraction = max(worst_fraction, float(np.abs(fractions[periods] - expected).max()))
        for settlement, result in zip(settlements, accrued, strict=True):
            worst_accrued = max(worst_accrued, abs(bond.accruedAmount(ql_date(settlement[k])) - result[k]))
            settled += 1
        compared += 1
    assert compared >= 1000 and settled >= 5000
    assert worst_fraction <= 1e-12 and worst_accrued <= 1e-12, (worst_fraction, worst_accrued)
    assert degenerate < 0.05 * count and stub_dropped > 0
    # The sample reaches QuantLib's ACT/ACT-ICMA special cases: a notional date put in front, one appended.
    icma = np.flatnonzero((book["day_count"] == "ACT/ACT-ICMA") & (schedules.counts > 0))
    quasi = QuasiCouponDates(schedules, icma)
    assert quasi.shift.sum() > 0 and quasi.appended.sum() > 0


def test_holiday_calendars_equal_quantlib_but_for_the_known_differences():
    """TARGET, NYSE and the US government bond market (SIFMA) from the holidays package against QuantLib's
    TARGET(), UnitedStates(NYSE) and UnitedStates(GovernmentBond), 2000-2060, weekdays."""
    for name, calendar in QL_CALENDAR.items():
        mine = {str(d) for d in holiday_dates(name, 2000, 2060)}
        theirs = {iso(d) for d in calendar.holidayList(ql.Date(1, 1, 2000), ql.Date(31, 12, 2060), False)}
        assert sorted(theirs - mine) == []
        assert sorted(mine - theirs) == list(KNOWN_DIFFERENCES[name]), name
        assert len(mine) > 250


def test_joint_calendar_equals_quantlib_joint_calendar():
    days = np.arange(np.datetime64("2000-01-01"), np.datetime64("2061-01-01"))
    joint = ql.JointCalendar(ql.TARGET(), ql.UnitedStates(ql.UnitedStates.NYSE))
    theirs = np.array([joint.isBusinessDay(ql_date(d)) for d in days[::3]])
    assert np.array_equal(is_business_day(dates=days[::3], calendar="nyse+Target"), theirs)
    assert parse_calendars(["TARGET+NYSE", "nyse + ecb", "XNYS+TARGET2+NONE"])[1] == ("TARGET+NYSE",)


def test_business_day_rolls_equal_quantlib_calendars():
    rng = np.random.default_rng(7)
    dates = np.datetime64("2000-01-01") + rng.integers(0, 22000, 4000)
    known = np.array([np.datetime64(d) for names in KNOWN_DIFFERENCES.values() for d in names])
    near = np.abs(dates[:, None] - known[None, :]).astype(np.int64).min(axis=1) <= 7
    dates = dates[~near]
    for name, calendar in [*QL_CALENDAR.items(), ("WEEKENDS", ql.WeekendsOnly()), ("NONE", ql.NullCalendar())]:
        for convention, code in QL_CONVENTION.items():
            mine = adjust(dates=dates, convention=convention, calendar=name)
            theirs = [iso(calendar.adjust(ql_date(d), code)) for d in dates]
            assert [str(d) for d in mine] == theirs, (name, convention)


def test_day_counts_equal_quantlib():
    rng = np.random.default_rng(11)
    start = np.datetime64("1950-01-01") + rng.integers(0, 70000, 3000)
    start[:300] = (start[:300].astype("datetime64[M]") + 1).astype("datetime64[D]") - 1  # month ends, 31sts
    end = start + rng.integers(-400, 12000, 3000)
    end[:600:2] = (end[:600:2].astype("datetime64[M]") + 1).astype("datetime64[D]") - 1
    for name in DAY_COUNTS[:5]:
        counter = ql_day_counter(name, ql.Schedule())
        theirs = np.array([counter.yearFraction(ql_date(a), ql_date(b)) for a, b in zip(start, end, strict=True)])
        assert np.abs(year_fractions(start=start, end=end, day_count=name) - theirs).max() <= 1e-15, name


def test_names_are_case_insensitive_with_aliases():
    codes, problems = parse_day_counts(["act/360", "Actual/365 (Fixed)", "30/360 Bond Basis", "eurobond basis",
                                        "Act/Act", "ACTUAL/ACTUAL (ICMA)", "act/act isma"])
    assert codes.tolist() == [0, 1, 2, 3, 4, 5, 5] and problems == []
    codes, problems = parse_conventions(["unadjusted", "following", "Modified Following", "preceding", "mf"])
    assert codes.tolist() == [0, 1, 2, 3, 2] and problems == []
    per_year, problems = parse_frequencies(["Annual", "semi-annual", "3M", "monthly", 2, 4.0])
    assert per_year.tolist() == [1, 2, 4, 12, 2, 4] and problems == []
    codes, names, problems = parse_calendars(["target", "XNYS", "sifma", "US-GOV", "null", "WeekendsOnly"])
    assert [names[c] for c in codes] == ["TARGET", "NYSE", "USGOVT", "USGOVT", "NONE", "WEEKENDS"] and problems == []


def test_parse_functions_report_every_bad_row():
    codes, problems = parse_day_counts(["ACT/360", "ACT/366", None, "30/360", "actual"], rows=[10, 11, 12, 13, 14])
    assert codes.tolist() == [0, -1, -1, 2, -1]
    assert [(row, field) for row, field, _m in problems] == [(11, "day_count"), (12, "day_count"), (14, "day_count")]
    assert "ACT/366" in problems[0][2] and "valid: ACT/360, ACT/365F, 30/360, 30E/360, ACT/ACT-ISDA, ACT/ACT-ICMA" in \
        problems[0][2]
    _codes, problems = parse_conventions(["F", "nearest"], field="business_day_convention")
    assert problems == [(1, "business_day_convention", "business_day_convention 'nearest' is not a business-day "
                         "convention; valid: U, F, MF, P")]
    codes, _names, problems = parse_calendars(["TARGET", "Moon", "TARGET+Mars", ""])
    assert codes.tolist()[0] == 0 and [p[0] for p in problems] == [1, 2, 3]
    assert "NONE, WEEKENDS, TARGET, NYSE, USGOVT" in problems[0][2]
    per_year, problems = parse_frequencies([2, 3, "weekly", True])
    assert per_year.tolist() == [2, 0, 0, 0] and [p[0] for p in problems] == [1, 2, 3]


def test_bad_schedule_input_names_rows_and_fields():
    with pytest.raises(trinom.InputError) as err:
        generate_schedules(effective=["2024-01-15", "2024-05-01", "2024-13-01", "2024-01-01"],
                           termination=["2029-01-15", "2024-04-01", "2030-01-01", "2030-01-01"],
                           frequency=[2, 2, 2, 5], calendar=["TARGET", "TARGET", "NYSE", "Atlantis"],
                           fields={"effective": "issue_date", "termination": "maturity_date"})
    found = {(row, field) for row, field, _m in err.value.errors}
    assert found == {(1, "issue_date"), (2, "issue_date"), (3, "frequency"), (3, "calendar")}
    assert "row 1: issue_date 2024-05-01 must be before maturity_date 2024-04-01" in str(err.value)
    assert "2024-13-01" in str(err.value) and "Atlantis" in str(err.value)
    with pytest.raises(trinom.InputError, match="calendar 'Moon' is not a calendar"):
        generate_schedules(effective=["2024-01-15"] * 3, termination=["2029-01-15"] * 3, frequency=2, calendar="Moon")
    with pytest.raises(trinom.InputError, match="frequency: 2 values for 3 bonds"):
        generate_schedules(effective=["2024-01-15"] * 3, termination=["2029-01-15"] * 3, frequency=[2, 4])
    # A Friday-to-Sunday schedule rolls to a single date (QuantLib: "degenerate single date schedule").
    with pytest.raises(trinom.InputError, match="row 0: the schedule from 2024-03-01 to 2024-03-03 rolls to a single"):
        generate_schedules(effective="2024-03-01", termination="2024-03-03", frequency=12, calendar="WEEKENDS",
                           convention="F", termination_convention="P")


def test_masked_rows_get_empty_schedules():
    schedules = generate_schedules(effective=["2024-01-15", "2025-01-01", "2024-02-10"],
                                   termination=["2026-01-15", "2024-01-01", "2025-02-10"], frequency=[2, 2, "Q"],
                                   calendar="NONE", errors="mask", rows=[100, 101, 102])
    assert schedules.counts.tolist() == [5, 0, 5] and schedules.good.tolist() == [True, False, True]
    assert [p[:2] for p in schedules.problems] == [(101, "effective")]
    accrued = accrued_interest(schedules=schedules, day_count="ACT/365F", coupon_rate=0.05, settlement="2024-03-15")
    assert np.isnan(accrued[1]) and accrued[0] == pytest.approx(100 * 0.05 * 60 / 365, abs=1e-12)
    fractions = accrual_fractions(schedules=schedules, day_count="30/360")
    assert fractions.size == schedules.period_offsets[-1] == 8
    assert np.allclose(fractions[schedules.period_offsets[2]:], 0.25, atol=1e-15)


def test_schedules_are_flat_with_offsets():
    schedules = generate_schedules(effective=["2024-01-31", "2024-06-17"], termination=["2025-01-31", "2027-06-17"],
                                   frequency=[4, 1], calendar="NYSE", convention="MF", end_of_month=True)
    assert schedules.offsets.tolist() == [0, 5, 9] and schedules.period_offsets.tolist() == [0, 4, 7]
    assert schedules.adjusted.dtype == np.dtype("datetime64[D]") and schedules.unadjusted.size == 9
    assert [str(d) for d in schedules.dates(0, adjusted=False)] == ["2024-01-31", "2024-04-30", "2024-07-31",
                                                                    "2024-10-31", "2025-01-31"]
    assert [str(d) for d in schedules.dates(1)] == ["2024-06-17", "2025-06-17", "2026-06-17", "2027-06-17"]
    start, end = schedules.period_bounds()
    assert start.size == end.size == 7 and np.array_equal(end[:3], start[1:4]) and np.array_equal(end[4:6], start[5:])
    assert start[4] == schedules.adjusted.view(np.int64)[5] and end[3] == schedules.adjusted.view(np.int64)[4]


def test_dates_outside_quantlib_range_and_times_of_day_are_refused():
    with pytest.raises(trinom.InputError) as err:
        adjust(dates=["1899-12-31", "2200-01-01", "2024-02"], convention="F", calendar="TARGET")
    assert [row for row, _f, _m in err.value.errors] == [0, 1, 2]
    with pytest.raises(trinom.InputError, match="without a time of day"):
        adjust(dates=np.array(["2024-01-01T12"], dtype="datetime64[h]"))
    with pytest.raises(trinom.InputError, match="ACT/ACT-ICMA needs the coupon schedule"):
        year_fractions(start=["2024-01-01"], end=["2024-06-01"], day_count="ACT/ACT-ICMA")


def test_documented_examples_hold():
    modules = [conventions, *(getattr(conventions, name) for name in ("accrual", "business_days", "calendars",
                                                                       "dates", "day_counts", "frequencies", "icma",
                                                                       "names", "schedules"))]
    for module in modules:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__


def test_empty_and_wholly_bad_books():
    empty = generate_schedules(effective=[], termination=[], frequency=2, calendar="TARGET")
    assert len(empty) == 0 and empty.offsets.tolist() == [0]
    assert accrual_fractions(schedules=empty, day_count="ACT/ACT-ICMA").size == 0
    assert accrued_interest(schedules=empty, day_count="30/360", coupon_rate=0.05, settlement="2025-01-01").size == 0
    bad = generate_schedules(effective=["2026-01-01", "2027-01-01"], termination=["2025-01-01", "2024-01-01"],
                             frequency=4, errors="mask")
    assert bad.counts.tolist() == [0, 0] and [p[0] for p in bad.problems] == [0, 1]
    assert accrual_fractions(schedules=bad, day_count="ACT/ACT-ICMA").size == 0
    assert np.isnan(accrued_interest(schedules=bad, day_count="ACT/ACT-ICMA", coupon_rate=0.05,
                                     settlement="2025-01-01")).all()


def test_bad_accrual_input_is_refused():
    schedules = generate_schedules(effective=["2024-01-15"] * 3, termination=["2029-01-15"] * 3, frequency=2)
    with pytest.raises(trinom.InputError) as err:
        accrued_interest(schedules=schedules, day_count=["30/360", "ACT/999", "ACT/360"], coupon_rate=[0.05, 0.05,
                         float("nan")], settlement=["2025-01-01", "2025-01-01", "not a date"])
    assert sorted((r, f) for r, f, _m in err.value.errors) == [(1, "day_count"), (2, "coupon_rate"), (2, "settlement")]
    with pytest.raises(trinom.InputError, match="day_count: 2 values for 3 bonds"):
        accrual_fractions(schedules=schedules, day_count=["30/360", "ACT/360"])
