"""Coupon bonds with embedded European, Bermudan and American calls and puts (ARRAY'21's instrument).

``BondPortfolio`` (the 19 arrays; it validates and lowers itself to a book), the 19-array and CSV
formats (:mod:`trinom.io.bond_books`), the reference kernel (:mod:`trinom.engines.bonds_reference`) and a
generator of the paper's datasets (:mod:`trinom.bonds.generator`). Price them with
:func:`trinom.price`.
"""

from ..instruments.bond import BondPortfolio, flatten_curves
from ..io.bond_books import read_bonds, write_bonds
from .api import BOND_BACKENDS, BondPrices, accrued_interest, price_bonds

__all__ = ["BOND_BACKENDS", "BondPortfolio", "BondPrices", "accrued_interest", "flatten_curves", "price_bonds",
           "read_bonds", "write_bonds"]
