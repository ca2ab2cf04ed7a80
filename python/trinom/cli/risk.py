"""``trinom risk``: risk measures by bump and reprice of a book file or a trades file, as one long table."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..analytics.risk import MEASURES as RISK_MEASURES
from ..analytics.risk import risk
from ..errors import InputError
from ..io.book_files import check_curve_source, input_files
from ..io.files import TABLE_FORMATS, check_outputs, output_format
from ..io.result_files import write_table_file
from .arguments import ProgressBar, book_kind, failures, read_book
from .trade_files import is_trades_file, read_inputs, recalibration_of, say_summary, trade_inputs, unused_trade_options

#: Risk measures that only bonds have (an option has no spread).
BOND_MEASURES = ("spread_duration",)


def parse_measures(text: str | None) -> list[str] | None:
    """``--measures``: None (every measure that applies to the book), or its names, none empty, unknown or repeated."""
    if text is None:
        return None
    names = [name.strip() for name in text.split(",")]
    choices = ", ".join(RISK_MEASURES)
    if not any(names):
        raise InputError([(None, "--measures", f"--measures {text!r} names no measure; choose from {choices}")])
    problems = [(None, "--measures", f"--measures {text!r}: an empty name between commas") for _ in names[:1] if "" in names]
    problems += [(None, "--measures", f"--measures: unknown measure {name!r}; choose from {choices}")
                 for name in dict.fromkeys(names) if name and name not in RISK_MEASURES]
    problems += [(None, "--measures", f"--measures: {name!r} is given {names.count(name)} times")
                 for name in dict.fromkeys(names) if name and names.count(name) > 1]
    if problems:
        raise InputError(problems)
    return names


def check_measures_apply(measures: list[str] | None, bonds: bool, path: Path) -> None:
    """A named measure that applies to no row of the book (spread_duration on options) is an error; with none
    named, :func:`trinom.risk` computes every one that applies."""
    misplaced = [m for m in measures or () if m in BOND_MEASURES and not bonds]
    if misplaced:
        raise InputError([(None, "--measures", f"--measures {m}: applies to bonds only, and {path} holds options")
                          for m in misplaced])


def cmd_risk(args: argparse.Namespace) -> int:
    named = parse_measures(args.measures)
    if is_trades_file(args.portfolio):
        return cmd_risk_trades(args, named)
    unused_trade_options(args)
    output_format(args.out, TABLE_FORMATS, "--out", "the risk table (id,measure,factor,shift,base,value,error)")
    check_outputs([("--out", args.out)], [*input_files(args.portfolio), args.yield_file])
    bonds = book_kind(args)
    check_curve_source(bonds, args.yield_file)
    check_measures_apply(named, bonds, args.portfolio)
    book = read_book(args, bonds)
    start = time.perf_counter()
    table = risk(book.instruments, book.curves, measures=named, shift=args.shift, sigma_shift=args.sigma_shift,
                 ids=book.ids, backend=args.backend, target=args.target, precision=args.precision,
                 max_width=args.max_width, max_steps=args.max_steps, errors=args.errors,
                 progress=ProgressBar(f"risk of {len(book.ids)} {book.kind}"))
    write_table_file(args.out, table)
    failed = int(table.loc[table.error != "", "id"].nunique()) if len(table) else 0
    print(f"trinom: {len(table)} risk rows of {len(book.ids)} {book.kind} in {time.perf_counter() - start:.3f} s"
          f"{failures(failed, len(book.ids), book.kind)} -> {args.out}", file=sys.stderr)
    return 0


def cmd_risk_trades(args: argparse.Namespace, measures: list[str] | None) -> int:
    from ..analytics.risk import risk

    output_format(args.out, TABLE_FORMATS, "--out", "the risk table")
    check_outputs([("--out", args.out)], trade_inputs(args))
    trades, curves = read_inputs(args)
    table = risk(trades, curves, measures=measures, shift=args.shift, sigma_shift=args.sigma_shift,
                 backend=args.backend, target=args.target, precision=args.precision, errors=args.errors,
                 max_width=args.max_width, max_steps=args.max_steps, recalibrate=recalibration_of(args))
    write_table_file(args.out, table)
    say_summary(len(trades), int(table.loc[table.error != "", "id"].nunique()), "trades' risk", args.out)
    return 0
