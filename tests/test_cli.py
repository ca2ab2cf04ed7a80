"""The trinom command: price, info, generate, backends; clear errors without tracebacks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import trinom
from conftest import load_thesis
from trinom import io
from trinom.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trinom.cli", *args], capture_output=True, text=True)


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"trinom {trinom.__version__}"


def test_price_to_out_and_csv(tmp_path, thesis_dir):
    assert main(["price", str(thesis_dir / "book.in"), "--backend", "reference", "--out", str(tmp_path / "b.out")]) == 0
    _, expected = load_thesis("book")
    np.testing.assert_allclose(io.read_prices(tmp_path / "b.out"), expected, rtol=0, atol=1e-12)
    assert main(["price", str(thesis_dir / "book.in"), "--backend", "reference", "--precision", "f32",
                 "--yield", str(thesis_dir / "yield.in"), "--out", str(tmp_path / "b.csv")]) == 0
    _, expected32 = load_thesis("book", "f32")
    np.testing.assert_allclose(io.read_prices(tmp_path / "b.csv"), expected32, rtol=0, atol=1.2e-4)


def test_price_prints_to_stdout_with_a_summary(thesis_dir):
    result = run_cli("price", str(thesis_dir / "book.in"), "--backend", "reference")
    assert result.returncode == 0
    assert float(result.stdout.split()[0]) == pytest.approx(1.8799573149849829, rel=1e-12)  # the thesis' price
    assert "5 options priced on reference (f64)" in result.stderr


def test_bad_input_exits_nonzero_with_the_message_and_no_traceback(tmp_path):
    header = ",".join(trinom.FIELDS)
    (tmp_path / "bad.csv").write_text(f"{header}\n63,9,3,365,12,0.1,0.01,put\n63,9,3,365,12,0.1,-0.01,put\n")
    result = run_cli("price", str(tmp_path / "bad.csv"), "--backend", "reference")
    assert result.returncode == 2
    assert result.stderr.strip() == "trinom: error: row 1: sigma must be > 0, got -0.01"
    assert "Traceback" not in result.stderr
    masked = run_cli("price", str(tmp_path / "bad.csv"), "--backend", "reference", "--errors", "mask",
                     "--out", str(tmp_path / "p.csv"))
    assert masked.returncode == 0 and "1 rows with errors" in masked.stderr
    assert (tmp_path / "p.csv").read_text().splitlines()[2] == '1,,"sigma must be > 0, got -0.01"'
    missing = run_cli("price", str(tmp_path / "nope.in"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_info_reports_statistics(thesis_dir):
    result = run_cli("info", str(thesis_dir / "4_SKEWED.in"))
    assert result.returncode == 0
    assert "65536 options" in result.stdout
    assert "width : min 7  max 511  mean 60.90  std 49.91  skewness 5.19" in result.stdout
    assert "work  : 1.787e+09 node updates" in result.stdout


def test_generate_writes_a_portfolio_with_prices(tmp_path):
    assert main(["generate", "skewed", "--size", "50", "--seed", "3", "--out", str(tmp_path / "s.in"),
                 "--with-curve", "--prices", str(tmp_path / "s.out")]) == 0
    portfolio, curve = io.read_input(tmp_path / "s.in")
    assert len(portfolio) == 50 and curve is not None
    np.testing.assert_allclose(io.read_prices(tmp_path / "s.out"),
                               trinom.price(portfolio, curve, backend="reference").price, rtol=0, atol=1e-12)
    bad = run_cli("generate", "gaussian", "--out", str(tmp_path / "x.in"))
    assert bad.returncode == 2 and "gaussian" in bad.stderr and "Traceback" not in bad.stderr


def test_backends_lists_every_backend_and_why():
    result = run_cli("backends")
    assert result.returncode == 0
    for name in ("reference", "futhark-basic", "futhark-flat", "cuda-option", "cuda-multi", "cuda"):
        assert f"\n{name} " in "\n" + result.stdout
    assert "auto picks, for 1000 options" in result.stdout and "OpenCL platforms" in result.stdout


# --- bonds -------------------------------------------------------------------------------------------------
def test_price_recognises_a_bond_file_and_prints_dirty_and_clean(capsys):
    from conftest import PAPER_SAMPLE, load_paper, shared_data_dir

    _bonds, _curves, expected = load_paper(PAPER_SAMPLE)
    assert main(["price", str(shared_data_dir() / "paper" / f"{PAPER_SAMPLE}.in"), "--backend", "reference"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "dirty\tclean"
    dirty = np.array([float(line.split("\t")[0]) for line in lines[1:]])
    np.testing.assert_allclose(dirty, expected, rtol=1e-12, atol=0)  # out64 was computed on another machine


def test_generate_bonds_then_price_csv_and_info(tmp_path, capsys):
    book = tmp_path / "r1.csv"
    assert main(["generate", "--instrument", "bonds", "R1", "--size", "20", "--seed", "4", "--out", str(book),
                 "--prices", str(tmp_path / "ref.csv")]) == 0
    assert (tmp_path / "r1.cashflows.csv").exists() and (tmp_path / "r1.curves.csv").exists()
    assert main(["price", str(book), "--backend", "reference", "--out", str(tmp_path / "p.csv")]) == 0
    assert (tmp_path / "p.csv").read_text() == (tmp_path / "ref.csv").read_text()
    assert (tmp_path / "p.csv").read_text().splitlines()[0] == "id,dirty,clean,accrued,error"
    assert main(["info", str(book)]) == 0
    assert "20 bonds" in capsys.readouterr().out


def test_bond_file_with_an_option_backend_is_a_clear_error(tmp_path, capsys):
    book = tmp_path / "u1.in"
    assert main(["generate", "--instrument", "bonds", "U1", "--size", "3", "--out", str(book)]) == 0
    assert main(["price", str(book), "--backend", "cuda-multi"]) == 2
    assert "engine 'cuda-multi' prices options only, and the book holds bonds" in capsys.readouterr().err
    assert main(["generate", "--instrument", "bonds", "X9", "--out", str(book)]) == 2
