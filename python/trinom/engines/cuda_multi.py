"""``cuda-multi``: several options per CUDA block (the thesis' CUDA-multi, the papers' GPU-FLAT).

Options are sorted by height, tallest first (``sort``), and packed greedily into blocks whose
summed tree widths fit the block size; one thread per tree node, Qs in shared memory, the
alpha sums as block-level segmented scans and the alphas in global memory (block-level
padding). Trees wider than the block are priced by the cuda-option kernel, never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..instruments.option import Portfolio
from ..model.curve import YieldCurve
from . import _cuda_lib

NAME = "cuda-multi"
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
    block_size: int = 1024,
    sort: bool = True,
    chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, float] | None = None,
    curve_index: np.ndarray | None = None,
) -> np.ndarray:
    """Prices in input order (float32 for ``"f32"``, float64 for ``"f64"``) on GPU ``device``; with
    ``curve_index``, option i on ``curve[curve_index[i]]`` (a market's scenarios, one library call).

    ``block_size``: threads per block, the packing capacity (32..1024); ``sort``: tallest trees
    first; ``device``, ``chunk_size``, ``memory_limit`` and ``timing`` as for
    ``cuda-option``.
    """
    return _cuda_lib.price(portfolio, curve, precision, target=target, device=device,
                           variant="multi", block_size=block_size, sort=sort,
                           chunk_size=chunk_size, memory_limit=memory_limit, timing=timing, curve_index=curve_index)
