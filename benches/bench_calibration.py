"""Per-trade and global Hull-White calibration times (issue 26): ``calibrate_baskets`` on N Bermudan-like trades of
about ten co-terminal European swaptions each, on NumPy and the Futhark targets (fut/calibrate.fut), a fixed and a
free; and the global ``trinom.calibrate`` on a 10x10 swaption matrix. The issue's goals: 100000 trades under 60 s
on the 2-core CPU and under 2 s on the H100 (0.5 s); the global fit under 50 ms on the CPU.

Each row is the median of ``--runs`` runs after a warm-up run (which also loads the Futhark library and, on cuda,
compiles its kernels). ``total`` is the whole call; ``quotes`` the quotes' preparation and pricing (their schedules,
discount factors, forward swap rates, annuities and market prices: ``prepare_baskets`` and
``PreparedBaskets.quotes``); ``solver`` the Levenberg-Marquardt alone (NumPy's or the kernel's call, its arrays'
copies included); ``after`` the outcome from the solver's (flat-objective check, model prices and volatilities,
statuses and messages); the rest of ``total`` is the solver's setup (starting points, padded slots, the kernel's
arrays). ``--dates schedule`` (default): each trade's exercise dates on its fixed leg's schedule (backward from the
maturity, unadjusted), so that its quotes share one schedule; ``--dates days``: dates whole multiples of 365.25 /
frequency days before the maturity, mostly off any monthly schedule (every quote's leg generated on its own).
``--scenarios K``: also K scenarios (parallel curve moves of 1 bp times 1..K) fitted in one
``calibrate_prepared`` call warm-started from the base fit, as a risk run's recalibration does.

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
from trinom.model import DatedCurve

try:  # the fit's module: where calibrate_baskets looks up the functions that PhaseClock times
    from trinom.analytics.baskets import Baskets, calibrate_baskets, trade_baskets
    from trinom.analytics.baskets import fit as baskets_module
    from trinom.engines import calibration_kernel
except ImportError:  # a revision before issue 36 moved them: trinom.model.baskets, one module
    from trinom.model import baskets as baskets_module  # type: ignore[no-redef]
    from trinom.model import calibration_kernel  # type: ignore[no-redef]
    from trinom.model.baskets import Baskets, calibrate_baskets, trade_baskets  # type: ignore[no-redef]
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


def bermudans(count: int, seed: int = 1, dates: str = "schedule") -> Baskets:
    """``count`` Bermudan-like trades: 5 to 30 years, annual or semiannual exercise (and fixed leg), exercisable on
    the last 8 to 12 period dates before maturity that fall at least a month after the as-of date (``dates``:
    ``schedule``: the fixed leg's dates, months before the maturity; ``days``: multiples of 365.25 / frequency days
    before it); deal rates around the curve's, payers and receivers."""
    from trinom.conventions.dates import add_months

    rng = np.random.default_rng(seed)
    years = rng.integers(5, 31, count)
    per_year = rng.choice([1, 2], count)
    wanted = rng.integers(8, 13, count)
    end = AS_OF + np.round(years * 365.25).astype(np.int64)
    exercise = []
    for k in range(count):
        back = np.arange(int(wanted[k]), 0, -1)
        if dates == "schedule":
            days = add_months(np.full(back.size, end[k].astype(np.int64)), -(12 // per_year[k]) * back)
        else:
            days = end[k].astype(np.int64) - np.round(back * 365.25 / per_year[k]).astype(np.int64)
        exercise.append([d for d in days.astype("datetime64[D]") if d > AS_OF + 30])
    return trade_baskets(id=[f"T{k}" for k in range(count)], curve="EUR", exercise=exercise, end=end,
                         rate=rng.uniform(0.02, 0.04, count), frequency=per_year, day_count="30/360",
                         side=rng.choice(["payer", "receiver"], count))


#: The phases of a per-trade calibration and the functions (of trinom.analytics.baskets.fit) each is timed in (a revision
#: that prices its quotes in ``PreparedBaskets._priced`` and ``_quote_set`` has ``quotes`` call them, not nest them).
PHASES: dict[str, tuple[str, ...]] = {"quotes": ("prepare_baskets", "PreparedBaskets._priced", "PreparedBaskets._quote_set")
                                      if hasattr(baskets_module.PreparedBaskets, "_priced")
                                      else ("prepare_baskets", "PreparedBaskets.quotes"),
                                      "solver": ("levenberg_marquardt",),
                                      "after": ("_Setup.finish", "_KernelScenario.finish")}


class PhaseClock:
    """Times the phases inside ``calibrate_baskets``: the quotes (``prepare_baskets`` and the pricing of the
    prepared quotes), the solver (NumPy's ``levenberg_marquardt`` as the fit calls it, the kernel's
    ``levenberg_marquardt_kernel`` or ``levenberg_marquardt_scenarios`` as it imports them on each call) and what
    follows it (``_Setup.finish``, ``_KernelScenario.finish``). Phases a revision does not have are not timed
    (NaN)."""

    def __init__(self) -> None:
        self.seconds = {phase: 0.0 for phase in PHASES}
        self.found = {phase: False for phase in PHASES}
        self._saved: list[tuple[Any, str, Callable[..., Any]]] = []

    def _wrap(self, owner: Any, name: str, phase: str) -> None:
        inner = getattr(owner, name, None)
        if inner is None:
            return
        self.found[phase] = True

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - start

        self._saved.append((owner, name, inner))
        setattr(owner, name, timed)

    def __enter__(self) -> PhaseClock:
        for phase, names in PHASES.items():
            for name in names:
                owner_name, _, attribute = name.rpartition(".")
                owner = getattr(baskets_module, owner_name, None) if owner_name else baskets_module
                if owner is not None:
                    self._wrap(owner, attribute, phase)
        self._wrap(calibration_kernel, "levenberg_marquardt_kernel", "solver")
        self._wrap(calibration_kernel, "levenberg_marquardt_scenarios", "solver")
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, inner in reversed(self._saved):
            setattr(owner, name, inner)

    def split(self) -> dict[str, float]:
        return {phase: self.seconds[phase] if self.found[phase] else float("nan") for phase in PHASES}


def per_trade(curve: DatedCurve, surface: VolSurface, baskets: Baskets, backend: str, a: float | None,
              runs: int) -> dict[str, Any]:
    """Median total and phase seconds of ``runs`` calls after a warm-up, and the last call's outcome."""
    totals: list[float] = []
    phases: dict[str, list[float]] = {phase: [] for phase in PHASES}
    fit = None
    for run in range(runs + 1):
        with PhaseClock() as clock:
            start = time.perf_counter()
            fit = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a=a, strike="deal",
                                    backend=backend)
            elapsed = time.perf_counter() - start
        if run:  # the first is the warm-up
            totals.append(elapsed)
            for phase, seconds in clock.split().items():
                phases[phase].append(seconds)
    assert fit is not None
    counts = {s: int((fit.status == s).sum()) for s in ("converged", "bound", "no fit")}
    return {"total": statistics.median(totals), **{p: statistics.median(v) for p, v in phases.items()},
            "quotes_count": int(fit.trade.size), "counts": counts, "iterations": float(fit.iterations.mean()),
            "fit": fit}


def scenarios(curve: DatedCurve, surface: VolSurface, baskets: Baskets, backend: str, a: float | None, count: int,
              base: Any) -> dict[str, Any]:
    """``count`` scenarios (parallel moves of 1 bp times 1..count) fitted in one warm-started call: seconds for the
    preparation, for the scenarios, and their mean iterations."""
    start = time.perf_counter()
    prepared = baskets_module.prepare_baskets(baskets, surface, AS_OF, curves=curve, strike="deal")
    prepared_at = time.perf_counter()
    states = [({"EUR": curve.bumped(1e-4 * (k + 1))}, 0.0) for k in range(count)]
    with PhaseClock() as clock:
        fits = baskets_module.calibrate_prepared(prepared, states, x0=np.stack([base.a, base.sigma], axis=1), a=a,
                                                 backend=backend, details=False)
    done = time.perf_counter()
    return {"prepare": prepared_at - start, "scenarios": done - prepared_at, **clock.split(),
            "iterations": float(np.mean([f.iterations.mean() for f in fits])),
            "fitted": float(np.mean([np.isin(f.status, ("converged", "bound")).mean() for f in fits]))}


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
    parser.add_argument("--dates", choices=("schedule", "days"), default="schedule",
                        help="exercise dates on the fixed leg's schedule (default) or whole days apart")
    parser.add_argument("--scenarios", type=int, default=0,
                        help="also this many scenarios fitted in one warm-started call (calibrate_prepared)")
    args = parser.parse_args(argv)
    backends = args.backend or ["numpy", "multicore"]
    curve, quotes = market()
    surface = VolSurface.from_quotes(quotes, as_of=AS_OF)
    rows = ["| calibration | backend | trades | quotes | a | total s | quotes s | solver s | after s | "
            "converged / bound / no fit | iterations (mean) |",
            "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    for backend in backends:
        count = args.numpy_trades if backend == "numpy" and args.numpy_trades else args.trades
        baskets = bermudans(count, args.seed, args.dates)
        for a in (0.03, None):
            row = per_trade(curve, surface, baskets, backend, a, args.runs)
            c = row["counts"]
            rows.append(f"| per trade | {backend} | {count} | {row['quotes_count']} | {'0.03' if a else 'free'} | "
                        f"{row['total']:.2f} | {row['quotes']:.2f} | {row['solver']:.2f} | {row['after']:.2f} | "
                        f"{c['converged']} / {c['bound']} / {c['no fit']} | {row['iterations']:.1f} |")
            print(rows[-1], flush=True)
            if args.scenarios and hasattr(baskets_module, "calibrate_prepared"):
                more = scenarios(curve, surface, baskets, backend, a, args.scenarios, row["fit"])
                rows.append(f"| {args.scenarios} scenarios, warm | {backend} | {count} x {args.scenarios} | | "
                            f"{'0.03' if a else 'free'} | {more['prepare'] + more['scenarios']:.2f} | "
                            f"{more['prepare'] + more['quotes']:.2f} | {more['solver']:.2f} | {more['after']:.2f} | "
                            f"{100 * more['fitted']:.2f}% fitted | {more['iterations']:.1f} |")
                print(rows[-1], flush=True)
    g = global_fit(curve, quotes, max(args.runs, 5))
    rows.append(f"| global (10x10 matrix) | numpy | 1 curve | {g['quotes']} | free | {g['total']:.3f} | | | | "
                f"{g['status']} | {g['iterations']} |")
    print()
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
