"""One call followed through the package (issue 36's "enters each module at most twice"): ``trinom.price`` of a
small dated book (a callable bond, a Bermudan swaption, a cap), first call, traced with ``sys.setprofile``. A *stay*
is a run of Python frames of one ``trinom`` module with no other ``trinom`` module's frame between them (calls into
NumPy and the standard library do not end a stay); a module *entered* n times has n stays. Prints the stays, the
modules, the returns to a module the call had left, and every module entered more than twice.

    python benches/trace_call.py [--show 30]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from types import FrameType
from typing import Any


def book() -> tuple[Any, Any]:
    """The traced book: a callable bond, a Bermudan swaption and a cap, on one dated curve."""
    from trinom.instruments import Trades
    from trinom.model import DatedCurve

    curve = DatedCurve(as_of="2026-11-25", dates=["2028-11-25", "2031-11-25", "2036-11-25"],
                       zero_rates=[0.028, 0.03, 0.035], name="EUR")
    trades = Trades(as_of="2026-11-25", id=["bond", "swaption", "cap"], type=["bond", "swaption", "cap"],
                    issue=["2025-03-15", None, None], maturity=["2034-03-15", "2033-11-25", "2031-11-25"],
                    coupon=[0.045, None, None], frequency=[2, 1, 4], option=["call", "receiver", None],
                    exercise=["bermudan", "bermudan", None], first_exercise=["2029-03-15", "2027-11-25", None],
                    last_exercise=["2033-09-15", "2032-11-25", None], exercise_price=[100.0, None, None],
                    start=[None, "2026-11-25", "2027-02-25"], rate=[None, 0.034, 0.035],
                    float_frequency=[None, 2, None], a=0.05, sigma=0.01, curve="EUR", steps_per_year=12)
    return trades, {"EUR": curve}


def trace(call: Any) -> list[str]:
    """The ``trinom`` modules of ``call()``'s stays, in order."""
    stays: list[str] = []

    def module_of(frame: FrameType | None) -> str | None:
        while frame is not None:  # the innermost trinom frame (a NumPy frame between does not count)
            name = frame.f_globals.get("__name__", "")
            if name == "trinom" or name.startswith("trinom."):
                return name
            frame = frame.f_back
        return None

    def hook(frame: FrameType, event: str, _arg: Any) -> None:
        if event not in ("call", "return"):
            return
        now = module_of(frame if event == "call" else frame.f_back)
        if now is not None and (not stays or stays[-1] != now):
            stays.append(now)

    sys.setprofile(hook)
    try:
        call()
    finally:
        sys.setprofile(None)
    return stays


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=30, help="modules to list, most entered first")
    parser.add_argument("--backend", default="auto", help="the engine (the reference engine loops in Python)")
    args = parser.parse_args()
    import trinom

    trades, curves = book()
    stays = trace(lambda: trinom.price(trades, curves, backend=args.backend))
    entered = Counter(stays)
    seen: set[str] = set()
    returns = 0
    for module in stays:
        returns += module in seen
        seen.add(module)
    over = {m: n for m, n in entered.items() if n > 2}
    print(f"trinom.price of a dated book (3 trades, first call): {len(stays)} stays in {len(entered)} modules, "
          f"{returns} returns to a module it had left; {len(over)} modules entered more than twice")
    for module, count in entered.most_common(args.show):
        print(f"  {count:5d}  {module}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
