"""Swaptions, caps and floors as rows of trades.csv (issue 26): the appended contract columns, validation naming the
row and field, mixed books in input order, risk, scenarios, the command line and prices from a model file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import trinom
from test_swaptions_caps import CAPS, SWAPTIONS, tree_caps, tree_swaptions
from trinom.cli import main
from trinom.instruments import TRADE_COLUMNS, Legs, Trades
from trinom.instruments.bond import BondPortfolio
from trinom.model import DatedCurve

AS_OF = "2026-11-25"
PILLARS = ["2027-11-25", "2028-11-25", "2031-11-25", "2036-11-25", "2046-11-25"]
ZEROS = [0.025, 0.028, 0.032, 0.036, 0.038]
CURVE_FILE = "curve,date,zero\n" + "".join(f"EUR,{d},{z}\n" for d, z in zip(PILLARS, ZEROS, strict=True))


@pytest.fixture(scope="module")
def curve() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=PILLARS, zero_rates=ZEROS, name="EUR")


def book(**extra: object) -> dict[str, object]:
    """The test module's swaptions, then its caps and floors, then a bond, as trades.csv columns."""
    start, maturity, rate, payer, first, last = (list(x) for x in zip(*SWAPTIONS, strict=True))
    c_start, c_maturity, c_rate, c_cap, c_frequency = (list(x) for x in zip(*CAPS, strict=True))
    s, c = len(SWAPTIONS), len(CAPS)
    columns = {
        "id": [f"S{k}" for k in range(s)] + [f"K{k}" for k in range(c)] + ["B1"],
        "type": ["swaption"] * s + ["cap" if x else "floor" for x in c_cap] + ["bond"],
        "start": start + c_start + [None], "maturity": maturity + c_maturity + ["2030-03-15"],
        "rate": rate + c_rate + [None],
        "option": ["payer" if x else "receiver" for x in payer] + [None] * c + [None],
        "exercise": ["european" if f == last_ else "bermudan" for f, last_ in zip(first, last, strict=True)]
        + [None] * (c + 1),
        "first_exercise": first + [None] * (c + 1), "last_exercise": last + [None] * (c + 1),
        "frequency": [1] * s + c_frequency + [2], "day_count": ["30/360"] * s + ["ACT/360"] * c + ["30/360"],
        "calendar": ["NONE"] * s + [None] * c + [None], "convention": ["U"] * s + [None] * c + [None],
        "issue": [None] * (s + c) + ["2024-03-15"], "coupon": [None] * (s + c) + [0.05],
        "a": 0.05, "sigma": 0.01, "curve": "EUR"}
    columns.update(extra)
    return columns


def test_the_contract_is_extended_at_its_end():
    assert TRADE_COLUMNS[:23] == (
        "id", "type", "notional", "issue", "maturity", "coupon", "frequency", "day_count", "calendar", "convention",
        "option", "exercise", "first_exercise", "last_exercise", "exercise_price", "expiry", "strike", "a", "sigma",
        "spread", "curve", "steps_per_year", "notice_days")
    assert TRADE_COLUMNS[23:26] == ("start", "rate", "float_frequency")
    assert TRADE_COLUMNS[26:28] == ("forecast_curve", "index")  # issue 37: two curves
    assert TRADE_COLUMNS[28:34] == ("coupon_type", "margin", "cap", "floor", "switch_date", "fixing")  # floating bonds
    assert TRADE_COLUMNS[34:] == ("vol", "vol_kind", "shift", "settlement_days")  # issue 38: vol prices, settlement


def test_a_mixed_book_prices_each_trade_as_its_own_lowering(curve: DatedCurve):
    result = trinom.price(Trades(as_of=AS_OF, **book()), {"EUR": curve}, backend="reference")
    s, c = len(SWAPTIONS), len(CAPS)
    np.testing.assert_allclose(result.price[:s], tree_swaptions(curve, SWAPTIONS), rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.price[s:s + c], tree_caps(curve, CAPS), rtol=0, atol=1e-12)
    alone = trinom.price(Trades(as_of=AS_OF, **{k: v[-1:] if isinstance(v, list) else v for k, v in book().items()}),
                         {"EUR": curve}, backend="reference")
    assert result.price[-1] == pytest.approx(alone.price[0], abs=1e-12)
    assert result.instrument.tolist() == ["swaption"] * s + ["cap", "floor", "cap", "bond"]
    assert np.all(result.accrued[:-1] == 0) and result.accrued[-1] > 0


def test_prices_are_per_100_of_notional_and_values_in_currency(curve: DatedCurve):
    """One unit for every price (issue 35): a mixed book of swaptions, caps, floors and a bond at notionals 100 and
    1e6 gives the same ``price`` column; ``value`` is ``price * notional / 100``."""
    columns = book()
    columns["notional"] = [1e6] * (len(SWAPTIONS) + len(CAPS) + 1)
    big = trinom.price(Trades(as_of=AS_OF, **columns), {"EUR": curve}, backend="reference")
    base = trinom.price(Trades(as_of=AS_OF, **book()), {"EUR": curve}, backend="reference")
    np.testing.assert_allclose(big.price, base.price, rtol=1e-12)
    np.testing.assert_allclose(big.value, base.price * 1e4, rtol=1e-12)
    np.testing.assert_array_equal(base.value, base.price)  # no notional given: 100, the value is the price
    frame = big.to_pandas()
    assert list(frame.columns)[-1] == "value"


BAD = [  # (column overrides for the first swaption or the first cap, field, message)
    ("swaption", {"rate": None}, "rate", "rate is missing"),
    ("swaption", {"rate": "3%"}, "rate", "rate '3%' is not a number"),
    ("swaption", {"rate": 3.0}, "rate", "decimal rate"),
    ("swaption", {"start": None}, "start", "start is missing"),
    ("swaption", {"start": "2027-02-30"}, "start", "is not a date"),
    ("swaption", {"option": "call"}, "option", "payer or receiver"),
    ("swaption", {"option": None}, "option", "option is missing: payer or receiver"),
    ("swaption", {"exercise": "american"}, "exercise", "european or bermudan"),
    ("swaption", {"coupon": 0.05}, "coupon", "does not apply to a swaption"),
    ("swaption", {"maturity": "2027-06-25"}, "maturity", "must be after start"),
    ("swaption", {"first_exercise": "2040-01-01", "exercise": "bermudan"}, "first_exercise", "is outside the swap"),
    ("swaption", {"last_exercise": "2029-11-25"}, "last_exercise", "a european swaption has one exercise date"),
    ("swaption", {"first_exercise": "2028-03-01", "last_exercise": "2028-06-01", "exercise": "bermudan"},
     "first_exercise", "no fixed-leg start date"),
    ("swaption", {"float_frequency": 5}, "float_frequency", "float_frequency"),
    ("cap", {"option": "payer"}, "option", "does not apply to a cap"),
    ("cap", {"calendar": "TARGET"}, "calendar", "does not apply to a cap"),
    ("cap", {"start": AS_OF}, "start", "must be after the as-of date"),
    ("bond", {"rate": 0.03}, "rate", "does not apply to a bond"),
]


@pytest.mark.parametrize(("kind", "cells", "field", "message"), BAD, ids=[f"{b[0]}-{b[2]}-{i}" for i, b in enumerate(BAD)])
def test_each_bad_cell_fails_its_row_only_naming_the_field(curve: DatedCurve, kind, cells, field, message):
    columns = book(steps_per_year=12)  # coarse trees: the cells are the point here
    row = {"swaption": 0, "cap": len(SWAPTIONS), "bond": len(SWAPTIONS) + len(CAPS)}[kind]
    for name, value in cells.items():
        values = list(columns.get(name, [None] * len(columns["id"])))
        values[row] = value
        columns[name] = values
    trades = Trades(as_of=AS_OF, **columns)
    with pytest.raises(trinom.InputError, match=message):
        trinom.price(trades, {"EUR": curve}, backend="reference")
    result = trinom.price(trades, {"EUR": curve}, backend="reference", errors="mask")
    assert [(r, f) for r, f, _m in result.problems] == [(row, field)]
    assert np.isnan(result.price[row]) and message in result.error[row]
    good = np.arange(len(trades)) != row
    base = trinom.price(Trades(as_of=AS_OF, **book(steps_per_year=12)), {"EUR": curve}, backend="reference").price
    np.testing.assert_array_equal(result.price[good], base[good])


def test_risk_and_scenarios_on_swaptions_and_caps(curve: DatedCurve):
    trades = Trades(as_of=AS_OF, **{k: v[:-1] if isinstance(v, list) else v for k, v in book().items()
                                    if k not in ("issue", "coupon")})
    options = Trades(as_of=AS_OF, **{k: v[len(SWAPTIONS):-1] if isinstance(v, list) else v for k, v in book().items()
                                     if k not in ("issue", "coupon", "option", "exercise", "first_exercise",
                                                  "last_exercise", "calendar", "convention")})
    swaptions = Trades(as_of=AS_OF, **{k: v[:len(SWAPTIONS)] if isinstance(v, list) else v for k, v in book().items()
                                       if k not in ("issue", "coupon")})
    for part in (swaptions, options):
        table = trinom.risk(part, {"EUR": curve}, backend="reference", measures=("dv01", "vega"))
        base = trinom.price(part, {"EUR": curve}, backend="reference").price
        dv01 = table[table.measure == "dv01"].set_index("id").loc[part.ids, "value"].to_numpy()
        down = trinom.price(part, {"EUR": curve}, backend="reference",
                            scenarios=[trinom.scenarios.CurveShift(-1e-4)]).price[0]
        np.testing.assert_allclose(dv01, down - base, rtol=0, atol=1e-12)
        assert (table[table.measure == "vega"].value > 0).all()  # options gain from volatility
    with pytest.raises(trinom.InputError, match="mix bonds and bond options"):
        trinom.risk(trades, {"EUR": curve}, backend="reference", measures=("dv01",))
    with pytest.raises(trinom.InputError, match="OAS is a bond's"):
        trinom.oas(swaptions, {"EUR": curve}, np.ones(len(swaptions)), backend="reference")


def test_command_line_prices_calibrates_and_prices_with_the_model(tmp_path: Path, curve: DatedCurve):
    columns = book()
    frame = pd.DataFrame({name: columns[name] if isinstance(columns[name], list) else [columns[name]] * len(columns["id"])
                          for name in TRADE_COLUMNS if name in columns})
    trades_file, curve_file = tmp_path / "trades.csv", tmp_path / "curve.csv"
    frame.to_csv(trades_file, index=False)
    curve_file.write_text(CURVE_FILE)
    out = tmp_path / "prices.csv"
    assert main(["price", str(trades_file), "--curve", str(curve_file), "--as-of", AS_OF, "--out", str(out),
                 "--backend", "reference"]) == 0
    table = pd.read_csv(out, keep_default_na=False)
    assert list(table.columns) == ["id", "price", "clean", "accrued", "error", "value"] and table.id.tolist() == columns["id"]
    direct = trinom.price(Trades(as_of=AS_OF, **columns), {"EUR": curve}, backend="reference").price
    np.testing.assert_allclose(table.price.to_numpy(), direct, rtol=1e-12)
    # a model file: the swaptions' own row and the curve's for the rest
    model = tmp_path / "model.csv"
    model.write_text("curve,id,a,sigma,status\nEUR,,0.03,0.012,converged\n,S0,0.07,0.008,converged\n")
    priced = tmp_path / "model_prices.csv"
    assert main(["price", str(trades_file), "--curve", str(curve_file), "--as-of", AS_OF, "--model", str(model),
                 "--out", str(priced), "--backend", "reference"]) == 0
    a = np.where(np.array(columns["id"]) == "S0", 0.07, 0.03)
    sigma = np.where(np.array(columns["id"]) == "S0", 0.008, 0.012)
    expected = trinom.price(Trades(as_of=AS_OF, **{**columns, "a": a, "sigma": sigma}), {"EUR": curve},
                            backend="reference").price
    np.testing.assert_allclose(pd.read_csv(priced).price.to_numpy(), expected, rtol=1e-12)
    # a no-fit row for a trade that carries its own a and sigma: it prices with them (issue 35), the others too
    unfitted = tmp_path / "unfitted.csv"
    unfitted.write_text("id,a,sigma,status,message\nS1,,,no fit,no quote\n")
    assert main(["price", str(trades_file), "--curve", str(curve_file), "--as-of", AS_OF, "--model", str(unfitted),
                 "--out", str(tmp_path / "x.csv"), "--backend", "reference"]) == 0
    np.testing.assert_allclose(pd.read_csv(tmp_path / "x.csv").price.to_numpy(), table.price.to_numpy(), rtol=1e-12)


def test_legs_add_trees_up():
    legs = Legs.of_counts([1, 2, 3], [1.0, 2.0, -1.0, 0.5, 0.5, 0.5], labels=["bond", "swaption", "cap"])
    values = np.arange(12.0).reshape(2, 6)
    np.testing.assert_array_equal(legs.combine(values), [[0.0, 1.0 * 2 - 2.0, 0.5 * (3 + 4 + 5)],
                                                         [6.0, 7.0 * 2 - 8.0, 0.5 * (9 + 10 + 11)]])
    errors = np.array(["", "", "x", "", "y", "y"], dtype=object)
    assert legs.errors(errors).tolist() == ["", "x", "y"]
    assert legs.problems([(2, "a", "x"), (4, "b", "y"), (5, "b", "y"), (None, "c", "z")]) == (
        (1, "a", "x"), (2, "b", "y"), (None, "c", "z"))
    assert Legs.one_each(3).is_identity() and not legs.is_identity()
    with pytest.raises(ValueError, match="owners must run"):
        Legs(owner=np.array([0, 2]), weight=np.ones(2))


def test_concatenated_bonds_keep_their_read_problems():
    fields = dict(term_unit=[365], term_steps=[12], a=[0.1], sigma=[0.01], maturity=[2.0], cashflow_count=[1],
                  cashflow_step=[24], repayment=[100.0], coupon=[0.0], spread=[0.0], option_type=["call"],
                  strike=[1e30], first_exercise=[24], last_exercise=[24], exercise_frequency=[1], curve_index=[0])
    good = BondPortfolio(**fields)
    bad = BondPortfolio.with_read_problems([(0, "coupon", "no")], **fields)
    whole = BondPortfolio.concatenate([good, bad, good])
    assert whole._read_problems == ((1, "coupon", "no"),)


@pytest.mark.parametrize(("side", "table", "message"), [
    ("schedule", {"id": ["S0"], "date": ["2028-11-25"], "price": [100.0]}, "a swaption takes no exercise schedule"),
    ("notionals", {"id": ["K0"], "date": ["2028-02-25"], "notional": [50.0]}, "a cap does not amortize"),
])
def test_side_tables_naming_a_swaption_or_cap_are_errors_not_ignored(curve: DatedCurve, side, table, message):
    trades = Trades(as_of=AS_OF, **book(steps_per_year=12), **{side: table})
    with pytest.raises(trinom.InputError, match=message):
        trinom.price(trades, {"EUR": curve}, backend="reference")


def negative_rate_curve() -> DatedCurve:
    return DatedCurve(as_of=AS_OF, dates=["2027-11-25", "2031-11-25", "2036-11-25"], zero_rates=[-0.006, -0.002, 0.004],
                      name="EUR")


def one_swaption(**cells) -> Trades:
    row = {"id": ["S1"], "type": ["swaption"], "start": ["2027-11-25"], "maturity": ["2032-11-25"], "rate": [-0.002],
           "option": ["receiver"], "exercise": ["european"], "first_exercise": ["2027-11-25"], "a": 0.05,
           "sigma": 0.01, "curve": "EUR", "steps_per_year": [365]}
    return Trades(as_of=AS_OF, **{**row, **{k: [v] for k, v in cells.items()}})


@pytest.mark.parametrize("backend,target", [("reference", None), ("futhark", "c")])
def test_a_negative_fixed_rate_prices(backend, target):
    """A swaption's fixed rate may be negative (issue 35): its fixed leg is a bond paying negative coupons, priced
    on the same trees; payer - receiver is the forward swap (the tree's straight leg is exact at one step a day),
    and the European is Jamshidian's closed form within the tree's error."""
    from trinom.model import Swaptions

    curves = {"EUR": negative_rate_curve()}
    receiver = trinom.price(one_swaption(), curves, backend=backend, target=target)
    payer = trinom.price(one_swaption(option="payer"), curves, backend=backend, target=target)
    assert receiver.error.tolist() == [""] and payer.error.tolist() == [""]
    discount = negative_rate_curve().discount
    coupons = np.array([f"{2027 + k}-11-25" for k in range(1, 6)])
    swap = 100 * (discount(["2027-11-25"])[0] - discount(["2032-11-25"])[0] + 0.002 * discount(coupons).sum())
    assert float(payer.price[0] - receiver.price[0]) == pytest.approx(swap, abs=1e-9)
    for side, result in (("receiver", receiver), ("payer", payer)):
        closed = Swaptions.on_curve(negative_rate_curve(), exercise=["2027-11-25"], end=["2032-11-25"],
                                    fixed_rate=[-0.002], frequency=1, day_count="30/360", payer=[side == "payer"],
                                    notional=100.0).price(a=0.05, sigma=0.01)
        assert float(result.price[0]) == pytest.approx(float(closed[0]), abs=2e-3)


def test_a_european_swaption_starting_on_a_weekend_is_exercised_on_its_rolled_date():
    """Its start (a Saturday) rolls to Monday on TARGET, following, and so does its exercise date (issue 35): the
    same price as the swaption written with Monday's date."""
    curves = {"EUR": DatedCurve(as_of=AS_OF, dates=["2027-11-25", "2036-11-25"], zero_rates=[0.02, 0.03], name="EUR")}
    saturday = one_swaption(start="2027-11-27", first_exercise="2027-11-27", maturity="2032-11-29", rate=0.025,
                            calendar="TARGET", convention="F")
    monday = one_swaption(start="2027-11-29", first_exercise="2027-11-29", maturity="2032-11-29", rate=0.025,
                          calendar="TARGET", convention="F")
    weekend, rolled = (trinom.price(book, curves, backend="reference") for book in (saturday, monday))
    assert weekend.error.tolist() == [""]
    assert float(weekend.price[0]) == pytest.approx(float(rolled.price[0]), rel=1e-14)
    unrolled = one_swaption(start="2027-11-27", first_exercise="2027-11-27", maturity="2032-11-29", rate=0.025,
                            calendar="NONE", convention="F")
    assert trinom.price(unrolled, curves, backend="reference").price[0] != weekend.price[0]


def test_an_expired_swaption_says_so():
    """Issue 35's audit: a swaption whose start (its default exercise date) has passed was described by window cells
    the user left empty."""
    curves = {"EUR": DatedCurve(as_of=AS_OF, dates=["2036-11-25"], zero_rates=[0.03], name="EUR")}
    book = Trades(as_of=AS_OF, id=["S1"], type=["swaption"], start=["2026-01-25"], maturity=["2031-01-25"],
                  rate=[0.03], option=["payer"], exercise=["european"], a=0.05, sigma=0.01, curve="EUR")
    result = trinom.price(book, curves, errors="mask", backend="reference")
    assert result.error[0].startswith("the swaption has expired: its exercise dates (from 2026-01-25 to 2026-01-25")
