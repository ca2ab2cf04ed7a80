"""``trinom price``: a book file (thesis arrays, CSV, Parquet; file to file on Dask) or a trades file."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ..analytics.scenarios import read_scenarios
from ..api import price
from ..distributed import parquet_files
from ..errors import InputError
from ..instruments.trades import TYPES
from ..io import parquet
from ..io.book_files import check_curve_source, input_files, option_curve
from ..io.files import PRICE_FORMATS, TABLE_FORMATS, check_outputs, output_format
from ..io.result_files import write_price_file, write_scenario_grid, write_table_file
from ..result import EXTRA_COLUMNS, Prices
from .arguments import ProgressBar, book_kind, check_dask, dask_client, failures, read_book
from .trade_files import is_trades_file, read_inputs, recalibration_of, say_warnings, trade_inputs, unused_trade_options


def price_parquet(args: argparse.Namespace, bonds: bool, folder: bool) -> int:
    """A Parquet book into Parquet prices, file to file (:func:`trinom.parquet_files.price_parquet_file`): one row
    group at a time in this process, or with ``--dask`` by tasks of row groups on the workers, each writing its
    own part; ``folder``: ``--out`` is a folder of parts."""
    parquet_files.inspect(args.portfolio)  # its columns checked before a cluster starts
    total = parquet.rows(args.portfolio)
    bar = ProgressBar(f"pricing {total} rows of {args.portfolio.name}", unit="rows", scale=1.0)
    curves = option_curve(args.yield_file, None) if args.yield_file is not None and not bonds else None
    with dask_client(args.dask) as client:
        run = parquet_files.price_parquet_file(
            args.portfolio, f"{args.out}{os.sep}" if folder else args.out, client=client, curves=curves,
            backend=args.backend, precision=args.precision, target=args.target, device=args.device,
            errors=args.errors, max_width=args.max_width, max_steps=args.max_steps, progress=bar)
    print(f"trinom: {total} rows priced in {run.seconds:.3f} s{failures(run.failed, total, 'rows')} -> "
          f"{args.out}{os.sep if folder else ''}", file=sys.stderr)
    return 0


def cmd_price(args: argparse.Namespace) -> int:
    if is_trades_file(args.portfolio):  # dated trades
        return cmd_price_trades(args)
    if getattr(args, "accuracy", None) is not None:
        raise InputError([(None, "--accuracy", "--accuracy chooses dated trades' steps a year: give a trades file "
                           "(a tree-step book has its steps)")])
    if getattr(args, "settlement", None) is not None:
        raise InputError([(None, "--settlement", "--settlement settles dated bonds apart from --as-of: give a trades "
                           "file (a tree-step book has no dates)")])
    unused_trade_options(args)
    inputs = [*input_files(args.portfolio), args.yield_file, args.scenarios]
    file_to_file = bool(args.out) and parquet.is_parquet(args.portfolio) and not args.scenarios
    folder = file_to_file and (args.out_folder or args.out.is_dir())  # a folder of Parquet parts
    if args.out:  # checked before any reading or pricing: an hour of work must not end in a bad path
        if args.out_folder and not folder:
            raise InputError([(None, "--out", f"--out {args.out}{os.sep}: a folder of Parquet parts is written for a "
                               "Parquet book priced without --scenarios; give a file (.out, .csv or .parquet)")])
        if folder:
            parquet_files.check_out(args.out, args.portfolio, folder=True, what="--out")
        else:
            if args.scenarios:
                output_format(args.out, TABLE_FORMATS, "--out", "a scenario grid (id,scenario,price,error)")
            else:
                output_format(args.out, PRICE_FORMATS, "--out", "prices")
            check_outputs([("--out", args.out)], inputs)
    check_dask(args.dask)
    bonds = book_kind(args)
    check_curve_source(bonds, args.yield_file)
    if file_to_file and (folder or parquet.is_parquet(args.out)):
        return price_parquet(args, bonds, folder)
    book = read_book(args, bonds)
    instruments, curves = book.instruments, book.curves
    scenario_names: list[str] = []
    if args.scenarios:
        scenario_names, curves = read_scenarios(args.scenarios, curves)
    if args.target in ("opencl", "pyopencl") and len(instruments):  # compiling the kernels is not pricing: shown apart
        start = time.perf_counter()
        price(instruments[:1], curves, backend=args.backend, target=args.target, precision=args.precision,
              device=args.device, errors="mask")
        print(f"trinom: OpenCL kernels compiled (or loaded from cache) in {time.perf_counter() - start:.1f} s",
              file=sys.stderr)
    start = time.perf_counter()
    bar = ProgressBar(f"pricing {len(instruments)} {book.kind}" + (f" in {len(scenario_names)} scenarios"
                                                                      if scenario_names else ""))
    with dask_client(args.dask) as client:
        result = price(instruments, curves, backend=args.backend, target=args.target, precision=args.precision,
                       device=args.device, errors=args.errors, max_width=args.max_width, max_steps=args.max_steps,
                       progress=None if client is not None else bar, client=client)
    elapsed = time.perf_counter() - start
    if scenario_names:
        write_scenario_grid(args.out, result, book.ids, scenario_names)
    elif args.out:
        write_price_file(args.out, result, book.ids, bonds=book.bonds)
    else:
        if book.bonds:
            print("dirty\tclean")
        for k in range(len(result)):
            note = f"\t{result.error[k]}" if result.error[k] else ""
            print(f"{result.price[k]:.17g}" + (f"\t{result.clean[k]:.17g}" if book.bonds else "") + note)
    bad = int((result.error != "").sum())
    where = f" -> {args.out}" if args.out else ""
    print(f"trinom: {len(instruments)} {book.kind} priced on {result.engine or args.backend} ({args.precision}) in "
          f"{elapsed:.3f} s{f', {bad} rows with errors' if bad else ''}{where}", file=sys.stderr)
    return 0


def write_prices(path: Path | None, result: Prices, ids: list[str]) -> None:
    """Prices ``id,price,clean,accrued,error,value`` to ``path`` (.csv or .parquet, written whole or not at all), or
    stdout: ``price``, ``clean`` and ``accrued`` per 100 of each trade's notional, ``value`` in its currency; priced
    to an accuracy, ``steps_per_year,accuracy`` after them (the grid and the error estimate per 100); then the
    :data:`~trinom.result.EXTRA_COLUMNS` the result has: ``vol_price`` (a cap's or floor's price per 100 off its
    quoted volatility), ``settlement,settlement_clean,settlement_accrued`` (a bond settling apart)."""
    import pandas as pd

    table = pd.DataFrame({"id": ids, "price": result.price, "clean": result.clean, "accrued": result.accrued,
                          "error": result.error, "value": result.value})
    if result.steps_per_year is not None and result.accuracy is not None:
        table["steps_per_year"], table["accuracy"] = result.steps_per_year, result.accuracy
    for name in EXTRA_COLUMNS:
        if getattr(result, name) is not None:
            table[name] = getattr(result, name)
    if path is None:
        table.to_csv(sys.stdout, index=False, float_format="%.17g")
    else:
        write_table_file(path, table)


def cmd_price_trades(args: argparse.Namespace) -> int:
    if args.dask is not None:
        raise InputError([(None, "--dask", "--dask is not yet taken with a trades file: price a tree-step book")])
    if args.out is not None:
        if args.scenarios:
            output_format(args.out, TABLE_FORMATS, "--out", "a scenario grid (id,scenario,price,error)")
        elif output_format(args.out, PRICE_FORMATS, "--out", "prices") == "out":
            raise InputError([(None, "--out", "trades' prices are a table (id,price,clean,accrued,error,value): write "
                               ".csv or .parquet")])
        check_outputs([("--out", args.out)], [*trade_inputs(args), *(p for p in (args.scenarios,) if p is not None)])
    trades, curves = read_inputs(args)
    if args.settlement is not None:
        trades = trades.with_settlement(args.settlement)
    recalibration = recalibration_of(args)
    names: list[str] = []
    scenarios = None
    if args.scenarios:
        from ..analytics.scenarios import read_dated_scenarios

        names, scenarios = read_dated_scenarios(args.scenarios, curves)
    start = time.perf_counter()
    result = price(trades, curves, backend=args.backend, target=args.target, precision=args.precision,
                   device=args.device, errors=args.errors, max_width=args.max_width, max_steps=args.max_steps,
                   scenarios=scenarios, recalibrate=recalibration, accuracy=getattr(args, "accuracy", None))
    elapsed = time.perf_counter() - start
    say_warnings(result, trades.ids)
    if scenarios is not None:
        write_scenario_grid(args.out, result, trades.ids, names)
    else:
        write_prices(args.out, result, trades.ids)
    bad = int((result.error != "").sum())
    types = ["" if v is None else str(v).strip().lower() for v in trades.column("type").tolist()]
    kinds = ", ".join(f"{types.count(name)} {name}s" for name in TYPES if name in types)
    print(f"trinom: {len(trades)} trades ({kinds}) as of {trades.as_of} priced on {result.engine} ({args.precision}) "
          f"in {elapsed:.3f} s{f', {bad} rows with errors' if bad else ''}"
          f"{f' -> {args.out}' if args.out else ''}", file=sys.stderr)
    return 0
