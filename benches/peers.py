"""trinom against the libraries a user would pick instead: QuantLib-Python and FinancePy.

Hull's book option (a European option expiring in 3 years on a 9-year zero-coupon bond of
face 100, strike 63, a = 0.1, sigma = 0.01; call and put) on the thesis yield curve, priced by

* trinom, as a portfolio of copies of it (half calls, half puts): the NumPy reference backend
  (``--copies``, 1000), and the Futhark CPU backends where built and usable here
  (``--extra-copies``, 200; pick backends with ``--backends``);
* QuantLib-Python: the call as a straight zero-coupon bond minus a callable zero-coupon bond
  (the put as a puttable bond minus the straight bond) with ``TreeCallableFixedRateBondEngine``
  on a ``HullWhite`` model, and the model's closed form ``discountBondOption``;
* FinancePy: ``HWTree.option_on_zero_cpn_bond_tree`` (tree built over the bond's life) and
  its closed form ``HWTree.option_on_zcb``;
* trinom's closed form ``trinom.engines.closed_form.zero_coupon_bond_option``.

For each tree size it prints prices, distances to the closed form and time per option as
markdown, then the linear extrapolation to a 65536-option book, and writes the report to
``benches/PEERS.md``. A script, not a test: ``make bench-peers`` installs the pinned peers
(``requirements-bench.txt``) and runs it::

    .venv/bin/pip install -r requirements-bench.txt
    .venv/bin/python benches/peers.py                       # 3 to 4 minutes on 2 cores
    .venv/bin/python benches/peers.py --steps 100 500 --copies 100 --out -   # quick look
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import trinom
from trinom.engines.closed_form import discount_factor, zero_coupon_bond_option

# Hull's book option (Options, Futures and Other Derivatives, Example 30.x; thesis test case).
STRIKE, MATURITY, EXPIRY, A, SIGMA, FACE = 63.0, 9.0, 3.0, 0.1, 0.01, 100.0
TYPES = ("call", "put")
BOOK = 65536  # the size of the thesis datasets, for the extrapolation
ROOT = Path(__file__).resolve().parent.parent


# --- measuring ------------------------------------------------------------------------------------
def timed(fn: Callable[[], Any], max_runs: int, budget_s: float) -> tuple[Any, dict[str, float]]:
    """``(result, {"median", "best", "runs"})`` in seconds: run ``fn`` once, then again while the
    next run fits in ``budget_s`` (judged by the last run) and fewer than ``max_runs`` have run."""
    times: list[float] = []
    while True:
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        if len(times) >= max_runs or sum(times) + times[-1] > budget_s:
            return result, {"median": statistics.median(times), "best": min(times), "runs": len(times)}


def per(timing: dict[str, float], count: int) -> dict[str, float]:
    """A timing of ``count`` options as a timing per option."""
    return {"median": timing["median"] / count, "best": timing["best"] / count, "runs": timing["runs"]}


def fmt_timing(timing: dict[str, float]) -> str:
    """``median (fastest) [runs]``, or ``time [1]`` for a single run."""
    if timing["runs"] == 1:
        return f"{fmt_time(timing['median'])} [1]"
    return f"{fmt_time(timing['median'])} ({fmt_time(timing['best'])}) [{timing['runs']}]"


def fmt_time(seconds: float) -> str:
    """A duration with three significant digits in a readable unit."""
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0), ("s", 1.0), ("ms", 1e-3)):
        if seconds >= size or unit == "ms":
            return f"{seconds / size:.3g} {unit}"
    raise AssertionError


def machine() -> str:
    """CPU model and core count of this machine."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {os.cpu_count()} logical cores ({usable} usable), {platform.system()} {platform.machine()}"


# --- trinom -------------------------------------------------------------------------------------------
def book_portfolio(term_steps: int, copies: int) -> trinom.Portfolio:
    """``copies`` copies of the book option at ``term_steps`` steps per year, first half calls."""
    half = copies // 2
    return trinom.Portfolio(strike=np.full(copies, STRIKE), maturity=np.full(copies, MATURITY),
                            expiry=np.full(copies, EXPIRY), term_unit=np.full(copies, 365),
                            term_steps=np.full(copies, term_steps), a=np.full(copies, A),
                            sigma=np.full(copies, SIGMA), option_type=["call"] * half + ["put"] * (copies - half))


def our_backends(wanted: list[str] | None) -> list[tuple[str, str | None]]:
    """``wanted`` as ``(backend, target)`` (``NAME`` or ``NAME:TARGET``); by default the reference
    backend, then each Futhark backend on its ``multicore`` target (``c`` if that is not usable)."""
    if wanted:
        return [(w.split(":")[0], w.split(":")[1] if ":" in w else None) for w in wanted]
    chosen: list[tuple[str, str | None]] = [("reference", None)]
    usable = {(name, target) for name, target, ok, _why in trinom.engines.status() if ok}
    for name in ("futhark-flat", "futhark-basic"):
        for target in ("multicore", "c"):
            if (name, target) in usable:
                chosen.append((name, target))
                break
    return chosen


def label(backend: tuple[str, str | None]) -> str:
    name, target = backend
    return f"trinom {name}" + (f" ({target})" if target else "")


# --- QuantLib -----------------------------------------------------------------------------------------
class QuantLibPeer:
    """The book option in QuantLib: bond minus callable bond (call), puttable bond minus bond (put)."""

    def __init__(self, curve: trinom.YieldCurve):
        import QuantLib as ql  # noqa: N813 (the usual alias)

        self.ql = ql
        self.today = ql.Date(2, ql.January, 2024)
        ql.Settings.instance().evaluationDate = self.today
        self.day_count = ql.Actual365Fixed()  # t = days / 365, as trinom's curve
        # The same zero rates at the same days, continuously compounded, linear in time; a point
        # at day 0 with the first rate makes the curve flat before its first point, as trinom's.
        dates = [self.today] + [self.today + int(d) for d in curve.days]
        rates = [float(curve.rates[0])] + [float(r) for r in curve.rates]
        zero_curve = ql.ZeroCurve(dates, rates, self.day_count, ql.NullCalendar(), ql.Linear(), ql.Continuous)
        zero_curve.enableExtrapolation()
        self.curve = ql.YieldTermStructureHandle(zero_curve)
        self.maturity = self.today + round(MATURITY * 365)  # 3285 days: t = 9.0 exactly
        self.expiry = self.today + round(EXPIRY * 365)  # 1095 days: t = 3.0 exactly
        self.straight = ql.ZeroCouponBond(0, ql.NullCalendar(), FACE, self.maturity, ql.Unadjusted, 100.0, self.today)
        self.straight.setPricingEngine(ql.DiscountingBondEngine(self.curve))

    def closed_form(self) -> dict[str, float]:
        """``HullWhite.discountBondOption`` (unit face, so strike 0.63 and times 100)."""
        ql = self.ql
        model = ql.HullWhite(self.curve, A, SIGMA)
        t_exp = self.day_count.yearFraction(self.today, self.expiry)
        t_mat = self.day_count.yearFraction(self.today, self.maturity)
        return {kind: FACE * model.discountBondOption(otype, STRIKE / FACE, t_exp, t_mat)
                for kind, otype in (("call", ql.Option.Call), ("put", ql.Option.Put))}

    def tree(self, kind: str, steps: int) -> float:
        """One option, everything per option included: model, bond with its call/put, tree, prices."""
        ql = self.ql
        model = ql.HullWhite(self.curve, A, SIGMA)
        schedule = ql.CallabilitySchedule()
        # Zero-coupon: no accrued interest, so the clean call price 63 (% of face 100) is the strike.
        schedule.append(ql.Callability(ql.BondPrice(STRIKE, ql.BondPrice.Clean),
                                       ql.Callability.Call if kind == "call" else ql.Callability.Put, self.expiry))
        bond = ql.CallableZeroCouponBond(0, FACE, ql.NullCalendar(), self.maturity, self.day_count,
                                         ql.Unadjusted, 100.0, self.today, schedule)
        bond.setPricingEngine(ql.TreeCallableFixedRateBondEngine(model, steps, self.curve))
        self.straight.recalculate()
        straight = self.straight.NPV()
        # callable = bond - call (the issuer's option); puttable = bond + put (the holder's).
        return straight - bond.NPV() if kind == "call" else bond.NPV() - straight


# --- FinancePy ------------------------------------------------------------------------------------------
class FinancePyPeer:
    """The book option in FinancePy: ``HWTree`` built to the bond's maturity, priced at expiry."""

    def __init__(self, curve: trinom.YieldCurve, daily: bool = False):
        from financepy.models.hw_tree import HWTree

        self.HWTree = HWTree
        if daily:  # trinom's curve sampled at every day: removes the interpolation difference
            days = np.arange(0, int(curve.days[-1]) + 1)
            self.times = days / 365.0
            self.dfs = discount_factor(curve, self.times)
        else:  # the same zero rates at the same days (FinancePy interpolates flat forwards)
            self.times = np.concatenate(([0.0], curve.days / 365.0))
            self.dfs = np.exp(-np.concatenate(([curve.rates[0]], curve.rates)) * self.times)
        self.dfs[0] = 1.0

    def closed_form(self) -> dict[str, float]:
        values = self.HWTree(SIGMA, A).option_on_zcb(EXPIRY, MATURITY, STRIKE, FACE, self.times, self.dfs)
        return {kind: float(values[kind]) for kind in TYPES}

    def tree(self, steps: int) -> dict[str, float]:
        """One tree (built over the bond's life with ``steps`` steps) gives the call and the put."""
        model = self.HWTree(SIGMA, A, steps)
        model.build_tree(MATURITY, self.times, self.dfs)
        values = model.option_on_zero_cpn_bond_tree(EXPIRY, MATURITY, STRIKE, FACE)
        return {kind: float(values[kind]) for kind in TYPES}


# --- the run --------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 500, 1000, 2000],
                        help="nominal tree sizes, steps over the bond's 9-year life; each is rounded down to a "
                             "multiple of 9 so that trinom (whole steps per year) and the peers use the same "
                             "tree (default: %(default)s)")
    parser.add_argument("--copies", type=int, default=1000,
                        help="portfolio size for trinom's reference backend (default: %(default)s)")
    parser.add_argument("--extra-copies", type=int, default=200,
                        help="portfolio size for trinom's other backends, a smaller sample to keep the run short "
                             "(default: %(default)s)")
    parser.add_argument("--backends", nargs="+", metavar="NAME[:TARGET]",
                        help="trinom backends to measure (default: reference, then futhark-flat and futhark-basic "
                             "on the multicore target where usable)")
    parser.add_argument("--runs", type=int, default=5, help="most timed runs per measurement (default: %(default)s)")
    parser.add_argument("--budget", type=float, default=15.0,
                        help="seconds per measurement after which no further run starts (default: %(default)s)")
    parser.add_argument("--out", default=str(ROOT / "benches" / "PEERS.md"),
                        help="markdown report to write, '-' for none (default: benches/PEERS.md)")
    args = parser.parse_args(argv)
    wall = time.perf_counter()
    load_before = os.getloadavg()

    import financepy
    import numba
    import QuantLib

    curve = trinom.YieldCurve.thesis()
    sizes = [(nominal, max(1, nominal // 9)) for nominal in args.steps]  # (nominal, term_steps)
    backends = our_backends(args.backends)
    ql_peer, fp_peer, fp_daily = QuantLibPeer(curve), FinancePyPeer(curve), FinancePyPeer(curve, daily=True)

    one = book_portfolio(1, 2)
    exact = dict(zip(TYPES, (float(v) for v in zero_coupon_bond_option(one, curve)), strict=True))
    closed = {"trinom.closed_form (zero rates linear in days)": exact,
              "QuantLib HullWhite.discountBondOption (ZeroCurve, Linear, Continuous, Act/365F)": ql_peer.closed_form(),
              "FinancePy HWTree.option_on_zcb, same 16 zero rates (flat-forward interpolation)": fp_peer.closed_form(),
              "FinancePy HWTree.option_on_zcb, trinom's curve at every day": fp_daily.closed_form()}

    # Warm-ups, not timed: numba compiles (or loads its cache of) FinancePy's tree on first use.
    start = time.perf_counter()
    fp_peer.tree(9)
    jit_s = time.perf_counter() - start
    ql_peer.tree("call", 9)
    for backend in backends:
        trinom.price(book_portfolio(1, 2), curve, backend=backend[0], target=backend[1])

    rows = []
    for nominal, term_steps in sizes:
        n = 9 * term_steps
        geometry = book_portfolio(term_steps, 1).geometry()
        assert int(geometry.n[0]) == n, (int(geometry.n[0]), n)
        row: dict[str, Any] = {"nominal": nominal, "n": n, "width": int(geometry.width[0]), "ours": {}}
        for backend in backends:
            portfolio = book_portfolio(term_steps, args.copies if backend[0] == "reference" else args.extra_copies)
            prices, timing = timed(lambda b=backend, p=portfolio: trinom.price(p, curve, backend=b[0], target=b[1]).price,
                                   args.runs, args.budget)
            row["ours"][backend] = {"price": {"call": float(prices[0]), "put": float(prices[-1])},
                                    "time": per(timing, len(portfolio)), "copies": len(portfolio)}
        ql_prices, ql_times = {}, {}
        for kind in TYPES:
            ql_prices[kind], ql_times[kind] = timed(lambda k=kind, s=n: ql_peer.tree(k, s), args.runs, args.budget)
        call, put = ql_times["call"], ql_times["put"]  # per option: the mean of the call's and the put's
        row["ql"] = {"price": ql_prices, "time": {"median": (call["median"] + put["median"]) / 2,
                                                  "best": (call["best"] + put["best"]) / 2,
                                                  "runs": min(call["runs"], put["runs"])}}
        fp_prices, fp_timing = timed(lambda s=n: fp_peer.tree(s), args.runs, args.budget)
        row["fp"] = {"price": fp_prices, "time": fp_timing}
        row["fp_daily"] = fp_daily.tree(n)
        rows.append(row)
        print(f"  measured {nominal} steps (n = {n})", file=sys.stderr, flush=True)

    fp_100 = fp_peer.tree(100)  # the pitfall of a tree whose levels miss the expiry (footnote)
    fp_100_expiry_t = int(EXPIRY / (MATURITY / 100) + 0.5) * (MATURITY / 100)
    command = f"{os.path.relpath(sys.executable)} {shlex.join(['benches/peers.py', *sys.argv[1:]])}" \
        if argv is None else "benches/peers.py " + shlex.join(argv)
    report = render(rows, backends, closed, exact, args, command, jit_s, fp_100, fp_100_expiry_t,
                    versions={"QuantLib": QuantLib.__version__, "FinancePy": financepy.__version__,
                              "numba": numba.__version__, "numpy": np.__version__,
                              "Python": platform.python_version()},
                    wall_s=time.perf_counter() - wall, load=(load_before, os.getloadavg()))
    print(report)
    if args.out != "-":
        Path(args.out).write_text(report)
        print(f"written to {os.path.relpath(args.out)}", file=sys.stderr)


def render(rows, backends, closed, exact, args, command, jit_s, fp_100, fp_100_expiry_t, versions, wall_s, load) -> str:
    """The markdown report."""
    best = backends[0]
    copies = {b: rows[0]["ours"][b]["copies"] for b in backends}
    lines = [
        "# trinom against QuantLib-Python and FinancePy (issue 6, item 2)",
        "",
        f"Command: `{command}` (what `make bench-peers` runs after installing `requirements-bench.txt`).",
        f"Machine: {machine()}. " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        f"Whole run: {fmt_time(wall_s)}; load average (1, 5, 15 min) {', '.join(f'{x:.2f}' for x in load[0])} "
        f"at the start, {', '.join(f'{x:.2f}' for x in load[1])} at the end (a load above the core count means "
        "other work shared the CPU and the times are pessimistic).",
        "",
        "Hull's book option: European option expiring in 3 years on a 9-year zero-coupon bond (face 100), "
        "strike 63, a = 0.1, sigma = 0.01, on the thesis yield curve (`trinom.YieldCurve.thesis()`, 15 "
        "continuously compounded zero rates at 3..3653 days).",
        "",
        "## Closed forms",
        "",
        "| closed form | call | put | call − trinom's | put − trinom's |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, values in closed.items():
        lines.append(f"| {name} | {values['call']:.10f} | {values['put']:.10f} "
                     f"| {values['call'] - exact['call']:.1e} | {values['put'] - exact['put']:.1e} |")
    lines += [
        "",
        "QuantLib's curve holds the same zero rates at the same days with linear interpolation in "
        "t = days/365, so it is trinom's curve: its closed form agrees to rounding. FinancePy's "
        "`HWTree` interpolates discount factors flat-forward (log-linear, hard-wired in "
        "`hw_tree.py`), so between the curve points its P(0, t) differs from trinom's (3 and 9 years "
        "lie between points); sampled at every day the difference shrinks to the error of "
        "FinancePy's normal CDF (Hull's polynomial approximation, about 1e-7).",
        "",
        "## Prices",
        "",
        f"Tree sizes are steps over the bond's 9-year life. trinom has whole steps per year, so each "
        f"nominal size is rounded down to a multiple of 9 (`term_steps` = size // 9) and both peers get "
        f"the same number of steps n. |Δ| is the distance to trinom's closed form ({exact['call']:.10f} "
        f"call, {exact['put']:.10f} put).",
        "",
    ]
    head = ["size (n)", "option", *(label(b) for b in backends), "QuantLib tree", "FinancePy tree",
            *(f"\\|Δ\\| {label(b).removeprefix('trinom ')}" for b in backends), "\\|Δ\\| QuantLib", "\\|Δ\\| FinancePy",
            "\\|Δ\\| FinancePy, daily curve¹"]
    lines += ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for row in rows:
        for kind in TYPES:
            ours = [row["ours"][b]["price"][kind] for b in backends]
            cells = [f"{row['nominal']} ({row['n']})", kind, *(f"{v:.10f}" for v in ours),
                     f"{row['ql']['price'][kind]:.10f}", f"{row['fp']['price'][kind]:.10f}",
                     *(f"{abs(v - exact[kind]):.2e}" for v in ours),
                     f"{abs(row['ql']['price'][kind] - exact[kind]):.2e}",
                     f"{abs(row['fp']['price'][kind] - exact[kind]):.2e}",
                     f"{abs(row['fp_daily'][kind] - exact[kind]):.2e}"]
            lines.append("| " + " | ".join(cells) + " |")
    max_ql_gap = max(abs(r["ours"][best]["price"][k] - r["ql"]["price"][k]) for r in rows for k in TYPES)
    lines += [
        "",
        "¹ FinancePy's tree on trinom's curve sampled at every day (price only, not timed): what is left "
        "is FinancePy's own discretisation, not the curve.",
        "",
        f"trinom's tree and QuantLib's are the same Hull-White tree on the same curve: their prices differ "
        f"by at most {max_ql_gap:.1e} over all sizes (trinom rounds its curve look-ups to whole days, QuantLib "
        "interpolates at exact times and fits each level's drift with a numerical solver; neither shows at "
        "this precision). Both approach the closed form roughly as 1/n, with the usual oscillation of tree "
        "prices as nodes move past the strike. FinancePy's tree is a different algorithm: it builds the Arrow-Debreu prices "
        "to the option's expiry and takes the bond's price at the expiry nodes from Hull-White's analytic "
        "formula, with no backward induction over the bond's life: per option it updates about half the "
        "nodes trinom's and QuantLib's trees do (one forward pass instead of a forward and a backward pass).",
        "",
        "## Time per option",
        "",
        "Threads: QuantLib, numba-compiled FinancePy, trinom's NumPy reference and Futhark's `c` target run on "
        f"one thread; Futhark's `multicore` target uses every core ({os.cpu_count()} here). trinom: "
        + "; ".join(f"{label(b).removeprefix('trinom ')}, {copies[b]}" for b in backends)
        + " copies of the option (half calls, half puts) priced in one `trinom.price` call, time / copies. "
        "QuantLib: per option, building the "
        "model, the callable (or puttable) bond and its tree engine and pricing it and the straight bond; the "
        "mean of the call's and the put's times. FinancePy: one `HWTree` built and priced per option (one tree "
        "yields the call and the put of one strike; a book of options with different a, sigma, expiries or "
        "maturities needs a tree each, so one tree is counted as one option). Each time is the median of "
        f"up to {args.runs} runs, fewer when a run is slow (a run is not started once the measurement would "
        f"pass {args.budget:g} s): cells read `median (fastest run) [runs]`, and `[1]` marks a single timed run. "
        "Speed-ups and the extrapolation use the medians. "
        f"Not timed: FinancePy's first call, which JIT-compiles (or loads numba's cache): {fmt_time(jit_s)} here.",
        "",
    ]
    fastest = "trinom" if len(backends) > 1 else label(best)
    head = ["size (n)", "width", *(label(b) for b in backends), "QuantLib", "FinancePy",
            f"speed-up of {fastest} over QuantLib", "over FinancePy"]
    lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for row in rows:
        quickest = min(backends, key=lambda b: row["ours"][b]["time"]["median"])
        ours = row["ours"][quickest]["time"]["median"]
        which = f" ({label(quickest).removeprefix('trinom ')})" if len(backends) > 1 else ""
        cells = [f"{row['nominal']} ({row['n']})", str(row["width"]),
                 *(fmt_timing(row["ours"][b]["time"]) for b in backends),
                 fmt_timing(row["ql"]["time"]), fmt_timing(row["fp"]["time"]),
                 f"{row['ql']['time']['median'] / ours:.3g}x{which}", f"{row['fp']['time']['median'] / ours:.3g}x{which}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "The machine is shared: with a load average above its core count, repeated runs of this script "
        "have differed by up to 2x in single cells (peers and trinom alike), so read the speed-ups as "
        "factors within about 2x. "
        "A speed-up below 1 means the peer is faster per option"
        + (" (speed-ups use the fastest trinom backend of the row, named in brackets)." if len(backends) > 1 else "."),
        "",
        f"## Extrapolation to a {BOOK}-option book",
        "",
        f"Time per option × {BOOK}, a linear extrapolation, not a measurement: the peers price one option "
        "per call (nothing is shared between options), so their time grows linearly; trinom's figures are "
        "extrapolated from its portfolios of " + " and ".join(str(c) for c in sorted(set(copies.values()), reverse=True))
        + " options (its per-option cost is flat in the portfolio size once there are enough rows to amortise "
        "per-step overheads and fill the cores, but a real book with mixed tree widths pays for padding, "
        "which these identical options do not).",
        "",
    ]
    head = ["size (n)", *(label(b) for b in backends), "QuantLib", "FinancePy"]
    lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for row in rows:
        cells = [f"{row['nominal']} ({row['n']})",
                 *(fmt_time(row["ours"][b]["time"]["median"] * BOOK) for b in backends),
                 fmt_time(row["ql"]["time"]["median"] * BOOK), fmt_time(row["fp"]["time"]["median"] * BOOK)]
        lines.append("| " + " | ".join(cells) + " |")
    other = [b for b in backends if b != best]
    lines += [
        "",
        "## Notes",
        "",
        f"* FinancePy at exactly 100 steps gives call {fp_100['call']:.6f} and put {fp_100['put']:.6f}: its "
        f"tree has dt = 9/100, and the expiry step `int(3/dt + 0.5)` sits at t = {fp_100_expiry_t:.2f}, not 3. "
        "Every size here is a multiple of 9 (so of 3), which puts the expiry on a tree level in all three trees.",
        "* QuantLib conventions used: evaluation date = issue date, 0 settlement days, `NullCalendar`, "
        "unadjusted dates, `Actual365Fixed` (expiry 1095 days and maturity 3285 days after today, so "
        "t = 3 and 9 exactly), face 100, call/put price 63 clean (no accrued interest on a zero-coupon "
        "bond), `NPV()` of each bond. The straight bond is priced by discounting on the curve (its tree "
        "value is the same up to the tree's fit); QuantLib's tree engine sets its time grid from the "
        "number of steps and the bond's dates.",
        "* FinancePy version: 1.1.0 and 1.1.2 declare numpy<2.4 and numba<0.63, which conflicts with "
        "trinom's numpy 2.4.6, so the newest release without those pins, 1.0.1, is used (its tree code "
        "is the one above; published FinancePy 1.1.2 timings may differ).",
        "* trinom's backends measured: " + ", ".join(label(b) for b in backends)
        + ("" if other else " (no Futhark CPU backend is built and usable in this checkout; "
           "`trinom backends` says why)") + ".",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
