"""File formats: thesis arrays, Futhark 10-array input, CSV, price files; round trips."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import load_thesis
from trinom import InputError, io
from trinom.io.book_files import read_book_file


def same_portfolio(a: trinom.Portfolio, b: trinom.Portfolio) -> None:
    assert a.convention == b.convention
    for field in trinom.FIELDS:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


@pytest.mark.parametrize("suffix", [".in", ".csv"])
def test_portfolio_round_trip(tmp_path, suffix):
    portfolio, _ = load_thesis("1_RAND_1000")
    io.write_portfolio(portfolio, tmp_path / f"p{suffix}")
    same_portfolio(io.read_portfolio(tmp_path / f"p{suffix}"), portfolio)


def test_futhark_input_holds_portfolio_and_curve(tmp_path, thesis_curve):
    portfolio, _ = load_thesis("book")
    io.write_portfolio(portfolio, tmp_path / "book.in", thesis_curve)
    arrays = io.read_arrays(tmp_path / "book.in")
    assert len(arrays) == 10
    text = (tmp_path / "book.in").read_text().splitlines()
    assert text[3] == "[365, 365, 365, 365, 365]" and text[5].startswith("[0.1, ")  # i32 and f64 literals
    read_back, curve = io.read_input(tmp_path / "book.in")
    same_portfolio(read_back, portfolio)
    np.testing.assert_array_equal(curve.days, thesis_curve.days)


def test_futhark_typed_literals_and_futhark_data(tmp_path):
    """Typed literals (63.0f64, 365i32) read; our output parses with futhark-data too."""
    (tmp_path / "t.in").write_text("[1.5f64, 2f64]\n[3i32, 4i32]\n")
    a, b = io.read_arrays(tmp_path / "t.in")
    np.testing.assert_array_equal(a, [1.5, 2.0])
    np.testing.assert_array_equal(b, [3, 4])
    futhark_data = pytest.importorskip("futhark_data")
    io.write_prices(tmp_path / "p.out", np.array([1.0, 2.5, 1e-300]))
    with open(tmp_path / "p.out") as handle:
        values = list(futhark_data.load(handle))
    assert values[0].tolist() == [1.0, 2.5, 1e-300]
    io.write_prices(tmp_path / "nan.out", np.array([np.nan, 1.0]))  # Futhark's own spelling of NaN
    assert (tmp_path / "nan.out").read_text() == "[f64.nan, 1.0]\n"
    assert np.isnan(io.read_prices(tmp_path / "nan.out")[0])


def test_yield_curve_formats(tmp_path, thesis_curve):
    for name in ("y.in", "y.csv"):
        io.write_yield_curve(thesis_curve, tmp_path / name)
        curve = io.read_yield_curve(tmp_path / name)
        np.testing.assert_array_equal(curve.rates, thesis_curve.rates)
        np.testing.assert_array_equal(curve.days, thesis_curve.days)


def test_prices_csv_with_errors(tmp_path):
    io.write_prices(tmp_path / "p.csv", np.array([1.25, np.nan]), ["", "sigma must be > 0, got -1"])
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines == ["id,price,error", "0,1.25,", "1,,\"sigma must be > 0, got -1\""]
    np.testing.assert_array_equal(io.read_prices(tmp_path / "p.csv"), [1.25, np.nan])


def test_prices_out_has_17_significant_digits(tmp_path):
    io.write_prices(tmp_path / "p.out", np.array([1.8799573149849829, 100.0]))
    assert (tmp_path / "p.out").read_text() == "[1.8799573149849829, 100.0]\n"


def test_bad_files_name_the_problem(tmp_path):
    (tmp_path / "three.in").write_text("[1.0]\n[2.0]\n[3.0]\n")
    with pytest.raises(InputError, match=r"3 arrays: an option file holds 8 .* a bond file 19"):
        io.read_portfolio(tmp_path / "three.in")
    with pytest.raises(InputError, match="no such file"):
        io.read_portfolio(tmp_path / "missing.in")
    (tmp_path / "bad.csv").write_text("strike,maturity\n1,2\n")
    with pytest.raises(InputError, match="CSV header lacks column 'expiry'"):
        io.read_portfolio(tmp_path / "bad.csv")
    header = ",".join(trinom.FIELDS)
    (tmp_path / "text.csv").write_text(f"{header}\n63,9,3,365,12,0.1,0.01,put\n63,nine,3,365,12,0.1,0.01,put\n")
    with pytest.raises(InputError, match=r"row 1: .*text\.csv line 3: maturity must be a number, got 'nine'"):
        io.read_portfolio(tmp_path / "text.csv")
    (tmp_path / "words.in").write_text("[1.0, abc]\n")
    with pytest.raises(InputError, match=r"array 1, item 2 is no number: .abc."):
        io.read_arrays(tmp_path / "words.in")


def test_writers_take_the_format_of_the_suffix_and_refuse_others(tmp_path):
    from trinom import parquet
    from trinom.bonds.generator import generate_bonds
    from trinom.io.bond_books import write_bonds

    portfolio = trinom.generator.generate("uniform", 3)
    io.write_portfolio(portfolio, tmp_path / "book.parquet", trinom.YieldCurve.thesis())
    again, curves, ids = parquet.read_book(tmp_path / "book.parquet")
    np.testing.assert_array_equal(again.strike, portfolio.strike)
    assert curves[0].days.tolist() == trinom.YieldCurve.thesis().days.tolist() and ids.tolist() == ["0", "1", "2"]
    bonds, bond_curves = generate_bonds("U1", 2, seed=1)
    write_bonds(bonds, bond_curves, tmp_path / "bonds.pq")
    np.testing.assert_array_equal(parquet.read_book(tmp_path / "bonds.pq")[0].cashflow_step, bonds.cashflow_step)
    for write, path, message in [
        (lambda p: io.write_portfolio(portfolio, p), "book.txt", "an option book is written as .in, .csv, .parquet"),
        (lambda p: write_bonds(bonds, bond_curves, p), "bonds.dat", "a bond book is written as .in, .csv, .parquet"),
        (lambda p: io.write_prices(p, np.ones(2)), "p.parquet", "prices are written as .out or .csv"),
        (lambda p: io.write_portfolio(portfolio, p, trinom.YieldCurve.thesis()), "book.csv",
         "an option CSV holds no yield curve"),
    ]:
        with pytest.raises(InputError, match=message):
            write(tmp_path / path)
        assert not (tmp_path / path).exists()


# --- an option CSV keeps its book's convention (issue 24, fuzz findings) ------------------------------------------------
def conventions_apart() -> tuple[trinom.Portfolio, trinom.Portfolio]:
    """A thesis-convention book (the generator's) and the same fields as a standard one; they price apart."""
    thesis = trinom.generator.generate("1_RAND", 20, seed=5)
    assert thesis.convention == "thesis"
    return thesis, trinom.Portfolio(convention="standard", **thesis.as_dict())


@pytest.mark.parametrize("convention", ["thesis", "standard"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_option_books_keep_their_convention_through_csv_and_parquet(tmp_path, convention, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    book = dict(zip(("thesis", "standard"), conventions_apart(), strict=True))[convention]
    path = tmp_path / f"book{suffix}"
    io.write_portfolio(book, path)
    again, _curve, ids = io.read_option_book(path) if suffix == ".csv" else trinom.parquet.read_book(path)
    same_portfolio(again, book)
    assert list(map(str, ids)) == [str(k) for k in range(len(book))]
    if suffix == ".csv":
        same_portfolio(io.read_csv_portfolio(path), book)
        same_portfolio(read_book_file(path).instruments, book)  # the command line's reader
        header = path.read_text().splitlines()[0]
        assert header == ",".join(trinom.FIELDS) + (",convention" if convention == "thesis" else "")


def test_a_standard_book_csv_is_as_it_was(tmp_path):
    """A standard book's CSV has no convention column (a file written before the column was, byte for byte)."""
    book = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[12], a=[0.1],
                            sigma=[0.01], option_type=["put"])
    path = tmp_path / "one.csv"
    io.write_portfolio(book, path)
    assert path.read_text() == "strike,maturity,expiry,term_unit,term_steps,a,sigma,option_type\n63.0,9.0,3.0,365,12,0.1,0.01,1\n"


def test_the_convention_column_is_read_and_checked(tmp_path):
    header = ",".join(trinom.FIELDS)
    row = "63,9,3,30,12,0.1,0.01,put"
    path = tmp_path / "book.csv"
    path.write_text(f"id,{header},convention\na,{row}, thesis \nb,{row},thesis\n")
    book, ids = io.read_csv_options(path)
    assert book.convention == "thesis" and ids == ["a", "b"]
    path.write_text(f"{header},convention\n{row},standard\n")
    assert io.read_portfolio(path).convention == "standard"
    path.write_text(f"{header},convention\n")
    assert io.read_portfolio(path).convention == "standard" and len(io.read_portfolio(path)) == 0
    path.write_text(f"{header},convention\n{row},thesis\n\n{row},standard\n{row},Thesis\n{row},\n")
    for errors in ("raise", "mask"):
        with pytest.raises(InputError) as info:
            io.read_portfolio(path, errors)
        assert info.value.errors == [
            (1, "convention", f"{path} line 4: convention 'standard' differs from line 2's 'thesis' (a book has one "
                              "convention, the same on every row)"),
            (2, "convention", f"{path} line 5: convention must be one of standard, thesis, got 'Thesis'"),
            (3, "convention", f"{path} line 6: convention must be one of standard, thesis, got ''")]
    path.write_text(f"{header},convention,convention\n{row},thesis,thesis\n")
    with pytest.raises(InputError, match="column 'convention' appears twice"):
        io.read_portfolio(path)


def test_a_generated_csv_book_prices_as_the_generated_portfolio(tmp_path, capsys):
    from trinom.cli import main

    thesis, standard = conventions_apart()
    book = tmp_path / "x.csv"
    assert main(["generate", "1_RAND", "--size", "20", "--seed", "5", "--out", str(book)]) == 0
    assert main(["price", str(book), "--backend", "reference", "--out", str(tmp_path / "p.csv")]) == 0
    capsys.readouterr()
    priced = io.read_prices(tmp_path / "p.csv")
    want = trinom.price(thesis, trinom.YieldCurve.thesis(), backend="reference").price
    np.testing.assert_allclose(priced, want, rtol=1e-15, atol=0)
    other = trinom.price(standard, trinom.YieldCurve.thesis(), backend="reference", errors="mask").price
    assert not np.allclose(other, want, rtol=1e-6, equal_nan=True)  # the convention matters for this book
