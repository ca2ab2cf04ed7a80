"""Flows between steps on the GPU (issue 34, item 3): dated trades at 1 to 365 steps a year, whose flows fall between
the tree's steps, on every ``cuda`` bond kernel (the warp kernel of narrow trees, the block kernel of wide ones, the
global-memory kernel), in every mode (prices, scenario grids, the engine's spread search), against the float64
reference.

Tolerances: the conformance suite's (float64 1e-11 per 100; float32 1e-4 relative to float64)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import trinom
from trinom.bonds import BondPortfolio
from trinom.instruments import Trades
from trinom.model import DatedCurve

pytestmark = pytest.mark.gpu

AS_OF = "2026-11-25"
F64 = 1e-11
RESOLUTIONS = (1, 4, 12, 52, 365)


def book(steps_per_year: int) -> Trades:
    """Straight, callable (bermudan, european, american) and puttable bonds with semi-annual and monthly coupons
    (several flows a step at coarse resolutions), and a Bermudan swaption."""
    rows = [  # id, type, issue/start, maturity, coupon/rate, frequency, option, exercise, first, last, a
        ("S", "bond", "2024-11-26", "2030-11-26", 0.05, 2, None, None, None, None, 0.05),
        ("M", "bond", "2025-02-14", "2031-08-14", 0.045, 12, "call", "bermudan", "2028-02-14", "2031-02-14", 0.08),
        ("E", "bond", "2023-06-30", "2032-06-30", 0.035, 2, "call", "european", "2029-06-29", None, 0.05),
        ("A", "bond", "2025-01-10", "2030-01-10", 0.04, 2, "put", "american", "2027-06-01", "2029-06-01", 0.10),
        ("W", "swaption", "2027-11-25", "2034-11-25", 0.036, 1, "receiver", "bermudan", "2027-11-25", "2033-11-25",
         0.05),
    ]
    names = ("id", "type", "issue", "maturity", "coupon", "frequency", "option", "exercise", "first_exercise",
             "last_exercise", "exercise_price", "a")
    columns: dict[str, list] = {name: [] for name in names}
    for ident, kind, issue, maturity, coupon, frequency, option, exercise, first, last, a in rows:
        swaption = kind == "swaption"
        values = (ident, kind, None if swaption else issue, maturity, None if swaption else coupon, frequency, option,
                  exercise, first, last, 100.0 if option and not swaption else None, a)
        for name, value in zip(names, values, strict=True):
            columns[name].append(value)
    columns["start"] = [issue if kind == "swaption" else None for _i, kind, issue, *_rest in rows]
    columns["rate"] = [coupon if kind == "swaption" else None for _i, kind, _s, _m, coupon, *_rest in rows]
    return Trades(as_of=AS_OF, sigma=0.012, steps_per_year=steps_per_year, **columns)


@functools.cache
def curves() -> dict[str, DatedCurve]:
    return {"EUR": DatedCurve(as_of=AS_OF, dates=["2027-11-25", "2031-11-25", "2036-11-25"],
                              zero_rates=[0.028, 0.033, 0.037])}


@functools.cache
def reference(steps_per_year: int) -> np.ndarray:
    return trinom.price(book(steps_per_year), curves(), backend="reference").price


@pytest.mark.parametrize("steps_per_year", RESOLUTIONS)
@pytest.mark.parametrize("wide_only", [False, True, "global"])
def test_every_kernel_matches_the_reference(steps_per_year: int, wide_only):
    got = trinom.price(book(steps_per_year), curves(), backend="cuda", wide_only=wide_only)
    assert got.ok.all(), got.error
    np.testing.assert_allclose(got.price, reference(steps_per_year), rtol=0, atol=F64)


@pytest.mark.parametrize("steps_per_year", (1, 4, 52))
@pytest.mark.parametrize("wide_only", [False, True, "global"])
def test_an_exercise_that_always_binds_is_its_dates_value(steps_per_year: int, wide_only):
    """A put at 900 on a date between steps (a coupon date, a day after one, mid-period) is always exercised: the
    bond is worth the flows paid up to the date and the price paid on it, on every kernel as on the reference."""
    dates = ["2029-03-15", "2029-03-16", "2029-06-01"]
    trades = Trades(as_of=AS_OF, id=dates, type="bond", issue="2024-03-15", maturity="2034-03-15", coupon=0.05,
                    frequency=2, option="put", exercise="european", first_exercise=dates, exercise_price=900.0,
                    a=0.05, sigma=0.012, steps_per_year=steps_per_year)
    got = trinom.price(trades, curves(), backend="cuda", wide_only=wide_only).price
    expected = trinom.price(trades, curves(), backend="reference").price
    np.testing.assert_allclose(got, expected, rtol=0, atol=F64)


@pytest.mark.parametrize("steps_per_year", (1, 12, 365))
def test_float32_within_the_float32_rule(steps_per_year: int):
    got = trinom.price(book(steps_per_year), curves(), backend="cuda", precision="f32").price
    ref = reference(steps_per_year)
    np.testing.assert_array_less(np.abs(got - ref) / np.maximum(1.0, np.abs(ref)), 1e-4)


@pytest.mark.parametrize("steps_per_year", (4, 52, 365))
@pytest.mark.parametrize("wide_only", [False, True])
def test_scenario_grids_match_the_reference(steps_per_year: int, wide_only: bool):
    from trinom.scenarios import CurveShift, SigmaShift, SpreadShift

    scenarios = [None, CurveShift(1e-4), CurveShift(1e-4, pillar=1), SpreadShift(0.5), SigmaShift(1e-3)]
    grid = trinom.price(book(steps_per_year), curves(), backend="cuda", scenarios=scenarios, wide_only=wide_only)
    expected = trinom.price(book(steps_per_year), curves(), backend="reference", scenarios=scenarios)
    np.testing.assert_allclose(grid.price, expected.price, rtol=0, atol=F64)


@pytest.mark.parametrize("steps_per_year", (2, 12, 365))
@pytest.mark.parametrize("wide_only", [False, True])
def test_the_engines_spread_search_reprices_to_the_market(steps_per_year: int, wide_only: bool):
    """The library's search carries the flows' derivative by the spread: it converges where the batched one does,
    to the same spreads, and the bonds priced at them are the market."""
    from trinom.analytics.oas import oas
    from trinom.instruments.trades import lowered

    (_, bonds), *_rest = lowered(book(steps_per_year), curves())[0]
    market_curves = [curves()["EUR"].to_yield_curve()]
    model = trinom.price(bonds, market_curves, backend="reference").clean
    market = model * (1 + np.linspace(-0.03, 0.03, len(bonds)))
    knobs = {"wide_only": True} if wide_only else {}
    inside = oas(bonds, market_curves, market, backend="cuda", search="engine", **knobs)
    steps = oas(bonds, market_curves, market, backend="reference", search="batched")
    assert (inside.status == "converged").all() and (steps.status == "converged").all()
    np.testing.assert_allclose(inside.oas, steps.oas, rtol=0, atol=1e-7)
    again = trinom.price(BondPortfolio(accrued=bonds.accrued(), **{**bonds.as_dict(), "spread": inside.oas}),
                         market_curves, backend="reference")
    np.testing.assert_allclose(again.clean, market, rtol=0, atol=1e-8)
