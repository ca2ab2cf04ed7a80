"""The three CUDA backends against the thesis' reference outputs (needs an NVIDIA GPU).

Tolerances are absolute, as in the thesis' validation: 1e-11 in float64 (``out/``) and 1.2e-4
in float32 (``out32/``).
"""

from __future__ import annotations

import concurrent.futures
import functools

import numpy as np
import pytest
import trinom
from conftest import load_thesis, shared_data_dir
from trinom import engines
from trinom.engines import _cuda_lib, cuda, cuda_multi, cuda_option, reference

pytestmark = pytest.mark.gpu

CUDA_BACKENDS = ("cuda-option", "cuda-multi", "cuda")
#: The option kernel module of each CUDA engine (what the engine calls; its knobs are the module's).
KERNELS = {"cuda-option": cuda_option, "cuda-multi": cuda_multi, "cuda": cuda}
TOLERANCE = {"f64": 1e-11, "f32": 1.2e-4}
DATASETS = (
    "book", "options-1000", "options-60000",
    "0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
    "6_SKEWEDCONSTWIDTH",
    *(f"{name}_{size}" for name in ("0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT", "3_RANDCONSTWIDTH")
      for size in (1000, 10000, 30000)),
)


@functools.cache
def _load(name: str, precision: str) -> tuple[trinom.Portfolio, np.ndarray] | str:
    thesis = shared_data_dir() / "thesis"
    needed = (thesis / f"{name}.in", thesis / ("out" if precision == "f64" else "out32") / f"{name}.out")
    missing = [str(path) for path in needed if not path.exists()]
    if missing:
        return f"dataset {name} ({precision}) not found: {', '.join(missing)}"
    return load_thesis(name, precision)


def dataset(name: str, precision: str) -> tuple[trinom.Portfolio, np.ndarray]:
    """A thesis dataset and its reference prices; skips the test if its files are not here."""
    loaded = _load(name, precision)
    if isinstance(loaded, str):
        pytest.skip(loaded)
    return loaded


def kernel(name: str):
    """The option kernel module behind CUDA engine ``name``."""
    return KERNELS[name]


def check(got: np.ndarray, expected: np.ndarray, precision: str, what: str) -> None:
    assert got.dtype == (np.float32 if precision == "f32" else np.float64), what
    assert got.shape == expected.shape, what
    assert np.all(np.isfinite(got)), f"{what}: non-finite prices"
    error = np.abs(got.astype(np.float64) - expected)
    worst = int(np.argmax(error))
    assert error[worst] <= TOLERANCE[precision], (
        f"{what}: max error {error[worst]:.3e} at row {worst} (got {got[worst]!r}, expected {expected[worst]!r})")


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("backend", CUDA_BACKENDS)
def test_matches_thesis_reference(backend: str, name: str, precision: str, thesis_curve: trinom.YieldCurve):
    portfolio, expected = dataset(name, precision)
    got = kernel(backend).price(portfolio, thesis_curve, precision)
    check(got, expected, precision, f"{backend} {name} {precision}")


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("padding", ["global", "block", "warp"])
@pytest.mark.parametrize("sort", [True, False])
def test_cuda_option_padding_and_sorting(padding: str, sort: bool, precision: str, thesis_curve):
    for name in ("options-1000", "4_SKEWED"):
        portfolio, expected = dataset(name, precision)
        got = kernel("cuda-option").price(portfolio, thesis_curve, precision, padding=padding, sort=sort,
                                                block_size=64)
        check(got, expected, precision, f"cuda-option {name} padding={padding} sort={sort}")


@pytest.mark.parametrize("backend", CUDA_BACKENDS)
def test_unsorted_and_other_block_sizes(backend: str, thesis_curve):
    portfolio, expected = dataset("1_RAND_1000", "f64")
    block = {"cuda-option": 256, "cuda-multi": 512, "cuda": 64}[backend]
    got = kernel(backend).price(portfolio, thesis_curve, "f64", sort=False, block_size=block)
    check(got, expected, "f64", f"{backend} unsorted block {block}")


def wide_portfolio() -> trinom.Portfolio:
    """Trees of width 515-1601 (wider than the fast kernel's 512 and than a 512-thread block), 360
    steps deep so that the tree edges are reached where jmax < 360."""
    a = np.array([0.0086, 0.0070, 0.0050, 0.0040, 0.0030, 0.0028])
    count = a.size
    return trinom.Portfolio(strike=np.linspace(40, 90, count), maturity=np.full(count, 30.0),
                            expiry=np.full(count, 2.0), term_unit=np.full(count, 365),
                            term_steps=np.full(count, 12), a=a, sigma=np.full(count, 0.01),
                            option_type=np.arange(count) % 2)


def random_portfolio(rng: np.random.Generator, count: int) -> trinom.Portfolio:
    """Fresh random options of the thesis' convention: three term units, calls and puts, expiries at 0, inside the
    tree and past the bond's maturity (the thesis' quirk: no payoff, the bond price)."""
    maturity = rng.uniform(1.0, 12.0, count)  # at least one step
    expiry = np.where(rng.random(count) < 0.15, 0.0, rng.uniform(0.0, 1.2, count) * maturity)
    return trinom.Portfolio(convention="thesis", strike=rng.uniform(0.0, 110.0, count), maturity=maturity, expiry=expiry,
                            term_unit=rng.choice([365, 360, 120], count), term_steps=rng.integers(1, 25, count),
                            a=rng.uniform(0.03, 0.6, count), sigma=rng.uniform(0.002, 0.04, count),
                            option_type=rng.integers(0, 2, count))


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("backend", CUDA_BACKENDS)
def test_random_portfolio_matches_the_reference_backend(backend: str, precision: str, thesis_curve):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    portfolio = random_portfolio(np.random.default_rng(seed), 300)
    assert not portfolio.validate()
    expected = reference.price(portfolio, thesis_curve, precision).astype(np.float64)
    got = kernel(backend).price(portfolio, thesis_curve, precision).astype(np.float64)
    tolerance = 1e-11 if precision == "f64" else 2e-4
    error = np.abs(got - expected)
    worst = int(np.argmax(error))
    assert error[worst] <= tolerance, (f"seed {seed}: {backend} {precision} row {worst}: {got[worst]!r} vs "
                                       f"{expected[worst]!r} ({dict(next(iter(portfolio[worst])))})")


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("backend", CUDA_BACKENDS)
def test_wide_trees_take_the_fallback(backend: str, precision: str, thesis_curve):
    portfolio = wide_portfolio()
    widths = portfolio.widths()
    assert widths.min() > 512 and widths.max() > 1024 and (portfolio.heights() > widths // 2).any()
    expected = reference.price(portfolio, thesis_curve, precision)
    timing: dict = {}
    options = {"block_size": 512} if backend == "cuda-multi" else {}
    got = kernel(backend).price(portfolio, thesis_curve, precision, timing=timing, **options)
    tolerance = TOLERANCE[precision] if precision == "f64" else 2e-4
    assert np.abs(got.astype(np.float64) - expected).max() <= tolerance
    if backend != "cuda-option":
        assert timing["fallback"] == len(portfolio)


@pytest.mark.parametrize("backend", CUDA_BACKENDS)
def test_chunks_give_the_same_prices(backend: str, thesis_curve):
    portfolio, expected = dataset("options-1000", "f64")
    whole = kernel(backend).price(portfolio, thesis_curve, "f64")
    timing: dict = {}
    chunked = kernel(backend).price(portfolio, thesis_curve, "f64", chunk_size=97, timing=timing)
    assert timing["chunks"] >= 11
    if backend == "cuda-multi":  # other bins: other summation orders in the alpha sums
        np.testing.assert_allclose(chunked, whole, rtol=0, atol=1e-12)
    else:
        np.testing.assert_array_equal(chunked, whole)
    check(chunked, expected, "f64", f"{backend} chunked")


@pytest.mark.parametrize("backend", ["cuda-option", "cuda-multi"])
def test_workspace_larger_than_memory_is_split(backend: str, thesis_curve):
    portfolio, expected = dataset("1_RAND_1000", "f64")
    timing: dict = {}
    options = {"padding": "global"} if backend == "cuda-option" else {}
    got = kernel(backend).price(portfolio, thesis_curve, "f64", memory_limit=2_000_000, timing=timing,
                                      **options)
    assert timing["chunks"] > 1
    check(got, expected, "f64", f"{backend} with a 2 MB workspace")


@pytest.mark.parametrize("backend", CUDA_BACKENDS)
def test_prices_come_back_in_input_order(backend: str, thesis_curve):
    portfolio, expected = dataset("4_SKEWED", "f64")
    order = np.random.default_rng(7).permutation(len(portfolio))[:5000]
    got = kernel(backend).price(portfolio[order], thesis_curve, "f64")
    check(got, expected[order], "f64", f"{backend} permuted subset")


@pytest.mark.parametrize("backend", CUDA_BACKENDS)
def test_through_trinom_price(backend: str, thesis_curve):
    portfolio, expected = dataset("book", "f64")
    check(trinom.price(portfolio, thesis_curve, backend=backend).price, expected, "f64", backend)


def test_timing_is_reported(thesis_curve):
    portfolio, _ = dataset("options-1000", "f32")
    timing: dict = {}
    kernel("cuda").price(portfolio, thesis_curve, "f32", timing=timing)
    assert 0 < timing["kernel_ms"] <= timing["device_ms"] <= timing["library_ms"]


def test_available_names_the_device():
    usable, reason = engines.get("cuda").available()
    assert usable, reason
    assert reason.startswith("CUDA on")


@pytest.mark.parametrize("variant", ["fast", "option", "multi"])
def test_library_errors_carry_the_row(variant: str, thesis_curve):
    # Bypass validation: a negative a (no valid tree) reaches the library, which refuses the row.
    bad = trinom.Portfolio(strike=[63.0, 63.0], maturity=[9.0, 9.0], expiry=[3.0, 3.0], term_unit=[365, 365],
                           term_steps=[12, 12], a=[0.1, -0.1], sigma=[0.01, 0.01], option_type=[1, 1])
    with pytest.raises(_cuda_lib.CudaError, match=r"^row 1: the option gives no valid tree") as caught:
        _cuda_lib.price(bad, thesis_curve, "f64", variant=variant)
    err = caught.value
    assert (err.code, err.row, err.section, err.field, err.stage, err.device) == (
        _cuda_lib.ERR_ARGUMENT, 1, "options", "a", "geometry", 0)
    # The context survives the error.
    assert np.isfinite(_cuda_lib.price(bad[:1], thesis_curve, "f64", variant=variant)).all()


def test_error_row_is_the_row_of_the_input_across_chunks(thesis_curve):
    """Chunks price rows 0-2, 3-5, ...: the row is still the caller's, from the error struct."""
    portfolio, _ = dataset("options-1000", "f64")
    fields = {name: np.array(getattr(portfolio, name)[:10]) for name in
              ("strike", "maturity", "expiry", "term_unit", "term_steps", "a", "sigma", "option_type")}
    fields["sigma"][7] = np.nan
    bad = trinom.Portfolio(**fields)
    with pytest.raises(_cuda_lib.CudaError) as caught:
        _cuda_lib.price(bad, thesis_curve, "f64", chunk_size=3)
    assert (caught.value.row, caught.value.field) == (7, "sigma")
    assert str(caught.value).startswith("row 7: ")


def test_device_id(thesis_curve):
    portfolio, expected = dataset("options-1000", "f64")
    for name in CUDA_BACKENDS:
        got = kernel(name).price(portfolio, thesis_curve, "f64", device=0)
        np.testing.assert_array_equal(got, kernel(name).price(portfolio, thesis_curve, "f64"))
        check(got, expected, "f64", f"{name} on device 0")
    usable, reason = _cuda_lib.available(device=0)
    assert usable and reason.startswith("CUDA on"), reason


def test_device_out_of_range_is_a_clear_error(thesis_curve):
    portfolio, _ = dataset("book", "f64")
    usable, _ = _cuda_lib.available(device=64)
    assert not usable
    for device in (64, -1):
        with pytest.raises(_cuda_lib.CudaError, match=f"device {device} is out of range") as caught:
            kernel("cuda").price(portfolio, thesis_curve, "f64", device=device)
        assert caught.value.code == _cuda_lib.ERR_DEVICE and caught.value.field == "device"
        assert caught.value.row == -1
    with pytest.raises(_cuda_lib.CudaError, match="device 64 is out of range"):  # also for an empty book
        _cuda_lib.price(portfolio[:0], thesis_curve, "f64", device=64)
    # The library still prices on device 0.
    assert np.isfinite(kernel("cuda").price(portfolio, thesis_curve, "f64", device=0)).all()


def test_threads_share_a_device(thesis_curve):
    """Calls from several threads (one device: they take turns) give the bits of one thread alone."""
    portfolio, _ = dataset("options-1000", "f64")
    alone = {v: _cuda_lib.price(portfolio, thesis_curve, "f64", variant=v) for v in _cuda_lib.VARIANTS}
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        runs = [(v, pool.submit(_cuda_lib.price, portfolio, thesis_curve, "f64", variant=v))
                for _ in range(4) for v in _cuda_lib.VARIANTS]
        for variant, run in runs:
            np.testing.assert_array_equal(run.result(), alone[variant])


def test_threads_on_every_device(thesis_curve):
    """One thread per device at the same time (a Dask worker per GPU): each gets device 0's bits."""
    count = len(_device_ids())
    if count < 2:
        pytest.skip(f"one CUDA device here ({count}): pricing on two devices at once is not checked")
    portfolio, expected = dataset("options-1000", "f64")
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        runs = [pool.submit(_cuda_lib.price, portfolio, thesis_curve, "f64", device=d) for d in range(count)]
        results = [run.result() for run in runs]
    for got in results:
        np.testing.assert_array_equal(got, results[0])
    check(results[0], expected, "f64", "every device")


def _device_ids() -> list[int]:
    ffi, lib = _cuda_lib._LIBRARY.open()
    return list(range(len(_cuda_lib._device_names(ffi, lib))))


def test_release_and_price_again(thesis_curve):
    portfolio, expected = dataset("options-1000", "f64")
    before = _cuda_lib.price(portfolio, thesis_curve, "f64")
    _cuda_lib.release(0)
    np.testing.assert_array_equal(_cuda_lib.price(portfolio, thesis_curve, "f64"), before)
    check(before, expected, "f64", "after release")


def test_cuda_and_futhark_cuda_share_a_process(thesis_curve):
    """A Futhark cuda library makes its own CUDA context current; our library must still work
    after it (it binds the device's primary context per call) and must leave Futhark working."""
    portfolio, expected = dataset("options-1000", "f64")
    futhark = engines.get("futhark-basic")
    if not futhark.available("cuda")[0]:
        pytest.fail(f"futhark-basic/cuda not usable on this GPU machine: {futhark.available('cuda')[1]}")
    for name, options in (("futhark-basic", {"target": "cuda"}), ("cuda", {}), ("futhark-basic", {"target": "cuda"}),
                          ("cuda-multi", {})):
        got = trinom.price(portfolio, thesis_curve, backend=name, **options).price
        check(got, expected, "f64", f"{name} after the other library")


def option_scenarios():
    from trinom.scenarios import CurveShift, SigmaShift

    return [None, CurveShift(1e-4), CurveShift(-1e-4), *(CurveShift(1e-4, pillar=k) for k in (0, 3, 9, 14)),
            SigmaShift(1e-4)]


def priced_alone(options: trinom.Portfolio, scenario, **engine) -> np.ndarray:
    """The book's prices in ``scenario``, priced as a book of its own (no scenario axis)."""
    from trinom.scenarios import SigmaShift, scenario_market

    if isinstance(scenario, SigmaShift):
        moved = type(options)(**{**options.as_dict(), "sigma": options.sigma + scenario.shift})
        return trinom.price(moved, **engine).price
    market = trinom.Market.of(None)
    curves_now = scenario_market(market, [scenario]).curves
    return trinom.price(options, dict(zip(market.names, curves_now, strict=True)), **engine).price


def counted_calls(monkeypatch) -> list:
    calls: list = []
    original = _cuda_lib.price_book
    monkeypatch.setattr(_cuda_lib, "price_book", lambda *a, **k: calls.append(k) or original(*a, **k))
    return calls


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("name", ["cuda", "cuda-option", "cuda-multi"])
def test_an_option_books_scenarios_are_one_library_call(name, precision, monkeypatch):
    """Every scenario of an option book (curve moves and sigma moves) in one library call: on ``cuda`` as scenario
    entries (per option the forward pass and the steps down to the expiry once), on the others one tree per
    entry on its curve (``curve_index``); each price is the book's price in that scenario priced alone."""
    options = trinom.generator.generate("uniform", 40, seed=4)
    scenarios = option_scenarios()
    calls = counted_calls(monkeypatch)
    got = trinom.price(options, scenarios=scenarios, backend=name, precision=precision).price
    assert len(calls) == 1 and got.shape == (len(scenarios), len(options))
    assert ("option_entries" in calls[0]) == (name == "cuda")
    for k, scenario in enumerate(scenarios):
        want = priced_alone(options, scenario, backend=name, precision=precision)
        if name == "cuda":  # the same operations as the option priced alone on the entry's curve
            np.testing.assert_array_equal(got[k], want, err_msg=str(scenario))
        else:  # cuda-multi packs other options beside each one, which changes its level sums' order
            np.testing.assert_allclose(got[k], want, rtol=1e-13 if precision == "f64" else 1e-5, atol=0,
                                       err_msg=str(scenario))


def test_option_entries_with_trees_too_wide_for_the_fast_kernel(monkeypatch):
    """Trees wider than the fast kernel take one tree per entry (curve_index) beside the entries' call (which skips
    them); those at its edge (509 and 511 nodes, past the engine's margin) are priced by the entries' call."""
    narrow, wide = trinom.generator.generate("random", 30, seed=8), wide_portfolio()
    fields = {k: np.concatenate([v, v[-2:], wide.as_dict()[k]]) for k, v in narrow.as_dict().items()}
    fields["a"][30:32] = trinom.generator.reversion_rate_for_width([509, 511])
    fields["maturity"][30:32] = 40.0
    options = trinom.Portfolio(**fields)
    scenarios = option_scenarios()
    calls = counted_calls(monkeypatch)
    got = trinom.price(options, scenarios=scenarios, backend="cuda").price
    assert sorted("option_entries" in call for call in calls) == [False, True]
    for k, scenario in enumerate(scenarios):
        np.testing.assert_array_equal(got[k], priced_alone(options, scenario, backend="cuda"), err_msg=str(scenario))


def test_option_entries_are_checked(thesis_curve):
    portfolio, _ = dataset("options-1000", "f64")
    curves = (thesis_curve, trinom.YieldCurve(np.asarray(thesis_curve.rates) + 0.01, thesis_curve.days))
    offset = np.arange(len(portfolio) + 1) * 2
    curve = np.tile([0, 1], len(portfolio))
    prices, _ = _cuda_lib.price_book(portfolio, curves, None, (), "f64", option_entries=(offset, curve))
    np.testing.assert_array_equal(prices[0::2], _cuda_lib.price(portfolio, thesis_curve, "f64"))
    np.testing.assert_array_equal(prices[1::2], _cuda_lib.price(portfolio, curves[1], "f64"))
    bad = curve.copy()
    bad[11] = 5
    with pytest.raises(_cuda_lib.CudaError, match="row 5: scenario entry 11: curve 5 is not one of the 2") as caught:
        _cuda_lib.price_book(portfolio, curves, None, (), "f64", option_entries=(offset, bad))
    assert caught.value.field == "entry_curve"
    with pytest.raises(_cuda_lib.CudaError, match="fast variant") as caught:
        _cuda_lib.price_book(portfolio, curves, None, (), "f64", variant="multi", option_entries=(offset, curve))
    with pytest.raises(_cuda_lib.CudaError, match="wider than 512 nodes") as caught:
        wide = wide_portfolio()
        _cuda_lib.price_book(wide, curves, None, (), "f64",
                             option_entries=(np.arange(len(wide) + 1), np.zeros(len(wide), dtype=np.int64)))
    assert caught.value.field == "entry_offset" and caught.value.row >= 0
    # skip_wide: the wide trees' entries NaN, the others' their prices (two entries each)
    narrow = trinom.generator.generate("uniform", 5, seed=1)
    both = trinom.Portfolio(**{k: np.concatenate([v, wide.as_dict()[k]]) for k, v in narrow.as_dict().items()})
    offset = 2 * np.arange(len(both) + 1)
    prices, _ = _cuda_lib.price_book(both, curves, None, (), "f64", skip_wide=True,
                                     option_entries=(offset, np.tile([0, 1], len(both))))
    assert np.isnan(prices[2 * len(narrow):]).all()
    np.testing.assert_array_equal(prices[0:2 * len(narrow):2], _cuda_lib.price(narrow, thesis_curve, "f64"))
    np.testing.assert_array_equal(prices[1:2 * len(narrow):2], _cuda_lib.price(narrow, curves[1], "f64"))


def test_options_on_several_curves_in_one_call(thesis_curve):
    portfolio, _ = dataset("options-1000", "f64")
    steeper = trinom.YieldCurve(np.asarray(thesis_curve.rates) * 1.5, thesis_curve.days)
    index = np.arange(len(portfolio)) % 2
    got = _cuda_lib.price(portfolio, (thesis_curve, steeper), "f64", curve_index=index)
    for c, curve in enumerate((thesis_curve, steeper)):
        np.testing.assert_array_equal(got[index == c], _cuda_lib.price(portfolio, curve, "f64")[index == c])
    with pytest.raises(_cuda_lib.CudaError, match="row 7: curve_index 2 is not one of the 2 option curves") as caught:
        _cuda_lib.price(portfolio, (thesis_curve, steeper), "f64", curve_index=np.where(np.arange(1000) == 7, 2, 0))
    assert caught.value.field == "curve_index" and caught.value.row == 7


def test_option_risk_on_cuda_equals_the_reference_bump_and_reprice():
    """The risk measures of an option book on ``cuda`` (its 35 scenarios as option entries, one library call)
    against the NumPy reference's: 1e-9 relative, convexity 1e-7 (a second difference of prices over h^2 = 1e-8:
    prices 1e-13 apart move it by 4e-5 / price); rows worth nothing have no duration on either side."""
    from trinom.analytics.risk import risk

    options = trinom.generator.generate("random", 12, seed=21)
    measures = ("dv01", "duration", "convexity", "krd", "vega")
    gpu = risk(options, measures=measures, backend="cuda").set_index(["id", "measure", "factor"]).value
    ref = risk(options, measures=measures, backend="reference").set_index(["id", "measure", "factor"]).value
    gpu = gpu.loc[ref.index]
    for measure in measures:
        mine, theirs = gpu.xs(measure, level="measure"), ref.xs(measure, level="measure")
        rtol = 1e-7 if measure == "convexity" else 1e-9
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=1e-10, equal_nan=True, err_msg=measure)


@pytest.mark.parametrize("backend", CUDA_BACKENDS)
def test_standard_convention_books_match_the_reference(backend: str, thesis_curve):
    """The default convention through the one call: term units of 360, 30 and 90 days and options expiring at their
    bond's maturity (the book's scale) price on every CUDA engine as on the reference."""
    rng = np.random.default_rng(11)
    count = 300
    maturity = rng.uniform(1.0, 12.0, count)
    expiry = np.where(rng.random(count) < 0.2, maturity, rng.uniform(0.0, 1.0, count) * maturity)
    book = trinom.Portfolio(strike=rng.uniform(40.0, 120.0, count), maturity=maturity, expiry=expiry,
                            term_unit=rng.choice([365, 360, 30, 90], count), term_steps=rng.integers(1, 13, count),
                            a=rng.uniform(0.03, 0.3, count), sigma=rng.uniform(0.002, 0.02, count),
                            option_type=rng.integers(0, 2, count))
    assert book.expires_at_maturity().any()
    expected = trinom.price(book, thesis_curve, backend="reference").price
    got = trinom.price(book, thesis_curve, backend=backend).price
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-11)


def test_dated_trades_price_on_cuda_as_on_the_reference():
    """Dated bonds and bond options (trinom.instruments.Trades) on the cuda engine against the reference."""
    from trinom.instruments import Trades
    from trinom.model import DatedCurve

    rng = np.random.default_rng(5)
    count = 200
    as_of = np.datetime64("2026-11-25")
    maturity = as_of + rng.integers(400, 12 * 365, count)
    bond = rng.random(count) < 0.7
    option = np.where(rng.random(count) < 0.6, np.where(rng.random(count) < 0.5, "call", "put"), None)
    first = as_of + ((maturity - as_of).astype(np.int64) * 0.3).astype(np.int64)
    columns = {
        "id": [f"T{k}" for k in range(count)], "type": np.where(bond, "bond", "bond_option"),
        "issue": np.where(bond, str(as_of - 200), None), "maturity": maturity.astype(str),
        "coupon": np.where(bond, rng.uniform(0, 0.07, count), np.nan), "frequency": np.where(bond, 2, np.nan),
        "day_count": np.where(bond, "ACT/ACT-ICMA", None), "calendar": np.where(bond, "TARGET", None),
        "option": np.where(bond, option, np.where(rng.random(count) < 0.5, "call", "put")),
        "exercise": np.where(bond & (option != None), "bermudan", None),  # noqa: E711
        "first_exercise": np.where(bond & (option != None), first.astype(str), None),  # noqa: E711
        "last_exercise": np.where(bond & (option != None), (maturity - 30).astype(str), None),  # noqa: E711
        "exercise_price": np.where(bond & (option != None), 100.0, np.nan),  # noqa: E711
        "expiry": np.where(bond, None, (as_of + 300).astype(str)), "strike": np.where(bond, np.nan, 80.0),
        "a": rng.uniform(0.03, 0.1, count), "sigma": rng.uniform(0.005, 0.015, count), "steps_per_year": 52,
    }
    trades = Trades(as_of=str(as_of), **columns)
    curves = {"EUR": DatedCurve(as_of=str(as_of), dates=["2027-11-25", "2031-11-25", "2046-11-25"],
                                zero_rates=[0.025, 0.028, 0.032])}
    expected = trinom.price(trades, curves, backend="reference")
    got = trinom.price(trades, curves, backend="cuda")
    np.testing.assert_allclose(got.price, expected.price, rtol=1e-11, atol=1e-11)
    np.testing.assert_array_equal(got.accrued, expected.accrued)
