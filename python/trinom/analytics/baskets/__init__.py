"""Per-trade (basket) Hull-White calibration: each trade's co-terminal European swaptions priced from a volatility
surface, and one ``(a, sigma)`` per trade fitted to them, every trade in one batched Levenberg-Marquardt (issue 26).
Formerly ``trinom.analytics.baskets`` (the same package under that name); split into :mod:`.building` (the baskets),
:mod:`.preparation` and :mod:`.quote_set` (the quotes), :mod:`.fit` and :mod:`.results`.

**Baskets** (:class:`Baskets`, built by :func:`trade_baskets` from per-trade arrays, or by :func:`book_baskets` (also
named :func:`bond_baskets`) from the swaptions and the callable and puttable bonds of a
:class:`~trinom.instruments.trades.Trades` book): per trade an id, a curve,
its exercise dates, the common end date (the trade's final maturity), the deal's fixed rate, the fixed leg's
frequency and day count, and payer or receiver. Exercise date ``e`` stands for the European swaption exercised on
``e`` into the swap from ``e`` to the end, its fixed leg generated forward from ``e``, unadjusted
(:meth:`~trinom.model.rate_options.Swaptions.on_curve`): the co-terminal swaptions of a Bermudan exercise.

**Quotes.** Each swaption's volatility is the surface's (:class:`~trinom.model.quotes.VolSurface`) at expiry
``(e - as_of) / 365`` and tenor ``(end - e) / 365`` years (bilinear, flat outside the grid), of the curve's kind;
its strike is the forward swap rate (``strike="atm"``) or the deal's rate (``"deal"``), its side the trade's; its
market price is Black's or Bachelier's formula (:mod:`trinom.model.volatility`) times its annuity. Exercise dates
on or before the as-of date are left out (named in the trade's message).

**The fit** is :func:`trinom.model.calibration.calibrate`'s, per trade: minimise ``sum_i e_i^2`` over the trade's
quotes (``error``: ``relative_price``, ``price`` or ``vol``), ``sigma`` always free, ``a`` free (``a=None``), fixed
for all (a number) or per trade (an array; NaN: free), by :func:`~trinom.model.calibration.levenberg_marquardt`
with all trades as one batch (masks for baskets of different sizes) and the analytic Jacobian.

**Statuses** per trade, each with a message; nothing fails silently:

* ``converged``: every quote is repriced within the solver's tolerance where the fit is exact (``sigma`` alone to
  one quote: 1e-12 of the volatility), and the residuals are reported otherwise;
* ``bound``: converged with a parameter at its bound (``a`` at its floor: the quotes ask for a mean reversion at or
  below zero);
* ``no fit``: no quote (no exercise date after the as-of date, an unknown curve, no volatility matrix for the
  curve, no positive market price, a trade without an option), a model price that is not finite, or no convergence
  in ``max_iterations``; ``a`` and ``sigma`` are NaN and the message says why.

**Scenarios** (a risk run's recalibration: the same baskets on moved curves and volatilities).
:func:`prepare_baskets` does once what no scenario moves: the quotes, their fixed legs' dates and accrual
fractions (one schedule per trade whose exercise dates lie on it, each quote's leg a tail of it, exactly the leg
generated from its own date; the other quotes' legs on their own), expiries, tenors and the surface's
volatilities; what of it depends on the baskets alone is kept with them for the next preparation, and a book's
baskets with the book (:func:`book_baskets`). Quotes that are alike (the same curve, exercise, leg, side and, for
``strike="deal"``, rate: in a book, the same co-terminal swaptions of many trades) are priced once per scenario:
:meth:`PreparedBaskets.quotes` prices them on a scenario's curves (discount factors once per date of the legs,
forward swap rates, annuities, strikes, market prices: the same numbers as quote by quote).
:func:`calibrate_prepared` fits many scenarios in batched calls, each trade from a start of its own (``x0``: a warm
start, such as its fit in the base scenario), a Futhark target taking what the scenarios share once and per
scenario only its distinct quotes' market data and its discount factors
(:func:`~trinom.engines.calibration_kernel.levenberg_marquardt_scenarios`); :func:`calibrate_scenarios` returns the
trades' fits alone (no per-quote outcome); :func:`calibrate_baskets` takes prepared baskets too.

A basket of **one quote with** ``a`` **free** cannot determine both parameters: ``a`` is held at its guess
(``a_guess``) and ``sigma`` fitted, exactly; the status is ``converged`` and the message says ``a`` was held.

>>> from trinom.model import DatedCurve
>>> from trinom.model.quotes import VolQuotes
>>> curve = DatedCurve(as_of="2025-01-02", dates=["2045-01-02"], zero_rates=[0.03], name="EUR")
>>> vols = VolQuotes.from_columns(curve="EUR", expiry=["1Y", "1Y", "5Y", "5Y"], tenor=["2Y", "10Y", "2Y", "10Y"],
...                               vol=[0.0095, 0.0085, 0.0080, 0.0075], kind="normal")
>>> baskets = trade_baskets(id=["T1", "T2"], curve="EUR", exercise=[["2026-01-02", "2027-01-04"], ["2028-01-03"]],
...                         end=["2031-01-02", "2033-01-03"], rate=[0.03, 0.035], frequency=1, day_count="30/360",
...                         side=["receiver", "payer"])
>>> fit = calibrate_baskets(curves=curve, vols=vols, as_of="2025-01-02", baskets=baskets, a=0.03)
>>> fit.status.tolist(), fit.sigma.round(6).tolist(), fit.rmse.round(6).tolist()
(['converged', 'converged'], [0.009542, 0.009226], [0.000107, 0.0])
"""

from .building import SIDES, Baskets, bond_baskets, book_baskets, trade_baskets
from .fit import ScenarioFits, calibrate_baskets, calibrate_prepared, calibrate_scenarios
from .preparation import STRIKES, PreparedBaskets, prepare_baskets
from .results import BasketCalibration

__all__ = [
    "SIDES",
    "STRIKES",
    "BasketCalibration",
    "Baskets",
    "PreparedBaskets",
    "ScenarioFits",
    "bond_baskets",
    "book_baskets",
    "calibrate_baskets",
    "calibrate_prepared",
    "calibrate_scenarios",
    "prepare_baskets",
    "trade_baskets",
]

#: The split modules' doctests, run with this package's (``doctest.testmod(trinom.analytics.baskets)``).
__test__ = {"trade_baskets": trade_baskets}
