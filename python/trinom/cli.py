"""The ``trinom`` command: price, info, generate, backends, demo."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from . import __version__, auto, backends, io
from .api import choose_backend, price
from .bonds import backends as bond_backends
from .bonds import cli as bond_cli
from .bonds.api import choose_bond_backend
from .bonds.backends import BOND_BACKENDS
from .bonds.io import is_bond_file
from .constants import DEFAULT_MAX_WIDTH, PUT
from .curve import YieldCurve
from .errors import InputError
from .generator import generate
from .lattice import work
from .portfolio import Portfolio


class ProgressBar:
    """A progress bar on stderr that appears only once a job has run for ``delay`` seconds."""

    def __init__(self, label: str, delay: float = 2.0, enabled: bool | None = None):
        self.label, self.delay, self.start = label, delay, time.perf_counter()
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.start
        if not self.enabled or (elapsed < self.delay and done < total):
            return
        if done >= total and not self.shown:
            return
        filled = int(30 * done / max(total, 1))
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} options, {elapsed:.0f} s")
        self.shown = True
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _price_with_progress(portfolio: Portfolio, curve: YieldCurve, backend: str, **kwargs) -> tuple:
    """Price in slices of about equal work so the bar can move, whatever the backend."""
    bar = ProgressBar(f"pricing on {backend}")
    if backend == "reference":  # it reports its own chunks to the bar
        return price(portfolio, curve, backend=backend, progress=bar, **kwargs)
    geometry = portfolio.geometry()
    ok = (geometry.n > 0) & (geometry.jmax > 0)
    node_work = np.where(ok, work(np.maximum(geometry.n, 0), np.maximum(geometry.jmax, 0)), 0)
    if node_work.sum() < 2e8 or backend.startswith("cuda"):  # quick enough for no bar: one call, no copies
        return price(portfolio, curve, backend=backend, **kwargs)
    slices = 20
    bounds = np.searchsorted(np.cumsum(node_work), np.linspace(0, node_work.sum(), slices + 1)[1:-1])
    parts = np.split(np.arange(len(portfolio)), bounds)
    results = []
    done = 0
    for part in parts:
        if part.size:
            results.append(price(portfolio[part], curve, backend=backend, **kwargs))
            done += part.size
            bar(done, len(portfolio))
    if kwargs.get("errors") == "mask":
        return np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results])
    return np.concatenate(results)


def _is_bonds(args: argparse.Namespace) -> bool:
    """The file holds bonds: ``--format bonds``, or by itself (19 arrays, or a CSV with ``cashflow_count``)."""
    if args.format != "auto":
        return args.format == "bonds"
    if not args.portfolio.exists():
        raise InputError([(None, "file", f"{args.portfolio}: no such file")])
    return is_bond_file(args.portfolio)


def cmd_price(args: argparse.Namespace) -> int:
    if _is_bonds(args):
        return bond_cli.price_file(args)
    if args.backend not in backends.BACKENDS:
        raise backends.BackendUnavailable(f"backend {args.backend!r} prices bonds only; for options choose one of "
                                          f"{', '.join(backends.BACKENDS)}")
    portfolio, file_curve = io.read_input(args.portfolio)
    curve = io.read_yield_curve(args.yield_file) if args.yield_file else file_curve or YieldCurve.thesis()
    backend, options = args.backend, {"target": args.target} if args.target else {}
    if backend == "auto":  # resolve once, so every slice of the progress bar runs the same backend
        rows = portfolio.good_rows(args.max_width)
        backend, chosen = auto.choose(portfolio[rows] if rows.size < len(portfolio) else portfolio, args.precision)
        options = {**chosen, **options}
    start = time.perf_counter()
    result = _price_with_progress(portfolio, curve, backend, precision=args.precision, errors=args.errors,
                                  max_width=args.max_width, **options)
    elapsed = time.perf_counter() - start
    prices, messages = result if args.errors == "mask" else (result, None)
    if args.out:
        io.write_prices(args.out, prices, None if messages is None else list(messages))
    else:
        for k, p in enumerate(prices):
            print(f"{p:.17g}" + (f"\t{messages[k]}" if messages is not None and messages[k] else ""))
    bad = 0 if messages is None else int(sum(1 for m in messages if m))
    where = f" -> {args.out}" if args.out else ""
    label = backend + (f"/{options['target']}" if options.get("target") else "")
    print(f"trinom: {len(portfolio)} options priced on {label} ({args.precision}) in {elapsed:.3f} s"
          f"{f', {bad} rows with errors' if bad else ''}{where}", file=sys.stderr)
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    if _is_bonds(args):
        return bond_cli.info(args.portfolio)
    portfolio, file_curve = io.read_input(args.portfolio)
    problems = portfolio.validate(args.max_width)
    good = portfolio.good_rows(args.max_width)
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
        print(f"  work  : {auto.inspect(sub).work:.4g} node updates (both passes)")
        print(f"  auto backend: {auto.describe_choice(sub)}")
    for row, _field, message in problems[:20]:
        print(f"  row {row}: {message}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    if args.instrument == "bonds":
        return bond_cli.generate(args)
    portfolio = generate(args.distribution, 65536 if args.size is None else args.size, skew_percent=args.skew, seed=args.seed)
    curve = YieldCurve.thesis() if args.with_curve else None
    io.write_portfolio(portfolio, args.out, curve)
    print(f"trinom: wrote {len(portfolio)} options ({args.distribution}) to {args.out}", file=sys.stderr)
    if args.prices:
        io.write_prices(args.prices, price(portfolio, backend="reference"))
        print(f"trinom: wrote reference prices to {args.prices}", file=sys.stderr)
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    print(f"{'backend':15s} {'target':10s} {'usable':7s} details")
    for name, target, usable, reason in backends.status():
        print(f"{name:15s} {target or '-':10s} {'yes' if usable else 'no':7s} {reason}")
    sample = generate("uniform", 1000)
    print(f"auto picks, for 1000 options of width 47 and height 109: {choose_backend(sample)}; "
          f"for 5 of them: {choose_backend(sample[:5])}")
    print(f"\n{'bond backend':15s} {'target':10s} {'usable':7s} details")
    for name, target, usable, reason in bond_backends.status():
        print(f"{name:15s} {target or '-':10s} {'yes' if usable else 'no':7s} {reason}")
    print(f"auto picks for bonds: {choose_bond_backend()}")
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
    backend = choose_backend(portfolio, args.precision)
    start = time.perf_counter()
    prices = price(portfolio, backend="auto", precision=args.precision)
    elapsed = time.perf_counter() - start
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


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="trinom", description="Price portfolios of options on zero-coupon bonds "
                                "under Hull-White with trinomial trees.")
    p.add_argument("--version", action="version", version=f"trinom {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    pr = sub.add_parser("price", help="price a portfolio file (.in thesis/Futhark arrays, 19-array bonds, or .csv)")
    pr.add_argument("portfolio", type=Path)
    pr.add_argument("--format", default="auto", choices=("auto", "options", "bonds"),
                    help="options (thesis/Futhark arrays, option CSV) or bonds (19 arrays, bond CSV); auto: from the file")
    pr.add_argument("--yield", dest="yield_file", type=Path, help="yield curve (.in: rates, days; or .csv: days,rate); "
                    "default: the curve in a 10-array input, else the thesis curve")
    pr.add_argument("--backend", default="auto", choices=sorted({*backends.BACKENDS, *BOND_BACKENDS}),
                    help="options: " + ", ".join(backends.BACKENDS) + "; bonds: " + ", ".join(BOND_BACKENDS))
    pr.add_argument("--target", choices=("c", "multicore", "opencl", "cuda", "pyopencl"), help="Futhark target")
    pr.add_argument("--precision", default="f64", choices=backends.PRECISIONS)
    pr.add_argument("--out", type=Path, help="write prices here (.out or .csv) instead of stdout")
    pr.add_argument("--errors", default="raise", choices=("raise", "mask"),
                    help="raise: stop at bad input; mask: price the good rows, NaN and a message for bad ones")
    pr.add_argument("--max-width", type=int, default=DEFAULT_MAX_WIDTH, help="widest tree accepted")
    pr.set_defaults(func=cmd_price)

    info = sub.add_parser("info", help="size, tree widths/heights and their statistics, problems")
    info.add_argument("portfolio", type=Path)
    info.add_argument("--format", default="auto", choices=("auto", "options", "bonds"))
    info.add_argument("--max-width", type=int, default=DEFAULT_MAX_WIDTH)
    info.set_defaults(func=cmd_info)

    gen = sub.add_parser("generate", help="a synthetic portfolio with one of the thesis' (or the paper's) distributions")
    gen.add_argument("distribution", help="options: uniform, random, random-const-height, random-const-width, skewed, "
                     "skewed-const-height, skewed-const-width (or 0..6); bonds: U1, U2, R1, R2, R3, S1, S2")
    gen.add_argument("--instrument", default="options", choices=("options", "bonds"),
                     help="options on zero-coupon bonds (the thesis) or callable/puttable coupon bonds (the paper)")
    gen.add_argument("--size", type=int, default=None, help="default: 65536 options, or the paper's bond dataset size")
    gen.add_argument("--skew", type=float, default=1.0, help="percentage of skewed options (skewed kinds)")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--out", type=Path, required=True, help=".in (thesis arrays / 19 bond arrays) or .csv")
    gen.add_argument("--with-curve", action="store_true", help="append the thesis curve (10-array Futhark input)")
    gen.add_argument("--prices", type=Path, help="also write reference prices (.out or .csv)")
    gen.set_defaults(func=cmd_generate)

    be = sub.add_parser("backends", help="which backends and targets are built and usable here, and why not")
    be.set_defaults(func=cmd_backends)

    demo = sub.add_parser("demo", help="price a generated sample portfolio on the best backend (make run)")
    demo.add_argument("--size", type=int, default=2000)
    demo.add_argument("--precision", default="f64", choices=backends.PRECISIONS)
    demo.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as err:
        print(f"trinom: error: {err}", file=sys.stderr)
        return 2
    except (backends.BackendUnavailable, ValueError, OSError) as err:
        print(f"trinom: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
