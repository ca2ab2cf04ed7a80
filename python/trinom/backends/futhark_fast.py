"""Options on the ``futhark`` engine: fut/fast.fut, the `cuda` backend's exact reformulation in Futhark.

On the CPU targets (c, multicore, and opencl on a CPU platform) every option is one map element on its own window of nodes
(``options64``/``options32``). On the GPU targets (cuda, opencl) options are binned by window
width, ``2 min(jmax, n) + 1`` rounded up to a multiple of :data:`GROUP_STEP`, and each class is
priced by ``grouped64``/``grouped32``: one option per workgroup, the level in local memory
(Futhark's intra-group parallelism); options sorted by height within a class, longest first, so
the last workgroups to start are short. Wider windows than :data:`MAX_GROUP` take the per-option entry.
Options: ``device``, ``platform``, ``build_options``, ``num_threads`` (as every Futhark backend).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..curve import YieldCurve
from ..portfolio import Portfolio
from . import _futhark

NAME = "futhark"
TARGETS: tuple[str, ...] = ("c", "multicore", "opencl", "cuda")
PROGRAM = "fast"
#: Targets that run the workgroup-per-option shape.
GPU_TARGETS: tuple[str, ...] = ("opencl", "cuda")
#: Window widths are rounded up to a multiple of this (a warp) to form the classes of the GPU shape.
GROUP_STEP = 32
#: The widest window one workgroup holds (a workgroup's largest size on NVIDIA and most OpenCL GPUs).
MAX_GROUP = 1024
#: Entry points by (shape, precision).
ENTRIES = {("one", "f64"): "options64", ("one", "f32"): "options32",
           ("grouped", "f64"): "grouped64", ("grouped", "f32"): "grouped32"}


def available(target: str | None = None) -> tuple[bool, str]:
    """``(usable, reason)``: is the library built for ``target`` (default: the best one) and usable here?"""
    if target is not None and target not in TARGETS:
        return False, f"unknown target {target!r}; choose one of {', '.join(TARGETS)}"
    return _futhark.available(PROGRAM, target)


def gpu_shape(target: str) -> bool:
    """Does ``target`` run the workgroup-per-option shape? On GPUs only: an OpenCL target without a GPU
    platform is PoCL on the CPU, where the per-option shape suits (and PoCL 3.1 hangs in ``grouped32``)."""
    return target == "cuda" or (target == "opencl" and _futhark.gpu_opencl_platform() is not None)


def windows(portfolio: Portfolio, precision: str) -> np.ndarray:
    """Each option's window width ``2 min(jmax, max(n, 1)) + 1``, with the geometry in the working precision."""
    geometry = portfolio.geometry(_futhark.REAL_DTYPES[precision])
    return 2 * np.minimum(geometry.jmax, np.maximum(geometry.n, 1)) + 1


def classes(portfolio: Portfolio, precision: str) -> list[tuple[int, np.ndarray]]:
    """``(group width, rows)`` of the GPU shape, rows sorted by height (longest first); width 0: the
    options too wide for one workgroup."""
    width = windows(portfolio, precision)
    group = -(-width // GROUP_STEP) * GROUP_STEP
    group[width > MAX_GROUP] = 0
    height = portfolio.geometry(_futhark.REAL_DTYPES[precision]).n
    out = []
    for size in np.unique(group):
        rows = np.flatnonzero(group == size)
        out.append((int(size), rows[np.argsort(-height[rows], kind="stable")]))
    return out


def price(portfolio: Portfolio, curve: YieldCurve, precision: str = "f64", *, target: str | None = None,
          **options: Any) -> np.ndarray:
    """Prices in input order (float64 for ``"f64"``, float32 for ``"f32"``)."""
    context_options, _ = _futhark.split_options(options, (), NAME)
    _futhark.check_precision(precision)
    chosen = target if target is not None else _futhark.default_target(PROGRAM)
    if not gpu_shape(chosen) or len(portfolio) == 0:
        return _futhark.run(PROGRAM, ENTRIES["one", precision], (), portfolio, curve, precision, chosen,
                            context_options)
    return price_grouped(portfolio, curve, precision, chosen, context_options)


def price_grouped(portfolio: Portfolio, curve: YieldCurve, precision: str, target: str,
                  context_options: dict[str, Any]) -> np.ndarray:
    """The GPU shape on any target (the tests run it on c): one ``grouped`` call per width class."""
    out = np.empty(len(portfolio), dtype=_futhark.REAL_DTYPES[precision])
    for size, rows in classes(portfolio, precision):
        part = portfolio[rows]
        if size == 0:
            out[rows] = _futhark.run(PROGRAM, ENTRIES["one", precision], (), part, curve, precision, target,
                                     context_options)
        else:
            out[rows] = _futhark.run(PROGRAM, ENTRIES["grouped", precision], (np.int64(size),), part, curve,
                                     precision, target, context_options)
    return out
