"""``cuda-option``: one option per GPU thread (the thesis' CUDA-option, the papers' GPU-OUTER).

Qs, QsCopy and the alphas are expanded into global memory, padded per group of options
(``padding``: ``"global"``, ``"block"`` or ``"warp"``, the thesis' versions 2-4) in the
transposed, coalesced layout; options are sorted by tree width, widest first (``sort``), and
the prices are scattered back to input order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..instruments.option import Portfolio
from ..model.curve import YieldCurve
from . import _cuda_lib

NAME = "cuda-option"
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
    padding: str = "warp",
    sort: bool = True,
    chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, float] | None = None,
    curve_index: np.ndarray | None = None,
) -> np.ndarray:
    """Prices in input order (float32 for ``"f32"``, float64 for ``"f64"``) on GPU ``device``; with
    ``curve_index``, option i on ``curve[curve_index[i]]`` (a market's scenarios, one library call).

    ``device``: the CUDA device id (0, 1, ...; one library context per device, see
    :mod:`trinom.engines._cuda_lib`); ``block_size``: threads per block (32..1024); ``padding``: ``"global"``, ``"block"`` or
    ``"warp"``; ``sort``: widest trees first; ``chunk_size``: most options per chunk;
    ``memory_limit``: bytes the expanded arrays may take (default: the free GPU memory; larger
    portfolios are priced in pieces); ``timing``: a dict filled with ``kernel_ms``,
    ``device_ms`` and ``library_ms`` (see :func:`trinom.engines._cuda_lib.price`).
    """
    return _cuda_lib.price(portfolio, curve, precision, target=target, device=device, variant="option",
                           block_size=block_size, padding=padding, sort=sort, chunk_size=chunk_size,
                           memory_limit=memory_limit, timing=timing, curve_index=curve_index)
