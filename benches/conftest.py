"""Benchmark helpers: datasets from data/ (made by `make data`) and the work metric."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trinom
from trinom import io
from trinom.lattice.geometry import work

DATA = Path(__file__).resolve().parent.parent / "data"


def dataset(name: str) -> tuple[trinom.Portfolio, trinom.YieldCurve, np.ndarray]:
    """Portfolio, curve and reference prices of data/NAME.in / NAME.out (skips if absent)."""
    path = DATA / f"{name}.in"
    if not path.exists():
        pytest.skip(f"{path} missing: run `make data`")
    portfolio, curve = io.read_input(path)
    return portfolio, curve or trinom.YieldCurve.thesis(), io.read_prices(DATA / f"{name}.out")


def node_updates(portfolio: trinom.Portfolio, precision: str = "f64") -> float:
    """Work of both passes (docs/model.md §1.11), in node updates."""
    g = portfolio.geometry(np.float32 if precision == "f32" else np.float64)
    return float(work(g.n, g.jmax).sum())


def record(benchmark, portfolio: trinom.Portfolio, precision: str) -> None:
    """Attach Gnode/s and options/s (from the median) to the benchmark's JSON."""
    median = benchmark.stats.stats.median
    benchmark.extra_info["options"] = len(portfolio)
    benchmark.extra_info["node_updates"] = node_updates(portfolio, precision)
    benchmark.extra_info["gnodes_per_s"] = node_updates(portfolio, precision) / median / 1e9
    benchmark.extra_info["options_per_s"] = len(portfolio) / median


def pytest_benchmark_update_machine_info(config, machine_info: dict) -> None:
    """Name the GPU (if any) in the JSON's machine_info, so reports say what ran."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi"):
        query = ["nvidia-smi", "--query-gpu=name,clocks.max.sm,memory.total", "--format=csv,noheader"]
        result = subprocess.run(query, capture_output=True, text=True)
        if result.returncode == 0:
            machine_info["gpu"] = result.stdout.strip().splitlines()[0]
