"""A Parquet book priced file to file, in this process or on Dask workers (issue 27).

:func:`price_parquet_file` reads a Parquet book (:mod:`trinom.io.parquet`'s layout: options or bonds) and writes
its prices as Parquet, ``id, price, clean, accrued, error`` in input order, written whole or not at all.

* In this process (``client=None``) it streams the book one row group at a time (memory bounded by a row
  group, and the id column while the ids are checked): read the group, price it, append its rows to the
  output. The ids are checked in a thread meanwhile (:func:`trinom.io.parquet.check_ids`): a bad id stops the
  run, and is named before any bad row, as when they were checked first.
* With a Dask ``client`` the calling process reads only the file's footer (its row groups and their row
  counts, its schema, the curves in its metadata) and checks the ids (the ``id`` column alone, while the
  workers price). The row groups are cut into contiguous tasks of about equal rows, several per worker so
  that results stream; a task carries the path and its row groups' numbers, never book data. On its worker
  each task opens the file (a path every worker sees), reads its row groups, builds the book (rows numbered
  as in the file), prices it there (``device`` as given: on a dask-cuda worker, which sees its own GPU as
  device 0, that GPU) and writes its rows as its own part file in a staging folder beside ``out`` (an Arrow
  IPC file: the caller maps it and decodes nothing; a temporary name, then an atomic rename: a task run again
  after its worker died writes its part again), and returns only its counts. The caller appends part k to
  ``out``'s temporary file as soon as parts 0..k are done (the stitching overlaps the pricing), writing each
  of the part's tables as the one process writes a row group's (the file is the one-process file, byte for
  byte), and renames it over ``out`` at the end. A worker that dies loses nothing: Dask runs its
  tasks again elsewhere. The workers are set up for pricing first (:mod:`trinom.worker_tuning`).

``out`` a folder (a path ending in ``/``, or an existing folder): no stitching; the parts become a Parquet
dataset folder, ``part-00000.parquet``, ``part-00001.parquet``, ... in input order (one part in this process),
which ``pyarrow.parquet.read_table(out)`` and ``pandas.read_parquet(out)`` read whole; moved into place at the
end. An existing folder is replaced only if it holds nothing but such parts.

Whole or not at all: on any failure (a bad row with ``errors="raise"``, Ctrl-C, a task whose workers keep
dying) the temporary file and the staging folder are removed and an existing ``out`` is left as it was.

>>> import tempfile, trinom
>>> from trinom import parquet
>>> folder = tempfile.mkdtemp()
>>> parquet.write_book(f"{folder}/book.parquet", trinom.generator.generate("1_RAND", 6, seed=1), row_group_size=4)
>>> run = price_parquet_file(f"{folder}/book.parquet", f"{folder}/prices.parquet", backend="reference")
>>> run.rows, run.failed, run.engine
(6, 0, 'reference')
>>> import pyarrow.parquet as pq
>>> pq.read_table(f"{folder}/prices.parquet").column_names
['id', 'price', 'clean', 'accrued', 'error']

On a cluster: ``price_parquet_file("book.parquet", "prices.parquet", client=client, backend="cuda")``.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checks import check_client
from ..engines.options import PricingOptions, check_price_arguments
from ..errors import InputError
from ..io import parquet
from ..io.files import check_output, output_format
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from ..model.curve import YieldCurve
from ..model.market import CurvesLike
from .pricing import price_locally
from .worker_tuning import tune_workers

#: A part file's name in the staging folder and in a dataset folder (the task's number, in input order).
PART_NAME = "part-{:05d}.parquet"
#: A part's name in the staging folder where the caller stitches the parts into one file: an Arrow IPC file,
#: which the caller maps without decoding (a Parquet part cost its worker an encoding and the caller a decoding:
#: 0.12 of the 0.15 s a million rows took to stitch, H200 host).
STAGED_PART_NAME = "part-{:05d}.arrow"
_PART = re.compile(r"^part-\d{5,}\.parquet$")
#: Tasks per worker thread a cluster run aims at (results stream, the last parts to stitch are small, and a slow
#: worker holds up little; a task costs a Dask round trip, some 10-30 ms).
TASKS_PER_WORKER = 8
_UMASK = os.umask(0)
os.umask(_UMASK)


@dataclass(frozen=True)
class PricedFile:
    """What :func:`price_parquet_file` did: rows priced, rows that failed (NaN and their message, with
    ``errors="mask"``), seconds from start to the output in place, the engine, where the prices went and in
    how many parts (tasks). Where the time went: on a cluster each task's worker and seconds (``tasks``, in input
    order), and this process's seconds stitching the parts (``stitch_seconds``) and checking the ids
    (``ids_seconds``, in a thread, meanwhile)."""

    rows: int
    failed: int
    seconds: float
    engine: str
    out: Path
    parts: int = 1
    tasks: tuple[tuple[str, float], ...] = ()
    stitch_seconds: float = 0.0
    ids_seconds: float = 0.0

    def busiest(self) -> tuple[str, float, int]:
        """The worker that spent the most seconds in tasks: its address, those seconds and its tasks."""
        load: dict[str, list[float]] = {}
        for worker, seconds in self.tasks:
            load.setdefault(worker, []).append(seconds)
        if not load:
            return "", 0.0, 0
        worker = max(load, key=lambda w: sum(load[w]))
        return worker, sum(load[worker]), len(load[worker])


@dataclass(frozen=True)
class _Book:
    """A Parquet book as its footer tells it: its path (absolute: what workers open) and the path as given (what
    messages name), its row groups' row counts, what it holds."""

    path: Path
    shown: str
    counts: tuple[int, ...]
    bonds: bool
    curves: tuple[YieldCurve, ...] | None

    @property
    def rows(self) -> int:
        return sum(self.counts)


def price_parquet_file(source: str | os.PathLike[str], out: str | os.PathLike[str], *, client: Any = None,
                       curves: CurvesLike = None, backend: str = "auto", precision: str = "f64",
                       target: str | None = None, device: int = 0, errors: str = "raise",
                       max_width: int = DEFAULT_MAX_WIDTH, max_steps: int = DEFAULT_MAX_STEPS,
                       progress: Callable[[float, float], None] | None = None,
                       task_rows: int | None = None) -> PricedFile:
    """Price the Parquet book ``source`` into ``out`` (see the module): ``id, price, clean, accrued, error`` per
    row, in input order, written whole or not at all.

    ``out``: a ``.parquet`` (or ``.pq``) file, or a folder (a path ending in ``/``, or an existing folder) that
    gets ``part-00000.parquet``, ... ``client``: a Dask ``distributed.Client`` whose workers see ``source`` and
    ``out``'s folder at the same paths (None: this process). ``curves``: the market (default the file's curves;
    options: its first curve, else the thesis curve). The engine's options and ``errors`` are
    :func:`trinom.price`'s (``errors="raise"``: a bad row is an :class:`InputError` naming its row in the file,
    and nothing is written). ``progress(rows done, rows)`` is called as rows reach the output. ``task_rows``:
    rows per task on a cluster (default: the rows over :data:`TASKS_PER_WORKER` tasks per worker thread); a task
    takes whole row groups.

    >>> import tempfile, trinom
    >>> from trinom import parquet
    >>> folder = tempfile.mkdtemp()
    >>> parquet.write_book(f"{folder}/book.parquet", trinom.generator.generate("1_RAND", 5, seed=2))
    >>> price_parquet_file(f"{folder}/book.parquet", f"{folder}/prices/", backend="reference").parts
    1
    >>> sorted(p.name for p in Path(folder, "prices").iterdir())
    ['part-00000.parquet']
    """
    start = time.perf_counter()
    check_price_arguments(backend=backend, precision=precision, target=target, device=device, errors=errors,
                          max_width=max_width, max_steps=max_steps, progress=progress)
    if task_rows is not None and (isinstance(task_rows, bool) or not isinstance(task_rows, int) or task_rows < 1):
        raise ValueError(f"task_rows must be a whole number >= 1 or None, got {task_rows!r}")
    if client is not None:
        check_client(client)
    folder = is_folder(out)
    book = inspect(source)
    target_path = check_out(out, book.path, folder)
    market: Any = curves
    if market is None:
        market = (book.curves or ()) if book.bonds else (book.curves[0] if book.curves else YieldCurve.thesis())
    settings = {"backend": backend, "precision": precision, "target": target, "device": device, "errors": errors,
                "max_width": max_width, "max_steps": max_steps}
    ids = _IdCheck(Path(book.shown))  # while the rows are priced; its error comes first, as ever
    if client is None:
        rows, failed, engine, parts = _in_this_process(book, target_path, folder, market, settings, progress, ids)
        tasks: tuple[tuple[str, float], ...] = ()
        stitching = 0.0
    else:
        rows, failed, engine, parts, tasks, stitching = _on_cluster(client, book, target_path, folder, market,
                                                                    settings, progress, ids, task_rows)
    return PricedFile(rows, failed, time.perf_counter() - start, engine, target_path, parts, tasks, stitching,
                      ids.seconds)


def is_folder(out: str | os.PathLike[str]) -> bool:
    """Whether ``out`` names a folder of parts: a path ending in ``/`` (or the system's separator), or an existing
    folder."""
    text = os.fspath(out)
    return text.endswith(("/", os.sep)) or os.path.isdir(text)


def inspect(source: str | os.PathLike[str]) -> _Book:
    """A Parquet book's footer: its row groups' row counts, whether it holds bonds, its curves; its columns and
    their types checked (an :class:`InputError` naming the file and the column), no row read."""
    _pa, pq = parquet._arrow()
    given = Path(os.fspath(source))
    if not parquet.is_parquet(given):
        raise InputError([(None, "file", f"{source}: a Parquet book (.parquet or .pq) is priced file to file, got "
                           f"{given.suffix or 'no suffix'}")])
    schema = parquet._schema(parquet._existing(given))
    parquet._book_of(schema.empty_table(), given)  # unknown, missing or mistyped columns: before any work
    metadata = parquet._readable(given, lambda: pq.ParquetFile(given)).metadata
    counts = tuple(metadata.row_group(g).num_rows for g in range(metadata.num_row_groups))
    return _Book(Path(os.path.abspath(given)), str(given), counts, parquet.holds_bonds(given),
                 parquet._curves_in(schema.metadata, given))


def check_out(out: str | os.PathLike[str], source: str | os.PathLike[str], folder: bool | None = None,
              what: str = "out") -> Path:
    """``out`` as a path if it can be written (before any work): a ``.parquet``/``.pq`` file (:func:`check_output`),
    or a folder (``folder``; default :func:`is_folder`) whose parent exists and is writable, that does not hold
    ``source``, and that, if it exists, holds nothing but parts (``part-00000.parquet``, ...) of an earlier run.
    Messages name the output ``what`` (an option's name)."""
    folder = is_folder(out) if folder is None else folder
    path = Path(os.fspath(out))
    if not folder:
        output_format(path, {".parquet": "parquet", ".pq": "parquet"}, what, "Parquet prices")
        return check_output(path, [source], what)
    shown = f"{what} {os.fspath(out).rstrip('/' + os.sep)}{os.sep}"
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError([(None, what, f"{shown}: the folder {parent} does not exist")])
    if not os.access(parent, os.W_OK):
        raise InputError([(None, what, f"{shown}: the folder {parent} is not writable")])
    if os.path.exists(path) and not path.is_dir():
        raise InputError([(None, what, f"{shown}: {path} is a file, not a folder")])
    if Path(os.path.abspath(source)).is_relative_to(os.path.abspath(path)):
        raise InputError([(None, what, f"{shown} holds the input {source}: refusing to replace it")])
    if path.is_dir():
        foreign = sorted(entry.name for entry in path.iterdir() if not (_PART.match(entry.name) and entry.is_file()))
        if foreign:
            raise InputError([(None, what, f"{shown}: the folder holds {foreign[0]!r}"
                               + (f" and {len(foreign) - 1} more" if len(foreign) > 1 else "")
                               + "; trinom replaces only a folder of its own parts (part-00000.parquet, ...): give "
                               "a new or empty folder")])
    return path


# --- in this process -----------------------------------------------------------------------------------------
def _in_this_process(book: _Book, out: Path, folder: bool, market: Any, settings: dict[str, Any],
                     progress: Callable[[float, float], None] | None, ids: _IdCheck) -> tuple[int, int, str, int]:
    """The book streamed one row group at a time into ``out`` (a file, or a folder of one part)."""
    _pa, pq = parquet._arrow()
    handle = parquet._readable(book.shown, lambda: pq.ParquetFile(book.path))
    with _staged(out, folder) if folder else contextlib.nullcontext(None) as staging:
        writer = parquet.ResultWriter(staging / PART_NAME.format(0) if staging is not None else out)
        try:
            failed, engine = _price_groups(handle, book.shown, range(len(book.counts)), 0, market, settings, writer,
                                           progress, book.rows, ids.check)
            ids.result()
        except BaseException as err:
            writer.close(err)
            ids.raise_first(err)
            raise
        writer.close()
    return book.rows, failed, engine, 1


def _price_groups(handle: Any, path: Path | str, groups: Sequence[int], first_row: int, market: Any,
                  settings: dict[str, Any], writer: parquet.ResultWriter,
                  progress: Callable[[float, float], None] | None = None, total: int = 0,
                  check: Callable[[], None] | None = None) -> tuple[int, str]:
    """Row groups ``groups`` of an open Parquet book (the first at file row ``first_row``) priced one at a time
    and appended to ``writer``: the rows that failed, and the engine. A bad row's error names its file row;
    ``check()`` after each group may raise to stop."""
    failed, engine, first = 0, "", first_row
    for group in groups:
        table = parquet._readable(path, lambda g=group: handle.read_row_group(g))
        book = parquet._book_of(table, path, first, settings["errors"])
        ids = parquet._id_column(table, first)
        try:
            result = price_locally(book, market, PricingOptions.of(**settings))
        except InputError as err:  # rows of the whole file, not of the row group
            raise InputError([(None if row is None else row + first, field, message)
                              for row, field, message in err.errors]) from None
        writer.write(ids, result)
        failed += int((result.error != "").sum())
        engine = result.engine
        first += table.num_rows
        del result, book, table, ids
        _release_memory()  # peak memory one row group's, not the book's
        if progress is not None:
            progress(float(first - first_row), float(total))
        if check is not None:
            check()
    return failed, engine


# --- on Dask workers -----------------------------------------------------------------------------------------
def task_cuts(counts: Sequence[int], rows: int) -> list[tuple[int, int]]:
    """Contiguous runs ``(first group, stop)`` of row groups with ``counts`` rows, each of about ``rows`` rows: a
    group starts a new run where adding it would pass ``rows`` (a group larger than ``rows`` is a run alone).

    >>> task_cuts([4, 4, 4, 4, 1], 8), task_cuts([10, 10], 8), task_cuts([], 8)
    ([(0, 2), (2, 4), (4, 5)], [(0, 1), (1, 2)], [])
    """
    cuts: list[tuple[int, int]] = []
    begin, held = 0, 0
    for group, count in enumerate(counts):
        if group > begin and held + count > rows:
            cuts.append((begin, group))
            begin, held = group, 0
        held += count
    if begin < len(counts):
        cuts.append((begin, len(counts)))
    return cuts


def price_part(source: str, staging: str, part: int, groups: Sequence[int], first_row: int, market: Any,
               settings: dict[str, Any], shown: str | None = None, staged: bool = False) -> dict[str, Any]:
    """One task of a cluster run, on its worker: row groups ``groups`` of the Parquet book ``source`` (the first at
    file row ``first_row``) priced here and written to ``staging/part-NNNNN.parquet`` (``staged``: as an Arrow IPC
    file, ``part-NNNNN.arrow``, for the caller to stitch; a temporary name, then an atomic rename); messages name
    the book ``shown`` (default ``source``). Returns ``part``, ``rows``, ``failed``, ``engine``, ``worker`` and
    ``seconds``."""
    start = time.perf_counter()
    _pa, pq = parquet._arrow()
    worker = _worker_name()
    if not os.path.exists(source):
        raise InputError([(None, "file", f"{source}: no such file on Dask worker {worker} (every worker must see the "
                           "book at this path: a file system they share)")])
    if not os.path.isdir(staging):
        raise InputError([(None, "out", f"Dask worker {worker}: the staging folder {staging} beside the output "
                           "does not exist there (every worker must see the output's folder at this path; or the "
                           "run was given up)")])
    shown = shown or source
    handle = parquet._readable(shown, lambda: pq.ParquetFile(source))
    writer: parquet.ResultWriter | _StagedPart = (_StagedPart(Path(staging) / STAGED_PART_NAME.format(part)) if staged
                                                   else parquet.ResultWriter(Path(staging) / PART_NAME.format(part)))
    try:
        failed, engine = _price_groups(handle, shown, groups, first_row, market, settings, writer)
    except BaseException as err:
        writer.close(err)
        raise
    writer.close()
    rows = sum(handle.metadata.row_group(g).num_rows for g in groups)
    return {"part": part, "rows": rows, "failed": failed, "engine": engine, "worker": worker,
            "seconds": time.perf_counter() - start}


class _StagedPart:
    """A part's rows as an Arrow IPC file (``ResultWriter``'s tables, one record batch each: the caller writes each
    as the one-process run writes its row group), made whole or not at all."""

    def __init__(self, path: Path):
        from ..io.files import replacing

        self._pa, _pq = parquet._arrow()
        self._context = replacing([path])
        (self._target,) = self._context.__enter__()
        self._sink: Any = None
        self._writer: Any = None

    def write(self, ids: Any, result: Any) -> None:
        table = parquet.result_table(ids, result).combine_chunks()
        if self._writer is None:
            self._sink = self._pa.OSFile(str(self._target), "wb")
            self._writer = self._pa.ipc.new_file(self._sink, table.schema)
        for batch in table.to_batches() or [self._pa.RecordBatch.from_pylist([], schema=table.schema)]:
            self._writer.write_batch(batch)

    def close(self, failed: BaseException | None = None) -> None:
        if self._writer is None and failed is None:  # no rows: an empty part
            self._sink = self._pa.OSFile(str(self._target), "wb")
            self._writer = self._pa.ipc.new_file(self._sink, parquet.result_schema())
        if self._writer is not None:
            self._writer.close()
            self._sink.close()
        if failed is None:
            self._context.__exit__(None, None, None)
        else:
            self._context.__exit__(type(failed), failed, failed.__traceback__)


def _part_task(*arguments: Any) -> dict[str, Any]:
    """:func:`price_part` as a cluster run's task: bad input (a bad row, a book or folder the worker does not see)
    comes back as the summary's ``problems``, to be raised by the caller (not logged by the worker as a failed
    task)."""
    try:
        return price_part(*arguments)
    except InputError as err:
        return {"part": arguments[2], "problems": err.errors}


def _on_cluster(client: Any, book: _Book, out: Path, folder: bool, market: Any, settings: dict[str, Any],
                progress: Callable[[float, float], None] | None, ids: _IdCheck,
                task_rows: int | None) -> tuple[int, int, str, int, tuple[tuple[str, float], ...], float]:
    """The book priced by tasks on ``client``'s workers, their parts stitched into ``out`` in input order as they
    come (or moved into place as a folder); also each task's worker and seconds, and the seconds stitching."""
    from distributed import as_completed

    threads = client.nthreads()
    if not threads:
        client.wait_for_workers(1)
        threads = client.nthreads()
    workers = max(1, sum(max(1, int(n)) for n in threads.values()))
    tune_workers(client)  # malloc and pyarrow's threads set up for pricing, once a worker process
    rows = task_rows or max(1, math.ceil(book.rows / (workers * TASKS_PER_WORKER)))
    cuts = task_cuts(book.counts, rows)
    starts = [sum(book.counts[:begin]) for begin, _stop in cuts]
    run = uuid.uuid4().hex[:12]
    with _staged(out, folder) as staging, _Stitcher(out, folder, book.rows, progress) as stitch:
        futures = [client.submit(_part_task, str(book.path), str(staging), k, list(range(begin, stop)), starts[k],
                                 market, settings, book.shown, not folder, key=f"trinom-part-{k:05d}-{run}", pure=False,
                                 retries=0, priority=len(cuts) - k)
                   for k, (begin, stop) in enumerate(cuts)]
        order = {future.key: k for k, future in enumerate(futures)}
        try:
            summaries: dict[int, dict[str, Any]] = {}
            bad = len(cuts)  # the first failed part: the parts before it decide which error is raised
            problems: list[tuple[int | None, str, str]] | None = None
            following = as_completed(futures)
            for future in following:
                k = order[future.key]
                if k >= bad:
                    continue
                summary = future.result() if future.status == "finished" else {}
                if "rows" in summary:
                    summaries[k] = summary
                    futures[k] = None  # its result is here: nothing for Dask to keep or recompute
                else:  # bad input (its problems), or the task's own error (raised below)
                    bad, problems = k, summary.get("problems")
                    client.cancel([f for f in futures[k + 1:] if f is not None])
                while stitch.done < bad and stitch.done in summaries:
                    stitch.add(staging / (PART_NAME if folder else STAGED_PART_NAME).format(stitch.done),
                               summaries[stitch.done]["rows"])
                ids.check()
                if stitch.done == bad:
                    break
            if bad < len(cuts):
                if problems:
                    raise InputError(problems)
                _raise_task_error(futures[bad], book, cuts[bad], starts[bad])
            ids.result()  # checked meanwhile, in a thread of this process
        except BaseException as err:
            client.cancel([f for f in futures if f is not None])
            ids.raise_first(err)  # bad ids are named first, as ever
            raise
        if folder:
            _move_parts(staging, len(cuts))
    engines = sorted({s["engine"] for s in summaries.values() if s["engine"]})
    label = f"{'+'.join(engines) or settings['backend']} on dask ({len(cuts)} tasks of row groups, {workers} workers)"
    tasks = tuple((summaries[k]["worker"], summaries[k]["seconds"]) for k in range(len(cuts)))
    return book.rows, sum(s["failed"] for s in summaries.values()), label, len(cuts), tasks, stitch.seconds


def _raise_task_error(future: Any, book: _Book, cut: tuple[int, int], first: int) -> None:
    """The error of a failed task: its own (bad input, a missing engine), or for a task lost with too many workers a
    ``RuntimeError`` naming its rows."""
    from distributed import KilledWorker

    try:
        future.result()
    except KilledWorker as err:
        last = first + sum(book.counts[cut[0]:cut[1]]) - 1
        raise RuntimeError(f"{book.shown}: rows {first}..{last} (row groups {cut[0]}..{cut[1] - 1}) were not priced: "
                           f"the Dask workers running them kept dying ({err}); nothing was written") from None
    raise RuntimeError(f"{book.shown}: the task of row groups {cut[0]}..{cut[1] - 1} ended {future.status}")


class _Stitcher:
    """Parts appended to a temporary file beside ``out`` in input order (their Arrow tables written), renamed over
    ``out`` when the block ends without an error; for a folder, the parts only counted."""

    def __init__(self, out: Path, folder: bool, total: int, progress: Callable[[float, float], None] | None):
        self.out, self.folder, self.total, self.progress = out, folder, total, progress
        self.done, self.rows, self.seconds = 0, 0, 0.0
        self._pa, self._pq = parquet._arrow()
        self._writer: Any = None
        self._schema: Any = None
        self._context: Any = None
        self._target: Path | None = None

    def __enter__(self) -> _Stitcher:
        if not self.folder:
            from ..io.files import replacing

            self._context = replacing([self.out])
            (self._target,) = self._context.__enter__()
        return self

    def add(self, part: Path, rows: int) -> None:
        """Part number :attr:`done`, whose file is ``part``, appended (a folder: counted)."""
        start = time.perf_counter()
        if not self.folder:  # an Arrow IPC part (_StagedPart): mapped, each record batch one row group
            with self._pa.memory_map(str(part)) as source:
                reader = self._pa.ipc.open_file(source)
                self._schema = self._schema or reader.schema
                for k in range(reader.num_record_batches):
                    table = self._pa.Table.from_batches([reader.get_batch(k)])
                    if self._writer is None:
                        self._writer = self._pq.ParquetWriter(self._target, table.schema)
                    self._writer.write_table(table if table.schema.equals(self._writer.schema) else
                                             table.cast(self._writer.schema))
        self.done += 1
        self.rows += rows
        self.seconds += time.perf_counter() - start
        if self.progress is not None:
            self.progress(float(self.rows), float(self.total))

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if self._context is None:
            return
        try:
            if self._writer is None and kind is None:  # no rows at all: an empty table, still a Parquet file
                self._pq.write_table((self._schema or parquet.result_schema()).empty_table(), self._target)
        finally:
            if self._writer is not None:
                self._writer.close()
            self._context.__exit__(kind, error, trace)


# --- staging and moving into place ----------------------------------------------------------------------------
@contextlib.contextmanager
def _staged(out: Path, folder: bool) -> Iterator[Path]:
    """A staging folder beside ``out`` (parts are written there); removed when the block ends, unless it became
    ``out`` (a folder of parts, moved into place)."""
    parent = out.parent if str(out.parent) else Path(".")
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".parts", dir=parent))
    try:
        yield staging
        if folder:
            os.chmod(staging, 0o777 & ~_UMASK)  # as an ordinary new folder would be (mkdtemp makes it private)
            _into_place(staging, out)
    finally:
        _remove_tree(staging)


def _move_parts(staging: Path, parts: int) -> None:
    """Leave only the parts in the staging folder (a task killed mid-write leaves a temporary file behind)."""
    wanted = {PART_NAME.format(k) for k in range(parts)}
    for entry in staging.iterdir():
        if entry.name not in wanted:
            entry.unlink(missing_ok=True)
    missing = sorted(wanted - {entry.name for entry in staging.iterdir()})
    if missing:
        raise RuntimeError(f"{staging}: the parts {', '.join(missing)} are missing after their tasks finished")


def _into_place(staging: Path, out: Path) -> None:
    """The staging folder renamed to ``out``; an existing ``out`` (checked to hold only parts) swapped with it in
    one step where the system can (Linux's renameat2 RENAME_EXCHANGE), and then removed."""
    if not out.exists():
        os.rename(staging, out)
        return
    if _exchange(staging, out):
        return  # the old parts are now in ``staging``, which the caller removes
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent if str(out.parent) else "."))
    os.rename(out, old / "parts")
    try:
        os.rename(staging, out)
    except BaseException:
        os.rename(old / "parts", out)
        raise
    finally:
        _remove_tree(old)


def _exchange(one: Path, other: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 with RENAME_EXCHANGE); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_cwd, exchange = -100, 2
    return call(at_cwd, os.fsencode(one), at_cwd, os.fsencode(other), exchange) == 0


def _remove_tree(path: Path) -> None:
    """``path`` removed if it exists (tried again: a task given up may still be writing a part there)."""
    for _attempt in range(5):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.2)


def _release_memory() -> None:
    """:func:`trinom.engines.release_memory` without its full garbage collection (a tenth of a second in a Dask
    worker's heap, per row group): the Futhark contexts' free lists and glibc's free heap given back; the priced
    portfolio's cycle is broken by the caller."""
    from ..engines import _futhark

    _futhark.clear_caches()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc
            pass


def _worker_name() -> str:
    """This Dask worker's address (or "this process" outside a worker)."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "this process"


class _IdCheck:
    """The book's ids checked (:func:`trinom.io.parquet.check_ids`) in a thread, while the rows are priced."""

    def __init__(self, path: Path):
        self._error: BaseException | None = None
        self.seconds = 0.0  #: how long the check took, once it has ended
        self._thread = threading.Thread(target=self._run, args=(path,), name="trinom-id-check", daemon=True)
        self._thread.start()

    def _run(self, path: Path) -> None:
        start = time.perf_counter()
        try:
            parquet.check_ids(path)
        except BaseException as err:  # raised in the caller's thread
            self._error = err
        self.seconds = time.perf_counter() - start

    def check(self) -> None:
        """The check's error if it has ended in one (without waiting)."""
        if not self._thread.is_alive() and self._error is not None:
            raise self._error

    def result(self) -> None:
        """Wait for the check; its error, if any."""
        self._thread.join()
        if self._error is not None:
            raise self._error

    def raise_first(self, other: BaseException) -> None:
        """The ids' error in place of ``other`` where the ids are bad (they are checked first, as ever)."""
        if isinstance(other, Exception):
            self._thread.join()
            if self._error is not None:
                raise self._error from None


__all__ = ["PART_NAME", "TASKS_PER_WORKER", "PricedFile", "check_out", "inspect", "is_folder",
           "price_parquet_file", "price_part", "task_cuts"]
