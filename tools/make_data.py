#!/usr/bin/env python3
"""Write data/NAME.in (the Futhark programs' 10-array input) and data/NAME.out (reference prices).

Also the bond data of issue 7: data/bonds-NAME.in (the 19-array file, which is also the input
of fut/bonds.fut's ``bonds64``) and data/bonds-NAME.out (reference prices), from SHARED/paper;
the sample's reference prices are checked against the paper's out64 (bit for bit, 1e-12 here).

From the thesis datasets in SHARED/thesis: each input is converted, and its prices are
computed by trinom's reference pricer and checked against the thesis' float64 outputs (within
1e-12). The 65536-option datasets take minutes to price on two cores, so for those the
thesis' outputs are copied instead (the reference tests check them against our pricer).
Without SHARED, datasets of the same shapes are generated with ``trinom.generator``.
Files that are newer than their sources are left alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import trinom
from trinom import io

#: Priced here and checked against the thesis' outputs.
SMALL = ["book", "options-1000", "0_UNIFORM_1000", "1_RAND_1000", "2_RANDCONSTHEIGHT_1000", "3_RANDCONSTWIDTH_1000"]
#: Copied with the thesis' outputs (benchmarks).
LARGE = ["0_UNIFORM_10000", "1_RAND_10000", "2_RANDCONSTHEIGHT_10000", "3_RANDCONSTWIDTH_10000",
         "0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
         "6_SKEWEDCONSTWIDTH", "options-60000"]
TOLERANCE = 1e-12


def up_to_date(target: Path, *sources: Path) -> bool:
    return target.exists() and all(target.stat().st_mtime >= s.stat().st_mtime for s in sources)


def from_shared(thesis: Path, out_dir: Path) -> None:
    curve = io.read_yield_curve(thesis / "yield.in")
    for name in SMALL + LARGE:
        source, reference = thesis / f"{name}.in", thesis / "out" / f"{name}.out"
        target_in, target_out = out_dir / f"{name}.in", out_dir / f"{name}.out"
        if not source.exists():
            print(f"  {name:24s} skipped: {source} missing")
            continue
        if up_to_date(target_in, source) and up_to_date(target_out, reference):
            print(f"  {name:24s} up to date")
            continue
        portfolio = io.read_portfolio(source)
        io.write_portfolio(portfolio, target_in, curve)
        expected = io.read_prices(reference)
        if name in SMALL:
            prices = trinom.price(portfolio, curve, backend="reference")
            error = float(np.max(np.abs(prices - expected)))
            if error > TOLERANCE:
                sys.exit(f"make_data: {name}: reference pricer differs from the thesis output by {error:.3g}")
            io.write_prices(target_out, prices)
            print(f"  {name:24s} written, priced here (max |diff| to thesis {error:.1e})")
        else:
            io.write_prices(target_out, expected)
            print(f"  {name:24s} written, thesis prices copied")


def bonds_from_shared(paper: Path, out_dir: Path) -> None:
    from trinom.bonds import io as bond_io
    from trinom.bonds import reference

    for source in sorted(paper.glob("*.in")):
        name = "bonds-sample" if source.stem.startswith("0_UNIFORM_1_") else f"bonds-{source.stem}"
        target_in, target_out = out_dir / f"{name}.in", out_dir / f"{name}.out"
        if up_to_date(target_in, source) and up_to_date(target_out, source):
            print(f"  {name:24s} up to date")
            continue
        bonds, curves = bond_io.read_bonds(source)
        prices = reference.price(bonds, curves)
        expected_file = paper / "out64" / f"{source.stem}.out"
        note = "priced here"
        if expected_file.exists():
            error = float(np.max(np.abs(prices - io.read_prices(expected_file))))
            if error > TOLERANCE:
                sys.exit(f"make_data: {name}: bond reference differs from the paper's out64 by {error:.3g}")
            note += f" (max |diff| to out64 {error:.1e})"
        bond_io.write_bonds(bonds, curves, target_in)
        io.write_prices(target_out, prices)
        print(f"  {name:24s} written, {note}")


def generated(out_dir: Path) -> None:
    from trinom.generator import generate

    curve = trinom.YieldCurve.thesis()
    for distribution in ("uniform", "random", "random-const-height", "random-const-width"):
        name = f"generated_{distribution}_1000"
        target_in, target_out = out_dir / f"{name}.in", out_dir / f"{name}.out"
        if target_in.exists() and target_out.exists():
            print(f"  {name:32s} up to date")
            continue
        portfolio = generate(distribution, 1000, seed=1)
        io.write_portfolio(portfolio, target_in, curve)
        io.write_prices(target_out, trinom.price(portfolio, curve, backend="reference"))
        print(f"  {name:32s} written")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"), help="folder holding thesis/")
    parser.add_argument("--out", type=Path, default=Path("data"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"data: writing {args.out}/")
    if (args.shared / "thesis" / "yield.in").exists():
        from_shared(args.shared / "thesis", args.out)
    else:
        print(f"  {args.shared}/thesis not found: generating datasets instead")
        generated(args.out)
    if (args.shared / "paper").is_dir():
        bonds_from_shared(args.shared / "paper", args.out)


if __name__ == "__main__":
    main()
