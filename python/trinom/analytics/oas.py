"""Option-adjusted spreads from market prices, a whole book at once (issue 14, item 3).

:func:`oas` solves every bond's spread (the unit of :attr:`BondPortfolio.spread`: percent per year,
continuous, 1.0 = 100 bp) so that the model price equals the market price. The model price falls as the
spread rises, nearly exponentially, so each bond's root is found on ``log(model / market)``, nearly linear in
the spread: the first engine call prices every bond at its own spread and 1 bp either side (a quadratic
through them gives the first guess), and every later call prices each bond not yet converged at its guess
and a ten-thousandth of a bp above it, whose slope gives a Newton step (quadratic convergence: a few
calls); a bracket of the points whose gaps have opposite signs keeps the steps safe (false position where
Newton leaves it, bisection after three moves of the same end). The book is validated and lowered once
(:class:`trinom.spreads.SpreadPricer`); an engine call prices all the spreads of the call at once (the
forward pass of a bond's tree does not depend on its spread: ``cuda`` runs it once per bond and ``futhark``
on the CPU once per lattice), on any engine. An engine that searches spreads itself (``cuda``:
:meth:`~trinom.engines.Engine.solves_spreads`) takes the whole search in one call instead: per bond the
forward pass once, then Newton steps whose slope comes from the price's derivative by the spread, carried
through each backward pass beside the price, in the same sign bracket (``search="auto"``; ``"batched"``
forces the step-by-step search, ``"engine"`` the engine's). Each bond ends with a status; none is lost:

* ``"converged"``: ``|model - market| <= price_tolerance`` and ``<= relative_tolerance`` times the market's
  dirty price (so that the spreads of bonds worth almost nothing are found too);
* ``"price outside the attainable range"``: the market price is above the model price at the lowest
  spread of ``bracket`` or below it at the highest (the spread and price are then NaN, not a bracket's end);
* ``"the bond pays nothing ..."``: every cash flow is 0, so no spread gives a price (an error with
  ``errors="raise"``);
* ``"no convergence"``: ``max_iterations`` passed (the last spread and price are reported);
* the input's own error message, for a bond that cannot be priced or a market price that is not a
  positive number (``errors="mask"``; with ``errors="raise"``, the default, such input raises
  :class:`trinom.InputError` naming the row and the field, before any pricing).

**float32.** A float32 price carries about 3e-6 relative rounding noise, so the float64 tolerances (1e-9, and
1e-11 of the price) cannot be met: in float32 the defaults are a relative tolerance of
:data:`F32_RELATIVE_TOLERANCE` (1e-5 of the dirty price; no absolute one) and Newton's slope is taken over
:data:`NEWTON_STEPS` ``["f32"]`` (0.1 bp: over 1e-6 percent two float32 prices are equal). On books whose float32
prices are within 1e-5 of float64's (ordinary volatilities), every bond converges and its spread is within
5e-4 percent (0.05 bp) of float64's (tests/test_oas.py: 7- to 20-year callable and puttable bonds, market 5% either
side of the model, reference and futhark engines; measured 2.4e-4 on 200 such bonds, also on ``cuda``, both
searches, in at most 5 pricings). In general the spread is off by about (1e-5 + float32's price error) / the
bond's spread duration (per percent); bonds of extreme volatility, which float32 prices differently, may not
converge (their closest spread is reported).

>>> import trinom
>>> from trinom.bonds.generator import generate_bonds
>>> bonds, curves = generate_bonds("S1", 3, seed=1)
>>> model = trinom.price(bonds, curves, backend="reference").clean
>>> result = oas(bonds, curves, model + 1.0, backend="reference")
>>> bool((result.status == "converged").all()), bool((result.oas < bonds.spread).all())
(True, True)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..checks import check_choice, check_real, check_sequence, check_whole
from ..engines.engine import SEARCH_OUTCOMES, SearchLimits
from ..engines.options import check_price_arguments
from ..errors import InputError
from ..instruments.bond import BondPortfolio
from ..instruments.trades import Trades, single_instrument
from ..io.instrument_tables import as_portfolio
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from ..model.market import CurvesLike
from .spreads import SpreadPricer

CONVERGED = "converged"
OUTSIDE = "price outside the attainable range"
#: The status of a bond whose cash flows are all 0 (with ``errors="raise"``, its error).
PAYS_NOTHING = "the bond pays nothing (every cash flow is 0): no spread gives it a price"
NO_CONVERGENCE = "no convergence"
OVERFLOW = "the model price leaves the floating-point range inside the bracket"
#: How the search runs: the engine's own where it has one, the engine's, or step by step (any engine).
SEARCHES = ("auto", "engine", "batched")
#: The search's outcomes (index 0: none, the bond's message stands).
LABELS = ("", CONVERGED, OUTSIDE, NO_CONVERGENCE)
#: The first steps from a bond's own spread, for its slope and curvature (percent: 1 bp).
START_STEP = 0.01
#: The step beside every later guess that gives the slope there (percent: a ten-thousandth of a bp).
NEWTON_STEP = 1e-6
#: That step per precision: float32 prices a ten-thousandth of a bp apart are equal, so its slope is taken over 0.1 bp.
NEWTON_STEPS = {"f64": NEWTON_STEP, "f32": 1e-3}
#: The default relative price tolerance in float32 (about 80 float32 ulps; its absolute one is not binding): what
#: every engine's float32 prices reach on every bond of ordinary books (at 5e-6, 3% of the bonds measured do not).
F32_RELATIVE_TOLERANCE = 1e-5
#: The default (absolute, relative) price tolerances per precision (float32: no absolute one, i.e. the largest float:
#: the engines take finite tolerances only).
TOLERANCES = {"f64": (1e-9, 1e-11), "f32": (sys.float_info.max, F32_RELATIVE_TOLERANCE)}


@dataclass(frozen=True)
class OASResult:
    """Per bond, in input order: ``oas`` (percent, NaN if none), the model ``price`` at it (of
    ``price_type``), ``iterations`` (the engine calls the bond took part in), ``status`` (see the
    module) and ``error`` (``""`` where converged, else the status)."""

    oas: np.ndarray
    price: np.ndarray
    iterations: np.ndarray
    status: np.ndarray
    pricings: int

    @property
    def error(self) -> np.ndarray:
        return np.where(self.status == CONVERGED, "", self.status)

    def to_frame(self, ids: Sequence[str] | None = None) -> Any:
        """A pandas table ``id, oas, price, iterations, error`` (ids default to the row numbers)."""
        import pandas as pd

        rows = [str(i) for i in range(len(self.oas))] if ids is None else list(ids)
        return pd.DataFrame({"id": rows, "oas": self.oas, "price": self.price, "iterations": self.iterations,
                             "error": self.error})


def oas(bonds: BondPortfolio, curves: CurvesLike, market_prices: npt.ArrayLike, *,
        price_type: str = "clean", backend: str = "auto", precision: str = "f64", target: str | None = None,
        bracket: tuple[float, float] = (-20.0, 50.0), price_tolerance: float | None = None,
        relative_tolerance: float | None = None, max_iterations: int = 60, search: str = "auto",
        errors: str = "raise", progress: Callable[[float, float], None] | None = None, **options: Any) -> OASResult:
    """Every bond's option-adjusted spread for ``market_prices`` (per 100 face, ``price_type`` ``"clean"``
    or ``"dirty"``); ``bracket``: the lowest and highest spread searched (percent); ``price_tolerance``:
    the largest model-market difference accepted, ``relative_tolerance`` the largest relative to the dirty
    price (both must hold; None: float64's 1e-9 and 1e-11, float32's none and 1e-5, see the module);
    ``max_iterations``: the most pricings of one bond; ``search``: ``"auto"`` (the engine's own where it has
    one), ``"engine"`` or ``"batched"`` (see the module); ``errors``: ``"raise"`` (a bond that cannot be priced
    or a market price that is not a positive number raises :class:`trinom.InputError` naming the row and the
    field, before any pricing) or ``"mask"`` (NaN, and the message in ``result.error``); ``progress(done,
    total)``: called after every batched pricing with the bonds done (converged or given up); ``options`` go to
    :func:`trinom.price`; with ``client`` (a Dask client), or ``bonds`` placed by :func:`trinom.distribute`, every
    pricing of the search runs on the bonds' shards placed on the workers (trinom.analytics.placed_spreads.PlacedSpreadPricer).
    An argument of the wrong type or value is a ``TypeError`` or ``ValueError`` naming it."""
    check_price_arguments(backend=backend, precision=precision, target=target, device=options.get("device", 0),
                          errors=errors, max_width=options.get("max_width", DEFAULT_MAX_WIDTH),
                          max_steps=options.get("max_steps", DEFAULT_MAX_STEPS), progress=progress)
    client = options.pop("client", None)
    if getattr(bonds, "is_distributed_book", False):  # placed on Dask workers: searched there, nothing resent
        if client not in (None, bonds.client):  # type: ignore[union-attr]
            raise ValueError("this DistributedBook is placed through another client: pass client=None or its own")
        client = bonds.client  # type: ignore[union-attr]
        bonds = bonds.instruments  # type: ignore[union-attr]
    if client is not None:
        options["client"] = client
    if isinstance(bonds, Trades):  # dated bonds: their spreads as decimals, the trades' unit
        if isinstance(market_prices, Mapping):  # by trade id
            market_prices = _prices_by_id(market_prices, bonds.ids)
        block, market_curves, legs = single_instrument(bonds, curves)
        if not legs.is_identity():
            raise InputError([(None, "instruments", "OAS is a bond's: these trades hold swaptions or caps, which have "
                               "no spread to solve for")])
        found = oas(block, market_curves, market_prices, price_type=price_type, backend=backend, precision=precision,
                    target=target, bracket=bracket, price_tolerance=price_tolerance,
                    relative_tolerance=relative_tolerance, max_iterations=max_iterations, search=search,
                    errors=errors, progress=progress, **options)
        return replace(found, oas=found.oas / 100.0)
    block = as_portfolio(bonds)
    if not isinstance(block, BondPortfolio):
        raise TypeError("bonds must be a trinom.BondPortfolio (or a table of one): oas solves bonds' spreads; got "
                        f"{type(bonds).__name__}{' of options' if block is not None else ''}")
    bonds = block
    check_choice("price_type", price_type, ("clean", "dirty"))
    check_choice("search", search, SEARCHES)
    ends = check_sequence("bracket", bracket, of="two spreads (percent), low < high")
    if len(ends) != 2:
        raise ValueError(f"bracket must be two spreads (percent), low < high; got {len(ends)} values")
    bracket = (check_real("bracket[0]", ends[0]), check_real("bracket[1]", ends[1]))
    if not bracket[0] < bracket[1]:
        raise ValueError(f"bracket must be two spreads (percent), low < high; got {bracket!r}")
    default_tolerance, default_relative = TOLERANCES[precision]
    tolerance = default_tolerance if price_tolerance is None else check_real("price_tolerance", price_tolerance,
                                                                             nonnegative=True)
    relative = default_relative if relative_tolerance is None else check_real("relative_tolerance",
                                                                              relative_tolerance, nonnegative=True)
    max_iterations = check_whole("max_iterations", max_iterations, minimum=1)
    limits = SearchLimits(bracket=bracket, tolerance=tolerance, relative_tolerance=relative,
                          max_iterations=max_iterations)
    target_prices = _market_prices(market_prices, len(bonds))
    newton_step = NEWTON_STEPS[precision]
    n = len(bonds)
    status = np.full(n, "", dtype=object)  # an input's or the pricer's message
    state = np.zeros(n, dtype=np.int8)  # else the search's outcome: an index of LABELS (0: none yet)
    spread = np.full(n, np.nan)
    model = np.full(n, np.nan)
    iterations = np.zeros(n, dtype=np.int64)
    pricings = 0

    if options.get("client") is not None:  # the bonds placed on the workers once; every pricing runs there
        from .placed_spreads import PlacedSpreadPricer

        pricer: SpreadPricer = PlacedSpreadPricer(options.pop("client"), bonds, curves, backend=backend,
                                                  precision=precision, target=target, **options)
    else:
        options.pop("client", None)
        pricer = SpreadPricer(bonds, curves, backend=backend, precision=precision, target=target, **options)

    def model_price(rows: np.ndarray, *spreads: np.ndarray) -> list[np.ndarray]:
        """The model prices of ``rows`` at each of ``spreads`` (one engine call for all)."""
        nonlocal pricings
        pricings += 1
        iterations[rows] += 1
        if progress is not None:  # the bonds done: converged or given up
            progress(float(np.count_nonzero((state != 0) | (status != ""))), float(n))
        dirty = pricer.dirty(np.tile(rows, len(spreads)), np.concatenate(spreads))
        values = dirty - np.tile(pricer.accrued[rows], len(spreads)) if price_type == "clean" else dirty
        return np.split(values, len(spreads))

    bad_price = ~(np.isfinite(target_prices) & (target_prices > 0))
    pays_nothing = _pays_nothing(bonds)
    if errors == "raise":  # the input's problems, before any pricing
        problems = list(pricer.job.problems) + [(int(row), "market_prices", "market price must be a positive number, "
                                                 f"got {float(target_prices[row])!r}") for row in np.flatnonzero(bad_price)]
        problems += [(int(row), "repayment", PAYS_NOTHING) for row in np.flatnonzero(pays_nothing)]
        if problems:
            raise InputError(sorted(problems, key=lambda p: (-1 if p[0] is None else p[0])))
    status[bad_price] = "market price must be a positive number"
    status[pays_nothing & ~bad_price] = PAYS_NOTHING
    rows = np.flatnonzero(~bad_price & ~pays_nothing)
    if search == "engine" and not pricer.solves:
        raise ValueError(f"engine {pricer.label!r} has no spread search of its own (use search='batched')")
    if search != "batched" and pricer.solves:
        return _engine_search(pricer, rows, target_prices, status, price_type=price_type, limits=limits,
                              progress=progress)
    dirty_goal = target_prices + pricer.accrued if price_type == "clean" else target_prices

    def close(values: np.ndarray, where: np.ndarray) -> np.ndarray:
        """Whether model prices ``values`` of rows ``where`` meet both tolerances."""
        miss = np.abs(values - target_prices[where])
        return (miss <= tolerance) & (miss <= relative * dirty_goal[where])

    # log(model / market): positive below the root, negative above it.
    def gap(values: np.ndarray, where: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(values / target_prices[where])

    # The start: the gap at the bond's own spread and 1 bp either side, whose slope and curvature give a
    # first guess (the root of the quadratic through them, else Newton's). Then every iteration prices each
    # bond at its guess and newton_step above it: a Newton step with that slope (quadratic convergence),
    # kept inside the bracket of the points whose gaps have opposite signs, known as soon as both signs are
    # seen; false position on that bracket where the step leaves it, bisection after three moves of the
    # same end. Before both signs are seen an end of ``bracket`` stands in, and a step that reaches it and
    # keeps the sign means the price is outside the attainable range.
    own = np.clip(bonds.spread[rows].astype(np.float64), bracket[0] + START_STEP, bracket[1] - START_STEP)
    points = (own - START_STEP, own, own + START_STEP)
    prices = model_price(rows, *points)
    gaps = [gap(values, rows) for values in prices]
    failed = pricer.error[rows] != ""
    status[rows[failed]] = pricer.error[rows][failed]
    overflow = ~failed & ~np.logical_and.reduce([np.isfinite(values) for values in prices])
    status[rows[overflow]] = OVERFLOW
    failed |= overflow
    for x, p_x in zip(points, prices, strict=True):
        done = ~failed & close(p_x, rows)
        done &= state[rows] == 0
        spread[rows[done]], model[rows[done]], state[rows[done]] = x[done], p_x[done], LABELS.index(CONVERGED)
    keep = ~failed & (state[rows] == 0)
    rows, own = rows[keep], own[keep]
    below, here, above = (f[keep] for f in gaps)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope, curvature = (above - below) / (2 * START_STEP), (above - 2 * here + below) / START_STEP**2
        root = np.sqrt(slope**2 - 2 * curvature * here)
        step = -2 * here / (slope + np.copysign(root, slope))  # the quadratic's root nearer to the bond's spread
        step = np.where(np.isfinite(step), step, -here / slope)
    proposal = own + step
    # The bracket: the highest point with a gap >= 0 and the lowest with a gap <= 0 (+-inf: none yet).
    xs, fs = np.stack([own - START_STEP, own, own + START_STEP]), np.stack([below, here, above])
    with np.errstate(invalid="ignore"):
        lows, highs = np.where(fs >= 0, xs, -np.inf), np.where(fs <= 0, xs, np.inf)
    columns = np.arange(rows.size)
    pick_low, pick_high = lows.argmax(axis=0), highs.argmin(axis=0)
    low_known, high_known = np.isfinite(lows[pick_low, columns]), np.isfinite(highs[pick_high, columns])
    low = np.where(low_known, xs[pick_low, columns], bracket[0])
    f_low = np.where(low_known, fs[pick_low, columns], np.inf)
    high = np.where(high_known, xs[pick_high, columns], bracket[1])
    f_high = np.where(high_known, fs[pick_high, columns], -np.inf)
    same = np.zeros(rows.size, dtype=np.int64)  # signed run of moves of one end (+: low, -: high)
    for _ in range(max_iterations):
        if rows.size == 0:
            break
        known = np.isfinite(f_low) & np.isfinite(f_high)
        with np.errstate(divide="ignore", invalid="ignore"):
            position = (low * f_high - high * f_low) / (f_high - f_low)
        inside = np.isfinite(proposal) & (proposal > low) & (proposal < high)
        guess = np.where(inside, proposal, np.where(known, position, np.clip(proposal, low, high)))
        fine = np.isfinite(guess) & (guess >= low) & (guess <= high) & (~known | ((guess > low) & (guess < high)))
        guess = np.where(fine & (np.abs(same) < 3), guess, 0.5 * (low + high))
        nudged = guess + newton_step
        p_guess, p_nudged = model_price(rows, guess, nudged)
        f_guess, f_nudged = gap(p_guess, rows), gap(p_nudged, rows)
        for x, p_x in ((guess, p_guess), (nudged, p_nudged)):
            done = close(p_x, rows) & (state[rows] == 0)
            spread[rows[done]], model[rows[done]] = x[done], p_x[done]
            state[rows[done]] = LABELS.index(CONVERGED)
        done = state[rows] != 0
        beyond = ~done & (((guess >= bracket[1]) & (f_guess > 0)) | ((guess <= bracket[0]) & (f_guess < 0)))
        state[rows[beyond]] = LABELS.index(OUTSIDE)
        above = f_guess > 0  # the root lies above the guess: the guess is the new low end
        same = np.where(above, np.maximum(same, 0) + 1, np.minimum(same, 0) - 1) * known
        low, f_low = np.where(above, guess, low), np.where(above, f_guess, f_low)
        high, f_high = np.where(above, high, guess), np.where(above, f_high, f_guess)
        beyond_nudge = f_nudged > 0
        low, f_low = np.where(beyond_nudge, nudged, low), np.where(beyond_nudge, f_nudged, f_low)
        high, f_high = np.where(~beyond_nudge & (nudged < high), nudged, high), np.where(
            ~beyond_nudge & (nudged < high), f_nudged, f_high)
        with np.errstate(divide="ignore", invalid="ignore"):
            proposal = guess - f_guess * newton_step / (f_nudged - f_guess)
        keep = ~done & ~beyond
        rows, low, high, f_low, f_high = rows[keep], low[keep], high[keep], f_low[keep], f_high[keep]
        proposal, same = proposal[keep], same[keep]
        spread[rows] = np.where(np.abs(f_low) < np.abs(f_high), low, high)
    state[rows] = LABELS.index(NO_CONVERGENCE)
    if rows.size:
        (model[rows],) = model_price(rows, spread[rows])
        iterations[rows] -= 1  # the report's pricing is not an iteration
    if progress is not None:
        progress(float(n), float(n))
    outside = state == LABELS.index(OUTSIDE)  # no spread in the bracket reaches the price: none is reported
    spread[outside], model[outside] = np.nan, np.nan
    return OASResult(oas=spread, price=model, iterations=iterations, status=_statuses(state, status), pricings=pricings)


def _market_prices(market_prices: npt.ArrayLike, count: int) -> np.ndarray:
    """The market prices as float64, one per bond (a value that is no number, or the wrong count, is an error
    naming ``market_prices``; a number that is no positive price is the bond's own problem, reported later)."""
    if market_prices is None or isinstance(market_prices, (str, bytes)):
        raise TypeError(f"market_prices must be numbers, one per bond ({count}), got {market_prices!r}")
    try:
        prices = np.asarray(market_prices, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"market_prices must be numbers, one per bond ({count}); some entry is no number") from None
    if prices.ndim == 0 or prices.size != count:
        raise InputError([(None, "market_prices", f"market_prices has {prices.size} entries, expected one per bond "
                           f"({count}), in the book's order (or, for trades, a mapping of each trade's id to its "
                           "price)")])
    return prices.reshape(-1)


def _prices_by_id(market_prices: Mapping[Any, Any], ids: Sequence[str]) -> list[Any]:
    """A mapping of trade ids to market prices as a list in the trades' order; an id it lacks or one no trade has is
    an error naming it."""
    given = {str(key): value for key, value in market_prices.items()}
    problems = [(row, "market_prices", f"market_prices has no price for trade {name!r}")
                for row, name in enumerate(ids) if name not in given]
    strangers = sorted(set(given) - set(ids))
    problems += [(None, "market_prices", f"market_prices names {name!r}, which is no trade of the book")
                 for name in strangers[:10]]
    if problems:
        raise InputError(problems)
    return [given[name] for name in ids]


def _engine_search(pricer: SpreadPricer, rows: np.ndarray, market: np.ndarray, status: np.ndarray, *, price_type: str,
                   limits: SearchLimits, progress: Callable[[float, float], None] | None) -> OASResult:
    """The search inside the engine, one call for the bonds ``rows`` (those with a usable market price)."""
    n = len(market)
    if progress is not None:
        progress(float(n - rows.size), float(n))
    accrued = pricer.accrued if price_type == "clean" else np.zeros(n)
    goal = np.full(n, np.nan)
    goal[rows] = market[rows] + accrued[rows]  # the dirty price to reach
    found = pricer.solve(goal, limits)
    # The engine's outcomes (SEARCH_OUTCOMES) as LABELS; overflow and skipped rows keep their message.
    label_of = {"converged": CONVERGED, "outside": OUTSIDE, "no convergence": NO_CONVERGENCE}
    outcome = np.array([LABELS.index(label_of.get(name, "")) for name in SEARCH_OUTCOMES], dtype=np.int8)
    state = np.zeros(n, dtype=np.int8)
    state[rows] = outcome[found.status[rows]]
    failed = rows[pricer.error[rows] != ""]
    status[failed] = pricer.error[failed]
    overflow = rows[found.status[rows] == SEARCH_OUTCOMES.index("overflow")]
    status[overflow] = OVERFLOW
    if progress is not None:
        progress(float(n), float(n))
    outside = state == LABELS.index(OUTSIDE)  # as the step-by-step search: no spread reaches the price
    return OASResult(oas=np.where(outside, np.nan, found.spread),
                     price=np.where(outside, np.nan, found.price - accrued), iterations=found.iterations,
                     status=_statuses(state, status), pricings=1)


def _pays_nothing(bonds: BondPortfolio) -> np.ndarray:
    """Per bond, whether every cash flow it has is 0 (its price is 0 at every spread: no spread can be solved)."""
    amounts = np.abs(np.asarray(bonds.repayment, dtype=np.float64) + np.asarray(bonds.coupon, dtype=np.float64))
    owner = np.repeat(np.arange(len(bonds)), bonds.cashflow_count)
    paid = np.bincount(owner, weights=np.nan_to_num(amounts, nan=1.0), minlength=len(bonds))
    return paid == 0


def _statuses(state: np.ndarray, messages: np.ndarray) -> np.ndarray:
    """Each bond's status (Python strings in an object array, as pandas holds text): its outcome's label,
    or its message where the search never ran; a gather, not a conversion per bond."""
    rare = np.flatnonzero(state == 0)
    out = np.array(LABELS, dtype=object)[state]
    out[rare] = messages[rare]
    return out


__all__ = ["CONVERGED", "NO_CONVERGENCE", "OUTSIDE", "OASResult", "oas"]
