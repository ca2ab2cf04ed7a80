"""Side-by-side timing of bond engines on the paper's generated datasets, outside pytest (issue 13).

    python3 benches/quick_bonds.py --pairs futhark/cuda futhark-paper/cuda cuda --datasets U1 R1 S1 --rounds 5

Medians of end-to-end ``trinom.price`` calls after one warm-up call; the first 64 prices are checked
against the NumPy reference (f64 to 1e-9; f32 to 1e-3 of float64 where the float32 reference is within
1e-4 of it). Gnode/s counts both passes' node updates, as ``benches/test_bench_bonds.py`` does.
"""

from __future__ import annotations

from statistics import median

import numpy as np
from quick import arguments, timed, write_json
from trinom.bonds.generator import generate_bonds
from trinom.engines import bonds_reference as reference
from trinom.lattice.geometry import work

CHECK_ROWS = 64


def main() -> int:
    args = arguments(__doc__)
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
                measured = timed(bonds, curves, pair, precision, args.rounds, 1, f"{name} {precision}")
                if measured is None:
                    continue
                result, times = measured
                got = result.price[:CHECK_ROWS].astype(np.float64)
                error = float(np.max((np.abs(got - ref64) / np.maximum(1.0, np.abs(ref64)))[checked]))
                row = {"dataset": name, "precision": precision, "pair": pair, "bonds": len(bonds),
                       "median_s": median(times), "times_s": times, "gnodes_per_s": updates / median(times) / 1e9,
                       "max_error": error}
                rows.append(row)
                print(f"{name:4s} {precision} {pair:22s} {1e3 * median(times):10.2f} ms {row['gnodes_per_s']:8.2f} "
                      f"Gnode/s  err {error:.1e}", flush=True)
    write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
