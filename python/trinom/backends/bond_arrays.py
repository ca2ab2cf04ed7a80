"""A bond book's arrays as the CUDA library reads them, for a scenario batch: the book once per sigma move,
or the few bonds an engine call prices (what ``CudaEngine.price_entries`` passes to the library).

The arrays are those of :class:`trinom.bonds.BondPortfolio` (per bond, then per cash flow), made without a
portfolio's checks: the book was validated when it was lowered.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..book import Book

#: The per-bond and per-cash-flow fields the library reads (``cashflow_offset`` apart).
PER_BOND = ("term_unit", "term_steps", "a", "sigma", "maturity", "spread", "option_type", "strike", "first_exercise",
            "last_exercise", "exercise_frequency", "curve_index")
PER_FLOW = ("cashflow_step", "repayment", "coupon")


class BondArrays:
    """The fields of a :class:`trinom.bonds.BondPortfolio`, as plain arrays."""

    def __init__(self, **arrays: np.ndarray):
        self.__dict__.update(arrays)

    def __len__(self) -> int:
        return int(self.sigma.size)


def bond_blocks(book: Book, sigma_moves: np.ndarray) -> Any:
    """The bonds of ``book`` once per sigma move (sigma + move), one after the other (kept on the book)."""
    from . import lift

    if sigma_moves.size == 1 and sigma_moves[0] == 0.0:
        return lift.bonds(book)
    return book.cached(("cuda-bond-blocks", sigma_moves.tobytes()), lambda: _tiled(lift.bonds(book), sigma_moves))


def _tiled(bonds: Any, sigma_moves: np.ndarray) -> BondArrays:
    """``bonds`` once per sigma move, one copy after the other."""
    copies = sigma_moves.size
    flows = bonds.cashflow_step.size
    per_bond = {name: np.tile(getattr(bonds, name), copies) for name in PER_BOND if name != "sigma"}
    per_flow = {name: np.tile(getattr(bonds, name), copies) for name in PER_FLOW}
    offset = (bonds.cashflow_offset[:-1][None, :] + flows * np.arange(copies)[:, None]).reshape(-1)
    return BondArrays(**per_bond, **per_flow, sigma=(bonds.sigma[None, :] + sigma_moves[:, None]).reshape(-1),
                       cashflow_offset=np.append(offset, flows * copies))


def bonds_at(bonds: Any, rows: np.ndarray) -> BondArrays:
    """The bonds ``rows`` of a book's arrays (a portfolio or :class:`BondArrays`), with their cash flows."""
    per_bond = {name: getattr(bonds, name)[rows] for name in PER_BOND}
    flows = entries_of(bonds.cashflow_offset, rows)
    counts = np.diff(bonds.cashflow_offset)[rows]
    return BondArrays(**per_bond, cashflow_offset=np.concatenate(([0], np.cumsum(counts))),
                       **{name: getattr(bonds, name)[flows] for name in PER_FLOW})


def entries_of(offset: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The entry indices of trees ``rows`` (in that order) under ``offset``."""
    counts = np.diff(offset)[rows]
    return np.repeat(offset[rows] - np.concatenate(([0], np.cumsum(counts)[:-1])), counts) + np.arange(counts.sum())


__all__ = ["BondArrays", "bond_blocks", "bonds_at", "entries_of"]
