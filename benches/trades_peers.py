"""Dated callable bonds against QuantLib 1.44 at equal tree resolution, side by side in one run (issue 25).

The same trade, a 20-year 5% semi-annual 30/360 bond callable at par on every coupon date from year 5, issued on the
as-of date, Hull-White a = 0.1, sigma = 0.01, on one zero curve: QuantLib prices it one at a time
(``CallableFixedRateBond`` + ``TreeCallableFixedRateBondEngine`` with ``--steps-per-year`` times 20 steps); trinom
prices a book of ``--bonds`` such trades (coupons 3-7%, call prices 99-102) from a ``Trades`` book at
``steps_per_year`` = ``--steps-per-year``: the same number of tree steps. Prints each side's seconds per bond (medians)
and their ratio, and the two prices of the first trade.

    python benches/trades_peers.py --backend futhark --target multicore --bonds 32
    python benches/trades_peers.py --backend cuda --bonds 20000 --quantlib-seconds 1.03   (the H100)

The GPU machine has no QuantLib: there ``--quantlib-seconds`` gives QuantLib's seconds a bond measured on a CPU (this
script's first line there), and the ratio says so.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import trinom
from trinom.instruments import Trades
from trinom.model import DatedCurve

AS_OF, YEARS, A, SIGMA = "2026-11-25", 20, 0.1, 0.01
PILLARS = [365, 730, 1825, 3650, 7300, 10950]
RATES = [0.030, 0.032, 0.035, 0.038, 0.040, 0.041]


def trades(count: int, steps_per_year: int, seed: int = 1) -> Trades:
    rng = np.random.default_rng(seed)
    coupons = np.r_[0.05, np.round(rng.uniform(0.03, 0.07, count - 1) * 400) / 400]
    prices = np.r_[100.0, np.round(rng.uniform(99.0, 102.0, count - 1), 2)]
    return Trades(as_of=AS_OF, id=[f"C{k}" for k in range(count)], type="bond", issue=AS_OF, maturity="2046-11-25",
                  coupon=coupons, frequency=2, day_count="30/360", option="call", exercise="bermudan",
                  first_exercise="2031-11-25", last_exercise="2046-05-25", exercise_price=prices, a=A, sigma=SIGMA,
                  steps_per_year=steps_per_year)


def curve() -> DatedCurve:
    dates = [str(np.datetime64(AS_OF) + d) for d in PILLARS]
    return DatedCurve(as_of=AS_OF, dates=dates, zero_rates=RATES, interpolation="linear-zero")


def quantlib_price(steps: int) -> float:
    import QuantLib as ql  # noqa: N813 (the usual alias; only where QuantLib is measured)

    today = ql.Date(25, 11, 2026)
    ql.Settings.instance().evaluationDate = today
    dates = [today] + [today + d for d in PILLARS]
    handle = ql.YieldTermStructureHandle(ql.ZeroCurve(dates, [RATES[0], *RATES], ql.Actual365Fixed(), ql.NullCalendar(),
                                                      ql.Linear(), ql.Continuous))
    schedule = ql.Schedule(today, ql.Date(25, 11, 2046), ql.Period(ql.Semiannual), ql.NullCalendar(), ql.Unadjusted,
                           ql.Unadjusted, ql.DateGeneration.Backward, False)
    calls = ql.CallabilitySchedule()
    for date in list(schedule)[1:-1]:
        if date >= ql.Date(25, 11, 2031):
            calls.append(ql.Callability(ql.BondPrice(100.0, ql.BondPrice.Clean), ql.Callability.Call, date))
    bond = ql.CallableFixedRateBond(0, 100.0, schedule, [0.05], ql.Thirty360(ql.Thirty360.BondBasis), ql.Unadjusted,
                                    100.0, today, calls)
    bond.setPricingEngine(ql.TreeCallableFixedRateBondEngine(ql.HullWhite(handle, A, SIGMA), steps))
    return bond.NPV()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bonds", type=int, default=32)
    parser.add_argument("--steps-per-year", type=int, default=100)
    parser.add_argument("--quantlib-rounds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--target", default=None)
    parser.add_argument("--quantlib-seconds", type=float, default=None,
                        help="QuantLib's seconds a bond measured elsewhere (a machine without QuantLib)")
    args = parser.parse_args()
    steps = args.steps_per_year * YEARS
    ql_times, ql_value = [], float("nan")
    if args.quantlib_seconds is not None:
        ql_times = [args.quantlib_seconds]
    for _ in range(args.quantlib_rounds if args.quantlib_seconds is None else 0):
        start = time.perf_counter()
        ql_value = quantlib_price(steps)
        ql_times.append(time.perf_counter() - start)
    book, curves = trades(args.bonds, args.steps_per_year), {"EUR": curve()}
    first = trinom.price(book, curves, backend=args.backend, target=args.target)  # lowers once, warms the engine
    times = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        trinom.price(book, curves, backend=args.backend, target=args.target)
        times.append(time.perf_counter() - start)
    ql_bond, trinom_bond = statistics.median(ql_times), statistics.median(times) / args.bonds
    where = " (given, measured on a CPU)" if args.quantlib_seconds is not None else ""
    print(f"{steps}-step trees: QuantLib {ql_bond:.3f} s a bond{where}, trinom ({first.engine}, {args.bonds} bonds) "
          f"{trinom_bond * 1e6:.1f} us a bond: {ql_bond / trinom_bond:.3g}x; first trade: QuantLib {ql_value:.6f}, "
          f"trinom {first.price[0]:.6f}")


if __name__ == "__main__":
    main()
