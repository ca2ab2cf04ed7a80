"""Engines: every backend behind one interface (:class:`~trinom.engines.engine.Engine`), in one registry.

=============  ==================  ===========================================================
engine         prices              kernels
=============  ==================  ===========================================================
reference      options, bonds      NumPy: the thesis' and the paper's sequential algorithms
futhark        options, bonds      Futhark: fast.fut for options (cuda's formulation), bonds.fut for bonds
futhark-basic  options             Futhark: the thesis' trinom-basic.fut
futhark-flat   options             Futhark: the thesis' trinom-flat.fut (trinomialChunk)
cuda           options, bonds      hand-written CUDA: the warp-segment kernels
cuda-option    options             hand-written CUDA: the thesis' CUDA-option
cuda-multi     options             hand-written CUDA: the thesis' CUDA-multi
=============  ==================  ===========================================================

``auto`` (:mod:`trinom.engines.auto`) picks the fastest usable one. Engines are imported lazily, so a
missing library matters only when its engine is used.
"""

from __future__ import annotations

from ..lattice.book import BOND, OPTION
from .engine import PRECISIONS, BackendUnavailable, CudaEngine, Engine, KernelEngine

_ENGINES: dict[str, Engine] = {}


def register(engine: Engine) -> Engine:
    """Add ``engine`` to the registry under ``engine.name`` (replacing one of that name)."""
    _ENGINES[engine.name] = engine
    _usable.clear()
    return engine


#: Rough, low estimates of node updates a second (benches/RESULTS.md), by target: they only plan progress slices.
_FUTHARK_RATES = {"c": 5e7, "multicore": 8e7, "opencl": 3e7, "pyopencl": 3e7, "cuda": 5e9}
for _engine in (
    KernelEngine("reference", {OPTION: "trinom.engines.reference", BOND: "trinom.engines.bonds_reference"}, rate=1e7),
    KernelEngine("futhark", {OPTION: "trinom.engines.futhark_fast", BOND: "trinom.engines.bonds_futhark_fast"},
                 rate=5e7, target_rates=_FUTHARK_RATES),
    KernelEngine("futhark-basic", {OPTION: "trinom.engines.futhark_basic"}, rate=5e7, target_rates=_FUTHARK_RATES),
    KernelEngine("futhark-paper", {BOND: "trinom.engines.bonds_futhark"}, rate=5e7, target_rates=_FUTHARK_RATES),
    KernelEngine("futhark-flat", {OPTION: "trinom.engines.futhark_flat"}, rate=3e7, target_rates=_FUTHARK_RATES),
    CudaEngine("cuda", {OPTION: "trinom.engines.cuda", BOND: "trinom.engines.bonds_cuda"}, rate=1e11),
    KernelEngine("cuda-option", {OPTION: "trinom.engines.cuda_option"}, rate=1e10),
    KernelEngine("cuda-multi", {OPTION: "trinom.engines.cuda_multi"}, rate=1e10),
):
    _ENGINES[_engine.name] = _engine
_usable: dict[tuple[str, str | None], bool] = {}


def names() -> tuple[str, ...]:
    """Every engine's name, then ``auto``."""
    return (*_ENGINES, "auto")


#: The engine names known at import time, then ``auto`` (see :func:`names` for engines registered later).
BACKENDS: tuple[str, ...] = names()


def get(name: str) -> Engine:
    """The engine called ``name`` (``auto`` is resolved by :func:`trinom.engines.auto.choose`)."""
    if name not in _ENGINES:
        raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(names())}")
    return _ENGINES[name]


def usable(name: str, target: str | None = None) -> bool:
    """Can engine ``name`` (on ``target``) run here? Probed once per process."""
    key = (name, target)
    if key not in _usable:
        try:
            _usable[key] = bool(get(name).available(target)[0])
        except BackendUnavailable:
            _usable[key] = False
    return _usable[key]


def status() -> list[tuple[str, str | None, bool, str]]:
    """``(engine, target, usable, reason)`` for every engine and target."""
    rows: list[tuple[str, str | None, bool, str]] = []
    for name, engine in _ENGINES.items():
        try:
            targets = engine.targets
        except BackendUnavailable as err:
            rows.append((name, None, False, str(err)))
            continue
        for target in targets or (None,):
            ok, reason = engine.available(target)
            rows.append((name, target, ok, reason))
    return rows


def release_memory() -> None:
    """Give back what the engines and the allocators keep for reuse: unreachable portfolios (cycles), the
    Futhark contexts' free lists and glibc's free heap (a book priced in parts calls it between parts, so
    that its peak memory is one part's)."""
    import gc
    import sys

    from . import _futhark

    gc.collect()  # a priced portfolio keeps its plans in a cache that refers back to it: a cycle
    _futhark.clear_caches()  # nothing to do where no context was made
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc
            pass


__all__ = [
    "BACKENDS",
    "BOND",
    "OPTION",
    "PRECISIONS",
    "BackendUnavailable",
    "Engine",
    "KernelEngine",
    "get",
    "names",
    "register",
    "release_memory",
    "status",
    "usable",
]
