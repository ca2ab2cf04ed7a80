#!/usr/bin/env python3
"""Write data/NAME.in (the Futhark programs' 10-array input) and data/NAME.out (reference prices).

The thesis' and the paper's files ship with the repository, xz-compressed, in data/thesis/ and
data/paper/ (provenance and licence: data/README.md). ``unpack`` decompresses each ``X.xz`` into
``X`` beside it (git-ignored; only where missing or older), so that every tool reads plain files;
the tests (tests/conftest.py) and the benchmarks call it too.

From the thesis datasets in data/thesis: each input is converted, and its prices are computed by
trinom's reference pricer and checked against the thesis' float64 outputs (within 1e-12). The
65536-option datasets take minutes to price on two cores, so for those the thesis' outputs are
copied instead (the reference tests check them against our pricer).

The bond data: data/bonds-NAME.in (the 19-array file, which is also the input of fut/bonds.fut's
``bonds64``) and data/bonds-NAME.out (reference prices), from data/paper; the sample's reference
prices are checked against the paper's out64 (bit for bit, 1e-12 here).
Files that are newer than their sources are left alone.
"""

from __future__ import annotations

import argparse
import lzma
import os
import sys
from pathlib import Path

import numpy as np
import trinom
from trinom import io

#: The repository's data/ folder: the shipped thesis/ and paper/, and what this script writes.
DATA = Path(__file__).resolve().parent.parent / "data"
#: Priced here and checked against the thesis' outputs.
SMALL = ["book", "options-1000", "0_UNIFORM_1000", "1_RAND_1000", "2_RANDCONSTHEIGHT_1000", "3_RANDCONSTWIDTH_1000"]
#: Copied with the thesis' outputs (benchmarks).
LARGE = ["0_UNIFORM_10000", "1_RAND_10000", "2_RANDCONSTHEIGHT_10000", "3_RANDCONSTWIDTH_10000",
         "0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
         "6_SKEWEDCONSTWIDTH", "options-60000"]
TOLERANCE = 1e-12


def up_to_date(target: Path, *sources: Path) -> bool:
    return target.exists() and all(target.stat().st_mtime >= s.stat().st_mtime for s in sources)


def unpack(data: Path = DATA) -> Path:
    """Decompress every shipped ``data/{thesis,paper}/**/X.xz`` into ``X`` where missing or older.

    Each file is written under a temporary name and renamed, so concurrent callers (make data,
    a test run) never see a partial file. Returns ``data``, the folder holding thesis/ and paper/.
    """
    for packed in sorted([*data.glob("thesis/**/*.xz"), *data.glob("paper/**/*.xz")]):
        target = packed.with_suffix("")
        if up_to_date(target, packed):
            continue
        partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        partial.write_bytes(lzma.decompress(packed.read_bytes()))
        os.replace(partial, target)
    return data


def from_thesis(thesis: Path, out_dir: Path) -> None:
    curve = io.read_yield_curve(thesis / "yield.in")
    for name in SMALL + LARGE:
        source, reference = thesis / f"{name}.in", thesis / "out" / f"{name}.out"
        target_in, target_out = out_dir / f"{name}.in", out_dir / f"{name}.out"
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


def bonds_from_paper(paper: Path, out_dir: Path) -> None:
    from trinom.engines import bonds_reference as reference
    from trinom.io import bond_books as bond_io

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA,
                        help="folder holding the shipped thesis/ and paper/ (default: the repository's data/)")
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args()
    if not (args.data / "thesis" / "yield.in.xz").exists() and not (args.data / "thesis" / "yield.in").exists():
        sys.exit(f"make_data: {args.data}/thesis holds no yield.in(.xz): not the repository's data/ folder")
    unpack(args.data)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"data: writing {args.out}/")
    from_thesis(args.data / "thesis", args.out)
    bonds_from_paper(args.data / "paper", args.out)


if __name__ == "__main__":
    main()
