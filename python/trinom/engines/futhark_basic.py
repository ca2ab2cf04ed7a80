"""Backend ``futhark-basic``: Futhark, one option per map element (fut/trinom-basic.fut).

Targets: c, multicore, opencl, cuda (cffi libraries through futhark-ffi) and pyopencl.
Options: ``device``, ``platform`` (OpenCL/CUDA device selection, by name), ``build_options``
(OpenCL/NVRTC compiler options), ``num_threads`` (multicore).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..instruments.option import Portfolio
from ..model.curve import YieldCurve
from . import _futhark

NAME = "futhark-basic"
TARGETS: tuple[str, ...] = _futhark.TARGETS
PROGRAM = "basic"


def available(target: str | None = None) -> tuple[bool, str]:
    """``(usable, reason)``: is the library built for ``target`` (default: the best one) and usable here?"""
    return _futhark.available(PROGRAM, target)


def price(portfolio: Portfolio, curve: YieldCurve, precision: str = "f64", *, target: str | None = None,
          **options: Any) -> np.ndarray:
    """Prices in input order (float64 for ``"f64"``, float32 for ``"f32"``)."""
    context_options, _ = _futhark.split_options(options, (), NAME)
    entry = "main" if precision == "f64" else "main32"
    return _futhark.run(PROGRAM, entry, (), portfolio, curve, precision, target, context_options)
