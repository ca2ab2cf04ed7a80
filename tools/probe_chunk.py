"""A chunk's costs outside the engine: trinom.distributed.price_chunk against trinom.price of the same rows.

    python3 tools/probe_chunk.py --backend cuda --dataset 1_RAND --size 250000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import trinom
from trinom.distributed import price_chunk


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--dataset", default="1_RAND")
    parser.add_argument("--size", type=int, default=250000)
    args = parser.parse_args()
    book = trinom.generator.generate(args.dataset, args.size, seed=1)
    columns = book.as_dict()
    price_chunk(columns, backend=args.backend)
    for label, call in (("price_chunk", lambda: price_chunk(columns, backend=args.backend)),
                        ("price, validated book", lambda: trinom.price(book, backend=args.backend)),
                        ("price, fresh book", lambda: trinom.price(trinom.Portfolio(**columns), backend=args.backend))):
        times = []
        for _ in range(3):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        print(f"{label}: {min(times) * 1e3:.1f} ms")
    profile = cProfile.Profile()
    profile.enable()
    price_chunk(columns, backend=args.backend)
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
