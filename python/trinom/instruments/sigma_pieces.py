"""A trade's sigma as a step function of dates (issue 37, item 3): pieces given per trade
(:meth:`~trinom.instruments.trades.Trades.with_sigma_pieces`, a model file's ``until`` rows), put on each of its
bond trees' steps.

A trade's pieces are ``values[0]`` up to ``until[0]``, ``values[1]`` up to ``until[1]``, ..., the last open-ended.
A tree takes a piece from the step nearest its start date (``round((start - as_of) / 365 * steps_per_year)``, the
dates the tree counts ACT/365F from the as-of date): a piece is constant on whole steps, as exercise is, so a
piece's date is moved to the nearest step (say so where it matters; at 365 steps a year it moves half a day at most).
The trade's ``sigma`` is its first piece's. Every trade type takes pieces: bonds and swaptions on their bond trees,
and caps, floors and bond options on a bond tree each that holds their options as events (in place of their option
trees, which take one sigma).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..conventions.dates import to_days
from ..errors import InputError
from .bond import BondPortfolio

#: The trade types that take pieces: every one (a cap, floor or bond option with pieces is priced on a bond tree
#: holding its options as events, :mod:`trinom.instruments.coupon_options`, instead of its option trees).
PIECE_TYPES = ("bond", "swaption", "cap", "floor", "bond_option")
#: Per trade row: the days (since 1970-01-01) where each piece but the last ends, and every piece's sigma.
RowPieces = dict[int, tuple[np.ndarray, np.ndarray]]


def read_pieces(pieces: Mapping[str, tuple[Sequence[Any], Sequence[float]]], ids: list[str],
                as_of_day: int, where: Sequence[str] | None = None) -> RowPieces:
    """``{id: (until dates, sigmas)}`` as :data:`RowPieces`, every bad entry reported at once naming the trade: an
    unknown id, ``len(sigmas) != len(until) + 1``, dates that are not dates, not after the as-of date or not
    increasing, a sigma that is not a finite number > 0."""
    row_of = {name: k for k, name in enumerate(ids)}
    out: RowPieces = {}
    problems = []
    for name, (until, values) in pieces.items():
        row = row_of.get(str(name))
        place = f"{where[row]}: " if where is not None and row is not None else ""
        if row is None:
            problems.append((None, "sigma", f"sigma pieces for trade {name!r}, which the book does not hold"))
            continue
        days, found = to_days(np.array([str(d) for d in until], dtype=object), field="until")
        sigmas = np.asarray(values, dtype=np.float64).reshape(-1)
        if found:
            problems.append((row, "until", f"{place}trade {name!r}: an until date is not a date (YYYY-MM-DD): "
                             f"{list(until)}"))
        elif sigmas.size != days.size + 1:
            problems.append((row, "sigma", f"{place}trade {name!r}: {sigmas.size} sigmas for {days.size} until dates "
                             "(each piece but the last ends on its date)"))
        elif (days <= as_of_day).any() or (np.diff(days) <= 0).any():
            problems.append((row, "until", f"{place}trade {name!r}: the pieces' until dates must be after the as-of "
                             f"date and increasing, got {[str(np.datetime64(int(d), 'D')) for d in days]}"))
        elif not (np.isfinite(sigmas) & (sigmas > 0)).all():
            problems.append((row, "sigma", f"{place}trade {name!r}: every piece's sigma must be a finite number > 0, "
                             f"got {sigmas.tolist()}"))
        else:
            out[row] = (days.astype(np.int64), sigmas)
    if problems:
        raise InputError(problems)
    return out


def rows_part(pieces: RowPieces, lo: int, hi: int) -> RowPieces:
    """The pieces of trades ``lo`` to ``hi - 1``, numbered from ``lo``."""
    return {row - lo: value for row, value in pieces.items() if lo <= row < hi}


def with_tree_pieces(bonds: BondPortfolio, owner: np.ndarray, pieces: RowPieces, as_of_day: int) -> BondPortfolio:
    """``bonds`` (trees ``k`` of trade ``owner[k]``) with their trades' pieces on their steps: a tree's first
    piece is the one running at its step 0 (its ``sigma``), each later one starting at its start date's nearest
    step (pieces of one step merged: the last wins)."""
    trees = np.flatnonzero(np.isin(owner, list(pieces)))
    if not trees.size:
        return bonds
    sigma = bonds.sigma.copy()
    counts = np.zeros(len(bonds), dtype=np.int64)
    steps: list[int] = []
    values: list[float] = []
    for k in trees.tolist():
        until, sigmas = pieces[int(owner[k])]
        spy = int(bonds.term_steps[k])
        start = np.rint((until - as_of_day) / 365.0 * spy).astype(np.int64)  # where pieces 1.. start
        first = int(np.searchsorted(start, 0, side="right"))  # pieces starting at step 0 or before
        sigma[k] = sigmas[first]
        mine_steps, mine_values = start[first:], sigmas[first + 1:]
        later = np.concatenate([mine_steps[1:] != mine_steps[:-1], [True]]) if mine_steps.size else mine_steps
        counts[k] = int(later.sum())
        steps += mine_steps[later].tolist()
        values += mine_values[later].tolist()
    moved = bonds.with_parameters(a=bonds.a, sigma=sigma)
    return moved.with_sigma_pieces(counts=counts, step=steps, sigma=values)
