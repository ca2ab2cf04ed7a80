"""Swaptions and caps on the lattice (issue 26): their lowering to bond and option trees, against QuantLib 1.44's
TreeSwaptionEngine and JamshidianSwaptionEngine and the Hull-White closed forms (trinom.model.hull_white)."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from trinom.instruments.cap import CapSpecs, lower_caps
from trinom.instruments.swaption import SwaptionSpecs, lower_swaptions
from trinom.model import DatedCurve
from trinom.model.rate_options import Caps, Swaptions

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2028-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
ZEROS = [0.025, 0.028, 0.032, 0.036, 0.038]
A, SIGMA = 0.05, 0.01
#: (start, maturity, fixed rate, payer, first exercise, last exercise): european where the two agree.
SWAPTIONS = [("2027-11-25", "2032-11-25", 0.033, False, "2027-11-25", "2027-11-25"),
             ("2027-11-25", "2032-11-25", 0.033, True, "2027-11-25", "2027-11-25"),
             ("2027-11-25", "2037-11-25", 0.036, False, "2027-11-25", "2036-11-25"),
             ("2027-11-25", "2037-11-25", 0.036, True, "2027-11-25", "2036-11-25"),
             ("2028-11-25", "2038-11-25", 0.030, True, "2028-11-25", "2033-11-25")]


def day(text: str) -> int:
    return int(np.datetime64(text, "D").astype(np.int64))


@pytest.fixture(scope="module")
def curve() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="EUR")


def swaption_specs(cases, steps_per_year: int = 365, notional: float = 100.0) -> SwaptionSpecs:
    start, maturity, rate, payer, first, last = zip(*cases, strict=True)
    count = len(cases)
    return SwaptionSpecs(as_of=day(AS_OF), start=np.array([day(d) for d in start]),
                         maturity=np.array([day(d) for d in maturity]), rate=np.array(rate),
                         frequency=np.full(count, 1), day_count=np.full(count, "30/360", dtype=object),
                         calendar=np.full(count, "NONE", dtype=object), convention=np.full(count, "U", dtype=object),
                         payer=np.array(payer), first_exercise=np.array([day(d) for d in first]),
                         last_exercise=np.array([day(d) for d in last]), notional=np.full(count, notional),
                         a=np.full(count, A), sigma=np.full(count, SIGMA), curve=np.zeros(count, dtype=np.int64),
                         steps_per_year=np.full(count, steps_per_year), rows=np.arange(count))


def tree_swaptions(curve: DatedCurve, cases, backend: str = "reference", target: str | None = None,
                   **kwargs) -> np.ndarray:
    lowered = lower_swaptions(swaption_specs(cases, **kwargs))
    assert not lowered.problems
    prices = trinom.price(lowered.bonds, {"EUR": curve.to_yield_curve()}, backend=backend, target=target).price
    return (prices * lowered.weight).reshape(-1, 2).sum(axis=1)


def tree_caps(curve: DatedCurve, cases, backend: str = "reference", target: str | None = None) -> np.ndarray:
    lowered = lower_caps(cap_specs(cases), curve="EUR")
    values = trinom.price(lowered.caplets, {"EUR": curve.to_yield_curve()}, backend=backend, target=target).price
    return np.add.reduceat(values * lowered.weight, np.concatenate(([0], np.cumsum(lowered.count)[:-1])))


def engines(targets: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """The engines and targets usable here among ``targets`` (``cuda`` also as its own backend)."""
    found = []
    for backend in ("futhark", "futhark-paper", "cuda"):
        for target in (None,) if backend == "cuda" else targets:
            if (backend != "cuda" or "cuda" in targets) and trinom.engines.get(backend).available(target)[0]:
                found.append((backend, target))
    return found


def quantlib_swaptions(curve: DatedCurve, cases, steps: int = 800) -> tuple[list[float], list[float | None]]:
    ql = pytest.importorskip("QuantLib")
    today = ql.DateParser.parseISO(AS_OF)
    ql.Settings.instance().evaluationDate = today
    dates = [today] + [ql.DateParser.parseISO(d) for d in PILLARS]
    discounts = [1.0] + [float(curve.discount([d])[0]) for d in PILLARS]
    handle = ql.YieldTermStructureHandle(ql.DiscountCurve(dates, discounts, ql.Actual365Fixed()))
    model = ql.HullWhite(handle, A, SIGMA)
    index = ql.IborIndex("I6M", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), handle)
    trees, closed = [], []
    for start, maturity, rate, payer, first, last in cases:
        begin, end = ql.DateParser.parseISO(start), ql.DateParser.parseISO(maturity)

        def schedule(tenor, begin=begin, end=end):
            return ql.Schedule(begin, end, tenor, ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                               ql.DateGeneration.Backward, False)
        fixed = schedule(ql.Period(ql.Annual))
        swap = ql.VanillaSwap(ql.Swap.Payer if payer else ql.Swap.Receiver, 100.0, fixed, rate,
                              ql.Thirty360(ql.Thirty360.BondBasis), schedule(ql.Period(6, ql.Months)), index, 0.0,
                              ql.Actual365Fixed())
        exercise_dates = [d for d in list(fixed)[:-1] if ql.DateParser.parseISO(first) <= d <= ql.DateParser.parseISO(last)]
        exercise = (ql.EuropeanExercise(exercise_dates[0]) if len(exercise_dates) == 1
                    else ql.BermudanExercise(exercise_dates))
        swaption = ql.Swaption(swap, exercise)
        swaption.setPricingEngine(ql.TreeSwaptionEngine(model, steps))
        trees.append(swaption.NPV())
        if len(exercise_dates) == 1:
            swaption.setPricingEngine(ql.JamshidianSwaptionEngine(model))
            closed.append(swaption.NPV())
        else:
            closed.append(None)
    return trees, closed


def test_swaptions_agree_with_quantlib_tree_and_jamshidian(curve: DatedCurve):
    ours = tree_swaptions(curve, SWAPTIONS)
    trees, closed = quantlib_swaptions(curve, SWAPTIONS)
    # QuantLib's tree moves by ~3e-3 between 400 and 1600 steps; the bar is 0.02 per 100 of notional
    np.testing.assert_allclose(ours, trees, atol=0.02, rtol=0)
    for value, jamshidian in zip(ours, closed, strict=True):
        if jamshidian is not None:
            assert abs(value - jamshidian) < 1e-3  # measured 4.5e-4 at one step a day


def test_european_swaptions_agree_with_our_closed_form(curve: DatedCurve):
    europeans = [case for case in SWAPTIONS if case[4] == case[5]]
    ours = tree_swaptions(curve, europeans)
    start, maturity, rate, payer = (list(x) for x in zip(*[c[:4] for c in europeans], strict=True))
    closed = Swaptions.on_curve(curve, exercise=start, end=maturity, fixed_rate=rate, frequency=1,
                                day_count="30/360", payer=payer, notional=100.0).price(a=A, sigma=SIGMA)
    np.testing.assert_allclose(ours, closed, atol=1e-3, rtol=0)


def test_bermudan_is_worth_at_least_its_first_european(curve: DatedCurve):
    bermudan = [c for c in SWAPTIONS if c[4] != c[5]]
    european = [(*c[:5], c[4]) for c in bermudan]
    assert np.all(tree_swaptions(curve, bermudan) > tree_swaptions(curve, european))


def test_swaption_trees_give_values_per_100_of_notional(curve: DatedCurve):
    base = tree_swaptions(curve, SWAPTIONS[:2])
    # the trees give a value per 100 of notional (issue 35): the notional moves only Prices.value
    np.testing.assert_allclose(tree_swaptions(curve, SWAPTIONS[:2], notional=1e6), base, rtol=1e-12)


def test_every_cpu_engine_prices_swaptions_and_caps_as_the_reference(curve: DatedCurve):
    swaptions, caps = tree_swaptions(curve, SWAPTIONS, steps_per_year=48), tree_caps(curve, CAPS)
    found = engines(("c", "multicore"))
    assert found
    for backend, target in found:
        np.testing.assert_allclose(tree_swaptions(curve, SWAPTIONS, backend, target, steps_per_year=48), swaptions,
                                   atol=1e-11, rtol=0, err_msg=f"{backend}/{target}")
        if backend != "futhark-paper":  # the paper's program prices bonds only
            np.testing.assert_allclose(tree_caps(curve, CAPS, backend, target), caps, atol=1e-11, rtol=0)


@pytest.mark.gpu
def test_every_gpu_engine_prices_swaptions_and_caps_as_the_reference(curve: DatedCurve):
    swaptions, caps = tree_swaptions(curve, SWAPTIONS), tree_caps(curve, CAPS)
    found = engines(("cuda",))
    assert found
    for backend, target in found:
        np.testing.assert_allclose(tree_swaptions(curve, SWAPTIONS, backend, target), swaptions, atol=1e-11, rtol=0,
                                   err_msg=f"{backend}/{target}")
        if backend != "futhark-paper":
            np.testing.assert_allclose(tree_caps(curve, CAPS, backend, target), caps, atol=1e-11, rtol=0)


def test_a_window_without_a_start_date_is_a_problem_naming_the_row():
    case = ("2027-11-25", "2032-11-25", 0.033, False, "2028-01-10", "2028-06-10")
    lowered = lower_swaptions(swaption_specs([SWAPTIONS[0], case]))
    assert [(row, field) for row, field, _m in lowered.problems] == [(1, "first_exercise")]
    assert "no fixed-leg start date" in lowered.problems[0][2]


CAPS = [("2027-02-25", "2031-11-25", 0.03, True, 4), ("2027-02-25", "2031-11-25", 0.03, False, 4),
        ("2026-12-25", "2036-11-25", 0.035, True, 2)]


def cap_specs(cases, steps_per_year: int = 365) -> CapSpecs:
    start, maturity, rate, cap, frequency = zip(*cases, strict=True)
    count = len(cases)
    return CapSpecs(as_of=day(AS_OF), start=np.array([day(d) for d in start]),
                    maturity=np.array([day(d) for d in maturity]), rate=np.array(rate), frequency=np.array(frequency),
                    day_count=np.full(count, "ACT/360", dtype=object), cap=np.array(cap), notional=np.full(count, 100.0),
                    a=np.full(count, A), sigma=np.full(count, SIGMA), steps_per_year=np.full(count, steps_per_year),
                    rows=np.arange(count))


def test_caps_and_floors_converge_to_the_closed_form(curve: DatedCurve):
    ours = tree_caps(curve, CAPS)
    start, maturity, rate, cap, frequency = (list(x) for x in zip(*CAPS, strict=True))
    for k in range(len(CAPS)):
        closed = Caps.on_curve(curve, start=[start[k]], end=[maturity[k]], strike=rate[k], frequency=frequency[k],
                               day_count="ACT/360", cap=cap[k], notional=100.0).price(a=A, sigma=SIGMA)[0]
        assert abs(ours[k] - closed) < 1e-3, (k, ours[k], closed)  # measured 3.7e-5 and 4.1e-4 at one step a day
