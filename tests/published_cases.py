"""QuantLib's and FinancePy's published cases written as trinom trades (issue 38): each case's published value, trinom's
and QuantLib 1.44's on the same conventions (its published engine, and that engine converged). The test suite checks
them (``tests/test_published_cases.py``); ``python tests/published_cases.py`` prints the table of
``docs/published-cases.md``.

A published value carries its engine's resolution: QuantLib's ``bermudanswaption.cpp`` prices on a 50-step tree, whose
gap to the same tree converged (2000 steps) is that resolution; trinom must be within it of the published value and
within :data:`CONVERGED` of the converged tree.
"""

from __future__ import annotations

from dataclasses import dataclass

import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from trinom.model import DatedCurve

#: trinom against QuantLib's converged tree, in the case's currency units (1000 notional: 2e-4 per 100).
CONVERGED = 0.002


@dataclass(frozen=True)
class Case:
    """One published case: where it is from, its value, and the values on the same conventions."""

    name: str
    source: str
    published: float
    trinom: float
    quantlib: float  #: QuantLib 1.44, the published engine as published
    converged: float  #: QuantLib 1.44, that engine converged


def bermudan_swaptions() -> list[Case]:
    """``bermudanswaption.cpp``'s ``testCachedValues``: payer Bermudans on a 1x5 swap (start one year after the
    settlement date 2002-02-19, TARGET, fixed annual 30/360 unadjusted, floating Euribor 6M), notional 1000, exercise
    on the fixed leg's start dates, Hull-White a = 0.048696, sigma = 0.0058904 on a flat 4.875825% (continuous,
    ACT/365F) from the settlement date, strikes 0.8, 1 and 1.2 times the at-the-money rate, ``TreeSwaptionEngine(model,
    50)``. QuantLib's tree starts at the curve's date, the settlement date: trinom's as-of date. The published values
    are QuantLib's par-coupon ones (42.2470, 12.8826, 2.4769)."""
    saved = ql.Settings.instance().evaluationDate
    ql.Settings.instance().evaluationDate = ql.Date(15, 2, 2002)
    try:
        settlement = ql.Date(19, 2, 2002)
        handle = ql.YieldTermStructureHandle(ql.FlatForward(settlement, 0.04875825, ql.Actual365Fixed()))
        index = ql.Euribor6M(handle)
        calendar = index.fixingCalendar()
        start = calendar.advance(settlement, 1, ql.Years)
        maturity = calendar.advance(start, 5, ql.Years)

        def swap(rate: float) -> ql.VanillaSwap:
            fixed = ql.Schedule(start, maturity, ql.Period(ql.Annual), calendar, ql.Unadjusted, ql.Unadjusted,
                                ql.DateGeneration.Forward, False)
            floating = ql.Schedule(start, maturity, ql.Period(ql.Semiannual), calendar, ql.ModifiedFollowing,
                                   ql.ModifiedFollowing, ql.DateGeneration.Forward, False)
            made = ql.VanillaSwap(ql.VanillaSwap.Payer, 1000.0, fixed, rate, ql.Thirty360(ql.Thirty360.BondBasis),
                                  floating, index, 0.0, index.dayCounter())
            made.setPricingEngine(ql.DiscountingSwapEngine(handle))
            return made

        at_the_money = swap(0.0).fairRate()
        model = ql.HullWhite(handle, 0.048696, 0.0058904)
        curve = DatedCurve.flat(as_of="2002-02-19", rate=0.04875825, name="EUR")
        cases = []
        for label, moneyness, published in (("in the money", 0.8, 42.2470), ("at the money", 1.0, 12.8826),
                                            ("out of the money", 1.2, 2.4769)):
            underlying = swap(moneyness * at_the_money)
            exercise = ql.BermudanExercise([ql.as_coupon(c).accrualStartDate() for c in underlying.fixedLeg()])
            swaption = ql.Swaption(underlying, exercise)
            swaption.setPricingEngine(ql.TreeSwaptionEngine(model, 50))
            as_published = swaption.NPV()
            swaption.setPricingEngine(ql.TreeSwaptionEngine(model, 2000))
            converged = swaption.NPV()
            book = trinom.Trades(as_of="2002-02-19", id=["x"], type="swaption", start=start.ISO(),
                                 maturity=maturity.ISO(), rate=moneyness * at_the_money, frequency=1,
                                 day_count="30/360", calendar="TARGET", convention="U", option="payer",
                                 exercise="bermudan", float_frequency=2, notional=1000, a=0.048696, sigma=0.0058904,
                                 curve="EUR")
            ours = float(trinom.price(book, {"EUR": curve}, backend="reference").value[0])
            cases.append(Case(f"Bermudan payer swaption, {label}", "QuantLib bermudanswaption.cpp testCachedValues",
                              published, ours, as_published, converged))
        return cases
    finally:
        ql.Settings.instance().evaluationDate = saved


def table(cases: list[Case]) -> str:
    """The cases as the docs' Markdown table."""
    lines = ["| case | source | published | trinom | QuantLib 1.44 (published engine) | QuantLib 1.44 converged |",
             "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {c.name} | {c.source} | {c.published:.4f} | {c.trinom:.4f} | {c.quantlib:.4f} | {c.converged:.4f} |"
              for c in cases]
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(bermudan_swaptions()))
