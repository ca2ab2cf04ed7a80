"""Ragged arrays: items laid out in segments, one a row (a bond's cash flows, a trade's schedule dates), imported
from any layer (issue 36's layout: a helper below every concern, as the error and result types are)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def segments(offsets: np.ndarray, rows: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Of items laid out in segments (segment ``k``: items ``offsets[k]:offsets[k + 1]``, e.g. a bond's cash flows),
    the segments ``rows`` in that order: their new offsets, and for each of their items its index in the old layout.

    >>> new, flat = segments(np.array([0, 2, 3, 6]), [2, 0])
    >>> new.tolist(), flat.tolist()
    ([0, 3, 5], [3, 4, 5, 0, 1])
    """
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    counts = np.diff(offsets)[rows]
    new = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(counts, out=new[1:])
    return new, runs(offsets[rows], counts)


def runs(starts: npt.ArrayLike, counts: npt.ArrayLike) -> np.ndarray:
    """The indices ``starts[k], starts[k] + 1, ..., starts[k] + counts[k] - 1`` of every ``k``, one after another (a
    row's consecutive items where each row's first is ``starts[k]``).

    >>> runs([5, 0, 9], [2, 1, 0]).tolist()
    [5, 6, 0]
    """
    starts = np.asarray(starts, dtype=np.int64).reshape(-1)
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    ends = np.cumsum(counts)
    return np.repeat(starts - (ends - counts), counts) + np.arange(int(ends[-1]) if ends.size else 0)
