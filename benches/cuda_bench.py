"""Benchmark of the three CUDA backends on the thesis datasets (writes JSON and a Markdown table).

Times are medians over ``--runs`` calls after ``--warmup`` calls: ``kernel`` is the pricing
kernels (cudaEvent, summed over chunks), ``e2e`` the wall clock of the backend's ``price()``
from Python (validated Portfolio in host memory to prices in host memory: conversions, upload,
GPU geometry/sorting, kernels, download and scatter to input order; ``trinom.price``'s input
validation is not included). Work W follows docs/model.md §1.11: per option 2 * sum_{i<n} (2 min(i, jmax) + 1).

    PYTHONPATH=python python3 benches/cuda_bench.py --json out.json            # main table
    PYTHONPATH=python python3 benches/cuda_bench.py --ablation --json abl.json # cuda-option padding/sort
    PYTHONPATH=python python3 benches/cuda_bench.py --smoke                    # tiny run (sanitizers)
    python3 benches/cuda_bench.py --report out.json abl.json                   # Markdown tables
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from trinom import io
from trinom.engines import get
from trinom.lattice.geometry import work

BIG = ("0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
       "6_SKEWEDCONSTWIDTH")
#: docs/anchors.md: the thesis' best kernel time (ms) per dataset on the H100 (bold figures), f32 and f64.
BOLD_MS = {
    "0_UNIFORM": (3.39, 6.18), "1_RAND": (194.1, 295.5), "2_RANDCONSTHEIGHT": (14.70, 22.95),
    "3_RANDCONSTWIDTH": (31.51, 52.09), "4_SKEWED": (19.27, 30.15), "5_SKEWEDCONSTHEIGHT": (14.85, 23.41),
    "6_SKEWEDCONSTWIDTH": (14.87, 23.35),
}
BACKENDS = ("cuda", "cuda-multi", "cuda-option")
TOLERANCE = {"f64": 1e-11, "f32": 1.2e-4}


def data_dir() -> Path:
    """The thesis data shipped in the repository (data/thesis), unpacked by tools/make_data.py."""
    tools = Path(__file__).resolve().parent.parent / "tools"
    sys.path.insert(0, str(tools))
    from make_data import unpack

    return unpack() / "thesis"


#: The kernel module of each CUDA engine (their price() takes the timing dict).
KERNELS = {"cuda": "trinom.engines.cuda", "cuda-option": "trinom.engines.cuda_option",
           "cuda-multi": "trinom.engines.cuda_multi"}


def measure(backend: str, portfolio, curve, precision: str, runs: int, warmup: int, **options) -> dict:
    module = importlib.import_module(KERNELS[backend])
    for _ in range(warmup):
        module.price(portfolio, curve, precision, **options)
    e2e, kernel, device, library = [], [], [], []
    prices = None
    for _ in range(runs):
        timing: dict = {}
        start = time.perf_counter()
        prices = module.price(portfolio, curve, precision, timing=timing, **options)
        e2e.append((time.perf_counter() - start) * 1e3)
        kernel.append(timing["kernel_ms"])
        device.append(timing["device_ms"])
        library.append(timing["library_ms"])
    return {"e2e_ms": statistics.median(e2e), "kernel_ms": statistics.median(kernel),
            "device_ms": statistics.median(device), "library_ms": statistics.median(library),
            "e2e_all": e2e, "kernel_all": kernel, "prices": prices}


def report(paths: list[Path]) -> None:
    """Markdown tables of saved JSON results (main table and/or ablation)."""
    for path in paths:
        data = json.loads(path.read_text())
        rows = data["rows"]
        print(f"<!-- {path.name}: {data['device']}; {' '.join(data['argv'])} -->")
        if "padding" in rows[0]:
            print("| dataset | precision | padding | sorted | kernel ms | e2e ms |")
            print("| --- | --- | --- | --- | --- | --- |")
            for r in rows:
                print(f"| {r['dataset']} | {r['precision']} | {r['padding']} | {'yes' if r['sort'] else 'no'} "
                      f"| {r['kernel_ms']:.2f} | {r['e2e_ms']:.2f} |")
            continue
        print("| dataset | precision | backend | kernel ms | e2e ms | Gnode/s (kernel) | Gnode/s (e2e) "
              "| bold ms | speed-up e2e | max error |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            print(f"| {r['dataset']} | {r['precision']} | {r['backend']} | {r['kernel_ms']:.3f} | {r['e2e_ms']:.3f} "
                  f"| {r['gnodes_kernel']:.0f} | {r['gnodes_e2e']:.0f} | {r.get('bold_ms', '')} "
                  f"| {r.get('speedup_e2e', 0):.1f}x | {r['max_error']:.1e} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="*", default=list(BIG))
    parser.add_argument("--backends", nargs="*", default=list(BACKENDS))
    parser.add_argument("--precisions", nargs="*", default=["f32", "f64"])
    parser.add_argument("--runs", type=int, default=10, help="timed runs of the cuda backend (others: a third)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--ablation", action="store_true", help="cuda-option padding x sorting instead")
    parser.add_argument("--smoke", action="store_true", help="book and options-1000 only, one run, checked")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--report", nargs="+", type=Path, help="print Markdown tables of saved JSON files")
    args = parser.parse_args()
    if args.report:
        report(args.report)
        return

    thesis = data_dir()
    curve = io.read_yield_curve(thesis / "yield.in")
    usable, device = get("cuda").available()
    if not usable:
        raise SystemExit(device)
    if args.smoke:
        args.datasets, args.runs, args.warmup = ["book", "options-1000"], 1, 0
    rows, failures = [], []
    for name in args.datasets:
        portfolio = io.read_portfolio(thesis / f"{name}.in")
        geometry = portfolio.geometry()
        W = float(work(geometry.n, geometry.jmax).sum())
        for precision in args.precisions:
            expected = io.read_prices(thesis / ("out" if precision == "f64" else "out32") / f"{name}.out")
            configs: list[tuple[str, dict]]
            if args.ablation:
                configs = [("cuda-option", {"padding": p, "sort": s}) for p in ("global", "block", "warp")
                           for s in (True, False)]
            else:
                configs = [(b, {}) for b in args.backends]
            for backend, options in configs:
                runs = args.runs if backend == "cuda" else max(1, args.runs // 3)
                m = measure(backend, portfolio, curve, precision, runs, args.warmup if runs > 1 else 1, **options)
                error = float(np.abs(m.pop("prices").astype(np.float64) - expected).max())
                if not error <= TOLERANCE[precision]:
                    failures.append(f"{backend} {options} {name} {precision}: max error {error:.3e}")
                row = {"dataset": name, "precision": precision, "backend": backend, **options, "options": len(portfolio),
                       "work": W, "max_error": error, **m}
                row["gnodes_kernel"] = W / m["kernel_ms"] / 1e6
                row["gnodes_e2e"] = W / m["e2e_ms"] / 1e6
                if name in BOLD_MS:
                    bold = BOLD_MS[name][0 if precision == "f32" else 1]
                    row["bold_ms"] = bold
                    row["speedup_e2e"] = bold / m["e2e_ms"]
                    row["speedup_kernel"] = bold / m["kernel_ms"]
                rows.append(row)
                extra = " ".join(f"{k}={v}" for k, v in options.items())
                print(f"{name:20s} {precision} {backend:11s} {extra:24s} kernel {m['kernel_ms']:9.3f} ms  "
                      f"e2e {m['e2e_ms']:9.3f} ms  {row['gnodes_kernel']:7.1f} Gnode/s  err {error:.1e}"
                      + (f"  x{row['speedup_e2e']:.1f} vs bold" if "speedup_e2e" in row else ""), flush=True)
    device = get("cuda").available()[1]  # names the GPU once the context exists
    if args.json:
        args.json.write_text(json.dumps({"device": device, "argv": sys.argv, "rows": rows}, indent=1))
    if failures:
        print("FAILURES:\n" + "\n".join(failures))
        raise SystemExit(1)
    print(f"ok: {len(rows)} measurements on {device}")


if __name__ == "__main__":
    main()
