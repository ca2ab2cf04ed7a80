"""Volatility surfaces (trinom.model.quotes.VolSurface) and per-trade basket calibration (trinom.analytics.baskets):
lookups, the surface's rules, baskets from arrays and from a trades book, exact repricing of one-quote baskets
(1000 trades in one call, normal and lognormal), residuals of multi-quote baskets, QuantLib 1.44's
HullWhite.calibrate on the same helpers, statuses and messages, and the time of 10000 baskets of about 10 quotes.
"""

from __future__ import annotations

import doctest
import time
from pathlib import Path

import numpy as np
import pytest

ql = pytest.importorskip("QuantLib")
import trinom  # noqa: E402
from quantlib_oracle import on_date, ql_date, random_curves  # noqa: E402 (after the skip)
from trinom.analytics import baskets as baskets_module  # noqa: E402
from trinom.analytics.baskets import bond_baskets, calibrate_baskets, trade_baskets  # noqa: E402
from trinom.instruments import TRADE_COLUMNS, read_trades  # noqa: E402
from trinom.model import DatedCurve  # noqa: E402
from trinom.model.quotes import VolQuotes, VolSurface, read_vol_surface  # noqa: E402
from trinom.model.rate_options import Swaptions  # noqa: E402

AS_OF = np.datetime64("2025-01-02")
EXPIRIES = ["6M", "1Y", "2Y", "3Y", "5Y", "7Y", "10Y", "15Y"]
TENORS = ["1Y", "2Y", "5Y", "10Y", "15Y", "20Y", "30Y"]
ERRORS = {"relative_price": ql.BlackCalibrationHelper.RelativePriceError,
          "price": ql.BlackCalibrationHelper.PriceError, "vol": ql.BlackCalibrationHelper.ImpliedVolError}
WORST: dict[str, float] = {}


@pytest.fixture(autouse=True)
def evaluation_date():
    yield from on_date(AS_OF)


@pytest.fixture(scope="module")
def eur() -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    return random_curves(AS_OF, 50)


def matrix(kind: str = "normal", curve: str = "EUR", shift: float = 0.0, seed: int = 0) -> VolQuotes:
    """A full matrix: normal vols about 90 bp falling with expiry and tenor (lognormal: over 3%, or 5% shifted)."""
    rng = np.random.default_rng(seed)
    e, t = np.meshgrid(np.arange(len(EXPIRIES)), np.arange(len(TENORS)), indexing="ij")
    vol = 0.0095 - 0.0002 * e - 0.0001 * t + rng.normal(0.0, 0.0002, e.shape)
    if kind == "lognormal":
        vol = vol / (0.03 + shift)
    return VolQuotes.from_columns(curve=curve, expiry=[EXPIRIES[i] for i in e.ravel()],
                                  tenor=[TENORS[j] for j in t.ravel()], vol=vol.ravel(), kind=kind, shift=shift)


# --- the surface ----------------------------------------------------------------------------------------------------

def test_surface_is_bilinear_between_nodes_and_flat_outside():
    quotes = matrix()
    surface = VolSurface.from_quotes(quotes, as_of=AS_OF)
    grid = surface.grids["EUR"]
    assert grid.vol.shape == (len(EXPIRIES), len(TENORS)) and grid.kind == "normal"
    # the axes: the periods' ACT/365F years from the as-of date
    assert grid.expiry.tolist() == pytest.approx([181 / 365, 1.0, 2.0, 3.0, 1826 / 365, 2556 / 365, 3652 / 365,
                                                  5478 / 365])
    # every node exactly
    frame = surface.to_frame()
    assert surface.vol(curve="EUR", expiry=frame.expiry_years, tenor=frame.tenor_years).tolist() == frame.vol.tolist()
    assert sorted(frame.vol.tolist()) == sorted(quotes.vol.tolist())
    # between nodes: bilinear
    e0, e1, t0, t1 = grid.expiry[2], grid.expiry[3], grid.tenor[3], grid.tenor[4]
    u, w = 0.3, 0.8
    expected = ((1 - u) * ((1 - w) * grid.vol[2, 3] + w * grid.vol[2, 4])
                + u * ((1 - w) * grid.vol[3, 3] + w * grid.vol[3, 4]))
    value = surface.vol(curve="EUR", expiry=e0 + u * (e1 - e0), tenor=t0 + w * (t1 - t0))
    assert float(value) == pytest.approx(expected, rel=1e-14)
    # along one axis only: linear
    assert float(surface.vol(curve="EUR", expiry=e0, tenor=0.5 * (t0 + t1))) == pytest.approx(
        0.5 * (grid.vol[2, 3] + grid.vol[2, 4]), rel=1e-14)
    # outside: flat (the edge's value)
    assert surface.vol(curve="EUR", expiry=[0.01, 40.0, 0.01, 40.0], tenor=[0.1, 0.1, 50.0, 50.0]).tolist() == [
        grid.vol[0, 0], grid.vol[-1, 0], grid.vol[0, -1], grid.vol[-1, -1]]
    assert float(surface.vol(curve="EUR", expiry=40.0, tenor=t0)) == grid.vol[-1, 3]


def test_surface_lookups_are_vectorised_over_curves(tmp_path: Path):
    import pandas as pd

    frame = pd.concat([matrix("normal", "EUR").to_frame(), matrix("lognormal", "USD", 0.01, seed=1).to_frame()])
    path = tmp_path / "vols.csv"
    frame.drop(columns=["strike", "frequency", "day_count", "weight", "instrument"]).to_csv(path, index=False)
    surface = read_vol_surface(path, as_of="2025-01-02")
    assert surface.curve_names == ("EUR", "USD")
    assert (surface.kind("EUR"), surface.shift("EUR"), surface.kind("USD"), surface.shift("USD")) == (
        "normal", 0.0, "lognormal", 0.01)
    rng = np.random.default_rng(4)
    names = rng.choice(["EUR", "USD"], 1000)
    e, t = rng.uniform(0, 20, 1000), rng.uniform(0, 35, 1000)
    together = surface.vol(curve=names, expiry=e, tenor=t)
    for name in ("EUR", "USD"):
        mine = names == name
        assert together[mine].tolist() == surface.vol(curve=name, expiry=e[mine], tenor=t[mine]).tolist()
    with pytest.raises(trinom.InputError, match="no volatility matrix for curve 'GBP'"):
        surface.vol(curve="GBP", expiry=1.0, tenor=1.0)


def test_surface_rules_name_the_quotes(tmp_path: Path):
    path = tmp_path / "vols.csv"
    path.write_text("curve,expiry,tenor,vol,kind,shift,strike,instrument\n"
                    "EUR,1Y,5Y,0.009,normal,,,\n"
                    "EUR,1Y,10Y,0.2,lognormal,,,\n"
                    "EUR,5Y,5Y,0.008,normal,,,\n"
                    "EUR,5Y,10Y,0.007,normal,,,\n"
                    "EUR,12M,5Y,0.009,normal,,,\n"
                    "EUR,2Y,5Y,0.009,normal,,0.03,\n"
                    "USD,1Y,5Y,0.2,lognormal,0.01,,\n"
                    "USD,1Y,10Y,0.2,lognormal,0.02,,\n"
                    "USD,2Y,5Y,0.2,lognormal,0.01,,\n"
                    "USD,3M,1Y,0.2,lognormal,0.01,,cap\n")
    with pytest.raises(trinom.InputError) as caught:
        read_vol_surface(path, as_of=AS_OF)
    messages = [m for _r, _f, m in caught.value.errors]
    assert ("vols.csv line 3: curve 'EUR' mixes volatility kinds: this quote's kind is lognormal, vols.csv line 2's "
            "(and 4 more) normal; a surface holds one kind per curve") in messages
    assert "vols.csv line 6: curve 'EUR' has expiry 12M, tenor 5Y already at vols.csv line 2" in messages
    assert "vols.csv line 7: a volatility surface takes at-the-money quotes, this one has strike 0.03" in messages
    assert any(m.startswith("vols.csv line 9: curve 'USD' mixes volatility shifts: this quote's shift is 0.02")
               for m in messages)
    assert "vols.csv line 11: a volatility surface takes swaption quotes, this one is a cap" in messages
    assert ("curve 'USD': the volatility matrix has no quote at expiry 2Y, tenor 10Y: its expiries (3M, 1Y, 2Y) and "
            "tenors (1Y, 5Y, 10Y) must form a full grid") in messages


# --- baskets --------------------------------------------------------------------------------------------------------

def test_trade_baskets_sort_and_check_their_input():
    b = trade_baskets(id=["A", "B", "C"], curve=["EUR", None, "USD"],
                      exercise=[["2027-01-04", "2026-01-02"], [], [np.datetime64("2030-06-30")]],
                      end=["2035-01-02", "2030-01-02", "2040-06-30"], rate=[0.03, None, "0.04"], frequency=[1, "6M", 4],
                      day_count=["30/360", "ACT/360", "ACT/ACT-ICMA"], side=["payer", "receiver", False])
    assert b.counts.tolist() == [2, 0, 1] and b.curve.tolist() == ["EUR", "", "USD"]
    assert [str(d) for d in b.exercise_dates(0)] == ["2026-01-02", "2027-01-04"]
    assert np.isnan(b.rate[1]) and b.rate[2] == 0.04 and b.frequency.tolist() == [1, 2, 4]
    assert b.payer.tolist() == [True, False, False] and b.day_count.tolist()[2] == "ACT/ACT-ICMA"
    assert len(b.to_frame()) == 3
    with pytest.raises(trinom.InputError) as caught:
        trade_baskets(id=["A", "A", "B"], exercise=[["2026-13-01"], ["2031-01-02"], ["2026-01-02", "2026-01-02"]],
                      end=["2030-01-02", "2030-01-02", "2030-01-02"], rate=["x", 0.03, 0.03], frequency=[3, 1, 1],
                      day_count="ACT/999", side=["pay", "buy", "rec"])
    found = [(r, f) for r, f, _m in caught.value.errors]
    assert found == [(0, "exercise"), (0, "rate"), (0, "frequency"), (0, "day_count"), (1, "id"), (1, "day_count"),
                     (1, "side"), (1, "exercise"), (2, "day_count"), (2, "exercise")]
    messages = [m for _r, _f, m in caught.value.errors]
    assert "trade 1 ('A'): id 'A' is already trade 0's" in messages
    assert "trade 1 ('A'): exercise date 2031-01-02 is not before the end 2030-01-02" in messages
    assert "trade 2 ('B'): exercise date 2026-01-02 is given twice" in messages


BOOK = [
    "C1,bond,100,2024-03-15,2036-03-15,0.05,2,30/360,USGOVT,F,call,bermudan,2028-03-15,2035-09-15,100,,,,,,USD,",
    "P1,bond,,2025-06-30,2031-06-30,0.04,1,ACT/ACT-ICMA,TARGET,MF,put,american,2027-06-30,2030-06-30,99,,,,,,EUR,",
    "E1,bond,,2024-01-10,2034-01-10,0.035,1,ACT/360,,,call,european,2029-01-10,,100,,,,,,EUR,",
    "Z1,bond_option,,,2034-11-25,,,,,,put,,,,,2029-11-25,63,0.1,0.01,,EUR,",
    "B1,bond,,2020-01-15,2030-01-15,0.03,4,ACT/360,TARGET+NYSE,MF,,,,,,,,,,,USD,",
    "L1,bond,,2020-01-15,2030-01-15,0.03,1,30/360,,,call,european,2026-01-15,,100,,,,,,EUR,",
]


def write_book(tmp_path: Path) -> Path:
    path = tmp_path / "trades.csv"
    path.write_text(",".join(TRADE_COLUMNS[:22]) + "\n" + "\n".join(BOOK) + "\n")
    return path


def test_bond_baskets_of_a_trades_book(tmp_path: Path):
    trades = read_trades(write_book(tmp_path), as_of="2026-11-25")
    b = bond_baskets(trades, curve_names=["EUR", "USD"])
    assert b.id.tolist() == ["C1", "P1", "E1", "Z1", "B1", "L1"]
    # bermudan: the (adjusted) coupon dates in the window; american: the first exercise and the coupons after it;
    # european: its date
    assert [str(d) for d in b.exercise_dates(0)][:4] == ["2028-03-15", "2028-09-15", "2029-03-15", "2029-09-17"]
    # the window's last coupon, 2035-09-15, rolls to Monday 2035-09-17: after last_exercise (as the tree has it)
    assert str(b.exercise_dates(0)[-1]) == "2035-03-15" and b.counts[0] == 15
    assert [str(d) for d in b.exercise_dates(1)] == ["2027-06-30", "2028-06-30", "2029-06-29", "2030-06-28"]
    assert [str(d) for d in b.exercise_dates(2)] == ["2029-01-10"]
    assert b.counts[3:5].tolist() == [0, 0]
    assert "bond option" in b.note[3] and "without a call or put" in b.note[4]
    assert b.payer.tolist()[:3] == [False, True, False]  # a call is a receiver, a put a payer
    assert b.rate.tolist()[:3] == [0.05, 0.04, 0.035] and b.frequency.tolist()[:3] == [2, 1, 1]
    assert b.day_count.tolist()[:3] == ["30/360", "ACT/ACT-ICMA", "ACT/360"]
    assert [str(d) for d in b.end[:3]] == ["2036-03-15", "2031-06-30", "2034-01-10"]
    # a bad cell is named with its file and line (a and sigma are the calibration's to find)
    path = tmp_path / "bad.csv"
    path.write_text(",".join(TRADE_COLUMNS[:22]) + "\n" + BOOK[0].replace("2028-03-15", "2028-02-30") + "\n")
    with pytest.raises(trinom.InputError, match=r"bad\.csv line 2: first_exercise '2028-02-30' is not a date"):
        bond_baskets(read_trades(path, as_of="2026-11-25"))


# --- fits -----------------------------------------------------------------------------------------------------------

def random_baskets(n: int, rng: np.random.Generator, quotes: int = 1) -> object:
    """``n`` trades of ``quotes`` exercise dates each (about yearly), ends 2 to 30 years out, random strikes, legs and
    sides."""
    years = rng.integers(2, 31, n)
    end = AS_OF + np.round(years * 365.25).astype(int)
    first = AS_OF + rng.integers(20, 365, n)
    exercise = []
    for k in range(n):
        span = (end[k] - first[k]).astype(int)
        step = max(span // (quotes + 1), 1)
        exercise.append([first[k] + j * step for j in range(quotes)])
    return trade_baskets(id=[f"T{k}" for k in range(n)], curve="EUR", exercise=exercise, end=end,
                         rate=rng.uniform(0.01, 0.05, n), frequency=rng.choice([1, 2, 4], n),
                         day_count=rng.choice(["30/360", "ACT/360", "ACT/365F"], n),
                         side=rng.choice(["payer", "receiver"], n))


@pytest.mark.parametrize(("kind", "shift"), [("normal", 0.0), ("lognormal", 0.0), ("lognormal", 0.02)])
def test_one_quote_baskets_reprice_within_a_tenth_of_a_basis_point(eur, kind, shift):
    """1000 trades of one swaption each, sigma fitted with a per trade: every quote's model volatility is its
    market volatility (0.1 bp of normal volatility allowed; the lognormal's normal equivalent, vol * (F + shift),
    likewise); in fact within 1e-11 relative where the price is mostly time value."""
    curve, _handle = eur
    rng = np.random.default_rng(11)
    baskets = random_baskets(1000, rng)
    a = rng.uniform(0.005, 0.3, 1000)
    surface = VolSurface.from_quotes(matrix(kind, shift=shift), as_of=AS_OF)
    for strike in ("atm", "deal"):
        fit = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a=a, strike=strike)
        # deal strikes deep in the money a few weeks before expiry: prices without time value, no volatility to fit
        done = fit.status == "converged"
        assert all("without time value" in m for m in fit.message[~done]), fit.message[~done][:3]
        assert (~done).sum() <= (0 if strike == "atm" else 50)
        assert fit.a[done].tolist() == a[done].tolist() and (fit.quote_count[done] == 1).all()
        fit_done = np.isin(fit.trade, np.flatnonzero(done))
        normal_equivalent = 1.0 if kind == "normal" else fit.forward[fit_done] + shift
        residual, market_vol = fit.residual[fit_done], fit.market_vol[fit_done]
        gap = np.abs(residual) * normal_equivalent
        WORST[f"one-quote baskets, {kind} {shift}, {strike}: worst |model - market| vol (normal bp)"] = gap.max() * 1e4
        # relative: where time value is most of the price, to 1e-11 (the solver stops at steps of 1e-12); where it
        # is a millionth, the price tells the volatility a million times less sharply
        intrinsic = fit.annuity * np.maximum(np.where(fit.payer, 1.0, -1.0) * (fit.forward - fit.strike), 0.0)
        time_value = ((fit.market_price - intrinsic) / fit.market_price)[fit_done]
        relative = np.abs(residual / market_vol)
        WORST[f"one-quote baskets, {kind} {shift}, {strike}: worst relative vol gap (time value over 10%)"] = \
            relative[time_value > 0.1].max()
        WORST[f"one-quote baskets, {kind} {shift}, {strike}: trades without time value (no fit)"] = (~done).sum()
        assert gap.max() <= 1e-5  # 0.1 bp
        assert relative[time_value > 0.1].max() <= 1e-11
        assert relative[time_value > 1e-6].max() <= 1e-9
        np.testing.assert_allclose(fit.rmse[done], np.abs(residual), rtol=1e-12, atol=0)
    # a free: one quote cannot fix both; a is held at its guess, sigma fitted exactly, and the message says so
    fit = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a_guess=0.02)
    assert fit.status.tolist() == ["converged"] * 1000 and (fit.a == 0.02).all() and fit.a_fixed.all()
    assert "a held at its guess 0.02 (one quote cannot determine both a and sigma)" in fit.message[0]
    assert np.abs(fit.residual / fit.market_vol).max() <= 1e-11


def test_many_quote_baskets_report_their_residuals(eur):
    """Baskets of 6 to 10 co-terminal swaptions with a fixed: the residuals are the model's implied volatilities less
    the market's, the model prices those of the fitted parameters, the rmse their root mean square; and every
    basket's fit is the fit of that basket alone."""
    curve, _handle = eur
    rng = np.random.default_rng(5)
    parts = [random_baskets(40, rng, quotes=q) for q in (6, 8, 10)]
    import pandas as pd

    frame = pd.concat([p.to_frame() for p in parts], ignore_index=True)
    frame["id"] = frame["id"] + "_" + np.repeat(["6", "8", "10"], [240, 320, 400])
    grouped = frame.groupby("id", sort=False)
    first = grouped.first()
    baskets = trade_baskets(id=list(first.index), curve="EUR", exercise=[list(g.exercise) for _i, g in grouped],
                            end=first.end, rate=first.rate, frequency=first.frequency, day_count=first.day_count,
                            side=np.where(first.payer, "payer", "receiver"))
    surface = VolSurface.from_quotes(matrix(), as_of=AS_OF)
    fit = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a=0.03, strike="deal",
                            error="vol")
    assert fit.status.tolist() == ["converged"] * 120
    short = fit.quote_count < baskets.counts  # a quote without time value is left out, and said to be
    assert short.sum() <= 3 and all("without time value" in m for m in fit.message[short])
    quotes = fit.quotes_frame()
    assert list(quotes.columns) == ["id", "curve", "exercise", "end", "expiry", "tenor", "strike", "forward", "payer",
                                    "kind", "shift", "market_vol", "market_price", "model_price", "model_vol",
                                    "residual", "price_residual", "error"]
    np.testing.assert_array_equal(quotes.residual, quotes.model_vol - quotes.market_vol)
    np.testing.assert_array_equal(quotes.price_residual, quotes.model_price - quotes.market_price)
    fitted = np.isfinite(fit.model_price)
    assert (~fitted).sum() == short.sum()  # the quotes left out have no model price
    assert (np.abs(quotes.residual[fitted]) > 1e-7).mean() > 0.9  # a fixed: the residuals stay
    swaptions = Swaptions.on_curve(curve, exercise=fit.exercise, end=fit.end, frequency=baskets.frequency[fit.trade],
                                   day_count=baskets.day_count[fit.trade], payer=fit.payer)
    swaptions = swaptions.replace_rates(fit.strike)
    model = swaptions.price(a=0.03, sigma=fit.sigma[fit.trade], root="exact")
    np.testing.assert_allclose(fit.model_price[fitted], model[fitted], rtol=1e-13, atol=0)
    rmse = np.sqrt(np.bincount(fit.trade[fitted], weights=fit.residual[fitted] ** 2) / fit.quote_count)
    np.testing.assert_allclose(fit.rmse, rmse, rtol=1e-12)
    # the vol error's objective is stationary in sigma: sum r dr/dsigma = 0, by differences (on a basket whose
    # prices are all mostly time value, whose implied volatilities are sharp)
    intrinsic = fit.annuity * np.maximum(np.where(fit.payer, 1.0, -1.0) * (fit.forward - fit.strike), 0.0)
    time_value = np.where(fitted, (fit.market_price - intrinsic) / fit.market_price, 0.0)
    k = int(np.flatnonzero(np.minimum.reduceat(time_value, np.searchsorted(fit.trade, np.arange(120))) > 0.3)[0])
    mine = fit.trade == k

    def objective(sigma: float) -> float:
        price = swaptions.take(np.flatnonzero(mine)).price(a=0.03, sigma=sigma, root="exact")
        vols = fit.model_vol[mine] if sigma == fit.sigma[k] else trinom.model.volatility.bachelier_implied_vol(
            price=price, forward=fit.forward[mine], strike=fit.strike[mine], expiry=fit.expiry[mine],
            annuity=fit.annuity[mine], is_call=fit.payer[mine])
        return float(np.sum((vols - fit.market_vol[mine]) ** 2))

    h = 1e-6 * fit.sigma[k]
    slope = (objective(fit.sigma[k] + h) - objective(fit.sigma[k] - h)) / (2 * h)
    assert abs(slope) * h <= 1e-12 * objective(fit.sigma[k])  # the change over a step: rounding
    alone = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF,
                              baskets=trade_baskets(id=["x"], curve="EUR", exercise=[list(baskets.exercise_dates(k))],
                                                    end=baskets.end[k:k + 1], rate=baskets.rate[k:k + 1],
                                                    frequency=baskets.frequency[k:k + 1],
                                                    day_count=baskets.day_count[k:k + 1],
                                                    side=bool(baskets.payer[k])),
                              a=0.03, strike="deal", error="vol")
    assert alone.sigma[0] == pytest.approx(fit.sigma[k], rel=1e-12)


@pytest.mark.parametrize(("kind", "strike", "error"), [("normal", "atm", "relative_price"), ("normal", "deal", "vol"),
                                                       ("lognormal", "atm", "relative_price"),
                                                       ("lognormal", "deal", "price")])
def test_a_basket_matches_quantlib_calibration(eur, kind, strike, error):
    """One trade's ten co-terminal swaptions (semiannual 30/360 legs to 2037) against QuantLib's HullWhite.calibrate
    on SwaptionHelpers of the same swaptions and volatilities (the JamshidianSwaptionEngine, LevenbergMarquardt):
    sigma within 1e-4 relative with a fixed; with a free, within 1e-4 too, or QuantLib's own objective no higher at
    trinom's parameters than at its own."""
    curve, handle = eur
    surface = VolSurface.from_quotes(matrix(kind), as_of=AS_OF)
    exercise = [np.datetime64("2026-03-16") + 365 * k for k in range(10)]
    baskets = trade_baskets(id=["X"], curve="EUR", exercise=[exercise], end="2037-03-16", rate=0.034, frequency=2,
                            day_count="30/360", side="receiver")
    index = ql.IborIndex("index", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), handle)
    for a in (0.04, None):
        fit = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a=a, strike=strike,
                                error=error)
        assert fit.status.tolist() == ["converged"]
        helpers = [ql.SwaptionHelper(ql_date(fit.exercise[k]), ql_date(fit.end[k]),
                                     ql.QuoteHandle(ql.SimpleQuote(float(fit.market_vol[k]))), index,
                                     ql.Period(6, ql.Months), ql.Thirty360(ql.Thirty360.BondBasis), ql.Actual365Fixed(),
                                     handle, ERRORS[error], ql.nullDouble() if strike == "atm" else 0.034, 1.0,
                                     ql.Normal if kind == "normal" else ql.ShiftedLognormal, 0.0)
                   for k in range(10)]
        model = ql.HullWhite(handle, 0.05 if a is None else a, 0.01)
        engine = ql.JamshidianSwaptionEngine(model)
        for helper in helpers:
            helper.setPricingEngine(engine)
        if strike == "atm":  # the same market prices (QuantLib prices the out-of-the-money side; at the money: equal)
            market = np.array([h.marketValue() for h in helpers])
            assert np.abs(fit.market_price / market - 1).max() <= 1e-12
        model.calibrate(helpers, ql.LevenbergMarquardt(), ql.EndCriteria(400, 100, 1e-8, 1e-8, 1e-8),
                        ql.NoConstraint(), [], [] if a is None else [True, False])
        ql_a, ql_sigma = model.params()
        gap = max(abs(fit.a[0] / ql_a - 1), abs(fit.sigma[0] / ql_sigma - 1))
        WORST[f"basket vs HullWhite.calibrate, {kind}, {strike}, {error}, a {'fixed' if a else 'free'}"] = gap
        if a is not None:
            assert gap <= 1e-4
        elif gap > 1e-4:  # QuantLib stopped short: its own objective is no lower at its parameters than at trinom's
            assert ql_cost(model, helpers, fit.a[0], fit.sigma[0]) <= ql_cost(model, helpers, ql_a, ql_sigma) * (
                1 + 1e-9)


def ql_cost(model: ql.HullWhite, helpers: list, a: float, sigma: float) -> float:
    model.setParams(ql.Array([float(a), float(sigma)]))
    return sum(h.calibrationError() ** 2 for h in helpers)


def test_statuses_and_messages(eur):
    curve, _handle = eur
    rising = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "1Y", "10Y", "10Y"], tenor=["1Y", "20Y", "1Y", "20Y"],
                                    vol=[0.004, 0.006, 0.012, 0.014], kind="normal")
    surface = VolSurface.from_quotes(rising, as_of=AS_OF)
    baskets = trade_baskets(
        id=["past", "nocurve", "one", "up", "none", "slow"], curve=["EUR", "GBP", "EUR", "EUR", "EUR", "EUR"],
        exercise=[["2024-06-03", "2025-01-02"], ["2027-01-04"], ["2027-01-04"],
                  [f"{y}-01-04" for y in range(2026, 2035)], [], ["2026-01-05", "2030-01-03"]],
        end=["2030-01-02", "2030-01-02", "2030-01-02", "2036-01-02", "2030-01-02", "2035-01-02"],
        note=["", "", "", "", "a bond without a call or put: nothing to calibrate", ""])
    fit = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets)
    slow = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, max_iterations=1)
    status = dict(zip(fit.id, fit.status, strict=True))
    message = dict(zip(fit.id, fit.message, strict=True))
    status["slow"], message["slow"] = slow.status[5], slow.message[5]
    assert status == {"past": "no fit", "nocurve": "no fit", "one": "converged", "up": "bound", "none": "no fit",
                      "slow": "no fit"}, message
    assert message["past"] == "no exercise date after the as-of date 2025-01-02 (2 on or before it)"
    assert message["nocurve"] == "curve 'GBP' is not among the curves ('EUR')"
    assert "a held at its guess 0.05" in message["one"]
    assert message["up"].startswith("a at its lower bound 1e-08 (the quotes ask for a mean reversion at or below zero)")
    assert message["none"] == "a bond without a call or put: nothing to calibrate"
    assert message["slow"].startswith("no convergence in 1 iterations")
    assert np.isnan(fit.a[[0, 1, 4]]).all() and np.isfinite(fit.a[[2, 3, 5]]).all() and np.isnan(slow.a[5])
    assert not fit.ok and set(fit.parameters()) == {"one", "up", "slow"}
    frame = fit.trades_frame()
    assert list(frame.columns)[:5] == ["id", "a", "sigma", "status", "message"]
    # a curve without a matrix; bad arguments
    other = DatedCurve(as_of=AS_OF, dates=["2060-01-02"], zero_rates=[0.02], name="USD")
    fit = calibrate_baskets(curves={"EUR": curve, "USD": other}, vols=surface, as_of=AS_OF,
                            baskets=trade_baskets(id=["u"], curve="USD", exercise=[["2027-01-04"]], end="2030-01-02"))
    assert fit.status[0] == "no fit" and fit.message[0] == "no volatility matrix for curve 'USD' (the vols have 'EUR')"
    with pytest.raises(trinom.InputError, match="strike must be one of atm, deal"):
        calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, strike="otm")
    with pytest.raises(trinom.InputError, match="strike='deal' needs the deal's fixed rate"):
        calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, strike="deal")
    with pytest.raises(trinom.InputError, match="is as of 2025-01-02, not 2025-01-03"):
        calibrate_baskets(curves=curve, vols=rising, as_of="2025-01-03", baskets=baskets)
    with pytest.raises(trinom.InputError, match="a must be a finite number > 0"):
        calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a=[0.1, -1, 0.1, 0.1, 0.1, 0.1])


def test_baskets_from_a_trades_book(tmp_path: Path):
    trades = read_trades(write_book(tmp_path), as_of="2026-11-25")
    book_curve = DatedCurve(as_of="2026-11-25", dates=["2060-01-02"], zero_rates=[0.03], name="EUR")
    usd = DatedCurve(as_of="2026-11-25", dates=["2060-01-02"], zero_rates=[0.04], name="USD")
    import pandas as pd

    vols = pd.concat([matrix(curve="EUR").to_frame(), matrix(curve="USD", seed=2).to_frame()], ignore_index=True)
    fit = calibrate_baskets(curves={"EUR": book_curve, "USD": usd}, vols=vols, as_of="2026-11-25",
                            baskets=bond_baskets(trades), a=0.03, strike="deal")
    assert fit.status.tolist() == ["converged", "converged", "converged", "no fit", "no fit", "no fit"]
    assert fit.quote_count.tolist() == [15, 4, 1, 0, 0, 0]
    assert fit.message[5] == "no exercise date after the as-of date 2026-11-25 (1 on or before it)"
    assert np.abs(fit.residual[fit.trade == 2]).max() <= 1e-14


def test_ten_thousand_baskets_of_ten_quotes(eur):
    """The time of 10000 baskets of 10 co-terminal swaptions (100000 quotes, legs up to 30 years) in one call, a
    fixed and free (printed with -s; no timed assertion)."""
    curve, _handle = eur
    rng = np.random.default_rng(1)
    baskets = random_baskets(10000, rng, quotes=10)
    surface = VolSurface.from_quotes(matrix(), as_of=AS_OF)
    for a in (0.03, None):
        start = time.perf_counter()
        fit = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a=a, strike="deal")
        elapsed = time.perf_counter() - start
        counts = {s: int((fit.status == s).sum()) for s in ("converged", "bound", "no fit")}
        WORST[f"10000 baskets x 10 quotes, a {'fixed' if a else 'free'}: seconds"] = elapsed
        print(f"10000 baskets, {fit.trade.size} quotes, a {'fixed' if a else 'free'}: {elapsed:.2f} s, {counts}, "
              f"iterations mean {fit.iterations.mean():.1f} max {fit.iterations.max()}")
        assert fit.trade.size == 100000 and counts["no fit"] == 0


def test_doctests():
    assert doctest.testmod(baskets_module).failed == 0


def test_report_worst_agreement():
    """Prints the figures of this file (run with -s to see them)."""
    for name, value in WORST.items():
        print(f"{name}: {value:.3g}")
