"""Prepared per-trade calibration (trinom.analytics.baskets.prepare_baskets, calibrate_prepared, calibrate_scenarios;
issue 26): the quotes built once per trade's schedule are the quotes built one by one (Swaptions.on_curve per
exercise date: the same leg dates, accruals, times and discount factors to the bit, the same forward swap rates,
annuities and market prices to their rounding), on random baskets of swaptions and bonds with exercise dates on and
off their schedules; a prepared fit is the plain fit, in any scenario; many scenarios fitted together (the quotes
that are alike priced once, the kernel's shared arrays passed once) are each scenario fitted alone, to the bit; and
warm starts land where cold ones do, in fewer steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from trinom.analytics.baskets import (
    PreparedBaskets,
    calibrate_baskets,
    calibrate_prepared,
    calibrate_scenarios,
    prepare_baskets,
    trade_baskets,
)
from trinom.conventions import dates as dt
from trinom.engines.calibration_kernel import available
from trinom.model import DatedCurve
from trinom.model.quotes import VolQuotes, VolSurface
from trinom.model.rate_options import Swaptions

AS_OF = np.datetime64("2025-01-31")  # a month's end: schedules from it clamp
DAY_COUNTS = ["30/360", "ACT/360", "ACT/365F", "ACT/ACT-ISDA", "30E/360", "ACT/ACT-ICMA"]


def dated_curve(name: str, level: float) -> DatedCurve:
    years = np.array([1, 2, 3, 5, 7, 10, 15, 20, 30, 40])
    dates = [str(AS_OF + round(365.25 * y)) for y in years]
    return DatedCurve(as_of=str(AS_OF), dates=dates, zero_rates=level + 0.015 * (1 - np.exp(-years / 8)), name=name)


@pytest.fixture(scope="module")
def curves() -> dict[str, DatedCurve]:
    return {"EUR": dated_curve("EUR", 0.02), "USD": dated_curve("USD", 0.035)}


@pytest.fixture(scope="module")
def surface() -> VolSurface:
    """EUR normal vols, USD shifted lognormal ones."""
    expiries, tenors = ["6M", "1Y", "2Y", "5Y", "10Y", "20Y"], ["1Y", "2Y", "5Y", "10Y", "20Y", "30Y"]
    rows = [(c, e, t, base * (1 - 0.02 * i - 0.01 * j), kind, shift)
            for c, kind, base, shift in (("EUR", "normal", 0.009, 0.0), ("USD", "lognormal", 0.3, 0.01))
            for i, e in enumerate(expiries) for j, t in enumerate(tenors)]
    quotes = VolQuotes.from_columns(curve=[r[0] for r in rows], expiry=[r[1] for r in rows],
                                    tenor=[r[2] for r in rows], vol=[r[3] for r in rows], kind=[r[4] for r in rows],
                                    shift=[r[5] for r in rows])
    return VolSurface.from_quotes(quotes, as_of=AS_OF)


def random_baskets(n: int, seed: int) -> trinom.analytics.baskets.Baskets:
    """``n`` trades on two curves: legs of 1, 2, 4 or 12 periods a year on every day count (ACT/ACT-ICMA: bonds),
    ends on any day (a third at a month's end), exercise dates their leg's schedule back from the end (Bermudan
    swaptions, bonds callable on coupon dates) or those dates moved a day or two (business days), or whole multiples
    of 365.25 / frequency days back (off any schedule); some on or before the as-of date."""
    rng = np.random.default_rng(seed)
    per_year = rng.choice([1, 2, 4, 12], n)
    months = 12 // per_year
    end = AS_OF.astype(np.int64) + rng.integers(400, 30 * 365, n)
    end = np.where(rng.random(n) < 0.3, dt.end_of_month(end), end)
    exercise = []
    for k in range(n):
        count = int(rng.integers(1, 15))
        back = dt.add_months(np.full(count, end[k]), -months[k] * np.arange(1, count + 1))
        style = rng.random()
        if style < 0.2:
            back = back + rng.integers(-2, 3, count) * (rng.random(count) < 0.3)
        elif style < 0.3:
            back = end[k] - np.round(np.arange(1, count + 1) * 365.25 / per_year[k]).astype(np.int64)
        back = np.unique(back[back < end[k]])
        exercise.append([np.datetime64(int(d), "D") for d in back[back > AS_OF.astype(np.int64) - 400]])
    return trade_baskets(id=[f"T{k}" for k in range(n)], curve=rng.choice(["EUR", "USD"], n), exercise=exercise,
                         end=[np.datetime64(int(d), "D") for d in end], rate=rng.uniform(0.01, 0.05, n),
                         frequency=per_year, day_count=rng.choice(DAY_COUNTS, n),
                         side=rng.choice(["payer", "receiver"], n))


def one_by_one(prepared: PreparedBaskets, curves: dict[str, DatedCurve]) -> Swaptions:
    """The quotes' swaptions as each exercise date generates its own leg (Swaptions.on_curve), curve by curve."""
    baskets = prepared.baskets
    names = prepared.curve[prepared.trade]
    parts, order = [], []
    for name in dict.fromkeys(names.tolist()):
        rows = np.flatnonzero(names == name)
        owner = prepared.trade[rows]
        s = Swaptions.on_curve(curves[name], exercise=prepared.exercise[rows], end=prepared.end[rows],
                               frequency=baskets.frequency[owner], day_count=baskets.day_count[owner],
                               payer=baskets.payer[owner])
        parts.append(s.replace_rates(s.forward_rate if prepared.strike == "atm" else baskets.rate[owner]))
        order.append(rows)
    inverse = np.empty(prepared.trade.size, dtype=np.int64)
    inverse[np.concatenate(order)] = np.arange(prepared.trade.size)
    return Swaptions.concatenate(parts).take(inverse)


@pytest.mark.parametrize("strike", ["atm", "deal"])
def test_the_schedule_build_is_the_quote_by_quote_build(curves, surface, strike):
    baskets = random_baskets(1500, 5)
    prepared = prepare_baskets(baskets, surface, AS_OF, curves=curves, strike=strike)
    quotes = prepared.quotes(curves)
    # both paths ran: most legs are tails of their trade's schedule, the rest their own
    on_schedule = np.concatenate([prepared.first[legs.rows] < legs.schedule[legs.local] for legs in prepared.legs])
    assert 0.5 < on_schedule.mean() < 0.95
    assert (prepared.exercise > AS_OF).all() and (baskets.exercise <= AS_OF).any()
    ours, theirs = quotes.swaptions, one_by_one(prepared, curves)
    for name in ("exercise", "start", "pay_time", "accrual", "discount_start", "discount_pay", "notional", "payer",
                 "count"):
        assert np.array_equal(getattr(ours, name), getattr(theirs, name)), name
    assert np.abs(quotes.forward / theirs.forward_rate - 1).max() <= 1e-14
    assert np.abs(quotes.annuity / theirs.annuity - 1).max() <= 1e-14
    assert np.abs(quotes.strike / theirs.fixed_rate - 1).max() <= 1e-14
    assert np.array_equal(ours.fixed_rate, quotes.strike)
    # the market prices: the formulas on those forwards and annuities (a deep out-of-the-money price moves more)
    args = dict(forward=theirs.forward_rate, annuity=theirs.annuity, strike=theirs.fixed_rate)
    from dataclasses import replace

    expected = replace(quotes, **args).price_at(quotes.market_vol, np.arange(quotes.trade.size))
    big = expected > 1e-10 * quotes.annuity
    assert np.abs(quotes.market_price[big] / expected[big] - 1).max() <= 1e-12
    assert (np.abs(quotes.market_price - expected) <= 1e-14 * quotes.annuity).all()
    # a subset of the quotes as swaptions: the same legs
    rows = np.arange(0, quotes.trade.size, 7)
    part = quotes.swaptions_of(rows)
    count = part.count
    assert np.array_equal(count, theirs.count[rows])
    width = part.pay_time.shape[1]
    assert np.array_equal(part.discount_pay, theirs.discount_pay[rows, :width])
    assert (theirs.count[rows] <= width).all()


def test_prepared_baskets_fit_as_the_baskets_do(curves, surface):
    baskets = random_baskets(300, 8)
    prepared = prepare_baskets(baskets, surface, AS_OF, curves=curves, strike="atm")
    backends = ["numpy"] + [t for t in ("multicore",) if available(t)[0]]
    for backend in backends:
        plain = calibrate_baskets(curves=curves, vols=surface, as_of=AS_OF, baskets=baskets, a=0.03, backend=backend)
        again = calibrate_baskets(curves=curves, baskets=prepared, a=0.03, backend=backend)
        assert again.status.tolist() == plain.status.tolist() and again.message.tolist() == plain.message.tolist()
        assert np.array_equal(again.sigma, plain.sigma, equal_nan=True)
        assert np.array_equal(again.model_price, plain.model_price, equal_nan=True)
    # a move of every volatility: the fit to the moved surface
    moved = VolSurface(as_of=surface.as_of, grids={name: replace_vol(grid, 1e-4 if grid.kind == "normal" else 0.01)
                                                   for name, grid in surface.grids.items()})
    shifted = calibrate_baskets(curves=curves, vols=moved, as_of=AS_OF, baskets=baskets, a=0.03)
    eur = prepare_baskets(baskets, VolSurface(as_of=surface.as_of, grids={"EUR": surface.grids["EUR"]}), AS_OF,
                          curves=curves)
    got = calibrate_baskets(curves=curves, baskets=eur, a=0.03, vol_shift=1e-4)
    on_eur = (prepared.curve == "EUR") & (shifted.status != "no fit")
    assert (got.status[on_eur] == shifted.status[on_eur]).all()
    assert np.abs(got.sigma[on_eur] / shifted.sigma[on_eur] - 1).max() <= 1e-10
    assert (got.status[prepared.curve == "USD"] == "no fit").all()
    assert all("no volatility matrix for curve 'USD'" in m for m in got.message[prepared.curve == "USD"])
    # what prepared baskets refuse
    with pytest.raises(trinom.InputError, match="prepared with strike='atm'"):
        calibrate_baskets(curves=curves, baskets=prepared, strike="deal")
    with pytest.raises(trinom.InputError, match="prepared as of 2025-01-31"):
        calibrate_baskets(curves=curves, baskets=prepared, as_of="2025-02-03")
    with pytest.raises(trinom.InputError, match=r"curve 'USD' \(named when the baskets were prepared\)"):
        calibrate_baskets(curves={"EUR": curves["EUR"]}, baskets=prepared)


def replace_vol(grid, shift: float):
    from dataclasses import replace

    return replace(grid, vol=grid.vol + shift)


@pytest.mark.parametrize("backend", ["numpy", "multicore"])
def test_warm_starts_land_where_cold_starts_do(curves, surface, backend):
    """Scenarios (parallel moves of 1 to 10 bp, a vol move) fitted in one call from the base fit: each the cold fit
    of its scenario (a fixed: sigma to 1e-8, where a cold fit, its damping grown on the way, may stop on a step below
    the tolerance a little short of where the warm one ends; a free: parameters to 1e-6); with a free in fewer
    steps, with a fixed in about as many (the default start, sigma matched to each quote's vol, is as close) and
    without the default start's work."""
    if backend != "numpy" and not available(backend)[0]:
        pytest.skip(f"calibration kernel on {backend}: {available(backend)[1]}")
    baskets = random_baskets(200 if backend == "numpy" else 600, 3)
    prepared = prepare_baskets(baskets, surface, AS_OF, curves=curves, strike="atm")
    states = [({name: c.bumped(1e-4 * k) for name, c in curves.items()}, 0.0) for k in (1, 4, 10)]
    states.append((curves, 5e-5))
    for a in (0.03, None):
        base = calibrate_prepared(prepared, [(curves, 0.0)], a=a, backend=backend)[0]
        start = np.stack([base.a, base.sigma], axis=1)
        warm = calibrate_prepared(prepared, states, x0=start, a=a, backend=backend, details=False)
        cold = calibrate_prepared(prepared, states, a=a, backend=backend)
        for w, c in zip(warm, cold, strict=True):
            fit = c.status != "no fit"
            if a is not None:
                assert w.status.tolist() == c.status.tolist()
            else:  # along a valley towards a = 0 one may reach the bound where the other stops short of it
                assert ((w.status == "no fit") == ~fit).all() and (w.status != c.status).mean() <= 0.01
            if a is not None:
                assert np.abs(w.sigma[fit] / c.sigma[fit] - 1).max() <= 1e-8
            else:  # as low a cost (to where a fit along a flat valley in a stalls, or an exact fit's rounding; a
                # few land lower: an exact fit where the cold start ends at a's bound), mostly the same parameters
                costs = [0.5 * np.bincount(x.trade, weights=np.nan_to_num(x.error) ** 2, minlength=len(x))
                         for x in (w, c)]
                assert (costs[0] <= (1 + 1e-6) * costs[1] + 1e-20)[fit].all()
                assert (np.abs(costs[0] - costs[1]) <= 1e-6 * costs[1] + 1e-20)[fit].mean() >= 0.99
                assert np.median(np.abs(w.a[fit] / c.a[fit] - 1)) <= 1e-6
            assert w.iterations[fit].mean() < (c.iterations[fit].mean() if a is None
                                               else c.iterations[fit].mean() + 1.5)
            assert np.isnan(w.rmse).all() and np.isfinite(c.rmse[fit]).all()  # details=False: no model vols
            assert all(m.startswith("converged") or m.startswith("a at") or m.startswith("sigma at")
                       for m in c.message[fit])
        # a start of NaN is the default start; one held at its guess (one quote, a free) stays there
        start[::2] = np.nan
        half = calibrate_prepared(prepared, states[:1], x0=[start], a=a, backend=backend)[0]
        fit = cold[0].status != "no fit"
        if a is not None:
            assert half.status.tolist() == cold[0].status.tolist()
            assert np.abs(half.sigma[fit] / cold[0].sigma[fit] - 1).max() <= 1e-8
        held = half.a_fixed & (half.quote_count == 1) & (half.status != "no fit")
        if a is None:
            assert held.any() and (half.a[held] == 0.05).all()
    with pytest.raises(trinom.InputError, match="x0 must be"):
        calibrate_prepared(prepared, states[:1], x0=np.zeros((3, 2)), backend=backend)
    with pytest.raises(trinom.InputError, match="x0 has 2 starts for 1 scenarios"):
        calibrate_prepared(prepared, states[:1], x0=[None, None], backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "multicore"])
@pytest.mark.parametrize("strike", ["atm", "deal"])
def test_scenarios_together_are_each_scenario_alone(curves, surface, backend, strike):
    """Four scenarios (the curves moved, the vols moved down so far that some quotes lose their market price, all of
    a normal curve's in one, deal rates far from the money: quotes without time value) fitted together by
    calibrate_scenarios, a warm start for two trades in three: each scenario's a, sigma, statuses, iterations and
    (for trades without a fit) messages are those of calibrate_baskets on that scenario alone (the baskets prepared
    afresh: nothing shared), to the bit, and calibrate_prepared (details=False) says the same of the trades; quotes
    left out and trades without a fit occur. Quotes alike (the same co-terminal swaptions of two trades) are priced
    once: the copies' prices are the originals'."""
    if backend != "numpy" and not available(backend)[0]:
        pytest.skip(f"calibration kernel on {backend}: {available(backend)[1]}")
    rng = np.random.default_rng(4)
    original = random_baskets(120 if backend == "numpy" else 400, 11)
    size = len(original)
    twice = np.concatenate([np.arange(size), np.arange(0, size, 4)])  # every fourth trade again: quotes alike
    exercise = [original.exercise_dates(k) for k in twice.tolist()]
    deal = np.where(rng.random(size) < 0.5, rng.uniform(-0.02, 0.0, size), rng.uniform(0.06, 0.2, size))
    baskets = trade_baskets(id=[f"T{k}" for k in range(twice.size)], curve=original.curve[twice], exercise=exercise,
                            end=original.end[twice], rate=deal[twice], frequency=original.frequency[twice],
                            day_count=original.day_count[twice], side=original.payer[twice])
    states = [(curves, 0.0), ({name: c.bumped(5e-4) for name, c in curves.items()}, -0.0066), (curves, -0.02),
              ({name: c.bumped(-2e-4, 3) for name, c in curves.items()}, 0.01)]
    prepared = prepare_baskets(baskets, surface, AS_OF, curves=curves, strike=strike)
    quotes = prepared.quotes(curves)
    copies = prepared.trade >= size
    originals = np.flatnonzero(np.isin(prepared.trade, twice[size:]))
    assert np.array_equal(quotes.market_price[copies], quotes.market_price[originals], equal_nan=True)
    assert prepared._plan.first.size <= np.count_nonzero(~copies)  # the copies' quotes priced with the originals'
    for a in (0.03, None):
        base = calibrate_baskets(curves=curves, vols=surface, as_of=AS_OF, baskets=baskets, a=a, strike=strike,
                                 backend=backend)
        start = np.stack([base.a, base.sigma], axis=1)
        start[::3] = np.nan
        together = calibrate_scenarios(prepared, states, x0=start, a=a, backend=backend)
        full = calibrate_prepared(prepared, states, x0=start, a=a, backend=backend, details=False)
        assert len(together) == len(full) == len(states)
        for k, (moved, vol_shift) in enumerate(states):
            alone = calibrate_baskets(curves=moved, vols=surface, as_of=AS_OF, baskets=replace(baskets), a=a,
                                      strike=strike, backend=backend, x0=start, vol_shift=vol_shift)
            for name in ("a", "sigma", "iterations"):
                assert np.array_equal(getattr(together, name)[k], getattr(alone, name), equal_nan=True), (a, k, name)
                assert np.array_equal(getattr(full[k], name), getattr(alone, name), equal_nan=True), (a, k, name)
            assert together.status[k].tolist() == alone.status.tolist() == full[k].status.tolist()
            assert (together.fitted[k] == (alone.status != "no fit")).all()
            assert together.message[k].tolist() == full[k].message.tolist()
            none = ~together.fitted[k]
            assert together.message[k][none].tolist() == alone.message[none].tolist()
            assert np.array_equal(full[k].model_price, alone.model_price, equal_nan=True)
        statuses = np.concatenate(list(together.status))
        assert {"converged", "no fit"} <= set(statuses.tolist())
        messages = np.concatenate(list(together.message)).tolist()
        assert any("without a positive market price" in m for m in messages)
        assert any("without time value" in m for m in messages) == (strike == "deal")


def replace(baskets: trinom.analytics.baskets.Baskets) -> trinom.analytics.baskets.Baskets:
    """The same baskets as another object (nothing prepared from them kept)."""
    from dataclasses import replace as copy

    return copy(baskets)


def test_distinct_rows_and_medians_are_numpys():
    """The helpers the scenarios' sharing rests on: the distinct rows of integer keys (by a hash, every row compared
    in full: two rows of one hash stay apart) are np.unique's, numbered by first appearance; the rows' medians
    without NaN are np.nanmedian's, to the bit."""
    from trinom.analytics.baskets.fit import _nan_medians
    from trinom.analytics.baskets.preparation import _distinct_rows

    rng = np.random.default_rng(2)
    keys = rng.integers(0, 4, (5000, 3))
    first, of = _distinct_rows(keys)
    assert np.array_equal(keys[first][of], keys) and (np.diff(first) > 0).all()
    assert first.size == np.unique(keys, axis=0).shape[0] and np.array_equal(np.unique(of, return_index=True)[1],
                                                                             first)
    weights = np.random.default_rng(26).integers(1, 2**63, size=2, dtype=np.uint64) | np.uint64(1)
    colliding = np.array([[0, 0], [int(weights[1]), -int(weights[0])], [0, 0]], dtype=np.int64)
    assert ((colliding.view(np.uint64) * weights).sum(axis=1, dtype=np.uint64)[:2] == 0).all()  # one hash
    first, of = _distinct_rows(colliding)
    assert first.tolist() == [0, 1] and of.tolist() == [0, 1, 0]
    for width in (1, 2, 5, 59, 700):  # np.nanmedian sorts masked arrays below 600 columns, partitions above
        values = rng.standard_normal((500, width)) * 10.0 ** rng.uniform(-5, 5, (500, 1))
        values[rng.random(values.shape) < 0.4] = np.nan
        values[:, 0] = rng.standard_normal(500)
        assert np.array_equal(_nan_medians(values), np.nanmedian(values, axis=1))
