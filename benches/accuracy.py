"""Resolution by accuracy (issue 34, item 5) on a small dated book: per requested accuracy, the grid each trade got,
its error against a fine grid (3072 steps a year), its estimate, and the call's time beside one pricing at the
default 365 steps a year. Prints a markdown table (docs/convergence.md).

    python benches/accuracy.py [--backend auto] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import trinom
from test_accuracy import book, curve
from trinom.analytics.resolution import MAX_STEPS_PER_YEAR


def timed(call, rounds: int):
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--accuracies", default="0.05,0.01,0.002,0.0005")
    args = parser.parse_args()
    curves = {"EUR": curve()}
    ids = book().ids
    fine = trinom.price(book(steps_per_year=[MAX_STEPS_PER_YEAR] * len(ids)), curves, backend=args.backend).price
    default, seconds = timed(lambda: trinom.price(book(), curves, backend=args.backend), args.rounds)
    print(f"| accuracy | {' | '.join(ids)} | seconds |")
    print(f"| --- | {' | '.join('---' for _ in ids)} | ---: |")
    cells = [f"{abs(p - f):.1e}" for p, f in zip(default.price, fine, strict=True)]
    print(f"| (365 a year, the default) | {' | '.join(cells)} | {seconds:.3f} |")
    for accuracy in (float(a) for a in args.accuracies.split(",")):
        result, seconds = timed(lambda a=accuracy: trinom.price(book(), curves, backend=args.backend, accuracy=a),
                                args.rounds)
        cells = [f"{int(s)}: {abs(p - f):.1e} ({e:.1e})" for s, p, f, e in
                 zip(result.steps_per_year, result.price, fine, result.accuracy, strict=True)]
        print(f"| {accuracy:g} | {' | '.join(cells)} | {seconds:.3f} |")
    print(f"\nengine: {default.engine}; a cell: steps a year: |error| against {MAX_STEPS_PER_YEAR} a year (estimate)")
    return int(not np.all(np.isfinite(fine)))


if __name__ == "__main__":
    raise SystemExit(main())
