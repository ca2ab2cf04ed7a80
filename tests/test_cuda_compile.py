"""The CUDA sources compile (no GPU needed), and the CUDA backends fail clearly without a GPU."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import trinom
from conftest import ROOT, gpu_present
from trinom import backends
from trinom.backends import BackendUnavailable, _cuda_lib

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


def test_there_are_cuda_sources():
    assert {s.name for s in SOURCES} >= {"trinom_api.cu", "kernel_option.cu", "kernel_multi.cu"}


@pytest.mark.parametrize("source", [s.name for s in SOURCES])
def test_source_compiles_for_sm90(source: str, compiles: dict[str, subprocess.Popen]):
    process = compiles[source]
    output, _ = process.communicate(timeout=1200)
    assert process.returncode == 0, f"nvcc failed on cuda/{source}:\n{output}"


def test_header_declarations_parse_with_cffi():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    ffi.cdef(_cuda_lib.cdef_text((ROOT / "cuda" / "trinom_cuda.h").read_text()))
    assert ffi.sizeof("trinom_options") >= 32
    assert int(ffi.cast("enum trinom_variant", 2)) == 2


@pytest.mark.parametrize("name", CUDA_BACKENDS)
def test_backend_without_gpu_says_no_cuda_device(name: str):
    if gpu_present()[0]:
        pytest.skip("a GPU is present here: the no-GPU message cannot be checked")
    module = backends.get(name)
    assert module.TARGETS == ("cuda",)
    usable, reason = module.available()
    assert not usable
    assert reason.startswith("no CUDA device"), reason
    book = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[1],
                            a=[0.1], sigma=[0.01], option_type=["put"])
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        trinom.price(book, backend=name)
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        module.price(book, trinom.YieldCurve.thesis(), "f32")
