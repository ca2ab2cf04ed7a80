"""Pricing with a model file (issue 35, item 4, and the model-file cases of item 3): ``trinom calibrate trades.csv ...
--out model.csv`` then ``trinom price trades.csv --model model.csv`` prices the whole book; a trade with nothing to fit
(a straight bond, a bond option) prices with its own ``a`` and ``sigma`` or its curve's row; only a trade left with no
parameters is an error, of its row alone (``--errors mask`` masks it); an unknown status is refused, rows for trades
the book does not hold are said, and a model file lacking a trade's curve says so (not "a is missing")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_calibrate_cli import AS_OF, BOOK, CURVES, EXPIRIES, TENORS
from trinom.instruments import TRADE_COLUMNS as TRADE_FILE_COLUMNS


def run(capsys, *argv: object) -> tuple[int, str]:
    from trinom.cli import main

    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    curve, vols = tmp_path / "curve.csv", tmp_path / "vols.csv"
    curve.write_text(CURVES)
    rows = [f"{c},{e},{t},{0.0092 - 0.0001 * i - 0.00005 * j:.5f},normal"
            for c in ("EUR", "USD") for i, e in enumerate(EXPIRIES) for j, t in enumerate(TENORS)]
    vols.write_text("curve,expiry,tenor,vol,kind\n" + "\n".join(rows) + "\n")
    header = ",".join(TRADE_FILE_COLUMNS[:22])
    own = [row.replace(",,,,,,USD,", ",,,0.03,0.01,,USD,") if row.startswith("B1,") else row for row in BOOK]
    (tmp_path / "own.csv").write_text(header + "\n" + "\n".join(own) + "\n")  # the straight bond carries a, sigma
    (tmp_path / "bare.csv").write_text(header + "\n" + "\n".join(BOOK) + "\n")  # it does not
    return {"curve": curve, "vols": vols, "own": tmp_path / "own.csv", "bare": tmp_path / "bare.csv", "dir": tmp_path}


def calibrated(capsys, files: dict[str, Path], book: str) -> Path:
    model = files["dir"] / f"model-{book}.csv"
    code, err = run(capsys, "calibrate", files[book], "--curve", files["curve"], "--vols", files["vols"], "--as-of",
                    AS_OF, "--out", model)
    assert code == 0, err
    return model


def price(capsys, files: dict[str, Path], book: str, model: Path, *extra: object) -> tuple[int, str, pd.DataFrame]:
    out = files["dir"] / f"prices-{book}.csv"
    out.unlink(missing_ok=True)
    code, err = run(capsys, "price", files[book], "--curve", files["curve"], "--as-of", AS_OF, "--model", model,
                    "--out", out, "--backend", "reference", *extra)
    return code, err, pd.read_csv(out, keep_default_na=False) if out.exists() else pd.DataFrame()


def test_calibrate_then_price_round_trips(capsys, files):
    """Every trade prices: the fitted ones with their fits, the bond option and the straight bond (``no fit``) with
    their own cells, as they price without the model file."""
    model = calibrated(capsys, files, "own")
    statuses = dict(pd.read_csv(model, keep_default_na=False)[["id", "status"]].itertuples(index=False))
    assert statuses["B1"] == "no fit" and statuses["Z1"] == "no fit" and statuses["C1"] != "no fit"
    code, err, table = price(capsys, files, "own", model)
    assert code == 0, err
    assert table.error.tolist() == [""] * len(BOOK)
    out = files["dir"] / "plain.csv"
    assert run(capsys, "price", files["own"], "--curve", files["curve"], "--as-of", AS_OF, "--out", out,
               "--backend", "reference", "--errors", "mask")[0] == 0
    plain = pd.read_csv(out, keep_default_na=False)
    for trade in ("Z1", "B1"):  # their own parameters, as without the model file
        k = BOOK.index(next(r for r in BOOK if r.startswith(trade + ",")))
        assert float(table.price[k]) == pytest.approx(float(plain.price[k]), rel=1e-13, abs=1e-15)


def test_a_trade_left_without_parameters_is_its_own_rows_error(capsys, files):
    model = calibrated(capsys, files, "bare")
    code, err, _ = price(capsys, files, "bare", model)
    assert code == 2
    assert f"{model} has no fit for trade 'B1' (a bond without" in err and "no a and sigma of its own" in err
    assert "'C1'" not in err and "'Z1'" not in err  # the bond option carries its own a and sigma
    _code, _err, table = price(capsys, files, "bare", model, "--errors", "mask")
    errors = dict(zip(table.id, table.error, strict=True))
    assert errors.pop("B1").find("has no fit for trade 'B1'") >= 0
    assert set(errors.values()) == {""}
    assert np.isfinite(pd.to_numeric(table.price[table.id != "B1"])).all()


def test_a_model_file_lacking_the_trades_curve_says_so(capsys, files):
    model = files["dir"] / "usd.csv"
    model.write_text("curve,a,sigma,status\nUSD,0.03,0.01,converged\n")
    _code, _err, table = price(capsys, files, "bare", model, "--errors", "mask")
    errors = dict(zip(table.id, table.error, strict=True))
    assert "has no row for trade 'P1' nor for its curve 'EUR'" in errors["P1"]
    assert "a is missing" not in errors["P1"]
    assert errors["C1"] == "" and errors["B1"] == ""  # USD trades take the USD row


def test_model_rows_for_other_trades_are_said(capsys, files):
    model = files["dir"] / "others.csv"
    model.write_text("id,curve,a,sigma,status\nC1,USD,0.03,0.01,converged\nX9,USD,0.03,0.01,converged\n"
                     ",EUR,0.02,0.01,converged\n,USD,0.02,0.01,converged\n")
    code, err, _ = price(capsys, files, "own", model)
    assert code == 0, err
    assert "warning" in err and "'X9'" in err and "1 trades the book does not hold" in err


def test_an_unknown_status_is_refused(capsys, files):
    model = files["dir"] / "status.csv"
    model.write_text("curve,a,sigma,status\nEUR,0.03,0.01,converged\nUSD,0.03,0.01,fitted\n")
    code, err, _ = price(capsys, files, "own", model)
    assert code == 2 and f"{model} line 3: status 'fitted' is not one of converged, bound, no fit" in err


def test_a_fit_no_tree_can_take_names_the_model_file(capsys, files):
    """A per-curve fit at the calibration's lower bound (a = 1e-8) blamed the trades file and suggested raising
    max_width to 2e9 (issue 35's audit): it names the model file and what to do."""
    model = files["dir"] / "bound.csv"
    model.write_text("curve,a,sigma,status\nEUR,1e-08,0.01,bound\nUSD,0.05,1.5,bound\nGBP,0.05,0.01,converged\n")
    code, err, table = price(capsys, files, "bare", model, "--errors", "mask")
    assert code == 0
    errors = dict(zip(table.id, table.error, strict=True))
    assert f"{model} gives trade 'P1' a = 1e-08, sigma = 0.01 (its curve's row)" in errors["P1"]
    assert "Calibrate again with a fixed (--a)" in errors["P1"] and "max_width" not in errors["P1"]
    assert f"{model} gives trade 'C1' a = 0.05, sigma = 1.5" in errors["C1"]
    assert "warning" in err and "curves no trade of the book is on, skipped: 'GBP'" in err


def test_fits_at_a_bound_are_said(capsys, files):
    model = files["dir"] / "bounded.csv"
    model.write_text("curve,a,sigma,status\nEUR,0.05,0.012,bound\nUSD,0.05,0.01,converged\n")
    code, err, _table = price(capsys, files, "bare", model)
    assert code == 0, err
    assert "3 trades price with a fit at a bound of its calibration (status bound): 'P1', 'E1', 'Z1'" in err
