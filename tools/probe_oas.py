"""Where an OAS run's time goes: each batched pricing's entries and seconds against one pricing of the book.

    python3 tools/probe_oas.py --backend cuda --sizes U1=3000,R1=100000,S1=100000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import trinom
from trinom import spreads
from trinom.bonds.generator import generate_bonds
from trinom.oas import oas


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--target")
    parser.add_argument("--sizes", default="U1=300,R1=300,S1=300")
    args = parser.parse_args()
    engine = {"backend": args.backend, **({"target": args.target} if args.target else {})}
    calls: list[tuple[int, int, float]] = []
    original = spreads.SpreadPricer.dirty

    def timed_dirty(self, rows, values):
        start = time.perf_counter()
        out = original(self, rows, values)
        calls.append((len(np.unique(rows)), len(rows), time.perf_counter() - start))
        return out

    spreads.SpreadPricer.dirty = timed_dirty
    for item in args.sizes.split(","):
        name, size = item.split("=")
        bonds, curves = generate_bonds(name, int(size), seed=12345)
        bonds.validate(curves)
        model = trinom.price(bonds, curves, **engine).clean
        market = model * (1 + np.random.default_rng(3).uniform(-0.05, 0.05, len(bonds)))
        once = []
        for _ in range(3):
            start = time.perf_counter()
            trinom.price(bonds, curves, **engine)
            once.append(time.perf_counter() - start)
        pricing = float(np.median(once))
        oas(bonds, curves, market, **engine)  # warm
        calls.clear()
        start = time.perf_counter()
        result = oas(bonds, curves, market, **engine)
        total = time.perf_counter() - start
        print(f"{name} {len(bonds)} bonds: one pricing {pricing * 1e3:.1f} ms, OAS {total * 1e3:.1f} ms = "
              f"{total / pricing:.1f} pricings, {result.pricings} calls, converged "
              f"{(result.status == 'converged').mean():.3f}, max iterations {result.iterations.max()}")
        for bonds_in, entries, seconds in calls:
            print(f"   call: {bonds_in} bonds, {entries} entries, {seconds * 1e3:.1f} ms "
                  f"({seconds / pricing:.2f} pricings)")
        print(f"   outside the calls: {(total - sum(c[2] for c in calls)) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
