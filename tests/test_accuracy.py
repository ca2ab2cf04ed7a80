"""Resolution by accuracy (issue 34, item 5: ``trinom.price(trades, curves, accuracy=...)``): each dated trade's
steps a year chosen on doubling grids until its two-grid error estimate is at most the accuracy. The prices are
checked against the same trades on a fine grid (3072 steps a year, where these trades have converged to about 1e-4),
the straight bond against its discounted flows; the refusals name what is wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import trinom
from trinom.analytics.resolution import MAX_STEPS_PER_YEAR, START_STEPS_PER_YEAR
from trinom.cli import main
from trinom.instruments import Trades
from trinom.model import DatedCurve

AS_OF = "2026-11-25"
#: How close the fine grid is to the converged price (measured: its gap to a grid of twice as many steps).
FINE_GRID = 3e-4


def curve() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=["2028-11-25", "2031-11-25", "2036-11-25"], zero_rates=[0.028, 0.03, 0.035],
                      name="EUR")


def book(**columns: object) -> Trades:
    """A callable bond, the same bond straight, a Bermudan receiver swaption and a 2-year putable bond."""
    return Trades(as_of=AS_OF, id=["callable", "straight", "swaption", "putable"],
                  type=["bond", "bond", "swaption", "bond"], issue=["2025-03-15", "2025-03-15", None, "2026-01-10"],
                  maturity=["2034-03-15", "2034-03-15", "2033-11-25", "2028-07-10"],
                  coupon=[0.045, 0.045, None, 0.03], frequency=[2, 2, 1, 4],
                  option=["call", None, "receiver", "put"], exercise=["bermudan", None, "bermudan", "american"],
                  first_exercise=["2029-03-15", None, "2027-11-25", "2027-01-10"],
                  last_exercise=["2033-09-15", None, "2032-11-25", "2028-04-10"],
                  exercise_price=[100.0, None, None, 100.0], start=[None, None, "2026-11-25", None],
                  rate=[None, None, 0.034, None], float_frequency=[None, None, 2, None], a=0.05, sigma=0.01,
                  curve="EUR", **columns)


@pytest.fixture(scope="module")
def fine() -> np.ndarray:
    return trinom.price(book(steps_per_year=[MAX_STEPS_PER_YEAR] * 4), {"EUR": curve()}).price


@pytest.mark.parametrize("accuracy", [0.05, 0.01, 0.002])
def test_every_trade_is_within_its_accuracy_of_the_fine_grid(fine: np.ndarray, accuracy: float):
    result = trinom.price(book(), {"EUR": curve()}, accuracy=accuracy)
    assert (result.error == "").all() and not result.warnings
    assert (result.accuracy <= accuracy).all()
    np.testing.assert_array_less(np.abs(result.price - fine), accuracy + FINE_GRID)
    np.testing.assert_allclose(result.clean, result.price - result.accrued, rtol=0, atol=1e-12)
    # each grid is the first start * 2^k whose estimate meets the accuracy: a power-of-two multiple of the start
    ratio = result.steps_per_year / START_STEPS_PER_YEAR
    assert np.all(ratio >= 4) and np.all(np.log2(ratio) == np.round(np.log2(ratio)))


def test_a_tighter_accuracy_takes_finer_grids_where_the_trade_needs_them():
    loose = trinom.price(book(), {"EUR": curve()}, accuracy=0.05)
    tight = trinom.price(book(), {"EUR": curve()}, accuracy=0.002)
    assert (tight.steps_per_year >= loose.steps_per_year).all()
    assert tight.steps_per_year[0] > loose.steps_per_year[0]  # the callable needs more steps than the loose grid
    # the straight bond is exact at any grid (its flows are valued at their dates): done at the third grid
    assert tight.steps_per_year[1] == 4 * START_STEPS_PER_YEAR and tight.accuracy[1] < 1e-10


def test_the_straight_bond_is_its_discounted_flows(fine: np.ndarray):
    result = trinom.price(book(), {"EUR": curve()}, accuracy=0.01)
    np.testing.assert_allclose(result.price[1], fine[1], rtol=0, atol=1e-10)


def test_an_accuracy_out_of_reach_keeps_the_finest_price_with_a_warning():
    short = Trades(as_of=AS_OF, id=["P"], type=["bond"], issue=["2026-01-10"], maturity=["2027-07-10"], coupon=[0.03],
                   frequency=[4], option=["put"], exercise=["american"], first_exercise=["2027-01-10"],
                   last_exercise=["2027-04-10"], exercise_price=[100.0], a=0.05, sigma=0.01, curve="EUR")
    result = trinom.price(short, {"EUR": curve()}, accuracy=1e-12)
    assert result.steps_per_year[0] == MAX_STEPS_PER_YEAR
    (row, message), = result.warnings
    assert row == 0 and "accuracy 1e-12 not reached" in message and f"steps_per_year {MAX_STEPS_PER_YEAR}" in message
    same = trinom.price(short.with_columns(steps_per_year=[MAX_STEPS_PER_YEAR]), {"EUR": curve()})
    np.testing.assert_allclose(result.price, same.price, rtol=0, atol=1e-12)
    assert result.accuracy[0] > 1e-12


def test_a_finer_grid_refused_by_max_steps_stops_the_trade_there():
    result = trinom.price(book(), {"EUR": curve()}, accuracy=1e-9, max_steps=1000)
    assert (result.error == "").all()
    refused = [message for row, message in result.warnings if row == 0]
    assert refused and "finer trees refused" in refused[0]
    assert result.steps_per_year[0] * 7.3 <= 1000  # the callable's last grid stayed within max_steps


def test_a_bad_row_is_masked_and_the_others_priced(fine: np.ndarray):
    trades = book().with_columns(sigma=[0.01, 0.01, -0.01, 0.01])
    result = trinom.price(trades, {"EUR": curve()}, accuracy=0.01, errors="mask")
    assert np.isnan(result.price[2]) and "sigma" in result.error[2] and result.steps_per_year[2] == 0
    assert np.isnan(result.accuracy[2])
    good = [0, 1, 3]
    np.testing.assert_array_less(np.abs(result.price[good] - fine[good]), 0.01 + FINE_GRID)
    with pytest.raises(trinom.InputError, match="sigma"):
        trinom.price(trades, {"EUR": curve()}, accuracy=0.01)


def test_refusals_name_what_is_wrong():
    with pytest.raises(ValueError, match="row 1, id straight"):
        trinom.price(book(steps_per_year=[None, 365, None, None]), {"EUR": curve()}, accuracy=0.01)
    with pytest.raises(ValueError, match="positive"):
        trinom.price(book(), {"EUR": curve()}, accuracy=-0.01)
    with pytest.raises(TypeError, match="number"):
        trinom.price(book(), {"EUR": curve()}, accuracy="0.01")
    with pytest.raises(ValueError, match="scenarios"):
        trinom.price(book(), {"EUR": curve()}, accuracy=0.01, scenarios=[{"EUR": curve()}])
    portfolio = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[1],
                                 a=[0.1], sigma=[0.01], option_type=["put"])
    with pytest.raises(TypeError, match="Trades"):
        trinom.price(portfolio, accuracy=0.01)


def test_the_frame_and_the_command_line_carry_the_grid_and_the_estimate(tmp_path: Path, capsys):
    frame = trinom.price(book(), {"EUR": curve()}, accuracy=0.01).to_pandas()
    assert list(frame.columns)[-2:] == ["steps_per_year", "accuracy"]
    trades = tmp_path / "trades.csv"
    pd.DataFrame({"id": ["callable"], "type": ["bond"], "issue": ["2025-03-15"], "maturity": ["2034-03-15"],
                  "coupon": [0.045], "frequency": [2], "option": ["call"], "exercise": ["bermudan"],
                  "first_exercise": ["2029-03-15"], "last_exercise": ["2033-09-15"], "exercise_price": [100.0],
                  "a": [0.05], "sigma": [0.01], "curve": ["EUR"]}).to_csv(trades, index=False)
    curves = tmp_path / "curve.csv"
    pd.DataFrame({"curve": ["EUR"] * 3, "date": ["2028-11-25", "2031-11-25", "2036-11-25"],
                  "zero": [0.028, 0.03, 0.035]}).to_csv(curves, index=False)
    out = tmp_path / "prices.csv"
    assert main(["price", str(trades), "--curve", str(curves), "--as-of", AS_OF, "--accuracy", "0.01", "--out",
                 str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.columns) == ["id", "price", "clean", "accrued", "error", "value", "steps_per_year", "accuracy"]
    api = trinom.price(book(), {"EUR": curve()}, accuracy=0.01)
    np.testing.assert_allclose(table.price[0], api.price[0], rtol=0, atol=1e-9)
    assert table.accuracy[0] <= 0.01
    tree_step = tmp_path / "book.csv"
    tree_step.write_text(",".join(trinom.FIELDS) + "\n63,9,3,365,12,0.1,0.01,put\n")
    assert main(["price", str(tree_step), "--accuracy", "0.01"]) == 2
    assert "--accuracy chooses dated trades' steps a year" in capsys.readouterr().err


def test_the_modules_example_runs():
    import doctest

    from trinom.analytics import resolution

    assert doctest.testmod(resolution).attempted > 0 and doctest.testmod(resolution).failed == 0
