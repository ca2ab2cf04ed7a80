"""Options on the ``futhark`` engine: fut/fast.fut, the `cuda` backend's exact reformulation in Futhark.

On the CPU targets (c, multicore, and opencl on a CPU platform) every option is one map element on its
own window of nodes (``options64``/``options32``). On the GPU targets (cuda, opencl) options are binned by
level width, ``2 min(jmax, n) + 3`` (the window and a padding node each side) rounded up to a multiple of
:data:`GROUP_STEP`, and each class is priced by ``grouped64``/``grouped32``: one option per workgroup, the
level in local memory (Futhark's intra-group parallelism); options sorted by height within a class,
longest first, so the last workgroups to start are short. Levels wider than the target's widest group
(:func:`widest_group`) take the per-option entry.
Options: ``device``, ``platform``, ``build_options``, ``num_threads`` (as every Futhark backend).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..instruments.option import Portfolio
from ..model.curve import YieldCurve
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
#: Local memory a workgroup may use, by target: Futhark's CUDA backend opts in to the H100's 227 KiB;
#: OpenCL guarantees far less (48 KiB less 16 bytes on NVIDIA's, 64 KiB on AMD's and Intel's GPUs).
LOCAL_MEMORY = {"cuda": 232448, "opencl": 49136}
#: Levels of a window's width that ``grouped`` holds in local memory (the six coefficient tables, two
#: levels per pass and Futhark's own copies): 11, read off the generated kernels' launch sizes.
LOCAL_LEVELS = 11
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
    """Each option's level width in fast.fut: its window ``|j| <= min(jmax, max(n, 1))`` and a padding
    node on each side (``2 min(jmax, max(n, 1)) + 3``), with the geometry in the working precision."""
    geometry = portfolio.geometry(_futhark.REAL_DTYPES[precision])
    return 2 * np.minimum(geometry.jmax, np.maximum(geometry.n, 1)).astype(np.int32) + 3


def widest_group(target: str, precision: str) -> int:
    """The widest window ``grouped`` takes on ``target``: at most :data:`MAX_GROUP` nodes, and its
    :data:`LOCAL_LEVELS` levels in the target's local memory."""
    fits = LOCAL_MEMORY.get(target, LOCAL_MEMORY["cuda"]) // (LOCAL_LEVELS * np.dtype(_futhark.REAL_DTYPES[precision]).itemsize)
    return min(MAX_GROUP, fits)


def classes(portfolio: Portfolio, precision: str, target: str = "cuda") -> list[tuple[int, np.ndarray]]:
    """``(group width, rows)`` of the GPU shape, rows sorted by height (longest first); width 0: the
    options too wide for one workgroup.

    Widths are rounded up to a multiple of :data:`GROUP_STEP`, or to the widest group the target
    holds (:func:`widest_group`) when that is smaller. Two stable radix sorts (height, then class)
    keep this O(n): it runs on every GPU call, in the host's time.
    """
    width = windows(portfolio, precision)
    widest = widest_group(target, precision)
    group = np.minimum((width + (GROUP_STEP - 1)) & -GROUP_STEP, widest)  # GROUP_STEP: a power of two
    group[width > widest] = 0
    height = portfolio.geometry(_futhark.REAL_DTYPES[precision]).n
    top = np.iinfo(np.uint16).max
    tallest_first = np.arange(len(height)) if np.all(height == height[:1]) else \
        np.argsort(top - np.minimum(height, top).astype(np.uint16), kind="stable")
    counts = np.bincount(group)
    sizes = np.flatnonzero(counts)
    if len(sizes) == 1:
        return [(int(sizes[0]), tallest_first)]
    slot = (np.cumsum(counts > 0) - 1).astype(np.uint16)[group]
    order = tallest_first[np.argsort(slot[tallest_first], kind="stable")]
    return [(int(size), rows) for size, rows in zip(sizes, np.split(order, np.cumsum(counts[sizes])[:-1]), strict=True)]


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
    """The GPU shape on any target (the tests run it on c): one ``grouped`` call per width class.

    The entry arrays are made once and indexed per class (a class is a slice of the sorted book).
    """
    out = np.empty(len(portfolio), dtype=_futhark.REAL_DTYPES[precision])
    arrays = _futhark.input_arrays(portfolio, curve, precision)
    options, curve_arrays = arrays[:-2], arrays[-2:]
    for size, rows in classes(portfolio, precision, target):
        part = options if len(rows) == len(portfolio) and np.array_equal(rows, np.arange(len(rows))) \
            else [column[rows] for column in options]
        shape = ("one", ()) if size == 0 else ("grouped", (np.int64(size),))
        out[rows] = _futhark.call_entry(PROGRAM, ENTRIES[shape[0], precision], [*shape[1], *part, *curve_arrays],
                                        precision, target, context_options)
    return out
