"""Coupon frequencies: 1, 2, 4 or 12 coupons a year, given as numbers or names."""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from .names import Factorized, NameTable, Problem, as_column, distinct_values, plain

#: Coupons a year and their names (the code is the index; the value ``PER_YEAR[code]``).
FREQUENCIES: Final[NameTable] = NameTable.of("coupon frequency (coupons a year)", {
    "1": ("ANNUAL", "A", "1Y", "12M", "YEARLY"),
    "2": ("SEMIANNUAL", "SEMI ANNUAL", "S", "6M"),
    "4": ("QUARTERLY", "Q", "3M"),
    "12": ("MONTHLY", "M", "1M"),
})
PER_YEAR: Final[np.ndarray] = np.array([1, 2, 4, 12], dtype=np.int64)


def parse_frequencies(values: npt.ArrayLike | Factorized, *, field: str = "frequency",
                      rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, list[Problem]]:
    """Per row, coupons a year (1, 2, 4 or 12; 0 on a bad row) from numbers (``2``, ``2.0``) or names
    (``"semiannual"``, ``"6M"``, ``"Q"``), and one problem per bad row.

    >>> per_year, problems = parse_frequencies([2, "quarterly", "12", 3])
    >>> per_year.tolist(), problems[0][2]
    ([2, 4, 12, 0], "frequency '3' is not a coupon frequency (coupons a year); valid: 1, 2, 4, 12")
    """
    array = as_column(values, field)
    result = np.zeros(array.size, dtype=np.int64)
    if array.size == 0:
        return result, []
    distinct, inverse = distinct_values(array)
    resolved = np.zeros(len(distinct), dtype=np.int64)
    for k, value in enumerate(distinct):
        text = value if isinstance(value, str) else _whole(value)
        code = FREQUENCIES.code(text) if text is not None else None
        if code is None and isinstance(value, str):  # "4.0": a number written as text (NumPy makes mixed lists text)
            try:
                number = _whole(float(value))
            except ValueError:
                number = None
            code = FREQUENCIES.code(number) if number is not None else None
        if code is not None:
            resolved[k] = PER_YEAR[code]
    result = resolved[inverse]
    row_numbers = np.arange(array.size) if rows is None else np.asarray(rows).reshape(-1)
    problems = [(int(row_numbers[k]), field, FREQUENCIES.unknown(field, plain(array[k])))
                for k in np.flatnonzero(result == 0)]
    return result, problems


def _whole(value: object) -> str | None:
    """A whole number (not a bool) as text, else ``None``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    number = float(value)
    return str(int(number)) if np.isfinite(number) and number == int(number) else None
