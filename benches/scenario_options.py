"""An option book's scenario axis against one pricing (issue 27 item 3): ``--shifts`` parallel shifts in one call.

Prices ``--options`` options of ``--dataset`` once (``trinom.price(book, backend=...)``) and in a grid of
parallel shifts (``trinom.price(book, scenarios=[CurveShift(1e-4 * (k - shifts // 2)) ...])``, 1 bp apart, one of
them 0), each ``--rounds`` times after a warm-up, and prints both medians and their ratio (the issue asks under 5,
goal under 2, for 20 shifts of 1M ``1_RAND`` options on ``cuda``). The engine keeps a grid's plan for the next
call in an equal market; the grid is also timed in a new market each call (every shift moved by 1e-12), planned
every time. The zero shift's row must be the single pricing's prices. Then, outside the timed runs: the host's
share of a grid call (its planning, ``scenario_batch.batch``, and the prices' gather) and, where the engine fills a
``timing`` dict (the CUDA ones), the library's own times of one call of each.

    python benches/scenario_options.py --options 1000000 --shifts 20 --backend cuda
    python benches/scenario_options.py --options 100000 --backend futhark --target c --json out.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import trinom
from trinom.engines.scenario_batch import batch
from trinom.model.market import Market
from trinom.pipeline import prepare
from trinom.scenarios import CurveShift, scenario_market


def median_seconds(call: Callable[[], Any], rounds: int) -> tuple[float, list[float]]:
    """The median wall time of ``rounds`` calls (after one warm-up call) and every time."""
    call()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), times


def host_share(book: trinom.Portfolio, scenarios: list[CurveShift], rounds: int) -> dict[str, float]:
    """Median seconds of the grid's planning and of its gather on this host (the engine's steps around the kernel)."""
    market = scenario_market(None, scenarios)
    lowered = prepare(book, Market.of(market)).book
    plan_s, _ = median_seconds(lambda: batch(lowered, market), rounds)
    plan = batch(lowered, market)
    prices = np.ones(plan.entries)
    gather_s, _ = median_seconds(lambda: plan.gather(prices), rounds)
    return {"plan_s": plan_s, "gather_s": gather_s, "entries": plan.entries}


def library_times(book: trinom.Portfolio, engine: dict[str, Any], scenarios: list[CurveShift] | None) -> dict | None:
    """The library's ``timing`` of one call (None where the engine takes no ``timing``)."""
    timing: dict[str, Any] = {}
    try:
        trinom.price(book, scenarios=scenarios, timing=timing, **engine)
    except (TypeError, ValueError):
        return None
    return {k: v for k, v in timing.items() if isinstance(v, (int, float))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--options", type=int, default=1_000_000, help="options in the book")
    parser.add_argument("--shifts", type=int, default=20, help="parallel shifts in the grid")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--target", help="the engine's target (Futhark: c, multicore, cuda, ...)")
    parser.add_argument("--precision", default="f64", choices=["f64", "f32"])
    parser.add_argument("--dataset", default="1_RAND", help="a distribution of trinom.generator")
    parser.add_argument("--rounds", type=int, default=3, help="timed calls of each, after a warm-up")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-detail", action="store_true", help="skip the host share and library times")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    book = trinom.generator.generate(args.dataset, args.options, seed=args.seed)
    engine: dict[str, Any] = {"backend": args.backend, "precision": args.precision}
    if args.target:
        engine["target"] = args.target
    scenarios = [CurveShift(1e-4 * (k - args.shifts // 2)) for k in range(args.shifts)]

    one_s, one_all = median_seconds(lambda: trinom.price(book, **engine), args.rounds)
    grid_s, grid_all = median_seconds(lambda: trinom.price(book, scenarios=scenarios, **engine), args.rounds)
    moved = iter(range(1, 10**6))  # a new market each call (shifts 1e-12 apart): the grid planned again every time
    fresh_s, fresh_all = median_seconds(lambda: trinom.price(book, scenarios=[
        CurveShift(s.shift + 1e-12 * next(moved)) for s in scenarios], **engine), args.rounds)
    single = trinom.price(book, **engine)
    grid = trinom.price(book, scenarios=scenarios, **engine)
    same = bool(np.array_equal(grid.price[args.shifts // 2], single.price, equal_nan=True))
    ratio = grid_s / one_s
    print(f"{args.options} {args.dataset} options, {args.backend}{'/' + args.target if args.target else ''} "
          f"{args.precision}, engine {grid.engine}; medians of {args.rounds} after a warm-up")
    print(f"one pricing:             {one_s:.4f} s  {np.round(one_all, 4).tolist()}")
    print(f"{args.shifts} parallel shifts:      {grid_s:.4f} s  {np.round(grid_all, 4).tolist()}")
    print(f"ratio:                   {ratio:.2f} pricings (issue 27: under 5, goal under 2)")
    print(f"new market each call:    {fresh_s:.4f} s  {np.round(fresh_all, 4).tolist()}  ({fresh_s / one_s:.2f} pricings)")
    print(f"zero shift's row == the single pricing: {same}")
    figures: dict[str, Any] = {"options": args.options, "dataset": args.dataset, "shifts": args.shifts,
                               "backend": args.backend, "target": args.target, "precision": args.precision,
                               "engine": grid.engine, "one_s": one_s, "grid_s": grid_s, "ratio": ratio,
                               "one_all": one_all, "grid_all": grid_all, "zero_shift_equal": same,
                               "fresh_s": fresh_s, "fresh_all": fresh_all,
                               "host": platform.node(), "processor": platform.processor()}
    if not args.no_detail:
        host = host_share(book, scenarios, args.rounds)
        print(f"host: planning {host['plan_s']:.4f} s, gather {host['gather_s']:.4f} s ({host['entries']} entries)")
        figures["host_share"] = host
        for name, moves in (("one", None), ("grid", scenarios)):
            times = library_times(book, engine, moves)
            if times is not None:
                shown = ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in times.items())
                print(f"library, {name}: {shown}")
                figures[f"library_{name}"] = times
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=1)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
