"""Result arrays the Dask workers on the caller's host write into directly (issue 27).

A large result (a scenario grid of a million trees is 160 MB) sent back through Dask is pickled on the worker,
sent over a socket, received into a new buffer and copied once more into the call's result: on one host that
costs as much as pricing. :class:`SharedResult` is the call's result array in a file of shared memory
(``/dev/shm``, a tmpfs): a task whose worker finds the file writes its part of the prices into it and returns
nothing; a worker on another host (or in a container with its own ``/dev/shm``) does not find it and returns
its part as before. The caller's array is a plain NumPy array over the mapping. Where no shared memory can be
had (no ``/dev/shm``, too little room in it), the call falls back to the returned arrays: :func:`shared_result`
gives None.

A file's pages cost as much to take as to write (tmpfs gives them out at about 2 GB/s: 50 ms for a worker's half
of that grid), so a file is kept when its call ends, and a later call of the same size whose array is gone (the
caller dropped the result) writes into it again, its pages mapped already here and in the workers (which keep
their latest :data:`WORKER_MAPPINGS` files mapped). At most :data:`KEPT_FILES` files, :data:`KEPT_BYTES` bytes
are kept; :func:`release` removes the free ones, and the process's exit all of them (files of a process that was
killed are removed by the next process that makes one).

>>> import numpy as np
>>> out = shared_result((2, 3), np.float64, minimum=0)
>>> out is None or (write_part(out.destination(slice(0, 2), slice(0, 3)), np.ones((2, 3))) is None)
True
>>> out is None or out.close().tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
True
"""

from __future__ import annotations

import atexit
import contextlib
import mmap
import os
import threading
import uuid
import weakref
from collections import OrderedDict
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
#: Files kept for later calls of the same size (their pages stay mapped, here and in the workers): at most this
#: many, and this many bytes, where the arrays over them are gone (:func:`release` removes them at once).
KEPT_FILES = 4
KEPT_BYTES = 1 << 30
#: Each file's name begins with this, then the creating process's id.
FILE_PREFIX = "trinom-"
#: Files a worker keeps mapped (the latest ones it wrote into), so that a call into the same file maps nothing.
WORKER_MAPPINGS = 2


@dataclass(frozen=True)
class Destination:
    """Where a task writes its part: the file, the whole array's shape and dtype, and the part's rows and columns."""

    path: str
    shape: tuple[int, int]
    dtype: str
    rows: tuple[int, int]
    columns: tuple[int, int] | None  #: a run of columns; None: the task's own index array (see :func:`write_part`)


class SharedResult:
    """A ``shape`` array of ``dtype`` in a file of shared memory (see the module): a new file, or one kept from an
    earlier call whose array is gone (:class:`_Segment`); :meth:`close` returns the array."""

    def __init__(self, segment: _Segment, shape: tuple[int, int], dtype: npt.DTypeLike):
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self.segment = segment
        self.path = segment.path
        self.array = segment.view(self.shape, self.dtype)

    def destination(self, rows: slice, columns: slice | None) -> Destination:
        """The part ``array[rows, columns]`` (slices of step 1; ``columns`` None: an index array the task holds) as a
        task's destination."""
        return Destination(self.path, self.shape, self.dtype.str, (rows.start, rows.stop),
                           None if columns is None else (columns.start, columns.stop))

    def close(self) -> np.ndarray:
        """The array, its pages (written by the workers) mapped here at once. Its file stays for a later call of the
        same size once the array is gone (at most :data:`KEPT_BYTES` of them: :func:`release`)."""
        populate(self.segment.memory, 0, self.segment.size, POPULATE_READ)
        return self.array


class _Segment:
    """A file of shared memory and its mapping here; in use while an array over it lives (a weak reference to the
    array the views come from: NumPy's views keep that array, not the views between, as their base)."""

    def __init__(self, directory: str, size: int):
        self.size = size
        self.path = os.path.join(directory, f"{FILE_PREFIX}{os.getpid()}-{uuid.uuid4().hex}")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            # Sparse: the workers' writes take the pages (zeroing 160 MB here would cost a tenth of a pricing); the
            # room was checked by shared_result, with headroom
            os.ftruncate(fd, size)
            self.memory = mmap.mmap(fd, size)
        except BaseException:
            os.close(fd)
            os.unlink(self.path)
            raise
        os.close(fd)
        self.owner: weakref.ref[np.ndarray] | None = None

    @property
    def free(self) -> bool:
        return self.owner is None or self.owner() is None

    def view(self, shape: tuple[int, int], dtype: np.dtype) -> np.ndarray:
        flat = np.frombuffer(self.memory, dtype=dtype, count=shape[0] * shape[1])
        self.owner = weakref.ref(flat)
        return flat.reshape(shape)

    def remove(self) -> None:
        """The file removed (a worker's mapping of it keeps its pages until it lets go), the mapping here closed."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        with contextlib.suppress(BufferError):  # an array still uses it: the mapping goes with the array
            self.memory.close()


#: Files kept for later calls, by directory (used and free), and the lock that guards them.
_KEPT: dict[str, list[_Segment]] = {}
_LOCK = threading.Lock()


def shared_result(shape: tuple[int, int], dtype: npt.DTypeLike, *, minimum: int | None = None,
                  directory: str = SHARED_MEMORY_DIR) -> SharedResult | None:
    """A :class:`SharedResult` for a result of ``shape`` and ``dtype`` of at least ``minimum`` bytes (default
    :data:`SHARED_RESULT_BYTES`): a kept file of that size whose array is gone (its pages are mapped already, here
    and in the workers: nothing to fault in again), else a new file where the shared memory has room for it (and
    :data:`HEADROOM_BYTES` more); else None."""
    size = int(shape[0]) * int(shape[1]) * np.dtype(dtype).itemsize
    if size < (SHARED_RESULT_BYTES if minimum is None else minimum) or not os.path.isdir(directory):
        return None
    with _LOCK:
        kept = _KEPT.setdefault(directory, [])
        if not kept:
            _remove_orphans(directory)
        for segment in kept:
            if segment.free and segment.size == size:
                return SharedResult(segment, shape, dtype)
        try:
            room = os.statvfs(directory)
            if room.f_bavail * room.f_frsize < size + HEADROOM_BYTES:
                return None
            segment = _Segment(directory, size)
        except OSError:
            return None
        kept.append(segment)
        _trim(kept)
        return SharedResult(segment, shape, dtype)


def _trim(kept: list[_Segment]) -> None:
    """Free files removed, oldest first, while the kept files are more than :data:`KEPT_FILES` or
    :data:`KEPT_BYTES`."""
    for segment in list(kept):
        if len(kept) <= KEPT_FILES and sum(s.size for s in kept) <= KEPT_BYTES:
            return
        if segment.free:
            kept.remove(segment)
            segment.remove()


def release() -> None:
    """Remove every kept file whose array is gone (the files of arrays still in use go when a later call or this
    one finds them free)."""
    with _LOCK:
        for kept in _KEPT.values():
            for segment in [s for s in kept if s.free]:
                kept.remove(segment)
                segment.remove()


def _remove_orphans(directory: str) -> None:
    """Files of this module left by processes that ended without removing them (killed), removed."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not name.startswith(FILE_PREFIX):
            continue
        owner = name[len(FILE_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@atexit.register
def _remove_all() -> None:
    for kept in _KEPT.values():
        for segment in kept:
            with contextlib.suppress(OSError):
                os.unlink(segment.path)


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


#: On a worker: the files mapped lately, latest last (path -> its mapping).
_MAPPED: OrderedDict[str, mmap.mmap] = OrderedDict()


def _mapped(destination: Destination) -> tuple[mmap.mmap, np.ndarray] | None:
    """The destination's file mapped, and the whole shared array over it; None where this host does not hold it.
    The latest :data:`WORKER_MAPPINGS` files stay mapped (their pages too): a call into one of them maps nothing."""
    count = destination.shape[0] * destination.shape[1]
    size = count * np.dtype(destination.dtype).itemsize
    with _LOCK:
        for path in [p for p in _MAPPED if p != destination.path and not os.path.exists(p)]:
            del _MAPPED[path]  # removed by its caller: its pages go with the last array over them
        memory = _MAPPED.get(destination.path)
        if memory is not None and len(memory) >= size:
            _MAPPED.move_to_end(destination.path)
        else:
            memory = None
    if memory is None:
        try:
            fd = os.open(destination.path, os.O_RDWR)
        except OSError:
            return None
        try:
            memory = mmap.mmap(fd, max(size, 1))
        finally:
            os.close(fd)
        with _LOCK:
            _MAPPED[destination.path] = memory
            while len(_MAPPED) > WORKER_MAPPINGS:
                _MAPPED.popitem(last=False)
    return memory, np.frombuffer(memory, dtype=destination.dtype, count=count).reshape(destination.shape)


@contextlib.contextmanager
def opened_part(destination: Destination) -> Iterator[np.ndarray | None]:
    """On a worker: the destination's part of the shared array as a writable view (its pages mapped at once), or
    None where this host does not hold the file. The destination must name its columns."""
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


__all__ = ["SHARED_RESULT_BYTES", "Destination", "SharedResult", "opened_part", "release", "shared_result", "write_part"]
