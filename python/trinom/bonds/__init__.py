"""Coupon bonds with embedded European, Bermudan and American calls and puts (ARRAY'21's instrument).

``BondPortfolio`` (the 19 arrays), :func:`price_bonds` (dirty and clean prices), the 19-array and
CSV formats (:mod:`trinom.bonds.io`), the reference pricer (:mod:`trinom.bonds.reference`) and a
generator of the paper's datasets (:mod:`trinom.bonds.generator`).
"""

from .api import BondPrices, accrued_interest, choose_bond_backend, price_bonds
from .backends import BOND_BACKENDS
from .io import read_bonds, write_bonds
from .portfolio import BondPortfolio, flatten_curves

__all__ = ["BOND_BACKENDS", "BondPortfolio", "BondPrices", "accrued_interest", "choose_bond_backend",
           "flatten_curves", "price_bonds", "read_bonds", "write_bonds"]
