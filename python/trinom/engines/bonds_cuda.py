"""``cuda`` for coupon bonds: the warp-segment kernel of the ``cuda`` backend, extended to the paper's
callable and puttable coupon bonds (docs/paper-instrument.md).

Each bond is a segment of 1-32 lanes of a warp, each lane holding up to 16 nodes of a tree
level in registers; neighbours move between lanes by shuffles. Bonds are grouped by tree width
(``2 min(jmax, n) + 1``) into (lanes, nodes per lane) classes and sorted by height inside a class;
prices come back in input order. The forward pass is the ``cuda`` backend's alpha-free
recursion, renormalised by powers of two every step; it stores ``exp(-alpha_i dt)`` times the
spread factor per step. The backward pass keeps true values, because exercise (against strike
plus accrued interest) and cash flows need them. Trees wider than 512 nodes are priced one per
thread block with the levels in global memory (``timing["fallback"]`` counts them), and so are trees with sigma
pieces (each step's branching from its piece) and with options on coupon rates (caps and floors on floating coupons,
valued from each node before the step's exercise).

The paper's conventions are kept (a cash flow reaches the nodes ``|j| <= min(i, jmax)`` only,
accrued interest uses the previous coupon, the Bermudan grid counts from cash-flow dates, +-inf
mapping); every bond is priced from its own data alone (no Q3). float64 agrees with the
reference to rounding (about 1e-12); float32 stores every level in float, so bonds whose values
overflow float's range (the paper's volatilities near 0.9 on tall trees) differ from float64,
as the paper's float build and the float32 reference do.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..instruments.bond import BondPortfolio
from ..model.curve import YieldCurve
from . import _cuda_lib

NAME = "cuda"
TARGETS: tuple[str, ...] = ("cuda",)
#: Trees with sigma pieces and options on coupon rates take the kernel with levels in global memory
#: (:meth:`~trinom.engines.engine.KernelEngine.prices_sigma_pieces`, ``prices_coupon_options``).
SIGMA_PIECES = True
COUPON_OPTIONS = True


def available(target: str | None = None) -> tuple[bool, str]:
    """Usable where the CUDA library is built and a GPU exists."""
    return _cuda_lib.available(target)


def price(
    portfolio: BondPortfolio,
    curves: Sequence[YieldCurve],
    precision: str = "f64",
    *,
    target: str | None = None,
    device: int = 0,
    block_size: int = 128,
    sort: bool = True,
    wide_only: bool | str = False,
    chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, float] | None = None,
) -> np.ndarray:
    """Dirty prices per 100 face in input order (float32 for ``"f32"``, float64 for ``"f64"``) on GPU ``device``.

    ``device``: the CUDA device id (one library context per device); ``block_size``: threads per
    block of the warp-segment kernel (32, 64, 96 or 128); ``sort``: tallest trees first inside a
    width class; ``wide_only``: price every bond with the wide-tree kernels (for tests; ``"global"``: the one with
    levels in global memory);
    ``chunk_size``: most bonds per chunk; ``memory_limit``: bytes of GPU memory a chunk may use
    (default: a fixed fraction of the free memory); ``timing``: filled with ``kernel_ms``,
    ``device_ms``, ``library_ms``, ``chunks`` and ``fallback``.
    """
    return _cuda_lib.price_bonds(portfolio, curves, precision, target=target, device=device, block_size=block_size,
                                 sort=sort, wide_only=wide_only, chunk_size=chunk_size, memory_limit=memory_limit,
                                 timing=timing)
