"""Node updates per second by tree width class, per engine (issue 34): books of callable bonds whose trees all fall in
one class (<= 64, 65-512, 513-2048, 2049-8192 nodes wide), 10 to 20 years, priced warm; the median of ``--rounds``
calls of ``trinom.price`` on the lowered book (no lowering in the time), with the engine's own kernel time where it
reports one (``cuda``: ``timing["kernel_ms"]``).

    python benches/width_classes.py --engines cuda,futhark-cuda,multicore --out benches/width-classes-gpu.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from desk_book import ENGINES

#: class name -> (steps a year, a, trees in the book): W = 2 ceil(0.1835 steps / a) + 1 where the tree is that tall.
CLASSES: dict[str, tuple[int, float, int]] = {
    "<=64": (12, 0.10, 100000),
    "65-512": (52, 0.05, 20000),
    "513-2048": (365, 0.10, 2000),
    "2049-8192": (365, 0.03, 1000),
}


def book(steps: int, a: float, count: int, seed: int = 3, shared: bool = False) -> tuple[Any, Any]:
    """``count`` callable bonds (bermudan, semi-annual, 10-20 years) at ``steps`` a year with mean reversion ``a``,
    lowered to a :class:`~trinom.BondPortfolio`, and their curves. Each bond has its own sigma (0.005-0.015), or with
    ``shared`` all have 0.01 (one model: the engines may share what depends on the model only)."""
    from trinom.instruments import Trades
    from trinom.instruments.trades import lowered
    from trinom.model import DatedCurve

    rng = np.random.default_rng(seed)
    as_of = np.datetime64("2026-11-25")
    maturity = as_of + rng.integers(10 * 365, 20 * 365, count)
    first = as_of + rng.integers(365, 5 * 365, count)
    trades = Trades(as_of=str(as_of), id=[f"B{k}" for k in range(count)], type=["bond"] * count,
                    issue=["2025-06-15"] * count, maturity=maturity.astype(str).tolist(),
                    coupon=rng.uniform(0.02, 0.06, count), frequency=[2] * count, option=["call"] * count,
                    exercise=["bermudan"] * count, first_exercise=first.astype(str).tolist(),
                    last_exercise=(maturity - 180).astype(str).tolist(), exercise_price=[100.0] * count,
                    a=np.full(count, a), sigma=np.full(count, 0.01) if shared else rng.uniform(0.005, 0.015, count),
                    steps_per_year=[steps] * count)
    curves = {"default": DatedCurve(as_of=str(as_of), dates=["2027-11-25", "2036-11-25", "2056-11-25"],
                                    zero_rates=[0.03, 0.035, 0.04])}
    (_, bonds), = lowered(trades, curves)[0]
    market = {name: curve.to_yield_curve() for name, curve in curves.items()}
    return bonds, market


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="cuda,futhark-cuda,multicore")
    parser.add_argument("--classes", default=",".join(CLASSES))
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every book's size (e.g. 0.1 on a CPU)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shared", action="store_true", help="one model (sigma 0.01) for every bond of a class")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import trinom
    from trinom.lattice.lowering import lower_bonds

    rows = []
    print(f"{'class':>10} {'trees':>7} {'engine':>14} {'median s':>9} {'kernel s':>9} {'Gnode/s':>8} {'max diff':>9}",
          flush=True)
    for name in args.classes.split(","):
        steps, a, count = CLASSES[name]
        bonds, curves = book(steps, a, max(1, int(count * args.scale)), shared=args.shared)
        lowered = lower_bonds(bonds, tuple(curves))
        n, jmax = lowered.shape()
        widths = 2 * np.minimum(n, jmax) + 1
        work = float(lowered.work().sum())
        first = None
        for engine in args.engines.split(","):
            options = ENGINES[engine]
            try:
                result = trinom.price(bonds, curves, **options)
            except Exception as exc:  # an engine that cannot run here is reported, not timed
                print(f"{name:>10} {len(bonds):>7} {engine:>14} cannot run: {str(exc).splitlines()[0][:120]}")
                continue
            times, kernel = [], []
            for _ in range(args.rounds):
                timing: dict[str, Any] = {}
                t0 = time.perf_counter()
                trinom.price(bonds, curves, **options, **({"timing": timing} if options["backend"] == "cuda" else {}))
                times.append(time.perf_counter() - t0)
                if "kernel_ms" in timing:
                    kernel.append(timing["kernel_ms"] / 1e3)
            first = result.price if first is None else first
            row = {"class": name, "shared": args.shared, "trees": len(bonds), "width_min": int(widths.min()),
                   "width_max": int(widths.max()),
                   "engine": engine, "ran": str(result.engine), "median_s": statistics.median(times), "work": work,
                   "kernel_s": statistics.median(kernel) if kernel else None,
                   "max_diff": float(np.max(np.abs(result.price - first)))}
            row["gnode_s"] = work / row["median_s"] / 1e9
            rows.append(row)
            kernel_text = f"{row['kernel_s']:9.4f}" if kernel else f"{'-':>9}"
            print(f"{name:>10} {len(bonds):>7} {engine:>14} {row['median_s']:9.4f} {kernel_text} {row['gnode_s']:8.1f} "
                  f"{row['max_diff']:9.2e}", flush=True)
    if args.out:
        args.out.write_text(json.dumps({"machine": platform.machine(), "node": platform.node(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
