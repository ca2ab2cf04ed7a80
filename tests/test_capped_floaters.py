"""Caps and floors on floating coupons (issue 37, item 2): each period's caplet and floorlet an option on its rate
that the bond's tree values at the step of its fixing (trinom.instruments.coupon_options), before that step's
exercise. A straight capped and floored floater against QuantLib 1.44's FloatingRateBond less its caps plus its
floors on the same leg (AnalyticCapFloorEngine, Hull-White on the same curve; one curve, as that engine projects on
its model's curve); a known fixing clamped as a flow; every engine that prices the options against the reference,
callable and with sigma pieces; the engines that do not, refusing."""

from __future__ import annotations

import numpy as np
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from trinom.errors import InputError
from trinom.instruments import Trades
from trinom.model import DatedCurve
from trinom.model.scenarios import CurveShift

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
ZEROS = [0.025, 0.028, 0.031, 0.033]
A, SIGMA, MARGIN, FIXING = 0.05, 0.01, 0.005, 0.027
#: Per 100 against QuantLib's analytic caps and floors at 365 steps a year: the tree's own error, first order in the
#: step (a 4% cap alone, measured: -2.9e-3 at 12 steps a year, -1.2e-3 at 52, -9.6e-5 at 365, -1.7e-5 at 1460; with a
#: 3% floor beside it -6.1e-3 at 12 and -1.9e-4 at 365).
DAILY = 3e-4
#: At 12 steps a year.
MONTHLY = 1e-2


@pytest.fixture(scope="module")
def curves() -> dict[str, DatedCurve]:
    return {"ESTR": DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="ESTR"),
            "EUR6M": DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=[z + 0.003 for z in ZEROS], name="EUR6M")}


def book(**overrides: object) -> Trades:
    columns: dict[str, object] = dict(
        id=["F"], type="bond", issue="2025-03-15", maturity="2034-03-15", coupon_type="float", margin=MARGIN,
        fixing=FIXING, frequency=2, day_count="ACT/365F", a=A, sigma=SIGMA, curve="ESTR", steps_per_year=365)
    columns.update(overrides)
    return Trades(as_of=AS_OF, **columns)


def quantlib(curves: dict[str, DatedCurve], cap: float | None, floor: float | None, fixing: float = FIXING) -> float:
    """QuantLib's floater on ESTR less its caps at ``cap - margin`` plus its floors at ``floor - margin`` on the
    periods fixing after the as-of date, the running period's coupon clamped by hand."""
    today = ql.DateParser.parseISO(AS_OF)
    ql.Settings.instance().evaluationDate = today
    dates = [today] + [ql.DateParser.parseISO(d) for d in PILLARS]
    discounts = [1.0] + [float(curves["ESTR"].discount([d])[0]) for d in PILLARS]
    handle = ql.YieldTermStructureHandle(ql.DiscountCurve(dates, discounts, ql.Actual365Fixed()))
    index = ql.IborIndex(f"CAPPED{fixing}", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(),
                         ql.Unadjusted, False, ql.Actual365Fixed(), handle)  # its own name: fixings are global
    index.addFixing(ql.Date(15, 9, 2026), fixing, True)
    schedule = ql.Schedule(ql.DateParser.parseISO("2025-03-15"), ql.DateParser.parseISO("2034-03-15"),
                           ql.Period(6, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                           ql.DateGeneration.Backward, False)
    bond = ql.FloatingRateBond(0, 100.0, schedule, index, ql.Actual365Fixed(), ql.Unadjusted, 0, [1.0], [MARGIN])
    bond.setPricingEngine(ql.DiscountingBondEngine(handle))
    price = bond.dirtyPrice()
    leg = ql.IborLeg([100.0], schedule, index, ql.Actual365Fixed(), ql.Unadjusted, [0], [1.0], [0.0])
    future = [cf for cf in leg if ql.as_floating_rate_coupon(cf).fixingDate() > today]
    engine = ql.AnalyticCapFloorEngine(ql.HullWhite(handle, A, SIGMA), handle)
    running = ql.as_floating_rate_coupon(next(cf for cf in leg if ql.as_floating_rate_coupon(cf).fixingDate() <= today
                                              and cf.date() > today))
    paid = fixing + MARGIN
    for bound, kind, sign in ((cap, ql.Cap, -1.0), (floor, ql.Floor, 1.0)):
        if bound is None:
            continue
        option = kind(future, [bound - MARGIN])
        option.setPricingEngine(engine)
        price += sign * option.NPV()
        paid = min(paid, bound) if sign < 0 else max(paid, bound)
    clamp = paid - (fixing + MARGIN)  # the running period's known coupon, within the bounds
    return price + 100.0 * clamp * running.accrualPeriod() * handle.discount(running.date())


@pytest.mark.parametrize(("cap", "floor"), [(0.04, None), (None, 0.03), (0.04, 0.03)])
def test_a_capped_and_floored_floater_is_quantlibs(curves: dict[str, DatedCurve], cap: float | None,
                                                   floor: float | None) -> None:
    expected = quantlib(curves, cap, floor)
    daily = trinom.price(book(cap=cap, floor=floor), curves, backend="reference").price[0]
    assert daily == pytest.approx(expected, abs=DAILY)
    monthly = trinom.price(book(cap=cap, floor=floor, steps_per_year=12), curves, backend="reference").price[0]
    assert monthly == pytest.approx(expected, abs=MONTHLY)
    # steps shorter than a day (the curve read at whole days): as close as daily ones
    twice = trinom.price(book(cap=cap, floor=floor, steps_per_year=730), curves, backend="reference").price[0]
    assert twice == pytest.approx(expected, abs=DAILY)
    plain = trinom.price(book(), curves, backend="reference").price[0]
    assert (daily < plain if floor is None else daily > plain if cap is None else True)


def test_a_known_fixing_outside_the_bounds_is_clamped(curves: dict[str, DatedCurve]) -> None:
    """The running period fixed at 5%: capped at 4% it pays 4% plus nothing optional, a flow."""
    result = trinom.price(book(cap=0.04, fixing=0.05), curves, backend="reference")
    assert result.price[0] == pytest.approx(quantlib(curves, 0.04, None, fixing=0.05), abs=DAILY)
    assert result.accrued[0] == pytest.approx(100 * 0.04 * 71 / 365, abs=1e-12)  # the clamped coupon, 71 days


def mixed() -> Trades:
    """Capped and floored floaters on two curves, callable and puttable, a fixed-to-float one, and a plain bond."""
    return book(id=["cap", "call", "put", "f2f", "fixed"], type="bond",
                coupon_type=["float", "float", "float", "fixed_to_float", "fixed"],
                coupon=[None, None, None, 0.04, 0.035], margin=[0.005, 0.002, -0.001, 0.004, None],
                fixing=[FIXING, FIXING, FIXING, None, None], cap=[0.045, 0.04, None, 0.05, None],
                floor=[0.01, None, 0.025, 0.0, None], forecast_curve=["EUR6M", "EUR6M", None, "EUR6M", None],
                switch_date=[None, None, None, "2029-03-15", None],
                option=[None, "call", "put", "call", "call"], exercise=[None, "bermudan", "bermudan", "european",
                                                                         "bermudan"],
                first_exercise=[None, "2028-03-15", "2028-03-15", "2030-03-15", "2028-03-15"],
                last_exercise=[None, "2033-09-15", "2033-09-15", None, "2033-09-15"],
                exercise_price=[None, 100.0, 100.0, 100.0, 100.0], steps_per_year=[365, 52, 12, 365, 52])


def test_the_options_move_callables_the_right_way(curves: dict[str, DatedCurve]) -> None:
    """A cap lowers a callable floater, a floor raises a puttable one, and the call is worth less than the straight
    capped bond to its holder."""
    trades = mixed()
    with_options = trinom.price(trades, curves, backend="reference").price
    without = trinom.price(trades.with_columns(cap=[None] * 5, floor=[None] * 5), curves, backend="reference").price
    assert with_options[1] < without[1] and with_options[2] > without[2]
    straight = trinom.price(trades.rows(1, 2).with_columns(option=[None], exercise=[None], first_exercise=[None],
                                                           last_exercise=[None], exercise_price=[None]),
                            curves, backend="reference").price[0]
    assert with_options[1] < straight


@pytest.mark.parametrize("target", ["c", "multicore"])
def test_futhark_prices_the_options_as_the_reference(curves: dict[str, DatedCurve], target: str) -> None:
    trades = mixed()
    reference = trinom.price(trades, curves, backend="reference")
    futhark = trinom.price(trades, curves, backend="futhark", target=target)
    assert futhark.price == pytest.approx(reference.price, abs=1e-11)
    f32 = trinom.price(trades, curves, backend="futhark", target=target, precision="f32").price
    assert f32 == pytest.approx(reference.price, rel=3e-4)  # float32 trees of 2600 daily steps: 1.2e-4 measured


def test_options_with_sigma_pieces(curves: dict[str, DatedCurve]) -> None:
    """A capped callable floater whose sigma is piecewise constant: the options read the piece of their step and
    the variance of every piece before; Futhark as the reference; a flat step function is the one sigma."""
    trades = mixed().rows(0, 2)
    pieced = trades.with_sigma_pieces({"cap": (["2029-11-25"], [0.012, 0.009]), "call": (["2030-03-15"],
                                                                                         [0.008, 0.011])})
    reference = trinom.price(pieced, curves, backend="reference").price
    # An option's zero-coupon bonds are D^beta from each node, beta = B(T - t) / B(dt) up to 180 at daily steps: the
    # engines' forward passes with pieces, 1e-14 apart in the price without options, are 4.5e-11 apart with them.
    assert trinom.price(pieced, curves, backend="futhark", target="c").price == pytest.approx(reference, abs=1e-10)
    flat = trades.with_sigma_pieces({"cap": (["2029-11-25"], [SIGMA, SIGMA])})
    assert trinom.price(flat, curves, backend="reference").price == pytest.approx(
        trinom.price(trades, curves, backend="reference").price, abs=1e-12)
    assert not np.allclose(reference, trinom.price(trades, curves, backend="reference").price, atol=1e-6)


def test_auto_and_the_engine_that_refuses(curves: dict[str, DatedCurve]) -> None:
    trades = mixed()
    result = trinom.price(trades, curves)
    assert result.price == pytest.approx(trinom.price(trades, curves, backend="reference").price, abs=1e-11)
    with pytest.raises(ValueError, match="does not price caps or floors on floating coupons"):
        trinom.price(trades, curves, backend="futhark-paper", target="c")


@pytest.mark.gpu
def test_the_gpu_engines_price_the_options_as_the_reference(curves: dict[str, DatedCurve]) -> None:
    """cuda (its global-memory kernel) and Futhark's cuda target: f64 within 5e-11 of the reference, with pieces
    within 1e-10, f32 by the float32 rule; a scenario grid (its entries on moved curves) as the reference's."""
    trades = mixed()
    reference = trinom.price(trades, curves, backend="reference").price
    # The GPU's exp and log differ from the CPU's in the last bit, which D^beta magnifies (measured on an H100:
    # 1.3e-11 per 100 for cuda).
    for backend, target in (("cuda", None), ("futhark", "cuda")):
        assert trinom.price(trades, curves, backend=backend, target=target).price == pytest.approx(reference,
                                                                                                    abs=5e-11)
    f32 = trinom.price(trades, curves, backend="cuda", precision="f32").price
    assert f32 == pytest.approx(reference, rel=3e-4)
    pieced = trades.rows(0, 2).with_sigma_pieces({"cap": (["2029-11-25"], [0.012, 0.009])})
    assert trinom.price(pieced, curves, backend="cuda").price == pytest.approx(
        trinom.price(pieced, curves, backend="reference").price, abs=1e-10)
    scenarios = [None, CurveShift(0.001), CurveShift(-0.002, curve="EUR6M")]
    grid = trinom.price(trades, curves, backend="cuda", scenarios=scenarios)
    expected = trinom.price(trades, curves, backend="reference", scenarios=scenarios)
    assert np.asarray(grid.price) == pytest.approx(np.asarray(expected.price), abs=5e-11)


def test_risk_on_a_capped_floater(curves: dict[str, DatedCurve]) -> None:
    """Vega is no longer zero: the options are worth more as sigma rises, so a capped floater loses."""
    table = trinom.risk(book(cap=0.035, steps_per_year=12), curves, backend="futhark", target="c",
                        measures=["vega", "dv01"])
    vega = float(table[table.measure == "vega"].value.sum())
    assert vega < -1e-3


def test_a_bound_no_coupon_can_reach_is_refused(curves: dict[str, DatedCurve]) -> None:
    trades = book(id=["good", "bad"], cap=[0.04, 0.04], floor=[0.0, -3.0], frequency=[2, 1])
    result = trinom.price(trades, curves, backend="reference", errors="mask")
    assert result.error[0] == "" and np.isfinite(result.price[0])
    assert "floor" in str(result.error[1]) or "decimal" in str(result.error[1])
    with pytest.raises(InputError):
        trinom.price(trades, curves, backend="reference")


@pytest.mark.parametrize("suffix", ["in", "csv", "parquet"])
def test_a_book_file_refuses_coupon_options(curves: dict[str, DatedCurve], tmp_path: object, suffix: str) -> None:
    """The 19-array, CSV and Parquet bond books hold no options on coupon rates: writing such bonds is refused,
    naming the bond, not written without them."""
    from pathlib import Path

    from trinom import BondPortfolio
    from trinom.io.bond_books import write_bonds

    names = ("ESTR", "EUR6M")
    listed = [curves[name].to_yield_curve() for name in names]
    portfolio = next(block for _first, block in mixed().instruments(names, listed)
                     if isinstance(block, BondPortfolio) and block.coupon_options() is not None)
    path = Path(str(tmp_path)) / f"book.{suffix}"
    with pytest.raises(InputError, match="caps or floors on floating coupons"):
        write_bonds(portfolio, listed, path)
    assert not path.exists()


# --- caps, floors and bond options with sigma pieces: a bond tree each, their options as events --------------------
def piece_book() -> Trades:
    """A cap, a floor and two bond options (a call and a put on zero-coupon bonds), at 365 steps a year."""
    return Trades(as_of=AS_OF, id=["K", "F", "OC", "OP"], type=["cap", "floor", "bond_option", "bond_option"],
                  start=["2027-02-25", "2027-02-25", None, None], maturity=["2031-11-25", "2031-11-25", "2033-11-25",
                                                                              "2031-05-15"],
                  rate=[0.032, 0.027, None, None], frequency=[4, 4, None, None],
                  expiry=[None, None, "2028-11-25", "2029-02-01"], strike=[None, None, 85.0, 88.0],
                  option=[None, None, "call", "put"], a=A, sigma=SIGMA, curve="ESTR", steps_per_year=365)


PIECES = {"K": (["2028-11-25", "2030-02-25"], [0.012, 0.008, 0.011]), "F": (["2029-05-25"], [0.009, 0.012]),
          "OC": (["2027-11-25"], [0.013, 0.009]), "OP": (["2028-01-01"], [0.008, 0.0115])}


def closed_forms(curves: dict[str, DatedCurve]) -> np.ndarray:
    """The same trades' Hull-White closed forms with the pieces (trinom.model.Sigma), per 100."""
    from trinom.model.hull_white import zero_bond_option
    from trinom.model.rate_options import Caps
    from trinom.model.sigma import Sigma

    curve = curves["ESTR"]

    def years(dates: list[str]) -> np.ndarray:
        return (np.array(dates, dtype="datetime64[D]") - np.datetime64(AS_OF)).astype(np.float64) / 365.0

    out = []
    for key, cap, rate in (("K", True, 0.032), ("F", False, 0.027)):
        until, values = PIECES[key]
        caps = Caps.on_curve(curve, start=["2027-02-25"], end=["2031-11-25"], strike=rate, frequency=4, cap=cap,
                             notional=100.0)
        out.append(float(caps.price(a=A, sigma=Sigma(years(until), [values]))[0]))
    for key, expiry, maturity, strike, call in (("OC", "2028-11-25", "2033-11-25", 85.0, True),
                                                ("OP", "2029-02-01", "2031-05-15", 88.0, False)):
        until, values = PIECES[key]
        t, m = years([expiry])[0], years([maturity])[0]
        out.append(100.0 * float(np.ravel(zero_bond_option(
            a=A, sigma=Sigma(years(until), [values]), expiry=t, maturity=m, strike=strike / 100.0,
            discount_expiry=curve.discount([expiry])[0], discount_maturity=curve.discount([maturity])[0],
            is_call=call))[0]))
    return np.array(out)


def test_caps_floors_and_bond_options_take_sigma_pieces(curves: dict[str, DatedCurve]) -> None:
    """With pieces each is a bond tree whose options are events (their option trees take one sigma): the tree
    against the closed forms with the same pieces within the tree's own error at 365 steps a year (measured: up to
    7.5e-4 per 100, on a call worth 2.48); a flat step function is the trade's option trees' price within their two
    trees' errors (measured: 2.3e-4); Futhark as the reference."""
    trades = piece_book().with_sigma_pieces(PIECES)
    reference = trinom.price(trades, curves, backend="reference")
    assert list(reference.error) == [""] * 4
    assert reference.price == pytest.approx(closed_forms(curves), abs=1e-3)
    assert trinom.price(trades, curves, backend="futhark", target="c").price == pytest.approx(reference.price,
                                                                                              abs=1e-10)
    flat = piece_book().with_sigma_pieces({key: (until, [SIGMA] * len(values))
                                           for key, (until, values) in PIECES.items()})
    on_option_trees = trinom.price(piece_book(), curves, backend="reference").price
    assert trinom.price(flat, curves, backend="reference").price == pytest.approx(on_option_trees, abs=5e-4)
