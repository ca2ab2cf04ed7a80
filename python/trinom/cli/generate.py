"""``trinom generate``: a synthetic book of the thesis' option or the paper's bond distributions, and its prices."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..api import price
from ..errors import InputError
from ..io import option_books as io
from ..io.bond_books import companions, write_bonds
from ..io.files import BOOK_FORMATS, PRICE_FORMATS, check_outputs, output_format
from ..io.result_files import write_price_file
from ..io.row_ids import row_numbers
from ..model.curve import YieldCurve
from ..paper.bond_generator import DATASETS, generate_bonds
from ..paper.option_generator import generate


def generate_outputs(args: argparse.Namespace) -> None:
    """``generate``'s files, checked before any work: each suffix one of its formats, no two outputs one file (a
    bond CSV's cash-flow and curve files included), and the options given apply to what is generated."""
    bonds = args.instrument == "bonds"
    book_format = output_format(args.out, BOOK_FORMATS, "--out", "a book")
    outputs: list[tuple[str, Path]] = [("--out", args.out)]
    if bonds and book_format == "csv":
        cash_flows, curves = companions(args.out)
        outputs += [("--out's cash-flow file", cash_flows), ("--out's curve file", curves)]
    if args.prices:
        output_format(args.prices, PRICE_FORMATS, "--prices", "prices")
        outputs.append(("--prices", args.prices))
    check_outputs(outputs)
    if args.with_curve and (bonds or book_format == "csv"):
        raise InputError([(None, "--with-curve", "--with-curve adds the thesis curve to an option book written as .in "
                           "or .parquet" + ("; a bond book always holds its curves" if bonds else
                                            f"; a CSV option book holds no curve ({args.out})"))])
    if args.skew is not None and bonds:
        raise InputError([(None, "--skew", "--skew applies to the thesis' skewed option distributions; the paper's "
                           "bond datasets fix their own shapes")])


def cmd_generate(args: argparse.Namespace) -> int:
    generate_outputs(args)
    if args.instrument == "bonds":
        return generate_bond_book(args)
    skew = 1.0 if args.skew is None else args.skew
    portfolio = generate(args.distribution, 65536 if args.size is None else args.size, skew_percent=skew, seed=args.seed)
    curve = YieldCurve.thesis() if args.with_curve else None
    prices = price(portfolio, backend="reference") if args.prices else None  # before any file is written
    io.write_portfolio(portfolio, args.out, curve)
    print(f"trinom: wrote {len(portfolio)} options ({args.distribution}) to {args.out}", file=sys.stderr)
    if prices is not None:
        write_price_file(args.prices, prices, row_numbers(len(portfolio)), "--prices")
        print(f"trinom: wrote reference prices to {args.prices}", file=sys.stderr)
    return 0


def generate_bond_book(args: argparse.Namespace) -> int:
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
