"""The CUDA sources compile (no GPU needed), and the CUDA backends fail clearly without a GPU."""

from __future__ import annotations

import importlib
import inspect
import shutil
import subprocess
from pathlib import Path

import pytest
import trinom
from conftest import ROOT, gpu_present
from trinom import engines
from trinom.engines import BackendUnavailable, _cuda_lib

SOURCES = sorted((ROOT / "cuda").glob("*.cu"))
CUDA_BACKENDS = ("cuda-option", "cuda-multi", "cuda")


def nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for candidate in ("/usr/local/bin/nvcc", "/usr/local/cuda/bin/nvcc"):
        if Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="module")
def compiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.Popen]:
    """All sources compiling at once (the fast kernel alone takes about a minute)."""
    compiler = nvcc()
    if compiler is None:
        pytest.skip("nvcc not found: the CUDA sources were not compiled")
    out = tmp_path_factory.mktemp("cuda-objects")
    flags = ["-O3", "-std=c++17", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_90,code=sm_90"]
    return {src.name: subprocess.Popen([compiler, *flags, "-c", str(src), "-o", str(out / f"{src.stem}.o")],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for src in SOURCES}


#: The host code, one concern per file (see each file's first comment).
HOST_FILES = ("api.cu", "device_context.cu", "staging.cu", "memory_policy.cu", "failure.cu", "options_host.cu",
              "bonds_host.cu")


def test_there_are_cuda_sources():
    assert {s.name for s in SOURCES} >= {*HOST_FILES, "kernel_geometry.cu", "kernel_option.cu", "kernel_multi.cu",
                                         "kernel_fast_f64.cu", "kernel_bonds_f64.cu"}


def test_one_memory_policy():
    """Only memory_policy.cu asks the device for its free memory: one fraction for every workspace."""
    asking = sorted(src.name for src in SOURCES if "cudaMemGetInfo" in src.read_text())
    assert asking == ["memory_policy.cu"]
    assert "kFreeMemoryFraction" in (ROOT / "cuda" / "memory_policy.cuh").read_text()


def test_one_context_per_device_and_no_singleton():
    """Every pricing entry takes a device id; no process-wide context or last-error string remains."""
    header = (ROOT / "cuda" / "trinom_cuda.h").read_text()
    assert "int32_t device" in header.split("int trinom_cuda_price_book(", 1)[1].split(";", 1)[0]
    for gone in ("trinom_cuda_init", "trinom_cuda_last_error", "trinom_cuda_price(", "trinom_cuda_price_bonds"):
        assert gone not in header, gone
    host = "".join((ROOT / "cuda" / name).read_text() for name in HOST_FILES)
    assert "g_ctx" not in host and "g_error" not in host


@pytest.mark.parametrize("source", [s.name for s in SOURCES])
def test_source_compiles_for_sm90(source: str, compiles: dict[str, subprocess.Popen]):
    process = compiles[source]
    output, _ = process.communicate(timeout=1200)
    assert process.returncode == 0, f"nvcc failed on cuda/{source}:\n{output}"


def declarations():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    ffi.cdef(_cuda_lib.cdef_text((ROOT / "cuda" / "trinom_cuda.h").read_text()))
    return ffi


def test_header_declarations_parse_with_cffi():
    ffi = declarations()
    assert int(ffi.cast("enum trinom_variant", 2)) == 2
    assert [name for name, _ in ffi.typeof("trinom_book").fields] == ["options", "curve", "bonds", "bond_curves",
                                                                      "option_curves"]
    assert {name for name, _ in ffi.typeof("trinom_error").fields} >= {"status", "section", "row", "field", "stage",
                                                                       "message", "device"}
    assert ffi.typeof("trinom_error").fields[2][1].type.cname == "int64_t"  # the row
    status = ffi.typeof("enum trinom_status").relements
    for code in ("OK", "ERR_CUDA", "ERR_ARGUMENT", "ERR_MEMORY", "ERR_NO_DEVICE", "ERR_DEVICE"):
        assert status[f"TRINOM_{code}"] == getattr(_cuda_lib, code), code
    sections = ffi.typeof("enum trinom_section").relements
    assert {sections[f"TRINOM_SECTION_{name.upper() or 'NONE'}"]: name for name in ("", "options", "bonds")} == \
        _cuda_lib.SECTIONS
    assert {name for name, _ in ffi.typeof("trinom_portfolio").fields} == {"count", *_cuda_lib._OPTION_FIELDS,
                                                                           "option_type", "curve_index", "entry_offset",
                                                                           "entry_curve"}
    searched = ffi.typeof("enum trinom_search_status").relements
    assert [searched[f"TRINOM_SEARCH_{name}"] for name in ("CONVERGED", "OUTSIDE", "NO_CONVERGENCE", "OVERFLOW",
                                                           "SKIPPED")] == [0, 1, 2, 3, 4]
    assert {f"TRINOM_SEARCH_{name.upper().replace(' ', '_')}": code
            for code, name in enumerate(engines.engine.SEARCH_OUTCOMES)} == searched


def test_errors_come_from_the_struct_not_the_message():
    """The row, section, field and stage of a CudaError are the struct's fields; a "row" in the message
    text is never read back."""
    ffi = declarations()
    error = ffi.new("trinom_error *")
    error.status, error.section, error.row, error.device = _cuda_lib.ERR_ARGUMENT, 2, 7, 0
    error.field, error.stage = b"curve_index", b"plan"
    error.message = b"curve_index 5 is not one of the 4 curves (row 99)"
    err = _cuda_lib._failure(ffi, error)
    assert isinstance(err, _cuda_lib.CudaError)
    assert (err.code, err.row, err.section, err.field, err.stage, err.device) == (2, 7, "bonds", "curve_index", "plan", 0)
    assert str(err) == "row 7: curve_index 5 is not one of the 4 curves (row 99)"
    assert str(_cuda_lib._failure(ffi, error, name_section=True)).startswith("bonds row 7: ")
    error.row = -1
    assert _cuda_lib._failure(ffi, error).row == -1
    error.status = _cuda_lib.ERR_NO_DEVICE
    error.message = b"no CUDA device: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
    assert isinstance(_cuda_lib._failure(ffi, error), BackendUnavailable)
    assert "import re" not in inspect.getsource(_cuda_lib)


@pytest.mark.parametrize("name", [*CUDA_BACKENDS, "bonds_cuda"])
def test_backends_take_a_device(name: str):
    module = importlib.import_module(f"trinom.engines.{name.replace('-', '_')}")
    parameter = inspect.signature(module.price).parameters["device"]
    assert parameter.kind == parameter.KEYWORD_ONLY and parameter.default == 0
    for function in (_cuda_lib.price, _cuda_lib.price_bonds, _cuda_lib.price_book):
        assert inspect.signature(function).parameters["device"].default == 0


@pytest.mark.parametrize("name", CUDA_BACKENDS)
def test_backend_without_gpu_says_no_cuda_device(name: str):
    if gpu_present()[0]:
        pytest.skip("a GPU is present here: the no-GPU message cannot be checked")
    module = importlib.import_module(f"trinom.engines.{name.replace('-', '_')}")
    assert module.TARGETS == ("cuda",)
    usable, reason = module.available()
    assert engines.get(name).available() == (usable, reason)
    assert not usable
    assert reason.startswith("no CUDA device"), reason
    book = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[1],
                            a=[0.1], sigma=[0.01], option_type=["put"])
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        trinom.price(book, backend=name)
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        module.price(book, trinom.YieldCurve.thesis(), "f32")
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        module.price(book, trinom.YieldCurve.thesis(), "f64", device=1)
