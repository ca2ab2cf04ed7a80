"""``trinom price|risk|oas trades.csv --curve curve.csv --as-of DATE`` (issue 25: the file contract)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import trinom
from trinom.cli import main
from trinom.instruments import TRADE_COLUMNS, Trades, read_trades
from trinom.model import DatedCurve, read_dated_curves

AS_OF = "2026-11-25"
ROWS = [
    "C1,bond,100,2024-03-15,2036-03-15,0.05,2,30/360,USGOVT,F,call,bermudan,2028-03-15,2035-09-15,100,,,0.03,0.01,,USD,",
    "P1,bond,,2025-06-30,2031-06-30,0.04,1,ACT/ACT-ICMA,TARGET,MF,put,american,2027-06-30,2030-06-30,99,,,0.05,0.012,"
    "0.001,EUR,",
    "Z1,bond_option,,,2034-11-25,,,,,,put,,,,,2029-11-25,63,0.1,0.01,,EUR,",
    "B1,bond,,2020-01-15,2030-01-15,0.03,4,ACT/360,TARGET+NYSE,MF,,,,,,,,0.03,0.01,,USD,48",
]
CURVES = "curve,date,zero\nEUR,2027-11-25,0.025\nEUR,2031-11-25,0.028\nEUR,2046-11-25,0.032\nUSD,2027-11-25,0.040\n" \
         "USD,2036-11-25,0.042\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    trades, curve = tmp_path / "trades.csv", tmp_path / "curve.csv"
    trades.write_text(",".join(TRADE_COLUMNS[:23]) + "\n" + "\n".join(row + "," for row in ROWS) + "\n")  # notice_days
    curve.write_text(CURVES)
    return trades, curve


def run(*argv: object) -> int:
    return main([str(a) for a in argv])


def test_price_writes_the_contract_columns_in_input_order(files, tmp_path):
    trades, curve = files
    out = tmp_path / "prices.csv"
    assert run("price", trades, "--curve", curve, "--as-of", AS_OF, "--backend", "reference", "--out", out) == 0
    table = pd.read_csv(out, keep_default_na=False)
    assert list(table.columns) == ["id", "price", "clean", "accrued", "error", "value"]  # value appended (issue 35)
    assert table.id.tolist() == ["C1", "P1", "Z1", "B1"]
    np.testing.assert_allclose(table.clean, table.price - table.accrued, rtol=0, atol=1e-12)
    expected = trinom.price(read_trades(trades, as_of=AS_OF), read_dated_curves(curve, as_of=AS_OF),
                            backend="reference")
    np.testing.assert_allclose(table.price, expected.price, rtol=1e-15)
    assert table.accrued[0] == pytest.approx(100 * 0.05 * 70 / 360, abs=1e-12)  # 30/360 from 2026-09-15
    assert (table.error == "").all()


def test_price_writes_parquet_and_the_engines_agree(files, tmp_path):
    trades, curve = files
    out = tmp_path / "prices.parquet"
    assert run("price", trades, "--curve", curve, "--as-of", AS_OF, "--backend", "futhark", "--target", "c",
               "--out", out) == 0
    table = pd.read_parquet(out)
    reference = trinom.price(read_trades(trades, as_of=AS_OF), read_dated_curves(curve, as_of=AS_OF),
                             backend="reference")
    assert table.id.tolist() == ["C1", "P1", "Z1", "B1"]
    np.testing.assert_allclose(table.price, reference.price, rtol=1e-11, atol=1e-13)


def test_risk_and_oas_take_the_same_files(files, tmp_path):
    trades, curve = files
    bonds = tmp_path / "bonds.csv"
    lines = trades.read_text().splitlines()
    bonds.write_text("\n".join([lines[0], lines[1], lines[2], lines[4]]) + "\n")
    market = tmp_path / "market.csv"
    market.write_text("id,price\nC1,99.5\nP1,104\nB1,96\n")
    out = tmp_path / "oas.csv"
    assert run("oas", bonds, "--curve", curve, "--as-of", AS_OF, "--market-prices", market, "--backend", "reference",
               "--out", out) == 0
    spreads = pd.read_csv(out, keep_default_na=False)
    np.testing.assert_allclose(spreads.price, [99.5, 104.0, 96.0], rtol=1e-10)
    assert (np.abs(spreads.oas) < 0.05).all()  # decimals, the unit of the file's spread column
    risk_out = tmp_path / "risk.csv"
    assert run("risk", bonds, "--curve", curve, "--as-of", AS_OF, "--measures", "dv01,duration", "--backend",
               "reference", "--out", risk_out) == 0
    table = pd.read_csv(risk_out, keep_default_na=False)
    assert sorted(set(table.id)) == ["B1", "C1", "P1"] and set(table.measure) == {"dv01", "duration"}
    assert (table.value[table.measure == "duration"] > 1).all()


def test_a_bad_row_names_its_line_and_field_and_mask_prices_the_others(files, tmp_path, capsys):
    trades, curve = files
    text = trades.read_text().replace("ACT/ACT-ICMA", "ACT/999")
    trades.write_text(text)
    assert run("price", trades, "--curve", curve, "--as-of", AS_OF, "--backend", "reference") == 2
    err = capsys.readouterr().err
    assert "row 1:" in err and "trades.csv line 3" in err and "day_count" in err
    out = tmp_path / "p.csv"
    assert run("price", trades, "--curve", curve, "--as-of", AS_OF, "--backend", "reference", "--errors", "mask",
               "--out", out) == 0
    table = pd.read_csv(out)
    assert table.id.tolist() == ["C1", "P1", "Z1", "B1"]
    assert np.isnan(table.price[1]) and "day_count" in table.error.fillna("")[1]
    assert np.isfinite(table.price[[0, 2, 3]]).all()


@pytest.mark.parametrize(("argv", "message"), [
    (("--curve", "CURVE"), "give --as-of"),
    (("--as-of", AS_OF), "give --curve"),
    (("--curve", "CURVE", "--as-of", AS_OF, "--out", "OUT.out"), "write .csv or .parquet"),
    (("--curve", "CURVE", "--as-of", "2026-13-01"), "as-of"),
])
def test_arguments_of_a_trades_file_are_checked(files, tmp_path, capsys, argv, message):
    trades, curve = files
    args = [str(a).replace("CURVE", str(curve)).replace("OUT", str(tmp_path / "p")) for a in argv]
    assert run("price", trades, *args) == 2
    assert message in capsys.readouterr().err


def test_trade_options_on_a_tree_step_book_are_errors(tmp_path, capsys):
    book = tmp_path / "book.csv"
    book.write_text(",".join(trinom.FIELDS) + "\n63,9,3,365,12,0.1,0.01,put\n")
    assert run("price", book, "--as-of", AS_OF) == 2
    assert "--as-of applies to trades files" in capsys.readouterr().err


def test_unknown_columns_and_repeated_ids_are_refused(files, capsys):
    trades, curve = files
    lines = trades.read_text().splitlines()
    trades.write_text(lines[0] + ",colour\n" + "\n".join(line + ",red" for line in lines[1:]) + "\n")
    assert run("price", trades, "--curve", curve, "--as-of", AS_OF) == 2
    assert "unknown column 'colour'" in capsys.readouterr().err
    trades.write_text("\n".join([lines[0], lines[1], lines[1]]) + "\n")
    assert run("price", trades, "--curve", curve, "--as-of", AS_OF) == 2
    assert "id 'C1' is repeated" in capsys.readouterr().err


def test_a_single_value_is_every_trade_s():
    """As the issue's Python API asks: columns of one value (a type, a day count) broadcast over the book."""
    trades = Trades(as_of=AS_OF, id=["A", "B"], type="bond", issue="2024-03-15", maturity=["2030-03-15", "2032-03-15"],
                    coupon=0.05, frequency=2, a=0.03, sigma=0.01)
    assert len(trades) == 2 and trades.ids == ["A", "B"]
    result = trinom.price(trades, {"EUR": read_dated_curves_text()}, backend="reference")
    assert np.isfinite(result.price).all() and result.price[0] != result.price[1]


def read_dated_curves_text() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=["2027-11-25", "2036-11-25"], zero_rates=[0.03, 0.04])
