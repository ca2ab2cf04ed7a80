"""Backend ``futhark-flat``: Futhark, flattened chunks of options (fut/trinom-flat.fut).

The options are sorted by tree height and packed first-fit into chunks of ``chunk_width``
tree nodes; the chunks are priced side by side with the flat parallel steps of the
assignment's ``trinomialChunk``.  Targets: c, multicore, opencl, cuda and pyopencl.

Options: ``chunk_width`` (None: 256, the entry ``main``; an int: that width; options wider
than it get chunks of their own width), ``whole_portfolio`` (True: the whole portfolio as
one chunk), and the context options ``device``, ``platform``, ``build_options``,
``num_threads``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..instruments.option import Portfolio
from ..model.curve import YieldCurve
from . import _futhark

NAME = "futhark-flat"
TARGETS: tuple[str, ...] = _futhark.TARGETS
PROGRAM = "flat"
#: Largest chunk width accepted (every chunk takes this many lanes of the flat arrays).
MAX_CHUNK_WIDTH = 1 << 20


def available(target: str | None = None) -> tuple[bool, str]:
    """``(usable, reason)``: is the library built for ``target`` (default: the best one) and usable here?"""
    return _futhark.available(PROGRAM, target)


def price(portfolio: Portfolio, curve: YieldCurve, precision: str = "f64", *, target: str | None = None,
          **options: Any) -> np.ndarray:
    """Prices in input order (float64 for ``"f64"``, float32 for ``"f32"``)."""
    context_options, own = _futhark.split_options(options, ("chunk_width", "whole_portfolio"), NAME)
    chunk_width = own.get("chunk_width")
    bits = "64" if precision == "f64" else "32"
    if own.get("whole_portfolio"):
        if chunk_width is not None:
            raise ValueError(f"{NAME}: give chunk_width or whole_portfolio, not both")
        entry, leading = f"price_whole{bits}", ()
    elif chunk_width is None:
        entry, leading = ("main" if precision == "f64" else "main32"), ()
    else:
        if (isinstance(chunk_width, bool) or not isinstance(chunk_width, (int, np.integer))
                or not 1 <= chunk_width <= MAX_CHUNK_WIDTH):
            raise ValueError(f"{NAME}: chunk_width must be an integer in 1..{MAX_CHUNK_WIDTH}, got {chunk_width!r}")
        entry, leading = f"price_chunked{bits}", (int(chunk_width),)
    return _futhark.run(PROGRAM, entry, leading, portfolio, curve, precision, target, context_options)
