"""The market-price file of ``trinom oas``: ``id,price`` rows, one per bond of the book, matched by id.

The ids are the book's (:mod:`trinom.io.book_files`): a book's ``id`` column, else its row numbers ``0, 1, ...``.
The file is read as strictly as every CSV trinom takes (:mod:`trinom.io.csvtable`): a column other than ``id`` and
``price`` is an error naming it and the file. A row of a bond the book does not hold and a bond given twice are
errors either way (no price can be laid to a bond); a price that is no positive number and a bond without a row
are the bond's problems: an error with ``errors="raise"``, else the bond's message (its price NaN).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import InputError, check_error_mode
from ..io.csvtable import read_table_lines

FIELD = "--market-prices"


def read_market_prices(path: str | Path, ids: Sequence[str], errors: str = "raise") -> tuple[np.ndarray, dict[int, str]]:
    """One market price per bond of the book whose rows ``ids`` names, in the book's order, and (with
    ``errors="mask"``) the message of each bond the file gives no usable price, by row."""
    check_error_mode(errors)
    path = Path(path)
    if not path.exists():
        raise InputError([(None, FIELD, f"{path}: no such file")])
    try:
        table, lines = read_table_lines(path, ["id", "price"])
    except InputError as err:
        raise InputError([(row, FIELD, message) for row, _field, message in err.errors]) from None
    where = {str(bond): k for k, bond in enumerate(ids)}
    prices = np.full(len(ids), np.nan)
    first_line: dict[str, int] = {}
    fatal: list[tuple[int | None, str, str]] = []
    unusable: dict[int, str] = {}
    for bond, text, line in zip(table["id"], table["price"], lines, strict=True):
        if bond not in where:
            fatal.append((None, FIELD, f"{path} line {line}: id {bond!r}: a bond not in the book"))
            continue
        row = where[bond]
        if bond in first_line:
            fatal.append((row, FIELD, f"{path} line {line}: id {bond!r}: repeated (first on line {first_line[bond]})"))
            continue
        first_line[bond] = line
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value > 0:
            prices[row] = value
        else:
            unusable[row] = f"{path} line {line}: the price of bond {bond!r} must be a positive number, got {text!r}"
    for bond, row in where.items():
        if bond not in first_line:
            unusable[row] = f"{path}: no price for bond {bond!r}"
    problems = fatal + ([(row, FIELD, message) for row, message in sorted(unusable.items())] if errors == "raise" else [])
    if problems:
        raise InputError(problems)
    return prices, unusable


__all__ = ["read_market_prices"]
