"""``trinom.price_bonds``: a bond portfolio and its curves to dirty and clean prices in input order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backends import PRECISIONS
from ..curve import YieldCurve
from ..errors import InputError
from . import backends
from .portfolio import BondPortfolio


@dataclass(frozen=True)
class BondPrices:
    """Prices per 100 face, one per bond in input order (NaN where ``errors[k]`` is not empty).

    ``dirty`` is the tree's root value (the paper's number); ``clean = dirty - accrued``, with
    ``accrued`` the interest accrued at the valuation date (see :func:`accrued_interest`).
    """

    dirty: np.ndarray
    clean: np.ndarray
    accrued: np.ndarray
    errors: np.ndarray

    def __len__(self) -> int:
        return int(self.dirty.size)


def accrued_interest(portfolio: BondPortfolio) -> np.ndarray:
    """Interest accrued at the valuation date (step 0), per 100 face.

    ``c_1 * max(0, L - s_1) / L``: the first coupon ``c_1`` (paid at step ``s_1``) accrues
    over its period ``L``, which is the spacing of the first two cash flows (one term unit,
    ``term_steps`` steps, for a bond with one cash flow). Zero when step 0 is a coupon date
    (``s_1 = L``), as in every paper dataset, and for zero-coupon bonds.

    >>> from trinom.bonds.generator import sample_bond
    >>> float(accrued_interest(sample_bond()[0])[0])
    0.0
    """
    if "accrued" in portfolio._cache:  # the portfolio is immutable: computed once
        return portfolio._cache["accrued"]
    first = portfolio.cashflow_offset[:-1]
    s1 = portfolio.cashflow_step[first]
    has_second = portfolio.cashflow_count > 1
    s2 = portfolio.cashflow_step[np.where(has_second, first + 1, first)]
    period = np.where(has_second, s2 - s1, portfolio.term_steps)
    fraction = np.maximum(period - s1, 0) / np.maximum(period, 1)
    accrued = portfolio.coupon[first] * fraction
    accrued.setflags(write=False)
    portfolio._cache["accrued"] = accrued
    return accrued


def price_bonds(
    portfolio: BondPortfolio,
    curves: Sequence[YieldCurve] | Mapping[str, YieldCurve] | YieldCurve | None = None,
    *,
    backend: str = "auto",
    precision: str = "f64",
    errors: str = "raise",
    **options: Any,
) -> BondPrices:
    """Price every bond of ``portfolio`` with its embedded call or put (ARRAY'21's instrument).

    ``curves``: the yield curves the bonds' ``curve_index`` refers to: a sequence, or a mapping of
    names to curves (``{"EUR": eur, "USD": usd}``: index 0 is the first name), or one curve bare;
    default: the thesis curve. ``backend``: one of :data:`BOND_BACKENDS` (``auto``: the
    fastest usable one). The input is validated once; with ``errors="raise"`` a bad bond raises
    :class:`trinom.InputError` naming its row and field, with ``errors="mask"`` it gets NaN prices
    and a message in ``errors``.

    >>> from trinom.bonds.generator import sample_bond
    >>> bonds, curves = sample_bond()
    >>> result = price_bonds(bonds, curves, backend="reference")
    >>> print(f"{result.dirty[0]:.8f} {result.clean[0]:.8f}")
    53.24404042 53.24404042
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if errors not in ("raise", "mask"):
        raise ValueError(f"errors must be 'raise' or 'mask', got {errors!r}")
    if curves is None:
        curves = (YieldCurve.thesis(),)
    elif isinstance(curves, YieldCurve):
        curves = (curves,)
    elif isinstance(curves, Mapping):
        curves = tuple(curves.values())
    curves = tuple(curves)
    problems = portfolio.validate(curves)
    if problems and errors == "raise":
        raise InputError(problems)
    dtype = np.float32 if precision == "f32" else np.float64
    dirty = np.full(len(portfolio), np.nan, dtype=dtype)
    good = portfolio.good_rows(curves) if problems else np.arange(len(portfolio))
    if good.size:
        subset = portfolio if good.size == len(portfolio) else portfolio[good]
        if backend == "auto":
            name, chosen = backends.choose()
            module, options = backends.get(name), {**chosen, **options}
        else:
            module = backends.get(backend)
        dirty[good] = module.price(subset, curves, precision, **options)
    accrued = accrued_interest(portfolio).astype(dtype)
    return BondPrices(dirty=dirty, clean=dirty - accrued, accrued=accrued, errors=_messages(len(portfolio), problems))


def _messages(count: int, problems: list[tuple[int, str, str]]) -> np.ndarray:
    """One message per bond ("" for a good one); a bond with several problems gets them joined.

    Without problems no Python strings are made: converting 100000 empty objects to a string
    array costs as much as pricing them on the GPU.
    """
    if not problems:
        return np.zeros(count, dtype="<U1")
    text = np.full(count, "", dtype=object)
    for row, _field, message in problems:
        text[row] = f"{text[row]}; {message}" if text[row] else message
    return text.astype(str)


def choose_bond_backend() -> str:
    """The bond backend ``auto`` runs here (with its target, e.g. ``futhark/multicore``)."""
    name, options = backends.choose()
    return f"{name}/{options['target']}" if options.get("target") else name
