"""Books, curves and results as Parquet (pyarrow), read whole or by row groups (issue 15).

One file holds a book and its curves:

* options: one row per option, the columns of ``trinom.FIELDS`` (``option_type`` 0 = call, 1 = put);
* bonds: one row per bond, :class:`trinom.BondPortfolio`'s per-bond fields, and its cash flows as list
  columns ``cashflow_step``, ``repayment``, ``coupon`` (``cashflow_count`` is the lists' length);
* the curves, in the file's metadata (``trinom.curves``: JSON names, days and rates), so that a bond's
  ``curve_index`` numbers them; an option file may hold one (``--yield`` otherwise).

An ``id`` column, if present, names the rows in results. Results are ``id, price, clean, accrued, error``.
:func:`row_groups` yields a book one row group at a time, so a book larger than memory is priced in
bounded memory (``trinom price book.parquet --out prices.parquet`` does).

>>> import tempfile, trinom
>>> p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[12],
...                      a=[0.1], sigma=[0.01], option_type=["put"])
>>> path = tempfile.mkdtemp() + "/book.parquet"
>>> write_book(path, p)
>>> book, curves, ids = read_book(path)
>>> book.strike.tolist(), curves, ids.tolist()
([63.0], None, ['0'])
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .bonds.portfolio import BondPortfolio
from .curve import YieldCurve
from .errors import InputError
from .files import replacing
from .portfolio import FIELDS, Portfolio
from .result import Prices

#: Cash-flow fields held as list columns of a bond file.
FLOW_FIELDS = ("cashflow_step", "repayment", "coupon")
CURVES_KEY = b"trinom.curves"


def write_book(path: str | Path, instruments: Portfolio | BondPortfolio, curves: Sequence[YieldCurve] | None = None,
               ids: Sequence[object] | None = None, row_group_size: int = 1 << 20) -> None:
    """``instruments`` (and ``curves``) as one Parquet file, in row groups of ``row_group_size`` rows."""
    pa, pq = _arrow()
    columns: dict[str, Any] = {"id": [str(i) for i in (range(len(instruments)) if ids is None else ids)]}
    fields = instruments.as_dict()
    if isinstance(instruments, BondPortfolio):
        offsets = pa.array(instruments.cashflow_offset.astype(np.int32))
        for name, values in fields.items():
            if name in FLOW_FIELDS:
                columns[name] = pa.ListArray.from_arrays(offsets, pa.array(values))
            elif name != "cashflow_count":
                columns[name] = values
    else:
        columns.update(fields)
    table = pa.table(columns)
    if curves:
        curves = tuple(curves) if not isinstance(curves, YieldCurve) else (curves,)
        meta = [{"days": c.days.tolist(), "rates": np.asarray(c.rates).tolist()} for c in curves]
        table = table.replace_schema_metadata({CURVES_KEY: json.dumps(meta).encode()})
    with replacing([Path(path)]) as (target,):
        pq.write_table(table, target, row_group_size=row_group_size)


def read_book(path: str | Path) -> tuple[Portfolio | BondPortfolio, tuple[YieldCurve, ...] | None, np.ndarray]:
    """The book of a Parquet file, its curves (None if the file holds none) and its row ids."""
    _pa, pq = _arrow()
    path = _existing(path)
    table = pq.read_table(path)
    return _book_of(table, path), _curves_in(table.schema.metadata, path), _ids(table)


def row_groups(path: str | Path) -> Iterator[tuple[int, Portfolio | BondPortfolio, Any]]:
    """``(first row, book, ids)`` of each row group of a Parquet book, in order (one group in memory at a time);
    the ids stay an Arrow array (a million Python strings a group would fragment the heap)."""
    _pa, pq = _arrow()
    path = _existing(path)
    handle = pq.ParquetFile(path)
    first = 0
    for group in range(handle.num_row_groups):
        table = handle.read_row_group(group)
        book = _book_of(table, path)
        ids = (table.column("id") if "id" in table.column_names
               else _pa.array(np.arange(first, first + table.num_rows)).cast(_pa.string()))
        yield first, book, ids
        first += table.num_rows


def curves_of(path: str | Path) -> tuple[YieldCurve, ...] | None:
    """The curves in a Parquet book's metadata, or None."""
    _pa, pq = _arrow()
    return _curves_in(pq.read_schema(_existing(path)).metadata, path)


def _curves_in(metadata: dict[bytes, bytes] | None, path: str | Path) -> tuple[YieldCurve, ...] | None:
    """The curves of a Parquet schema's metadata (``trinom.curves``), or None."""
    metadata = metadata or {}
    if CURVES_KEY not in metadata:
        return None
    try:
        return tuple(YieldCurve(c["rates"], c["days"]) for c in json.loads(metadata[CURVES_KEY]))
    except (ValueError, KeyError, TypeError) as err:
        raise InputError([(None, "curves", f"{path}: unreadable trinom.curves metadata ({err})")]) from None


def rows(path: str | Path) -> int:
    """The number of rows of a Parquet file (from its footer)."""
    _pa, pq = _arrow()
    return int(pq.ParquetFile(_existing(path)).metadata.num_rows)


def is_parquet(path: str | Path) -> bool:
    return Path(path).suffix.lower() in (".parquet", ".pq")


def read_text_rows(path: str | Path) -> list[list[str]]:
    """A small Parquet table (a curve, a scenario file) as CSV-like rows: the header, then each row's cells as
    text (an empty cell for a null), so that the CSV readers take it as they are."""
    _pa, pq = _arrow()
    table = pq.read_table(_existing(path))
    columns = [table.column(name).to_pylist() for name in table.column_names]
    text = [["" if value is None else repr(value) if isinstance(value, float) else str(value) for value in column]
            for column in columns]
    return [list(table.column_names), *map(list, zip(*text, strict=True))]


class ResultWriter:
    """Results appended one part at a time to a Parquet file (``id, price, clean, accrued, error``), made whole or
    not at all (:func:`trinom.files.replacing`)."""

    def __init__(self, path: str | Path):
        self._pa, self._pq = _arrow()
        self._context = replacing([Path(path)])
        (self._target,) = self._context.__enter__()
        self._writer: Any = None

    def write(self, ids: Any, result: Prices) -> None:
        """Append ``result`` with its rows' ``ids`` (an Arrow array, or anything NumPy makes strings of)."""
        if not isinstance(ids, (self._pa.Array, self._pa.ChunkedArray)):
            ids = np.asarray(ids, dtype=object).astype(str)
        errors = result.error
        error = (self._pa.nulls(len(errors), self._pa.string()).fill_null("") if not (errors != "").any()
                 else np.asarray(errors, dtype=object).astype(str))
        table = self._pa.table({"id": ids, "price": result.price,
                                "clean": result.clean, "accrued": result.accrued, "error": error})
        if self._writer is None:
            self._writer = self._pq.ParquetWriter(self._target, table.schema)
        self._writer.write_table(table)

    def close(self, failed: BaseException | None = None) -> None:
        if self._writer is not None:
            self._writer.close()
        if failed is None:
            self._context.__exit__(None, None, None)
        else:
            self._context.__exit__(type(failed), failed, failed.__traceback__)


def _book_of(table: Any, path: Path | str) -> Portfolio | BondPortfolio:
    names = set(table.column_names)
    if set(FLOW_FIELDS) <= names:
        fields: dict[str, Any] = {}
        for name in table.column_names:
            if name == "id":
                continue
            column = table.column(name).combine_chunks()
            if name in FLOW_FIELDS:
                fields[name] = column.flatten().to_numpy(zero_copy_only=False)
                fields["cashflow_count"] = np.diff(column.offsets.to_numpy())
            else:
                fields[name] = column.to_numpy(zero_copy_only=False)
        return BondPortfolio(**fields)
    missing = [f for f in FIELDS if f not in names]
    if missing:
        raise InputError([(None, "file", f"{path}: an option file needs the columns {', '.join(FIELDS)}; missing "
                           f"{', '.join(missing)} (a bond file has list columns {', '.join(FLOW_FIELDS)})")])
    return Portfolio(**{f: table.column(f).to_numpy() for f in FIELDS})


def book_of_table(table: Any) -> Portfolio | BondPortfolio:
    """The book of an Arrow table in this module's layout (options: their fields; bonds: cash flows as lists)."""
    return _book_of(table, "the Arrow table")


def _ids(table: Any) -> np.ndarray:
    if "id" in table.column_names:
        return np.asarray(table.column("id").to_pylist(), dtype=object).astype(str)
    return np.arange(table.num_rows).astype(str)


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise InputError([(None, "file", f"{path}: no such file")])
    return path


def _arrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError([(None, "file", "Parquet needs pyarrow: pip install pyarrow")]) from None
    return pa, pq


__all__ = ["FLOW_FIELDS", "ResultWriter", "book_of_table", "curves_of", "is_parquet", "read_book", "read_text_rows",
           "row_groups", "rows", "write_book"]
