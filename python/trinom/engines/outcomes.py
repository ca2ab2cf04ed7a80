"""What engines report besides prices, apart from the engine interface so that the native libraries' bindings
(:mod:`._cuda_lib`, :mod:`._futhark`) can raise and name them without importing the engines that load them."""

from __future__ import annotations


class BackendUnavailable(RuntimeError):
    """The chosen engine (or target, or device) cannot run here; the message says why."""


#: The outcomes of an engine's spread search, by status code (converged, outside the attainable range, no
#: convergence within the iterations, the price overflowed, not searched).
SEARCH_OUTCOMES = ("converged", "outside", "no convergence", "overflow", "skipped")

__all__ = ["SEARCH_OUTCOMES", "BackendUnavailable"]
