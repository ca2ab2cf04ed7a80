"""The model constants of the Hull-White trinomial tree and the instruments' own, gathered in one place.

Each is defined once for Python, where it belongs: the tree's constants and limits in
:mod:`trinom.model.tree_geometry`, the option sides and the thesis' face value in :mod:`trinom.instruments.constants`.
The same numbers are defined once in Futhark (``fut/constants.fut``) and once in CUDA
(``cuda/trinom_constants.h``); ``tests/test_constants.py`` checks that the three agree.
"""

from ..instruments.constants import CALL, FACE_VALUE, OPTION_TYPES, PUT
from ..model.tree_geometry import (
    BOND_DAYS_IN_YEAR,
    DAYS_IN_YEAR,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_WIDTH,
    JMAX_FACTOR,
    SIGMA_LIMIT,
    SPREAD_UNIT,
)

__all__ = ["BOND_DAYS_IN_YEAR", "CALL", "DAYS_IN_YEAR", "DEFAULT_MAX_STEPS", "DEFAULT_MAX_WIDTH", "FACE_VALUE",
           "JMAX_FACTOR", "OPTION_TYPES", "PUT", "SIGMA_LIMIT", "SPREAD_UNIT"]
