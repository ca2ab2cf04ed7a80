"""Result arrays the Dask workers on the caller's host write into directly (issue 27).

A large result (a scenario grid of a million trees is 160 MB) sent back through Dask is pickled on the worker,
sent over a socket, received into a new buffer and copied once more into the call's result: on one host that
costs as much as pricing. :class:`SharedResult` is the call's result array in a file of shared memory
(``/dev/shm``, a tmpfs): a task whose worker finds the file writes its part of the prices into it and returns
nothing; a worker on another host (or in a container with its own ``/dev/shm``) does not find it and returns
its part as before. The file is removed when the call ends; the caller's array keeps the memory (a plain
NumPy array over the mapping) until it is freed. Where no shared memory can be had (no ``/dev/shm``, too little
room in it), the call falls back to the returned arrays: :func:`shared_result` gives None.

>>> import numpy as np
>>> out = shared_result((2, 3), np.float64, minimum=0)
>>> out is None or (write_part(out.destination(slice(0, 2), slice(1, 3)), np.ones((2, 2))) is None)
True
>>> out is None or out.close().tolist() == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
True
"""

from __future__ import annotations

import contextlib
import mmap
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: Where the files live: a tmpfs on Linux.
SHARED_MEMORY_DIR = "/dev/shm"
#: Results smaller than this (bytes) travel back through Dask: a shared file saves nothing there.
SHARED_RESULT_BYTES = 4 << 20
#: Room left free in the tmpfs after the file is made (bytes): the file never fills it.
HEADROOM_BYTES = 256 << 20


@dataclass(frozen=True)
class Destination:
    """Where a task writes its part: the file, the whole array's shape and dtype, and the part's rows and columns."""

    path: str
    shape: tuple[int, int]
    dtype: str
    rows: tuple[int, int]
    columns: tuple[int, int] | None  #: a run of columns; None: the task's own index array (see :func:`write_part`)


class SharedResult:
    """A ``shape`` array of ``dtype`` in a new file of shared memory (see the module); :meth:`close` removes the file
    and returns the array."""

    def __init__(self, shape: tuple[int, int], dtype: npt.DTypeLike, directory: str = SHARED_MEMORY_DIR):
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        size = max(1, self.shape[0] * self.shape[1] * self.dtype.itemsize)
        self.path = os.path.join(directory, f"trinom-{uuid.uuid4().hex}")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            # Sparse: the workers' writes take the pages (zeroing 160 MB here would cost a tenth of a pricing); the
            # room was checked by shared_result, with headroom
            os.ftruncate(fd, size)
            memory = mmap.mmap(fd, size)
        except BaseException:
            os.close(fd)
            os.unlink(self.path)
            raise
        os.close(fd)
        self.memory = memory
        self.array = np.frombuffer(memory, dtype=self.dtype, count=self.shape[0] * self.shape[1]).reshape(self.shape)

    def destination(self, rows: slice, columns: slice | None) -> Destination:
        """The part ``array[rows, columns]`` (slices of step 1; ``columns`` None: an index array the task holds) as a
        task's destination."""
        return Destination(self.path, self.shape, self.dtype.str, (rows.start, rows.stop),
                           None if columns is None else (columns.start, columns.stop))

    def close(self) -> np.ndarray:
        """Remove the file (its memory stays mapped while the array lives); the array, its pages (written by the
        workers) mapped here at once."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        populate(self.memory, 0, len(self.memory), POPULATE_READ)
        return self.array


def shared_result(shape: tuple[int, int], dtype: npt.DTypeLike, *, minimum: int | None = None,
                  directory: str = SHARED_MEMORY_DIR) -> SharedResult | None:
    """A :class:`SharedResult` for a result of ``shape`` and ``dtype`` of at least ``minimum`` bytes (default
    :data:`SHARED_RESULT_BYTES`), where the shared memory has room for it (and :data:`HEADROOM_BYTES` more); else
    None."""
    size = int(shape[0]) * int(shape[1]) * np.dtype(dtype).itemsize
    if size < (SHARED_RESULT_BYTES if minimum is None else minimum) or not os.path.isdir(directory):
        return None
    try:
        room = os.statvfs(directory)
        if room.f_bavail * room.f_frsize < size + HEADROOM_BYTES:
            return None
        return SharedResult(shape, dtype, directory)
    except OSError:
        return None


#: madvise advice that maps (and for writing, allocates) a range's pages in one call (Linux 5.14); older kernels
#: refuse it, and the pages are then faulted one at a time as before.
POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)
POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)


def populate(memory: mmap.mmap, start: int, length: int, advice: int) -> None:
    """Map ``length`` bytes of ``memory`` from ``start`` in one system call (a page-aligned range around them)."""
    first = start - start % mmap.PAGESIZE
    try:
        memory.madvise(advice, first, min(len(memory), start + length) - first)
    except (OSError, ValueError, AttributeError):
        pass


def _mapped(destination: Destination) -> tuple[mmap.mmap, np.ndarray] | None:
    """The destination's file mapped, and the whole shared array over it; None where this host does not hold it."""
    try:
        fd = os.open(destination.path, os.O_RDWR)
    except OSError:
        return None
    try:
        size = destination.shape[0] * destination.shape[1] * np.dtype(destination.dtype).itemsize
        memory = mmap.mmap(fd, max(size, 1))
    finally:
        os.close(fd)
    count = destination.shape[0] * destination.shape[1]
    return memory, np.frombuffer(memory, dtype=destination.dtype, count=count).reshape(destination.shape)


@contextlib.contextmanager
def opened_part(destination: Destination) -> Iterator[np.ndarray | None]:
    """On a worker: the destination's part of the shared array as a writable view (its pages mapped at once), or
    None where this host does not hold the file. The destination must name its columns. The mapping goes with
    the last view of it (closing it here would fail while the caller holds one)."""
    found = _mapped(destination)
    if found is None:
        yield None
        return
    memory, array = found
    (row0, row1), (col0, col1) = destination.rows, destination.columns or (0, destination.shape[1])
    itemsize, width = array.itemsize, destination.shape[1]
    if col1 - col0 == width:  # whole rows: one range
        populate(memory, row0 * width * itemsize, (row1 - row0) * width * itemsize, POPULATE_WRITE)
    else:
        for row in range(row0, row1):
            populate(memory, (row * width + col0) * itemsize, (col1 - col0) * itemsize, POPULATE_WRITE)
    del memory
    yield array[row0:row1, col0:col1]


def write_part(destination: Destination | None, part: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray | None:
    """On a worker: ``part`` written into its destination's file (None), at the destination's columns or at
    ``columns`` (an index array); or ``part`` itself where there is no destination or this host does not hold the
    file (it then travels back through Dask)."""
    found = None if destination is None else _mapped(destination)
    if found is None:
        return part
    _memory, array = found
    where = slice(*destination.columns) if destination.columns is not None else columns  # type: ignore[union-attr]
    array[slice(*destination.rows), where] = part  # type: ignore[union-attr]
    return None


__all__ = ["SHARED_RESULT_BYTES", "Destination", "SharedResult", "opened_part", "shared_result", "write_part"]
