"""The documented paths keep working while the modules move into their folders (issue 36, item 5: a contract).

Every ``trinom.`` path that README.md and docs/*.md name resolves, and a path that is a module is the same module
object whether imported or reached by attributes (a name the docs give a function, ``trinom.risk`` or
``trinom.cli.main``, may shadow a module of that name). The modules that moved are the same objects under their
former names; ``trinom.risk`` and ``trinom.oas`` are the functions.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Dotted names in the docs that are no Python path: the Parquet metadata key of a book's conventions.
NOT_PATHS = frozenset({"trinom.convention"})


def documented() -> list[str]:
    """The ``trinom.a.b`` names of README.md and docs/*.md."""
    names: set[str] = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        names |= set(re.findall(r"\btrinom(?:\.[A-Za-z_]\w*)+", path.read_text()))
    return sorted(names - NOT_PATHS)


def by_attributes(path: str) -> Any:
    """``trinom.a.b`` reached from ``import trinom`` by attributes, importing a submodule only where the attribute
    is missing (as ``import trinom.a`` would)."""
    parts = path.split(".")
    found: Any = importlib.import_module(parts[0])
    for k, name in enumerate(parts[1:], start=2):
        if not hasattr(found, name):
            importlib.import_module(".".join(parts[:k]))
        found = getattr(found, name)
    return found


@pytest.mark.parametrize("path", documented())
def test_a_documented_path_resolves(path: str):
    found = by_attributes(path)
    if isinstance(found, ModuleType):  # else a function, class or constant (trinom.risk, trinom.cli.main)
        assert importlib.import_module(path) is found, f"{path} imports as another module than its attribute"


@pytest.mark.parametrize(("old", "new"), [
    ("trinom.scenarios", "trinom.analytics.scenarios"),
    ("trinom.spreads", "trinom.analytics.spreads"),
    ("trinom.parquet_files", "trinom.distributed.parquet_files"),
    ("trinom.shared_results", "trinom.distributed.shared_results"),
    ("trinom.worker_calls", "trinom.distributed.worker_calls"),
    ("trinom.worker_tuning", "trinom.distributed.worker_tuning"),
    ("trinom.generator", "trinom.paper.option_generator"),
    ("trinom.bonds.generator", "trinom.paper.bond_generator"),
    ("trinom.lattice.geometry", "trinom.model.tree_geometry"),
    ("trinom.lattice.columns", "trinom.instruments.columns"),
])
def test_a_moved_module_is_the_same_module_under_its_former_name(old: str, new: str):
    assert importlib.import_module(old) is importlib.import_module(new) is by_attributes(old)


def test_risk_and_oas_stay_the_functions_and_the_bond_names_stay():
    import trinom
    from trinom.analytics import oas, risk
    from trinom.bonds import BOND_BACKENDS, BondPortfolio, BondPrices, accrued_interest, price_bonds, read_bonds

    assert trinom.risk is risk.risk and trinom.oas is oas.oas
    assert trinom.price_bonds is price_bonds and trinom.BondPrices is BondPrices and trinom.BondPortfolio is BondPortfolio
    assert callable(accrued_interest) and callable(read_bonds) and "auto" in BOND_BACKENDS
    for name in ("price_chunk", "distribute", "DistributedBook", "price_on", "scatter_count"):
        assert getattr(trinom.distributed, name) is not None
    assert trinom.distribute is trinom.distributed.distribute
