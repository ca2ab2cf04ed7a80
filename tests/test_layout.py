"""The package layout: instruments have one home, and the old import paths stay for one release."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(("old", "new"), [("trinom.portfolio", "trinom.instruments.option"),
                                          ("trinom.bonds.portfolio", "trinom.instruments.bond")])
def test_old_import_paths_are_the_moved_modules(old: str, new: str):
    assert importlib.import_module(old) is importlib.import_module(new)


def test_public_names_are_unchanged():
    import trinom
    from trinom.bonds import BondPortfolio
    from trinom.bonds.portfolio import BOND_FIELDS
    from trinom.instruments import BondPortfolio as MovedBonds
    from trinom.instruments import Portfolio
    from trinom.portfolio import FIELDS, describe

    assert trinom.Portfolio is Portfolio and BondPortfolio is MovedBonds is trinom.BondPortfolio
    assert "strike" in FIELDS and "term_unit" in BOND_FIELDS and callable(describe)
