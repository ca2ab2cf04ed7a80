"""Holiday calendars by name: ``NONE``, ``WEEKENDS``, ``TARGET``, ``NYSE``, ``USGOVT``, joints such as
``TARGET+NYSE``, and any other financial market of the ``holidays`` package by its code.

==========  =============================================  ======================================
name        holidays                                       aliases
==========  =============================================  ======================================
NONE        none: every day is a business day              NULL
WEEKENDS    Saturdays and Sundays                          WEEKENDSONLY
TARGET      weekends and ``holidays``' ECB calendar        ECB, XECB, TAR, TARGET2
NYSE        weekends and ``holidays``' NYSE calendar       XNYS, US-NYSE
USGOVT      weekends and ``holidays``' SIFMA calendar      SIFMA, XSIF, USGS, US-GOV
            (the US government bond market's full closes)
==========  =============================================  ======================================

Any other code that ``holidays.list_supported_financial()`` lists (``XLON``, ``XTKS``...) is a calendar too,
named by its market code (``LSE`` is ``XLON``); a joint calendar ``A+B`` has the holidays of all of its parts
(QuantLib's ``JointCalendar`` with ``JoinHolidays``). Names are case-insensitive. Holiday lists are built
from the ``holidays`` package one range of years at a time and cached; the differences from QuantLib's
calendars are in ``docs/conventions.md``.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Final

import numpy as np
import numpy.typing as npt

from .names import Factorized, NameTable, Problem, as_column, distinct_values, normalise, plain

#: The built-in calendars and the ``holidays`` market each one reads (``None``: no holidays but weekends).
_SOURCES: Final[dict[str, str | None]] = {"NONE": None, "WEEKENDS": None, "TARGET": "XECB", "NYSE": "XNYS",
                                          "USGOVT": "XSIF"}
#: The built-in calendars, their aliases, and their order in a joint calendar's name.
BUILT_IN: Final[NameTable] = NameTable.of("calendar", {
    "NONE": ("NULL", "NULLCALENDAR"),
    "WEEKENDS": ("WEEKENDSONLY",),
    "TARGET": ("ECB", "XECB", "TAR", "TARGET2"),
    "NYSE": ("XNYS", "US-NYSE"),
    "USGOVT": ("SIFMA", "XSIF", "USGS", "US-GOV", "USGOVERNMENTBOND"),
})


@cache
def _market_codes() -> dict[str, str]:
    """Every financial code of the ``holidays`` package (normalised) and the market code it names."""
    import holidays

    codes: dict[str, str] = {}
    for code in holidays.list_supported_financial():
        market = getattr(holidays.financial_holidays(code, years=2000), "market", code)
        codes[normalise(code)] = str(market).upper()
    return codes


@lru_cache(maxsize=1024)
def canonical_calendar(name: str) -> str | None:
    """The canonical name of a calendar (parts of a joint in a fixed order, repeats dropped), or ``None``.

    >>> canonical_calendar("nyse+ecb"), canonical_calendar("none+xlon"), canonical_calendar("Mars")
    ('TARGET+NYSE', 'XLON', None)
    """
    parts: list[str] = []
    for part in name.split("+"):
        code = BUILT_IN.code(part)
        if code is not None:
            resolved = BUILT_IN.canonical[code]
        else:
            market = _market_codes().get(normalise(part)) if normalise(part) else None
            if market is None:
                return None
            resolved = next((n for n, source in _SOURCES.items() if source == market), market)
        if resolved not in parts:
            parts.append(resolved)
    if len(parts) > 1:  # NONE adds nothing to a joint; WEEKENDS adds nothing to a holiday calendar
        parts = [p for p in parts if p != "NONE"]
        if len(parts) > 1:
            parts = [p for p in parts if p != "WEEKENDS"]
    order = {n: k for k, n in enumerate(BUILT_IN.canonical)}
    parts.sort(key=lambda p: (order.get(p, len(order)), p))
    return "+".join(parts)


def parse_calendars(values: npt.ArrayLike | Factorized, *, field: str = "calendar",
                    rows: npt.ArrayLike | None = None) -> tuple[np.ndarray, tuple[str, ...], list[Problem]]:
    """Per row, the index of its calendar in ``names`` (-1 on a bad row), the distinct canonical calendar
    names, and one problem per row whose name is no calendar.

    >>> codes, names, problems = parse_calendars(["TARGET", "nyse+target", "ecb", "Moon"])
    >>> codes.tolist(), names, problems[0][0]
    ([0, 1, 0, -1], ('TARGET', 'TARGET+NYSE'), 3)
    """
    array = as_column(values, field)
    codes = np.full(array.size, -1, dtype=np.int32)
    problems: list[Problem] = []
    names: list[str] = []
    if array.size == 0:
        return codes, (), problems
    distinct, inverse = distinct_values(array)
    resolved = np.full(len(distinct), -1, dtype=np.int32)
    for k, value in enumerate(distinct):
        canonical = canonical_calendar(value) if isinstance(value, str) and value.strip() else None
        if canonical is not None:
            if canonical not in names:
                names.append(canonical)
            resolved[k] = names.index(canonical)
    codes = resolved[inverse]
    row_numbers = np.arange(array.size) if rows is None else np.asarray(rows).reshape(-1)
    for k in np.flatnonzero(codes < 0):
        problems.append((int(row_numbers[k]), field, f"{field} {plain(array[k])!r} is not a calendar; valid: "
                         f"{', '.join(BUILT_IN.canonical)}, a financial market code of the holidays package "
                         "(XLON, XTKS, ...), or a joint such as TARGET+NYSE"))
    return codes, tuple(names), problems


def has_weekends(name: str) -> bool:
    """Whether Saturdays and Sundays are holidays of a calendar (all but ``NONE``)."""
    return name != "NONE"


@lru_cache(maxsize=64)
def holiday_dates(name: str, first_year: int, last_year: int) -> np.ndarray:
    """The holidays (``datetime64[D]``, sorted, weekends not listed) of a canonical calendar name in
    ``first_year..last_year``, from the ``holidays`` package (cached per name and range; a joint's from its parts').

    >>> [str(d) for d in holiday_dates("TARGET", 2024, 2024)]
    ['2024-01-01', '2024-03-29', '2024-04-01', '2024-05-01', '2024-12-25', '2024-12-26']
    """
    parts = name.split("+")
    if len(parts) > 1:
        result = np.unique(np.concatenate([holiday_dates(part, first_year, last_year) for part in parts]))
        result.setflags(write=False)
        return result
    market = _SOURCES.get(name, name)
    if market is None:
        return np.zeros(0, dtype="datetime64[D]")
    import holidays

    days = holidays.financial_holidays(market, years=range(first_year, last_year + 1))
    dates = np.array(sorted(days), dtype="datetime64[D]")
    dates = dates[(dates >= np.datetime64(f"{first_year}-01-01")) & (dates <= np.datetime64(f"{last_year}-12-31"))]
    result = dates[np.is_busday(dates, weekmask="1111100")]
    result.setflags(write=False)
    return result


@lru_cache(maxsize=64)
def business_day_calendar(name: str, first_year: int, last_year: int) -> np.busdaycalendar:
    """The ``numpy.busdaycalendar`` of a canonical calendar name over ``first_year..last_year`` (cached): its
    weekmask (Monday to Friday; every day for ``NONE``) and its holidays."""
    if not has_weekends(name):
        return np.busdaycalendar(weekmask="1111111")
    return np.busdaycalendar(weekmask="1111100", holidays=holiday_dates(name, first_year, last_year))
