"""What benches/quick_engines.py (options) and benches/quick_bonds.py (bonds) share: their command line,
the warmed-up timing of one engine/target pair, and the JSON they write."""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import trinom


def arguments(doc: str) -> argparse.Namespace:
    """``--pairs``, ``--datasets``, ``--precisions``, ``--rounds``, ``--json``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", required=True, help="engine or engine/target")
    parser.add_argument("--datasets", nargs="+", required=True)
    parser.add_argument("--precisions", nargs="+", default=["f64", "f32"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    return parser.parse_args()


def timed(instruments: Any, curves: Any, pair: str, precision: str, rounds: int, warmups: int,
          label: str) -> tuple[trinom.Prices, list[float]] | None:
    """``trinom.price`` on ``pair`` (engine or engine/target): ``warmups`` calls, then ``rounds`` timed ones;
    None (and the reason on stderr, ``label`` first) where the pair cannot run here."""
    engine, _, target = pair.partition("/")
    options = {"target": target} if target else {}
    try:
        for _ in range(warmups):
            result = trinom.price(instruments, curves, backend=engine, precision=precision, **options)
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            result = trinom.price(instruments, curves, backend=engine, precision=precision, **options)
            times.append(time.perf_counter() - start)
    except Exception as err:  # a pair that cannot run here is reported, not fatal
        print(f"{pair} {label}: {type(err).__name__}: {err}", file=sys.stderr)
        return None
    return result, times


def write_json(path: Path | None, rows: list[dict[str, Any]]) -> None:
    if path:
        path.write_text(json.dumps({"machine": platform.node(), "rows": rows}, indent=1))
