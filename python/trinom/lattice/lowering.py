"""The lowering: the instruments' arrays as one :class:`~trinom.lattice.book.Book` (trees and their events).

The lattice is built from the instruments, never the reverse: a portfolio validates itself and exposes its arrays
(the options' :meth:`~trinom.Portfolio.lattice_fields` and :meth:`~trinom.Portfolio.scale`, the bonds' schedules
and exercise points); this module turns them into trees and backward-pass events. Validate first: bad rows lower to
bad trees. Each book is cached on its portfolio (portfolios are immutable), once per curve naming.

``Portfolio.lower(curve)`` and ``BondPortfolio.lower(curve_names)`` (documented) are :func:`lower_options` and
:func:`lower_bonds`: ``trinom``'s ``__init__`` sets them, as the instruments may not import the lattice above them.

>>> import trinom
>>> p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
...                      term_steps=[12], a=[0.1], sigma=[0.01], option_type=["put"])
>>> book = lower_options(p)
>>> len(book), book.event_kind.tolist(), book.event_amount.tolist()
(1, [0, 2], [100.0, 63.0])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..instruments.bond import BondPortfolio
from ..instruments.constants import CALL, FACE_VALUE, PUT
from ..instruments.option import Portfolio
from ..model.tree_geometry import Convention
from .book import BOND, CASH_FLOW, COUPON_OPTION, EXERCISE, OPTION, PAYOFF, Book, make_book

__all__ = ["lower", "lower_bonds", "lower_options"]


def lower(block: Portfolio | BondPortfolio, curves: str | Sequence[str]) -> Book:
    """A portfolio as a book: options against the one curve named ``curves``, bonds against the curves named
    ``curves`` (their ``curve_index`` numbers them)."""
    if isinstance(block, Portfolio):
        if not isinstance(curves, str):
            raise TypeError(f"options lower against one curve name, got {curves!r}")
        return lower_options(block, curves)
    if isinstance(curves, str):
        raise TypeError(f"bonds lower against a sequence of curve names, got {curves!r}")
    return lower_bonds(block, curves)


def lower_options(options: Portfolio, curve: str = "default") -> Book:
    """These options as a :class:`~trinom.lattice.book.Book` (validate first: bad rows lower to bad trees).

    Each option is a tree of the thesis' lattice fitted to the market curve ``curve``, with two events: the
    face value paid at the last level, and the call's or put's payoff at its expiry. Under the standard
    convention the tree's fields are those of :meth:`~trinom.Portfolio.lattice_fields`; an option expiring at
    maturity is its bond's tree (the payoff at maturity is known today) scaled by ``intrinsic / 100``. Cached on
    the portfolio.
    """
    return options.cached(("book", curve), lambda: _options_book(options, curve))


def _options_book(options: Portfolio, curve: str) -> Book:
    count = len(options)
    fields = options.lattice_fields()
    kind = np.empty(2 * count, dtype=np.int8)
    kind[0::2], kind[1::2] = CASH_FLOW, PAYOFF
    time = np.full(2 * count, np.nan)
    time[1::2] = fields["expiry"]
    amount = np.empty(2 * count)
    amount[0::2], amount[1::2] = FACE_VALUE, options.strike
    side = np.full(2 * count, -1, dtype=np.int8)
    side[1::2] = options.option_type
    zeros = np.zeros(2 * count, dtype=np.int64)
    trees = {"instrument": np.full(count, OPTION), "convention": np.full(count, Convention.THESIS),
             "term_unit": fields["term_unit"], "term_steps": fields["term_steps"], "a": options.a,
             "sigma": options.sigma, "maturity": fields["maturity"], "spread": np.zeros(count),
             "curve": np.zeros(count, dtype=np.int64), "scale": options.scale()}
    events = {"event_kind": kind, "event_step": zeros - 1, "event_time": time, "event_amount": amount,
              "event_coupon": np.zeros(2 * count), "event_side": side, "event_first": zeros,
              "event_last": zeros, "event_every": zeros}
    return make_book(trees, np.arange(0, 2 * count + 1, 2), events, (curve,))


def lower_bonds(bonds: BondPortfolio, curve_names: Sequence[str]) -> Book:
    """These bonds as a :class:`~trinom.lattice.book.Book` (validate first: bad rows lower to bad trees).

    Each bond is a tree of the paper's convention fitted to curve ``curve_names[curve_index]``, with
    its cash flows in schedule order, then one exercise window (call: capped, put: floored), then its
    listed exercise points in step order (exercise events with ``every`` 0 and the dirty price as
    ``amount``), then its options on coupon rates (:data:`~trinom.lattice.book.COUPON_OPTION`) in step order.
    Cached on the portfolio.
    """
    names = tuple(curve_names)
    return bonds.cached(("book", names), lambda: _bonds_book(bonds, names))


def _bonds_book(bonds: BondPortfolio, curve_names: tuple[str, ...]) -> Book:
    count, flows, points = len(bonds), bonds.cashflow_step.size, bonds.exercise_step.size
    options = bonds.coupon_options()
    option_counts = np.zeros(count, dtype=np.int64) if options is None else options.counts
    option_offset = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(option_counts, out=option_offset[1:])
    size = flows + count + points + int(option_offset[-1])
    # Each bond: its flows, then its window, then its listed points, then its coupon options.
    offset = bonds.cashflow_offset + bonds.exercise_offset + option_offset + np.arange(count + 1)
    window = offset[:-1] + bonds.cashflow_count
    flow_owner = np.repeat(np.arange(count), bonds.cashflow_count)
    at_flow = offset[flow_owner] + np.arange(flows) - bonds.cashflow_offset[flow_owner]
    point_owner = np.repeat(np.arange(count), bonds.exercise_count)
    at_point = window[point_owner] + 1 + np.arange(points) - bonds.exercise_offset[point_owner]
    option_owner = np.repeat(np.arange(count), option_counts)
    at_option = (window[option_owner] + 1 + bonds.exercise_count[option_owner] + np.arange(option_owner.size)
                 - option_offset[option_owner])

    def column(flow_values: npt.ArrayLike, window_values: npt.ArrayLike, point_values: npt.ArrayLike,
               dtype: npt.DTypeLike, option_values: npt.ArrayLike = 0) -> np.ndarray:
        out = np.empty(size, dtype=dtype)
        out[at_flow], out[window], out[at_point] = flow_values, window_values, point_values
        out[at_option] = option_values
        return out

    side = bonds.option_type[point_owner]
    o = options
    events = {"event_kind": column(CASH_FLOW, EXERCISE, EXERCISE, np.int8, COUPON_OPTION),
              "event_step": column(bonds.cashflow_step, -1, bonds.exercise_step, np.int64,
                                   0 if o is None else o.step),
              "event_time": column(bonds.cashflow_time, np.nan, bonds.exercise_time, np.float64,
                                   0.0 if o is None else o.expiry),
              "event_amount": column(bonds.repayment, bonds.strike, bonds.exercise_price, np.float64,
                                     0.0 if o is None else o.amount),
              "event_coupon": column(bonds.coupon, 0.0, 0.0, np.float64, 0.0 if o is None else o.strike),
              "event_side": column(-1, bonds.option_type, side, np.int8,
                                   0 if o is None else np.where(o.is_call, CALL, PUT)),
              "event_first": column(0, bonds.first_exercise, bonds.exercise_step, np.int64),
              "event_last": column(0, bonds.last_exercise, bonds.exercise_step, np.int64),
              "event_every": column(0, bonds.exercise_frequency, 0, np.int64),
              "event_end": column(np.nan, np.nan, np.nan, np.float64, np.nan if o is None else o.end)}
    trees = {"instrument": np.full(count, BOND), "convention": np.full(count, Convention.PAPER),
             "term_unit": bonds.term_unit, "term_steps": bonds.term_steps, "a": bonds.a, "sigma": bonds.sigma,
             "maturity": bonds.maturity, "spread": bonds.spread, "curve": bonds.curve_index}
    return make_book(trees, offset, events, curve_names, bonds.sigma_pieces())
