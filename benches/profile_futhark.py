"""Where the futhark engine's time goes on a GPU target: Futhark's own profile (each kernel's calls and seconds, the
copies and allocations) of one warm ``trinom.price`` of a width class's book (benches/width_classes.py).

    python benches/profile_futhark.py --class 2049-8192 [--shared] [--target cuda]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from width_classes import CLASSES, book


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class", dest="name", default="2049-8192", choices=list(CLASSES))
    parser.add_argument("--shared", action="store_true", help="one model for every bond")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    import trinom
    from trinom.engines import _futhark

    steps, a, count = CLASSES[args.name]
    bonds, curves = book(steps, a, max(1, int(count * args.scale)), shared=args.shared)
    options = {"backend": "futhark", "target": args.target}
    trinom.price(bonds, curves, **options)  # warm: compiled kernels, memory
    library = _futhark.usable_context("fastbonds", args.target, {})
    lib, ffi, ctx = library._impl.lib, library._impl.ffi, library._impl.ctx
    lib.futhark_context_unpause_profiling(ctx)
    t0 = time.perf_counter()
    trinom.price(bonds, curves, **options)
    seconds = time.perf_counter() - t0
    lib.futhark_context_pause_profiling(ctx)
    text = ffi.string(lib.futhark_context_report(ctx)).decode()
    print(f"{args.name} ({len(bonds)} bonds{', one model' if args.shared else ''}): {seconds:.3f} s")
    try:
        report = json.loads(text)
    except json.JSONDecodeError:
        print(text)
        return 0
    events: dict[str, list[float]] = {}
    for event in report.get("events", []):
        seconds_of = float(event.get("duration", 0)) / 1e6  # microseconds
        events.setdefault(event.get("name", "?"), []).append(seconds_of)
    rows = sorted(events.items(), key=lambda item: -sum(item[1]))
    print(f"{'event':60} {'calls':>7} {'total s':>8} {'mean us':>8}")
    for name, times in rows[:args.top]:
        print(f"{name[:60]:60} {len(times):7d} {sum(times):8.4f} {1e6 * sum(times) / len(times):8.1f}")
    print(f"all events: {sum(sum(t) for t in events.values()):.4f} s in {sum(len(t) for t in events.values())} calls")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
