"""Options on coupon bonds (issue 38): a ``bond_option`` row that gives the underlying's ``coupon`` (with its
``issue``, ``maturity``, ``frequency``, ``day_count``, ``calendar``, ``convention``) is a call or put on that bond at
``strike``, a clean price per 100 (the accrued interest at exercise is paid on top, as for a bond's call), exercised
``european`` on ``expiry`` or ``american`` on every day from ``first_exercise`` (default: the day after the as-of
date) to ``expiry``.

It lowers to two trees of the dated-bond lowering (:mod:`trinom.instruments.dated_bond`), as a swaption does: the bond
``B``, and the same bond with the option as its exercise. A call is ``B`` less the bond its issuer may call at the
strike (``B_call = B - call``); a put the bond its holder may put at the strike less ``B`` (``B_put = B + put``). Its
value is per 100 of the option's notional, its accrued interest 0 (the bond's cancels between the trees).

>>> import numpy as np
>>> option_weights(np.array([True, False])).tolist()
[1.0, -1.0, -1.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bond import BondPortfolio
from .bond_rows import dated_bonds_of
from .constants import CALL, PUT
from .dated_bond import ExerciseDates, ExerciseWindows, lower_dated_bonds
from .trade_checks import _AMERICAN, _PUT_CELL


def option_weights(is_call: np.ndarray) -> np.ndarray:
    """Per option, its two trees' weights (the bond, then the bond with the option): a call ``(+1, -1)``, a put
    ``(-1, +1)``."""
    sign = np.where(is_call, 1.0, -1.0)
    return np.column_stack([sign, -sign]).reshape(-1)


def coupon_bond_option_trees(trades: Any, rows: np.ndarray, curve: np.ndarray,
                             is_call: np.ndarray) -> tuple[BondPortfolio, list[tuple[int, str, str]]]:
    """The coupon bond options ``rows`` of ``trades`` (checked good) as two bond trees each, in row order (see the
    module), and the problems only lowering finds (book rows: both trees of such an option carry them)."""
    p = trades._parsed()
    count = rows.size
    specs = dated_bonds_of(trades, rows, coupon=p.numbers["coupon"][rows], spread=np.zeros(count), curve=curve,
                           side=np.where(is_call, CALL, PUT).astype(np.int8))
    index = np.arange(count)
    american = p.exercise[rows] == _AMERICAN
    expiry, strike = p.dates["expiry"][rows], p.numbers["strike"][rows]
    first = np.maximum(np.where(p.present["first_exercise"][rows], p.dates["first_exercise"][rows], 0),
                       trades.as_of_day + 1)
    none = np.zeros(count, dtype=np.int64)
    dates = ExerciseDates.of(index[~american], expiry[~american], strike[~american], True, none[~american])
    windows = ExerciseWindows.of(index[american], first[american], expiry[american], strike[american], none[american])
    plain = lower_dated_bonds(trades.as_of_day, specs)
    optioned = lower_dated_bonds(trades.as_of_day, specs, dates=dates, american=windows)
    both = BondPortfolio.concatenate([plain.portfolio(), optioned.portfolio()])
    return both[np.column_stack([index, index + count]).reshape(-1)], [*plain.problems, *optioned.problems]


def append_coupon_options(trades: Any, rows: np.ndarray, bad: np.ndarray, curve: np.ndarray, problems: list,
                          tables: list[BondPortfolio], first_tree: np.ndarray, counts: np.ndarray,
                          weights: list[np.ndarray], used: int) -> int:
    """The options on coupon bonds ``rows`` of ``trades`` appended to its blocks' ``tables``: two trees each for the good ones
    (:mod:`trinom.instruments.bond_options`), a placeholder for the bad; their first trees, counts and weights
    set; the trees used after them."""
    good, failed = rows[~bad[rows]], rows[bad[rows]]
    if good.size:
        is_call = trades._parsed().option[good] != _PUT_CELL
        trees, late = coupon_bond_option_trees(trades, good, curve[good], is_call)
        tree_of = {row: 2 * k for k, row in enumerate(good.tolist())}
        tables.append(BondPortfolio.with_read_problems(
            [(tree_of[row] + side, f, m) for row, f, m in trades._where_prefixed(late) for side in (0, 1)],
            accrued=trees.accrued(), **trees.as_dict()))
        pair = option_weights(is_call)
        lost = {row for row, _f, _m in late}
        for row, tree in tree_of.items():
            first_tree[row] = used + tree
            if row not in lost:
                counts[row], weights[row] = 2, pair[tree: tree + 2]
        used += 2 * good.size
    if failed.size:
        tables.append(trades._placeholder_bonds(failed, problems))
        first_tree[failed] = used + np.arange(failed.size)
        used += failed.size
    return used


__all__ = ["append_coupon_options", "coupon_bond_option_trees", "option_weights"]
