"""The Futhark backends on the GPU (targets cuda and opencl on NVIDIA's platform).

Every thesis dataset, the seven 65536-option sets included: float64 within 1e-11 of the
reference, float32 within 1.2e-4.  Skipped (by conftest) where there is no NVIDIA GPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_thesis
from trinom.backends import _futhark, futhark_basic, futhark_flat

BACKENDS = {"futhark-basic": futhark_basic, "futhark-flat": futhark_flat}
DATASETS = ["book", "options-1000", "0_UNIFORM_1000", "1_RAND_1000", "2_RANDCONSTHEIGHT_1000",
            "3_RANDCONSTWIDTH_1000", "0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED",
            "5_SKEWEDCONSTHEIGHT", "6_SKEWEDCONSTWIDTH"]
TOLERANCE = {"f64": 1e-11, "f32": 1.2e-4}

_loaded: dict[tuple[str, str], tuple] = {}


def dataset(name: str, precision: str):
    if (name, precision) not in _loaded:
        _loaded[(name, precision)] = load_thesis(name, precision)
    return _loaded[(name, precision)]


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("target", ["cuda", "opencl"])
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_gpu_targets_match_reference(backend, target, name, precision, thesis_curve):
    module = BACKENDS[backend]
    usable, why = module.available(target)
    assert usable, f"{backend} on {target}: {why}"
    if target == "opencl":
        assert _futhark.gpu_opencl_platform() is not None, "no OpenCL platform with a GPU"
    portfolio, expected = dataset(name, precision)
    prices = module.price(portfolio, thesis_curve, precision, target=target)
    assert prices.dtype == (np.float64 if precision == "f64" else np.float32)
    error = np.abs(prices.astype(np.float64) - expected)
    worst = int(np.argmax(error))
    assert error[worst] <= TOLERANCE[precision], (f"{backend}/{target} {name} {precision}: option {worst} "
                                                  f"priced {prices[worst]!r}, reference {expected[worst]!r}")


@pytest.mark.gpu
@pytest.mark.parametrize("width", [64, 512])
def test_gpu_flat_chunk_widths(width, thesis_curve):
    portfolio, expected = dataset("4_SKEWED", "f64")
    prices = futhark_flat.price(portfolio, thesis_curve, "f64", target="cuda", chunk_width=width)
    assert np.max(np.abs(prices - expected)) <= TOLERANCE["f64"]


@pytest.mark.gpu
def test_gpu_is_the_default_target():
    for module in BACKENDS.values():
        assert _futhark.default_target(module.PROGRAM) == "cuda"
