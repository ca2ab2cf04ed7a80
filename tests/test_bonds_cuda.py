"""The CUDA bond backend without a GPU: its C declarations match what Python passes, and it fails clearly."""

from __future__ import annotations

import pytest
from conftest import ROOT, gpu_present
from trinom.bonds.generator import sample_bond
from trinom.engines import BackendUnavailable, _cuda_lib, bonds_cuda


def declarations():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    ffi.cdef(_cuda_lib.cdef_text((ROOT / "cuda" / "trinom_cuda.h").read_text()))
    return ffi


def test_header_declares_what_python_passes():
    ffi = declarations()
    fields = {name for name, _ in ffi.typeof("trinom_bonds").fields}
    passed = {*_cuda_lib._BOND_FIELDS_INT64, *_cuda_lib._BOND_FIELDS_FLOAT64, "option_type", "count"}
    scenario_entries = {"entry_offset", "entry_curve", "entry_spread", "checkpoint_step", "entry_resume"}
    pieces_and_options = {"piece_offset", "piece_step", "piece_v", "piece_jmax", "piece_mdrdt", "option_offset",
                          "option_step", "option_terms"}  # _cuda_lib._pieces_into
    assert fields == passed | scenario_entries | pieces_and_options | {"search", "cashflow_time", "exercise_time"}
    search = {name for name, _ in ffi.typeof("trinom_spread_search").fields}
    assert search == {"target", "low", "high", "tolerance", "relative_tolerance", "max_iterations", "reserved", "spread",
                      "iterations", "status"}
    assert {name for name, _ in ffi.typeof("trinom_bond_curves").fields} == {"count", "terms", "rates", "days"}
    options = {name for name, _ in ffi.typeof("trinom_run_options").fields}
    assert options >= {"precision", "bond_block_size", "no_sort", "bond_wide_only", "bond_chunk_size", "memory_limit"}
    assert ffi.sizeof("trinom_run_options") == 56
    timing = {name for name, _ in ffi.typeof("trinom_timing").fields}
    assert timing == {"options", "bonds", "total_ms"}


def test_backend_interface():
    assert bonds_cuda.NAME == "cuda" and bonds_cuda.TARGETS == ("cuda",)
    bonds, curves = sample_bond()
    with pytest.raises(BackendUnavailable, match="unknown target"):
        bonds_cuda.price(bonds, curves, target="opencl")
    with pytest.raises(ValueError, match="precision"):
        bonds_cuda.price(bonds, curves, "f16")
    with pytest.raises(_cuda_lib.CudaError, match="device -1 is out of range") as caught:
        bonds_cuda.price(bonds, curves, device=-1)
    assert caught.value.code == _cuda_lib.ERR_DEVICE and caught.value.field == "device"


def test_without_gpu_says_no_cuda_device():
    if gpu_present()[0]:
        pytest.skip("a GPU is present here: the no-GPU message cannot be checked")
    usable, reason = bonds_cuda.available()
    assert not usable
    assert reason.startswith("no CUDA device"), reason
    bonds, curves = sample_bond()
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        bonds_cuda.price(bonds, curves, "f32")
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        _cuda_lib.price_book(None, None, bonds, curves, "f64", device=0)
