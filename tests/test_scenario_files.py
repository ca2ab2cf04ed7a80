"""Scenario files that are not what they should be (issue 24, fuzz findings): each is an InputError naming the file
(and the line and the column where one cell is at fault), from ``read_scenarios`` and from ``trinom price
--scenarios`` (status 2 and the message, never a traceback); and the CSV reader the other files share keeps naming
the file for the same faults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import trinom
from trinom import io
from trinom.cli import main
from trinom.io.csvtable import read_rows, read_table_lines
from trinom.scenarios import read_scenarios

ROOT = Path(__file__).resolve().parent.parent
THESIS = trinom.YieldCurve.thesis()
PILLAR = int(THESIS.days[2])

#: Each bad scenario file (its bytes) and what the error says of it, besides its name.
BAD: dict[str, tuple[bytes, list[str]]] = {
    "huge cell": (f"scenario,curve,days,shift\n{'u' * 200000},default,,0.0001\n".encode(),
                  ["not a CSV file (line 2: a cell longer than 131072 characters)"]),
    "latin-1": ("scenario,curve,days,shift\nup,default,,0.0001\n\u00e9t\u00e9,default,,0.0001\n".encode("latin-1"),
                ["not a UTF-8 text file (byte 45, line 3: invalid continuation byte)"]),
    "nan shift": (b"scenario,curve,days,shift\nup,default,,0.0001\nup,default,,nan\n",
                  ["line 3: shift must be a finite number, got 'nan'"]),
    "inf shift": (f"scenario,curve,days,shift\nkey,default,{PILLAR},-inf\n".encode(),
                  ["line 2: shift must be a finite number, got '-inf'"]),
    "inf rate": (b"scenario,curve,days,rate\nflat,default,365,0.05\nflat,default,3650,inf\n",
                 ["line 3: rate must be a finite number, got 'inf'"]),
    "empty name": (b"scenario,curve,days,shift\nup,default,,0.0001\n  ,default,,0.0001\n",
                   ["line 3: scenario is empty"]),
    "overflow": (b"scenario,curve,days,shift\nup,default,,1e308\nup,default,,1e308\n",
                 ["line 3: scenario 'up', curve 'default': the shifts up to this line move a rate beyond"]),
    "day twice": (b"scenario,curve,days,rate\nbad,default,365,0.05\nbad,default,3650,0.05\nbad,default,365,0.06\n",
                  ["line 4: scenario 'bad', curve 'default': days 365 given twice (also on line 2)"]),
    "days": (b"scenario,curve,days,rate\nbad,default,-5,0.05\nbad,default,x,0.05\n",
             ["line 2: days must be in 0..2147483647, got '-5'", "line 3: days must be a whole number of days, got 'x'"]),
    "long curve": (f"scenario,curve,days,shift\nup,{'x' * 100000},,0.0001\n".encode(),
                   ["line 2: no curve named 'xxxx", "'... (100000 characters) (curves: default)"]),
    "bad header": (b"scenario,days,curve,shift\nup,,default,0.0001\n", ["the header must be scenario,curve,days,shift"]),
    "empty": (b"", ["empty file (a header scenario,curve,days,shift or scenario,curve,days,rate is needed)"]),
    "no rows": (b"scenario,curve,days,shift\n\n", ["no scenario"]),
}
#: The column each cell's error names as its field.
FIELDS = {"long curve": "curve", "nan shift": "shift", "inf shift": "shift", "inf rate": "rate", "empty name": "scenario",
          "overflow": "shift", "day twice": "days", "days": "days"}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_scenario_file_is_one_error_naming_the_file(tmp_path, case):
    content, words = BAD[case]
    path = tmp_path / "scenarios.csv"
    path.write_bytes(content)
    with pytest.raises(trinom.InputError) as info, np.errstate(all="raise"):
        read_scenarios(path, THESIS)
    errors = info.value.errors
    assert len(errors) == (2 if case == "days" else 1), errors  # one error a fault, not one a curve point
    for _row, field, message in errors:
        assert message.startswith(str(path)) and len(message) < 500, message
        assert field == FIELDS.get(case, "--scenarios")
    assert all(any(w in message for _r, _f, message in errors) for w in words), (errors, words)


def test_a_nan_in_a_parquet_scenario_file_names_its_row_and_column(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "grid.parquet"
    pq.write_table(pa.table({"scenario": ["up", "down", ""], "curve": ["default"] * 3, "days": [None, None, None],
                             "shift": [1e-4, float("nan"), 1e-4]}), path)
    with pytest.raises(trinom.InputError) as info:
        read_scenarios(path, THESIS)
    assert info.value.errors == [(None, "shift", f"{path} row 1: shift must be a finite number, got 'nan'"),
                                 (None, "scenario", f"{path} row 2: scenario is empty (each row names its scenario)")]


def test_a_header_with_a_byte_order_mark_reads_as_without(tmp_path):
    text = f"scenario,curve,days,shift\nup,default,,0.0001\nkey,default,{PILLAR},-0.0002\n"
    (tmp_path / "plain.csv").write_text(text)
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    names, market = read_scenarios(tmp_path / "plain.csv", THESIS)
    names_bom, market_bom = read_scenarios(tmp_path / "bom.csv", THESIS)
    assert names == names_bom == ["up", "key"]
    for a, b in zip(market.scenarios, market_bom.scenarios, strict=True):
        assert np.asarray(a[0].rates).tolist() == np.asarray(b[0].rates).tolist()
    np.testing.assert_allclose(market.scenarios[1][0].rates[2] - THESIS.rates[2], -2e-4, rtol=1e-9)


def test_shifts_and_rates_within_range_still_read(tmp_path):
    path = tmp_path / "curves.csv"
    path.write_text("scenario,curve,days,rate\nflat, default ,3650,0.05\nflat,default,+365,1e308\n")
    names, market = read_scenarios(path, THESIS)
    assert names == ["flat"] and market.curves[0].days.tolist() == [365, 3650]
    assert np.asarray(market.curves[0].rates).tolist() == [1e308, 0.05]


def price_argv(tmp_path: Path, content: bytes) -> list[str]:
    book = tmp_path / "book.csv"
    io.write_portfolio(trinom.Portfolio(strike=[63.0, 95.0], maturity=[2.0, 3.0], expiry=[1.0, 2.0], term_unit=[365] * 2,
                                        term_steps=[12] * 2, a=[0.1] * 2, sigma=[0.01] * 2, option_type=["put", "call"]),
                       book)
    (tmp_path / "scenarios.csv").write_bytes(content)
    return ["price", str(book), "--scenarios", str(tmp_path / "scenarios.csv"), "--backend", "reference",
            "--out", str(tmp_path / "grid.csv")]


@pytest.mark.parametrize("case", sorted(BAD))
def test_price_with_a_bad_scenario_file_exits_2_with_the_message(tmp_path, capsys, case):
    content, words = BAD[case]
    assert main(price_argv(tmp_path, content)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"trinom: error: {tmp_path / 'scenarios.csv'}") and "Traceback" not in err
    assert all(w in err for w in words), err
    assert not (tmp_path / "grid.csv").exists()


@pytest.mark.parametrize("case", ["huge cell", "latin-1", "nan shift"])
def test_the_installed_command_exits_2_naming_the_scenario_file(tmp_path, case):
    content, words = BAD[case]
    done = subprocess.run([sys.executable, "-m", "trinom.cli", *price_argv(tmp_path, content)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert str(tmp_path / "scenarios.csv") in done.stderr and words[0] in done.stderr


def test_a_good_scenario_file_still_prices(tmp_path, capsys):
    argv = price_argv(tmp_path, b"\xef\xbb\xbfscenario,curve,days,shift\nup,default,,0.0001\ndown,default,,-0.0001\n")
    assert main(argv) == 0
    rows = (tmp_path / "grid.csv").read_text().splitlines()
    assert rows[0] == "id,scenario,price,error" and [row.split(",")[1] for row in rows[1:]] == ["up", "up", "down", "down"]


# --- the shared CSV reader: the same faults in any CSV, named by file, line and byte ---------------------------------
def test_the_shared_reader_names_a_huge_cell_and_a_bad_byte_past_the_first_chunk(tmp_path):
    path = tmp_path / "curve.csv"
    path.write_text("days,rate\n" + "".join(f"{day},0.03\n" for day in range(1, 3001)) + f"{'9' * 200000},0.03\n")
    with pytest.raises(trinom.InputError, match=r"curve\.csv: not a CSV file \(line 3002: a cell longer than 131072"):
        io.read_yield_curve(path)
    body = "days,rate\n" + "".join(f"{day},0.03\n" for day in range(1, 3001))
    path.write_bytes(body.encode() + b"3001,0.0\xff\n")
    offset = len(body.encode()) + len("3001,0.0")
    with pytest.raises(trinom.InputError) as info:
        read_table_lines(path, ["days", "rate"])
    assert info.value.errors == [(None, "file", f"{path}: not a UTF-8 text file (byte {offset}, line 3002: "
                                                "invalid start byte)")]
    assert offset > 8192  # beyond a text reader's first chunk, where the decoder's own offset restarts


def test_read_rows_keeps_cells_as_written_and_the_line_each_row_ends_on(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b'\xef\xbb\xbf a ,b\n"x\ny", 2\n\n3,4\n')
    assert read_rows(path) == ([[" a ", "b"], ["x\ny", " 2"], [], ["3", "4"]], [1, 3, 4, 5])
    with pytest.raises(trinom.InputError) as info:
        read_rows(tmp_path / "none.csv", "--scenarios")
    assert info.value.errors == [(None, "--scenarios", f"{tmp_path / 'none.csv'}: no such file")]
