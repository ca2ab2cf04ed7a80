"""Device probe (issue 13, not a benchmark): where the time of fast.fut's GPU shape goes.

Times futhark_fast.price on a dataset with NVRTC build options (e.g. register limits) and with
the maturities doubled (same windows, twice the steps): the difference is the per-step cost.
"""
import sys
import time
from statistics import median

import trinom
from trinom import io
from trinom.engines import futhark_fast
from trinom.instruments.option import FIELDS, Portfolio


def timed(portfolio, curve, precision, target, build_options, rounds=5):
    for _ in range(2):
        futhark_fast.price(portfolio, curve, precision, target=target, build_options=build_options)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        futhark_fast.price(portfolio, curve, precision, target=target, build_options=build_options)
        times.append(time.perf_counter() - start)
    return 1e3 * median(times)


def report(portfolio, curve, precision, target) -> None:
    """Futhark's own profile of three calls: time per kernel and per copy, from the context."""
    from trinom.engines import _futhark
    futhark_fast.price(portfolio, curve, precision, target=target)
    impl = _futhark.context("fast", target)._impl
    impl.lib.futhark_context_unpause_profiling(impl.ctx)
    start = time.perf_counter()
    for _ in range(3):
        futhark_fast.price(portfolio, curve, precision, target=target)
    wall = (time.perf_counter() - start) / 3
    impl.lib.futhark_context_pause_profiling(impl.ctx)
    text = impl.ffi.string(impl.lib.futhark_context_report(impl.ctx)).decode()
    print(f"--- {precision} {target}: {1e3 * wall:.2f} ms per call; Futhark's report of 3 calls:")
    print(text[:4000], flush=True)


def main() -> None:
    name, target = sys.argv[1], sys.argv[2]
    variants = [[]] + [[v] for v in sys.argv[3:]]
    portfolio, curve = io.read_input(f"data/{name}.in")
    curve = curve or trinom.YieldCurve.thesis()
    for precision in ("f64", "f32"):
        report(portfolio, curve, precision, target)
    fields = {f: getattr(portfolio, f) for f in FIELDS}
    doubled = Portfolio(**{**fields, "maturity": 2 * fields["maturity"]})
    for precision in ("f64", "f32"):
        for options in variants:
            one = timed(portfolio, curve, precision, target, options)
            two = timed(doubled, curve, precision, target, options)
            print(f"{name} {precision} {target} {options}: {one:.2f} ms; maturity x2 {two:.2f} ms; "
                  f"per-step part {two - one:.2f} ms, rest {2 * one - two:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
