"""Listed exercise points (docs/paper-instrument.md, "Listed exercise points"): per bond, steps at which the value is
capped (call) or floored (put) at a dirty price of their own, on every CPU bond engine.

Engines: the NumPy reference; ``futhark-paper`` (fut/bonds.fut) and ``futhark`` (fut/fast-bonds.fut: the CPU shape
with its shared forward pass, the per-bond entry and the GPU shape's classes run on the CPU) on the c and
multicore targets. Tolerances: the window's own prices reproduced to 1e-12; listed schedules against the reference
to 1e-11 (float64). tests/test_listed_exercise_gpu.py runs the same bonds on the CUDA engines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import trinom
from trinom.bonds import BondPortfolio
from trinom.engines import bonds_futhark, bonds_futhark_fast, lift
from trinom.engines import bonds_reference as reference
from trinom.errors import InputError
from trinom.instruments.bond import BOND_FIELDS, CASHFLOW_FIELDS, LISTED_FIELDS
from trinom.lattice.book import EXERCISE
from trinom.lattice.constants import CALL, PUT
from trinom.lattice.lowering import lower_bonds

CPU_TARGETS = ("c", "multicore")
WINDOW_TOLERANCE = 1e-12
ENGINE_TOLERANCE = 1e-11
CURVES = (trinom.YieldCurve([0.02, 0.025, 0.03, 0.035, 0.04], [30, 365, 1825, 3650, 10950]),
          trinom.YieldCurve([0.045, 0.04, 0.038, 0.037, 0.036], [30, 365, 1825, 3650, 10950]))


# --- bonds ---------------------------------------------------------------------------------------------------------
def coupon_bond(years: float, *, coupon: float = 5.0, period: int = 12, steps: int = 12, a: float = 0.1,
                sigma: float = 0.01, spread: float = 0.0, side: int = CALL, strike: float = 100.0,
                window: tuple[int, int, int] = (1, 0, 1), points: Sequence[tuple[int, float]] = (),
                curve: int = 0) -> dict[str, Any]:
    """One bond's fields (lists): ``coupon`` every ``period`` steps back from the maturity, 100 repaid at it;
    ``window`` is (first, last, frequency) (the default, first > last, is empty) and ``points`` its listed
    exercise points (step, dirty price)."""
    n = int(np.ceil(steps * years))
    dates = list(range(n, 0, -period))[::-1]
    return {"term_unit": [360], "term_steps": [steps], "a": [a], "sigma": [sigma], "maturity": [years],
            "cashflow_count": [len(dates)], "cashflow_step": dates, "repayment": [0.0] * (len(dates) - 1) + [100.0],
            "coupon": [coupon] * len(dates), "spread": [spread], "option_type": [side], "strike": [strike],
            "first_exercise": [window[0]], "last_exercise": [window[1]], "exercise_frequency": [window[2]],
            "curve_index": [curve], "exercise_count": [len(points)], "exercise_step": [s for s, _ in points],
            "exercise_price": [p for _, p in points]}


def portfolio(*bonds: dict[str, Any]) -> BondPortfolio:
    """The bonds one after the other."""
    return BondPortfolio(**{name: [value for bond in bonds for value in bond[name]] for name in bonds[0]})


def window_points(bonds: BondPortfolio, row: int) -> list[tuple[int, float]]:
    """The steps at which bond ``row``'s window exercises and the dirty price there (strike plus the tree's accrued
    interest), walking the cash-flow pointer as the reference does (docs/paper-instrument.md §6.2-§6.4)."""
    steps, _repayments, coupons = bonds.cashflows(row)
    n = int(bonds.height()[row])
    first, last, every = (int(getattr(bonds, f)[row]) for f in ("first_exercise", "last_exercise", "exercise_frequency"))
    strike = float(bonds.strike[row])
    p, left = len(steps) - 1, len(steps) - 1
    if p > 0 and steps[p] <= n and left > 0:
        p -= 1
    points = []
    for i in range(n - 1, -1, -1):
        S = int(steps[p])
        exercise = first <= i <= last and (S - i) % every == 0
        if i == S - 1 and left > 0:
            if p > 0 and S <= n:
                p -= 1
            left -= 1
        if exercise:
            accrued = 0.0
            S = int(steps[p])
            if S != 0 and left > 0:
                following = int(steps[p + 1])
                span, remaining = float(following - S), float(max(following - i, 0))
                accrued = ((span - remaining) / span) * float(coupons[p])
            points.append((i, strike + accrued))
    return points[::-1]


def as_listed(bonds: BondPortfolio) -> BondPortfolio:
    """``bonds`` with each window replaced by listed points at its exercise steps (an empty window)."""
    lists = [window_points(bonds, row) for row in range(len(bonds))]
    fields = {**bonds.as_dict(), "first_exercise": np.ones(len(bonds), dtype=np.int64),
              "last_exercise": np.zeros(len(bonds), dtype=np.int64)}
    return BondPortfolio(**fields, exercise_count=[len(points) for points in lists],
                         exercise_step=[s for points in lists for s, _ in points],
                         exercise_price=[p for points in lists for _, p in points])


def step_down(side: int = CALL, shift: float = 0.0, **bond: Any) -> dict[str, Any]:
    """A 10-year 6 % bond callable (or puttable) yearly from year 3 at 103, 102.5, ..., 100 plus a day-count accrued
    interest of a quarter of a coupon (``shift`` moves every price)."""
    points = [(12 * k + 3, 103.0 - 0.5 * (k - 3) + 1.5 + shift) for k in range(3, 10)]
    return coupon_bond(10.0, coupon=6.0, side=side, points=points, **bond)


def schedules() -> BondPortfolio:
    """Step-down calls and puts of several lattices, curves and spreads, some with a window too, some wide."""
    return portfolio(step_down(),
                     step_down(sigma=0.02, spread=0.5, curve=1),
                     step_down(side=PUT, sigma=0.015),
                     step_down(a=0.03, sigma=0.012, window=(60, 108, 12), strike=101.0),
                     step_down(side=PUT, a=0.05, window=(36, 96, 6), strike=99.0, curve=1),
                     coupon_bond(2.0, coupon=0.0, period=24, side=PUT, points=[(6, 97.0), (12, 98.0), (18, 99.0)]),
                     coupon_bond(4.0, coupon=3.0, period=6, steps=24, side=CALL, a=0.2,
                                 points=[(s, 100.5 + 0.01 * s) for s in range(24, 96, 3)]),
                     coupon_bond(1.0, coupon=2.0, side=PUT, a=3.0, points=[(3, 99.0), (12, 150.0)]))


def windows() -> BondPortfolio:
    """Bonds exercised on windows of every style (European, Bermudan off the coupon grid, American), with coupons
    that accrue between exercise steps."""
    return portfolio(coupon_bond(6.0, window=(24, 24, 1), strike=99.0),
                     coupon_bond(8.0, coupon=4.0, period=6, window=(13, 84, 5), strike=100.0, sigma=0.02),
                     coupon_bond(5.0, side=PUT, window=(7, 50, 1), strike=101.0, spread=1.0, curve=1),
                     coupon_bond(7.0, coupon=8.0, window=(30, 80, 1), strike=102.0, a=0.04),
                     coupon_bond(3.0, coupon=0.0, window=(6, 30, 4), strike=92.0, side=PUT))


# --- engines -------------------------------------------------------------------------------------------------------
Pricer = Callable[[BondPortfolio], np.ndarray]


def _cpu_engines() -> dict[str, Pricer]:
    engines: dict[str, Pricer] = {"reference": lambda b: reference.price(b, CURVES)}
    for target in CPU_TARGETS:
        if bonds_futhark.available(target)[0]:
            engines[f"futhark-paper/{target}"] = lambda b, t=target: bonds_futhark.price(b, CURVES, target=t)
        if bonds_futhark_fast.available(target)[0]:
            engines[f"futhark/{target}"] = lambda b, t=target: bonds_futhark_fast.price(b, CURVES, target=t)
            engines[f"futhark-one/{target}"] = lambda b, t=target: bonds_futhark_fast._run(
                ("one", ()), b, CURVES, "f64", t, {})
            engines[f"futhark-grouped/{target}"] = lambda b, t=target: bonds_futhark_fast.price_grouped(
                b, CURVES, "f64", t, {})
            engines[f"futhark-stepped/{target}"] = lambda b, t=target: bonds_futhark_fast.price_stepped(
                b, CURVES, "f64", t, {})
    return engines


ENGINES = _cpu_engines()


def test_every_cpu_engine_is_here():
    """The Futhark libraries are built on the CPU targets wherever the tests run (make lib)."""
    assert {f"futhark-paper/{t}" for t in CPU_TARGETS} <= set(ENGINES)
    assert {f"futhark/{t}" for t in CPU_TARGETS} <= set(ENGINES)


# --- (1) listed points equal to a window reproduce its prices ------------------------------------------------------
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_listed_points_at_the_windows_steps_reproduce_its_prices(engine: str):
    bonds = windows()
    listed = as_listed(bonds)
    assert bonds.validate(CURVES) == [] and listed.validate(CURVES) == []
    assert (listed.exercise_count >= 1).all()
    assert (listed.exercise_price != np.repeat(bonds.strike, listed.exercise_count)).any()  # accrued interest
    price = ENGINES[engine]
    np.testing.assert_allclose(price(listed), price(bonds), rtol=0, atol=WINDOW_TOLERANCE)
    np.testing.assert_allclose(price(listed), reference.price(bonds, CURVES), rtol=0, atol=WINDOW_TOLERANCE)


def test_window_on_coupon_dates_equals_listed_points_at_the_strike_bit_for_bit():
    """On coupon dates the tree's accrued interest is 0: the dirty prices are the strike itself."""
    bonds = portfolio(coupon_bond(10.0, window=(12, 96, 12), strike=100.5, sigma=0.015),
                      coupon_bond(10.0, side=PUT, window=(24, 108, 12), strike=99.5, sigma=0.015))
    listed = as_listed(bonds)
    assert np.array_equal(listed.exercise_price, np.concatenate([np.full(8, 100.5), np.full(8, 99.5)]))
    assert listed.exercise_step.tolist() == [*range(12, 97, 12), *range(24, 109, 12)]
    np.testing.assert_array_equal(reference.price(listed, CURVES), reference.price(bonds, CURVES))


# --- (2) step-down schedules, (3) puts, (4) empty windows ----------------------------------------------------------
@pytest.mark.parametrize("engine", sorted(set(ENGINES) - {"reference"}))
def test_step_down_schedules_equal_the_reference(engine: str):
    bonds = schedules()
    assert bonds.validate(CURVES) == []
    expected = reference.price(bonds, CURVES)
    np.testing.assert_allclose(ENGINES[engine](bonds), expected, rtol=0, atol=ENGINE_TOLERANCE)


def test_listed_points_bind_and_move_the_price_the_right_way():
    """A call at lower prices is worth less to the holder, a put at higher prices more; neither beyond the straight
    bond's value in the wrong direction."""
    base = reference.price(schedules(), CURVES)
    calls = schedules().option_type == CALL
    straight = BondPortfolio(**{**schedules().as_dict(), "exercise_price": np.where(
        np.repeat(calls, schedules().exercise_count), 1e6, 0.0), "first_exercise": np.ones(8, np.int64),
        "last_exercise": np.zeros(8, np.int64)})
    free = reference.price(straight, CURVES)
    assert (base[calls] <= free[calls]).all() and (base[~calls] >= free[~calls]).all()
    assert (base[calls] < free[calls]).sum() >= 4 and (base[~calls] > free[~calls]).sum() >= 3
    for shift in (-1.0, 1.0):
        fields = schedules().as_dict()
        fields["exercise_price"] = fields["exercise_price"] + shift
        moved = reference.price(BondPortfolio(**fields), CURVES)
        # both sides gain with higher prices (the last bond's floor at 99 does not bind; at 98 neither)
        change = np.sign(moved - base)
        assert (change[:-1] == shift).all() and change[-1] in (0.0, shift), (shift, moved - base)


def test_step_down_prices_are_each_steps_own():
    """A lower price at one listed step only changes a call's value there: the schedule is read point by point."""
    one = portfolio(step_down())
    fields = one.as_dict()
    prices = fields["exercise_price"].copy()
    values = []
    for k in range(prices.size):
        lowered = prices.copy()
        lowered[k] -= 2.0
        values.append(reference.price(BondPortfolio(**{**fields, "exercise_price": lowered}), CURVES)[0])
    base = reference.price(one, CURVES)[0]
    assert all(v < base for v in values) and len(set(values)) == len(values)


def test_put_with_listed_points():
    put = portfolio(step_down(side=PUT, sigma=0.02), step_down(side=PUT, sigma=0.02, shift=-101.0))
    got = {name: price(put) for name, price in ENGINES.items()}
    for name, prices in got.items():
        np.testing.assert_allclose(prices, got["reference"], rtol=0, atol=ENGINE_TOLERANCE, err_msg=name)
    straight = reference.price(portfolio(coupon_bond(10.0, coupon=6.0, side=PUT, sigma=0.02)), CURVES)[0]
    assert got["reference"][0] > straight + 0.1  # the floors bind
    assert got["reference"][1] == straight  # floors near 0 never bind: the straight bond bit for bit


def test_empty_window_with_listed_points():
    bond = coupon_bond(6.0, window=(30, 20, 1), strike=0.0, points=[(24, 100.0), (36, 100.0)])
    bonds = portfolio(bond)
    assert bonds.validate(CURVES) == []
    # the empty window never exercises (a window at strike 0 would call everything)
    same = portfolio({**bond, "first_exercise": [1], "last_exercise": [0], "strike": [55.0]})
    for name, price in ENGINES.items():
        # the same bits on one thread; the multicore target's level sums are split among its threads as the machine's
        # load has it, so two calls may differ in the last bit (seen under a full test run on 2 cores)
        if "multicore" in name:
            np.testing.assert_allclose(price(bonds), price(same), rtol=1e-15, atol=0, err_msg=name)
        else:
            np.testing.assert_array_equal(price(bonds), price(same), err_msg=name)
        np.testing.assert_allclose(price(bonds), reference.price(bonds, CURVES), rtol=0, atol=ENGINE_TOLERANCE,
                                   err_msg=name)
    with_window = portfolio({**bond, "first_exercise": [24], "last_exercise": [24], "strike": [100.0],
                             "exercise_count": [1], "exercise_step": [36], "exercise_price": [100.0]})
    np.testing.assert_allclose(reference.price(bonds, CURVES), reference.price(with_window, CURVES), rtol=0, atol=1e-12)


def test_window_and_listed_point_at_one_step_take_the_tighter_bound():
    for side, tight, loose in ((CALL, 99.0, 101.0), (PUT, 101.0, 99.0)):
        both = [portfolio(coupon_bond(5.0, side=side, window=(24, 24, 1), strike=a, points=[(24, b)]))
                for a, b in ((tight, loose), (loose, tight))]
        alone = portfolio(coupon_bond(5.0, side=side, points=[(24, tight)]))
        expected = reference.price(alone, CURVES)
        for bonds in both:
            for name, price in ENGINES.items():
                np.testing.assert_allclose(price(bonds), expected, rtol=0, atol=ENGINE_TOLERANCE, err_msg=name)


def test_a_point_at_the_maturity_step_is_never_reached():
    n = 60
    with_last = portfolio(coupon_bond(5.0, points=[(24, 99.0), (n, 50.0)]))
    without = portfolio(coupon_bond(5.0, points=[(24, 99.0)]))
    assert with_last.validate(CURVES) == []
    for name, price in ENGINES.items():
        np.testing.assert_array_equal(price(with_last), price(without), err_msg=name)


def test_bonds_without_points_price_as_before_beside_bonds_with_them():
    """A bond without listed points gives its own bits whether or not other bonds of the call have some."""
    plain = windows()
    mixed = BondPortfolio.concatenate([plain, schedules()])
    for name, price in ENGINES.items():
        np.testing.assert_array_equal(price(mixed)[:len(plain)], price(plain), err_msg=name)


def test_float32_follows_float64():
    bonds = schedules()
    expected = reference.price(bonds, CURVES)
    f32 = {"reference": reference.price(bonds, CURVES, "f32")}
    for target in CPU_TARGETS:
        f32[f"futhark-paper/{target}"] = bonds_futhark.price(bonds, CURVES, "f32", target=target)
        f32[f"futhark/{target}"] = bonds_futhark_fast.price(bonds, CURVES, "f32", target=target)
    for name, prices in f32.items():
        assert prices.dtype == np.float32
        np.testing.assert_allclose(prices, expected, rtol=1e-4, err_msg=name)
    np.testing.assert_array_equal(f32["futhark-paper/c"], f32["reference"])


def test_through_trinom_price_and_scenarios():
    """The engines reached through books (lowering and lifting the points), and a scenario batch."""
    from trinom.scenarios import CurveShift, SigmaShift, SpreadShift

    bonds = schedules()
    expected = reference.price(bonds, CURVES)
    for backend in ("reference", "futhark", "futhark-paper"):
        np.testing.assert_allclose(trinom.price(bonds, CURVES, backend=backend).price, expected, rtol=0,
                                   atol=ENGINE_TOLERANCE, err_msg=backend)
    scenarios = [None, CurveShift(1e-4), CurveShift(-1e-4, pillar=3), SigmaShift(1e-4), SpreadShift(0.01)]
    base = trinom.price(bonds, CURVES, scenarios=scenarios, backend="reference").price
    for k, scenario in enumerate(scenarios):
        moved = bonds
        if isinstance(scenario, (SigmaShift, SpreadShift)):
            field = "sigma" if isinstance(scenario, SigmaShift) else "spread"
            moved = BondPortfolio(**{**bonds.as_dict(), field: getattr(bonds, field) + scenario.shift})
            alone = reference.price(moved, CURVES)
        else:
            alone = trinom.price(bonds, CURVES, scenarios=[scenario], backend="reference").price[0]
        np.testing.assert_allclose(base[k], alone, rtol=0, atol=1e-12, err_msg=str(scenario))
    futhark = trinom.price(bonds, CURVES, scenarios=scenarios, backend="futhark").price
    np.testing.assert_allclose(futhark, base, rtol=0, atol=ENGINE_TOLERANCE)
    assert not np.allclose(base[3], base[0])  # the sigma move reaches the listed points' trees


# --- (5) validation ------------------------------------------------------------------------------------------------
def problems(**changes: Any) -> list[tuple[int, str, str]]:
    """validate() of three step-down bonds with the listed fields of bond 1 changed."""
    bonds = [step_down(), step_down(side=PUT), step_down()]
    bonds[1] = {**bonds[1], **changes}
    return portfolio(*bonds).validate(CURVES)


def test_listed_steps_must_ascend_within_a_bond():
    steps = [39, 51, 51, 75, 87, 99, 111]
    assert problems(exercise_step=steps) == [(1, "exercise_step", "exercise_step must be strictly ascending: exercise "
                                             "point 2 at step 51 follows step 51")]
    assert problems(exercise_step=[39, 51, 63, 75, 87, 111, 99]) == [(1, "exercise_step", "exercise_step must be "
                                                                     "strictly ascending: exercise point 6 at step 99 "
                                                                     "follows step 111")]


@pytest.mark.parametrize("step", [0, -3, 121, 500])
def test_listed_steps_must_lie_in_the_tree(step: int):
    steps = [step, 51, 63, 75, 87, 99, 111] if step < 1 else [39, 51, 63, 75, 87, 99, step]
    where = 0 if step < 1 else 6
    assert problems(exercise_step=steps) == [(1, "exercise_step", f"exercise_step must be in 1..120 (the bond's tree "
                                             f"height), got {step} for exercise point {where}")]


@pytest.mark.parametrize("price", [-0.5, np.nan, np.inf])
def test_listed_prices_must_be_finite_and_not_negative(price: float):
    prices = [103.0, 102.5, price, 101.5, 101.0, 100.5, 100.0]
    assert problems(exercise_price=prices) == [(1, "exercise_price", "exercise_price of exercise point 2 must be a "
                                                f"finite number >= 0 (a dirty price per 100 face), got {price}")]


def test_empty_window_is_an_error_only_without_listed_points():
    assert problems(first_exercise=[40], last_exercise=[30]) == []
    assert problems(first_exercise=[40], last_exercise=[30], exercise_count=[0], exercise_step=[],
                    exercise_price=[]) == [(1, "last_exercise", "last_exercise must be >= first_exercise (40), got 30")]
    bonds = portfolio(coupon_bond(5.0, window=(40, 30, 1)))
    assert bonds.validate(CURVES) == [(0, "last_exercise", "last_exercise must be >= first_exercise (40), got 30")]


def construction_errors(**changes: Any) -> list[tuple[int | None, str, str]]:
    bonds = [step_down(), step_down(side=PUT), step_down()]
    bonds[1] = {**bonds[1], **changes}
    with pytest.raises(InputError) as caught:
        portfolio(*bonds)
    return list(caught.value.errors)


def test_listed_counts_and_shapes_are_checked_at_construction():
    assert construction_errors(exercise_count=[-1]) == [
        (1, "exercise_count", "exercise_count must be >= 0, got -1"),
        (None, "exercise_step", "exercise_step has 21 entries, but the exercise_count sum is 14"),
        (None, "exercise_price", "exercise_price has 21 entries, but the exercise_count sum is 14")]
    assert construction_errors(exercise_count=[6]) == [
        (None, "exercise_step", "exercise_step has 21 entries, but the exercise_count sum is 20"),
        (None, "exercise_price", "exercise_price has 21 entries, but the exercise_count sum is 20")]
    assert construction_errors(exercise_price=[1.0]) == [
        (None, "exercise_price", "exercise_price has 15 entries, but the exercise_count sum is 21")]
    assert construction_errors(exercise_step=[39, 51.5, 63, 75, 87, 99, 111]) == [
        (1, "exercise_step", "exercise point 1 of the bond: exercise_step must be a whole number, got 51.5")]
    with pytest.raises(InputError) as caught:
        BondPortfolio(**{**portfolio(step_down()).as_dict(), "exercise_count": [7, 0]})
    assert caught.value.errors == [(None, "exercise_count", "exercise_count has 2 entries, expected one per bond (1)")]
    fields = {k: v for k, v in portfolio(step_down()).as_dict().items() if k != "exercise_count"}
    with pytest.raises(InputError, match="exercise_step has 7 entries, but the exercise_count sum is 0"):
        BondPortfolio(**fields)


# --- (6) the book and the portfolio's operations --------------------------------------------------------------------
def assert_same_bonds(got: BondPortfolio, expected: BondPortfolio) -> None:
    for name in (*BOND_FIELDS, *CASHFLOW_FIELDS, *LISTED_FIELDS, "cashflow_offset", "exercise_offset"):
        mine, theirs = getattr(got, name), getattr(expected, name)
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs), name


def test_book_round_trip_keeps_the_listed_points():
    bonds = BondPortfolio.concatenate([schedules(), windows()])
    book = lower_bonds(bonds, ("a", "b"))
    assert_same_bonds(lift.bonds(book), bonds)
    # each point an exercise event after its bond's window: step = first = last, every 0, the dirty price, the side
    listed = np.flatnonzero((book.event_kind == EXERCISE) & (book.event_every == 0))
    assert listed.size == bonds.exercise_step.size
    np.testing.assert_array_equal(book.event_step[listed], bonds.exercise_step)
    np.testing.assert_array_equal(book.event_first[listed], bonds.exercise_step)
    np.testing.assert_array_equal(book.event_last[listed], bonds.exercise_step)
    np.testing.assert_array_equal(book.event_amount[listed], bonds.exercise_price)
    np.testing.assert_array_equal(book.event_side[listed], np.repeat(bonds.option_type, bonds.exercise_count))
    for row in range(len(bonds)):
        events = book.events(row)
        kinds = book.event_kind[events]
        K, E = int(bonds.cashflow_count[row]), int(bonds.exercise_count[row])
        assert kinds.tolist() == [0] * K + [EXERCISE] * (1 + E)
        assert book.event_every[events][K] == bonds.exercise_frequency[row]
    part = book.take([9, 2, 0])
    assert_same_bonds(lift.bonds(part), bonds[[9, 2, 0]])


def test_a_book_without_listed_points_is_the_one_it_always_was():
    bonds = windows()
    book = lower_bonds(bonds, ("a", "b"))
    assert book.event_kind.size == bonds.cashflow_step.size + len(bonds)
    assert (book.event_every[book.event_kind == EXERCISE] >= 1).all()
    back = lift.bonds(book)
    assert_same_bonds(back, bonds)
    assert not back.has_listed() and set(back.as_dict()) == {*BOND_FIELDS, *CASHFLOW_FIELDS}


def test_selection_concatenation_and_dictionaries_keep_the_lists():
    bonds = schedules()
    rows = [7, 0, 0, 3, 5]
    picked = bonds[rows]
    assert picked.exercise_count.tolist() == bonds.exercise_count[rows].tolist()
    for k, row in enumerate(rows):
        for mine, theirs in zip(picked.listed(k), bonds.listed(row), strict=True):
            np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(reference.price(picked, CURVES), reference.price(bonds, CURVES)[rows])
    joined = BondPortfolio.concatenate([windows(), bonds, windows()])
    assert joined.exercise_count.tolist() == [0] * 5 + bonds.exercise_count.tolist() + [0] * 5
    np.testing.assert_array_equal(joined.exercise_step, bonds.exercise_step)
    assert set(bonds.as_dict()) == {*BOND_FIELDS, *CASHFLOW_FIELDS, *LISTED_FIELDS}
    assert_same_bonds(BondPortfolio.from_arrays(bonds.as_dict()), bonds)
    bond = next(iter(bonds))
    assert bond["exercise_step"] == bonds.listed(0)[0].tolist() and bond["exercise_price"] == bonds.listed(0)[1].tolist()
    assert "exercise_step" not in next(iter(windows()))
    assert "listed exercise points" in repr(bonds)


@pytest.mark.parametrize("suffix", [".in", ".csv", ".parquet"])
def test_book_files_refuse_listed_points_rather_than_drop_them(tmp_path, suffix: str):
    from trinom.io.bond_books import write_bonds

    bonds = schedules()
    with pytest.raises(InputError, match="listed exercise points, which the 19-array, CSV and Parquet book formats"):
        write_bonds(bonds, [trinom.YieldCurve(rates=[0.03], days=[365])], tmp_path / f"book{suffix}")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("suffix", [".in", ".csv", ".parquet"])
def test_book_files_refuse_flows_between_steps_rather_than_drop_them(tmp_path, suffix: str):
    """Issue 34: a dated trade's bonds have flows between steps, which the tree-step book formats cannot hold."""
    from trinom.io.bond_books import write_bonds

    bonds = BondPortfolio(term_unit=[365], term_steps=[4], a=[0.1], sigma=[0.01], maturity=[2.0], cashflow_count=[2],
                          cashflow_step=[4, 8], cashflow_time=[0.9, 2.0], repayment=[0.0, 100.0], coupon=[5.0, 5.0],
                          spread=[0.0], option_type=[0], strike=[1e30], first_exercise=[8], last_exercise=[8],
                          exercise_frequency=[1], curve_index=[0])
    with pytest.raises(InputError, match="flows between the tree's steps"):
        write_bonds(bonds, [trinom.YieldCurve(rates=[0.03], days=[365])], tmp_path / f"book{suffix}")
    assert not list(tmp_path.iterdir())
