"""Where the time of a scenario run goes on the GPU: library timing of one pricing and of scenario sets of a
paper bond dataset, or of options of a thesis distribution, on the ``cuda`` engine (a development probe, not
a benchmark).

    python3 tools/probe_scenarios.py --dataset R1 --size 100000
    python3 tools/probe_scenarios.py --dataset random --size 100000
"""

from __future__ import annotations

import argparse
import time

import trinom
from trinom.bonds.generator import generate_bonds
from trinom.generator import DISTRIBUTIONS, generate
from trinom.scenarios import CurveShift, SigmaShift, SpreadShift


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="R1")
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--precision", default="f64")
    parser.add_argument("--profile", action="store_true", help="profile the 35-scenario call and a risk run")
    args = parser.parse_args()
    if args.dataset in DISTRIBUTIONS:  # options
        bonds, curves = generate(args.dataset, args.size, seed=12345), None
    else:
        bonds, curves = generate_bonds(args.dataset, args.size, seed=12345)
        bonds.validate(curves)
    h = 1e-4
    sets = {
        "one pricing": None,
        "base as a scenario": [None],
        "base + spread move": [None, SpreadShift(0.01)],
        "parallel +-": [None, CurveShift(-h), CurveShift(h)],
        "sigma +-": [None, SigmaShift(h), SigmaShift(-h)],
        "35 risk scenarios": [None, CurveShift(-h), CurveShift(h)]
        + [CurveShift(s, pillar=k) for k in range(15) for s in (-h, h)] + [SigmaShift(h), SigmaShift(-h)],
    }
    for name, scenarios in sets.items():
        for _ in range(2):
            timing: dict = {}
            start = time.perf_counter()
            trinom.price(bonds, curves, backend="cuda", precision=args.precision, scenarios=scenarios, timing=timing)
            wall = time.perf_counter() - start
        print(f"{name:22s} wall {wall * 1e3:8.1f} ms  library {timing.get('library_ms', 0):8.1f}  device "
              f"{timing.get('device_ms', 0):8.1f}  kernels {timing.get('kernel_ms', 0):8.1f} ms", flush=True)
    if args.profile:
        import cProfile
        import pstats

        from trinom.analytics.risk import risk

        measures = ("dv01", "duration", "convexity", "krd", "vega")
        cProfile.runctx("trinom.price(bonds, curves, backend='cuda', scenarios=scenarios)", globals(),
                        {"trinom": trinom, "bonds": bonds, "curves": curves, "scenarios": scenarios}, "/tmp/p1")
        pstats.Stats("/tmp/p1").sort_stats("tottime").print_stats(14)
        cProfile.runctx("risk(bonds, curves, backend='cuda', measures=measures)", globals(),
                        {"risk": risk, "bonds": bonds, "curves": curves, "measures": measures}, "/tmp/p2")
        pstats.Stats("/tmp/p2").sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
