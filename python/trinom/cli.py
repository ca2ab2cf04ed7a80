"""The ``trinom`` command: price, oas, risk, info, generate, backends, demo."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__, auto, backends, io, parquet, parquet_files
from .api import price
from .backends import costs
from .bond_market_prices import read_market_prices
from .bonds import cli as bond_cli
from .bonds.generator import generate_bonds
from .bonds.io import companions
from .book import Book
from .book_files import BookFile, check_curve_source, holds_bonds, input_files, option_curve, read_book_file
from .calibrate_cli import add_calibrate_parser
from .closed_form import zero_coupon_bond_option
from .constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH, PUT
from .curve import YieldCurve
from .errors import InputError
from .files import BOOK_FORMATS, PRICE_FORMATS, TABLE_FORMATS, check_outputs, output_format
from .generator import generate
from .instruments.bond import _STEP_LIMIT as BOND_STEP_LIMIT
from .lattice import work
from .oas import oas
from .result_files import write_price_file, write_scenario_grid, write_table_file
from .risk import MEASURES as RISK_MEASURES
from .risk import risk
from .row_ids import row_numbers
from .scenarios import read_scenarios
from .trades_cli import (
    add_recalibration_options,
    add_trade_options,
    cmd_oas_trades,
    cmd_price_trades,
    cmd_risk_trades,
    is_trades_file,
    unused_trade_options,
)

#: Risk measures that only bonds have (an option has no spread).
BOND_MEASURES = ("spread_duration",)
#: How long ``--dask ADDRESS`` waits for the scheduler to answer before giving up (exit 3).
DASK_CONNECT_SECONDS = 5.0
_DASK_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+]*://\S+|[A-Za-z0-9_.\-\[\]]+:\d+)$")


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


# --- what every command checks before any work -------------------------------------------------------------------
def book_kind(args: argparse.Namespace, kind: str | None = None) -> bool:
    """Whether the book file holds bonds (``--format``, else the file says), after checking the step limit: the
    bond engines take trees of at most 65535 steps, so a larger ``--max-steps`` for bonds is an error, not cut."""
    bonds = holds_bonds(args.portfolio, kind or args.format)
    if bonds and args.max_steps > BOND_STEP_LIMIT:
        raise InputError([(None, "--max-steps", f"--max-steps {args.max_steps}: the bond engines take trees of at "
                           f"most {BOND_STEP_LIMIT} steps (the paper's format stores steps as uint16)")])
    return bonds


def read_book(args: argparse.Namespace, bonds: bool) -> BookFile:
    """The book of ``args.portfolio`` (of the kind :func:`book_kind` found), its curves and its rows' ids."""
    return read_book_file(args.portfolio, "bonds" if bonds else "options", args.errors, getattr(args, "yield_file", None))


def check_dask(spec: str | None) -> None:
    """``--dask`` is ``local:N`` (N >= 1) or a scheduler's address (``tcp://host:8786``, ``host:8786``); not given
    (None): no cluster. Given empty (``--dask ""``, an unset shell variable) it is an error, not a local run."""
    if spec is None:
        return
    if not spec.strip():
        raise InputError([(None, "--dask", "--dask is empty: give local:N (N worker processes here) or a running "
                           "scheduler's address, such as tcp://host:8786, or leave --dask out to price here")])
    if spec.startswith("local:"):
        workers = spec.removeprefix("local:")
        if not workers.isdigit() or int(workers) < 1:
            raise InputError([(None, "--dask", f"local:N needs a number of workers N >= 1, got {spec!r}")])
        return
    port = spec.rsplit(":", 1)[-1].split("/")[0]
    if not _DASK_ADDRESS.match(spec) or (port.isdigit() and not 0 < int(port) < 65536):
        raise InputError([(None, "--dask", f"--dask {spec!r}: give local:N (N worker processes here) or a running "
                           "scheduler's address, such as tcp://host:8786")])


@contextlib.contextmanager
def dask_client(spec: str | None) -> Iterator[Any]:
    """None without ``--dask``; else a Dask client of a local cluster (``local:N``) or of a scheduler's address,
    closed (with its cluster) afterwards. A scheduler that does not answer within :data:`DASK_CONNECT_SECONDS` is a
    ``RuntimeError`` (exit 3)."""
    check_dask(spec)
    if spec is None:
        yield None
        return
    try:
        import distributed
    except ImportError:
        raise InputError([(None, "--dask", "Dask is not installed: pip install 'dask[distributed]'")]) from None
    if spec.startswith("local:"):
        workers = int(spec.removeprefix("local:"))
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            print(f"trinom: {workers} Dask workers here; dashboard {client.dashboard_link}", file=sys.stderr)
            yield client
        return
    try:
        connected = distributed.Client(spec, timeout=f"{DASK_CONNECT_SECONDS}s")
    except (OSError, TimeoutError, ValueError) as err:
        raise RuntimeError(f"--dask {spec}: no Dask scheduler answered within {DASK_CONNECT_SECONDS:g} s "
                           f"({type(err).__name__}: {err})") from None
    with connected as client:
        print(f"trinom: Dask scheduler {spec}; dashboard {client.dashboard_link}", file=sys.stderr)
        yield client


def failures(bad: int, total: int, what: str) -> str:
    """The summary's note on failed rows (empty where none failed)."""
    return f", {bad} of {total} {what} failed (NaN; the error column says why)" if bad else ""


# --- price ---------------------------------------------------------------------------------------------------------
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
    if is_trades_file(args.portfolio):  # dated trades: trinom.trades_cli
        return cmd_price_trades(args)
    if getattr(args, "accuracy", None) is not None:
        raise InputError([(None, "--accuracy", "--accuracy chooses dated trades' steps a year: give a trades file "
                           "(a tree-step book has its steps)")])
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


# --- oas and risk --------------------------------------------------------------------------------------------------
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


# --- info and generate ---------------------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace) -> int:
    bonds = book_kind(args)
    if bonds:
        book = read_book_file(args.portfolio, "bonds", "mask")  # info lists every problem
        return bond_cli.info(args.portfolio, book.instruments, book.curves, args.max_width, args.max_steps)
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
        book = sub.lower()
        print(f"  work  : {auto.inspect(book).work:.4g} node updates (both passes)")
        print(f"  auto backend: {auto.describe_choice(book)}")
    for row, _field, message in problems[:20]:
        print(f"  row {row}: {message}")
    return 0


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
        return bond_cli.generate(args)
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


def cmd_backends(args: argparse.Namespace) -> int:
    if getattr(args, "measure", False):
        return measure_backends(args.engines)
    print(f"{'engine':15s} {'target':10s} {'usable':7s} details")
    for name, target, usable, reason in backends.status():
        print(f"{name:15s} {target or '-':10s} {'yes' if usable else 'no':7s} {reason}")
    sample = generate("uniform", 1000)
    bonds, curves = generate_bonds("U1", 100, seed=1)
    print(f"auto picks, for 1000 options of width 47 and height 109: {auto.describe_choice(sample.lower())}; "
          f"for 5 of them: {auto.describe_choice(sample[:5].lower())}; for 100 bonds: "
          f"{auto.describe_choice(bonds.lower(tuple(map(str, range(len(curves))))))}")
    measured = costs.costs_path().exists()
    print(f"auto's costs: {costs.costs_path()} " + ("(measured)" if measured else
          "(not measured: the defaults hold; `trinom backends --measure` measures this host)"))
    print("\nOpenCL platforms (pyopencl):")
    for line in opencl_devices():
        print(f"  {line}")
    return 0


def measure_backends(engines: str | None) -> int:
    """``trinom backends --measure``: fit auto's cost model on every usable candidate engine (or ``engines``)."""
    from .market import Market

    chosen = [auto.cost_key(name, target) for name, target in auto.CANDIDATES
              if name != "reference" and auto.usable(name, target) and (target != "opencl" or auto.opencl_gpu())]
    if engines:
        wanted = engines.split(",")
        unknown = sorted(set(wanted) - {auto.cost_key(n, t) for n, t in auto.CANDIDATES})
        if unknown:
            raise SystemExit(f"trinom: --engines: unknown {', '.join(unknown)}; choose among "
                             f"{', '.join(auto.cost_key(n, t) for n, t in auto.CANDIDATES)}")
        chosen = [name for name in wanted if name in chosen]
    market = Market.of({"default": YieldCurve.thesis()})

    def run(engine: str, book: Book) -> None:
        name, _, target = engine.partition("/")
        backends.get(name).price(book, market, target=target or None)

    fitted = costs.measure(chosen, run)
    path = costs.save(fitted)
    for name, cost in fitted.items():
        rates = ", ".join(f"{c} {r / 1e9:.3g}" for c, r in zip(costs.CLASS_NAMES, cost.rates, strict=True))
        print(f"{name:18s} fixed {cost.fixed * 1e3:.3g} ms; Gnode/s by width: {rates}; a step of one tree "
              f"{max(cost.step_latency) * 1e6:.3g} us" + (f", one tree {cost.tree_rate / 1e9:.3g} Gnode/s"
                                                           if cost.tree_rate != float("inf") else ""))
    print(f"trinom: auto's costs for this host written to {path}")
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
    # The thesis' sample puts every option's expiry at 3 years, also on bonds that mature sooner (the thesis prices
    # those as their bond); the rows shown are options on bonds that outlive them, beside Hull-White's closed form.
    shown = np.flatnonzero(portfolio.expiry < portfolio.maturity)[:5]
    analytic = zero_coupon_bond_option(portfolio[shown])
    for k, exact in zip(shown, analytic, strict=True):
        o = portfolio[int(k)]
        kind = "put" if o.option_type[0] == PUT else "call"
        print(f"  option {k}: {kind} X={o.strike[0]:g} on a {o.maturity[0]:.2f}-year bond, expiry {o.expiry[0]:g}, "
              f"a={o.a[0]:.5f}: {prices[k]:.10f} (closed form {exact:.10f})")
    return 0


EXIT_CODES = f"""exit status:
  0    every row priced (or, with --errors mask, priced or given its message)
  2    bad input or arguments: the message names the file, line, row and field; nothing was written
  3    the engine could not run or failed (no GPU, a library not built, a CUDA error), or the Dask
       scheduler of --dask ADDRESS did not answer within {DASK_CONNECT_SECONDS:g} s
  141  the output pipe was closed early (e.g. trinom price book.in | head)
Outputs are written in the format their suffix picks (.out, .csv, .parquet); books without an id
column name their rows by row number (0, 1, ...) in every output and in --market-prices."""

EXAMPLES = """examples:
  trinom price data/thesis/book.in                          # best engine, prices on stdout
  trinom price book.csv --errors mask --out prices.csv       # bad rows get NaN and their message
  trinom price book.parquet --dask local:2 --out prices.parquet   # workers read and write their row groups
  trinom price bonds.csv --backend futhark --target multicore --precision f32 --out dirty.out
  trinom info data/thesis/4_SKEWED.in                        # widths, heights, work, what auto picks
  trinom generate skewed --size 1000 --out skewed.in --prices skewed.out
  trinom generate --instrument bonds R1 --size 500 --out r1.csv"""


class OutPath(argparse.Action):
    """``--out`` as a path, remembering whether it was written with a trailing ``/`` (a folder of parts), which
    ``pathlib`` drops."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, Path(values))
        namespace.out_folder = str(values).endswith(("/", os.sep))


def whole_number(least: int) -> Any:
    """An argparse type: a whole number >= ``least`` (argparse turns the error into exit status 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be >= {least}, got {value}")
        return value
    return parse


def positive_number(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


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
        cmd.add_argument("portfolio", type=Path, help="options: .in (8 thesis arrays or 10 with a curve), .csv or "
                         ".parquet; bonds: .in (the paper's 19 arrays), a .csv with its .cashflows.csv and .curves.csv, "
                         "or .parquet. An id column names the rows in outputs; without one they are 0, 1, ...")
        cmd.add_argument("--format", default="auto", choices=("auto", "options", "bonds"),
                         help="what the file holds (default %(default)s: recognised from the file)")
        cmd.add_argument("--max-width", type=whole_number(3), default=DEFAULT_MAX_WIDTH,
                         help="widest tree accepted (default %(default)s)")
        cmd.add_argument("--max-steps", type=whole_number(1), default=DEFAULT_MAX_STEPS,
                         help="most time steps of a tree accepted (default %(default)s; bonds: at most "
                         f"{BOND_STEP_LIMIT}): bounds each row's memory and work before any pricing")

    def errors_option(cmd: argparse.ArgumentParser, masked: str) -> None:
        cmd.add_argument("--errors", default="raise", choices=("raise", "mask"),
                         help="raise: stop before any pricing, naming every bad row and field (exit 2); mask: "
                         f"{masked}; a line on stderr counts the rows that failed (default %(default)s)")

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
    pr.add_argument("--device", type=whole_number(0), default=0,
                    help="the GPU's index, >= 0 (default %(default)s; the CPU has only 0)")
    pr.add_argument("--out", action=OutPath, help="write the prices here, in the format of the suffix: .out (one "
                    "Futhark array), .csv (options: id,price,error; bonds: id,dirty,clean,accrued,error) or .parquet "
                    "(id,price,clean,accrued,error); a Parquet book may also go to a folder (a path ending in /, or an "
                    "existing folder of parts): part-00000.parquet, ... in input order, one Parquet dataset; default: "
                    "stdout. Written whole or not at all, checked before pricing, never over an input")
    pr.add_argument("--scenarios", type=Path, help="CSV scenario,curve,days,shift (shifts at pillars; days "
                    "empty: every pillar) or scenario,curve,days,rate (whole curves): price under each scenario in "
                    "one call; --out (.csv or .parquet) then gets id,scenario,price,error")
    pr.add_argument("--errors", default="raise", choices=("raise", "mask"),
                    help="raise: stop at the first bad input, naming every bad row; mask: price the good rows, "
                    "NaN and a message for the bad ones (default %(default)s)")
    pr.add_argument("--accuracy", type=float, default=None,
                    help="trades files without a steps_per_year column: each trade's steps a year chosen on doubling "
                    "grids until its two-grid error estimate is at most this, per 100 of notional; the prices get "
                    "steps_per_year and accuracy columns")
    pr.add_argument("--dask", metavar="local:N|ADDRESS",
                    help="price on a Dask cluster: local:N starts N worker processes here, ADDRESS (e.g. "
                    f"tcp://host:8786) connects to a running scheduler (exit 3 if none answers within "
                    f"{DASK_CONNECT_SECONDS:g} s); the book is sharded by work. A Parquet book priced into Parquet (--out "
                    "prices.parquet, or a folder) is read and written by the workers: tasks of row groups, each "
                    "writing its own part beside --out, joined here in input order (every worker must see the book "
                    "and --out's folder at the same paths)")
    add_trade_options(pr)
    add_recalibration_options(pr)
    pr.set_defaults(func=cmd_price, out_folder=False)

    oas_cmd = command("oas", "option-adjusted spread of every bond of a file from market prices")
    instrument_file(oas_cmd)
    oas_cmd.add_argument("--market-prices", type=Path, required=True,
                         help="CSV id,price: one market price per bond (per 100 face), ids as in the bond file (a "
                         "book without an id column: its row numbers 0, 1, ...)")
    oas_cmd.add_argument("--dirty", action="store_true", help="the market prices are dirty (default: clean)")
    oas_cmd.add_argument("--search", choices=("auto", "engine", "batched"), default="auto",
                         help="the engine's own search in one call (cuda), or one engine call per step (any engine); "
                              "auto: the engine's where it has one")
    errors_option(oas_cmd, "a bad bond or market price gets NaN and its message in the error column")
    engine_options(oas_cmd)
    oas_cmd.add_argument("--out", type=Path, required=True,
                         help=".csv or .parquet: id,oas,price,iterations,error (oas in percent, as the bond file's "
                         "spread)")
    add_trade_options(oas_cmd)
    oas_cmd.set_defaults(func=cmd_oas)

    risk_cmd = command("risk", "risk measures of every row of a file by bump and reprice, as one long table")
    instrument_file(risk_cmd)
    risk_cmd.add_argument("--yield", dest="yield_file", type=Path, help="yield curve for options (as for price)")
    risk_cmd.add_argument("--measures", default=None,
                          help="comma-separated, from " + ", ".join(RISK_MEASURES) + " (default: every one that "
                          "applies to the book; spread_duration applies to bonds only)")
    risk_cmd.add_argument("--shift", type=positive_number, default=None,
                          help="curve shift (default 1e-4 = 1 bp; float32: 1e-3)")
    risk_cmd.add_argument("--sigma-shift", type=positive_number, default=None,
                          help="vega's move of sigma (default 1e-4; float32: 1e-3)")
    errors_option(risk_cmd, "a bad row gets NaN values and its message in the error column")
    engine_options(risk_cmd)
    risk_cmd.add_argument("--out", type=Path, required=True,
                          help=".csv or .parquet: id,measure,factor,shift,base,value,error (ORE style)")
    add_trade_options(risk_cmd)
    add_recalibration_options(risk_cmd)
    risk_cmd.set_defaults(func=cmd_risk)

    info = command("info", "size, tree widths and heights and their statistics, work, problems, the engine auto picks")
    instrument_file(info)
    info.set_defaults(func=cmd_info, errors="mask")

    gen = command("generate", "write a synthetic book with one of the thesis' (or the paper's) distributions")
    gen.add_argument("distribution", help="options: uniform, random, random-const-height, random-const-width, skewed, "
                     "skewed-const-height, skewed-const-width (or 0..6); bonds: U1, U2, R1, R2, R3, S1, S2")
    gen.add_argument("--instrument", default="options", choices=("options", "bonds"),
                     help="options on zero-coupon bonds (the thesis) or callable/puttable coupon bonds (the paper) "
                     "(default %(default)s)")
    gen.add_argument("--size", type=whole_number(0), default=None, help="rows (default: 65536 options, or the paper's "
                     "bond dataset size)")
    gen.add_argument("--skew", type=float, default=None, help="percentage of skewed options, skewed option kinds "
                     "only (default 1.0)")
    gen.add_argument("--seed", type=whole_number(0), default=0, help="random seed (default %(default)s)")
    gen.add_argument("--out", type=Path, required=True, help=".in (thesis arrays / 19 bond arrays), .csv (bonds: "
                     "with NAME.cashflows.csv and NAME.curves.csv) or .parquet")
    gen.add_argument("--with-curve", action="store_true", help="add the thesis curve to an option book (.in: the "
                     "10-array Futhark input; .parquet: in its metadata)")
    gen.add_argument("--prices", type=Path, help="also write the reference prices (.out, .csv or .parquet); never "
                     "over another output")
    gen.set_defaults(func=cmd_generate)

    add_calibrate_parser(sub)

    be = command("backends", "which engines and targets are built and usable here, and why not; what auto picks")
    be.add_argument("--measure", action="store_true", help="time probe books on every usable engine here, fit auto's "
                    "cost model and keep it for this host (trinom.backends.costs; about a minute)")
    be.add_argument("--engines", default=None, help="with --measure: only these engines (e.g. cuda,futhark/multicore)")
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
    except RuntimeError as err:  # BackendUnavailable, CudaError, a Futhark context failure, no Dask scheduler
        print(f"trinom: error: {err}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
