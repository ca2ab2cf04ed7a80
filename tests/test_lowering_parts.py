"""Lowering a book of dated bonds in parts, each on a thread (issue 34, item 4), gives the whole book's arrays bit for
bit: bonds of every frequency, day count, calendar and convention, european, bermudan and american exercise (with
notice days), amortization and a bad amortization date (a problem found while lowering)."""

from __future__ import annotations

import numpy as np
import pytest
from trinom.instruments.dated_bond import (
    Amortization,
    DatedBonds,
    ExerciseDates,
    ExerciseWindows,
    LoweredBonds,
    lower_dated_bonds,
)
from trinom.model.curve import YieldCurve

AS_OF = int(np.datetime64("2026-11-25", "D").astype(np.int64))


def book(count: int, seed: int = 7) -> tuple[DatedBonds, dict[str, object]]:
    """``count`` bonds and their exercise and amortization, at random."""
    rng = np.random.default_rng(seed)
    issue = AS_OF - rng.integers(0, 5 * 365, count)
    maturity = AS_OF + rng.integers(2 * 365, 30 * 365, count)
    bonds = DatedBonds(
        rows=np.arange(count) * 2 + 1, issue=issue, maturity=maturity, coupon=rng.uniform(0.0, 0.08, count),
        frequency=rng.choice([1, 2, 4, 12], count),
        day_count=rng.choice(np.array(["30/360", "ACT/ACT-ICMA", "ACT/365F", "ACT/360", "30E/360", "ACT/ACT-ISDA"]),
                             count),
        calendar=rng.choice(np.array(["NONE", "TARGET", "USGOVT", "NYSE", "TARGET+NYSE"]), count),
        convention=rng.choice(np.array(["F", "MF", "U", "P"]), count), a=rng.uniform(0.01, 0.1, count),
        sigma=rng.uniform(0.005, 0.015, count), spread=np.zeros(count), curve=np.zeros(count, dtype=np.int64),
        steps_per_year=rng.choice([12, 52, 365], count), side=rng.choice(np.array([0, 1], dtype=np.int8), count))
    third = np.arange(count) % 3
    first = AS_OF + ((maturity - AS_OF) * rng.uniform(0.1, 0.5, count)).astype(np.int64)
    last = maturity - rng.integers(30, 365, count)
    notice = np.where(rng.random(count) < 0.2, 30, 0)
    e, b, a = (np.flatnonzero(third == k) for k in range(3))
    dates = ExerciseDates.of(e, first[e], rng.uniform(95, 105, e.size), True, notice[e])
    coupon_dates = ExerciseWindows.of(b, first[b], last[b], rng.uniform(95, 105, b.size), notice[b])
    american = ExerciseWindows.of(a, first[a], last[a], rng.uniform(95, 105, a.size), notice[a])
    # amortizing bonds: half their notional repaid on their second coupon date (an unadjusted date for some); one
    # entry on no coupon date (the bond's problem)
    amortizing = np.arange(0, count, 7)
    day = np.array([int(maturity[k]) - 365 * 2 for k in amortizing])
    amortization = Amortization(bond=amortizing, date=day, ratio=np.full(amortizing.size, 0.5),
                                where=np.array([f"notionals.csv line {k + 2}" for k in range(amortizing.size)]))
    return bonds, {"dates": dates, "coupon_dates": coupon_dates, "american": american, "amortization": amortization,
                   "curves": [YieldCurve([0.02, 0.025, 0.03], [1, 3650, 11000])]}


def arrays(lowered: LoweredBonds) -> dict[str, np.ndarray]:
    flows = lowered.flows
    out = {f"flows.{name}": getattr(flows, name) for name in ("owner", "step", "date", "coupon", "repayment", "offsets",
                                                                  "time")}
    out.update({name: getattr(lowered, name) for name in ("accrued", "window_first", "window_last", "strike",
                                                          "point_offsets", "point_step", "point_price", "point_time")})
    return out


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_parts_on_threads_equal_the_whole_book(threads: int):
    bonds, inputs = book(600)
    whole = lower_dated_bonds(AS_OF, bonds, **inputs)  # type: ignore[arg-type]
    parts = lower_dated_bonds(AS_OF, bonds, threads=threads, part_bonds=130, **inputs)  # type: ignore[arg-type]
    assert whole.problems, "the book has a bond with a problem found while lowering"
    for name, value in arrays(whole).items():
        other = arrays(parts)[name]
        assert value.dtype == other.dtype and value.shape == other.shape, name
        assert value.tobytes() == other.tobytes(), name
    assert sorted(parts.problems) == sorted(whole.problems)
    assert parts.portfolio().cashflow_step.tobytes() == whole.portfolio().cashflow_step.tobytes()
