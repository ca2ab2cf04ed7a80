"""Schedules, accrual fractions and accrued interest of a book of dated bonds: medians of warmed-up runs.

    PYTHONPATH=python .venv/bin/python benches/bench_conventions.py [--bonds 100000] [--rounds 7]

Two books of random fixed-rate bonds issued 2015-2025:

* ``mixed``: every convention at random: day counts (all six), business-day conventions (U, F, MF, P),
  calendars (NONE, WEEKENDS, TARGET, NYSE, USGOVT, TARGET+NYSE), 1, 2, 4 or 12 coupons a year, end-of-month
  flags, maturities of 1 to 30 years;
* ``desk``: a government/corporate desk's book: 2 coupons a year (a fifth annual), 30/360 or ACT/ACT-ICMA,
  MF or F on TARGET, NYSE or USGOVT, maturities of 2 to 30 years.

Each round generates the schedules (from name columns, as a reader passes them), the accrual fraction of every
period and the accrued interest at one settlement date per bond. The first call of a process also builds the
holiday tables (printed as ``cold``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from trinom.conventions import accrual_fractions, accrued_interest, generate_schedules


def mixed_book(count: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    effective = np.datetime64("2015-01-01") + rng.integers(0, 3650, count)
    return {"effective": effective, "termination": effective + rng.integers(365, 30 * 365, count),
            "frequency": np.array([1, 2, 4, 12])[rng.integers(0, 4, count)],
            "calendar": np.array(["NONE", "WEEKENDS", "TARGET", "NYSE", "USGOVT", "TARGET+NYSE"])[rng.integers(0, 6, count)],
            "convention": np.array(["U", "F", "MF", "P"])[rng.integers(0, 4, count)],
            "end_of_month": rng.random(count) < 0.5,
            "day_count": np.array(["ACT/360", "ACT/365F", "30/360", "30E/360", "ACT/ACT-ISDA", "ACT/ACT-ICMA"])[
                rng.integers(0, 6, count)]}


def desk_book(count: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    effective = np.datetime64("2015-01-01") + rng.integers(0, 3650, count)
    return {"effective": effective, "termination": effective + rng.integers(2 * 365, 30 * 365, count),
            "frequency": np.where(rng.random(count) < 0.2, 1, 2),
            "calendar": np.array(["TARGET", "NYSE", "USGOVT"])[rng.integers(0, 3, count)],
            "convention": np.array(["MF", "F"])[rng.integers(0, 2, count)], "end_of_month": rng.random(count) < 0.3,
            "day_count": np.array(["30/360", "ACT/ACT-ICMA"])[rng.integers(0, 2, count)]}


def one_round(book: dict[str, np.ndarray], rate: np.ndarray, settlement: np.ndarray) -> tuple[float, float, float, int]:
    """Seconds for the schedules, the accrual fractions and the accrued interest; and the number of dates."""
    start = time.perf_counter()
    schedules = generate_schedules(effective=book["effective"], termination=book["termination"],
                                   frequency=book["frequency"], calendar=book["calendar"],
                                   convention=book["convention"], end_of_month=book["end_of_month"])
    generated = time.perf_counter()
    accrual_fractions(schedules=schedules, day_count=book["day_count"])
    accrued = time.perf_counter()
    accrued_interest(schedules=schedules, day_count=book["day_count"], coupon_rate=rate, settlement=settlement)
    done = time.perf_counter()
    return generated - start, accrued - generated, done - accrued, int(schedules.adjusted.size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bonds", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    arguments = parser.parse_args()
    books: dict[str, Callable[[int, np.random.Generator], dict[str, np.ndarray]]] = {"mixed": mixed_book,
                                                                                       "desk": desk_book}
    print(f"{'book':6} {'bonds':>7} {'dates':>9} {'schedules':>10} {'accrual':>8} {'accrued':>8} {'total':>8}  (ms)")
    for name, make in books.items():
        rng = np.random.default_rng(25)
        book = make(arguments.bonds, rng)
        rate = rng.uniform(0.0, 0.08, arguments.bonds)
        span = (book["termination"] - book["effective"]).astype(np.int64)
        settlement = book["effective"] + (rng.random(arguments.bonds) * span).astype(np.int64)
        cold = one_round(book, rate, settlement)
        times = np.array([one_round(book, rate, settlement)[:3] for _ in range(arguments.rounds)])
        median = np.median(times, axis=0) * 1e3
        total = float(np.median(times.sum(axis=1))) * 1e3
        print(f"{name:6} {arguments.bonds:7d} {cold[3]:9d} {median[0]:10.1f} {median[1]:8.1f} {median[2]:8.1f} "
              f"{total:8.1f}  (cold {sum(cold[:3]) * 1e3:.0f})")


if __name__ == "__main__":
    main()
