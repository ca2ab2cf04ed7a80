"""A Parquet book priced file to file (trinom.parquet_files, issue 27): in this process, and by tasks of row groups
on a real local cluster of two worker processes that read and write their own row groups.

The cluster's file is one process's file, byte for byte (options and bonds, several row groups, ids, masked rows);
a bad row with errors="raise", bad ids or a failing engine leave no output, no staging folder and an older output as
it was; a worker killed mid-run loses nothing; a folder of parts reads back as one table; the CLI runs it end to end.
"""

from __future__ import annotations

import doctest
import os
from types import SimpleNamespace

import numpy as np
import pytest
import trinom
from killed_worker import run_killing_a_worker
from trinom import parquet, parquet_files
from trinom.bonds.generator import generate_bonds
from trinom.cli import main
from trinom.parquet_files import price_parquet_file

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
distributed = pytest.importorskip("distributed")
CPU = {"backend": "futhark", "target": "c"}

DASK_LOG_LEVEL = 50  # the cluster fixture's (tests/conftest.py): killed workers log at ERROR


def options_file(path, rows: int = 120, group: int = 16, seed: int = 1, bad: tuple[int, ...] = ()):
    """A 1_RAND option book as Parquet with ids ``opt-K`` (``bad``: rows given sigma -1); the book."""
    generated = trinom.generator.generate("1_RAND", rows, seed=seed)
    fields = generated.as_dict()
    fields["sigma"] = np.asarray(fields["sigma"], dtype=np.float64).copy()
    fields["sigma"][list(bad)] = -1.0
    book = trinom.Portfolio(convention=generated.convention, **fields)
    parquet.write_book(path, book, ids=[f"opt-{k}" for k in range(rows)], row_group_size=group)
    return book


def old_loop(source, out, market, errors="raise"):
    """What `trinom price book.parquet --out prices.parquet` did before trinom.parquet_files: the reference bytes."""
    writer = parquet.ResultWriter(out)
    for first, book, ids in parquet.row_groups(source, errors):
        result = trinom.price(book, market, errors=errors, **CPU)
        writer.write(ids, result)
        del result, book
        trinom.engines.release_memory()
        assert first >= 0
    writer.close()


def leftovers(folder) -> list[str]:
    """Hidden files and folders beside the outputs (temporary files, staging folders)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_the_module_examples():
    assert doctest.testmod(parquet_files, optionflags=doctest.ELLIPSIS).failed == 0


def test_task_cuts_take_whole_row_groups_in_order():
    assert parquet_files.task_cuts([3, 3, 3, 3], 6) == [(0, 2), (2, 4)]
    assert parquet_files.task_cuts([1000, 1, 1, 1], 2) == [(0, 1), (1, 3), (3, 4)]
    assert parquet_files.task_cuts([0, 0, 5], 4) == [(0, 2), (2, 3)]


def test_one_process_writes_what_the_old_loop_wrote(tmp_path):
    book = options_file(tmp_path / "book.parquet")
    old_loop(tmp_path / "book.parquet", tmp_path / "old.parquet", trinom.YieldCurve.thesis())
    done = []
    run = price_parquet_file(tmp_path / "book.parquet", tmp_path / "new.parquet", progress=lambda d, t: done.append(d),
                             **CPU)
    assert (tmp_path / "new.parquet").read_bytes() == (tmp_path / "old.parquet").read_bytes()
    assert (run.rows, run.failed, run.engine, run.parts) == (120, 0, "futhark/c", 1) and done[-1] == 120
    table = pq.read_table(tmp_path / "new.parquet")
    np.testing.assert_array_equal(table.column("price").to_numpy(), trinom.price(book, **CPU).price)
    assert pq.ParquetFile(tmp_path / "new.parquet").num_row_groups == 8 and leftovers(tmp_path) == []


def test_the_cluster_writes_one_process_bytes_for_options(client, tmp_path):
    book = options_file(tmp_path / "book.parquet", rows=150, group=16)
    here = price_parquet_file(tmp_path / "book.parquet", tmp_path / "here.parquet", **CPU)
    done = []
    there = price_parquet_file(tmp_path / "book.parquet", tmp_path / "there.parquet", client=client, task_rows=40,
                               progress=lambda d, t: done.append((d, t)), **CPU)
    assert (tmp_path / "there.parquet").read_bytes() == (tmp_path / "here.parquet").read_bytes()
    assert there.parts == 5 and there.rows == 150 and there.failed == 0  # 10 row groups, 2 a task (16 + 16 <= 40)
    assert "futhark/c on dask (5 tasks" in there.engine and here.engine == "futhark/c"
    assert len(there.tasks) == 5 and all(w.startswith("tcp://") and t > 0 for w, t in there.tasks)
    assert there.stitch_seconds > 0 and there.ids_seconds > 0 and here.tasks == () and 1 <= there.busiest()[2] <= 5
    assert [d for d, _t in done] == [32, 64, 96, 128, 150] and done[-1][1] == 150  # stitched in input order
    table = pq.read_table(tmp_path / "there.parquet")
    assert table.column("id").to_pylist() == [f"opt-{k}" for k in range(150)]
    np.testing.assert_array_equal(table.column("price").to_numpy(), trinom.price(book, **CPU).price)
    again = price_parquet_file(tmp_path / "book.parquet", tmp_path / "again.parquet", client=client, **CPU)
    assert again.parts == 10  # by default several tasks a worker (2 x 8 aimed at): here one a row group
    assert (tmp_path / "again.parquet").read_bytes() == (tmp_path / "here.parquet").read_bytes()
    assert leftovers(tmp_path) == []


def test_the_cluster_writes_one_process_bytes_for_bonds(client, tmp_path):
    bonds, curves = generate_bonds("S1", 60, seed=5)
    parquet.write_book(tmp_path / "bonds.parquet", bonds, curves, row_group_size=7)
    old_loop(tmp_path / "bonds.parquet", tmp_path / "old.parquet", curves)
    price_parquet_file(tmp_path / "bonds.parquet", tmp_path / "here.parquet", **CPU)
    there = price_parquet_file(tmp_path / "bonds.parquet", tmp_path / "there.parquet", client=client, task_rows=7,
                               **CPU)
    assert there.parts == 9
    for name in ("here", "there"):
        assert (tmp_path / f"{name}.parquet").read_bytes() == (tmp_path / "old.parquet").read_bytes()
    table = pq.read_table(tmp_path / "there.parquet")
    want = trinom.price(bonds, curves, **CPU)
    np.testing.assert_array_equal(table.column("clean").to_numpy(), want.clean)
    np.testing.assert_array_equal(table.column("accrued").to_numpy(), want.accrued)
    assert table.column("id").to_pylist() == [str(k) for k in range(60)]  # no id column: the row numbers


def test_masked_rows_get_nan_and_their_message(client, tmp_path):
    options_file(tmp_path / "book.parquet", rows=80, group=10, bad=(3, 57))
    here = price_parquet_file(tmp_path / "book.parquet", tmp_path / "here.parquet", errors="mask", **CPU)
    there = price_parquet_file(tmp_path / "book.parquet", tmp_path / "there.parquet", errors="mask", client=client,
                               task_rows=20, **CPU)
    assert here.failed == there.failed == 2
    assert (tmp_path / "there.parquet").read_bytes() == (tmp_path / "here.parquet").read_bytes()
    table = pq.read_table(tmp_path / "there.parquet")
    errors = table.column("error").to_pylist()
    assert [k for k, e in enumerate(errors) if e] == [3, 57] and "sigma" in errors[57]
    assert np.isnan(table.column("price").to_numpy()[[3, 57]]).all()


def test_a_bad_row_names_its_file_row_and_leaves_nothing(client, tmp_path):
    options_file(tmp_path / "book.parquet", rows=80, group=10, bad=(57,))
    old = tmp_path / "prices.parquet"
    old.write_bytes(b"an older output")
    for where in (None, client):
        with pytest.raises(trinom.InputError, match=r"row 57: .*sigma") as caught:
            price_parquet_file(tmp_path / "book.parquet", old, client=where, task_rows=10, **CPU)
        assert caught.value.rows == [57]
        assert old.read_bytes() == b"an older output" and leftovers(tmp_path) == []


def test_a_null_cell_of_a_later_row_group_is_named_by_its_file_row(client, tmp_path):
    options_file(tmp_path / "book.parquet", rows=30, group=10)
    table = pq.read_table(tmp_path / "book.parquet")
    strike = table.column("strike").to_pylist()
    strike[24] = None
    table = table.set_column(table.column_names.index("strike"), "strike", pa.array(strike, pa.float64()))
    pq.write_table(table, tmp_path / "nulls.parquet", row_group_size=10)
    with pytest.raises(trinom.InputError, match=r"row 24: .*nulls.parquet: strike is null"):
        price_parquet_file(tmp_path / "nulls.parquet", tmp_path / "prices.parquet", client=client, task_rows=10, **CPU)
    run = price_parquet_file(tmp_path / "nulls.parquet", tmp_path / "prices.parquet", client=client, task_rows=10,
                             errors="mask", **CPU)
    assert run.failed == 1 and "strike is null" in pq.read_table(tmp_path / "prices.parquet")["error"][24].as_py()
    assert leftovers(tmp_path) == []


def test_repeated_ids_are_an_error_before_any_output(client, tmp_path):
    book = trinom.generator.generate("1_RAND", 20, seed=3)
    ids = [f"x{k}" for k in range(20)]
    ids[15] = "x2"
    fields = book.as_dict()
    table = pa.table({"id": ids, **fields}).replace_schema_metadata({parquet.CONVENTION_KEY: b"thesis"})
    pq.write_table(table, tmp_path / "book.parquet", row_group_size=5)
    for where in (None, client):
        with pytest.raises(trinom.InputError, match="id 'x2' is repeated: rows 2 and 15"):
            price_parquet_file(tmp_path / "book.parquet", tmp_path / "prices.parquet", client=where, task_rows=5,
                               **CPU)
        assert not (tmp_path / "prices.parquet").exists() and leftovers(tmp_path) == []


def test_an_engine_that_fails_on_every_worker_leaves_nothing(client, tmp_path):
    options_file(tmp_path / "book.parquet", rows=20, group=5)
    with pytest.raises(Exception, match=r"(?i)target"):
        price_parquet_file(tmp_path / "book.parquet", tmp_path / "prices.parquet", client=client, task_rows=5,
                           backend="futhark", target="no-such-target")
    assert not (tmp_path / "prices.parquet").exists() and leftovers(tmp_path) == []


def test_a_task_lost_with_its_workers_names_its_rows():
    from distributed import KilledWorker

    class Lost:
        status = "error"

        def result(self):
            raise KilledWorker("trinom-part-00001-x", SimpleNamespace(address="tcp://127.0.0.1:1"), allowed_failures=3)

    book = parquet_files._Book(parquet_files.Path("/b.parquet"), "b.parquet", (10, 10, 10), False, None)
    with pytest.raises(RuntimeError, match=r"b\.parquet: rows 10\.\.29 \(row groups 1\.\.2\) were not priced: the Dask "
                       "workers running them kept dying"):
        parquet_files._raise_task_error(Lost(), book, (1, 3), 10)


def test_a_book_no_worker_sees_is_named_with_the_worker(client, tmp_path):
    staging = tmp_path / "staging"
    staging.mkdir()
    future = client.submit(parquet_files.price_part, str(tmp_path / "gone.parquet"), str(staging), 0, [0], 0, None,
                           {"errors": "raise"}, pure=False)
    with pytest.raises(trinom.InputError, match=r"gone.parquet: no such file on Dask worker tcp://") as caught:
        future.result()
    assert "a file system they share" in str(caught.value)
    options_file(tmp_path / "book.parquet", rows=4, group=4)
    future = client.submit(parquet_files.price_part, str(tmp_path / "book.parquet"), str(tmp_path / "nowhere"), 0,
                           [0], 0, None, {"errors": "raise"}, pure=False)
    with pytest.raises(trinom.InputError, match=r"the staging folder .*nowhere beside the output does not exist"):
        future.result()


@pytest.mark.parametrize("form", ["file", "folder"])
def test_a_worker_killed_mid_run_loses_nothing(client, tmp_path, form):
    options_file(tmp_path / "book.parquet", rows=2400, group=100, seed=4)
    price_parquet_file(tmp_path / "book.parquet", tmp_path / "here.parquet", **CPU)
    client.wait_for_workers(2)
    there = tmp_path / "there.parquet" if form == "file" else f"{tmp_path}/there/"
    # 0.05 s into a task: pricing, or writing its part; the task runs again elsewhere
    out, killed = run_killing_a_worker(
        client, lambda: price_parquet_file(tmp_path / "book.parquet", there, client=client, task_rows=100, **CPU),
        task_prefix="trinom-part-", settle=0.05)
    assert "error" not in out, out.get("error")
    assert out["result"].rows == 2400 and out["result"].parts == 24
    if form == "file":
        assert (tmp_path / "there.parquet").read_bytes() == (tmp_path / "here.parquet").read_bytes()
    else:  # only the parts: a task killed while writing leaves no temporary file in the folder
        assert sorted(p.name for p in (tmp_path / "there").iterdir()) == [f"part-{k:05d}.parquet" for k in range(24)]
        assert pq.read_table(there).equals(pq.read_table(tmp_path / "here.parquet"))
    assert leftovers(tmp_path) == []
    client.wait_for_workers(2)
    assert killed not in client.run(os.getpid).values()  # the worker was killed, and replaced


def test_a_folder_of_parts_reads_back_as_the_file(client, tmp_path):
    options_file(tmp_path / "book.parquet", rows=90, group=10)
    price_parquet_file(tmp_path / "book.parquet", tmp_path / "here.parquet", **CPU)
    want = pq.read_table(tmp_path / "here.parquet")
    folder = tmp_path / "prices"
    run = price_parquet_file(tmp_path / "book.parquet", f"{folder}/", client=client, task_rows=20, **CPU)
    assert run.parts == 5 and sorted(p.name for p in folder.iterdir()) == [f"part-{k:05d}.parquet" for k in range(5)]
    assert pq.read_table(folder).equals(want)
    pd = pytest.importorskip("pandas")
    assert pd.read_parquet(folder).equals(pd.read_parquet(tmp_path / "here.parquet"))
    assert oct(folder.stat().st_mode & 0o777) != oct(0o700)  # an ordinary folder, not mkdtemp's private one
    run = price_parquet_file(tmp_path / "book.parquet", folder, client=client, task_rows=40, **CPU)  # replaced whole
    assert run.parts == 3 and sorted(p.name for p in folder.iterdir()) == [f"part-{k:05d}.parquet" for k in range(3)]
    assert pq.read_table(folder).equals(want)
    price_parquet_file(tmp_path / "book.parquet", folder, **CPU)  # one process: one part
    assert [p.name for p in folder.iterdir()] == ["part-00000.parquet"] and pq.read_table(folder).equals(want)
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(trinom.InputError, match=r"the folder holds 'notes\.txt'"):
        price_parquet_file(tmp_path / "book.parquet", folder, client=client, **CPU)
    assert (folder / "notes.txt").read_text() == "mine" and leftovers(tmp_path) == []


def test_a_failed_run_leaves_an_older_folder_as_it_was(client, tmp_path):
    options_file(tmp_path / "good.parquet", rows=20, group=5)
    options_file(tmp_path / "bad.parquet", rows=20, group=5, bad=(12,))
    folder = tmp_path / "prices"
    price_parquet_file(tmp_path / "good.parquet", f"{folder}/", client=client, task_rows=5, **CPU)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(trinom.InputError, match="row 12"):
        price_parquet_file(tmp_path / "bad.parquet", folder, client=client, task_rows=5, **CPU)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before and leftovers(tmp_path) == []


@pytest.mark.parametrize("form", ["file", "folder"])
def test_ctrl_c_mid_run_leaves_nothing(client, tmp_path, form):
    """A KeyboardInterrupt (here from the progress callback, after the first part) cancels the tasks and removes the
    temporary file and the staging folder; the older output stays."""
    options_file(tmp_path / "book.parquet", rows=60, group=10)
    out = tmp_path / "prices.parquet" if form == "file" else tmp_path / "prices"
    price_parquet_file(tmp_path / "book.parquet", f"{out}/" if form == "folder" else out, task_rows=30, **CPU)
    before = out.read_bytes() if form == "file" else (out / "part-00000.parquet").read_bytes()

    def interrupt(done: float, total: float) -> None:
        raise KeyboardInterrupt

    for where in (None, client):
        with pytest.raises(KeyboardInterrupt):
            price_parquet_file(tmp_path / "book.parquet", out, client=where, task_rows=10, progress=interrupt, **CPU)
        after = out.read_bytes() if form == "file" else (out / "part-00000.parquet").read_bytes()
        assert after == before and leftovers(tmp_path) == []
        if form == "folder":
            assert [p.name for p in out.iterdir()] == ["part-00000.parquet"]


def test_an_empty_book_gives_an_empty_table(client, tmp_path):
    options_file(tmp_path / "book.parquet", rows=0)
    for name, where in (("here", None), ("there", client)):
        run = price_parquet_file(tmp_path / "book.parquet", tmp_path / f"{name}.parquet", client=where, **CPU)
        table = pq.read_table(tmp_path / f"{name}.parquet")
        assert run.rows == 0 and table.num_rows == 0 and table.column_names == ["id", "price", "clean", "accrued",
                                                                                 "error"]


def test_bad_arguments_and_outputs_before_any_work(tmp_path):
    options_file(tmp_path / "book.parquet", rows=4, group=4)
    with pytest.raises(trinom.InputError, match=r"prices\.csv: Parquet prices are written as \.parquet or \.pq"):
        price_parquet_file(tmp_path / "book.parquet", tmp_path / "prices.csv", **CPU)
    with pytest.raises(trinom.InputError, match="is an input of this command"):
        price_parquet_file(tmp_path / "book.parquet", tmp_path / "book.parquet", **CPU)
    with pytest.raises(trinom.InputError, match="holds the input"):
        price_parquet_file(tmp_path / "book.parquet", f"{tmp_path}/", **CPU)
    with pytest.raises(trinom.InputError, match="no such file"):
        price_parquet_file(tmp_path / "none.parquet", tmp_path / "prices.parquet", **CPU)
    with pytest.raises(TypeError, match="client must be a Dask"):
        price_parquet_file(tmp_path / "book.parquet", tmp_path / "prices.parquet", client="tcp://x:1", **CPU)
    with pytest.raises(ValueError, match="errors must be"):
        price_parquet_file(tmp_path / "book.parquet", tmp_path / "prices.parquet", errors="skip", **CPU)
    pq.write_table(pa.table({"strike": [1.0], "colour": ["red"]}), tmp_path / "odd.parquet")
    with pytest.raises(trinom.InputError, match="unknown column 'colour'"):
        price_parquet_file(tmp_path / "odd.parquet", tmp_path / "prices.parquet", **CPU)
    assert not (tmp_path / "prices.parquet").exists() and leftovers(tmp_path) == []


def test_the_cli_prices_a_parquet_book_on_a_local_cluster(tmp_path, capsys):
    book = tmp_path / "book.parquet"
    assert main(["generate", "1_RAND", "--size", "40", "--seed", "3", "--out", str(book)]) == 0
    engine = ["--backend", "futhark", "--target", "c"]
    assert main(["price", str(book), *engine, "--out", str(tmp_path / "here.parquet")]) == 0
    assert "trinom: 40 rows priced in" in capsys.readouterr().err
    assert main(["price", str(book), *engine, "--dask", "local:2", "--out", str(tmp_path / "there.parquet")]) == 0
    err = capsys.readouterr().err
    assert "2 Dask workers here" in err and "trinom: 40 rows priced in" in err and "there.parquet" in err
    assert (tmp_path / "there.parquet").read_bytes() == (tmp_path / "here.parquet").read_bytes()
    assert main(["price", str(book), *engine, "--out", f"{tmp_path}/parts/"]) == 0
    assert pq.read_table(tmp_path / "parts").equals(pq.read_table(tmp_path / "here.parquet"))
    assert f"-> {tmp_path}/parts/" in capsys.readouterr().err
    csv = tmp_path / "book.csv"
    assert main(["generate", "1_RAND", "--size", "4", "--out", str(csv)]) == 0
    assert main(["price", str(csv), *engine, "--out", f"{tmp_path}/more/"]) == 2
    assert "a folder of Parquet parts is written for a Parquet book" in capsys.readouterr().err
    assert main(["price", str(csv), *engine, "--out", str(tmp_path / "parts")]) == 2
    assert "prices are written as .out, .csv, .parquet or .pq" in capsys.readouterr().err  # as before: no folder


def test_the_cli_help_names_both_forms(capsys):
    with pytest.raises(SystemExit):
        main(["price", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "part-00000.parquet" in text and "read and written by the workers" in text
