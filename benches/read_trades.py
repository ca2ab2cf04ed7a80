"""Reading a desk book's ``trades.csv`` (issue 34's end to end): ``read_trades`` with the CSV reader's fast path
(pyarrow's reader for a large regular file, :data:`trinom.io.csvtable.FAST_READ_BYTES`) and without it, side by side,
medians of ``--rounds`` (the desk book of ``benches/desk_book.py``).

    python benches/read_trades.py --sizes 14000,100000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from desk_book import AS_OF, write_book


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="14000,100000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import pyarrow.csv  # noqa: F401  (imported before the timing, as in a process that has read a large file)
    from trinom.instruments import read_trades
    from trinom.io import csvtable

    fast_bytes = csvtable.FAST_READ_BYTES
    folder = Path(tempfile.mkdtemp(prefix="read-trades-"))
    for size in (int(s) for s in args.sizes.split(",")):
        trades, _curve = write_book(folder, size, 7, 4)
        for path, threshold in (("csv module", 1 << 62), ("fast path", fast_bytes)):
            csvtable.FAST_READ_BYTES = threshold
            times = []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                read_trades(trades, as_of=AS_OF)
                times.append(time.perf_counter() - t0)
            print(f"{size:>7} trades ({trades.stat().st_size / 2**20:5.1f} MiB) {path:>10}: "
                  f"{statistics.median(times):.3f} s", flush=True)
    csvtable.FAST_READ_BYTES = fast_bytes
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
