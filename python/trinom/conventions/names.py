"""Case-insensitive names of conventions: one table per kind, parsed a whole column at a time.

A name is matched after :func:`normalise` (upper case; spaces, hyphens, underscores, dots and parentheses
dropped), so ``"act/act (icma)"``, ``"ACT/ACT-ICMA"`` and ``"Act/Act ICMA"`` are one name. A column is parsed
through its distinct values (``numpy.unique``), so a book of 100000 rows costs a handful of dictionary
look-ups, and every bad row is reported at once as ``(row, field, message)``, the message listing the valid
names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import InputError

#: A problem of one row: ``(row, field, message)``, as :class:`trinom.InputError` takes them.
Problem = tuple[int | None, str, str]

_DROPPED = str.maketrans("", "", " -_.()\t")


def normalise(name: str) -> str:
    """``name`` as the tables match it: upper case, without spaces, hyphens, underscores, dots and parentheses.

    >>> normalise(" act/act (icma) ")
    'ACT/ACTICMA'
    """
    return name.translate(_DROPPED).upper()


@dataclass(frozen=True)
class NameTable:
    """The names of one kind of convention: ``canonical[code]`` and the spellings that mean each code.

    >>> table = NameTable.of("business-day convention", {"F": ("FOLLOWING",), "P": ("PRECEDING",)})
    >>> table.code("following"), table.canonical[1]
    (0, 'P')
    """

    what: str
    canonical: tuple[str, ...]
    lookup: Mapping[str, int]

    @classmethod
    def of(cls, what: str, names: Mapping[str, Sequence[str]]) -> NameTable:
        """A table from ``{canonical: aliases}``; codes number the canonical names in order."""
        lookup: dict[str, int] = {}
        for code, (name, aliases) in enumerate(names.items()):
            for spelling in (name, *aliases):
                key = normalise(spelling)
                if lookup.get(key, code) != code:
                    raise ValueError(f"{what} name {spelling!r} is ambiguous")
                lookup[key] = code
        return cls(what, tuple(names), lookup)

    def code(self, name: str) -> int | None:
        """The code of ``name``, or ``None`` where it names nothing."""
        return self.lookup.get(normalise(name))

    def unknown(self, field: str, value: object) -> str:
        """The message for a value that is no name of this table."""
        return f"{field} {value!r} is not a {self.what}; valid: {', '.join(self.canonical)}"


def column(values: object, field: str) -> np.ndarray:
    """``values`` (a scalar or a sequence) as a 1-D array; a 0-d input becomes one row."""
    array = values if isinstance(values, np.ndarray) else np.asarray(values)
    if array.ndim > 1:
        raise InputError([(None, field, f"{field} must be a scalar or a 1-D sequence, got shape {array.shape}")])
    return array.reshape(-1)


def parse_column(values: object, *, table: NameTable, field: str,
                 rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, list[Problem]]:
    """Codes (``int8``; -1 on a bad row) of a column of names, and one problem per bad row.

    ``rows``: the row number to report for each value (default 0, 1, ...), e.g. a reader's own numbering.

    >>> from trinom.conventions.business_days import CONVENTIONS
    >>> codes, problems = parse_column(["F", "mf", "Sideways"], table=CONVENTIONS, field="convention")
    >>> codes.tolist(), problems[0][:2]
    ([1, 2, -1], (2, 'convention'))
    """
    array = column(values, field)
    codes = np.full(array.size, -1, dtype=np.int8)
    problems: list[Problem] = []
    if array.size == 0:
        return codes, problems
    distinct, inverse = distinct_values(array)
    resolved = np.full(len(distinct), -1, dtype=np.int8)
    for k, value in enumerate(distinct):
        code = table.code(value) if isinstance(value, str) else None
        if code is not None:
            resolved[k] = code
    codes = resolved[inverse]
    bad = np.flatnonzero(codes < 0)
    row_numbers = np.arange(array.size) if rows is None else np.asarray(rows).reshape(-1)
    problems.extend((int(row_numbers[k]), field, table.unknown(field, plain(array[k]))) for k in bad)
    return codes, problems


def distinct_values(array: np.ndarray) -> tuple[list[object], np.ndarray]:
    """The distinct values of a column and each row's index among them: text and numbers through
    ``numpy.unique``, any other column (``object``: ``None``, mixed types) through a dictionary."""
    if array.dtype.kind != "O":
        distinct, inverse = np.unique(array, return_inverse=True)
        return distinct.tolist(), inverse.reshape(-1)
    values = array.tolist()
    if values and all(type(value) is str for value in values):  # a column of text (a file's): numpy.unique
        distinct, inverse = np.unique(np.array(values, dtype=str), return_inverse=True)
        return distinct.tolist(), inverse.reshape(-1)
    seen: dict[tuple[str, str], int] = {}
    first: list[object] = []
    inverse = np.empty(array.size, dtype=np.int64)
    for k, value in enumerate(values):
        key = (type(value).__name__, value if isinstance(value, str) else repr(value))
        code = seen.setdefault(key, len(seen))
        if code == len(first):
            first.append(value)
        inverse[k] = code
    return first, inverse


def plain(value: object) -> object:
    """A NumPy scalar as the Python value it holds (for messages: ``'x'``, not ``np.str_('x')``)."""
    return value.item() if isinstance(value, np.generic) else value


def raise_problems(problems: Sequence[Problem]) -> None:
    """An :class:`trinom.InputError` of ``problems`` in row order, if there are any."""
    if problems:
        raise InputError(sorted(problems, key=lambda p: (-1 if p[0] is None else p[0])))
