"""The hand-written CUDA library ``trinom/_lib/libtrinom_cuda.so``, loaded with cffi (ABI mode).

One context per process: the library is opened and the GPU context created on first use and
kept until the process ends. The three CUDA backends (``cuda-option``, ``cuda-multi`` and
``cuda``) call :func:`price` with their variant, the bond backend ``bonds_cuda`` calls
:func:`price_bonds`. Where the library is not built or no GPU exists, :func:`available` says
``(False, "no CUDA device: ...")`` and both pricing functions raise
:class:`~trinom.backends.BackendUnavailable`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..curve import YieldCurve
from ..portfolio import Portfolio
from . import BackendUnavailable

if TYPE_CHECKING:
    from ..bonds.portfolio import BondPortfolio

_PACKAGE = Path(__file__).resolve().parent.parent
LIBRARY = _PACKAGE / "_lib" / "libtrinom_cuda.so"
#: The header: next to the library once built, else in the source tree.
HEADERS = (_PACKAGE / "_lib" / "trinom_cuda.h", _PACKAGE.parent.parent / "cuda" / "trinom_cuda.h")

VARIANTS: dict[str, int] = {"option": 0, "multi": 1, "fast": 2}
PADDINGS: dict[str, int] = {"global": 0, "block": 1, "warp": 2}
_PRECISIONS: dict[str, tuple[int, type[np.floating]]] = {"f32": (0, np.float32), "f64": (1, np.float64)}
_NO_DEVICE = "no CUDA device"


class CudaError(RuntimeError):
    """The CUDA library failed; the message carries CUDA's error string. ``code`` is its status."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def cdef_text(header: str) -> str:
    """The declarations between the CDEF markers with preprocessor lines dropped (for ``ffi.cdef``)."""
    begin, end = header.index("/* CDEF BEGIN */"), header.index("/* CDEF END */")
    lines = header[begin:end].splitlines()[1:]
    return "\n".join(line for line in lines if not line.lstrip().startswith("#"))


class _Library:
    """The opened library and its context (created once, under a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ffi: Any = None
        self.lib: Any = None
        self.ready = False
        self.failure: str | None = None

    def open(self) -> tuple[Any, Any]:
        if self.lib is not None:
            return self.ffi, self.lib
        if not LIBRARY.exists():
            raise BackendUnavailable(f"{_NO_DEVICE}: {LIBRARY} is not built "
                                     "(it is built where nvcc and an NVIDIA GPU are present)")
        header = next((h for h in HEADERS if h.exists()), None)
        if header is None:
            raise BackendUnavailable(f"{_NO_DEVICE}: trinom_cuda.h not found beside {LIBRARY}")
        try:
            import cffi
        except ImportError as err:  # pragma: no cover - cffi is a dependency
            raise BackendUnavailable(f"{_NO_DEVICE}: cffi is not installed ({err})") from None
        ffi = cffi.FFI()
        ffi.cdef(cdef_text(header.read_text()))
        try:
            lib = ffi.dlopen(str(LIBRARY))
        except OSError as err:
            raise BackendUnavailable(f"{_NO_DEVICE}: cannot load {LIBRARY.name}: {err}") from None
        self.ffi, self.lib = ffi, lib
        return ffi, lib

    def message(self) -> str:
        return self.ffi.string(self.lib.trinom_cuda_last_error()).decode(errors="replace")

    def context(self) -> tuple[Any, Any]:
        """The library with its context initialised (device 0)."""
        with self.lock:
            ffi, lib = self.open()
            if not self.ready:
                if self.failure is not None:
                    raise BackendUnavailable(self.failure)
                status = lib.trinom_cuda_init(0)
                if status != 0:
                    text = self.message()
                    self.failure = text if text.startswith(_NO_DEVICE) else f"{_NO_DEVICE}: {text}"
                    raise BackendUnavailable(self.failure)
                self.ready = True
            return ffi, lib


_LIBRARY = _Library()


def available(target: str | None = None) -> tuple[bool, str]:
    """Whether the CUDA library and a GPU are usable here, and on what (or why not)."""
    if target not in (None, "cuda"):
        return False, f"unknown target {target!r} (the CUDA backends run on target 'cuda')"
    try:
        ffi, lib = _LIBRARY.open()
    except BackendUnavailable as err:
        return False, str(err)
    count = ffi.new("int32_t *")
    if lib.trinom_cuda_device_count(count) != 0:
        text = _LIBRARY.message()
        return False, text if text.startswith(_NO_DEVICE) else f"{_NO_DEVICE}: {text}"
    name = ffi.string(lib.trinom_cuda_device_name()).decode() if _LIBRARY.ready else ""
    return True, f"CUDA on {name or f'{count[0]} device(s)'}"


def price(
    portfolio: Portfolio,
    curve: YieldCurve,
    precision: str = "f64",
    *,
    variant: str,
    target: str | None = None,
    block_size: int | None = None,
    padding: str = "global",
    sort: bool = True,
    chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, float] | None = None,
) -> np.ndarray:
    """Prices in input order from the CUDA library (see the backend modules for the options).

    Raises :class:`BackendUnavailable` ("no CUDA device: ...") where the library or a GPU is
    missing: opening the context is the check, so no separate probe runs per call.

    ``timing``, if given, is filled with ``kernel_ms`` (pricing kernels, cudaEvent), ``device_ms``
    (first upload to last download), ``library_ms`` (wall clock inside the library), ``chunks``
    and ``fallback`` (options priced by the wide-tree fallback).
    """
    code, dtype = _checked(target, precision)
    if padding not in PADDINGS:
        raise ValueError(f"padding must be one of {', '.join(PADDINGS)}, got {padding!r}")
    ffi, lib = _LIBRARY.context()
    count = len(portfolio)
    # The arrays go to the library as trinom.Portfolio holds them (float64, option types int8):
    # no conversion here; the library converts while staging them for the GPU.
    keep = {name: np.ascontiguousarray(getattr(portfolio, name), dtype=np.float64)
            for name in ("strike", "maturity", "expiry", "term_unit", "term_steps", "a", "sigma")}
    keep["option_type"] = np.ascontiguousarray(portfolio.option_type, dtype=np.int8)
    rates = np.ascontiguousarray(curve.rates, dtype=np.float64)
    days = curve.days.astype(np.int32)
    prices = np.empty(count, dtype=dtype)

    pf = ffi.new("trinom_portfolio *")
    pf.count = count
    for name, array in keep.items():
        setattr(pf, name, ffi.from_buffer("double[]" if array.dtype == np.float64 else "int8_t[]", array))
    yc = ffi.new("trinom_curve *")
    yc.count = len(rates)
    c_rates, c_days = ffi.from_buffer("double[]", rates), ffi.from_buffer("int32_t[]", days)
    yc.rates, yc.days = c_rates, c_days
    opt = ffi.new("trinom_options *")
    opt.variant = VARIANTS[variant]
    opt.precision = code
    opt.block_size = int(block_size or 0)
    opt.padding = PADDINGS[padding]
    opt.no_sort = 0 if sort else 1
    opt.chunk_size = int(chunk_size or 0)
    opt.memory_limit = int(memory_limit or 0)
    return _call(ffi, lib.trinom_cuda_price, pf, yc, opt, prices, timing)


_BOND_FIELDS_INT64 = ("term_unit", "term_steps", "first_exercise", "last_exercise", "exercise_frequency",
                      "curve_index", "cashflow_offset", "cashflow_step")
_BOND_FIELDS_FLOAT64 = ("a", "sigma", "maturity", "spread", "strike", "repayment", "coupon")


def price_bonds(
    portfolio: BondPortfolio,
    curves: Sequence[YieldCurve],
    precision: str = "f64",
    *,
    target: str | None = None,
    block_size: int | None = None,
    sort: bool = True,
    wide_only: bool = False,
    chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, float] | None = None,
) -> np.ndarray:
    """Dirty bond prices in input order from ``trinom_cuda_price_bonds`` (see ``bonds_cuda``).

    The arrays go to the library as :class:`~trinom.bonds.BondPortfolio` holds them (int64,
    float64, int8): no conversion here. ``timing`` as for :func:`price` (``fallback`` counts the
    bonds priced by the wide-tree kernel).
    """
    from ..bonds.portfolio import flatten_curves

    code, dtype = _checked(target, precision)
    ffi, lib = _LIBRARY.context()
    keep: dict[str, np.ndarray] = {name: np.ascontiguousarray(getattr(portfolio, name), dtype=np.int64)
                                   for name in _BOND_FIELDS_INT64}
    keep.update({name: np.ascontiguousarray(getattr(portfolio, name), dtype=np.float64)
                 for name in _BOND_FIELDS_FLOAT64})
    keep["option_type"] = np.ascontiguousarray(portfolio.option_type, dtype=np.int8)
    terms, rates, days = (np.ascontiguousarray(a) for a in flatten_curves(tuple(curves)))
    keep.update(curve_terms=terms.astype(np.int64, copy=False), curve_rates=rates.astype(np.float64, copy=False),
                curve_days=days.astype(np.int64, copy=False))
    prices = np.empty(len(portfolio), dtype=dtype)
    c_types = {np.dtype(np.int64): "int64_t[]", np.dtype(np.float64): "double[]", np.dtype(np.int8): "int8_t[]"}
    buffers = {name: ffi.from_buffer(c_types[array.dtype], array) for name, array in keep.items()}

    bonds = ffi.new("trinom_bonds *")
    bonds.count = len(portfolio)
    for name in (*_BOND_FIELDS_INT64, *_BOND_FIELDS_FLOAT64, "option_type"):
        setattr(bonds, name, buffers[name])
    yc = ffi.new("trinom_bond_curves *")
    yc.count = len(terms)
    yc.terms, yc.rates, yc.days = buffers["curve_terms"], buffers["curve_rates"], buffers["curve_days"]
    opt = ffi.new("trinom_bond_options *")
    opt.precision = code
    opt.block_size = int(block_size or 0)
    opt.no_sort = 0 if sort else 1
    opt.wide_only = 1 if wide_only else 0
    opt.chunk_size = int(chunk_size or 0)
    opt.memory_limit = int(memory_limit or 0)
    return _call(ffi, lib.trinom_cuda_price_bonds, bonds, yc, opt, prices, timing)


def _checked(target: str | None, precision: str) -> tuple[int, Any]:
    """The library's precision code and the result dtype; unknown targets and precisions are refused."""
    if target not in (None, "cuda"):
        raise BackendUnavailable(f"unknown target {target!r} (the CUDA backends run on target 'cuda')")
    if precision not in _PRECISIONS:
        raise ValueError(f"precision must be 'f32' or 'f64', got {precision!r}")
    return _PRECISIONS[precision]


def _call(ffi: Any, function: Any, inputs: Any, curves: Any, options: Any, prices: np.ndarray,
          timing: dict[str, float] | None) -> np.ndarray:
    """Run one pricing entry of the library into ``prices``; raise CudaError on failure, fill ``timing``."""
    times = ffi.new("trinom_timing *")
    status = function(inputs, curves, options, ffi.from_buffer("char[]", prices, require_writable=True), times)
    if status != 0:
        raise CudaError(status, _LIBRARY.message())
    if timing is not None:
        timing.update(kernel_ms=times.kernel_ms, device_ms=times.device_ms, library_ms=times.total_ms,
                      chunks=int(times.chunks), fallback=int(times.fallback))
    return prices
