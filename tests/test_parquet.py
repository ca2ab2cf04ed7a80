"""Books, curves and results as Parquet (trinom.parquet, issue 15): round trips and the streamed CLI run."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from trinom import parquet
from trinom.bonds.generator import generate_bonds
from trinom.cli import main

pytest.importorskip("pyarrow")
CPU = {"backend": "futhark", "target": "c"}


def test_an_option_book_round_trips(tmp_path):
    book = trinom.generator.generate("2_RANDCONSTHEIGHT", 50, seed=2)
    path = tmp_path / "options.parquet"
    parquet.write_book(path, book, [trinom.YieldCurve.thesis()], row_group_size=16)
    again, curves, ids = parquet.read_book(path)
    for name, column in book.as_dict().items():
        np.testing.assert_array_equal(getattr(again, name), column)
    assert curves[0].days.tolist() == trinom.YieldCurve.thesis().days.tolist() and ids[-1] == "49"
    groups = list(parquet.row_groups(path))
    assert [first for first, _b, _i in groups] == [0, 16, 32, 48] and parquet.rows(path) == 50


def test_a_bond_book_round_trips_with_its_cash_flows_and_curves(tmp_path):
    bonds, curves = generate_bonds("S1", 30, seed=5)
    path = tmp_path / "bonds.parquet"
    parquet.write_book(path, bonds, curves, row_group_size=7)
    again, read_curves, _ids = parquet.read_book(path)
    for name, column in bonds.as_dict().items():
        np.testing.assert_array_equal(getattr(again, name), column, err_msg=name)
    assert len(read_curves) == len(curves)
    np.testing.assert_array_equal(trinom.price(again, read_curves, **CPU).price, trinom.price(bonds, curves, **CPU).price)
    _first, group, _ids = list(parquet.row_groups(path))[1]  # rows 7..13, cash flows with them
    np.testing.assert_array_equal(group.cashflow_step, bonds[7:14].cashflow_step)


@pytest.mark.parametrize("kind", ["options", "bonds"])
def test_cli_prices_a_parquet_book_into_parquet_by_row_groups(tmp_path, kind):
    import pyarrow.parquet as pq

    book = tmp_path / "book.parquet"
    args = (["generate", "--instrument", "bonds", "U1"] if kind == "bonds" else ["generate", "1_RAND"])
    assert main([*args, "--size", "9", "--seed", "4", "--out", str(book)]) == 0
    out = tmp_path / "prices.parquet"
    assert main(["price", str(book), "--backend", "futhark", "--target", "c", "--out", str(out)]) == 0
    table = pq.read_table(out)
    assert table.column_names == ["id", "price", "clean", "accrued", "error"]
    instruments, curves, _ids = parquet.read_book(book)
    want = trinom.price(instruments, curves if kind == "bonds" else None, **CPU)
    np.testing.assert_array_equal(table.column("price").to_numpy(), want.price)


def test_a_bad_row_of_a_later_row_group_is_named_by_its_file_row(tmp_path, capsys):
    fields = trinom.generator.generate("1_RAND", 12, seed=1).as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][9] = -1.0
    path = tmp_path / "bad.parquet"
    parquet.write_book(path, trinom.Portfolio(**fields), row_group_size=4)
    out = tmp_path / "prices.parquet"
    assert main(["price", str(path), "--backend", "reference", "--out", str(out)]) != 0
    assert "row 9" in capsys.readouterr().err and not out.exists()
    assert main(["price", str(path), "--backend", "reference", "--errors", "mask", "--out", str(out)]) == 0
    import pyarrow.parquet as pq

    errors = pq.read_table(out).column("error").to_pylist()
    assert [i for i, e in enumerate(errors) if e] == [9]


def test_the_api_takes_arrow_tables_of_options_and_bonds(tmp_path):
    import pyarrow.parquet as pq

    bonds, curves = generate_bonds("U1", 6, seed=2)
    path = tmp_path / "bonds.parquet"
    parquet.write_book(path, bonds, curves)
    got = trinom.price(pq.read_table(path), curves, **CPU)
    np.testing.assert_array_equal(got.price, trinom.price(bonds, curves, **CPU).price)
    options = trinom.generator.generate("1_RAND", 5, seed=2)
    parquet.write_book(tmp_path / "options.parquet", options)
    got = trinom.price(pq.read_table(tmp_path / "options.parquet"), **CPU)
    np.testing.assert_array_equal(got.price, trinom.price(options, **CPU).price)


def test_risk_runs_on_a_local_cluster():
    distributed = pytest.importorskip("distributed")
    from trinom.analytics.risk import risk

    bonds, curves = generate_bonds("S1", 12, seed=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        there = risk(bonds, curves, client=client, measures=("dv01", "krd", "vega"), **CPU)
    here = risk(bonds, curves, measures=("dv01", "krd", "vega"), **CPU)
    np.testing.assert_array_equal(there.value.to_numpy(), here.value.to_numpy())


def test_curves_and_scenario_files_as_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from trinom import io
    from trinom.scenarios import read_scenarios

    thesis = trinom.YieldCurve.thesis()
    pq.write_table(pa.table({"days": thesis.days, "rate": np.asarray(thesis.rates)}), tmp_path / "curve.parquet")
    curve = io.read_yield_curve(tmp_path / "curve.parquet")
    assert curve.days.tolist() == thesis.days.tolist() and np.asarray(curve.rates).tolist() == list(thesis.rates)
    rows = {"scenario": ["up", "up", "key"], "curve": ["default"] * 3, "days": [None, None, 367],
            "shift": [1e-4, 1e-4, -2e-4]}
    pq.write_table(pa.table(rows), tmp_path / "grid.parquet")
    (tmp_path / "grid.csv").write_text("scenario,curve,days,shift\nup,default,,0.0001\nup,default,,0.0001\n"
                                       "key,default,367,-0.0002\n")
    names, market = read_scenarios(tmp_path / "grid.parquet", thesis)
    names_csv, market_csv = read_scenarios(tmp_path / "grid.csv", thesis)
    assert names == names_csv == ["up", "key"]
    for a, b in zip(market.scenarios, market_csv.scenarios, strict=True):
        assert np.asarray(a[0].rates).tolist() == np.asarray(b[0].rates).tolist()


def test_a_thesis_book_round_trips_through_pandas_and_parquet(tmp_path):
    """``to_dataframe`` keeps a thesis book's convention (a ``convention`` column), which ``from_dataframe`` and a
    Parquet book read back (issue 35: a pandas round trip through Parquet refused rows of a valid thesis file)."""
    from conftest import load_thesis
    from trinom.instruments.option import Portfolio

    portfolio, expected = load_thesis("1_RAND_1000")
    frame = portfolio.to_dataframe()
    assert set(frame.convention) == {"thesis"}
    assert Portfolio.from_dataframe(frame).convention == "thesis"
    path = tmp_path / "book.parquet"
    frame.to_parquet(path)
    read, _curves, _ids = parquet.read_book(path)
    assert read.convention == "thesis" and len(read) == len(portfolio)
    np.testing.assert_allclose(trinom.price(read, backend="futhark", target="c").price, expected, rtol=0, atol=1e-11)
    standard = Portfolio(**portfolio[:3].as_dict())
    assert "convention" not in standard.to_dataframe()  # the default convention writes no column
    frame.loc[3, "convention"] = "standard"
    frame.to_parquet(path)
    with pytest.raises(trinom.InputError, match="differs from row 0's 'thesis'"):
        parquet.read_book(path)
    with pytest.raises(trinom.InputError, match="a book has one convention"):
        Portfolio.from_dataframe(frame)
    with pytest.raises(trinom.InputError, match="a book has one convention"):
        Portfolio.from_dataframe(frame.iloc[:2], convention="standard")
