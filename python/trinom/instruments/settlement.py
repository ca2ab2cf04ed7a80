"""Settlement apart from the valuation date (issue 38): a bond that settles ``settlement_days`` business days after the
as-of date, on its calendar, is priced at the as-of date as before (``price``, every flow after it) and, beside that,
at its settlement date by QuantLib's convention for bonds:

* the settlement date is ``calendar.advance(as_of, n, Days)`` (``n = 0``: the as-of date rolled to the following
  business day), never before the issue date (QuantLib's ``Bond::settlementDate``);
* the dirty price at settlement is the value of the flows paid after the settlement date, carried to it:
  ``(price - sum of flows paid in (as_of, settlement] * P(paid)) / P(settlement)`` (a flow on the settlement date goes
  to the seller, as QuantLib's ``hasOccurred(settlement)``), ``P`` the bond's discount curve; for a bond with an
  option this is exact where no exercise decision falls before the settlement date (the flows before it are
  certain);
* the accrued interest at settlement is the day count's on the coupon period holding the settlement date (0 on a
  coupon date), times the share outstanding; a floating period's at its known fixing plus margin (a settlement date
  inside a period that fixes after the as-of date is refused: that fixing is unknown); the clean price is the dirty
  less it.

>>> import numpy as np
>>> settlement_dates(as_of=20_429, days=np.array([2, 0, 3]), calendar=["TARGET", "TARGET", "NONE"],
...                  issue=np.array([20_000, 20_000, 20_431])).astype("datetime64[D]").astype(str).tolist()
['2025-12-09', '2025-12-08', '2025-12-10']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from ..conventions.business_days import advance_business_days
from ..conventions.calendars import canonical_calendar
from ..conventions.dates import as_dates
from ..model.curve import YieldCurve, discount_factors
from .dated_bond import DatedBonds, LoweredBonds
from .tree_steps import YEAR_DAYS

#: Most business days a bond's settlement may lag its trade (T+30).
MAX_SETTLEMENT_DAYS: Final[int] = 30


def settlement_dates(*, as_of: int, days: np.ndarray, calendar: npt.ArrayLike, issue: np.ndarray) -> np.ndarray:
    """Per bond, its settlement day (days since 1970-01-01): ``days`` business days after ``as_of`` on its
    ``calendar`` (a name per bond), ``as_of`` rolled following where ``days`` is 0, never before ``issue``."""
    names = np.broadcast_to(np.asarray(calendar, dtype=object), days.shape)
    out = np.empty(days.size, dtype=np.int64)
    for name in dict.fromkeys(names.tolist()):
        mine = np.flatnonzero(names == name)
        out[mine] = advance_business_days(np.full(mine.size, int(as_of)), days[mine],
                                          canonical_calendar(str(name)) or "NONE")
    return np.maximum(out, issue)


@dataclass(frozen=True, eq=False)
class SettlementTerms:
    """What a book's bonds that settle apart from the as-of date need to be priced at settlement: their rows, curves,
    settlement days and accrued interest there (per 100 of the original notional), and their flows paid on or before
    the settlement date (``flow_bond``: an index into ``rows``; ``flow_amount`` per 100)."""

    as_of: int
    rows: np.ndarray
    curve: np.ndarray
    day: np.ndarray
    accrued: np.ndarray
    flow_bond: np.ndarray
    flow_day: np.ndarray
    flow_amount: np.ndarray

    def prices(self, curves: Sequence[YieldCurve], price: np.ndarray) -> dict[str, np.ndarray]:
        """Per book row (``price``: the book's prices at the as-of date), ``settlement`` (a date; NaT where the row
        does not settle apart), ``settlement_clean`` and ``settlement_accrued`` (NaN there)."""
        size = price.shape[-1]
        date = np.full(size, np.datetime64("NaT"), dtype="datetime64[D]")
        clean = np.full(size, np.nan)
        accrued = np.full(size, np.nan)
        at_settlement = discount_factors(curves, self.curve, self.day - self.as_of, days_in_year=YEAR_DAYS)
        paid = discount_factors(curves, self.curve[self.flow_bond], self.flow_day - self.as_of, days_in_year=YEAR_DAYS)
        early = np.bincount(self.flow_bond, weights=self.flow_amount * paid, minlength=self.rows.size)
        dirty = (price[self.rows] - early) / at_settlement
        date[self.rows] = as_dates(self.day)
        accrued[self.rows] = self.accrued
        clean[self.rows] = dirty - self.accrued
        return {"settlement": date, "settlement_clean": clean, "settlement_accrued": accrued}


def settlement_terms(as_of: int, good: np.ndarray, specs: DatedBonds, lowered: LoweredBonds,
                      settles: np.ndarray) -> SettlementTerms:
    """The bonds of ``good`` that settle apart (``settles``), as :class:`SettlementTerms`: their flows paid by then."""
    assert specs.settlement is not None and lowered.settlement_accrued is not None
    flows = lowered.flows
    amount = flows.coupon + flows.repayment
    position = np.cumsum(settles) - 1
    early = settles[flows.owner] & (flows.date <= specs.settlement[flows.owner])
    return SettlementTerms(as_of=as_of, rows=good[settles], curve=specs.curve[settles],
                           day=specs.settlement[settles], accrued=lowered.settlement_accrued[settles],
                           flow_bond=position[flows.owner[early]], flow_day=flows.date[early],
                           flow_amount=amount[early])


__all__ = ["MAX_SETTLEMENT_DAYS", "SettlementTerms", "settlement_dates", "settlement_terms"]
