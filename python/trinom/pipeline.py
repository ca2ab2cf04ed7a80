"""The pricing pipeline behind every call (issue 36): one sequence, the same for options, bonds and mixed
books, and the checks of its arguments.

    instruments -> validate once -> mask bad rows -> lower to a book -> choose the engine
                -> split by work -> run -> put back in input order -> Prices

:func:`trinom.price` checks its arguments and hands a tree-step book to :func:`price_book`; dated trades are
lowered to tree-step blocks first, a book with a Dask client goes to :mod:`trinom.distributed` (whose workers call
:func:`price_book`), and ``risk``, ``oas`` and the recalibration take its stages (:func:`prepare`,
:func:`resolve`, :func:`run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import engines
from .checks import check_callable, check_sequence, check_text, check_whole
from .engines import auto
from .errors import InputError, check_error_mode
from .instruments.bond import BondPortfolio
from .instruments.option import Portfolio
from .lattice.book import Book, empty_book
from .lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from .lattice.lowering import lower
from .model.market import CurvesLike, Market
from .model.scenarios import Scenario, scenario_market
from .result import Prices, instrument_labels

Instrument = Portfolio | BondPortfolio
#: A job the engine is expected to price in less than this many seconds is one engine call even with a
#: progress bar (the bar appears after two seconds; slices let it move).
PROGRESS_MIN_SECONDS = 1.0
#: Slices of about equal work that a job with a progress bar is priced in.
PROGRESS_SLICES = 20
#: Resolved calls kept per portfolio (for repeated calls with the same curves and options).
PLANS_KEPT = 8


def price_book(instruments: Instrument | Sequence[Instrument], curves: CurvesLike = None, *, backend: str = "auto",
               precision: str = "f64", target: str | None = None, device: int = 0, errors: str = "raise",
               max_width: int = DEFAULT_MAX_WIDTH, max_steps: int = DEFAULT_MAX_STEPS,
               progress: Callable[[float, float], None] | None = None, keep_axis: bool = False,
               scenarios: Sequence[Scenario] | None = None, **tuning: Any) -> Prices:
    """The pipeline of a tree-step book priced in this process, its arguments checked
    (:func:`check_price_arguments`): validate once -> mask bad rows -> lower to a book -> choose the engine -> run
    (split by work where a progress bar shows) -> put back in input order. A repeated call on the same portfolio
    with the same curves and options reuses its plan (:data:`PLANS_KEPT`). ``curves`` may be a market of several
    scenarios (prices ``(scenarios, rows)``; ``keep_axis``: also for a market of one); ``scenarios`` moves the
    market (:func:`~trinom.model.scenarios.scenario_market`: every scenario in one engine call, prices
    ``(scenarios, rows)``)."""
    if scenarios is not None:
        scenarios = check_sequence("scenarios", scenarios, of="scenarios (None, CurveShift, CurveSet, SigmaShift, "
                                   "SpreadShift)")
        curves, keep_axis = scenario_market(curves, scenarios), True

    def plan() -> Plan:
        market = Market.of(curves)
        job = prepare(instruments, market, max_width=max_width, max_steps=max_steps)
        if job.problems and errors == "raise":
            raise InputError(job.problems)
        engine, chosen = resolve(backend, job.book, precision, target)
        label = engine.name + (f"/{chosen}" if chosen else "")
        call = (engine.runner(job.book, market, precision=precision, target=chosen, device=device, **tuning)
                if len(job.book) else lambda: run(engine, job.book, market, precision=precision))
        return Plan(job, call, label, engine, market, chosen)

    key = _plan_key(instruments, curves, backend, precision, target, device, errors, max_width, max_steps, tuning)
    if progress is None and key is not None:  # a repeated call: validated, lowered and resolved already
        plans: dict[tuple, Plan] = instruments.cached("plans", dict)  # type: ignore[union-attr]
        ready = plans.get(key)
        if ready is None:
            ready = plan()
            if len(plans) >= PLANS_KEPT:  # the oldest goes: a loop over new curves must not grow memory
                plans.pop(next(iter(plans)), None)
            plans[key] = ready
        return ready.job.result(ready.call(), ready.label, errors, keep_axis=keep_axis)
    ready = plan()
    values = run(ready.engine, ready.job.book, ready.market, precision=precision, target=ready.target,
                 device=device, progress=progress, **tuning)
    return ready.job.result(values, ready.label, errors, keep_axis=keep_axis)


def check_price_arguments(*, backend: object, precision: object, target: object, device: object, errors: object,
                          max_width: object, max_steps: object, progress: object = None) -> None:
    """A ``TypeError`` or ``ValueError`` naming the first argument of :func:`price` of the wrong type or value."""
    check_text("backend", backend)
    if precision not in engines.PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(engines.PRECISIONS)}, got {precision!r}")
    check_text("target", target, optional=True)
    check_whole("device", device, minimum=0)
    check_error_mode(errors)  # type: ignore[arg-type]
    check_whole("max_width", max_width, minimum=1)
    check_whole("max_steps", max_steps, minimum=1)
    check_callable("progress", progress)


@dataclass(frozen=True)
class Plan:
    """A call resolved once: the job, the engine's prepared call, and what ran."""

    job: Job
    call: Callable[[], np.ndarray]
    label: str
    engine: engines.Engine
    market: Market
    target: str | None


def _plan_key(instruments: object, curves: object, *args: Any) -> tuple | None:
    """The key under which a call's plan is kept on its portfolio, or None where the call is not cacheable
    (a sequence of portfolios, unhashable curves or knobs such as a ``timing`` dict)."""
    if not isinstance(instruments, (Portfolio, BondPortfolio)):
        return None
    *fixed, tuning = args
    key = ("plan", curves, *fixed, tuple(sorted(tuning.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


@dataclass(frozen=True)
class Job:
    """Validated, masked and lowered input: the book of the good rows and where they came from."""

    blocks: tuple[Instrument, ...]
    starts: np.ndarray  #: first input row of each block
    problems: list[tuple[int | None, str, str]]  #: every problem, rows numbered across the blocks
    book: Book  #: the good rows, lowered, in input order
    rows: np.ndarray | None  #: the input row of each book tree; None when every row is in the book
    #: rows in the book that a scenario's move of sigma or the spread makes invalid: (input row, those scenarios),
    #: NaN in those scenarios only
    masked: tuple[tuple[int, tuple[int, ...]], ...] = ()

    @property
    def size(self) -> int:
        return int(self.starts[-1])

    def result(self, values: np.ndarray, engine: str, errors: str = "raise", checked: bool = False,
               keep_axis: bool = False) -> Prices:
        """Prices in input order from the engine's ``(scenarios, len(book))`` values (of a market of one scenario:
        ``(rows,)``, unless ``keep_axis``).

        A tree whose values left the floating-point range (an inf or NaN price) is bad input, not a price:
        its row gets NaN and a message (``errors="mask"``) or an :class:`InputError` (``"raise"``).
        """
        if not checked:
            values = self.book.scaled(values)
            if self.masked:  # a scenario that makes a row invalid: its values there are no price (NaN below)
                values = np.array(values, copy=True)
                for row, scenarios in self.masked:
                    column = row if self.rows is None else int(np.searchsorted(self.rows, row))
                    values[list(scenarios), column] = 0.0
        # One pass in NumPy's own single-threaded sum (a BLAS dot woke a thread pool: +0.1-0.6 ms on the GPU
        # machine), no temporary: inf and NaN propagate.
        if not checked and not np.isfinite(np.add.reduce(values, axis=None)):
            return self._out_of_range(values, engine, errors, keep_axis)
        dtype = values.dtype
        if self.rows is None and len(self.blocks) == 1:  # the common case: no copies, cached columns
            block = self.blocks[0]
            columns = block.cached(("result-columns", np.dtype(dtype).str), lambda: _columns(self.blocks, dtype))
        else:
            columns = _columns(self.blocks, dtype)
        price = values
        if self.rows is not None:
            price = np.full((values.shape[0], self.size), np.nan, dtype=dtype)
            price[:, self.rows] = values
        if self.masked:
            price = price.copy() if price is values else price
            for row, scenarios in self.masked:
                price[list(scenarios), row] = np.nan
        price = price[0] if price.shape[0] == 1 and not keep_axis else price
        clean = price - columns.accrued if columns.has_accrued else price
        return Prices(price=price, clean=clean, accrued=columns.accrued,
                      error=columns.no_errors if not self.problems else _messages(self.size, self.problems),
                      instrument=columns.labels, engine=engine, problems=tuple(self.problems))

    def _out_of_range(self, values: np.ndarray, engine: str, errors: str, keep_axis: bool) -> Prices:
        book_rows = np.flatnonzero(~np.isfinite(values).all(axis=0))
        if not book_rows.size:  # only the sum overflowed
            return self.result(values, engine, errors, checked=True, keep_axis=keep_axis)
        input_rows = book_rows if self.rows is None else self.rows[book_rows]
        found = [(int(row), "sigma", f"the tree's values leave the {values.dtype} range (price "
                  f"{values[0, k]}): a smaller sigma or a, a shorter maturity or float64 keeps it finite")
                 for k, row in zip(book_rows, input_rows, strict=True)]
        if errors == "raise":
            raise InputError(found)
        problems = sorted(self.problems + found, key=lambda p: -1 if p[0] is None else p[0])
        good = np.setdiff1d(np.arange(values.shape[1]), book_rows)
        rows = good if self.rows is None else self.rows[good]
        kept = set(rows.tolist())
        job = Job(blocks=self.blocks, starts=self.starts, problems=problems, book=self.book.take(good), rows=rows,
                  masked=tuple((row, s) for row, s in self.masked if row in kept))
        return job.result(values[:, good], engine, errors, checked=True, keep_axis=keep_axis)


def prepare(instruments: Instrument | Sequence[Instrument], market: Market, *,
            max_width: int = DEFAULT_MAX_WIDTH, max_steps: int = DEFAULT_MAX_STEPS) -> Job:
    """Validate every row once, mask the bad ones and lower the good ones to one book."""
    blocks = _blocks(instruments)
    if len(blocks) == 1 and not (problems := _validate(blocks[0], market, max_width, max_steps)):  # the common case
        block = blocks[0]
        return Job(blocks=(block,), starts=np.array([0, len(block)]), problems=problems, book=_lower(block, market),
                   rows=None)
    starts = np.zeros(len(blocks) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in blocks], out=starts[1:])
    problems: list[tuple[int | None, str, str]] = []
    books, rows = [], []
    masked: list[tuple[int, tuple[int, ...]]] = []  # rows good but in some scenarios: NaN there only
    for start, block in zip(starts[:-1], blocks, strict=True):
        found = _validate_as_is(block, market, max_width, max_steps)
        moved, masks = _scenario_problems(block, market, max_width, max_steps, found)
        found += [problem for problem in moved if problem[0] is None]
        problems += [(int(row + start), field, message) for row, field, message in moved if row is not None]
        masked += [(int(row + start), scenarios) for row, scenarios in masks]
        problems += [(None if row is None else int(row + start), field, message) for row, field, message in found]
        good = np.setdiff1d(np.arange(len(block)), [row for row, _f, _m in found if row is not None])
        part = block if not found else block[good] if good.size else None
        if part is not None and len(part):
            books.append(_lower(part, market))
            rows.append(good + start)
    if any(row is None for row, _f, _m in problems):  # a problem of the whole input: nothing can be priced
        books, rows = [], []
    book = books[0] if len(books) == 1 else Book.concatenate(books) if books else empty_book(market.names)
    problems.sort(key=lambda p: -1 if p[0] is None else p[0])
    every_row = len(problems) == len({row for row, _s in masked})
    return Job(blocks=tuple(blocks), starts=starts, problems=problems, book=book,
               rows=None if every_row else (np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)),
               masked=tuple(masked))


def resolve(backend: str, book: Book, precision: str, target: str | None) -> tuple[engines.Engine, str | None]:
    """The engine to run and its target (``auto`` asks :mod:`trinom.engines.auto`, honouring ``target``)."""
    if backend == "auto":
        name, target = (auto.choose(book, precision, target) if len(book) else ("reference", None))
        return engines.get(name), target
    return engines.get(backend), target


def run(engine: engines.Engine, book: Book, market: Market, *, precision: str = "f64", target: str | None = None,
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


def _blocks(instruments: object) -> list[Instrument]:
    """The portfolios of ``instruments``: a portfolio, a table of one (a pandas DataFrame or a mapping of
    field name to column), or a sequence of them."""
    single = _as_portfolio(instruments)
    if single is not None:
        return [single]
    if isinstance(instruments, Sequence) and not isinstance(instruments, (str, bytes)):
        blocks = []
        for k, item in enumerate(instruments):
            block = _as_portfolio(item)
            if block is None:
                raise InputError([(None, "instruments", f"instruments[{k}] must be a trinom.Portfolio, a "
                                   f"trinom.BondPortfolio, or a table of one; got {type(item).__name__}")])
            blocks.append(block)
        return blocks
    raise InputError([(None, "instruments", "instruments must be a trinom.Portfolio, a trinom.BondPortfolio, a "
                       "table of one (pandas DataFrame or mapping of field to column) or a sequence of them; got "
                       f"{type(instruments).__name__}")])


def as_portfolio(value: object) -> Instrument | None:
    """One portfolio from ``value`` (see :func:`_as_portfolio`), or None where it is no portfolio or table of one."""
    return _as_portfolio(value)


def row_problems(block: Instrument, market: Market, *, max_width: int = DEFAULT_MAX_WIDTH,
                 max_steps: int = DEFAULT_MAX_STEPS) -> list[tuple[int | None, str, str]]:
    """Every problem of ``block``'s rows in ``market`` (a row that a move of sigma or of the spread makes invalid
    included, named with the move), what :func:`prepare` finds, without lowering anything (cached on the block)."""
    return _validate(block, market, max_width, max_steps)


def _as_portfolio(value: object) -> Instrument | None:
    """A portfolio from a portfolio, a DataFrame, a mapping (options by their eight fields, bonds by theirs) or an
    Arrow table (trinom.io.parquet's layout: a bond's cash flows in list columns);
    None for anything else."""
    if isinstance(value, (Portfolio, BondPortfolio)):
        return value
    if hasattr(value, "column_names") and hasattr(value, "schema"):  # an Arrow table, as trinom.io.parquet lays it out
        from .io.parquet import book_of_table

        return book_of_table(value)
    columns = _columns_of(value)
    if columns is None:
        return None
    if "cashflow_count" in columns:
        return BondPortfolio(**columns)
    return Portfolio.from_columns(columns)  # a thesis book's table has a convention column (Portfolio.to_dataframe)


def _columns_of(value: object) -> dict[str, Any] | None:
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    if hasattr(value, "columns") and hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):  # a DataFrame
        return {str(c): value[c].to_numpy() for c in value.columns}  # type: ignore[index]
    return None


def _validate(block: Instrument, market: Market, max_width: int, max_steps: int) -> list[tuple[int | None, str, str]]:
    """The block's problems, rows numbered within it; a row that a scenario's move of sigma or of the spread
    makes invalid is a problem too (named with the move)."""
    found = _validate_as_is(block, market, max_width, max_steps)
    moved, _masks = _scenario_problems(block, market, max_width, max_steps, found)
    return sorted(found + moved, key=lambda p: -1 if p[0] is None else p[0])


def _scenario_problems(block: Instrument, market: Market, max_width: int, max_steps: int,
                       found: list[tuple[int | None, str, str]]
                       ) -> tuple[list[tuple[int | None, str, str]], list[tuple[int, tuple[int, ...]]]]:
    """The rows good as they are (not among ``found``) that a scenario's move of sigma or of the spread makes
    invalid: their problems (a row's first such move names it; row None: the whole input) and, per such move of a
    row, ``(row, the scenarios that move it so)``, where it is NaN."""
    bad = {row for row, _f, _m in found}
    if None in bad or not market.moves_trees:
        return [], []
    curves = tuple((c.days.tobytes(), np.asarray(c.rates).tobytes()) for c in market.curves)
    problems: list[tuple[int | None, str, str]] = []
    masks: list[tuple[int, tuple[int, ...]]] = []
    named: set[int | None] = set()
    for field, shifts in (("sigma", market.sigma_shifts), ("spread", market.spread_shifts)):
        if field == "spread" and isinstance(block, Portfolio):  # options have no spread
            continue
        for shift in sorted(set(shifts) - {0.0}):
            key = ("moved-problems", field, shift, max_width, max_steps, curves)
            moved = block.cached(key, lambda f=field, s=shift: _validate_as_is(  # type: ignore[misc]
                _moved(block, f, s), market, max_width, max_steps))
            scenarios = tuple(k for k, s in enumerate(shifts) if s == shift)
            for row, name, message in moved:
                if row in bad:
                    continue
                if row not in named:
                    named.add(row)
                    problems.append((row, name, f"in the scenario that moves {field} by {shift:g}: {message}"))
                if row is not None:
                    masks.append((row, scenarios))
    return problems, masks


def _moved(block: Instrument, field: str, shift: float) -> Instrument:
    """``block`` with ``shift`` added to ``field`` (a sum that overflows is inf, which validation reports)."""
    with np.errstate(over="ignore"):
        if isinstance(block, Portfolio):  # the same convention
            return block.replace(**{field: getattr(block, field) + shift})
        return type(block)(**{**block.as_dict(), field: getattr(block, field) + shift})


def _validate_as_is(block: Instrument, market: Market, max_width: int,
                    max_steps: int) -> list[tuple[int | None, str, str]]:
    if isinstance(block, Portfolio):
        return block.validate(max_width, max_steps)
    return block.validate(market.curves, max_width, max_steps)


def _lower(block: Instrument, market: Market) -> Book:
    """Options are fitted to their portfolio's curve (by default the market's first); a bond's curve_index numbers
    the market's curves."""
    if isinstance(block, Portfolio):
        if block.curve is not None and block.curve not in market.names:
            raise InputError([(None, "curve", f"the options' curve {block.curve!r} is not one of the market's "
                               f"({', '.join(market.names)})")])
        return lower(block, block.curve if block.curve is not None else market.names[0])
    return lower(block, market.names)


@dataclass(frozen=True)
class _Columns:
    """What a result needs besides the prices, per input row (read-only arrays, cached by the caller)."""

    labels: np.ndarray  #: "option"/"bond" per row
    accrued: np.ndarray  #: accrued interest per row (0 for options)
    has_accrued: bool  #: False when accrued is 0 everywhere: clean is then the price itself
    no_errors: np.ndarray  #: the error column of a book without errors


def _columns(blocks: Sequence[Instrument], dtype: np.dtype) -> _Columns:
    """The :class:`_Columns` of ``blocks`` in the result's ``dtype``."""
    accrued = np.concatenate([b.accrued().astype(dtype) if isinstance(b, BondPortfolio) else np.zeros(len(b), dtype)
                              for b in blocks]) if blocks else np.zeros(0, dtype)
    kinds = np.concatenate([np.full(len(b), 1 if isinstance(b, BondPortfolio) else 0, dtype=np.int8)
                            for b in blocks]) if blocks else np.zeros(0, np.int8)
    labels = instrument_labels(kinds)
    no_errors = np.zeros(accrued.size, dtype="<U1")
    for array in (accrued, labels, no_errors):
        array.setflags(write=False)
    return _Columns(labels=labels, accrued=accrued, has_accrued=bool(accrued.any()), no_errors=no_errors)


def _messages(count: int, problems: list[tuple[int | None, str, str]]) -> np.ndarray:
    """One message per row (``""`` for a good one); a row with several problems gets them joined.

    Without problems no Python strings are made: converting 100000 empty objects to a string
    array costs as much as pricing them on the GPU. A problem of the whole input goes to every row.
    """
    if not problems:
        return np.zeros(count, dtype="<U1")
    text = np.full(count, "", dtype=object)
    for row, _field, message in problems:
        for r in range(count) if row is None else (row,):
            text[r] = f"{text[r]}; {message}" if text[r] else message
    return text.astype(str)
