"""Analytics on priced books: model-consistent recalibration under scenarios (risk, OAS and scenario grids move
here from the package's top level as they are touched)."""

from .recalibration import MarketState, Recalibration

__all__ = ["MarketState", "Recalibration"]
