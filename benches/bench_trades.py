"""Lowering a book of dated bonds (trinom.instruments.Trades -> BondPortfolio), as the issue's goal states it: 100000
callable bonds under 1 s on the 2-core CPU. Prints the median of ``--rounds`` warm runs of each stage.

    python benches/bench_trades.py --bonds 100000
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from trinom.instruments import Trades


def book(count: int, seed: int = 1) -> dict[str, np.ndarray]:
    """``count`` callable/puttable fixed-rate bonds: 2-30 years, annual to monthly coupons, every day count and
    calendar, bermudan, european and american calls and puts, and bullet bonds."""
    rng = np.random.default_rng(seed)
    as_of = np.datetime64("2026-11-25")
    issue = as_of - rng.integers(0, 5 * 365, count)
    maturity = as_of + rng.integers(2 * 365, 30 * 365, count)
    first = as_of + ((maturity - as_of).astype(np.int64) * rng.uniform(0.1, 0.5, count)).astype(np.int64)
    last = maturity - rng.integers(30, 365, count)
    option = rng.choice(np.array(["call", "put", None], dtype=object), count, p=[0.5, 0.3, 0.2])
    exercise = np.where(option == None, None, rng.choice(np.array(["bermudan", "european", "american"], dtype=object),  # noqa: E711
                                                          count, p=[0.7, 0.15, 0.15]))
    return {"id": np.array([f"B{k}" for k in range(count)], dtype=object), "type": np.full(count, "bond", dtype=object),
            "issue": issue.astype(str).astype(object), "maturity": maturity.astype(str).astype(object),
            "coupon": rng.uniform(0.0, 0.08, count), "frequency": rng.choice([1, 2, 4, 12], count, p=[0.3, 0.5, 0.15, 0.05]),
            "day_count": rng.choice(np.array(["30/360", "ACT/ACT-ICMA", "ACT/365F", "ACT/360", "30E/360"], dtype=object),
                                    count),
            "calendar": rng.choice(np.array(["NONE", "TARGET", "USGOVT", "NYSE", "TARGET+NYSE"], dtype=object), count),
            "convention": rng.choice(np.array(["F", "MF", "U", "P"], dtype=object), count),
            "option": option, "exercise": exercise,
            "first_exercise": np.where(option == None, None, first.astype(str).astype(object)),  # noqa: E711
            "last_exercise": np.where((option == None) | (exercise == "european"), None,  # noqa: E711
                                      last.astype(str).astype(object)),
            "exercise_price": np.where(option == None, np.nan, rng.uniform(95, 105, count)),  # noqa: E711
            "a": rng.uniform(0.01, 0.1, count), "sigma": rng.uniform(0.005, 0.015, count),
            "steps_per_year": np.full(count, 12)}


def floating(columns: dict[str, np.ndarray], seed: int = 3) -> dict[str, np.ndarray]:
    """The bonds of :func:`book` as floaters on their curve: a margin of 0-100 bp, the running coupon fixed at 2.7%,
    every option bermudan (a floater is exercised on its coupon dates: the american and european ones' windows run
    from their first exercise date to a year before maturity)."""
    count = columns["coupon"].size
    rng = np.random.default_rng(seed)
    out = dict(columns, coupon=np.full(count, np.nan), coupon_type=np.full(count, "float", dtype=object),
               margin=rng.uniform(0.0, 0.01, count), fixing=np.full(count, 0.027))
    has = out["option"] != None  # noqa: E711
    year_before = (np.asarray(out["maturity"], dtype="datetime64[D]") - 365).astype(str).astype(object)
    out["last_exercise"] = np.where(has & (out["last_exercise"] == None), year_before, out["last_exercise"])  # noqa: E711
    out["exercise"] = np.where(has, "bermudan", None)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bonds", type=int, default=100000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--floating", action="store_true",
                        help="the same bonds as floaters (coupon_type float, a margin, the running coupon's fixing; "
                             "american exercise as bermudan): issue 37")
    args = parser.parse_args()
    columns = book(args.bonds)
    if args.floating:
        columns = floating(columns)
    stages: dict[str, list[float]] = {"construct": [], "validate": [], "lower": []}
    for _ in range(args.rounds + 1):
        t0 = time.perf_counter()
        trades = Trades(as_of="2026-11-25", **columns)
        t1 = time.perf_counter()
        problems = trades.problems(("default",))
        t2 = time.perf_counter()
        (_first, bonds), = trades.instruments(("default",))
        t3 = time.perf_counter()
        for name, seconds in zip(stages, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            stages[name].append(seconds)
    assert not problems, problems[:3]
    total = [sum(parts) for parts in zip(*(v[1:] for v in stages.values()), strict=True)]
    print(f"{args.bonds} dated bonds, {bonds.cashflow_step.size} cash flows: " + ", ".join(
        f"{name} {statistics.median(v[1:]):.3f} s" for name, v in stages.items()) +
        f"; total median {statistics.median(total):.3f} s (goal < 1 s)")


if __name__ == "__main__":
    main()
