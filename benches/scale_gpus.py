"""Scaling over Dask workers (issue 27): one process against 1 and N workers, a book placed once.

The table of issue 27, row by row: ``--options`` 1_RAND options priced once; the same options in
``--shifts`` parallel curve shifts; ``--bonds`` R1 bonds in ``--shifts`` parallel shifts; the same bonds'
``trinom.risk`` table (every default measure); with ``--parquet N`` (row 5), N 1_RAND options as a Parquet
book (row groups of ``--row-group`` rows, written once to a temporary folder) priced file to file
(``trinom.parquet_files.price_parquet_file``: here one row group at a time; on the cluster the workers read
their own row groups and write their own parts, stitched into one file by this process). Columns: one
process (``trinom.price`` here), one Dask worker, and ``--workers`` Dask workers, each the median of
``--rounds`` runs after a warm-up run (the warm-up places the book on the workers: ``trinom.distribute``; the
timed runs send no book, which the bench checks with :attr:`trinom.DistributedBook.scatters`). Every cluster
run must give one process's prices, bit for bit (the risk table's values too; the Parquet row's output file
byte for byte).

Workers: with ``--gpus`` (a list of GPU ids, e.g. ``0,1``), ``dask_cuda.LocalCUDACluster`` with one worker per
GPU (``CUDA_VISIBLE_DEVICES`` set per worker; each sees its GPU as device 0; the 1-worker column uses the
first GPU); else a ``distributed.LocalCluster`` of one-thread worker processes. One process runs on device 0
(``--gpus``) or one core (the ``c`` target).

    # the issue's table on a 2-GPU host (pip install -r requirements-gpu.txt)
    python3 benches/scale_gpus.py --backend cuda --gpus 0,1 --out benches/gpu-scale-2.json
    # issue 27 item 4 alone: a 10M-option Parquet book, file to file
    python3 benches/scale_gpus.py --backend cuda --gpus 0,1 --parquet 10000000 --only 5 --out benches/gpu-parquet-2.json
    # a reduced table on a CPU: 2 worker processes, the futhark engine on one core each
    python3 benches/scale_gpus.py --backend futhark --target c --workers 2 --options 500 --bonds 1000 \\
        --out benches/cpu-scale.json
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import trinom
from trinom import parquet
from trinom.bonds.generator import generate_bonds
from trinom.parquet_files import price_parquet_file
from trinom.scenarios import CurveShift


def parallel_shifts(count: int) -> list[CurveShift]:
    """``count`` parallel shifts of 1 bp steps around the curve (-10 bp .. +9 bp for 20)."""
    return [CurveShift(1e-4 * (k - count // 2)) for k in range(count)]


def rows(args: argparse.Namespace, scratch: str = "") -> list[tuple[str, Callable[..., Any]]]:
    """The table's rows: a name, and a call pricing the row's work (``client``: None for one process). The books
    are made at their rows' first call; the Parquet row (``--parquet``) writes its book and outputs in
    ``scratch``, and its call gives its output file (see :func:`same`)."""
    engine: dict[str, Any] = {"backend": args.backend, "precision": args.precision}
    if args.target:
        engine["target"] = args.target
    options = functools.cache(lambda: trinom.generator.generate("1_RAND", args.options, seed=1))
    bonds = functools.cache(lambda: generate_bonds("R1", args.bonds, seed=1))
    shifts = parallel_shifts(args.shifts)

    def placed(book: Any, client: Any, market: Any = None) -> Any:
        return book if client is None else trinom.distribute(book, market, client=client)

    @functools.cache
    def parquet_book() -> Path:
        path = Path(scratch) / f"1_RAND-{args.parquet}.parquet"
        parquet.write_book(path, trinom.generator.generate("1_RAND", args.parquet, seed=1),
                           row_group_size=args.row_group)
        return path

    parquet_row = f"{args.parquet} `1_RAND` options, Parquet file to file"

    def file_to_file(client: Any) -> Path:
        out = Path(scratch) / ("one-process.parquet" if client is None else f"{len(client.nthreads())}-workers.parquet")
        LAST_RUN[parquet_row] = price_parquet_file(parquet_book(), out, client=client, **engine)
        return out

    made = [
        (f"{args.options} `1_RAND` options",
         lambda client: trinom.price(placed(options(), client), **engine).price),
        (f"{args.options} `1_RAND` options x {args.shifts} parallel shifts",
         lambda client: trinom.price(placed(options(), client), scenarios=shifts, **engine).price),
        (f"{args.bonds} R1 bonds x {args.shifts} parallel shifts",
         lambda client: trinom.price(placed(bonds()[0], client, bonds()[1]), bonds()[1], scenarios=shifts,
                                     **engine).price),
        (f"{args.bonds} R1 bonds, `trinom.risk` table",
         lambda client: trinom.risk(placed(bonds()[0], client, bonds()[1]), bonds()[1], **engine)["value"].to_numpy()),
    ]
    if args.parquet:
        made.append((parquet_row, file_to_file))
    return made


#: The last file-to-file run of a row (:class:`trinom.parquet_files.PricedFile`): where its time went.
LAST_RUN: dict[str, Any] = {}


def time_went(run: Any) -> str:
    """Where a file-to-file run's time went: on a cluster the busiest worker's seconds in tasks, and this process's
    stitching and id check (a thread, meanwhile)."""
    if not run.tasks:
        return f"{run.seconds:.3f} s in this process (its ids checked in {run.ids_seconds:.3f} s, meanwhile)"
    _worker, busy, count = run.busiest()
    return (f"{run.seconds:.3f} s: the busiest worker {busy:.3f} s in {count} of {run.parts} tasks, this process "
            f"{run.stitch_seconds:.3f} s stitching and {run.ids_seconds:.3f} s checking the ids (meanwhile)")


def same(out: Any, reference: Any) -> bool:
    """Whether a cluster run gave one process's result: the same values (NaN where NaN), or for an output file the
    same bytes."""
    if isinstance(out, Path):
        return out.read_bytes() == reference.read_bytes()
    return bool(np.array_equal(out, reference, equal_nan=True))


@contextlib.contextmanager
def cluster(workers: int, gpus: list[str] | None) -> Iterator[Any]:
    """A client of ``workers`` local workers: one per GPU of ``gpus`` (dask-cuda), else one-thread processes."""
    from distributed import Client

    if gpus:
        from dask_cuda import LocalCUDACluster

        made = LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(gpus[:workers]), n_workers=workers,
                                threads_per_worker=1, dashboard_address=None)
    else:
        from distributed import LocalCluster

        made = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    with made, Client(made) as client:
        client.wait_for_workers(workers)
        yield client


def timed(call: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """The median wall time of ``rounds`` calls after a warm-up call, and the last call's result."""
    out = call()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--target", help="the engine's target (futhark: c for one core per worker)")
    parser.add_argument("--precision", default="f64")
    parser.add_argument("--workers", type=int, default=2, help="workers of the last column (default 2)")
    parser.add_argument("--gpus", help="GPU ids, comma-separated: one dask-cuda worker per GPU (default: CPU workers)")
    parser.add_argument("--options", type=int, default=1_000_000)
    parser.add_argument("--bonds", type=int, default=100_000)
    parser.add_argument("--shifts", type=int, default=20)
    parser.add_argument("--parquet", type=int, default=0,
                        help="row 5: this many 1_RAND options as a Parquet book, priced file to file (default 0: no row)")
    parser.add_argument("--row-group", type=int, default=1_000_000,
                        help="rows per row group of the Parquet book (default %(default)s; a task takes whole groups)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="row numbers to run, comma-separated (1-4, and 5 with --parquet; default all)")
    parser.add_argument("--out", help="a JSON file of the table and every time")
    args = parser.parse_args(argv)
    gpus = args.gpus.split(",") if args.gpus else None
    if gpus and len(gpus) < args.workers:
        raise SystemExit(f"--workers {args.workers} needs as many --gpus, got {args.gpus}")
    scratch = tempfile.TemporaryDirectory(prefix="trinom-scale-")  # the Parquet row's files; removed at exit
    work = rows(args, scratch.name)
    chosen = [int(k) - 1 for k in args.only.split(",")] if args.only else list(range(len(work)))
    if any(not 0 <= k < len(work) for k in chosen):
        raise SystemExit(f"--only {args.only}: rows 1-{len(work)}" + ("" if args.parquet else " (row 5 needs --parquet N)"))
    work = [work[k] for k in chosen]
    table: dict[str, dict[str, float]] = {name: {} for name, _ in work}
    reference: dict[str, Any] = {}
    load: dict[str, float] = {}  # the 1-minute load average after each column (a shared machine shows here)
    spent: dict[str, dict[str, str]] = {}  # a file-to-file row: where its last run's time went
    for name, call in work:
        table[name]["one process"], reference[name] = timed(lambda c=call: c(None), args.rounds)
        print(f"{name}: one process {table[name]['one process']:.3f} s", flush=True)
        if name in LAST_RUN:
            spent.setdefault(name, {})["one process"] = time_went(LAST_RUN[name])
            print(f"    last run: {spent[name]['one process']}", flush=True)
    columns = ["one process", "1 worker", f"{args.workers} workers"]
    load[columns[0]] = os.getloadavg()[0]
    checks: dict[str, dict[str, int]] = {}
    for workers, column in ((1, columns[1]), (args.workers, columns[2])):
        with cluster(workers, gpus) as client:
            for name, call in work:
                call(client)  # the warm-up: places the book
                before = placed_scatters()
                table[name][column], out = timed(lambda c=call, k=client: c(k), args.rounds)
                checks.setdefault(name, {})[column] = placed_scatters() - before
                if not same(out, reference[name]):
                    raise SystemExit(f"{name}: {column} gave other prices than one process")
                print(f"{name}: {column} {table[name][column]:.3f} s "
                      f"({table[name]['one process'] / table[name][column]:.2f}x)", flush=True)
                if name in LAST_RUN:
                    spent.setdefault(name, {})[column] = time_went(LAST_RUN[name])
                    print(f"    last run: {spent[name][column]}", flush=True)
            load[column] = os.getloadavg()[0]
    device = f"GPUs {args.gpus}" if gpus else f"CPU ({platform.processor() or platform.machine()})"
    print(f"\n{args.backend}{'/' + args.target if args.target else ''} {args.precision} on {device}; medians of "
          f"{args.rounds} after a warm-up; same prices as one process in every case\n")
    print("| work | " + " | ".join(columns) + " |\n| --- | ---: | ---: | ---: |")
    for name, times in table.items():
        base = times["one process"]
        cells = [f"{base:.3f} s"] + [f"{times[c]:.3f} s ({base / times[c]:.2f}x)" for c in columns[1:]]
        print(f"| {name} | " + " | ".join(cells) + " |")
    resent = {name: c for name, c in checks.items() if any(c.values())}
    print("\nbooks resent after the warm-up: " + (json.dumps(resent) if resent else "none"))
    print("1-minute load average after each column: " + ", ".join(f"{c} {v:.2f}" for c, v in load.items()))
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"machine": device, "backend": args.backend, "target": args.target, "precision": args.precision,
                       "workers": args.workers, "sizes": {"options": args.options, "bonds": args.bonds,
                                                          "shifts": args.shifts, "parquet": args.parquet,
                                                          "row_group": args.row_group}, "rounds": args.rounds,
                       "seconds": table, "scatters_after_warm_up": checks, "load_average": load,
                       "last_run": spent}, handle, indent=1)
    return 0


def placed_scatters() -> int:
    """Shards and whole books scattered so far by every placed book this process made."""
    return trinom.distributed.scatter_count()


if __name__ == "__main__":
    raise SystemExit(main())
