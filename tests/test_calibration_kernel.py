"""The per-trade Levenberg-Marquardt in Futhark (fut/calibrate.fut, trinom.engines.calibration_kernel) against NumPy's
(trinom.model.calibration.levenberg_marquardt on Swaptions.price): the same iterates step by step, the same codes,
stops and bound hits, and fits that the objective cannot tell apart; calibrate_baskets(backend=...) end to end,
its statuses and messages; the backend's errors. The c and multicore targets run here (``make lib`` builds them;
skipped with the reason where not built); the cuda target is marked ``gpu``.

Why not the same bits: the kernel sums in order (NumPy pairwise) and has its own expm1 and exp, so every value
differs from NumPy's in the last bits. The iterates follow NumPy's to about 1e-12 while the cost is well above its
rounding; at the end, where a step is decided by costs equal to within their rounding (a flat valley in ``a``),
the two may stop at different points of the valley: as far apart as NumPy's own result moves when its rounding
changes (trades batched differently), and as good, the objective's values equal to 1e-10.
"""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import gpu_present
from trinom.analytics.baskets import calibrate_baskets, trade_baskets
from trinom.engines import BackendUnavailable
from trinom.engines.calibration_kernel import (
    available,
    levenberg_marquardt_kernel,
    levenberg_marquardt_scenarios,
    per_quote_flows,
)
from trinom.model import DatedCurve
from trinom.model.calibration import CONVERGED, MAX_ITERATIONS, NOT_RUN, LMResult, levenberg_marquardt
from trinom.model.quotes import VolQuotes, VolSurface
from trinom.model.rate_options import Swaptions

AS_OF = np.datetime64("2025-01-02")
CPU_TARGETS = ("c", "multicore")


def need(target: str) -> None:
    usable, why = available(target)
    if not usable:
        pytest.skip(f"calibration kernel on {target}: {why}")


@pytest.fixture(scope="module")
def curve() -> DatedCurve:
    years = np.array([1, 2, 3, 5, 7, 10, 15, 20, 30, 40])
    dates = [str(AS_OF + round(365.25 * y)) for y in years]
    return DatedCurve(as_of=str(AS_OF), dates=dates, zero_rates=0.02 + 0.015 * (1 - np.exp(-years / 8)), name="EUR")


# --- the solver on padded arrays ---------------------------------------------------------------------------------

class Problem:
    """``n`` trades of 1 to ``most`` co-terminal swaptions (random ends, legs, sides and strikes), priced at a random
    ``(a, sigma)`` per trade and perturbed by ``noise`` (relative), as the kernel's padded arrays and NumPy's
    residual function over the same quotes."""

    def __init__(self, curve: DatedCurve, rng: np.random.Generator, n: int, most: int = 12, noise: float = 0.01,
                 error: str = "relative_price", fixed: float = 0.3):
        counts = rng.integers(1, most + 1, n)
        years = rng.integers(2, 31, n)
        end = AS_OF + np.round(years * 365.25).astype(int)
        trade = np.repeat(np.arange(n), counts)
        slot = np.concatenate([np.arange(c) for c in counts])
        first = AS_OF + rng.integers(20, 365, n)
        step = np.maximum((end - first).astype(int) // (counts + 1), 1)
        exercise = first[trade] + slot * step[trade]
        swaptions = Swaptions.on_curve(curve, exercise=exercise, end=end[trade],
                                       frequency=rng.choice([1, 2, 4], n)[trade], payer=rng.random(n)[trade] < 0.5)
        swaptions = swaptions.replace_rates(swaptions.forward_rate * rng.uniform(0.7, 1.3, trade.size))
        a_true, sigma_true = rng.uniform(0.005, 0.15, n), rng.uniform(0.006, 0.014, n)
        market = swaptions.price(a=a_true[trade], sigma=sigma_true[trade], root="exact")
        market = market * (1.0 + noise * rng.standard_normal(trade.size))
        width, legs = int(counts.max()), int(swaptions.count.max())
        self.valid = np.zeros((n, width), dtype=bool)
        self.valid[trade, slot] = True
        index = np.zeros((n, width), dtype=np.int64)
        index[trade, slot] = np.arange(trade.size)
        self.index, self.swaptions, self.market = index, swaptions, market
        self.scale = 1.0 / market if error == "relative_price" else np.ones(trade.size)
        free_a = rng.random(n) >= fixed
        free_a &= counts > 1  # one quote cannot fix both
        self.free = np.stack([free_a, np.ones(n, dtype=bool)], axis=1)
        self.x0 = np.stack([np.where(free_a, 0.05, a_true), np.full(n, 0.01)], axis=1)
        self.lower = np.where(self.free, [1e-8, 1e-8], -np.inf)
        self.upper = np.where(self.free, [5.0, 1.0], np.inf)

        def slots(values: np.ndarray) -> np.ndarray:
            return values[index]

        s = swaptions
        self.arrays = dict(x0=self.x0, lower=self.lower, upper=self.upper, free=self.free, valid=self.valid,
                           expiry=slots(s.exercise), start=slots(s.start), discount_start=slots(s.discount_start),
                           notional=slots(s.notional), payer=slots(s.payer), market=slots(market),
                           scale=slots(self.scale), rate=slots(s.fixed_rate),
                           **per_quote_flows(valid=self.valid, pay_time=s.pay_time[:, :legs][index],
                                             accrual=s.accrual[:, :legs][index],
                                             discount_pay=s.discount_pay[:, :legs][index], count=slots(s.count)))

    def residuals(self, x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        here = self.valid[rows]
        flat = self.index[rows][here]
        who = np.broadcast_to(np.arange(rows.size)[:, None], here.shape)[here]
        price, d_a, d_s = self.swaptions.take(flat).price(a=x[who, 0], sigma=x[who, 1], gradient=True, root="exact")
        scale = self.scale[flat]
        r = np.zeros(here.shape)
        jac = np.zeros((*here.shape, 2))
        r[here] = (price - self.market[flat]) * scale
        jac[here] = np.stack([d_a * scale, d_s * scale], axis=1)
        return r, jac

    def numpy(self, **options: float) -> LMResult:
        with np.errstate(over="ignore", under="ignore"):
            return levenberg_marquardt(self.residuals, self.x0, lower=self.lower, upper=self.upper, free=self.free,
                                       mask=self.valid, **options)

    def kernel(self, target: str, **options: float) -> LMResult:
        return levenberg_marquardt_kernel(**self.arrays, target=target, **options)


def relative(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(x - y) / np.maximum(np.abs(y), 1e-300)


def cost_floor(problem: Problem, ref: LMResult) -> np.ndarray:
    """Per trade, how far two solvers' costs may differ: 1e-10 of it, plus what a change of 1e-13 (per unit notional)
    in its prices makes of it (the cost's rounding where it is small), plus 1e-26 (an exact fit)."""
    return 1e-10 * ref.cost + 1e-13 * np.sum(np.abs(ref.residuals) * problem.arrays["scale"], axis=1) + 1e-26


@pytest.mark.parametrize("target", CPU_TARGETS)
@pytest.mark.parametrize("error", ["relative_price", "price"])
def test_iterates_follow_numpy_step_by_step(curve, target, error):
    """After 1 and 2 iterations (accepted or rejected steps) the parameters are NumPy's to 1e-9 relative, with the
    same codes and iteration counts: the same damped steps, projections, acceptances and damping. After 4 and 8,
    nearly all still are; the rest are trades that stopped (or not) on a test of the cost's rounding ("cost": a
    decrease below 1e-13 of it), or that move along a flat valley whose steps magnify the last bits."""
    need(target)
    problem = Problem(curve, np.random.default_rng(3), 300, error=error)
    for k in (1, 2, 4, 8):
        ref, got = problem.numpy(max_iterations=k), problem.kernel(target, max_iterations=k)
        close = relative(got.x, ref.x).max(axis=1) <= 1e-9
        same = (got.code == ref.code) & (got.iterations == ref.iterations)
        if k <= 2:
            assert close.all() and same.all(), (k, relative(got.x, ref.x).max())
        else:
            assert close.mean() >= 0.9 and same.mean() >= 0.95, (k, close.mean(), same.mean())


@pytest.mark.parametrize("target", CPU_TARGETS)
@pytest.mark.parametrize("error", ["relative_price", "price"])
def test_converged_fits_agree_with_numpy(curve, target, error):
    """Run to the end (1 to 12 quotes a trade, a fixed for about a third, payers and receivers, strikes 30% around
    the money, 1% price noise, a few quotes worth 1e-60): the same codes and bound hits; the same cost to 1e-10
    relative, or to what a change of 1e-13 (per unit notional) in the prices makes of it where the cost is at its
    rounding (an exact fit: 0 against 1e-28); sigma with a fixed to 1e-8; with a free, parameters as far apart as
    the objective allows: the quadratic model's cost of their difference is within that (a flat valley in a can
    leave them 1e-4 apart along it), the median difference below 1e-9."""
    need(target)
    problem = Problem(curve, np.random.default_rng(7), 400, error=error)
    ref, got = problem.numpy(max_iterations=500), problem.kernel(target, max_iterations=500)
    assert (got.code == ref.code).all() and (ref.code == CONVERGED).mean() >= 0.95
    assert (got.at_lower == ref.at_lower).all() and (got.at_upper == ref.at_upper).all()
    floor = cost_floor(problem, ref)
    assert (np.abs(got.cost - ref.cost) <= floor).all(), (np.abs(got.cost - ref.cost) / floor).max()
    fixed = ~problem.free[:, 0]
    assert relative(got.x[fixed], ref.x[fixed]).max() <= 1e-8
    _r, jac = problem.residuals(ref.x, np.arange(len(ref.x)))
    hessian = np.einsum("bmi,bmj->bij", jac, jac)
    step = got.x - ref.x
    apart = 0.5 * np.einsum("bi,bij,bj->b", step, hessian, step)
    assert (apart <= 10 * floor).all(), (apart / floor).max()
    assert np.median(relative(got.x, ref.x)) <= 1e-9
    # the residuals the kernel returns are NumPy's at its parameters: the prices to 1e-14 (per unit notional)
    r_at, j_at = problem.residuals(got.x, np.arange(len(got.x)))
    assert (np.abs(got.residuals - r_at) <= 1e-14 * problem.arrays["scale"]).all()
    # and so are its model prices at them, and its flag of a flat objective (some free parameter moves some price)
    price = problem.swaptions.take(problem.index[problem.valid]).price(
        a=np.repeat(got.x[:, 0], problem.valid.sum(axis=1)), sigma=np.repeat(got.x[:, 1], problem.valid.sum(axis=1)),
        root="exact")
    assert np.abs(got.model[problem.valid] - price).max() <= 1e-14
    assert (got.model[~problem.valid] == 0).all()
    moving = (np.abs(j_at) * problem.free[:, None, :] > 0).any(axis=(1, 2))
    assert (got.moving == moving).all()


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_exact_fits_stop_as_numpy_does(curve, target):
    """Quotes that are model prices (no noise), tolerance 1e-10 (above the cost's rounding): nearly always the same
    reasons and iteration counts as NumPy, the parameters found to 1e-8; NOT_RUN where a trade has no quote, MAX_ITERATIONS
    where it has too few steps."""
    need(target)
    problem = Problem(curve, np.random.default_rng(11), 200, noise=0.0)
    ref, got = problem.numpy(tolerance=1e-10), problem.kernel(target, tolerance=1e-10)
    assert (got.code == CONVERGED).all() and (ref.code == CONVERGED).all()
    assert (got.reason == ref.reason).mean() >= 0.95 and (got.iterations == ref.iterations).mean() >= 0.95
    assert relative(got.x, ref.x).max() <= 1e-8
    problem.valid[:5] = False
    problem.arrays["valid"] = problem.valid
    ref, got = problem.numpy(max_iterations=2), problem.kernel(target, max_iterations=2)
    assert (got.code[:5] == NOT_RUN).all() and (got.code == ref.code).all()
    assert (got.code[5:] != CONVERGED).any() and set(got.code[5:].tolist()) <= {CONVERGED, MAX_ITERATIONS}


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_scenarios_in_one_call_are_each_scenario_alone(curve, target):
    """levenberg_marquardt_scenarios: three scenarios of the same 300 trades in one call (the market prices moved,
    a fifth of the quotes not valid in one, the discount factors moved, other starts), what they share passed once:
    each is the fit levenberg_marquardt_kernel gives it alone, to the bit (parameters, costs, codes, reasons,
    iterations, bounds hit, the flat-objective flag, model prices and residuals); a slot whose quote is not valid
    adds nothing, as an empty slot does. Without the model prices, the same fits."""
    need(target)
    problem = Problem(curve, np.random.default_rng(31), 300)
    arrays = problem.arrays
    n, q = arrays["valid"].shape
    flows = arrays["pay_time"].shape[1]
    assert np.array_equal(arrays["start"], arrays["expiry"])  # the swaps start at the exercise
    rng = np.random.default_rng(5)
    scenarios = []
    for k in range(3):
        market = arrays["market"] * (1.0 + 0.02 * k * rng.standard_normal((n, q)))
        valid = arrays["valid"] & (rng.random((n, q)) < 0.8) if k == 1 else arrays["valid"]
        scenarios.append({**arrays, "market": market, "scale": 1.0 / market, "valid": valid,
                          "discount_pay": arrays["discount_pay"] ** (1.0 + 0.01 * k),
                          "discount_start": arrays["discount_start"] ** (1.0 + 0.01 * k),
                          "x0": arrays["x0"] * (1.0 + 0.1 * k)})
    shared = dict(quote=np.where(arrays["valid"], np.arange(n * q).reshape(n, q), -1), first=arrays["first"],
                  count=arrays["count"], pay_time=arrays["pay_time"], accrual=arrays["accrual"],
                  date=np.arange(n * flows).reshape(n, flows), expiry=arrays["expiry"].ravel(),
                  notional=arrays["notional"].ravel(), payer=arrays["payer"].ravel())
    per_scenario = {name: np.stack([s[name] for s in scenarios]) for name in ("x0", "lower", "upper", "free")}
    per_scenario.update({name: np.stack([s[name].ravel() for s in scenarios])
                         for name in ("valid", "market", "scale", "rate", "discount_start")})
    per_scenario["discount"] = np.stack([s["discount_pay"].ravel() for s in scenarios])
    together = levenberg_marquardt_scenarios(**shared, **per_scenario, target=target, with_model=True)
    light = levenberg_marquardt_scenarios(**shared, **per_scenario, target=target)
    assert len(together) == len(light) == 3
    for scenario, fit, fast in zip(scenarios, together, light, strict=True):
        alone = levenberg_marquardt_kernel(**scenario, target=target)
        for name in ("x", "cost", "code", "reason", "iterations", "at_lower", "at_upper", "moving"):
            assert np.array_equal(getattr(fit, name), getattr(alone, name)), name
            assert np.array_equal(getattr(fast, name), getattr(alone, name)), name
        used = scenario["valid"]
        assert np.array_equal(fit.model[used], alone.model[used])
        assert np.array_equal(fit.residuals[used], alone.residuals[used])
        assert (fit.residuals[~used] == 0).all() and fast.model.shape == fast.residuals.shape == (n, 0)
    assert (together[1].code != together[0].code).any()  # the scenarios differ
    with pytest.raises(ValueError, match="outside the discount factors"):
        levenberg_marquardt_scenarios(**{**shared, "date": shared["date"] + 1}, **per_scenario, target=target)


# --- calibrate_baskets(backend=...) ----------------------------------------------------------------------------

def matrix(vol: float = 0.0095, slope: float = 0.0002) -> VolSurface:
    expiries = ["6M", "1Y", "2Y", "3Y", "5Y", "7Y", "10Y", "15Y"]
    tenors = ["1Y", "2Y", "5Y", "10Y", "15Y", "20Y", "30Y"]
    e, t = np.meshgrid(np.arange(len(expiries)), np.arange(len(tenors)), indexing="ij")
    noise = np.random.default_rng(0).normal(0.0, 0.0002, e.shape)
    quotes = VolQuotes.from_columns(curve="EUR", expiry=[expiries[i] for i in e.ravel()],
                                    tenor=[tenors[j] for j in t.ravel()],
                                    vol=(vol - slope * e - 0.0001 * t + noise).ravel(), kind="normal")
    return VolSurface.from_quotes(quotes, as_of=AS_OF)


def random_baskets(n: int, rng: np.random.Generator) -> object:
    """``n`` trades of 1 to 12 exercise dates, ends 2 to 30 years out, random legs, sides and deal rates."""
    years = rng.integers(2, 31, n)
    end = AS_OF + np.round(years * 365.25).astype(int)
    first = AS_OF + rng.integers(20, 365, n)
    exercise = []
    for k in range(n):
        count = int(rng.integers(1, 13))
        step = max(int((end[k] - first[k]).astype(int)) // (count + 1), 1)
        exercise.append([first[k] + j * step for j in range(count)])
    return trade_baskets(id=[f"T{k}" for k in range(n)], curve="EUR", exercise=exercise, end=end,
                         rate=rng.uniform(0.015, 0.045, n), frequency=rng.choice([1, 2, 4], n),
                         day_count=rng.choice(["30/360", "ACT/360", "ACT/365F"], n),
                         side=rng.choice(["payer", "receiver"], n))


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_calibrate_baskets_on_a_futhark_target(curve, target):
    """300 random baskets, a fixed and free, relative_price and price, at the money and at the deal's rate: the
    same statuses as NumPy's, sigma with a fixed to 1e-7 (a deal-struck quote deep in the money tells sigma a
    thousand times less sharply than its price), and the same vol rmse per trade to 1e-6 relative or 1e-7 (0.001 bp):
    the model prices are the kernel's, and a quote so deep in the money that its vega is 1e-8 of its price turns the
    last bit of its price into 2e-8 of implied vol."""
    need(target)
    baskets = random_baskets(300, np.random.default_rng(2))
    surface = matrix()
    for a in (0.03, None):
        for error in ("relative_price", "price"):
            for strike in ("atm", "deal"):
                kw = dict(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, a=a, error=error, strike=strike)
                ref, got = calibrate_baskets(**kw), calibrate_baskets(**kw, backend=target)
                case = (a, error, strike)
                assert got.status.tolist() == ref.status.tolist(), case
                fit = ref.status != "no fit"
                assert (got.rmse[fit] == pytest.approx(ref.rmse[fit], rel=1e-6, abs=1e-7)), case
                if a is not None:
                    assert relative(got.sigma[fit], ref.sigma[fit]).max() <= 1e-7, case
                else:
                    assert np.median(relative(got.a[fit], ref.a[fit])) <= 1e-8, case


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_statuses_and_messages_on_a_futhark_target(curve, target):
    """The special cases give NumPy's statuses and messages: one quote with a free (held at its guess), a at its
    lower bound (vols rising with expiry), sigma at an upper bound that the quotes lie beyond (unreachable), no
    convergence within max_iterations, no quotes."""
    need(target)
    rising = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "1Y", "10Y", "10Y"], tenor=["1Y", "20Y", "1Y", "20Y"],
                                    vol=[0.004, 0.006, 0.012, 0.014], kind="normal")
    surface = VolSurface.from_quotes(rising, as_of=AS_OF)
    baskets = trade_baskets(
        id=["past", "one", "up", "none", "two"], curve="EUR",
        exercise=[["2024-06-03"], ["2027-01-04"], [f"{y}-01-04" for y in range(2026, 2035)], [],
                  ["2026-01-05", "2030-01-03"]],
        end=["2030-01-02", "2030-01-02", "2036-01-02", "2030-01-02", "2035-01-02"], side=["payer", "receiver"] * 2
        + ["payer"])
    cases = [dict(), dict(bounds={"sigma": (1e-8, 0.002)}), dict(max_iterations=1), dict(error="price", a=0.02)]
    for options in cases:
        kw = dict(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, **options)
        ref, got = calibrate_baskets(**kw), calibrate_baskets(**kw, backend=target)
        assert got.status.tolist() == ref.status.tolist(), options
        assert [m.split(" in ")[0] for m in got.message] == [m.split(" in ")[0] for m in ref.message], options
    plain = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, backend=target)
    assert plain.status.tolist()[:4] == ["no fit", "converged", "bound", "no fit"]
    assert "a held at its guess 0.05" in plain.message[1]
    assert plain.message[2].startswith("a at its lower bound 1e-08")
    capped = calibrate_baskets(curves=curve, vols=surface, as_of=AS_OF, baskets=baskets, backend=target,
                               bounds={"sigma": (1e-8, 0.002)})
    assert capped.status[1] == "bound" and capped.sigma[1] == 0.002 and "sigma at its upper bound" in capped.message[1]


def test_backend_errors(curve):
    """A Futhark target fits relative_price and price with the exact root only; an unknown backend, and a target
    that is not built, are errors that say so; auto falls back to NumPy where it cannot run the kernel."""
    baskets = trade_baskets(id=["T"], curve="EUR", exercise=[["2026-01-05", "2028-01-04"]], end="2033-01-03")
    kw = dict(curves=curve, vols=matrix(), as_of=AS_OF, baskets=baskets)
    with pytest.raises(trinom.InputError, match="backend must be one of numpy, auto, c, multicore"):
        calibrate_baskets(**kw, backend="gpu")
    with pytest.raises(trinom.InputError, match="fits error='relative_price' or 'price' with root='exact'"):
        calibrate_baskets(**kw, backend="c", error="vol")
    with pytest.raises(trinom.InputError, match="root='exact'"):
        calibrate_baskets(**kw, backend="multicore", root="quantlib")
    ref = calibrate_baskets(**kw, error="vol")
    assert calibrate_baskets(**kw, error="vol", backend="auto").sigma.tolist() == ref.sigma.tolist()
    if not available("cuda")[0]:
        with pytest.raises(BackendUnavailable, match="calibration backend 'cuda'"):
            calibrate_baskets(**kw, backend="cuda")
    if available("multicore")[0] and not gpu_present()[0]:
        auto = calibrate_baskets(**kw, backend="auto")
        assert auto.sigma.tolist() == calibrate_baskets(**kw, backend="multicore").sigma.tolist()


def test_command_line_backend(tmp_path):
    """``trinom calibrate trades.csv --backend multicore`` writes NumPy's statuses and, with ``--a``, sigma to 1e-8
    (a free converges too, along a valley NumPy stops elsewhere in); ``--backend`` without a trades file is an
    error."""
    from trinom.cli import main
    from trinom.instruments import TRADE_COLUMNS

    need("multicore")
    (tmp_path / "curve.csv").write_text("curve,date,zero\nEUR,2027-11-25,0.025\nEUR,2036-11-25,0.029\n"
                                        "EUR,2066-11-25,0.032\n")
    rows = [f"EUR,{e},{t},{0.0092 - 0.0002 * i - 0.0001 * j:.5f},normal" for i, e in enumerate(["1Y", "2Y", "5Y", "10Y"])
            for j, t in enumerate(["1Y", "5Y", "10Y", "20Y"])]
    (tmp_path / "vols.csv").write_text("curve,expiry,tenor,vol,kind\n" + "\n".join(rows) + "\n")
    book = ["C1,bond,100,2024-03-15,2036-03-15,0.05,2,30/360,,F,call,bermudan,2028-03-15,2035-09-15,100,,,,,,EUR,",
            "P1,bond,,2025-06-30,2031-06-30,0.04,1,30/360,,F,put,bermudan,2027-06-30,2030-06-30,100,,,,,,EUR,"]
    (tmp_path / "trades.csv").write_text(",".join(TRADE_COLUMNS[:22]) + "\n" + "\n".join(book) + "\n")
    common = ["calibrate", str(tmp_path / "trades.csv"), "--curve", str(tmp_path / "curve.csv"), "--vols",
              str(tmp_path / "vols.csv"), "--as-of", "2026-11-25", "--a", "0.03"]
    assert main([*common, "--out", str(tmp_path / "numpy.csv")]) == 0
    assert main([*common, "--out", str(tmp_path / "kernel.csv"), "--backend", "multicore"]) == 0
    import pandas as pd

    ref, got = pd.read_csv(tmp_path / "numpy.csv"), pd.read_csv(tmp_path / "kernel.csv")
    assert got.status.tolist() == ref.status.tolist() == ["converged", "converged"]
    assert got.sigma.to_numpy() == pytest.approx(ref.sigma.to_numpy(), rel=1e-8)
    assert main([*common[:-2], "--out", str(tmp_path / "free.csv"), "--backend", "multicore"]) == 0
    free = pd.read_csv(tmp_path / "free.csv")
    assert free.status.tolist() == ["converged", "converged"] and (free.a != 0.03).all()
    assert main(["calibrate", "--curve", str(tmp_path / "curve.csv"), "--vols", str(tmp_path / "vols.csv"),
                 "--as-of", "2026-11-25", "--out", str(tmp_path / "g.csv"), "--backend", "multicore"]) == 2


@pytest.mark.gpu
def test_cuda_target_agrees_with_numpy(curve):
    """The cuda target (NVRTC contracts a*b + c into fused multiply-adds, CUDA's exp and erfc): the same codes,
    costs and fits as NumPy, by the CPU tests' measures."""
    need("cuda")
    problem = Problem(curve, np.random.default_rng(7), 2000)
    ref, got = problem.numpy(max_iterations=500), problem.kernel("cuda", max_iterations=500)
    assert (got.code == ref.code).all() and (got.at_lower == ref.at_lower).all()
    assert (np.abs(got.cost - ref.cost) <= cost_floor(problem, ref)).all()
    for k in (1, 2):
        ref, got = problem.numpy(max_iterations=k), problem.kernel("cuda", max_iterations=k)
        assert (got.code == ref.code).all() and relative(got.x, ref.x).max() <= 1e-9
