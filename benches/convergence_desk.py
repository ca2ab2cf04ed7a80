"""How a desk's dated trades converge in steps a year, against QuantLib 1.44 (issue 34, item 5; the table before item
3's exact flows): a straight seasoned bond against its discounted flows, the same bond callable (bermudan, at par on
its coupon dates) against QuantLib's ``TreeCallableFixedRateBondEngine`` at a converged resolution, and a 10-year
Bermudan receiver swaption against ``TreeSwaptionEngine`` converged. Prints a markdown table: trinom's price and its
gap to the oracle per steps a year.

    python benches/convergence_desk.py                       # the table in docs/convergence.md
    python benches/convergence_desk.py --steps 1,12,365 --quantlib-steps 2000
"""

from __future__ import annotations

import argparse
import time

import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from trinom.instruments import Trades
from trinom.model import DatedCurve

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2028-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
ZEROS = [0.025, 0.028, 0.032, 0.036, 0.038]
A, SIGMA = 0.05, 0.01
BOND = {"issue": "2024-03-15", "maturity": "2034-03-15", "coupon": 0.05, "first": "2029-03-15", "last": "2033-09-15"}
SWAPTION = {"start": "2027-11-25", "maturity": "2037-11-25", "rate": 0.036, "first": "2027-11-25", "last": "2036-11-25"}


def day(text: str) -> ql.Date:
    return ql.DateParser.parseISO(text)


def curve() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="EUR")


def quantlib_handle(ours: DatedCurve) -> ql.YieldTermStructureHandle:
    """Our curve as QuantLib's DiscountCurve (both log-linear in discount factors)."""
    dates = [day(AS_OF)] + [day(d) for d in PILLARS]
    discounts = [1.0] + [float(ours.discount([d])[0]) for d in PILLARS]
    return ql.YieldTermStructureHandle(ql.DiscountCurve(dates, discounts, ql.Actual365Fixed()))


def trinom_trades(steps: int) -> Trades:
    """The straight bond, the callable bond and the swaption at ``steps`` a year."""
    b, s = BOND, SWAPTION
    return Trades(as_of=AS_OF, id=["straight", "callable", "swaption"], type=["bond", "bond", "swaption"],
                  issue=[b["issue"], b["issue"], None], maturity=[b["maturity"], b["maturity"], s["maturity"]],
                  coupon=[b["coupon"], b["coupon"], None], frequency=[2, 2, 1], day_count=["30/360"] * 3,
                  option=[None, "call", "receiver"], exercise=[None, "bermudan", "bermudan"],
                  first_exercise=[None, b["first"], s["first"]], last_exercise=[None, b["last"], s["last"]],
                  exercise_price=[None, 100.0, None], start=[None, None, s["start"]], rate=[None, None, s["rate"]],
                  float_frequency=[None, None, 2], a=A, sigma=SIGMA, curve="EUR", steps_per_year=[steps] * 3)


def quantlib_prices(handle: ql.YieldTermStructureHandle, steps: int) -> dict[str, float]:
    """The three trades in QuantLib: the straight bond discounted, the callable and the swaption on its trees at
    ``steps`` steps."""
    ql.Settings.instance().evaluationDate = day(AS_OF)
    model = ql.HullWhite(handle, A, SIGMA)
    b = BOND
    schedule = ql.Schedule(day(b["issue"]), day(b["maturity"]), ql.Period(ql.Semiannual), ql.NullCalendar(),
                           ql.Following, ql.Following, ql.DateGeneration.Backward, False)
    day_count = ql.Thirty360(ql.Thirty360.BondBasis)
    straight = ql.FixedRateBond(0, 100.0, schedule, [b["coupon"]], day_count, ql.Following, 100.0, day(b["issue"]))
    straight.setPricingEngine(ql.DiscountingBondEngine(handle))
    calls = ql.CallabilitySchedule()
    for d in list(schedule)[1:]:
        if day(b["first"]) <= d <= day(b["last"]):
            calls.append(ql.Callability(ql.BondPrice(100.0, ql.BondPrice.Clean), ql.Callability.Call, d))
    callable_bond = ql.CallableFixedRateBond(0, 100.0, schedule, [b["coupon"]], day_count, ql.Following, 100.0,
                                             day(b["issue"]), calls)
    callable_bond.setPricingEngine(ql.TreeCallableFixedRateBondEngine(model, steps))
    s = SWAPTION
    index = ql.IborIndex("I6M", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), handle)

    def leg(tenor: ql.Period) -> ql.Schedule:
        return ql.Schedule(day(s["start"]), day(s["maturity"]), tenor, ql.NullCalendar(), ql.Unadjusted,
                           ql.Unadjusted, ql.DateGeneration.Backward, False)
    fixed = leg(ql.Period(ql.Annual))
    swap = ql.VanillaSwap(ql.Swap.Receiver, 100.0, fixed, s["rate"], day_count, leg(ql.Period(6, ql.Months)), index,
                          0.0, ql.Actual365Fixed())
    dates = [d for d in list(fixed)[:-1] if day(s["first"]) <= d <= day(s["last"])]
    swaption = ql.Swaption(swap, ql.BermudanExercise(dates))
    swaption.setPricingEngine(ql.TreeSwaptionEngine(model, steps))
    return {"straight": straight.NPV(), "callable": callable_bond.NPV(), "swaption": swaption.NPV()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="1,2,4,12,52,365", help="trinom's steps a year")
    parser.add_argument("--quantlib-steps", type=int, default=3000, help="QuantLib's tree steps (converged)")
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args()
    ours = curve()
    handle = quantlib_handle(ours)
    t0 = time.perf_counter()
    oracle = quantlib_prices(handle, args.quantlib_steps)
    coarse = quantlib_prices(handle, args.quantlib_steps // 2)
    seconds = time.perf_counter() - t0
    print(f"QuantLib 1.44 at {args.quantlib_steps} steps (and half as many, {seconds:.1f} s both): "
          + ", ".join(f"{k} {v:.6f} (moved {v - coarse[k]:+.1e})" for k, v in oracle.items()))
    print("\n| steps a year | straight bond | gap to its discounted flows | callable bond | gap to QuantLib | "
          "Bermudan swaption | gap to QuantLib |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for steps in (int(s) for s in args.steps.split(",")):
        price = trinom.price(trinom_trades(steps), {"EUR": ours}, backend=args.backend).price
        cells = []
        for k, name in enumerate(("straight", "callable", "swaption")):
            cells += [f"{price[k]:.6f}", f"{price[k] - oracle[name]:+.2e}"]
        print(f"| {steps} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
