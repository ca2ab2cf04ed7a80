"""What a book's bond rows give the dated-bond lowering: their terms (a bond's, or the bond under an option on a
coupon bond), the exercise (dates, coupon-date windows, american windows, from the row's cells and ``schedule.csv``)
and the amortization (``notionals.csv``)."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .dated_bond import Amortization, DatedBonds, ExerciseDates, ExerciseWindows
from .trade_checks import _AMERICAN, _BERMUDAN, _EUROPEAN, TradeChecks

#: The default names of a bond's conventions, where its cells are empty (a bond's and a coupon bond option's).
BOND_DEFAULTS: Final[dict[str, str]] = {"day_count": "30/360", "calendar": "NONE", "convention": "F"}


def dated_bonds_of(trades: TradeChecks, rows: np.ndarray, *, coupon: np.ndarray, spread: np.ndarray,
                   curve: np.ndarray, side: np.ndarray) -> DatedBonds:
    """The bonds of book ``rows`` as :class:`DatedBonds`: their dates, frequency, conventions (empty cells: the
    :data:`BOND_DEFAULTS`), model and tree resolution from the row, and ``coupon``, ``spread``, ``curve`` and ``side``
    as given."""
    p = trades._parsed()
    names = {name: trades._factorized(name).filled(default).take(rows) for name, default in BOND_DEFAULTS.items()}
    return DatedBonds(rows=rows, issue=p.dates["issue"][rows], maturity=p.dates["maturity"][rows], coupon=coupon,
                      frequency=trades._factorized("frequency").take(rows), day_count=names["day_count"],
                      calendar=names["calendar"], convention=names["convention"], a=p.numbers["a"][rows],
                      sigma=p.numbers["sigma"][rows], spread=spread, curve=curve,
                      steps_per_year=trades._steps_per_year()[rows], side=side)


def exercise_inputs(trades: TradeChecks, good: np.ndarray) -> dict[str, Any]:
    """The good bond rows' exercise as :func:`lower_dated_bonds` takes it (bonds numbered among ``good``):
    european on ``first_exercise`` and the european and bermudan schedule rows as dates, bermudan windows on
    coupon dates, american windows (a schedule's: one per listed date, to the next one)."""
    p = trades._parsed()
    count = good.size
    has = p.present["option"][good]
    style = p.exercise[good]
    notice = np.where(p.present["notice_days"][good], p.numbers["notice_days"][good], 0).astype(np.int64)
    price = p.numbers["exercise_price"][good]
    first, last = p.dates["first_exercise"][good], p.dates["last_exercise"][good]
    schedule = trades._side_rows("schedule")[0]
    position = np.full(len(trades), -1, dtype=np.int64)
    position[good] = np.arange(count)
    listed = position[schedule.row] >= 0
    bond, day, listed_price = position[schedule.row[listed]], schedule.day[listed], schedule.value[listed]
    scheduled = np.zeros(count, dtype=bool)
    scheduled[bond] = True
    european = np.flatnonzero(has & (style == _EUROPEAN) & ~scheduled)
    on_dates = style[bond] != _AMERICAN
    dates = ExerciseDates.of(np.concatenate([european, bond[on_dates]]),
                             np.concatenate([first[european], day[on_dates]]),
                             np.concatenate([price[european], listed_price[on_dates]]), True,
                             np.concatenate([notice[european], notice[bond[on_dates]]]))
    bermudan = np.flatnonzero(has & (style == _BERMUDAN) & ~scheduled)
    coupon_dates = ExerciseWindows.of(bermudan, first[bermudan], last[bermudan], price[bermudan], notice[bermudan])
    american = np.flatnonzero(has & (style == _AMERICAN) & ~scheduled)
    stepped = ~on_dates  # an american schedule: from each listed date to the day before the next one
    s_bond, s_day = bond[stepped], day[stepped]
    ends = np.where(p.present["last_exercise"][good], last, p.dates["maturity"][good])
    final = np.ones(s_bond.size, dtype=bool)
    final[:-1] = s_bond[1:] != s_bond[:-1]
    s_last = np.where(final, ends[s_bond], np.append(s_day[1:], 0) - 1)
    windows = ExerciseWindows.of(np.concatenate([american, s_bond]), np.concatenate([first[american], s_day]),
                                 np.concatenate([last[american], s_last]),
                                 np.concatenate([price[american], listed_price[stepped]]),
                                 np.concatenate([notice[american], notice[s_bond]]))
    return {"dates": dates, "coupon_dates": coupon_dates, "american": windows}

def amortization_of(trades: TradeChecks, good: np.ndarray) -> Amortization | None:
    """The good bond rows' outstanding notionals (``notionals.csv`` rows, as shares of the trade's notional)."""
    rows = trades._side_rows("notionals")[0]
    if rows.row.size == 0:
        return None
    position = np.full(len(trades), -1, dtype=np.int64)
    position[good] = np.arange(good.size)
    kept = position[rows.row] >= 0
    notional = trades._parsed().numbers["notional"][rows.row[kept]]
    return Amortization(bond=position[rows.row[kept]], date=rows.day[kept], ratio=rows.value[kept] / notional,
                        where=rows.where[kept])
