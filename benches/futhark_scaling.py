"""How one warm call of the futhark engine scales with the book on a GPU target: a width class's book
(benches/width_classes.py) at several sizes, the median seconds of ``--rounds`` calls of ``trinom.price`` each. A time
that barely falls with the book is the per-step cost of the stepped shape (its kernels' launches); the slope is the
cost of a tree.

    python benches/futhark_scaling.py --class 2049-8192 --scales 0.01,0.1,0.3,1 [--shared] [--target cuda]

``--profile``: instead, one warm call of the first scale in a context with Futhark's profiling on, and where its
time went, by kernel (calls and seconds, from the context's report).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from width_classes import CLASSES, book


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class", dest="name", default="2049-8192", choices=list(CLASSES))
    parser.add_argument("--scales", default="0.01,0.1,0.3,1")
    parser.add_argument("--shared", action="store_true", help="one model for every bond")
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    import trinom
    from trinom.engines import _futhark

    if args.profile:  # the context every later call takes, made with profiling on
        library = _futhark.FutharkLibrary(_futhark.load_module("fastbonds", args.target), profiling=True)
        _futhark._contexts[("fastbonds", args.target, (), None, None, None)] = library

    steps, a, count = CLASSES[args.name]
    options = {"backend": "futhark", "target": args.target}
    for scale in (float(s) for s in args.scales.split(",")):
        bonds, curves = book(steps, a, max(1, int(count * scale)), shared=args.shared)
        trinom.price(bonds, curves, **options)  # warm: compiled kernels, memory
        times = []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            trinom.price(bonds, curves, **options)
            times.append(time.perf_counter() - t0)
        print(f"{args.name} {len(bonds):6d} bonds{' (one model)' if args.shared else ''}: "
              f"{statistics.median(times):.3f} s", flush=True)
        if args.profile:
            _print_profile(json.loads(library.report()), args.rounds + 1)
            return 0
    return 0


def _print_profile(report: dict, calls: int) -> None:
    """Each kind of event's count and seconds per call of the entry (the report covers ``calls`` calls)."""
    totals: dict[str, list[float]] = {}
    for event in report.get("events", []):
        totals.setdefault(event.get("name", "?"), []).append(float(event.get("duration", 0)) / 1e6)
    print(f"{'event':56} {'runs':>8} {'s a call':>9} {'us a run':>9}")
    for name, seconds in sorted(totals.items(), key=lambda item: -sum(item[1]))[:16]:
        print(f"{name[:56]:56} {len(seconds) // calls:8d} {sum(seconds) / calls:9.4f} {1e6 * sum(seconds) / len(seconds):9.1f}")
    print(f"all events: {sum(map(sum, totals.values())) / calls:.4f} s a call")


if __name__ == "__main__":
    raise SystemExit(main())
