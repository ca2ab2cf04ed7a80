"""Model-consistent risk and scenario grids (issue 26, ``recalibrate=`` / ``--recalibrate``): the model refitted to
the same volatility quotes in every scenario; checked against the same steps done by hand, against the market
model's own Greeks for the calibration instruments themselves, and for key rates on dated pillars."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import trinom
from trinom.analytics import Recalibration
from trinom.analytics.baskets import book_baskets, calibrate_baskets
from trinom.cli import main
from trinom.instruments import Trades
from trinom.model import DatedCurve, Swaptions, calibrate
from trinom.model.quotes import VolQuotes, VolSurface
from trinom.model.volatility import bachelier_price
from trinom.scenarios import CurveShift, SigmaShift

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2028-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
ZEROS = [0.025, 0.028, 0.032, 0.036, 0.038]
EXPIRIES, TENORS = ["1Y", "2Y", "5Y", "10Y"], ["1Y", "2Y", "5Y", "10Y"]
#: A normal-vol matrix (rate units), falling in expiry and tenor.
VOLS = [0.0095 - 0.0002 * i - 0.0001 * j for i in range(4) for j in range(4)]
BACKEND = "futhark"
STEPS = 96  # steps a year: the tests compare runs of one tree resolution, not the tree against a closed form


@pytest.fixture(scope="module")
def curve() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="EUR")


@pytest.fixture(scope="module")
def quotes() -> VolQuotes:
    return VolQuotes.from_columns(curve="EUR", expiry=[e for e in EXPIRIES for _ in TENORS], tenor=TENORS * 4,
                                  vol=VOLS, kind="normal")


def columns_of(rows: list[int] | None = None, **extra: object) -> dict[str, object]:
    """A European payer (2Y into 5Y), a Bermudan receiver (1Y into 6Y, annual), a cap and a straight bond, as
    trades.csv columns (``rows`` of them)."""
    columns: dict[str, object] = {
        "id": ["E1", "B1", "K1", "N1"], "type": ["swaption", "swaption", "cap", "bond"],
        "start": ["2028-11-27", "2027-11-25", "2027-02-25", None],
        "maturity": ["2033-11-25", "2033-11-25", "2030-11-25", "2031-03-15"],
        "rate": [0.034, 0.033, 0.03, None], "option": ["payer", "receiver", None, None],
        "exercise": ["european", "bermudan", None, None], "first_exercise": ["2028-11-27", "2027-11-25", None, None],
        "last_exercise": ["2028-11-27", "2032-11-25", None, None], "frequency": [1, 1, 4, 2],
        "day_count": ["30/360", "30/360", "ACT/360", "30/360"], "calendar": ["NONE", "NONE", None, None],
        "convention": ["U", "U", None, None], "issue": [None, None, None, "2024-03-15"],
        "coupon": [None, None, None, 0.04], "a": 0.05, "sigma": 0.01, "curve": "EUR", "steps_per_year": STEPS}
    columns.update(extra)
    pick = list(range(4)) if rows is None else rows
    return {k: [v[i] for i in pick] if isinstance(v, list) else v for k, v in columns.items()}


def swaptions(rows: list[int] | None = None, **extra: object) -> Trades:
    return Trades(as_of=AS_OF, **columns_of(rows, **extra))


def fitted(trades: Trades, curve: DatedCurve, quotes: VolQuotes, shift: float = 0.0, a: float = 0.05) -> Trades:
    """``trades`` with each swaption's own fit (by hand: calibrate_baskets) on ``curve``, quotes moved by ``shift``."""
    frame = quotes.to_frame()
    frame["vol"] = frame["vol"] + shift
    fit = calibrate_baskets(curves={"EUR": curve}, vols=VolQuotes.from_frame(frame), as_of=AS_OF,
                            baskets=book_baskets(trades), a=a)
    ok = np.isin(fit.status, ("converged", "bound"))
    return trades.with_columns(a=np.where(ok, fit.a, trades.column("a")),
                               sigma=np.where(ok, fit.sigma, trades.column("sigma")))


def test_recalibrated_risk_is_the_refit_done_by_hand(curve: DatedCurve, quotes: VolQuotes):
    trades = swaptions([0, 1, 3])  # risk takes trades of one kind of tree: swaptions and bonds (caps apart, below)
    table = trinom.risk(trades, {"EUR": curve}, backend=BACKEND, measures=("dv01", "krd", "vega"), errors="mask",
                        recalibrate=Recalibration(vols=quotes, a=0.05))
    by = table.set_index(["id", "measure", "factor"])
    base = trinom.price(fitted(trades, curve, quotes), {"EUR": curve}, backend=BACKEND, errors="mask").price
    down = curve.bumped(-1e-4)
    moved = trinom.price(fitted(trades, down, quotes), {"EUR": down}, backend=BACKEND, errors="mask").price
    pillar = curve.bumped(1e-4, pillar=2), curve.bumped(-1e-4, pillar=2)
    k_up, k_down = (trinom.price(fitted(trades, c, quotes), {"EUR": c}, backend=BACKEND, errors="mask").price
                    for c in pillar)
    vol_up, vol_down = (trinom.price(fitted(trades, curve, quotes, shift), {"EUR": curve}, backend=BACKEND,
                                     errors="mask").price for shift in (1e-4, -1e-4))
    for k, trade in enumerate(("E1", "B1")):
        assert by.loc[(trade, "dv01", "parallel"), "base"] == pytest.approx(base[k], rel=1e-12)
        assert by.loc[(trade, "dv01", "parallel"), "value"] == pytest.approx(moved[k] - base[k], rel=1e-9, abs=1e-13)
        assert by.loc[(trade, "krd", "EUR:2031-11-25"), "value"] == pytest.approx(
            (k_down[k] - k_up[k]) / (2 * base[k] * 1e-4), rel=1e-9)
        assert by.loc[(trade, "vega", "vol"), "value"] == pytest.approx((vol_up[k] - vol_down[k]) / 2, rel=1e-9)
    # the straight bond keeps its own parameters; a cap has no co-terminal basket: its measures say so
    assert (table.loc[table.id == "N1", "error"] == "").all()
    cap = trinom.risk(swaptions([2]), {"EUR": curve}, backend=BACKEND, measures=("dv01", "vega"), errors="mask",
                      recalibrate=Recalibration(vols=quotes, a=0.05))
    assert cap["value"].isna().all() and cap["error"].str.contains("cap strip").all()
    with pytest.raises(trinom.InputError, match="cap strip"):
        trinom.risk(swaptions([2]), {"EUR": curve}, backend=BACKEND, recalibrate=Recalibration(vols=quotes))


def bermudans(count: int, seed: int = 3) -> Trades:
    """``count`` Bermudan swaptions (annual, exercisable on every fixed-leg start from 2027-11-25 to the last period),
    ending on one of five dates, so that many share their co-terminal quotes, then a straight bond and a cap."""
    rng = np.random.default_rng(seed)
    years = rng.choice([3, 4, 6, 8, 10], count).tolist()
    ours = {"id": [f"B{k}" for k in range(count)], "type": ["swaption"] * count, "start": ["2027-11-25"] * count,
            "maturity": [f"{2027 + y}-11-25" for y in years], "rate": np.round(rng.uniform(0.02, 0.05, count), 4).tolist(),
            "option": rng.choice(["payer", "receiver"], count).tolist(), "exercise": ["bermudan"] * count,
            "first_exercise": ["2027-11-25"] * count, "last_exercise": [f"{2026 + y}-11-25" for y in years],
            "frequency": [1] * count, "day_count": ["30/360"] * count, "calendar": ["NONE"] * count,
            "convention": ["U"] * count, "issue": [None] * count, "coupon": [None] * count}
    others = columns_of([3, 2])  # the straight bond and the cap
    columns: dict[str, object] = {name: [*values, *others[name]] for name, values in ours.items()}
    columns.update(a=0.05, sigma=0.01, curve="EUR", steps_per_year=STEPS)
    return Trades(as_of=AS_OF, **columns)


@pytest.mark.parametrize("backend", ["numpy", "multicore"])
def test_each_scenario_s_refit_is_the_fit_done_scenario_by_scenario(curve: DatedCurve, quotes: VolQuotes,
                                                                     backend: str):
    """A risk run's refits (fitted_parameters: the first state fitted cold, the others together from its fits, each
    quote that several trades share priced once, the book's baskets kept with it) are, in every state, the fits
    calibrate_baskets gives that state alone from the same start: a, sigma and messages to the bit; and the
    recalibrated prices are the book's priced with them."""
    from dataclasses import replace

    from trinom.analytics.recalibration import MarketState, fitted_parameters
    from trinom.engines.calibration_kernel import available

    if backend != "numpy" and not available(backend)[0]:
        pytest.skip(f"calibration kernel on {backend}: {available(backend)[1]}")
    trades = bermudans(30)
    states = [MarketState({"EUR": curve}), MarketState({"EUR": curve.bumped(1e-4)}, label="up"),
              MarketState({"EUR": curve.bumped(-1e-4, pillar=2)}, label="pillar 2 down"),
              MarketState({"EUR": curve}, vol_shift=1e-4, label="vols up"),
              MarketState({"EUR": curve}, vol_shift=-0.02, label="vols gone")]
    how = Recalibration(vols=quotes, a=0.05, backend=backend)
    for _ in range(2):  # again: the book's baskets and their quotes' legs reused
        fits = fitted_parameters(trades, states, how)
        baskets = replace(book_baskets(trades))  # the same baskets, nothing prepared from them kept
        first = calibrate_baskets(curves={"EUR": curve}, vols=quotes, as_of=AS_OF, baskets=baskets, a=0.05,
                                  backend=backend)
        start = np.stack([first.a, first.sigma], axis=1)
        for s, state in enumerate(states):
            alone = first if s == 0 else calibrate_baskets(curves=state.curves, vols=quotes, as_of=AS_OF,
                                                           baskets=replace(baskets), a=0.05, backend=backend, x0=start,
                                                           vol_shift=state.vol_shift)
            fitted = alone.status != "no fit"
            assert np.array_equal(fits.a[s], np.where(fitted, alone.a, np.nan), equal_nan=True), s
            assert np.array_equal(fits.sigma[s], np.where(fitted, alone.sigma, np.nan), equal_nan=True), s
            for k in np.flatnonzero(~fitted & ~fits.kept):
                assert alone.message[k] in fits.message[s, k] and alone.status[k] in fits.message[s, k]
            assert (fits.message[s][fitted | fits.kept] == "").all()
        assert (first.status[:30] != "no fit").all() and (first.status[30:] == "no fit").all()
        assert fits.kept.tolist() == [False] * 30 + [True, False]
        assert np.isnan(fits.sigma[4]).all() and all("positive market price" in m for m in fits.message[4, :30])
    grid = trinom.price(trades, {"EUR": curve}, backend=BACKEND, errors="mask", recalibrate=how,
                        scenarios=[None, {"EUR": curve.bumped(1e-4)}])
    by_hand = trades.with_columns(a=np.where(np.isfinite(fits.a[1]), fits.a[1], 0.05),
                                  sigma=np.where(np.isfinite(fits.sigma[1]), fits.sigma[1], 0.01))
    expected = trinom.price(by_hand, {"EUR": curve.bumped(1e-4)}, backend=BACKEND, errors="mask").price
    np.testing.assert_allclose(grid.price[1, :31], expected[:31], rtol=1e-13)
    assert np.isnan(grid.price[:, 31]).all() and "cap strip" in grid.error[31]


def test_the_calibration_instrument_has_the_market_models_greeks(curve: DatedCurve, quotes: VolQuotes):
    """A European swaption fitted exactly to its own quote (sigma alone) moves with the curve and the vols as the
    Bachelier price with the quoted vol does: the model-consistent dv01 and vega are the market model's (to the
    tree's discretisation)."""
    trades = swaptions([0], steps_per_year=365)
    table = trinom.risk(trades, {"EUR": curve}, backend=BACKEND, measures=("dv01", "vega"),
                        recalibrate=Recalibration(vols=quotes, a=0.05, strike="deal"))
    surface = VolSurface.from_quotes(quotes, as_of=AS_OF)

    def market_price(c: DatedCurve, vol_shift: float = 0.0) -> float:
        s = Swaptions.on_curve(c, exercise=["2028-11-27"], end=["2033-11-25"], frequency=1, day_count="30/360",
                               payer=True).replace_rates(0.034)
        expiry = (np.datetime64("2028-11-27") - np.datetime64(AS_OF)).astype(int) / 365.0
        tenor = (np.datetime64("2033-11-25") - np.datetime64("2028-11-27")).astype(int) / 365.0
        vol = surface.vol(curve="EUR", expiry=[expiry], tenor=[tenor])[0] + vol_shift
        return 100 * float(bachelier_price(forward=s.forward_rate, strike=0.034, expiry=s.exercise, vol=vol,
                                           annuity=s.annuity, is_call=True)[0])

    by = table.set_index(["measure", "factor"])["value"]
    dv01 = market_price(curve.bumped(-1e-4)) - market_price(curve)
    vega = (market_price(curve, 1e-4) - market_price(curve, -1e-4)) / 2
    assert by[("dv01", "parallel")] == pytest.approx(dv01, rel=2e-3)
    assert by[("vega", "vol")] == pytest.approx(vega, rel=2e-3)


def test_per_curve_recalibration_takes_the_curves_global_fit(curve: DatedCurve, quotes: VolQuotes):
    trades = swaptions()
    prices = trinom.price(trades, {"EUR": curve}, backend=BACKEND, errors="mask",
                          recalibrate=Recalibration(vols=quotes, per="curve"))
    fit = calibrate(curves={"EUR": curve}, quotes=quotes)
    by_hand = trades.with_columns(a=[float(fit.a[0])] * 4, sigma=[float(fit.sigma[0])] * 4)
    expected = trinom.price(by_hand, {"EUR": curve}, backend=BACKEND).price
    np.testing.assert_allclose(prices.price, expected, rtol=1e-12)
    assert (prices.error == "").all()


def test_scenario_grids_recalibrate_in_each_scenario(curve: DatedCurve, quotes: VolQuotes):
    trades = swaptions()
    how = Recalibration(vols=quotes, a=0.05)
    grid = trinom.price(trades, {"EUR": curve}, backend=BACKEND, errors="mask", recalibrate=how,
                        scenarios=[None, CurveShift(1e-3), CurveShift(-1e-3, pillar=3), {"EUR": curve.bumped(2e-3)}])
    assert grid.price.shape == (4, 4)
    alone = trinom.price(trades, {"EUR": curve}, backend=BACKEND, errors="mask", recalibrate=how)
    np.testing.assert_allclose(grid.price[0], alone.price, rtol=1e-13)
    for row, moved in ((1, curve.bumped(1e-3)), (2, curve.bumped(-1e-3, pillar=3)), (3, curve.bumped(2e-3))):
        by_hand = trinom.price(fitted(trades, moved, quotes), {"EUR": moved}, backend=BACKEND, errors="mask").price
        np.testing.assert_allclose(grid.price[row, :2], by_hand[:2], rtol=1e-10)
    assert np.isnan(grid.price[:, 2]).all() and "cap strip" in grid.error[2]
    with pytest.raises(trinom.InputError, match="sigma is fitted"):
        trinom.price(trades, {"EUR": curve}, backend=BACKEND, recalibrate=how, scenarios=[SigmaShift(1e-4)])


def test_dated_key_rates_are_at_the_dated_pillars_and_add_up_to_the_duration(curve: DatedCurve):
    trades = swaptions([0, 1, 3])
    table = trinom.risk(trades, {"EUR": curve}, backend=BACKEND, measures=("duration", "krd"), errors="mask")
    krd = table[table.measure == "krd"]
    assert sorted(set(krd.factor)) == [f"EUR:{d}" for d in PILLARS]
    total = krd.groupby("id")["value"].sum()
    duration = table[table.measure == "duration"].set_index("id")["value"]
    for trade in ("E1", "B1", "N1"):
        assert total[trade] == pytest.approx(duration[trade], rel=2e-3)
    # a dated CurveShift's pillar is the dated curve's: the same as pricing on the bumped curve
    trades = swaptions()
    grid = trinom.price(trades, {"EUR": curve}, backend=BACKEND, scenarios=[CurveShift(1e-4, pillar=2)])
    bumped = trinom.price(trades, {"EUR": curve.bumped(1e-4, pillar=2)}, backend=BACKEND)
    np.testing.assert_allclose(grid.price[0], bumped.price, rtol=1e-13)


def test_recalibration_needs_dated_trades_and_quotes(curve: DatedCurve, quotes: VolQuotes):
    p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[12], a=[0.1],
                         sigma=[0.01], option_type=["put"])
    with pytest.raises(TypeError, match="dated trades"):
        trinom.risk(p, backend="reference", recalibrate=Recalibration(vols=quotes))
    with pytest.raises(TypeError, match="dated trades"):
        trinom.price(p, backend="reference", recalibrate=Recalibration(vols=quotes))
    with pytest.raises(ValueError, match="per must be one of"):
        Recalibration(vols=quotes, per="book")
    with pytest.raises(trinom.InputError, match="dated curves"):
        trinom.price(swaptions(), {"EUR": curve.to_yield_curve()}, recalibrate=Recalibration(vols=quotes))


def test_the_command_line_recalibrates_risk_and_scenario_grids(tmp_path: Path, curve: DatedCurve, quotes: VolQuotes,
                                                                capsys: pytest.CaptureFixture[str]):
    trades = swaptions()
    book = tmp_path / "trades.csv"
    pd.DataFrame(columns_of()).to_csv(book, index=False)
    curve_file = tmp_path / "curve.csv"
    pd.DataFrame({"curve": "EUR", "date": PILLARS, "zero": ZEROS}).to_csv(curve_file, index=False)
    vols = tmp_path / "vols.csv"
    quotes.to_frame().to_csv(vols, index=False)
    out = tmp_path / "risk.csv"
    common = ["--curve", str(curve_file), "--as-of", AS_OF, "--backend", BACKEND, "--errors", "mask"]
    bermudans = tmp_path / "bermudans.csv"
    pd.DataFrame(columns_of([0, 1])).to_csv(bermudans, index=False)
    assert main(["risk", str(bermudans), *common, "--measures", "dv01,vega", "--recalibrate", "--vols", str(vols),
                 "--a", "0.05", "--out", str(out)]) == 0
    table = pd.read_csv(out, keep_default_na=False, na_values=[""])
    api = trinom.risk(swaptions([0, 1]), {"EUR": curve}, backend=BACKEND, measures=("dv01", "vega"), errors="mask",
                      recalibrate=Recalibration(vols=quotes, a=0.05))
    np.testing.assert_allclose(table["value"].to_numpy(float), api["value"].to_numpy(float), rtol=1e-12)
    assert set(table.factor) == {"parallel", "vol"}
    scenarios = tmp_path / "scenarios.csv"
    scenarios.write_text("scenario,curve,date,shift\nup,EUR,,0.001\nkr10,EUR,2036-11-25,0.001\n")
    grid = tmp_path / "grid.csv"
    assert main(["price", str(book), *common, "--scenarios", str(scenarios), "--recalibrate", "--vols", str(vols),
                 "--a", "0.05", "--out", str(grid)]) == 0
    frame = pd.read_csv(grid, keep_default_na=False, na_values=[""])
    assert frame.scenario.tolist() == ["up"] * 4 + ["kr10"] * 4
    expected = trinom.price(trades, {"EUR": curve}, backend=BACKEND, errors="mask",
                            recalibrate=Recalibration(vols=quotes, a=0.05),
                            scenarios=[{"EUR": curve.bumped(1e-3)}, {"EUR": curve.bumped(1e-3, pillar=3)}])
    np.testing.assert_allclose(frame.price.to_numpy(float), expected.price.reshape(-1), rtol=1e-12)
    # without --recalibrate, the dated scenario grid prices on the engine's scenario axis
    assert main(["price", str(book), *common, "--scenarios", str(scenarios), "--out", str(grid)]) == 0
    plain = pd.read_csv(grid, keep_default_na=False, na_values=[""])
    moved = trinom.price(trades, {"EUR": curve.bumped(1e-3, pillar=3)}, backend=BACKEND).price
    np.testing.assert_allclose(plain.price.to_numpy(float)[4:], moved, rtol=1e-12)
    capsys.readouterr()
    for bad, message in ((["--vols", str(vols)], "--vols applies with --recalibrate"),
                         (["--recalibrate"], "give --vols")):
        assert main(["price", str(book), *common, *bad]) == 2
        assert message in capsys.readouterr().err
    scenarios.write_text("scenario,curve,date,shift\nup,EUR,2030-01-01,0.001\n")
    assert main(["price", str(book), *common, "--scenarios", str(scenarios), "--out", str(grid)]) == 2
    assert re.search(r"line 2: '2030-01-01' is not a pillar date", capsys.readouterr().err)


@pytest.mark.gpu
def test_recalibrated_risk_on_cuda_is_the_references(curve: DatedCurve, quotes: VolQuotes):
    trades = swaptions([0, 1, 3])
    how = Recalibration(vols=quotes, a=0.05)
    tables = [trinom.risk(trades, {"EUR": curve}, backend=backend, measures=("dv01", "krd", "vega"), recalibrate=how)
              for backend in ("cuda", "reference")]
    np.testing.assert_allclose(tables[0]["value"].to_numpy(float), tables[1]["value"].to_numpy(float), rtol=1e-6,
                               atol=1e-9)
    np.testing.assert_allclose(tables[0]["base"].to_numpy(float), tables[1]["base"].to_numpy(float), rtol=1e-11)


def test_risk_names_the_trade_not_its_tree_when_it_raises(curve: DatedCurve):
    """Swaptions are two trees each: a tree too wide for max_width is reported at its trade's row."""
    trades = swaptions([0, 1])
    with pytest.raises(trinom.InputError) as caught:
        trinom.risk(trades, {"EUR": curve}, backend=BACKEND, measures=("dv01",), max_width=41)
    rows = sorted({row for row, _field, _message in caught.value.errors})
    assert rows == [0, 1]
