"""Options on floating coupons' rates (issue 37): a floating bond's cap or floor on its coupon, per period a caplet
or floorlet that the bond's tree values at the step of the period's fixing.

A floating period ``[s, e]`` (years from the valuation date) of accrual ``tau`` whose rate ``L`` is projected with
basis ratio ``beta`` (``1 + tau L = beta / P(s, e)``, :mod:`trinom.instruments.floating`) and pays
``clamp(L + margin, floor, cap)`` pays its uncapped coupon less a caplet plus a floorlet. At its fixing ``s`` they are
worth, per 100 of the notional outstanding ``share``:

* the caplet, ``100 share c max(beta / c - P(s, e), 0)`` with ``c = 1 + tau (cap - margin)``: a put on the zero-coupon
  bond ``P(s, e)`` struck at ``beta / c``, which the holder gives up (``amount = -100 share c``);
* the floorlet, ``100 share c max(P(s, e) - beta / c, 0)`` with ``c = 1 + tau (floor - margin)``: a call struck at
  ``beta / c``, which the holder gets (``amount = +100 share c``).

Each is one event of its bond's tree at ``step``, the last step at or before ``s`` (a fixing on a step is that
step's; one between steps is valued at the step before it, Hull-White's zero-coupon bond option from each node over
the time left to ``s``), before the step's exercise: a bond called on a period's start gives the period's option up
with it. The engines value the event from each node with the node's Hull-White zero-coupon bond prices
(:mod:`trinom.engines.coupon_option_terms`).

>>> options = CouponOptions.of(counts=[0, 1], step=[12], expiry=[1.0], end=[1.25], strike=[0.98], amount=[-100.5],
...                            is_call=[False])
>>> options.offset.tolist(), options_of(options, np.array([0])), options_of(options, np.array([1])).strike.tolist()
([0, 0, 1], None, [0.98])
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from ..ragged import segments


@dataclass(frozen=True, eq=False)
class CouponOptions:
    """Per bond, its options on coupon rates: bond ``k``'s are ``offset[k]:offset[k + 1]``, in ascending ``step``.

    Attributes:
      step: the tree step the option is valued at (the last at or before its fixing).
      expiry, end: the fixing ``s`` and the payment date ``e`` of the period, years from the valuation date.
      strike: the strike on ``P(s, e)`` (``beta / c``).
      amount: the signed amount per unit of the option (``-100 share c`` a caplet, ``+100 share c`` a floorlet).
      is_call: a call on ``P(s, e)`` (a floorlet) or a put (a caplet).
    """

    offset: np.ndarray
    step: np.ndarray
    expiry: np.ndarray
    end: np.ndarray
    strike: np.ndarray
    amount: np.ndarray
    is_call: np.ndarray

    @classmethod
    def of(cls, *, counts: npt.ArrayLike, step: npt.ArrayLike, expiry: npt.ArrayLike, end: npt.ArrayLike,
           strike: npt.ArrayLike, amount: npt.ArrayLike, is_call: npt.ArrayLike) -> CouponOptions:
        count = np.asarray(counts, dtype=np.int64).reshape(-1)
        offset = np.zeros(count.size + 1, dtype=np.int64)
        np.cumsum(count, out=offset[1:])
        columns = {"step": np.asarray(step, dtype=np.int64).reshape(-1),
                   "expiry": np.asarray(expiry, dtype=np.float64).reshape(-1),
                   "end": np.asarray(end, dtype=np.float64).reshape(-1),
                   "strike": np.asarray(strike, dtype=np.float64).reshape(-1),
                   "amount": np.asarray(amount, dtype=np.float64).reshape(-1),
                   "is_call": np.asarray(is_call, dtype=bool).reshape(-1)}
        if any(column.size != offset[-1] for column in columns.values()):
            raise ValueError(f"coupon options: {int(offset[-1])} counted, columns of "
                             f"{sorted({column.size for column in columns.values()})} entries")
        for array in (offset, *columns.values()):
            array.setflags(write=False)
        return cls(offset=offset, **columns)

    def __len__(self) -> int:
        return int(self.offset.size - 1)

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offset)

    def columns(self) -> dict[str, np.ndarray]:
        """The per-option columns by name (all but ``offset``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "offset"}

    def take(self, rows: np.ndarray) -> CouponOptions:
        """The options of bonds ``rows``, in that order."""
        _offsets, flat = segments(self.offset, np.asarray(rows, dtype=np.int64))
        return CouponOptions.of(counts=self.counts[rows], **{k: v[flat] for k, v in self.columns().items()})


def options_of(options: CouponOptions | None, rows: np.ndarray) -> CouponOptions | None:
    """The options of bonds ``rows`` (in that order), None where none of them has any."""
    if options is None:
        return None
    taken = options.take(rows)
    return taken if taken.step.size else None


def joined_options(parts: list[CouponOptions | None], sizes: list[int]) -> CouponOptions | None:
    """The options of consecutive parts of ``sizes`` bonds each (a part's None: its bonds have none), None where no
    part has any."""
    if all(part is None for part in parts):
        return None
    empty = CouponOptions.of(counts=[], step=[], expiry=[], end=[], strike=[], amount=[], is_call=[])
    whole = [part if part is not None else
             CouponOptions.of(counts=np.zeros(size, np.int64), **empty.columns())
             for part, size in zip(parts, sizes, strict=True)]
    return CouponOptions.of(counts=np.concatenate([p.counts for p in whole]),
                            **{name: np.concatenate([p.columns()[name] for p in whole]) for name in empty.columns()})
