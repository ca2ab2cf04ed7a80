"""The tree with a piecewise-constant sigma (issue 37, item 3; trinom.model.piecewise_tree): one grid a tree, each
step's branching matched to its own variance. Its probabilities and moments, its width, the closed forms with the
integrated variance as its limit, the pieces that are refused, and the engines that price it (the reference) or
refuse it (every other, for now)."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from trinom import BondPortfolio
from trinom.errors import InputError
from trinom.model.curve import YieldCurve
from trinom.model.hull_white import zero_bond_option
from trinom.model.piecewise_tree import MAX_VARIANCE_RATIO, SigmaPieces, piece_probabilities, piecewise_shape
from trinom.model.sigma import Sigma
from trinom.model.tree_geometry import Convention, probability_table

RATE, A, SIGMA = 0.03, 0.05, 0.01
#: Per 100: the tree at 365 steps a year against the closed form with the integrated variance (measured 4.0e-4 and
#: 1.5e-5 with pieces; the one-sigma tree is 1.7e-4 off on the same option).
TREE_365 = 1e-3


def curve() -> YieldCurve:
    return YieldCurve(rates=[RATE, RATE], days=[365, 365 * 40])


def put_book(steps_per_year: int, strike: float, pieces: tuple[list[float], list[float]] | None = None,
             sigma: float = SIGMA) -> BondPortfolio:
    """A 10-year zero-coupon bond with a European put at 5 years (puttable: the bond plus the put)."""
    n = 10 * steps_per_year
    bonds = BondPortfolio(term_unit=[365], term_steps=[steps_per_year], a=[A], sigma=[sigma], maturity=[10.0],
                          cashflow_count=[1], cashflow_step=[n], repayment=[100.0], coupon=[0.0], spread=[0.0],
                          option_type=["put"], strike=[strike], first_exercise=[5 * steps_per_year],
                          last_exercise=[5 * steps_per_year], exercise_frequency=[1], curve_index=[0])
    if pieces is None:
        return bonds
    years, values = pieces
    return bonds.with_sigma_pieces(counts=[len(years)], step=[round(y * steps_per_year) for y in years], sigma=values)


def put_value(steps_per_year: int, strike: float, pieces: tuple[list[float], list[float]] | None) -> float:
    with_put = trinom.price(put_book(steps_per_year, strike, pieces), [curve()], backend="reference").price[0]
    bond = trinom.price(put_book(steps_per_year, 0.0, pieces), [curve()], backend="reference").price[0]
    return float(with_put - bond)


@pytest.mark.parametrize("pieces", [([2.0, 4.0], [0.013, 0.008]), ([1.0, 3.0], [0.016, 0.0095])],
                         ids=["within-hull-white-width", "widened"])
def test_a_european_on_pieces_converges_to_the_closed_form(pieces: tuple[list[float], list[float]]) -> None:
    """A put on a zero-coupon bond: the tree with sigma pieces against the closed form with their integrated
    variance (trinom.model.hull_white with a Sigma), at 365 steps a year."""
    discount = np.exp(-RATE * np.array([5.0, 10.0]))
    strike = 100.0 * discount[1] / discount[0]
    closed = 100.0 * float(np.ravel(zero_bond_option(
        a=A, sigma=Sigma(times=[pieces[0]], values=[[SIGMA, *pieces[1]]]), expiry=5.0, maturity=10.0,
        strike=strike / 100.0, discount_expiry=discount[0], discount_maturity=discount[1], is_call=False))[0])
    assert put_value(365, strike, pieces) == pytest.approx(closed, abs=TREE_365)
    one_sigma = 100.0 * float(np.ravel(zero_bond_option(a=A, sigma=SIGMA, expiry=5.0, maturity=10.0,
                                                        strike=strike / 100.0, discount_expiry=discount[0],
                                                        discount_maturity=discount[1], is_call=False))[0])
    assert abs(closed - one_sigma) > 0.2  # the pieces matter


def test_pieces_of_one_sigma_are_the_one_sigma_tree_to_the_bit() -> None:
    plain = put_book(24, 80.0)
    same = plain.with_sigma_pieces(counts=[2], step=[24, 48], sigma=[SIGMA, SIGMA])
    assert same.sigma_pieces() is None
    assert trinom.price(same, [curve()], backend="reference").price[0] == \
        trinom.price(plain, [curve()], backend="reference").price[0]


@pytest.mark.parametrize("ratio", [1.2, 2.0, 2.3, 2.9, 3.0])
@pytest.mark.parametrize("a,dt", [(0.01, 1 / 365), (0.05, 1 / 12), (0.3, 1 / 4), (0.1, 1.0)])
def test_every_step_matches_its_mean_and_variance_with_probabilities_above_zero(ratio: float, a: float,
                                                                                 dt: float) -> None:
    """Every node's three probabilities are >= 0, sum to 1, and give the step's mean ``x (1 + M)`` and variance
    ``V_i`` (to 1e-13 relative), for pieces whose variances span ``ratio``."""
    pieces = SigmaPieces.of(counts=[2], step=[1, 2], sigma=[SIGMA * ratio ** 0.5, SIGMA * (1 + ratio ** 0.5) / 2])
    shape = piecewise_shape(a=np.array([a]), sigma=np.array([SIGMA]), dt=np.array([dt]), n=np.array([10]),
                            pieces=pieces)
    assert shape.ratio[0] == pytest.approx(ratio)
    jmax = int(shape.jmax[0])
    M = np.exp(-a * dt) - 1.0
    j = np.arange(-jmax, jmax + 1)
    for v in shape.v:
        p = piece_probabilities(j, M, v)
        up = np.where(j == -jmax, p["pu_b"], np.where(j == jmax, p["pu_c"], p["pu_a"]))
        mid = np.where(j == -jmax, p["pm_b"], np.where(j == jmax, p["pm_c"], p["pm_a"]))
        down = np.where(j == -jmax, p["pd_b"], np.where(j == jmax, p["pd_c"], p["pd_a"]))
        assert min(up.min(), mid.min(), down.min()) >= -1e-15
        np.testing.assert_allclose(up + mid + down, 1.0, rtol=0, atol=1e-14)
        centre = np.where(j == -jmax, j + 1, np.where(j == jmax, j - 1, j))  # the middle successor
        e = (j - centre) + j * M  # the mean's distance from it, in dx
        np.testing.assert_allclose(up - down, e, rtol=0, atol=1e-13)  # the mean
        variance = up * (1 - e) ** 2 + mid * e ** 2 + down * (1 + e) ** 2  # about the mean, in dx^2
        np.testing.assert_allclose(variance, v, rtol=1e-12)


def test_hull_whites_own_width_holds_close_pieces_and_is_widened_for_far_ones() -> None:
    base = dict(a=np.array([A]), sigma=np.array([SIGMA]), dt=np.array([1 / 12]), n=np.array([120]))
    close = piecewise_shape(**base, pieces=SigmaPieces.of(counts=[1], step=[12], sigma=[0.014]))
    far = piecewise_shape(**base, pieces=SigmaPieces.of(counts=[1], step=[12], sigma=[0.016]))
    standard = put_book(12, 80.0).jmax()[0]
    assert close.jmax[0] == standard and far.jmax[0] > standard
    assert close.v.max() == pytest.approx(1 / 3, rel=1e-15)  # Hull and White's dx for the largest sigma
    p = probability_table(np.arange(3), np.exp(-A / 12) - 1.0, np.float64, Convention.PAPER)
    q = piece_probabilities(np.arange(3), np.exp(-A / 12) - 1.0, 1 / 3)
    for key in p:
        np.testing.assert_allclose(q[key], p[key], rtol=0, atol=1e-15)


def test_pieces_too_far_apart_and_bad_pieces_are_refused_by_row_and_field() -> None:
    bonds = BondPortfolio.concatenate([put_book(12, 80.0)] * 3)
    too_far = bonds.with_sigma_pieces(counts=[0, 1, 2], step=[12, 24, 12], sigma=[0.02, 0.012, 0.009])
    problems = too_far.validate([curve()])
    assert [(row, field) for row, field, _m in problems] == [(1, "sigma_pieces"), (2, "sigma_pieces")]
    assert "a factor 2" in problems[0][2] and f"{MAX_VARIANCE_RATIO ** 0.5:.4g}" in problems[0][2]
    assert "ascending" in problems[1][2]
    with pytest.raises(InputError, match="2 counts for 3 bonds"):
        bonds.with_sigma_pieces(counts=[1, 1], step=[12], sigma=[0.01])


def test_engines_without_pieces_refuse_them_and_auto_picks_one_with() -> None:
    bonds = put_book(12, 80.0, ([2.0], [0.012]))
    chosen = trinom.price(bonds, [curve()], backend="auto")
    assert str(chosen.engine).split("/")[0] in ("futhark", "reference")
    assert chosen.price[0] == pytest.approx(trinom.price(bonds, [curve()], backend="reference").price[0], abs=1e-11)
    with pytest.raises(ValueError, match="piecewise constant"):
        trinom.price(bonds, [curve()], backend="futhark-paper", target="c")


def pieces_books() -> list[tuple[object, object]]:
    """Books with pieces and the curves they price on: two puttable zero-coupon bonds (Hull and White's width and a
    widened one) beside a bond without pieces, and two Bermudans, one with pieces."""
    bonds = BondPortfolio.concatenate([put_book(48, 80.0, ([2.0, 4.0], [0.013, 0.008])), put_book(48, 80.0),
                                       put_book(24, 78.0, ([1.0, 3.0], [0.016, 0.0095]))])
    trades = bermudan(steps_per_year=48, id=["B", "C"], option=["receiver", "payer"]).with_sigma_pieces(
        {"B": (["2028-11-25", "2031-11-25"], [0.008, 0.013, 0.010])})
    return [(bonds, [curve()]), (trades, {"EUR": dated_curve()})]


@pytest.mark.parametrize("target", ["c", "multicore", "opencl"])
def test_futhark_prices_pieces_as_the_reference(target: str) -> None:
    """The futhark engine's bonds_pieces entry on the CPU targets (opencl: the GPU targets' kernels, on pocl where
    built): f64 within 1e-11 of the reference, f32 within 1e-4 of it relative to max(1, |price|)."""
    usable, why = trinom.engines.get("futhark").available(target)
    if not usable:
        pytest.skip(why)
    for book, curves in pieces_books():
        reference = np.asarray(trinom.price(book, curves, backend="reference").price)
        f64 = np.asarray(trinom.price(book, curves, backend="futhark", target=target).price)
        np.testing.assert_allclose(f64, reference, rtol=0, atol=1e-11)
        f32 = np.asarray(trinom.price(book, curves, backend="futhark", target=target, precision="f32").price)
        assert (np.abs(f32 - reference) <= 1e-4 * np.maximum(1.0, np.abs(reference))).all()


@pytest.mark.gpu
def test_the_gpu_engines_price_pieces_as_the_reference() -> None:
    """Futhark's cuda target (bonds_pieces) and the cuda engine (its global-memory kernel, each step's branching from
    its piece): f64 within 1e-11 of the reference, f32 by the float32 rule; a spread search and scenario entries on
    cuda as the reference's."""
    usable, why = trinom.engines.get("futhark").available("cuda")
    assert usable, why
    for book, curves in pieces_books():
        reference = np.asarray(trinom.price(book, curves, backend="reference").price)
        f64 = np.asarray(trinom.price(book, curves, backend="futhark", target="cuda").price)
        np.testing.assert_allclose(f64, reference, rtol=0, atol=1e-11)
        cuda = np.asarray(trinom.price(book, curves, backend="cuda").price)
        np.testing.assert_allclose(cuda, reference, rtol=0, atol=1e-11)
        f32 = np.asarray(trinom.price(book, curves, backend="cuda", precision="f32").price)
        assert (np.abs(f32 - reference) <= 1e-4 * np.maximum(1.0, np.abs(reference))).all()
    from trinom.model.scenarios import CurveShift

    book, curves = pieces_books()[1]
    grid = trinom.price(book, curves, backend="cuda", scenarios=[None, CurveShift(0.001)])
    reference = trinom.price(book, curves, backend="reference", scenarios=[None, CurveShift(0.001)])
    np.testing.assert_allclose(np.asarray(grid.price), np.asarray(reference.price), rtol=0, atol=1e-11)


def test_a_sigma_move_moves_every_piece() -> None:
    """A scenario's sigma move (a book's with_trees) moves the step function in parallel: the same as pieces given
    moved."""
    from trinom.lattice.lowering import lower_bonds

    bonds = put_book(12, 80.0, ([2.0, 4.0], [0.013, 0.008]))
    moved = lower_bonds(bonds, ("default",)).with_trees(sigma=[SIGMA + 1e-3])
    assert moved.sigma_pieces is not None and moved.sigma_pieces.sigma.tolist() == pytest.approx([0.014, 0.009])


# --- trades: pieces by date (Trades.with_sigma_pieces, a model file's until rows) ---------------------------------
AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
ZEROS = [0.025, 0.028, 0.031, 0.033]
#: Per 100: a 1-into-10-year Bermudan receiver on the tree at 365 steps a year against QuantLib 1.44's
#: Gaussian1dSwaptionEngine on its Gsr model with the same pieces (256 points, 10 deviations): measured 8.7e-5 and
#: 6.4e-4 (the one-sigma tree at 120 steps a year is 3.8e-3 off the same engine).
GSR_BERMUDAN = 1.5e-3


def dated_curve() -> object:
    from trinom.model import DatedCurve

    return DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="EUR")


def bermudan(steps_per_year: int = 365, **overrides: object) -> object:
    from trinom.instruments import Trades

    columns: dict[str, object] = dict(
        id=["B"], type="swaption", notional=100.0, start="2027-11-25", maturity="2037-11-25", rate=0.034, frequency=1,
        day_count="ACT/365F", calendar="NONE", convention="U", option=["receiver"], exercise="bermudan",
        float_frequency=2, a=A, sigma=SIGMA, curve="EUR", steps_per_year=steps_per_year)
    columns.update(overrides)
    return Trades(as_of=AS_OF, **columns)


def gsr_bermudan(until: list[str], values: list[float]) -> float:
    import QuantLib as ql  # noqa: N813
    from test_piecewise_sigma import ql_setup  # its curve, a and QuantLib's Gsr on them (the same pillars)

    handle, gsr = ql_setup(dated_curve(), values, until)
    index = ql.IborIndex("E6M", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), handle)
    start, end = ql.DateParser.parseISO("2027-11-25"), ql.DateParser.parseISO("2037-11-25")
    fixed = ql.Schedule(start, end, ql.Period(1, ql.Years), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                        ql.DateGeneration.Backward, False)
    floating = ql.Schedule(start, end, ql.Period(6, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                           ql.DateGeneration.Backward, False)
    swap = ql.VanillaSwap(ql.Swap.Receiver, 100.0, fixed, 0.034, ql.Actual365Fixed(), floating, index, 0.0,
                          ql.Actual365Fixed())
    option = ql.Swaption(swap, ql.BermudanExercise(list(fixed)[:-1]))
    option.setPricingEngine(ql.Gaussian1dSwaptionEngine(gsr, 256, 10.0))
    return float(option.NPV())


@pytest.mark.parametrize("until,values", [(["2028-11-25", "2030-11-25", "2032-11-25"], [0.009, 0.013, 0.011, 0.010]),
                                          (["2028-11-25", "2031-11-25"], [0.008, 0.013, 0.010])],
                         ids=["within-hull-white-width", "widened"])
def test_a_bermudan_with_pieces_matches_quantlibs_gsr(until: list[str], values: list[float]) -> None:
    book = bermudan().with_sigma_pieces({"B": (until, values)})
    assert book.column("sigma").tolist() == [values[0]]
    result = trinom.price(book, {"EUR": dated_curve()})
    assert str(result.engine).split("/")[0] in ("futhark", "reference")
    assert result.price[0] == pytest.approx(gsr_bermudan(until, values), abs=GSR_BERMUDAN)


def test_trade_pieces_of_one_sigma_price_as_one_sigma_and_parts_keep_their_pieces() -> None:
    plain = bermudan(steps_per_year=24)
    same = plain.with_sigma_pieces({"B": (["2029-11-25"], [SIGMA, SIGMA])})
    curves = {"EUR": dated_curve()}
    assert trinom.price(same, curves, backend="reference").price[0] == \
        trinom.price(plain, curves, backend="reference").price[0]
    two = bermudan(steps_per_year=24, id=["B", "C"], option="receiver").with_sigma_pieces({"C": (["2029-11-25"], [0.012, 0.009])})
    assert list(two.rows(1, 2).sigma_pieces()) == [0] and two.rows(0, 1).sigma_pieces() == {}
    assert two.with_columns(sigma=0.01).sigma_pieces() == {}  # a sigma column: one sigma a trade again


def test_bad_trade_pieces_are_refused_naming_the_trade() -> None:
    book = bermudan(id=["B", "K"], type=["swaption", "cap"], start=["2027-11-25", "2027-02-25"],
                    option=["receiver", None], exercise=["bermudan", None], float_frequency=[2, None])
    cases = [({"X": (["2029-11-25"], [0.01, 0.011])}, "which the book does not hold"),
             ({"B": (["2029-11-25"], [0.01])}, "1 sigmas for 1 until dates"),
             ({"B": (["2026-11-25"], [0.01, 0.011])}, "after the as-of date"),
             ({"B": (["2029-11-25"], [0.01, -0.011])}, "finite number > 0")]
    for pieces, message in cases:
        with pytest.raises(InputError, match=message):
            book.with_sigma_pieces(pieces)


def test_a_model_files_until_rows_price_through_the_command_line(tmp_path: object) -> None:
    """model.csv with until rows (a trade's pieces; a curve's one sigma) -> trinom price --model: the trade prices
    as Trades.with_sigma_pieces prices it; a model file whose pieces are not well formed is refused by line."""
    from pathlib import Path

    import pandas as pd
    from trinom.cli import main
    from trinom.cli.calibrate import read_model_file

    folder = Path(str(tmp_path))
    (folder / "curve.csv").write_text("curve,date,zero\n" + "".join(
        f"EUR,{d},{z}\n" for d, z in zip(PILLARS, ZEROS, strict=True)))
    (folder / "trades.csv").write_text(
        "id,type,notional,start,maturity,rate,frequency,day_count,calendar,convention,option,exercise,"
        "float_frequency,curve,steps_per_year\n"
        "B,swaption,100,2027-11-25,2037-11-25,0.034,1,ACT/365F,NONE,U,receiver,bermudan,2,EUR,24\n")
    (folder / "model.csv").write_text("id,curve,a,sigma,until\nB,,0.05,0.010,\nB,,0.05,0.009,2028-11-25\n"
                                      "B,,0.05,0.013,2031-11-25\n")
    model = read_model_file(folder / "model.csv")
    assert model.trades == {"B": (0.05, 0.009)} and model.pieces == {"B": (["2028-11-25", "2031-11-25"],
                                                                           [0.009, 0.013, 0.010])}
    out = folder / "prices.csv"
    assert main([str(v) for v in ["price", folder / "trades.csv", "--curve", folder / "curve.csv", "--as-of", AS_OF,
                                  "--model", folder / "model.csv", "--out", out]]) == 0
    direct = trinom.price(bermudan(steps_per_year=24).with_sigma_pieces(
        {"B": (["2028-11-25", "2031-11-25"], [0.009, 0.013, 0.010])}), {"EUR": dated_curve()}).price[0]
    assert pd.read_csv(out).price[0] == pytest.approx(direct, abs=1e-12)
    for text, message in [("id,a,sigma,until\nB,0.05,0.01,\nB,0.05,0.02,\n", "already at"),
                          ("id,a,sigma,until\nB,0.05,0.01,2028-11-25\nB,0.05,0.02,2029-11-25\n", "exactly one row"),
                          ("id,a,sigma,until\nB,0.05,0.01,2028-11-25\nB,0.04,0.02,\n", "share one a"),
                          ("id,a,sigma,until\nB,0.05,0.01,2028-13-25\nB,0.05,0.02,\n", "is not a date")]:
        (folder / "bad.csv").write_text(text)
        with pytest.raises(InputError, match=message):
            read_model_file(folder / "bad.csv")


def test_calibrate_piecewise_bootstraps_each_trade_and_its_model_file_prices(tmp_path: object, capsys: object) -> None:
    """trinom calibrate trades.csv --piecewise --a: a row a piece (until: the exercise date each ends on), each
    co-terminal quote repriced by its pieces in the closed form (1e-10 relative); trinom price --model prices the
    trade on those pieces; a trade without a basket is one no-fit row; the options that do not apply are refused."""
    from pathlib import Path

    import pandas as pd
    from trinom.analytics.baskets import book_baskets, prepare_baskets
    from trinom.cli import main
    from trinom.instruments import read_trades
    from trinom.model.sigma import Sigma

    folder = Path(str(tmp_path))
    (folder / "curve.csv").write_text("curve,date,zero\n" + "".join(
        f"EUR,{d},{z}\n" for d, z in zip(PILLARS, ZEROS, strict=True)))
    (folder / "vols.csv").write_text("curve,expiry,tenor,vol,kind\n" + "".join(
        f"EUR,{e},{t},{v},normal\n" for e, t, v in [("1Y", "1Y", 0.0095), ("1Y", "20Y", 0.009), ("5Y", "1Y", 0.008),
                                                    ("5Y", "20Y", 0.0075), ("10Y", "1Y", 0.007),
                                                    ("10Y", "20Y", 0.0068)]))
    (folder / "trades.csv").write_text(
        "id,type,notional,start,maturity,rate,frequency,day_count,calendar,convention,option,exercise,"
        "float_frequency,curve,steps_per_year,a,sigma\n"
        "B,swaption,100,2027-11-25,2037-11-25,0.034,1,ACT/365F,NONE,U,receiver,bermudan,2,EUR,24,0.05,0.01\n"
        "K,cap,100,2027-02-25,2031-11-25,0.033,4,ACT/365F,,,,,,EUR,24,0.05,0.01\n")
    files = ["--curve", folder / "curve.csv", "--as-of", AS_OF]
    model_file = folder / "model.csv"
    assert main([str(v) for v in ["calibrate", folder / "trades.csv", "--piecewise", "--a", A, *files, "--vols",
                                  folder / "vols.csv", "--out", model_file]]) == 0
    table = pd.read_csv(model_file, keep_default_na=False)
    assert list(table.columns) == ["id", "a", "sigma", "status", "message", "curve", "quotes", "residual", "until"]
    mine = table[table.id == "B"]
    assert len(mine) == 10 and set(mine.status) == {"converged"} and mine.until.tolist()[-1] == ""
    assert np.abs(mine.residual.astype(float)).max() < 1e-12  # each piece reprices its quote (per unit notional)
    assert mine.until.tolist()[:3] == ["2027-11-25", "2028-11-25", "2029-11-25"]
    assert table[table.id == "K"].status.tolist() == ["no fit"]
    # each quote repriced by the pieces (the closed form with the integrated variance)
    trades = read_trades(folder / "trades.csv", as_of=AS_OF)
    prepared = prepare_baskets(book_baskets(trades, ("EUR",)), folder / "vols.csv", AS_OF, curves=("EUR",))
    quotes = prepared.quotes({"EUR": dated_curve()})
    rows = np.flatnonzero(quotes.trade == 0)
    ends = (np.array(mine.until.tolist()[:-1], dtype="datetime64[D]") - np.datetime64(AS_OF)).astype(float) / 365.0
    pieces = Sigma(times=[ends], values=[[float(v) for v in mine.sigma]])
    model = quotes.swaptions_of(rows).price(a=A, sigma=Sigma(times=np.repeat(pieces.times, rows.size, axis=0),
                                                             values=np.repeat(pieces.values, rows.size, axis=0)))
    np.testing.assert_allclose(model, quotes.market_price[rows], rtol=1e-10)
    # the model file prices the trade on its pieces
    out = folder / "prices.csv"
    assert main([str(v) for v in ["price", folder / "trades.csv", *files, "--model", model_file, "--errors", "mask",
                                  "--out", out]]) == 0
    priced = pd.read_csv(out, keep_default_na=False)
    direct = trinom.price(trades.with_sigma_pieces({"B": (mine.until.tolist()[:-1], [float(v) for v in mine.sigma])}),
                          {"EUR": dated_curve()}, errors="mask")
    assert float(priced.price[0]) == pytest.approx(float(direct.price[0]), abs=1e-12)
    # a quote asking for less variance than the earlier pieces give: its piece bound, its residual said
    (folder / "low.csv").write_text((folder / "vols.csv").read_text().replace("EUR,5Y,1Y,0.008", "EUR,5Y,1Y,0.002")
                                    .replace("EUR,5Y,20Y,0.0075", "EUR,5Y,20Y,0.002"))
    assert main([str(v) for v in ["calibrate", folder / "trades.csv", "--piecewise", "--a", A, *files, "--vols",
                                  folder / "low.csv", "--out", folder / "low_model.csv"]]) == 0
    low = pd.read_csv(folder / "low_model.csv", keep_default_na=False)
    bound = low[(low.id == "B") & (low.status == "bound")]
    assert len(bound) > 0 and (bound.residual.astype(float) > 1e-6).all()
    assert "pricing refuses the trade" in bound.message.tolist()[0]
    for extra, message in [(["--quotes-out", folder / "q.csv"], "no quotes table"), ([], "give --a")]:
        argv = ["calibrate", folder / "trades.csv", "--piecewise", *files, "--vols", folder / "vols.csv", "--out",
                folder / "m2.csv", *extra]
        if extra:
            argv += ["--a", A]
        assert main([str(v) for v in argv]) != 0
        assert message in capsys.readouterr().err  # type: ignore[attr-defined]


def test_vega_per_piece_is_each_pieces_move_and_they_sum_to_the_parallel_vega() -> None:
    """trinom.risk's vega rows of a trade with pieces: the parallel vega (factor sigma: every piece moved) and one
    row a piece (factor sigma:FROM..TO), each the central difference of the trade priced with that piece moved alone;
    at 365 steps a year they sum to the parallel vega within 0.2% (measured 0.06% on a 10-year Bermudan)."""
    until, values = ["2027-11-25", "2028-11-25"], [0.011, 0.0095, 0.0085]
    book = bermudan(maturity="2030-11-25").with_sigma_pieces({"B": (until, values)})
    curves = {"EUR": dated_curve()}
    table = trinom.risk(book, curves, measures=["vega"])
    assert table.factor.tolist() == ["sigma", "sigma:2026-11-25..2027-11-25", "sigma:2027-11-25..2028-11-25",
                                     "sigma:2028-11-25.."]
    h = 1e-4
    for k, row in enumerate(table.value[1:].tolist()):
        up, down = (trinom.price(bermudan(maturity="2030-11-25").with_sigma_pieces(
            {"B": (until, [v + (s if j == k else 0.0) for j, v in enumerate(values)])}), curves).price[0]
            for s in (h, -h))
        assert row == pytest.approx((up - down) / (2 * h) * 1e-4, rel=1e-12, abs=1e-15)
    assert sum(table.value[1:]) == pytest.approx(table.value[0], rel=2e-3)


def test_recalibration_with_pieces_bootstraps_again_in_every_scenario() -> None:
    """A scenario grid recalibrated piecewise (Recalibration(per="trade", a=..., piecewise=True)): in each scenario
    every trade's pieces are bootstrapped again on the moved curve and the trade priced on them: the same as
    bootstrapping and pricing in that market apart."""
    from trinom.analytics import Recalibration
    from trinom.analytics.baskets import book_baskets, prepare_baskets
    from trinom.analytics.baskets.piecewise import bootstrap_baskets
    from trinom.model import DatedCurve, VolQuotes
    from trinom.scenarios import CurveShift

    vols = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "1Y", "10Y", "10Y"], tenor=["1Y", "20Y", "1Y", "20Y"],
                                  vol=[0.0095, 0.009, 0.0072, 0.007], kind="normal")
    book = bermudan(steps_per_year=24, id=["B", "C"], maturity=["2037-11-25", "2032-11-25"], option="receiver")
    how = Recalibration(vols=vols, per="trade", a=A, piecewise=True)
    h = 1e-4
    grid = trinom.price(book, {"EUR": dated_curve()}, recalibrate=how, scenarios=[None, CurveShift(h, curve="EUR")])
    for s, shift in enumerate([0.0, h]):
        curve = DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=[z + shift for z in ZEROS], name="EUR")
        prepared = prepare_baskets(book_baskets(book, ("EUR",)), vols, AS_OF, curves=("EUR",))
        fit = bootstrap_baskets(prepared, {"EUR": curve}, a=A)
        pieces = {book.ids[k]: (fit.until[k], fit.sigma[k]) for k in range(len(book))}
        alone = trinom.price(book.with_sigma_pieces(pieces), {"EUR": curve})
        np.testing.assert_allclose(grid.price[s], alone.price, rtol=0, atol=1e-11)
    with pytest.raises(ValueError, match="give per='trade' and a"):
        Recalibration(vols=vols, per="trade", piecewise=True)


@pytest.mark.parametrize("suffix", ["in", "csv", "parquet"])
def test_a_book_file_refuses_pieces_it_cannot_hold(tmp_path: object, suffix: str) -> None:
    """The 19-array, CSV and Parquet bond books hold one sigma a bond: writing bonds with pieces is refused, naming
    the bond, not written without them."""
    from pathlib import Path

    from trinom.io.bond_books import write_bonds

    bonds = BondPortfolio.concatenate([put_book(12, 80.0), put_book(12, 80.0, ([2.0], [0.012]))])
    path = Path(str(tmp_path)) / f"book.{suffix}"
    with pytest.raises(InputError, match="sigma pieces"):
        write_bonds(bonds, [curve()], path)
    assert not path.exists()
