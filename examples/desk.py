#!/usr/bin/env python3
"""The risk desk's day on one book (issue 14): market prices -> OAS -> risk table -> key-rate durations.

    python examples/desk.py [--bonds 200] [--out examples/out]

Generates a book of the paper's R1 bonds, takes "market" prices 1% either side of the model's, solves
every bond's OAS, reprices at it, computes the risk table at the OAS (dv01, duration, convexity, key-rate
durations, vega, spread duration) and plots the book's key-rate durations by pillar
(benches/plots/krd.png). Writes oas.csv and risk.csv under --out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import trinom
from trinom.bonds.generator import generate_bonds

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bonds", type=int, default=200)
    parser.add_argument("--out", type=Path, default=ROOT / "examples" / "out")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    bonds, curves = generate_bonds("R1", args.bonds, seed=7)
    model = trinom.price(bonds, curves).clean
    market = model * (1 + np.random.default_rng(7).uniform(-0.01, 0.01, len(bonds)))
    result = trinom.oas(bonds, curves, market)
    result.to_frame().to_csv(args.out / "oas.csv", index=False)
    print(f"OAS: {int((result.status == 'converged').sum())} of {len(bonds)} converged in {result.pricings} "
          f"batched pricings")

    at_oas = trinom.BondPortfolio(**{**bonds.as_dict(), "spread": result.oas})
    table = trinom.risk(at_oas, curves)
    table.to_csv(args.out / "risk.csv", index=False)
    summary = table[table.measure != "krd"].groupby("measure").value.describe()[["mean", "min", "max"]]
    print(summary.to_string(float_format=lambda v: f"{v:.4g}"))

    krd = table[table.measure == "krd"].copy()
    krd["days"] = krd.factor.str.split(":").str[1].astype(int)
    weights = krd.base / krd.groupby("days").base.transform("sum")  # the book's value-weighted KRD per pillar
    profile = (krd.value * weights).groupby(krd.days).sum()
    duration = table[table.measure == "duration"]
    book_duration = float((duration.value * duration.base).sum() / duration.base.sum())
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.bar(np.arange(len(profile)), profile.values, color="#3b6ea5")
    ax.set_xticks(np.arange(len(profile)), [f"{d / 365:.2g}y" for d in profile.index], rotation=45)
    ax.set_ylabel("key-rate duration")
    ax.set_title(f"{len(bonds)} R1 bonds at their OAS: key-rate durations sum to {profile.sum():.3f} "
                 f"(duration {book_duration:.3f})", fontsize=9)
    fig.tight_layout()
    plots = ROOT / "benches" / "plots"
    plots.mkdir(exist_ok=True)
    fig.savefig(plots / "krd.png", dpi=110)
    print(f"key-rate durations sum to {profile.sum():.4f}, the book's duration is {book_duration:.4f} -> "
          f"{plots / 'krd.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
