"""The book: every instrument lowered to one table of trees and one table of backward-pass events.

Instruments (:class:`trinom.Portfolio` of options, :class:`trinom.BondPortfolio` of bonds) only
validate themselves; the lattice *lowers* them to a :class:`Book` (:mod:`trinom.lattice.lowering`); engines see
nothing but books and a :class:`trinom.Market`. A book may mix instruments.

Per tree (one row per instrument):

* the lattice parameters: ``convention`` (:class:`trinom.model.tree_geometry.Convention`), ``term_unit``,
  ``term_steps``, ``a``, ``sigma``, ``maturity`` (years; the tree runs to it), ``spread``
  (percent per year, added to the short rate when discounting; 0 for options), ``curve`` (index
  into ``curve_names``, the market curve the tree is fitted to), ``scale`` (the factor the tree's value is
  multiplied by in the result: 1, but ``intrinsic / 100`` for an option expiring at its bond's maturity,
  whose tree prices the bond; engines price the tree as it is and never read it);
* ``events``: the slice ``event_offset[k]:event_offset[k + 1]`` of the event table;
* ``sigma_pieces`` (optional, bond trees only): sigma as a step function of the tree's steps
  (:class:`~trinom.model.piecewise_tree.SigmaPieces`; None where every tree has one sigma). The ``futhark`` and
  ``reference`` engines price trees with pieces, and so does ``cuda``; ``futhark-paper`` refuses a book that has them.

Per event (a compact table; one entry per cash flow, exercise right or payoff):

* ``kind``: :data:`CASH_FLOW` (``amount`` of principal plus ``coupon`` is paid at ``step``: the
  thesis' face value at the last level, the paper's flows on the nodes of the step before, see
  docs/paper-instrument.md §6; a bond's flow with a ``time`` is paid then, between the step before ``step`` and
  ``step``, and valued at the first by Hull-White's zero-coupon bond price: "Flows between steps" there; so is a
  listed point's ``time``, its date after its step, where its price is paid), :data:`EXERCISE` (from step
  ``first`` to ``last`` every ``every``
  steps the value is capped (call) or floored (put) at the strike ``amount`` plus accrued
  interest; ``first > last``: no step), :data:`PAYOFF` (at the step of time ``time``, in years,
  the value is replaced by ``max(value - amount, 0)`` (call) or ``max(amount - value, 0)`` (put)) and
  :data:`COUPON_OPTION` (a bond's cap or floor on a floating coupon, :mod:`trinom.instruments.coupon_options`: at
  ``step``, before its exercise, every node gains ``amount`` times the node's Hull-White option on the zero-coupon
  bond ``P(time, end)`` struck at ``coupon``, a call or put by ``side``, expiring at ``time``);
* a *listed exercise point* (a bond's ``exercise_step``/``exercise_price``) is an :data:`EXERCISE`
  event with ``every == 0``, its marker, and ``step == first == last``: at that one step the value
  is capped (call) or floored (put) at the dirty price ``amount``, no accrued interest added (a
  point at the tree's last level is never reached, as a window's exercise never is there). A bond
  tree holds its cash flows, then its window (the tree's first exercise event), then its listed
  points in ascending step order;
* ``side``: :data:`~trinom.instruments.constants.CALL` or :data:`~trinom.instruments.constants.PUT` for exercise
  and payoff.

``step`` is ``-1`` where the step is given by a time (a payoff) or is the tree's last level (the
thesis' face value): the lattice turns times into steps in the working precision, as the thesis
does. Engines that run an instrument's own kernel rebuild its inputs from the book exactly
(:mod:`trinom.engines.lift`).

>>> import trinom
>>> from trinom.lattice.lowering import lower_options
>>> p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
...                      term_steps=[12], a=[0.1], sigma=[0.01], option_type=["put"])
>>> book = lower_options(p)
>>> len(book), book.event_kind.tolist(), book.event_amount.tolist()
(1, [0, 2], [100.0, 63.0])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..model.piecewise_tree import SigmaPieces, joined_pieces, pieces_of, piecewise_geometry
from ..model.tree_geometry import Convention, bond_geometry, tree_geometry, work
from ..ragged import segments
from ..result import BOND as BOND
from ..result import INSTRUMENT_NAMES
from ..result import OPTION as OPTION

T = TypeVar("T")

#: Event kinds.
CASH_FLOW, EXERCISE, PAYOFF, COUPON_OPTION = 0, 1, 2, 3
#: Instrument kinds: OPTION, BOND and INSTRUMENT_NAMES (imported above, and kept here) are the result type's.

_TREE_FIELDS = ("instrument", "convention", "term_unit", "term_steps", "a", "sigma", "maturity", "spread", "curve",
                "scale")
_EVENT_FIELDS = ("event_kind", "event_step", "event_time", "event_amount", "event_coupon", "event_side",
                 "event_first", "event_last", "event_every", "event_end")


@dataclass(frozen=True, eq=False)
class Book:
    """Trees and their events as read-only NumPy arrays (see the module's docstring)."""

    instrument: np.ndarray  #: int8, :data:`OPTION` or :data:`BOND`
    convention: np.ndarray  #: int8, :class:`~trinom.model.tree_geometry.Convention`
    term_unit: np.ndarray  #: int64
    term_steps: np.ndarray  #: int64
    a: np.ndarray
    sigma: np.ndarray
    maturity: np.ndarray
    spread: np.ndarray
    curve: np.ndarray  #: int64 index into ``curve_names``
    scale: np.ndarray  #: float64, the factor the tree's value is multiplied by in the result (1 but for degenerate options)
    event_offset: np.ndarray  #: int64, ``len + 1`` entries
    event_kind: np.ndarray  #: int8
    event_step: np.ndarray  #: int64, -1: from ``event_time`` or the last level
    event_time: np.ndarray  #: years (NaN where ``event_step`` alone gives it; a bond flow's own time where it has one)
    event_amount: np.ndarray
    event_coupon: np.ndarray
    event_side: np.ndarray  #: int8, CALL/PUT (-1 for cash flows)
    event_first: np.ndarray  #: int64 (exercise windows; 0 otherwise)
    event_last: np.ndarray
    event_every: np.ndarray
    event_end: np.ndarray  #: years: a coupon option's payment date (NaN for the other kinds)
    curve_names: tuple[str, ...] = ("default",)
    sigma_pieces: SigmaPieces | None = None  #: per tree, sigma as a step function of its steps (None: one sigma)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        object.__setattr__(self, "_memo", {})

    def cached(self, key: object, compute: Callable[[], T]) -> T:
        """``compute()``, once per ``key`` for this book (it is immutable, so derived data can be kept)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def __len__(self) -> int:
        return int(self.instrument.size)

    def __repr__(self) -> str:
        kinds = ", ".join(f"{int((self.instrument == k).sum())} {name}s" for k, name in INSTRUMENT_NAMES.items())
        return f"Book({len(self)} trees: {kinds}; {self.event_kind.size} events)"

    # --- rows ---------------------------------------------------------------------------------------
    def instruments(self) -> list[int]:
        """The instrument kinds present, ascending (cached)."""
        return self.cached("instruments", lambda: np.unique(self.instrument).tolist())

    def rows_of(self, instrument: int) -> np.ndarray:
        """Indices of the trees lowered from ``instrument`` (:data:`OPTION` or :data:`BOND`), ascending."""
        return np.flatnonzero(self.instrument == instrument)

    def part(self, instrument: int) -> Book:
        """The trees of ``instrument`` as a book of their own (cached)."""
        return self.cached(("part", instrument), lambda: self.take(self.rows_of(instrument)))

    def has_coupon_options(self) -> bool:
        """Whether a tree holds a :data:`COUPON_OPTION` event (cached)."""
        return self.cached("coupon-options", lambda: bool(np.any(self.event_kind == COUPON_OPTION)))

    def curves_used(self) -> list[int]:
        """The curve indices the trees use, ascending (cached)."""
        return self.cached("curves-used", lambda: np.unique(self.curve).tolist())

    def take(self, rows: npt.ArrayLike) -> Book:
        """The trees ``rows`` (in that order) with their events."""
        rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        offset, flat = segments(self.event_offset, rows)
        trees = {name: getattr(self, name)[rows] for name in _TREE_FIELDS}
        events = {name: getattr(self, name)[flat] for name in _EVENT_FIELDS}
        return Book(**trees, **events, event_offset=offset, curve_names=self.curve_names,
                    sigma_pieces=pieces_of(self.sigma_pieces, rows))

    def span(self, start: int, stop: int) -> Book:
        """The trees ``start`` to ``stop - 1`` with their events, as views of this book's arrays (no copies)."""
        first, last = int(self.event_offset[start]), int(self.event_offset[stop])
        trees = {name: getattr(self, name)[start:stop] for name in _TREE_FIELDS}
        events = {name: getattr(self, name)[first:last] for name in _EVENT_FIELDS}
        pieces = pieces_of(self.sigma_pieces, np.arange(start, stop))
        return Book(**trees, **events, event_offset=self.event_offset[start:stop + 1] - first,
                    curve_names=self.curve_names, sigma_pieces=pieces)

    def with_trees(self, curve_names: Sequence[str] | None = None, **columns: npt.ArrayLike) -> Book:
        """The same trees and events with tree ``columns`` (e.g. ``sigma``, ``spread``, ``curve``) replaced
        and, if given, new ``curve_names`` (``curve`` then indexes them). A tree with sigma pieces whose ``sigma``
        moves has every piece moved by as much (a parallel move of its step function)."""
        unknown = sorted(set(columns) - set(_TREE_FIELDS) - {"instrument"})
        if unknown:
            raise ValueError(f"not tree columns of a book: {', '.join(unknown)}")
        trees = {name: getattr(self, name) for name in _TREE_FIELDS}
        trees.update({name: np.asarray(value, dtype=trees[name].dtype).reshape(len(self))
                      for name, value in columns.items()})
        events = {name: getattr(self, name) for name in _EVENT_FIELDS}
        pieces = self.sigma_pieces
        if pieces is not None and "sigma" in columns:
            moved = trees["sigma"] - self.sigma
            owner = np.repeat(np.arange(len(self)), pieces.counts)
            pieces = SigmaPieces.of(counts=pieces.counts, step=pieces.step, sigma=pieces.sigma + moved[owner])
        return Book(**trees, **events, event_offset=self.event_offset,
                    curve_names=self.curve_names if curve_names is None else tuple(curve_names), sigma_pieces=pieces)

    def horizon_days(self) -> np.ndarray:
        """A day beyond which no tree looks its curve up: the tree's last time (``n`` steps of ``dt``) plus a
        step and two days, in the curve's days (``t * term_unit``); a curve changed only after it leaves the
        tree's price as it is (cached)."""
        return self._days()[0]

    def step_days(self) -> np.ndarray:
        """The curve days a tree step spans (``dt * term_unit``, float64; cached)."""
        return self._days()[1]

    def _days(self) -> tuple[np.ndarray, np.ndarray]:
        def compute() -> tuple[np.ndarray, np.ndarray]:
            out, step = np.zeros(len(self)), np.zeros(len(self))
            for rows, g in self._geometries(np.float64):
                years = (np.maximum(g.n, 0) + 1) * np.asarray(g.dt, dtype=np.float64)
                out[rows] = np.ceil(years * self.term_unit[rows] * (1 + 1e-9)) + 2
                step[rows] = np.asarray(g.dt, dtype=np.float64) * self.term_unit[rows]
            return out, step
        return self.cached("curve-days", compute)

    def scaled(self, values: np.ndarray) -> np.ndarray:
        """An engine's ``(scenarios, len(book))`` values multiplied by each tree's ``scale`` (the same array
        where every scale is 1, as in every book but those of options expiring at maturity)."""
        if self.cached("unit-scale", lambda: bool(np.all(self.scale == 1.0))):
            return values
        return values * self.scale.astype(values.dtype)

    def events(self, row: int) -> slice:
        """The slice of the event table that belongs to tree ``row``."""
        return slice(int(self.event_offset[row]), int(self.event_offset[row + 1]))

    @classmethod
    def concatenate(cls, parts: Sequence[Book]) -> Book:
        """The trees of ``parts``, one after the other; curve indices are re-based on the union of names."""
        if not parts:
            return empty_book()
        names: list[str] = []
        for part in parts:
            names += [n for n in part.curve_names if n not in names]
        trees = {name: np.concatenate([getattr(p, name) for p in parts]) for name in _TREE_FIELDS if name != "curve"}
        trees["curve"] = np.concatenate([np.array([names.index(n) for n in p.curve_names], dtype=np.int64)[p.curve]
                                         if len(p) else np.zeros(0, np.int64) for p in parts])
        events = {name: np.concatenate([getattr(p, name) for p in parts]) for name in _EVENT_FIELDS}
        counts = np.concatenate([np.diff(p.event_offset) for p in parts])
        offset = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offset[1:])
        pieces = joined_pieces([p.sigma_pieces for p in parts], [len(p) for p in parts])
        return cls(**trees, **events, event_offset=offset, curve_names=tuple(names), sigma_pieces=pieces)

    # --- the lattice's view ---------------------------------------------------------------------------
    def shape(self, dtype: npt.DTypeLike = np.float64) -> tuple[np.ndarray, np.ndarray]:
        """Every tree's number of steps ``n`` and half width ``jmax`` under its own convention (cached)."""
        return self.cached(("shape", np.dtype(dtype).str), lambda: self._shape(dtype))

    def _shape(self, dtype: npt.DTypeLike) -> tuple[np.ndarray, np.ndarray]:
        n = np.zeros(len(self), dtype=np.int64)
        jmax = np.zeros(len(self), dtype=np.int64)
        for rows, g in self._geometries(dtype):
            n[rows], jmax[rows] = g.n, g.jmax
        return n, jmax

    def _geometries(self, dtype: npt.DTypeLike) -> Iterator[tuple[np.ndarray, Any]]:
        """``(rows, geometry)`` of the trees of each convention the book holds, in ``dtype``."""
        for convention in (Convention.THESIS, Convention.PAPER):
            rows = np.flatnonzero(self.convention == convention)
            if not rows.size:
                continue
            if convention == Convention.THESIS:
                yield rows, tree_geometry(self.maturity[rows], 0.0, self.term_unit[rows], self.term_steps[rows],
                                          self.a[rows], self.sigma[rows], dtype)
            else:
                geometry = bond_geometry(self.term_unit[rows], self.term_steps[rows], self.a[rows], self.sigma[rows],
                                         self.maturity[rows], self.spread[rows], dtype)
                if self.sigma_pieces is not None:
                    with np.errstate(all="ignore"):
                        geometry = piecewise_geometry(geometry, a=self.a[rows], sigma=self.sigma[rows],
                                                      pieces=self.sigma_pieces.take(rows), dtype=dtype)[0]
                yield rows, geometry

    def work(self) -> np.ndarray:
        """Node updates of both passes per tree (the work metric that engines split and balance by)."""
        def compute() -> np.ndarray:
            n, jmax = self.shape()
            return work(np.maximum(n, 0), np.maximum(jmax, 0))
        return self.cached("work", compute)


def empty_book(curve_names: tuple[str, ...] = ("default",)) -> Book:
    """A book of no trees."""
    return make_book({name: np.zeros(0) for name in _TREE_FIELDS}, np.zeros(1, dtype=np.int64),
                     {name: np.zeros(0) for name in _EVENT_FIELDS}, curve_names)


def make_book(trees: dict[str, npt.ArrayLike], event_offset: npt.ArrayLike, events: dict[str, npt.ArrayLike],
              curve_names: tuple[str, ...], sigma_pieces: SigmaPieces | None = None) -> Book:
    """A book from its columns, cast to the book's dtypes (what instruments call to lower themselves)."""
    ints = {"term_unit", "term_steps", "curve", "event_step", "event_first", "event_last", "event_every"}
    small = {"instrument", "convention", "event_kind", "event_side"}

    def column(name: str, values: npt.ArrayLike) -> np.ndarray:
        dtype = np.int8 if name in small else np.int64 if name in ints else np.float64
        return np.array(values, dtype=dtype).reshape(-1)

    trees = {"scale": np.ones(np.asarray(trees["instrument"]).size), **trees}
    if "event_end" not in events:
        events = {**events, "event_end": np.full(np.asarray(events["event_kind"]).size, np.nan)}
    return Book(**{k: column(k, v) for k, v in trees.items()}, **{k: column(k, v) for k, v in events.items()},
                event_offset=np.asarray(event_offset, dtype=np.int64), curve_names=tuple(curve_names),
                sigma_pieces=sigma_pieces)
