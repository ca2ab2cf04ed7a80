#!/usr/bin/env python3
"""Time ``trinom.price`` of two source trees side by side in one run (e.g. the previous commit against this one).

    python benches/compare_revisions.py --tree old=.old --tree new=. --backend cuda --rounds 11 \\
        --datasets 0_UNIFORM 1_RAND --precisions f64 f32 --json out.json

For every dataset and precision, each tree is timed in its own Python process (its own ``python/``
on ``sys.path``), the trees taking turns ``--repeats`` times so that drifts of the machine hit both
alike; each process warms up (3 calls), then times ``--rounds`` end-to-end calls (arrays in host memory to
prices in host memory). The table gives each tree's median of medians and the ratio to the first tree.
The datasets are read from this repository's ``data/thesis`` (``make data`` unpacks them).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent

#: Run inside each tree's process: prints the per-call times in seconds as JSON.
_TIMER = r"""
import json, sys, time
import trinom
from trinom import io
path, curve_path, backend, precision, rounds, target = sys.argv[1:7]
portfolio = io.read_portfolio(path)
curve = io.read_yield_curve(curve_path)
options = {"target": target} if target != "-" else {}
for _ in range(3):  # warm-up: context, caches, the GPU's clocks
    trinom.price(portfolio, curve, backend=backend, precision=precision, **options)
times = []
for _ in range(int(rounds)):
    start = time.perf_counter()
    trinom.price(portfolio, curve, backend=backend, precision=precision, **options)
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def time_tree(tree: Path, dataset: str, args: argparse.Namespace, precision: str) -> list[float]:
    """Per-call seconds of one tree on one dataset (one process)."""
    inherited = os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "PYTHONPATH": str(tree / "python") + (os.pathsep + inherited if inherited else "")}
    data = ROOT / "data" / "thesis"
    command = [sys.executable, "-c", _TIMER, str(data / f"{dataset}.in"), str(data / "yield.in"), args.backend,
               precision, str(args.rounds), args.target or "-"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{tree} on {dataset}: {result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def markdown(runs: list[dict]) -> str:
    """One Markdown table of runs: engine, dataset, precision, each tree's median ms, the ratio to the first."""
    lines = []
    for run in runs:
        names = [k for k in run["rows"][0] if k not in ("dataset", "precision")]
        if not lines:
            lines += [f"| engine | dataset | precision | {' | '.join(f'{n} ms' for n in names)} | ratio |",
                      "| --- | --- | --- |" + " ---: |" * (len(names) + 1)]
        engine = run["backend"] + (f"/{run['target']}" if run.get("target") else "")
        for row in run["rows"]:
            ratio = row[names[-1]] / row[names[0]]
            cells = " | ".join(f"{row[n]:.3f}" for n in names)
            lines.append(f"| {engine} | {row['dataset']} | {row['precision']} | {cells} | {ratio:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", help="NAME=PATH of a source tree (first: baseline)")
    parser.add_argument("--table", nargs="+", type=Path, help="print the JSON files of earlier runs as one Markdown table")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--target", default=None)
    parser.add_argument("--datasets", nargs="+", default=["0_UNIFORM", "1_RAND", "2_RANDCONSTHEIGHT",
                                                          "3_RANDCONSTWIDTH", "4_SKEWED", "5_SKEWEDCONSTHEIGHT",
                                                          "6_SKEWEDCONSTWIDTH"])
    parser.add_argument("--precisions", nargs="+", default=["f64", "f32"])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.table:
        print(markdown([json.loads(path.read_text()) for path in args.table]))
        return 0
    if not args.tree:
        parser.error("--tree is required (twice: the baseline, then the tree to compare)")
    trees = [(name, Path(path).resolve()) for name, path in (t.split("=", 1) for t in args.tree)]
    rows = []
    for dataset in args.datasets:
        for precision in args.precisions:
            medians: dict[str, list[float]] = {name: [] for name, _ in trees}
            for _ in range(args.repeats):
                for name, tree in trees:
                    medians[name].append(median(time_tree(tree, dataset, args, precision)))
            row = {"dataset": dataset, "precision": precision, **{n: median(m) * 1e3 for n, m in medians.items()}}
            rows.append(row)
            base = row[trees[0][0]]
            cells = "  ".join(f"{n} {row[n]:9.3f} ms ({row[n] / base:5.3f}x)" for n, _ in trees)
            print(f"{dataset:22s} {precision}  {cells}", flush=True)
    if args.json:
        machine = {"node": platform.node(), "python": platform.python_version()}
        args.json.write_text(json.dumps({"backend": args.backend, "target": args.target, "rounds": args.rounds,
                                         "repeats": args.repeats, "machine": machine, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
