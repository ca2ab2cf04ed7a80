"""trinom: prices books of interest-rate options and callable/puttable bonds under Hull-White with
trinomial trees, on GPUs and CPUs.

>>> import trinom
>>> book = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
...                         term_steps=[1], a=[0.1], sigma=[0.01], option_type=["put"])
>>> round(float(trinom.price(book, backend="reference").price[0]), 10)
1.879957315
"""

import sys as _sys

from . import closed_form
from .analytics import scenarios, spreads
from .analytics.oas import OASResult, oas
from .analytics.risk import risk
from .api import price
from .bonds import BondPortfolio, BondPrices, price_bonds
from .book import Book
from .constants import CALL, PUT
from .curve import YieldCurve
from .distributed import DistributedBook, distribute, parquet_files, shared_results, worker_calls, worker_tuning
from .errors import InputError
from .instruments.option import FIELDS, Portfolio
from .instruments.trades import Trades, read_trades
from .io import parquet
from .market import Market
from .model.calibration import calibrate
from .model.dated_curve import DatedCurve
from .paper import option_generator as generator
from .result import Prices

# ``trinom.parquet`` (documented) is the Parquet format's module, now ``trinom.io.parquet`` (issue 36's layout).
_sys.modules.setdefault(f"{__name__}.parquet", parquet)
# The documented modules that moved into their folders (issue 36): the same module objects under their former names
# (``trinom.risk`` and ``trinom.oas`` are the functions, in ``trinom.analytics``' modules of those names).
_sys.modules.setdefault(f"{__name__}.scenarios", scenarios)
_sys.modules.setdefault(f"{__name__}.spreads", spreads)
_sys.modules.setdefault(f"{__name__}.generator", generator)
_sys.modules.setdefault(f"{__name__}.parquet_files", parquet_files)
_sys.modules.setdefault(f"{__name__}.shared_results", shared_results)
_sys.modules.setdefault(f"{__name__}.worker_calls", worker_calls)
_sys.modules.setdefault(f"{__name__}.worker_tuning", worker_tuning)

__version__ = "0.2.0"
__all__ = [
           "CALL",
           "FIELDS",
           "PUT",
           "BondPortfolio",
           "BondPrices",
           "Book",
           "DatedCurve",
           "DistributedBook",
           "InputError",
           "Market",
           "OASResult",
           "Portfolio",
           "Prices",
           "Trades",
           "YieldCurve",
           "__version__",
           "calibrate",
           "closed_form",
           "distribute",
           "generator",
           "oas",
           "price",
           "price_bonds",
           "read_trades",
           "risk",
]
