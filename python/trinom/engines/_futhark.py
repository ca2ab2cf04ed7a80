"""Shared machinery of the Futhark backends (``futhark-basic`` and ``futhark-flat``).

The compiled Futhark programs live in the package ``trinom._lib`` (made by ``make lib``):

* ``_futhark_{program}_{target}`` for the targets c, multicore, opencl and cuda: cffi modules
  built by futhark-ffi's ``build_futhark_ffi`` from ``futhark TARGET --library``;
* ``futhark_{program}_pyopencl``: the plain-Python module of ``futhark pyopencl --library``.

Each program has the entry points ``main`` (float64) and ``main32`` (float32) taking ten
arrays (see :func:`input_arrays`); ``futhark_flat`` adds ``price_chunked64``/``32`` (chunk
width first) and ``price_whole64``/``32``.  One Futhark context is kept per (program,
target, context options), since creating one can take seconds (OpenCL compiles its kernels).
"""

from __future__ import annotations

import glob
import importlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any

import numpy as np

from ..model.curve import YieldCurve
from ..portfolio import Portfolio
from .outcomes import BackendUnavailable

#: Targets the Futhark backends know, best first where it matters (see :func:`default_target`).
TARGETS: tuple[str, ...] = ("c", "multicore", "opencl", "cuda", "pyopencl")
#: OpenCL build option that makes PoCL 3.1 compute reductions correctly (README: Backends and targets).
POCL_SAFE_BUILD_OPTION = "-cl-opt-disable"
#: Dtype of the real arrays by precision.
REAL_DTYPES: dict[str, type] = {"f64": np.float64, "f32": np.float32}


# --- where the compiled programs are -----------------------------------------------------------
def module_name(program: str, target: str) -> str:
    """Import name of a compiled program (``program`` is ``basic`` or ``flat``)."""
    if target == "pyopencl":
        return f"trinom._lib.futhark_{program}_pyopencl"
    return f"trinom._lib._futhark_{program}_{target}"


def _lib_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "_lib"


def is_built(program: str, target: str) -> bool:
    """Does the compiled module exist (without importing it)?"""
    stem = module_name(program, target).rsplit(".", 1)[1]
    if target == "pyopencl":
        return (_lib_dir() / f"{stem}.py").is_file()
    return bool(glob.glob(str(_lib_dir() / f"{stem}.*.so")) or glob.glob(str(_lib_dir() / f"{stem}.so")))


def load_module(program: str, target: str) -> Any:
    """Import the compiled program, or raise :class:`BackendUnavailable` saying why not."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    name = module_name(program, target)
    if not is_built(program, target):
        raise BackendUnavailable(f"{name} is not built (run `make lib`)")
    try:
        return importlib.import_module(name)
    except ImportError as err:  # e.g. libcuda.so.1 or libOpenCL.so.1 missing here
        raise BackendUnavailable(f"{name} cannot be loaded here: {err}") from None


# --- what this machine offers --------------------------------------------------------------------
@dataclass(frozen=True)
class OpenCLPlatform:
    """An OpenCL platform and whether it has a GPU."""

    name: str
    has_gpu: bool

    @property
    def is_pocl(self) -> bool:
        return "portable computing language" in self.name.lower() or "pocl" in self.name.lower()


_platforms_cache: list[OpenCLPlatform] | None = None


def opencl_platforms() -> list[OpenCLPlatform]:
    """The OpenCL platforms seen through pyopencl (empty without pyopencl or platforms)."""
    global _platforms_cache
    if _platforms_cache is None:
        found: list[OpenCLPlatform] = []
        try:
            import pyopencl as cl

            for platform in cl.get_platforms():
                try:
                    gpu = bool(platform.get_devices(device_type=cl.device_type.GPU))
                except cl.Error:
                    gpu = False
                found.append(OpenCLPlatform(platform.name.strip(), gpu))
        except Exception:  # no pyopencl, no ICD loader, or no platform at all
            found = []
        _platforms_cache = found
    return _platforms_cache


def gpu_opencl_platform() -> OpenCLPlatform | None:
    """The first OpenCL platform with a GPU (NVIDIA's on the GPU machine), if any."""
    return next((p for p in opencl_platforms() if p.has_gpu), None)


def nvidia_gpu_present() -> bool:
    """Is an NVIDIA GPU device node present?"""
    return Path("/dev/nvidia0").exists() or Path("/dev/nvidiactl").exists()


def available(program: str, target: str | None = None) -> tuple[bool, str]:
    """``(usable, reason)`` for one target, or for the default target when ``target`` is None."""
    if target is None:
        try:
            target = default_target(program)
        except BackendUnavailable as err:
            return False, str(err)
    if target not in TARGETS:
        return False, f"unknown target {target!r}"
    name = module_name(program, target)
    if not is_built(program, target):
        return False, f"{name} is not built (run `make lib`)"
    if target == "cuda" and not nvidia_gpu_present():
        return False, "no NVIDIA GPU here (no /dev/nvidia0)"
    if target in ("opencl", "pyopencl"):
        platforms = opencl_platforms()
        if not platforms:
            return False, "no OpenCL platform here (or pyopencl is missing)"
    try:
        load_module(program, target)
    except BackendUnavailable as err:
        return False, str(err)
    if target in ("opencl", "pyopencl"):
        gpu = gpu_opencl_platform()
        if gpu is None:
            return True, f"{name} on {opencl_platforms()[0].name} (CPU only; built with {POCL_SAFE_BUILD_OPTION})"
        return True, f"{name} on {gpu.name} (GPU)"
    return True, name


def default_target(program: str) -> str:
    """The best built target here: cuda > opencl on a GPU > multicore > c (never PoCL)."""
    candidates: list[str] = []
    if nvidia_gpu_present():
        candidates.append("cuda")
    if gpu_opencl_platform() is not None:
        candidates.append("opencl")
    candidates += ["multicore", "c"]
    for target in candidates:
        if is_built(program, target):
            try:
                load_module(program, target)
            except BackendUnavailable:
                continue
            return target
    raise BackendUnavailable(f"no Futhark {program} library is built for {', '.join(candidates)} (run `make lib`)")


# --- the futhark-ffi context ------------------------------------------------------------------
def _futhark_base() -> type:
    try:
        from futhark_ffi import Futhark
    except ImportError as err:
        raise BackendUnavailable(f"futhark-ffi is not installed: {err}") from None
    return Futhark


class FutharkLibrary:
    """A context of a cffi-compiled Futhark library, made the way Futhark 0.25 needs it.

    futhark-ffi 0.16's ``Futhark`` cannot set OpenCL build options before the context
    exists, passes device names as ``str``, and does not wait for the asynchronous entry
    points (GPU backends copy the NumPy inputs after the call returns).  This wrapper builds
    the context config itself and synchronises after every entry call while the inputs are
    still alive.  Entry points become methods; they take NumPy arrays and return NumPy arrays.
    """

    def __init__(self, module: Any, *, build_options: Sequence[str] = (), device: str | None = None,
                 platform: str | None = None, num_threads: int | None = None,
                 tuning: dict[str, int] | None = None, cache_file: str | None = None, profiling: bool = False):
        base = _futhark_base()
        self._impl = _make_impl(base)(module, build_options=build_options, device=device, platform=platform,
                                      num_threads=num_threads, tuning=tuning, cache_file=cache_file,
                                      profiling=profiling)
        self._lock = threading.Lock()

    def call(self, entry: str, *args: Any) -> np.ndarray:
        """Run an entry point; array results come back as NumPy arrays."""
        with self._lock:
            result = getattr(self._impl, entry)(*args)
            return self._impl.from_futhark(result)

    def resident(self, entry: str, position: int, array: np.ndarray) -> Any:
        """``array`` copied to the context once, as input ``position`` of ``entry`` takes it: passing the
        result instead of the array saves the copy on every call (a book's cash flows, shared by the
        calls of its classes)."""
        with self._lock:
            impl = self._impl
            function = impl.ffi.typeof(getattr(impl.lib, f"futhark_entry_{entry}"))
            inputs = [t for t in function.args[1:]
                      if not (t.kind == "pointer" and t.item.kind in ("primitive", "pointer"))]
            return impl.to_futhark(impl.types[inputs[position]], array)

    def clear_caches(self) -> None:
        """Give the memory the context keeps for reuse back (Futhark's free list grows when successive calls
        ask for blocks of other sizes: a book priced in parts of varying size)."""
        with self._lock:
            self._impl.lib.futhark_context_clear_caches(self._impl.ctx)

    def report(self) -> str:
        """Futhark's report of the context (JSON: memory, and with ``profiling`` each kernel run and copy)."""
        with self._lock:
            return self._impl._get_string(self._impl.lib.futhark_context_report(self._impl.ctx))

    def entries(self) -> list[str]:
        """Names of the library's entry points."""
        return [fn[len("futhark_entry_"):] for fn in dir(self._impl.lib) if fn.startswith("futhark_entry_")]


def _make_impl(base: type) -> type:
    """The futhark-ffi subclass (built lazily so that importing this module needs no futhark-ffi)."""

    class _Impl(base):  # type: ignore[misc, valid-type]
        def __init__(self, module: Any, *, build_options: Sequence[str], device: str | None,
                     platform: str | None, num_threads: int | None, tuning: dict[str, int] | None,
                     cache_file: str | None, profiling: bool):
            self.lib, self.ffi = module.lib, module.ffi
            lib = self.lib
            config = lib.futhark_context_config_new()
            self.conf = config
            for option in build_options:
                if hasattr(lib, "futhark_context_config_add_build_option"):  # opencl
                    lib.futhark_context_config_add_build_option(config, option.encode())
                elif hasattr(lib, "futhark_context_config_add_nvrtc_option"):  # cuda
                    lib.futhark_context_config_add_nvrtc_option(config, option.encode())
                else:
                    raise ValueError(f"this Futhark target takes no build options (got {option!r})")
            if device is not None:
                lib.futhark_context_config_set_device(config, device.encode())
            if platform is not None:
                lib.futhark_context_config_set_platform(config, platform.encode())
            if num_threads is not None and hasattr(lib, "futhark_context_config_set_num_threads"):
                lib.futhark_context_config_set_num_threads(config, int(num_threads))
            for key, value in (tuning or {}).items():
                lib.futhark_context_config_set_tuning_param(config, key.encode(), int(value))
            if cache_file is not None:
                lib.futhark_context_config_set_cache_file(config, cache_file.encode())
            if profiling:  # Futhark records each kernel's runs for `report` (benchmarks only: it synchronises)
                lib.futhark_context_config_set_profiling(config, 1)

            def free_context(ctx: Any) -> None:
                lib.futhark_context_free(ctx)
                lib.futhark_context_config_free(config)

            self.ctx = self.ffi.gc(lib.futhark_context_new(config), free_context)
            error = lib.futhark_context_get_error(self.ctx)
            if error:
                raise BackendUnavailable(f"Futhark context failed: {self._get_string(error).strip()}")
            self.make_types()
            self.make_entrypoints()
            self.make_stores()
            self.make_restores()

        def make_wrapper(self, ff: Any) -> Callable[..., Any]:
            unsynchronised = base.make_wrapper(self, ff)

            @wraps(unsynchronised)
            def synchronised(*args: Any) -> Any:
                result = unsynchronised(*args)  # args (the NumPy inputs) are still referenced here
                self._errorcheck(self.lib.futhark_context_sync(self.ctx))
                return result

            return synchronised

    return _Impl


class PyOpenCLLibrary:
    """A program compiled with ``futhark pyopencl --library``: the same ``call`` interface."""

    def __init__(self, module: Any, program: str, *, build_options: Sequence[str] = (),
                 device: str | None = None, platform: str | None = None):
        cls = getattr(module, module.__name__.rsplit(".", 1)[1])
        kwargs: dict[str, Any] = {"build_options": list(build_options)}
        if device is not None:
            kwargs["device_pref"] = device
        if platform is not None:
            kwargs["platform_pref"] = platform
        self._instance = cls(**kwargs)
        self._lock = threading.Lock()

    def call(self, entry: str, *args: Any) -> np.ndarray:
        with self._lock:
            result = getattr(self._instance, entry)(*args)
            return result.get() if hasattr(result, "get") else np.asarray(result)


_contexts: dict[tuple[Any, ...], FutharkLibrary | PyOpenCLLibrary] = {}
_contexts_lock = threading.Lock()


def clear_caches() -> None:
    """:meth:`FutharkLibrary.clear_caches` on every context made so far (a streamed run calls it between parts,
    so that its memory stays bounded by one part)."""
    with _contexts_lock:
        contexts = list(_contexts.values())
    for library in contexts:
        if isinstance(library, FutharkLibrary):
            library.clear_caches()


def context(program: str, target: str, *, build_options: Sequence[str] | None = None, device: str | None = None,
            platform: str | None = None, num_threads: int | None = None) -> FutharkLibrary | PyOpenCLLibrary:
    """The cached context of a program on a target, made on first use.

    On OpenCL targets the GPU platform is chosen when there is one (NVIDIA's is not the
    first platform on the GPU machine), and on a CPU-only OpenCL (PoCL) the build option
    ``-cl-opt-disable`` is added, without which PoCL 3.1 miscompiles reductions.
    """
    options = list(build_options or ())
    if target in ("opencl", "pyopencl"):
        gpu = gpu_opencl_platform()
        if platform is None and device is None and gpu is not None:
            platform = gpu.name
        on_gpu = gpu is not None and (platform is None or platform.lower() in gpu.name.lower())
        if not on_gpu and POCL_SAFE_BUILD_OPTION not in options:
            options.append(POCL_SAFE_BUILD_OPTION)
        if target == "pyopencl" and not on_gpu:
            # pyopencl compiles through PoCL directly; PoCL also reads its flags from here.
            flags = os.environ.get("POCL_EXTRA_BUILD_FLAGS", "")
            if POCL_SAFE_BUILD_OPTION not in flags.split():
                os.environ["POCL_EXTRA_BUILD_FLAGS"] = f"{flags} {POCL_SAFE_BUILD_OPTION}".strip()
    key = (program, target, tuple(options), device, platform, num_threads)
    with _contexts_lock:
        if key not in _contexts:
            module = load_module(program, target)
            if target == "pyopencl":
                _contexts[key] = PyOpenCLLibrary(module, program, build_options=options, device=device,
                                                 platform=platform)
            else:
                _contexts[key] = FutharkLibrary(module, build_options=options, device=device, platform=platform,
                                                num_threads=num_threads)
        return _contexts[key]


# --- inputs and the common price() ---------------------------------------------------------------
def input_arrays(portfolio: Portfolio, curve: YieldCurve, precision: str) -> list[np.ndarray]:
    """The ten entry-point arrays: eight option columns, then the curve's rates and days.

    Reals in the precision's dtype, term units/steps, types and days as int32; all contiguous.
    """
    real = REAL_DTYPES[precision]

    def reals(values: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(values, dtype=real)

    def ints(values: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(values).astype(np.int32))

    p = portfolio.thesis_view()  # the kernels' lattice fields
    return [reals(p.strike), reals(p.maturity), reals(p.expiry), ints(p.term_unit), ints(p.term_steps),
            reals(p.a), reals(p.sigma), ints(p.option_type), reals(curve.rates), ints(curve.days)]


def check_precision(precision: str) -> None:
    if precision not in REAL_DTYPES:
        raise ValueError(f"unknown precision {precision!r}; choose 'f32' or 'f64'")


def run(program: str, entry: str, leading: Sequence[Any], portfolio: Portfolio, curve: YieldCurve,
        precision: str, target: str | None, context_options: dict[str, Any]) -> np.ndarray:
    """Price through one entry point (``leading`` scalars go before the ten arrays)."""
    check_precision(precision)
    if target is not None and target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    if len(portfolio) == 0:
        return np.zeros(0, dtype=REAL_DTYPES[precision])
    return call_entry(program, entry, [*leading, *input_arrays(portfolio, curve, precision)], precision,
                      target, context_options)


def call_entry(program: str, entry: str, arguments: Sequence[Any], precision: str, target: str | None,
               context_options: dict[str, Any], targets: Sequence[str] = TARGETS) -> np.ndarray:
    """Call one entry point of ``program`` on ``target`` (None: :func:`default_target`).

    Checks the target against ``targets`` and its availability, then returns the result as a
    flat array of the precision's real dtype.
    """
    check_precision(precision)
    if target is not None and target not in targets:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(targets)}")
    library = usable_context(program, target, context_options)
    return np.asarray(library.call(entry, *arguments), dtype=REAL_DTYPES[precision]).reshape(-1)


def usable_context(program: str, target: str | None, context_options: dict[str, Any]) -> Any:
    """The context of ``program`` on ``target`` (None: :func:`default_target`), or
    :class:`BackendUnavailable` saying why it cannot run here."""
    if target is None:
        target = default_target(program)
    if (program, target) not in _ready:  # probed once per process: the probe globs and imports (~0.1 ms)
        ok, why = available(program, target)
        if not ok:
            raise BackendUnavailable(f"futhark-{program} on {target}: {why}")
        _ready.add((program, target))
    return context(program, target, **context_options)


#: The (program, target) pairs found usable in this process.
_ready: set[tuple[str, str]] = set()
#: Options every Futhark backend's price() accepts (passed to :func:`context`).
CONTEXT_OPTIONS: tuple[str, ...] = ("build_options", "device", "platform", "num_threads")


def split_options(options: dict[str, Any], extra: Sequence[str], backend: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(context options, backend options)``; unknown names are an error."""
    unknown = sorted(set(options) - set(CONTEXT_OPTIONS) - set(extra))
    if unknown:
        accepted = ", ".join((*CONTEXT_OPTIONS, *extra))
        raise TypeError(f"{backend}: unknown option(s) {', '.join(unknown)}; accepted: {accepted}")
    context_options = {k: v for k, v in options.items() if k in CONTEXT_OPTIONS}
    return context_options, {k: v for k, v in options.items() if k in extra}


__all__ = ["POCL_SAFE_BUILD_OPTION", "TARGETS", "available", "call_entry", "context", "default_target",
           "input_arrays", "is_built", "load_module", "module_name", "run", "split_options", "usable_context"]
