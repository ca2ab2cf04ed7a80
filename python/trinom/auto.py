"""``backend="auto"``: an inspector-executor that picks the fastest usable backend.

The inspector computes cheap statistics of the portfolio (:func:`inspect`: size, total work
in node updates, the widest tree, the spread and skewness of widths and heights); the rule
(:func:`choose`) maps them to a backend and target. The rule was derived from the benchmarks
in benches/RESULTS.md (H100 and the 2-core CPU, float32 and float64):

1. With a usable NVIDIA GPU: ``cuda``. On the H100 it was the fastest backend on every thesis
   dataset in both precisions, uniform, random and skewed alike, by 2x to 300x over the other
   backends, and even on the 5-option book (0.18 ms against 0.33 ms for Futhark's ``c``
   target): its warp-segment packing absorbs the width and height skew that decides between
   the thesis' CUDA-option and CUDA-multi. Trees wider than :data:`CUDA_FAST_MAX_WIDTH` are
   priced by its one-option-per-thread fallback: still correct, and still on the GPU.
2. Without a GPU, a portfolio with less work than :data:`TINY_WORK` node updates goes to
   Futhark's single-threaded ``c`` target (the book: 0.39 ms against 0.54 ms on
   ``multicore``, whose thread pool costs more than the work).
3. Otherwise ``futhark-basic`` on the ``multicore`` target, which beat ``c``, ``futhark-flat``
   and the NumPy reference on every CPU dataset measured (flat pays for its flattened arrays
   in memory traffic: on 4_SKEWED it took 2.4x basic's time).
4. Without compiled libraries: the NumPy ``reference``.

Availability is probed once per process (:func:`usable` is cached).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import backends
from .lattice import work
from .portfolio import Portfolio, describe

#: Below this much work (node updates, both passes) one CPU thread beats the multicore thread pool.
TINY_WORK = 20_000
#: Widest tree the ``cuda`` backend's fast kernel holds in registers (wider ones use its fallback).
CUDA_FAST_MAX_WIDTH = 512


@dataclass(frozen=True)
class Profile:
    """What the inspector sees of a portfolio."""

    options: int
    work: float  #: node updates of both passes (docs/model.md §1.11)
    widest: int
    width_skewness: float
    height_skewness: float
    width_std: float
    height_std: float


def inspect(portfolio: Portfolio, precision: str = "f64") -> Profile:
    """Cheap statistics of a validated portfolio (one pass over its geometry; cached on the portfolio)."""
    key = ("profile", precision)
    if key in portfolio._cache:
        return portfolio._cache[key]
    g = portfolio.geometry(np.float32 if precision == "f32" else np.float64)
    if len(portfolio) == 0:
        return Profile(0, 0.0, 0, 0.0, 0.0, 0.0, 0.0)
    widths, heights = describe(g.width), describe(g.height)
    profile = Profile(options=len(portfolio), work=float(work(g.n, g.jmax).sum()), widest=int(g.width.max()),
                      width_skewness=widths["skewness"], height_skewness=heights["skewness"],
                      width_std=widths["std"], height_std=heights["std"])
    portfolio._cache[key] = profile
    return profile


def usable(name: str, target: str | None = None) -> bool:
    """Can ``name`` (on ``target``) run here? (asked once per process)"""
    return backends.REGISTRY.usable(name, target)


def choose(portfolio: Portfolio, precision: str = "f64") -> tuple[str, dict[str, str]]:
    """The backend (and its options, e.g. the Futhark target) that ``auto`` runs for ``portfolio``."""
    if usable("cuda"):
        return "cuda", {}
    if inspect(portfolio, precision).work < TINY_WORK and usable("futhark-basic", "c"):
        return "futhark-basic", {"target": "c"}
    for target in ("multicore", "c"):
        if usable("futhark-basic", target):
            return "futhark-basic", {"target": target}
    return "reference", {}


def describe_choice(portfolio: Portfolio, precision: str = "f64") -> str:
    """One line: what auto picks and why (for ``trinom info``)."""
    name, options = choose(portfolio, precision)
    p = inspect(portfolio, precision)
    target = f"/{options['target']}" if options.get("target") else ""
    return (f"{name}{target} ({p.options} options, {p.work:.3g} node updates, widest tree {p.widest}, "
            f"skewness of widths {p.width_skewness:.2f} and heights {p.height_skewness:.2f})")
