"""Deprecated bond entry points, kept for one release: use :func:`trinom.price`, which prices bonds,
options and mixed books and returns :class:`trinom.Prices` (``price`` is the dirty price)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..instruments.bond import BondPortfolio
from ..model.curve import YieldCurve

#: The engines that price bonds (see :mod:`trinom.engines`), then ``auto``.
BOND_BACKENDS: tuple[str, ...] = ("reference", "futhark", "cuda", "auto")


@dataclass(frozen=True)
class BondPrices:
    """Deprecated: :class:`trinom.Prices` holds the same columns (``price`` is ``dirty``, ``error`` is ``errors``)."""

    dirty: np.ndarray
    clean: np.ndarray
    accrued: np.ndarray
    errors: np.ndarray

    def __len__(self) -> int:
        return int(self.dirty.size)


def price_bonds(portfolio: BondPortfolio,
                curves: Sequence[YieldCurve] | Mapping[str, YieldCurve] | YieldCurve | None = None, *,
                backend: str = "auto", precision: str = "f64", errors: str = "raise", **options: Any) -> BondPrices:
    """Deprecated alias of :func:`trinom.price` for bonds (same arguments), returning :class:`BondPrices`."""
    warnings.warn("trinom.price_bonds is deprecated: use trinom.price, whose result has .price (dirty), .clean, "
                  ".accrued and .error", DeprecationWarning, stacklevel=2)
    from ..api import price

    result = price(portfolio, curves, backend=backend, precision=precision, errors=errors, **options)
    return BondPrices(dirty=result.price, clean=result.clean, accrued=result.accrued, errors=result.error)


def accrued_interest(portfolio: BondPortfolio) -> np.ndarray:
    """Deprecated alias of :meth:`BondPortfolio.accrued`."""
    warnings.warn("trinom.bonds.accrued_interest is deprecated: use BondPortfolio.accrued()", DeprecationWarning,
                  stacklevel=2)
    return portfolio.accrued()
