"""Rebuild an instrument's kernel inputs from a book (the inverse of lowering, exactly).

Engines that run an instrument's own kernel (the thesis' option programs, the paper's bond
programs) see only books; these functions give those kernels the arrays they were written for.
Results are cached on the book, which is immutable.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..instruments.bond import BondPortfolio
from ..instruments.constants import CALL
from ..instruments.coupon_options import CouponOptions
from ..lattice.book import BOND, CASH_FLOW, COUPON_OPTION, EXERCISE, OPTION, PAYOFF, Book
from ..portfolio import Portfolio


def options(book: Book) -> Portfolio:
    """The book's trees as a :class:`~trinom.Portfolio` of the thesis' convention (the lattice's fields, see
    :meth:`Portfolio.lattice_fields`): each must hold one payoff event and the face value at the last level
    (what :func:`~trinom.lattice.lowering.lower_options` makes)."""
    return book.cached("lift-options", lambda: _options(book))


def _options(book: Book) -> Portfolio:
    _require(book, OPTION)
    payoff = np.flatnonzero(book.event_kind == PAYOFF)
    if payoff.size != len(book) or np.any(np.searchsorted(book.event_offset, payoff, side="right") - 1
                                          != np.arange(len(book))):
        raise InputError([(None, "book", "an option tree needs exactly one payoff event")])
    return Portfolio(convention="thesis", strike=book.event_amount[payoff], maturity=book.maturity,
                     expiry=book.event_time[payoff],
                     term_unit=book.term_unit.astype(np.float64), term_steps=book.term_steps.astype(np.float64),
                     a=book.a, sigma=book.sigma, option_type=book.event_side[payoff])


def bonds(book: Book) -> BondPortfolio:
    """The book's trees as a :class:`~trinom.BondPortfolio` (cash flows in order, then one exercise window, then
    the listed exercise points; what :func:`~trinom.lattice.lowering.lower_bonds` makes)."""
    return book.cached("lift-bonds", lambda: _bonds(book))


def share_bonds(book: Book, source: Book) -> None:
    """Give ``book`` (``source.with_trees(a=..., sigma=...)``: the same trees and events, other ``a`` and ``sigma``)
    the bonds lifted from ``source``, sharing every array but ``a`` and ``sigma``
    (:meth:`BondPortfolio.with_parameters`), so that a book repriced under many parameter sets is lifted once."""
    if len(book) != len(source) or book.event_offset is not source.event_offset:
        raise ValueError("share_bonds needs a book made from its source by with_trees (the same events)")
    lifted = bonds(source)
    book.cached("lift-bonds", lambda: _with_pieces(lifted.with_parameters(a=book.a, sigma=book.sigma), book))


def _with_pieces(bonds: BondPortfolio, book: Book) -> BondPortfolio:
    """``bonds`` with the book's sigma pieces and coupon options, where it has some."""
    pieces = book.sigma_pieces
    if pieces is not None:
        bonds = bonds.with_sigma_pieces(counts=pieces.counts, step=pieces.step, sigma=pieces.sigma)
    if bonds.coupon_options() is None and np.any(book.event_kind == COUPON_OPTION):
        bonds = bonds.with_coupon_options(coupon_options(book))
    return bonds


def coupon_options(book: Book) -> CouponOptions:
    """The book's :data:`~trinom.lattice.book.COUPON_OPTION` events, per tree in event order."""
    at = np.flatnonzero(book.event_kind == COUPON_OPTION)
    owner = np.searchsorted(book.event_offset, at, side="right") - 1
    return CouponOptions.of(counts=np.bincount(owner, minlength=len(book)), step=book.event_step[at],
                            expiry=book.event_time[at], end=book.event_end[at], strike=book.event_coupon[at],
                            amount=book.event_amount[at], is_call=book.event_side[at] == CALL)


def _bonds(book: Book) -> BondPortfolio:
    _require(book, BOND)
    owner = np.repeat(np.arange(len(book)), np.diff(book.event_offset))
    flow = book.event_kind == CASH_FLOW
    exercise = np.flatnonzero(book.event_kind == EXERCISE)
    # A tree's first exercise event is its window; any after it are its listed points (every == 0).
    first = np.ones(exercise.size, dtype=bool)
    first[1:] = owner[exercise[1:]] != owner[exercise[:-1]]
    window, listed = exercise[first], exercise[~first]
    if window.size != len(book) or np.any(owner[window] != np.arange(len(book))):
        raise InputError([(None, "book", "a bond tree needs an exercise event (its window)")])
    if np.any(book.event_every[listed] != 0):
        raise InputError([(None, "book", "a bond tree's exercise events after its window must be listed points "
                           "(event_every 0)")])
    return _with_pieces(BondPortfolio(term_unit=book.term_unit, term_steps=book.term_steps, a=book.a, sigma=book.sigma,
                         maturity=book.maturity, cashflow_count=np.bincount(owner[flow], minlength=len(book)),
                         cashflow_step=book.event_step[flow], cashflow_time=book.event_time[flow],
                         repayment=book.event_amount[flow],
                         coupon=book.event_coupon[flow], spread=book.spread,
                         option_type=book.event_side[window], strike=book.event_amount[window],
                         first_exercise=book.event_first[window], last_exercise=book.event_last[window],
                         exercise_frequency=book.event_every[window], curve_index=book.curve,
                         exercise_count=np.bincount(owner[listed], minlength=len(book)),
                         exercise_step=book.event_step[listed], exercise_price=book.event_amount[listed],
                         exercise_time=book.event_time[listed]), book)


def _require(book: Book, instrument: int) -> None:
    if np.any(book.instrument != instrument):
        raise ValueError("lift needs a book of one instrument (take its rows_of() first)")
