"""backend="auto": the inspector's statistics, the rule, the caller's target, and that auto prices correctly."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import load_thesis
from trinom import engines
from trinom.bonds.generator import generate_bonds
from trinom.engines import auto, costs
from trinom.generator import generate
from trinom.lattice.lowering import lower_bonds, lower_options


@pytest.mark.parametrize("kind,size", [("uniform", 3), ("skewed", 400), ("random", 50), ("skewed-const-width", 200)])
def test_auto_picks_a_usable_engine_and_prices_correctly(kind, size):
    portfolio = generate(kind, size, seed=5)
    name, target = auto.choose(lower_options(portfolio))
    assert auto.usable(name, target)
    expected = trinom.price(portfolio, backend="reference").price
    result = trinom.price(portfolio, backend="auto")
    assert result.engine == name + (f"/{target}" if target else "")
    np.testing.assert_allclose(result.price, expected, rtol=0, atol=1e-11)
    np.testing.assert_allclose(trinom.price(portfolio, backend="auto", precision="f32").price, expected, rtol=0,
                               atol=2e-3)


def test_auto_prices_bonds_and_mixed_books():
    bonds, curves = generate_bonds("S1", 20, seed=3)
    options = generate("skewed", 30, seed=2)
    expected = np.concatenate([trinom.price(options, curves[0], backend="reference").price,
                               trinom.price(bonds, curves, backend="reference").price])
    np.testing.assert_allclose(trinom.price([options, bonds], curves).price, expected, rtol=0, atol=1e-11)


def test_auto_matches_the_thesis_outputs(thesis_curve):
    portfolio, expected = load_thesis("book")
    np.testing.assert_allclose(trinom.price(portfolio, thesis_curve).price, expected, rtol=0, atol=1e-12)


def test_inspector_statistics():
    portfolio, _ = load_thesis("4_SKEWED")
    profile = auto.inspect(lower_options(portfolio))
    assert profile.trees == 65536 and profile.widest == 511
    assert profile.work == pytest.approx(1.787e9, rel=1e-3)  # anchors.md
    assert profile.width_skewness == pytest.approx(5.19, abs=0.01)
    assert profile.height_skewness == pytest.approx(2.40, abs=0.01)


def test_rule(monkeypatch):
    """The documented choices on the default costs, with the availability of each engine simulated."""
    monkeypatch.setattr(costs, "load", lambda path=None: costs.DEFAULTS)
    book = lower_options(load_thesis("book")[0])
    big = lower_options(generate("skewed", 2000, seed=1))
    available: set[tuple[str, str | None]] = set()
    monkeypatch.setattr(auto, "usable", lambda name, target=None: (name, target) in available)
    assert auto.choose(big) == ("reference", None)
    available |= {("futhark", "c")}
    assert auto.choose(big) == ("futhark", "c")
    available |= {("futhark", "multicore")}
    assert auto.choose(big) == ("futhark", "multicore")
    assert auto.choose(book) == ("futhark", "c")  # tiny: one thread beats the thread pool
    available |= {("futhark", "opencl")}
    monkeypatch.setattr(auto, "opencl_gpu", lambda: False)
    assert auto.choose(big) == ("futhark", "multicore")  # OpenCL on the CPU (PoCL): not a GPU
    monkeypatch.setattr(auto, "opencl_gpu", lambda: True)
    assert auto.choose(big) == ("futhark", "opencl")  # an OpenCL GPU (AMD, Intel) and no CUDA
    assert auto.choose(book) == ("futhark", "c")  # tiny: not worth a GPU call
    available |= {("cuda", None)}
    assert auto.choose(big) == ("cuda", None)
    # the 5-option book: the c target's call (0.27 ms measured on the 2-core EPYC) costs less than a GPU call's
    assert auto.choose(book) == ("futhark", "c")
    assert "cuda" in auto.describe_choice(big) and "node updates" in auto.describe_choice(big)
    assert auto.explain(big).startswith("cuda ") and "futhark/multicore" in auto.explain(big)


def test_auto_honours_the_callers_target(monkeypatch):
    """A target given with auto is kept (it used to be overridden by auto's own choice)."""
    big = lower_options(generate("skewed", 2000, seed=1))
    available = {("cuda", None), ("futhark", "c"), ("futhark", "multicore"), ("futhark", "opencl")}
    monkeypatch.setattr(auto, "usable", lambda name, target=None: (name, target) in available)
    assert auto.choose(big, target="c") == ("futhark", "c")
    assert auto.choose(big, target="opencl") == ("futhark", "opencl")
    assert auto.choose(big, target="cuda") == ("cuda", "cuda")
    with pytest.raises(engines.BackendUnavailable, match="no engine can run on target 'pyopencl'"):
        auto.choose(big, target="pyopencl")


def test_auto_with_a_target_prices_there():
    portfolio = generate("uniform", 20, seed=1)
    assert trinom.price(portfolio, target="c").engine == "futhark/c"


def desk_book(steps_per_year: int = 365, count: int = 14):
    """Dated callable bonds of 2-30 years at ``steps_per_year`` (benches/desk_book.py's shape), lowered."""
    from trinom.instruments import Trades
    from trinom.instruments.trades import lowered
    from trinom.model import DatedCurve

    rng = np.random.default_rng(4)
    as_of = np.datetime64("2026-11-25")
    maturity = as_of + rng.integers(2 * 365, 30 * 365, count).astype("timedelta64[D]")
    trades = Trades(as_of=str(as_of), id=[f"B{k}" for k in range(count)], type=["bond"] * count,
                    issue=["2025-01-15"] * count, maturity=maturity.astype(str).tolist(), coupon=[0.04] * count,
                    frequency=[2] * count, option=["call"] * count, exercise=["bermudan"] * count,
                    first_exercise=["2027-11-25"] * count,
                    last_exercise=(maturity - np.timedelta64(100, "D")).astype(str).tolist(),
                    exercise_price=[100.0] * count, a=rng.uniform(0.02, 0.1, count), sigma=[0.01] * count,
                    steps_per_year=[steps_per_year] * count)
    curve = {"default": DatedCurve(as_of=str(as_of), dates=["2030-11-25"], zero_rates=[0.03])}
    (_, bonds), = lowered(trades, curve)[0]
    return lower_bonds(bonds, ("default",))


def test_desk_books_go_to_cuda_where_it_runs_else_multicore(monkeypatch):
    """On the default costs (an H200 host): a desk's wide trees go to cuda, whose block kernel priced every desk
    book from 1 to 14000 trades fastest (benches/desk_book.py); without a GPU to multicore; never to Futhark's GPU
    targets, which price wide trees slowly."""
    monkeypatch.setattr(costs, "load", lambda path=None: costs.DEFAULTS)
    wide = desk_book(count=3)
    available = {("futhark", "opencl"), ("futhark", "multicore"), ("futhark", "c")}
    monkeypatch.setattr(auto, "usable", lambda name, target=None: (name, target) in available)
    monkeypatch.setattr(auto, "opencl_gpu", lambda: True)
    assert costs.features(wide).longest_class >= 2
    assert auto.choose(wide) == ("futhark", "multicore")
    available.add(("cuda", None))
    assert auto.choose(wide) == ("cuda", None)


def test_features_count_work_by_width_class():
    book = desk_book(count=6)
    f = costs.features(book)
    n, jmax = book.shape()
    widths = 2 * np.minimum(n, jmax) + 1
    assert f.trees == 6 and f.steps == n.max()
    assert sum(f.work) == pytest.approx(book.work().sum())
    assert f.work[3] == pytest.approx(book.work()[(widths > 2048) & (widths <= 8192)].sum())
    assert costs.WIDTH_CLASSES[f.longest_class - 1] < widths[np.argmax(n)] <= costs.WIDTH_CLASSES[f.longest_class]


def test_measure_fits_a_linear_engine_and_the_file_is_used(tmp_path, monkeypatch):
    """A simulated engine costing 1 ms a call, 2 Gnode/s and 1 us a step of its tallest tree: the fit recovers it,
    save() writes it for this host and load() gives it back; another host's file is ignored. The engine's time is
    simulated on the clock the measurement reads (a busy wait is at the mercy of a loaded machine's scheduler)."""
    clock = [0.0]

    def fake(engine, book):
        f = costs.features(book)
        clock[0] += 1e-3 + max(sum(f.work) / 2e9, 1e-6 * f.steps)

    monkeypatch.setattr(costs.time, "perf_counter", lambda: clock[0])  # the time module costs reads its clock from

    probes = _small_probes()
    monkeypatch.setattr(costs, "probe_books", lambda: probes)
    fitted = costs.measure(["futhark/multicore"], fake, rounds=1, budget=0.02)["futhark/multicore"]
    short = sum(costs.features(probes["short"]).work) / 2e9  # the fixed cost is the short probe's whole time
    assert 1e-3 + short <= fitted.fixed <= 1.3e-3 + short
    for rate in fitted.rates[:4]:
        assert rate == pytest.approx(2e9, rel=0.3)
    path = costs.save({"futhark/multicore": fitted}, tmp_path / "costs.json")
    assert costs.load(path)["futhark/multicore"].source.startswith("measured")
    assert costs.load(path)["cuda"] == costs.DEFAULTS["cuda"]
    saved = __import__("json").loads(path.read_text())
    saved["host"]["cores"] += 1
    other = tmp_path / "other.json"
    other.write_text(__import__("json").dumps(saved))
    assert costs.load(other)["futhark/multicore"] == costs.DEFAULTS["futhark/multicore"]


def _small_probes():
    """Probe books small enough for a unit test (one per class, the short and the tall tree)."""
    wide = desk_book(count=2)
    narrow = desk_book(steps_per_year=12, count=40)
    mid = desk_book(steps_per_year=52, count=10)
    return {"<=64": narrow, "65-512": mid, "513-2048": wide.take([0]), "2049-8192": wide.take([1]),
            "short": narrow.take([0]), "tall": wide.take([1])}


def test_backends_measure_writes_the_costs(tmp_path, monkeypatch, capsys):
    """``trinom backends --measure`` on the CPU targets (small probes) writes the file auto reads."""
    from trinom import cli

    path = tmp_path / "engine-costs.json"
    monkeypatch.setenv("TRINOM_ENGINE_COSTS", str(path))
    monkeypatch.setattr(costs, "probe_books", _small_probes)
    assert cli.main(["backends", "--measure", "--engines", "futhark/c"]) == 0
    out = capsys.readouterr().out
    assert str(path) in out and "futhark/c" in out
    assert costs.load(path)["futhark/c"].source.startswith("measured")
    costs.forget()
