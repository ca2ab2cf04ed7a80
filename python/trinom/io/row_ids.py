"""The ids that name a book's rows in its results (price, risk and OAS tables), checked one way for every file.

A book with an ``id`` column (a bond CSV, an option CSV or a Parquet book that has one) keeps its ids; a book
without one (the thesis' and the paper's ``.in`` files, a CSV or Parquet book without the column) is named by
its 0-based row numbers, ``"0"``, ``"1"``, ... An id must not be empty (or null) and must not repeat: each is an
:class:`~trinom.errors.InputError` naming the file, the row (and the line, where the file has lines) and the id.

>>> check_row_ids(["B1", "B2"], "book.csv")
['B1', 'B2']
>>> check_row_ids(["B1", "B1"], "book.csv", lines=[2, 5])
Traceback (most recent call last):
...
trinom.errors.InputError: row 1: book.csv line 5: id 'B1' is repeated: rows 0 and 1 (lines 2 and 5) have it
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError


def row_numbers(count: int) -> list[str]:
    """The ids of a book without an ``id`` column: its row numbers as text."""
    return [str(row) for row in range(count)]


def check_row_ids(ids: Sequence[str | None], path: str | Path, lines: Sequence[int] | None = None,
                  first_row: int = 0) -> list[str]:
    """``ids`` (text, one per row, in order) if none is empty or repeated, else an :class:`InputError` naming the
    file, the rows (``first_row`` is the number of the first), their ``lines`` where given, and the id."""
    def where(row: int) -> str:
        return f"{path} line {lines[row]}" if lines is not None else f"{path}"

    problems: list[tuple[int | None, str, str]] = []
    first_of: dict[str, int] = {}
    for row, name in enumerate(ids):
        if name is None or not str(name).strip():
            problems.append((first_row + row, "id", f"{where(row)}: the id is {'null' if name is None else 'empty'}; "
                             "every row of a book with an id column needs one"))
            continue
        earlier = first_of.setdefault(str(name), row)
        if earlier != row:
            both = f"rows {first_row + earlier} and {first_row + row}"
            if lines is not None:
                both += f" (lines {lines[earlier]} and {lines[row]})"
            problems.append((first_row + row, "id", f"{where(row)}: id {str(name)!r} is repeated: {both} have it"))
    if problems:
        raise InputError(problems)
    return [str(name) for name in ids]


__all__ = ["check_row_ids", "row_numbers"]
