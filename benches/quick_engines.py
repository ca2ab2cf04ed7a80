#!/usr/bin/env python3
"""Median end-to-end ``trinom.price`` time of engine/target pairs on thesis datasets, side by side in one run.

    python benches/quick_engines.py --pairs futhark/cuda cuda futhark-basic/cuda --datasets 0_UNIFORM 1_RAND \\
        --precisions f64 f32 --rounds 5 --json out.json

Each pair is warmed up (2 calls) and timed ``--rounds`` times per dataset and precision; prices are checked
against data/NAME.out (f64: 1e-11, f32: 1e-2). Prints a Markdown table of medians (ms) and Gnode/s.
"""

from __future__ import annotations

import sys
from pathlib import Path
from statistics import median

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

import trinom  # noqa: E402
from quick import arguments, timed, write_json  # noqa: E402
from trinom import io  # noqa: E402
from trinom.lattice.geometry import work  # noqa: E402


def main() -> int:
    args = arguments(__doc__)
    rows = []
    for name in args.datasets:
        portfolio, curve = io.read_input(ROOT / "data" / f"{name}.in")
        curve = curve or trinom.YieldCurve.thesis()
        expected = io.read_prices(ROOT / "data" / f"{name}.out")
        for precision in args.precisions:
            g = portfolio.geometry(np.float32 if precision == "f32" else np.float64)
            updates = float(work(g.n, g.jmax).sum())
            for pair in args.pairs:
                measured = timed(portfolio, curve, pair, precision, args.rounds, 2, f"{name} {precision}")
                if measured is None:
                    continue
                result, times = measured
                error = float(np.abs(result.price.astype(np.float64) - expected).max())
                row = {"dataset": name, "precision": precision, "pair": pair, "median_s": median(times),
                       "times_s": times, "gnodes_per_s": updates / median(times) / 1e9, "max_error": error}
                rows.append(row)
                print(f"{name:22s} {precision} {pair:22s} {1e3 * median(times):10.2f} ms {row['gnodes_per_s']:8.2f} "
                      f"Gnode/s  err {error:.1e}", flush=True)
    write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
