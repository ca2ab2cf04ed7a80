"""A desk's dated book at a desk's resolution (issue 34): mixed books of callable and puttable bonds and Bermudan
swaptions, 2-30 years, at the default 365 steps a year, from ``trades.csv`` to prices, per engine, side by side in
one run.

For every book size (``--sizes``) and engine (``--engines``; an engine that cannot run here is reported, not
timed), the end-to-end seconds of ``read_trades`` + ``read_dated_curves`` + ``trinom.price`` in a process that has
priced before (the median of ``--rounds`` calls; each call reads the file again, so the lowering is in it), and the
first call's seconds in that process beside it (library loading, kernel compilation, a cold cache). Node updates
per second are counted the way the engines balance work (``Book.work``: both passes, every tree; a swaption is two
bond trees). ``--quantlib-seconds`` (QuantLib 1.44's seconds a trade at the same steps, from
``benches/trades_peers.py`` on the CPU, where QuantLib is installed) adds QuantLib's time for the whole book.

    python benches/desk_book.py --engines cuda,futhark-cuda,multicore,auto --sizes 1,14,140,1400,14000,100000
    python benches/desk_book.py --engines multicore,c,auto --sizes 1,14,140 --out benches/desk-book-cpu.json

The books are seeded (``--seed``): trade ``k`` is the same in every size, so the 14-trade book is the first 14
trades of the 1400-trade one. ``--two-curves`` (issue 37): the same book discounted on an OIS curve (``ESTR``) with
the swaptions' floating legs and half of the Bermudan bonds' coupons (floaters at a margin) projected on ``EUR6M``.
An engine named ``ENGINE+whole`` (``cuda+whole``) lowers the whole book before pricing it: a book of at least
``trinom.pipeline.OVERLAP_MIN_TRADES`` trades is otherwise lowered in parts, each priced while the next is lowered.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

AS_OF = "2026-11-25"
ENGINES: dict[str, dict[str, Any]] = {
    "cuda": {"backend": "cuda"},
    "cuda-global": {"backend": "cuda", "wide_only": "global"},  # wide trees on the kernel before issue 34
    "futhark-cuda": {"backend": "futhark", "target": "cuda"},
    "futhark-opencl": {"backend": "futhark", "target": "opencl"},
    "multicore": {"backend": "futhark", "target": "multicore"},
    "c": {"backend": "futhark", "target": "c"},
    "reference": {"backend": "reference"},
    "auto": {"backend": "auto"},
}
HEADER = ("id,type,notional,issue,maturity,coupon,frequency,day_count,calendar,convention,option,exercise,"
          "first_exercise,last_exercise,exercise_price,expiry,strike,a,sigma,spread,curve,steps_per_year,notice_days,"
          "start,rate,float_frequency")
#: The columns a two-curve book adds (issue 37).
TWO_CURVE_HEADER = ",forecast_curve,index,coupon_type,margin,cap,floor,switch_date,fixing"


def trade_rows(count: int, seed: int = 7, models: int = 0, two_curves: bool = False) -> list[str]:
    """``count`` rows of ``trades.csv``: 40% callable bonds (bermudan, some american or european), 20% puttable
    bonds, 40% Bermudan swaptions; maturities 2-30 years; a in 0.02-0.10, sigma 0.005-0.015; default steps.
    ``models``: 0, each trade its own a and sigma (a model calibrated per trade); K > 0, trade k takes the (k mod K)th
    of K seeded (a, sigma) pairs (a desk's model per curve), the trades otherwise the same. ``two_curves``: every
    trade discounted on ``ESTR``; the swaptions and every other Bermudan bond (a floater at a margin, its running
    coupon fixed at 3%) projected on ``EUR6M``."""
    rng = np.random.default_rng(seed)
    shared = np.random.default_rng(seed + 1).uniform((0.02, 0.005), (0.10, 0.015), (max(models, 1), 2))
    as_of = np.datetime64(AS_OF)
    rows = []
    for k in range(count):
        years = int(rng.integers(2, 31))
        a, sigma = rng.uniform(0.02, 0.10), rng.uniform(0.005, 0.015)
        if models:
            a, sigma = shared[k % models]
        kind = rng.uniform()
        if kind < 0.6:
            issue = as_of - np.timedelta64(int(rng.integers(0, 3 * 365)), "D")
            maturity = as_of + np.timedelta64(years * 365 + int(rng.integers(0, 365)), "D")
            option = "call" if kind < 0.4 else "put"
            exercise = str(rng.choice(["bermudan", "american", "european"], p=[0.7, 0.15, 0.15]))
            first = as_of + np.timedelta64(max(1, int((maturity - as_of).astype(int) * rng.uniform(0.1, 0.4))), "D")
            last = "" if exercise == "european" else str(maturity - np.timedelta64(int(rng.integers(30, 365)), "D"))
            frequency = int(rng.choice([1, 2, 4]))
            coupon = f"{rng.uniform(0.01, 0.07):.4f}"
            price = f"{rng.uniform(98, 103):.2f}"
            extra = ""
            if two_curves:
                floating = exercise == "bermudan" and k % 2 == 0
                extra = (f",EUR6M,,float,{rng.uniform(0.0, 0.01):.4f},,,,0.03" if floating else ",,,,,,,,")
                coupon = "" if floating else coupon
            rows.append(f"B{k},bond,100,{issue},{maturity},{coupon},{frequency},30/360,NONE,F,"
                        f"{option},{exercise},{first},{last},{price},,,{a:.4f},{sigma:.4f},,{_curve(two_curves)},,,"
                        ",," + extra)
        else:
            start = as_of + np.timedelta64(int(rng.integers(180, 5 * 365)), "D")
            maturity = start + np.timedelta64(years * 365, "D")
            side = "payer" if rng.uniform() < 0.5 else "receiver"
            last = maturity - np.timedelta64(365, "D")
            rows.append(f"S{k},swaption,100,,{maturity},,1,30/360,NONE,F,{side},bermudan,{start},{last},,,,"
                        f"{a:.4f},{sigma:.4f},,{_curve(two_curves)},,,{start},{rng.uniform(0.02, 0.05):.4f},2"
                        + (",EUR6M,,,,,,," if two_curves else ""))
    return rows


def _curve(two_curves: bool) -> str:
    """The discount curve's name: the one curve, or the OIS curve of a two-curve book."""
    return "ESTR" if two_curves else "EUR"


def write_book(folder: Path, count: int, seed: int, models: int = 0, two_curves: bool = False) -> tuple[Path, Path]:
    """``trades.csv`` and ``curve.csv`` of a ``count``-trade book in ``folder`` (``models``, ``two_curves``: as
    :func:`trade_rows`)."""
    trades, curve = folder / f"trades-{count}-{models}-{int(two_curves)}.csv", folder / f"curve-{int(two_curves)}.csv"
    header = HEADER + (TWO_CURVE_HEADER if two_curves else "")
    trades.write_text("\n".join([header, *trade_rows(count, seed, models, two_curves)]) + "\n")
    pillars = [(1, 0.030), (2, 0.032), (5, 0.035), (10, 0.038), (20, 0.040), (40, 0.041)]
    curves = {"ESTR": -0.003, "EUR6M": 0.0} if two_curves else {"EUR": 0.0}  # OIS 30 bp below the term rates
    curve.write_text("curve,date,zero\n" + "".join(
        f"{name},{np.datetime64(AS_OF) + np.timedelta64(round(y * 365.25), 'D')},{r + shift}\n"
        for name, shift in curves.items() for y, r in pillars))
    return trades, curve


def end_to_end(trades: Path, curve: Path, options: dict[str, Any], timing: dict[str, Any] | None = None) -> Any:
    """File to prices: read the book and the curves, price them (``timing``: the ``cuda`` engine's own, filled in)."""
    import trinom
    from trinom.instruments import read_trades
    from trinom.model import read_dated_curves

    book = read_trades(trades, as_of=AS_OF)
    extra = {"timing": timing} if timing is not None and options["backend"] == "cuda" else {}
    return trinom.price(book, read_dated_curves(curve, as_of=AS_OF), **options, **extra)


def tree_work(trades: Path, curve: Path) -> float:
    """Node updates of one pricing of the book (both passes of every tree)."""
    from trinom.instruments import read_trades
    from trinom.instruments.trades import lowered
    from trinom.lattice.lowering import lower_bonds
    from trinom.model import read_dated_curves

    blocks, curves, _legs = lowered(read_trades(trades, as_of=AS_OF), read_dated_curves(curve, as_of=AS_OF))
    return float(sum(lower_bonds(block, tuple(curves)).work().sum() for _row, block in blocks))


def measure(engine: str, trades: Path, curve: Path, rounds: int, reference: np.ndarray | None,
            overlap_from: int) -> dict[str, Any]:
    """One engine on one book: the first call's seconds, the median of ``rounds`` warm calls, the engine that ran,
    and the largest difference to ``reference`` (per 100). ``overlap_from``: the size from which a book is lowered
    in parts (``ENGINE+whole``: never)."""
    from trinom import pipeline

    name, _, whole = engine.partition("+")
    options = ENGINES[name]
    pipeline.OVERLAP_MIN_TRADES = 10**12 if whole == "whole" else overlap_from
    t0 = time.perf_counter()
    try:
        result = end_to_end(trades, curve, options)
    except Exception as exc:  # an engine that cannot run here is reported, not timed
        return {"engine": engine, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
    first = time.perf_counter() - t0
    times, kernel = [], []
    for _ in range(rounds):
        timing: dict[str, Any] = {}
        t0 = time.perf_counter()
        end_to_end(trades, curve, options, timing)
        times.append(time.perf_counter() - t0)
        if "kernel_ms" in timing:
            kernel.append(timing["kernel_ms"] / 1e3)
    row: dict[str, Any] = {"engine": engine, "ran": str(result.engine), "first_s": first,
                           "median_s": statistics.median(times), "times_s": times,
                           "kernel_s": statistics.median(kernel) if kernel else None}
    if reference is not None:
        row["max_diff"] = float(np.nanmax(np.abs(np.asarray(result.price) - reference)))
    row["prices"] = np.asarray(result.price)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="cuda,futhark-cuda,multicore,auto")
    parser.add_argument("--sizes", default="1,14,140,1400,14000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--models", type=int, default=0,
                        help="0: a model (a, sigma) per trade; K: the trades share K models (trade_rows)")
    parser.add_argument("--max-slow", type=float, default=60.0,
                        help="skip an engine on larger books once one call took longer than this (seconds)")
    parser.add_argument("--quantlib-seconds", type=float, default=None,
                        help="QuantLib 1.44's seconds a trade at the same steps (benches/trades_peers.py)")
    parser.add_argument("--two-curves", action="store_true",
                        help="discount on an OIS curve, project the swaptions and half the Bermudan bonds (floaters) "
                             "on a term-rate curve (issue 37)")
    parser.add_argument("--folder", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
    import trinom  # noqa: F401  (loaded before the first timed call: the library's import is not the engine's cost)
    from trinom import pipeline

    overlap_from = pipeline.OVERLAP_MIN_TRADES

    folder = args.folder or Path(tempfile.mkdtemp(prefix="desk-book-"))
    folder.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    slow: set[str] = set()
    rows: list[dict[str, Any]] = []
    print(f"{'trades':>7} {'engine':>14} {'ran':>22} {'first s':>9} {'median s':>9} {'kernel s':>9} {'Gnode/s':>8} "
          f"{'max diff':>9}", flush=True)
    for size in (int(s) for s in args.sizes.split(",")):
        trades, curve = write_book(folder, size, args.seed, args.models, args.two_curves)
        work = tree_work(trades, curve)
        reference = None
        for engine in engines:
            if engine in slow:
                rows.append({"trades": size, "engine": engine, "skipped": f"slower than {args.max_slow} s before"})
                print(f"{size:>7} {engine:>14} skipped (slower than {args.max_slow} s on a smaller book)", flush=True)
                continue
            row = measure(engine, trades, curve, args.rounds, reference, overlap_from)
            row.update(trades=size, work=work)
            if "error" in row:
                print(f"{size:>7} {engine:>14} cannot run: {row['error']}", flush=True)
            else:
                prices = row.pop("prices")
                if reference is None:
                    reference = prices
                row["gnode_s"] = work / row["median_s"] / 1e9
                if row["first_s"] > args.max_slow:
                    slow.add(engine)
                kernel = f"{row['kernel_s']:9.4f}" if row["kernel_s"] is not None else f"{'-':>9}"
                print(f"{size:>7} {engine:>14} {row['ran']:>22} {row['first_s']:9.3f} {row['median_s']:9.4f} {kernel} "
                      f"{row['gnode_s']:8.2f} {row.get('max_diff', 0.0):9.2e}", flush=True)
            rows.append(row)
        if args.quantlib_seconds:
            rows.append({"trades": size, "engine": "quantlib", "median_s": args.quantlib_seconds * size,
                         "note": "seconds a trade x trades (measured on the CPU by benches/trades_peers.py)"})
            print(f"{size:>7} {'quantlib':>14} {'(a trade x trades)':>22} {'':>9} {args.quantlib_seconds * size:9.3f}",
                  flush=True)
    if args.out:
        args.out.write_text(json.dumps({"machine": platform.machine(), "node": platform.node(),
                                        "cpus": os.cpu_count(), "models": args.models,
                                        "two_curves": args.two_curves, "rows": rows}, indent=1,
                                       default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
