"""The package layout: instruments have one home, and the old import paths stay for one release."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(("old", "new"), [("trinom.portfolio", "trinom.instruments.option"),
                                          ("trinom.bonds.portfolio", "trinom.instruments.bond"),
                                          ("trinom.backends", "trinom.engines"),
                                          ("trinom.backends.costs", "trinom.engines.costs"),
                                          ("trinom.backends.scenario_batch", "trinom.engines.scenario_batch"),
                                          ("trinom.backends.lift", "trinom.engines.lift"),
                                          ("trinom.backends.futhark_fast", "trinom.engines.futhark_fast"),
                                          ("trinom.backends.bonds_futhark_fast", "trinom.engines.bonds_futhark_fast"),
                                          ("trinom.backends.engine", "trinom.engines.engine"),
                                          ("trinom.backends.cuda", "trinom.engines.cuda"),
                                          ("trinom.auto", "trinom.engines.auto"),
                                          ("trinom.bonds.reference", "trinom.engines.bonds_reference"),
                                          ("trinom.book", "trinom.lattice.book"),
                                          ("trinom.market", "trinom.model.market"),
                                          ("trinom.closed_form", "trinom.model.closed_form")])
def test_old_import_paths_are_the_moved_modules(old: str, new: str):
    assert importlib.import_module(old) is importlib.import_module(new)


def test_old_paths_are_attributes_and_share_one_registry():
    """``trinom.backends`` is an attribute of ``trinom`` as when it was a module, and an engine registered through
    either path is found through the other (one registry, not two copies)."""
    import trinom
    from trinom import engines
    from trinom.backends import Engine, get, names, register, release_memory, status  # documented names

    assert trinom.backends is engines and trinom.auto is engines.auto and trinom.closed_form.__name__ == (
        "trinom.engines.closed_form")
    assert trinom.bonds.reference is importlib.import_module("trinom.engines.bonds_reference")
    assert get is engines.get and names is engines.names and register is engines.register
    assert status is engines.status and release_memory is engines.release_memory and Engine is engines.Engine


def test_the_lattice_package_keeps_the_geometry_names():
    """``trinom.lattice`` (documented: ``tree_geometry``, ``probability_table``, ``bond_geometry``, ``work``) is now
    the lattice's folder; the geometry's names are still its names."""
    from trinom.lattice import geometry

    lattice = importlib.import_module("trinom.lattice")
    for name in ("tree_geometry", "probability_table", "bond_geometry", "work", "Convention", "probabilities"):
        assert getattr(lattice, name) is getattr(geometry, name)


def test_public_names_are_unchanged():
    import trinom
    from trinom.bonds import BondPortfolio
    from trinom.bonds.portfolio import BOND_FIELDS
    from trinom.instruments import BondPortfolio as MovedBonds
    from trinom.instruments import Portfolio
    from trinom.portfolio import FIELDS, describe

    assert trinom.Portfolio is Portfolio and BondPortfolio is MovedBonds is trinom.BondPortfolio
    assert "strike" in FIELDS and "term_unit" in BOND_FIELDS and callable(describe)


#: Names that moved out of trinom.instruments.trades: the dated-bond lowering and the side tables.
_MOVED_FROM_TRADES = {
    "trinom.instruments.dated_bond": ("DatedBonds", "ExerciseDates", "ExerciseWindows", "Amortization", "LoweredBonds",
                                      "lower_dated_bonds", "step_of", "date_of_step", "NO_EXERCISE_PRICE",
                                      "YEAR_DAYS"),
    "trinom.instruments.side_tables": ("SIDE_COLUMNS", "read_side_table"),
}


@pytest.mark.parametrize(("new", "name"), [(new, name) for new, names in _MOVED_FROM_TRADES.items() for name in names])
def test_names_moved_out_of_trades_stay_importable_there(new: str, name: str):
    trades = importlib.import_module("trinom.instruments.trades")
    assert getattr(trades, name) is getattr(importlib.import_module(new), name)
    assert name in trades.__all__
