"""The side tables of a ``trades.csv``: ``schedule.csv`` (``id,date,price``: explicit and step-down exercise
schedules, a trade's exercise dates and their clean prices per 100 of the outstanding notional) and
``notionals.csv`` (``id,date,notional``: amortizing notionals, from a coupon date on the notional outstanding, in the
trade's notional units).

A side table is read from CSV or Parquet by :func:`trinom.io.trade_files.read_side_table` (each row's place kept for
messages: the file formats live in ``io/``, above the instruments) or given as a pandas DataFrame or a mapping of its
columns (:func:`side_table`); its columns must be exactly its contract's (:data:`SIDE_COLUMNS`). Its cells are checked
against the book they belong to by :class:`~trinom.instruments.trades.Trades`, which reads them into :class:`SideRows`.

Formerly part of :mod:`trinom.instruments.trades`, whose names for these stay importable for one release.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ..conventions.names import Problem
from ..errors import InputError

#: The columns of the optional ``schedule.csv`` (explicit and step-down exercise schedules: a trade's exercise dates
#: and their clean prices per 100 of the outstanding notional) and ``notionals.csv`` (amortizing notionals: from a
#: coupon date on, the notional outstanding, in the trade's notional units), by the name each is given as.
SIDE_COLUMNS: Final[dict[str, tuple[str, ...]]] = {"schedule": ("id", "date", "price"),
                                                   "notionals": ("id", "date", "notional")}


@dataclass(frozen=True, eq=False)
class SideTable:
    """A ``schedule.csv`` or ``notionals.csv`` as given: its cells (id, date, value) and each row's place."""

    kind: str  #: ``schedule`` or ``notionals``
    ids: np.ndarray
    dates: np.ndarray
    values: np.ndarray
    where: list[str]

    def __len__(self) -> int:
        return len(self.where)

    def take(self, rows: np.ndarray) -> SideTable:
        """The table's ``rows`` (indices, in that order), each with its place."""
        return SideTable(self.kind, *(np.asarray(cells, dtype=object)[rows] for cells in (self.ids, self.dates,
                                                                                          self.values)),
                         where=[self.where[k] for k in rows.tolist()])


@dataclass(frozen=True, eq=False)
class SideRows:
    """A side table's readable rows, in trade-row and date order: each one's trade row, date (a day number), value
    and place."""

    row: np.ndarray
    day: np.ndarray
    value: np.ndarray
    where: np.ndarray

    @classmethod
    def empty(cls) -> SideRows:
        return cls(row=np.zeros(0, dtype=np.int64), day=np.zeros(0, dtype=np.int64), value=np.zeros(0),
                   where=np.zeros(0, dtype=object))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per run of one trade's rows, its first and one-past-last index."""
        new = np.ones(self.row.size, dtype=bool)
        new[1:] = self.row[1:] != self.row[:-1]
        starts = np.flatnonzero(new)
        return starts, np.append(starts[1:], self.row.size)


def side_table(table: Any, kind: str) -> SideTable | None:
    """A schedule or notionals table given as a DataFrame or a mapping of its columns (or read already)."""
    if table is None or isinstance(table, SideTable):
        return table
    columns = SIDE_COLUMNS[kind]
    if hasattr(table, "columns") and hasattr(table, "to_numpy"):
        given = {str(c): table[c].to_numpy(dtype=object) for c in table.columns}
    elif isinstance(table, Mapping):
        given = {str(k): v for k, v in table.items()}
    else:
        raise InputError([(None, kind, f"{kind} must be a DataFrame or a mapping of its columns "
                           f"({', '.join(columns)}), got {type(table).__name__}")])
    check_side_columns(list(given), kind, kind)
    cells = [np.asarray(given[name], dtype=object).reshape(-1) for name in columns]
    sizes = {cell.size for cell in cells}
    if len(sizes) != 1:
        raise InputError([(None, kind, f"{kind}: columns of different lengths ("
                           f"{', '.join(f'{n} {c.size}' for n, c in zip(columns, cells, strict=True))})")])
    return SideTable(kind, *cells, where=[f"{kind} row {k}" for k in range(cells[0].size)])


def check_side_columns(header: Sequence[str], kind: str, name: object) -> None:
    """A side table's columns must be exactly its contract's: an unknown or missing one is an error naming it."""
    columns = SIDE_COLUMNS[kind]
    problems: list[Problem] = [(None, f"{kind}.{c}", f"{name}: unknown column '{c}' ({kind} has: {', '.join(columns)})")
                               for c in header if c not in columns]
    problems += [(None, f"{kind}.{c}", f"{name}: missing column '{c}' ({kind} has: {', '.join(columns)})")
                 for c in columns if c not in header]
    if problems:
        raise InputError(problems)
