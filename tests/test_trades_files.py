"""Say what the file is (issue 35, item 5): a trades file given with --curve/--as-of that cannot be read as one says
why (missing, a folder, empty, UTF-16, ';'-separated, an upper-case header, a .txt name) instead of calling it a
tree-step book; a quoted header is read; the engines' refusals of a trade's tree name its line and the cause."""

from __future__ import annotations

from pathlib import Path

import pytest
import trinom
from trinom.cli import main
from trinom.instruments import Trades

AS_OF = "2026-11-25"


def fails(capsys, path: Path, tmp_path: Path) -> str:
    curve = tmp_path / "curve.csv"
    curve.write_text("curve,date,zero\nEUR,2036-11-25,0.03\n")
    assert main(["price", str(path), "--curve", str(curve), "--as-of", AS_OF]) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("name,content,message", [
    ("missing.csv", None, "missing.csv: no such file"),
    ("empty.csv", b"", "empty.csv is empty: a trades file starts with its header line"),
    ("utf16.csv", "id,type\nB1,bond\n".encode("utf-16"), "utf16.csv is UTF-16 (or binary): save it as UTF-8"),
    ("semi.csv", b"id;type;issue\nB1;bond;2024-01-01\n", "semi.csv is separated by ';'"),
    ("upper.csv", b"ID,TYPE,ISSUE\nB1,bond,2024-01-01\n", "upper.csv: its header is in upper case (ID, TYPE, ISSUE)"),
    ("trades.txt", b"id,type\nB1,bond\n", "trades.txt has a trades header but a .txt suffix: name it .csv"),
])
def test_a_file_that_is_no_trades_file_says_why(tmp_path: Path, capsys, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    err = fails(capsys, path, tmp_path)
    assert message in err and "tree-step book" not in err


def test_a_folder_says_so(tmp_path: Path, capsys):
    (tmp_path / "book.csv").mkdir()
    assert "book.csv is a folder, not a file" in fails(capsys, tmp_path / "book.csv", tmp_path)


def test_a_quoted_header_is_a_trades_header(tmp_path: Path, capsys):
    path = tmp_path / "quoted.csv"
    path.write_text('"id","type","issue","maturity","coupon","frequency","a","sigma"\n'
                    '"B1","bond","2024-03-15","2034-03-15","0.04","2","0.05","0.01"\n')
    curve = tmp_path / "curve.csv"
    curve.write_text("curve,date,zero\nEUR,2036-11-25,0.03\n")
    assert main(["price", str(path), "--curve", str(curve), "--as-of", AS_OF]) == 0


def test_tree_refusals_name_the_line_and_the_cause(tmp_path: Path, capsys):
    path = tmp_path / "big.csv"
    path.write_text("id,type,issue,maturity,coupon,frequency,a,sigma,steps_per_year\n"
                    "B1,bond,2024-03-15,2054-03-15,0.04,2,0.05,0.01,36500\n"
                    "B2,bond,2024-03-15,2034-03-15,0.04,2,0.0005,0.01,365\n")
    err = fails(capsys, path, tmp_path)
    assert "big.csv line 2: steps_per_year 36500 gives a tree of about 997200 steps to maturity 2054-03-15, more " \
           "than 65535: lower steps_per_year" in err
    assert "first_exercise" not in err
    assert "big.csv line 3: a gives a tree of width 268643" in err and "at steps_per_year 365" in err
    book = Trades(as_of=AS_OF, id=["B1"], type=["bond"], issue=["2024-03-15"], maturity=["2054-03-15"],
                  coupon=[0.04], frequency=[2], a=0.05, sigma=0.01, steps_per_year=[36500])
    result = trinom.price(book, {"EUR": trinom.model.DatedCurve(as_of=AS_OF, dates=["2036-11-25"],
                                                                 zero_rates=[0.03])}, errors="mask")
    assert result.error[0].startswith("steps_per_year 36500 gives a tree of about 997200 steps")
