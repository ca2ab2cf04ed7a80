"""Options on coupon bonds (issue 38, item 4): a ``bond_option`` row with the underlying's ``coupon`` (and ``issue``,
``frequency``, conventions) is a European or American call or put on that bond at a clean strike. QuantLib 1.44 has
no such instrument: its oracle is the identity it prices, ``call = B - callable`` and ``put = puttable - B``, with
``TreeCallableFixedRateBondEngine`` at 1000 steps (the tree comparisons' 0.01 per 100); European put-call parity
holds on the tree to 1e-8; the Futhark engine agrees with the reference; bad cells are refused naming row and field."""

from __future__ import annotations

import numpy as np
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from quantlib_oracle import on_date, ql_date
from trinom.model import DatedCurve

AS_OF = np.datetime64("2026-11-25")
#: Against QuantLib's callable-bond tree at 1000 steps, per 100: the tree comparisons' tolerance.
TREE = 0.01
ISSUE, MATURITY, EXPIRY, COUPON, STRIKE = "2024-03-15", "2034-03-15", "2029-03-15", 0.04, 102.0


@pytest.fixture(autouse=True)
def _evaluation_date():
    yield from on_date(AS_OF)


def curves() -> tuple[DatedCurve, ql.YieldTermStructureHandle]:
    days = np.array([30, 182, 365, 730, 1826, 3652, 5479])
    zeros = 0.026 + 0.01 * (1 - np.exp(-days / 365.0 / 4.0))
    dfs = np.exp(-zeros * days / 365.0)
    ours = DatedCurve(as_of=AS_OF, dates=AS_OF + days, discount_factors=dfs, name="EUR")
    theirs = ql.DiscountCurve([ql_date(AS_OF), *(ql_date(AS_OF + d) for d in days)], [1.0, *dfs], ql.Actual365Fixed())
    return ours, ql.YieldTermStructureHandle(theirs)


def options(**columns: object) -> trinom.Trades:
    cells: dict[str, object] = dict(id=["call", "put", "american call", "american put"], type="bond_option",
                                    issue=ISSUE, maturity=MATURITY, coupon=COUPON, frequency=2, expiry=EXPIRY,
                                    strike=STRIKE, option=["call", "put", "call", "put"],
                                    exercise=["european", "european", "american", "american"], a=0.05, sigma=0.01,
                                    curve="EUR", notional=1e6)
    cells.update(columns)
    return trinom.Trades(as_of=str(AS_OF), **cells)


def quantlib_values(handle: ql.YieldTermStructureHandle) -> list[float]:
    schedule = ql.Schedule(ql_date(np.datetime64(ISSUE)), ql_date(np.datetime64(MATURITY)), ql.Period(6, ql.Months),
                           ql.NullCalendar(), ql.Following, ql.Following, ql.DateGeneration.Backward, False)
    day_count = ql.Thirty360(ql.Thirty360.BondBasis)
    model = ql.HullWhite(handle, 0.05, 0.01)

    def bond(side: int | None, dates: list[ql.Date]) -> float:
        if side is None:
            made = ql.FixedRateBond(0, 100.0, schedule, [COUPON], day_count)
            made.setPricingEngine(ql.DiscountingBondEngine(handle))
            return made.NPV()
        calls = ql.CallabilitySchedule()
        for day in dates:
            calls.append(ql.Callability(ql.BondPrice(STRIKE, ql.BondPrice.Clean), side, day))
        made = ql.CallableFixedRateBond(0, 100.0, schedule, [COUPON], day_count, ql.Following, 100.0,
                                        ql_date(np.datetime64(ISSUE)), calls)
        made.setPricingEngine(ql.TreeCallableFixedRateBondEngine(model, 1000))
        return made.NPV()

    plain = bond(None, [])
    expiry = ql_date(np.datetime64(EXPIRY))
    tomorrow = ql_date(AS_OF + 1)
    every_day = [tomorrow + k for k in range(expiry - tomorrow + 1)]
    return [plain - bond(ql.Callability.Call, [expiry]), bond(ql.Callability.Put, [expiry]) - plain,
            plain - bond(ql.Callability.Call, every_day), bond(ql.Callability.Put, every_day) - plain]


def test_options_on_a_coupon_bond_are_quantlibs_bond_less_its_callable() -> None:
    ours, theirs = curves()
    result = trinom.price(options(), {"EUR": ours}, backend="reference")
    assert result.ok.all(), result.error
    np.testing.assert_allclose(result.price, quantlib_values(theirs), rtol=0, atol=TREE)
    np.testing.assert_allclose(result.accrued, 0.0, atol=1e-12)
    np.testing.assert_allclose(result.value, result.price * 1e4, rtol=1e-12)
    assert result.price[2] >= result.price[0] and result.price[3] >= result.price[1]  # american: at least european


def test_european_put_call_parity_holds_on_the_tree() -> None:
    """``call - put`` is the bond's flows after the expiry less the strike and the accrued interest at the expiry,
    both valued today: deterministic amounts the fitted tree prices exactly."""
    ours, theirs = curves()
    result = trinom.price(options(id=["c", "p"], option=["call", "put"], exercise="european"), {"EUR": ours},
                          backend="reference")
    schedule = ql.Schedule(ql_date(np.datetime64(ISSUE)), ql_date(np.datetime64(MATURITY)), ql.Period(6, ql.Months),
                           ql.NullCalendar(), ql.Following, ql.Following, ql.DateGeneration.Backward, False)
    bond = ql.FixedRateBond(0, 100.0, schedule, [COUPON], ql.Thirty360(ql.Thirty360.BondBasis))
    expiry = ql_date(np.datetime64(EXPIRY))
    after = sum(cf.amount() * theirs.discount(cf.date()) for cf in bond.cashflows() if cf.date() > expiry)
    forward = after - (STRIKE + bond.accruedAmount(expiry)) * theirs.discount(expiry)
    assert result.price[0] - result.price[1] == pytest.approx(forward, abs=1e-8)


def test_the_futhark_engine_prices_them_as_the_reference() -> None:
    ours, _theirs = curves()
    reference = trinom.price(options(steps_per_year=52), {"EUR": ours}, backend="reference")
    futhark = trinom.price(options(steps_per_year=52), {"EUR": ours}, backend="futhark", target="c")
    np.testing.assert_allclose(futhark.price, reference.price, rtol=0, atol=1e-10)


def test_a_book_of_both_kinds_of_bond_options_and_bonds() -> None:
    ours, _theirs = curves()
    book = trinom.Trades(as_of=str(AS_OF), id=["zero", "coupon", "bond"], type=["bond_option", "bond_option", "bond"],
                         issue=[None, ISSUE, ISSUE], maturity=MATURITY, coupon=[None, COUPON, COUPON],
                         frequency=[None, 2, 2], expiry=[EXPIRY, EXPIRY, None], strike=[80.0, STRIKE, None],
                         option=["call", "call", None], a=0.05, sigma=0.01, curve="EUR")
    mixed = trinom.price(book, {"EUR": ours}, backend="reference")
    alone = trinom.price(options(), {"EUR": ours}, backend="reference")
    assert mixed.ok.all(), mixed.error
    assert mixed.price[1] == pytest.approx(alone.price[0], abs=1e-12)
    assert mixed.accrued[2] > 0 and mixed.accrued[1] == 0


@pytest.mark.parametrize(("cells", "field", "words"), [
    ({"exercise": "bermudan"}, "exercise", "a bond_option is european or american"),
    ({"first_exercise": "2027-03-15"}, "first_exercise", "a european option is exercised on its expiry"),
    ({"issue": None}, "issue", "issue is missing"),
    ({"frequency": None}, "frequency", "frequency is missing"),
    ({"day_count": "ACT/999"}, "day_count", "ACT/999"),
    ({"issue": "2035-01-01"}, "maturity", "must be after the issue date"),
    ({"exercise_price": 101.0}, "exercise_price", "does not apply to a bond_option"),
])
def test_bad_cells_of_an_option_on_a_coupon_bond_are_refused(cells: dict, field: str, words: str) -> None:
    ours, _theirs = curves()
    columns = {name: [value, None if name not in ("issue", "frequency") else {"issue": ISSUE, "frequency": 2}[name]]
               for name, value in cells.items()}
    book = options(**({"id": ["bad", "good"], "option": "call", "exercise": "european"} | columns))
    result = trinom.price(book, {"EUR": ours}, backend="reference", errors="mask")
    assert result.ok.tolist() == [False, True], result.error
    assert any(r == 0 and f == field and words in m for r, f, m in result.problems), result.problems


def test_sigma_pieces_apply_to_both_trees() -> None:
    """A step function of sigma that is flat at the trade's sigma prices as the trade; a higher later piece raises
    the option."""
    ours, _theirs = curves()
    book = options(steps_per_year=52)
    flat = trinom.price(book.with_sigma_pieces({"call": (["2028-01-01"], [0.01, 0.01])}), {"EUR": ours},
                        backend="reference")
    plain = trinom.price(book, {"EUR": ours}, backend="reference")
    assert flat.price[0] == pytest.approx(plain.price[0], abs=1e-10)
    higher = trinom.price(book.with_sigma_pieces({"call": (["2028-01-01"], [0.01, 0.015])}), {"EUR": ours},
                          backend="reference")
    assert higher.price[0] > plain.price[0] + 0.05 and higher.price[1] == pytest.approx(plain.price[1], abs=1e-12)


def test_american_exercise_at_steps_shorter_than_a_day() -> None:
    """A step half a day before a coupon date still holds the coupon: its exercise pays the accrued interest of the
    day it falls in, not the coupon date's 0 (priced at the nearest date, an american call on a bond whose as-of date
    was a coupon date was worth 2.76 at 730 steps a year against 2.02 at 365)."""
    curve = DatedCurve.flat(as_of="2019-12-01", rate=0.05, name="C")
    prices = []
    for steps_per_year in (365, 730, 1460):
        book = trinom.Trades(as_of="2019-12-01", id=["bond", "callable", "option"], type=["bond", "bond", "bond_option"],
                             issue="2018-12-01", maturity="2029-12-01", coupon=0.05, frequency=2, day_count="30/360",
                             option=[None, "call", "call"], exercise=[None, "american", "american"],
                             first_exercise=[None, "2020-01-15", "2020-01-15"], last_exercise=[None, "2021-06-01", None],
                             exercise_price=[None, 100.0, None], expiry=[None, None, "2021-06-01"],
                             strike=[None, None, 100.0], a=0.1, sigma=0.01, curve="C", steps_per_year=steps_per_year)
        result = trinom.price(book, {"C": curve}, backend="reference")
        assert result.price[2] == pytest.approx(result.price[0] - result.price[1], abs=1e-12)
        prices.append(result.price[2])
    assert max(prices) - min(prices) < 1e-3, prices
