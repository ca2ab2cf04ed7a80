"""Two curves (issue 37): swaptions and caps whose floating rates are projected on a forecast curve apart from the
discount curve, under a deterministic basis (trinom.model.rate_options). The closed forms against QuantLib 1.44
(FdHullWhiteSwaptionEngine, whose forwarding model is driven by the discount model's state; Gaussian1dCapFloorEngine
with a discount curve), the trees against the closed forms and against QuantLib's FD engine for Bermudans, the
scenarios and key rates that move each curve, and the rows refused."""

from __future__ import annotations

import numpy as np
import pytest
import QuantLib
import trinom
from trinom.errors import InputError
from trinom.instruments import Trades
from trinom.model import Caps, DatedCurve, Swaptions
from trinom.scenarios import CurveShift

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
DISCOUNT = [0.025, 0.028, 0.031, 0.033]  # an OIS curve
FORECAST = [0.028, 0.032, 0.035, 0.036]  # a 6M term-rate curve above it
A, SIGMA = 0.05, 0.01
#: Per 100 of notional: QuantLib's FD engine at 800 x 800 against Jamshidian with the basis (measured 3.5e-7).
FD_EUROPEAN = 2e-5
#: Per 100: QuantLib's Gaussian1d cap engine (128 points) against the caplets' closed form (measured 4.4e-5).
GAUSSIAN1D_CAPS = 1.5e-4
#: Per 100: the tree at 365 steps a year against the closed forms (measured 2.5e-4 swaptions, 3.3e-4 caps).
TREE_365 = 1e-3
#: Per 100: the tree at 365 steps a year against QuantLib's FD engine (800 x 800) for Bermudans (measured 5.0e-4).
TREE_BERMUDAN = 1.5e-3


def curve(name: str, zeros: list[float], shift: float = 0.0) -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=[z + shift for z in zeros], name=name)


@pytest.fixture(scope="module")
def curves() -> dict[str, DatedCurve]:
    return {"ESTR": curve("ESTR", DISCOUNT), "EUR6M": curve("EUR6M", FORECAST)}


def swaption_book(**overrides: object) -> Trades:
    """Two Europeans (payer, receiver) and a Bermudan receiver into 5- and 10-year swaps: fixed annual ACT/365F, the
    floating leg semi-annual on EUR6M, discounted on ESTR."""
    columns: dict[str, object] = dict(
        id=["P1", "R1", "B1"], type="swaption", notional=100.0, start="2027-11-25",
        maturity=["2032-11-25", "2032-11-25", "2037-11-25"], rate=[0.034, 0.034, 0.036], frequency=1,
        day_count="ACT/365F", calendar="NONE", convention="U", option=["payer", "receiver", "receiver"],
        exercise=["european", "european", "bermudan"], float_frequency=2, a=A, sigma=SIGMA, curve="ESTR",
        forecast_curve="EUR6M", steps_per_year=365)
    columns.update(overrides)
    return Trades(as_of=AS_OF, **columns)


def cap_book(**overrides: object) -> Trades:
    columns: dict[str, object] = dict(
        id=["C1", "F1"], type=["cap", "floor"], notional=100.0, start="2027-02-25", maturity="2031-11-25", rate=0.033,
        frequency=4, day_count="ACT/365F", a=A, sigma=SIGMA, curve="ESTR", forecast_curve="EUR6M",
        steps_per_year=365)
    columns.update(overrides)
    return Trades(as_of=AS_OF, **columns)


def ql_market(curves: dict[str, DatedCurve]) -> tuple[object, object]:
    ql = QuantLib
    today = ql.DateParser.parseISO(AS_OF)
    ql.Settings.instance().evaluationDate = today
    dates = [today] + [ql.DateParser.parseISO(d) for d in PILLARS]
    handles = []
    for name in ("ESTR", "EUR6M"):
        discounts = [1.0] + [float(curves[name].discount([d])[0]) for d in PILLARS]
        table = ql.DiscountCurve(dates, discounts, ql.Actual365Fixed())
        table.enableExtrapolation()  # the Gaussian1d model's numeraire date lies beyond the last pillar
        handles.append(ql.YieldTermStructureHandle(table))
    return handles[0], handles[1]


def ql_swaption(curves: dict[str, DatedCurve], maturity: str, rate: float, payer: bool, bermudan: bool,
                grid: int = 800) -> tuple[float, float]:
    """QuantLib's FdHullWhiteSwaptionEngine price per 100 and the swap's fair rate."""
    ql = QuantLib
    discount, forecast = ql_market(curves)
    index = ql.IborIndex("E6M", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), forecast)
    start, end = ql.DateParser.parseISO("2027-11-25"), ql.DateParser.parseISO(maturity)
    fixed = ql.Schedule(start, end, ql.Period(1, ql.Years), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                        ql.DateGeneration.Backward, False)
    floating = ql.Schedule(start, end, ql.Period(6, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                           ql.DateGeneration.Backward, False)
    swap = ql.VanillaSwap(ql.Swap.Payer if payer else ql.Swap.Receiver, 100.0, fixed, rate, ql.Actual365Fixed(),
                          floating, index, 0.0, ql.Actual365Fixed())
    swap.setPricingEngine(ql.DiscountingSwapEngine(discount))
    exercise = (ql.BermudanExercise(list(fixed)[:-1]) if bermudan else ql.EuropeanExercise(start))
    option = ql.Swaption(swap, exercise)
    option.setPricingEngine(ql.FdHullWhiteSwaptionEngine(ql.HullWhite(discount, A, SIGMA), grid, grid))
    return option.NPV(), swap.fairRate()


def closed_swaptions(curves: dict[str, DatedCurve]) -> Swaptions:
    return Swaptions.on_curve(curves["ESTR"], exercise=["2027-11-25"] * 2, end=["2032-11-25"] * 2, fixed_rate=0.034,
                              frequency=1, day_count="ACT/365F", payer=[True, False], notional=100.0,
                              forecast_curve=curves["EUR6M"], float_frequency=2)


def test_forward_swap_rate_on_two_curves_is_quantlibs(curves: dict[str, DatedCurve]) -> None:
    swaptions = closed_swaptions(curves)
    _price, fair = ql_swaption(curves, "2032-11-25", 0.034, True, False, grid=50)
    assert swaptions.forward_rate[0] == pytest.approx(fair, abs=1e-13)
    single = Swaptions.on_curve(curves["ESTR"], exercise=["2027-11-25"], end=["2032-11-25"], frequency=1,
                                day_count="ACT/365F")
    assert swaptions.forward_rate[0] - single.forward_rate[0] > 3e-3  # the basis moves the fair rate up


def test_jamshidian_with_the_basis_matches_quantlibs_fd_engine(curves: dict[str, DatedCurve]) -> None:
    swaptions = closed_swaptions(curves)
    expected = [ql_swaption(curves, "2032-11-25", 0.034, payer, False)[0] for payer in (True, False)]
    for root in ("exact", "quantlib"):
        assert swaptions.price(a=A, sigma=SIGMA, root=root) == pytest.approx(expected, abs=FD_EUROPEAN)
    # the single-curve price is far from it: the basis is not a rounding
    single = Swaptions.on_curve(curves["ESTR"], exercise=["2027-11-25"] * 2, end=["2032-11-25"] * 2,
                                fixed_rate=0.034, frequency=1, day_count="ACT/365F", payer=[True, False],
                                notional=100.0)
    assert np.all(np.abs(single.price(a=A, sigma=SIGMA) - np.array(expected)) > 0.5)


def test_caps_on_a_forecast_curve_match_quantlibs_gaussian1d_engine(curves: dict[str, DatedCurve]) -> None:
    ql = QuantLib
    discount, forecast = ql_market(curves)
    gsr = ql.Gsr(discount, [], [ql.QuoteHandle(ql.SimpleQuote(SIGMA))], [ql.QuoteHandle(ql.SimpleQuote(A))], 60.0)
    index = ql.IborIndex("E3M", ql.Period(3, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), forecast)
    schedule = ql.Schedule(ql.DateParser.parseISO("2027-02-25"), ql.DateParser.parseISO("2031-11-25"),
                           ql.Period(3, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                           ql.DateGeneration.Forward, False)
    leg = ql.IborLeg([100.0], schedule, index, ql.Actual365Fixed())
    expected = []
    for instrument in (ql.Cap(leg, [0.033]), ql.Floor(leg, [0.033])):
        instrument.setPricingEngine(ql.Gaussian1dCapFloorEngine(gsr, 128, 8.0, True, False, discount))
        expected.append(instrument.NPV())
    caps = Caps.on_curve(curves["ESTR"], start=["2027-02-25"] * 2, end=["2031-11-25"] * 2, strike=0.033, frequency=4,
                         day_count="ACT/365F", cap=[True, False], notional=100.0, forecast_curve=curves["EUR6M"])
    assert caps.price(a=A, sigma=SIGMA) == pytest.approx(expected, abs=GAUSSIAN1D_CAPS)
    forwards = caps.caplet_forwards[0, : caps.count[0]]
    assert np.all(forwards > Caps.on_curve(curves["ESTR"], start=["2027-02-25"], end=["2031-11-25"], frequency=4,
                                           day_count="ACT/365F").caplet_forwards[0, : caps.count[0]])


@pytest.mark.parametrize(("backend", "target"), [("reference", None), ("futhark", "c"), ("futhark", "multicore")])
def test_trees_on_two_curves_match_the_closed_forms(curves: dict[str, DatedCurve], backend: str,
                                                    target: str | None) -> None:
    if backend != "reference" and not trinom.engines.get(backend).available(target)[0]:
        pytest.fail(f"{backend} {target} is not built: run make lib")
    europeans = swaption_book(id=["P1", "R1"], maturity="2032-11-25", rate=0.034, option=["payer", "receiver"],
                              exercise="european")
    prices = trinom.price(europeans, curves, backend=backend, target=target).price
    assert prices == pytest.approx(closed_swaptions(curves).price(a=A, sigma=SIGMA, root="exact"), abs=TREE_365)
    caps = trinom.price(cap_book(), curves, backend=backend, target=target).price
    closed = Caps.on_curve(curves["ESTR"], start=["2027-02-25"] * 2, end=["2031-11-25"] * 2, strike=0.033,
                           frequency=4, day_count="ACT/365F", cap=[True, False], notional=100.0,
                           forecast_curve=curves["EUR6M"])
    assert caps == pytest.approx(closed.price(a=A, sigma=SIGMA), abs=TREE_365)


def test_engines_agree_on_two_curves(curves: dict[str, DatedCurve]) -> None:
    book = swaption_book(steps_per_year=48)
    reference = trinom.price(book, curves, backend="reference").price
    fast = trinom.price(book, curves, backend="futhark", target="c").price
    assert fast == pytest.approx(reference, abs=1e-11)


def test_bermudan_on_two_curves_matches_quantlibs_fd_engine(curves: dict[str, DatedCurve]) -> None:
    book = swaption_book(id=["B1", "B2"], maturity="2037-11-25", rate=[0.036, 0.033], option=["receiver", "payer"],
                         exercise="bermudan")
    prices = trinom.price(book, curves, backend="futhark", target="c").price
    expected = [ql_swaption(curves, "2037-11-25", 0.036, False, True)[0],
                ql_swaption(curves, "2037-11-25", 0.033, True, True)[0]]
    assert prices == pytest.approx(expected, abs=TREE_BERMUDAN)


def test_a_forecast_curve_equal_to_the_curve_is_one_curve(curves: dict[str, DatedCurve]) -> None:
    same = trinom.price(swaption_book(forecast_curve="ESTR", steps_per_year=24), curves, backend="futhark",
                        target="c").price
    none = trinom.price(swaption_book(forecast_curve=None, steps_per_year=24), curves, backend="futhark",
                        target="c").price
    assert np.array_equal(same, none)
    assert not swaption_book(forecast_curve="ESTR").has_two_curves(("ESTR", "EUR6M"))


def test_an_ois_floating_leg_is_its_compounded_forward(curves: dict[str, DatedCurve]) -> None:
    ibor = trinom.price(swaption_book(steps_per_year=24), curves, backend="futhark", target="c").price
    ois = trinom.price(swaption_book(steps_per_year=24, index="ois"), curves, backend="futhark", target="c").price
    assert np.array_equal(ibor, ois)


def test_scenarios_move_the_basis(curves: dict[str, DatedCurve]) -> None:
    """A scenario grid prices each scenario's own basis: the same as pricing in the moved curves."""
    book = swaption_book(steps_per_year=24)
    h = 1e-4
    grid = trinom.price(book, curves, backend="futhark", target="c",
                        scenarios=[None, CurveShift(h, curve="EUR6M"), CurveShift(h, curve="ESTR"), CurveShift(h)])
    assert grid.price.shape == (4, 3)
    moved = [curves, {"ESTR": curves["ESTR"], "EUR6M": curve("EUR6M", FORECAST, h)},
             {"ESTR": curve("ESTR", DISCOUNT, h), "EUR6M": curves["EUR6M"]},
             {"ESTR": curve("ESTR", DISCOUNT, h), "EUR6M": curve("EUR6M", FORECAST, h)}]
    for s, market in enumerate(moved):
        alone = trinom.price(book, market, backend="futhark", target="c").price
        assert grid.price[s] == pytest.approx(alone, abs=1e-12)
    # the forecast curve's move is most of it: a payer gains, a receiver loses
    assert grid.price[1, 0] - grid.price[0, 0] > 0.01 and grid.price[1, 1] - grid.price[0, 1] < -0.01


def test_key_rates_of_each_curve(curves: dict[str, DatedCurve]) -> None:
    table = trinom.risk(swaption_book(steps_per_year=24), curves, backend="futhark", target="c",
                        measures=["duration", "krd"])
    krd = table[table.measure == "krd"]
    assert set(krd.factor.str.split(":").str[0]) == {"ESTR", "EUR6M"}
    duration = table[table.measure == "duration"].set_index("id").value
    summed = krd.groupby("id").value.sum()
    for trade in ("P1", "R1", "B1"):
        assert summed[trade] == pytest.approx(duration[trade], rel=2e-3)
        forecast = krd[(krd.id == trade) & krd.factor.str.startswith("EUR6M")].value.abs().sum()
        discount = krd[(krd.id == trade) & krd.factor.str.startswith("ESTR")].value.abs().sum()
        assert forecast > 5 * discount  # a swaption's rate risk is mostly on its forecast curve


@pytest.mark.parametrize(("overrides", "field", "words"), [
    ({"forecast_curve": ["EUR6M", "USD3M", "EUR6M"]}, "forecast_curve", "not one of the curves"),
    ({"index": ["ibor", "sofr", "ibor"]}, "index", "index must be one of ibor, ois"),
    ({"frequency": 2, "float_frequency": 1}, "float_frequency", "must start on every exercise date"),
])
def test_bad_two_curve_rows_are_refused_by_row_and_field(curves: dict[str, DatedCurve], overrides: dict[str, object],
                                                          field: str, words: str) -> None:
    result = trinom.price(swaption_book(steps_per_year=12, **overrides), curves, backend="futhark", target="c",
                          errors="mask")
    bad = np.flatnonzero(result.error != "")
    assert bad.size and all(words in str(result.error[k]) for k in bad)
    assert np.all(np.isnan(result.price[bad])) and np.all(np.isfinite(np.delete(result.price, bad)))
    with pytest.raises(InputError) as raised:
        trinom.price(swaption_book(steps_per_year=12, **overrides), curves, backend="futhark", target="c")
    assert any(f == field and words in m for _r, f, m in raised.value.errors)


def test_an_ois_cap_and_a_forecast_curve_on_a_bond_are_refused(curves: dict[str, DatedCurve]) -> None:
    with pytest.raises(InputError, match="compounded overnight rate"):
        trinom.price(cap_book(index="ois"), curves)
    bond = Trades(as_of=AS_OF, id=["B"], type=["bond"], issue=["2025-11-25"], maturity=["2030-11-25"], coupon=[0.03],
                  frequency=[1], a=A, sigma=SIGMA, curve="ESTR", forecast_curve="EUR6M")
    with pytest.raises(InputError, match="forecast_curve does not apply to a bond"):
        trinom.price(bond, curves)


def test_recalibration_on_two_curves_fits_and_lowers_again_in_every_scenario(curves: dict[str, DatedCurve]) -> None:
    """A recalibrated scenario grid of a two-curve book: in each scenario the discount curve's model is fitted to the
    quotes on both moved curves, and the book lowered on them: the same as fitting and pricing in that market."""
    from trinom.analytics import Recalibration
    from trinom.model import VolQuotes, calibrate

    quotes = VolQuotes.from_columns(curve="ESTR", expiry=["1Y", "2Y"], tenor="5Y", vol=[0.0085, 0.0088], kind="normal",
                                    frequency=1, day_count="ACT/365F", forecast_curve="EUR6M", float_frequency=2)
    book = swaption_book(steps_per_year=24)  # its sigma is replaced by the fit in every scenario
    h = 1e-4
    how = Recalibration(vols=quotes, per="curve", a=A)
    grid = trinom.price(book, curves, backend="futhark", target="c", recalibrate=how,
                        scenarios=[None, CurveShift(h, curve="EUR6M")])
    for s, market in enumerate([curves, {"ESTR": curves["ESTR"], "EUR6M": curve("EUR6M", FORECAST, h)}]):
        fit = calibrate(curves=market, quotes=quotes, a=A)
        sigma = float(fit.sigma[fit.curve_names.index("ESTR")])
        alone = trinom.price(swaption_book(steps_per_year=24, sigma=sigma), market, backend="futhark", target="c")
        assert grid.price[s] == pytest.approx(alone.price, abs=1e-9)
    assert np.all(grid.price[1] != grid.price[0])


def test_quotes_on_two_curves_calibrate_and_reprice(curves: dict[str, DatedCurve], tmp_path: object) -> None:
    """A vols.csv quote names its forecast_curve: its forward and market price take both curves, the fitted sigma
    reprices it in the closed form, and the tree prices the same swaption with that sigma near its market price."""
    from pathlib import Path

    from trinom.model import calibrate, quote_instruments, read_vol_quotes

    path = Path(str(tmp_path)) / "vols.csv"
    path.write_text("curve,expiry,tenor,vol,kind,frequency,day_count,forecast_curve,float_frequency\n"
                    "ESTR,1Y,5Y,0.0085,normal,1,ACT/365F,EUR6M,2\n")
    quotes = read_vol_quotes(path)
    assert quotes.forecast_curve.tolist() == ["EUR6M"] and quotes.float_frequency.tolist() == [2]
    basket = quote_instruments(quotes, curves)
    expected_forward = Swaptions.on_curve(curves["ESTR"], exercise=["2027-11-25"], end=["2032-11-25"], frequency=1,
                                          day_count="ACT/365F", forecast_curve=curves["EUR6M"],
                                          float_frequency=2).forward_rate
    assert basket.forward == pytest.approx(expected_forward, abs=1e-15)
    fit = calibrate(curves=curves, quotes=quotes, a=A)
    on = fit.curve_names.index("ESTR")  # the model is the discount curve's; EUR6M has no quote of its own
    assert fit.status[on] == "converged"
    assert fit.model_price == pytest.approx(fit.market_price, rel=1e-10)
    sigma = float(fit.sigma[on])
    book = swaption_book(id=["Q"], maturity="2032-11-25", rate=float(basket.forward[0]), option=["receiver"],
                         exercise="european", sigma=sigma)
    tree = trinom.price(book, curves, backend="futhark", target="c").price
    assert tree[0] == pytest.approx(100.0 * fit.market_price[0], abs=TREE_365)


def flat_surface(vol: float = 0.0085) -> object:
    """ESTR's matrix of normal volatilities, one number at every node (a lookup anywhere gives it exactly)."""
    from trinom.model import VolQuotes

    return VolQuotes.from_columns(curve="ESTR", expiry=["1Y", "1Y", "10Y", "10Y"], tenor=["1Y", "20Y", "1Y", "20Y"],
                                  vol=vol, kind="normal")


def test_per_trade_baskets_of_two_curve_swaptions_project_on_the_forecast_curve(curves: dict[str, DatedCurve]) -> None:
    """A swaption's basket keeps its forecast curve and floating frequency: each quote's forward is the two-curve
    forward of Swaptions.on_curve (1e-15), a forecast curve equal to the curve is one curve."""
    from trinom.analytics.baskets import book_baskets, prepare_baskets

    baskets = book_baskets(swaption_book(forecast_curve=[None, "EUR6M", "ESTR"]), ("ESTR", "EUR6M"))
    assert baskets.forecast.tolist() == ["", "EUR6M", ""] and baskets.float_frequency.tolist() == [2, 2, 2]
    assert set(baskets.note.tolist()) == {""}
    prepared = prepare_baskets(baskets, flat_surface(), AS_OF, curves=curves)
    assert prepared.two_curves
    quotes = prepared.quotes(curves)
    exercise = [str(d) for d in quotes.exercise]
    one = Swaptions.on_curve(curves["ESTR"], exercise=exercise, end=[str(d) for d in quotes.end], frequency=1,
                             day_count="ACT/365F").forward_rate
    two = Swaptions.on_curve(curves["ESTR"], exercise=exercise, end=[str(d) for d in quotes.end], frequency=1,
                             day_count="ACT/365F", forecast_curve=curves["EUR6M"], float_frequency=2).forward_rate
    projected = quotes.trade == 1
    np.testing.assert_allclose(quotes.forward[projected], two[projected], rtol=0, atol=1e-15)
    np.testing.assert_allclose(quotes.forward[~projected], one[~projected], rtol=0, atol=1e-15)
    assert np.all(two[projected] - one[projected] > 1e-3)  # EUR6M lies 30-40 bp above ESTR


def test_per_trade_calibration_on_two_curves_fits_as_the_curve_calibration(curves: dict[str, DatedCurve]) -> None:
    """A European on two curves, a fixed: its one quote is the vols.csv quote of the same swap (1Y into 5Y, fixed
    annual ACT/365F, floating semi-annual on EUR6M), so the per-trade sigma is the curve calibration's, and it
    reprices the quote to 1e-10 relative. The Bermudan's co-terminal quotes fit; a Futhark backend is refused
    (its swaptions are on one curve) and ``auto`` fits in NumPy."""
    from trinom.analytics.baskets import book_baskets, calibrate_baskets
    from trinom.model import VolQuotes, calibrate

    book = swaption_book(id=["R1", "B1"], maturity=["2032-11-25", "2037-11-25"], rate=[0.034, 0.036],
                         option="receiver", exercise=["european", "bermudan"])
    baskets = book_baskets(book, ("ESTR", "EUR6M"))
    fit = calibrate_baskets(curves=curves, vols=flat_surface(), as_of=AS_OF, baskets=baskets, a=A, backend="auto")
    assert fit.status.tolist() == ["converged", "converged"]
    assert fit.model_price[fit.trade == 0] == pytest.approx(fit.market_price[fit.trade == 0], rel=1e-10)
    quote = VolQuotes.from_columns(curve="ESTR", expiry="1Y", tenor="5Y", vol=0.0085, kind="normal", frequency=1,
                                   day_count="ACT/365F", forecast_curve="EUR6M", float_frequency=2)
    by_curve = calibrate(curves=curves, quotes=quote, a=A)
    assert fit.sigma[0] == pytest.approx(float(by_curve.sigma[by_curve.curve_names.index("ESTR")]), rel=1e-9)
    one_curve = calibrate_baskets(curves=curves, vols=flat_surface(), as_of=AS_OF,
                                  baskets=book_baskets(book.with_columns(forecast_curve=None), ("ESTR", "EUR6M")), a=A)
    assert abs(fit.sigma[0] / one_curve.sigma[0] - 1.0) > 1e-4  # the basis moves the fit
    with pytest.raises(InputError, match="fits swaptions on one curve"):
        calibrate_baskets(curves=curves, vols=flat_surface(), as_of=AS_OF, baskets=baskets, a=A, backend="c")


def test_per_trade_model_on_two_curves_round_trips_into_price(curves: dict[str, DatedCurve], tmp_path: object) -> None:
    """trinom calibrate trades.csv (a two-curve Bermudan) -> model.csv -> trinom price --model: the priced trade
    takes its own fitted (a, sigma), as pricing the book with them does."""
    from pathlib import Path

    import pandas as pd
    from trinom.cli import main

    folder = Path(str(tmp_path))
    (folder / "curve.csv").write_text("curve,date,zero\n" + "".join(
        f"{name},{d},{z}\n" for name, zeros in (("ESTR", DISCOUNT), ("EUR6M", FORECAST))
        for d, z in zip(PILLARS, zeros, strict=True)))
    (folder / "vols.csv").write_text("curve,expiry,tenor,vol,kind\n" + "".join(
        f"ESTR,{e},{t},0.0085,normal\n" for e in ("1Y", "10Y") for t in ("1Y", "20Y")))
    (folder / "trades.csv").write_text(
        "id,type,notional,start,maturity,rate,frequency,day_count,calendar,convention,option,exercise,"
        "float_frequency,curve,forecast_curve,steps_per_year\n"
        "B1,swaption,100,2027-11-25,2037-11-25,0.036,1,ACT/365F,NONE,U,receiver,bermudan,2,ESTR,EUR6M,24\n")
    files = ["--curve", folder / "curve.csv", "--as-of", AS_OF]
    assert main([str(v) for v in ["calibrate", folder / "trades.csv", *files, "--vols", folder / "vols.csv",
                                  "--a", A, "--out", folder / "model.csv"]]) == 0
    model = pd.read_csv(folder / "model.csv", keep_default_na=False)
    assert model.status.tolist() == ["converged"] and model.quotes.tolist() == [10]
    assert main([str(v) for v in ["price", folder / "trades.csv", *files, "--model", folder / "model.csv",
                                  "--backend", "futhark", "--target", "c", "--out", folder / "prices.csv"]]) == 0
    priced = pd.read_csv(folder / "prices.csv")
    alone = trinom.price(swaption_book(id=["B1"], maturity="2037-11-25", rate=0.036, option="receiver",
                                       exercise="bermudan", a=float(model.a[0]), sigma=float(model.sigma[0]),
                                       steps_per_year=24), curves, backend="futhark", target="c")
    assert priced.price.tolist() == pytest.approx(alone.price.tolist(), abs=1e-12)


def test_per_trade_recalibration_on_two_curves_fits_and_prices_in_every_scenario(
        curves: dict[str, DatedCurve]) -> None:
    """A scenario grid recalibrated per trade: in each scenario (here EUR6M moved) every trade's basket is priced on
    both moved curves and fitted again: the same as fitting the baskets and pricing in that market apart."""
    from trinom.analytics import Recalibration
    from trinom.analytics.baskets import book_baskets, calibrate_baskets

    book = swaption_book(steps_per_year=24)
    h = 1e-4
    how = Recalibration(vols=flat_surface(), per="trade", a=A)
    grid = trinom.price(book, curves, backend="futhark", target="c", recalibrate=how,
                        scenarios=[None, CurveShift(h, curve="EUR6M")])
    sigmas = []
    for s, market in enumerate([curves, {"ESTR": curves["ESTR"], "EUR6M": curve("EUR6M", FORECAST, h)}]):
        fit = calibrate_baskets(curves=market, vols=flat_surface(), as_of=AS_OF, baskets=book_baskets(book), a=A)
        alone = trinom.price(book.with_columns(sigma=fit.sigma), market, backend="futhark", target="c")
        assert grid.price[s] == pytest.approx(alone.price, abs=1e-9)
        sigmas.append(fit.sigma)
    assert np.all(sigmas[1] != sigmas[0])  # the forecast curve's move reaches the fit


def test_floating_bonds_have_their_baskets_or_say_why() -> None:
    """A floater's call has no swaption basket (a note, not a crash); a fixed-to-float bond's basket is the swaptions
    into its fixed part: the exercise dates before the switch, ending at the switch date."""
    from trinom.analytics.baskets import book_baskets

    book = Trades(as_of=AS_OF, id=["F", "X"], type="bond", issue="2025-03-15", maturity="2034-03-15",
                  coupon_type=["float", "fixed_to_float"], coupon=[None, 0.04], switch_date=[None, "2029-03-15"],
                  margin=0.003, fixing=0.027, frequency=2, day_count="ACT/365F", option="call", exercise="bermudan",
                  first_exercise="2027-09-15", last_exercise="2033-09-15", exercise_price=100.0, a=A, sigma=SIGMA,
                  curve="ESTR", forecast_curve="EUR6M", steps_per_year=12)
    baskets = book_baskets(book, ("ESTR", "EUR6M"))
    assert len(baskets.exercise_dates(0)) == 0 and "no swaption basket" in baskets.note[0]
    assert [str(d) for d in baskets.exercise_dates(1)] == ["2027-09-15", "2028-03-15", "2028-09-15"]
    assert str(baskets.end[1]) == "2029-03-15" and baskets.rate[1] == 0.04 and baskets.forecast[1] == ""
    assert "on or after the switch date 2029-03-15 are left out" in baskets.note[1]


@pytest.mark.gpu
def test_every_gpu_engine_prices_two_curves_and_floaters_as_the_reference(curves: dict[str, DatedCurve]) -> None:
    """Swaptions and caps on two curves and floating bonds (signed flows, exercise prices below 0) on cuda and on
    Futhark's cuda target, against the float64 reference."""
    floaters = Trades(as_of=AS_OF, id=["F", "C", "P", "X"], type="bond", issue="2025-03-15", maturity="2034-03-15",
                      coupon_type=["float", "float", "float", "fixed_to_float"], coupon=[None, None, None, 0.04],
                      switch_date=[None, None, None, "2029-03-15"], margin=[0.005, -0.002, -0.01, 0.003],
                      fixing=0.027, frequency=2, day_count="ACT/365F", option=[None, "call", "put", "call"],
                      exercise=[None, "bermudan", "bermudan", "bermudan"],
                      first_exercise=[None, "2028-03-15", "2028-03-15", "2027-09-15"],
                      last_exercise=[None, "2033-09-15", "2033-09-15", "2033-09-15"],
                      exercise_price=[None, 100.0, 100.0, 100.0], a=A, sigma=SIGMA, curve="ESTR",
                      forecast_curve="EUR6M", steps_per_year=52)
    books = [swaption_book(steps_per_year=48), cap_book(steps_per_year=48), floaters]
    found = [(b, t) for b, t in (("cuda", None), ("futhark", "cuda")) if trinom.engines.get(b).available(t)[0]]
    assert found, "no GPU engine is built: run make lib on the GPU machine"
    for book in books:
        reference = trinom.price(book, curves, backend="reference").price
        for backend, target in found:
            prices = trinom.price(book, curves, backend=backend, target=target).price
            np.testing.assert_allclose(prices, reference, atol=1e-11, rtol=0, err_msg=f"{backend}/{target}")


def test_recalibrated_key_rates_on_two_curves_sum_to_the_duration(curves: dict[str, DatedCurve]) -> None:
    from trinom.analytics import Recalibration
    from trinom.model import VolQuotes

    quotes = VolQuotes.from_columns(curve="ESTR", expiry=["1Y", "2Y"], tenor="5Y", vol=[0.0085, 0.0088], kind="normal",
                                    frequency=1, day_count="ACT/365F", forecast_curve="EUR6M", float_frequency=2)
    table = trinom.risk(swaption_book(steps_per_year=24), curves, backend="futhark", target="c",
                        recalibrate=Recalibration(vols=quotes, per="curve", a=A), measures=["duration", "krd", "vega"])
    krd = table[table.measure == "krd"]
    assert set(krd.factor.str.split(":").str[0]) == {"ESTR", "EUR6M"}
    duration = table[table.measure == "duration"].set_index("id").value
    for trade, value in krd.groupby("id").value.sum().items():
        assert value == pytest.approx(duration[trade], rel=2e-3)
    assert (table[table.measure == "vega"].value > 0).all()
