"""``trinom demo``: a generated sample book priced on the best engine, beside Hull-White's closed form (``make run``)."""

from __future__ import annotations

import argparse
import time

import numpy as np

from .. import __version__
from ..api import price
from ..engines.closed_form import zero_coupon_bond_option
from ..lattice.constants import PUT
from ..model.tree_geometry import work
from ..paper.option_generator import generate


def cmd_demo(args: argparse.Namespace) -> int:
    portfolio = generate("skewed", args.size, seed=1)
    start = time.perf_counter()
    result = price(portfolio, backend="auto", precision=args.precision)
    elapsed = time.perf_counter() - start
    backend, prices = result.engine, result.price
    g = portfolio.geometry()
    nodes = float(work(g.n, g.jmax).sum())
    print(f"trinom {__version__}: priced {len(portfolio)} options (skewed sample, seed 1) on '{backend}' "
          f"({args.precision}) in {elapsed:.3f} s, {nodes / elapsed / 1e9:.3f} Gnode/s")
    width, height = portfolio.stats()["width"], portfolio.stats()["height"]
    print(f"  widths {width['min']:.0f}..{width['max']:.0f}, heights {height['min']:.0f}..{height['max']:.0f}")
    # The thesis' sample puts every option's expiry at 3 years, also on bonds that mature sooner (the thesis prices
    # those as their bond); the rows shown are options on bonds that outlive them, beside Hull-White's closed form.
    shown = np.flatnonzero(portfolio.expiry < portfolio.maturity)[:5]
    analytic = zero_coupon_bond_option(portfolio[shown])
    for k, exact in zip(shown, analytic, strict=True):
        o = portfolio[int(k)]
        kind = "put" if o.option_type[0] == PUT else "call"
        print(f"  option {k}: {kind} X={o.strike[0]:g} on a {o.maturity[0]:.2f}-year bond, expiry {o.expiry[0]:g}, "
              f"a={o.a[0]:.5f}: {prices[k]:.10f} (closed form {exact:.10f})")
    return 0
