"""Issue 24: the public entry points name a bad argument (no raw Python exceptions), and curve names are kept as
strings exactly as given everywhere (market, bond files, scenario files, risk factors, curve shifts)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import trinom
from trinom.bonds.generator import generate_bonds
from trinom.io.bond_books import read_bonds, write_bonds_csv
from trinom.model.market import Market, NamedCurves
from trinom.scenarios import CurveSet, CurveShift, SigmaShift, SpreadShift, read_scenarios

H = 1e-4
CPU = {"backend": "futhark", "target": "c"}
CURVE = trinom.YieldCurve([0.03, 0.04], [365, 3650])


def options() -> trinom.Portfolio:
    return trinom.generator.generate("uniform", 3, seed=3)


def bonds() -> tuple[trinom.BondPortfolio, tuple[trinom.YieldCurve, ...]]:
    return generate_bonds("S1", 3, seed=1)


# Each case: what is called, the exception expected and its message (the argument named, and what it must be).
BAD_CALLS = {
    "risk errors": (lambda: trinom.risk(options(), backend="reference", errors="ignore"), ValueError,
                    "errors must be 'raise' or 'mask', got 'ignore'"),
    "risk ids too few": (lambda: trinom.risk(options(), backend="reference", ids=["a"]), ValueError,
                         r"ids has 1 entries, expected one per row \(3\)"),
    "risk ids too many": (lambda: trinom.risk(options(), backend="reference", ids=list("abcd")), ValueError,
                          r"ids has 4 entries, expected one per row \(3\)"),
    "risk ids a number": (lambda: trinom.risk(options(), ids=5), TypeError, "ids must be a list of row names"),
    "risk measures a string": (lambda: trinom.risk(options(), measures="dv01"), TypeError,
                               "measures must be a list of measure names"),
    "risk shift text": (lambda: trinom.risk(options(), shift="1bp"), TypeError,
                        "shift must be a positive number, got '1bp'"),
    "risk shift zero": (lambda: trinom.risk(options(), shift=0.0), ValueError, "shift must be a positive number, got 0.0"),
    "risk sigma_shift None-like": (lambda: trinom.risk(options(), sigma_shift=[1e-4]), TypeError,
                                   "sigma_shift must be a positive number"),
    "risk a list of books": (lambda: trinom.risk([options(), options()]), TypeError,
                             "instruments must be one trinom.Portfolio or trinom.BondPortfolio"),
    "risk None": (lambda: trinom.risk(None), TypeError, "got NoneType"),
    "risk scenarios": (lambda: trinom.risk(options(), scenarios=[None]), TypeError, "risk builds its own scenarios"),
    "oas options": (lambda: trinom.oas(options(), CURVE, [1.0, 1.0, 1.0]), TypeError,
                    "bonds must be a trinom.BondPortfolio"),
    "oas bracket of one": (lambda: trinom.oas(*bonds(), [90.0] * 3, bracket=(1,)), ValueError,
                           "bracket must be two spreads"),
    "oas market text": (lambda: trinom.oas(*bonds(), "abc"), TypeError, "market_prices must be numbers"),
    "oas max_iterations None": (lambda: trinom.oas(*bonds(), [90.0] * 3, max_iterations=None), TypeError,
                                "max_iterations must be a whole number >= 1, got None"),
    "oas search None": (lambda: trinom.oas(*bonds(), [90.0] * 3, search=None), ValueError,
                        "search must be one of auto, engine, batched, got None"),
    "price max_steps None": (lambda: trinom.price(options(), max_steps=None), TypeError,
                             "max_steps must be a whole number >= 1, got None"),
    "price max_width text": (lambda: trinom.price(options(), max_width="wide"), TypeError,
                             "max_width must be a whole number >= 1"),
    "price max_width zero": (lambda: trinom.price(options(), max_width=0), ValueError,
                             "max_width must be a whole number >= 1, got 0"),
    "price progress text": (lambda: trinom.price(options(), progress="yes"), TypeError,
                            "progress must be a callable"),
    "price client address": (lambda: trinom.price(options(), client="tcp://127.0.0.1:8786"), TypeError,
                             "client must be a Dask distributed.Client, got the string 'tcp://127.0.0.1:8786'"),
    "price client number": (lambda: trinom.price(options(), client=5), TypeError,
                            "client must be a Dask distributed.Client, got int"),
    "price device text": (lambda: trinom.price(options(), device="0"), TypeError,
                          "device must be a whole number >= 0, got '0'"),
    "price device negative": (lambda: trinom.price(options(), device=-1), ValueError,
                              "device must be a whole number >= 0, got -1"),
    "price backend None": (lambda: trinom.price(options(), backend=None), TypeError, "backend must be a string"),
    "price target number": (lambda: trinom.price(options(), target=3), TypeError,
                            "target must be a string or None, got 3"),
    "price one scenario unwrapped": (lambda: trinom.price(options(), scenarios=SigmaShift(H)), TypeError,
                                     "scenarios must be a list of scenarios"),
    "price scenarios text": (lambda: trinom.price(options(), scenarios="up"), TypeError,
                             "scenarios must be a list of scenarios"),
    "price precision": (lambda: trinom.price(options(), precision=64), ValueError,
                        "precision must be one of f32, f64, got 64"),
    "CurveShift text": (lambda: CurveShift("1bp"), TypeError, "CurveShift shift must be a finite number, got '1bp'"),
    "CurveShift None": (lambda: CurveShift(None), TypeError, "CurveShift shift must be a finite number, got None"),
    "CurveShift nan": (lambda: CurveShift(float("nan")), ValueError, "CurveShift shift must be a finite number"),
    "CurveShift curve number": (lambda: CurveShift(H, 0), TypeError,
                                "CurveShift curve must be a curve's name \\(a string, e.g. '0'\\)"),
    "CurveShift pillar fraction": (lambda: CurveShift(H, None, 1.5), TypeError,
                                   "CurveShift pillar must be a whole number >= 0, got 1.5"),
    "CurveShift pillar negative": (lambda: CurveShift(H, None, -1), ValueError,
                                   "CurveShift pillar must be a whole number >= 0, got -1"),
    "CurveSet a list": (lambda: CurveSet([CURVE]), TypeError,
                        "CurveSet curves must be a mapping of curve name to YieldCurve"),
    "CurveSet a number": (lambda: CurveSet({"EUR": 0.03}), TypeError,
                          "CurveSet curve 'EUR' must be a YieldCurve, got float"),
    "CurveSet name number": (lambda: CurveSet({0: CURVE}), TypeError, "CurveSet curve name must be a string"),
    "SigmaShift None": (lambda: SigmaShift(None), TypeError, "SigmaShift shift must be a finite number, got None"),
    "SpreadShift inf": (lambda: SpreadShift(float("inf")), ValueError, "SpreadShift shift must be a finite number"),
    "Market.of a number": (lambda: Market.of(5), trinom.InputError,
                           "curves must be a YieldCurve, a sequence or mapping of them"),
    "Market.of no curve": (lambda: Market.of([]), trinom.InputError, "a market needs at least one yield curve"),
    "Market.of a text curve": (lambda: Market.of([CURVE, "x"]), trinom.InputError,
                               "curve '1' must be a YieldCurve"),
    "Market.of one name twice": (lambda: Market.of({0: CURVE, "0": CURVE}), trinom.InputError,
                                 "curve names must be unique, got '0' more than once"),
    "Market.of a float name": (lambda: Market.of({1.5: CURVE}), trinom.InputError,
                               "curve names must be strings, got 1.5"),
    "YieldCurve None": (lambda: trinom.YieldCurve(None, None), trinom.InputError,
                        "yield curve rates must be a sequence of numbers, got None"),
    "YieldCurve 2-d": (lambda: trinom.YieldCurve([[0.03, 0.04]], [[365, 730]]), trinom.InputError,
                       "yield curve rates must be a flat sequence of numbers"),
    "YieldCurve a None rate": (lambda: trinom.YieldCurve([0.03, None], [365, 730]), trinom.InputError,
                               "yield curve point 1: rate must be a number, got None"),
    "YieldCurve lengths": (lambda: trinom.YieldCurve([0.03, 0.04], [365]), trinom.InputError,
                           "yield curve has 2 rates but 1 days"),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_a_bad_argument_is_named(case):
    call, error, message = BAD_CALLS[case]
    with pytest.raises(error, match=message) as caught:
        call()
    assert type(caught.value) in (TypeError, ValueError, trinom.InputError)


# --- curve names -----------------------------------------------------------------------------------------------------

NAMES = ["EUR", "00", "01", "USD-OIS"]


def named_book_files(tmp_path) -> tuple[object, trinom.BondPortfolio, tuple[trinom.YieldCurve, ...]]:
    """A bond CSV trio of S1 bonds whose four curves are named NAMES (and the bonds name them), the bonds and the
    curves as numbered."""
    book, curves = generate_bonds("S1", 8, seed=2)
    path = tmp_path / "named.csv"
    write_bonds_csv(book, curves, path)
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table["curve_index"] = [NAMES[int(k)] for k in table["curve_index"]]
    table.to_csv(path, index=False)
    curve_path = tmp_path / "named.curves.csv"
    flat = pd.read_csv(curve_path, dtype=str, keep_default_na=False)
    flat["curve"] = [NAMES[int(k)] for k in flat["curve"]]
    flat.to_csv(curve_path, index=False)
    return path, book, curves


def test_a_bond_file_keeps_its_curve_names(tmp_path):
    path, book, curves = named_book_files(tmp_path)
    named_bonds, named = read_bonds(path)
    assert isinstance(named, NamedCurves) and named.names == tuple(NAMES)
    assert Market.of(named).names == tuple(NAMES)
    assert named_bonds.curve_index.tolist() == book.curve_index.tolist()
    for ours, theirs in zip(named, curves, strict=True):
        np.testing.assert_allclose(ours.rates, theirs.rates, rtol=1e-15)
        assert ours.days.tolist() == theirs.days.tolist()
    np.testing.assert_array_equal(trinom.price(named_bonds, named, **CPU).price, trinom.price(book, named, **CPU).price)


def test_curve_names_reach_scenarios_and_risk_factors(tmp_path):
    path, _book, _curves = named_book_files(tmp_path)
    bonds_, named = read_bonds(path)
    day = int(named[1].days[2])
    scenarios = tmp_path / "scenarios.csv"
    scenarios.write_text(f"scenario,curve,days,shift\nup,00,,0.0001\nkey,EUR,{int(named[0].days[1])},0.0001\n"
                         f"key,00,{day},0.0002\n")
    names, market = read_scenarios(scenarios, named)
    assert names == ["up", "key"] and market.names == tuple(NAMES)
    np.testing.assert_allclose(market.scenarios[0][1].rates - named[1].rates, 1e-4, rtol=1e-9)
    np.testing.assert_allclose(market.scenarios[0][2].rates, named[2].rates, rtol=0)  # "01" is not "00"
    np.testing.assert_allclose(market.scenarios[1][1].rates[2] - named[1].rates[2], 2e-4, rtol=1e-9)
    table = trinom.risk(bonds_, named, measures=("krd",), **CPU)
    used = {NAMES[int(k)] for k in bonds_.curve_index}
    assert {factor.rsplit(":", 1)[0] for factor in table.factor} == used
    grid = trinom.price(bonds_, named, scenarios=[CurveShift(H, "00"), CurveShift(H, "USD-OIS", 1)], **CPU)
    assert grid.price.shape == (2, len(bonds_))
    with pytest.raises(trinom.InputError, match="no yield curve named '0' \\(curves: EUR, 00, 01, USD-OIS\\)"):
        trinom.price(bonds_, named, scenarios=[CurveShift(H, "0")], **CPU)


def test_cli_risk_names_key_rates_by_the_file_s_curve_names(tmp_path):
    from trinom.cli import main

    path, _book, _curves = named_book_files(tmp_path)
    out = tmp_path / "risk.csv"
    assert main(["risk", str(path), "--measures", "krd", "--backend", "futhark", "--target", "c", "--out", str(out)]) == 0
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert {factor.rsplit(":", 1)[0] for factor in table.factor} <= set(NAMES) and (table.error == "").all()
    assert any(factor.startswith("00:") for factor in table.factor)


def test_mapping_names_are_kept_as_given():
    other = trinom.YieldCurve([0.05], [365])
    market = Market.of({"00": CURVE, "0": other, 7: CURVE})
    assert market.names == ("00", "0", "7")
    assert market.curves[1] is other


def test_named_curves_travel_and_are_not_a_plain_tuple():
    named = NamedCurves(["EUR", "00"], [CURVE, trinom.YieldCurve([0.05], [365])])
    again = pickle.loads(pickle.dumps(named))
    assert isinstance(again, NamedCurves) and again.names == ("EUR", "00") and len(again) == 2
    np.testing.assert_allclose(again[1].rates, [0.05], rtol=0)
    assert named != tuple(named) and hash(named) != hash(tuple(named))
    book = trinom.BondPortfolio(**{**generate_bonds("S1", 2, seed=1)[0].as_dict(), "curve_index": [1, 0]})
    plain = trinom.risk(book, tuple(named), measures=("krd",), backend="reference")  # numbered 0, 1
    kept = trinom.risk(book, named, measures=("krd",), backend="reference")  # a repeated call: names, not numbers
    assert {f.split(":")[0] for f in plain.factor} == {"0", "1"} and {f.split(":")[0] for f in kept.factor} == {"EUR", "00"}
    np.testing.assert_array_equal(plain.value.to_numpy(), kept.value.to_numpy())
    with pytest.raises(trinom.InputError, match="curve names must be unique"):
        NamedCurves(["EUR", "EUR"], [CURVE, CURVE])
    with pytest.raises(trinom.InputError, match="2 curve names for 1 curves"):
        NamedCurves(["EUR", "USD"], [CURVE])


def test_a_closed_dask_client_is_said_not_an_attribute_error():
    """Issue 35: a closed client leaked Dask's AttributeError ('NoneType' object has no attribute 'ncores')."""
    distributed = pytest.importorskip("distributed")
    options = trinom.generator.generate("uniform", 4)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        client = distributed.Client(cluster)
        client.close()
        with pytest.raises(ValueError, match="the Dask client is closed: connect again"):
            trinom.price(options, client=client, backend="reference")
