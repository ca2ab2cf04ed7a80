"""Every compiled backend x target x precision on the thesis datasets (pytest-benchmark).

`make bench` runs the CPU targets (c, multicore) on the subsets; `make bench-gpu` runs the GPU
backends and targets on every dataset. Each row records Gnode/s and options/s (benches/conftest.py)
and checks its prices against the reference outputs, so a fast wrong answer cannot pass.
"""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import dataset, record
from trinom import backends

SMALL = ["book", "options-1000", "0_UNIFORM_1000", "1_RAND_1000", "2_RANDCONSTHEIGHT_1000", "3_RANDCONSTWIDTH_1000"]
LARGE = ["0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
         "6_SKEWEDCONSTWIDTH", "options-60000"]
CPU = [("futhark-basic", "c"), ("futhark-basic", "multicore"), ("futhark-flat", "c"), ("futhark-flat", "multicore"),
       ("auto", None)]
GPU = [("futhark-basic", "cuda"), ("futhark-flat", "cuda"), ("futhark-basic", "opencl"), ("futhark-flat", "opencl"),
       ("cuda-option", None), ("cuda-multi", None), ("cuda", None), ("auto", None), ("futhark-basic", "c")]
#: Prices are checked against data/*.out (float64); float32 only for gross errors (tests check it tightly).
TOLERANCE = {"f64": 1e-11, "f32": 1e-2}


def usable(name: str, target: str | None) -> None:
    if name == "auto":
        return
    try:
        module = backends.get(name)
    except backends.BackendUnavailable as err:
        pytest.skip(str(err))
    ok, why = module.available(target)
    if not ok:
        pytest.skip(f"{name}/{target}: {why}")


def run(benchmark, name: str, target: str | None, data: str, precision: str, rounds: int) -> None:
    usable(name, target)
    portfolio, curve, expected = dataset(data)
    options = {"target": target} if target else {}
    trinom.price(portfolio[:8], curve, backend=name, precision=precision, **options)  # warm-up: contexts, JIT
    prices = benchmark.pedantic(trinom.price, args=(portfolio, curve), kwargs={"backend": name, "precision": precision,
                                **options}, rounds=rounds, iterations=1, warmup_rounds=1 if rounds > 1 else 0)
    record(benchmark, portfolio, precision)
    np.testing.assert_allclose(prices, expected, rtol=0, atol=TOLERANCE[precision])


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("data", [*SMALL, "4_SKEWED"])
@pytest.mark.parametrize("name,target", CPU, ids=[f"{n}-{t}" for n, t in CPU])
def test_cpu(benchmark, name, target, data, precision):
    run(benchmark, name, target, data, precision, rounds=3 if data != "4_SKEWED" else 1)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("data", SMALL + LARGE)
@pytest.mark.parametrize("name,target", GPU, ids=[f"{n}-{t}" if t else n for n, t in GPU])
def test_gpu(benchmark, name, target, data, precision):
    run(benchmark, name, target, data, precision, rounds=5)
