"""Bad input gets a clear InputError naming the row (or line) and the field: nothing silently wrong or ignored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trinom
from trinom.bonds.generator import generate_bonds
from trinom.generator import generate
from trinom.io import option_books as io
from trinom.io.bond_books import read_bonds, write_bonds
from trinom.io.csvtable import read_table

HEADER = ",".join(trinom.FIELDS)
ROW = "63,9,3,365,12,0.1,0.01,put"


# --- curves: days beyond int32 used to price 0 on the reference and 6.05 on Futhark ----------------------
@pytest.mark.parametrize("rates,days,message", [
    ([0.01], [3e9], "yield curve point 0: days must be in 0..2147483647, got 3000000000"),
    ([0.01, 0.02], [1, -5], "yield curve point 1: days must be in 0..2147483647, got -5"),
    (["a"], [1], "yield curve point 0: rate must be a number, got 'a'"),
    ([0.01], ["x"], "yield curve point 0: days must be a number, got 'x'"),
    ("abc", [1], "yield curve rates must be a sequence of numbers, got 'abc'"),
])
def test_curve_values_are_checked(rates, days, message):
    with pytest.raises(trinom.InputError) as caught:
        trinom.YieldCurve(rates, days)
    assert message in str(caught.value)


# --- unbounded work: every row's tree is bounded before any pricing ------------------------------------
def test_tall_trees_are_refused_up_front_naming_the_row():
    fields = {f: [v] * 4 for f, v in zip(trinom.FIELDS, [63.0, 9.0, 3.0, 365, 12, 0.1, 0.01, 1], strict=True)}
    fields["maturity"] = [9.0, 9.0, 2e6, 1e30]
    portfolio = trinom.Portfolio(**fields)
    with pytest.raises(trinom.InputError) as caught:
        trinom.price(portfolio, backend="reference")
    assert caught.value.rows == [2, 3]
    text = str(caught.value)
    assert "row 2: maturity gives a tree of 24000000 steps, over the limit max_steps=65535" in text
    assert "row 3: maturity gives a tree of more than 2**62 steps" in text and "no time steps" not in text
    result = trinom.price(portfolio, backend="reference", errors="mask")
    assert np.isfinite(result.price[:2]).all() and np.isnan(result.price[2:]).all()
    assert portfolio.validate(max_steps=30_000_000)[0][0] == 3  # the limit can be raised


def test_bond_trees_have_the_same_limit():
    bonds, curves = generate_bonds("U1", 3, seed=1)
    assert bonds.validate(curves, max_steps=10)[0][2].startswith("maturity gives a tree of")


# --- CSV: duplicated columns, extra values, short rows, BOM and spaces, binary files --------------------
@pytest.mark.parametrize("text,message", [
    (f"{HEADER},strike\n{ROW},64\n", "column 'strike' appears twice in the header"),
    (f"{HEADER}\n{ROW},99\n", "line 2: 9 values, but the header names 8 columns"),
    (f"{HEADER}\n63,9,3\n", "line 2: 3 values, but the header names 8 columns"),
    (f"{HEADER},volume\n{ROW},7\n", "unknown column 'volume'"),
    ("", "empty file"),
])
def test_option_csv_problems(tmp_path: Path, text: str, message: str):
    path = tmp_path / "book.csv"
    path.write_text(text)
    with pytest.raises(trinom.InputError) as caught:
        io.read_portfolio(path)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_header_with_spaces_and_a_byte_order_mark_reads(tmp_path: Path):
    path = tmp_path / "book.csv"
    path.write_text("\ufeff" + ", ".join(trinom.FIELDS) + "\n" + ROW + "\n", encoding="utf-8")
    assert io.read_portfolio(path).strike.tolist() == [63.0]


def test_binary_file_names_the_file(tmp_path: Path):
    path = tmp_path / "book.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(trinom.InputError, match="not a UTF-8 text file"):
        io.read_portfolio(path)


def test_yield_csv_short_row(tmp_path: Path):
    path = tmp_path / "curve.csv"
    path.write_text("days,rate\n365,0.05\n730\n")
    with pytest.raises(trinom.InputError, match="line 3: 1 values, but the header names 2 columns"):
        io.read_yield_curve(path)
    assert read_table(_write(tmp_path / "ok.csv", "days,rate\n1,2\n"), ["days", "rate"]) == {"days": ["1"], "rate": ["2"]}


def test_bond_csv_duplicate_column(tmp_path: Path):
    bonds, curves = generate_bonds("U1", 2, seed=1)
    path = tmp_path / "bonds.csv"
    write_bonds(bonds, curves, path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ",strike", *(line + ",1" for line in lines[1:])]) + "\n")
    with pytest.raises(trinom.InputError, match="column 'strike' appears twice"):
        read_bonds(path)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_curve_name_that_looks_like_a_number_is_a_name(tmp_path: Path):
    """Curves named `1` (listed first) and `EUR`: a bond on curve `1` used to be priced on EUR."""
    bonds, curves = generate_bonds("U1", 2, seed=1)
    path = tmp_path / "bonds.csv"
    write_bonds(bonds[[0, 1]], curves[:2], path)
    text = path.read_text().splitlines()
    column = text[0].split(",").index("curve_index")
    rows = [line.split(",") for line in text[1:]]
    rows[0][column], rows[1][column] = "1", "EUR"
    path.write_text("\n".join([text[0], *(",".join(r) for r in rows)]) + "\n")
    curve_file = tmp_path / "bonds.curves.csv"
    lines = curve_file.read_text().splitlines()
    renamed = [lines[0]] + [("1" if line.split(",")[0] == "0" else "EUR") + line[line.index(","):] for line in lines[1:]]
    curve_file.write_text("\n".join(renamed) + "\n")
    read, read_curves = read_bonds(path)
    assert read.curve_index.tolist() == [0, 1]  # "1" is the first curve, EUR the second
    assert np.array_equal(read_curves[0].rates, curves[0].rates)
    rows[1][column] = "GBP"
    path.write_text("\n".join([text[0], *(",".join(r) for r in rows)]) + "\n")
    with pytest.raises(trinom.InputError, match=r"row 1: bonds\.csv line 3: curve_index 'GBP' names no curve"):
        read_bonds(path)


# --- what a user naturally passes: tables and mappings, or a clear word on what is expected ---------------
def test_tables_and_mappings_are_accepted():
    import pandas as pd

    portfolio = trinom.generator.generate("uniform", 3)
    curve = pd.DataFrame({"days": [365, 730], "rate": [0.05, 0.06]})
    expected = trinom.price(portfolio, trinom.YieldCurve([0.05, 0.06], [365, 730]), backend="reference").price
    assert np.array_equal(trinom.price(portfolio.to_dataframe(), curve, backend="reference").price, expected)
    assert np.array_equal(trinom.price(portfolio.as_dict(), {"EUR": curve}, backend="reference").price, expected)
    bonds, curves = generate_bonds("U1", 2, seed=1)
    assert np.array_equal(trinom.price(bonds.as_dict(), curves, backend="reference").price,
                          trinom.price(bonds, curves, backend="reference").price)


@pytest.mark.parametrize("instruments,curves,message", [
    ([1, 2], None, "instruments[0] must be a trinom.Portfolio, a trinom.BondPortfolio, or a table of one; got int"),
    ("book.csv", None, "instruments must be a trinom.Portfolio, a trinom.BondPortfolio, a table of one"),
    ({"strike": [1.0]}, None, "missing field 'maturity'"),
    (None, [0.05, 0.06], "curve '0' must be a YieldCurve (or a table with columns days and rate), got float"),
    (None, 0.05, "curves must be a YieldCurve, a sequence or mapping of them, or a Market; got float"),
])
def test_wrong_types_are_named(instruments, curves, message):
    instruments = trinom.generator.generate("uniform", 2) if instruments is None else instruments
    with pytest.raises(trinom.InputError) as caught:
        trinom.price(instruments, curves, backend="reference")
    assert message in str(caught.value)


# --- files: checked before pricing, never over an input, whole or not at all -----------------------------
def test_out_must_not_overwrite_the_input_and_is_checked_before_pricing(tmp_path: Path, capsys):
    from trinom.cli import main

    book = tmp_path / "book.csv"
    io.write_portfolio(trinom.generator.generate("uniform", 3), book)
    before = book.read_text()
    assert main(["price", str(book), "--out", str(book)]) == 2
    assert "is an input of this command: refusing to overwrite it" in capsys.readouterr().err
    assert book.read_text() == before
    assert main(["price", str(book), "--out", str(tmp_path / "missing" / "p.out")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bonds = tmp_path / "bonds.csv"
    assert main(["generate", "--instrument", "bonds", "U1", "--size", "2", "--out", str(bonds)]) == 0
    assert main(["price", str(bonds), "--out", str(tmp_path / "bonds.curves.csv")]) == 2  # a companion is an input too
    assert main(["generate", "uniform", "--size", "2", "--out", str(tmp_path / "g.in"), "--prices",
                 str(tmp_path / "g.in")]) == 2


def test_writes_are_whole_or_nothing(tmp_path: Path, monkeypatch):
    path = tmp_path / "prices.out"
    io.write_prices(path, np.array([1.0, 2.0]))
    original = path.read_text()

    class Broken(Exception):
        pass

    def fail(*_args, **_kwargs):
        raise Broken

    monkeypatch.setattr(io, "format_array", fail)
    with pytest.raises(Broken):
        io.write_prices(path, np.array([3.0]))
    assert path.read_text() == original  # the old file untouched
    assert [p.name for p in tmp_path.iterdir()] == ["prices.out"]  # no partial file left beside it


def test_empty_price_files_are_futhark_syntax(tmp_path: Path):
    path = tmp_path / "none.out"
    io.write_prices(path, np.zeros(0))
    assert path.read_text().strip() == "empty([0]f64)"
    assert io.read_prices(path).size == 0


# --- array files: nothing skipped, trinom's own output read back, the count explained ------------------
def test_text_between_arrays_is_an_error_and_infinities_read(tmp_path: Path):
    path = tmp_path / "a.in"
    path.write_text("[1.0, 2.0]\nstrike prices follow\n[3.0]\n")
    with pytest.raises(trinom.InputError, match=r"a\.in line 2: text outside the arrays: 'strike prices follow'"):
        io.read_arrays(path)
    path = tmp_path / "a.out"  # a price file: its suffix picks the format
    io.write_prices(path, np.array([1.5, np.inf, -np.inf, np.nan]))
    back = io.read_prices(path)
    assert back[0] == 1.5 and back[1] == np.inf and back[2] == -np.inf and np.isnan(back[3])


def test_array_counts_say_what_each_file_holds(tmp_path: Path):
    path = tmp_path / "eighteen.in"
    path.write_text("[1.0]\n" * 18)
    with pytest.raises(trinom.InputError, match=r"18 arrays: an option file holds 8 .* a bond file 19"):
        io.read_portfolio(path)
    binary = tmp_path / "blob.in"
    binary.write_bytes(b"\x00\xff\xfe[1.0]")
    with pytest.raises(trinom.InputError, match=r"blob\.in: not a UTF-8 text file"):
        io.read_portfolio(binary)


# --- the command line: help, exit codes, a closed pipe ------------------------------------------------------
def test_help_lists_defaults_exit_codes_and_examples(capsys):
    from trinom.cli import main

    with pytest.raises(SystemExit):
        main(["price", "--help"])
    text = capsys.readouterr().out
    for expected in ("(default f64)", "(default 65535)", "(default raise)", "exit status:", "141"):
        assert expected in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "examples:" in capsys.readouterr().out


def test_a_closed_pipe_is_no_traceback(tmp_path: Path):
    import subprocess
    import sys

    book = tmp_path / "book.csv"
    io.write_portfolio(trinom.generator.generate("uniform", 20000), book)
    command = [sys.executable, "-m", "trinom.cli", "price", str(book), "--backend", "futhark", "--target", "c"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout.readline()  # one price, then the reader goes away, as `| head -1` does
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait() == 141 and "Traceback" not in error


def test_bond_info_takes_the_limits(tmp_path: Path, capsys):
    from trinom.cli import main

    path = tmp_path / "u1.in"
    assert main(["generate", "--instrument", "bonds", "U1", "--size", "2", "--out", str(path)]) == 0
    assert main(["info", str(path), "--max-steps", "10"]) == 0
    assert "2 problems" in capsys.readouterr().out


def test_mask_covers_cells_that_cannot_be_read(tmp_path: Path):
    from trinom.cli import main

    book = tmp_path / "book.csv"
    book.write_text(f"{HEADER}\n{ROW}\n63,nine,3,365,12,0.1,0.01,put\n{ROW}\n")
    with pytest.raises(trinom.InputError, match=r"row 1: .*line 3: maturity must be a number, got 'nine'"):
        io.read_portfolio(book)
    portfolio = io.read_portfolio(book, errors="mask")
    result = trinom.price(portfolio, backend="reference", errors="mask")
    assert np.isnan(result.price[1]) and np.isfinite(result.price[[0, 2]]).all()
    assert result.error[1].endswith("line 3: maturity must be a number, got 'nine'") and result.error[0] == ""
    out = tmp_path / "prices.csv"
    assert main(["price", str(book), "--errors", "mask", "--out", str(out), "--backend", "reference"]) == 0
    assert "maturity must be a number" in out.read_text().splitlines()[2]


def test_a_bad_curve_of_several_is_named(tmp_path: Path):
    bonds, curves = generate_bonds("U1", 2, seed=1)
    path = tmp_path / "bonds.csv"
    write_bonds(bonds, curves[:2], path)
    curve_file = tmp_path / "bonds.curves.csv"
    lines = curve_file.read_text().splitlines()
    lines = [lines[0], *lines[1:], "1,10,0.01"]  # curve 1 gets a day out of order
    curve_file.write_text("\n".join(lines) + "\n")
    with pytest.raises(trinom.InputError, match=r"bonds\.curves\.csv: curve '1': yield curve days must be strictly"):
        read_bonds(path)
    arrays = tmp_path / "bonds.in"
    write_bonds(bonds, curves[:2], arrays)
    text = arrays.read_text().splitlines()
    text[-1] = text[-1].replace("[", "[99999999999, ", 1)  # the first day of curve 0 out of range
    text[-2] = text[-2].replace("[", "[0.01, ", 1)
    counts = text[-3].strip("[]").split(",")
    counts[0] = str(int(counts[0]) + 1)
    text[-3] = "[" + ", ".join(c.strip() for c in counts) + "]"
    arrays.write_text("\n".join(text) + "\n")
    with pytest.raises(trinom.InputError, match="curve 0: yield curve point 0: days must be in"):
        read_bonds(arrays)


def test_the_progress_bar_counts_work_for_options_and_bonds(capsys, monkeypatch):
    from trinom.cli import ProgressBar
    from trinom.engines import running

    monkeypatch.setattr(running, "PROGRESS_MIN_SECONDS", 0)  # slice even a small job
    bonds, curves = generate_bonds("U1", 6, seed=1)
    bar = ProgressBar("pricing 6 bonds", delay=0, enabled=True)
    trinom.price(bonds, curves, backend="futhark", target="c", progress=bar)
    text = capsys.readouterr().err
    assert "pricing 6 bonds [" in text and "G node updates" in text and text.endswith("\n")


def test_mask_covers_unreadable_items_of_option_arrays(tmp_path: Path):
    path = tmp_path / "book.in"
    io.write_portfolio(generate("0_UNIFORM", 3, seed=2), path)
    lines = path.read_text().splitlines()
    lines[1] = "[oops, " + lines[1].split(",", 1)[1]  # the maturity of option 0
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(trinom.InputError, match=r"array 2, item 1 is no number: 'oops'"):
        io.read_portfolio(path)
    result = trinom.price(io.read_portfolio(path, errors="mask"), backend="reference", errors="mask")
    assert np.isnan(result.price[0]) and np.isfinite(result.price[1:]).all()
    assert "array 2, item 1 is no number" in result.error[0] and (result.error[1:] == "").all()


def test_mask_covers_bond_cells_and_cash_flows(tmp_path: Path):
    """A bad bond cell or cash-flow cell masks that bond only, and the messages name the bond's id."""
    from trinom.cli import main

    bonds, curves = generate_bonds("U1", 3, seed=1)
    path = tmp_path / "bonds.csv"
    write_bonds(bonds, curves, path)
    table = path.read_text().splitlines()
    header = table[0].split(",")
    table = [table[0], *[",".join([f"B{k}", *row.split(",")[1:]]) for k, row in enumerate(table[1:])]]
    cells = table[1].split(",")
    cells[header.index("strike")] = "cheap"
    table[1] = ",".join(cells)
    path.write_text("\n".join(table) + "\n")
    flows_path = tmp_path / "bonds.cashflows.csv"
    flows = flows_path.read_text().splitlines()
    flows = [flows[0], *[",".join([f"B{row.split(',')[0]}", *row.split(",")[1:]]) for row in flows[1:]]]
    last_of_2 = max(k for k, row in enumerate(flows) if row.startswith("B2,"))
    cells = flows[last_of_2].split(",")
    cells[3] = "lots"
    flows[last_of_2] = ",".join(cells)
    flows_path.write_text("\n".join(flows) + "\n")
    with pytest.raises(trinom.InputError, match=r"row 0: bonds\.csv line 2: strike must be a number, got 'cheap'"):
        read_bonds(path)
    masked, masked_curves = read_bonds(path, errors="mask")
    problems = masked.validate(masked_curves)
    assert [(row, field) for row, field, _m in problems] == [(0, "strike"), (2, "coupon")]
    assert f"line {last_of_2 + 1}: coupon of a cash flow of bond 'B2' must be a number, got 'lots'" in problems[1][2]
    out = tmp_path / "prices.csv"
    assert main(["price", str(path), "--errors", "mask", "--backend", "reference", "--out", str(out)]) == 0
    rows = out.read_text().splitlines()
    assert [row.split(",")[0] for row in rows] == ["id", "B0", "B1", "B2"]  # the input's ids, not positions
    expected = trinom.price(bonds[[1]], curves, backend="reference").price[0]
    assert float(rows[2].split(",")[1]) == expected and rows[1].split(",")[1] == "" and "'lots'" in rows[3]


def test_mask_covers_bond_array_items(tmp_path: Path):
    bonds, curves = generate_bonds("U1", 3, seed=1)
    path = tmp_path / "bonds.in"
    write_bonds(bonds, curves, path)
    lines = path.read_text().splitlines()
    lines[7] = "[what, " + lines[7].split(",", 1)[1]  # repayment of the first cash flow (bond 0's)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(trinom.InputError, match=r"array 8, item 1 is no number: 'what'"):
        read_bonds(path)
    masked, masked_curves = read_bonds(path, errors="mask")
    assert [(row, field) for row, field, _m in masked.validate(masked_curves)] == [(0, "repayment")]
    result = trinom.price(masked, masked_curves, backend="reference", errors="mask")
    assert np.isnan(result.price[0]) and np.array_equal(result.price[1:],
                                                       trinom.price(bonds[1:], curves, backend="reference").price)
    lines[16] = "[x" + lines[16][1:]  # the curves' point counts: no one bond's
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(trinom.InputError, match=r"array 17, item 1 is no number"):
        read_bonds(path, errors="mask")


def test_a_bond_file_s_curve_point_count_of_1e999_names_the_field(tmp_path):
    """The 19-array file's curve point counts as inf (1e999): an error naming curve_terms, not an OverflowError."""
    from trinom.bonds.generator import generate_bonds
    from trinom.io.bond_books import read_bonds, write_bonds

    bonds, curves = generate_bonds("S1", 2, seed=1)
    path = tmp_path / "bonds.in"
    write_bonds(bonds, curves, path)
    lines = path.read_text().splitlines()
    arrays = [k for k, line in enumerate(lines) if line.startswith("[")]
    lines[arrays[16]] = "[1e999, 15, 15, 15]"  # the 17th array: points per curve
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(trinom.InputError, match=r"point counts \[inf, 15\.0, 15\.0, 15\.0\] are not whole numbers"):
        read_bonds(path)
