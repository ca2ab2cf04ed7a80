"""Columns of instrument fields: turning what users pass into checked NumPy arrays.

Shared by the option and the bond portfolios, so that both accept the same spellings
(``0``/``1``, ``"call"``/``"put"`` in any case) and show bad values the same way in messages. Formerly
``trinom/lattice/columns.py``; ``trinom.lattice.columns`` is the same module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..ragged import segments
from .constants import CALL, OPTION_TYPES, PUT

__all__ = ["as_array", "as_float_column", "option_types", "rows_problems", "segments", "show"]


def as_array(name: str, values: npt.ArrayLike) -> np.ndarray:
    """One field as a 1-D array (a scalar becomes one element)."""
    arr = np.asarray(values, dtype=object if isinstance(values, (list, tuple)) and name == "option_type" else None)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise InputError([(None, name, f"{name} must be one-dimensional, got shape {arr.shape}")])
    return arr


def as_float_column(name: str, values: npt.ArrayLike) -> np.ndarray:
    """One numeric field as a 1-D float64 array."""
    arr = as_array(name, values)
    try:
        return np.array(arr, dtype=np.float64)
    except (TypeError, ValueError):
        for row, value in enumerate(arr.tolist()):
            try:
                float(value)
            except (TypeError, ValueError):
                raise InputError([(row, name, f"{name} must be a number, got {value!r}")]) from None
        raise


def option_types(arr: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
    """Map 0/1 or 'call'/'put' (any case) to int8; anything else becomes -1, its text kept for messages."""
    if arr.dtype.kind == "b":  # booleans are neither 0/1 nor call/put (issue 35): every one is unknown
        return np.full(arr.size, -1, dtype=np.int8), {row: f"{bool(v)!r} (a boolean)" for row, v in enumerate(arr)}
    if arr.dtype.kind in "iuf":  # numeric: vectorised
        good = (arr == CALL) | (arr == PUT)
        unknown = {int(row): repr(arr[row].item()) for row in np.flatnonzero(~good)}
        return np.where(good, arr, -1).astype(np.int8), unknown
    out = np.full(arr.size, -1, dtype=np.int8)
    unknown = {}
    for row, value in enumerate(arr.tolist()):
        key = value.strip().lower() if isinstance(value, str) else value
        if isinstance(key, str) and key in ("0", "1"):
            key = int(key)
        if isinstance(key, str) and key in OPTION_TYPES:
            out[row] = OPTION_TYPES[key]
        elif isinstance(key, (int, float)) and not isinstance(key, bool) and key in (CALL, PUT):
            out[row] = int(key)
        else:
            unknown[row] = repr(value)
    return out, unknown


def show(value: Any) -> str:
    """A value as an error message shows it: whole floats without ``.0``."""
    v = value.item() if hasattr(value, "item") else value
    return repr(v) if not isinstance(v, float) or not v.is_integer() else str(int(v)) if abs(v) < 1e15 else repr(v)


def rows_problems(problems: Sequence[tuple[int | None, str, str]],
                  rows: npt.ArrayLike) -> tuple[tuple[int, str, str], ...]:
    """The problems of ``rows`` (a selection of a table's rows, in that order, repeats allowed), numbered as the
    selection numbers them, in row order (a row's own problems in their order); problems of no row are left out."""
    named = {int(row) for row, _field, _message in problems if row is not None}
    if not named:
        return ()
    selection = np.asarray(rows, dtype=np.int64).reshape(-1)
    where: dict[int, list[int]] = {}
    for k in np.flatnonzero(np.isin(selection, np.fromiter(named, dtype=np.int64, count=len(named)))).tolist():
        where.setdefault(int(selection[k]), []).append(k)
    found = [(k, field, message) for row, field, message in problems if row is not None for k in where.get(int(row), [])]
    return tuple(sorted(found, key=lambda problem: problem[0]))
