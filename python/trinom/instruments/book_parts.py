"""A large book lowered in parts of consecutive trades, the parts on threads at once (issue 34, item 4).

Where a trade's lowering depends on that trade alone, lowering parts and joining their results gives the whole
book's, bit for bit. Parts are faster than one pass over the book: their arrays stay in the CPU's caches and in
memory the allocator reuses (a book's arrays of millions of cash flows are fresh pages each time). They may run on
several threads at once (NumPy releases the GIL in its array work); on the 2-core EPYC that measured no faster than
one thread, which is the default.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, replace
from typing import Any, TypeVar

import numpy as np

from ..conventions.names import Factorized

T = TypeVar("T")


def part_bounds(count: int, part_rows: int) -> list[int]:
    """Where parts of about ``part_rows`` of ``count`` trades start (and the end): one part for fewer than twice."""
    parts = max(count // max(part_rows, 1), 1)
    return [count * k // parts for k in range(parts + 1)]


def in_parts(lower: Callable[[int, int], T], bounds: Sequence[int], threads: int | None = None) -> list[T]:
    """``lower(lo, hi)`` of every part, on ``threads`` threads at once (default: one)."""
    pairs = list(itertools.pairwise(bounds))
    if threads is None or threads <= 1 or len(pairs) == 1:
        return [lower(lo, hi) for lo, hi in pairs]
    with ThreadPoolExecutor(min(threads, len(pairs))) as pool:
        return list(pool.map(lambda pair: lower(*pair), pairs))


def rows_part(table: T, lo: int, hi: int, count: int) -> T:
    """Rows ``lo:hi`` of a dataclass of ``count`` rows' columns (arrays or
    :class:`~trinom.conventions.Factorized`; a column of one value for all stays as it is)."""
    part: dict[str, Any] = {}
    for field in fields(table):  # type: ignore[arg-type]
        value = getattr(table, field.name)
        if isinstance(value, Factorized):
            value = value.take(np.arange(lo, hi))
        elif np.ndim(value) > 0 and np.shape(value)[0] == count:
            value = np.asarray(value)[lo:hi]
        part[field.name] = value
    return replace(table, **part)  # type: ignore[type-var]


def entries_part(entries: T, lo: int, hi: int) -> T:
    """The entries (a dataclass of arrays, ``bond`` numbering each entry's trade) of trades ``lo:hi``, numbered
    among them; None stays None."""
    if entries is None:
        return entries
    bond = entries.bond  # type: ignore[attr-defined]
    mine = np.flatnonzero((bond >= lo) & (bond < hi))
    part = {field.name: np.asarray(getattr(entries, field.name))[mine] for field in fields(entries)}  # type: ignore[arg-type]
    part["bond"] = part["bond"] - lo
    return replace(entries, **part)  # type: ignore[type-var]


def joined_offsets(parts: Sequence[np.ndarray]) -> np.ndarray:
    """CSR offsets of consecutive parts (each starting at 0) as the whole's."""
    pieces, base = [np.zeros(1, dtype=np.int64)], 0
    for offsets in parts:
        pieces.append(offsets[1:] + base)
        base += int(offsets[-1])
    return np.concatenate(pieces)
