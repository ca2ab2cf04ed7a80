"""The full risk run of a bond book against one pricing of it (issue 14: on the H100, 100000 R1 bonds with base,
+-1 bp parallel, +-1 bp at each pillar and +-sigma, about 35 scenarios per bond, in less than 25 times one
pricing). One :func:`trinom.risk` call is one engine call over the market's scenario axis; ``scenario_pricings``
is the number of repricings a bump-and-reprice would make (the scenarios each bond needs), ``pricings_time``
the risk run's median over one pricing's. `make bench` runs the CPU row (Futhark multicore, 300 bonds),
`make bench-gpu` the GPU ones (`cuda`, 100000 bonds; and 100000 options of the thesis' 1_RAND distribution,
whose scenarios are one library call, with ``grid_s``: the scenarios priced in one `trinom.price` call, without
the risk table, and ``one_by_one_s``: priced one call each, as a bump-and-reprice does)."""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest
import trinom
from trinom.analytics.risk import risk
from trinom.bonds.generator import generate_bonds
from trinom.pipeline import prepare
from trinom.scenarios import CurveShift, SigmaShift

MEASURES = ("dv01", "duration", "convexity", "krd", "vega")
SIZES = {"cpu": 300, "gpu": 100000}
ENGINES = {"cpu": {"backend": "futhark", "target": "multicore"}, "gpu": {"backend": "cuda"}}


@functools.cache
def book(where: str):
    bonds, curves = generate_bonds("R1", SIZES[where], seed=12345)
    bonds.validate(curves)
    return bonds, curves


@functools.cache
def option_book():
    return trinom.generator.generate("random", 100000, seed=12345), None


def run(benchmark, where: str, instruments=None, curves=None, one_by_one: bool = False) -> None:
    if instruments is None:
        instruments, curves = book(where)
    engine = ENGINES[where]
    trinom.price(instruments, curves, **engine)  # warm-up: libraries loaded, validation cached
    once = []
    for _ in range(5):  # one pricing of the whole book, the unit of the figure
        start = time.perf_counter()
        trinom.price(instruments, curves, **engine)
        once.append(time.perf_counter() - start)
    table = benchmark.pedantic(risk, args=(instruments, curves), kwargs={"measures": MEASURES, **engine}, rounds=3,
                               iterations=1, warmup_rounds=1)
    assert (table.value.notna() | (table.base == 0)).all()  # durations of an option worth 0 are NaN
    pricing = float(np.median(once))
    market = trinom.Market.of(curves)
    pillars = len(market.curves[0].days)
    per_row = 1 + 2 + 2 * pillars + 2  # base, parallel, the pillars of the row's own curve, sigma
    work = float(prepare(instruments, market).book.work().sum())
    benchmark.extra_info.update(instruments=len(instruments), one_pricing_s=pricing, scenario_pricings=per_row,
                                pricings_time=benchmark.stats.stats.median / pricing,
                                equivalent_node_updates_per_s=per_row * work / benchmark.stats.stats.median)
    if one_by_one:  # the risk run's scenarios priced in one call (no risk table), and by a call each
        scenarios = [None, CurveShift(1e-4), CurveShift(-1e-4), SigmaShift(1e-4), SigmaShift(-1e-4),
                     *(CurveShift(sign * 1e-4, pillar=k) for k in range(pillars) for sign in (1, -1))]
        grid = []
        for _ in range(3):
            start = time.perf_counter()
            trinom.price(instruments, curves, scenarios=scenarios, **engine)
            grid.append(time.perf_counter() - start)
        start = time.perf_counter()
        for scenario in scenarios:
            trinom.price(instruments, curves, scenarios=[scenario], **engine)
        benchmark.extra_info.update(grid_s=float(np.median(grid)), one_by_one_s=time.perf_counter() - start,
                                    one_by_one_calls=len(scenarios))


def test_risk_cpu(benchmark):
    run(benchmark, "cpu")


@pytest.mark.gpu
def test_risk_gpu(benchmark):
    run(benchmark, "gpu")


@pytest.mark.gpu
def test_risk_options_gpu(benchmark):
    run(benchmark, "gpu", *option_book(), one_by_one=True)
