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
