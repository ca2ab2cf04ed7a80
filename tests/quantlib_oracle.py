"""What the QuantLib comparisons share: dates, the evaluation date, and one curve both libraries hold."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import QuantLib as ql  # noqa: N813 (the usual alias)
from trinom.model import DatedCurve


def ql_date(day: np.datetime64) -> ql.Date:
    year, month, date = (int(x) for x in str(np.datetime64(day, "D")).split("-"))
    return ql.Date(date, month, year)


def on_date(as_of: np.datetime64) -> Iterator[None]:
    """QuantLib's evaluation date set to ``as_of`` while a test runs (a fixture's body: ``yield from``)."""
    saved = ql.Settings.instance().evaluationDate
    ql.Settings.instance().evaluationDate = ql_date(as_of)
    yield
    ql.Settings.instance().evaluationDate = saved


def random_curves(as_of: np.datetime64, years: int) -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    """A curve of 28 pillars over ``years`` years (log-linear discount factors), ours and QuantLib's DiscountCurve."""
    rng = np.random.default_rng(3)
    days = np.unique(np.concatenate([[30, 90, 180], rng.integers(200, years * 365, 25)]))
    zeros = 0.025 + 0.015 * np.sin(days / 3000) + rng.normal(0, 0.002, days.size)
    dfs = np.exp(-zeros * days / 365.0)
    ours = DatedCurve(as_of=as_of, dates=as_of + days, discount_factors=dfs, name="EUR")
    theirs = ql.DiscountCurve([ql_date(as_of), *(ql_date(d) for d in as_of + days)], [1.0, *dfs], ql.Actual365Fixed())
    return ours, ql.YieldTermStructureHandle(theirs)
