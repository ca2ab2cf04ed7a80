"""``trinom calibrate`` (trinom.cli.calibrate), through trinom's command line: global and per-trade model files, their
contract columns, the quotes table, errors, and read_model_file."""

from __future__ import annotations

import argparse
import doctest
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import trinom
from trinom.analytics.baskets import bond_baskets, calibrate_baskets
from trinom.cli import calibrate as calibrate_cli
from trinom.cli.calibrate import GLOBAL_COLUMNS, TRADE_COLUMNS, ModelFile, add_calibrate_parser, read_model_file
from trinom.instruments import TRADE_COLUMNS as TRADE_FILE_COLUMNS
from trinom.instruments import read_trades
from trinom.model import read_dated_curves
from trinom.model.calibration import calibrate

AS_OF = "2026-11-25"
CURVES = ("curve,date,zero\nEUR,2027-11-25,0.025\nEUR,2031-11-25,0.028\nEUR,2046-11-25,0.032\nEUR,2066-11-25,0.033\n"
          "USD,2027-11-25,0.040\nUSD,2036-11-25,0.042\nUSD,2066-11-25,0.043\n")
BOOK = [
    "C1,bond,100,2024-03-15,2036-03-15,0.05,2,30/360,USGOVT,F,call,bermudan,2028-03-15,2035-09-15,100,,,,,,USD,",
    "P1,bond,,2025-06-30,2031-06-30,0.04,1,ACT/ACT-ICMA,TARGET,MF,put,american,2027-06-30,2030-06-30,99,,,,,,EUR,",
    "E1,bond,,2024-01-10,2034-01-10,0.035,1,ACT/360,,,call,european,2029-01-10,,100,,,,,,EUR,",
    "Z1,bond_option,,,2034-11-25,,,,,,put,,,,,2029-11-25,63,0.1,0.01,,EUR,",
    "B1,bond,,2020-01-15,2030-01-15,0.03,4,ACT/360,TARGET+NYSE,MF,,,,,,,,,,,USD,",
]
EXPIRIES = ["1Y", "2Y", "5Y", "10Y"]
TENORS = ["1Y", "5Y", "10Y", "20Y"]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    curve, vols, trades = tmp_path / "curve.csv", tmp_path / "vols.csv", tmp_path / "trades.csv"
    curve.write_text(CURVES)
    rows = [f"{c},{e},{t},{0.0092 - 0.0001 * i - 0.00005 * j + 0.0001 * ((i * j + k) % 3):.5f},normal"
            for k, c in enumerate(("EUR", "USD")) for i, e in enumerate(EXPIRIES) for j, t in enumerate(TENORS)]
    vols.write_text("curve,expiry,tenor,vol,kind\n" + "\n".join(rows) + "\n")
    trades.write_text(",".join(TRADE_FILE_COLUMNS[:22]) + "\n" + "\n".join(BOOK) + "\n")
    return {"curve": curve, "vols": vols, "trades": trades, "dir": tmp_path}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="trinom")
    add_calibrate_parser(p.add_subparsers(dest="command", required=True))
    return p


def run(*argv: object) -> int:
    """The command as a user runs it: through trinom's own command line."""
    from trinom.cli import main

    return main([str(a) for a in argv])


def test_the_parser():
    args = parser().parse_args(["calibrate", "t.csv", "--curve", "c.csv", "--vols", "v.csv", "--as-of", AS_OF,
                                "--out", "m.parquet", "--error", "vol", "--strike", "deal", "--quotes-out", "q.csv"])
    assert (args.trades, args.curve, args.vols, args.as_of, args.out) == (
        Path("t.csv"), Path("c.csv"), Path("v.csv"), AS_OF, Path("m.parquet"))
    assert (args.a, args.error, args.strike, args.quotes_out) == (None, "vol", "deal", Path("q.csv"))
    assert args.func is calibrate_cli.cmd_calibrate
    for bad in (["--a", "-0.1"], ["--a", "x"], ["--error", "vega"], ["--strike", "otm"]):
        with pytest.raises(SystemExit):
            parser().parse_args(["calibrate", "--curve", "c", "--vols", "v", "--as-of", AS_OF, "--out", "m.csv", *bad])
    with pytest.raises(SystemExit):  # --vols is required
        parser().parse_args(["calibrate", "--curve", "c", "--as-of", AS_OF, "--out", "m.csv"])


def test_global_calibration_writes_one_row_per_curve(files, capsys):
    out, quotes_out = files["dir"] / "model.csv", files["dir"] / "quotes.csv"
    assert run("calibrate", "--curve", files["curve"], "--vols", files["vols"], "--as-of", AS_OF, "--out", out,
               "--quotes-out", quotes_out) == 0
    table = pd.read_csv(out, keep_default_na=False, float_precision="round_trip")
    assert tuple(table.columns[:5]) == GLOBAL_COLUMNS
    assert list(table.columns) == [*GLOBAL_COLUMNS, "message", "iterations", "quotes", "a_fixed"]
    assert table.curve.tolist() == ["EUR", "USD"] and table.status.tolist() == ["converged", "converged"]
    direct = calibrate(curves=read_dated_curves(files["curve"], as_of=AS_OF), quotes=files["vols"], as_of=AS_OF)
    np.testing.assert_array_equal(table.a, direct.a)  # 17 significant digits: the values themselves
    np.testing.assert_array_equal(table.sigma, direct.sigma)
    for k in range(2):
        mine = direct.instruments.curve_index == k
        assert table.rmse[k] == pytest.approx(np.sqrt(np.mean((direct.model_vol - direct.market_vol)[mine] ** 2)),
                                              rel=1e-12)
    quotes = pd.read_csv(quotes_out)
    assert len(quotes) == 32 and {"market_vol", "model_vol", "residual"} <= set(quotes.columns)
    assert "trinom: calibrated 2 curves as of 2026-11-25" in capsys.readouterr().err
    # a fixed
    assert run("calibrate", "--curve", files["curve"], "--vols", files["vols"], "--as-of", AS_OF, "--out", out,
               "--a", "0.03") == 0
    table = pd.read_csv(out, float_precision="round_trip")
    assert table.a.tolist() == [0.03, 0.03] and table.a_fixed.all()


def test_per_trade_calibration_writes_one_row_per_trade(files, capsys):
    out, quotes_out = files["dir"] / "model.parquet", files["dir"] / "quotes.parquet"
    assert run("calibrate", files["trades"], "--curve", files["curve"], "--vols", files["vols"], "--as-of", AS_OF,
               "--out", out, "--a", "0.03", "--strike", "deal", "--quotes-out", quotes_out) == 0
    table = pd.read_parquet(out)
    assert tuple(table.columns[:5]) == TRADE_COLUMNS
    assert list(table.columns) == [*TRADE_COLUMNS, "curve", "rmse", "quotes", "iterations", "a_fixed"]
    assert table.id.tolist() == ["C1", "P1", "E1", "Z1", "B1"]
    assert table.status.tolist() == ["converged", "converged", "converged", "no fit", "no fit"]
    assert table.quotes.tolist() == [15, 4, 1, 0, 0] and table.curve.tolist() == ["USD", "EUR", "EUR", "EUR", "USD"]
    assert table.message[3].startswith("a bond option") and table.message[4].startswith("a bond without a call")
    assert np.isnan(table.a[3:]).all() and (table.a[:3] == 0.03).all()
    curves = read_dated_curves(files["curve"], as_of=AS_OF)
    trades = read_trades(files["trades"], as_of=AS_OF)
    direct = calibrate_baskets(curves=curves, vols=files["vols"], as_of=AS_OF, baskets=bond_baskets(trades), a=0.03,
                               strike="deal")
    np.testing.assert_array_equal(table.sigma, direct.sigma)
    quotes = pd.read_parquet(quotes_out)
    assert len(quotes) == 20 and quotes.id.tolist()[:1] == ["C1"] and (quotes.strike[:15] == 0.05).all()
    assert "trinom: calibrated 5 trades as of 2026-11-25" in capsys.readouterr().err
    # a free, strikes at the money (the default)
    csv = files["dir"] / "model.csv"
    assert run("calibrate", files["trades"], "--curve", files["curve"], "--vols", files["vols"], "--as-of", AS_OF,
               "--out", csv) == 0
    table = pd.read_csv(csv, keep_default_na=False)
    assert table.status.tolist()[:3] != ["no fit"] * 3
    assert "a held at its guess 0.05" in table.message[2]  # E1: one exercise date


def test_model_files_read_back(files):
    model, trade_model = files["dir"] / "model.csv", files["dir"] / "trade_model.parquet"
    run("calibrate", "--curve", files["curve"], "--vols", files["vols"], "--as-of", AS_OF, "--out", model)
    run("calibrate", files["trades"], "--curve", files["curve"], "--vols", files["vols"], "--as-of", AS_OF,
        "--out", trade_model, "--a", "0.03")
    curves = read_model_file(model)
    table = pd.read_csv(model, float_precision="round_trip")
    assert curves.curves == {name: (a, s) for name, a, s in zip(table.curve, table.a, table.sigma, strict=True)}
    assert curves.trades == {} and curves.unfitted == {}
    trades = read_model_file(trade_model)
    table = pd.read_parquet(trade_model)
    assert set(trades.trades) == {"C1", "P1", "E1"} and trades.trades["C1"] == (0.03, float(table.sigma[0]))
    assert set(trades.unfitted) == {"Z1", "B1"} and trades.unfitted["B1"].startswith("a bond without")
    # a trade's own row first, else its curve's
    both = ModelFile(Path("both"), curves=curves.curves, trades=trades.trades)
    a, sigma, source = both.parameters(["C1", "Z1", "X9"], ["USD", "EUR", "GBP"])
    assert a[0] == 0.03 and a[1] == curves.curves["EUR"][0] and np.isnan(a[2])
    assert source.tolist() == ["trade", "curve", ""] and sigma[1] == curves.curves["EUR"][1]


def test_model_file_errors_name_the_file_line_and_column(tmp_path: Path):
    path = tmp_path / "model.csv"
    path.write_text("id,curve,a,sigma,status,message\n"
                    "T1,EUR,0.03,0.01,converged,\n"
                    "T2,EUR,-0.1,abc,converged,\n"
                    "T1,EUR,0.03,0.01,converged,\n"
                    ",,0.03,0.01,converged,\n"
                    "T3,EUR,,,no fit,no quotes\n"
                    "T4,EUR,,0.01,bound,\n"
                    ",USD,0.02,inf,converged,\n")
    with pytest.raises(trinom.InputError) as caught:
        read_model_file(path)
    assert [(r, f) for r, f, _m in caught.value.errors] == [(1, "a"), (1, "sigma"), (2, "id"), (3, "id"), (5, "a"),
                                                           (6, "sigma")]
    messages = [m for _r, _f, m in caught.value.errors]
    assert messages[0] == f"{path} line 3: a must be a finite number > 0, got -0.1"
    assert messages[1] == f"{path} line 3: sigma 'abc' is not a number"
    assert messages[2] == f"{path} line 4: id 'T1' is already at {path} line 2"
    assert messages[3] == f"{path} line 5: the row has neither an id nor a curve"
    assert messages[4] == f"{path} line 7: a is missing (the row's status is bound)"
    path.write_text("curve,a\nEUR,0.03\n")
    with pytest.raises(trinom.InputError, match="the header lacks column 'sigma'"):
        read_model_file(path)
    path.write_text("name,a,sigma\nEUR,0.03,0.01\n")
    with pytest.raises(trinom.InputError, match="neither an id nor a curve column"):
        read_model_file(path)
    with pytest.raises(trinom.InputError, match="no such file"):
        read_model_file(tmp_path / "none.csv")


def test_command_errors(files, capsys):
    base = ["calibrate", "--curve", files["curve"], "--vols", files["vols"], "--as-of", AS_OF]
    out = files["dir"] / "m.csv"
    assert fails(capsys, "--strike applies to per-trade calibration", *base, "--out", out, "--strike", "deal")
    assert fails(capsys, r"the model table is written as \.csv, \.parquet or \.pq", *base, "--out",
                 files["dir"] / "m.txt")
    assert fails(capsys, "is the same file as", *base, "--out", out, "--quotes-out", out)
    assert fails(capsys, None, *base, "--out", files["vols"])  # never over an input
    assert files["vols"].read_text().startswith("curve,expiry")
    bad = files["dir"] / "bad_vols.csv"
    bad.write_text("curve,expiry,tenor,vol,kind\nEUR,1Y,5Y,0.009,normal\nEUR,1Y,10Y,0.2,lognormal\n")
    assert fails(capsys, r"bad_vols\.csv line 3: curve 'EUR' mixes volatility kinds", "calibrate", files["trades"],
                 "--curve", files["curve"], "--vols", bad, "--as-of", AS_OF, "--out", out)
    assert not (files["dir"] / "m.csv").exists()  # nothing written on an error


def fails(capsys, pattern: str | None, *argv: object) -> bool:
    """The command exits 2 with its message (matching ``pattern``) on stderr."""
    import re

    code = run(*argv)
    message = capsys.readouterr().err
    return code == 2 and message.startswith("trinom: error:") and (pattern is None or re.search(pattern, message))


def test_doctests():
    assert doctest.testmod(calibrate_cli).failed == 0
