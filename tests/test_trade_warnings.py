"""Nothing dropped without a word (issue 35, item 3): a bond whose exercise rights all fall on or before the as-of
date, or are moved there by its notice days, prices as a straight bond and says so: ``Prices.warnings`` in the API, a
warning on stderr naming the trade on the command line."""

from __future__ import annotations

from pathlib import Path

import trinom
from trinom.cli import main
from trinom.instruments import TRADE_COLUMNS, Trades
from trinom.model import DatedCurve

AS_OF = "2026-11-25"
CURVES = {"EUR": DatedCurve(as_of=AS_OF, dates=["2036-11-25"], zero_rates=[0.03])}


def book() -> Trades:
    return Trades(as_of=AS_OF, id=["past", "noticed", "live", "straight"], type=["bond"] * 4,
                  issue=["2020-03-15"] * 4, maturity=["2030-03-15"] * 4, coupon=[0.04] * 4, frequency=[2] * 4,
                  option=["call", "put", "call", None], exercise=["european", "european", "bermudan", None],
                  first_exercise=["2026-09-15", "2026-12-01", "2027-03-15", None],
                  last_exercise=[None, None, "2029-09-15", None], exercise_price=[100.0, 100.0, 100.0, None],
                  notice_days=[None, 30, None, None], a=0.05, sigma=0.01)


def test_exercise_that_has_passed_is_said():
    result = trinom.price(book(), CURVES, backend="reference")
    assert [row for row, _m in result.warnings] == [0, 1]
    assert "the call's exercise dates are all on or before the as-of date 2026-11-25" in result.warnings[0][1]
    assert "the put's" in result.warnings[1][1] and "priced as a straight bond" in result.warnings[1][1]
    straight = trinom.price(book(), CURVES, backend="reference").price[3]
    assert result.price[0] == straight and result.price[1] == straight  # the same bond, without its option
    assert result.error.tolist() == [""] * 4


def test_the_command_line_names_the_trade_and_its_line(tmp_path: Path, capsys):
    trades = tmp_path / "trades.csv"
    columns = [c for c in TRADE_COLUMNS if c in ("id", "type", "issue", "maturity", "coupon", "frequency", "option",
                                                  "exercise", "first_exercise", "exercise_price", "a", "sigma")]
    trades.write_text(",".join(columns) + "\nP1,bond,2020-03-15,2030-03-15,0.04,2,call,european,2026-09-15,100,0.05,"
                      "0.01\nP2,bond,2020-03-15,2030-03-15,0.04,2,call,european,2027-09-15,100,0.05,0.01\n")
    curve = tmp_path / "curve.csv"
    curve.write_text("curve,date,zero\nEUR,2036-11-25,0.03\n")
    assert main(["price", str(trades), "--curve", str(curve), "--as-of", AS_OF, "--backend", "reference"]) == 0
    err = capsys.readouterr().err
    assert f"trinom: warning: trade 'P1': {trades} line 2: the call's exercise dates are all on or before" in err
    assert "'P2'" not in err
