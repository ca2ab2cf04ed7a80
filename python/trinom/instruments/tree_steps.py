"""Dates and tree steps: the step a date lands on (nearest, at or after, at or before), an exercise date's step and
time, and a step's date. The tree's step ``i`` is at ``i / steps_per_year`` years after the as-of date, on the curves'
ACT/365F year of :data:`YEAR_DAYS` whole days."""

from __future__ import annotations

from typing import Final

import numpy as np

#: Whole days in the curves' year (ACT/365F).
YEAR_DAYS: Final[int] = 365


def step_of(days: np.ndarray, as_of: int, steps_per_year: np.ndarray | int) -> np.ndarray:
    """The tree step nearest each date (halves up), never before step 1."""
    return np.maximum((2 * (days - as_of) * steps_per_year + YEAR_DAYS) // (2 * YEAR_DAYS), 1)


def step_after(days: np.ndarray, as_of: int, steps_per_year: np.ndarray | int) -> np.ndarray:
    """The first tree step at or after each date, never before step 1: a cash flow's (valued at the step before it)
    and an exercise date's (the flows paid on or before the date are kept, those after it given up)."""
    return np.maximum(-((-(days - as_of) * steps_per_year) // YEAR_DAYS), 1)


def step_before(days: np.ndarray, as_of: int, steps_per_year: np.ndarray | int) -> np.ndarray:
    """The last tree step at or before each date (0 for a date in the first step): where an exercise decided between
    steps and an option on a coupon's rate are valued."""
    return ((days - as_of) * steps_per_year) // YEAR_DAYS


def exercise_step(days: np.ndarray, as_of: int, steps_per_year: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    """Each exercise date's step and time: a date on a step (or in the first step) is that step's (:func:`step_of`),
    time NaN; a date between steps is decided at the last step before it, its time (years) the date's."""
    before = step_before(days, as_of, steps_per_year)
    timed = (before >= 1) & (before * YEAR_DAYS != (days - as_of) * steps_per_year)
    return (np.where(timed, before, step_of(days, as_of, steps_per_year)),
            np.where(timed, (days - as_of) / YEAR_DAYS, np.nan))


def date_of_step(steps: np.ndarray, as_of: int, steps_per_year: np.ndarray | int) -> np.ndarray:
    """The date nearest each step's time (halves up): the step's date (at one step a day, ``as_of + step``)."""
    return as_of + (2 * steps * YEAR_DAYS + steps_per_year) // (2 * steps_per_year)


def day_of_step(steps: np.ndarray, as_of: int, steps_per_year: np.ndarray | int) -> np.ndarray:
    """The day holding each step's time (its date at or before it): where an exercise at the step is priced. At one
    step a day it is :func:`date_of_step`; between days it is the day before the nearest one where that rounds up,
    so that a step before a coupon's date, whose continuation still holds the coupon, accrues it."""
    return as_of + (steps * YEAR_DAYS) // steps_per_year
