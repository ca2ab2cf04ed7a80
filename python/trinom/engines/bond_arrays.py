"""A bond book's arrays as the CUDA library reads them, for a scenario batch: the book once per sigma move,
or the few bonds an engine call prices (what ``CudaEngine.price_entries`` passes to the library).

The arrays are those of :class:`trinom.bonds.BondPortfolio` (per bond, per cash flow, per listed exercise point),
made without a portfolio's checks: the book was validated when it was lowered.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..lattice.book import Book
from ..ragged import runs

#: The per-bond, per-cash-flow and per-listed-point fields the library reads (``cashflow_offset`` and
#: ``exercise_offset`` apart).
PER_BOND = ("term_unit", "term_steps", "a", "sigma", "maturity", "spread", "option_type", "strike", "first_exercise",
            "last_exercise", "exercise_frequency", "curve_index")
PER_FLOW = ("cashflow_step", "cashflow_time", "repayment", "coupon")
PER_POINT = ("exercise_step", "exercise_price", "exercise_time")


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
    per_bond = {name: np.tile(getattr(bonds, name), copies) for name in PER_BOND if name != "sigma"}
    per_item = {name: np.tile(getattr(bonds, name), copies) for name in (*PER_FLOW, *PER_POINT)}
    return BondArrays(**per_bond, **per_item, sigma=(bonds.sigma[None, :] + sigma_moves[:, None]).reshape(-1),
                      cashflow_offset=_tiled_offset(bonds.cashflow_offset, copies),
                      exercise_offset=_tiled_offset(bonds.exercise_offset, copies))


def _tiled_offset(offset: np.ndarray, copies: int) -> np.ndarray:
    """The offsets of ``copies`` copies of the items ``offset`` locates, one copy after the other."""
    items = int(offset[-1])
    tiled = (offset[:-1][None, :] + items * np.arange(copies)[:, None]).reshape(-1)
    return np.append(tiled, items * copies)


def bonds_at(bonds: Any, rows: np.ndarray) -> BondArrays:
    """The bonds ``rows`` of a book's arrays (a portfolio or :class:`BondArrays`), with their cash flows and listed
    exercise points."""
    per_bond = {name: getattr(bonds, name)[rows] for name in PER_BOND}
    flows, points = entries_of(bonds.cashflow_offset, rows), entries_of(bonds.exercise_offset, rows)
    return BondArrays(**per_bond, cashflow_offset=_offset_of(bonds.cashflow_offset, rows),
                      exercise_offset=_offset_of(bonds.exercise_offset, rows),
                      **{name: getattr(bonds, name)[flows] for name in PER_FLOW},
                      **{name: getattr(bonds, name)[points] for name in PER_POINT})


def _offset_of(offset: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The offsets of the items of trees ``rows`` (in that order), gathered one tree after the other."""
    return np.concatenate(([0], np.cumsum(np.diff(offset)[rows])))


def entries_of(offset: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The entry indices of trees ``rows`` (in that order) under ``offset``."""
    return runs(offset[rows], np.diff(offset)[rows])


__all__ = ["BondArrays", "bond_blocks", "bonds_at", "entries_of"]
