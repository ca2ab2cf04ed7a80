"""The issue-13 tables: the `futhark` engine (fut/fast.fut, fut/fast-bonds.fut) against the old Futhark
programs and `cuda`, from two JSON files of ``benches/quick_engines.py`` (options) or
``benches/quick_bonds.py`` (bonds) made on one warm machine.

    python3 benches/futhark_table.py benches/gpu-futhark-fast-new.json benches/gpu-futhark-fast-old.json
    python3 benches/futhark_table.py benches/gpu-bonds-fast-new.json benches/gpu-bonds-fast-old.json

The old programs are every pair whose engine is neither ``futhark`` nor ``cuda`` (options: futhark-basic and
futhark-flat; bonds: futhark-paper).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: The issue's minimum speed-up over the best old Futhark program, by dataset (bonds: 5x on each).
MUST = {"1_RAND": 5.0, "4_SKEWED": 5.0, "5_SKEWEDCONSTHEIGHT": 5.0, "6_SKEWEDCONSTWIDTH": 5.0,
        "U1": 5.0, "R1": 5.0, "S1": 5.0}


def main(new_path: str, old_path: str) -> int:
    rows = json.loads(Path(new_path).read_text())["rows"] + json.loads(Path(old_path).read_text())["rows"]
    ms = {(r["dataset"], r["precision"], r["pair"]): 1e3 * r["median_s"] for r in rows}
    gnodes = {(r["dataset"], r["precision"], r["pair"]): r["gnodes_per_s"] for r in rows}
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    print("| dataset | prec | target | new `futhark` ms | Gnode/s | best old Futhark ms (which) | speed-up | must "
          "| `cuda` ms | new / `cuda` |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    met = total = 0
    for dataset in datasets:
        for precision in ("f64", "f32"):
            for target in ("cuda", "opencl"):
                new = ms.get((dataset, precision, f"futhark/{target}"))
                old = {pair.split("/")[0].removeprefix("futhark-"): time for (d, p, pair), time in ms.items()
                       if d == dataset and p == precision and pair.endswith(f"/{target}")
                       and pair.split("/")[0] not in ("futhark", "cuda")}
                if new is None or not old:
                    continue
                which = min(old, key=old.get)
                speedup = old[which] / new
                must = MUST.get(dataset, 2.0)
                total += 1
                met += speedup >= must
                cuda = ms.get((dataset, precision, "cuda"))
                print(f"| {dataset} | {precision} | {target} | {new:.2f} | {gnodes[dataset, precision, f'futhark/{target}']:.0f} "
                      f"| {old[which]:.1f} ({which}) | {speedup:.2f}x {'✓' if speedup >= must else '✗'} | {must:g}x "
                      f"| {cuda:.2f} | {new / cuda:.1f}x |")
    print(f"\n{met} of {total} rows reach the minimum.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
