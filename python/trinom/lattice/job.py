"""The validated, lowered input of a pricing call (issue 36's "validate -> lower" stages): every row validated once,
the bad ones masked, the good ones lowered to one :class:`~trinom.lattice.book.Book`, and the way back from the
engine's values to a :class:`~trinom.result.Prices` in input order (:class:`Job`).

:func:`prepare` takes portfolios (a :class:`~trinom.Portfolio`, a :class:`~trinom.BondPortfolio` or a sequence of
them); tables of them are turned into portfolios above it (:mod:`trinom.io.instrument_tables`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..instruments.bond import BondPortfolio
from ..instruments.option import Portfolio
from ..model.market import Market
from ..result import Prices, instrument_labels
from .book import Book, empty_book
from .constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from .lowering import lower

Instrument = Portfolio | BondPortfolio


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

    def checked(self, errors: str) -> Job:
        """This job, or with ``errors="raise"`` an :class:`InputError` of its problems where it has any."""
        if self.problems and errors == "raise":
            raise InputError(self.problems)
        return self

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
    blocks = _portfolios(instruments)
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


def row_problems(block: Instrument, market: Market, *, max_width: int = DEFAULT_MAX_WIDTH,
                 max_steps: int = DEFAULT_MAX_STEPS) -> list[tuple[int | None, str, str]]:
    """Every problem of ``block``'s rows in ``market`` (a row that a move of sigma or of the spread makes invalid
    included, named with the move), what :func:`prepare` finds, without lowering anything (cached on the block)."""
    return _validate(block, market, max_width, max_steps)


def _portfolios(instruments: Instrument | Sequence[Instrument]) -> list[Instrument]:
    """The portfolios of ``instruments``: one, or a sequence of them."""
    if isinstance(instruments, (Portfolio, BondPortfolio)):
        return [instruments]
    blocks = list(instruments)
    for k, block in enumerate(blocks):
        if not isinstance(block, (Portfolio, BondPortfolio)):
            raise InputError([(None, "instruments", f"instruments[{k}] must be a trinom.Portfolio or a "
                               f"trinom.BondPortfolio; got {type(block).__name__}")])
    return blocks


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
        moved = type(block)(**{**block.as_dict(), field: getattr(block, field) + shift})
        signed = block.signed_coupons()  # a swap's fixed leg (or a floating leg's basis) may pay negative amounts
        moved = moved.with_signed_coupons(signed) if signed.any() else moved
        pieces = block.sigma_pieces()  # sigma pieces: moved with sigma (a parallel move of the step function)
        if pieces is None:
            return moved
        return moved.with_sigma_pieces(counts=pieces.counts, step=pieces.step,
                                       sigma=pieces.sigma + (shift if field == "sigma" else 0.0))


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
