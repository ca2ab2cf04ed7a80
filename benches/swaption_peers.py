"""Bermudan swaptions against QuantLib 1.44's ``TreeSwaptionEngine`` at equal tree resolution, and a risk run with
recalibration against one pricing, side by side in one run (issue 26).

The book: ``--swaptions`` Bermudan swaptions on one curve, each exercisable on every fixed-leg start date from one
year out to the last period: swaps of 5 to 30 years, annual or semi-annual fixed legs (so annual or semi-annual
exercise), 30/360, fixed rates 2-5%, payer or receiver, Hull-White a = 0.05, sigma = 0.01, ``steps_per_year`` =
``--steps-per-year``. QuantLib prices ``--quantlib-sample`` of the same trades one at a time (``Swaption`` on a
``VanillaSwap`` with ``BermudanExercise``, ``TreeSwaptionEngine(model, steps)`` with ``steps`` the trade's years to
maturity times ``--steps-per-year``: the same steps as trinom's trees); its seconds per trade is the sample's mean
(the trades are of random lengths). trinom prices the whole book (median of ``--rounds`` after a warm-up).
Prints the seconds per trade, the ratio, and the largest price difference on the sample (per 100 of notional).

``--risk``: also ``trinom.risk`` of the book with the model recalibrated per trade (a fixed, sigma to each trade's
co-terminal ATM swaptions from a normal-vol matrix) in every scenario (dv01, duration, key rates and vega), against
one ``trinom.price`` of the same book (both from the trades, lowering included; medians of ``--rounds``).

    python benches/swaption_peers.py --backend futhark --target multicore --swaptions 2000 --quantlib-sample 20
    python benches/swaption_peers.py --backend cuda --swaptions 100000 --quantlib-seconds 0.9 --risk   (the H100)

The GPU machine has no QuantLib: there ``--quantlib-seconds`` gives QuantLib's seconds a trade measured on a CPU
(this script's output there), and the line says so.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import trinom
from trinom.instruments import Trades
from trinom.model import DatedCurve
from trinom.model.quotes import VolQuotes

AS_OF, A, SIGMA = "2026-11-25", 0.05, 0.01
PILLARS = ["2027-11-25", "2028-11-25", "2031-11-25", "2036-11-25", "2046-11-25", "2056-11-25", "2066-11-25",
           "2087-11-25"]
ZEROS = [0.025, 0.028, 0.032, 0.036, 0.038, 0.039, 0.0395, 0.0395]  # to the 30Y x 30Y quote's end
GRID = ["1Y", "2Y", "5Y", "10Y", "20Y", "30Y"]


def book_columns(count: int, steps_per_year: int, seed: int = 7) -> dict[str, object]:
    """The book's trades.csv columns (see the module)."""
    rng = np.random.default_rng(seed)
    years = rng.integers(5, 31, count)
    frequency = rng.choice([1, 2], count)
    start = np.datetime64("2027-11-25")
    maturity = np.array([str(np.datetime64(f"{2027 + y}-11-25")) for y in years.tolist()], dtype=object)
    months = 12 // frequency
    last = np.array([str(np.datetime64(f"{2027 + y}-11") - m) + "-25" for y, m in zip(years.tolist(), months.tolist(),
                                                                                      strict=True)], dtype=object)
    return {"id": [f"S{k}" for k in range(count)], "type": "swaption", "start": str(start), "maturity": maturity,
            "rate": np.round(rng.uniform(0.02, 0.05, count), 4), "frequency": frequency, "day_count": "30/360",
            "option": rng.choice(["payer", "receiver"], count), "exercise": "bermudan",
            "first_exercise": str(start), "last_exercise": last, "calendar": "NONE", "convention": "U",
            "notional": 100.0, "a": A, "sigma": SIGMA, "curve": "EUR", "steps_per_year": steps_per_year}


def curve() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="EUR")


def vols() -> VolQuotes:
    """A normal-vol matrix, 1Y-30Y expiries by 1Y-30Y tenors (rate units)."""
    expiry = [e for e in GRID for _ in GRID]
    tenor = GRID * len(GRID)
    level = [0.0095 - 0.00008 * (int(e[:-1]) + int(t[:-1]) / 2) for e, t in zip(expiry, tenor, strict=True)]
    return VolQuotes.from_columns(curve="EUR", expiry=expiry, tenor=tenor, vol=level, kind="normal")


def quantlib_prices(columns: dict[str, object], rows: np.ndarray, steps_per_year: int) -> tuple[list[float], float]:
    """QuantLib's prices of ``rows`` and its seconds for them all."""
    import QuantLib as ql  # noqa: N813 (the usual alias; only where QuantLib is measured)

    today = ql.DateParser.parseISO(AS_OF)
    ql.Settings.instance().evaluationDate = today
    c = curve()
    dates = [today] + [ql.DateParser.parseISO(d) for d in PILLARS]
    handle = ql.YieldTermStructureHandle(ql.DiscountCurve(dates, [1.0, *c.discount(PILLARS).tolist()],
                                                          ql.Actual365Fixed()))
    model = ql.HullWhite(handle, A, SIGMA)
    index = ql.IborIndex("I6M", ql.Period(6, ql.Months), 0, ql.EURCurrency(), ql.NullCalendar(), ql.Unadjusted, False,
                         ql.Actual365Fixed(), handle)
    prices, elapsed = [], 0.0
    for k in rows.tolist():
        begin, end = ql.DateParser.parseISO(str(columns["start"])), ql.DateParser.parseISO(str(columns["maturity"][k]))
        per_year = int(columns["frequency"][k])
        fixed = ql.Schedule(begin, end, ql.Period(12 // per_year, ql.Months), ql.NullCalendar(), ql.Unadjusted,
                            ql.Unadjusted, ql.DateGeneration.Forward, False)
        floating = ql.Schedule(begin, end, ql.Period(6, ql.Months), ql.NullCalendar(), ql.Unadjusted, ql.Unadjusted,
                               ql.DateGeneration.Forward, False)
        side = ql.Swap.Payer if columns["option"][k] == "payer" else ql.Swap.Receiver
        swap = ql.VanillaSwap(side, 100.0, fixed, float(columns["rate"][k]), ql.Thirty360(ql.Thirty360.BondBasis),
                              floating, index, 0.0, ql.Actual365Fixed())
        swaption = ql.Swaption(swap, ql.BermudanExercise(list(fixed)[:-1]))
        steps = round(steps_per_year * ql.Actual365Fixed().yearFraction(today, end))
        start = time.perf_counter()
        swaption.setPricingEngine(ql.TreeSwaptionEngine(model, steps))
        prices.append(swaption.NPV())
        elapsed += time.perf_counter() - start
    return prices, elapsed


def timed(rounds: int, call) -> tuple[float, object]:
    """The median seconds of ``rounds`` calls after a warm-up (lowering caches, engine start), and the last result."""
    out = call()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--swaptions", type=int, default=2000)
    parser.add_argument("--steps-per-year", type=int, default=50)
    parser.add_argument("--quantlib-sample", type=int, default=20)
    parser.add_argument("--quantlib-seconds", type=float, default=None,
                        help="QuantLib's seconds a trade measured elsewhere (a machine without QuantLib)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--target", default=None)
    parser.add_argument("--risk", action="store_true", help="also a risk run with recalibration against one pricing")
    parser.add_argument("--calibration-backend", default="numpy")
    parser.add_argument("--per", choices=("trade", "curve"), default="trade", help="the recalibration: per trade to "
                        "its co-terminal swaptions, or per curve to the whole matrix")
    parser.add_argument("--profile", action="store_true", help="print where the risk run's time goes (cProfile)")
    args = parser.parse_args()
    columns = book_columns(args.swaptions, args.steps_per_year)
    book, curves = Trades(as_of=AS_OF, **columns), {"EUR": curve()}
    run = dict(backend=args.backend, target=args.target)
    result = trinom.price(book, curves, **run)
    bad = int((result.error != "").sum())
    seconds, _ = timed(args.rounds, lambda: trinom.price(book, curves, **run))
    ours = seconds / args.swaptions
    sample = np.linspace(0, args.swaptions - 1, min(args.quantlib_sample, args.swaptions)).astype(np.int64)
    if args.quantlib_seconds is None:
        theirs_prices, spent = quantlib_prices(columns, sample, args.steps_per_year)
        theirs = spent / sample.size
        gap = float(np.max(np.abs(np.asarray(theirs_prices) - result.price[sample])))
        where, agreement = "", f"; largest difference on the {sample.size} sampled trades {gap:.2e} per 100"
    else:
        theirs, where, agreement = args.quantlib_seconds, " (given, measured on a CPU)", ""
    print(f"{args.swaptions} Bermudan swaptions at {args.steps_per_year} steps a year on {result.engine}: "
          f"{seconds:.3f} s, {ours * 1e6:.2f} us a trade ({bad} errors); QuantLib TreeSwaptionEngine {theirs:.4f} s a "
          f"trade{where}: {theirs / ours:.3g}x{agreement}", flush=True)
    if args.risk:
        from trinom.analytics import Recalibration

        how = Recalibration(vols=vols(), a=A, backend=args.calibration_backend, per=args.per)
        measures = ("dv01", "duration", "krd", "vega")
        risk_seconds, table = timed(max(1, args.rounds // 2), lambda: trinom.risk(
            book, curves, measures=measures, recalibrate=how, errors="mask", **run))
        failed = int(table.loc[table.error != "", "id"].nunique())
        print(f"risk with recalibration per {args.per} ({', '.join(measures)}; {table.factor.nunique()} factors, "
              f"{args.calibration_backend} calibration): {risk_seconds:.3f} s = {risk_seconds / seconds:.1f} pricings "
              f"({failed} trades with errors)", flush=True)
        if args.profile:
            import cProfile
            import pstats

            with cProfile.Profile() as profile:
                trinom.risk(book, curves, measures=measures, recalibrate=how, errors="mask", **run)
            pstats.Stats(profile).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
