"""Where an OAS run's time goes: each engine call's entries (a batched pricing's, or a whole search's inside
the engine) and seconds against one pricing of the book.

    python3 tools/probe_oas.py --backend cuda --sizes U1=3000,R1=100000,S1=100000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np
import trinom
from trinom import spreads
from trinom.analytics.oas import oas
from trinom.bonds.generator import generate_bonds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--target")
    parser.add_argument("--sizes", default="U1=300,R1=300,S1=300")
    parser.add_argument("--timing", action="store_true", help="the cuda library's own times per call")
    parser.add_argument("--profile", action="store_true", help="the OAS run's Python profile")
    args = parser.parse_args()
    engine = {"backend": args.backend, **({"target": args.target} if args.target else {})}
    calls: list[tuple[int, float, str]] = []
    timing: dict = {}
    def timed(original, entries):
        """``original`` (a SpreadPricer method) recording each call's entries, seconds and library times."""
        def call(self, *args):
            start = time.perf_counter()
            out = original(self, *args)
            seconds = time.perf_counter() - start
            inside = self.tuning.get("timing") or {}
            detail = " ".join(f"{key} {inside[key]:.1f}" for key in ("library_ms", "device_ms", "kernel_ms")
                              if key in inside)
            calls.append((entries(*args), seconds, detail))
            return out
        return call

    spreads.SpreadPricer.dirty = timed(spreads.SpreadPricer.dirty, lambda rows, _spreads: len(rows))
    spreads.SpreadPricer.solve = timed(spreads.SpreadPricer.solve, lambda goal, _limits: len(goal))
    for item in args.sizes.split(","):
        name, size = item.split("=")
        bonds, curves = generate_bonds(name, int(size), seed=12345)
        bonds.validate(curves)
        model = trinom.price(bonds, curves, **engine).clean
        market = model * (1 + np.random.default_rng(3).uniform(-0.05, 0.05, len(bonds)))
        once = []
        knobs = {"timing": timing} if args.timing else {}
        for _ in range(3):
            start = time.perf_counter()
            trinom.price(bonds, curves, **engine, **knobs)
            once.append(time.perf_counter() - start)
        pricing = float(np.median(once))
        if timing:
            print(f"{name} pricing: " + " ".join(f"{k} {v:.1f}" for k, v in timing.items() if k.endswith("_ms")))
        oas(bonds, curves, market, **engine, **knobs)  # warm
        calls.clear()
        profile = cProfile.Profile() if args.profile else None
        if profile:
            profile.enable()
        start = time.perf_counter()
        result = oas(bonds, curves, market, **engine, **knobs)
        total = time.perf_counter() - start
        if profile:
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(12)
        print(f"{name} {len(bonds)} bonds: one pricing {pricing * 1e3:.1f} ms, OAS {total * 1e3:.1f} ms = "
              f"{total / pricing:.1f} pricings, {result.pricings} calls, converged "
              f"{(result.status == 'converged').mean():.3f}, max iterations {result.iterations.max()}")
        for entries, seconds, detail in calls:
            print(f"   call: {entries} entries, {seconds * 1e3:.1f} ms "
                  f"({seconds / pricing:.2f} pricings) {detail}")
        print(f"   outside the calls: {(total - sum(c[1] for c in calls)) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
