"""OAS of a bond book against one pricing of it (issue 14: "OAS for the whole book in less than 10
pricings' time"). Market prices are the model's moved by up to +-5% (R1, S1, U1 from the paper's
generator); `make bench` runs the CPU rows (Futhark multicore), `make bench-gpu` the GPU ones."""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest
import trinom
from trinom.analytics.oas import CONVERGED, oas
from trinom.bonds.generator import generate_bonds

SIZES = {"cpu": 300, "gpu": 100000}
ENGINES = {"cpu": {"backend": "futhark", "target": "multicore"}, "gpu": {"backend": "auto"}}


@functools.cache
def book(name: str, where: str):
    bonds, curves = generate_bonds(name, min(SIZES[where], 3000 if name == "U1" else SIZES[where]), seed=12345)
    bonds.validate(curves)
    model = trinom.price(bonds, curves, **ENGINES[where]).clean
    return bonds, curves, model * (1 + np.random.default_rng(3).uniform(-0.05, 0.05, len(bonds)))


def run(benchmark, name: str, where: str) -> None:
    bonds, curves, market = book(name, where)
    engine = ENGINES[where]
    once = []
    for _ in range(3):  # one pricing of the whole book, the unit of the figure
        start = time.perf_counter()
        trinom.price(bonds, curves, **engine)
        once.append(time.perf_counter() - start)
    result = benchmark.pedantic(oas, args=(bonds, curves, market), kwargs=engine, rounds=3, iterations=1)
    assert (result.status == CONVERGED).all()
    pricing = float(np.median(once))
    benchmark.extra_info.update(bonds=len(bonds), one_pricing_s=pricing, batched_pricings=result.pricings,
                                pricings_time=benchmark.stats.stats.median / pricing)


@pytest.mark.parametrize("name", ["U1", "R1", "S1"])
def test_oas_cpu(benchmark, name):
    run(benchmark, name, "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["U1", "R1", "S1"])
def test_oas_gpu(benchmark, name):
    run(benchmark, name, "gpu")
