"""A book placed on Dask workers (issues 15, 27): its shards, where they live, and the calls run on them.

:func:`distribute` (and ``trinom.price(..., client=client)``, which uses it) places a book on the workers
*once*: trinom validates the book in the calling process, lowers it to trees, estimates every tree's work
(node updates, :meth:`trinom.lattice.book.Book.work`), cuts the trees into shards of about equal work (one per
worker thread by default: runs of consecutive trees where every tree is small against a shard, else dealt
largest first in snake order) and scatters each shard, lowered, straight to one worker
(``client.scatter(..., direct=True)``: the book never passes through the scheduler nor travels in a task
graph). The :class:`DistributedBook` keeps the shards' futures, and is kept on the instruments object: a
second price, a risk run, an OAS search or a scenario grid on the same book sends only its market (curves
and scenario moves) and, where some rows are invalid in that call only, the shards' tree indices to keep.
Each task (:func:`~trinom.distributed.tasks.price_placed`) prices one placed shard in one engine call, the engine's
prepared call kept on the worker for the next call with the same market; results come back straight from the
workers as NumPy arrays, put in input order (a large result from workers on the caller's host is written by them
straight into the call's result array in shared memory: :mod:`trinom.shared_results`).

A scenario grid is split along one axis: by trees (each worker prices its shards in every scenario: the
engine shares a tree's forward pass across scenarios), or by scenarios (each worker holds the whole book,
placed on it once, and prices its contiguous share of the scenarios in one engine call) where that balances
better (``split="auto"``: a book of few large trees, fewer trees than workers, or bonds on the ``cuda`` engine
or a GPU target, whose kernel runs faster on more trees; see :func:`choose_split`).

Calls go straight to the worker holding their placed book (:mod:`trinom.worker_calls`: a message each way,
past the scheduler); a call that cannot run there runs as a Dask task, as below.

A worker that dies loses nothing: a task running there is run again (Dask's own retries), and a placed
shard that died with it is scattered again, from the caller's lowered copy, to a live worker
(:attr:`DistributedBook.scatters` counts every placement). Any number of workers: the shards follow the
workers' threads at placement (:meth:`DistributedBook.release` and a new call place the book again after
the cluster grows).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from ..checks import check_choice, check_client
from ..errors import InputError
from ..instruments.bond import BondPortfolio
from ..instruments.option import Portfolio
from ..lattice.book import BOND, Book
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from ..lattice.job import Job, prepare
from ..model.market import CurvesLike, Market
from .shared_results import Destination, SharedResult, shared_result
from .tasks import price_placed
from .worker_calls import MISSING, for_client
from .worker_tuning import tune_workers

#: Shards per worker thread when the caller does not say (one: a worker prices its share in one engine call).
SHARDS_PER_THREAD = 1
#: A book is cut into runs of consecutive trees when its largest tree is at most this share of a shard's work.
SPAN_SHARE = 0.02
#: How a scenario grid is split over the workers (see :func:`choose_split`).
SPLITS = ("auto", "trees", "scenarios")
#: ``split="auto"`` splits by scenarios only where that makes the busiest worker's work at most this share of
#: the split by trees' (it prices every tree's forward pass on every worker, and places the whole book on each).
SCENARIO_SPLIT_GAIN = 0.8
#: The same for a book holding bonds: by scenarios wherever it is no more work. A bond's scenario entries run one
#: after another in its GPU warp, after its forward pass, so a call of every tree and half the scenarios runs
#: faster than one of half the trees and every scenario (H200, 100000 R1 bonds in 20 shifts: 450 ms against 474;
#: on 2 GPUs 461 ms by scenarios against 495 by trees).
SCENARIO_SPLIT_GAIN_BONDS = 1.0
#: Engine targets on a GPU (with the ``cuda`` engine, where :data:`SCENARIO_SPLIT_GAIN_BONDS` holds; on a CPU a
#: bond grid by scenarios prices each forward pass twice for nothing: 1.67x on two cores against 1.77-1.82x by
#: trees, 800 R1 bonds in 20 shifts).
GPU_TARGETS = ("cuda", "opencl", "pyopencl")
#: A task's argument array larger than this (bytes) is sent straight to its worker, not in the task graph.
SMALL_ARGUMENT = 64 * 1024
#: Calls go straight to the workers holding their placed books (:mod:`trinom.worker_calls`), tasks only where that
#: fails; False: every call is a Dask task.
DIRECT_CALLS = True
#: The key under which an instruments object keeps its :class:`DistributedBook` per client.
_CACHE_KEY = "dask-placement"
#: Books scattered by this process (:func:`scatter_count`).
_SENT = [0]


def shards_by_work(work: np.ndarray, shards: int) -> list[np.ndarray]:
    """Row indices in ``shards`` groups of about equal total ``work``: the rows, largest first, dealt in snake
    order (0, 1, ..., k-1, k-1, ..., 0, ...); each group ascending. Empty groups are dropped.

    >>> [s.tolist() for s in shards_by_work(np.array([1.0, 9.0, 5.0, 5.0, 1.0]), 2)]
    [[0, 1, 4], [2, 3]]
    """
    shards = max(1, min(int(shards), work.size))
    order = np.argsort(-work, kind="stable")
    lap = np.arange(order.size) // shards
    position = np.arange(order.size) % shards
    owner = np.where(lap % 2 == 0, position, shards - 1 - position)
    groups = [np.sort(order[owner == k]) for k in range(shards)]
    return [g for g in groups if g.size]


def choose_split(loads: npt.ArrayLike, scenarios: int, *, bonds: bool = False) -> str:
    """``"scenarios"`` or ``"trees"``: how to split a grid of ``scenarios`` scenarios over workers whose shards
    of the book carry ``loads`` (node updates, one entry per worker). By trees the busiest worker prices its
    load in every scenario; by scenarios each worker prices the whole book in its share of the scenarios (at
    most ``ceil(scenarios / workers)``). Scenarios only where that is at most :data:`SCENARIO_SPLIT_GAIN` of
    the split by trees (a few large trees, or fewer trees than workers); for a book holding ``bonds`` priced on
    GPUs, at most :data:`SCENARIO_SPLIT_GAIN_BONDS` of it.

    >>> choose_split([10.0, 10.0], 20), choose_split([18.0, 2.0], 20), choose_split([18.0, 2.0], 1)
    ('trees', 'scenarios', 'trees')
    >>> choose_split([10.0, 10.0], 20, bonds=True), choose_split([10.0, 10.0], 3, bonds=True)
    ('scenarios', 'trees')
    """
    loads = np.asarray(loads, dtype=np.float64)
    if scenarios < 2 or loads.size < 2 or not loads.sum() > 0:
        return "trees"
    by_trees = scenarios * loads.max()
    by_scenarios = loads.sum() * math.ceil(scenarios / loads.size)
    gain = SCENARIO_SPLIT_GAIN_BONDS if bonds else SCENARIO_SPLIT_GAIN
    return "scenarios" if by_scenarios <= gain * by_trees else "trees"


@dataclass
class _Shard:
    """Trees of a placement on one worker: their indices in the placement's book, and the worker's copy."""

    trees: np.ndarray  #: ascending indices into the placement's book
    span: tuple[int, int] | None  #: ``(start, stop)`` where the trees are consecutive (a view of the book)
    work: float  #: node updates
    worker: str
    future: Any = None  #: the placed trees (a Dask future of a :class:`~trinom.lattice.book.Book`)

    def book(self, whole: Book) -> Book:
        """The shard's trees as a book of their own (nothing cached on it yet: a fresh copy to send)."""
        return whole.span(*self.span) if self.span is not None else whole.take(self.trees)


@dataclass
class _Placement:
    """One lowered book on the workers: its shards, and (for scenario splits) whole copies per worker."""

    book: Book  #: the lowered trees, in input order; kept by the caller to place a lost shard again
    rows: np.ndarray | None  #: the input row of each tree (None: tree k is row k)
    shards: list[_Shard]
    whole: dict[str, Any] = field(default_factory=dict)  #: worker -> future of the whole book

    def futures(self) -> list[Any]:
        return [s.future for s in self.shards] + list(self.whole.values())


@dataclass(frozen=True)
class _Task:
    """One engine call on a worker: a placed book (a shard, or the whole book on ``worker``), the trees of it to
    price (None: all), the scenarios (None: all) and where its prices go in the call's book."""

    shard: int | None  #: index of the placed shard; None: the whole book on ``worker``
    worker: str | None
    keep: np.ndarray | None  #: trees of the placed book to price (None: every one)
    columns: np.ndarray | slice  #: their columns in the call's book
    scenarios: slice  #: the scenarios priced


class _Placements(dict):
    """A dict of placements that pickles empty: futures belong to one client and never travel with a portfolio."""

    def __reduce__(self) -> tuple[type, tuple[()]]:
        return (type(self), ())


class DistributedBook:
    """A book placed on the workers of a Dask ``client`` (see the module): price it with ``trinom.price(book,
    curves, ...)``, ``trinom.risk(book, ...)`` or ``trinom.oas(book, ...)`` as the instruments themselves.

    ``instruments``: one :class:`~trinom.Portfolio` or :class:`~trinom.BondPortfolio`; ``shards``: how many
    shards a placement cuts the book into (default: one per worker thread); ``retries``: how often a task may
    run again after its worker fails. Made by :func:`distribute`; kept on the instruments per client, so
    ``trinom.price(instruments, client=client)`` finds it too. :attr:`scatters` counts the shards and whole
    books sent to workers, :attr:`bytes_sent` their bytes (a repeated call sends none), :attr:`shared_parts` the
    tasks whose prices came back through shared memory (:mod:`trinom.shared_results`), not through Dask."""

    is_distributed_book = True

    def __init__(self, client: Any, instruments: Portfolio | BondPortfolio, *, shards: int | None = None,
                 retries: int = 3):
        check_client(client)
        if not isinstance(instruments, (Portfolio, BondPortfolio)):
            raise InputError([(None, "instruments", "a Dask run takes one trinom.Portfolio or trinom.BondPortfolio, "
                               f"got {type(instruments).__name__}")])
        self.client = client
        self.instruments = instruments
        self.shard_count = shards
        self.retries = retries
        self.placements: dict[tuple[str, ...], _Placement] = _Placements()
        self.scatters = 0
        self.bytes_sent = 0
        self.shared_parts = 0
        self.direct_calls = 0

    def __len__(self) -> int:
        return len(self.instruments)

    def __repr__(self) -> str:
        shards = sum(len(p.shards) for p in self.placements.values())
        return (f"DistributedBook({len(self)} rows of {type(self.instruments).__name__}; {shards} shards on "
                f"{len({s.worker for p in self.placements.values() for s in p.shards})} workers)")

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a DistributedBook holds one client's futures: send its instruments, not the placed book")

    # --- placement -----------------------------------------------------------------------------------------
    def place(self, curves: CurvesLike = None, *, max_width: int = DEFAULT_MAX_WIDTH,
              max_steps: int = DEFAULT_MAX_STEPS) -> DistributedBook:
        """Validate and lower the book for ``curves`` (their names; bonds are checked against them) and place its
        good rows on the workers, unless they are placed already; ``self``."""
        limits = {"max_width": max_width, "max_steps": max_steps}
        self._placement(prepare(self.instruments, Market.of(curves), **limits), Market.of(curves), limits)
        return self

    def release(self) -> None:
        """Forget every placement (the workers drop the shards; the next call places the book again)."""
        for key in list(self.placements):
            self.release_placement(key)

    def _placement(self, job: Job, market: Market, limits: Mapping[str, int],
                   rows: np.ndarray | None = None) -> tuple[_Placement, np.ndarray | None]:
        """The placement holding every tree of ``job``'s book, and per placed tree its column in the call's book
        (-1: not in this call; None: the same trees, in order). ``rows``: the instruments' rows that ``job``'s
        input is (None: all of them). Placed where needed: the rows good in ``market``'s base scenario (a move of
        sigma or of the spread only takes rows out of a call, which then prices a subset of the placed trees)."""
        key = tuple(job.book.curve_names)
        placement = self.placements.get(key)
        if placement is not None and not self._alive():
            placement = None
        if placement is not None and rows is None and (job.book is placement.book
                                                       or (job.rows is None and placement.rows is None)):
            return placement, None
        wanted = job.rows if job.rows is not None else np.arange(len(job.book))
        if rows is not None:
            wanted = np.asarray(rows, dtype=np.int64)[wanted]
        if placement is not None:
            column = _columns_of(placement, wanted)
            if column is not None:
                return placement, column
            self.release_placement(key)
        base = job
        if rows is not None or market.moves_trees or len(market) > 1:  # the base scenario's good rows: a superset
            found = prepare(self.instruments, Market(market.names, market.scenarios[:1]), **limits)
            base = found if tuple(found.book.curve_names) == key else job
        if rows is not None and base is job:  # job's rows are a part's: the instruments' own rows are placed
            base = prepare(self.instruments, market, **limits)
        placement = self.placements[key] = self._place(base.book, base.rows)
        if rows is None and (base is job or (job.rows is None and base.rows is None)):
            return placement, None
        column = _columns_of(placement, wanted)
        if column is None:
            raise InputError([(None, "instruments", "the rows of this call are not among the rows placed")])
        return placement, column

    def release_placement(self, key: tuple[str, ...]) -> None:
        placement = self.placements.pop(key, None)
        if placement is not None:
            self.client.cancel([f for f in placement.futures() if f is not None])

    def _alive(self) -> bool:
        return getattr(self.client, "status", "running") == "running"

    def _workers(self) -> dict[str, int]:
        """The live workers and their threads, by address."""
        threads = self.client.nthreads()
        if not threads:
            self.client.wait_for_workers(1)
            threads = self.client.nthreads()
        return {address: max(1, int(n)) for address, n in sorted(threads.items())}

    def _place(self, book: Book, rows: np.ndarray | None) -> _Placement:
        """``book`` cut into shards of about equal work, each scattered to one worker (most work to most threads);
        the workers set up for pricing first (:mod:`trinom.worker_tuning`, once a process)."""
        workers = self._workers()
        tune_workers(self.client)
        count = self.shard_count or SHARDS_PER_THREAD * sum(workers.values())
        work = np.maximum(book.work(), 1.0) if len(book) else np.zeros(0)
        load = dict.fromkeys(workers, 0.0)
        shards = []
        for trees, span in sorted(_cuts(work, count), key=lambda cut: -float(work[cut[0]].sum())):
            worker = min(load, key=lambda w: (load[w] / workers[w], w))
            shards.append(_Shard(trees, span, float(work[trees].sum()), worker))
            load[worker] += shards[-1].work
        shards.sort(key=lambda s: int(s.trees[0]))
        placement = _Placement(book=book, rows=rows, shards=shards)
        for worker in workers:
            mine = [s for s in shards if s.worker == worker]
            if mine:
                futures = self._scatter([s.book(book) for s in mine], worker)
                for shard, future in zip(mine, futures, strict=True):
                    shard.future = future
        return placement

    def _scatter(self, books: list[Book], worker: str) -> list[Any]:
        """``books`` sent straight to ``worker`` (not through the scheduler), one future each."""
        futures = self.client.scatter(books, workers=[worker], direct=True, hash=False)
        self.scatters += len(books)
        self.bytes_sent += sum(_nbytes(b) for b in books)
        _SENT[0] += len(books)
        return futures

    def _replace_lost(self, placement: _Placement) -> None:
        """Scatter again, to the least loaded live worker, every shard whose worker died; forget whole copies that
        died (placed again where a task needs them)."""
        workers = self._workers()
        for worker in [w for w, f in placement.whole.items() if f.status != "finished"]:
            del placement.whole[worker]
        load = dict.fromkeys(workers, 0.0)
        for shard in placement.shards:
            if shard.future.status == "finished" and shard.worker in load:
                load[shard.worker] += shard.work
        for shard in placement.shards:
            if shard.future.status != "finished":
                shard.worker = min(load, key=lambda w: (load[w] / workers[w], w))
                shard.future = self._scatter([shard.book(placement.book)], shard.worker)[0]
                load[shard.worker] += shard.work

    def _whole(self, placement: _Placement, worker: str) -> Any:
        """The whole placed book on ``worker`` (scattered there on first use)."""
        future = placement.whole.get(worker)
        if future is None or future.status != "finished":
            live = self._workers()
            if worker not in live:
                worker = min(live, key=lambda w: (w in placement.whole, w))
            future = placement.whole[worker] = self._scatter([placement.book.span(0, len(placement.book))],
                                                            worker)[0]
        return future

    # --- pricing -------------------------------------------------------------------------------------------
    def run(self, job: Job, market: Market, *, engine: Mapping[str, Any], split: str = "auto",
            retries: int | None = None, limits: Mapping[str, int] | None = None,
            rows: np.ndarray | None = None) -> tuple[np.ndarray, str]:
        """The engine's prices of ``job``'s book in ``market`` (shape ``(len(market), len(job.book))``, book
        order), priced on the placed shards; and a description of the run. ``limits``: ``max_width`` and
        ``max_steps`` (for a placement made here); ``rows``: the instruments' rows ``job`` prices (None: all)."""
        check_choice("split", split, SPLITS)
        dtype = np.float32 if engine.get("precision") == "f32" else np.float64
        lead = len(market)
        values = np.empty((lead, len(job.book)), dtype=dtype)
        if not len(job.book):
            return values, "0 tasks"
        placement, column = self._placement(job, market, limits or {}, rows)
        workers: list[str] = []
        if lead > 1 and split != "trees":  # a grid: the live workers (a single scenario asks the scheduler nothing)
            workers = list(self._workers())
            loads = dict.fromkeys(workers, 0.0)
            for shard in placement.shards:
                loads[shard.worker] = loads.get(shard.worker, 0.0) + shard.work
            if split == "auto":
                gpu_bonds = BOND in placement.book.instruments() and (engine.get("backend") == "cuda" or engine.get(
                    "target") in GPU_TARGETS)
                split = choose_split([loads[w] for w in workers], lead, bonds=gpu_bonds)
        if split == "scenarios" and lead > 1:
            tasks = self._by_scenarios(placement, column, lead, workers, len(job.book))
        else:
            split = "trees"
            tasks = self._by_trees(placement, column, lead)
        markets: dict[tuple[int, int], Market] = {}
        for task in tasks:
            cut = (task.scenarios.start, task.scenarios.stop)
            if cut not in markets:
                markets[cut] = _scenarios_of(market, np.arange(*cut))
        shared = shared_result(values.shape, dtype)  # workers on this host write their parts straight into it
        if shared is not None:
            values = shared.array
        calls = [(task.shard, task.worker, price_placed,
                  (markets[(task.scenarios.start, task.scenarios.stop)], task.keep, dict(engine),
                   *_destination(shared, task))) for task in tasks]
        try:
            parts = self._execute(placement, calls, self.retries if retries is None else retries)
        finally:
            if shared is not None:
                shared.close()
        for task, part in zip(tasks, parts, strict=True):
            if part is None:
                self.shared_parts += 1
            else:
                values[task.scenarios, task.columns] = part
        return values, f"{len(tasks)} tasks by {split}"

    def _by_trees(self, placement: _Placement, column: np.ndarray | None, lead: int) -> list[_Task]:
        tasks = []
        for k, shard in enumerate(placement.shards):
            if column is None:
                tasks.append(_Task(k, None, None, slice(*shard.span) if shard.span else shard.trees, slice(0, lead)))
                continue
            mine = column[shard.trees]
            keep = np.flatnonzero(mine >= 0)
            if keep.size:
                tasks.append(_Task(k, None, None if keep.size == mine.size else keep, mine[keep], slice(0, lead)))
        return tasks

    def _by_scenarios(self, placement: _Placement, column: np.ndarray | None, lead: int, workers: list[str],
                      size: int) -> list[_Task]:
        keep = None if column is None else np.flatnonzero(column >= 0)
        columns = slice(0, size) if column is None else column[keep]
        cuts = np.array_split(np.arange(lead), min(lead, len(workers)))
        return [_Task(None, worker, keep, columns, slice(int(cut[0]), int(cut[-1]) + 1))
                for worker, cut in zip(workers, cuts, strict=False)]

    def _placed(self, placement: _Placement, index: int | None, where: str | None) -> tuple[Any, str]:
        """A call's placed book (the future of shard ``index``, or of the whole book on ``where`` where ``index`` is
        None: scattered there on first use) and its worker."""
        if index is not None:
            return placement.shards[index].future, placement.shards[index].worker
        data = self._whole(placement, where)  # type: ignore[arg-type]
        return data, next(w for w, f in placement.whole.items() if f is data)

    def _direct(self, placement: _Placement, calls: Sequence[tuple[int | None, str | None, Callable[..., Any],
                                                                  tuple[Any, ...]]]) -> dict[int, Any]:
        """The calls run straight on the workers holding their placed books (:mod:`trinom.worker_calls`), by index;
        a call whose book or worker is lost is left out (run as a task by :meth:`_execute`)."""
        from distributed import CancelledError

        sent = []
        for k, (index, where, function, arguments) in enumerate(calls):
            try:
                data, worker = self._placed(placement, index, where)
            except (CancelledError, OSError):  # its worker just died: a task, placed again
                continue
            if data.status == "finished":
                sent.append((k, (worker, data.key, function, arguments)))
        answers = for_client(self.client).run([call for _k, call in sent]) if sent else []
        done = {k: answer for (k, _call), answer in zip(sent, answers, strict=True) if answer is not MISSING}
        self.direct_calls += len(done)
        return done

    def _execute(self, placement: _Placement, calls: Sequence[tuple[int | None, str | None, Callable[..., Any],
                                                                    tuple[Any, ...]]], retries: int) -> list[Any]:
        """Every call ``(shard, worker, function, arguments)``'s ``function(placed book, *arguments)`` on the worker
        holding the placed book (shard ``shard``, or the whole book on ``worker`` where ``shard`` is None): sent
        straight to that worker (:meth:`_direct`); where that fails, as a Dask task whose result is gathered
        straight from the worker (an argument array larger than :data:`SMALL_ARGUMENT` bytes is sent straight to
        that worker too). Calls that lost their placed book with a dead worker run again once it is placed again
        (up to ``retries + 1`` rounds)."""
        from distributed import CancelledError, wait

        results = self._direct(placement, calls) if DIRECT_CALLS else {}
        for attempt in range(retries + 2):
            if len(results) == len(calls):
                break
            if attempt:
                self._replace_lost(placement)
            pending = {}
            for k, (index, where, function, arguments) in enumerate(calls):
                if k in results:
                    continue
                try:
                    data, worker = self._placed(placement, index, where)
                    sent = tuple(self.client.scatter(a, workers=[worker], direct=True, hash=False)
                                 if isinstance(a, np.ndarray) and a.nbytes > SMALL_ARGUMENT else a for a in arguments)
                    pending[k] = self.client.submit(function, data, *sent, workers=[worker], allow_other_workers=True,
                                                    retries=retries, pure=False)
                except (CancelledError, OSError):  # its placed book or its worker just died: the next round
                    continue
            if not pending:
                continue
            try:
                wait(list(pending.values()))
            except CancelledError:  # some lost their placed book with a dead worker: placed again below
                pass
            for future in pending.values():
                if future.status == "error":
                    future.result()  # the task's own error (bad input, a missing engine): raised here
            done = {k: f for k, f in pending.items() if f.status == "finished"}
            try:
                results.update(zip(done, self.client.gather(list(done.values()), direct=True), strict=True))
            except Exception:  # a result lost with its worker after it finished: the others one at a time
                for k, future in done.items():
                    if future.status == "finished":
                        try:
                            results[k] = self.client.gather(future, direct=True)
                        except Exception:
                            if future.status == "finished":
                                raise
        if len(results) < len(calls):
            raise RuntimeError(f"{len(calls) - len(results)} of {len(calls)} Dask tasks lost their placed book "
                               f"{retries + 2} times: the workers keep dying")
        return [results[k] for k in range(len(calls))]


def scatter_count() -> int:
    """Shards and whole books scattered to workers by every :class:`DistributedBook` of this process so far."""
    return _SENT[0]


def distribute(instruments: Portfolio | BondPortfolio, curves: CurvesLike = None, *, client: Any,
               shards: int | None = None, max_width: int = DEFAULT_MAX_WIDTH,
               max_steps: int = DEFAULT_MAX_STEPS) -> DistributedBook:
    """``instruments`` validated, lowered for ``curves`` (their names) and placed on the workers of ``client``
    (see the module); the :class:`DistributedBook` kept on the instruments for this client (placed once: a
    second call returns it as it is). ``shards``: how many shards (default one per worker thread).

    ``trinom.price(book, curves, ...)``, ``trinom.risk(book, ...)`` and ``trinom.oas(book, ...)`` then price on
    the placed shards, and so does ``trinom.price(instruments, client=client)``."""
    book = placed_book(client, instruments, shards=shards)
    return book.place(curves, max_width=max_width, max_steps=max_steps)


def placed_book(client: Any, instruments: Any, *, shards: int | None = None) -> DistributedBook:
    """The :class:`DistributedBook` of ``instruments`` on ``client`` (a new one, not yet placed, on first use);
    ``instruments`` may be a DistributedBook itself (of this client)."""
    check_client(client)
    if isinstance(instruments, DistributedBook):
        if instruments.client is not client:
            raise ValueError("this DistributedBook is placed through another client: pass client=None or its own")
        return instruments
    if not isinstance(instruments, (Portfolio, BondPortfolio)):
        raise InputError([(None, "instruments", "a Dask run takes one trinom.Portfolio or trinom.BondPortfolio, got "
                           f"{type(instruments).__name__}")])
    books: dict[str, DistributedBook] = instruments.cached(_CACHE_KEY, _Placements)
    key = str(getattr(client, "id", id(client)))
    book = books.get(key)
    if book is None or not book._alive():
        book = books[key] = DistributedBook(client, instruments, shards=shards)
    elif shards is not None and shards != book.shard_count:  # another cut asked for: placed again
        book.release()
        book.shard_count = shards
    return book


def _columns_of(placement: _Placement, wanted: np.ndarray) -> np.ndarray | None:
    """Per tree of ``placement``, the position of its input row in ``wanted`` (ascending input rows; -1: not
    wanted); None where some wanted row is not placed."""
    placed = placement.rows if placement.rows is not None else np.arange(len(placement.book))
    if wanted.size and not placed.size:
        return None
    where = np.minimum(np.searchsorted(placed, wanted), max(placed.size - 1, 0))
    if wanted.size and not np.array_equal(placed[where], wanted):
        return None
    column = np.full(placed.size, -1, dtype=np.int64)
    column[where] = np.arange(wanted.size)
    return column


def _cuts(work: np.ndarray, count: int) -> list[tuple[np.ndarray, tuple[int, int] | None]]:
    """``count`` groups of trees of about equal ``work``, as (tree indices, span or None): runs of consecutive
    trees where every tree is a small part of a group (at most :data:`SPAN_SHARE` of one), else the trees dealt
    by :func:`shards_by_work` (a few large trees balance only that way)."""
    if not work.size:
        return []
    count = max(1, min(int(count), work.size))
    if work.max() * count <= SPAN_SHARE * work.sum():
        total = np.cumsum(work)
        bounds = [0, *np.searchsorted(total, total[-1] * np.arange(1, count) / count).tolist(), work.size]
        return [(np.arange(a, b), (a, b)) for a, b in pairwise(bounds) if b > a]
    return [(trees, None) for trees in shards_by_work(work, count)]


def _shards(book: Book, count: int) -> list[tuple[np.ndarray, Book]]:
    """``count`` shards of ``book`` of about equal work, as (tree indices, trees): views of the book for runs of
    consecutive trees (see :func:`_cuts`)."""
    work = np.maximum(book.work(), 1.0) if len(book) else np.zeros(0)
    return [(trees, book.span(*span) if span else book.take(trees)) for trees, span in _cuts(work, count)]


def _destination(shared: SharedResult | None, task: _Task) -> tuple[Destination | None, np.ndarray | None]:
    """Where ``task`` writes its prices in ``shared`` (None: it sends them back), and its columns where they are
    not a run (an index array: sent along only in a grid, where it is a small part of the prices)."""
    if shared is None:
        return None, None
    if isinstance(task.columns, slice):
        return shared.destination(task.scenarios, task.columns), None
    if task.scenarios.stop - task.scenarios.start < 2:
        return None, None
    return shared.destination(task.scenarios, None), np.asarray(task.columns, dtype=np.int64)


def _nbytes(book: Book) -> int:
    """The bytes of a book's arrays."""
    return sum(v.nbytes for v in vars(book).values() if isinstance(v, np.ndarray))


def _scenarios_of(market: Market, cut: np.ndarray) -> Market:
    """The scenarios ``cut`` of ``market`` as a market of their own."""
    if cut.size == len(market):
        return market
    pick = slice(int(cut[0]), int(cut[-1]) + 1)
    return Market(market.names, market.scenarios[pick], sigma_shifts=market.sigma_shifts[pick],
                  spread_shifts=market.spread_shifts[pick])


__all__ = ["SHARDS_PER_THREAD", "SPLITS", "DistributedBook", "choose_split", "distribute", "placed_book",
           "scatter_count", "shards_by_work"]
