"""``trinom backends``: what is built and usable here and why not, what ``auto`` picks; ``--measure`` fits its costs."""

from __future__ import annotations

import argparse

from ..engines import auto, costs, get, status
from ..lattice.book import Book
from ..lattice.lowering import lower_bonds, lower_options
from ..model.curve import YieldCurve
from ..paper.bond_generator import generate_bonds
from ..paper.option_generator import generate


def cmd_backends(args: argparse.Namespace) -> int:
    if getattr(args, "measure", False):
        return measure_backends(args.engines)
    print(f"{'engine':15s} {'target':10s} {'usable':7s} details")
    for name, target, usable, reason in status():
        print(f"{name:15s} {target or '-':10s} {'yes' if usable else 'no':7s} {reason}")
    sample = generate("uniform", 1000)
    bonds, curves = generate_bonds("U1", 100, seed=1)
    print(f"auto picks, for 1000 options of width 47 and height 109: {auto.describe_choice(lower_options(sample))}; "
          f"for 5 of them: {auto.describe_choice(lower_options(sample[:5]))}; for 100 bonds: "
          f"{auto.describe_choice(lower_bonds(bonds, tuple(map(str, range(len(curves))))))}")
    measured = costs.costs_path().exists()
    print(f"auto's costs: {costs.costs_path()} " + ("(measured)" if measured else
          "(not measured: the defaults hold; `trinom backends --measure` measures this host)"))
    print("\nOpenCL platforms (pyopencl):")
    for line in opencl_devices():
        print(f"  {line}")
    return 0


def measure_backends(engines: str | None) -> int:
    """``trinom backends --measure``: fit auto's cost model on every usable candidate engine (or ``engines``)."""
    from ..model.market import Market

    chosen = [auto.cost_key(name, target) for name, target in auto.CANDIDATES
              if name != "reference" and auto.usable(name, target) and (target != "opencl" or auto.opencl_gpu())]
    if engines:
        wanted = engines.split(",")
        unknown = sorted(set(wanted) - {auto.cost_key(n, t) for n, t in auto.CANDIDATES})
        if unknown:
            raise SystemExit(f"trinom: --engines: unknown {', '.join(unknown)}; choose among "
                             f"{', '.join(auto.cost_key(n, t) for n, t in auto.CANDIDATES)}")
        chosen = [name for name in wanted if name in chosen]
    market = Market.of({"default": YieldCurve.thesis()})

    def run(engine: str, book: Book) -> None:
        name, _, target = engine.partition("/")
        get(name).price(book, market, target=target or None)

    fitted = costs.measure(chosen, run)
    path = costs.save(fitted)
    for name, cost in fitted.items():
        rates = ", ".join(f"{c} {r / 1e9:.3g}" for c, r in zip(costs.CLASS_NAMES, cost.rates, strict=True))
        print(f"{name:18s} fixed {cost.fixed * 1e3:.3g} ms; Gnode/s by width: {rates}; a step of one tree "
              f"{max(cost.step_latency) * 1e6:.3g} us" + (f", one tree {cost.tree_rate / 1e9:.3g} Gnode/s"
                                                           if cost.tree_rate != float("inf") else ""))
    print(f"trinom: auto's costs for this host written to {path}")
    return 0


def opencl_devices() -> list[str]:
    """One line per OpenCL platform and device, or why none can be listed."""
    try:
        import pyopencl as cl
    except ImportError:
        return ["pyopencl is not installed (pip install pyopencl)"]
    try:
        platforms = cl.get_platforms()
    except cl.Error as err:  # no ICD loader / no platform
        return [f"none ({err})"]
    lines = []
    for platform in platforms:
        lines.append(f"{platform.name} ({platform.version})")
        for device in platform.get_devices():
            fp64 = "fp64" if "cl_khr_fp64" in device.extensions else "no fp64"
            lines.append(f"  - {device.name}: {device.max_compute_units} compute units, {fp64}")
    return lines or ["none"]
