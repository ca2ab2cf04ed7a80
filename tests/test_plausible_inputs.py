"""Market data no market has seen is refused, saying what the value looks like (issue 35, item 2): zero rates in
percent or of 500%, a discount factor of 1e6, a spread in basis points or percent, exercise prices as a fraction of par.
Negative rates stay legal."""

from __future__ import annotations

from pathlib import Path

import pytest
import trinom
from trinom.instruments import Trades
from trinom.model import read_dated_curves

AS_OF = "2026-11-25"


@pytest.mark.parametrize("text,message", [
    ("curve,date,zero\nEUR,2027-11-25,2.5\n", "line 2: zero must be a continuous rate as a decimal in -0.2..1 "
     "(0.025 for 2.5%), got 2.5: it looks like percent (2.5% is 0.025)"),
    ("curve,date,zero\nEUR,2027-11-25,0.03\nEUR,2030-11-25,5\n", "line 3: zero must be a continuous rate as a "
     "decimal in -0.2..1 (0.025 for 2.5%), got 5: it looks like percent"),
    ("curve,date,discount\nEUR,2027-11-25,1e6\n", "line 2: discount 1e+06 at 1 years implies a zero rate of -13.82"),
    ("curve,date,discount\nEUR,2027-11-25,0.5\nEUR,2028-11-25,1e-9\n", "line 3: discount 1e-09 at 2 years implies "
     "a zero rate of 10.35"),
])
def test_implausible_curve_values_are_refused_naming_file_line_and_column(tmp_path: Path, text: str, message: str):
    path = tmp_path / "curve.csv"
    path.write_text(text)
    with pytest.raises(trinom.InputError) as caught:
        read_dated_curves(path, as_of=AS_OF)
    assert any(message in m and path.name in m for _r, _f, m in caught.value.errors), caught.value.errors


def test_negative_and_high_but_plausible_rates_stay_legal(tmp_path: Path):
    path = tmp_path / "curve.csv"
    path.write_text("curve,date,zero\nCHF,2027-11-25,-0.0075\nCHF,2036-11-25,-0.002\nTRY,2027-11-25,0.45\n")
    curves = read_dated_curves(path, as_of=AS_OF)
    assert set(curves) == {"CHF", "TRY"}
    path.write_text("curve,date,discount\nEUR,2026-11-25,1\nEUR,2027-11-25,1.0076\nEUR,2036-11-25,0.7\n")
    assert list(read_dated_curves(path, as_of=AS_OF)) == ["EUR"]


def bonds(**cells) -> Trades:
    row = {"id": ["B1"], "type": ["bond"], "issue": ["2024-03-15"], "maturity": ["2034-03-15"], "coupon": [0.05],
           "frequency": [2], "option": ["call"], "exercise": ["bermudan"], "first_exercise": ["2029-03-15"],
           "last_exercise": ["2033-09-15"], "exercise_price": [100.0], "a": 0.05, "sigma": 0.01}
    return Trades(as_of=AS_OF, **{**row, **{k: [v] for k, v in cells.items()}})


@pytest.mark.parametrize("cells,field,message", [
    ({"spread": 50}, "spread", "got 50: it looks like basis points (50 bp is 0.005)"),
    ({"spread": 2.5}, "spread", "got 2.5: it looks like percent (2.5% is 0.025)"),
    ({"exercise_price": 1.03}, "exercise_price", "got 1.03: it looks like a fraction of par (1.03 is 103 per 100)"),
    ({"exercise_price": 10300}, "exercise_price", "in 10..1000, got 10300"),
])
def test_implausible_trade_cells_are_refused(cells, field, message):
    problems = bonds(**cells).problems()
    assert [(row, f) for row, f, _m in problems] == [(0, field)]
    assert message in problems[0][2]


def test_a_schedule_price_as_a_fraction_of_par_is_refused():
    book = Trades(as_of=AS_OF, id=["B1"], type=["bond"], issue=["2024-03-15"], maturity=["2034-03-15"],
                  coupon=[0.05], frequency=[2], option=["call"], exercise=["bermudan"], a=0.05, sigma=0.01,
                  schedule={"id": ["B1", "B1"], "date": ["2029-03-15", "2030-03-15"], "price": [103.0, 1.02]})
    problems = book.problems()
    assert [(row, f) for row, f, _m in problems] == [(0, "schedule.price")]
    assert "price must be a clean price per 100 of the notional in 10..1000, got 1.02: it looks like a fraction of " \
           "par (1.02 is 102 per 100)" in problems[0][2]


def test_plausible_spreads_and_prices_price():
    result = trinom.price(bonds(spread=-0.004, exercise_price=101.5), {"EUR": trinom.model.DatedCurve(
        as_of=AS_OF, dates=["2036-11-25"], zero_rates=[0.03])}, backend="reference")
    assert result.error.tolist() == [""]


def test_curves_built_in_python_take_the_same_range():
    """The file reader's range holds for a DatedCurve built in Python too (issue 35's audit: rates in percent priced
    a bond at 1.59)."""
    with pytest.raises(trinom.InputError, match="it looks like percent"):
        trinom.model.DatedCurve(as_of=AS_OF, dates=["2027-11-25", "2031-11-25"], zero_rates=[2.5, 3.0])
    with pytest.raises(trinom.InputError, match="implies a zero rate of"):
        trinom.model.DatedCurve(as_of=AS_OF, dates=["2027-11-25"], discount_factors=[1e6])


@pytest.mark.parametrize("cells,field,message", [
    ({"type": "bond_option", "issue": None, "coupon": None, "frequency": None, "exercise": None, "first_exercise": None,
      "last_exercise": None, "exercise_price": None, "expiry": "2028-11-25", "strike": 0.85}, "strike",
     "it looks like a fraction of par (0.85 is 85 per 100)"),
    ({"sigma": 1.0}, "sigma", "at most 0.2 (0.01 for 100 bp a year), got 1.0: it looks like percent"),
])
def test_a_strike_as_a_fraction_and_sigma_in_percent_are_refused(cells, field, message):
    problems = bonds(**cells).problems()
    assert [(row, f) for row, f, _m in problems] == [(0, field)] and message in problems[0][2]


def test_an_amortized_notional_as_a_fraction_is_refused():
    book = Trades(as_of=AS_OF, id=["S1"], type=["bond"], notional=[1e6], issue=["2024-03-15"],
                  maturity=["2034-03-15"], coupon=[0.05], frequency=[2], a=0.05, sigma=0.01,
                  notionals={"id": ["S1"], "date": ["2029-03-15"], "notional": [0.6]})
    problems = book.problems()
    assert [(row, f) for row, f, _m in problems] == [(0, "notionals.notional")]
    assert "notional 0.6 looks like a fraction of the trade's notional 1e+06 (0.6 of it is 600000)" in problems[0][2]
