"""Old import path of :mod:`trinom.instruments.option` (kept for one release): the same module object."""

import sys

from .instruments import option as _option

sys.modules[__name__] = _option
