"""benches/report.py on small synthetic pytest-benchmark and futhark bench files (no GPU, no benchmark run)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import trinom
from trinom import io
from trinom.lattice.geometry import work

ROOT = Path(__file__).resolve().parent.parent


def load_report():
    """benches/report.py as a module (benches/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "benches" / "report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


report = load_report()


def bench(name: str | None, target: str | None, data: str, precision: str, median_s: float, **extra) -> dict:
    """One pytest-benchmark row as test_bench_backends writes it (no name: the reference benchmark)."""
    params = {"data": data, "precision": precision}
    if name is not None:
        params.update(name=name, target=target)
    extra.setdefault("node_updates", 1e9)
    extra.setdefault("gnodes_per_s", extra["node_updates"] / median_s / 1e9)
    extra.setdefault("options_per_s", 1000 / median_s)
    return {"params": params, "stats": {"median": median_s, "iqr": median_s / 10, "rounds": 3}, "extra_info": extra}


def write_benchmarks(path: Path, rows: list[dict], gpu: str | None = None) -> Path:
    info = {"cpu": {"brand_raw": "Test CPU", "count": 2}, "python_version": "3.11.7"}
    if gpu:
        info["gpu"] = gpu
    path.write_text(json.dumps({"machine_info": info, "commit_info": {"id": "abc123"}, "datetime": "2026-11-21T22:00:00+00:00",
                                "benchmarks": rows}))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    gpu = write_benchmarks(tmp_path / "gpu.json", [
        bench("cuda", None, "0_UNIFORM", "f64", 0.002, node_updates=5.93e8),
        bench("cuda-option", None, "0_UNIFORM", "f64", 0.004, node_updates=5.93e8),
        bench("auto", None, "0_UNIFORM", "f64", 0.0021, node_updates=5.93e8, picked="cuda"),  # 5% slower: fine
        bench("cuda", None, "1_RAND", "f32", 0.010, node_updates=1.784e10),
        bench("auto", None, "1_RAND", "f32", 0.012, node_updates=1.784e10),  # 20% slower: flagged
    ], gpu="Test GPU")
    cpu = write_benchmarks(tmp_path / "cpu.json", [
        bench(None, None, "0_UNIFORM_1000", "f64", 0.2),
        bench("futhark-basic", "multicore", "0_UNIFORM_1000", "f64", 0.05),
    ])
    futhark = tmp_path / "futhark-cuda.json"
    futhark.write_text(json.dumps({
        "fut/bench-basic.fut": {"datasets": {"../data/0_UNIFORM.in": {"bytes": {"default space": 8},
                                                                       "runtimes": [1000, 3000, 2000]},
                                             "../data/tiny.in": {"runtimes": [500, 500]}}},
        "fut/bench-flat.fut:main32": {"datasets": {"../data/0_UNIFORM.in": {"runtimes": [40000]}}},
    }))
    (tmp_path / "futhark-cuda.machine").write_text("Test GPU box\nsecond line ignored\n")
    # a two-option dataset the benchmark files do not know: its work must come from tiny.in
    portfolio = trinom.Portfolio(strike=[60.0, 70.0], maturity=[9.0, 5.0], expiry=[3.0, 2.0], term_unit=[365, 365],
                                 term_steps=[20, 30], a=[0.1, 0.1], sigma=[0.01, 0.02], option_type=[0, 1])
    io.write_portfolio(portfolio, tmp_path / "tiny.in", trinom.YieldCurve.thesis())
    g = portfolio.geometry(np.float64)
    return {"gpu": gpu, "cpu": cpu, "futhark": futhark, "data": tmp_path, "tiny_work": float(work(g.n, g.jmax).sum())}


def line_of(text: str, *parts: str) -> str:
    """The one table line holding all parts."""
    found = [line for line in text.splitlines() if line.startswith("|") and all(p in line for p in parts)]
    assert len(found) == 1, (parts, found)
    return found[0]


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip("|").split("|")]


def test_benchmark_tables(files):
    text = report.markdown([files["cpu"], files["gpu"]])
    assert "### Test CPU, 2 cores, GPU Test GPU, Python 3.11.7" in text
    assert cells(line_of(text, "| cuda-option |")) == [
        "cuda-option", "-", "f64", "0_UNIFORM", "4.000", "0.400", "3", "148.250", "2.5e+05", "6.18 ms (H100 kernel)"]
    # fastest per dataset, against the thesis on the same kind of machine
    assert cells(line_of(text, "| 0_UNIFORM | f64 | cuda |")) == ["0_UNIFORM", "f64", "cuda", "2.000", "3.1x faster"]
    assert cells(line_of(text, "| 0_UNIFORM_1000 | f64 | futhark-basic/multicore |")) == [
        "0_UNIFORM_1000", "f64", "futhark-basic/multicore", "50.000", "2.0x faster"]  # seq. C++ 100 ms


def test_auto_against_best(files):
    text = report.markdown([files["cpu"], files["gpu"]])
    ok = cells(line_of(text, "| 0_UNIFORM | f64 | 2.100 (gpu.json)"))
    assert ok == ["0_UNIFORM", "f64", "2.100 (gpu.json)", "cuda", "2.000", "cuda (gpu.json)", "1.05", "no"]
    slow = cells(line_of(text, "| 1_RAND | f32 | 12.000 (gpu.json)"))
    assert slow == ["1_RAND", "f32", "12.000 (gpu.json)", "(not recorded)", "10.000", "cuda (gpu.json)", "1.20", "**yes**"]
    assert "1 of 2 rows more than 10% slower" in text
    assert "No `auto` rows measured on this machine." in text  # the CPU file has none


def test_futhark_table(files):
    futhark = [(files["futhark"], report.futhark_machine(files["futhark"], None))]
    text = report.markdown([files["gpu"]], futhark, data=files["data"])
    assert "### `futhark bench --backend=cuda`: Test GPU box" in text
    basic = cells(line_of(text, "| futhark-basic | main (f64) | 0_UNIFORM |"))
    # median of 1, 3, 2 ms; work 5.93e8 from the gpu.json rows; thesis 6.18 ms
    assert basic == ["futhark-basic", "main (f64)", "0_UNIFORM", "2.000", "1.000-3.000", "3", "296.500", "6.18", "3.1x faster"]
    flat = cells(line_of(text, "| futhark-flat | main32 (f32) |"))
    assert flat[2:4] == ["0_UNIFORM", "40.000"] and flat[-2:] == ["3.39", "11.8x slower"]
    tiny = cells(line_of(text, "| futhark-basic | main (f64) | tiny |"))
    assert tiny[3:6] == ["0.500", "0.500-0.500", "2"]
    assert float(tiny[6]) == pytest.approx(files["tiny_work"] / 0.5 / 1e6, abs=1e-3)
    assert tiny[7:] == ["", ""]


def test_futhark_names_and_machines():
    assert report.futhark_backend(Path("benches/futhark-multicore.json")) == "multicore"
    assert report.futhark_backend(Path("run1.json")) == "run1"
    assert report.dataset_name("../data/1_RAND.in") == "1_RAND"
    assert report.futhark_machine(Path("/nonexistent/futhark-c.json"), "2-core box") == "2-core box"
    assert "not recorded" in report.futhark_machine(Path("/nonexistent/futhark-c.json"), None)


def test_update_replaces_only_the_generated_part(files, tmp_path):
    before = "# Results\n\nHand-written headline.\n\n"
    after = "\n## Plots\n\nHand-written too.\n"
    md = tmp_path / "RESULTS.md"
    md.write_text(before + report.BEGIN + "\nold generated text\n" + report.END + after)
    report.main([str(files["gpu"]), "--futhark", str(files["futhark"]), "--futhark-machine", "H100",
                 "--data", str(files["data"]), "--update", str(md)])
    text = md.read_text()
    assert text.startswith(before + report.BEGIN + "\n## Generated tables\n")
    assert text.endswith("\n" + report.END + after)
    assert "old generated text" not in text
    assert "### `futhark bench --backend=cuda`: H100" in text
    report.main([str(files["gpu"]), "--futhark", str(files["futhark"]), "--futhark-machine", "H100",
                 "--data", str(files["data"]), "--update", str(md)])
    assert md.read_text() == text  # idempotent
    with pytest.raises(ValueError, match="markers"):
        report.replace_generated("no markers here", "x")
