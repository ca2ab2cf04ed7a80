"""Side-by-side timing of bond engines on the paper's generated datasets, outside pytest (issue 13).

    python3 benches/quick_bonds.py --pairs futhark/cuda futhark-paper/cuda cuda --datasets U1 R1 S1 --rounds 5

Medians of end-to-end ``trinom.price`` calls after one warm-up call; the first 64 prices are checked
against the NumPy reference (f64 to 1e-9; f32 to 1e-3 of float64 where the float32 reference is within
1e-4 of it). Gnode/s counts both passes' node updates, as ``benches/test_bench_bonds.py`` does.
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
import trinom
from trinom.bonds import reference
from trinom.bonds.generator import generate_bonds
from trinom.lattice import work

CHECK_ROWS = 64


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
        bonds, curves = generate_bonds(name, seed=12345)
        bonds.validate(curves)
        updates = float(work(bonds.height(), bonds.jmax()).sum())
        ref64 = reference.price(bonds[:CHECK_ROWS], curves, "f64")
        for precision in args.precisions:
            want = ref64 if precision == "f64" else reference.price(bonds[:CHECK_ROWS], curves, "f32")
            checked = np.abs(want - ref64) <= 1e-4 * np.maximum(1.0, np.abs(ref64))
            for pair in args.pairs:
                engine, _, target = pair.partition("/")
                options = {"target": target} if target else {}
                try:
                    result = trinom.price(bonds, curves, backend=engine, precision=precision, **options)
                    times = []
                    for _ in range(args.rounds):
                        start = time.perf_counter()
                        result = trinom.price(bonds, curves, backend=engine, precision=precision, **options)
                        times.append(time.perf_counter() - start)
                except Exception as err:  # a pair that cannot run here is reported, not fatal
                    print(f"{pair} {name} {precision}: {type(err).__name__}: {err}", file=sys.stderr)
                    continue
                got = result.price[:CHECK_ROWS].astype(np.float64)
                error = float(np.max((np.abs(got - ref64) / np.maximum(1.0, np.abs(ref64)))[checked]))
                row = {"dataset": name, "precision": precision, "pair": pair, "bonds": len(bonds),
                       "median_s": median(times), "times_s": times, "gnodes_per_s": updates / median(times) / 1e9,
                       "max_error": error}
                rows.append(row)
                print(f"{name:4s} {precision} {pair:22s} {1e3 * median(times):10.2f} ms {row['gnodes_per_s']:8.2f} "
                      f"Gnode/s  err {error:.1e}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"machine": platform.node(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
