"""Piecewise-constant sigma (issue 37, items 3 and 4, the model's side): the short rate's variance over the pieces,
the closed forms with it (zero-coupon bond options, caplets, Jamshidian's swaptions) against QuantLib 1.44's Gsr
model (its numerical integrals on fine grids), and the bootstrap of each trade's pieces to its co-terminal swaptions
against its own round trip and QuantLib's Gsr.calibrateVolatilitiesIterative."""

from __future__ import annotations

import numpy as np
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
from trinom.errors import InputError
from trinom.model import Caps, DatedCurve, Sigma, Swaptions, bootstrap_sigma
from trinom.model.hull_white import zero_bond_option

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
ZEROS = [0.025, 0.028, 0.031, 0.033]
A = 0.05
STEPS = ["2027-11-25", "2028-11-25", "2030-11-25"]
VALUES = [0.008, 0.014, 0.010, 0.009]
#: Per unit of a bond option: QuantLib's Gsr.zerobondOption on 2048 points against the closed form (its integral's
#: error at constant sigma against HullWhite.discountBondOption: 1.2e-8).
GSR_ZBO = 5e-8
#: Per 100: QuantLib's Gaussian1dSwaptionEngine (1024 points, 10 deviations) against Jamshidian (its error at
#: constant sigma against JamshidianSwaptionEngine: up to 2.5e-5).
GSR_SWAPTION = 5e-5


@pytest.fixture(scope="module")
def curve() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="EUR")


@pytest.fixture(scope="module")
def sigma() -> Sigma:
    return Sigma.on_dates(AS_OF, STEPS, VALUES)


def ql_setup(curve: DatedCurve, values: list[float] = VALUES, steps: list[str] = STEPS) -> tuple[object, object]:
    today = ql.DateParser.parseISO(AS_OF)
    ql.Settings.instance().evaluationDate = today
    dates = [today] + [ql.DateParser.parseISO(d) for d in PILLARS]
    table = ql.DiscountCurve(dates, [1.0] + [float(curve.discount([d])[0]) for d in PILLARS], ql.Actual365Fixed())
    table.enableExtrapolation()
    handle = ql.YieldTermStructureHandle(table)
    gsr = ql.Gsr(handle, [ql.DateParser.parseISO(d) for d in steps], [ql.QuoteHandle(ql.SimpleQuote(v)) for v in values],
                 [ql.QuoteHandle(ql.SimpleQuote(A))], 20.0)
    return handle, gsr


def test_the_variance_is_the_integral_over_the_pieces(sigma: Sigma) -> None:
    for t in (0.5, 1.0, 2.7, 6.0, 12.0):
        ends = sigma.times[0][sigma.times[0] < t]  # the midpoint rule on a grid through the pieces' ends
        u = np.unique(np.concatenate([np.linspace(0.0, t, 200001), ends]))
        mid = 0.5 * (u[1:] + u[:-1])
        integral = np.sum(sigma.values_at(mid) ** 2 * np.exp(-2 * A * (t - mid)) * np.diff(u))
        assert float(sigma.variance(a=A, t=t)) == pytest.approx(integral, rel=1e-9)
    one = Sigma(times=[], values=[0.01])
    assert float(one.variance(a=A, t=3.0)) == pytest.approx(0.01 ** 2 * (1 - np.exp(-2 * A * 3.0)) / (2 * A), rel=1e-15)


def test_a_bond_option_matches_quantlibs_gsr(curve: DatedCurve, sigma: Sigma) -> None:
    handle, gsr = ql_setup(curve)
    for expiry, maturity in (("2028-05-25", "2033-11-25"), ("2031-11-25", "2036-11-25"), ("2027-06-25", "2029-11-25")):
        ex, mat = ql.DateParser.parseISO(expiry), ql.DateParser.parseISO(maturity)
        T, S = curve.year_fractions([expiry, maturity])
        strike = handle.discount(mat) / handle.discount(ex)
        for kind, is_call in ((ql.Option.Put, False), (ql.Option.Call, True)):
            expected = gsr.zerobondOption(kind, ex, ex, mat, strike, ql.Date(), 0.0, ql.YieldTermStructureHandle(),
                                          8.0, 2048)
            mine = zero_bond_option(a=A, sigma=sigma, expiry=T, maturity=S, strike=strike,
                                    discount_expiry=handle.discount(ex), discount_maturity=handle.discount(mat),
                                    is_call=is_call)
            assert float(mine) == pytest.approx(expected, abs=GSR_ZBO)


def test_swaptions_match_quantlibs_gsr(curve: DatedCurve, sigma: Sigma) -> None:
    handle, gsr = ql_setup(curve)
    index = ql.IborIndex("E6M", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), handle)
    cases = [("2028-11-25", "2033-11-25"), ("2030-05-25", "2036-11-25"), ("2032-11-25", "2040-11-25")]
    swaptions = Swaptions.on_curve(curve, exercise=[c[0] for c in cases], end=[c[1] for c in cases], frequency=1,
                                   day_count="ACT/365F", payer=True, notional=100.0)
    mine = swaptions.price(a=A, sigma=sigma)
    for k, (exercise, end) in enumerate(cases):
        start, finish = ql.DateParser.parseISO(exercise), ql.DateParser.parseISO(end)
        fixed = ql.Schedule(start, finish, ql.Period(1, ql.Years), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                            ql.DateGeneration.Forward, False)
        floating = ql.Schedule(start, finish, ql.Period(6, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                               ql.DateGeneration.Forward, False)
        swap = ql.VanillaSwap(ql.Swap.Payer, 100.0, fixed, float(swaptions.fixed_rate[k]), ql.Actual365Fixed(),
                              floating, index, 0.0, ql.Actual365Fixed())
        option = ql.Swaption(swap, ql.EuropeanExercise(start))
        option.setPricingEngine(ql.Gaussian1dSwaptionEngine(gsr, 1024, 10.0))
        assert mine[k] == pytest.approx(option.NPV(), abs=GSR_SWAPTION)


def test_one_piece_is_the_constant_sigma(curve: DatedCurve) -> None:
    swaptions = Swaptions.on_curve(curve, exercise=["2028-11-25", "2030-11-25"], end="2036-11-25", payer=[True, False])
    constant = swaptions.price(a=A, sigma=0.011, root="exact")
    assert swaptions.price(a=A, sigma=Sigma(times=[], values=[0.011])) == pytest.approx(constant, rel=1e-14)
    caps = Caps.on_curve(curve, start=["2027-05-25"], end=["2031-11-25"], strike=0.03)
    assert caps.price(a=A, sigma=Sigma(times=[], values=[0.011])) == pytest.approx(caps.price(a=A, sigma=0.011),
                                                                                   rel=1e-14)
    with pytest.raises(InputError, match="root='exact'"):
        swaptions.price(a=A, sigma=Sigma(times=[], values=[0.011]), root="quantlib")


def test_caps_with_a_term_structure_are_their_caplets(curve: DatedCurve, sigma: Sigma) -> None:
    caps = Caps.on_curve(curve, start=["2027-05-25"], end=["2031-11-25"], strike=0.03)
    count = int(caps.count[0])
    each = [float(zero_bond_option(a=A, sigma=sigma, expiry=caps.start[0, k], maturity=caps.end[0, k],
                                   strike=1 / (1 + 0.03 * caps.accrual[0, k]),
                                   discount_expiry=caps.discount_start[0, k], discount_maturity=caps.discount_end[0, k],
                                   is_call=False)) * (1 + 0.03 * caps.accrual[0, k]) for k in range(count)]
    assert float(caps.price(a=A, sigma=sigma)[0]) == pytest.approx(sum(each), rel=1e-13)


def test_the_bootstrap_gives_the_pieces_back(curve: DatedCurve) -> None:
    """Three trades' co-terminal baskets priced with known step functions: the bootstrap, all trades at once, finds
    them again and reprices every quote."""
    exercise = [["2027-11-25", "2028-11-25", "2029-11-25", "2030-11-25"], ["2028-05-25", "2031-05-25"],
                ["2029-11-25"]]
    end = ["2036-11-25", "2038-05-25", "2034-11-25"]
    truth = [[0.008, 0.013, 0.010, 0.009], [0.012, 0.007], [0.0095]]
    parts, trade, prices = [], [], []
    for k, dates in enumerate(exercise):
        s = Swaptions.on_curve(curve, exercise=dates, end=end[k], frequency=1, day_count="30/360", notional=100.0,
                               payer=[j % 2 == 0 for j in range(len(dates))])
        pieces = Sigma.on_dates(AS_OF, [dates[:-1]], [truth[k]])
        prices.append(s.price(a=A, sigma=pieces))
        parts.append(s)
        trade += [k] * len(dates)
    swaptions = Swaptions.concatenate(parts)
    fit = bootstrap_sigma(swaptions, np.concatenate(prices), trade=trade, a=A)
    assert fit.status.tolist() == ["fitted"] * 7
    for k, values in enumerate(truth):
        assert fit.sigma.values[k, :len(values)] == pytest.approx(values, rel=1e-9)
        assert np.all(fit.sigma.values[k, len(values):] == fit.sigma.values[k, len(values) - 1])  # it holds on
    repriced = swaptions.price(a=A, sigma=fit.sigma.take(trade))
    assert repriced == pytest.approx(np.concatenate(prices), rel=1e-10)


def test_a_quote_below_the_earlier_pieces_is_bound(curve: DatedCurve) -> None:
    s = Swaptions.on_curve(curve, exercise=["2028-11-25", "2030-11-25"], end="2036-11-25", notional=100.0)
    prices = s.price(a=A, sigma=0.012, root="exact")
    prices[1] *= 0.3  # far less variance at the second date than the first piece already gives
    fit = bootstrap_sigma(s, prices, trade=[0, 0], a=A)
    assert fit.status.tolist() == ["fitted", "bound"]
    assert fit.sigma.values[0, 0] == pytest.approx(0.012, rel=1e-9) and fit.sigma.values[0, 1] == 1e-6


def test_the_bootstrap_matches_quantlibs_iterative_calibration(curve: DatedCurve) -> None:
    """QuantLib's Gsr.calibrateVolatilitiesIterative on the same co-terminal normal-vol quotes (its helpers priced by
    Jamshidian on the Gsr model): the same pieces within the Gsr's integration error."""
    handle, _ = ql_setup(curve)
    index = ql.IborIndex("E6M", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), handle)
    dates = ["2027-11-25", "2028-11-25", "2029-11-25", "2030-11-25"]
    vols = [0.0090, 0.0085, 0.0083, 0.0080]
    gsr = ql.Gsr(handle, [ql.DateParser.parseISO(d) for d in dates[:-1]],
                 [ql.QuoteHandle(ql.SimpleQuote(0.01)) for _ in dates], [ql.QuoteHandle(ql.SimpleQuote(A))], 20.0)
    engine = ql.Gaussian1dSwaptionEngine(gsr, 1024, 10.0)
    helpers = []
    for d in dates:
        helper = ql.SwaptionHelper(ql.DateParser.parseISO(d), ql.DateParser.parseISO("2036-11-25"),
                                   ql.QuoteHandle(ql.SimpleQuote(vols[dates.index(d)])), index, ql.Period(1, ql.Years),
                                   ql.Actual365Fixed(), ql.Actual365Fixed(), handle,
                                   ql.BlackCalibrationHelper.RelativePriceError, ql.nullDouble(), 1.0, ql.Normal, 0.0)
        helper.setPricingEngine(engine)
        helpers.append(helper)
    gsr.calibrateVolatilitiesIterative(helpers, ql.LevenbergMarquardt(), ql.EndCriteria(1000, 100, 1e-12, 1e-12, 1e-12))
    expected = list(gsr.volatility())
    prices = [h.marketValue() for h in helpers]
    swaptions = Swaptions.on_curve(curve, exercise=dates, end="2036-11-25", frequency=1, day_count="ACT/365F",
                                   fixed_rate=[h.underlying().fixedRate() for h in helpers],
                                   payer=[h.underlying().type() == ql.Swap.Payer for h in helpers])
    fit = bootstrap_sigma(swaptions, prices, trade=[0] * len(dates), a=A)
    assert fit.status.tolist() == ["fitted"] * 4
    assert fit.sigma.values[0] == pytest.approx(expected, rel=2e-5)  # measured 6.3e-6
