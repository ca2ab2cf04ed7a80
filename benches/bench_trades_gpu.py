"""A dated book against the same book given in steps, on one engine (issue 25's "within 10%"): 100000 dated callable
bonds (benches/bench_trades.py's book) priced through ``trinom.price(trades, dated_curves)`` (lowered once: a
Trades book keeps its lowering) and their lowered ``BondPortfolio`` through ``trinom.price(bonds, curves)``. Prints
medians of ``--rounds`` warm calls of each, side by side.

    python benches/bench_trades_gpu.py --backend cuda --bonds 100000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import trinom
from trinom.instruments import Trades
from trinom.model import DatedCurve

sys.path.insert(0, str(Path(__file__).parent))
from bench_trades import book


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bonds", type=int, default=100000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--target", default=None)
    args = parser.parse_args()
    columns = book(args.bonds)
    columns["calendar"] = ["NONE" if c in ("TARGET", "NYSE", "USGOVT", "TARGET+NYSE") else c for c in columns["calendar"]]
    curves = {"default": DatedCurve(as_of="2026-11-25", dates=["2027-11-25", "2036-11-25", "2066-11-25"],
                                    zero_rates=[0.03, 0.035, 0.04])}
    start = time.perf_counter()
    trades = Trades(as_of="2026-11-25", **columns)
    (_first, bonds), = trades.instruments(("default",))
    lowering = time.perf_counter() - start
    yield_curves = {"default": curves["default"].to_yield_curve()}
    options = {"backend": args.backend, "target": args.target}
    dated = trinom.price(trades, curves, **options)
    steps = trinom.price(bonds, yield_curves, **options)
    assert (dated.price == steps.price).all(), "the dated book and its steps must price the same bits"
    times: dict[str, list[float]] = {"dated": [], "steps": []}
    for _ in range(args.rounds):
        for name, call in (("dated", lambda: trinom.price(trades, curves, **options)),
                           ("steps", lambda: trinom.price(bonds, yield_curves, **options))):
            t0 = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t0)
    dated_s, steps_s = statistics.median(times["dated"]), statistics.median(times["steps"])
    print(f"{args.bonds} dated bonds ({bonds.cashflow_step.size} cash flows, 12 steps a year) on {steps.engine}: "
          f"lowering {lowering:.3f} s once; pricing dated {dated_s * 1e3:.1f} ms, in steps {steps_s * 1e3:.1f} ms "
          f"(ratio {dated_s / steps_s:.3f}; goal <= 1.10)")


if __name__ == "__main__":
    main()
