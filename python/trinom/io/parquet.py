"""Books, curves and results as Parquet (pyarrow), read whole or by row groups (issue 15).

One file holds a book and its curves:

* options: one row per option, the columns of ``trinom.FIELDS`` (``option_type`` 0 = call, 1 = put);
* bonds: one row per bond, :class:`trinom.BondPortfolio`'s per-bond fields, and its cash flows as list
  columns ``cashflow_step``, ``repayment``, ``coupon`` (``cashflow_count`` is the lists' length);
* the curves, in the file's metadata (``trinom.curves``: JSON names, days and rates), so that a bond's
  ``curve_index`` numbers them; an option file may hold one (``--yield`` otherwise);
* an option book of the thesis' convention says so in the metadata (``trinom.convention``: ``thesis``; none: the
  standard convention), so that it reads back as it was written.

Columns hold numbers (integer or floating Arrow types; ``option_type`` may be text, ``call``/``put``), one column
of each name; another type, a column given twice or a file that is no Parquet file is an :class:`InputError`
naming the file and the column.

An ``id`` column, if present, names the rows in results (no id may be null, empty or repeated); without one
the rows are named by their row numbers. Any other column is an error, as in the CSV readers. Results are
``id, price, clean, accrued, error``.
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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, check_error_mode
from ..instruments.bond import _INTEGER_FIELDS, BOND_FIELDS, BondPortfolio
from ..instruments.columns import show
from ..instruments.option import CONVENTIONS, FIELDS, Portfolio, book_convention
from ..model.curve import YieldCurve
from ..result import Prices
from .files import refuse_listed_points, replacing
from .row_ids import check_row_ids, row_numbers
from .textdata import WHOLE_NUMBER_LIMIT, not_whole

#: Cash-flow fields held as list columns of a bond file.
FLOW_FIELDS = ("cashflow_step", "repayment", "coupon")
CURVES_KEY = b"trinom.curves"
#: Metadata key of an option book's convention (absent: ``standard``).
CONVENTION_KEY = b"trinom.convention"
#: The columns of a result file (:class:`ResultWriter`), as an Arrow schema where pyarrow is installed.
RESULT_COLUMNS = (("id", "string"), ("price", "float64"), ("clean", "float64"), ("accrued", "float64"),
                  ("error", "string"))


def write_book(path: str | Path, instruments: Portfolio | BondPortfolio, curves: Sequence[YieldCurve] | None = None,
               ids: Sequence[object] | None = None, row_group_size: int = 1 << 20) -> None:
    """``instruments`` (and ``curves``) as one Parquet file, in row groups of ``row_group_size`` rows; ``ids``
    (default the row numbers) must be one per row, none empty or repeated."""
    refuse_listed_points(instruments, path)
    pa, pq = _arrow()
    names = row_numbers(len(instruments)) if ids is None else check_row_ids(
        [None if i is None else str(i) for i in ids], path)
    if len(names) != len(instruments):
        raise InputError([(None, "id", f"{path}: {len(names)} ids for {len(instruments)} rows")])
    columns: dict[str, Any] = {"id": names}
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
    metadata: dict[bytes, bytes] = {}
    if curves:
        curves = tuple(curves) if not isinstance(curves, YieldCurve) else (curves,)
        meta = [{"days": c.days.tolist(), "rates": np.asarray(c.rates).tolist()} for c in curves]
        metadata[CURVES_KEY] = json.dumps(meta).encode()
    if isinstance(instruments, Portfolio) and instruments.convention != "standard":
        metadata[CONVENTION_KEY] = instruments.convention.encode()
    if metadata:
        table = table.replace_schema_metadata(metadata)
    with replacing([Path(path)]) as (target,):
        pq.write_table(table, target, row_group_size=row_group_size)


def read_book(path: str | Path, errors: str = "raise") -> tuple[Portfolio | BondPortfolio, tuple[YieldCurve, ...] | None,
                                                                np.ndarray]:
    """The book of a Parquet file, its curves (None if the file holds none) and its row ids (text).

    With ``errors="mask"`` a null cell, or no whole number where one is needed, is its row's problem (as a CSV
    cell that is no number is); columns nobody reads, a missing column, or an id that is null, empty or
    repeated is an :class:`InputError` either way."""
    check_error_mode(errors)
    _pa, pq = _arrow()
    path = _existing(path)
    _schema(path)
    table = _readable(path, lambda: pq.read_table(path))
    ids = _checked_ids(table, path)
    book = _book_of(table, path, errors=errors)
    # Python strings (a NumPy string array would drop an id's trailing NUL characters)
    return book, _curves_in(table.schema.metadata, path), np.asarray(ids.to_pylist(), dtype=object)


def row_groups(path: str | Path, errors: str = "raise") -> Iterator[tuple[int, Portfolio | BondPortfolio, Any]]:
    """``(first row, book, ids)`` of each row group of a Parquet book, in order (one group in memory at a time);
    the ids stay an Arrow array (a million Python strings a group would fragment the heap). The file's ids are
    checked first, all at once (:func:`check_ids`); ``errors`` as for :func:`read_book`, rows numbered in the file."""
    check_error_mode(errors)
    _pa, pq = _arrow()
    path = _existing(path)
    check_ids(path)
    handle = _readable(path, lambda: pq.ParquetFile(path))
    first = 0
    for group in range(handle.num_row_groups):
        table = _readable(path, lambda g=group: handle.read_row_group(g))
        book = _book_of(table, path, first, errors)
        yield first, book, _id_column(table, first)
        first += table.num_rows


def check_ids(path: str | Path) -> None:
    """An :class:`InputError` unless every id of a Parquet book is present, not empty and not repeated; reads the
    ``id`` column only (a book without one is named by its row numbers)."""
    _pa, pq = _arrow()
    path = _existing(path)
    if "id" in _schema(path).names:
        _checked_ids(_readable(path, lambda: pq.read_table(path, columns=["id"])), path)


def curves_of(path: str | Path) -> tuple[YieldCurve, ...] | None:
    """The curves in a Parquet book's metadata, or None."""
    return _curves_in(_schema(_existing(path)).metadata, path)


def _curves_in(metadata: dict[bytes, bytes] | None, path: str | Path) -> tuple[YieldCurve, ...] | None:
    """The curves of a Parquet schema's metadata (``trinom.curves``), or None."""
    metadata = metadata or {}
    if CURVES_KEY not in metadata:
        return None
    try:
        return tuple(YieldCurve(c["rates"], c["days"]) for c in json.loads(metadata[CURVES_KEY]))
    except (ValueError, KeyError, TypeError) as err:
        raise InputError([(None, "curves", f"{path}: unreadable trinom.curves metadata ({err})")]) from None


def holds_bonds(path: str | Path) -> bool:
    """Whether a Parquet book holds bonds (it has a cash-flow list column), from its schema alone."""
    return bool(set(_schema(_existing(path)).names) & set(FLOW_FIELDS))


def rows(path: str | Path) -> int:
    """The number of rows of a Parquet file (from its footer)."""
    _pa, pq = _arrow()
    path = _existing(path)
    return int(_readable(path, lambda: pq.ParquetFile(path)).metadata.num_rows)


def column_names(path: str | Path) -> list[str]:
    """The columns of a Parquet file (from its schema: no row is read)."""
    return [str(name) for name in _schema(_existing(path)).names]


def is_parquet(path: str | Path) -> bool:
    return Path(path).suffix.lower() in (".parquet", ".pq")


def read_text_rows(path: str | Path) -> list[list[str]]:
    """A small Parquet table (a curve, a scenario file) as CSV-like rows: the header, then each row's cells as
    text (an empty cell for a null), so that the CSV readers take it as they are."""
    _pa, pq = _arrow()
    path = _existing(path)
    _schema(path)
    table = _readable(path, lambda: pq.read_table(path))
    columns = [table.column(name).to_pylist() for name in table.column_names]
    text = [["" if value is None else repr(value) if isinstance(value, float) else str(value) for value in column]
            for column in columns]
    return [list(table.column_names), *map(list, zip(*text, strict=True))]


class ResultWriter:
    """Results appended one part at a time to a Parquet file (``id, price, clean, accrued, error``), made whole or
    not at all (:func:`trinom.io.files.replacing`)."""

    def __init__(self, path: str | Path):
        self._pa, self._pq = _arrow()
        self._context = replacing([Path(path)])
        (self._target,) = self._context.__enter__()
        self._writer: Any = None

    def write(self, ids: Any, result: Prices) -> None:
        """Append ``result`` with its rows' ``ids`` (an Arrow array, or items that ``str`` makes text of)."""
        table = result_table(ids, result)
        if self._writer is None:
            self._writer = self._pq.ParquetWriter(self._target, table.schema)
        self._writer.write_table(table)

    def close(self, failed: BaseException | None = None) -> None:
        """Finish the file: in place if ``failed`` is None, else removed (a book of no rows: a table of none)."""
        if self._writer is None and failed is None:
            self._pq.write_table(result_schema().empty_table(), self._target)
        if self._writer is not None:
            self._writer.close()
        if failed is None:
            self._context.__exit__(None, None, None)
        else:
            self._context.__exit__(type(failed), failed, failed.__traceback__)


def result_table(ids: Any, result: Prices) -> Any:
    """The Arrow table of a result file's rows (``id, price, clean, accrued, error``): ``result`` with its rows'
    ``ids`` (an Arrow array, or items that ``str`` makes text of)."""
    pa, _pq = _arrow()
    if not isinstance(ids, (pa.Array, pa.ChunkedArray)):
        ids = pa.array([str(i) for i in ids], pa.string())  # NumPy's strings drop trailing NULs
    errors = result.error
    error = (pa.nulls(len(errors), pa.string()).fill_null("") if not (errors != "").any()
             else np.asarray(errors, dtype=object).astype(str))
    return pa.table({"id": ids, "price": result.price, "clean": result.clean, "accrued": result.accrued,
                     "error": error})


def result_schema() -> Any:
    """The Arrow schema of a result file's columns (:data:`RESULT_COLUMNS`)."""
    pa, _pq = _arrow()
    return pa.schema([(name, getattr(pa, kind)()) for name, kind in RESULT_COLUMNS])


def _book_of(table: Any, path: Path | str, first_row: int = 0, errors: str = "raise") -> Portfolio | BondPortfolio:
    """The book of an Arrow table: bonds where it has cash-flow list columns, else options; rows numbered from
    ``first_row`` in messages, ``errors`` as for :func:`read_book`."""
    _unique_columns(table.column_names, path)
    names = set(table.column_names)
    bonds = bool(names & set(FLOW_FIELDS))
    known = ("id", *BOND_FIELDS, *FLOW_FIELDS) if bonds else ("id", *FIELDS, "convention")
    needed = [f for f in (*BOND_FIELDS, *FLOW_FIELDS) if f != "cashflow_count"] if bonds else list(FIELDS)
    problems: list[tuple[int | None, str, str]] = [
        (None, name, f"{path}: unknown column '{name}' (a{' bond' if bonds else 'n option'} book's columns: "
         f"{', '.join(known)})") for name in table.column_names if name not in known]
    problems += [(None, name, f"{path}: {'a bond' if bonds else 'an option'} book needs the column '{name}'"
                  + ("" if bonds else f" (a bond book has the list columns {', '.join(FLOW_FIELDS)})"))
                 for name in needed if name not in names]
    problems += _type_problems(table, path, [name for name in needed if name in names] + (
        ["cashflow_count"] if bonds and "cashflow_count" in names else []), bonds)
    if problems:
        raise InputError(problems)
    table = _decoded(table)
    return _bonds_of(table, path, first_row, errors) if bonds else _options_of(table, path, first_row, errors)


def _options_of(table: Any, path: Path | str, first_row: int, errors: str) -> Portfolio:
    """The options of an Arrow table in this module's layout (null cells: their rows' problems), in the convention
    its metadata names."""
    convention = _convention(table.schema.metadata, path, table.column("convention")
                             if "convention" in table.column_names else None)
    fields = {f: table.column(f).to_numpy(zero_copy_only=False) for f in FIELDS}
    problems = []
    for f in FIELDS:
        nulls = _null_rows(table.column(f))
        if nulls.size:
            fields[f] = fields[f].astype(object if f == "option_type" else np.float64)
            fields[f][nulls] = "null" if f == "option_type" else np.nan
            problems += [(first_row + int(row), f, f"{path}: {f} is null") for row in nulls]
    if not problems:
        return Portfolio(convention=convention, **fields)
    if errors == "raise":
        raise InputError(problems)
    return Portfolio.with_read_problems([(row - first_row, f, m) for row, f, m in problems], convention=convention,
                                        **fields)


def _bonds_of(table: Any, path: Path | str, first_row: int, errors: str) -> BondPortfolio:
    """The bonds of an Arrow table in this module's layout: per-bond columns, cash flows as list columns.

    A null cell or an entry that is no whole number where one is needed is its bond's problem; a null or empty
    cash-flow list, lists of one bond of different lengths, or a ``cashflow_count`` column that differs from the
    lists' lengths is an error either way (the cash flows could not be laid to their bonds)."""
    import pyarrow.compute as pc

    fields: dict[str, Any] = {}
    counts: dict[str, np.ndarray] = {}
    fatal: list[tuple[int | None, str, str]] = []
    for name in FLOW_FIELDS:
        column = table.column(name).combine_chunks()
        fields[name] = column.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
        counts[name] = pc.list_value_length(column).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        fatal += [(first_row + int(row), name, f"{path}: the {name} list is "
                   f"{'null' if column[int(row)].as_py() is None else 'empty'}; a bond needs at least one cash flow")
                  for row in np.flatnonzero(counts[name] == 0)]
    count = counts[FLOW_FIELDS[0]]
    for name in FLOW_FIELDS[1:]:
        fatal += [(first_row + row, name, f"{path}: the cash-flow lists differ in length: {FLOW_FIELDS[0]} has "
                   f"{count[row]} entries, {name} {counts[name][row]}") for row in np.flatnonzero(counts[name] != count)]
    if "cashflow_count" in table.column_names:
        given = table.column("cashflow_count").to_numpy(zero_copy_only=False)
        fatal += [(first_row + row, "cashflow_count", f"{path}: cashflow_count is {show(given[row])}, but the "
                   f"cash-flow lists hold {count[row]} entries") for row in np.flatnonzero(given != count)]
    if fatal:
        raise InputError(sorted(fatal, key=lambda p: p[0]))
    fields["cashflow_count"] = count
    owner = np.repeat(np.arange(count.size), count)
    starts = np.cumsum(count) - count
    problems: list[tuple[int, str, str]] = []
    for name in BOND_FIELDS:
        if name == "cashflow_count":
            continue
        column = table.column(name)
        fields[name] = column.to_numpy(zero_copy_only=False)
        nulls = _null_rows(column)
        if nulls.size:
            fields[name] = fields[name].astype(object if name == "option_type" else np.float64)
            fields[name][nulls] = "null" if name == "option_type" else np.nan
            problems += [(first_row + int(row), name, f"{path}: {name} is null") for row in nulls]
    for name in (*BOND_FIELDS, *FLOW_FIELDS):
        if name not in _INTEGER_FIELDS or name == "cashflow_count":
            continue
        values = np.array(fields[name], dtype=np.float64)  # a copy: a bad entry becomes NaN, its bond's problem
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(values) | (values != np.round(values)) | (np.abs(values) > WHOLE_NUMBER_LIMIT)
        flows = name in FLOW_FIELDS
        nulls = set() if flows else set(_null_rows(table.column(name)).tolist())  # reported as null already
        for item in np.flatnonzero(bad):
            row = int(owner[item]) if flows else int(item)
            if item in nulls:
                continue
            entry = f" (entry {item - starts[row]} of the list)" if flows else ""
            problems.append((first_row + row, name, f"{path}: {name}{entry} {not_whole(float(values[item]))}, got "
                             f"{show(values[item])}"))
            values[item] = np.nan
        fields[name] = values
    if not problems:
        return BondPortfolio(**fields)
    problems.sort(key=lambda p: p[0])
    if errors == "raise":
        raise InputError(problems)
    return BondPortfolio.with_read_problems([(row - first_row, f, m) for row, f, m in problems], **fields)


def _null_rows(column: Any) -> np.ndarray:
    """The rows of an Arrow column that are null."""
    if column.null_count == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))


def book_of_table(table: Any) -> Portfolio | BondPortfolio:
    """The book of an Arrow table in this module's layout (options: their fields; bonds: cash flows as lists)."""
    _unique_columns(table.column_names, "the Arrow table")
    _checked_ids(table, "the Arrow table")
    return _book_of(table, "the Arrow table")


def _id_column(table: Any, first_row: int) -> Any:
    """The ids of an Arrow table's rows as an Arrow string array (its ``id`` column, else the row numbers)."""
    pa, _pq = _arrow()
    if "id" in table.column_names:
        return table.column("id").cast(pa.string())
    return pa.array(np.arange(first_row, first_row + table.num_rows)).cast(pa.string())


def _checked_ids(table: Any, path: Path | str) -> Any:
    """:func:`_id_column` of a whole table, after checking (in Arrow, for millions of rows) that no id is null,
    empty or repeated: an :class:`InputError` naming the rows, and for a repeated id the id and its rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        ids = _id_column(table, 0)
    except pa.ArrowException as err:
        raise InputError([(None, "id", f"{path}: the id column must hold text or whole numbers, got "
                           f"{table.schema.field('id').type} ({err})")]) from None
    ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    if "id" not in table.column_names or not len(ids):
        return ids
    problems: list[tuple[int | None, str, str]] = []
    for row in np.flatnonzero(ids.is_null().to_numpy(zero_copy_only=False)):
        problems.append((int(row), "id", f"{path}: the id is null; every row of a book with an id column needs one"))
    blank = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(ids)), 0).fill_null(False)
    for row in np.flatnonzero(blank.to_numpy(zero_copy_only=False)):
        problems.append((int(row), "id", f"{path}: the id is empty; every row of a book with an id column needs one"))
    tally = pc.value_counts(ids.drop_null())
    repeated = tally.field("values").filter(pc.greater(tally.field("counts"), 1))
    if len(repeated):
        rows = np.flatnonzero(pc.is_in(ids, value_set=repeated).fill_null(False).to_numpy(zero_copy_only=False))
        first_of: dict[str, int] = {}
        for row, name in zip(rows.tolist(), ids.take(rows).to_pylist(), strict=True):
            earlier = first_of.setdefault(name, row)
            if earlier != row:
                problems.append((row, "id", f"{path}: id {name!r} is repeated: rows {earlier} and {row} have it"))
    if problems:
        raise InputError(sorted(problems, key=lambda p: p[0]))
    return ids


def _unique_columns(names: Sequence[str], path: Path | str) -> None:
    """An :class:`InputError` naming every column that a table has more than once."""
    repeated = sorted({name for name in names if list(names).count(name) > 1})
    if repeated:
        raise InputError([(None, name, f"{path}: column '{name}' appears {list(names).count(name)} times") for name in
                          repeated])


def _type_problems(table: Any, path: Path | str, columns: Sequence[str],
                   bonds: bool) -> list[tuple[int | None, str, str]]:
    """A problem for each of ``columns`` whose Arrow type is not what it holds: numbers (integers or floats; an
    ``option_type`` may be text) and, for the cash flows, lists of numbers (a column of nulls is null cells)."""
    import pyarrow as pa

    def numeric(kind: Any, text: bool = False) -> bool:
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        return (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind)
                or (text and (pa.types.is_string(kind) or pa.types.is_large_string(kind))))

    problems: list[tuple[int | None, str, str]] = []
    for name in columns:
        kind = table.schema.field(name).type
        if bonds and name in FLOW_FIELDS:
            if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or not numeric(kind.value_type):
                problems.append((None, name, f"{path}: column '{name}' must hold a list of numbers per bond (its cash "
                                 f"flows), got {kind}"))
        elif not numeric(kind, text=name == "option_type"):
            what = "numbers or text (call/put)" if name == "option_type" else "numbers"
            problems.append((None, name, f"{path}: column '{name}' must hold {what}, got {kind}"))
    return problems


def _decoded(table: Any) -> Any:
    """``table`` with its dictionary-encoded columns decoded."""
    import pyarrow as pa

    for k, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(k, field.name, table.column(k).cast(field.type.value_type))
    return table


def _convention(metadata: dict[bytes, bytes] | None, path: Path | str, column: Any = None) -> str:
    """An option book's convention, from its metadata (``trinom.convention``) or its ``convention`` column (as an
    option CSV's: ``standard`` or ``thesis``, the same on every row; what ``Portfolio.to_dataframe`` writes), which
    must agree where both are given; neither: ``standard``."""
    given = (metadata or {}).get(CONVENTION_KEY)
    value = given.decode(errors="replace") if given is not None else None
    if value is not None and value not in CONVENTIONS:
        raise InputError([(None, "convention", f"{path}: trinom.convention metadata must be one of "
                           f"{', '.join(CONVENTIONS)}, got {value!r}")])
    if column is not None:
        cells = column.to_pylist()
        first = book_convention(cells, [f"{path}: "] * len(cells), "row 0")
        if value is not None and first is not None and first != value:
            raise InputError([(None, "convention", f"{path}: the convention column says {first!r}, the "
                               f"trinom.convention metadata {value!r}")])
        value = first or value
    return value or "standard"


def _schema(path: Path) -> Any:
    """The Arrow schema of a Parquet file, checked to name each column once."""
    _pa, pq = _arrow()
    schema = _readable(path, lambda: pq.read_schema(path))
    _unique_columns(schema.names, path)
    return schema


def _readable(path: Path | str, read: Callable[[], Any]) -> Any:
    """``read()``, with a file that pyarrow cannot read as Parquet an :class:`InputError` naming it."""
    pa, _pq = _arrow()
    try:
        return read()
    except (pa.ArrowException, OSError) as err:
        raise InputError([(None, "file", f"{path}: not a readable Parquet file ({err})")]) from None


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


__all__ = ["FLOW_FIELDS", "RESULT_COLUMNS", "ResultWriter", "book_of_table", "check_ids", "curves_of", "holds_bonds",
           "is_parquet", "read_book", "read_text_rows", "result_schema", "row_groups", "rows", "write_book"]
