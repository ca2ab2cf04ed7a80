"""The ``trinom`` command's parser and entry point: each command's options, its handler in its own module."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import __version__, engines
from ..analytics.risk import MEASURES as RISK_MEASURES
from ..errors import InputError
from ..instruments.bond import _STEP_LIMIT as BOND_STEP_LIMIT
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from .arguments import DASK_CONNECT_SECONDS, OutPath, positive_number, whole_number
from .backends import cmd_backends
from .calibrate import add_calibrate_parser
from .demo import cmd_demo
from .generate import cmd_generate
from .info import cmd_info
from .oas import cmd_oas
from .price import cmd_price
from .risk import cmd_risk
from .trade_files import add_recalibration_options, add_trade_options

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
        cmd.add_argument("--backend", default="auto", choices=engines.names(), metavar="ENGINE",
                         help="the engine of every pricing (default %(default)s)")
        cmd.add_argument("--target", choices=("c", "multicore", "opencl", "cuda"), help="where the engine runs")
        cmd.add_argument("--precision", default="f64", choices=engines.PRECISIONS,
                         help="float64 or float32 arithmetic (default %(default)s)")

    pr = command("price", "price every row of a file, in input order")
    instrument_file(pr)
    pr.add_argument("--yield", dest="yield_file", type=Path, help="yield curve for options (.in: rates, days; .csv: "
                    "days,rate); default: the curve in a 10-array input, else the thesis curve; bond files name "
                    "their own curves")
    pr.add_argument("--backend", default="auto", choices=engines.names(), metavar="ENGINE",
                    help=f"the engine: {', '.join(engines.names())} (default %(default)s: the fastest usable one; "
                    "`trinom backends` lists what runs here)")
    pr.add_argument("--target", choices=("c", "multicore", "opencl", "cuda", "pyopencl"),
                    help="where the engine runs: Futhark's targets, or cuda (default: the engine's best; with "
                    "auto, the best engine on this target)")
    pr.add_argument("--precision", default="f64", choices=engines.PRECISIONS,
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
    pr.add_argument("--settlement", type=whole_number(0), default=None, metavar="DAYS",
                    help="trades files: bonds whose settlement_days is empty settle DAYS business days after --as-of "
                    "on their calendar; the prices get settlement,settlement_clean,settlement_accrued columns")
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
                    "cost model and keep it for this host (trinom.engines.costs; about a minute)")
    be.add_argument("--engines", default=None, help="with --measure: only these engines (e.g. cuda,futhark/multicore)")
    be.set_defaults(func=cmd_backends)

    demo = command("demo", "price a generated sample book on the best engine (what `make run` does)")
    demo.add_argument("--size", type=int, default=2000, help="options (default %(default)s)")
    demo.add_argument("--precision", default="f64", choices=engines.PRECISIONS,
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
