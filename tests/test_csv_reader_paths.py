"""The CSV reader's two paths (issue 34: reading a large ``trades.csv`` is part of its end-to-end time): a file of
:data:`~trinom.io.csvtable.FAST_READ_BYTES` or more is first read by pyarrow's reader where it is *regular* (no
quote character, a row a line, none blank); any other file, or any file pyarrow cannot read, by the csv module's.
Both give the same columns and line numbers, and the same errors: each file below is read with the fast path forced
(``FAST_READ_BYTES = 0``) and with it off."""

from __future__ import annotations

from pathlib import Path

import pytest
from trinom.errors import InputError
from trinom.io import csvtable

HEADER = "id,type,coupon,maturity"
CASES = {
    "regular": f"{HEADER}\nB1,bond,0.05,2030-01-01\nB2,bond,0.04,2031-01-01\n",
    "no final newline": f"{HEADER}\nB1,bond,0.05,2030-01-01\nB2,bond,0.04,2031-01-01",
    "padded cells and header": " id , type,coupon ,maturity\n B1 ,bond, 0.05 ,2030-01-01\n",
    "tabs and a non-breaking space": f"{HEADER}\n\tB1,bond\u00a0,0.05,2030-01-01 \nB2,bond,0.04,2031-01-01\n",
    "byte-order mark and CRLF": f"\ufeff{HEADER}\r\nB1,bond,0.05,2030-01-01\r\nB2,bond,,2031-01-01\r\n",
    "empty cells": f"{HEADER}\nB1,bond,,\n,,0.04,\n",
    "a blank line of commas": f"{HEADER}\nB1,bond,0.05,2030-01-01\n,,,\nB2,bond,0.04,2031-01-01\n",
    "an empty line": f"{HEADER}\nB1,bond,0.05,2030-01-01\n\nB2,bond,0.04,2031-01-01\n",
    "a quoted cell across lines": f'{HEADER}\nB1,bond,0.05,"2030-01-01\n"\nB2,bond,0.04,2031-01-01\n',
    "a short row": f"{HEADER}\nB1,bond,0.05\nB2,bond,0.04,2031-01-01\n",
    "a long row": f"{HEADER}\nB1,bond,0.05,2030-01-01,x\n",
    "an unknown column": "id,type,colour\nB1,bond,red\n",
    "a column twice": "id,type,type\nB1,bond,bond\n",
    "no rows": f"{HEADER}\n",
    "a lone carriage return": f"{HEADER}\nB1,bond,0.05,2030-01-01\rB2,bond,0.04,2031-01-01\n",
}


def read(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(csvtable, "FAST_READ_BYTES", 0 if fast else 1 << 62)
    try:
        return csvtable.read_table_lines(path, ["id", "type"], ["coupon", "maturity"])
    except InputError as err:
        return ("error", err.errors)


@pytest.mark.parametrize("name", sorted(CASES))
def test_both_paths_read_a_file_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str):
    path = tmp_path / "trades.csv"
    path.write_bytes(CASES[name].encode("utf-8"))
    assert read(path, True, monkeypatch) == read(path, False, monkeypatch)


def test_both_paths_refuse_bytes_that_are_not_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "trades.csv"
    path.write_bytes(f"{HEADER}\nB1,bond,0.05,2030-01-01\n".encode() + b"B2,b\xe9nd,0.04,2031-01-01\n")
    fast, slow = read(path, True, monkeypatch), read(path, False, monkeypatch)
    assert fast == slow and fast[0] == "error" and "not a UTF-8 text file" in fast[1][0][2]


def test_a_large_regular_file_takes_the_fast_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rows = [f"B{k},bond,{k / 1e5:.5f},2030-01-{1 + k % 28:02d}" for k in range(40000)]
    path = tmp_path / "trades.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    assert path.stat().st_size >= csvtable.FAST_READ_BYTES
    monkeypatch.setattr(csvtable, "read_rows", None)  # the csv module's path is not taken
    table, lines = csvtable.read_table_lines(path, ["id", "type"], ["coupon", "maturity"])
    assert table["id"][-1] == "B39999" and table["coupon"][1] == "0.00001" and lines[:2] == [2, 3]
    assert lines[-1] == 40001 and len(table["maturity"]) == 40000
