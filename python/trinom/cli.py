"""The ``trinom`` command: price, info, generate, backends, demo."""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__, auto, backends, io, parquet
from .api import price
from .bonds import cli as bond_cli
from .bonds.cli import write_bond_prices
from .bonds.generator import generate_bonds
from .bonds.io import bond_ids, companions, is_bond_file, read_bonds
from .bonds.portfolio import BondPortfolio
from .constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH, PUT
from .curve import YieldCurve
from .errors import InputError
from .files import check_output, replacing
from .generator import generate
from .lattice import work
from .oas import oas
from .portfolio import Portfolio
from .result import Prices
from .risk import MEASURES as RISK_MEASURES
from .risk import risk
from .scenarios import read_scenarios


class ProgressBar:
    """A progress bar on stderr that appears only once a job has run for ``delay`` seconds; counts work."""

    def __init__(self, label: str, delay: float = 2.0, enabled: bool | None = None, unit: str = "G node updates",
                 scale: float = 1e9):
        self.label, self.delay, self.start = label, delay, time.perf_counter()
        self.unit, self.scale = unit, scale
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.shown = False

    def __call__(self, done: float, total: float) -> None:
        elapsed = time.perf_counter() - self.start
        if not self.enabled or (elapsed < self.delay and done < total):
            return
        if done >= total and not self.shown:
            return
        filled = int(30 * done / max(total, 1))
        precision = 2 if self.scale != 1 else 0
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {done / self.scale:.{precision}f}/"
                         f"{total / self.scale:.{precision}f} {self.unit}, {elapsed:.0f} s")
        self.shown = True
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _is_bonds(args: argparse.Namespace) -> bool:
    """The file holds bonds: ``--format bonds``, or by itself (19 arrays, or a CSV with ``cashflow_count``)."""
    if args.format != "auto":
        return args.format == "bonds"
    if not args.portfolio.exists():
        raise InputError([(None, "file", f"{args.portfolio}: no such file")])
    return is_bond_file(args.portfolio)


def read_book(args: argparse.Namespace) -> tuple[Portfolio | BondPortfolio, Any]:
    """The instruments of the file and their curves (``--yield`` for options; bond files carry their own)."""
    if parquet.is_parquet(args.portfolio):
        book, curves, _ids = parquet.read_book(args.portfolio)
        if isinstance(book, BondPortfolio):
            return book, curves or ()
        return book, _option_curve(args, curves)
    if _is_bonds(args):
        if args.yield_file:
            raise InputError([(None, "--yield", "a bond file names its own yield curves (NAME.curves.csv or the "
                               "19-array file's curve arrays); --yield applies to option files only")])
        return read_bonds(args.portfolio, args.errors)
    portfolio, file_curve = io.read_input(args.portfolio, args.errors)
    curve = io.read_yield_curve(args.yield_file) if args.yield_file else file_curve or YieldCurve.thesis()
    return portfolio, curve


def _option_curve(args: argparse.Namespace, curves: tuple[YieldCurve, ...] | None) -> YieldCurve:
    """The curve of a Parquet book's options: ``--yield``, else the file's first curve, else the thesis'."""
    return io.read_yield_curve(args.yield_file) if args.yield_file else (curves or (YieldCurve.thesis(),))[0]


@contextlib.contextmanager
def dask_client(spec: str | None) -> Iterator[Any]:
    """None without ``--dask``; else a Dask client of a local cluster (``local:N``) or of a scheduler's address,
    closed (with its cluster) afterwards."""
    if not spec:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise InputError([(None, "--dask", "Dask is not installed: pip install 'dask[distributed]'")]) from None
    if spec.startswith("local:"):
        try:
            workers = int(spec.removeprefix("local:"))
        except ValueError:
            workers = 0
        if workers < 1:
            raise InputError([(None, "--dask", f"local:N needs a number of workers N >= 1, got {spec!r}")])
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            print(f"trinom: {workers} Dask workers here; dashboard {client.dashboard_link}", file=sys.stderr)
            yield client
        return
    with distributed.Client(spec) as client:
        print(f"trinom: Dask scheduler {spec}; dashboard {client.dashboard_link}", file=sys.stderr)
        yield client


def price_parquet(args: argparse.Namespace) -> int:
    """A Parquet book into a Parquet result, one row group at a time (memory bounded by the row group)."""
    curves = parquet.curves_of(args.portfolio)
    option_curve = _option_curve(args, curves)
    total = parquet.rows(args.portfolio)
    bar = ProgressBar(f"pricing {total} rows of {args.portfolio.name}", unit="rows", scale=1.0)
    writer = parquet.ResultWriter(args.out)
    failed: BaseException | None = None
    start = time.perf_counter()
    try:
        for first, book, ids in parquet.row_groups(args.portfolio):
            market: Any = (curves or ()) if isinstance(book, BondPortfolio) else option_curve
            try:
                result = price(book, market, backend=args.backend, target=args.target, precision=args.precision,
                               device=args.device, errors=args.errors, max_width=args.max_width,
                               max_steps=args.max_steps)
            except InputError as err:  # rows of the whole file, not of the row group
                raise InputError([(None if row is None else row + first, field, message)
                                  for row, field, message in err.errors]) from None
            writer.write(ids, result)
            del result, book
            backends.release_memory()  # peak memory one row group's, not the book's
            bar(float(first + len(ids)), float(total))
    except BaseException as err:
        failed = err
        raise
    finally:
        writer.close(failed)
    print(f"trinom: {total} rows priced in {time.perf_counter() - start:.3f} s -> {args.out}", file=sys.stderr)
    return 0


def cmd_price(args: argparse.Namespace) -> int:
    if parquet.is_parquet(args.portfolio) and args.out and parquet.is_parquet(args.out) and not args.scenarios \
            and not args.dask:
        check_output(args.out, [args.portfolio, args.yield_file])
        return price_parquet(args)
    if args.out:  # checked before any reading or pricing: an hour of work must not end in a bad path
        inputs = [args.portfolio, *companions(args.portfolio), args.yield_file, args.scenarios]
        if args.scenarios and args.out.suffix.lower() != ".csv":
            raise InputError([(None, "--out", f"{args.out}: a scenario grid is written as .csv (id,scenario,price,"
                               "error)")])
        check_output(args.out, inputs)
    instruments, curves = read_book(args)
    kind = "bonds" if isinstance(instruments, BondPortfolio) else "options"
    if args.target in ("opencl", "pyopencl") and len(instruments):  # compiling the kernels is not pricing: shown apart
        start = time.perf_counter()
        price(instruments[:1], curves, backend=args.backend, target=args.target, precision=args.precision,
              device=args.device, errors="mask")
        print(f"trinom: OpenCL kernels compiled (or loaded from cache) in {time.perf_counter() - start:.1f} s",
              file=sys.stderr)
    scenario_names: list[str] = []
    if args.scenarios:
        scenario_names, curves = read_scenarios(args.scenarios, curves)
    start = time.perf_counter()
    bar = ProgressBar(f"pricing {len(instruments)} {kind}" + (f" in {len(scenario_names)} scenarios"
                                                                 if scenario_names else ""))
    with dask_client(args.dask) as client:
        result = price(instruments, curves, backend=args.backend, target=args.target, precision=args.precision,
                       device=args.device, errors=args.errors, max_width=args.max_width, max_steps=args.max_steps,
                       progress=None if client is not None else bar, client=client)
    elapsed = time.perf_counter() - start
    if scenario_names:
        import pandas as pd  # here, not at start-up: only the scenario grid needs it

        ids = [str(i) for i in (bond_ids(args.portfolio) if kind == "bonds" else range(len(instruments)))]
        grid = np.atleast_2d(result.price)
        table = pd.DataFrame({"id": np.tile(ids, len(scenario_names)),
                              "scenario": np.repeat(scenario_names, len(ids)),
                              "price": grid.reshape(-1), "error": np.tile(result.error, len(scenario_names))})
        if args.out:
            write_table(args.out, table)
        else:
            table.to_csv(sys.stdout, index=False, float_format="%.17g")
    elif args.out:
        write_result(args.out, result, bond_ids(args.portfolio) if kind == "bonds" else None)
    else:
        bonds = kind == "bonds"
        if bonds:
            print("dirty\tclean")
        for k in range(len(result)):
            note = f"\t{result.error[k]}" if result.error[k] else ""
            print(f"{result.price[k]:.17g}" + (f"\t{result.clean[k]:.17g}" if bonds else "") + note)
    bad = int((result.error != "").sum())
    where = f" -> {args.out}" if args.out else ""
    print(f"trinom: {len(instruments)} {kind} priced on {result.engine or args.backend} ({args.precision}) in "
          f"{elapsed:.3f} s{f', {bad} rows with errors' if bad else ''}{where}", file=sys.stderr)
    return 0


def read_market_prices(path: Path, ids: Sequence[object]) -> np.ndarray:
    """``id,price`` rows (a header line first) -> one price per bond, in the book's order; a bond without
    a row, a row of an unknown bond, a repeated id or a price that is no number is an error naming it."""
    if not path.exists():
        raise InputError([(None, "--market-prices", f"{path}: no such file")])
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows or [cell.strip().lower() for cell in rows[0][:2]] != ["id", "price"]:
        raise InputError([(None, "--market-prices", f"{path}: the first line must be the header id,price")])
    where = {str(bond): k for k, bond in enumerate(ids)}
    prices = np.full(len(ids), np.nan)
    seen: set[str] = set()
    problems = []
    for line, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        bond = row[0].strip()
        if len(row) < 2 or bond not in where or bond in seen:
            why = "no price" if len(row) < 2 else "a bond not in the book" if bond not in where else "repeated"
            problems.append((where.get(bond), "--market-prices", f"{path} line {line}: id {bond!r}: {why}"))
            continue
        seen.add(bond)
        try:
            prices[where[bond]] = float(row[1])
        except ValueError:
            problems.append((where[bond], "--market-prices", f"{path} line {line}: price {row[1]!r} is no number"))
    problems += [(k, "--market-prices", f"{path}: no price for bond {bond!r}") for bond, k in where.items()
                 if bond not in seen and all(p[0] != k for p in problems)]
    if problems:
        raise InputError(problems)
    return prices


def write_table(path: Path, table: Any) -> None:
    """A pandas table as CSV, written whole or not at all."""
    with replacing([path]) as (temporary,):
        table.to_csv(temporary, index=False, float_format="%.17g")


def cmd_oas(args: argparse.Namespace) -> int:
    check_output(args.out, [args.portfolio, *companions(args.portfolio), args.market_prices])
    if args.format == "options":
        raise InputError([(None, "--format", "trinom oas solves the spreads of bonds; got --format options")])
    args.format, args.yield_file, args.errors = "bonds", None, "mask"
    bonds, curves = read_book(args)
    ids = bond_ids(args.portfolio)
    market = read_market_prices(args.market_prices, ids)
    start = time.perf_counter()
    bar = ProgressBar(f"OAS of {len(bonds)} bonds", unit="bonds done", scale=1)
    result = oas(bonds, curves, market, price_type="dirty" if args.dirty else "clean", backend=args.backend,
                 target=args.target, precision=args.precision, max_width=args.max_width, max_steps=args.max_steps,
                 search=args.search, progress=bar)
    write_table(args.out, result.to_frame(ids))
    failed = int((result.status != "converged").sum())
    print(f"trinom: OAS of {len(bonds)} bonds in {time.perf_counter() - start:.3f} s ({result.pricings} engine "
          f"call{'s' if result.pricings != 1 else ''}){f', {failed} without one' if failed else ''} -> {args.out}",
          file=sys.stderr)
    return 0


def cmd_risk(args: argparse.Namespace) -> int:
    check_output(args.out, [args.portfolio, *companions(args.portfolio), args.yield_file])
    args.errors = "mask"
    instruments, curves = read_book(args)
    bonds = isinstance(instruments, BondPortfolio)
    measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    start = time.perf_counter()
    table = risk(instruments, curves, measures=measures, shift=args.shift, sigma_shift=args.sigma_shift,
                 ids=bond_ids(args.portfolio) if bonds else None, backend=args.backend, target=args.target,
                 precision=args.precision, max_width=args.max_width, max_steps=args.max_steps,
                 progress=ProgressBar(f"risk of {len(instruments)} {'bonds' if bonds else 'options'}"))
    write_table(args.out, table)
    print(f"trinom: {len(table)} risk rows of {len(instruments)} {'bonds' if bonds else 'options'} in "
          f"{time.perf_counter() - start:.3f} s -> {args.out}", file=sys.stderr)
    return 0


def write_result(path: Path, result: Prices, ids: Sequence[object] | None = None) -> None:
    """Bonds: ``.csv`` ``id,dirty,clean,accrued,error`` (``ids``: the bond CSV's ids); options: ``.csv``
    ``id,price,error`` (ids are row numbers); ``.out``: the prices."""
    if (result.instrument == "bond").any() and path.suffix.lower() == ".csv":
        write_bond_prices(path, result, ids)
    else:
        io.write_prices(path, result.price, list(result.error) if (result.error != "").any() else None)


def cmd_info(args: argparse.Namespace) -> int:
    if _is_bonds(args):
        return bond_cli.info(args.portfolio, args.max_width, args.max_steps)
    portfolio, file_curve = io.read_input(args.portfolio, "mask")  # info lists every problem
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
        book = sub.lower()
        print(f"  work  : {auto.inspect(book).work:.4g} node updates (both passes)")
        print(f"  auto backend: {auto.describe_choice(book)}")
    for row, _field, message in problems[:20]:
        print(f"  row {row}: {message}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    check_output(args.out)
    if args.prices:
        check_output(args.prices, [args.out], what="--prices")
    if args.instrument == "bonds":
        return bond_cli.generate(args)
    portfolio = generate(args.distribution, 65536 if args.size is None else args.size, skew_percent=args.skew, seed=args.seed)
    curve = YieldCurve.thesis() if args.with_curve else None
    prices = price(portfolio, backend="reference").price if args.prices else None  # before any file is written
    if parquet.is_parquet(args.out):
        parquet.write_book(args.out, portfolio, None if curve is None else [curve])
    else:
        io.write_portfolio(portfolio, args.out, curve)
    print(f"trinom: wrote {len(portfolio)} options ({args.distribution}) to {args.out}", file=sys.stderr)
    if prices is not None:
        io.write_prices(args.prices, prices)
        print(f"trinom: wrote reference prices to {args.prices}", file=sys.stderr)
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    print(f"{'engine':15s} {'target':10s} {'usable':7s} details")
    for name, target, usable, reason in backends.status():
        print(f"{name:15s} {target or '-':10s} {'yes' if usable else 'no':7s} {reason}")
    sample = generate("uniform", 1000)
    bonds, curves = generate_bonds("U1", 100, seed=1)
    print(f"auto picks, for 1000 options of width 47 and height 109: {auto.describe_choice(sample.lower())}; "
          f"for 5 of them: {auto.describe_choice(sample[:5].lower())}; for 100 bonds: "
          f"{auto.describe_choice(bonds.lower(tuple(map(str, range(len(curves))))))}")
    print("\nOpenCL platforms (pyopencl):")
    for line in opencl_devices():
        print(f"  {line}")
    return 0


def opencl_devices() -> list[str]:
    """One line per OpenCL platform and device, or why none can be listed."""
    try:
        import pyopencl as cl
    except ImportError:
        return ["pyopencl is not installed (pip install pyopencl)"]
    try:
        platforms = cl.get_platforms()
    except cl.Error as err:  # no ICD loader / no platform
        return [f"none ({err})"]
    lines = []
    for platform in platforms:
        lines.append(f"{platform.name} ({platform.version})")
        for device in platform.get_devices():
            fp64 = "fp64" if "cl_khr_fp64" in device.extensions else "no fp64"
            lines.append(f"  - {device.name}: {device.max_compute_units} compute units, {fp64}")
    return lines or ["none"]


def cmd_demo(args: argparse.Namespace) -> int:
    portfolio = generate("skewed", args.size, seed=1)
    start = time.perf_counter()
    result = price(portfolio, backend="auto", precision=args.precision)
    elapsed = time.perf_counter() - start
    backend, prices = result.engine, result.price
    g = portfolio.geometry()
    nodes = float(work(g.n, g.jmax).sum())
    print(f"trinom {__version__}: priced {len(portfolio)} options (skewed sample, seed 1) on '{backend}' "
          f"({args.precision}) in {elapsed:.3f} s, {nodes / elapsed / 1e9:.3f} Gnode/s")
    width, height = portfolio.stats()["width"], portfolio.stats()["height"]
    print(f"  widths {width['min']:.0f}..{width['max']:.0f}, heights {height['min']:.0f}..{height['max']:.0f}")
    for k in range(min(5, len(portfolio))):
        o = portfolio[k]
        kind = "put" if o.option_type[0] == PUT else "call"
        print(f"  option {k}: {kind} X={o.strike[0]:g} on a {o.maturity[0]:g}-year bond, expiry {o.expiry[0]:g}, "
              f"a={o.a[0]:.5f}: {prices[k]:.10f}")
    return 0


EXIT_CODES = """exit status:
  0    every row priced (or, with --errors mask, priced or given its message)
  2    bad input or arguments: the message names the file, line, row and field; nothing was written
  3    the engine could not run or failed (no GPU, a library not built, a CUDA error)
  141  the output pipe was closed early (e.g. trinom price book.in | head)"""

EXAMPLES = """examples:
  trinom price data/thesis/book.in                          # best engine, prices on stdout
  trinom price book.csv --errors mask --out prices.csv       # bad rows get NaN and their message
  trinom price bonds.csv --backend futhark --target multicore --precision f32 --out dirty.out
  trinom info data/thesis/4_SKEWED.in                        # widths, heights, work, what auto picks
  trinom generate skewed --size 1000 --out skewed.in --prices skewed.out
  trinom generate --instrument bonds R1 --size 500 --out r1.csv"""


def parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(prog="trinom", formatter_class=formatter, epilog=f"{EXIT_CODES}\n\n{EXAMPLES}",
                                description="Price books of options on zero-coupon bonds and of callable/puttable "
                                "coupon bonds under Hull-White with trinomial trees, on GPUs and CPUs.")
    p.add_argument("--version", action="version", version=f"trinom {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, formatter_class=formatter, epilog=EXIT_CODES)

    def instrument_file(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("portfolio", type=Path, help="options: .in (8 thesis arrays or 10 with a curve) or .csv; "
                         "bonds: .in (the paper's 19 arrays) or a .csv with its .cashflows.csv and .curves.csv")
        cmd.add_argument("--format", default="auto", choices=("auto", "options", "bonds"),
                         help="what the file holds (default %(default)s: recognised from the file)")
        cmd.add_argument("--max-width", type=int, default=DEFAULT_MAX_WIDTH,
                         help="widest tree accepted (default %(default)s)")
        cmd.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS,
                         help="most time steps of a tree accepted (default %(default)s): bounds each row's memory "
                         "and work before any pricing")

    def engine_options(cmd: argparse.ArgumentParser) -> None:
        """--backend, --target, --precision of a command that prices many times (oas, risk)."""
        cmd.add_argument("--backend", default="auto", choices=backends.names(), metavar="ENGINE",
                         help="the engine of every pricing (default %(default)s)")
        cmd.add_argument("--target", choices=("c", "multicore", "opencl", "cuda"), help="where the engine runs")
        cmd.add_argument("--precision", default="f64", choices=backends.PRECISIONS,
                         help="float64 or float32 arithmetic (default %(default)s)")

    pr = command("price", "price every row of a file, in input order")
    instrument_file(pr)
    pr.add_argument("--yield", dest="yield_file", type=Path, help="yield curve for options (.in: rates, days; .csv: "
                    "days,rate); default: the curve in a 10-array input, else the thesis curve; bond files name "
                    "their own curves")
    pr.add_argument("--backend", default="auto", choices=backends.names(), metavar="ENGINE",
                    help=f"the engine: {', '.join(backends.names())} (default %(default)s: the fastest usable one; "
                    "`trinom backends` lists what runs here)")
    pr.add_argument("--target", choices=("c", "multicore", "opencl", "cuda", "pyopencl"),
                    help="where the engine runs: Futhark's targets, or cuda (default: the engine's best; with "
                    "auto, the best engine on this target)")
    pr.add_argument("--precision", default="f64", choices=backends.PRECISIONS,
                    help="float64 or float32 arithmetic (default %(default)s)")
    pr.add_argument("--device", type=int, default=0, help="the GPU's index (default %(default)s; the CPU has only 0)")
    pr.add_argument("--out", type=Path, help="write the prices here: .out (one Futhark array) or .csv (options: "
                    "id,price,error; bonds: id,dirty,clean,accrued,error); default: stdout. Written whole or not "
                    "at all, checked before pricing, never over an input")
    pr.add_argument("--scenarios", type=Path, help="CSV scenario,curve,days,shift (shifts at pillars; days "
                    "empty: every pillar) or scenario,curve,days,rate (whole curves): price under each scenario in "
                    "one call; --out then gets id,scenario,price,error")
    pr.add_argument("--errors", default="raise", choices=("raise", "mask"),
                    help="raise: stop at the first bad input, naming every bad row; mask: price the good rows, "
                    "NaN and a message for the bad ones (default %(default)s)")
    pr.add_argument("--dask", metavar="local:N|ADDRESS",
                    help="price on a Dask cluster: local:N starts N worker processes here, ADDRESS (e.g. "
                    "tcp://host:8786) connects to a running scheduler; the book is sharded by work")
    pr.set_defaults(func=cmd_price)

    oas_cmd = command("oas", "option-adjusted spread of every bond of a file from market prices")
    instrument_file(oas_cmd)
    oas_cmd.add_argument("--market-prices", type=Path, required=True,
                         help="CSV id,price: one market price per bond (per 100 face), ids as in the bond file")
    oas_cmd.add_argument("--dirty", action="store_true", help="the market prices are dirty (default: clean)")
    oas_cmd.add_argument("--search", choices=("auto", "engine", "batched"), default="auto",
                         help="the engine's own search in one call (cuda), or one engine call per step (any engine); "
                              "auto: the engine's where it has one")
    engine_options(oas_cmd)
    oas_cmd.add_argument("--out", type=Path, required=True,
                         help="CSV id,oas,price,iterations,error (oas in percent, as the bond file's spread)")
    oas_cmd.set_defaults(func=cmd_oas)

    risk_cmd = command("risk", "risk measures of every row of a file by bump and reprice, as one long table")
    instrument_file(risk_cmd)
    risk_cmd.add_argument("--yield", dest="yield_file", type=Path, help="yield curve for options (as for price)")
    risk_cmd.add_argument("--measures", default=",".join(RISK_MEASURES),
                          help="comma-separated, from " + ", ".join(RISK_MEASURES) + " (default: all)")
    risk_cmd.add_argument("--shift", type=float, default=1e-4, help="curve shift (default %(default)s = 1 bp)")
    risk_cmd.add_argument("--sigma-shift", type=float, default=1e-4, help="vega's move of sigma (default %(default)s)")
    engine_options(risk_cmd)
    risk_cmd.add_argument("--out", type=Path, required=True,
                          help="CSV id,measure,factor,shift,base,value,error (ORE style)")
    risk_cmd.set_defaults(func=cmd_risk)

    info = command("info", "size, tree widths and heights and their statistics, work, problems, the engine auto picks")
    instrument_file(info)
    info.set_defaults(func=cmd_info)

    gen = command("generate", "write a synthetic book with one of the thesis' (or the paper's) distributions")
    gen.add_argument("distribution", help="options: uniform, random, random-const-height, random-const-width, skewed, "
                     "skewed-const-height, skewed-const-width (or 0..6); bonds: U1, U2, R1, R2, R3, S1, S2")
    gen.add_argument("--instrument", default="options", choices=("options", "bonds"),
                     help="options on zero-coupon bonds (the thesis) or callable/puttable coupon bonds (the paper) "
                     "(default %(default)s)")
    gen.add_argument("--size", type=int, default=None, help="rows (default: 65536 options, or the paper's bond "
                     "dataset size)")
    gen.add_argument("--skew", type=float, default=1.0, help="percentage of skewed options, skewed kinds only "
                     "(default %(default)s)")
    gen.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")
    gen.add_argument("--out", type=Path, required=True, help=".in (thesis arrays / 19 bond arrays) or .csv")
    gen.add_argument("--with-curve", action="store_true", help="append the thesis curve (the 10-array Futhark input)")
    gen.add_argument("--prices", type=Path, help="also write the reference prices (.out or .csv)")
    gen.set_defaults(func=cmd_generate)

    be = command("backends", "which engines and targets are built and usable here, and why not")
    be.set_defaults(func=cmd_backends)

    demo = command("demo", "price a generated sample book on the best engine (what `make run` does)")
    demo.add_argument("--size", type=int, default=2000, help="options (default %(default)s)")
    demo.add_argument("--precision", default="f64", choices=backends.PRECISIONS,
                      help="float64 or float32 arithmetic (default %(default)s)")
    demo.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader went away (| head): not an error of ours, and no traceback
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (InputError, ValueError, OSError) as err:
        print(f"trinom: error: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:  # BackendUnavailable, CudaError, a Futhark context failure
        print(f"trinom: error: {err}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
