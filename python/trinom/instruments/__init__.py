"""Instruments: what a desk trades, each validating itself; the lattice lowers them to the one
:class:`~trinom.lattice.book.Book` (:mod:`trinom.lattice.lowering`), and they import nothing of it.

* :mod:`~trinom.instruments.option`: options on zero-coupon bonds in tree steps (:class:`trinom.Portfolio`;
  formerly ``trinom.portfolio``);
* :mod:`~trinom.instruments.bond`: callable and puttable coupon bonds in tree steps (:class:`trinom.BondPortfolio`;
  formerly ``trinom.bonds.portfolio``);
* :mod:`~trinom.instruments.trades`: dated trades (:class:`Trades`: fixed-rate bonds with an optional call or put,
  and European options on zero-coupon bonds, by dates and conventions; the ``trades.csv`` contract), which lower to
  the two above; :mod:`~trinom.instruments.trade_checks`: its checks (the cells parsed once, every row's problems);
  :mod:`~trinom.instruments.side_tables`: its ``schedule.csv`` and ``notionals.csv``;
* :mod:`~trinom.instruments.dated_bond`: the lowering of a dated bond to its tree (schedules, coupons, flows,
  exercise points, amortization), which bonds and swaptions share;
* :mod:`~trinom.instruments.legs`: how the trees of a trade that lowers to several add up;
* :mod:`~trinom.instruments.columns`: the field parsing the portfolios share (also ``trinom.lattice.columns``);
  :mod:`~trinom.instruments.constants`: the option sides and the thesis' face value.

The old import paths stay for one release: they are the same module objects. The instruments import no file format:
``read_trades`` (the files of a :class:`Trades` book) is :func:`trinom.io.trade_files.read_trades`; ``trinom``'s
``__init__`` keeps it here too (``trinom.instruments.read_trades``), as the instruments may not import ``io``.
"""

from .bond import BondPortfolio
from .legs import Legs
from .option import Portfolio
from .trades import DEFAULT_STEPS_PER_YEAR, TRADE_COLUMNS, Trades

__all__ = ["DEFAULT_STEPS_PER_YEAR", "TRADE_COLUMNS", "BondPortfolio", "Legs", "Portfolio", "Trades"]
