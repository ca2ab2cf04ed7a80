"""A term structure of Hull-White volatility: ``sigma(t)`` constant between dates (issue 37, item 3).

``Sigma(times, values)``: ``values[k]`` holds from ``times[k - 1]`` (0 for the first) until ``times[k]``, the last
value open-ended, times in ACT/365F years from the as-of date (``Sigma.on_dates`` takes dates). A batch holds one
step function a row: ``times`` ``(n, p - 1)`` (rows with fewer steps padded with ``inf``), ``values`` ``(n, p)``; one
row stands for every row. With ``a`` constant the closed forms keep their shape (:mod:`trinom.model.hull_white`):
the short rate's variance ``V(t) = int_0^t sigma(u)^2 exp(-2 a (t - u)) du``, a sum over the pieces, takes the place of
``sigma^2 (1 - exp(-2 a t)) / (2 a)``; ``B(t, T)`` does not change. So a zero-coupon bond option expiring at ``T`` has
the standard deviation ``sqrt(V(T)) B(T, S)``, and caplets and Jamshidian's decomposition follow (QuantLib's ``Gsr``
model, whose ``Gaussian1dJamshidianSwaptionEngine`` prices the same swaptions).

>>> s = Sigma(times=[1.0, 3.0], values=[0.01, 0.012, 0.008])
>>> float(s.variance(a=0.0, t=2.0)) == 0.01 ** 2 * 1.0 + 0.012 ** 2 * 1.0
True
>>> s.values_at([0.5, 1.0, 5.0]).tolist()
[0.01, 0.012, 0.008]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import InputError


@dataclass(frozen=True, eq=False)
class Sigma:
    """Piecewise-constant volatility, one step function a row (see the module)."""

    times: np.ndarray  #: ``(n, p - 1)``: where each piece but the last ends, ascending (``inf``: padding)
    values: np.ndarray  #: ``(n, p)``: each piece's sigma (> 0)

    def __init__(self, times: npt.ArrayLike, values: npt.ArrayLike):
        values = np.atleast_2d(np.asarray(values, dtype=np.float64))
        times = np.asarray(times, dtype=np.float64)
        times = times.reshape(values.shape[0], -1) if times.size else np.zeros((values.shape[0], 0))
        problems = []
        if times.shape[1] != values.shape[1] - 1:
            problems.append((None, "sigma", f"a step function of {values.shape[1]} values needs {values.shape[1] - 1} "
                             f"times (where each piece but the last ends), got {times.shape[1]}"))
        else:
            for row in np.flatnonzero(~np.all(np.isfinite(values) & (values > 0), axis=1)):
                problems.append((int(row), "sigma", f"every piece's sigma must be a finite number > 0, got "
                                 f"{values[row].tolist()}"))
            with np.errstate(invalid="ignore"):
                padded = np.isinf(times) & (times > 0)  # padding: only after the row's last end
                steps = np.diff(times, axis=1) > 0
                ordered = np.all(steps | padded[:, 1:], axis=1) & np.all(~padded[:, :-1] | padded[:, 1:], axis=1)
                bad = ~ordered | np.any(np.isnan(times) | (times <= 0), axis=1)
            for row in np.flatnonzero(bad):
                problems.append((int(row), "until", f"the pieces' ends must be after the as-of date and increasing, "
                                 f"got {times[row].tolist()}"))
        if problems:
            raise InputError(problems)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "values", values)

    @classmethod
    def on_dates(cls, as_of: object, dates: npt.ArrayLike, values: npt.ArrayLike) -> Sigma:
        """The step function whose pieces end on ``dates`` (ACT/365F from ``as_of``; one row, or ``(n, p - 1)``)."""
        from ..conventions.dates import to_days

        raw = np.asarray(dates, dtype=object)
        days, problems = to_days(raw.reshape(-1), field="until")
        start, more = to_days(np.asarray([as_of], dtype=object), field="as_of")
        if problems or more:
            raise InputError(problems + more)
        return cls(((days - start[0]) / 365.0).reshape(raw.shape), values)

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def take(self, rows: npt.ArrayLike) -> Sigma:
        """The step functions of ``rows`` (one row stands for every row)."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if len(self) == 1:
            rows = np.zeros(rows.size, dtype=np.int64)
        made = object.__new__(Sigma)
        object.__setattr__(made, "times", self.times[rows])
        object.__setattr__(made, "values", self.values[rows])
        return made

    def values_at(self, t: npt.ArrayLike) -> np.ndarray:
        """Each row's sigma at ``t`` (a piece holds up to, not including, its end)."""
        t = np.asarray(t, dtype=np.float64)
        row_t = t.reshape(len(self), -1) if len(self) > 1 else t.reshape(1, -1)
        piece = np.sum(row_t[:, :, None] >= self.times[:, None, :], axis=2)
        return np.take_along_axis(self.values, piece, axis=1).reshape(t.shape)

    def variance(self, *, a: npt.ArrayLike, t: npt.ArrayLike) -> np.ndarray:
        """``V(t) = int_0^t sigma(u)^2 exp(-2 a (t - u)) du`` per element of ``t`` (shape ``(n, ...)`` or any shape
        with one row); ``a`` broadcasts against ``t``."""
        t = np.asarray(t, dtype=np.float64)
        a = np.broadcast_to(np.asarray(a, dtype=np.float64), t.shape)
        rows = len(self)
        shape = t.shape
        flat_t = t.reshape(rows, -1) if rows > 1 else t.reshape(1, -1)
        flat_a = a.reshape(flat_t.shape)
        starts = np.concatenate([np.zeros((rows, 1)), self.times], axis=1)  # each piece's start
        ends = np.concatenate([self.times, np.full((rows, 1), np.inf)], axis=1)
        lo = np.minimum(starts[:, None, :], flat_t[:, :, None])
        hi = np.minimum(ends[:, None, :], flat_t[:, :, None])
        tau = flat_t[:, :, None] - hi
        two_a = 2.0 * flat_a[:, :, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            width = hi - lo  # the piece's part before t, weighted (1 - exp(-2 a width)) / (2 a) (width where a is 0)
            factor = np.where(two_a == 0, width, -np.expm1(-two_a * width) / np.where(two_a == 0, 1.0, two_a))
            piece = np.exp(-two_a * tau) * factor
        total = np.sum(np.where(hi > lo, self.values[:, None, :] ** 2 * piece, 0.0), axis=2)
        return total.reshape(shape)


def as_sigma(sigma: npt.ArrayLike | Sigma) -> Sigma | None:
    """``sigma`` where it is a step function, None where it is a number (or numbers) per row."""
    return sigma if isinstance(sigma, Sigma) else None


__all__ = ["Sigma", "as_sigma"]
