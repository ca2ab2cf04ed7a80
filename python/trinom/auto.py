"""``backend="auto"``: an inspector-executor that picks the fastest usable engine for a book.

The inspector computes cheap statistics of the book (:func:`inspect`: size, total work in node
updates, the widest tree, the spread and skewness of widths and heights); the rule
(:func:`choose`) maps them to an engine and target. The rule was derived from the benchmarks in
benches/RESULTS.md (H100 and the 2-core CPU, float32 and float64, options and bonds):

1. With a usable NVIDIA GPU: ``cuda``. On the H100 it was the fastest engine on every thesis
   dataset in both precisions, uniform, random and skewed alike, by 2x to 300x over the others,
   and on every bond dataset; its warp-segment packing absorbs the width and height skew that
   decides between the thesis' CUDA-option and CUDA-multi. Trees wider than
   :data:`CUDA_FAST_MAX_WIDTH` are priced by its fallback kernels, still on the GPU.
2. Without a GPU, a book with less work than :data:`TINY_WORK` node updates goes to Futhark's
   single-threaded ``c`` target (the 5-option book: 0.39 ms against 0.54 ms on ``multicore``,
   whose thread pool costs more than the work).
3. Without an NVIDIA GPU but with a GPU platform of OpenCL (AMD, Intel, or NVIDIA's OpenCL without
   CUDA), a book of at least :data:`OPENCL_GPU_WORK` node updates goes to ``futhark`` on ``opencl``
   (fut/fast.fut and fut/fast-bonds.fut, one tree per workgroup): on the H100's OpenCL it priced every
   thesis and paper dataset within 0.9-1.15x of its own cuda target (benches/RESULTS-futhark.md). A GPU
   call has a fixed cost (binning on the host, copies from pageable memory: about 2 of the 3.6 ms of
   0_UNIFORM f32 on the H100), which the 2-core CPU spends on about this much work (1 Gnode/s).
4. Otherwise ``futhark`` on the ``multicore`` target (fast.fut for options: 5x ``futhark-basic``;
   fast-bonds.fut for bonds: 1.4x the paper's bonds.fut), which beat ``c`` and the NumPy reference on
   every CPU dataset.
5. Without compiled libraries: the NumPy ``reference``.

A ``target`` given by the caller is honoured: ``auto`` then picks among the engines that run on
it (``cuda``: the hand-written CUDA engine; ``c``, ``multicore``, ``opencl``, ``pyopencl``: Futhark).
Availability is probed once per process.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import backends
from .backends import futhark_fast
from .book import Book
from .instruments.option import describe

#: Below this much work (node updates, both passes) one CPU thread beats the multicore thread pool.
TINY_WORK = 20_000
#: From this much work (node updates, both passes) an OpenCL GPU beats the CPU (rule 3).
OPENCL_GPU_WORK = 5e6
#: Widest tree the ``cuda`` engine's fast kernels hold in registers (wider ones use its fallbacks).
CUDA_FAST_MAX_WIDTH = 512


@dataclass(frozen=True)
class Profile:
    """What the inspector sees of a book."""

    trees: int
    work: float  #: node updates of both passes (docs/model.md §1.11)
    widest: int
    width_skewness: float
    height_skewness: float
    width_std: float
    height_std: float


def inspect(book: Book) -> Profile:
    """Cheap statistics of a validated book (one pass over its geometry; cached on the book)."""
    return book.cached("profile", lambda: _profile(book))


def _profile(book: Book) -> Profile:
    if len(book) == 0:
        return Profile(0, 0.0, 0, 0.0, 0.0, 0.0, 0.0)
    n, jmax = book.shape()
    width, height = 2 * jmax + 1, n + 1
    widths, heights = describe(width), describe(height)
    return Profile(trees=len(book), work=float(book.work().sum()), widest=int(width.max()),
                   width_skewness=widths["skewness"], height_skewness=heights["skewness"],
                   width_std=widths["std"], height_std=heights["std"])


def usable(name: str, target: str | None = None) -> bool:
    """Can engine ``name`` (on ``target``) run here? (asked once per process)"""
    return backends.usable(name, target)


def opencl_gpu() -> bool:
    """Is there an OpenCL platform with a GPU here (not PoCL on the CPU)?"""
    return futhark_fast.gpu_shape("opencl")


def choose(book: Book, precision: str = "f64", target: str | None = None) -> tuple[str, str | None]:
    """The engine (and its target, or None) that ``auto`` runs for ``book``, honouring ``target``."""
    if target is None or target == "cuda":
        if usable("cuda"):
            return "cuda", target
    if target is not None:
        futhark = "futhark" if target != "pyopencl" else "futhark-basic"
        if usable(futhark, target):
            return futhark, target
        raise backends.BackendUnavailable(f"no engine can run on target {target!r} here "
                                          f"({backends.get(futhark).available(target)[1]})")
    work = inspect(book).work
    if work >= OPENCL_GPU_WORK and usable("futhark", "opencl") and opencl_gpu():
        return "futhark", "opencl"
    if work < TINY_WORK and usable("futhark", "c"):
        return "futhark", "c"
    for candidate in ("multicore", "c"):
        if usable("futhark", candidate):
            return "futhark", candidate
    return "reference", None


def describe_choice(book: Book, precision: str = "f64", target: str | None = None) -> str:
    """One line: what auto picks and why (for ``trinom info``)."""
    name, chosen = choose(book, precision, target)
    p = inspect(book)
    return (f"{name}{'/' + chosen if chosen else ''} ({p.trees} trees, {p.work:.3g} node updates, widest tree "
            f"{p.widest}, skewness of widths {p.width_skewness:.2f} and heights {p.height_skewness:.2f})")
