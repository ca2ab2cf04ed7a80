"""Market conventions, vectorised over a whole book: day counts, business-day conventions, holiday calendars,
coupon schedules, accrual fractions and accrued interest (issue 25), matching QuantLib 1.44.

Every function takes per-row NumPy arrays (dates as ``datetime64[D]``, ``YYYY-MM-DD`` text or
``datetime.date``; names as text) or one value for all rows, and works on the whole book at once: schedules
are one flat array of dates with per-bond offsets (CSR). Names are case-insensitive; the ``parse_*``
functions turn a column of names into codes plus one ``(row, field, message)`` per bad row, so that a reader
can report every bad row at once. See ``docs/conventions.md``.

>>> from trinom.conventions import generate_schedules, accrual_fractions, accrued_interest
>>> s = generate_schedules(effective=["2024-01-15", "2023-06-30"], termination=["2027-03-15", "2026-06-30"],
...                        frequency=[2, 4], calendar="TARGET", convention="MF", end_of_month=[False, True])
>>> s.counts.tolist(), [str(d) for d in s.dates(1)[:3]]
([8, 13], ['2023-06-30', '2023-09-29', '2023-12-29'])
>>> accrued_interest(schedules=s, day_count=["30/360", "ACT/ACT-ICMA"], coupon_rate=0.04,
...                  settlement="2024-02-15").round(6).tolist()
[0.333333, 0.533333]
"""

from .accrual import accrual_fractions, accrued_interest
from .business_days import CONVENTIONS, adjust, is_business_day, parse_conventions
from .calendars import business_day_calendar, canonical_calendar, holiday_dates, parse_calendars
from .compounding import COMPOUNDINGS, parse_compoundings
from .dates import FIRST_DATE, LAST_DATE, to_days
from .day_counts import DAY_COUNTS, parse_day_counts, year_fractions
from .frequencies import FREQUENCIES, parse_frequencies
from .names import Factorized, Problem, raise_problems
from .schedules import Schedules, generate_schedules

__all__ = ["COMPOUNDINGS", "CONVENTIONS", "DAY_COUNTS", "FIRST_DATE", "FREQUENCIES", "LAST_DATE", "Factorized",
           "Problem", "Schedules", "accrual_fractions", "accrued_interest", "adjust", "business_day_calendar",
           "canonical_calendar", "generate_schedules", "holiday_dates", "is_business_day", "parse_calendars",
           "parse_compoundings", "parse_conventions", "parse_day_counts", "parse_frequencies", "raise_problems",
           "to_days", "year_fractions"]
