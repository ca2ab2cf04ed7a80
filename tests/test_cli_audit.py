"""Issue 24's audit of the command line and the file readers and writers: every book form keeps or numbers its
ids, outputs take the format of their suffix, nothing is overwritten or ignored, bad input is named before any
pricing (the row, the field, the file and the line), and risk and oas take --errors raise|mask."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np
import pytest
import trinom
from conftest import PAPER_SAMPLE, data_dir
from trinom import io, parquet
from trinom.bonds.generator import generate_bonds
from trinom.cli import arguments as cli_arguments
from trinom.cli import generate as cli_generate
from trinom.cli import main
from trinom.cli import oas as cli_oas
from trinom.cli import price as cli_price
from trinom.cli import risk as cli_risk
from trinom.io.bond_books import read_bonds, write_bonds
from trinom.scenarios import read_scenarios

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
REFERENCE = ["--backend", "reference"]
SAMPLE = data_dir() / "paper" / f"{PAPER_SAMPLE}.in"


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def forbid(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make the command's pricing calls fail: what is checked must be checked before any of them."""
    def priced(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("priced before the input was checked")

    for name in names:  # in every command's module that calls it
        for module in (cli_price, cli_risk, cli_oas, cli_generate):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, priced)


def bond_parquet(tmp_path: Path, count: int = 4, ids: list[str] | None = None) -> tuple[Path, trinom.BondPortfolio,
                                                                                          tuple[trinom.YieldCurve, ...]]:
    bonds, curves = generate_bonds("S1", count, seed=3)
    path = tmp_path / "bonds.parquet"
    parquet.write_book(path, bonds, curves, ids=ids)
    return path, bonds, curves


def market_file(path: Path, ids: list[str], prices: np.ndarray) -> Path:
    path.write_text("id,price\n" + "".join(f"{i},{float(p)!r}\n" for i, p in zip(ids, prices, strict=True)))
    return path


# --- 1: no float compared bit for bit with a number computed elsewhere (tests/test_cli.py keeps a tolerance) -------
def test_no_test_compares_a_run_time_float_exactly_with_a_long_literal():
    import re

    pattern = re.compile(r"==\s*-?\d\.\d{8,}")
    offenders = [f"{path.name}:{number}" for path in sorted(Path(__file__).parent.glob("test_*.py"))
                 for number, line in enumerate(path.read_text().splitlines(), start=1)
                 if pattern.search(line)]
    assert offenders == []


# --- 2: oas on books without an id column: ids are row numbers -----------------------------------------------------
def test_oas_matches_market_prices_by_row_number_on_the_19_array_file(tmp_path, capsys):
    bonds, curves = read_bonds(SAMPLE)
    model = trinom.price(bonds, curves, backend="reference").clean
    market = market_file(tmp_path / "market.csv", [str(k) for k in range(len(bonds))], model * 1.01)
    out = tmp_path / "oas.csv"
    assert main(["oas", str(SAMPLE), "--market-prices", str(market), *REFERENCE, "--out", str(out)]) == 0
    rows = rows_of(out)
    assert [row["id"] for row in rows] == [str(k) for k in range(len(bonds))]
    assert all(row["error"] == "" for row in rows)
    want = trinom.oas(bonds, curves, model * 1.01, backend="reference")
    np.testing.assert_allclose([float(row["oas"]) for row in rows], want.oas, rtol=1e-12)
    assert "Traceback" not in capsys.readouterr().err


def test_oas_on_a_parquet_book_keeps_its_ids_and_names_the_bonds_without_a_price(tmp_path, capsys):
    path, bonds, curves = bond_parquet(tmp_path, 3, ids=["XS1", "XS2", "XS3"])
    model = trinom.price(bonds, curves, backend="reference").clean
    market = market_file(tmp_path / "market.csv", ["XS1", "XS2", "XS3"], model * 1.01)
    out = tmp_path / "oas.csv"
    assert main(["oas", str(path), "--market-prices", str(market), *REFERENCE, "--out", str(out)]) == 0
    rows = rows_of(out)
    assert [row["id"] for row in rows] == ["XS1", "XS2", "XS3"] and all(row["error"] == "" for row in rows)
    np.testing.assert_allclose([float(row["price"]) for row in rows], model * 1.01, rtol=1e-10)
    market_file(market, ["0", "1", "2"], model)  # row numbers do not name the bonds of a book with ids
    assert main(["oas", str(path), "--market-prices", str(market), *REFERENCE, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "line 2: id '0': a bond not in the book" in err and "no price for bond 'XS1'" in err


# --- 3: price --scenarios on .in and Parquet bond books, checked before pricing -------------------------------------
@pytest.mark.parametrize("form", ["in", "parquet"])
def test_price_scenarios_on_bond_books_without_ids_in_the_csv_form(tmp_path, form):
    bonds, curves = read_bonds(SAMPLE)
    book = SAMPLE
    if form == "parquet":
        book = tmp_path / "sample.parquet"
        parquet.write_book(book, bonds, curves)
    scenarios = tmp_path / "scenarios.csv"
    scenarios.write_text("scenario,curve,days,shift\nup,0,,0.0001\ndown,0,,-0.0001\n")
    out = tmp_path / "grid.csv"
    assert main(["price", str(book), "--scenarios", str(scenarios), *REFERENCE, "--out", str(out)]) == 0
    rows = rows_of(out)
    assert [row["id"] for row in rows] == [str(k) for k in range(len(bonds))] * 2
    assert [row["scenario"] for row in rows] == ["up"] * len(bonds) + ["down"] * len(bonds)
    _names, market = read_scenarios(scenarios, curves)
    want = trinom.price(bonds, market, backend="reference").price
    np.testing.assert_allclose(np.array([float(row["price"]) for row in rows]).reshape(2, -1), want, rtol=1e-13)


def test_a_bad_scenario_file_or_output_is_refused_before_any_pricing(tmp_path, monkeypatch, capsys):
    forbid(monkeypatch, "price")
    scenarios = tmp_path / "scenarios.csv"
    scenarios.write_text("scenario,curve,days,shift\nup,nowhere,,0.0001\n")
    assert main(["price", str(SAMPLE), "--scenarios", str(scenarios), "--out", str(tmp_path / "g.csv")]) == 2
    assert "no curve named 'nowhere'" in capsys.readouterr().err
    scenarios.write_text("scenario,curve,days,shift\nup,0,,0.0001\n")
    assert main(["price", str(SAMPLE), "--scenarios", str(scenarios), "--out", str(tmp_path / "g.out")]) == 2
    assert "a scenario grid (id,scenario,price,error) is written as .csv, .parquet or .pq" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenarios.csv"]


# --- 4: an output's suffix picks its format ----------------------------------------------------------------------------
def test_price_and_generate_write_parquet_under_a_parquet_name(tmp_path):
    book = tmp_path / "opts.csv"
    options = trinom.generator.generate("1_RAND", 6, seed=2)
    io.write_portfolio(options, book)
    out = tmp_path / "p.parquet"
    assert main(["price", str(book), *REFERENCE, "--out", str(out)]) == 0
    table = pq.read_table(out)
    assert table.column_names == ["id", "price", "clean", "accrued", "error"]
    assert table.column("id").to_pylist() == [str(k) for k in range(6)]
    want = trinom.price(io.read_portfolio(book), backend="reference").price
    np.testing.assert_allclose(table.column("price").to_numpy(), want, rtol=1e-13)
    prices = tmp_path / "g.parquet"
    assert main(["generate", "--instrument", "bonds", "U1", "--size", "3", "--out", str(tmp_path / "g.in"),
                 "--prices", str(prices)]) == 0
    bonds, curves = read_bonds(tmp_path / "g.in")
    np.testing.assert_allclose(pq.read_table(prices).column("price").to_numpy(),
                               trinom.price(bonds, curves, backend="reference").price, rtol=1e-13)


@pytest.mark.parametrize("argv,message", [
    (["price", "BOOK", "--out", "p.txt"], "--out p.txt: prices are written as .out, .csv, .parquet or .pq"),
    (["price", "BOOK", "--out", "prices"], "--out prices: prices are written as .out, .csv, .parquet or .pq, by the "
                                           "file's suffix; it has none"),
    (["generate", "uniform", "--out", "g.txt"], "--out g.txt: a book is written as .in, .csv, .parquet or .pq"),
    (["generate", "uniform", "--out", "g.in", "--prices", "g.json"], "--prices g.json: prices are written as"),
    (["risk", "BOOK", "--out", "r.out"], "--out r.out: the risk table (id,measure,factor,shift,base,value,error) is "
                                         "written as .csv, .parquet or .pq"),
])
def test_an_unknown_output_suffix_is_an_error_before_any_work(tmp_path, monkeypatch, capsys, argv, message):
    book = tmp_path / "book.in"
    io.write_portfolio(trinom.generator.generate("uniform", 2), book)
    forbid(monkeypatch, "price", "risk", "generate")
    monkeypatch.chdir(tmp_path)
    assert main([str(book) if arg == "BOOK" else arg for arg in argv]) == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.in"]


# --- 8: no output over another output or an input --------------------------------------------------------------------
@pytest.mark.parametrize("argv,message", [
    (["generate", "--instrument", "bonds", "U1", "--size", "2", "--out", "g.csv", "--prices", "g.cashflows.csv"],
     "--prices g.cashflows.csv is the same file as --out's cash-flow file g.cashflows.csv"),
    (["generate", "--instrument", "bonds", "U1", "--size", "2", "--out", "g.csv", "--prices", "./g.curves.csv"],
     "--prices g.curves.csv is the same file as --out's curve file g.curves.csv"),
    (["generate", "uniform", "--size", "2", "--out", "g.csv", "--prices", "g.csv"],
     "--prices g.csv is the same file as --out g.csv: refusing to write one output over another"),
])
def test_outputs_of_one_command_never_collide(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_output_is_never_an_input(tmp_path, capsys):
    path, _bonds, _curves = bond_parquet(tmp_path, 2)
    market = market_file(tmp_path / "market.csv", ["0", "1"], np.array([90.0, 90.0]))
    before = market.read_text()
    assert main(["oas", str(path), "--market-prices", str(market), "--out", str(market)]) == 2
    assert "is an input of this command: refusing to overwrite it" in capsys.readouterr().err
    assert market.read_text() == before


# --- 10: risk and oas take --errors; --measures checked before any work ---------------------------------------------
def all_bad_options(tmp_path: Path) -> Path:
    book = tmp_path / "bad.csv"
    book.write_text(",".join(trinom.FIELDS) + "\n63,9,3,365,12,0.1,-0.01,put\n63,9,3,365,12,-0.1,0.01,put\n")
    return book


def test_risk_raises_by_default_and_masks_with_a_summary(tmp_path, capsys):
    book, out = all_bad_options(tmp_path), tmp_path / "risk.csv"
    assert main(["risk", str(book), *REFERENCE, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "row 0: sigma must be > 0, got -0.01" in err and "row 1: a must be > 0, got -0.1" in err
    assert not out.exists()
    assert main(["risk", str(book), *REFERENCE, "--measures", "dv01,duration", "--errors", "mask", "--out",
                 str(out)]) == 0
    rows = rows_of(out)
    assert [(row["id"], row["measure"], row["value"]) for row in rows] == [
        ("0", "dv01", ""), ("1", "dv01", ""), ("0", "duration", ""), ("1", "duration", "")]
    assert rows[0]["error"] == "sigma must be > 0, got -0.01" and rows[1]["error"] == "a must be > 0, got -0.1"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2 of 2 options failed (NaN; the error column says why)" in err[0]


def test_oas_raises_by_default_and_masks_with_a_summary(tmp_path, capsys):
    path, bonds, curves = bond_parquet(tmp_path, 3)
    model = trinom.price(bonds, curves, backend="reference").clean
    market = tmp_path / "market.csv"
    market.write_text(f"id,price\n0,{float(model[0])!r}\n1,cheap\n2,-4\n")
    out = tmp_path / "oas.csv"
    assert main(["oas", str(path), "--market-prices", str(market), *REFERENCE, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "row 1: " in err and "market.csv line 3: the price of bond '1' must be a positive number, got 'cheap'" in err
    assert "row 2: " in err and "line 4: the price of bond '2' must be a positive number, got '-4'" in err
    assert not out.exists()
    assert main(["oas", str(path), "--market-prices", str(market), *REFERENCE, "--errors", "mask",
                 "--out", str(out)]) == 0
    rows = rows_of(out)
    assert rows[0]["error"] == "" and rows[1]["oas"] == rows[2]["oas"] == ""
    assert rows[1]["error"].endswith("line 3: the price of bond '1' must be a positive number, got 'cheap'")
    assert "2 of 3 bonds failed" in capsys.readouterr().err


@pytest.mark.parametrize("measures,message", [
    (",", "--measures ',' names no measure; choose from dv01"),
    ("", "--measures '' names no measure"),
    ("dv01,,krd", "an empty name between commas"),
    ("dv01,theta", "unknown measure 'theta'"),
    ("dv01,dv01", "'dv01' is given 2 times"),
    ("spread_duration", "--measures spread_duration: applies to bonds only, and"),
])
def test_measures_are_checked_before_any_work(tmp_path, monkeypatch, capsys, measures, message):
    book = tmp_path / "book.csv"
    io.write_portfolio(trinom.generator.generate("uniform", 2), book)
    forbid(monkeypatch, "risk")
    assert main(["risk", str(book), "--measures", measures, "--out", str(tmp_path / "r.csv")]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "r.csv").exists()


def test_risk_of_an_option_book_computes_the_measures_that_apply(tmp_path):
    book = tmp_path / "book.csv"
    io.write_portfolio(trinom.generator.generate("uniform", 2), book)
    out = tmp_path / "risk.csv"
    assert main(["risk", str(book), *REFERENCE, "--out", str(out)]) == 0
    assert {row["measure"] for row in rows_of(out)} == {"dv01", "duration", "convexity", "krd", "vega"}


# --- 13: Parquet and CSV readers behave the same ---------------------------------------------------------------------
def test_parquet_ids_are_kept_in_csv_and_risk_outputs(tmp_path):
    path, _bonds, _curves = bond_parquet(tmp_path, 3, ids=["A", "B", "C"])
    out = tmp_path / "p.csv"
    assert main(["price", str(path), *REFERENCE, "--out", str(out)]) == 0
    assert [row["id"] for row in rows_of(out)] == ["A", "B", "C"]
    risk_out = tmp_path / "risk.csv"
    assert main(["risk", str(path), *REFERENCE, "--measures", "dv01", "--out", str(risk_out)]) == 0
    assert [row["id"] for row in rows_of(risk_out)] == ["A", "B", "C"]
    options = tmp_path / "options.parquet"
    parquet.write_book(options, trinom.generator.generate("uniform", 2), ids=["opt-1", "opt-2"])
    assert main(["price", str(options), *REFERENCE, "--out", str(out)]) == 0
    assert [row["id"] for row in rows_of(out)] == ["opt-1", "opt-2"]


def test_an_option_csv_may_name_its_rows_as_a_parquet_book_does(tmp_path):
    book = tmp_path / "book.csv"
    row = "63,9,3,365,12,0.1,0.01,put"
    book.write_text("id," + ",".join(trinom.FIELDS) + f"\nfirst,{row}\nsecond,{row}\n")
    out = tmp_path / "p.csv"
    assert main(["price", str(book), *REFERENCE, "--out", str(out)]) == 0
    assert [r["id"] for r in rows_of(out)] == ["first", "second"]
    book.write_text("id," + ",".join(trinom.FIELDS) + f"\nfirst,{row}\n\nfirst,{row}\n")
    with pytest.raises(trinom.InputError) as caught:
        io.read_portfolio(book)
    assert str(caught.value) == f"row 1: {book} line 4: id 'first' is repeated: rows 0 and 1 (lines 2 and 4) have it"


def test_unknown_columns_of_a_parquet_book_are_refused_naming_the_column_and_file(tmp_path, capsys):
    options = trinom.generator.generate("uniform", 2)
    table = pa.table({**options.as_dict(), "volume": [1, 2]})
    path = tmp_path / "options.parquet"
    pq.write_table(table, path)
    assert main(["price", str(path), *REFERENCE]) == 2
    assert f"{path}: unknown column 'volume' (an option book's columns: id, strike" in capsys.readouterr().err
    bonds, curves = generate_bonds("U1", 2, seed=1)
    parquet.write_book(path, bonds, curves)
    pq.write_table(pq.read_table(path).append_column("rating", pa.array(["AA", "B"])), path)
    with pytest.raises(trinom.InputError, match=r"unknown column 'rating' \(a bond book's columns"):
        parquet.read_book(path)


@pytest.mark.parametrize("ids,message", [
    (["a", "b", "a"], "row 2: {path}: id 'a' is repeated: rows 0 and 2 have it"),
    (["a", None, "c"], "row 1: {path}: the id is null; every row of a book with an id column needs one"),
    (["a", " ", "c"], "row 1: {path}: the id is empty"),
])
def test_parquet_ids_are_checked_as_csv_ids_are(tmp_path, capsys, ids, message):
    options = trinom.generator.generate("uniform", 3)
    path = tmp_path / "options.parquet"
    pq.write_table(pa.table({"id": pa.array(ids, pa.string()), **options.as_dict()}), path)
    for argv in (["price", str(path)], ["price", str(path), "--out", str(tmp_path / "p.parquet")]):  # the streamed run too
        assert main([*argv, *REFERENCE]) == 2
        assert message.format(path=path) in capsys.readouterr().err
    assert not (tmp_path / "p.parquet").exists()


def test_bond_csv_ids_name_the_repeated_id_and_both_rows(tmp_path):
    bonds, curves = generate_bonds("U1", 3, seed=1)
    path = tmp_path / "bonds.csv"
    write_bonds(bonds, curves, path)
    lines = path.read_text().splitlines()
    lines[3] = "0" + lines[3][1:]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(trinom.InputError) as caught:
        read_bonds(path)
    assert str(caught.value) == "row 2: bonds.csv line 4: id '0' is repeated: rows 0 and 2 (lines 2 and 4) have it"


# --- 15: cash-flow steps, --dask, --device, --max-steps, market-price columns ----------------------------------------
def fractional_step_book(tmp_path: Path) -> tuple[Path, int]:
    """A bond CSV whose bond 'B1' has a cash flow at step 24.5 (on line ``line`` of its cash-flow file)."""
    bonds, curves = generate_bonds("S1", 3, seed=3)
    path = tmp_path / "bonds.csv"
    write_bonds(bonds, curves, path)
    table = path.read_text().splitlines()
    path.write_text("\n".join([table[0], *(f"B{row.split(',', 1)[0]},{row.split(',', 1)[1]}" for row in table[1:])]) + "\n")
    flows_path = tmp_path / "bonds.cashflows.csv"
    flows = flows_path.read_text().splitlines()
    flows = [flows[0], *(f"B{row}" for row in flows[1:])]
    line = next(k for k, row in enumerate(flows) if row.startswith("B1,")) + 1
    cells = flows[line - 1].split(",")
    cells[1] = f"{cells[1]}.5"
    flows[line - 1] = ",".join(cells)
    flows_path.write_text("\n".join(flows) + "\n")
    return path, line


def test_a_fractional_cash_flow_step_names_the_file_line_and_bond(tmp_path, capsys):
    path, line = fractional_step_book(tmp_path)
    with pytest.raises(trinom.InputError) as caught:
        read_bonds(path)
    step = (tmp_path / "bonds.cashflows.csv").read_text().splitlines()[line - 1].split(",")[1]
    assert str(caught.value) == (f"row 1: bonds.cashflows.csv line {line}: step of a cash flow of bond 'B1' must be a "
                                 f"whole number, got '{step}'")
    assert caught.value.errors[0][:2] == (1, "step")
    out = tmp_path / "p.csv"
    assert main(["price", str(path), *REFERENCE, "--errors", "mask", "--out", str(out)]) == 0
    rows = rows_of(out)
    assert [row["id"] for row in rows] == ["B0", "B1", "B2"] and rows[1]["dirty"] == ""
    assert f"line {line}: step of a cash flow of bond 'B1' must be a whole number" in rows[1]["error"]
    assert rows[0]["error"] == rows[2]["error"] == ""


def test_a_fractional_step_of_the_19_array_file_and_of_a_parquet_book_names_the_bond(tmp_path):
    bonds, curves = generate_bonds("S1", 3, seed=3)
    path = tmp_path / "bonds.in"
    write_bonds(bonds, curves, path)
    lines = path.read_text().splitlines()
    steps = lines[6].strip("[]").split(", ")
    item = int(bonds.cashflow_offset[2])  # bond 2's first cash flow
    steps[item] = f"{steps[item]}.5"
    lines[6] = "[" + ", ".join(steps) + "]"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(trinom.InputError) as caught:
        read_bonds(path)
    assert str(caught.value) == (f"row 2: {path}: array 7 (cashflow_step), item {item + 1} must be a whole number, got "
                                 f"{steps[item]} (cash flow 0 of the bond)")
    masked, masked_curves = read_bonds(path, errors="mask")
    assert [(row, field) for row, field, _m in masked.validate(masked_curves)] == [(2, "cashflow_step")]
    book = tmp_path / "bonds.parquet"
    parquet.write_book(book, bonds, curves, row_group_size=2)
    table = pq.read_table(book)
    flows = table.column("cashflow_step").to_pylist()
    flows[2] = [float(s) for s in flows[2]]
    flows[2][0] += 0.5
    table = table.set_column(table.column_names.index("cashflow_step"), "cashflow_step",
                             pa.array(flows, pa.list_(pa.float64())))
    pq.write_table(table, book, row_group_size=2)
    with pytest.raises(trinom.InputError) as caught:
        parquet.read_book(book)
    assert str(caught.value) == (f"row 2: {book}: cashflow_step (entry 0 of the list) must be a whole number, got "
                                 f"{flows[2][0]!r}")
    groups = parquet.row_groups(book)
    next(groups)
    with pytest.raises(trinom.InputError, match=r"^row 2: .*cashflow_step \(entry 0 of the list\)"):
        next(groups)  # the second row group names the row of the file


def test_dask_address_that_does_not_answer_fails_within_seconds(capsys):
    pytest.importorskip("distributed")
    start = time.perf_counter()
    assert main(["price", str(SAMPLE), *REFERENCE, "--dask", "tcp://127.0.0.1:1"]) == 3
    assert time.perf_counter() - start < cli_arguments.DASK_CONNECT_SECONDS + 10
    assert "--dask tcp://127.0.0.1:1: no Dask scheduler answered within 5 s" in capsys.readouterr().err
    assert main(["price", str(SAMPLE), "--dask", "scheduler"]) == 2
    assert "give local:N (N worker processes here) or a running scheduler's address" in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["price", "BOOK", "--device", "-1"], "argument --device: must be >= 0, got -1"),
    (["price", "BOOK", "--max-width", "1"], "argument --max-width: must be >= 3, got 1"),
    (["risk", "BOOK", "--out", "r.csv", "--shift", "0"], "argument --shift: must be a finite number > 0, got 0"),
    (["generate", "uniform", "--size", "-5", "--out", "g.in"], "argument --size: must be >= 0, got -5"),
])
def test_arguments_are_checked_by_the_parser(capsys, argv, message):
    with pytest.raises(SystemExit) as caught:
        main([str(SAMPLE) if arg == "BOOK" else arg for arg in argv])
    assert caught.value.code == 2 and message in capsys.readouterr().err


def test_max_steps_beyond_the_bond_engines_limit_is_an_error(monkeypatch, capsys):
    forbid(monkeypatch, "price")
    assert main(["price", str(SAMPLE), "--max-steps", "70000"]) == 2
    assert ("--max-steps 70000: the bond engines take trees of at most 65535 steps" in capsys.readouterr().err)


def test_a_market_price_file_with_another_column_is_refused(tmp_path, monkeypatch, capsys):
    path, _bonds, _curves = bond_parquet(tmp_path, 2)
    market = tmp_path / "market.csv"
    market.write_text("id,price,source\n0,99.5,BBG\n1,98,BBG\n")
    forbid(monkeypatch, "oas")
    assert main(["oas", str(path), "--market-prices", str(market), "--out", str(tmp_path / "o.csv")]) == 2
    assert f"{market}: unknown column 'source' (columns: id, price)" in capsys.readouterr().err


def test_generate_refuses_options_that_would_be_ignored(tmp_path, capsys):
    assert main(["generate", "uniform", "--size", "2", "--out", str(tmp_path / "g.csv"), "--with-curve"]) == 2
    assert "a CSV option book holds no curve" in capsys.readouterr().err
    assert main(["generate", "--instrument", "bonds", "U1", "--size", "2", "--skew", "5",
                 "--out", str(tmp_path / "g.in")]) == 2
    assert "--skew applies to the thesis' skewed option distributions" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_info_reads_parquet_books(tmp_path, capsys):
    path, _bonds, _curves = bond_parquet(tmp_path, 3)
    assert main(["info", str(path)]) == 0
    assert f"{path}: 3 bonds" in capsys.readouterr().out


@pytest.mark.parametrize("spec", ["", "  "])
def test_an_empty_dask_address_is_an_error_not_a_local_run(capsys, spec):
    """``--dask ""`` (an unset shell variable) used to price here without a word (issue 35)."""
    assert main(["price", str(SAMPLE), *REFERENCE, "--dask", spec]) == 2
    assert "--dask is empty" in capsys.readouterr().err


def test_a_header_only_bond_csv_writes_the_bond_header(tmp_path, capsys):
    """An empty bond book's prices file has the bond columns, not the options' (issue 35)."""
    from trinom.bonds.generator import generate_bonds
    from trinom.io.bond_books import write_bonds_csv

    bonds, curves = generate_bonds("R1", 2, seed=1)
    write_bonds_csv(bonds, curves, tmp_path / "full.csv")
    for suffix in ("", ".cashflows", ".curves"):
        lines = (tmp_path / f"full{suffix}.csv").read_text().splitlines()
        (tmp_path / f"empty{suffix}.csv").write_text(("\n".join(lines) if suffix == ".curves" else lines[0]) + "\n")
    out = tmp_path / "prices.csv"
    assert main(["price", str(tmp_path / "empty.csv"), *REFERENCE, "--out", str(out)]) == 0
    assert out.read_text().splitlines() == ["id,dirty,clean,accrued,error"]


def test_numbered_curves_with_a_gap_name_the_missing_ones(tmp_path, capsys):
    """A gap in a bond book's numbered curves (0, 3, 5) used to name an empty curve '1' the user never wrote."""
    from trinom.bonds.generator import generate_bonds
    from trinom.io.bond_books import write_bonds_csv

    bonds, curves = generate_bonds("R1", 2, seed=1)
    write_bonds_csv(bonds, curves, tmp_path / "book.csv")
    path = tmp_path / "book.curves.csv"
    lines = path.read_text().splitlines()
    kept = [lines[0]] + [line for line in lines[1:] if line.split(",")[0] in ("0", "3", "2")]
    path.write_text("\n".join(line.replace("2,", "5,", 1) if line.startswith("2,") else line for line in kept) + "\n")
    assert main(["price", str(tmp_path / "book.csv"), *REFERENCE]) == 2
    assert "book.curves.csv: the curves are numbered up to 5 but curves 1, 2, 4 are missing" in capsys.readouterr().err


def test_in_files_with_arrays_of_other_lengths_name_the_file_and_the_array(tmp_path, capsys):
    """A `.in` file whose arrays disagree in length named neither the file nor the array (issue 35)."""
    for source, message in ((data_dir() / "thesis" / "book.in", "array 1 (strike) holds 4 values, the others 5"),
                            (SAMPLE, "term_unit has 19 entries, expected one per bond (20) (array 1 of the file's 19")):
        lines = source.read_text().splitlines()
        cells = lines[0].strip("[]").split(",")
        lines[0] = "[" + ",".join(cells[:-1]) + "]"
        short = tmp_path / f"short-{source.name}"
        short.write_text("\n".join(lines) + "\n")
        assert main(["price", str(short), *REFERENCE]) == 2
        assert f"{short}: {message}" in capsys.readouterr().err


def test_an_unwritable_out_names_the_file_not_a_temporary(capsys):
    """Issue 35: an --out whose folder takes no new file named the temporary '.part' file (root writes anywhere
    else, so the test writes into /sys, which no one may)."""
    if not Path("/sys").is_dir():
        pytest.skip("no /sys here")
    assert main(["price", str(SAMPLE), *REFERENCE, "--out", "/sys/prices.csv"]) == 2
    err = capsys.readouterr().err
    assert "/sys/prices.csv: cannot be written" in err and ".part" not in err
