"""Case-insensitive names of conventions: one table per kind, parsed a whole column at a time.

A name is matched after :func:`normalise` (upper case; spaces, hyphens, underscores, dots and parentheses
dropped), so ``"act/act (icma)"``, ``"ACT/ACT-ICMA"`` and ``"Act/Act ICMA"`` are one name. A column is parsed
through its distinct values (:func:`distinct_values`), so a book of 100000 rows costs a handful of dictionary
look-ups, and every bad row is reported at once as ``(row, field, message)``, the message listing the valid
names. A column that several functions parse (a reader's validation, then schedules and day counts) can be
factorized once (:class:`Factorized`) and passed to each in place of the column.
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


@dataclass(frozen=True, eq=False)
class Factorized:
    """A column as its distinct values and, per row, the index of its value among them (:func:`distinct_values`).

    Every ``parse_*`` function takes one in place of the column and parses each distinct value once, so a column
    parsed several times (validated, then read for schedules and day counts) is scanned once. Its messages show the
    distinct value (of an ``object`` column: of the row's type and ``repr``).

    >>> names = Factorized.of(["MF", None, "P", "MF"])
    >>> names.distinct, names.inverse.tolist()
    (('MF', None, 'P'), [0, 1, 2, 0])
    >>> part = names.filled("F").take([1, 3])
    >>> part.distinct, part.inverse.tolist()
    (('MF', 'F'), [1, 0])
    """

    distinct: tuple[object, ...]
    inverse: np.ndarray

    @classmethod
    def of(cls, values: object, field: str = "values") -> Factorized:
        """The factorization of a column (a scalar or a 1-D sequence)."""
        if isinstance(values, Factorized):
            return values
        distinct, inverse = distinct_values(column(values, field))
        return cls(tuple(distinct), inverse)

    @property
    def size(self) -> int:
        """The number of rows."""
        return int(self.inverse.size)

    def __getitem__(self, row: int) -> object:
        """The value of one row."""
        return self.distinct[self.inverse[row]]

    def values(self) -> np.ndarray:
        """The distinct values as a 1-D ``object`` array (a sequence among them stays one value)."""
        return np.fromiter(self.distinct, dtype=object, count=len(self.distinct))

    def take(self, rows: npt.ArrayLike) -> Factorized:
        """The column of ``rows`` (indices, in that order), its distinct values those that these rows hold."""
        inverse = self.inverse[np.asarray(rows, dtype=np.int64).reshape(-1)]
        used = np.zeros(len(self.distinct), dtype=bool)
        used[inverse] = True
        if used.all():
            return Factorized(self.distinct, inverse)
        renumber = np.cumsum(used) - 1
        return Factorized(tuple(v for v, keep in zip(self.distinct, used.tolist(), strict=True) if keep),
                          renumber[inverse])

    def filled(self, value: object) -> Factorized:
        """The column with ``value`` in its empty (``None``) cells."""
        return Factorized(tuple(value if v is None else v for v in self.distinct), self.inverse)


def as_column(values: object, field: str) -> np.ndarray | Factorized:
    """A column to parse: a :class:`Factorized` one as it is, anything else through :func:`column`."""
    return values if isinstance(values, Factorized) else column(values, field)


def parse_column(values: object, *, table: NameTable, field: str,
                 rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, list[Problem]]:
    """Codes (``int8``; -1 on a bad row) of a column of names, and one problem per bad row.

    ``rows``: the row number to report for each value (default 0, 1, ...), e.g. a reader's own numbering.

    >>> from trinom.conventions.business_days import CONVENTIONS
    >>> codes, problems = parse_column(["F", "mf", "Sideways"], table=CONVENTIONS, field="convention")
    >>> codes.tolist(), problems[0][:2]
    ([1, 2, -1], (2, 'convention'))
    """
    array = as_column(values, field)
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


#: Cell types whose equal values are the same value (no ``1 == 1.0 == True``, no ``-0.0 == 0.0``).
_HASHED_AS_THEMSELVES: frozenset[type] = frozenset({str, int, type(None)})


def distinct_values(array: np.ndarray | Factorized) -> tuple[list[object], np.ndarray]:
    """The distinct values of a column and each row's index among them: numbers and text arrays through
    ``numpy.unique``; an ``object`` column of text, whole numbers and ``None`` through a dictionary (text alone in
    sorted order, as ``numpy.unique``; else in order of appearance); any other (floats, mixed types) by type and
    ``repr``, so that ``1``, ``1.0`` and ``True`` stay apart."""
    if isinstance(array, Factorized):
        return list(array.distinct), array.inverse
    if array.dtype.kind != "O":
        distinct, inverse = np.unique(array, return_inverse=True)
        return distinct.tolist(), inverse.reshape(-1)
    values = array.tolist()
    kinds = set(map(type, values))
    if kinds <= _HASHED_AS_THEMSELVES:  # equal values are one value of one type: a dictionary of the cells
        first = list(dict.fromkeys(values))
        if kinds == {str}:
            first.sort()
        index = {value: k for k, value in enumerate(first)}
        return first, np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    seen: dict[tuple[str, str], int] = {}
    first = []
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
