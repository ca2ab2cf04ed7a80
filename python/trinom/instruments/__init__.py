"""Instruments: what a desk trades, each validating itself and lowering to the one :class:`~trinom.book.Book`.

Today: dated trades (:class:`~trinom.instruments.trades.Trades`: fixed-rate bonds with an optional call or put,
and European options on zero-coupon bonds, given by dates and conventions). The tree-step instruments
(:class:`trinom.Portfolio`, :class:`trinom.BondPortfolio`) will move here; their old import paths stay.
"""

from .trades import DEFAULT_STEPS_PER_YEAR, TRADE_COLUMNS, Trades, read_trades

__all__ = ["DEFAULT_STEPS_PER_YEAR", "TRADE_COLUMNS", "Trades", "read_trades"]
