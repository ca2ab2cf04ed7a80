"""``trinom oas``: option-adjusted spreads of a bond file or a trades file from market prices."""

from __future__ import annotations

import argparse
import sys
import time

from ..analytics.bond_market_prices import read_market_prices
from ..analytics.oas import oas
from ..errors import InputError
from ..io.book_files import input_files
from ..io.files import TABLE_FORMATS, check_outputs, output_format
from ..io.result_files import write_table_file
from .arguments import ProgressBar, book_kind, failures, read_book
from .trade_files import is_trades_file, read_inputs, say_summary, trade_inputs, unused_trade_options


def cmd_oas(args: argparse.Namespace) -> int:
    if is_trades_file(args.portfolio):
        return cmd_oas_trades(args)
    unused_trade_options(args)
    if args.format == "options":
        raise InputError([(None, "--format", "trinom oas solves the spreads of bonds; got --format options")])
    output_format(args.out, TABLE_FORMATS, "--out", "the OAS table (id,oas,price,iterations,error)")
    check_outputs([("--out", args.out)], [*input_files(args.portfolio), args.market_prices])
    if not book_kind(args):
        raise InputError([(None, "file", f"{args.portfolio} holds options; trinom oas solves the spreads of bonds")])
    book = read_book(args, True)
    market, unpriced = read_market_prices(args.market_prices, book.ids, args.errors)
    start = time.perf_counter()
    bar = ProgressBar(f"OAS of {len(book.ids)} bonds", unit="bonds done", scale=1)
    result = oas(book.instruments, book.curves, market, price_type="dirty" if args.dirty else "clean",
                 backend=args.backend, target=args.target, precision=args.precision, max_width=args.max_width,
                 max_steps=args.max_steps, search=args.search, progress=bar, errors=args.errors)
    table = result.to_frame(book.ids)
    for row, message in unpriced.items():  # the market-price file's own word on a bond it gives no usable price
        table.loc[row, "error"] = message
    write_table_file(args.out, table)
    failed = int((table.error != "").sum())
    print(f"trinom: OAS of {len(book.ids)} bonds in {time.perf_counter() - start:.3f} s ({result.pricings} engine "
          f"call{'s' if result.pricings != 1 else ''}){failures(failed, len(book.ids), 'bonds')} -> {args.out}",
          file=sys.stderr)
    return 0


def cmd_oas_trades(args: argparse.Namespace) -> int:
    from ..analytics.bond_market_prices import read_market_prices
    from ..analytics.oas import oas

    output_format(args.out, TABLE_FORMATS, "--out", "the OAS table")
    check_outputs([("--out", args.out)], [*trade_inputs(args), args.market_prices])
    trades, curves = read_inputs(args)
    market, unpriced = read_market_prices(args.market_prices, trades.ids, args.errors)
    result = oas(trades, curves, market, price_type="dirty" if args.dirty else "clean", backend=args.backend,
                 target=args.target, precision=args.precision, search=args.search, errors=args.errors,
                 max_width=args.max_width, max_steps=args.max_steps)
    table = result.to_frame(trades.ids)
    for row, message in unpriced.items():
        table.loc[row, "error"] = message
    write_table_file(args.out, table)
    say_summary(len(trades), int((table.error != "").sum()), "OAS", args.out)
    return 0
