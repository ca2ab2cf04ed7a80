"""The model constants of the Hull-White trinomial tree, defined once for Python.

The same numbers are defined once in Futhark (``fut/constants.fut``) and once in CUDA
(``cuda/trinom_constants.h``); ``tests/test_constants.py`` checks that the three agree.
"""

from typing import Final

#: Days in a year: a term unit of 365 days means yearly terms (``ceil(DAYS_IN_YEAR / term_unit)``).
DAYS_IN_YEAR: Final[int] = 365
#: Hull-White's bound on the tree's half width: ``jmax = int(JMAX_FACTOR / M) + 1``, ``M = exp(-a dt) - 1``.
JMAX_FACTOR: Final[float] = -0.184
#: Face value of the zero-coupon bond: every node of the last level starts at this price.
FACE_VALUE: Final[float] = 100.0
#: Option types, as in the thesis' files (``Type`` array).
CALL: Final[int] = 0
PUT: Final[int] = 1
OPTION_TYPES: Final[dict[str, int]] = {"call": CALL, "put": PUT}
#: The largest Hull-White sigma accepted: an absolute short-rate volatility of 100 percentage points a year (the
#: desk's are about 0.01). Beyond it the trees' values leave the floating-point range, and the reformulated kernels
#: would return 0 where the reference overflows.
SIGMA_LIMIT: Final[float] = 1.0
#: Default limit on a tree's width (``2 jmax + 1``); wider trees are rejected as bad input.
DEFAULT_MAX_WIDTH: Final[int] = 65535
#: Default limit on a tree's number of time steps (its height less one): with the width limit it bounds
#: a tree's memory and work, checked before any pricing. The paper's file format stores steps as uint16.
DEFAULT_MAX_STEPS: Final[int] = 65535

# --- coupon bonds (the ARRAY'21 paper's instrument, docs/paper-instrument.md) --------------------
#: Days in a year for bonds: a term unit of 360 days is one year (``ceil(BOND_DAYS_IN_YEAR / term_unit)``).
BOND_DAYS_IN_YEAR: Final[int] = 360
#: Spreads are given in percent: the per-step OAS factor is ``exp(-(spread / SPREAD_UNIT) dt)``.
SPREAD_UNIT: Final[float] = 100.0
