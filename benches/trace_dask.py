"""Where a Dask call's time goes (issue 27): a timeline of one call, the caller's steps and each worker's.

Runs rows of :mod:`benches.scale_gpus`' table once in one process and on ``--workers`` workers (after a warm-up
each), with trinom's steps wrapped to record when they start and end (wall clock: the caller and the workers are
on one host), and prints each call's timeline in milliseconds from the call's start: the process (``caller`` or
the worker's address), the step, its start and its end.

    python3 benches/trace_dask.py --backend cuda --gpus 0,1 --only 1,2
    python3 benches/trace_dask.py --backend futhark --target c --options 2000 --bonds 2000 --only 1,4
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import scale_gpus

#: The steps recorded: ``module:attribute path`` (a function where it is looked up, or a class's method).
STEPS = (
    "trinom.api:price", "trinom.distributed.pricing:price_on", "trinom.distributed.pricing:prepare",
    "trinom.distributed.placement:prepare", "trinom.distributed.placement:DistributedBook._placement",
    "trinom.distributed.placement:shared_result", "trinom.distributed.placement:DistributedBook._execute",
    "trinom.shared_results:SharedResult.close", "trinom.pipeline:Job.result", "trinom.distributed.placement:price_placed",
    "trinom.distributed.tasks:_placed_prices",
    "trinom.engines._cuda_lib:price_book", "trinom.engines.scenario_batch:planned",
    "trinom.engines.scenario_batch:ScenarioBatch.gather", "trinom.engines.engine:CudaEngine.price_entries",
    "trinom.engines.engine:KernelEngine.price_into", "trinom.shared_results:opened_part",
    "trinom.shared_results:write_part",
)
RISK_STEPS = ("trinom.analytics.risk:price", "trinom.analytics.risk:_move_failures", "trinom.analytics.risk:_curve_of_rows")


def install(steps: tuple[str, ...] = STEPS + RISK_STEPS, dask_worker: Any = None) -> int:
    """Wrap ``steps`` in this process (once) so that each call appends ``(step, start, end)`` to ``trinom._trace``."""
    import trinom

    if getattr(trinom, "_trace", None) is not None:
        return 0
    trinom._trace = []
    wrapped = 0
    for step in steps:
        module_name, path = step.split(":")
        owner: Any = sys.modules.get(module_name) or importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if original is None:
            continue

        def traced(*args: Any, _original: Any = original, _step: str = step, **kwargs: Any) -> Any:
            start = time.time()
            try:
                return _original(*args, **kwargs)
            finally:
                trinom._trace.append((_step.split(":")[1], start, time.time()))

        functools.update_wrapper(traced, original)
        setattr(owner, name, traced)
        wrapped += 1
    return wrapped


def taken(dask_worker: Any = None) -> list[tuple[str, float, float]]:
    """The steps recorded in this process since the last call (and forgotten here)."""
    import trinom

    events, trinom._trace = list(trinom._trace), []
    return events


def show(title: str, events: dict[str, list[tuple[str, float, float]]], start: float) -> None:
    print(f"\n{title}")
    rows = sorted((begin, who, step, end) for who, steps in events.items() for step, begin, end in steps)
    for begin, who, step, end in rows:
        print(f"  {who[-18:]:>18}  {step:<42} {1e3 * (begin - start):9.2f} {1e3 * (end - start):9.2f}  "
              f"({1e3 * (end - begin):8.2f} ms)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--target")
    parser.add_argument("--precision", default="f64")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--gpus")
    parser.add_argument("--options", type=int, default=1_000_000)
    parser.add_argument("--bonds", type=int, default=100_000)
    parser.add_argument("--shifts", type=int, default=20)
    parser.add_argument("--only", default="1,2,3,4")
    parser.add_argument("--rounds", type=int, default=2, help="timed calls per row and column (the last is shown)")
    args = parser.parse_args(argv)
    args.parquet = 0
    args.row_group = 1
    gpus = args.gpus.split(",") if args.gpus else None
    work = scale_gpus.rows(args)
    chosen = [work[int(k) - 1] for k in args.only.split(",")]
    install()
    for name, call in chosen:
        call(None)
        for _ in range(args.rounds):
            taken()
            start = time.time()
            call(None)
            end = time.time()
        show(f"{name}: one process, {1e3 * (end - start):.1f} ms", {"caller": taken()}, start)
    with scale_gpus.cluster(args.workers, gpus) as client:
        client.run(install)
        for name, call in chosen:
            call(client)
            for _ in range(args.rounds):
                taken()
                client.run(taken)
                start = time.time()
                call(client)
                end = time.time()
            events = {"caller": taken(), **client.run(taken)}
            show(f"{name}: {args.workers} workers, {1e3 * (end - start):.1f} ms", events, start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
