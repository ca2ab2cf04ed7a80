"""Dated discount curves: pillars at dates with discount factors or zero rates, an as-of date, and their
conversion to and from :class:`trinom.YieldCurve` (whole days). ``curve.csv`` / Parquet files of them are read by
:func:`trinom.io.curve_files.read_dated_curves` (also ``trinom.model.read_dated_curves``).

Time is ACT/365F from the as-of date: ``t = (date - as_of) / 365`` years; zero rates are continuously
compounded, ``DF(t) = exp(-z(t) t)``.

* ``interpolation="log-linear-discount"`` (default): ``log DF`` is linear in ``t`` between pillars
  (piecewise-flat forward rates);
* ``interpolation="linear-zero"``: ``z`` is linear in ``t`` between pillars.

Outside the pillars the zero rate is flat in both: before the first pillar after the as-of date it is that
pillar's (the same as log-linear interpolation from ``DF(0) = 1``), after the last the last one's.

:meth:`DatedCurve.to_yield_curve` gives the :class:`trinom.YieldCurve` that the trees take (zero rates at whole
days, linear in days between points, flat outside) with the dated curve's discount factors at every whole
day, ``exp(-R(d) d / days_in_year) == DF(d / days_in_year)`` to rounding: a point at every day from 1 to the
first whole day at or after the last pillar for log-linear interpolation (between dated pillars the zero rate
of log-linear discount factors is not linear in days), and just the pillars for linear zero rates (which are
linear in days: the same curve). :meth:`DatedCurve.from_yield_curve` reads a YieldCurve's day ``d`` as the date
``as_of + d`` and interpolates its zero rates linearly: the same discount factors at every whole day.

>>> curve = DatedCurve(as_of="2025-01-02", dates=["2026-01-02", "2030-01-02"], discount_factors=[0.96, 0.80])
>>> round(float(curve.discount(["2028-01-02"])[0]), 12), round(float(curve.zero_rate([1.0])[0]), 12)
(0.876410774962, 0.04082199452)
>>> yc = curve.to_yield_curve()
>>> len(yc), abs(float(np.exp(-yc.rate_at([3.0], 365)[0] * 3.0)) - float(curve.discount([3.0])[0])) < 1e-12
(1826, True)
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt

from ..conventions.compounding import SIMPLE, discount_factors, parse_compoundings
from ..conventions.dates import as_dates, to_days
from ..conventions.day_counts import ACT_360, ACT_365F, ACT_ACT_ICMA, fractions_by_code, parse_day_counts
from ..errors import InputError
from .curve import MAX_DAYS, YieldCurve

#: Days of an ACT/365F year.
DAYS_PER_YEAR: Final[float] = 365.0
#: The interpolation schemes.
INTERPOLATIONS: Final[tuple[str, ...]] = ("log-linear-discount", "linear-zero")
#: The years of daily pillars a flat-forward curve whose discount factors are not one continuous ACT/365F rate has.
FLAT_YEARS: Final[int] = 100
#: How far a discount factor given at the as-of date may be from 1.
AS_OF_TOLERANCE: Final[float] = 1e-12


class DatedCurve:
    """A discount curve on dates (see the module's documentation).

    Args:
      as_of: the curve's date (``t = 0``, ``DF = 1``).
      dates: the pillars' dates, strictly increasing, none before ``as_of``.
      discount_factors: the pillars' discount factors (> 0; 1 at ``as_of``); or
      zero_rates: the pillars' continuously compounded ACT/365F zero rates (one of the two).
      interpolation: ``"log-linear-discount"`` or ``"linear-zero"``.
      name: for messages.
    """

    def __init__(self, *, as_of: object, dates: npt.ArrayLike, discount_factors: npt.ArrayLike | None = None,
                 zero_rates: npt.ArrayLike | None = None, interpolation: str = "log-linear-discount", name: str = ""):
        label = f"dated curve {name!r}" if name else "dated curve"
        if interpolation not in INTERPOLATIONS:
            raise InputError([(None, "interpolation", f"{label}: interpolation must be one of "
                               f"{', '.join(INTERPOLATIONS)}, got {interpolation!r}")])
        if (discount_factors is None) == (zero_rates is None):
            raise InputError([(None, "discount", f"{label}: give either discount_factors or zero_rates")])
        as_of_days, problems = to_days([as_of], field="as_of")
        days, more = to_days(dates, field="date")
        problems += more
        field = "discount" if discount_factors is not None else "zero"
        values = _numbers(discount_factors if discount_factors is not None else zero_rates, field, label)
        if problems:
            raise InputError([(None, f, f"{label} point {row}: {message}") for row, f, message in problems])
        problems = []
        if days.size == 0:
            problems.append((None, "date", f"{label} has no points"))
        if values.size != days.size:
            problems.append((None, field, f"{label} has {days.size} dates but {values.size} {field} values"))
        if problems:
            raise InputError(problems)
        shown = as_dates(days)
        for k in np.flatnonzero(~np.isfinite(values)):
            problems.append((None, field, f"{label} point {k} ({shown[k]}): {field} must be finite, got {values[k]}"))
        if field == "discount":
            for k in np.flatnonzero(np.isfinite(values) & (values <= 0)):
                problems.append((None, field, f"{label} point {k} ({shown[k]}): discount must be > 0, got {values[k]}"))
        for k in np.flatnonzero(days < as_of_days[0]):
            problems.append((None, "date", f"{label} point {k}: date {shown[k]} is before the as-of date "
                             f"{as_dates(as_of_days)[0]}"))
        for k in np.flatnonzero(np.diff(days) <= 0):
            problems.append((None, "date", f"{label} dates must be strictly increasing: point {k + 1} "
                             f"({shown[k + 1]}) after point {k} ({shown[k]})"))
        at_as_of = days == as_of_days[0]
        if field == "discount":
            for k in np.flatnonzero(at_as_of & (np.abs(values - 1.0) > AS_OF_TOLERANCE)):
                problems.append((None, field, f"{label} point {k}: the discount factor at the as-of date "
                                 f"{shown[k]} must be 1, got {values[k]}"))
            if not problems and at_as_of.all():
                problems.append((None, "date", f"{label}: a curve of discount factors needs a point after the "
                                 "as-of date"))
        if problems:
            raise InputError(problems)
        times = (days - as_of_days[0]) / DAYS_PER_YEAR
        positive = times > 0
        if field == "discount":
            discount = values.copy()
            zeros = np.empty_like(values)
            zeros[positive] = -np.log(values[positive]) / times[positive]
            zeros[~positive] = zeros[positive][0]  # the pillar at the as-of date: the flat rate before the next one
        else:
            zeros = values.copy()
            discount = np.exp(-zeros * times)
        odd = [(None, field, f"{label} point {k} ({shown[k]}): {why}") for k in np.flatnonzero(positive)
               if (why := implausible_rate(field, float(values[k]), float(times[k])))]
        if odd:  # the file reader's plausible range, for curves built in Python too (issue 35)
            raise InputError(odd)
        self.name = name
        self.as_of = as_dates(as_of_days)[0]
        self.dates = as_dates(days)
        self.times = times
        self.discount_factors = discount
        self.zero_rates = zeros
        self.interpolation = interpolation
        self._yield_curves: dict[int, YieldCurve] = {}  # to_yield_curve's, by days_in_year: the curve is immutable
        for array in (self.dates, self.times, self.discount_factors, self.zero_rates):
            array.setflags(write=False)

    def __len__(self) -> int:
        return int(self.dates.size)

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        return (f"DatedCurve({name}as of {self.as_of}, {len(self)} points {self.dates[0]}..{self.dates[-1]}, "
                f"{self.interpolation})")

    def year_fractions(self, when: npt.ArrayLike) -> np.ndarray:
        """ACT/365F years from the as-of date: of dates (``datetime64``, ``YYYY-MM-DD``, ``datetime.date``), or
        year fractions returned as they are; none may be before the as-of date (an InputError names the rows)."""
        raw = when if isinstance(when, np.ndarray) else np.asarray(when)
        if raw.dtype.kind in "iuf":
            t = raw.astype(np.float64).reshape(-1)
            bad = np.flatnonzero(~np.isfinite(t) | (t < 0))
            if bad.size:
                raise InputError([(int(k), "t", f"time {t[k]} must be a finite number of years >= 0") for k in bad])
            return t
        days, problems = to_days(raw, field="date")
        as_of = int(self.as_of.astype(np.int64))
        problems += [(int(k), "date", f"date {as_dates(days[k:k + 1])[0]} is before the as-of date {self.as_of}")
                     for k in np.flatnonzero(days < as_of)]
        if problems:
            raise InputError(sorted(problems, key=lambda p: p[0]))
        return (days - as_of) / DAYS_PER_YEAR

    def discount(self, when: npt.ArrayLike) -> np.ndarray:
        """Discount factors at dates or ACT/365F year fractions."""
        t = self.year_fractions(when)
        if self.interpolation == "linear-zero":
            return np.exp(-np.interp(t, self.times, self.zero_rates) * t)
        return np.exp(self._log_discount(t))

    def zero_rate(self, when: npt.ArrayLike) -> np.ndarray:
        """Continuously compounded ACT/365F zero rates at dates or year fractions (at ``t = 0``: the limit)."""
        t = self.year_fractions(when)
        if self.interpolation == "linear-zero":
            return np.interp(t, self.times, self.zero_rates)
        positive = t > 0
        rates = np.empty_like(t)
        rates[positive] = -self._log_discount(t[positive]) / t[positive]
        rates[~positive] = self.zero_rates[np.argmax(self.times > 0)] if (self.times > 0).any() else self.zero_rates[-1]
        return rates

    def _log_discount(self, t: np.ndarray) -> np.ndarray:
        """``log DF(t)``: linear between pillars, flat zero rates before the first and after the last."""
        log_df = np.log(self.discount_factors)
        inside = np.interp(t, self.times, log_df)
        before = -self.zero_rates[0] * t
        after = -self.zero_rates[-1] * t
        return np.where(t < self.times[0], before, np.where(t > self.times[-1], after, inside))

    def bumped(self, shift: float, pillar: int | None = None) -> DatedCurve:
        """This curve with ``shift`` added to every pillar's zero rate (``pillar`` None: a parallel shift) or to pillar
        ``pillar``'s only: a key-rate bump, full at that pillar's date and falling to nothing at its neighbours' (in
        ``log DF`` for log-linear discount factors, in the zero rate for linear zero rates), flat beyond the end
        pillars. The key-rate bumps of a curve add up to its parallel shift.

        >>> curve = DatedCurve(as_of="2025-01-02", dates=["2026-01-02", "2030-01-02"], zero_rates=[0.03, 0.04])
        >>> curve.bumped(1e-4, pillar=1).zero_rates.round(6).tolist()
        [0.03, 0.0401]
        """
        zeros = np.array(self.zero_rates, dtype=np.float64)
        if pillar is None:
            zeros += shift
        else:
            zeros[pillar] += shift
        return DatedCurve(as_of=self.as_of, dates=self.dates, zero_rates=zeros, interpolation=self.interpolation,
                          name=self.name)

    def to_yield_curve(self, *, days_in_year: int = 365) -> YieldCurve:
        """The :class:`trinom.YieldCurve` with this curve's discount factors at whole days, a day being
        ``1 / days_in_year`` ACT/365F years (365: calendar days after the as-of date).

        Log-linear discount factors: a point at every day from 1 to the first whole day at or after the last
        pillar (flat beyond it, as this curve). Linear zero rates with ``days_in_year=365``: the pillars.
        """
        if not isinstance(days_in_year, (int, np.integer)) or days_in_year <= 0:
            raise InputError([(None, "days_in_year", f"days_in_year must be a whole number > 0, got {days_in_year!r}")])
        if int(days_in_year) not in self._yield_curves:  # the same object each time: a priced book's plan is kept
            self._yield_curves[int(days_in_year)] = self._to_yield_curve(int(days_in_year))
        return self._yield_curves[int(days_in_year)]

    def _to_yield_curve(self, days_in_year: int) -> YieldCurve:
        last = self.times[-1] * days_in_year
        if self.interpolation == "linear-zero" and days_in_year == 365:
            days = np.round(self.times * DAYS_PER_YEAR).astype(np.int64)
            return YieldCurve(self.zero_rates, days)
        count = max(1, math.ceil(last - 1e-9))
        if count > MAX_DAYS:
            raise InputError([(None, "days_in_year", f"{count} days do not fit a YieldCurve")])
        days = np.arange(1, count + 1, dtype=np.int64)
        return YieldCurve(self.zero_rate(days / float(days_in_year)), days)

    @classmethod
    def from_yield_curve(cls, curve: YieldCurve, *, as_of: object, name: str = "") -> DatedCurve:
        """The dated curve of a :class:`trinom.YieldCurve` whose day ``d`` is the date ``as_of + d`` (term unit
        365): its zero rates at those dates, linear in between and flat outside, as the YieldCurve."""
        as_of_days, problems = to_days([as_of], field="as_of")
        if problems:
            raise InputError(problems)
        dates = as_dates(as_of_days[0] + curve.days)
        return cls(as_of=as_dates(as_of_days)[0], dates=dates, zero_rates=curve.rates, interpolation="linear-zero",
                   name=name)

    @classmethod
    def from_rates(cls, *, as_of: object, dates: npt.ArrayLike, rates: npt.ArrayLike,
                   compounding: npt.ArrayLike = "continuous", day_count: npt.ArrayLike = "ACT/365F",
                   interpolation: str = "log-linear-discount", name: str = "") -> DatedCurve:
        """A curve of zero rates as quoted: each pillar's discount factor is its rate's under its compounding over its
        day count's year fraction from ``as_of`` (QuantLib's ``InterestRate(r, dayCounter, compounding,
        frequency).discountFactor(as_of, date)``), exact at the pillars. The model's time stays ACT/365F: between
        pillars the curve interpolates those discount factors in ACT/365F years, as any curve.

        Args:
          compounding: ``continuous``, ``simple``, ``annual``, ``semiannual``, ``quarterly`` or ``monthly``, one or
            one per pillar (:mod:`trinom.conventions.compounding`).
          day_count: any day count but ACT/ACT-ICMA, one or one per pillar.

        >>> c = DatedCurve.from_rates(as_of="2025-01-02", dates=["2026-01-02", "2027-01-04"], rates=[0.04, 0.045],
        ...                           compounding="annual", day_count="ACT/360")
        >>> round(float(c.discount(["2026-01-02"])[0]), 12) == round(1.04 ** (-365 / 360), 12)
        True
        """
        label = f"dated curve {name!r}" if name else "dated curve"
        r = _numbers(rates, "rate", label)
        days, problems = to_days(dates, field="date")
        as_of_days, more = to_days([as_of], field="as_of")
        problems += more
        taus, codes, more = _quoted_terms(as_of_days, days, compounding, day_count)
        problems += more
        problems += [(None, "rate", f"{label} point {k}: {why}") for k in range(r.size)
                     if (why := implausible_rate("rate", float(r[k]), 0.0))]
        if problems:
            raise InputError(problems)
        if r.size != days.size:
            raise InputError([(None, "rate", f"{label} has {days.size} dates but {r.size} rates")])
        discount = discount_factors(rates=r, fractions=taus, codes=codes)
        bad = np.flatnonzero(~(discount > 0) | ~np.isfinite(discount))
        if bad.size:
            raise InputError([(None, "rate", f"{label} point {k}: rate {r[k]:g} over {taus[k]:.6g} years gives no "
                               f"discount factor > 0") for k in bad])
        return cls(as_of=as_of, dates=dates, discount_factors=discount, interpolation=interpolation, name=name)

    @classmethod
    def flat(cls, *, as_of: object, rate: float, compounding: str = "continuous", day_count: str = "ACT/365F",
             name: str = "") -> DatedCurve:
        """A flat-forward curve (QuantLib's ``FlatForward(as_of, rate, dayCounter, compounding, frequency)``): the
        discount factor at a date is the rate's over the day count's year fraction to it. Under ACT/365F or ACT/360
        with any compounding but ``simple`` that is one continuous ACT/365F rate, a curve of one pillar; otherwise
        (``simple``, a 30/360 or ACT/ACT day count) its discount factors are pillars at every day for
        :data:`FLAT_YEARS` years, flat in the zero rate beyond.

        >>> DatedCurve.flat(as_of="2025-01-02", rate=0.05, compounding="semiannual").zero_rates.round(12).tolist()
        [0.049385225181]
        """
        as_of_days, problems = to_days([as_of], field="as_of")
        codes, day_codes, more = quote_problems([compounding], [day_count])
        problems += [(None, field, message) for _row, field, message in more]
        if problems:
            raise InputError(problems)
        if int(day_codes[0]) in (ACT_360, ACT_365F) and int(codes[0]) != SIMPLE:  # its pillar FLAT_YEARS out: the
            dates = as_dates(as_of_days + round(FLAT_YEARS * DAYS_PER_YEAR))  # curve's last date bounds no instrument
        else:
            dates = as_dates(as_of_days[0] + np.arange(1, round(FLAT_YEARS * DAYS_PER_YEAR) + 1))
        return cls.from_rates(as_of=as_of, dates=dates, rates=np.full(dates.size, float(rate)),
                              compounding=compounding, day_count=day_count, name=name)


def quote_problems(compounding: npt.ArrayLike, day_count: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, list]:
    """Per quoted rate, the codes of its compounding and day count, and a ``(row, field, message)`` per bad name
    (ACT/ACT-ICMA, which needs a coupon schedule, is one): what ``curve.csv``'s reader and :meth:`DatedCurve.from_rates`
    check alike."""
    codes, problems = parse_compoundings(compounding)
    day_codes, more = parse_day_counts(day_count)
    problems += more
    problems += [(int(row), "day_count", "day_count ACT/ACT-ICMA needs a coupon schedule; a curve's rates take any "
                  "other") for row in np.flatnonzero(day_codes == ACT_ACT_ICMA)]
    return codes, day_codes, problems


def _quoted_terms(as_of_days: np.ndarray, days: np.ndarray, compounding: npt.ArrayLike,
                  day_count: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, list]:
    """Per pillar, its day count's year fraction from the as-of date and its compounding's code; the problems of
    bad names (:func:`quote_problems`)."""
    codes, day_codes, problems = quote_problems(compounding, day_count)
    for what, size in (("compounding", codes.size), ("day_count", day_codes.size)):
        if size not in (1, days.size):
            problems.append((None, what, f"{what}: {size} values for {days.size} pillars"))
    if problems or days.size == 0 or as_of_days.size == 0:
        return np.zeros(days.size), np.zeros(days.size, dtype=np.int64), [(None, f, m) for _r, f, m in problems]
    codes = np.broadcast_to(codes, days.shape)
    starts = np.full(days.shape, as_of_days[0])
    taus = fractions_by_code(starts, days, np.broadcast_to(day_codes, days.shape) if day_codes.size > 1
                             else int(day_codes[0]))
    return np.asarray(taus, dtype=np.float64), codes, []


def _numbers(values: object, field: str, label: str) -> np.ndarray:
    """A column of numbers as float64; a cell that is no number is an InputError naming its point."""
    try:
        return np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        cells = np.asarray(values, dtype=object).reshape(-1).tolist()
        bad = []
        for k, cell in enumerate(cells):
            try:
                float(cell)
            except (TypeError, ValueError):
                bad.append((None, field, f"{label} point {k}: {field} must be a number, got {cell!r}"))
        raise InputError(bad or [(None, field, f"{label}: {field} must be numbers")]) from None


# --- plausible values ----------------------------------------------------------------------------------------

#: The zero rates (continuous, decimal) a curve (or a curve file) may give or imply, negative rates included: outside them a
#: value is refused as a unit mistake (percent for decimals, or a discount factor no market has seen).
PLAUSIBLE_ZERO_RATES: tuple[float, float] = (-0.2, 1.0)


def implausible_rate(field: str, value: float, years: float) -> str:
    """Why a ``zero``, ``rate`` or ``discount`` cell is outside :data:`PLAUSIBLE_ZERO_RATES` (``""`` where it is not)."""
    low, high = PLAUSIBLE_ZERO_RATES
    if field in ("zero", "rate"):
        if low <= value <= high:
            return ""
        hint = (f": it looks like percent ({value:g}% is {value / 100:g})" if high < value <= 100 or -100 <= value < low
                else "")
        kind = "a continuous rate as a decimal" if field == "zero" else "a decimal"
        return f"{field} must be {kind} in {low:g}..{high:g} (0.025 for 2.5%), got {value:g}" + hint
    if years <= 0:
        return ""
    rate = -math.log(value) / years
    if low <= rate <= high:
        return ""
    return (f"discount {value:g} at {years:.3g} years implies a zero rate of {rate:.4g} ({100 * rate:.4g}%), outside "
            f"{low:g}..{high:g}: a discount factor is the value today of 1 paid on the date (0.97 at one year)")
