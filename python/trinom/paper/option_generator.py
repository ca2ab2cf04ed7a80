"""Synthetic portfolios with the thesis' seven width/height distributions (docs/model.md §2.2).

Every generated option is the thesis generator's put: strike 63, expiry 3 years, term unit
365 days, 12 steps a year, sigma 0.01. Only two things vary, and they set the tree's shape:

* the bond maturity (whole years), which sets the height ``12 * maturity + 1``;
* the reversion rate ``a``, which sets the width ``2 jmax + 1``. A target width is turned
  into ``a`` exactly by :func:`reversion_rate_for_width`.

>>> portfolio = generate("skewed", 1000, skew_percent=1.0, seed=7)
>>> len(portfolio), int(portfolio.widths().max()) <= 511, int(portfolio.heights().max()) <= 1201
(1000, True, True)
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import numpy.typing as npt

from ..instruments.option import Portfolio
from ..lattice.constants import DAYS_IN_YEAR, JMAX_FACTOR, PUT

#: Names of the seven distributions; the index of a name is its thesis number (0..6).
DISTRIBUTIONS: tuple[str, ...] = (
    "uniform",
    "random",
    "random-const-height",
    "random-const-width",
    "skewed",
    "skewed-const-height",
    "skewed-const-width",
)
#: The thesis' dataset file names (``data/<name>.in``), accepted as aliases.
THESIS_FILE_NAMES: tuple[str, ...] = (
    "0_UNIFORM",
    "1_RAND",
    "2_RANDCONSTHEIGHT",
    "3_RANDCONSTWIDTH",
    "4_SKEWED",
    "5_SKEWEDCONSTHEIGHT",
    "6_SKEWEDCONSTWIDTH",
)

# The fixed fields of every generated option (the thesis generator's values).
STRIKE = 63.0
EXPIRY_YEARS = 3.0
TERM_UNIT_DAYS = 365
TERM_STEPS = 12
SIGMA = 0.01
#: Reversion rate of the constant-width datasets (0 and 3): width 47 at 12 steps a year.
CONSTANT_WIDTH_A = 0.1
#: Time step of every generated tree in years: ``ceil(365 / term_unit) / term_steps``.
GENERATOR_DT = math.ceil(DAYS_IN_YEAR / TERM_UNIT_DAYS) / TERM_STEPS

# Ranges of the thesis generator (maturities in whole years, widths odd and inclusive).
CONSTANT_MATURITY = 9
ALL_MATURITIES = (1, 100)
ALL_WIDTHS = (7, 511)
SMALL_MATURITIES = (1, 30)
SMALL_WIDTHS = (7, 107)
LARGE_MATURITIES = (70, 100)
LARGE_WIDTHS = (411, 511)
LONGEST_MATURITY = 100
WIDEST_WIDTHS = (509, 511)


def resolve_distribution(distribution: str | int) -> int:
    """The thesis number (0..6) of a distribution name, number or thesis file name.

    Names are matched without regard to case, and ``_`` may stand for ``-``.

    >>> resolve_distribution("skewed"), resolve_distribution(4), resolve_distribution("4_SKEWED")
    (4, 4, 4)
    """
    choices = (f"{', '.join(DISTRIBUTIONS)}; the numbers 0..{len(DISTRIBUTIONS) - 1}; "
               f"or the thesis file names {', '.join(THESIS_FILE_NAMES)}")
    if isinstance(distribution, numbers.Integral) and not isinstance(distribution, bool):
        if 0 <= int(distribution) < len(DISTRIBUTIONS):
            return int(distribution)
        raise ValueError(f"unknown distribution {distribution!r}; choose one of {choices}")
    if not isinstance(distribution, str):
        raise ValueError(f"distribution must be a name or a number, got {type(distribution).__name__} "
                         f"{distribution!r}; choose one of {choices}")
    key = distribution.strip().lower().replace("_", "-")
    if key.isdigit() and int(key) < len(DISTRIBUTIONS):
        return int(key)
    for number, (name, file_name) in enumerate(zip(DISTRIBUTIONS, THESIS_FILE_NAMES, strict=True)):
        if key in (name, file_name.lower().replace("_", "-")):
            return number
    raise ValueError(f"unknown distribution {distribution!r}; choose one of {choices}")


def reversion_rate_for_width(width: npt.ArrayLike, dt: float = GENERATOR_DT) -> np.ndarray:
    """The reversion rate ``a`` that gives trees of exactly this odd ``width`` at time step ``dt``.

    The geometry is ``jmax = int(-0.184 / M) + 1`` with ``M = exp(-a dt) - 1``. Width ``w``
    needs ``jmax = (w - 1) / 2``, i.e. ``-0.184 / M`` in ``[jmax - 1, jmax)``. We take the
    middle of that interval, ``-0.184 / M = jmax - 1/2``, so rounding in ``exp``/``log``
    cannot move the width, and invert: ``a = -log(1 + M) / dt``.

    >>> from trinom.model.tree_geometry import tree_geometry
    >>> a = reversion_rate_for_width([47, 511])
    >>> tree_geometry([9, 9], [3, 3], [365, 365], [12, 12], a, [0.01, 0.01]).width.tolist()
    [47, 511]
    """
    widths = np.asarray(width)
    if widths.size and (not np.issubdtype(widths.dtype, np.number) or np.any(widths != np.round(widths))
                        or np.any(widths < 3) or np.any(widths % 2 != 1)):
        raise ValueError(f"width must be odd whole numbers >= 3, got {widths.tolist()!r}")
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a finite number > 0, got {dt!r}")
    jmax = (widths.astype(np.float64) - 1.0) / 2.0
    M = JMAX_FACTOR / (jmax - 0.5)
    return -np.log1p(M) / dt


def generate(distribution: str | int, size: int, skew_percent: float = 1.0, seed: int = 0) -> Portfolio:
    """A shuffled portfolio of ``size`` puts whose tree shapes follow a thesis distribution.

    ``distribution`` is a name of :data:`DISTRIBUTIONS`, its number 0..6 or a thesis file
    name such as ``"4_SKEWED"``. ``skew_percent`` (0..100) is the share of large options in
    the skewed distributions 4..6 (rounded to a whole number of options) and is ignored by
    the others. The same arguments always give the same portfolio (NumPy ``default_rng``).

    ===  ==================  ==============================================================
    #    name                maturity (years) / width
    ===  ==================  ==============================================================
    0    uniform             9 / a = 0.1 (width 47, height 109)
    1    random              U{1..100} / U over odd [7, 511]
    2    random-const-height 9 / U over odd [7, 511]
    3    random-const-width  U{1..100} / a = 0.1
    4    skewed              skew part U{70..100} / [411, 511]; rest U{1..30} / [7, 107]
    5    skewed-const-height skew part 100 / [7, 107]; rest as in 4
    6    skewed-const-width  skew part U{1..30} / one width drawn from [509, 511]; rest as in 4
    ===  ==================  ==============================================================

    >>> p = generate("uniform", 3)
    >>> p.widths().tolist(), p.heights().tolist()
    ([47, 47, 47], [109, 109, 109])
    """
    number = resolve_distribution(distribution)
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
        raise ValueError(f"size must be a whole number >= 0, got {size!r}")
    if (isinstance(skew_percent, bool) or not isinstance(skew_percent, numbers.Real)
            or not math.isfinite(skew_percent) or not 0 <= skew_percent <= 100):
        raise ValueError(f"skew_percent must be a number in 0..100, got {skew_percent!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    size = int(size)
    rng = np.random.default_rng(int(seed))

    def maturities(bounds: tuple[int, int], count: int) -> np.ndarray:
        return rng.integers(bounds[0], bounds[1] + 1, size=count).astype(np.float64)

    def widths(bounds: tuple[int, int], count: int) -> np.ndarray:
        return bounds[0] + 2 * rng.integers(0, (bounds[1] - bounds[0]) // 2 + 1, size=count)

    if number == 0:
        maturity = np.full(size, float(CONSTANT_MATURITY))
        a = np.full(size, CONSTANT_WIDTH_A)
    elif number == 1:
        maturity = maturities(ALL_MATURITIES, size)
        a = reversion_rate_for_width(widths(ALL_WIDTHS, size))
    elif number == 2:
        maturity = np.full(size, float(CONSTANT_MATURITY))
        a = reversion_rate_for_width(widths(ALL_WIDTHS, size))
    elif number == 3:
        maturity = maturities(ALL_MATURITIES, size)
        a = np.full(size, CONSTANT_WIDTH_A)
    else:
        skewed = round(size * skew_percent / 100)
        if number == 4:
            skew_maturity = maturities(LARGE_MATURITIES, skewed)
            skew_width = widths(LARGE_WIDTHS, skewed)
        elif number == 5:
            skew_maturity = np.full(skewed, float(LONGEST_MATURITY))
            skew_width = widths(SMALL_WIDTHS, skewed)
        else:
            skew_maturity = maturities(SMALL_MATURITIES, skewed)
            skew_width = np.full(skewed, widths(WIDEST_WIDTHS, 1)[0])
        rest = size - skewed
        maturity = np.concatenate([skew_maturity, maturities(SMALL_MATURITIES, rest)])
        a = reversion_rate_for_width(np.concatenate([skew_width, widths(SMALL_WIDTHS, rest)]))
    order = rng.permutation(size)  # the thesis generator shuffles every dataset
    maturity, a = maturity[order], a[order]
    return Portfolio(
        convention="thesis",  # the thesis' datasets
        strike=np.full(size, STRIKE),
        maturity=maturity,
        expiry=np.full(size, EXPIRY_YEARS),
        term_unit=np.full(size, float(TERM_UNIT_DAYS)),
        term_steps=np.full(size, float(TERM_STEPS)),
        a=a,
        sigma=np.full(size, SIGMA),
        option_type=np.full(size, PUT, dtype=np.int8),
    )
