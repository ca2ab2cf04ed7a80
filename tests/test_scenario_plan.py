"""The vectorised scenario planning (issue 27 item 3): the same plan as before, bit for bit, and the ``cuda`` engine's
option path handing every entry to the library as it did.

``batch`` decides which trees a scenario reaches once per horizon *pattern* instead of per (candidate, tree); the
planning before it is kept in tests/scenario_plan_oracle.py. Random books (options, bonds, both, on several curves)
in random markets (parallel shifts, key-rate bumps, sigma and spread shifts, replaced curves) must give the same
entries, curves, spreads, sources, checkpoints and resume flags. The engine's option path is checked with a stand-in
for the library (no GPU here) whose price names the entry's tree and curve.
"""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from scenario_plan_oracle import batch_before
from trinom.bonds.generator import generate_bonds
from trinom.engines import _cuda_lib
from trinom.engines import get as engine_named
from trinom.engines.scenario_batch import batch
from trinom.generator import reversion_rate_for_width
from trinom.lattice.book import Book
from trinom.model.market import Market
from trinom.pipeline import prepare
from trinom.scenarios import CurveSet, CurveShift, SigmaShift, SpreadShift, scenario_market

H = 1e-4
FIELDS = ("sigma_moves", "entry_offset", "entry_curve", "entry_spread", "source", "checkpoint", "resume")


def assert_same_plan(book: Book, market: Market) -> None:
    """``batch`` gives what the planning before it gave, and its gather is ``entry_prices[source]``."""
    want, got = batch_before(book, market), batch(book, market)
    assert got.curves == want.curves
    for name in FIELDS:
        mine, theirs = getattr(got, name), getattr(want, name)
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
        np.testing.assert_array_equal(mine, theirs, err_msg=name)
    np.testing.assert_array_equal(np.signbit(got.entry_spread), np.signbit(want.entry_spread))
    prices = np.random.default_rng(0).random(got.entries)
    np.testing.assert_array_equal(got.gather(prices), prices[want.source])


def random_scenarios(rng: np.random.Generator, names: tuple[str, ...], curves: tuple[trinom.YieldCurve, ...],
                     count: int) -> list:
    """A mix of every kind of scenario, repeats and no-ops included."""
    pillars = min(len(c) for c in curves)

    def one() -> object:
        kind = rng.integers(0, 10)
        shift = float(rng.choice([-2, -1, 1, 2])) * H
        name = str(rng.choice(names))
        pillar = int(rng.integers(0, pillars))
        if kind == 0:
            return None
        if kind == 1:
            return CurveShift(shift)  # parallel: every pillar of every curve
        if kind == 2:
            return CurveShift(shift, pillar=pillar)  # a key rate of every curve
        if kind == 3:
            return CurveShift(shift, name, pillar)
        if kind == 4:
            return CurveShift(shift, name)
        if kind == 5:
            return SigmaShift(shift)
        if kind == 6:
            return SpreadShift(float(rng.choice([-0.5, 0.25, 1.0])))
        base = curves[names.index(name)]
        if kind == 7:  # the same pillars, the rates moved from a pillar on (a late move: short trees keep the base)
            rates = np.array(base.rates)
            rates[pillar:] += shift
            return CurveSet({name: trinom.YieldCurve(rates, base.days)})
        if kind == 8:  # other pillars: every tree on it moves
            return CurveSet({name: trinom.YieldCurve([0.02, 0.03], [100, 5000])})
        return CurveShift(0.0)  # the base curve again (a new object with the same bits)

    return [one() for _ in range(count)]


def options_for(seed: int, count: int) -> trinom.Portfolio:
    return trinom.generator.generate("random", count, seed=seed)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["options", "bonds", "both"])
def test_the_plan_is_the_plan_before(kind, seed):
    rng = np.random.default_rng(100 + seed)
    bonds, curves = generate_bonds(["R1", "S1", "U1"][seed % 3], 120, seed=seed)
    names = tuple(str(k) for k in range(len(curves)))
    scenarios = random_scenarios(rng, names, curves, int(rng.integers(1, 25)))
    market = scenario_market(dict(zip(names, curves, strict=True)), scenarios)
    instruments = {"options": options_for(seed, 150), "bonds": bonds,
                   "both": [options_for(seed, 80), bonds]}[kind]
    assert_same_plan(prepare(instruments, market).book, market)


@pytest.mark.parametrize("scenarios", [
    [CurveShift(H * (k - 10)) for k in range(20)],  # the grid: one pattern, every tree moved
    [None, *(CurveShift(H, pillar=k) for k in range(15))],  # key rates: patterns by horizon, checkpoints
    [None, *(CurveShift(H, pillar=k) for k in range(15)), SigmaShift(H), SigmaShift(-H)],
    [None, CurveShift(H), SpreadShift(0.5), SigmaShift(H), CurveShift(-H, pillar=3)],
    [SigmaShift(H)],  # a lone move: one scenario
], ids=["parallel", "key-rates", "key-rates-and-vega", "mixed", "lone-sigma"])
def test_the_plan_of_an_option_grid_is_the_plan_before(scenarios):
    options = options_for(7, 400)
    market = scenario_market(None, scenarios)
    assert_same_plan(prepare(options, market).book, market)


def test_a_parallel_grid_plans_one_entry_per_tree_and_curve_without_index_arrays():
    """20 parallel shifts: 20 entries per tree, the curves in scenario order (the first scenario's is the base)."""
    options = options_for(3, 1000)
    market = scenario_market(None, [CurveShift(H * (k - 10)) for k in range(20)])
    plan = batch(prepare(options, market).book, market)
    assert plan.entries == 20 * len(options) and len(plan.curves) == 20
    np.testing.assert_array_equal(plan.entry_offset, 20 * np.arange(len(options) + 1))
    np.testing.assert_array_equal(plan.entry_curve.reshape(len(options), 20), np.tile(np.arange(20), (len(options), 1)))
    np.testing.assert_array_equal(plan.source, 20 * np.arange(len(options))[None, :] + np.arange(20)[:, None])
    assert not plan.resume.any() and (plan.checkpoint == -1).all() and not plan.entry_spread.any()


def fake_library(calls: list):
    """A stand-in for ``_cuda_lib.price_book`` on options: an entry's price names its tree and its curve."""
    def signature(portfolio, curves, which):
        tree = portfolio.maturity + 1e3 * portfolio.a + 1e5 * portfolio.sigma
        curve = np.array([float(np.sum(c.rates)) for c in curves])
        return tree, curve

    def price_book(portfolio, curve, bonds, curves=(), precision="f64", *, option_entries=None, curve_index=None,
                   option_out=None, skip_wide=False, **knobs):
        assert bonds is None
        calls.append({"entries": option_entries is not None, "out": option_out is not None, "count": len(portfolio),
                      "skip": skip_wide})
        many = option_entries is not None or curve_index is not None
        tree, sig = signature(portfolio, curve if many else (curve,), None)
        if option_entries is not None:
            offset, entry_curve = option_entries
            geometry = portfolio.geometry()
            width = 2 * np.minimum(geometry.jmax, geometry.n) + 1  # the fast kernel's window
            assert skip_wide or (width <= 512).all(), "the library refuses a tree wider than 512 nodes"
            tree = np.where(width <= 512, tree, np.nan)  # skipped: NaN
            prices = np.repeat(tree, np.diff(offset)) + 1e4 * sig[entry_curve]
        else:
            prices = tree + 1e4 * sig[curve_index if curve_index is not None else np.zeros(len(tree), dtype=np.int64)]
        prices = prices.astype(np.float32 if precision == "f32" else np.float64)
        if option_out is not None:
            option_out[:] = prices
            return option_out, None
        return prices, None

    return price_book


def expected(options: trinom.Portfolio, market: Market) -> np.ndarray:
    """What the stand-in gives scenario by scenario (every scenario here moves every tree it moves at all)."""
    lowered = options.thesis_view()
    rows = []
    for s in range(len(market)):
        sigma = lowered.sigma + market.sigma_shift(s)
        rows.append(lowered.maturity + 1e3 * lowered.a + 1e5 * sigma + 1e4 * float(np.sum(market.scenarios[s][0].rates)))
    return np.array(rows)


@pytest.mark.parametrize("wide", [False, True])
def test_the_cuda_engine_prices_every_entry_on_its_curve(monkeypatch, wide):
    """The plan's arrays as they are, prices written in place; trees the library skips (over 512 nodes: 513, 601)
    one tree per entry (curve_index) beside the entries' call; 509 and 511 (past the margin) priced there."""
    options = options_for(5, 300)
    if wide:
        extra = reversion_rate_for_width([511, 509, 513, 601])
        fields = options.as_dict()
        fields = {k: np.concatenate([v, np.repeat(v[:1], 4)]) for k, v in fields.items()}
        fields["a"][-4:] = extra
        fields["maturity"][-4:] = 60.0
        options = trinom.Portfolio(convention="thesis", **fields)
    scenarios = [CurveShift(H * (k - 3)) for k in range(7)] + [SigmaShift(H)]
    calls: list = []
    monkeypatch.setattr(_cuda_lib, "price_book", fake_library(calls))
    market = scenario_market(None, scenarios)
    engine = engine_named("cuda")
    book = prepare(options, market).book
    got = engine.price(book, market)
    np.testing.assert_allclose(got, expected(options, market), rtol=1e-12)
    n, jmax = book.shape()
    window = 2 * np.minimum(n, jmax) + 1
    too_wide = int(np.sum(window > 512))  # what the library skips; 509 < window <= 512: priced there
    assert too_wide == (2 if wide else 0) and (window > engine.OPTION_ENTRY_WIDTH).sum() >= too_wide + wide
    entries = [c for c in calls if c["entries"]]
    # both sigma blocks, every tree: the plan's arrays, written in place, the trees too wide skipped
    assert len(entries) == 1 and entries[0]["count"] == 2 * len(options) and entries[0]["out"] and entries[0]["skip"]
    wide_calls = [c["count"] for c in calls if not c["entries"]]
    # a tree too wide: 7 entries in the curves' block (one per distinct curve), 1 in the sigma move's
    assert wide_calls == ([(7 + 1) * too_wide] if too_wide else [])


def test_a_mixed_books_options_take_their_entries_alone(monkeypatch):
    """Options beside bonds: the options' entries gathered from the plan (the wide ones one tree per entry)."""
    options = trinom.Portfolio(convention="thesis", **{
        k: np.concatenate([v, v[:2]]) if k != "a" else np.concatenate([v, reversion_rate_for_width([511, 601])])
        for k, v in options_for(6, 40).as_dict().items()})
    bonds, curves = generate_bonds("U1", 10, seed=2)
    calls: list = []
    fake = fake_library(calls)
    monkeypatch.setattr(_cuda_lib, "price_book", lambda p, c, b, *a, **k: (None, np.zeros(
        int(k["entries"][0][-1]))) if b is not None else fake(p, c, b, *a, **k))
    market = scenario_market(curves, [CurveShift(H * k) for k in range(3)])
    book = prepare([options, bonds], market).book
    got = engine_named("cuda").price(book, market)
    np.testing.assert_allclose(got[:, :len(options)], expected(options, market), rtol=1e-12)
    entries = [c for c in calls if c["entries"]]
    assert len(entries) == 1 and not entries[0]["out"] and entries[0]["count"] < len(options)


def test_a_grid_priced_again_in_an_equal_market_keeps_its_plan():
    """``planned``: one plan per book, kept while the market's curves and moves are the same bits."""
    from trinom.engines.scenario_batch import planned

    options = options_for(2, 50)
    grid = [CurveShift(H * k) for k in range(4)]
    market = scenario_market(None, grid)
    book = prepare(options, market).book
    plan = planned(book, market)
    assert planned(book, scenario_market(None, grid)) is plan  # new curve objects, the same bits
    other = planned(book, scenario_market(None, [*grid[:3], CurveShift(H * 3 + 1e-12)]))
    assert other is not plan and planned(book, scenario_market(None, [*grid, SigmaShift(H)])) is not other
    assert len(book.cached("scenario-plan", dict)) == 1
