"""A book placed on Dask workers once (issue 27): a real local cluster of two worker processes.

The placed book gives one process's bits; a repeated call, a scenario grid, a risk run and an OAS search on it
send no book (no scatter, no large task graph); a grid split by scenarios gives the same bits as one split by
trees; a worker killed mid-run loses nothing (its shards are placed again from the caller's copy).
"""

from __future__ import annotations

import os
import pickle
import warnings

import numpy as np
import pytest
import trinom
from killed_worker import run_killing_a_worker
from trinom.bonds.generator import generate_bonds
from trinom.distributed import placement
from trinom.lattice.lowering import lower_options
from trinom.scenarios import CurveShift, SigmaShift

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
CPU = {"backend": "futhark", "target": "c"}
#: Task graphs above this size warn ("Sending large graph"); a placed book's calls stay far below it.
SMALL_GRAPH = "64kB"



def placed_keys(client) -> list[str]:
    """The placed books held by the workers (scattered keys are named Book-...)."""
    held = client.run(lambda dask_worker: sorted(k for k in dask_worker.data if str(k).startswith("Book-")))
    return sorted(k for keys in held.values() for k in keys)


def no_large_graph():
    """A context in which a task graph above SMALL_GRAPH is an error (Dask's own warning)."""
    config = dask.config.set({"distributed.admin.large-graph-warning-threshold": SMALL_GRAPH})
    record = warnings.catch_warnings()

    class Both:
        def __enter__(self):
            config.__enter__()
            record.__enter__()
            warnings.filterwarnings("error", message="Sending large graph")

        def __exit__(self, *exc):
            record.__exit__(*exc)
            config.__exit__(*exc)

    return Both()


def test_a_placed_book_gives_one_process_bits_and_is_sent_once(client):
    book = trinom.generator.generate("4_SKEWED", 4000, skew_percent=5.0, seed=11)
    here = trinom.price(book, **CPU)
    assert len(pickle.dumps(lower_options(book))) > 8 * 64_000  # the book would be a large graph
    with no_large_graph():
        placed = trinom.distribute(book, client=client)
        sent, keys = placed.scatters, placed_keys(client)
        assert sent == 2 and placed.bytes_sent > 0  # one shard per worker thread
        first = trinom.price(placed, **CPU)
        again = trinom.price(book, client=client, **CPU)  # the instruments find their placement
        grid = trinom.price(placed, scenarios=[CurveShift(-1e-4), None, CurveShift(1e-4)], **CPU)
    np.testing.assert_array_equal(first.price, here.price)
    np.testing.assert_array_equal(again.price, here.price)
    np.testing.assert_array_equal(grid.price[1], here.price)
    np.testing.assert_array_equal(grid.price, trinom.price(book, scenarios=[CurveShift(-1e-4), None,
                                                                           CurveShift(1e-4)], **CPU).price)
    assert "on dask (2 tasks by trees)" in first.engine
    assert placed.scatters == sent and placed_keys(client) == keys  # nothing sent again, nothing dropped
    assert placement.placed_book(client, book) is placed


def test_calls_go_straight_to_their_workers_and_tasks_stand_in(client, monkeypatch):
    """A call on a placed book goes straight to the worker holding its shard (trinom.worker_calls: no task); a call
    whose worker does not hold the data comes back MISSING (and runs as a task); an error raised on the worker is
    raised here; with DIRECT_CALLS off every call is a task, the same bits."""
    from trinom import worker_calls

    book = trinom.generator.generate("4_SKEWED", 300, skew_percent=5.0, seed=4)
    here = trinom.price(book, **CPU).price
    placed = trinom.distribute(book, client=client)
    direct = placed.direct_calls
    np.testing.assert_array_equal(trinom.price(placed, **CPU).price, here)
    assert placed.direct_calls == direct + 2
    calls = worker_calls.for_client(client)
    assert all(answer is worker_calls.MISSING for answer in calls.run([(w, "no-such-key", len, ()) for w in client.nthreads()]))
    shard = next(iter(placed.placements.values())).shards[0]
    assert calls.run([(shard.worker, shard.future.key, len, ())]) == [len(shard.trees)]
    with pytest.raises(TypeError):
        calls.run([(shard.worker, shard.future.key, int, ())])  # int(a book): the worker's error, raised here
    monkeypatch.setattr(placement, "DIRECT_CALLS", False)
    np.testing.assert_array_equal(trinom.price(placed, **CPU).price, here)
    assert placed.direct_calls == direct + 2


def test_the_shards_are_balanced_over_the_workers(client):
    book = trinom.generator.generate("4_SKEWED", 2000, skew_percent=5.0, seed=3)
    placed = trinom.distribute(book, client=client, shards=8)
    shards = next(iter(placed.placements.values())).shards
    assert len(shards) == 8 and len({s.worker for s in shards}) == 2
    loads = {}
    for s in shards:
        loads[s.worker] = loads.get(s.worker, 0.0) + s.work
    assert max(loads.values()) <= 1.05 * min(loads.values())
    trees = np.sort(np.concatenate([s.trees for s in shards]))
    assert trees.tolist() == list(range(2000))
    np.testing.assert_array_equal(trinom.price(placed, **CPU).price, trinom.price(book, **CPU).price)


def test_a_grid_split_by_scenarios_gives_the_bits_of_one_split_by_trees(client):
    bonds, curves = generate_bonds("R1", 30, seed=2)
    scenarios = [CurveShift(1e-4 * k) for k in range(-3, 4)] + [SigmaShift(1e-3)]
    here = trinom.price(bonds, curves, scenarios=scenarios, **CPU)
    placed = trinom.distribute(bonds, curves, client=client)
    sent = placed.scatters
    by_trees = trinom.price(placed, curves, scenarios=scenarios, split="trees", **CPU)
    by_scenarios = trinom.price(placed, curves, scenarios=scenarios, split="scenarios", **CPU)
    assert "by trees" in by_trees.engine and "(2 tasks by scenarios)" in by_scenarios.engine
    np.testing.assert_array_equal(by_trees.price, here.price)
    np.testing.assert_array_equal(by_scenarios.price, here.price)
    np.testing.assert_array_equal(by_scenarios.clean, here.clean)
    assert placed.scatters == sent + 2  # the whole book, once on each worker
    trinom.price(placed, curves, scenarios=scenarios, split="scenarios", **CPU)
    assert placed.scatters == sent + 2  # and kept there


def test_auto_splits_a_book_of_few_large_trees_by_scenarios(client):
    book = trinom.generator.generate("4_SKEWED", 3, skew_percent=34.0, seed=5)  # one large tree, two small
    scenarios = [CurveShift(1e-4 * k) for k in range(6)]
    out = trinom.price(book, client=client, scenarios=scenarios, **CPU)
    assert "by scenarios" in out.engine
    np.testing.assert_array_equal(out.price, trinom.price(book, scenarios=scenarios, **CPU).price)
    assert placement.choose_split([5.0, 5.0], 6) == "trees"


def test_auto_splits_a_bond_grid_by_scenarios_on_gpus(client, monkeypatch):
    """A bond's scenarios run one after another in its GPU warp: on a GPU target a balanced bond book's grid goes by
    scenarios (each worker every tree, half the scenarios), on a CPU by trees; the same prices as one process."""
    bonds, curves = generate_bonds("R1", 40, seed=7)
    scenarios = [CurveShift(1e-4 * k) for k in range(4)]
    want = trinom.price(bonds, curves, scenarios=scenarios, **CPU).price
    out = trinom.price(bonds, curves, client=client, scenarios=scenarios, **CPU)
    assert "by trees" in out.engine
    np.testing.assert_array_equal(out.price, want)
    monkeypatch.setattr(placement, "GPU_TARGETS", ("c",))  # the c target taken for a GPU's
    out = trinom.price(bonds, curves, client=client, scenarios=scenarios, **CPU)
    assert "by scenarios" in out.engine
    np.testing.assert_array_equal(out.price, want)
    assert placement.choose_split([5.0, 5.0], 6, bonds=True) == "scenarios"


def test_risk_on_the_placed_book_sends_nothing_again(client):
    """A row that vega's sigma move cannot take is priced from the placed shards without it (the tasks get
    the trees to keep), as in one process; nothing is scattered after the placement."""
    book = trinom.generator.generate("uniform", 12, seed=3)
    fields = book.as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][2] = 5e-5  # below the vega move: its vega is one-sided
    book = trinom.Portfolio(**fields)
    here = trinom.risk(book, measures=("dv01", "vega", "krd"), **CPU)
    placed = trinom.distribute(book, client=client)
    before = placement.scatter_count()
    with no_large_graph():
        there = trinom.risk(placed, measures=("dv01", "vega", "krd"), **CPU)
        again = trinom.risk(book, measures=("dv01", "vega", "krd"), client=client, **CPU)
    assert (there.error == "").all()
    np.testing.assert_array_equal(there.value.to_numpy(), here.value.to_numpy())
    np.testing.assert_array_equal(again.value.to_numpy(), here.value.to_numpy())
    assert placement.scatter_count() == before  # the row repriced without vega's down move too: from its shard


def test_risk_on_a_cluster_builds_its_table_while_pricing(client, monkeypatch):
    """On a cluster the table's columns that need no price are built while the workers price (risk._frame); the
    table is one process's, bit for bit, on bonds of several curves (key rates per curve) with a bad row."""
    import sys

    import pandas as pd

    risk_module = sys.modules["trinom.analytics.risk"]  # trinom.risk is the function
    bonds, curves = generate_bonds("R1", 60, seed=3)
    fields = bonds.as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][5] = -1.0
    bonds = type(bonds)(**fields)
    here = trinom.risk(bonds, curves, errors="mask", **CPU)
    used = []
    table = risk_module._table
    monkeypatch.setattr(risk_module, "_table", lambda *a, **k: used.append(a[-1] is not None) or table(*a, **k))
    there = trinom.risk(bonds, curves, errors="mask", client=client, **CPU)
    assert used == [True] and len(set(here["factor"])) > 8
    pd.testing.assert_frame_equal(there, here, check_exact=True)


def test_bad_rows_and_a_new_curve_name(client):
    fields = trinom.generator.generate("4_SKEWED", 40, skew_percent=5.0, seed=9).as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][[3, 17]] = -1.0
    book = trinom.Portfolio(**fields)
    there = trinom.price(book, client=client, errors="mask", **CPU)
    here = trinom.price(book, errors="mask", **CPU)
    np.testing.assert_array_equal(there.price, here.price)
    assert there.error.tolist() == here.error.tolist()
    placed = placement.placed_book(client, book)
    sent = placed.scatters
    with pytest.raises(trinom.InputError, match="row 3"):
        trinom.price(placed, **CPU)
    assert placed.scatters == sent
    named = {"EUR": trinom.YieldCurve.thesis()}  # another curve name: the trees are lowered for it and placed anew
    np.testing.assert_array_equal(trinom.price(placed, named, errors="mask", **CPU).price, here.price)
    assert placed.scatters > sent


def test_a_placed_portfolio_still_pickles_and_another_client_is_refused(client):
    book = trinom.generator.generate("1_RAND", 6, seed=2)
    placed = trinom.distribute(book, client=client)
    copy = pickle.loads(pickle.dumps(book))
    np.testing.assert_array_equal(trinom.price(copy, **CPU).price, trinom.price(placed, **CPU).price)
    with pytest.raises(TypeError, match="futures"):
        pickle.dumps(placed)
    with pytest.raises(ValueError, match="another client"):
        trinom.price(placed, client=object(), **CPU)
    placed.release()
    assert not placed.placements
    np.testing.assert_array_equal(trinom.price(placed, **CPU).price, trinom.price(book, **CPU).price)


def test_a_worker_killed_mid_run_loses_nothing(client):
    """The killed worker's shards are scattered again from the caller's lowered copy; every row comes back."""
    book = trinom.generator.generate("1_RAND", 60, seed=5)
    want = trinom.price(book, backend="reference")
    placed = trinom.distribute(book, client=client, shards=12)
    sent = placed.scatters
    out, _pid = run_killing_a_worker(client, lambda: trinom.price(placed, backend="reference"))
    assert "result" in out and (out["result"].error == "").all()
    # the NumPy reference rounds its last bits by batch (it vectorises over a shard's options): 1e-12
    np.testing.assert_allclose(out["result"].price, want.price, rtol=0, atol=1e-12)
    assert placed.scatters > sent  # the lost shards, placed again
    client.wait_for_workers(2)
    np.testing.assert_allclose(trinom.price(placed, backend="reference").price, want.price, rtol=0, atol=1e-12)


def test_an_oas_search_on_the_placed_bonds(client):
    """Every pricing of the batched search runs on the placed shards: one process's spreads, nothing resent."""
    bonds, curves = generate_bonds("S1", 24, seed=7)
    market = trinom.price(bonds, curves, **CPU).clean + np.linspace(-2.0, 2.0, 24)
    here = trinom.oas(bonds, curves, market, **CPU)
    placed = trinom.distribute(bonds, curves, client=client, shards=3)
    before = placement.scatter_count()
    with no_large_graph():
        there = trinom.oas(placed, curves, market, **CPU)
        again = trinom.oas(bonds, curves, market, client=client, **CPU)
    assert placement.scatter_count() == before
    assert (there.status == "converged").all()
    np.testing.assert_array_equal(there.oas, here.oas)
    np.testing.assert_array_equal(there.iterations, here.iterations)
    np.testing.assert_array_equal(again.oas, here.oas)


def test_the_engine_search_on_the_placed_shards(monkeypatch):
    """An engine that searches spreads itself (cuda) searches each placed shard in one task; the rows get their
    own solutions back. Checked on a threaded cluster with the reference engine given a stand-in search."""
    from trinom import engines
    from trinom.engines.engine import SEARCH_OUTCOMES, SpreadSolution

    engine = type(engines.get("reference"))

    def solve_spreads(self, book, market, goal, limits, **settings):  # a stand-in: a function of each tree alone
        done = np.isfinite(goal)
        return SpreadSolution(np.where(done, goal / 100.0 + book.a, np.nan), np.where(done, goal, np.nan),
                              np.where(done, book.term_steps, 0).astype(np.int64),
                              np.where(done, SEARCH_OUTCOMES.index("converged"), SEARCH_OUTCOMES.index("skipped")))

    monkeypatch.setattr(engine, "solves_spreads", lambda self, book: True)
    monkeypatch.setattr(engine, "solve_spreads", solve_spreads)
    fields_bonds, curves = generate_bonds("S1", 30, seed=3)
    fields = fields_bonds.as_dict()
    fields["sigma"] = np.asarray(fields["sigma"], dtype=np.float64).copy()
    fields["sigma"][[4, 21]] = -1.0  # bad rows: skipped, their messages kept
    bonds = trinom.BondPortfolio(**fields)
    market = np.linspace(80.0, 120.0, 30)
    here = trinom.oas(bonds, curves, market, backend="reference", errors="mask", search="engine")
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=False, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as threads:
        there = trinom.oas(bonds, curves, market, backend="reference", errors="mask", search="engine", client=threads)
    np.testing.assert_array_equal(there.oas, here.oas)
    np.testing.assert_array_equal(there.iterations, here.iterations)
    assert there.status.tolist() == here.status.tolist() and "sigma" in there.status[21]


def test_a_large_result_comes_back_through_shared_memory(client, monkeypatch):
    """Workers on the caller's host write their parts of a large result straight into it (trinom.shared_results):
    the same bits as one process, for a single pricing and for a grid split either way, no file left behind."""
    from trinom import shared_results

    if shared_results.shared_result((1, 1), np.float64, minimum=0) is None:
        pytest.skip("no shared memory (/dev/shm) on this machine")
    monkeypatch.setattr(shared_results, "SHARED_RESULT_BYTES", 0)  # every result, however small
    book = trinom.generator.generate("4_SKEWED", 600, skew_percent=5.0, seed=13)
    scenarios = [CurveShift(1e-4 * k) for k in range(-2, 3)]
    placed = trinom.distribute(book, client=client)
    before = set(os.listdir(shared_results.SHARED_MEMORY_DIR))
    single = trinom.price(placed, **CPU)
    grid = trinom.price(placed, scenarios=scenarios, **CPU)
    by_scenarios = trinom.price(placed, scenarios=scenarios, split="scenarios", **CPU)
    # Shards dealt by work (a skewed book): a single pricing sends its prices back (their columns, an index array,
    # would be as large), the grids' two tasks each write theirs
    assert placed.shared_parts == 4
    uniform = trinom.generator.generate("uniform", 200, seed=2)  # runs of equal trees: every call writes
    spans = trinom.distribute(uniform, client=client)
    np.testing.assert_array_equal(trinom.price(spans, **CPU).price, trinom.price(uniform, **CPU).price)
    assert spans.shared_parts == 2
    np.testing.assert_array_equal(single.price, trinom.price(book, **CPU).price)
    np.testing.assert_array_equal(grid.price, trinom.price(book, scenarios=scenarios, **CPU).price)
    np.testing.assert_array_equal(by_scenarios.price, grid.price)
    # A file is kept for the next call of its size once its array is gone: written into again, no new file
    kept = set(os.listdir(shared_results.SHARED_MEMORY_DIR)) - before
    assert kept and all(name.startswith(f"trinom-{os.getpid()}-") for name in kept)
    del grid
    again = trinom.price(placed, scenarios=scenarios, **CPU)
    np.testing.assert_array_equal(again.price, by_scenarios.price)
    assert set(os.listdir(shared_results.SHARED_MEMORY_DIR)) - before <= kept
    del single, by_scenarios, again
    shared_results.release()  # the free files removed
    assert set(os.listdir(shared_results.SHARED_MEMORY_DIR)) <= before


def test_a_worker_without_the_shared_file_sends_its_part_back(tmp_path):
    """A worker on another host does not find the file: its part travels back (write_part returns it)."""
    from trinom import shared_results

    out = shared_results.shared_result((2, 4), np.float64, minimum=0, directory=str(tmp_path))
    assert out is not None
    part = np.arange(4.0).reshape(2, 2)
    elsewhere = shared_results.Destination(str(tmp_path / "missing"), (2, 4), "<f8", (0, 2), (0, 2))
    assert shared_results.write_part(elsewhere, part) is part
    assert shared_results.write_part(out.destination(slice(0, 2), slice(2, 4)), part) is None
    assert shared_results.write_part(None, part) is part
    np.testing.assert_array_equal(out.close(), [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 2.0, 3.0]])
    del out
    shared_results.release()
    assert not list(tmp_path.iterdir())
    assert shared_results.shared_result((2, 4), np.float64, directory=str(tmp_path)) is None  # too small to pay


def test_the_workers_are_set_up_for_pricing_once(client):
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_ and OMP_NUM_THREADS=1; a placement sets malloc's
    thresholds (glibc) and pyarrow's threads on every worker (trinom.worker_tuning), once a process."""
    from trinom import worker_tuning

    trinom.distribute(trinom.generator.generate("uniform", 20, seed=4), client=client)
    done = worker_tuning.tune_workers(client)
    assert sorted(done) == sorted(client.nthreads())
    for state in done.values():
        assert state["malloc"] is True  # Linux with glibc, as CI and the GPU machines are
        assert isinstance(state["arrow_threads"], int) and state["arrow_threads"] >= 1
    assert set(worker_tuning.workers_per_host(client).values()) == {2}  # both workers on this host
