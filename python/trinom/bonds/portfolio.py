"""Old import path of :mod:`trinom.instruments.bond` (kept for one release): the same module object."""

import sys

from ..instruments import bond as _bond

sys.modules[__name__] = _bond
