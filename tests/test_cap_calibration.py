"""Global calibration to cap strips (trinom.model.calibration.calibrate) against QuantLib 1.44's HullWhite.calibrate
with CapHelpers priced by the AnalyticCapFloorEngine, and the cap quotes' prices against QuantLib's.

**How a quote describes a CapHelper.** ``CapHelper(length, vol, index, fixedLegFrequency, fixedLegDayCounter,
includeFirstSwaplet=False, curve, errorType, volatilityType, shift)`` builds the cap from ``referenceDate + index
tenor`` to ``referenceDate + length`` (both ``Date + Period``, unadjusted), its caplets on a forward schedule of the
index's tenor (the index's calendar and convention), and its strike (at the money) as the fair rate of a swap of
that floating leg against a fixed leg of ``fixedLegFrequency`` and ``fixedLegDayCounter`` over the same dates. With
an index of 0 fixing days on the NullCalendar, Unadjusted, each caplet fixes at its start, its forward spans its own
period on the index's day count and it pays at its end: trinom's caplets. The quote is then

    instrument=cap, expiry=<index tenor>, tenor=<length>, tenor_from=as_of, frequency=12/<index months>,
    day_count=<index day count>, atm_frequency=<fixedLegFrequency>, atm_day_count=<fixedLegDayCounter>

(``tenor_from=as_of``: the cap ends ``length`` after the as-of date, not after its first fixing; ``atm_*``: the
fixed leg of the at-the-money strike, by default the caplets' own). The market value is Black's (shifted) or
Bachelier's formula per caplet with the ACT/365F time to its fixing: trinom's.

QuantLib's fit differentiates its objective by forward differences (``epsfcn`` 1e-8, steps of 1e-4 relative), so it
stops at a point where the *approximate* gradient vanishes: about 1e-6 relative from the minimum on these strips,
whatever its EndCriteria; with ``epsfcn`` 1e-12 its parameters come within 1e-7 of trinom's
(``test_quantlibs_gap_is_its_finite_differences``). trinom's parameters are checked within 1e-4 relative of
QuantLib's, and QuantLib's own cost function is no higher at them than at its own parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

ql = pytest.importorskip("QuantLib")
from quantlib_oracle import on_date, ql_date  # noqa: E402 (after the skip)
from trinom.model import DatedCurve  # noqa: E402
from trinom.model.calibration import calibrate  # noqa: E402
from trinom.model.quotes import VolQuotes, quote_instruments  # noqa: E402

AS_OF = np.datetime64("2025-01-02")
#: Month ends and a leap day, where ``as_of + 3M + 4Y9M`` is not ``as_of + 5Y``.
OTHER_DATES = [np.datetime64("2025-01-31"), np.datetime64("2024-02-29"), np.datetime64("2025-08-31")]
DAY_COUNTS = {"ACT/360": ql.Actual360(), "ACT/365F": ql.Actual365Fixed(),
              "30/360": ql.Thirty360(ql.Thirty360.BondBasis), "30E/360": ql.Thirty360(ql.Thirty360.European)}
FREQUENCIES = {1: ql.Annual, 2: ql.Semiannual, 4: ql.Quarterly, 12: ql.Monthly}
ERRORS = {"relative_price": ql.BlackCalibrationHelper.RelativePriceError,
          "price": ql.BlackCalibrationHelper.PriceError, "vol": ql.BlackCalibrationHelper.ImpliedVolError}
LENGTHS = [1, 2, 3, 4, 5, 7, 10, 12, 15, 20]
#: (index months, index day count, fixed leg frequency, fixed leg day count, kind, shift)
STRIPS = {
    "3M ACT/360, annual 30/360 strike, normal": (3, "ACT/360", 1, "30/360", "normal", 0.0),
    "6M ACT/365F, own strike, lognormal": (6, "ACT/365F", 2, "ACT/365F", "lognormal", 0.0),
    "3M ACT/360, own strike, shifted lognormal": (3, "ACT/360", 4, "ACT/360", "lognormal", 0.01),
    "12M 30/360, semiannual 30E/360 strike, normal": (12, "30/360", 2, "30E/360", "normal", 0.0),
    "1M ACT/360, quarterly ACT/365F strike, shifted lognormal": (1, "ACT/360", 4, "ACT/365F", "lognormal", 0.02),
}
WORST: dict[str, float] = {}


def make_curve(as_of: np.datetime64) -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    """A 31-year curve of 25 pillars, rising from 2.5% with noise, its forwards positive (unshifted Black works)."""
    rng = np.random.default_rng(7)
    days = np.unique(np.concatenate([[30, 90, 180, 270], rng.integers(365, 30 * 365, 20), [30 * 365 + 40]]))
    t = days / 365.0
    zeros = 0.025 + 0.012 * (1 - np.exp(-t / 6)) + rng.normal(0, 0.0004, days.size)
    dfs = np.exp(-zeros * t)
    ours = DatedCurve(as_of=as_of, dates=as_of + days, discount_factors=dfs, name="EUR")
    theirs = ql.DiscountCurve([ql_date(as_of), *(ql_date(d) for d in as_of + days)], [1.0, *dfs], ql.Actual365Fixed())
    return ours, ql.YieldTermStructureHandle(theirs)


@pytest.fixture
def evaluation_date(request):
    yield from on_date(getattr(request, "param", AS_OF))


@pytest.fixture(scope="module")
def eur() -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    return make_curve(AS_OF)


def strip_quotes(curve: DatedCurve, strip: tuple, vols: np.ndarray | None = None, name: str = "EUR",
                 lengths: list[int] | None = None) -> VolQuotes:
    """A strip's quotes as CapHelper conventions (see the module's documentation); without ``vols``: Hull-White
    vols at a = 0.06, sigma = 0.011 perturbed by up to 4% (a fit with residuals, inside the bounds)."""
    months, day_count, fixed_frequency, fixed_day_count, kind, shift = strip
    lengths = [n for n in LENGTHS if 12 * n > months] if lengths is None else lengths

    def quotes(vol: object) -> VolQuotes:
        return VolQuotes.from_columns(curve=name, expiry=f"{months}M", tenor=[f"{n}Y" for n in lengths], vol=vol,
                                      kind=kind, shift=shift if kind == "lognormal" else None, instrument="cap",
                                      frequency=12 // months, day_count=day_count, tenor_from="as_of",
                                      atm_frequency=fixed_frequency, atm_day_count=fixed_day_count)

    if vols is None:
        basket = quote_instruments(quotes(0.01 if kind == "normal" else 0.3), {name: curve})
        vols = basket.implied_vol(basket.model_price(a=0.06, sigma=0.011)) * (1 + 0.04 * np.sin(1.7 * np.arange(
            len(lengths))))
    return quotes(vols)


def ql_index(months: int, day_count: str, handle: ql.YieldTermStructureHandle) -> ql.IborIndex:
    return ql.IborIndex("index", ql.Period(months, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted,
                        False, DAY_COUNTS[day_count], handle)


def ql_helpers(quotes: VolQuotes, strip: tuple, handle: ql.YieldTermStructureHandle,
               error: str = "relative_price") -> list[ql.CapHelper]:
    months, day_count, fixed_frequency, fixed_day_count, kind, shift = strip
    index = ql_index(months, day_count, handle)
    return [ql.CapHelper(ql.Period(int(quotes.tenor_months[k]), ql.Months), ql.QuoteHandle(ql.SimpleQuote(
        float(quotes.vol[k]))), index, FREQUENCIES[fixed_frequency], DAY_COUNTS[fixed_day_count], False, handle,
        ERRORS[error], ql.Normal if kind == "normal" else ql.ShiftedLognormal, shift) for k in range(len(quotes))]


def ql_calibrate(helpers: list, handle: ql.YieldTermStructureHandle, fixed_a: float | None = None,
                 method: ql.OptimizationMethod | None = None) -> ql.HullWhite:
    model = ql.HullWhite(handle, 0.05 if fixed_a is None else fixed_a, 0.01)
    engine = ql.AnalyticCapFloorEngine(model, handle)
    for helper in helpers:
        helper.setPricingEngine(engine)
    model.calibrate(helpers, method or ql.LevenbergMarquardt(), ql.EndCriteria(400, 100, 1e-8, 1e-8, 1e-8),
                    ql.NoConstraint(), [], [] if fixed_a is None else [True, False])
    return model


def ql_objective(model: ql.HullWhite, helpers: list, a: float, sigma: float) -> float:
    model.setParams(ql.Array([float(a), float(sigma)]))
    return sum(helper.calibrationError() ** 2 for helper in helpers)


# --- the quotes' caps are the CapHelpers' ----------------------------------------------------------------------------

@pytest.mark.parametrize("evaluation_date", [AS_OF, *OTHER_DATES], indirect=True, ids=str)
def test_cap_quotes_price_as_caphelpers(evaluation_date):
    """Market prices as CapHelper.marketValue (1e-12) and Hull-White prices as the AnalyticCapFloorEngine's (1e-10),
    every strip, as-of dates at month ends and on a leap day, a from 0.001 to 0.5."""
    as_of = np.datetime64(ql.Settings.instance().evaluationDate.ISO())
    curve, handle = make_curve(as_of)
    worst_market = worst_model = 0.0
    for strip in STRIPS.values():
        quotes = strip_quotes(curve, strip)
        basket = quote_instruments(quotes, curve)
        helpers = ql_helpers(quotes, strip, handle)
        market = np.array([h.marketValue() for h in helpers])
        worst_market = max(worst_market, float(np.abs(basket.market_price / market - 1).max()))
        for a, sigma in [(0.001, 0.008), (0.04, 0.009), (0.2, 0.015), (0.5, 0.02)]:
            model = ql.HullWhite(handle, a, sigma)
            engine = ql.AnalyticCapFloorEngine(model, handle)
            for helper in helpers:
                helper.setPricingEngine(engine)
            theirs = np.array([h.modelValue() for h in helpers])
            worst_model = max(worst_model, float(np.abs(basket.model_price(a=a, sigma=sigma) / theirs - 1).max()))
    WORST[f"market prices vs CapHelper.marketValue, as of {as_of}"] = worst_market
    WORST[f"model prices vs AnalyticCapFloorEngine, as of {as_of}"] = worst_model
    assert worst_market <= 1e-12
    assert worst_model <= 1e-10


def test_quotes_default_conventions_are_not_the_caphelpers():
    """Why the optional columns: by default a cap's tenor counts from its first fixing and its at-the-money strike is
    the swap rate of its own caplets' periods; QuantLib's CapHelper counts its length from the as-of date and takes
    the strike from its fixed leg. On 2025-01-31, 3M + 4Y9M ends on 2030-01-30, 5Y on 2030-01-31."""
    as_of = np.datetime64("2025-01-31")
    curve, _handle = make_curve(as_of)
    own = VolQuotes.from_columns(curve="EUR", expiry="3M", tenor="4Y9M", vol=0.009, kind="normal", instrument="cap")
    helper_like = VolQuotes.from_columns(curve="EUR", expiry="3M", tenor="5Y", vol=0.009, kind="normal",
                                         instrument="cap", tenor_from="as_of", atm_frequency=1,
                                         atm_day_count="30/360")
    mine, theirs = quote_instruments(own, curve), quote_instruments(helper_like, curve)
    assert str(mine.end[0]) == "2030-01-30" and str(theirs.end[0]) == "2030-01-31"
    assert str(mine.exercise[0]) == str(theirs.exercise[0]) == "2025-04-30"
    assert abs(mine.strike[0] / theirs.strike[0] - 1) > 1e-4
    # the same end date, the caplets' own strike: the same cap as the default's at the same dates
    same_end = VolQuotes.from_columns(curve="EUR", expiry="3M", tenor="4Y9M", vol=0.009, kind="normal",
                                      instrument="cap", tenor_from="expiry", atm_frequency=4, atm_day_count="ACT/360")
    again = quote_instruments(same_end, curve)
    assert again.strike[0] == mine.strike[0] and again.market_price[0] == mine.market_price[0]


def test_floors_and_strikes_as_quantlibs_caps_and_floors(eur, evaluation_date):
    """Quotes with strikes, caps and floors, priced as QuantLib's Cap and Floor on the CapHelper's leg."""
    curve, handle = eur
    strikes = [0.02, 0.03, 0.045]
    quotes = VolQuotes.from_columns(curve="EUR", expiry="3M", tenor=["2Y", "5Y", "10Y"] * 2, vol=0.0085, kind="normal",
                                    instrument=["cap"] * 3 + ["floor"] * 3, strike=strikes * 2, tenor_from="as_of")
    basket = quote_instruments(quotes, curve)
    index = ql_index(3, "ACT/360", handle)
    model = ql.HullWhite(handle, 0.03, 0.009)
    today = ql_date(AS_OF)
    for k in range(len(quotes)):
        schedule = ql.Schedule(today + ql.Period(3, ql.Months), today + ql.Period(int(quotes.tenor_months[k]), ql.Months),
                               ql.Period(3, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                               ql.DateGeneration.Forward, False)
        leg = ql.IborLeg([1.0], schedule, index, fixingDays=[0])
        option = (ql.Cap if quotes.instrument[k] == "cap" else ql.Floor)(leg, [float(quotes.strike[k])])
        option.setPricingEngine(ql.AnalyticCapFloorEngine(model, handle))
        assert basket.model_price(a=0.03, sigma=0.009, rows=[k])[0] == pytest.approx(option.NPV(), rel=1e-10)
        option.setPricingEngine(ql.BachelierCapFloorEngine(handle, ql.QuoteHandle(ql.SimpleQuote(0.0085))))
        assert basket.market_price[k] == pytest.approx(option.NPV(), rel=1e-12)


# --- calibration ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("error", list(ERRORS))
@pytest.mark.parametrize("name", list(STRIPS))
def test_cap_strip_calibration_matches_quantlib(eur, evaluation_date, name, error):
    curve, handle = eur
    strip = STRIPS[name]
    quotes = strip_quotes(curve, strip)
    helpers = ql_helpers(quotes, strip, handle, error)
    model = ql_calibrate(helpers, handle)
    a, sigma = model.params()
    result = calibrate(curves=curve, quotes=quotes, as_of=AS_OF, error=error)
    assert result.status.tolist() == ["converged"], result.message
    assert result.reachable.all()
    gap = max(abs(result.a[0] / a - 1), abs(result.sigma[0] / sigma - 1))
    WORST[f"free a, {name}, {error}"] = gap
    assert gap <= 1e-4
    theirs = ql_objective(model, helpers, a, sigma)
    ours = ql_objective(model, helpers, result.a[0], result.sigma[0])
    assert ours <= theirs * (1 + 1e-9)


@pytest.mark.parametrize("fixed_a", [0.01, 0.1])
@pytest.mark.parametrize("name", list(STRIPS)[:3])
def test_cap_strip_calibration_with_a_fixed_matches_quantlib(eur, evaluation_date, name, fixed_a):
    curve, handle = eur
    strip = STRIPS[name]
    quotes = strip_quotes(curve, strip)
    model = ql_calibrate(ql_helpers(quotes, strip, handle), handle, fixed_a=fixed_a)
    result = calibrate(curves=curve, quotes=quotes, a=fixed_a)
    assert result.status.tolist() == ["converged"] and result.a[0] == fixed_a
    gap = abs(result.sigma[0] / model.params()[1] - 1)
    WORST[f"fixed a = {fixed_a}, {name}"] = gap
    assert gap <= 1e-4


@pytest.mark.parametrize("evaluation_date", [OTHER_DATES[0]], indirect=True, ids=str)
def test_cap_strip_calibration_at_a_month_end(evaluation_date):
    """As of 2025-01-31 (the strip's dates clamp to month ends), against QuantLib."""
    curve, handle = make_curve(OTHER_DATES[0])
    strip = STRIPS["3M ACT/360, annual 30/360 strike, normal"]
    quotes = strip_quotes(curve, strip)
    model = ql_calibrate(ql_helpers(quotes, strip, handle), handle)
    a, sigma = model.params()
    result = calibrate(curves=curve, quotes=quotes)
    gap = max(abs(result.a[0] / a - 1), abs(result.sigma[0] / sigma - 1))
    WORST["free a, as of 2025-01-31"] = gap
    assert result.status.tolist() == ["converged"] and gap <= 1e-4


def test_quantlibs_gap_is_its_finite_differences(eur, evaluation_date):
    """QuantLib's LevenbergMarquardt with a smaller forward-difference step (epsfcn 1e-12 instead of 1e-8) lands
    within 1e-7 of trinom's parameters (1e-6 with its default): the gap is QuantLib's Jacobian."""
    curve, handle = eur
    strip = STRIPS["3M ACT/360, annual 30/360 strike, normal"]
    quotes = strip_quotes(curve, strip)
    result = calibrate(curves=curve, quotes=quotes)
    gaps = []
    for epsfcn in (1e-8, 1e-12):
        model = ql_calibrate(ql_helpers(quotes, strip, handle), handle,
                             method=ql.LevenbergMarquardt(epsfcn, 1e-8, 1e-8))
        a, sigma = model.params()
        gaps.append(max(abs(result.a[0] / a - 1), abs(result.sigma[0] / sigma - 1)))
    WORST["free a, QuantLib with epsfcn 1e-12"] = gaps[1]
    assert gaps[1] <= 1e-7 and gaps[1] < gaps[0] / 5


def test_cap_strips_and_swaptions_on_several_curves_at_once(evaluation_date):
    """Two curves' cap strips (one with a fixed) and a swaption-and-cap mix in one call: each curve as QuantLib
    fits it alone."""
    import pandas as pd

    curve, handle = make_curve(AS_OF)
    strips = [STRIPS["3M ACT/360, annual 30/360 strike, normal"], STRIPS["6M ACT/365F, own strike, lognormal"]]
    parts = [strip_quotes(curve, strips[0], name="EUR"), strip_quotes(curve, strips[1], name="USD")]
    quotes = VolQuotes.from_frame(pd.concat([p.to_frame() for p in parts], ignore_index=True))
    result = calibrate(curves={"EUR": curve, "USD": curve}, quotes=quotes, a={"USD": 0.05})
    assert result.status.tolist() == ["converged", "converged"]
    for k, (part, strip, fixed) in enumerate(zip(parts, strips, [None, 0.05], strict=True)):
        model = ql_calibrate(ql_helpers(part, strip, handle), handle, fixed_a=fixed)
        assert result.a[k] == pytest.approx(model.params()[0], rel=1e-4)
        assert result.sigma[k] == pytest.approx(model.params()[1], rel=1e-4)
    # swaptions and caps of one curve together: QuantLib with both kinds of helpers
    swaptions = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "2Y", "5Y"], tenor=["5Y", "5Y", "10Y"],
                                       vol=[0.0090, 0.0088, 0.0080], kind="normal")
    mixed = VolQuotes.from_frame(pd.concat([parts[0].to_frame(), swaptions.to_frame()], ignore_index=True))
    ours = calibrate(curves={"EUR": curve}, quotes=mixed)
    basket = quote_instruments(swaptions, curve)
    index = ql.IborIndex("index", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted,
                         False, ql.Actual365Fixed(), handle)
    swaption_helpers = [ql.SwaptionHelper(ql_date(basket.exercise[k]), ql_date(basket.end[k]),
                                          ql.QuoteHandle(ql.SimpleQuote(float(swaptions.vol[k]))), index,
                                          ql.Period(12, ql.Months), DAY_COUNTS["30/360"], ql.Actual365Fixed(), handle,
                                          ERRORS["relative_price"], ql.nullDouble(), 1.0, ql.Normal, 0.0)
                        for k in range(len(swaptions))]
    cap_helpers = ql_helpers(parts[0], strips[0], handle)
    model = ql.HullWhite(handle, 0.05, 0.01)
    for helper in swaption_helpers:
        helper.setPricingEngine(ql.JamshidianSwaptionEngine(model))
    for helper in cap_helpers:
        helper.setPricingEngine(ql.AnalyticCapFloorEngine(model, handle))
    model.calibrate(cap_helpers + swaption_helpers, ql.LevenbergMarquardt(), ql.EndCriteria(400, 100, 1e-8, 1e-8,
                                                                                             1e-8))
    gap = max(abs(ours.a[0] / model.params()[0] - 1), abs(ours.sigma[0] / model.params()[1] - 1))
    WORST["free a, caps and swaptions together"] = gap
    assert ours.status.tolist() == ["converged"] and gap <= 1e-4


def test_report_worst_agreement():
    """Prints the worst agreement figures of this file (run with -s to see them)."""
    for name, value in WORST.items():
        print(f"{name}: {value:.2e}")
