"""Convergence of the trinomial tree to the Hull-White closed form for Hull's book option.

The book option is a 3-year European option on a 9-year zero-coupon bond (face 100),
strike 63, a = 0.1, sigma = 0.01, on the thesis yield curve. For each number of tree steps
per year this prints the tree price, the closed-form price and their distance as a
markdown table, for the put (Hull's example) and for the call on the same bond.

Run from the repository root::

    .venv/bin/python benches/convergence.py                  # the table in docs/convergence.md
    .venv/bin/python benches/convergence.py --steps 1 12 365 --backend reference
"""

from __future__ import annotations

import argparse
import platform
import time

import trinom
from trinom.engines.closed_form import zero_coupon_bond_option

STEPS_PER_YEAR = (1, 2, 5, 10, 25, 50, 100, 200, 365)


def book_option(option_type: str, steps_per_year: int) -> trinom.Portfolio:
    """Hull's book option (3-year option on a 9-year bond, X = 63) at this tree resolution."""
    return trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
                            term_steps=[steps_per_year], a=[0.1], sigma=[0.01], option_type=[option_type])


def convergence_table(option_type: str, steps: tuple[int, ...], backend: str) -> list[str]:
    """The markdown lines of one option type's table."""
    curve = trinom.YieldCurve.thesis()
    exact = float(zero_coupon_bond_option(book_option(option_type, 1), curve)[0])
    lines = [
        f"**{option_type}**, closed form {exact:.10f}",
        "",
        "| steps/year | width | height | tree price | abs(tree - closed form) | seconds |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for steps_per_year in steps:
        portfolio = book_option(option_type, steps_per_year)
        start = time.perf_counter()
        tree = float(trinom.price(portfolio, curve, backend=backend).price[0])
        seconds = time.perf_counter() - start
        lines.append(f"| {steps_per_year} | {int(portfolio.widths()[0])} | {int(portfolio.heights()[0])} "
                     f"| {tree:.10f} | {abs(tree - exact):.2e} | {seconds:.3f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=list(STEPS_PER_YEAR),
                        help="tree steps per year to try (default: %(default)s)")
    parser.add_argument("--backend", default="reference", help="pricing backend (default: %(default)s)")
    args = parser.parse_args(argv)
    print(f"<!-- benches/convergence.py --backend {args.backend}; python {platform.python_version()}, "
          f"{platform.machine()} -->")
    for option_type in ("put", "call"):
        print()
        print("\n".join(convergence_table(option_type, tuple(args.steps), args.backend)))


if __name__ == "__main__":
    main()
