"""The model: tree-step curves (:mod:`.curve`) and dated ones, the market (:mod:`.market`) and its scenarios
(:mod:`.scenarios`), Hull-White closed forms (:mod:`.hull_white`; the analytic price of an option book is
:mod:`trinom.engines.closed_form`), volatility formulas, swaption quotes and calibration.

Per-trade calibration (the baskets) is :mod:`trinom.analytics.baskets`: it reads the trades and calls the engines'
kernel, so it lives above the model. ``trinom``'s ``__init__`` keeps its former names here (``trinom.analytics.baskets``,
``trinom.engines.calibration_kernel`` and the basket names of this package), looked up from their new homes.

The model imports no file format: the readers of its files are ``io``'s (:func:`trinom.io.curve_files.read_dated_curves`,
:func:`trinom.io.quote_files.read_vol_quotes` and ``read_vol_surface``), and ``trinom``'s ``__init__`` sets their names
here too (``trinom.model.read_dated_curves``).

>>> from trinom.model import DatedCurve
>>> DatedCurve(as_of="2025-01-02", dates=["2026-01-02"], zero_rates=[0.03]).discount([1.0]).round(6).tolist()
[0.970446]
"""

from .bootstrap import Bootstrap, bootstrap_sigma
from .calibration import CalibrationResult, LMResult, calibrate, levenberg_marquardt
from .dated_curve import INTERPOLATIONS, DatedCurve
from .hull_white import (
    bond_factor,
    bond_option_stdev,
    caplet,
    jamshidian_swaption,
    short_rate_variance,
    zero_bond_option,
)
from .periods import add_period, fixed_leg, parse_periods
from .quotes import QuoteInstruments, VolQuotes, VolSurface, quote_instruments
from .rate_options import Caps, Swaptions, basis_ratio
from .sigma import Sigma
from .volatility import (
    bachelier_implied_vol,
    bachelier_price,
    bachelier_vega,
    black_implied_vol,
    black_price,
    black_vega,
)

__all__ = [
    "INTERPOLATIONS",
    "Bootstrap",
    "CalibrationResult",
    "Caps",
    "DatedCurve",
    "LMResult",
    "QuoteInstruments",
    "Sigma",
    "Swaptions",
    "VolQuotes",
    "VolSurface",
    "add_period",
    "bachelier_implied_vol",
    "bachelier_price",
    "bachelier_vega",
    "basis_ratio",
    "black_implied_vol",
    "black_price",
    "black_vega",
    "bond_factor",
    "bond_option_stdev",
    "bootstrap_sigma",
    "calibrate",
    "caplet",
    "fixed_leg",
    "jamshidian_swaption",
    "levenberg_marquardt",
    "parse_periods",
    "quote_instruments",
    "short_rate_variance",
    "zero_bond_option",
]
