"""trinom.model.calibrate against QuantLib 1.44's HullWhite.calibrate (SwaptionHelpers priced by the
JamshidianSwaptionEngine, LevenbergMarquardt with the EndCriteria of QuantLib's Bermudan-swaption example), the
quote file reader, the batched Levenberg-Marquardt solver and the statuses.

The SwaptionHelper is built so that it describes exactly a quote's swaption: ``SwaptionHelper(exerciseDate,
endDate, vol, index, fixedLegTenor, fixedLegDayCounter, floatingLegDayCounter, curve, errorType, strike, 1.0,
volatilityType, shift)`` with ``exerciseDate = as_of + expiry`` and ``endDate = exerciseDate + tenor`` (unadjusted),
and an IborIndex with 0 fixing days on the NullCalendar, Unadjusted, whose day count (ACT/365F) is also the
floating leg's: the helper then starts the swap on the exercise date, generates both legs forward and unadjusted,
and its floating coupons (par coupons, fixing on their start) telescope to ``P(start) - P(end)``, so that its
at-the-money rate is trinom's forward swap rate (to 1e-16) and its market price trinom's (to 1e-13).

QuantLib's calibrated parameters carry the noise of its optimiser (a forward-difference Jacobian of prices whose
Jamshidian root is only solved to 1e-8) and of its stopping rule: they move by up to about 3e-5 relative with its
LevenbergMarquardt settings. trinom's fit is checked within 1e-4 relative of QuantLib's, and, more sharply, against
QuantLib's own objective: QuantLib's cost function is no higher at trinom's parameters than at its own.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ql = pytest.importorskip("QuantLib")
import trinom  # noqa: E402
from quantlib_oracle import on_date, ql_date  # noqa: E402 (after the skip)
from trinom.model import DatedCurve  # noqa: E402
from trinom.model import calibration as calibration_module  # noqa: E402
from trinom.model import quotes as quotes_module  # noqa: E402
from trinom.model.calibration import calibrate, levenberg_marquardt  # noqa: E402
from trinom.model.quotes import VolQuotes, quote_instruments, read_vol_quotes  # noqa: E402

AS_OF = np.datetime64("2025-01-02")
DAY_COUNTS = {"30/360": ql.Thirty360(ql.Thirty360.BondBasis), "30E/360": ql.Thirty360(ql.Thirty360.European),
              "ACT/360": ql.Actual360(), "ACT/365F": ql.Actual365Fixed(),
              "ACT/ACT-ISDA": ql.ActualActual(ql.ActualActual.ISDA)}
ERRORS = {"relative_price": ql.BlackCalibrationHelper.RelativePriceError,
          "price": ql.BlackCalibrationHelper.PriceError, "vol": ql.BlackCalibrationHelper.ImpliedVolError}
EXPIRIES = ["1Y", "2Y", "3Y", "4Y", "5Y", "1Y", "2Y", "7Y", "10Y", "6M", "18M"]
TENORS = ["4Y", "3Y", "2Y", "1Y", "5Y", "10Y", "8Y", "5Y", "10Y", "2Y", "7Y"]
NORMAL = np.array([0.0090, 0.0088, 0.0086, 0.0084, 0.0080, 0.0085, 0.0083, 0.0078, 0.0070, 0.0092, 0.0086])
MATRICES = {
    "normal": {"vol": NORMAL, "kind": "normal"},
    "lognormal": {"vol": NORMAL / 0.03, "kind": "lognormal"},
    "shifted lognormal": {"vol": NORMAL / 0.05, "kind": "lognormal", "shift": 0.02},
    "strikes": {"vol": NORMAL, "kind": "normal",
                "strike": [0.02, 0.04, None, 0.03, 0.01, 0.05, None, 0.035, 0.025, 0.028, 0.031]},
    "legs": {"vol": NORMAL, "kind": "normal", "frequency": [2, 1, 4, 2, 1, 2, 12, 1, 2, 4, 2],
             "day_count": ["ACT/360", "30/360", "ACT/365F", "30E/360", "ACT/ACT-ISDA", "30/360", "ACT/360", "ACT/365F",
                           "30/360", "ACT/360", "30E/360"]},
}
WORST: dict[str, float] = {}


@pytest.fixture(autouse=True)
def evaluation_date():
    yield from on_date(AS_OF)


def make_curve(seed: int, level: float, name: str) -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    rng = np.random.default_rng(seed)
    days = np.unique(np.concatenate([[30, 90, 180], rng.integers(200, 45 * 365, 25)]))
    zeros = level + 0.015 * np.sin(days / 3000) + rng.normal(0, 0.002, days.size)
    dfs = np.exp(-zeros * days / 365.0)
    ours = DatedCurve(as_of=AS_OF, dates=AS_OF + days, discount_factors=dfs, name=name)
    theirs = ql.DiscountCurve([ql_date(AS_OF), *(ql_date(d) for d in AS_OF + days)], [1.0, *dfs], ql.Actual365Fixed())
    return ours, ql.YieldTermStructureHandle(theirs)


@pytest.fixture(scope="module")
def eur() -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    return make_curve(3, 0.025, "EUR")


def ql_helpers(quotes: VolQuotes, curve: DatedCurve, handle: ql.YieldTermStructureHandle,
               error: str = "relative_price") -> list[ql.SwaptionHelper]:
    """QuantLib's helpers of the quotes (see the module's documentation), priced by the Jamshidian engine."""
    basket = quote_instruments(quotes, {curve.name: curve})
    index = ql.IborIndex("index", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), handle)
    helpers = []
    for k in range(len(quotes)):
        strike = ql.nullDouble() if np.isnan(quotes.strike[k]) else float(quotes.strike[k])
        kind = ql.Normal if quotes.kind[k] == "normal" else ql.ShiftedLognormal
        helpers.append(ql.SwaptionHelper(
            ql_date(basket.exercise[k]), ql_date(basket.end[k]), ql.QuoteHandle(ql.SimpleQuote(float(quotes.vol[k]))),
            index, ql.Period(12 // int(quotes.frequency[k]), ql.Months), DAY_COUNTS[quotes.day_count[k]],
            ql.Actual365Fixed(), handle, ERRORS[error], strike, 1.0, kind, float(quotes.shift[k])))
    return helpers


def ql_calibrate(helpers: list, handle: ql.YieldTermStructureHandle, fixed_a: float | None = None) -> ql.HullWhite:
    model = ql.HullWhite(handle, 0.05 if fixed_a is None else fixed_a, 0.01)
    engine = ql.JamshidianSwaptionEngine(model)
    for helper in helpers:
        helper.setPricingEngine(engine)
    fix = [] if fixed_a is None else [True, False]
    model.calibrate(helpers, ql.LevenbergMarquardt(), ql.EndCriteria(400, 100, 1e-8, 1e-8, 1e-8), ql.NoConstraint(),
                    [], fix)
    return model


def ql_objective(model: ql.HullWhite, helpers: list, a: float, sigma: float) -> float:
    model.setParams(ql.Array([float(a), float(sigma)]))
    return sum(helper.calibrationError() ** 2 for helper in helpers)


def matrix(name: str, curve: str = "EUR") -> VolQuotes:
    return VolQuotes.from_columns(curve=curve, expiry=EXPIRIES, tenor=TENORS, **MATRICES[name])


# --- against QuantLib ---------------------------------------------------------------------------------------------

def test_helpers_describe_the_quotes_swaptions(eur):
    """QuantLib's helpers and trinom's quotes: the same market prices, and the same model prices (QuantLib's root,
    trinom's default; the exact root within QuantLib's root error)."""
    curve, handle = eur
    for name in MATRICES:
        quotes = matrix(name)
        helpers = ql_helpers(quotes, curve, handle)
        model = ql.HullWhite(handle, 0.04, 0.009)
        engine = ql.JamshidianSwaptionEngine(model)
        basket = quote_instruments(quotes, curve)
        market = np.array([h.marketValue() for h in helpers])
        assert np.abs(basket.market_price / market - 1).max() <= 1e-12, name
        for helper in helpers:
            helper.setPricingEngine(engine)
        theirs = np.array([h.modelValue() for h in helpers])
        assert np.abs(basket.model_price(a=0.04, sigma=0.009) / theirs - 1).max() <= 1e-10, name
        assert np.abs(basket.model_price(a=0.04, sigma=0.009, root="exact") / theirs - 1).max() <= 1e-5, name


@pytest.mark.parametrize("name", list(MATRICES))
@pytest.mark.parametrize("error", ["relative_price", "price", "vol"])
def test_global_calibration_matches_quantlib(eur, name, error):
    curve, handle = eur
    quotes = matrix(name)
    helpers = ql_helpers(quotes, curve, handle, error)
    model = ql_calibrate(helpers, handle)
    a, sigma = model.params()
    result = calibrate(curves={"EUR": curve}, quotes=quotes, as_of=AS_OF, error=error)
    assert result.status.tolist() == ["converged"], result.message
    gap = max(abs(result.a[0] / a - 1), abs(result.sigma[0] / sigma - 1))
    WORST[f"free a, {name}, {error}"] = gap
    assert gap <= 1e-4
    # QuantLib's own objective is no higher at trinom's parameters than at its own
    theirs = ql_objective(model, helpers, a, sigma)
    ours = ql_objective(model, helpers, result.a[0], result.sigma[0])
    assert ours <= theirs * (1 + 1e-9)


@pytest.mark.parametrize("error", ["relative_price", "price", "vol"])
def test_calibration_on_quantlibs_root_matches_quantlib_too(eur, error):
    """root="quantlib" while fitting (the engine's prices, which jump by up to 1e-6 between parameters): converged,
    within 1e-4 of QuantLib and within 1e-5 of the fit on the exact root (the default)."""
    curve, handle = eur
    for name in ("normal", "lognormal", "shifted lognormal"):
        quotes = matrix(name)
        model = ql_calibrate(ql_helpers(quotes, curve, handle, error), handle)
        a, sigma = model.params()
        result = calibrate(curves=curve, quotes=quotes, error=error, root="quantlib")
        exact = calibrate(curves=curve, quotes=quotes, error=error)
        assert result.status.tolist() == ["converged"], result.message
        gap = max(abs(result.a[0] / a - 1), abs(result.sigma[0] / sigma - 1))
        WORST[f"root='quantlib', free a, {name}, {error}"] = gap
        assert gap <= 1e-4
        assert result.a[0] == pytest.approx(exact.a[0], rel=1e-5)
        assert result.sigma[0] == pytest.approx(exact.sigma[0], rel=1e-5)
    with pytest.raises(trinom.InputError, match="root must be one of quantlib, exact"):
        calibrate(curves=curve, quotes=matrix("normal"), root="newton")


@pytest.mark.parametrize("name", ["normal", "lognormal", "strikes"])
def test_calibration_with_a_fixed_matches_quantlib(eur, name):
    curve, handle = eur
    quotes = matrix(name)
    model = ql_calibrate(ql_helpers(quotes, curve, handle), handle, fixed_a=0.03)
    result = calibrate(curves=curve, quotes=quotes, a=0.03)
    assert result.status.tolist() == ["converged"] and result.a[0] == 0.03 and result.a_fixed[0]
    gap = abs(result.sigma[0] / model.params()[1] - 1)
    WORST[f"fixed a, {name}"] = gap
    assert gap <= 1e-4


def test_many_curves_at_once_match_quantlib_curve_by_curve():
    curves, handles = {}, {}
    for k, (name, level) in enumerate([("EUR", 0.025), ("USD", 0.04), ("GBP", 0.035), ("JPY", 0.005)]):
        curves[name], handles[name] = make_curve(10 + k, level, name)
    parts = [matrix("normal", "EUR"), matrix("lognormal", "USD"), matrix("strikes", "GBP"), matrix("legs", "JPY")]
    frames = [p.to_frame() for p in parts]
    import pandas as pd

    quotes = VolQuotes.from_frame(pd.concat(frames, ignore_index=True))
    result = calibrate(curves=curves, quotes=quotes, a={"GBP": 0.02})
    assert list(result.curve_names) == ["EUR", "USD", "GBP", "JPY"]
    assert result.status.tolist() == ["converged"] * 4
    for k, name in enumerate(result.curve_names):
        model = ql_calibrate(ql_helpers(parts[k], curves[name], handles[name]), handles[name],
                             fixed_a=0.02 if name == "GBP" else None)
        a, sigma = model.params()
        assert result.a[k] == pytest.approx(a, rel=1e-4)
        assert result.sigma[k] == pytest.approx(sigma, rel=1e-4)
        alone = calibrate(curves={name: curves[name]}, quotes=parts[k], a=0.02 if name == "GBP" else None)
        assert result.a[k] == pytest.approx(alone.a[0], rel=1e-12)
        assert result.sigma[k] == pytest.approx(alone.sigma[0], rel=1e-12)


# --- fits, statuses, outputs -------------------------------------------------------------------------------------------

def test_quotes_made_by_the_model_give_its_parameters_back(eur):
    """Swaption and cap quotes computed from Hull-White prices (a = 0.06, sigma = 0.011) recover the parameters."""
    curve, _handle = eur
    swaptions = matrix("legs", "")
    caps = VolQuotes.from_columns(curve="", expiry=["3M", "3M", "6M", "1Y", "2Y"], tenor=["1Y", "2Y9M", "5Y", "9Y", "8Y"],
                                  vol=0.01, kind=["normal", "lognormal", "normal", "lognormal", "normal"],
                                  shift=[0.0, 0.03, 0.0, 0.03, 0.0],
                                  instrument=["cap", "cap", "floor", "cap", "floor"], strike=[None, None, 0.02, 0.03, None])
    for quotes in (swaptions, caps):
        basket = quote_instruments(quotes, curve)
        implied = basket.implied_vol(basket.model_price(a=0.06, sigma=0.011, root="exact"))
        rebuilt = VolQuotes.from_columns(**{**{c: quotes.to_frame()[c].tolist() for c in quotes.to_frame()},
                                            "vol": implied})
        result = calibrate(curves=curve, quotes=rebuilt)
        assert result.status.tolist() == ["converged"]
        assert result.a[0] == pytest.approx(0.06, rel=1e-8)
        assert result.sigma[0] == pytest.approx(0.011, rel=1e-9)
        assert np.abs(result.error).max() <= 1e-9
        assert result.model_vol == pytest.approx(rebuilt.vol, rel=1e-8)


def test_statuses_and_messages(eur):
    curve, _handle = eur
    quotes = VolQuotes.from_columns(
        curve=["up", "up", "up", "up", "up", "one", "none", "none"],
        expiry=["1Y", "1Y", "1Y", "5Y", "5Y", "1Y", "1Y", "2Y"], tenor=["1Y", "5Y", "10Y", "1Y", "10Y", "5Y", "5Y", "5Y"],
        vol=[0.005, 0.008, 0.011, 0.006, 0.012, 0.009, 0.009, 0.009], kind="normal", weight=[1, 1, 1, 1, 1, 1, 0, 0])
    result = calibrate(curves={"up": curve, "one": curve, "none": curve}, quotes=quotes)
    assert result.status.tolist() == ["bound", "no fit", "no fit"]
    assert "a at its lower bound" in result.message[0] and "mean reversion" in result.message[0]
    assert result.a[0] == pytest.approx(1e-8) and np.isfinite(result.sigma[0])
    assert result.message[1] == "1 quote(s) for 2 free parameters"
    assert result.message[2] == "no quotes with a weight above 0"
    assert np.isnan(result.a[1:]).all() and np.isnan(result.model_price[5:]).all()
    assert not result.ok
    with pytest.raises(trinom.InputError, match="curve 'up': bound"):
        result.raise_for_status()
    # with a fixed, one quote is enough
    fixed = calibrate(curves={"up": curve, "one": curve, "none": curve}, quotes=quotes, a={"one": 0.03})
    assert fixed.status.tolist()[1] == "converged"
    # an upper bound
    capped = calibrate(curves={"up": curve, "one": curve, "none": curve}, quotes=quotes,
                       bounds={"sigma": (1e-6, 0.004)}, a=0.05)
    assert capped.status[0] == "bound" and "sigma at its upper bound 0.004" in capped.message[0]


def test_result_tables(eur):
    curve, _handle = eur
    result = calibrate(curves=curve, quotes=matrix("normal"))
    frame = result.to_frame()
    assert len(frame) == 11
    assert list(frame.columns) == ["curve", "expiry", "tenor", "kind", "shift", "instrument", "exercise", "end",
                                   "forward", "strike", "annuity", "payer", "weight", "market_vol", "model_vol",
                                   "market_price", "model_price", "residual", "error", "reachable", "a", "sigma",
                                   "status", "where"]
    assert frame["residual"].to_numpy() == pytest.approx(result.model_price - result.market_price)
    assert frame["error"].to_numpy() == pytest.approx(result.residual / result.market_price)
    assert (frame["strike"] == frame["forward"]).all() and not frame["payer"].any()  # at the money: receivers
    curves = result.curves_frame()
    assert curves.loc[0, "status"] == "converged" and curves.loc[0, "quotes"] == 11
    assert curves.loc[0, "objective"] == pytest.approx(float(np.sum(result.error ** 2)))
    assert result.parameters() == {"EUR": (float(result.a[0]), float(result.sigma[0]))}


def test_weights(eur):
    curve, _handle = eur
    quotes = matrix("normal")
    w = np.linspace(0.5, 2.0, 11)
    result = calibrate(curves=curve, quotes=quotes, weights=w)
    # the weighted objective is stationary: its gradient, by differences, vanishes
    basket = result.instruments

    def objective(a: float, sigma: float) -> float:
        e = basket.model_price(a=a, sigma=sigma, root="exact") / basket.market_price - 1
        return float(np.sum(w * e * e))

    a, sigma = result.a[0], result.sigma[0]
    for da, ds in [(1e-6 * a, 0.0), (0.0, 1e-6 * sigma)]:
        slope = (objective(a + da, sigma + ds) - objective(a - da, sigma - ds)) / 2
        assert abs(slope) <= 1e-12 * objective(a, sigma)
    assert calibrate(curves=curve, quotes=quotes, weights=w * 7).a[0] == pytest.approx(a, rel=1e-10)


def test_bad_arguments(eur):
    curve, _handle = eur
    quotes = matrix("normal")
    with pytest.raises(trinom.InputError, match="error must be one of"):
        calibrate(curves=curve, quotes=quotes, error="vega")
    with pytest.raises(trinom.InputError, match="is as of 2025-01-02, not 2025-01-03"):
        calibrate(curves=curve, quotes=quotes, as_of="2025-01-03")
    with pytest.raises(trinom.InputError, match="curve 'USD' is not among the curves"):
        calibrate(curves=curve, quotes=matrix("normal", "USD"))
    with pytest.raises(trinom.InputError, match="weight must be"):
        calibrate(curves=curve, quotes=quotes, weights=-1.0)
    with pytest.raises(trinom.InputError, match="a must be a finite number > 0"):
        calibrate(curves=curve, quotes=quotes, a=-0.1)
    with pytest.raises(trinom.InputError, match=r"lognormal quote needs strike \+ shift > 0"):
        calibrate(curves=curve, quotes=VolQuotes.from_columns(curve="EUR", expiry="1Y", tenor="5Y", vol=0.2,
                                                              kind="lognormal", strike=-0.01))
    # the test curve has a negative forward about 2.5 years out: a lognormal cap across it needs a shift
    cap = {"curve": "EUR", "expiry": "3M", "tenor": "9Y", "vol": 0.2, "kind": "lognormal", "instrument": "cap"}
    with pytest.raises(trinom.InputError, match="a lognormal cap needs every caplet's forward"):
        calibrate(curves=curve, quotes=VolQuotes.from_columns(**cap))
    assert quote_instruments(VolQuotes.from_columns(**cap, shift=0.03), curve).market_price[0] > 0


# --- the quote file ---------------------------------------------------------------------------------------------------

def test_read_vol_quotes_csv_and_parquet(tmp_path: Path, eur):
    curve, _handle = eur
    text = ("curve,expiry,tenor,vol,kind,shift,strike,frequency,day_count,weight,instrument\n"
            "EUR,1Y,5Y,0.0085,normal,,,,,,\n"
            "EUR,2Y,10Y,0.21,Lognormal,0.01,ATM,2,ACT/360,2,swaption\n"
            "EUR,6M,18M,0.009,N,,0.03,,,,\n"
            "\n"
            "EUR,3M,4Y9M,0.3,black,,,,,,cap\n")
    path = tmp_path / "vols.csv"
    path.write_text(text)
    quotes = read_vol_quotes(path)
    assert len(quotes) == 4
    assert quotes.kind.tolist() == ["normal", "lognormal", "normal", "lognormal"]
    assert quotes.frequency.tolist() == [1, 2, 1, 4] and quotes.day_count.tolist()[1:] == ["ACT/360", "30/360", "ACT/360"]
    assert quotes.weight.tolist() == [1.0, 2.0, 1.0, 1.0] and quotes.shift.tolist() == [0.0, 0.01, 0.0, 0.0]
    assert np.isnan(quotes.strike[[0, 1, 3]]).all() and quotes.strike[2] == 0.03
    assert quotes.where == ("vols.csv line 2", "vols.csv line 3", "vols.csv line 4", "vols.csv line 6")
    basket = quote_instruments(quotes, {"EUR": curve})
    assert str(basket.exercise[0]) == "2026-01-02" and str(basket.end[0]) == "2031-01-02"
    assert str(basket.exercise[2]) == "2025-07-02" and str(basket.end[2]) == "2027-01-02"
    assert str(basket.end[3]) == "2030-01-02" and basket.caps is not None and int(basket.caps.count[0]) == 19
    frame = quotes.to_frame()
    table = pa.table({c: [None if (isinstance(v, float) and np.isnan(v)) else v for v in frame[c].tolist()]
                      for c in frame.columns})
    pq.write_table(table, tmp_path / "vols.parquet")
    again = read_vol_quotes(tmp_path / "vols.parquet")
    assert again.where[0] == "vols.parquet row 1"
    assert again.to_frame().equals(frame)


def test_read_vol_quotes_reports_every_bad_cell(tmp_path: Path):
    path = tmp_path / "vols.csv"
    path.write_text("curve,expiry,tenor,vol,kind,shift,day_count,instrument\n"
                    "EUR,1X,5Y,0.0085,normal,,,\n"
                    "EUR,1Y,0Y,-0.1,normal,0.01,,\n"
                    "EUR,1Y,5Y,abc,smile,,ACT/ACT-ICMA,cap\n"
                    "EUR,1Y,5Y,0.2,lognormal,,30/365,collar\n")
    with pytest.raises(trinom.InputError) as caught:
        read_vol_quotes(path)
    messages = [m for _r, _f, m in caught.value.errors]
    assert [(r, f) for r, f, _m in caught.value.errors] == [
        (0, "expiry"), (1, "tenor"), (1, "vol"), (1, "shift"), (2, "kind"), (2, "vol"), (2, "day_count"),
        (3, "instrument"), (3, "day_count")]
    assert messages[0] == "vols.csv line 2: expiry '1X' is not a period longer than zero (such as 6M, 1Y, 10Y, 2W, 10D)"
    assert messages[2] == "vols.csv line 3: vol must be a finite number > 0, got '-0.1'"
    assert messages[3] == "vols.csv line 3: a shift applies to lognormal quotes only"
    assert "ACT/ACT-ICMA is not supported" in messages[6]
    assert str(caught.value).startswith("row 0: vols.csv line 2: expiry '1X'")
    path.write_text("curve,expiry,tenor,vol\nEUR,1Y,5Y,0.01\n")
    with pytest.raises(trinom.InputError, match="lacks column 'kind'"):
        read_vol_quotes(path)
    path.write_text("curve,expiry,tenor,vol,kind,colour\nEUR,1Y,5Y,0.01,normal,red\n")
    with pytest.raises(trinom.InputError, match="unknown column 'colour'"):
        read_vol_quotes(path)
    path.write_text("curve,expiry,tenor,vol,kind\n")
    with pytest.raises(trinom.InputError, match="no quotes"):
        read_vol_quotes(path)


def test_calibrate_from_a_file(tmp_path: Path, eur):
    curve, _handle = eur
    path = tmp_path / "vols.csv"
    matrix("normal").to_frame().drop(columns=["strike", "shift"]).to_csv(path, index=False)
    from_file = calibrate(curves=curve, quotes=path)
    direct = calibrate(curves=curve, quotes=matrix("normal"))
    assert from_file.a[0] == direct.a[0] and from_file.sigma[0] == direct.sigma[0]


# --- the solver --------------------------------------------------------------------------------------------------------

def test_levenberg_marquardt_batches_bounds_masks_and_fixed_parameters():
    """Fit y = p0 exp(-p1 t) to four batch elements at once: unequal numbers of points (masks), a bound that binds,
    a fixed parameter."""
    t = np.linspace(0.0, 4.0, 9)
    truth = np.array([[2.0, 0.5], [1.0, 1.5], [3.0, 0.2], [1.0, 0.8]])
    y = truth[:, :1] * np.exp(-truth[:, 1:] * t)
    y[3] += 0.01 * np.sin(7 * t)  # a residual that stays

    def fun(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        model = x[:, :1] * np.exp(-x[:, 1:] * t)
        return model - y[rows], np.stack([model / x[:, :1], -t * model], axis=2)

    mask = np.ones((4, 9), dtype=bool)
    mask[1, 5:] = False
    upper = np.array([[10.0, 10.0], [10.0, 10.0], [10.0, 0.1], [10.0, 10.0]])
    free = np.array([[True, True], [True, True], [True, True], [False, True]])
    out = levenberg_marquardt(fun, np.ones((4, 2)), lower=1e-6, upper=upper, free=free, mask=mask)
    assert out.code.tolist() == [0, 0, 0, 0]
    assert out.x[0] == pytest.approx(truth[0], rel=1e-10)
    assert out.x[1] == pytest.approx(truth[1], rel=1e-10)
    assert out.x[2, 1] == 0.1 and out.at_upper[2].tolist() == [False, True]
    assert out.x[3, 0] == 1.0 and not out.at_upper[3].any()
    # not enough residuals for the free parameters
    few = levenberg_marquardt(fun, np.ones((4, 2)), mask=np.arange(9)[None, :] < np.array([[9], [1], [0], [9]]))
    assert few.code.tolist()[1:3] == [calibration_module.NOT_RUN, calibration_module.NOT_RUN]


def test_doctests():
    for module in (quotes_module, calibration_module):
        assert doctest.testmod(module).failed == 0


def test_report_worst_agreement():
    """Prints the worst agreement figures of this file (run with -s to see them)."""
    for name, value in WORST.items():
        print(f"{name}: {value:.2e}")
