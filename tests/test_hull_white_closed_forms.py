"""trinom.model.hull_white and trinom.model.volatility against QuantLib 1.44: zero-coupon bond options
(HullWhite.discountBondOption), European swaptions (JamshidianSwaptionEngine, and QuantLib's own decomposition at
the exact root), caps and floors (AnalyticCapFloorEngine), Black and Bachelier prices and their implied
volatilities, forward-generated legs (Schedule, DateGeneration.Forward) and the analytic gradients.

QuantLib's JamshidianSwaptionEngine solves for the critical short rate with Brent's method to an accuracy of 1e-8
(hard-coded): its prices are those of its decomposition at a root up to about 5e-9 away from the exact one, which
moves a swaption's price by up to about 1e-6 relative. trinom's default (``root="quantlib"``) runs the same Brent
iterations (checked iterate for iterate against QuantLib's own Brent on the engine's function) and QuantLib's bond
option volatility, and agrees with the engine within 1e-10 relative on every swaption tested; ``root="exact"``
solves the root to machine precision and agrees with QuantLib's decomposition (HullWhite.discountBond and
discountBondOption) at the exact root within 1e-10 relative, and with the engine where the engine's price is that
decomposition at a root within Brent's tolerance of the exact one.
"""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pytest

ql = pytest.importorskip("QuantLib")
from quantlib_oracle import on_date, ql_date, random_curves  # noqa: E402 (after the skip)
from trinom import errors as trinom_errors  # noqa: E402
from trinom.model import DatedCurve  # noqa: E402
from trinom.model import hull_white as hw  # noqa: E402
from trinom.model import periods as periods_module  # noqa: E402
from trinom.model import volatility as vol  # noqa: E402
from trinom.model.periods import add_period, fixed_leg, parse_periods  # noqa: E402
from trinom.model.rate_options import Caps, Swaptions  # noqa: E402

AS_OF = np.datetime64("2025-01-02")
DAY_COUNTS = {"30/360": ql.Thirty360(ql.Thirty360.BondBasis), "30E/360": ql.Thirty360(ql.Thirty360.European),
              "ACT/360": ql.Actual360(), "ACT/365F": ql.Actual365Fixed(),
              "ACT/ACT-ISDA": ql.ActualActual(ql.ActualActual.ISDA)}
#: Where the engine's Brent root (accuracy 1e-8: the bracket's half-width) may lie from the exact one.
BRENT_ACCURACY = 1e-8
WORST: dict[str, float] = {}


@pytest.fixture(autouse=True)
def evaluation_date():
    yield from on_date(AS_OF)


@pytest.fixture(scope="module")
def curves() -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    """A 45-year curve of 28 pillars (log-linear discount factors), ours and QuantLib's DiscountCurve."""
    return random_curves(AS_OF, 45)


def period_dates(start: np.ndarray, text: str) -> np.ndarray:
    months, days, problems = parse_periods([text], field="period")
    assert not problems
    return add_period(start, months, days)


def ql_schedule(start: np.datetime64, end: np.datetime64, months: int) -> ql.Schedule:
    return ql.Schedule(ql_date(start), ql_date(end), ql.Period(months, ql.Months), ql.NullCalendar(), ql.Unadjusted,
                       ql.Unadjusted, ql.DateGeneration.Forward, False)


# --- zero-coupon bond options -----------------------------------------------------------------------------------

def test_zero_bond_options_equal_quantlib(curves):
    curve, handle = curves
    rng = np.random.default_rng(7)
    worst = 0.0
    for a, sigma in [(0.001, 0.006), (0.03, 0.01), (0.1, 0.008), (0.5, 0.02)]:
        model = ql.HullWhite(handle, a, sigma)
        expiry = rng.uniform(0.05, 20.0, 40)
        maturity = expiry + rng.uniform(0.1, 20.0, 40)
        forward = curve.discount(maturity) / curve.discount(expiry)
        strike = forward * np.exp(rng.normal(0.0, 0.05, 40))
        is_call = rng.random(40) < 0.5
        ours = hw.zero_bond_option(a=a, sigma=sigma, expiry=expiry, maturity=maturity, strike=strike,
                                   discount_expiry=curve.discount(expiry), discount_maturity=curve.discount(maturity),
                                   is_call=is_call)
        theirs = np.array([model.discountBondOption(ql.Option.Call if c else ql.Option.Put, float(k), float(t), float(m))
                           for c, k, t, m in zip(is_call, strike, expiry, maturity, strict=True)])
        # relative, but for the deep out-of-the-money options worth under 1e-6 per unit face (where both sides
        # lose digits to the cancellation in Black's formula): absolute
        assert np.all(np.abs(ours - theirs) <= 1e-10 * np.maximum(theirs, 1e-6))
        worth = theirs > 1e-6
        worst = max(worst, float(np.max(np.abs(ours[worth] / theirs[worth] - 1))))
    WORST["zero bond options (worth over 1e-6)"] = worst


def test_zero_bond_option_expiring_now_is_intrinsic():
    price = hw.zero_bond_option(a=0.1, sigma=0.01, expiry=0.0, maturity=2.0, strike=[0.9, 0.95], discount_expiry=1.0,
                                discount_maturity=0.93, is_call=True)
    assert price.tolist() == pytest.approx([0.03, 0.0], abs=1e-15)


# --- swaptions --------------------------------------------------------------------------------------------------

SWAPTIONS = [  # expiry, tenor, fixed-leg frequency, day count, payer, strike minus the forward
    ("1Y", "5Y", 1, "30/360", True, 0.0), ("1Y", "5Y", 1, "30/360", False, 0.0),
    ("6M", "10Y", 2, "ACT/360", False, 0.01), ("5Y", "10Y", 4, "ACT/365F", True, -0.01),
    ("2Y", "18M", 1, "30E/360", False, 0.0), ("10Y", "20Y", 2, "ACT/ACT-ISDA", True, 0.005),
    ("3M", "1Y", 12, "30/360", False, -0.005), ("7Y", "3Y", 2, "30/360", True, 0.02),
    ("1M", "2Y", 4, "ACT/360", True, 0.0), ("15Y", "15Y", 1, "30/360", False, -0.004),
]
MODELS = [(0.01, 0.006), (0.03, 0.01), (0.1, 0.008), (0.2, 0.015)]


def our_swaption(curve: DatedCurve, case: tuple) -> Swaptions:
    expiry, tenor, frequency, day_count, payer, moneyness = case
    exercise = period_dates(np.array([AS_OF]), expiry)
    end = period_dates(exercise, tenor)
    s = Swaptions.on_curve(curve, exercise=exercise, end=end, frequency=frequency, day_count=day_count, payer=payer,
                           notional=100.0)
    return s.replace_rates(s.forward_rate + moneyness)


def ql_swaption(s: Swaptions, case: tuple, handle: ql.YieldTermStructureHandle) -> ql.Swaption:
    _expiry, _tenor, frequency, day_count, payer, _m = case
    exercise = AS_OF + round(float(s.exercise[0]) * 365)
    start = AS_OF + round(float(s.start[0]) * 365)
    end = AS_OF + round(float(s.pay_time[0, s.count[0] - 1]) * 365)
    index = ql.IborIndex("index", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted,
                         False, ql.Actual365Fixed(), handle)
    swap = ql.VanillaSwap(ql.Swap.Payer if payer else ql.Swap.Receiver, 100.0, ql_schedule(start, end, 12 // frequency),
                          float(s.fixed_rate[0]), DAY_COUNTS[day_count], ql_schedule(start, end, 6), index, 0.0,
                          ql.Actual365Fixed())
    return ql.Swaption(swap, ql.EuropeanExercise(ql_date(exercise)))


def ql_decomposition(model: ql.HullWhite, s: Swaptions) -> float:
    """QuantLib's Jamshidian decomposition (its discountBond and discountBondOption) at the exact critical rate
    (bisection to the last bit), for a swap starting at the exercise."""
    T, n = float(s.exercise[0]), int(s.count[0])
    times, amounts = s.pay_time[0, :n].tolist(), s.amounts[0, :n].tolist()
    notional = float(s.notional[0])

    def excess(r: float) -> float:
        return notional - sum(c * model.discountBond(T, t, r) for c, t in zip(amounts, times, strict=True))

    lo, hi = -2.0, 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if excess(mid) > 0 else (mid, hi)
    rate = 0.5 * (lo + hi)
    kind = ql.Option.Put if s.payer[0] else ql.Option.Call
    return sum(c * model.discountBondOption(kind, model.discountBond(T, t, rate), T, t)
               for c, t in zip(amounts, times, strict=True))


def decomposition_at(s: Swaptions, a: float, sigma: float, x: np.ndarray) -> np.ndarray:
    """trinom's decomposition of one swaption at the state ``x`` (not necessarily the root), for several ``x``."""
    n = int(s.count[0])
    T, t0, t, c = s.exercise[0], s.start[0], s.pay_time[0, :n], s.amounts[0, :n]
    V = hw.short_rate_variance(a=a, sigma=sigma, t=T)
    B0, Bi = hw.bond_factor(a=a, tau=t0 - T), hw.bond_factor(a=a, tau=t - T)
    beta, gamma = Bi - B0, 0.5 * (Bi - B0) * (Bi + B0) * V
    strikes = s.discount_pay[0, :n] / s.discount_start[0] * np.exp(-beta * np.asarray(x)[:, None] - gamma)
    options = hw.zero_bond_option(a=a, sigma=sigma, expiry=T, start=t0, maturity=t, strike=strikes,
                                  discount_expiry=s.discount_start[0], discount_start=s.discount_start[0],
                                  discount_maturity=s.discount_pay[0, :n], is_call=not s.payer[0])
    return options @ c


def exact_root(s: Swaptions, a: float, sigma: float) -> float:
    n = int(s.count[0])
    T, t0, t, c = s.exercise[0], s.start[0], s.pay_time[0, :n], s.amounts[0, :n]
    V = hw.short_rate_variance(a=a, sigma=sigma, t=T)
    B0, Bi = hw.bond_factor(a=a, tau=t0 - T), hw.bond_factor(a=a, tau=t - T)
    w = c * s.discount_pay[0, :n] / s.discount_start[0]
    root = hw._jamshidian_root(w[None, :], (Bi - B0)[None, :], (0.5 * (Bi - B0) * (Bi + B0) * V)[None, :],
                               s.notional[:1])
    return float(root[0])


def root_error(s: Swaptions, a: float, sigma: float, price: float) -> float:
    """How far from the exact root the state lies at which trinom's decomposition gives ``price`` (the decomposition
    is monotone in the state: a payer's falls, a receiver's rises)."""
    x = exact_root(s, a, sigma)
    grid = x + np.linspace(-4 * BRENT_ACCURACY, 4 * BRENT_ACCURACY, 161)
    values = decomposition_at(s, a, sigma, grid)
    assert np.all(np.diff(values) < 0) if s.payer[0] else np.all(np.diff(values) > 0)
    assert values.min() <= price <= values.max(), "the price is no root within 4 Brent accuracies"
    order = np.argsort(values)
    return abs(float(np.interp(price, values[order], grid[order])) - x)


@pytest.mark.parametrize(("a", "sigma"), MODELS)
def test_swaptions_equal_quantlib_decomposition_at_the_exact_root(curves, a, sigma):
    curve, handle = curves
    model = ql.HullWhite(handle, a, sigma)
    worst = 0.0
    for case in SWAPTIONS:
        s = our_swaption(curve, case)
        ours = float(s.price(a=a, sigma=sigma, root="exact")[0])
        theirs = ql_decomposition(model, s)
        worst = max(worst, abs(ours / theirs - 1))
    WORST[f"root='exact' vs QuantLib's decomposition at the exact root, a={a}"] = worst
    assert worst <= 1e-10


def engine_price(s: Swaptions, case: tuple, handle: ql.YieldTermStructureHandle, engine: ql.PricingEngine) -> float:
    swaption = ql_swaption(s, case, handle)
    swaption.setPricingEngine(engine)
    return swaption.NPV()


@pytest.mark.parametrize(("a", "sigma"), [*MODELS, (0.001, 0.006), (0.5, 0.02), (1e-9, 0.01)])
def test_swaptions_equal_jamshidian_engine(curves, a, sigma):
    """The default (QuantLib's root and bond-option volatility) within 1e-10 of the engine on every swaption; the
    exact root's gap to the engine is QuantLib's root error (a root within Brent's accuracy of the exact one)."""
    curve, handle = curves
    engine = ql.JamshidianSwaptionEngine(ql.HullWhite(handle, a, sigma))
    worst = worst_exact = worst_root = 0.0
    for case in SWAPTIONS:
        s = our_swaption(curve, case)
        theirs = engine_price(s, case, handle, engine)
        ours = float(s.price(a=a, sigma=sigma)[0])
        worst = max(worst, abs(ours / theirs - 1))
        exact = float(s.price(a=a, sigma=sigma, root="exact")[0])
        gap = abs(exact / theirs - 1)
        worst_exact = max(worst_exact, gap)
        if a >= 0.01 and gap > 1e-10:  # below, QuantLib's bond option volatility cancels digits too
            off = root_error(s, a, sigma, theirs)
            worst_root = max(worst_root, off)
            assert off <= BRENT_ACCURACY, (case, off)
    WORST[f"default vs JamshidianSwaptionEngine, a={a}"] = worst
    WORST[f"root='exact' vs JamshidianSwaptionEngine, a={a}"] = worst_exact
    if worst_root:
        WORST[f"engine's root error, a={a}"] = worst_root
    assert worst <= 1e-10


def test_random_swaptions_equal_jamshidian_engine(curves):
    """120 random swaptions: payer and receiver, strikes off the money, forward-starting swaps, frequencies 1-12,
    five day counts, a from 1e-4 to 1.5 (the default root within 1e-10 of the engine)."""
    curve, handle = curves
    rng = np.random.default_rng(17)
    worst = 0.0
    for k in range(120):
        a = float(np.exp(rng.uniform(np.log(1e-4), np.log(1.5))))
        sigma = float(rng.uniform(0.003, 0.03))
        expiry = f"{int(rng.integers(1, 180))}M"
        tenor = f"{int(rng.integers(6, 288))}M"
        frequency = int(rng.choice([1, 2, 4, 12]))
        day_count = str(rng.choice(list(DAY_COUNTS)))
        payer = bool(rng.random() < 0.5)
        exercise = period_dates(np.array([AS_OF]), expiry)
        start = exercise + (int(rng.integers(1, 60)) if k % 3 == 0 else 0)
        end = period_dates(start, tenor)
        s = Swaptions.on_curve(curve, exercise=exercise, start=start, end=end, frequency=frequency,
                               day_count=day_count, payer=payer, notional=100.0)  # ql_swaption's notional
        s = s.replace_rates(s.forward_rate + rng.normal(0.0, 0.01))
        engine = ql.JamshidianSwaptionEngine(ql.HullWhite(handle, a, sigma))
        theirs = engine_price(s, (expiry, tenor, frequency, day_count, payer, 0.0), handle, engine)
        ours = float(s.price(a=a, sigma=sigma)[0])
        if theirs < 1e-8:  # worth less than 1e-10 of the notional: absolute
            assert abs(ours - theirs) <= 1e-16
            continue
        worst = max(worst, abs(ours / theirs - 1))
    WORST["default vs JamshidianSwaptionEngine, 120 random swaptions"] = worst
    assert worst <= 1e-10


def ql_r_star_iterates(model: ql.HullWhite, s: Swaptions) -> tuple[list[float], float]:
    """The short rates at which QuantLib's Brent evaluates the engine's function (its rStarFinder, on QuantLib's
    discountBond) from the engine's bracket and guess, and the root it returns."""
    T, t0, n = float(s.exercise[0]), float(s.start[0]), int(s.count[0])
    times, amounts = s.pay_time[0, :n].tolist(), s.amounts[0, :n].tolist()
    notional = float(s.notional[0])
    points: list[float] = []

    def finder(r: float) -> float:
        points.append(r)
        start = model.discountBond(T, t0, r)
        return notional - sum(c * model.discountBond(T, t, r) / start for c, t in zip(amounts, times, strict=True))

    solver = ql.Brent()
    solver.setMaxEvaluations(10000)
    solver.setLowerBound(-10.0)
    solver.setUpperBound(10.0)
    root = solver.solve(finder, 1e-8, 0.05, -10.0, 10.0)
    return points[:-1], root  # Brent evaluates its root once more on return


@pytest.mark.parametrize(("a", "sigma"), MODELS)
def test_quantlib_root_follows_quantlibs_brent_iterate_for_iterate(curves, a, sigma, monkeypatch):
    """trinom's Brent on the Jamshidian function, in short rates, evaluates where QuantLib's Brent does on the
    engine's function, all swaptions in one batch: as many points, the same ones up to the functions' rounding
    (the two evaluate it in different orders: 1e-14 apart, which the secant step over Brent's minimal step of
    5e-9 magnifies to 5e-10 at the fifth point, and superlinear convergence shrinks again), and the same root
    within 1e-14."""
    curve, handle = curves
    model = ql.HullWhite(handle, a, sigma)
    swaptions = [our_swaption(curve, case) for case in SWAPTIONS]
    batch = Swaptions.concatenate(swaptions)
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    found: list[np.ndarray] = []
    original = hw.brent_roots

    def recording(fun, **kwargs):
        def traced(x, rows):
            seen.append((rows.copy(), x.copy()))
            return fun(x, rows)
        roots, evaluations = original(traced, **kwargs)
        found.append(roots)
        return roots, evaluations

    monkeypatch.setattr(hw, "brent_roots", recording)
    hw.jamshidian_swaption(a=a, sigma=sigma, expiry=batch.exercise, start=batch.start, pay_times=batch.pay_time,
                           amounts=batch.amounts, discount_start=batch.discount_start, discount_pay=batch.discount_pay,
                           notional=batch.notional, is_payer=batch.payer, forward_rate=batch.forward_exercise)
    worst = worst_root = 0.0
    for k, s in enumerate(swaptions):
        ours = np.array([float(x[rows == k][0]) for rows, x in seen if (rows == k).any()])
        theirs, root = ql_r_star_iterates(model, s)
        assert ours.size == len(theirs), (k, ours, theirs)
        worst = max(worst, float(np.abs(ours - theirs).max()))
        worst_root = max(worst_root, abs(float(found[0][k]) - root))
    WORST[f"Brent's points vs QuantLib's, a={a}"] = worst
    WORST[f"Brent's root vs QuantLib's, a={a}"] = worst_root
    assert worst <= 1e-9 and worst_root <= 1e-14


def test_brent_roots_equal_quantlibs_brent_iterate_for_iterate():
    """On 200 random increasing functions (flat, steep, odd powers, overflowing ends), the same points evaluated in
    the same order and the same root, bit for bit (the functions evaluated by the same Python code)."""
    import math

    rng = np.random.default_rng(23)
    cases = [(rng.uniform(-3, 3), rng.uniform(0.1, 40.0), int(rng.choice([1, 3, 5])), rng.uniform(-9, 9))
             for _ in range(200)]

    def scalar(k: int, x: float) -> float:
        centre, scale, power, _guess = cases[k]
        try:
            return math.sinh(scale * (x - centre)) ** power + 0.01 * (x - centre)
        except OverflowError:
            return math.copysign(math.inf, x - centre)

    points: dict[int, list[float]] = {k: [] for k in range(len(cases))}

    def batch(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        for k, value in zip(rows.tolist(), x.tolist(), strict=True):
            points[k].append(value)
        return np.array([scalar(k, value) for k, value in zip(rows.tolist(), x.tolist(), strict=True)])

    guesses = np.array([c[3] for c in cases])
    with np.errstate(over="ignore"):
        roots, evaluations = hw.brent_roots(batch, size=len(cases), lower=-10.0, upper=10.0, guess=guesses,
                                            accuracy=1e-8, max_evaluations=10000)
    for k in range(len(cases)):
        theirs: list[float] = []

        def f(x: float, k: int = k, theirs: list[float] = theirs) -> float:
            theirs.append(x)
            return scalar(k, x)
        root = ql.Brent().solve(f, 1e-8, float(guesses[k]), -10.0, 10.0)
        assert roots[k] == root
        assert points[k] == theirs[:-1] and evaluations[k] == len(theirs) - 1


def test_brent_roots_report_what_they_cannot_solve():
    roots, _ = hw.brent_roots(lambda x, rows: x * x + 1.0, size=2, lower=-1.0, upper=1.0, guess=0.5, accuracy=1e-10)
    assert np.isnan(roots).all()
    roots, evaluations = hw.brent_roots(lambda x, rows: x - 0.3, size=1, lower=-1.0, upper=1.0, guess=0.0,
                                        accuracy=1e-10, max_evaluations=3)
    assert np.isnan(roots[0]) and evaluations[0] == 4
    roots, _ = hw.brent_roots(lambda x, rows: x - 1.0, size=1, lower=-1.0, upper=1.0, guess=0.0, accuracy=1e-10)
    assert roots[0] == 1.0  # a root at an end


def test_forward_starting_swaptions_equal_jamshidian_engine(curves):
    """A swap starting after the exercise (QuantLib's valueTime; its bond options with a bond start)."""
    curve, handle = curves
    for a, sigma in [(0.05, 0.01), (0.2, 0.012), (0.002, 0.01)]:
        engine = ql.JamshidianSwaptionEngine(ql.HullWhite(handle, a, sigma))
        for expiry, lag, tenor, payer in [("1Y", 14, "5Y", True), ("3Y", 60, "7Y", False), ("6M", 2, "2Y", False)]:
            exercise = period_dates(np.array([AS_OF]), expiry)
            start = exercise + lag
            end = period_dates(start, tenor)
            s = Swaptions.on_curve(curve, exercise=exercise, start=start, end=end, frequency=2, day_count="30/360",
                                   payer=payer, notional=100.0)
            s = s.replace_rates(s.forward_rate + 0.002)
            theirs = engine_price(s, (expiry, tenor, 2, "30/360", payer, 0.0), handle, engine)
            assert float(s.price(a=a, sigma=sigma)[0]) == pytest.approx(theirs, rel=1e-10, abs=0)
            exact = float(s.price(a=a, sigma=sigma, root="exact")[0])
            assert abs(exact / theirs - 1) <= 1e-10 or a < 0.01 or root_error(s, a, sigma, theirs) <= BRENT_ACCURACY


def test_quantlib_root_outside_the_bracket_falls_back_to_the_exact_root():
    """A leg whose critical short rate lies beyond QuantLib's [-10, 10] (where its engine fails) is priced at the
    exact root."""
    times = np.array([[2.0]])
    args = dict(a=0.05, sigma=0.01, expiry=1.0, start=1.0, pay_times=times, amounts=np.array([[1e6]]),
                discount_start=0.97, discount_pay=0.94)
    price = hw.jamshidian_swaption(**args, is_payer=False)
    assert price[0] == pytest.approx(hw.jamshidian_swaption(**args, is_payer=False, root="exact")[0], rel=1e-12)
    assert price[0] > 0
    with pytest.raises(trinom_errors.InputError, match="root must be one of quantlib, exact"):
        hw.jamshidian_swaption(**args, root="brent")


def test_quantlib_forward_rate_equals_quantlibs(curves):
    curve, handle = curves
    times = np.array([0.0, 1e-5, 0.3, 1.0, 2.7, 10.0, 30.0, 39.0])
    ours = hw.quantlib_forward_rate(curve.discount, times)
    theirs = [handle.forwardRate(float(t), float(t), ql.Continuous, ql.NoFrequency).rate() for t in times]
    assert ours.tolist() == pytest.approx(theirs, rel=1e-12, abs=1e-15)


def test_forward_swap_rate_and_annuity_equal_quantlib(curves):
    curve, handle = curves
    for case in SWAPTIONS:
        s = our_swaption(curve, case)
        swap = ql_swaption(s, case, handle).underlying()
        swap.setPricingEngine(ql.DiscountingSwapEngine(handle))
        assert float(s.forward_rate[0]) == pytest.approx(swap.fairRate(), rel=1e-13, abs=1e-16)
        assert float(s.annuity[0]) == pytest.approx(abs(swap.fixedLegBPS()) / 1e-4, rel=1e-13)


def test_swaption_parity_and_batch(curves):
    """payer - receiver = annuity (F - K); a batch with an (a, sigma) per row equals the rows one by one."""
    curve, _handle = curves
    exercise = period_dates(np.array([AS_OF] * 3), "2Y")
    end = add_period(exercise, np.array([12, 60, 120]), 0)
    s = Swaptions.on_curve(curve, exercise=exercise, end=end, fixed_rate=[0.02, 0.03, 0.04], payer=True)
    r = s.replace_rates(s.fixed_rate, payer=False)
    a, sigma = np.array([0.01, 0.05, 0.3]), np.array([0.005, 0.01, 0.02])
    parity = s.price(a=a, sigma=sigma, root="exact") - r.price(a=a, sigma=sigma, root="exact")
    assert parity == pytest.approx(s.annuity * (s.forward_rate - s.fixed_rate), rel=1e-12, abs=1e-15)
    for root in hw.ROOTS:
        one_by_one = [float(s.take([k]).price(a=a[k], sigma=sigma[k], root=root)[0]) for k in range(3)]
        assert s.price(a=a, sigma=sigma, root=root).tolist() == pytest.approx(one_by_one, rel=1e-15)
    # QuantLib's root: parity up to the root's error (about 1e-6 of the prices)
    parity = s.price(a=a, sigma=sigma) - r.price(a=a, sigma=sigma)
    assert parity == pytest.approx(s.annuity * (s.forward_rate - s.fixed_rate), rel=1e-5)


def test_gradients_equal_finite_differences(curves):
    curve, _handle = curves
    exercise = period_dates(np.array([AS_OF] * 3), "1Y")
    end = add_period(exercise, np.array([60, 120, 12]), 0)
    s = Swaptions.on_curve(curve, exercise=exercise, end=end, start=exercise + np.array([0, 30, 0]),
                           frequency=[1, 2, 4], payer=[True, False, True])
    s = s.replace_rates(s.forward_rate + np.array([0.0, 0.01, -0.005]))
    caps = Caps.on_curve(curve, start=exercise, end=end, strike=0.03, cap=[True, False, True])
    exact = {"root": "exact"}
    for a, sigma in [(0.05, 0.01), (0.5, 0.02), (0.002, 0.008)]:
        for instrument, options in ((s, exact), (caps, {})):
            _price, d_a, d_sigma = instrument.price(a=a, sigma=sigma, gradient=True, **options)
            h = 1e-5 * a
            fd_a = (instrument.price(a=a + h, sigma=sigma, **options)
                    - instrument.price(a=a - h, sigma=sigma, **options)) / (2 * h)
            fd_s = (instrument.price(a=a, sigma=sigma * (1 + 1e-6), **options)
                    - instrument.price(a=a, sigma=sigma * (1 - 1e-6), **options)) / (2e-6 * sigma)
            assert d_a == pytest.approx(fd_a, rel=1e-5)
            assert d_sigma == pytest.approx(fd_s, rel=1e-6)
    # QuantLib's root: the same formula at its root, within the root's error of the exact root's
    _price, d_a, d_sigma = s.price(a=0.05, sigma=0.01, gradient=True)
    _price, e_a, e_sigma = s.price(a=0.05, sigma=0.01, gradient=True, root="exact")
    assert d_a == pytest.approx(e_a, rel=1e-5) and d_sigma == pytest.approx(e_sigma, rel=1e-5)


# --- caps and floors ----------------------------------------------------------------------------------------------

def test_caps_and_floors_equal_analytic_cap_floor_engine(curves):
    curve, handle = curves
    rng = np.random.default_rng(11)
    worst = 0.0
    cases = 0
    for a, sigma in [(0.001, 0.006), (0.03, 0.01), (0.1, 0.008), (0.4, 0.02)]:
        engine = ql.AnalyticCapFloorEngine(ql.HullWhite(handle, a, sigma), handle)
        for _ in range(12):
            frequency = int(rng.choice([1, 2, 4, 12]))
            day_count = str(rng.choice(list(DAY_COUNTS)))
            start = AS_OF + int(rng.integers(1, 3 * 365))
            end = add_period(np.array([start]), np.array([int(rng.integers(1, 20 * 12))]), int(rng.integers(0, 40)))
            strike = float(rng.uniform(0.005, 0.06))
            is_cap = bool(rng.random() < 0.5)
            caps = Caps.on_curve(curve, start=[start], end=end, strike=strike, frequency=frequency, day_count=day_count,
                                 cap=is_cap, notional=1e6)
            index = ql.IborIndex("index", ql.Period(12 // frequency, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(),
                                 ql.Unadjusted, False, DAY_COUNTS[day_count], handle)
            leg = ql.IborLeg([1e6], ql_schedule(start, end[0], 12 // frequency), index, DAY_COUNTS[day_count])
            instrument = ql.Cap(leg, [strike]) if is_cap else ql.Floor(leg, [strike])
            instrument.setPricingEngine(engine)
            assert int(caps.count[0]) == len(leg)
            ours = float(caps.price(a=a, sigma=sigma)[0])
            worst = max(worst, abs(ours / instrument.NPV() - 1))
            cases += 1
    WORST["caps and floors vs AnalyticCapFloorEngine"] = worst
    assert cases == 48 and worst <= 1e-10


def test_caplet_forwards_and_at_the_money_rate(curves):
    curve, _handle = curves
    caps = Caps.on_curve(curve, start=["2025-04-02"], end=["2030-04-02"])
    live = caps.accrual[0] > 0
    annuity = caps.accrual[0, live] * caps.discount_end[0, live]
    assert caps.forward_rate[0] == pytest.approx((caps.caplet_forwards[0, live] * annuity).sum() / annuity.sum(),
                                                 rel=1e-13)
    assert caps.strike[0] == caps.forward_rate[0]


# --- legs ----------------------------------------------------------------------------------------------------------

def test_forward_legs_equal_quantlib_schedules():
    rng = np.random.default_rng(5)
    starts = AS_OF + rng.integers(0, 3650, 300)
    ends = add_period(starts, rng.integers(1, 240, 300), rng.integers(0, 3, 300) * rng.integers(0, 20, 300))
    frequency = rng.choice([1, 2, 4, 12], 300)
    names = list(DAY_COUNTS)
    day_count = np.array([names[k] for k in rng.integers(0, len(names), 300)], dtype=object)
    # month ends, 29 Februaries
    starts[:4] = np.array(["2024-02-29", "2024-08-31", "2025-01-31", "2024-03-30"], dtype="datetime64[D]")
    ends[:4] = add_period(starts[:4], [60, 6, 13, 11], 0)
    leg = fixed_leg(start=starts, end=ends, frequency=frequency, day_count=day_count)
    for k in range(300):
        schedule = ql_schedule(starts[k], ends[k], 12 // int(frequency[k]))
        dates = [np.datetime64(f"{d.year():04d}-{d.month():02d}-{d.dayOfMonth():02d}") for d in schedule]
        n = int(leg.count[k])
        ours = leg.pay_days[k, :n].view("datetime64[D]").tolist()
        assert ours == [d.astype(object) for d in dates[1:]], k
        fractions = [DAY_COUNTS[day_count[k]].yearFraction(ql_date(s), ql_date(e))
                     for s, e in itertools.pairwise(dates)]
        assert leg.accrual[k, :n].tolist() == pytest.approx(fractions, rel=1e-15, abs=1e-16)


def test_act_act_icma_legs_equal_quantlibs_fixed_rate_legs():
    """ACT/ACT-ICMA on forward-generated legs: QuantLib's FixedRateLeg with ActualActual(ISMA), whose reference
    periods are the leg's own (a short last period: from its start one tenor on; a single short one: from its end
    one tenor back)."""
    rng = np.random.default_rng(8)
    starts = AS_OF + rng.integers(0, 3650, 300)
    ends = add_period(starts, rng.integers(1, 240, 300), rng.integers(0, 3, 300) * rng.integers(0, 20, 300))
    starts[:4] = np.array(["2024-02-29", "2024-08-31", "2025-01-31", "2024-03-30"], dtype="datetime64[D]")
    ends[:4] = add_period(starts[:4], [60, 6, 13, 11], 0)
    frequency = rng.choice([1, 2, 4, 12], 300)
    leg = fixed_leg(start=starts, end=ends, frequency=frequency, day_count="ACT/ACT-ICMA")
    for k in range(300):
        schedule = ql_schedule(starts[k], ends[k], 12 // int(frequency[k]))
        coupons = ql.FixedRateLeg(schedule, ql.ActualActual(ql.ActualActual.ISMA), [1.0], [0.05])
        accruals = [ql.as_fixed_rate_coupon(c).accrualPeriod() for c in coupons]
        n = int(leg.count[k])
        assert n == len(accruals)
        assert leg.accrual[k, :n].tolist() == pytest.approx(accruals, rel=1e-15, abs=1e-16)


def test_periods():
    months, days, problems = parse_periods(["6M", "1y", " 10Y ", "18M", "2W", "10D", "1Y6M", "", "M", "0D", "-1Y"],
                                           field="tenor")
    assert months.tolist()[:7] == [6, 12, 120, 18, 0, 0, 18]
    assert days.tolist()[:7] == [0, 0, 0, 0, 14, 10, 0]
    assert [p[0] for p in problems] == [7, 8, 9, 10]
    assert "tenor '0D' is not a period" in problems[2][2]


# --- Black and Bachelier --------------------------------------------------------------------------------------------

def test_black_and_bachelier_equal_quantlib():
    rng = np.random.default_rng(2)
    n = 400
    forward = rng.uniform(-0.005, 0.08, n)
    shift = np.where(rng.random(n) < 0.5, 0.0, 0.02)
    forward = np.maximum(forward, -shift + 1e-3)
    strike = np.maximum(forward + rng.normal(0.0, 0.01, n), -shift + 1e-4)
    expiry = rng.uniform(0.1, 30.0, n)
    annuity = rng.uniform(0.5, 15.0, n)
    call = rng.random(n) < 0.5
    lognormal = rng.uniform(0.05, 0.8, n)
    normal = rng.uniform(0.001, 0.02, n)
    black = vol.black_price(forward=forward, strike=strike, expiry=expiry, vol=lognormal, annuity=annuity, shift=shift,
                            is_call=call)
    bachelier = vol.bachelier_price(forward=forward, strike=strike, expiry=expiry, vol=normal, annuity=annuity,
                                    is_call=call)
    kind = [ql.Option.Call if c else ql.Option.Put for c in call]
    ql_black = np.array([ql.blackFormula(k, float(x), float(f), float(s * np.sqrt(t)), float(d), float(h))
                         for k, x, f, s, t, d, h in zip(kind, strike, forward, lognormal, expiry, annuity, shift,
                                                        strict=True)])
    ql_bachelier = np.array([ql.bachelierBlackFormula(k, float(x), float(f), float(s * np.sqrt(t)), float(d))
                             for k, x, f, s, t, d in zip(kind, strike, forward, normal, expiry, annuity, strict=True)])
    assert np.abs(black - ql_black).max() <= 1e-13 * annuity.max()
    assert np.abs(bachelier - ql_bachelier).max() <= 1e-13 * annuity.max()
    big = ql_black > 1e-8
    worth = ql_bachelier > 1e-8
    worst = max(float(np.abs(black[big] / ql_black[big] - 1).max()),
                float(np.abs(bachelier[worth] / ql_bachelier[worth] - 1).max()))
    WORST["Black and Bachelier vs QuantLib (prices over 1e-8)"] = worst
    # far out of the money both formulas subtract nearly equal terms, and QuantLib's normal distribution function
    # (its own erf) differs from erfc's in the last digits: 1.4e-10 relative at a price of 1.2e-7
    assert worst <= 1e-9
    # implied volatilities: the round trip, and QuantLib's own inversions
    black_iv = vol.black_implied_vol(price=black, forward=forward, strike=strike, expiry=expiry, annuity=annuity,
                                     shift=shift, is_call=call)
    bachelier_iv = vol.bachelier_implied_vol(price=bachelier, forward=forward, strike=strike, expiry=expiry,
                                             annuity=annuity, is_call=call)
    intrinsic = np.maximum(np.where(call, 1.0, -1.0) * (forward - strike), 0.0) * annuity
    resolved = (black - intrinsic) > 1e-9 * black
    assert np.abs(black_iv / lognormal - 1)[resolved].max() <= 1e-9
    resolved = (bachelier - intrinsic) > 1e-9 * bachelier
    assert np.abs(bachelier_iv / normal - 1)[resolved].max() <= 1e-9
    theirs = np.array([ql.bachelierBlackFormulaImpliedVol(k, float(x), float(f), float(t), float(p), float(d))
                       for k, x, f, t, p, d in zip(kind, strike, forward, expiry, bachelier, annuity, strict=True)])
    good = resolved & (bachelier - intrinsic > 1e-6 * bachelier)
    assert np.abs(bachelier_iv - theirs)[good].max() <= 1e-6 * normal.max()  # QuantLib's is an approximation


def test_implied_vols_far_from_the_money_and_bounds():
    strikes = np.array([0.0001, 0.001, 0.01, 0.03, 0.1, 0.3, 1.0])
    out_of_the_money = strikes > 0.03  # calls above the forward, puts below
    p = vol.black_price(forward=0.03, strike=strikes, expiry=5.0, vol=0.3, is_call=out_of_the_money)
    implied = vol.black_implied_vol(price=p, forward=0.03, strike=strikes, expiry=5.0, is_call=out_of_the_money)
    assert implied == pytest.approx(0.3, rel=1e-12)
    # in the money, the time value is all that tells the volatility: 1e-9 of the price at strike 0.001
    p = vol.black_price(forward=0.03, strike=0.001, expiry=5.0, vol=0.3)
    assert float(vol.black_implied_vol(price=p, forward=0.03, strike=0.001, expiry=5.0)) == pytest.approx(0.3, rel=1e-8)
    strikes = np.array([-0.02, 0.0, 0.01, 0.03, 0.05, 0.1])
    out_of_the_money = strikes > 0.03
    p = vol.bachelier_price(forward=0.03, strike=strikes, expiry=5.0, vol=0.01, is_call=out_of_the_money)
    implied = vol.bachelier_implied_vol(price=p, forward=0.03, strike=strikes, expiry=5.0, is_call=out_of_the_money)
    assert implied == pytest.approx(0.01, rel=1e-12)
    # below the intrinsic value, above the forward, a non-positive expiry: NaN; at the intrinsic value: 0
    out = vol.black_implied_vol(price=[0.001, 0.031, 0.01, 0.02], forward=0.03, strike=[0.01, 0.01, 0.03, 0.01],
                                expiry=[1.0, 1.0, 0.0, 1.0])
    assert np.isnan(out[:3]).all() and out[3] == 0.0
    assert np.isnan(vol.bachelier_implied_vol(price=-1e-3, forward=0.03, strike=0.03, expiry=1.0))


def test_doctests():
    for module in (hw, vol, periods_module):
        assert doctest.testmod(module).failed == 0


def test_report_worst_agreement():
    """Prints the worst agreement figures of this file (run with -s to see them)."""
    for name, value in WORST.items():
        print(f"{name}: {value:.2e}")
