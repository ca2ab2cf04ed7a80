"""``trinom info``: a book's size, tree widths and heights, work, problems and the engine ``auto`` picks."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..engines import auto
from ..instruments.bond import BondPortfolio
from ..instruments.option import describe
from ..io import option_books as io
from ..io import parquet
from ..io.book_files import read_book_file
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH, PUT
from ..lattice.lowering import lower_bonds, lower_options
from ..model.curve import YieldCurve
from ..model.tree_geometry import work as bond_work
from .arguments import book_kind


def cmd_info(args: argparse.Namespace) -> int:
    bonds = book_kind(args)
    if bonds:
        book = read_book_file(args.portfolio, "bonds", "mask")  # info lists every problem
        return bond_info(args.portfolio, book.instruments, book.curves, args.max_width, args.max_steps)
    if parquet.is_parquet(args.portfolio):
        portfolio, curves, _ids = parquet.read_book(args.portfolio, "mask")
        file_curve = curves[0] if curves else None
    else:
        portfolio, file_curve, _ids = io.read_option_book(args.portfolio, "mask")
    problems = portfolio.validate(args.max_width, args.max_steps)
    good = portfolio.good_rows(args.max_width, args.max_steps)
    sub = portfolio[good] if good.size < len(portfolio) else portfolio
    print(f"{args.portfolio}: {len(portfolio)} options ({int((portfolio.option_type == PUT).sum())} puts), "
          f"{len(problems)} problems")
    if file_curve is not None:
        print(f"yield curve in the file: {file_curve}")
    if len(sub):
        stats = sub.stats()
        for what in ("width", "height"):
            s = stats[what]
            print(f"  {what:6s}: min {s['min']:.0f}  max {s['max']:.0f}  mean {s['mean']:.2f}  "
                  f"std {s['std']:.2f}  skewness {s['skewness']:.2f}")
        book = lower_options(sub)
        print(f"  work  : {auto.inspect(book).work:.4g} node updates (both passes)")
        print(f"  auto backend: {auto.describe_choice(book)}")
    for row, _field, message in problems[:20]:
        print(f"  row {row}: {message}")
    return 0


def bond_info(path: Path, bonds: BondPortfolio, curves: Sequence[YieldCurve], max_width: int = DEFAULT_MAX_WIDTH,
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
        print(f"  auto backend: {auto.describe_choice(lower_bonds(sub, tuple(map(str, range(len(curves))))))}")
    for row, _field, message in problems[:20]:
        print(f"  row {row}: {message}")
    return 0
