"""Every compiled backend x target x precision on the thesis datasets (pytest-benchmark).

`make bench` runs the CPU targets (c, multicore) on the subsets; `make bench-gpu` runs the GPU
backends and targets on every dataset. Each row records Gnode/s and options/s (benches/conftest.py)
and checks its prices against the reference outputs, so a fast wrong answer cannot pass.

The 10000-option subsets cost about ten times the 1000-option ones: on the 2-core CPU machine
(benches/cpu.json medians) 0_UNIFORM_10000 takes about 1 s a call on multicore, the others
5-40 s, so `make bench` runs only 0_UNIFORM_10000 and only on multicore and auto (about 25 s more
on top of roughly 8 minutes); the GPU runs all four.
"""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import dataset, record
from trinom import engines

SMALL = ["book", "options-1000", "0_UNIFORM_1000", "1_RAND_1000", "2_RANDCONSTHEIGHT_1000", "3_RANDCONSTWIDTH_1000"]
TEN_K = ["0_UNIFORM_10000", "1_RAND_10000", "2_RANDCONSTHEIGHT_10000", "3_RANDCONSTWIDTH_10000"]
LARGE = ["0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
         "6_SKEWEDCONSTWIDTH", "options-60000"]
CPU = [("futhark", "c"), ("futhark", "multicore"), ("futhark-basic", "c"), ("futhark-basic", "multicore"),
       ("futhark-flat", "c"), ("futhark-flat", "multicore"), ("auto", None)]
#: (backend, target, dataset) on the CPU: every CPU backend on the small sets and 4_SKEWED, the cheap 10000 subset on multicore.
CPU_CASES = [(n, t, d) for n, t in CPU for d in [*SMALL, "4_SKEWED"]] + [
    (n, t, "0_UNIFORM_10000") for n, t in CPU if t == "multicore" or n == "auto"]
GPU = [("futhark", "cuda"), ("futhark", "opencl"), ("futhark-basic", "cuda"), ("futhark-flat", "cuda"),
       ("futhark-basic", "opencl"), ("futhark-flat", "opencl"),
       ("cuda-option", None), ("cuda-multi", None), ("cuda", None), ("auto", None), ("futhark-basic", "c")]
#: (backend, target, dataset) on the GPU machine: all on every dataset, but the single-threaded c target (there to compare
#: auto with the CPU on tiny books) only on the small sets, where it takes seconds rather than many minutes.
GPU_CASES = [(n, t, d) for n, t in GPU for d in SMALL + TEN_K + LARGE if (n, t) != ("futhark-basic", "c") or d in SMALL]
#: Prices are checked against data/*.out (float64); float32 only for gross errors (tests check it tightly).
TOLERANCE = {"f64": 1e-11, "f32": 1e-2}


def usable(name: str, target: str | None) -> None:
    if name == "auto":
        return
    try:
        ok, why = engines.get(name).available(target)
    except engines.BackendUnavailable as err:
        ok, why = False, str(err)
    if not ok:
        pytest.skip(f"{name}/{target}: {why}")


def run(benchmark, name: str, target: str | None, data: str, precision: str, rounds: int) -> None:
    usable(name, target)
    portfolio, curve, expected = dataset(data)
    options = {"target": target} if target else {}
    trinom.price(portfolio[:8], curve, backend=name, precision=precision, **options)  # warm-up: contexts, JIT
    result = benchmark.pedantic(trinom.price, args=(portfolio, curve), kwargs={"backend": name, "precision": precision,
                                **options}, rounds=rounds, iterations=1, warmup_rounds=1 if rounds > 1 else 0)
    record(benchmark, portfolio, precision)
    if name == "auto":  # what auto picked, for the report's auto-against-best table
        benchmark.extra_info["picked"] = result.engine
    np.testing.assert_allclose(result.price, expected, rtol=0, atol=TOLERANCE[precision])


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("name,target,data", CPU_CASES, ids=[f"{n}-{t}-{d}" for n, t, d in CPU_CASES])
def test_cpu(benchmark, name, target, data, precision):
    run(benchmark, name, target, data, precision, rounds=3 if data != "4_SKEWED" else 1)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("name,target,data", GPU_CASES, ids=[f"{n}-{t}-{d}" if t else f"{n}-{d}" for n, t, d in GPU_CASES])
def test_gpu(benchmark, name, target, data, precision):
    # Sub-millisecond rows need many rounds for a stable median (auto is compared with the best at 10%).
    run(benchmark, name, target, data, precision, rounds=41 if data in SMALL else 5)
