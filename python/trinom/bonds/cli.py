"""The bond side of the ``trinom`` command: ``info``, ``generate`` and the bond price table."""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import auto
from ..api import price
from ..constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH, PUT
from ..files import replacing
from ..io import write_prices
from ..lattice import work as bond_work
from ..parquet import is_parquet, write_book
from ..portfolio import describe
from ..result import Prices
from ..textdata import format_float
from .generator import DATASETS, generate_bonds
from .io import read_bonds, write_bonds


def write_bond_prices(path: Path, result: Prices, ids: Sequence[object] | None = None) -> None:
    """``.csv``: ``id,dirty,clean,accrued,error`` (``ids``: the input's bond ids, default the row numbers);
    anything else: the dirty prices as one array (``.out``)."""
    if path.suffix.lower() != ".csv":
        write_prices(path, result.price)
        return
    with replacing([path]) as (temporary,), open(temporary, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "dirty", "clean", "accrued", "error"])
        for k in range(len(result)):
            cells = ["" if np.isnan(v) else format_float(float(v), digits17=True)
                     for v in (result.price[k], result.clean[k], result.accrued[k])]
            writer.writerow([k if ids is None else ids[k], *cells, result.error[k]])


def info(path: Path, max_width: int = DEFAULT_MAX_WIDTH, max_steps: int = DEFAULT_MAX_STEPS) -> int:
    """``trinom info`` on a bond file."""
    bonds, curves = read_bonds(path, "mask")  # info lists every problem
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
    if is_parquet(args.out):
        write_book(args.out, bonds, curves)
    else:
        write_bonds(bonds, curves, args.out)
    print(f"trinom: wrote {len(bonds)} bonds ({dataset}: {DATASETS[dataset][1]}) to {args.out}", file=sys.stderr)
    if prices is not None:
        write_bond_prices(args.prices, prices)
        print(f"trinom: wrote reference prices to {args.prices}", file=sys.stderr)
    return 0
