"""Futhark's textual data format: one-dimensional arrays of numbers (read and written).

The thesis' ``.in`` files, the Futhark programs' inputs and the price ``.out`` files all use it.
This module depends on nothing else of trinom, so every reader and writer can import it.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from ..errors import InputError

_SUFFIX = re.compile(r"(?<=[0-9.])(?:f16|f32|f64|i8|i16|i32|i64|u8|u16|u32|u64)\b")
_COMMENT = re.compile(r"--[^\n]*")
_ARRAY = re.compile(r"\[([^\[\]]*)\]|empty\(\[0\][a-z0-9]+\)")


# --- Futhark-style textual arrays ---------------------------------------------------------
def read_text(path: str | Path) -> str:
    """A text file's contents; a missing file or one that is not UTF-8 text is an :class:`InputError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise InputError([(None, "file", f"{path}: no such file")])
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError([(None, "file", f"{path}: not a UTF-8 text file (byte {err.start}: {err.reason})")]) from None


def read_arrays(path: str | Path, problems: list[tuple[int, int, str]] | None = None) -> list[np.ndarray]:
    """Every one-dimensional array in a Futhark textual data file, as float64 arrays.

    Between arrays only spaces, commas and ``--`` comments may stand: other text is an error naming
    its line, not skipped. ``inf``, ``nan`` and Futhark's ``f64.inf``/``f64.nan`` spellings read as such.
    An item that is no number is an error naming the array and the item; where ``problems`` is given it
    reads as NaN instead and ``(array, item, message)`` is added there (0-based), so a caller can mask its row.
    """
    text = _COMMENT.sub("", read_text(path))
    arrays = []
    position = 0
    for match in [*_ARRAY.finditer(text), None]:
        gap = text[position: match.start() if match else len(text)]
        if gap.strip(" \t\r\n,"):
            line = text.count("\n", 0, position + len(gap) - len(gap.lstrip())) + 1
            raise InputError([(None, "file", f"{path} line {line}: text outside the arrays: {gap.strip()[:40]!r}")])
        if match is None:
            break
        position = match.end()
        body = _SUFFIX.sub("", match.group(1) or "")
        for spelling in ("f64.", "f32.", "f16."):
            body = body.replace(spelling, "")
        items = [item.strip() for item in body.replace("\n", " ").split(",") if item.strip()]
        values = np.empty(len(items), dtype=np.float64)
        for k, item in enumerate(items):
            try:
                values[k] = float(item)
            except ValueError:
                message = f"{path}: array {len(arrays) + 1}, item {k + 1} is no number: {item[:40]!r}"
                if problems is None:
                    raise InputError([(None, "file", message)]) from None
                problems.append((len(arrays), k, message))
                values[k] = np.nan
        arrays.append(values)
    return arrays


#: The largest whole number a reader accepts where one is needed (steps, counts, indices: int32).
WHOLE_NUMBER_LIMIT = 2**31


def not_whole(value: float) -> str:
    """Why ``value`` is no whole number a reader can take (``""`` if it is one): not finite, fractional, or
    larger than :data:`WHOLE_NUMBER_LIMIT` in size.

    >>> not_whole(12.0), not_whole(12.5), not_whole(1e12)
    ('', 'must be a whole number', 'must be a whole number of at most 2**31 in size')
    """
    if not math.isfinite(value) or value != round(value):
        return "must be a whole number"
    return "must be a whole number of at most 2**31 in size" if abs(value) > WHOLE_NUMBER_LIMIT else ""


def format_array(values: np.ndarray, integer: bool = False, digits17: bool = False) -> str:
    """One array in Futhark's textual syntax (floats always carry a decimal point or exponent).

    Floats are written in the shortest form that reads back exactly, or with 17 significant
    digits when ``digits17`` (the thesis' price files).
    """
    if len(values) == 0:  # Futhark's syntax for an empty array ("[]" has no type)
        return "empty([0]i32)" if integer else "empty([0]f64)"
    if integer:
        return "[" + ", ".join(str(int(v)) for v in values) + "]"
    return "[" + ", ".join(format_float(float(v), digits17) for v in values) + "]"


def format_float(v: float, digits17: bool = False) -> str:
    """One float as Futhark text: shortest exact form (or 17 significant digits), ``f64.nan``/``f64.inf``."""
    if v != v:
        return "f64.nan"
    if v in (float("inf"), float("-inf")):
        return "f64.inf" if v > 0 else "-f64.inf"
    text = f"{v:.17g}" if digits17 else repr(v)
    return text if any(c in text for c in ".eEn") else text + ".0"
