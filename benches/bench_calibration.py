"""Per-trade and global Hull-White calibration times (issue 26): ``calibrate_baskets`` on N Bermudan-like trades of
about ten co-terminal European swaptions each, on NumPy and the Futhark targets (fut/calibrate.fut), a fixed and a
free; and the global ``trinom.calibrate`` on a 10x10 swaption matrix. The issue's goals: 100000 trades under 60 s
on the 2-core CPU and under 2 s on the H100 (0.5 s); the global fit under 50 ms on the CPU.

Each row is the median of ``--runs`` runs after a warm-up run (which also loads the Futhark library and, on cuda,
compiles its kernels). ``total`` is the whole call (the quotes' schedules, discount factors and market prices, the
solver, the statuses and model prices); ``solver`` the Levenberg-Marquardt alone (NumPy's or the kernel's call,
its arrays' copies included).

    python benches/bench_calibration.py --trades 100000 --backend multicore --backend numpy --numpy-trades 10000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import trinom
from trinom.model import DatedCurve, calibration_kernel
from trinom.model import baskets as baskets_module
from trinom.model.baskets import Baskets, calibrate_baskets, trade_baskets
from trinom.model.quotes import VolQuotes, VolSurface

AS_OF = np.datetime64("2026-11-25")
EXPIRIES = ["1M", "3M", "6M", "1Y", "2Y", "3Y", "5Y", "7Y", "10Y", "15Y", "20Y", "25Y", "30Y"]
TENORS = ["1Y", "2Y", "3Y", "5Y", "7Y", "10Y", "15Y", "20Y", "25Y", "30Y"]


def market(seed: int = 0) -> tuple[DatedCurve, VolQuotes]:
    """An upward-sloping EUR curve to 50 years and a normal-volatility matrix (about 90 bp, falling with expiry and
    tenor, a little noise)."""
    rng = np.random.default_rng(seed)
    years = np.array([0.25, 0.5, 1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50])
    dates = [str(AS_OF + round(365.25 * y)) for y in years]
    curve = DatedCurve(as_of=str(AS_OF), dates=dates, zero_rates=0.021 + 0.012 * (1 - np.exp(-years / 7)), name="EUR")
    e, t = np.meshgrid(np.arange(len(EXPIRIES)), np.arange(len(TENORS)), indexing="ij")
    vol = 0.0092 - 0.00015 * e - 0.0001 * t + rng.normal(0.0, 0.0001, e.shape)
    quotes = VolQuotes.from_columns(curve="EUR", expiry=[EXPIRIES[i] for i in e.ravel()],
                                    tenor=[TENORS[j] for j in t.ravel()], vol=vol.ravel(), kind="normal")
    return curve, quotes


def bermudans(count: int, seed: int = 1) -> Baskets:
    """``count`` Bermudan-like trades: 5 to 30 years, annual or semiannual exercise (and fixed leg), exercisable on
    the last 8 to 12 period dates before maturity that fall at least a month after the as-of date; deal rates
    around the curve's, payers and receivers."""
    rng = np.random.default_rng(seed)
    years = rng.integers(5, 31, count)
    per_year = rng.choice([1, 2], count)
    wanted = rng.integers(8, 13, count)
    end = AS_OF + np.round(years * 365.25).astype(np.int64)
    exercise = []
    for k in range(count):
        step = 365.25 / per_year[k]
        dates = [end[k] - round(j * step) for j in range(int(wanted[k]), 0, -1)]
        exercise.append([d for d in dates if d > AS_OF + 30])
    return trade_baskets(id=[f"T{k}" for k in range(count)], curve="EUR", exercise=exercise, end=end,
                         rate=rng.uniform(0.02, 0.04, count), frequency=per_year, day_count="30/360",
                         side=rng.choice(["payer", "receiver"], count))


class SolverClock:
    """Times the solver inside ``calibrate_baskets``: NumPy's ``levenberg_marquardt`` (as baskets.py calls it) and
    the kernel's ``levenberg_marquardt_kernel`` (as it imports it on each call)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._saved: list[tuple[Any, str, Callable[..., Any]]] = []

    def _wrap(self, owner: Any, name: str) -> None:
        inner = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        self._saved.append((owner, name, inner))
        setattr(owner, name, timed)

    def __enter__(self) -> SolverClock:
        self._wrap(baskets_module, "levenberg_marquardt")
        self._wrap(calibration_kernel, "levenberg_marquardt_kernel")
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, inner in reversed(self._saved):
            setattr(owner, name, inner)


def per_trade(curve: DatedCurve, surface: VolSurface, baskets: Baskets, backend: str, a: float | None,
              runs: int) -> dict[str, Any]:
    """Median total and solver seconds of ``runs`` calls after a warm-up, and the last call's outcome."""
    totals, solvers = [], []
    fit = None
    for run in range(runs + 1):
        with SolverClock() as clock:
            start = time.perf_counter()
            fit = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a=a, strike="deal",
                                    backend=backend)
            elapsed = time.perf_counter() - start
        if run:  # the first is the warm-up
            totals.append(elapsed)
            solvers.append(clock.seconds)
    assert fit is not None
    counts = {s: int((fit.status == s).sum()) for s in ("converged", "bound", "no fit")}
    return {"total": statistics.median(totals), "solver": statistics.median(solvers), "quotes": int(fit.trade.size),
            "counts": counts, "iterations": float(fit.iterations.mean())}


def global_fit(curve: DatedCurve, quotes: VolQuotes, runs: int) -> dict[str, Any]:
    """The global calibration of one curve to the 10x10 matrix of expiries 1M..15Y, tenors 1Y..30Y."""
    keep = np.isin(quotes.expiry, EXPIRIES[:10])
    matrix = VolQuotes.from_columns(curve="EUR", expiry=quotes.expiry[keep], tenor=quotes.tenor[keep],
                                    vol=quotes.vol[keep], kind="normal")
    times = []
    result = None
    for run in range(runs + 1):
        start = time.perf_counter()
        result = trinom.calibrate(curves=curve, quotes=matrix)
        if run:
            times.append(time.perf_counter() - start)
    assert result is not None
    return {"total": statistics.median(times), "quotes": len(matrix), "status": str(result.status[0]),
            "iterations": int(result.iterations[0])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trades", type=int, default=100000, help="trades per per-trade calibration (default 100000)")
    parser.add_argument("--numpy-trades", type=int, default=None,
                        help="trades for the numpy backend (default --trades; 100000 take minutes)")
    parser.add_argument("--backend", action="append", default=None,
                        help="numpy, c, multicore, cuda, opencl or auto; repeat for several (default: numpy and "
                        "multicore)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per row, after a warm-up (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    backends = args.backend or ["numpy", "multicore"]
    curve, quotes = market()
    surface = VolSurface.from_quotes(quotes, as_of=AS_OF)
    rows = ["| calibration | backend | trades | quotes | a | total s | solver s | converged / bound / no fit | "
            "iterations (mean) |", "| --- | --- | ---: | ---: | --- | ---: | ---: | --- | ---: |"]
    for backend in backends:
        count = args.numpy_trades if backend == "numpy" and args.numpy_trades else args.trades
        baskets = bermudans(count, args.seed)
        for a in (0.03, None):
            row = per_trade(curve, surface, baskets, backend, a, args.runs)
            c = row["counts"]
            rows.append(f"| per trade | {backend} | {count} | {row['quotes']} | {'0.03' if a else 'free'} | "
                        f"{row['total']:.2f} | {row['solver']:.2f} | {c['converged']} / {c['bound']} / {c['no fit']} | "
                        f"{row['iterations']:.1f} |")
            print(rows[-1], flush=True)
    g = global_fit(curve, quotes, max(args.runs, 5))
    rows.append(f"| global (10x10 matrix) | numpy | 1 curve | {g['quotes']} | free | {g['total']:.3f} | | {g['status']} | "
                f"{g['iterations']} |")
    print()
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
