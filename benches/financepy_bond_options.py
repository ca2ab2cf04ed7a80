"""FinancePy's Hull-White options on a coupon bond (``unit_tests/test_FinBondOption.py``) beside trinom's
``bond_option`` rows with a ``coupon`` (docs/published-cases.md): the published value, trinom at 365 steps a year,
FinancePy at its test's steps and at 4000. Needs FinancePy (``requirements-bench.txt``, or a release in an
environment of its own).

    PYTHONPATH=python python benches/financepy_bond_options.py
"""

from __future__ import annotations

import numpy as np


def main() -> None:
    import financepy.utils.global_vars as global_vars
    import trinom
    from financepy.market.curves.discount_curve import DiscountCurve
    from financepy.models.hw_tree import HWTree
    from financepy.products.bonds.bond import Bond
    from financepy.products.bonds.bond_option import BondOption
    from financepy.utils.date import Date
    from financepy.utils.day_count import DayCountTypes
    from financepy.utils.frequency import FrequencyTypes
    from financepy.utils.global_types import OptionTypes
    from trinom.model import DatedCurve

    days_in_year = getattr(global_vars, "G_DAYS_IN_YEAR", getattr(global_vars, "G_DAYS_IN_YEARS", 365.0))
    settle, issue = Date(1, 12, 2019), Date(1, 12, 2018)
    maturity = settle.add_tenor("10Y")
    bond = Bond(issue, maturity, 0.05, FrequencyTypes.SEMI_ANNUAL, DayCountTypes.ACT_ACT_ICMA)
    times = np.linspace(0, (maturity - settle) / days_in_year, 20)
    dates = settle.add_years(times)
    theirs = DiscountCurve(settle, dates, np.exp(-0.05 * times))
    expiry = settle.add_tenor("18m")
    pillars = [f"{d.y:04d}-{d.m:02d}-{d.d:02d}" for d in dates[1:]]
    ours = DatedCurve(as_of="2019-12-01", dates=pillars, discount_factors=np.exp(-0.05 * times[1:]), name="C")
    cases = [("European call, sigma 0.01", OptionTypes.EUROPEAN_CALL, 0.01, 100, 1.8809, "call", "european"),
             ("American call, sigma 0.01", OptionTypes.AMERICAN_CALL, 0.01, None, 2.0443, "call", "american"),
             ("European put, sigma 0.01", OptionTypes.EUROPEAN_PUT, 0.01, None, 2.2767, "put", "european"),
             ("American put, sigma 0.02", OptionTypes.AMERICAN_PUT, 0.02, None, 4.7948, "put", "american")]
    book = trinom.Trades(as_of="2019-12-01", id=[c[0] for c in cases], type="bond_option", issue="2018-12-01",
                         maturity="2029-12-01", coupon=0.05, frequency=2, day_count="ACT/ACT-ICMA",
                         calendar="WEEKENDS", expiry="2021-06-01", strike=100.0, option=[c[5] for c in cases],
                         exercise=[c[6] for c in cases], a=0.1, sigma=[c[2] for c in cases], curve="C")
    prices = trinom.price(book, {"C": ours}, backend="reference").price
    print("| case | published (FinancePy's test) | trinom | FinancePy (test's steps) | FinancePy, 4000 steps |")
    print("|---|---:|---:|---:|---:|")
    for (name, kind, sigma, steps, published, _o, _e), price in zip(cases, prices, strict=True):
        as_tested = HWTree(sigma, 0.1, steps) if steps else HWTree(sigma, 0.1)
        values = [BondOption(bond, expiry, 100, kind).value(settle, theirs, model)
                  for model in (as_tested, HWTree(sigma, 0.1, 4000))]
        print(f"| {name} | {published:.4f} | {price:.4f} | {values[0]:.4f} | {values[1]:.4f} |")


if __name__ == "__main__":
    main()
