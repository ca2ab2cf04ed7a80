"""The instruments' own constants: the option sides and the face value of the thesis' zero-coupon bond.

Defined once for Python (:mod:`trinom.lattice.constants` gathers them with the tree's); the same numbers are defined
once in Futhark (``fut/constants.fut``) and once in CUDA (``cuda/trinom_constants.h``), and
``tests/test_constants.py`` checks that the three agree.
"""

from typing import Final

#: Face value of the zero-coupon bond: every node of the last level starts at this price.
FACE_VALUE: Final[float] = 100.0
#: Option types, as in the thesis' files (``Type`` array).
CALL: Final[int] = 0
PUT: Final[int] = 1
OPTION_TYPES: Final[dict[str, int]] = {"call": CALL, "put": PUT}
