"""Compounding: how a quoted rate over a year fraction gives a discount factor (QuantLib 1.44's ``InterestRate``).

==============  ========================  =====================================
name            aliases                   discount factor over ``tau`` years
==============  ========================  =====================================
continuous      CONT                      ``exp(-r tau)``
simple          SIMPLE, MONEY MARKET      ``1 / (1 + r tau)``
annual          ANNUALLY, 1               ``(1 + r) ** -tau``
semiannual      SEMI-ANNUAL, 2            ``(1 + r / 2) ** (-2 tau)``
quarterly       QUARTER, 4                ``(1 + r / 4) ** (-4 tau)``
monthly         12                        ``(1 + r / 12) ** (-12 tau)``
==============  ========================  =====================================

``tau`` is the rate's day count's year fraction from the curve's date to the pillar's
(:func:`trinom.conventions.year_fractions`).

>>> codes, problems = parse_compoundings(["continuous", "Semi-Annual", "daily"])
>>> codes.tolist(), problems[0][0]
([0, 3, -1], 2)
>>> discount_factors(rates=[0.05, 0.05], fractions=[2.0, 2.0], codes=[SIMPLE, ANNUAL]).round(12).tolist()
[0.909090909091, 0.907029478458]
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from .names import Factorized, NameTable, Problem, parse_column

#: The compoundings, their codes (index) and aliases.
COMPOUNDINGS: Final[NameTable] = NameTable.of("compounding", {
    "continuous": ("CONT", "CONTINUOUSLY"),
    "simple": ("MONEY MARKET", "MONEYMARKET"),
    "annual": ("ANNUALLY", "1"),
    "semiannual": ("SEMIANNUALLY", "SEMI ANNUAL", "2"),
    "quarterly": ("QUARTER", "4"),
    "monthly": ("12",),
})
CONTINUOUS: Final[int] = 0
SIMPLE: Final[int] = 1
ANNUAL: Final[int] = 2
#: Compounding periods a year of each code (0: continuous or simple).
PERIODS_PER_YEAR: Final[tuple[int, ...]] = (0, 0, 1, 2, 4, 12)


def parse_compoundings(values: npt.ArrayLike | Factorized, *, field: str = "compounding",
                       rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, list[Problem]]:
    """Per row, the code of its compounding (-1 where bad) and one problem per bad row."""
    return parse_column(values, table=COMPOUNDINGS, field=field, rows=rows)


def discount_factors(*, rates: npt.ArrayLike, fractions: npt.ArrayLike, codes: npt.ArrayLike) -> np.ndarray:
    """The discount factor of each rate over its year fraction under its compounding code (QuantLib's
    ``InterestRate::discountFactor``). A simple rate with ``1 + r tau <= 0`` gives ``inf`` or a negative value: the
    caller refuses it."""
    r, tau, code = np.broadcast_arrays(np.asarray(rates, dtype=np.float64), np.asarray(fractions, dtype=np.float64),
                                       np.asarray(codes, dtype=np.int64))
    periods = np.asarray(PERIODS_PER_YEAR, dtype=np.float64)[code]
    compounded = periods > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(code == SIMPLE, 1.0 / (1.0 + r * tau), np.exp(-r * tau))
        out = np.where(compounded, (1.0 + r / np.where(compounded, periods, 1.0)) ** (-periods * tau), out)
    return out


__all__ = ["ANNUAL", "COMPOUNDINGS", "CONTINUOUS", "PERIODS_PER_YEAR", "SIMPLE", "discount_factors",
           "parse_compoundings"]
