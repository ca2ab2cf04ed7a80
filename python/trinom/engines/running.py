"""Running a lowered book (issue 36's "plan -> run" stages): the engine a call resolves to, its prices of a book
(in slices of about equal work where a progress bar follows them), and a :class:`~trinom.lattice.job.Job` priced
into its result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..lattice.book import Book
from ..lattice.job import Job
from ..model.market import Market
from ..result import Prices
from . import auto
from . import get as _get
from .engine import Engine
from .options import PricingOptions

#: A job the engine is expected to price in less than this many seconds is one engine call even with a
#: progress bar (the bar appears after two seconds; slices let it move).
PROGRESS_MIN_SECONDS = 1.0
#: Slices of about equal work that a job with a progress bar is priced in.
PROGRESS_SLICES = 20


def price_job(job: Job, market: Market, options: PricingOptions, *, keep_axis: bool = False) -> Prices:
    """``job`` priced in ``market`` as ``options`` say: the engine resolved, run, and its values put back in input
    order (``keep_axis``: prices ``(scenarios, rows)`` for a market of one scenario too)."""
    engine, chosen = resolve(options.backend, job.book, options.precision, options.target)
    values = run(engine, job.book, market, precision=options.precision, target=chosen, device=options.device,
                 progress=options.progress, **options.knobs)
    return job.result(values, label(engine, chosen), options.errors, keep_axis=keep_axis)


def label(engine: Engine, target: str | None) -> str:
    """What ran, as :attr:`Prices.engine` says it: the engine and its target."""
    return engine.name + (f"/{target}" if target else "")


def resolve(backend: str, book: Book, precision: str, target: str | None) -> tuple[Engine, str | None]:
    """The engine to run and its target (``auto`` asks :mod:`trinom.engines.auto`, honouring ``target``)."""
    if backend == "auto":
        name, target = (auto.choose(book, precision, target) if len(book) else ("reference", None))
        return _get(name), target
    return _get(backend), target


def run(engine: Engine, book: Book, market: Market, *, precision: str = "f64", target: str | None = None,
        device: int = 0, progress: Callable[[float, float], None] | None = None, **tuning: Any) -> np.ndarray:
    """The engine's prices of ``book``, shape ``(len(market), len(book))``; with ``progress``, a long job runs in
    slices of about equal work, and ``progress(done, total)`` follows them in node updates."""
    dtype = np.float32 if precision == "f32" else np.float64
    if not len(book):
        return np.zeros((len(market), 0), dtype=dtype)
    total = float(book.work().sum()) if progress is not None else 0.0
    if progress is None or total < PROGRESS_MIN_SECONDS * engine.throughput(target):
        values = engine.price(book, market, precision=precision, target=target, device=device, **tuning)
        if progress is not None:
            progress(total, total)
        return values
    out = np.empty((len(market), len(book)), dtype=dtype)
    cumulative = np.cumsum(book.work())
    bounds = np.searchsorted(cumulative, np.linspace(0, total, PROGRESS_SLICES + 1)[1:-1])
    for part in np.split(np.arange(len(book)), bounds):
        if part.size:
            out[:, part] = engine.price(book.take(part), market, precision=precision, target=target, device=device,
                                        **tuning)
            progress(float(cumulative[part[-1]]), total)
    return out

