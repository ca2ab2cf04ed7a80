"""The risk desk's measures against QuantLib 1.44, side by side in one run (issue 14).

QuantLib prices one callable bond at a time: a 20-year fixed-rate bond (5% semi-annual coupons, callable at
par on every coupon date from year 5), Hull-White a = 0.1, sigma = 0.01, on a 2000-step tree
(``TreeCallableFixedRateBondEngine``), in a zero curve of the thesis' rates. It is timed for the price, the
OAS from a clean price 1.5 below the model's, and effective duration plus convexity (1 bp). trinom prices a
book of ``--bonds`` such bonds (coupons and call prices varied, each tree 2000 steps of the same shape) with
the same three measures: :func:`trinom.price`, :func:`trinom.oas` and :func:`trinom.risk`.

Throughput is node updates per second counted the same way for both: one pricing's tree work (both
passes, docs/model.md §1.11) per bond and measure, over the time the measure took for all bonds. So the
ratio of the two throughputs is the ratio of the times per bond.

    python3 benches/desk_peers.py --backend futhark --target multicore --bonds 32 --out desk-cpu.json
    python3 benches/desk_peers.py --backend futhark --target multicore --bonds 32 --own-lattices
    python3 benches/desk_peers.py --backend cuda --bonds 20000 --out desk-gpu.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from typing import Any

import numpy as np
import trinom
from trinom.bonds import BondPortfolio
from trinom.lattice.lowering import lower_bonds

YEARS, STEPS_PER_YEAR, A, SIGMA, COUPON, FIRST_CALL_YEAR = 20, 100, 0.1, 0.01, 5.0, 5
BUMP = 1e-4
OAS_DISCOUNT = 1.5  # the market's clean price lies this far below the model's


def book(count: int, seed: int = 1, own_lattices: bool = False) -> BondPortfolio:
    """``count`` 20-year callable bonds on 2000-step trees (coupons 3-7%, call prices 99-102), all in one
    Hull-White model (one lattice: the CPU engines run its forward pass once), or with ``own_lattices``
    each in a model of its own (sigma moved by a millionth per bond: a forward pass per bond)."""
    rng = np.random.default_rng(seed)
    n = YEARS * STEPS_PER_YEAR
    dates = np.arange(STEPS_PER_YEAR // 2, n + 1, STEPS_PER_YEAR // 2)
    coupons = np.round(rng.uniform(3.0, 7.0, count) * 4) / 4 if count > 1 else np.array([COUPON])
    strikes = np.round(rng.uniform(99.0, 102.0, count), 2) if count > 1 else np.array([100.0])
    flows = dates.size
    return BondPortfolio(
        term_unit=np.full(count, 365), term_steps=np.full(count, STEPS_PER_YEAR), a=np.full(count, A),
        sigma=SIGMA * (1 + 1e-6 * np.arange(count)) if own_lattices else np.full(count, SIGMA),
        maturity=np.full(count, float(YEARS)), cashflow_count=np.full(count, flows),
        cashflow_step=np.tile(dates, count), repayment=np.tile(np.r_[np.zeros(flows - 1), 100.0], count),
        coupon=np.repeat(coupons / 2, flows), spread=np.zeros(count), option_type=np.zeros(count, dtype=np.int8),
        strike=strikes, first_exercise=np.full(count, FIRST_CALL_YEAR * STEPS_PER_YEAR),
        last_exercise=np.full(count, n - 1), exercise_frequency=np.full(count, STEPS_PER_YEAR // 2),
        curve_index=np.zeros(count, dtype=np.int64))


def tree_work() -> float:
    """Node updates of one pricing of one such bond (both passes)."""
    return float(lower_bonds(book(1), ("default",)).work()[0])


def timed(call: Any, rounds: int, warm: bool = False) -> tuple[float, Any]:
    """The median wall time of ``rounds`` calls (after one untimed call if ``warm``: first-use costs such as
    imports and allocations are not the measure's), and the last call's result."""
    times, result = [], call() if warm else None
    for _ in range(rounds):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def quantlib(rounds: int) -> dict[str, float]:
    """QuantLib's seconds for one bond: price, OAS, effective duration and convexity."""
    import QuantLib as ql  # noqa: N813 (the usual alias)

    today = ql.Date(2, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    thesis = trinom.YieldCurve.thesis()
    # trinom's curve is flat before the first and after the last pillar: so is this one, to 40 years
    dates = [today] + [today + int(d) for d in thesis.days] + [today + ql.Period(40, ql.Years)]
    rates = [float(thesis.rates[0])] + [float(r) for r in thesis.rates] + [float(thesis.rates[-1])]
    day_count = ql.Actual365Fixed()
    curve = ql.YieldTermStructureHandle(ql.ZeroCurve(dates, rates, day_count, ql.NullCalendar(), ql.Linear(),
                                                     ql.Continuous))
    maturity = today + ql.Period(YEARS, ql.Years)
    schedule = ql.Schedule(today, maturity, ql.Period(ql.Semiannual), ql.NullCalendar(), ql.Unadjusted,
                           ql.Unadjusted, ql.DateGeneration.Backward, False)
    calls = ql.CallabilitySchedule()
    for date in list(schedule)[2 * FIRST_CALL_YEAR:-1]:
        calls.append(ql.Callability(ql.BondPrice(100.0, ql.BondPrice.Clean), ql.Callability.Call, date))
    bond = ql.CallableFixedRateBond(0, 100.0, schedule, [COUPON / 100], day_count, ql.Unadjusted, 100.0, today,
                                    calls)
    bond.setPricingEngine(ql.TreeCallableFixedRateBondEngine(ql.HullWhite(curve, A, SIGMA), YEARS * STEPS_PER_YEAR))

    def price() -> float:
        bond.recalculate()  # a lazy object: price it again, not its cached result
        return bond.cleanPrice()

    price_s, clean = timed(price, rounds)
    oas_s, spread = timed(lambda: bond.OAS(clean - OAS_DISCOUNT, curve, day_count, ql.Continuous, ql.NoFrequency),
                          1)
    risk_s, _ = timed(lambda: (bond.effectiveDuration(spread, curve, day_count, ql.Continuous, ql.NoFrequency, BUMP),
                               bond.effectiveConvexity(spread, curve, day_count, ql.Continuous, ql.NoFrequency, BUMP)),
                      1)
    return {"price": price_s, "oas": oas_s, "duration_convexity": risk_s, "clean_price": clean}


def ours(count: int, rounds: int, engine: dict[str, Any], own_lattices: bool = False) -> dict[str, float]:
    """trinom's seconds for ``count`` bonds: price, OAS and effective duration plus convexity."""
    bonds = book(count, own_lattices=own_lattices)
    curves = [trinom.YieldCurve.thesis()]
    bonds.validate(curves)
    price_s, result = timed(lambda: trinom.price(bonds, curves, **engine), rounds, warm=True)
    market = result.clean - OAS_DISCOUNT
    oas_s, solved = timed(lambda: trinom.oas(bonds, curves, market, **engine), rounds, warm=True)
    assert (solved.status == "converged").all()
    risk_s, _ = timed(lambda: trinom.risk(bonds, curves, measures=("duration", "convexity"), **engine), rounds,
                      warm=True)
    return {"price": price_s, "oas": oas_s, "duration_convexity": risk_s, "oas_pricings": solved.pricings}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--target")
    parser.add_argument("--bonds", type=int, default=32, help="bonds in trinom's book")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-quantlib", action="store_true", help="trinom only")
    parser.add_argument("--own-lattices", action="store_true",
                        help="each bond in a Hull-White model of its own (no forward pass shared)")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    engine = {"backend": args.backend, **({"target": args.target} if args.target else {})}
    work = tree_work()
    peer = None if args.no_quantlib else quantlib(args.rounds)
    mine = ours(args.bonds, args.rounds, engine, args.own_lattices)
    rows = []
    models = "a model per bond" if args.own_lattices else "one model"
    print(f"one bond's tree: {work:.3g} node updates (both passes); trinom book: {args.bonds} bonds ({models}) "
          f"on {engine}")
    print("| measure | QuantLib s/bond | QuantLib node/s | trinom s/bond | trinom node/s | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for measure in ("price", "oas", "duration_convexity"):
        per_bond = mine[measure] / args.bonds
        row = {"measure": measure, "trinom_s_per_bond": per_bond, "trinom_node_per_s": work / per_bond}
        if peer is not None:
            row.update(quantlib_s=peer[measure], quantlib_node_per_s=work / peer[measure],
                       ratio=peer[measure] / per_bond)
        rows.append(row)
        ql_cells = (f"{peer[measure]:.3g} | {work / peer[measure]:.3g}" if peer else "- | -")
        ratio = f"{peer[measure] / per_bond:.3g}" if peer else "-"
        print(f"| {measure} | {ql_cells} | {per_bond:.3g} | {work / per_bond:.3g} | {ratio} |")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"machine": platform.processor() or platform.machine(), "engine": engine, "bonds": args.bonds,
                       "own_lattices": args.own_lattices,
                       "tree_work": work, "quantlib": peer, "trinom": mine, "rows": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
