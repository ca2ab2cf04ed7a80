"""``trinom.price``: the public call. It checks its arguments and hands the book to the pipeline
(:mod:`trinom.pipeline`): dated trades lowered to their trees' blocks first (or refitted per scenario,
:mod:`trinom.analytics.recalibration`; or priced to an accuracy, :mod:`trinom.analytics.resolution`), a book with a
Dask client to :mod:`trinom.distributed`, any other book in this process.

The deprecated bond entry points (:func:`price_bonds`, :class:`BondPrices`, :func:`accrued_interest`; formerly
``trinom.bonds.api``, still ``trinom.bonds``' names) are kept here for one release.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .analytics.recalibration import is_dated
from .instruments.bond import BondPortfolio
from .instruments.trades import Trades
from .lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from .model.market import CurvesLike
from .model.scenarios import Scenario
from .pipeline import Instrument, PricingOptions, price_book, price_trades
from .result import Prices


def price(
    instruments: Instrument | Sequence[Instrument],
    curves: CurvesLike = None,
    *,
    backend: str = "auto",
    precision: str = "f64",
    target: str | None = None,
    device: int = 0,
    errors: str = "raise",
    max_width: int = DEFAULT_MAX_WIDTH,
    max_steps: int = DEFAULT_MAX_STEPS,
    progress: Callable[[float, float], None] | None = None,
    scenarios: Sequence[Scenario] | None = None,
    client: Any = None,
    recalibrate: Any = None,
    accuracy: float | None = None,
    **tuning: Any,
) -> Prices:
    """Price every row of ``instruments`` in ``curves``; one result per row, in input order.

    ``instruments``: a :class:`~trinom.Portfolio` of options, a :class:`~trinom.BondPortfolio`, or a
    sequence of them (a mixed book; rows are numbered across the sequence). ``curves``: a
    :class:`~trinom.YieldCurve`, a sequence or mapping of them (a bond's ``curve_index`` picks one;
    options use the first), or a :class:`~trinom.Market`; default: the thesis curve.
    ``backend``: an engine of :func:`trinom.engines.names` (``auto``: the fastest usable one, on
    ``target`` if given); ``precision``: ``"f64"`` or ``"f32"``; ``device``: the GPU's index;
    ``tuning``: the engine's own knobs (an unknown one is an error). ``max_width`` and ``max_steps``
    bound every tree's width and number of steps, so that a row's memory and work are known before
    any pricing (a row beyond them is bad input naming the row).

    The input is validated once. With ``errors="raise"`` a bad row raises :class:`trinom.InputError`
    naming the row and the field; with ``errors="mask"`` it gets NaN and its message in
    ``result.error``. ``progress(done, total)`` is called with the node updates priced so far.
    ``scenarios``: a list of moves of the market (trinom.scenarios: :class:`~trinom.scenarios.CurveShift`,
    :class:`~trinom.scenarios.CurveSet`, :class:`~trinom.scenarios.SigmaShift`,
    :class:`~trinom.scenarios.SpreadShift`; None: the market as given), priced in one engine call; the
    prices then have shape ``(len(scenarios), rows)``, a list of one scenario included. ``client``: a Dask
    ``distributed.Client``: the book is placed on its workers once, in shards of about equal work, and priced
    there (:func:`trinom.distributed.price_on`; the placement is kept on ``instruments`` for the next call), rows
    back in input order; ``instruments`` may also be a book placed already (:func:`trinom.distributed.distribute`).
    An argument of the wrong type or value (``max_steps=None``, ``progress="yes"``,
    ``client="tcp://..."``) is a ``TypeError`` or ``ValueError`` naming it, raised before any work.
    Dated trades (:class:`~trinom.instruments.Trades`) on dated curves take a ``CurveShift``'s ``pillar`` as a dated
    curve's pillar, and mappings of names to dated curves as scenarios; ``recalibrate``
    (:class:`trinom.analytics.Recalibration`, dated trades only) fits the model to the volatility quotes again in
    every scenario before pricing in it (:mod:`trinom.analytics.recalibration`). ``accuracy`` (dated trades without
    their own ``steps_per_year``; per 100 of notional): each trade's steps a year chosen on doubling grids until its
    two-grid error estimate is at most that (:mod:`trinom.analytics.resolution`; ``result.steps_per_year`` and
    ``result.accuracy`` say what each row got).

    >>> import trinom
    >>> p = trinom.Portfolio(strike=[63.0, 63.0], maturity=[9.0, 9.0], expiry=[3.0, 3.0],
    ...                      term_unit=[365, 365], term_steps=[1, 1], a=[0.1, -0.1],
    ...                      sigma=[0.01, 0.01], option_type=["put", "put"])
    >>> result = trinom.price(p, backend="reference", errors="mask")
    >>> print(round(float(result.price[0]), 6), result.price[1], result.error[1])
    1.879957 nan a must be > 0, got -0.1
    """
    options = PricingOptions.of(backend=backend, precision=precision, target=target, device=device, errors=errors,
                                max_width=max_width, max_steps=max_steps, progress=progress, **tuning)
    if accuracy is not None:  # each trade's grid chosen by its convergence: one pricing a grid
        from .analytics.resolution import check_accuracy, priced_to_accuracy

        wanted = check_accuracy(accuracy, instruments)
        if scenarios is not None or client is not None or recalibrate is not None or progress is not None:
            raise ValueError("accuracy prices one market in this process: pass scenarios, client, recalibrate and "
                             "progress as None")
        return priced_to_accuracy(instruments, wanted,  # type: ignore[arg-type]
                                  lambda book, mode: price_trades(book, curves, options.replace(errors=mode)), errors)
    if recalibrate is not None and not isinstance(instruments, Trades):
        raise TypeError("recalibrate needs dated trades (trinom.instruments.Trades) on dated curves: the model is "
                        "fitted to quotes on dates")
    if isinstance(instruments, Trades) and recalibrate is not None:  # the model fitted to the quotes in every scenario
        from .analytics.recalibration import Recalibration, price_recalibrated

        if not isinstance(recalibrate, Recalibration):
            raise TypeError(f"recalibrate must be a trinom.analytics.Recalibration, got {type(recalibrate).__name__}")
        if client is not None or progress is not None:
            raise ValueError("recalibrate runs one pricing per scenario in this process: pass client=None and "
                             "progress=None")
        refitted = price_recalibrated(instruments, curves, scenarios, recalibrate, options.arguments)
        return dataclasses.replace(refitted, notional=instruments.notionals())
    if isinstance(instruments, Trades):
        if scenarios is not None and is_dated(curves):  # curve moves at the dated curves' pillars
            from .analytics.recalibration import dated_curves, engine_scenarios

            scenarios = engine_scenarios(dated_curves(instruments, curves), scenarios)
        return price_trades(instruments, curves, options, scenarios=scenarios, client=client)
    return price_book(instruments, curves, options, scenarios=scenarios, client=client)


#: The engines that price bonds (see :mod:`trinom.backends`), then ``auto``.
BOND_BACKENDS: tuple[str, ...] = ("reference", "futhark", "cuda", "auto")


@dataclasses.dataclass(frozen=True)
class BondPrices:
    """Deprecated: :class:`trinom.Prices` holds the same columns (``price`` is ``dirty``, ``error`` is ``errors``)."""

    dirty: np.ndarray
    clean: np.ndarray
    accrued: np.ndarray
    errors: np.ndarray

    def __len__(self) -> int:
        return int(self.dirty.size)


def price_bonds(portfolio: BondPortfolio, curves: CurvesLike = None, *, backend: str = "auto", precision: str = "f64",
                errors: str = "raise", **options: Any) -> BondPrices:
    """Deprecated alias of :func:`trinom.price` for bonds (same arguments), returning :class:`BondPrices`."""
    warnings.warn("trinom.price_bonds is deprecated: use trinom.price, whose result has .price (dirty), .clean, "
                  ".accrued and .error", DeprecationWarning, stacklevel=2)
    result = price(portfolio, curves, backend=backend, precision=precision, errors=errors, **options)
    return BondPrices(dirty=result.price, clean=result.clean, accrued=result.accrued, errors=result.error)


def accrued_interest(portfolio: BondPortfolio) -> np.ndarray:
    """Deprecated alias of :meth:`BondPortfolio.accrued`."""
    warnings.warn("trinom.bonds.accrued_interest is deprecated: use BondPortfolio.accrued()", DeprecationWarning,
                  stacklevel=2)
    return portfolio.accrued()
