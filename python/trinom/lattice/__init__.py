"""The lattice: what every instrument lowers to and every engine prices (docs/layout.md's ``lattice/``).

* :mod:`.book`: the book, trees and their backward-pass events (also ``trinom.book``);
* :mod:`.lowering`: the instruments' arrays as one book (``lower``, ``lower_options``, ``lower_bonds``); the lattice
  is built from the instruments, which import nothing of it;
* :mod:`.constants`: the model constants and the instruments' own, gathered (each defined once, in
  :mod:`trinom.model.tree_geometry` or :mod:`trinom.instruments.constants`; the tests check that Futhark and CUDA
  agree).

The Hull-White tree's geometry is the model's (:mod:`trinom.model.tree_geometry`, formerly this package's
``geometry``, which is the same module); its names are also this package's (``trinom.lattice.tree_geometry`` as
before the folder). The field parsing shared by the portfolios is the instruments' (:mod:`trinom.instruments.columns`,
also ``trinom.lattice.columns``).
"""

from ..model.tree_geometry import (
    BondGeometry,
    Convention,
    TreeGeometry,
    bond_geometry,
    libm_exp,
    libm_log,
    probabilities,
    probability_table,
    tree_geometry,
    work,
)
from .lowering import lower, lower_bonds, lower_options

__all__ = [
    "BondGeometry",
    "Convention",
    "TreeGeometry",
    "bond_geometry",
    "libm_exp",
    "libm_log",
    "lower",
    "lower_bonds",
    "lower_options",
    "probabilities",
    "probability_table",
    "tree_geometry",
    "work",
]
