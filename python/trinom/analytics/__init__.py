"""Analytics on priced books: risk (:mod:`.risk`), OAS (:mod:`.oas`) and its spread pricer (:mod:`.spreads`),
scenario grids (:mod:`.scenarios`, also ``trinom.scenarios``), market prices (:mod:`.bond_market_prices`),
model-consistent recalibration under scenarios (:mod:`.recalibration`) and pricing to an accuracy
(:mod:`.resolution`). ``trinom.risk`` and ``trinom.oas`` are the functions of :mod:`.risk` and :mod:`.oas`."""

from .recalibration import MarketState, Recalibration

__all__ = ["MarketState", "Recalibration"]
