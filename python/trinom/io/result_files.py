"""The command line's outputs, in the format their suffix picks (:data:`trinom.io.files.PRICE_FORMATS`,
:data:`~trinom.io.files.TABLE_FORMATS`): prices and tables as ``.csv``, ``.parquet`` or (prices only) ``.out``,
each written whole or not at all.

* prices ``.csv``: options ``id,price,error``; bonds ``id,dirty,clean,accrued,error``;
* prices ``.out``: the prices (a bond's dirty price) as one Futhark array, 17 significant digits;
* prices ``.parquet``: ``id, price, clean, accrued, error`` (:class:`trinom.io.parquet.ResultWriter`);
* tables (risk, OAS, a scenario grid): their columns, as CSV (17 significant digits) or Parquet.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..result import Prices
from . import option_books as io
from . import parquet
from .files import PRICE_FORMATS, TABLE_FORMATS, output_format, replacing
from .textdata import format_float


def write_price_file(path: str | Path, result: Prices, ids: Sequence[str], what: str = "--out",
                     bonds: bool | None = None) -> None:
    """``result`` (one price per row, ``ids`` naming the rows) in the format ``path``'s suffix picks; ``bonds``: the
    book is of bonds (a bond file's columns even without a row; None: where the result has a bond)."""
    path = Path(path)
    kind = output_format(path, PRICE_FORMATS, what, "prices")
    bonds = bool((result.instrument == "bond").any()) if bonds is None else bonds
    if kind == "parquet":
        writer = parquet.ResultWriter(path)
        try:
            writer.write(list(ids), result)
        except BaseException as err:
            writer.close(err)
            raise
        writer.close()
    elif kind == "csv" and bonds:
        write_bond_prices(path, result, ids)
    elif kind == "csv":
        io.write_prices(path, result.price, list(result.error), ids)
    else:
        io.write_prices(path, result.price)


def write_bond_prices(path: str | Path, result: Prices, ids: Sequence[object] | None = None) -> None:
    """``.csv``: ``id,dirty,clean,accrued,error`` (``ids``: the book's, default the row numbers); ``.out``: the
    dirty prices as one array; any other suffix is an error."""
    path = Path(path)
    if output_format(path, {".out": "out", ".csv": "csv"}, "file", "bond prices") == "out":
        io.write_prices(path, result.price)
        return
    with replacing([path]) as (temporary,), open(temporary, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "dirty", "clean", "accrued", "error"])
        for k in range(len(result)):
            cells = ["" if np.isnan(v) else format_float(float(v), digits17=True)
                     for v in (result.price[k], result.clean[k], result.accrued[k])]
            writer.writerow([k if ids is None else ids[k], *cells, result.error[k]])


def write_table_file(path: str | Path, table: Any, what: str = "--out") -> None:
    """A pandas table as ``.csv`` or ``.parquet``, by ``path``'s suffix."""
    path = Path(path)
    kind = output_format(path, TABLE_FORMATS, what, "a table")
    with replacing([path]) as (temporary,):
        if kind == "csv":
            table.to_csv(temporary, index=False, float_format="%.17g")
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pandas(table, preserve_index=False), temporary)


def write_scenario_grid(path: str | Path | None, result: Prices, ids: Sequence[str], scenarios: Sequence[str]) -> None:
    """A scenario grid's prices (``(scenarios, rows)``) as the table ``id,scenario,price,error``, scenario by scenario,
    to ``path`` (.csv or .parquet, written whole or not at all) or, with ``path`` None, to stdout."""
    import sys

    import pandas as pd  # here, not at start-up: only a scenario grid needs it

    grid = np.atleast_2d(result.price)
    table = pd.DataFrame({"id": np.tile(np.asarray(ids, dtype=object), len(scenarios)),
                          "scenario": np.repeat(list(scenarios), len(ids)), "price": grid.reshape(-1),
                          "error": np.tile(result.error, len(scenarios))})
    if path is None:
        table.to_csv(sys.stdout, index=False, float_format="%.17g")
    else:
        write_table_file(path, table)


__all__ = ["write_bond_prices", "write_price_file", "write_scenario_grid", "write_table_file"]
