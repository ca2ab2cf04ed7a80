#!/usr/bin/env python3
"""Plots for the README (matplotlib PNGs in benches/plots/).

    python benches/plots.py [JSON ...]     # pytest-benchmark files, e.g. benches/gpu.json benches/cpu.json

* time.png        median time per dataset and backend (log scale), float64 and float32
* gnodes.png      throughput in Gnode/s (docs/model.md §1.11)
* speedup.png     speed-up of each GPU backend over the thesis' best H100 kernel (docs/anchors.md)
* convergence.png |tree - closed form| of the book option against steps per year
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trinom
from report import THESIS_H100_MS, parse_params
from trinom.engines.closed_form import zero_coupon_bond_option

OUT = Path(__file__).resolve().parent / "plots"
DATASETS = ["0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
            "6_SKEWEDCONSTWIDTH"]


def load(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        for bench in json.loads(path.read_text())["benchmarks"]:
            row = parse_params(bench)
            row["label"] = row["backend"] + ("" if row["target"] == "-" else f"/{row['target']}")
            row["median_s"] = bench["stats"]["median"]
            row["gnodes"] = bench.get("extra_info", {}).get("gnodes_per_s")
            rows.append(row)
    return rows


def grouped_bars(ax, rows: list[dict], value: str, precision: str, datasets: list[str]) -> None:
    labels = sorted({r["label"] for r in rows if r["precision"] == precision and r["dataset"] in datasets})
    width = 0.8 / max(len(labels), 1)
    x = np.arange(len(datasets))
    for k, label in enumerate(labels):
        values = []
        for d in datasets:
            match = [r[value] for r in rows if r["label"] == label and r["precision"] == precision and r["dataset"] == d]
            values.append(match[0] if match and match[0] else np.nan)
        ax.bar(x + k * width - 0.4 + width / 2, values, width, label=label)
    ax.set_xticks(x, [d.split("_", 1)[1] if d[0].isdigit() else d for d in datasets], rotation=30, ha="right", fontsize=8)
    ax.set_title(precision)


def two_panels(rows: list[dict], value: str, datasets: list[str], ylabel: str, title: str, filename: str,
               log: bool = False, target_line: float | None = None) -> None:
    """One grouped-bar panel per precision (f64 left, f32 right) of ``value``, saved as ``filename``."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), sharey=True)
    for ax, precision in zip(axes, ("f64", "f32"), strict=True):
        grouped_bars(ax, rows, value, precision, datasets)
        if target_line is not None:
            ax.axhline(target_line, color="k", linestyle="--", linewidth=1, label=f"target: {target_line:g}x")
            ax.axhline(1, color="grey", linewidth=0.8)
        if log:
            ax.set_yscale("log")
    axes[0].set_ylabel(ylabel)
    axes[1].legend(fontsize=7, ncol=2)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(OUT / filename, dpi=110)


def plot_times(rows: list[dict], datasets: list[str]) -> None:
    two_panels([dict(r, ms=r["median_s"] * 1e3) for r in rows], "ms", datasets, "median time, ms (log scale)",
               "Time per dataset (65536 options each), end to end from Python", "time.png", log=True)


def plot_gnodes(rows: list[dict], datasets: list[str]) -> None:
    two_panels(rows, "gnodes", datasets, "Gnode/s (node updates per second, both passes)", "Throughput", "gnodes.png")


def plot_speedup(rows: list[dict]) -> None:
    on_gpu = [r["backend"].startswith("cuda") or r["target"] in ("cuda", "opencl") for r in rows]
    gpu = [r for r, g in zip(rows, on_gpu, strict=True) if g and r["dataset"] in THESIS_H100_MS]
    if not gpu:
        return
    speed = [dict(r, speedup=THESIS_H100_MS[r["dataset"]][0 if r["precision"] == "f32" else 1] / (r["median_s"] * 1e3))
             for r in gpu]
    two_panels(speed, "speedup", DATASETS, "speed-up over the thesis' best H100 kernel (log)",
               "Speed-up over the thesis (its kernel time; ours end to end)", "speedup.png", log=True, target_line=5)


def plot_convergence() -> None:
    steps = np.array([1, 2, 3, 5, 10, 25, 50, 100, 200, 365])
    curve = trinom.YieldCurve.thesis()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for kind in ("put", "call"):
        portfolio = trinom.Portfolio(strike=np.full(steps.size, 63.0), maturity=np.full(steps.size, 9.0),
                                     expiry=np.full(steps.size, 3.0), term_unit=np.full(steps.size, 365),
                                     term_steps=steps, a=np.full(steps.size, 0.1), sigma=np.full(steps.size, 0.01),
                                     option_type=[kind] * steps.size)
        error = np.abs(trinom.price(portfolio, curve, backend="reference").price - zero_coupon_bond_option(portfolio, curve))
        ax.loglog(steps, error, "o-" if kind == "put" else "s--", label=kind, markersize=6 if kind == "put" else 4)
    ax.set_xlabel("tree steps per year")
    ax.set_ylabel("|tree - closed form|")
    ax.set_title("Book option (3y on a 9y bond, X=63): convergence\n"
                 "(put and call errors coincide: the tree keeps put-call parity)", fontsize=9)
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "convergence.png", dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", nargs="*", type=Path)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    rows = load([p for p in args.json if p.exists()])
    if rows:
        datasets = [d for d in DATASETS if any(r["dataset"] == d for r in rows)] or sorted({r["dataset"] for r in rows})
        plot_times(rows, datasets)
        plot_gnodes(rows, datasets)
        plot_speedup(rows)
    plot_convergence()
    print(f"plots written to {OUT}")


if __name__ == "__main__":
    main()
