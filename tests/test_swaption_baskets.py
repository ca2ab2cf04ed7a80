"""Per-trade calibration baskets of the swaption rows of trades.csv (issue 26): their exercise dates are the tree's
(and QuantLib's schedule's), a book of swaptions, callable bonds (coupon windows and schedule.csv dates), caps and
floors calibrated together, a one-quote European basket repriced within 0.1 bp and then priced on the lattice
within its discretisation error of the market price, and ``trinom calibrate`` end to end (schedule.csv,
notionals.csv, one model row per trade, caps and expired swaptions ``no fit`` with their reasons)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import trinom
from trinom.analytics.baskets import bond_baskets, book_baskets, calibrate_baskets
from trinom.cli import main
from trinom.instruments import TRADE_COLUMNS, Trades, read_trades
from trinom.instruments.bond import BondPortfolio
from trinom.model import read_dated_curves

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2028-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
ZEROS = [0.025, 0.028, 0.032, 0.036, 0.038]
CURVE_FILE = "curve,date,zero\n" + "".join(f"EUR,{d},{z}\n" for d, z in zip(PILLARS, ZEROS, strict=True))
EXPIRIES = ["6M", "1Y", "2Y", "5Y", "10Y"]
TENORS = ["1Y", "2Y", "5Y", "10Y", "20Y"]
VOLS_FILE = "curve,expiry,tenor,vol,kind\n" + "".join(
    f"EUR,{e},{t},{0.0092 - 0.0001 * i - 0.00005 * j + 0.0001 * ((i * j) % 3):.5f},normal\n"
    for i, e in enumerate(EXPIRIES) for j, t in enumerate(TENORS))
#: A tenth of a basis point of normal volatility (rate units).
TENTH_BP = 1e-5

# swaptions: european and bermudan, payer and receiver, annual and semi-annual fixed legs, a calendar, one started
# before the as-of date (two of its dates on or before it) and one whose only date is past
SWAPTIONS = {
    "id": ["SE", "SP", "SR", "SS", "SQ", "SD"],
    "type": "swaption",
    "start": ["2027-11-25", "2027-11-25", "2027-11-29", "2027-05-25", "2025-11-25", "2026-06-25"],
    "maturity": ["2032-11-25", "2037-11-25", "2034-11-29", "2035-05-25", "2031-11-25", "2031-06-25"],
    "rate": [0.033, 0.036, 0.031, 0.034, 0.030, 0.032],
    "option": ["receiver", "payer", "receiver", "payer", "receiver", "payer"],
    "exercise": ["european", "bermudan", "bermudan", "bermudan", "bermudan", "european"],
    "first_exercise": [None, None, "2028-05-29", None, None, None],
    "last_exercise": [None, "2036-11-25", "2033-05-30", None, None, None],
    "frequency": [1, 1, 2, 2, 1, 1],
    "day_count": ["30/360", "30/360", "ACT/360", "30/360", "ACT/365F", "30/360"],
    "calendar": [None, None, "TARGET", None, "TARGET", None],
    "convention": [None, "U", "MF", None, "F", None],
    "float_frequency": [None, 2, 4, 2, None, None],
    "notional": [None, 1e6, None, 5e5, None, None],
}
EXPECTED = {  # each swaption's fixed-leg start dates in its window (SR: TARGET, modified following)
    "SE": ["2027-11-25"],
    "SP": [f"{y}-11-25" for y in range(2027, 2037)],
    "SR": ["2028-05-29", "2028-11-29", "2029-05-29", "2029-11-29", "2030-05-29", "2030-11-29", "2031-05-29",
           "2031-11-28", "2032-05-31", "2032-11-29", "2033-05-30"],
    "SS": [f"{y}-{m}-25" for y in range(2027, 2035) for m in ("05", "11")],
    "SQ": ["2025-11-25", "2026-11-25", "2027-11-25", "2028-11-27", "2029-11-26", "2030-11-25"],
    "SD": ["2026-06-25"],
}
# bonds: a bermudan call on coupon dates, an american put, calls on schedule.csv dates (bermudan, american)
BONDS = {
    "id": ["C1", "P1", "L1", "A1"],
    "type": "bond",
    "issue": ["2024-03-15", "2025-06-30", "2025-01-15", "2025-01-15"],
    "maturity": ["2036-03-15", "2031-06-30", "2035-01-15", "2033-01-15"],
    "coupon": [0.05, 0.04, 0.04, 0.035],
    "frequency": [2, 1, 1, 1],
    "day_count": ["30/360", "ACT/ACT-ICMA", "30/360", "30/360"],
    "calendar": ["TARGET", "TARGET", None, None],
    "convention": ["F", "MF", "U", "U"],
    "option": ["call", "put", "call", "call"],
    "exercise": ["bermudan", "american", "bermudan", "american"],
    "first_exercise": ["2028-03-15", "2027-06-30", None, None],
    "last_exercise": ["2035-09-15", "2030-06-30", None, None],
    "exercise_price": [100.0, 99.0, None, None],
    "notional": [None, 1000.0, None, None],
}
SCHEDULE = {"id": ["L1", "L1", "L1", "A1", "A1"],
            "date": ["2028-01-15", "2030-01-15", "2032-01-15", "2029-01-15", "2031-01-15"],
            "price": [101.0, 100.5, 100.0, 101.0, 100.0]}
NOTIONALS = {"id": ["P1"], "date": ["2029-06-29"], "notional": [600.0]}
CAPS = {"id": ["K1", "F1"], "type": ["cap", "floor"], "start": ["2027-02-25", "2027-02-25"],
        "maturity": ["2031-11-25", "2030-11-25"], "rate": [0.03, 0.025], "frequency": [4, 2]}


def columns(*parts: dict[str, object]) -> dict[str, list[object]]:
    """The parts' rows one after the other, as trades.csv columns (cells a part lacks empty), all on curve EUR."""
    sizes = [len(part["id"]) for part in parts]  # type: ignore[arg-type]
    names = [name for name in TRADE_COLUMNS if any(name in part for part in parts)]
    out: dict[str, list[object]] = {}
    for name in names:
        cells: list[object] = []
        for part, size in zip(parts, sizes, strict=True):
            value = part.get(name)
            cells += list(value) if isinstance(value, list) else [value] * size
        out[name] = cells
    out["curve"] = ["EUR"] * sum(sizes)
    return out


def vol_table() -> pd.DataFrame:
    """The vols file as a table."""
    return pd.read_csv(io.StringIO(VOLS_FILE))


def day(text: str) -> np.datetime64:
    return np.datetime64(text, "D")


def tree_exercise_dates(trades: Trades) -> list[list[str]]:
    """Per swaption of a book of swaptions, the dates of its tree's listed exercise points (one step a day: a step is
    a day)."""
    (_first, trees), = trades.with_columns(a=0.05, sigma=0.01).instruments(["EUR"])
    assert isinstance(trees, BondPortfolio) and len(trees) == 2 * len(trades)
    offsets = np.concatenate([[0], np.cumsum(trees.exercise_count)])
    assert trees.exercise_count[0::2].tolist() == [0] * len(trades)  # the plain bonds have none
    return [[str(day(AS_OF) + int(s)) for s in trees.exercise_step[offsets[k]:offsets[k + 1]]]
            for k in range(1, 2 * len(trades), 2)]


@pytest.fixture(scope="module")
def curves() -> dict[str, object]:
    from trinom.model import DatedCurve

    return {"EUR": DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="EUR")}


@pytest.fixture(scope="module")
def vols(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("vols") / "vols.csv"
    path.write_text(VOLS_FILE)
    return path


# --- baskets ---------------------------------------------------------------------------------------------------------

def test_swaption_baskets_are_on_the_dates_the_tree_exercises():
    trades = Trades(as_of=AS_OF, **columns(SWAPTIONS))
    b = book_baskets(trades)
    assert bond_baskets is book_baskets  # the former name
    assert b.id.tolist() == SWAPTIONS["id"]
    for k, name in enumerate(b.id.tolist()):
        assert [str(d) for d in b.exercise_dates(k)] == EXPECTED[name], name
    # the tree (the lowering's own dates, one step a day) exercises on exactly the basket's dates after the as-of date
    alive = Trades(as_of=AS_OF, **{k: v[:-1] if isinstance(v, list) else v for k, v in columns(SWAPTIONS).items()})
    for k, dates in enumerate(tree_exercise_dates(alive)):
        assert dates == [str(d) for d in b.exercise_dates(k) if d > day(AS_OF)], b.id[k]
    # the co-terminal swaptions: into the swap to its maturity, at its fixed rate, on its fixed leg, its side
    assert [str(d) for d in b.end] == SWAPTIONS["maturity"]
    assert b.rate.tolist() == SWAPTIONS["rate"]
    assert b.frequency.tolist() == SWAPTIONS["frequency"]
    assert b.day_count.tolist() == SWAPTIONS["day_count"]
    assert b.payer.tolist() == [side == "payer" for side in SWAPTIONS["option"]]
    assert b.note.tolist() == [""] * len(b)


def test_swaption_dates_agree_with_quantlibs_schedule():
    ql = pytest.importorskip("QuantLib")
    # SR: semi-annual on TARGET, modified following, generated backward from maturity: its periods' starts in the window
    schedule = ql.Schedule(ql.Date(29, 11, 2027), ql.Date(29, 11, 2034), ql.Period(6, ql.Months), ql.TARGET(),
                           ql.ModifiedFollowing, ql.ModifiedFollowing, ql.DateGeneration.Backward, False)
    starts = [d.ISO() for d in list(schedule)[:-1]]
    assert [d for d in starts if "2028-05-29" <= d <= "2033-05-30"] == EXPECTED["SR"]


def test_caps_floors_and_bonds_get_their_notes_and_schedule_dates():
    book = columns(SWAPTIONS, BONDS, CAPS)
    trades = Trades(as_of=AS_OF, schedule=SCHEDULE, notionals=NOTIONALS, **book)
    b = book_baskets(trades, curve_names=["EUR"])
    at = {name: k for k, name in enumerate(b.id.tolist())}
    for name, dates in EXPECTED.items():  # the bonds and caps do not move the swaptions' baskets
        assert [str(d) for d in b.exercise_dates(at[name])] == dates
    # a bermudan on schedule.csv dates: exactly those; an american: those and the coupon dates between, to maturity
    assert [str(d) for d in b.exercise_dates(at["L1"])] == SCHEDULE["date"][:3]
    assert [str(d) for d in b.exercise_dates(at["A1"])] == ["2029-01-15", "2030-01-15", "2031-01-15", "2032-01-15"]
    assert b.note[at["A1"]] == "an exercise on the maturity date (no swap left) is left out"
    assert str(b.exercise_dates(at["C1"])[0]) == "2028-03-15" and b.counts[at["P1"]] == 4
    assert b.payer[[at["C1"], at["P1"], at["L1"]]].tolist() == [False, True, False]  # a call is a receiver
    for name in ("K1", "F1"):
        assert b.counts[at[name]] == 0 and "cap strip" in b.note[at[name]]
    # without the schedule, L1 has no window to read (first_exercise is needed): the book says so, naming the cell
    with pytest.raises(trinom.InputError, match="first_exercise is missing"):
        book_baskets(Trades(as_of=AS_OF, **book))


def test_a_swaption_window_without_a_fixed_leg_start_date_is_no_fit(curves):
    book = columns({**SWAPTIONS, "first_exercise": ["2028-03-01", *SWAPTIONS["first_exercise"][1:]],
                    "last_exercise": ["2028-06-01", *SWAPTIONS["last_exercise"][1:]],
                    "exercise": ["bermudan", *SWAPTIONS["exercise"][1:]]})
    b = book_baskets(Trades(as_of=AS_OF, **book))
    assert b.counts[0] == 0 and b.note[0].startswith("no fixed-leg start date between first_exercise 2028-03-01")
    fit = calibrate_baskets(curves=curves, vols=vol_table(), as_of=AS_OF, baskets=b, a=0.05)
    assert fit.status[0] == "no fit" and fit.message[0] == b.note[0]


# --- calibration -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("strike", ["atm", "deal"])
def test_a_book_of_swaptions_and_callable_bonds_calibrates_together(curves, strike):
    trades = Trades(as_of=AS_OF, schedule=SCHEDULE, notionals=NOTIONALS, **columns(SWAPTIONS, BONDS, CAPS))
    baskets = book_baskets(trades, curve_names=["EUR"])
    fit = calibrate_baskets(curves=curves, vols=vol_table(), as_of=AS_OF, baskets=baskets, a=0.05,
                            strike=strike)
    at = {name: k for k, name in enumerate(fit.id.tolist())}
    live = ["SE", "SP", "SR", "SS", "SQ", "C1", "P1", "L1", "A1"]
    assert [fit.status[at[n]] for n in live] == ["converged"] * len(live), fit.message
    # one quote per exercise date after the as-of date: the tree's dates
    expected = [sum(d > day(AS_OF) for d in baskets.exercise_dates(at[n])) for n in live]
    assert [int(fit.quote_count[at[n]]) for n in live] == expected
    assert fit.quote_count[at["SQ"]] == 4  # started before the as-of date: its 2 dates on or before it are gone
    for name in ("SE", "SP", "SR", "SS", "SQ"):
        mine = fit.trade == at[name]
        assert (fit.payer[mine] == baskets.payer[at[name]]).all()
        assert (fit.end[mine] == baskets.end[at[name]]).all()
        if strike == "deal":
            assert (fit.strike[mine] == baskets.rate[at[name]]).all()
        else:
            np.testing.assert_array_equal(fit.strike[mine], fit.forward[mine])
    # one quote, sigma alone: exact
    assert abs(fit.residual[fit.trade == at["SE"]][0]) < 1e-6 * TENTH_BP
    for name in ("K1", "F1"):
        assert fit.status[at[name]] == "no fit" and "cap strip" in fit.message[at[name]]
        assert np.isnan(fit.a[at[name]]) and np.isnan(fit.sigma[at[name]])
    assert fit.status[at["SD"]] == "no fit"
    assert fit.message[at["SD"]] == "no exercise date after the as-of date 2026-11-25 (1 on or before it)"
    # each trade's fit is its own: the swaptions alone give the same parameters
    alone = calibrate_baskets(curves=curves, vols=vol_table(), as_of=AS_OF, a=0.05, strike=strike,
                              baskets=book_baskets(Trades(as_of=AS_OF, **columns(SWAPTIONS))))
    np.testing.assert_allclose(fit.sigma[:len(alone)], alone.sigma, rtol=1e-12)


# --- the command line: calibrate, then price on the lattice ----------------------------------------------------------

def write(path: Path, table: dict[str, list[object]]) -> Path:
    pd.DataFrame(table).to_csv(path, index=False)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_european_swaptions_reprice_their_quotes_and_the_market_on_the_lattice(tmp_path: Path, vols: Path, capsys):
    """``a`` fixed, ``sigma`` fitted to one quote at the deal's strike: within 0.1 bp of its vol; then ``trinom price
    --model`` on the lattice (one step a day) gives the Bachelier price of the surface's vol within the tree's
    discretisation error (docs/convergence.md): measured 2.3e-4, 7.8e-4 and 1.07e-3 per 100 here (the 10-year payer;
    1460 steps a year: 1.7e-4, 2.7e-5, 2.2e-4), under the price of 0.1 bp of vol. The fixed legs are unadjusted
    whole periods, so the trade's swap (generated backward from maturity) is the quote's (forward from the
    exercise)."""
    from trinom.model.volatility import bachelier_implied_vol, bachelier_price

    curve = tmp_path / "curve.csv"
    curve.write_text(CURVE_FILE)
    book = {"id": ["ER", "EP", "EL"], "type": "swaption", "start": ["2027-11-25", "2028-05-25", "2027-11-25"],
            "maturity": ["2032-11-25", "2035-05-25", "2037-11-25"], "rate": [0.033, 0.036, 0.030],
            "option": ["receiver", "payer", "payer"], "exercise": "european", "frequency": [1, 2, 1],
            "day_count": ["30/360", "ACT/360", "30/360"], "notional": [100.0, 1e6, 100.0], "curve": "EUR"}
    trades = write(tmp_path / "trades.csv", {k: v if isinstance(v, list) else [v] * 3 for k, v in book.items()})
    model, quotes = tmp_path / "model.csv", tmp_path / "quotes.csv"
    code, err = run(capsys, "calibrate", trades, "--curve", curve, "--vols", vols, "--as-of", AS_OF, "--a", "0.05",
                    "--strike", "deal", "--out", model, "--quotes-out", quotes)
    assert code == 0, err
    fitted = pd.read_csv(model, keep_default_na=False)
    assert fitted.status.tolist() == ["converged"] * 3 and (fitted.a == 0.05).all()
    q = pd.read_csv(quotes, float_precision="round_trip")
    assert q.id.tolist() == ["ER", "EP", "EL"] and q.exercise.tolist() == book["start"]
    assert q.strike.tolist() == book["rate"] and q.payer.tolist() == [False, True, True]
    assert np.abs(q.model_vol - q.market_vol).max() < TENTH_BP
    prices = tmp_path / "prices.csv"
    code, err = run(capsys, "price", trades, "--curve", curve, "--as-of", AS_OF, "--model", model, "--out", prices)
    assert code == 0, err
    lattice = pd.read_csv(prices, keep_default_na=False, float_precision="round_trip")
    assert lattice.error.tolist() == ["", "", ""]
    per_unit = lattice.price.to_numpy() / 100.0  # per 100 of notional (issue 35); value is in currency
    np.testing.assert_allclose(lattice.value.to_numpy(), lattice.price.to_numpy() * np.array(book["notional"]) / 100,
                               rtol=1e-15)
    market = q.market_price.to_numpy()  # Bachelier at the surface's vol, per unit notional
    assert np.abs(per_unit - market).max() * 100 < 1.2e-3
    quote = {"forward": q.forward.to_numpy(), "strike": q.strike.to_numpy(), "expiry": q.expiry.to_numpy()}
    annuity = market / bachelier_price(**quote, annuity=1.0, vol=q.market_vol.to_numpy(), is_call=q.payer.to_numpy())
    vol = bachelier_implied_vol(price=per_unit, **quote, annuity=annuity, is_call=q.payer.to_numpy())
    assert np.abs(vol - q.market_vol).max() < TENTH_BP  # the lattice's price is the surface's vol within 0.1 bp


def test_calibrate_end_to_end_one_model_row_per_trade(tmp_path: Path, vols: Path, curves, capsys):
    curve = tmp_path / "curve.csv"
    curve.write_text(CURVE_FILE)
    trades = write(tmp_path / "trades.csv", columns(SWAPTIONS, BONDS, CAPS))
    schedule = write(tmp_path / "schedule.csv", SCHEDULE)
    notionals = write(tmp_path / "notionals.csv", NOTIONALS)
    model, quotes = tmp_path / "model.csv", tmp_path / "quotes.csv"
    code, err = run(capsys, "calibrate", trades, "--curve", curve, "--vols", vols, "--as-of", AS_OF, "--out", model,
                    "--schedule", schedule, "--notionals", notionals, "--quotes-out", quotes)
    assert code == 0, err
    assert "trinom: calibrated 12 trades as of 2026-11-25" in err and "(9 converged, 3 no fit)" in err
    table = pd.read_csv(model, keep_default_na=False)
    assert list(table.columns[:5]) == ["id", "a", "sigma", "status", "message"]
    ids = SWAPTIONS["id"] + BONDS["id"] + CAPS["id"]
    assert table.id.tolist() == ids
    status = dict(zip(table.id, table.status, strict=True))
    message = dict(zip(table.id, table.message, strict=True))
    assert [status[n] for n in ids] == ["converged"] * 5 + ["no fit"] + ["converged"] * 4 + ["no fit"] * 2
    assert message["SD"] == "no exercise date after the as-of date 2026-11-25 (1 on or before it)"
    for name in ("K1", "F1"):
        assert re.search(r"(cap|floor) is calibrated to a cap strip.*not per trade", message[name])
        assert table.a[ids.index(name)] == "" and table.sigma[ids.index(name)] == ""
    assert "a held at its guess 0.05" in message["SE"]  # one quote, a free
    q = pd.read_csv(quotes)
    assert q.exercise[q.id == "L1"].tolist() == SCHEDULE["date"][:3]  # the bond's listed dates
    assert q.exercise[q.id == "SR"].tolist() == EXPECTED["SR"]
    # the same as the library on the same files
    book = read_trades(trades, as_of=AS_OF, schedule=schedule, notionals=notionals)
    direct = calibrate_baskets(curves=read_dated_curves(curve, as_of=AS_OF), vols=vols, as_of=AS_OF,
                               baskets=book_baskets(book, curve_names=["EUR"]))
    np.testing.assert_array_equal(pd.read_csv(model, float_precision="round_trip").sigma, direct.sigma)
    # the fitted rows price on the lattice from the model file (the caps' rows have no fit: priced apart)
    fitted = [n for n in ids if status[n] != "no fit"]
    part = {k: [v[ids.index(n)] for n in fitted] for k, v in columns(SWAPTIONS, BONDS, CAPS).items()}
    priced = tmp_path / "prices.csv"
    code, err = run(capsys, "price", write(tmp_path / "fitted.csv", part), "--curve", curve, "--as-of", AS_OF,
                    "--schedule", schedule, "--notionals", notionals, "--model", model, "--out", priced)
    assert code == 0, err
    assert pd.read_csv(priced, keep_default_na=False).error.tolist() == [""] * len(fitted)
    # a cap's no-fit row is an error when it is priced from the model file, naming the trade and why
    code, err = run(capsys, "price", trades, "--curve", curve, "--as-of", AS_OF, "--schedule", schedule,
                    "--notionals", notionals, "--model", model, "--out", priced)
    assert code == 2 and "has no fit for trade 'K1'" in err and "cap strip" in err


def test_schedule_and_notionals_need_a_trades_file(tmp_path: Path, vols: Path, capsys):
    curve = tmp_path / "curve.csv"
    curve.write_text(CURVE_FILE)
    schedule = write(tmp_path / "schedule.csv", SCHEDULE)
    code, err = run(capsys, "calibrate", "--curve", curve, "--vols", vols, "--as-of", AS_OF, "--out",
                    tmp_path / "m.csv", "--schedule", schedule)
    assert code == 2 and "--schedule applies to per-trade calibration" in err
    # a bad schedule row is named with its file and line
    bad = write(tmp_path / "bad_schedule.csv", {"id": ["L1"], "date": ["2028-02-30"], "price": [101.0]})
    trades = write(tmp_path / "trades.csv", columns(SWAPTIONS, BONDS, CAPS))
    code, err = run(capsys, "calibrate", trades, "--curve", curve, "--vols", vols, "--as-of", AS_OF, "--out",
                    tmp_path / "m.csv", "--schedule", bad)
    assert code == 2 and re.search(r"bad_schedule\.csv line 2: date '2028-02-30' is not a date", err)
    assert not (tmp_path / "m.csv").exists()
