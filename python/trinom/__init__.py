"""trinom: prices portfolios of interest-rate options under Hull-White with trinomial trees.

>>> import trinom
>>> book = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
...                         term_steps=[1], a=[0.1], sigma=[0.01], option_type=["put"])
>>> round(float(trinom.price(book, backend="reference")[0]), 10)
1.879957315
"""

from .api import price
from .bonds import BondPortfolio, BondPrices, price_bonds
from .constants import CALL, PUT
from .curve import YieldCurve
from .errors import InputError
from .portfolio import FIELDS, Portfolio

__version__ = "0.1.0"
__all__ = ["CALL", "FIELDS", "PUT", "BondPortfolio", "BondPrices", "InputError", "Portfolio", "YieldCurve",
           "__version__", "price", "price_bonds"]
