"""Coupon bonds with embedded European, Bermudan and American calls and puts (ARRAY'21's instrument).

``BondPortfolio`` (the 19 arrays; it validates and lowers itself to a book), the 19-array and CSV
formats (:mod:`trinom.io.bond_books`), the reference kernel (:mod:`trinom.engines.bonds_reference`) and a
generator of the paper's datasets (:mod:`trinom.bonds.generator`). Price them with
:func:`trinom.price`.
"""

import importlib as _importlib
import sys as _sys
from types import ModuleType as _ModuleType

from ..api import BOND_BACKENDS, BondPrices, accrued_interest, price_bonds
from ..instruments.bond import BondPortfolio, flatten_curves
from ..io.bond_books import read_bonds, write_bonds
from ..paper import bond_generator as generator

# ``trinom.bonds.generator`` (documented) is ``trinom.paper.bond_generator``, the same module; the deprecated entry
# points are ``trinom.api``'s (issue 36's layout).
_sys.modules.setdefault(f"{__name__}.generator", generator)



def __getattr__(name: str) -> _ModuleType:
    """``trinom.bonds.reference`` (documented): the paper's reference kernel, now
    :mod:`trinom.engines.bonds_reference`, loaded when first named."""
    if name == "reference":
        return _importlib.import_module("trinom.engines.bonds_reference")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BOND_BACKENDS", "BondPortfolio", "BondPrices", "accrued_interest", "flatten_curves", "price_bonds",
           "read_bonds", "write_bonds"]
