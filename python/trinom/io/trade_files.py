"""The dated trades' files: ``trades.csv`` and its side tables ``schedule.csv`` (``id,date,price``) and
``notionals.csv`` (``id,date,notional``), each CSV or a Parquet table of the same columns (the contract:
:mod:`trinom.instruments.trades` and :mod:`trinom.instruments.side_tables`).

The readers keep each row's place (``trades.csv line 3``, ``book.parquet row 0``) so that every message of the book
names its file and line; the instruments check the cells (:class:`~trinom.instruments.trades.Trades`) and import no
file format. ``trinom.read_trades``, ``trinom.instruments.read_trades`` and the former paths
``trinom.instruments.trades.read_trades`` and ``trinom.instruments.side_tables.read_side_table`` are these functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..instruments.side_tables import SIDE_COLUMNS, SideTable, check_side_columns
from ..instruments.trades import TRADE_COLUMNS, Trades
from . import parquet
from .csvtable import read_table_lines
from .row_ids import check_row_ids


def read_trades(path: str | Path, *, as_of: Any, schedule: Any = None, notionals: Any = None) -> Trades:
    """A ``trades.csv`` (or a Parquet table of the same columns) as :class:`Trades`; each row's messages name the file
    and its line. Unknown columns are an error naming them; ``id`` and ``type`` are required. ``schedule`` and
    ``notionals``: the paths of a ``schedule.csv`` (``id,date,price``) and a ``notionals.csv`` (``id,date,notional``),
    CSV or Parquet (or tables, as :class:`Trades` takes them); their messages name their file and line."""
    path = Path(path)
    side = {kind: read_side_table(table, kind) if isinstance(table, (str, Path)) else table
            for kind, table in (("schedule", schedule), ("notionals", notionals))}

    required = ("id", "type")
    optional = [name for name in TRADE_COLUMNS if name not in required]
    if parquet.is_parquet(path):
        header, *cells = parquet.read_text_rows(path)
        unknown = [name for name in header if name not in TRADE_COLUMNS]
        missing = [name for name in required if name not in header]
        if unknown or missing:
            raise InputError([(None, name, f"{path}: unknown column '{name}' (trades have: {', '.join(TRADE_COLUMNS)})")
                              for name in unknown] + [(None, name, f"{path}: missing column '{name}'") for name in missing])
        columns = {name: [row[k] for row in cells] for k, name in enumerate(header)}
        lines = None
        where = [f"{path} row {k}" for k in range(len(cells))]
    else:
        columns, lines = read_table_lines(path, required, optional)
        where = [f"{path} line {line}" for line in lines]
    trades = Trades(as_of=as_of, where=where, **side, **columns)
    check_row_ids([None if v is None else str(v) for v in trades.column("id").tolist()], path, lines=lines)
    return trades


def read_side_table(path: str | Path, kind: str) -> SideTable:
    """A ``schedule.csv`` (``id,date,price``) or ``notionals.csv`` (``id,date,notional``), or a Parquet table of the
    same columns, with each row's place (``schedule.csv line 4``) for messages."""
    path = Path(path)
    columns = SIDE_COLUMNS[kind]
    if parquet.is_parquet(path):
        header, *cells = parquet.read_text_rows(path)
        check_side_columns(header, kind, path)
        table = {name: [row[k] for row in cells] for k, name in enumerate(header)}
        where = [f"{path} row {k}" for k in range(len(cells))]
    else:
        table, lines = read_table_lines(path, columns)
        where = [f"{path} line {line}" for line in lines]
    cells = [np.array(table[name], dtype=object).reshape(-1) for name in columns]
    return SideTable(kind, *cells, where=where)


__all__ = ["read_side_table", "read_trades"]
