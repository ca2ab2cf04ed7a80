"""Synthetic bond portfolios shaped like the ARRAY'21 paper's datasets (docs/model.md §2.4).

Each dataset fixes how tree widths and heights are distributed; the rest is drawn as the
paper's generator does: 360-day term unit, 12 steps a year, volatility U[0, 0.9], strike
U{50..150}, call or put, spread U{1..1000}/100 %, annual coupons U{1..10} with 100 repaid at
maturity (a quarter of the bonds are zero-coupon bonds), and a European, Bermudan (frequency
2..12) or American (frequency 1) exercise schedule starting at the first coupon date. Widths
are set through the mean reversion ``a`` (``jmax`` depends on ``a`` and ``dt`` only), heights
through the maturity. Curves: the thesis' 15-point curve and parallel shifts of it.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from ..instruments.bond import BondPortfolio
from ..lattice.constants import BOND_DAYS_IN_YEAR, CALL, JMAX_FACTOR, PUT
from ..model.curve import YieldCurve
from ..model.tree_geometry import bond_geometry

#: name: (bonds, description). Widths are odd (2 jmax + 1); heights are tree steps.
DATASETS: dict[str, tuple[int, str]] = {
    "U1": (3000, "width 259, height 606 for every bond"),
    "U2": (100000, "width 259, height 606 for every bond"),
    "R1": (100000, "width uniform in [7, 511], height uniform in [13, 1200]"),
    "R2": (100000, "width uniform in [7, 511], height normal on [13, 1200] (mean 606.5, std 197.8)"),
    "R3": (100000, "width normal on [7, 511] (mean 259, std 84), height uniform in [13, 1200]"),
    "S1": (100000, "1%: width [461, 511] and height [1082, 1200]; the rest width [7, 57], height [12, 131]"),
    "S2": (100000, "1%: width [461, 511]; another 1%: height [1082, 1200]; the rest width [7, 57], height [12, 131]"),
}
STEPS_PER_YEAR = 12
CURVE_SHIFTS = (0.0, 0.005, -0.005, 0.01)  # parallel shifts of the thesis curve, one curve each


def paper_curves(count: int = len(CURVE_SHIFTS)) -> tuple[YieldCurve, ...]:
    """The thesis' 15-point curve and ``count - 1`` parallel shifts of it (+50 bp, -50 bp, +100 bp)."""
    base = YieldCurve.thesis()
    return tuple(YieldCurve(base.rates + CURVE_SHIFTS[k], base.days) for k in range(count))


def sample_bond() -> tuple[BondPortfolio, tuple[YieldCurve, ...]]:
    """Hull's example as a bond: a European put at 3 years (strike 63) on a 9-year zero-coupon bond."""
    from ..io.option_books import read_yield_curve

    with resources.as_file(resources.files("trinom") / "data" / "paper-sample-yield.in") as path:
        curve = read_yield_curve(path)
    bond = BondPortfolio(term_unit=[BOND_DAYS_IN_YEAR], term_steps=[12], a=[0.1], sigma=[0.01], maturity=[9.0],
                         cashflow_count=[1], cashflow_step=[108], repayment=[100.0], coupon=[0.0], spread=[0.0],
                         option_type=[PUT], strike=[63.0], first_exercise=[36], last_exercise=[36],
                         exercise_frequency=[1], curve_index=[0])
    return bond, (curve,)


def a_for_width(width: np.ndarray) -> np.ndarray:
    """Mean reversion giving trees of exactly ``width`` nodes at 12 steps a year (odd widths >= 5)."""
    jmax = (np.asarray(width, dtype=np.int64) - 1) // 2
    dt = 1.0 / STEPS_PER_YEAR
    M = JMAX_FACTOR / (jmax - 0.5)  # trunc(-0.184 / M) + 1 = jmax needs -0.184 / M in [jmax - 1, jmax)
    a = np.round(-np.log1p(M) / dt, 12)
    return a


def generate_bonds(dataset: str, count: int | None = None, seed: int = 12345,
                   curves: int = len(CURVE_SHIFTS)) -> tuple[BondPortfolio, tuple[YieldCurve, ...]]:
    """A portfolio like the paper's ``dataset`` (U1, U2, R1, R2, R3, S1, S2) and its curves.

    >>> bonds, curves = generate_bonds("R1", 100, seed=1)
    >>> len(bonds), len(curves), bool(bonds.validate(curves) == [])
    (100, 4, True)
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    count = DATASETS[dataset][0] if count is None else int(count)
    rng = np.random.default_rng(seed)
    width, height = _shapes(dataset, count, rng)
    a = a_for_width(width)
    maturity = height / STEPS_PER_YEAR
    # ceil(12 * T) must give the height exactly: step T down by an ulp where rounding overshoots.
    too_tall = np.ceil(STEPS_PER_YEAR * maturity) > height
    maturity = np.where(too_tall, np.nextafter(maturity, 0), maturity)
    zero_coupon = rng.random(count) < 0.25
    steps, repayment, coupon, cash_count = _schedules(height, zero_coupon, rng)
    style = rng.integers(0, 3, count)  # 0 European, 1 Bermudan, 2 American
    first = np.minimum(STEPS_PER_YEAR, height - 1)
    freq = np.where(style == 1, rng.integers(2, 13, count), 1)
    room = (height - 1 - first) // freq  # how many periods fit before the last step
    last = first + freq * (rng.random(count) * (room + 1)).astype(np.int64)
    european_step = first + (rng.random(count) * (height - first)).astype(np.int64)
    european = style == 0
    first = np.where(european, np.minimum(european_step, height - 1), first)
    last = np.where(european, first, last)
    fields = dict(
        term_unit=np.full(count, BOND_DAYS_IN_YEAR), term_steps=np.full(count, STEPS_PER_YEAR), a=a,
        sigma=np.round(rng.uniform(0.0, 0.9, count), 8) + 1e-4, maturity=maturity, cashflow_count=cash_count,
        cashflow_step=steps, repayment=repayment, coupon=coupon,
        spread=rng.integers(1, 1001, count) / 100.0, option_type=rng.choice([CALL, PUT], count),
        strike=rng.integers(50, 151, count).astype(np.float64), first_exercise=first, last_exercise=last,
        exercise_frequency=freq, curve_index=rng.integers(0, curves, count))
    bonds = BondPortfolio(**fields)
    geometry = bond_geometry(bonds.term_unit, bonds.term_steps, bonds.a, bonds.sigma, bonds.maturity, bonds.spread)
    assert (2 * geometry.jmax + 1 == width).all() and (geometry.n == height).all(), "generator: shape mismatch"
    return bonds, paper_curves(curves)


def _shapes(dataset: str, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Tree widths (odd) and heights of the dataset's distribution."""

    def uniform_odd(lo: int, hi: int, size: int) -> np.ndarray:
        return 2 * rng.integers((lo - 1) // 2, (hi - 1) // 2 + 1, size) + 1

    def normal_in(lo: int, hi: int, size: int) -> np.ndarray:
        draw = rng.normal((lo + hi) / 2, (hi - lo) / 6, size)
        return np.clip(np.round(draw), lo, hi).astype(np.int64)

    if dataset in ("U1", "U2"):
        return np.full(count, 259), np.full(count, 606)
    if dataset == "R1":
        return uniform_odd(7, 511, count), rng.integers(13, 1201, count)
    if dataset == "R2":
        return uniform_odd(7, 511, count), normal_in(13, 1200, count)
    if dataset == "R3":
        return normal_in(7, 511, count) // 2 * 2 + 1, rng.integers(13, 1201, count)
    width, height = uniform_odd(7, 57, count), rng.integers(12, 132, count)
    picked = rng.permutation(count)
    share = max(1, count // 100)
    if dataset == "S1":
        big = picked[:share]
        width[big], height[big] = uniform_odd(461, 511, share), rng.integers(1082, 1201, share)
    else:  # S2: skewed widths and skewed heights on different bonds
        wide, tall = picked[:share], picked[share: 2 * share]
        width[wide] = uniform_odd(461, 511, wide.size)
        height[tall] = rng.integers(1082, 1201, tall.size)
    return width, height


def _schedules(height: np.ndarray, zero_coupon: np.ndarray, rng: np.random.Generator):
    """Annual coupons from step 12 and 100 repaid at the maturity step (which always pays)."""
    annual = np.where(zero_coupon, 0, (height - 1) // STEPS_PER_YEAR)  # coupon dates strictly before n
    cash_count = annual + 1
    total = int(cash_count.sum())
    owner = np.repeat(np.arange(height.size), cash_count)
    starts = np.cumsum(cash_count) - cash_count
    k = np.arange(total) - starts[owner]  # 0-based index of the cash flow within its bond
    is_last = k == cash_count[owner] - 1
    steps = np.where(is_last, height[owner], (k + 1) * STEPS_PER_YEAR)
    amount = rng.integers(1, 11, height.size).astype(np.float64)
    coupon = np.where(zero_coupon[owner], 0.0, amount[owner])
    repayment = np.where(is_last, 100.0, 0.0)
    return steps, repayment, coupon, cash_count
