"""One pricing of a width class's book on `cuda` (benches/width_classes.py's books), for a profiler to watch:

    ncu --kernel-name regex:bond_block --launch-count 1 --clock-control none python3 benches/profile_wide.py 2049-8192
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from width_classes import CLASSES, book


def main() -> int:
    import trinom

    name = sys.argv[1] if len(sys.argv) > 1 else "2049-8192"
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 0.25
    steps, a, count = CLASSES[name]
    bonds, curves = book(steps, a, max(1, int(count * scale)))
    timing: dict = {}
    trinom.price(bonds, curves, backend="cuda", timing=timing)
    print(f"{name}: {len(bonds)} trees, kernel {timing['kernel_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
