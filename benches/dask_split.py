"""Where a Dask run's time goes (issue 15): one process against a local cluster, with the time split.

Prices a book once in this process and once with ``trinom.price(..., client=...)`` on a ``LocalCluster`` of
``--workers`` worker processes (one thread each), and splits the cluster run's wall time with Dask's own task
stream (``distributed.get_task_stream``):

* ``prepare``: from the call to the first task's start (the call's checks, the market's sending, the
  scheduler's dispatch; the book is placed on the workers by the warm-up call and not sent again, issue 27);
* ``pricing``: the tasks' ``compute`` time, per worker (the busiest worker's sum; the mean in brackets);
* ``transfer``: the tasks' ``transfer`` and ``deserialize`` time on the workers;
* ``collect``: from the last task's end to the call's return (the results' gathering, input order, the
  one-process result checks);
* ``idle``: the rest of the span between first start and last stop that the busiest worker did not compute.

Calls go straight to the workers by default (:mod:`trinom.worker_calls`): no task, so only the wall time is
shown; ``--tasks`` makes every call a Dask task, whose time the stream splits.

    python3 benches/dask_split.py --dataset 4_SKEWED --size 200000 --workers 2 --out benches/cpu-dask.json
    python3 benches/dask_split.py --dataset 1_RAND --size 2000 --scenarios 100 --out benches/cpu-dask-grid.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections import defaultdict

import numpy as np
import trinom
from distributed import Client, LocalCluster, get_task_stream


def split(stream: list[dict], start: float, end: float) -> dict[str, float]:
    """The wall time ``end - start`` of one run split by its task stream (see the module)."""
    compute: dict[str, float] = defaultdict(float)
    transfer = 0.0
    first, last = np.inf, -np.inf
    for task in stream:
        for part in task["startstops"]:
            span = part["stop"] - part["start"]
            if part["action"] == "compute":
                compute[task["worker"]] += span
                first, last = min(first, part["start"]), max(last, part["stop"])
            elif part["action"] in ("transfer", "deserialize"):
                transfer += span
    if not compute:  # the calls went straight to the workers (trinom.worker_calls): no task to split the time by
        nan = float("nan")
        return {"wall": end - start, "prepare": nan, "pricing": nan, "pricing_mean": nan, "transfer": nan,
                "collect": nan, "idle": nan, "tasks": 0, "workers_used": 0}
    busiest = max(compute.values())
    return {"wall": end - start, "prepare": first - start, "pricing": busiest,
            "pricing_mean": float(np.mean(list(compute.values()))), "transfer": transfer,
            "collect": end - last, "idle": (last - first) - busiest, "tasks": len(stream),
            "workers_used": len(compute)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="4_SKEWED")
    parser.add_argument("--size", type=int, default=200000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", default="futhark")
    parser.add_argument("--target", default="c", help="one thread per worker: c (multicore for one process); "
                        "cuda for the cuda engine (each worker on device 0)")
    parser.add_argument("--scenarios", type=int, default=0, help="a grid of this many parallel shifts (0: none)")
    parser.add_argument("--shards", type=int, help="shards the book is placed in (default: trinom.distributed's, "
                        "one per worker thread)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", action="store_true", help="every call a Dask task "
                        "(trinom.distributed.placement.DIRECT_CALLS off), whose time the task stream splits; by default "
                        "calls go straight to the workers, and only the wall time is split-free")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.tasks:
        trinom.distributed.placement.DIRECT_CALLS = False
    book = trinom.generator.generate(args.dataset, args.size, seed=1)
    book.validate()
    engine: dict = {"backend": args.backend, "target": args.target}
    if args.scenarios:  # -50 bp .. +49 bp for 100
        engine["scenarios"] = [trinom.scenarios.CurveShift(1e-4 * (k - args.scenarios // 2))
                               for k in range(args.scenarios)]
    trinom.price(book, **engine)
    alone = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        reference = trinom.price(book, **engine).price
        alone.append(time.perf_counter() - start)
    multicore = []  # the Futhark engine on both CPU targets; other engines: none
    for _ in range(args.rounds if args.backend == "futhark" else 0):
        start = time.perf_counter()
        trinom.price(book, **{**engine, "target": "multicore"})
        multicore.append(time.perf_counter() - start)
    runs = []
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True) as cluster, \
            Client(cluster) as client:
        sharding = {"shards": args.shards} if args.shards else {}
        trinom.price(book, **engine, client=client, **sharding)  # warm: places the book, loads each worker's library
        for _ in range(args.rounds):
            with get_task_stream(client) as stream:
                start = time.time()
                prices = trinom.price(book, **engine, client=client, **sharding).price
                end = time.time()
            assert np.array_equal(prices, reference)
            runs.append(split(stream.data, start, end))
    median = {key: float(np.median([run[key] for run in runs])) for key in runs[0]}
    report = {"machine": platform.processor() or platform.machine(), "dataset": args.dataset, "size": args.size,
              "engine": {"backend": args.backend, "target": args.target}, "scenarios": args.scenarios,
              "workers": args.workers, "one_process_s": float(np.median(alone)),
              "one_process_multicore_s": float(np.median(multicore)) if multicore else None, "cluster": median, "runs": runs}
    print(f"{args.dataset} x {args.size}, {args.scenarios} scenarios, {report['engine']}: one process "
          f"{report['one_process_s']:.2f} s (multicore {report['one_process_multicore_s'] or float('nan'):.2f} s); "
          f"{args.workers} workers {median['wall']:.2f} s")
    print("| part | seconds |\n| --- | ---: |")
    for key in ("prepare", "transfer", "pricing", "idle", "collect", "wall"):
        extra = f" (mean {median['pricing_mean']:.2f})" if key == "pricing" else ""
        print(f"| {key} | {median[key]:.3f}{extra} |")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
