"""Books of ordinary instruments for the float32 checks of risk and OAS (issue 24): callable and puttable
coupon bonds as a desk holds them (7 to 20 years, semi-annual coupons, callable at par from year 5, monthly
steps, Hull-White a = 0.05-0.15, sigma = 0.005-0.02), unlike the paper's generated sets, whose extreme
volatilities float32 prices differently."""

from __future__ import annotations

import numpy as np
import trinom


def desk_bonds(count: int = 8, seed: int = 0) -> trinom.BondPortfolio:
    """``count`` callable (even rows) and puttable (odd rows) bonds, seeded."""
    rng = np.random.default_rng(seed)
    years = rng.integers(7, 21, count)
    steps: list[int] = []
    coupons: list[float] = []
    repayments: list[float] = []
    counts, last = [], []
    for y in years:
        schedule = np.arange(6, 12 * int(y) + 1, 6)
        steps += schedule.tolist()
        coupons += [float(rng.uniform(2.0, 3.5))] * schedule.size
        repayments += [0.0] * (schedule.size - 1) + [100.0]
        counts.append(schedule.size)
        last.append(12 * int(y) - 1)
    return trinom.BondPortfolio(
        term_unit=[360] * count, term_steps=[12] * count, a=rng.uniform(0.05, 0.15, count),
        sigma=rng.uniform(0.005, 0.02, count), maturity=years.astype(float), cashflow_count=counts,
        cashflow_step=steps, repayment=repayments, coupon=coupons, spread=rng.uniform(0.0, 1.0, count),
        option_type=[k % 2 for k in range(count)], strike=[100.0] * count, first_exercise=[60] * count,
        last_exercise=last, exercise_frequency=[1] * count, curve_index=[0] * count)
