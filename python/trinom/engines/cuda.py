"""``cuda``: the fastest GPU backend (the default on an NVIDIA GPU).

Each option is a segment of 1-32 lanes of a warp, each lane holding up to 16 consecutive nodes
of a tree level in registers; neighbours move between lanes by warp shuffles, so the time loops
touch no shared or global memory and need no block barriers. Options are grouped by tree width
into (lanes, nodes per lane) classes and sorted by height inside a class.

The model is the thesis' (geometry, probabilities, yield interpolation, alpha fitting); the
recursions are rewritten exactly: the level discount exp(-alpha_i dt) = P_i / s_i is common to
all nodes of a level, so it factors out of both linear passes and only two level sums and two
curve look-ups per option remain (see cuda/kernel_fast.cu). Results differ from the thesis
order of operations by rounding only. Trees wider than 512 nodes are priced by the cuda-option
kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..instruments.option import Portfolio
from ..model.curve import YieldCurve
from . import _cuda_lib

NAME = "cuda"
TARGETS: tuple[str, ...] = ("cuda",)


def available(target: str | None = None) -> tuple[bool, str]:
    """Usable where the CUDA library is built and a GPU exists."""
    return _cuda_lib.available(target)


def price(
    portfolio: Portfolio,
    curve: YieldCurve | Sequence[YieldCurve],
    precision: str = "f64",
    *,
    target: str | None = None,
    device: int = 0,
    block_size: int = 128,
    sort: bool = True,
    chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, float] | None = None,
    curve_index: np.ndarray | None = None,
) -> np.ndarray:
    """Prices in input order (float32 for ``"f32"``, float64 for ``"f64"``) on GPU ``device``; with
    ``curve_index``, option i on ``curve[curve_index[i]]`` (a market's scenarios, one library call).

    ``block_size``: threads per block (32, 64, 96 or 128); ``sort``: tallest trees first inside
    a width class; ``device``, ``chunk_size``, ``memory_limit`` and ``timing`` as for ``cuda-option``.
    """
    return _cuda_lib.price(portfolio, curve, precision, target=target, device=device,
                           variant="fast", block_size=block_size, sort=sort,
                           chunk_size=chunk_size, memory_limit=memory_limit, timing=timing, curve_index=curve_index)
