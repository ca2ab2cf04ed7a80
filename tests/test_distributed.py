"""trinom on a Dask cluster (issue 15): a real local cluster of two worker processes.

The same engine gives the same bits in one process and sharded over workers; every row comes back in input
order with its price or its error; a worker killed in the middle of a run loses nothing.
"""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from killed_worker import run_killing_a_worker
from trinom.bonds.generator import generate_bonds
from trinom.distributed import placement as distributed_module
from trinom.distributed import price_chunk, shards_by_work
from trinom.lattice.lowering import lower_options

distributed = pytest.importorskip("distributed")
CPU = {"backend": "futhark", "target": "c"}



def skewed_book(size: int = 120) -> trinom.Portfolio:
    return trinom.generator.generate("4_SKEWED", size, skew_percent=5.0, seed=11)


def test_workers_give_the_bits_of_one_process_on_a_skewed_book(client):
    book = skewed_book()
    here = trinom.price(book, **CPU)
    there = trinom.price(book, client=client, **CPU)
    np.testing.assert_array_equal(there.price, here.price)
    assert "on dask" in there.engine and (there.error == "").all()


def test_a_book_of_small_trees_goes_in_runs_of_consecutive_trees(client):
    """Where every tree is a small part of a shard the shards are views of the book (nothing copied), of about
    equal work; the bits are still one process's."""
    book = trinom.generator.generate("0_UNIFORM", 2000, seed=5)
    lowered = lower_options(book)
    shards = distributed_module._shards(lowered, 4)
    assert np.concatenate([trees for trees, _ in shards]).tolist() == list(range(2000))
    assert all(np.shares_memory(part.a, lowered.a) for _, part in shards)
    loads = np.array([lowered.work()[trees].sum() for trees, _ in shards])
    assert loads.max() <= 1.05 * loads.mean()
    np.testing.assert_array_equal(trinom.price(book, client=client, shards=4, **CPU).price,
                                  trinom.price(book, **CPU).price)


def test_bonds_and_scenarios_on_workers(client):
    from trinom.scenarios import CurveShift, SigmaShift

    bonds, curves = generate_bonds("S1", 40, seed=4)
    scenarios = [None, CurveShift(1e-4), SigmaShift(1e-4)]
    here = trinom.price(bonds, curves, scenarios=scenarios, **CPU)
    there = trinom.price(bonds, curves, scenarios=scenarios, client=client, shards=4, **CPU)
    # one bond is 84% of the book's work: the grid is split by scenarios, one part per worker
    assert "(2 tasks by scenarios)" in there.engine
    np.testing.assert_array_equal(there.price, here.price)
    np.testing.assert_array_equal(there.clean, here.clean)
    by_trees = trinom.price(bonds, curves, scenarios=scenarios, client=client, shards=4, split="trees", **CPU)
    assert "(4 tasks by trees)" in by_trees.engine
    np.testing.assert_array_equal(by_trees.price, here.price)


def test_bad_rows_keep_their_place_and_their_message(client):
    fields = skewed_book(30).as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][[3, 17]] = -1.0
    book = trinom.Portfolio(**fields)
    there = trinom.price(book, client=client, errors="mask", **CPU)
    here = trinom.price(book, errors="mask", **CPU)
    np.testing.assert_array_equal(there.price, here.price)
    assert there.error.tolist() == here.error.tolist() and "sigma" in there.error[17]
    with pytest.raises(trinom.InputError, match="row 3"):
        trinom.price(book, client=client, **CPU)


def test_a_worker_killed_mid_run_loses_nothing(client):
    book = trinom.generator.generate("1_RAND", 60, seed=5)
    want = trinom.price(book, backend="reference")
    out, _pid = run_killing_a_worker(client, lambda: trinom.price(book, backend="reference", client=client, shards=12))
    assert "result" in out and (out["result"].error == "").all()
    # the NumPy reference rounds its last bits by batch (it vectorises over a shard's options): 1e-12
    np.testing.assert_allclose(out["result"].price, want.price, rtol=0, atol=1e-12)


def test_the_chunk_function_takes_arrow_and_numbers_rows():
    pyarrow = pytest.importorskip("pyarrow")
    book = skewed_book(8)
    table = pyarrow.table(book.as_dict())  # a table's columns follow the standard convention
    out = price_chunk(table, first_row=100, **CPU)
    assert out["row"].tolist() == list(range(100, 108))
    standard = trinom.Portfolio(**book.as_dict())
    np.testing.assert_array_equal(out["price"], trinom.price(standard, errors="mask", **CPU).price)
    assert np.isfinite(out["price"]).any()


def test_shards_balance_a_skewed_book():
    work = lower_options(skewed_book(400)).work()
    groups = shards_by_work(work, 8)
    loads = np.array([work[g].sum() for g in groups])
    assert sorted(np.concatenate(groups).tolist()) == list(range(400))
    assert loads.max() <= 1.25 * loads.mean()


def test_cli_price_on_a_local_cluster(tmp_path, capsys):
    from trinom.cli import main

    book = tmp_path / "book.csv"
    assert main(["generate", "1_RAND", "--size", "12", "--seed", "3", "--out", str(book)]) == 0
    here, there = tmp_path / "here.csv", tmp_path / "there.csv"
    assert main(["price", str(book), "--backend", "futhark", "--target", "c", "--out", str(here)]) == 0
    assert main(["price", str(book), "--backend", "futhark", "--target", "c", "--dask", "local:2",
                 "--out", str(there)]) == 0
    assert here.read_text() == there.read_text()
    assert main(["price", str(book), "--dask", "local:zero"]) != 0
    assert "local:N needs a number of workers" in capsys.readouterr().err


def test_a_lone_sigma_or_spread_move_on_workers(client):
    """Issue 24: a single SigmaShift or SpreadShift scenario is applied on the cluster as in one process."""
    from trinom.scenarios import SigmaShift, SpreadShift

    bonds, curves = generate_bonds("S1", 12, seed=4)
    base = trinom.price(bonds, curves, **CPU).price
    for move in (SigmaShift(0.01), SpreadShift(1.0)):
        here = trinom.price(bonds, curves, scenarios=[move], **CPU)
        there = trinom.price(bonds, curves, scenarios=[move], client=client, shards=3, **CPU)
        assert there.price.shape == (1, 12) and not np.allclose(there.price[0], base, rtol=1e-9)
        np.testing.assert_array_equal(there.price, here.price)


def test_risk_on_workers_equals_one_process(client):
    """trinom.risk(..., client=) (vega on the one-sided rows included) is one process's table."""
    book = trinom.generator.generate("uniform", 6, seed=3)
    fields = book.as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][2] = 5e-5  # below the vega move: its vega is one-sided, its other measures as usual
    book = trinom.Portfolio(**fields)
    here = trinom.risk(book, measures=("dv01", "vega"), **CPU)
    there = trinom.risk(book, measures=("dv01", "vega"), client=client, **CPU)
    assert (there.error == "").all() and there.value.notna().all()
    np.testing.assert_array_equal(there.value.to_numpy(), here.value.to_numpy())
