"""The portfolio of coupon bonds with an embedded call or put (the ARRAY'21 paper's instrument).

The 19 arrays of ``docs/paper-instrument.md`` §1 as a struct of NumPy arrays: one entry per
bond, except the cash flows (step, repayment, coupon), which are the bonds' schedules
concatenated in bond order (``cashflow_offset`` locates a bond's slice).

Optionally, listed exercise points (docs/paper-instrument.md, "Listed exercise points"): per bond
``exercise_count`` steps at which the value is capped (call) or floored (put) at a dirty price of
its own, ``exercise_step`` and ``exercise_price`` being the bonds' lists concatenated in bond order
(``exercise_offset`` locates a bond's slice). Without them every bond has none.

Formerly ``trinom.bonds.portfolio``, which stays importable for one release (the same module).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..model.curve import YieldCurve
from ..model.piecewise_tree import (
    MAX_VARIANCE_RATIO,
    PiecewiseShape,
    SigmaPieces,
    joined_pieces,
    pieces_of,
    piecewise_geometry,
)
from ..model.tree_geometry import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH, SIGMA_LIMIT, BondGeometry, bond_geometry
from ..ragged import segments
from .columns import as_array, as_float_column, option_types, rows_problems, show
from .constants import CALL, PUT
from .coupon_options import CouponOptions, joined_options, options_of

T = TypeVar("T")

#: Per-bond fields, in the 19-array file's order (the cash-flow arrays sit between maturity and spread).
BOND_FIELDS: dict[str, str] = {
    "term_unit": "days in one term unit (360: a term unit is a year of 360 days)",
    "term_steps": "tree steps per term unit (12: monthly steps)",
    "a": "Hull-White mean reversion a (per year)",
    "sigma": "Hull-White volatility sigma (absolute, per sqrt(year))",
    "maturity": "bond maturity in term units; the tree height is ceil(term_steps * maturity)",
    "cashflow_count": "number of cash flows of the bond (>= 1; the last one is at maturity)",
    "spread": "option-adjusted spread, percent per year, continuous (1.0 = 100 bp)",
    "option_type": "0 = call (the issuer may call), 1 = put (the holder may put)",
    "strike": "clean exercise price per 100 face",
    "first_exercise": "first tree step at which exercise is allowed",
    "last_exercise": "last tree step at which exercise is allowed",
    "exercise_frequency": "exercise period in steps, counted from the last cash-flow date (>= 1)",
    "curve_index": "which yield curve (0-based) the bond is discounted on",
}
#: Per-cash-flow fields (the bonds' schedules concatenated in bond order).
CASHFLOW_FIELDS: dict[str, str] = {
    "cashflow_step": "tree step of the cash flow (ascending within a bond; the last is the tree height)",
    "repayment": "principal paid at that step (per 100 face)",
    "coupon": "coupon amount paid at that step (per 100 face, not a rate)",
}
#: The cash flows' times, optional (per cash flow, like :data:`CASHFLOW_FIELDS`; left out, every flow is on its step).
TIME_FIELDS: dict[str, str] = {
    "cashflow_time": "the cash flow's time in years (NaN: on its step, the paper's flow); a flow with a time is paid "
                     "then: cashflow_step is the first step at or after it, and the tree values it at the step "
                     "before (Hull-White's zero-coupon bond price from each node: docs/paper-instrument.md, "
                     "\"Flows between steps\")",
    "exercise_time": "a listed exercise point's date in years (NaN: at its step); a point with a time pays its price "
                     "then: exercise_step is the last step before it, where the decision is taken (the flows paid up "
                     "to that time are the holder's either way)",
}
#: Listed exercise points, optional (the bonds' lists concatenated in bond order, ``exercise_count`` per bond).
LISTED_FIELDS: dict[str, str] = {
    "exercise_count": "number of listed exercise points of the bond (>= 0; default 0)",
    "exercise_step": "tree step of a listed exercise point (strictly ascending within a bond, 1..height)",
    "exercise_price": "dirty exercise price per 100 face at that step (no accrued interest is added)",
}
#: The listed points' per-point fields.
POINT_FIELDS = ("exercise_step", "exercise_price")
_LISTED_INTEGER_FIELDS = ("exercise_count", "exercise_step")
_INTEGER_FIELDS = ("term_unit", "term_steps", "cashflow_count", "first_exercise", "last_exercise",
                   "exercise_frequency", "curve_index", "cashflow_step")
_STEP_LIMIT = 65535  # the file format's uint16 steps
#: The days a bond's term unit may have: the paper's lattice is right only when a term unit is a year.
YEAR_DAYS = (360, 366)


@dataclass(frozen=True, eq=False)
class BondPortfolio:
    """Callable and puttable coupon bonds, as read-only NumPy arrays.

    Integer fields are int64, ``option_type`` int8, the rest float64. Construction checks the
    shapes only (per-bond arrays of one length, cash-flow arrays of length
    ``cashflow_count.sum()``, listed exercise points of length ``exercise_count.sum()``);
    :meth:`validate` checks the values against the curves. The listed exercise points
    (:data:`LISTED_FIELDS`) are optional: left out, no bond has any.

    >>> p = BondPortfolio(term_unit=[360], term_steps=[12], a=[0.1], sigma=[0.01], maturity=[9.0],
    ...                   cashflow_count=[1], cashflow_step=[108], repayment=[100.0], coupon=[0.0],
    ...                   spread=[0.0], option_type=["put"], strike=[63.0], first_exercise=[36],
    ...                   last_exercise=[36], exercise_frequency=[1], curve_index=[0])
    >>> len(p), int(p.height()[0]), int(p.jmax()[0])
    (1, 108, 23)
    """

    term_unit: np.ndarray
    term_steps: np.ndarray
    a: np.ndarray
    sigma: np.ndarray
    maturity: np.ndarray
    cashflow_count: np.ndarray
    cashflow_step: np.ndarray
    repayment: np.ndarray
    coupon: np.ndarray
    spread: np.ndarray
    option_type: np.ndarray
    strike: np.ndarray
    first_exercise: np.ndarray
    last_exercise: np.ndarray
    exercise_frequency: np.ndarray
    curve_index: np.ndarray
    exercise_count: np.ndarray  #: listed exercise points per bond (zeros when none were given)
    exercise_step: np.ndarray
    exercise_price: np.ndarray

    def __init__(self, *, accrued: npt.ArrayLike | None = None, **fields: npt.ArrayLike):
        names = (*BOND_FIELDS, *CASHFLOW_FIELDS)
        missing = [f for f in names if f not in fields]
        unknown = [f for f in fields if f not in names and f not in LISTED_FIELDS and f not in TIME_FIELDS]
        if missing or unknown:
            known = ", ".join((*names, *TIME_FIELDS, *LISTED_FIELDS))
            raise InputError([(None, f, f"missing field '{f}'") for f in missing]
                             + [(None, f, f"unknown field '{f}' (fields: {known})") for f in unknown])
        arrays: dict[str, np.ndarray] = {}
        for name in names:
            if name == "option_type":
                arrays[name], unknown_types = option_types(as_array(name, fields[name]))
            elif name in CASHFLOW_FIELDS and "cashflow_count" in arrays:
                arrays[name] = _cashflow_numeric(name, fields[name], arrays["cashflow_count"])
            else:
                arrays[name] = _numeric(name, fields[name], integer=name in _INTEGER_FIELDS)
        n_bonds = arrays["strike"].size
        arrays.update(_listed_arrays(fields, n_bonds))
        given_times = fields.get("cashflow_time")
        arrays["cashflow_time"] = (np.full(arrays["cashflow_step"].size, np.nan) if given_times is None
                                   else _cashflow_numeric("cashflow_time", given_times, arrays["cashflow_count"]))
        given_times = fields.get("exercise_time")
        arrays["exercise_time"] = (np.full(arrays["exercise_step"].size, np.nan) if given_times is None
                                   else _cashflow_numeric("exercise_time", given_times, arrays["exercise_count"],
                                                          item="exercise point"))
        problems = [(None, f, f"{f} has {arrays[f].size} entries, expected one per bond ({n_bonds})")
                    for f in (*BOND_FIELDS, "exercise_count") if arrays[f].size != n_bonds]
        if not problems:
            counts = arrays["cashflow_count"]
            bad_rows = np.flatnonzero(counts < 1)
            problems += [(int(r), "cashflow_count", f"cashflow_count must be >= 1, got {int(counts[r])}")
                         for r in bad_rows]
            total = int(np.maximum(counts, 0).sum())
            problems += [(None, f, f"{f} has {arrays[f].size} entries, but the cashflow_count sum is {total}")
                         for f in (*CASHFLOW_FIELDS, *(["cashflow_time"] if "cashflow_time" in fields else []))
                         if arrays[f].size != total]
            points = arrays["exercise_count"]
            problems += [(int(r), "exercise_count", f"exercise_count must be >= 0, got {int(points[r])}")
                         for r in np.flatnonzero(points < 0)]
            total = int(np.maximum(points, 0).sum())
            problems += [(None, f, f"{f} has {arrays[f].size} entries, but the exercise_count sum is {total}")
                         for f in (*POINT_FIELDS, *(["exercise_time"] if "exercise_time" in fields else []))
                         if arrays[f].size != total]
        if problems:
            raise InputError(problems)
        for name, arr in arrays.items():
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        for name, counts in (("cashflow_offset", arrays["cashflow_count"]), ("exercise_offset", arrays["exercise_count"])):
            offset = np.zeros(n_bonds + 1, dtype=np.int64)
            np.cumsum(counts, out=offset[1:])
            offset.setflags(write=False)
            object.__setattr__(self, name, offset)
        object.__setattr__(self, "_unknown_types", unknown_types)
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_read_problems", ())
        object.__setattr__(self, "_signed_coupons", None)  # per bond, whether its coupons may be negative (None: none)
        object.__setattr__(self, "_sigma_pieces", None)  # sigma as a step function of the steps (None: constant)
        object.__setattr__(self, "_coupon_options", None)  # caps and floors on floating coupons (None: none)
        given = None
        if accrued is not None:  # a dated bond's accrued interest, by its day count (trinom.instruments.dated_bond)
            given = np.array(accrued, dtype=np.float64).reshape(-1)
            if given.size != n_bonds:
                raise InputError([(None, "accrued", f"accrued has {given.size} entries, expected one per bond "
                                   f"({n_bonds})")])
            given.setflags(write=False)
        object.__setattr__(self, "_accrued_given", given)

    @classmethod
    def with_read_problems(cls, problems: Sequence[tuple[int, str, str]], *, accrued: npt.ArrayLike | None = None,
                           signed_coupons: npt.ArrayLike | None = None, **fields: npt.ArrayLike) -> BondPortfolio:
        """Bonds read with ``errors="mask"``: the cells that could not be read are NaN in ``fields`` and their
        ``(bond row, field, message)`` in ``problems``, which :meth:`validate` reports for those bonds (and
        nothing else about them). An unread whole-number cell stands as 1 until then."""
        for name in (*_INTEGER_FIELDS, *_LISTED_INTEGER_FIELDS):
            if name not in fields:
                continue
            values = np.array(fields[name], dtype=np.float64)
            fields[name] = np.where(np.isnan(values), 1.0, values)
        bonds = cls(accrued=accrued, **fields)
        if signed_coupons is not None:
            bonds = bonds.with_signed_coupons(signed_coupons)
        object.__setattr__(bonds, "_read_problems", tuple(problems))
        return bonds

    def with_signed_coupons(self, signed: npt.ArrayLike | None = None) -> BondPortfolio:
        """These bonds, the coupons (and exercise prices) of those ``signed`` marks (default: all) allowed to be
        negative: the fixed leg of a swap at a negative rate or with a basis, lowered from a swaption
        (:mod:`trinom.instruments.swaption`), and a floating bond's replicated flows and exercise prices
        (:mod:`trinom.instruments.floating`) are no bond a holder is paid by but price on the same tree. A bond's
        coupon and exercise price must otherwise be >= 0."""
        copy = object.__new__(BondPortfolio)
        copy.__dict__.update(self.__dict__)
        mask = np.ones(len(self), dtype=bool) if signed is None else np.asarray(signed, dtype=bool).reshape(len(self))
        object.__setattr__(copy, "_signed_coupons", mask)
        object.__setattr__(copy, "_cache", {})
        return copy

    def with_sigma_pieces(self, *, counts: npt.ArrayLike, step: npt.ArrayLike,
                          sigma: npt.ArrayLike) -> BondPortfolio:
        """These bonds with sigma piecewise constant in their trees' steps (issue 37): bond ``k`` has ``counts[k]``
        pieces after its own ``sigma`` (the bonds' pieces concatenated in bond order), piece ``p`` applying to the
        steps from ``step[p]`` on (ascending within a bond, > 0). Each tree keeps one grid and matches every step's
        variance in its branching (:mod:`trinom.model.piecewise_tree`: its pieces' sigmas must lie within a factor
        sqrt(3) of each other). The ``reference``, ``futhark`` and ``cuda`` engines price such trees; ``futhark-paper``
        refuses them.

        >>> p = BondPortfolio(term_unit=[365], term_steps=[12], a=[0.1], sigma=[0.01], maturity=[2.0],
        ...                   cashflow_count=[1], cashflow_step=[24], repayment=[100.0], coupon=[0.0], spread=[0.0],
        ...                   option_type=[0], strike=[100.0], first_exercise=[1], last_exercise=[0],
        ...                   exercise_frequency=[1], curve_index=[0])
        >>> p.with_sigma_pieces(counts=[1], step=[12], sigma=[0.012]).sigma_pieces().sigma.tolist()
        [0.012]
        """
        pieces = SigmaPieces.of(counts=counts, step=step, sigma=sigma)
        if len(pieces) != len(self) or pieces.step.size != pieces.sigma.size or pieces.step.size != pieces.offset[-1]:
            raise InputError([(None, "sigma_pieces", f"sigma pieces: {len(pieces)} counts for {len(self)} bonds, "
                               f"{pieces.step.size} steps and {pieces.sigma.size} sigmas for {int(pieces.offset[-1])} "
                               "pieces")])
        # a piece of its predecessor's sigma is no new piece: a bond whose pieces are all one sigma has none (its
        # tree is Hull and White's, to the bit)
        owner = np.repeat(np.arange(len(self)), pieces.counts)
        before = np.where(np.arange(owner.size) == pieces.offset[owner], self.sigma[owner],
                          np.concatenate([[np.nan], pieces.sigma[:-1]]))
        first = np.arange(owner.size) == pieces.offset[owner]
        rising = (pieces.step >= 1) & (first | (pieces.step > np.concatenate([[0], pieces.step[:-1]])))
        valid = np.bincount(owner[~rising], minlength=len(self)) == 0  # bad steps are validation's to report
        keep = (pieces.sigma != before) | ~valid[owner]
        if not keep.all():
            pieces = SigmaPieces.of(counts=np.bincount(owner[keep], minlength=len(self)), step=pieces.step[keep],
                                    sigma=pieces.sigma[keep])
        copy = object.__new__(BondPortfolio)
        copy.__dict__.update(self.__dict__)
        object.__setattr__(copy, "_sigma_pieces", pieces if pieces.step.size else None)
        object.__setattr__(copy, "_cache", {})
        return copy

    def with_coupon_options(self, options: CouponOptions | None) -> BondPortfolio:
        """These bonds with options on their floating coupons' rates (caps and floors,
        :mod:`trinom.instruments.coupon_options`), one :class:`~trinom.instruments.coupon_options.CouponOptions` entry
        per bond (None: none). The ``reference``, ``futhark`` and ``cuda`` engines price them."""
        if options is not None and len(options) != len(self):
            raise InputError([(None, "coupon_options", f"coupon options for {len(options)} bonds, expected one entry "
                               f"per bond ({len(self)})")])
        copy = object.__new__(BondPortfolio)
        copy.__dict__.update(self.__dict__)
        object.__setattr__(copy, "_coupon_options", options if options is not None and options.step.size else None)
        object.__setattr__(copy, "_cache", {})
        return copy

    def coupon_options(self) -> CouponOptions | None:
        """The bonds' options on coupon rates (:meth:`with_coupon_options`), None where no bond has any."""
        return self._coupon_options

    def sigma_pieces(self) -> SigmaPieces | None:
        """The bonds' sigma pieces (:meth:`with_sigma_pieces`), None where every bond has one sigma."""
        return self._sigma_pieces

    def signed_coupons(self) -> np.ndarray:
        """Per bond, whether its coupons may be negative (:meth:`with_signed_coupons`)."""
        return np.zeros(len(self), dtype=bool) if self._signed_coupons is None else self._signed_coupons

    # --- construction and access ----------------------------------------------------------------
    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.ArrayLike]) -> BondPortfolio:
        """From a mapping of field name to array (extra keys are an error)."""
        return cls(**dict(arrays))

    def with_parameters(self, *, a: npt.ArrayLike, sigma: npt.ArrayLike) -> BondPortfolio:
        """This portfolio with other ``a`` and ``sigma`` (one each per bond), sharing every other (read-only) array:
        nothing else is read or checked again (a recalibrated model on the same bonds; :meth:`validate` checks the
        new values as usual).

        >>> p = BondPortfolio(term_unit=[365], term_steps=[12], a=[0.1], sigma=[0.01], maturity=[2.0],
        ...                   cashflow_count=[1], cashflow_step=[24], repayment=[100.0], coupon=[5.0], spread=[0.0],
        ...                   option_type=[0], strike=[100.0], first_exercise=[1], last_exercise=[0],
        ...                   exercise_frequency=[1], curve_index=[0])
        >>> p.with_parameters(a=[0.05], sigma=[0.02]).a.tolist(), p.cashflow_step is p.with_parameters(a=[0.05],
        ...                                                                                     sigma=[0.02]).cashflow_step
        ([0.05], True)
        """
        copy = object.__new__(BondPortfolio)
        copy.__dict__.update(self.__dict__)
        for name, values in (("a", a), ("sigma", sigma)):
            array = np.array(values, dtype=np.float64).reshape(-1)
            if array.size != len(self):
                raise InputError([(None, name, f"{name} has {array.size} values, expected one per bond ({len(self)})")])
            array.setflags(write=False)
            object.__setattr__(copy, name, array)
        object.__setattr__(copy, "_sigma_pieces", None)  # one sigma a bond now
        object.__setattr__(copy, "_cache", {})
        return copy

    def __len__(self) -> int:
        return int(self.strike.size)

    def __repr__(self) -> str:
        listed = f", {self.exercise_step.size} listed exercise points" if self.has_listed() else ""
        return f"BondPortfolio({len(self)} bonds, {self.cashflow_step.size} cash flows{listed})"

    def has_flow_times(self) -> bool:
        """Does any cash flow or listed exercise point have a time (between steps, :data:`TIME_FIELDS`)?"""
        return self.cached("has-flow-times", lambda: bool(np.isfinite(self.cashflow_time).any()
                                                         or np.isfinite(self.exercise_time).any()))

    def has_listed(self) -> bool:
        """Does any bond have listed exercise points?"""
        return bool(self.exercise_step.size)

    def as_dict(self) -> dict[str, np.ndarray]:
        """Every field by name (per-bond fields, then the cash-flow fields, then the listed exercise points'
        fields where any bond has some: a portfolio without them gives the 16 fields it always gave)."""
        names = (*BOND_FIELDS, *CASHFLOW_FIELDS, *(LISTED_FIELDS if self.has_listed() else ()),
                 *(TIME_FIELDS if self.has_flow_times() else ()))
        return {name: getattr(self, name) for name in names}

    def cashflows(self, row: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bond ``row``'s cash-flow steps, repayments and coupons."""
        lo, hi = int(self.cashflow_offset[row]), int(self.cashflow_offset[row + 1])
        return self.cashflow_step[lo:hi], self.repayment[lo:hi], self.coupon[lo:hi]

    def listed(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """Bond ``row``'s listed exercise steps and dirty exercise prices (empty where it has none)."""
        lo, hi = int(self.exercise_offset[row]), int(self.exercise_offset[row + 1])
        return self.exercise_step[lo:hi], self.exercise_price[lo:hi]

    def __getitem__(self, index: int | slice | npt.ArrayLike) -> BondPortfolio:
        """The bonds at ``index`` (in that order) with their cash flows and listed exercise points."""
        rows = np.atleast_1d(np.arange(len(self))[index])
        _offsets, flat = segments(self.cashflow_offset, rows)
        fields = {name: getattr(self, name)[rows] for name in BOND_FIELDS}
        fields.update({name: getattr(self, name)[flat] for name in CASHFLOW_FIELDS})
        if self.has_flow_times():
            fields["cashflow_time"] = self.cashflow_time[flat]
        if self.has_listed():
            _offsets, points = segments(self.exercise_offset, rows)
            fields.update(exercise_count=self.exercise_count[rows],
                          **{name: getattr(self, name)[points] for name in POINT_FIELDS})
            if self.has_flow_times():
                fields["exercise_time"] = self.exercise_time[points]
        given = self._accrued_given
        part = BondPortfolio(accrued=None if given is None else given[rows], **fields)
        object.__setattr__(part, "_read_problems", rows_problems(self._read_problems, rows))
        if self._signed_coupons is not None:
            object.__setattr__(part, "_signed_coupons", self._signed_coupons[rows])
        object.__setattr__(part, "_sigma_pieces", pieces_of(self._sigma_pieces, rows))
        object.__setattr__(part, "_coupon_options", options_of(self._coupon_options, rows))
        return part

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for row in range(len(self)):
            steps, repayments, coupons = self.cashflows(row)
            bond: dict[str, Any] = {name: getattr(self, name)[row].item() for name in BOND_FIELDS}
            bond.update(cashflow_step=steps.tolist(), repayment=repayments.tolist(), coupon=coupons.tolist())
            if self.has_flow_times():
                lo, hi = int(self.cashflow_offset[row]), int(self.cashflow_offset[row + 1])
                bond.update(cashflow_time=self.cashflow_time[lo:hi].tolist())
            if self.has_listed():
                points, prices = self.listed(row)
                bond.update(exercise_step=points.tolist(), exercise_price=prices.tolist())
                if self.has_flow_times():
                    lo, hi = int(self.exercise_offset[row]), int(self.exercise_offset[row + 1])
                    bond.update(exercise_time=self.exercise_time[lo:hi].tolist())
            yield bond

    @classmethod
    def concatenate(cls, parts: Sequence[BondPortfolio]) -> BondPortfolio:
        """The bonds of ``parts``, one after the other (with their listed exercise points, if any part has some, and
        their read problems, renumbered)."""
        names = (*BOND_FIELDS, *CASHFLOW_FIELDS, *(LISTED_FIELDS if any(p.has_listed() for p in parts) else ()),
                 *(TIME_FIELDS if any(p.has_flow_times() for p in parts) else ()))
        given = [p._accrued_given for p in parts]
        accrued = None if all(g is None for g in given) else np.concatenate([p.accrued() for p in parts])
        whole = cls(accrued=accrued, **{name: np.concatenate([getattr(p, name) for p in parts]) for name in names})
        object.__setattr__(whole, "_read_problems", _renumbered(parts))
        if any(p._signed_coupons is not None for p in parts):
            object.__setattr__(whole, "_signed_coupons", np.concatenate([p.signed_coupons() for p in parts]))
        object.__setattr__(whole, "_sigma_pieces", joined_pieces([p._sigma_pieces for p in parts],
                                                                 [len(p) for p in parts]))
        object.__setattr__(whole, "_coupon_options", joined_options([p._coupon_options for p in parts],
                                                                    [len(p) for p in parts]))
        return whole

    def cached(self, key: object, compute: Callable[[], T]) -> T:
        """``compute()``, once per ``key`` for these bonds (they are immutable, so derived data can be kept)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def accrued(self) -> np.ndarray:
        """Interest accrued at the valuation date (step 0), per 100 face (read-only; computed once).

        ``c_1 * max(0, L - s_1) / L``: the first coupon ``c_1`` (paid at step ``s_1``) accrues
        over its period ``L``, which is the spacing of the first two cash flows (one term unit,
        ``term_steps`` steps, for a bond with one cash flow). Zero when step 0 is a coupon date
        (``s_1 = L``), as in every paper dataset, and for zero-coupon bonds. Bonds built with ``accrued=``
        (dated bonds, whose accrued interest follows their day count) return that instead.
        """
        if self._accrued_given is not None:
            return self._accrued_given

        def compute() -> np.ndarray:
            first = self.cashflow_offset[:-1]
            s1 = self.cashflow_step[first]
            has_second = self.cashflow_count > 1
            s2 = self.cashflow_step[np.where(has_second, first + 1, first)]
            period = np.where(has_second, s2 - s1, self.term_steps)
            fraction = np.maximum(period - s1, 0) / np.maximum(period, 1)
            accrued = self.coupon[first] * fraction
            accrued.setflags(write=False)
            return accrued
        return self.cached("accrued", compute)

    # --- geometry --------------------------------------------------------------------------------
    def geometry(self, dtype: npt.DTypeLike = np.float64) -> BondGeometry:
        """Per-bond tree constants (height, jmax, dt, ...), computed once per dtype."""
        return self.piecewise(dtype)[0]

    def piecewise(self, dtype: npt.DTypeLike = np.float64) -> tuple[BondGeometry, PiecewiseShape | None]:
        """:meth:`geometry` and, where bonds have sigma pieces, their grid and pieces' ``V / dx^2``
        (:func:`~trinom.model.piecewise_tree.piecewise_geometry`: the trees with pieces, in order; None: none has
        any), computed once per dtype."""
        key = ("geometry", np.dtype(dtype).str)
        if key not in self._cache:
            geometry = bond_geometry(self.term_unit, self.term_steps, self.a, self.sigma, self.maturity, self.spread,
                                     dtype)
            shape = None
            if self._sigma_pieces is not None:
                with np.errstate(all="ignore"):
                    geometry, shape = piecewise_geometry(geometry, a=self.a, sigma=self.sigma,
                                                         pieces=self._sigma_pieces, dtype=dtype)
            self._cache[key] = (geometry, shape)
        return self._cache[key]

    def height(self) -> np.ndarray:
        """Tree height ``n`` (number of time steps) of every bond."""
        return self.geometry().n

    def jmax(self) -> np.ndarray:
        """Half width ``jmax`` of every bond's tree (width ``2 jmax + 1``)."""
        return self.geometry().jmax

    def widths(self) -> np.ndarray:
        """Tree width ``2 jmax + 1`` of every bond."""
        return 2 * self.jmax() + 1

    # --- validation --------------------------------------------------------------------------------
    def validate(self, curves: Sequence[YieldCurve], max_width: int = DEFAULT_MAX_WIDTH,
                 max_steps: int = DEFAULT_MAX_STEPS) -> list[tuple[int, str, str]]:
        """Every problem as ``(row, field, message)``, in row order; empty when all is well.

        ``max_width`` and ``max_steps`` (at most 65535, the file format's) bound each tree's width and height.
        """
        key = ("problems", len(curves), int(max_width), int(max_steps))
        if key not in self._cache:
            self._cache[key] = _find_problems(self, len(curves), int(max_width), min(int(max_steps), _STEP_LIMIT))
        return list(self._cache[key])

    def good_rows(self, curves: Sequence[YieldCurve], max_width: int = DEFAULT_MAX_WIDTH,
                  max_steps: int = DEFAULT_MAX_STEPS) -> np.ndarray:
        """Indices of the bonds :meth:`validate` finds no problem in, ascending."""
        bad = [row for row, _f, _m in self.validate(curves, max_width, max_steps) if row is not None]
        return np.setdiff1d(np.arange(len(self)), bad)


def flatten_curves(curves: Sequence[YieldCurve]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The curves as the file's three arrays: points per curve, all rates, all days."""
    if not curves:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
    terms = np.array([len(c) for c in curves], dtype=np.int64)
    return terms, np.concatenate([c.rates for c in curves]), np.concatenate([c.days for c in curves])


def _find_problems(p: BondPortfolio, n_curves: int, max_width: int, max_steps: int) -> list[tuple[int, str, str]]:
    """Value checks; each message names the field and the value (the row is added by InputError)."""
    problems: list[tuple[int, str, str]] = list(p._read_problems)
    read = np.ones(len(p), dtype=bool)  # bonds whose every cell could be read (the others have their message)
    read[[row for row, _f, _m in problems]] = False

    def bad(mask: np.ndarray, field: str, text: str) -> None:
        values = getattr(p, field)
        for row in np.flatnonzero(mask & read):
            problems.append((int(row), field, f"{field} {text}, got {show(values[row])}"))

    with np.errstate(invalid="ignore"):
        for field in ("a", "sigma", "maturity", "spread", "strike"):
            bad(~np.isfinite(getattr(p, field)), field, "must be a finite number")
        bad((p.term_steps < 1) | (p.term_steps > _STEP_LIMIT), "term_steps", "must be in 1..65535")
        bad((p.term_unit < YEAR_DAYS[0]) | (p.term_unit > YEAR_DAYS[1]), "term_unit",
            f"must be a year of {YEAR_DAYS[0]} to {YEAR_DAYS[1]} days (the paper's lattice counts one term unit a "
            "year: give the steps a year in term_steps, e.g. term_unit 360 and term_steps 12 for monthly steps)")
        bad(p.a <= 0, "a", "must be > 0")
        bad(p.sigma <= 0, "sigma", "must be > 0")
        bad(p.sigma > SIGMA_LIMIT, "sigma", f"must be at most {SIGMA_LIMIT:g} (an absolute short-rate volatility of 100 "
            "percentage points a year; beyond it the trees' values leave the floating-point range)")
        bad(p.maturity <= 0, "maturity", "must be > 0")
        bad(p.strike < 0, "strike", "must be >= 0")
        bad((p.exercise_frequency < 1) | (p.exercise_frequency > _STEP_LIMIT), "exercise_frequency",
            f"must be in 1..{_STEP_LIMIT}")
        bad((p.first_exercise < 0) | (p.first_exercise > _STEP_LIMIT), "first_exercise", f"must be in 0..{_STEP_LIMIT}")
        bad((p.last_exercise < 0) | (p.last_exercise > _STEP_LIMIT), "last_exercise", f"must be in 0..{_STEP_LIMIT}")
        # An empty window (first > last) is an error unless the bond has listed points: then it means no window.
        for row in np.flatnonzero((p.first_exercise > p.last_exercise) & (p.exercise_count == 0) & read):
            problems.append((int(row), "last_exercise", f"last_exercise must be >= first_exercise "
                             f"({int(p.first_exercise[row])}), got {int(p.last_exercise[row])}"))
        bad((p.curve_index < 0) | (p.curve_index >= n_curves), "curve_index",
            f"must name one of the {n_curves} yield curves (0..{n_curves - 1})")
        for row in np.flatnonzero((p.option_type != CALL) & (p.option_type != PUT) & read):
            shown = p._unknown_types.get(int(row), str(int(p.option_type[row])))
            problems.append((int(row), "option_type", f"option_type must be {CALL} (call) or {PUT} (put), got {shown}"))
        owner = np.repeat(np.arange(len(p)), p.cashflow_count)
        for field in ("repayment", "coupon"):
            values = getattr(p, field)
            with np.errstate(invalid="ignore"):
                wrong = ~(np.isfinite(values) & (values >= 0))
            if field == "coupon" and p._signed_coupons is not None:  # a swap's fixed leg may pay a negative rate
                wrong &= ~(p._signed_coupons[owner] & np.isfinite(values))
            for k in np.flatnonzero(wrong & read[owner]):
                problems.append((int(owner[k]), field, f"{field} of cash flow {k - p.cashflow_offset[owner[k]]} "
                                 f"must be a finite number >= 0 (an amount the bond pays), got {values[k]}"))
        point_owner = np.repeat(np.arange(len(p)), p.exercise_count)
        prices = p.exercise_price
        with np.errstate(invalid="ignore"):
            wrong = ~(np.isfinite(prices) & (prices >= 0))
        if p._signed_coupons is not None:  # a floating bond's price net of its next period's principal
            wrong &= ~(p._signed_coupons[point_owner] & np.isfinite(prices))
        for k in np.flatnonzero(wrong & read[point_owner]):
            problems.append((int(point_owner[k]), "exercise_price", f"exercise_price of exercise point "
                             f"{k - p.exercise_offset[point_owner[k]]} must be a finite number >= 0 (a dirty price per "
                             f"100 face), got {prices[k]}"))
    problems += _piece_problems(p, read)
    checked = np.ones(len(p), dtype=bool)
    checked[[row for row, _f, _m in problems]] = False
    with np.errstate(invalid="ignore", over="ignore"):
        geometry = p.geometry()
    n, width = geometry.n, 2 * geometry.jmax + 1
    for row in np.flatnonzero(checked & ((n < 1) | (n > max_steps))):
        steps = "more than 2**40" if n[row] < 0 else str(int(n[row]))
        problems.append((int(row), "maturity", f"maturity gives a tree of {steps} steps, outside 1..{max_steps} "
                         f"(maturity {show(p.maturity[row])} at {int(p.term_steps[row])} steps per term)"))
        checked[row] = False
    for row in np.flatnonzero(checked & ((width < 3) | (width > max_width))):
        problems.append((int(row), "a", f"a gives a tree of width {int(width[row])}, outside 3..{max_width} "
                         f"(a={show(p.a[row])})"))
    def first_of_each_bond(items: np.ndarray, owner: np.ndarray, field: str, message: Callable[[int, int], str]) -> None:
        """A problem for the first of ``items`` (a cash flow's or listed point's index) of each bond that has none
        yet, ``message(item, row)``."""
        for k in items.tolist():
            row = int(owner[k])
            if checked[row]:
                problems.append((row, field, message(k, row)))
                checked[row] = False

    # Cash-flow schedules: steps ascending, within 1..n, the last one at the maturity step n.
    owner = np.repeat(np.arange(len(p)), p.cashflow_count)
    steps = p.cashflow_step
    last = p.cashflow_offset[1:] - 1
    times = p.cashflow_time
    timed = np.isfinite(times)
    # flows with times may share a step (several between two steps of a coarse tree), their times ascending
    shared = timed[1:] & timed[:-1] & (np.diff(steps) == 0) & (np.diff(np.where(timed, times, 0.0)) > 0)
    descending = np.flatnonzero((np.diff(steps) <= 0) & ~shared & (owner[1:] == owner[:-1])) + 1
    first_of_each_bond(descending, owner, "cashflow_step", lambda k, row: (
        f"cashflow_step must be strictly ascending: cash flow {k - p.cashflow_offset[row]} at step {int(steps[k])} "
        f"follows step {int(steps[k - 1])}"))
    first_of_each_bond(np.flatnonzero(steps < 1), owner, "cashflow_step", lambda k, row: (
        f"cashflow_step must be >= 1 (a cash flow at step 0 is never paid), got {int(steps[k])} for cash flow "
        f"{k - p.cashflow_offset[row]}"))
    if timed.any():  # a flow's time is between the step before its step and its step
        dt = geometry.dt[owner].astype(np.float64)
        with np.errstate(invalid="ignore"):
            outside = timed & ~((times > (steps - 1) * dt) & (times <= steps * dt * (1 + 1e-12)))
        outside |= ~np.isfinite(times) & ~np.isnan(times)
        first_of_each_bond(np.flatnonzero(outside), owner, "cashflow_time", lambda k, row: (
            f"cashflow_time of cash flow {k - p.cashflow_offset[row]} must be after step {int(steps[k]) - 1} and at "
            f"most step {int(steps[k])} (its cashflow_step) at {show(dt[k])} years a step, got {show(times[k])}"))
    for row in np.flatnonzero(checked):
        if steps[last[row]] != n[row]:
            problems.append((int(row), "cashflow_step", f"the last cashflow_step must be the maturity step "
                             f"{int(n[row])}, got {int(steps[last[row]])}"))
            checked[row] = False
    # The exercise window must end by the maturity step (the last cash flow): a right after it is never exercised.
    for row in np.flatnonzero(checked & (p.last_exercise > n)):
        problems.append((int(row), "last_exercise", f"last_exercise must be at most the maturity step {int(n[row])} "
                         f"(the bond's last cash flow; a right after it could never be exercised), got "
                         f"{int(p.last_exercise[row])}"))
    # Listed exercise points: steps strictly ascending within the bond, each in 1..n.
    points = p.exercise_step
    first_of_each_bond(np.flatnonzero((np.diff(points) <= 0) & (point_owner[1:] == point_owner[:-1])) + 1,
                       point_owner, "exercise_step", lambda k, row: (
        f"exercise_step must be strictly ascending: exercise point {k - p.exercise_offset[row]} at step "
        f"{int(points[k])} follows step {int(points[k - 1])}"))
    first_of_each_bond(np.flatnonzero((points < 1) | (points > n[point_owner])), point_owner, "exercise_step",
                       lambda k, row: (f"exercise_step must be in 1..{int(n[row])} (the bond's tree height), got "
                                       f"{int(points[k])} for exercise point {k - p.exercise_offset[row]}"))
    dates = p.exercise_time
    if np.isfinite(dates).any():  # a point's time is at or after its step, before the next
        dt = geometry.dt[point_owner].astype(np.float64)
        with np.errstate(invalid="ignore"):
            outside = np.isfinite(dates) & ~((dates >= points * dt * (1 - 1e-12)) & (dates < (points + 1) * dt))
        outside |= np.isinf(dates)
        first_of_each_bond(np.flatnonzero(outside), point_owner, "exercise_time", lambda k, row: (
            f"exercise_time of exercise point {k - p.exercise_offset[row]} must be at or after its step "
            f"{int(points[k])} and before the next at {show(dt[k])} years a step, got {show(dates[k])}"))
    problems.sort(key=lambda item: item[0])
    return problems


def _cashflow_numeric(name: str, values: npt.ArrayLike, counts: np.ndarray, item: str = "cash flow") -> np.ndarray:
    """A cash-flow (or listed exercise point's, ``item``) field as :func:`_numeric` reads it, its problems named by
    bond row and the item's place in that bond's list (not by the index into all the book's items)."""
    try:
        return _numeric(name, values, integer=name in (*_INTEGER_FIELDS, *_LISTED_INTEGER_FIELDS))
    except InputError as err:
        owner = np.repeat(np.arange(counts.size), np.maximum(counts, 0))
        first = np.concatenate(([0], np.cumsum(np.maximum(counts, 0))))
        named = []
        for k, field, message in err.errors:
            if k is None or k >= owner.size:
                named.append((None, field, f"{item} {k} of the book: {message}"))
            else:
                bond = int(owner[k])
                named.append((bond, field, f"{item} {k - int(first[bond])} of the bond: {message}"))
        raise InputError(named) from None


def _listed_arrays(fields: Mapping[str, npt.ArrayLike], n_bonds: int) -> dict[str, np.ndarray]:
    """The listed exercise points' fields as given (:data:`LISTED_FIELDS`), each left out one meaning none."""
    if "exercise_count" in fields:
        counts = _numeric("exercise_count", fields["exercise_count"], integer=True)
    else:
        counts = np.zeros(n_bonds, dtype=np.int64)
    arrays = {"exercise_count": counts}
    for name in POINT_FIELDS:
        if name in fields:
            arrays[name] = _cashflow_numeric(name, fields[name], counts, item="exercise point")
        else:
            arrays[name] = np.zeros(0, dtype=np.int64 if name in _LISTED_INTEGER_FIELDS else np.float64)
    return arrays


def _numeric(name: str, values: npt.ArrayLike, integer: bool) -> np.ndarray:
    """One field as float64 (:func:`~trinom.instruments.columns.as_float_column`), or int64 where it must be whole."""
    if integer and isinstance(values, np.ndarray) and values.dtype.kind in "iu" and values.ndim == 1:
        whole = values.astype(np.int64)  # integers already (a lowering's steps): one copy, no float round trip
        bad = np.flatnonzero(np.abs(whole) > 2**31)
        if bad.size:
            raise InputError([(int(r), name, f"{name} must be a whole number, got {int(whole[r])}") for r in bad])
        return whole
    floats = as_float_column(name, values)
    if not integer:
        return floats
    bad = np.flatnonzero(~np.isfinite(floats) | (floats != np.round(floats)) | (np.abs(floats) > 2**31))
    if bad.size:
        raise InputError([(int(r), name, f"{name} must be a whole number, got {show(floats[r])}") for r in bad])
    return floats.astype(np.int64)


def _piece_problems(p: BondPortfolio, read: np.ndarray) -> list[tuple[int, str, str]]:
    """The sigma pieces' problems (:meth:`BondPortfolio.with_sigma_pieces`), one a bond: steps ascending and > 0,
    each sigma as a bond's own, and the pieces within a factor sqrt(3) of each other over the tree's steps."""
    pieces = p.sigma_pieces()
    if pieces is None:
        return []
    found: list[tuple[int, str, str]] = []
    n = p.geometry().n  # the pieces do not move a tree's height
    for row in np.flatnonzero(read & (pieces.counts > 0)).tolist():
        lo, hi = int(pieces.offset[row]), int(pieces.offset[row + 1])
        steps, values = pieces.step[lo:hi], pieces.sigma[lo:hi]
        if (steps < 1).any() or (np.diff(steps) <= 0).any():
            found.append((row, "sigma_pieces", f"sigma pieces' steps must be ascending and >= 1, got {steps.tolist()}"))
        elif not (np.isfinite(values) & (values > 0) & (values <= SIGMA_LIMIT)).all():
            found.append((row, "sigma_pieces", f"sigma pieces must be finite numbers in (0, {SIGMA_LIMIT:g}], got "
                          f"{values.tolist()}"))
        elif np.isfinite(p.sigma[row]) and p.sigma[row] > 0:
            used = np.concatenate([[p.sigma[row]], values[steps < max(int(n[row]), 1)]])
            ratio = float(used.max() / used.min())
            if ratio * ratio > MAX_VARIANCE_RATIO * (1 + 1e-12):
                found.append((row, "sigma_pieces", f"sigma pieces range from {show(used.min())} to {show(used.max())}, "
                              f"a factor {ratio:.4g}: one tree holds pieces within a factor {MAX_VARIANCE_RATIO ** 0.5:.4g} "
                              "(sqrt(3)) of each other (docs/model.md §1.17)"))
    return found


def _renumbered(parts: Sequence[Any]) -> tuple[tuple[int | None, str, str], ...]:
    """The read problems of ``parts`` (portfolios laid one after the other), their rows numbered in the whole."""
    problems, start = [], 0
    for part in parts:
        problems += [(None if row is None else row + start, field, message)
                     for row, field, message in part._read_problems]
        start += len(part)
    return tuple(problems)
