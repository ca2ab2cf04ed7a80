"""The yield curve: continuously compounded zero rates at times in days."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import InputError

#: Largest day a curve point may have: the kernels hold days as int32.
MAX_DAYS = 2**31 - 1
#: The thesis' 15-point curve (Hull, Example 30.1): zero rates at days (:meth:`YieldCurve.thesis`). The package also
#: ships it in Futhark's text arrays (``trinom/data/thesis-yield.in``, read by ``io``; a test checks that the two
#: agree): the model imports no file format.
THESIS_RATES: tuple[float, ...] = (0.0501772, 0.0498284, 0.0497234, 0.0496157, 0.0499058, 0.0509389, 0.0579733,
                                   0.0630595, 0.0673464, 0.0694816, 0.0708807, 0.0727527, 0.0730852, 0.0739790,
                                   0.0749015)
THESIS_DAYS: tuple[int, ...] = (3, 31, 62, 94, 185, 367, 731, 1096, 1461, 1826, 2194, 2558, 2922, 3287, 3653)


@dataclass(frozen=True, eq=False)
class YieldCurve:
    """A zero curve: ``rates[k]`` (continuously compounded) holds at ``days[k]`` days.

    Between points the rate is linear in days; before the first point and after the last it
    is flat, as in the thesis (see :meth:`rate_at`).

    >>> curve = YieldCurve(rates=[0.05, 0.06], days=[360, 720])
    >>> round(float(curve.rate_at(np.array([1.5]), 360)[0]), 12)
    0.055
    """

    rates: npt.NDArray[np.float64]
    days: npt.NDArray[np.int64]

    def __init__(self, rates: npt.ArrayLike, days: npt.ArrayLike):
        """``rates`` and ``days``: flat sequences of numbers of one length (days whole, strictly increasing); any
        other is an :class:`InputError` naming the field and the point."""
        r = _numbers("rates", "rate", rates)
        d_raw = _numbers("days", "days", days)
        problems: list[tuple[int | None, str, str]] = []
        if r.size == 0:
            problems.append((None, "rates", "yield curve is empty"))
        if r.size != d_raw.size:
            problems.append((None, "days", f"yield curve has {r.size} rates but {d_raw.size} days"))
        for k in np.flatnonzero(~np.isfinite(r)):
            problems.append((None, "rates", f"yield curve point {k}: rate must be finite, got {r[k]}"))
        for k in np.flatnonzero(~np.isfinite(d_raw) | (d_raw != np.round(d_raw))):
            problems.append((None, "days", f"yield curve point {k}: days must be a whole number, got {d_raw[k]}"))
        with np.errstate(invalid="ignore"):
            out_of_range = np.flatnonzero(np.isfinite(d_raw) & ((d_raw < 0) | (d_raw > MAX_DAYS)))
        for k in out_of_range:  # the kernels hold days as int32: a larger day would wrap around
            problems.append((None, "days", f"yield curve point {k}: days must be in 0..{MAX_DAYS}, got {d_raw[k]:.0f}"))
        if not problems:
            for k in np.flatnonzero(np.diff(d_raw) <= 0):
                problems.append((None, "days", f"yield curve days must be strictly increasing: "
                                 f"point {k + 1} has {int(d_raw[k + 1])} after {int(d_raw[k])}"))
        if problems:
            raise InputError(problems)
        object.__setattr__(self, "rates", r)
        object.__setattr__(self, "days", d_raw.astype(np.int64))
        r.setflags(write=False)
        self.days.setflags(write=False)

    @classmethod
    def thesis(cls) -> YieldCurve:
        """The thesis' 15-point curve (Hull, Example 30.1), shipped with the package."""
        return cls(np.array(THESIS_RATES), np.array(THESIS_DAYS, dtype=np.float64))

    def __len__(self) -> int:
        return int(self.rates.size)

    def __repr__(self) -> str:
        return f"YieldCurve({len(self)} points, days {self.days[0]}..{self.days[-1]})"

    def rate_at(self, t_years: npt.ArrayLike, term_unit: npt.ArrayLike, dtype: npt.DTypeLike = np.float64) -> np.ndarray:
        """Interpolated zero rate at ``t_years * term_unit`` days (the thesis' ``getYieldAtYear``).

        The time is rounded to whole days half away from zero (C's ``round``), computed in
        ``dtype`` as the thesis does in its ``real`` type.
        """
        dt = np.dtype(dtype)
        t = np.asarray(t_years, dtype=dt)
        days_f = t * np.asarray(term_unit).astype(dt)
        t_days = (np.sign(days_f) * np.floor(np.abs(days_f) + dt.type(0.5))).astype(np.int64)
        rates = self.rates.astype(dt)
        second = np.searchsorted(self.days, t_days, side="left")
        first = np.maximum(second - 1, 0)
        inner = np.clip(second, 1, len(self) - 1) if len(self) > 1 else np.zeros_like(second)
        t1 = self.days[first]
        t2 = self.days[inner]
        coefficient = (t_days - t1).astype(dt) / np.maximum(t2 - t1, 1).astype(dt)
        interpolated = rates[first] + coefficient * (rates[inner] - rates[first])
        return np.where(second == 0, rates[0], np.where(second >= len(self), rates[-1], interpolated)).astype(dt)

    def discount_at(self, days: npt.ArrayLike, *, days_in_year: float) -> np.ndarray:
        """Discount factors ``exp(-r t)`` at whole ``days`` (the zero rate read there, :meth:`rate_at`), ``t`` being
        ``days / days_in_year`` years: the curve as a tree of that term unit reads it.

        >>> float(YieldCurve(rates=[0.03], days=[365]).discount_at([730], days_in_year=365)[0]) == float(np.exp(-0.06))
        True
        """
        t = np.asarray(days, dtype=np.float64) / float(days_in_year)
        return np.exp(-self.rate_at(t, days_in_year) * t)


def discount_factors(curves: Sequence[YieldCurve], index: npt.ArrayLike, days: npt.ArrayLike, *,
                     days_in_year: float) -> np.ndarray:
    """Each element's discount factor at ``days`` on its curve ``curves[index]`` (:meth:`YieldCurve.discount_at`).

    >>> curves = [YieldCurve([0.03], [365]), YieldCurve([0.04], [365])]
    >>> discount_factors(curves, [1, 0], [365, 365], days_in_year=365).round(6).tolist()
    [0.960789, 0.970446]
    """
    index = np.asarray(index, dtype=np.int64).reshape(-1)
    days = np.broadcast_to(np.asarray(days, dtype=np.float64).reshape(-1), index.shape)
    out = np.empty(index.size)
    for k in np.unique(index).tolist():
        mine = np.flatnonzero(index == k)
        out[mine] = curves[k].discount_at(days[mine], days_in_year=days_in_year)
    return out


def _numbers(field: str, what: str, values: npt.ArrayLike) -> np.ndarray:
    """A curve column as a flat float64 array; a value that is no number is an InputError naming its point."""
    if isinstance(values, (str, bytes, Mapping)) or values is None:
        raise InputError([(None, field, f"yield curve {field} must be a sequence of numbers, got {values!r}")])
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu" and values.ndim <= 1:  # the common case
        return values.astype(np.float64).reshape(-1)
    try:
        items = np.asarray(values, dtype=object)
    except (TypeError, ValueError):  # ragged nesting
        raise InputError([(None, field, f"yield curve {field} must be a flat sequence of numbers")]) from None
    if items.ndim > 1:
        raise InputError([(None, field, f"yield curve {field} must be a flat sequence of numbers, got an array of shape "
                           f"{items.shape}")])
    for k, value in enumerate(items.reshape(-1).tolist()):  # None, text or a nested list is no number
        if isinstance(value, (str, bytes, bool)) or value is None or not _is_number(value):
            raise InputError([(None, field, f"yield curve point {k}: {what} must be a number, got {value!r}")])
    return np.asarray(values, dtype=np.float64).reshape(-1) if items.size else np.zeros(0)


def _is_number(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True
