"""Risk measures of a whole book by bump and reprice, as one long table (issue 14, item 2).

:func:`risk` prices the book once under every scenario it needs, in one :func:`trinom.price` call over a
market's scenario axis: base, parallel +-shift, +-shift at each pillar of each curve, sigma +-``sigma_shift``
(vega) and the spread +-shift (spread duration). The engine prices only what differs per tree (a bump at
a pillar beyond a tree's last step, or on a curve it does not use, is its base price) and, on ``cuda``,
runs one forward pass per tree and sigma and one backward pass per scenario.
Prices are a bond's dirty price and an option's value; the OAS (a bond's ``spread``) is held fixed under
curve shifts. Measures, with ``P0`` the base price and ``h`` the curve shift:

* ``dv01``: ``P(curve - h) - P0``, the price change for a fall of the zero curve by ``h`` (1 bp);
* ``duration``: ``(P(-h) - P(+h)) / (2 P0 h)``; ``convexity``: ``(P(+h) + P(-h) - 2 P0) / (P0 h^2)``;
* ``krd``: the duration for a triangular bump at each pillar of the curve the row uses
  (trinom.scenarios; they sum to ``duration`` up to the curvature term);
* ``vega``: ``(P(sigma + v) - P(sigma - v)) / (2 v)`` times 0.0001 (per 0.0001 of sigma);
* ``spread_duration`` (bonds): ``(P(s - d) - P(s + d)) / (2 P0 h)`` with ``d`` = ``h`` in the spread's
  unit (percent: ``d = 100 h``).

Rows ORE style: ``id, measure, factor, shift, base, value, error`` (a row that cannot be priced has NaN
values and its message in ``error``).

>>> import trinom
>>> p = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[12],
...                      a=[0.1], sigma=[0.01], option_type=["put"])
>>> table = risk(p, backend="reference", measures=("dv01", "duration"))
>>> table[["measure", "factor"]].values.tolist()
[['dv01', 'parallel'], ['duration', 'parallel']]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import price
from .bonds.portfolio import BondPortfolio
from .market import CurvesLike, Market
from .portfolio import Portfolio
from .scenarios import CurveShift, Scenario, SigmaShift, SpreadShift, scenario_market

MEASURES = ("dv01", "duration", "convexity", "krd", "vega", "spread_duration")
#: Columns of the table.
COLUMNS = ["id", "measure", "factor", "shift", "base", "value", "error"]


def risk(instruments: Portfolio | BondPortfolio, curves: CurvesLike = None, *, measures: Sequence[str] = MEASURES,
         shift: float = 1e-4, sigma_shift: float = 1e-4, ids: Sequence[str] | None = None, backend: str = "auto",
         precision: str = "f64", target: str | None = None,
         progress: Callable[[float, float], None] | None = None, **options: Any) -> Any:
    """The ``measures`` of every row of ``instruments`` (options or bonds) as a pandas table (see the module);
    ``shift``: the curve shift (1e-4 = 1 bp); ``sigma_shift``: vega's move of sigma; ``ids``: the rows'
    names (default their numbers); ``progress(done, total)``: the book's node updates as its slices are priced
    (every scenario of a slice at once); ``options`` go to :func:`trinom.price`."""
    import pandas as pd

    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {', '.join(map(repr, unknown))}; choose from {', '.join(MEASURES)}")
    if not shift > 0 or not sigma_shift > 0:
        raise ValueError(f"shift and sigma_shift must be positive, got {shift} and {sigma_shift}")
    bonds = isinstance(instruments, BondPortfolio)
    market = Market.of(curves)
    n = len(instruments)
    names = [str(i) for i in range(n)] if ids is None else [str(i) for i in ids]
    # Curve scenarios: base, -h, +h, then -h and +h at pillar k of every curve (each row is on one curve, so
    # it sees the bump of its own curve's pillar k: 2 scenarios per pillar, not per pillar and curve).
    shifts: list[CurveShift | None] = [None, CurveShift(-shift), CurveShift(shift)]
    pillars = max(len(c) for c in market.curves) if "krd" in measures else 0
    for k in range(pillars):
        shifts += [CurveShift(-shift, pillar=k), CurveShift(shift, pillar=k)]
    curve_scenarios = len(shifts)
    all_scenarios: list[Scenario] = list(shifts)
    if "vega" in measures:
        all_scenarios += [SigmaShift(sigma_shift), SigmaShift(-sigma_shift)]
    spread_step = 100.0 * shift  # the spread is in percent
    if "spread_duration" in measures and bonds:
        all_scenarios += [SpreadShift(-spread_step), SpreadShift(spread_step)]
    run = dict(backend=backend, precision=precision, target=target, errors="mask", **options)
    priced = price(instruments, scenario_market(market, all_scenarios), progress=progress, **run)
    values = np.atleast_2d(priced.price).astype(np.float64)
    error = priced.error
    others = values[curve_scenarios:]
    p0, down, up = values[0], values[1], values[2]
    ids_array = np.asarray(names, dtype=object)
    every_row = np.arange(n)
    parts: list[tuple[np.ndarray, str, str | np.ndarray, float, np.ndarray]] = []  # rows, measure, factor, shift, value

    def add(measure: str, factor: str, size: float, value: np.ndarray, rows: np.ndarray = every_row) -> None:
        parts.append((rows, measure, factor, size, value[rows]))

    with np.errstate(divide="ignore", invalid="ignore"):
        for measure in measures:
            if measure == "dv01":
                add("dv01", "parallel", shift, down - p0)
            elif measure == "duration":
                add("duration", "parallel", shift, (down - up) / (2 * p0 * shift))
            elif measure == "convexity":
                add("convexity", "parallel", shift, (up + down - 2 * p0) / (p0 * shift * shift))
            elif measure == "krd":
                used = _curve_of_rows(instruments, market)
                for name, curve in zip(market.names, market.curves, strict=True):
                    rows = np.flatnonzero(used == name)
                    for k, day in enumerate(curve.days):
                        k_down, k_up = values[3 + 2 * k], values[4 + 2 * k]
                        add("krd", f"{name}:{day}", shift, (k_down - k_up) / (2 * p0 * shift), rows)
            elif measure == "vega":
                add("vega", "sigma", sigma_shift, (others[0] - others[1]) / (2 * sigma_shift) * 1e-4)
            elif measure == "spread_duration" and bonds:
                first = 2 if "vega" in measures else 0
                add("spread_duration", "spread", shift, (others[first] - others[first + 1]) / (2 * p0 * shift))
    # One table in the order of the rows' ids within each measure and factor, built column by column.
    rows = np.concatenate([part[0] for part in parts]) if parts else np.zeros(0, dtype=np.int64)
    sizes = [part[0].size for part in parts]
    # Text columns stay NumPy object arrays: a string dtype would copy millions of strings one by one.
    def text(values: np.ndarray) -> Any:
        return pd.Series(values, dtype=object, copy=False)

    return pd.DataFrame({
        "id": text(ids_array[rows]),
        "measure": text(np.repeat(np.array([part[1] for part in parts], dtype=object), sizes)),
        "factor": text(np.repeat(np.array([part[2] for part in parts], dtype=object), sizes)),
        "shift": np.repeat(np.array([part[3] for part in parts], dtype=np.float64), sizes),
        "base": p0[rows],
        "value": np.concatenate([part[4] for part in parts]) if parts else np.zeros(0),
        "error": text(np.asarray(error, dtype=object)[rows] if n else np.zeros(0, dtype=object)),
    }, columns=COLUMNS)


def _curve_of_rows(instruments: Portfolio | BondPortfolio, market: Market) -> np.ndarray:
    """The name of the curve each row is priced on (options: the first; bonds: their ``curve_index``)."""
    names = np.array(market.names, dtype=object)
    if isinstance(instruments, BondPortfolio):
        index = np.clip(instruments.curve_index.astype(np.int64), 0, len(names) - 1)
        return names[index]
    return np.full(len(instruments), names[0], dtype=object)


__all__ = ["COLUMNS", "MEASURES", "risk"]
