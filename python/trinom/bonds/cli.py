"""The bond side of the ``trinom`` command: ``info`` and ``generate`` (the bond price table:
:func:`trinom.result_files.write_bond_prices`, still importable from here)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import auto
from ..api import price
from ..constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH, PUT
from ..curve import YieldCurve
from ..instruments.bond import BondPortfolio
from ..instruments.option import describe
from ..lattice import work as bond_work
from ..result_files import write_bond_prices, write_price_file
from ..row_ids import row_numbers
from .generator import DATASETS, generate_bonds
from .io import write_bonds


def info(path: Path, bonds: BondPortfolio, curves: Sequence[YieldCurve], max_width: int = DEFAULT_MAX_WIDTH,
         max_steps: int = DEFAULT_MAX_STEPS) -> int:
    """``trinom info`` on the bonds read from ``path`` (read with ``errors="mask"``: info lists every problem)."""
    problems = bonds.validate(curves, max_width, max_steps)
    good = bonds.good_rows(curves, max_width, max_steps)
    sub = bonds if good.size == len(bonds) else bonds[good]
    styles = {"European": sub.first_exercise == sub.last_exercise}
    styles["American"] = ~styles["European"] & (sub.exercise_frequency == 1)
    styles["Bermudan"] = ~styles["European"] & (sub.exercise_frequency > 1)
    print(f"{path}: {len(bonds)} bonds ({int((bonds.option_type == PUT).sum())} puttable), {len(curves)} yield curves, "
          f"{len(problems)} problems")
    print("  " + ", ".join(f"{name} {int(mask.sum())}" for name, mask in styles.items())
          + f"; zero-coupon {int((sub.cashflow_count == 1).sum())}")
    if len(sub):
        for what, values in (("width", sub.widths()), ("height", sub.height())):
            s = describe(values)
            print(f"  {what:6s}: min {s['min']:.0f}  max {s['max']:.0f}  mean {s['mean']:.2f}  "
                  f"std {s['std']:.2f}  skewness {s['skewness']:.2f}")
        print(f"  work  : {float(bond_work(sub.height(), sub.jmax()).sum()):.4g} node updates (both passes)")
        print(f"  auto backend: {auto.describe_choice(sub.lower(tuple(map(str, range(len(curves))))))}")
    for row, _field, message in problems[:20]:
        print(f"  row {row}: {message}")
    return 0


def generate(args: argparse.Namespace) -> int:
    """``trinom generate --instrument bonds DATASET``."""
    dataset = args.distribution.upper()
    if dataset not in DATASETS:
        raise ValueError(f"unknown bond dataset {args.distribution!r}; choose one of {', '.join(DATASETS)}")
    size = args.size if args.size is not None else DATASETS[dataset][0]
    bonds, curves = generate_bonds(dataset, size, seed=args.seed)
    prices = price(bonds, curves, backend="reference") if args.prices else None  # before any file is written
    write_bonds(bonds, curves, args.out)  # .in, the CSV trio or .parquet, by the suffix
    print(f"trinom: wrote {len(bonds)} bonds ({dataset}: {DATASETS[dataset][1]}) to {args.out}", file=sys.stderr)
    if prices is not None:
        write_price_file(args.prices, prices, row_numbers(len(bonds)), "--prices")
        print(f"trinom: wrote reference prices to {args.prices}", file=sys.stderr)
    return 0


__all__ = ["generate", "info", "write_bond_prices"]
