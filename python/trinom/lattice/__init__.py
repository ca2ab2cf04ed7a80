"""The lattice: what every instrument lowers to and every engine prices (docs/layout.md's ``lattice/``).

* :mod:`.geometry`: the Hull-White trinomial tree defined once for NumPy: conventions, geometry, probabilities,
  work (its names are also this package's: ``trinom.lattice.tree_geometry`` as before the folder);
* :mod:`.book`: the book, trees and their backward-pass events (also ``trinom.book``);
* :mod:`.columns`: field parsing shared by the portfolios;
* :mod:`.constants`: the model constants (one definition; the tests check that Futhark and CUDA agree).
"""

from .geometry import (
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

__all__ = [
    "BondGeometry",
    "Convention",
    "TreeGeometry",
    "bond_geometry",
    "libm_exp",
    "libm_log",
    "probabilities",
    "probability_table",
    "tree_geometry",
    "work",
]
