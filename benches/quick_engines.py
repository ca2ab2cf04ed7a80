#!/usr/bin/env python3
"""Median end-to-end ``trinom.price`` time of engine/target pairs on thesis datasets, side by side in one run.

    python benches/quick_engines.py --pairs futhark/cuda cuda futhark-basic/cuda --datasets 0_UNIFORM 1_RAND \\
        --precisions f64 f32 --rounds 5 --json out.json

Each pair is warmed up (2 calls) and timed ``--rounds`` times per dataset and precision; prices are checked
against data/NAME.out (f64: 1e-11, f32: 1e-2). Prints a Markdown table of medians (ms) and Gnode/s.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from statistics import median

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

import trinom  # noqa: E402
from trinom import io  # noqa: E402
from trinom.lattice import work  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", required=True, help="engine or engine/target")
    parser.add_argument("--datasets", nargs="+", required=True)
    parser.add_argument("--precisions", nargs="+", default=["f64", "f32"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    for name in args.datasets:
        portfolio, curve = io.read_input(ROOT / "data" / f"{name}.in")
        curve = curve or trinom.YieldCurve.thesis()
        expected = io.read_prices(ROOT / "data" / f"{name}.out")
        for precision in args.precisions:
            g = portfolio.geometry(np.float32 if precision == "f32" else np.float64)
            updates = float(work(g.n, g.jmax).sum())
            for pair in args.pairs:
                engine, _, target = pair.partition("/")
                options = {"target": target} if target else {}
                try:
                    for _ in range(2):
                        result = trinom.price(portfolio, curve, backend=engine, precision=precision, **options)
                    times = []
                    for _ in range(args.rounds):
                        start = time.perf_counter()
                        result = trinom.price(portfolio, curve, backend=engine, precision=precision, **options)
                        times.append(time.perf_counter() - start)
                except Exception as err:  # a pair that cannot run here is reported, not fatal
                    print(f"{pair} {name} {precision}: {type(err).__name__}: {err}", file=sys.stderr)
                    continue
                error = float(np.abs(result.price.astype(np.float64) - expected).max())
                row = {"dataset": name, "precision": precision, "pair": pair, "median_s": median(times),
                       "times_s": times, "gnodes_per_s": updates / median(times) / 1e9, "max_error": error}
                rows.append(row)
                print(f"{name:22s} {precision} {pair:22s} {1e3 * median(times):10.2f} ms {row['gnodes_per_s']:8.2f} "
                      f"Gnode/s  err {error:.1e}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"machine": platform.node(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
