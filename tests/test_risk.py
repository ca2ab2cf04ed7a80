"""trinom.risk and trinom.scenarios: risk measures of a whole book by bump and reprice (issue 14, item 2)."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from trinom.analytics.risk import MEASURES, risk
from trinom.bonds.generator import generate_bonds
from trinom.scenarios import CurveShift, scenario_market, shifted

H = 1e-4


def options() -> trinom.Portfolio:
    return trinom.generator.generate("uniform", 6, seed=3)


def measure(table, name: str) -> np.ndarray:
    return table[table.measure == name].value.to_numpy()


def check_curve_measures(table, book, curves) -> np.ndarray:
    """dv01, duration and convexity of ``table`` equal the book's bump and reprice by hand (1e-12); the base prices."""
    p0 = reprice(book, curves)
    down = reprice(book, scenario_market(curves, [CurveShift(-H)]))
    up = reprice(book, scenario_market(curves, [CurveShift(H)]))
    np.testing.assert_allclose(measure(table, "dv01"), down - p0, rtol=1e-12)
    np.testing.assert_allclose(measure(table, "duration"), (down - up) / (2 * p0 * H), rtol=1e-12)
    np.testing.assert_allclose(measure(table, "convexity"), (up + down - 2 * p0) / (p0 * H * H), rtol=1e-12)
    return p0


def reprice(book, curves, backend="reference", **fields) -> np.ndarray:
    moved = type(book)(**{**book.as_dict(), **fields}) if fields else book
    return trinom.price(moved, curves, backend=backend).price.astype(np.float64)


def test_key_rate_bumps_sum_to_the_parallel_shift():
    curve = trinom.YieldCurve.thesis()
    days = np.arange(0, 4000, 7)
    def at(c: trinom.YieldCurve) -> np.ndarray:
        return c.rate_at(days, 1)

    total = sum(at(shifted(curve, H, pillar=k)) - at(curve) for k in range(len(curve.days)))
    np.testing.assert_allclose(total, at(shifted(curve, H)) - at(curve), rtol=0, atol=1e-15)


def test_scenario_market_names_an_unknown_curve():
    with pytest.raises(trinom.InputError, match="no yield curve named 'GBP'"):
        scenario_market({"EUR": trinom.YieldCurve.thesis()}, [CurveShift(H, "GBP")])


@pytest.mark.parametrize("kind", ["option", "bond"])
def test_every_measure_is_the_bump_and_reprice_of_the_reference(kind):
    """The same shifts, done by hand on the NumPy reference: equal to 1e-12 relative."""
    if kind == "option":
        book, curves = options(), trinom.YieldCurve.thesis()
    else:
        book, curves = generate_bonds("S1", 6, seed=5)
    table = risk(book, curves, backend="reference")
    market = trinom.Market.of(curves)
    p0 = check_curve_measures(table, book, curves)
    vega = (reprice(book, curves, sigma=book.sigma + H) - reprice(book, curves, sigma=book.sigma - H)) / 2
    np.testing.assert_allclose(measure(table, "vega"), vega, rtol=1e-12)
    name = market.names[0]
    k_down = reprice(book, scenario_market(curves, [CurveShift(-H, name, 3)]))
    k_up = reprice(book, scenario_market(curves, [CurveShift(H, name, 3)]))
    krd = table[(table.measure == "krd") & (table.factor == f"{name}:{int(market.curves[0].days[3])}")]
    used = krd.id.astype(int).to_numpy()
    np.testing.assert_allclose(krd.value, ((k_down - k_up) / (2 * p0 * H))[used], rtol=1e-12)
    if kind == "bond":
        spread = (reprice(book, curves, spread=book.spread - 100 * H)
                  - reprice(book, curves, spread=book.spread + 100 * H)) / (2 * p0 * H)
        np.testing.assert_allclose(measure(table, "spread_duration"), spread, rtol=1e-12)
    else:
        assert "spread_duration" not in set(table.measure)


@pytest.mark.parametrize("kind", ["option", "bond"])
def test_key_rate_durations_sum_to_the_effective_duration(kind):
    book, curves = (options(), None) if kind == "option" else generate_bonds("R1", 5, seed=2)
    table = risk(book, curves, backend="futhark", target="c", measures=("duration", "krd"))
    duration = table[table.measure == "duration"].set_index("id").value
    krd = table[table.measure == "krd"].groupby("id").value.sum()
    np.testing.assert_allclose(krd.loc[duration.index], duration, rtol=1e-3)  # up to the curvature term


def test_futhark_agrees_with_the_reference():
    book, curves = generate_bonds("U1", 4, seed=9)
    fast = risk(book, curves, backend="futhark", target="c").set_index(["id", "measure", "factor"]).value
    ref = risk(book, curves, backend="reference").set_index(["id", "measure", "factor"]).value
    np.testing.assert_allclose(fast.loc[ref.index], ref, rtol=1e-6, atol=1e-9)


def test_a_bad_row_gets_its_message_and_the_others_their_measures():
    book = options()
    fields = book.as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][2] = -1.0
    table = risk(trinom.Portfolio(**fields), backend="reference", measures=("dv01", "vega"), errors="mask")
    bad = table[table.id == "2"]
    assert bad.value.isna().all() and bad.error.str.contains("sigma").all()
    assert table[table.id != "2"].value.notna().all() and (table[table.id != "2"].error == "").all()


def test_risk_checks_its_arguments():
    with pytest.raises(ValueError, match="unknown measure"):
        risk(options(), measures=("theta",))
    with pytest.raises(ValueError, match="positive"):
        risk(options(), shift=0.0)
    assert set(MEASURES) >= {"dv01", "duration", "convexity", "krd", "vega", "spread_duration"}


def test_cli_risk(tmp_path):
    from trinom.cli import main

    book = tmp_path / "u1.csv"
    assert main(["generate", "--instrument", "bonds", "U1", "--size", "3", "--seed", "2", "--out", str(book)]) == 0
    out = tmp_path / "risk.csv"
    assert main(["risk", str(book), "--measures", "dv01,duration,krd", "--backend", "futhark", "--target", "c",
                 "--out", str(out)]) == 0
    import pandas as pd

    table = pd.read_csv(out, keep_default_na=False)
    assert list(table.columns) == ["id", "measure", "factor", "shift", "base", "value", "error"]
    assert set(table.measure) == {"dv01", "duration", "krd"} and (table.error == "").all()
    assert main(["risk", str(book), "--measures", "theta", "--out", str(tmp_path / "r2.csv")]) == 2


def test_price_takes_scenarios():
    """One call, a row of prices per scenario, each the price under that scenario's curves."""
    book, curves = generate_bonds("S1", 5, seed=1)
    shifts = [None, CurveShift(H), CurveShift(-H, None, 2)]
    grid = trinom.price(book, curves, backend="futhark", target="c", scenarios=shifts)
    assert grid.price.shape == (3, 5)
    for s, shift in enumerate(shifts):
        alone = trinom.price(book, scenario_market(curves, [shift]), backend="futhark", target="c").price
        np.testing.assert_array_equal(grid.price[s], alone.reshape(-1))


def test_cli_price_under_a_scenario_file(tmp_path):
    from trinom.cli import main
    from trinom.scenarios import read_scenarios

    book = tmp_path / "s1.csv"
    assert main(["generate", "--instrument", "bonds", "S1", "--size", "4", "--seed", "1", "--out", str(book)]) == 0
    bonds, curves = trinom.io.bond_books.read_bonds(book)
    first = trinom.Market.of(curves).curves[0]
    name, pillar = trinom.Market.of(curves).names[0], int(first.days[2])
    scenarios = tmp_path / "scenarios.csv"
    scenarios.write_text(f"scenario,curve,days,shift\nup,{name},,0.0001\nkey,{name},{pillar},0.0001\n"
                         f"key,{name},{pillar},0.0001\n")
    out = tmp_path / "grid.csv"
    assert main(["price", str(book), "--scenarios", str(scenarios), "--backend", "futhark", "--target", "c",
                 "--out", str(out)]) == 0
    import pandas as pd

    grid = pd.read_csv(out, keep_default_na=False)
    assert list(grid.columns) == ["id", "scenario", "price", "error"] and list(grid.scenario.unique()) == ["up", "key"]
    names, market = read_scenarios(scenarios, curves)
    assert names == ["up", "key"]
    np.testing.assert_allclose(market.scenarios[1][0].rates[2] - first.rates[2], 2e-4)  # a scenario's rows add up
    expected = trinom.price(bonds, market, backend="futhark", target="c").price
    np.testing.assert_allclose(grid.price.to_numpy().reshape(2, -1), expected, rtol=1e-15)
    scenarios.write_text(f"scenario,curve,days,shift\nbad,{name},{pillar + 1},0.0001\n")
    assert main(["price", str(book), "--scenarios", str(scenarios), "--out", str(out)]) == 2


def test_a_scenario_file_of_whole_curves(tmp_path):
    from trinom.scenarios import read_scenarios

    path = tmp_path / "curves.csv"
    path.write_text("scenario,curve,days,rate\nflat,default,365,0.05\nflat,default,3650,0.05\n"
                    "bad,default,365,0.05\nbad,default,365,0.06\n")
    with pytest.raises(trinom.InputError, match="scenario 'bad'"):
        read_scenarios(path, trinom.YieldCurve.thesis())
    path.write_text("scenario,curve,days,rate\nflat,default,365,0.05\nflat,default,3650,0.05\n")
    names, market = read_scenarios(path, trinom.YieldCurve.thesis())
    assert names == ["flat"]
    np.testing.assert_allclose(market.curves[0].rates, [0.05, 0.05], rtol=1e-15)


# --- issue 24: errors=, measures checked before pricing, moves a row cannot take, float32 ---------------------------


def with_field(book, field: str, row: int, value: float):
    fields = book.as_dict()
    fields[field] = fields[field].astype(np.float64).copy()
    fields[field][row] = value
    return type(book)(**fields)


def test_risk_raises_for_a_bad_row_naming_it_before_any_pricing():
    seen: list[tuple[float, float]] = []
    bad = with_field(options(), "sigma", 2, -1.0)
    with pytest.raises(trinom.InputError, match="row 2: sigma must be > 0") as caught:
        risk(bad, backend="reference", measures=("dv01",), progress=lambda done, total: seen.append((done, total)))
    assert [(row, field) for row, field, _m in caught.value.errors] == [(2, "sigma")] and seen == []
    masked = risk(bad, backend="reference", measures=("dv01",), errors="mask")
    assert masked.value.isna().tolist() == [False, False, True, False, False, False]
    assert masked.error[2] == "sigma must be > 0, got -1" and (masked.error.drop(2) == "").all()
    with pytest.raises(ValueError, match="errors must be 'raise' or 'mask'"):
        risk(options(), errors="ignore")


@pytest.mark.parametrize(("measures", "message"), [
    ((), "must name at least one measure"),
    (("dv01", "theta"), "unknown measure"),
    (("dv01", "dv01"), "lists 'dv01' more than once"),
    (("spread_duration",), "spread_duration applies to bonds only"),
    ("dv01", "measures must be a list of measure names"),
])
def test_risk_checks_its_measures_before_any_pricing(measures, message):
    seen: list[float] = []
    with pytest.raises((TypeError, ValueError), match=message):
        risk(options(), backend="reference", measures=measures, progress=lambda done, total: seen.append(done))
    assert seen == []


def test_the_default_measures_are_those_that_apply():
    assert set(risk(options(), backend="reference").measure) == {"dv01", "duration", "convexity", "krd", "vega"}
    bonds, curves = generate_bonds("S1", 2, seed=5)
    assert set(risk(bonds, curves, backend="reference").measure) == set(MEASURES)


@pytest.mark.parametrize("kind", ["option", "bond"])
def test_a_sigma_below_the_vega_move_fails_only_vega_and_vega_is_one_sided(kind):
    """sigma = 5e-5 < the 1e-4 move: the row's base, dv01, duration, convexity and key rates are those of the
    row priced by hand; its vega is the forward difference (P(sigma + v) - P0) / v; the other rows are as
    before; nothing is NaN and no row has an error."""
    if kind == "option":
        book, curves = options(), trinom.YieldCurve.thesis()
    else:
        book, curves = generate_bonds("S1", 6, seed=5)
    low = with_field(book, "sigma", 1, 5e-5)
    table = risk(low, curves, backend="reference")
    assert table.value.notna().all() and (table.error == "").all()
    p0 = check_curve_measures(table, low, curves)
    np.testing.assert_allclose(table[table.measure == "dv01"].base, p0, rtol=1e-12)
    sigma_up = reprice(low, curves, sigma=low.sigma + H)
    vega = measure(table, "vega")
    np.testing.assert_allclose(vega[1], sigma_up[1] - p0[1], rtol=1e-12)  # (P(s + v) - P0) / v * 1e-4, v = 1e-4
    others = np.arange(6) != 1
    sigma_down = reprice(book[np.flatnonzero(others)], curves, sigma=book.sigma[others] - H)
    np.testing.assert_allclose(vega[others], (sigma_up[others] - sigma_down) / 2, rtol=1e-12)
    krd = table[table.measure == "krd"]
    assert set(krd.id) == {str(k) for k in range(6)}
    alone = risk(low[[1]], curves, backend="reference", measures=("krd",))
    np.testing.assert_allclose(krd[krd.id == "1"].value, alone.value, rtol=1e-12)


def test_a_move_past_the_sigma_limit_gives_a_one_sided_vega():
    """sigma + v beyond the sigma limit (1) is no valid tree: vega is the one-sided difference below, the row's other
    measures are unaffected; a sigma beyond the limit itself is bad input naming the row and sigma."""
    book = with_field(options(), "sigma", 4, 0.98)
    table = risk(book, backend="reference", measures=("dv01", "vega"), sigma_shift=0.03)
    row = table[table.id == "4"]
    assert row.value.notna().all() and (row.error == "").all()
    down = trinom.price(with_field(options(), "sigma", 4, 0.95), backend="reference").price[4]
    base = trinom.price(book, backend="reference").price[4]
    vega = row[row.measure == "vega"].value.iloc[0]
    assert vega == pytest.approx((base - down) / 0.03 * 1e-4, rel=1e-12)
    with pytest.raises(trinom.InputError, match="row 4: sigma must be at most 1") as caught:
        risk(with_field(options(), "sigma", 4, 1.5), backend="reference", measures=("vega",))
    assert [(r, field) for r, field, _m in caught.value.errors] == [(4, "sigma")]


def test_risk_checks_ids_and_instruments():
    with pytest.raises(ValueError, match=r"ids has 2 entries, expected one per row \(6\)"):
        risk(options(), backend="reference", ids=["a", "b"])
    with pytest.raises(ValueError, match=r"ids has 7 entries, expected one per row \(6\)"):
        risk(options(), backend="reference", ids=list("abcdefg"))
    with pytest.raises(ValueError, match="ids must be unique"):
        risk(options(), backend="reference", ids=list("aabcde"))
    table = risk(options(), backend="reference", ids=list("uvwxyz"), measures=("dv01",))
    assert table.id.tolist() == list("uvwxyz")
    with pytest.raises(TypeError, match=r"instruments must be one trinom\.Portfolio or trinom\.BondPortfolio"):
        risk([options(), options()], backend="reference")


def test_float32_defaults_and_refusals():
    table = risk(options(), backend="reference", precision="f32")
    assert set(table.measure) == {"dv01", "duration", "krd", "vega"}  # convexity is no float32 measure
    np.testing.assert_allclose(table[table.measure != "vega"]["shift"], 1e-3)
    np.testing.assert_allclose(table[table.measure == "vega"]["shift"], 1e-3)
    with pytest.raises(ValueError, match=r"convexity in float32: .*noise"):
        risk(options(), backend="reference", precision="f32", measures=("convexity",))
    with pytest.raises(ValueError, match=r"shift=0\.0001 is below float32's least of 0\.001"):
        risk(options(), backend="reference", precision="f32", shift=1e-4)
    with pytest.raises(ValueError, match=r"sigma_shift=0\.0001 is below float32's least"):
        risk(options(), backend="reference", precision="f32", sigma_shift=1e-4)


@pytest.mark.parametrize("engine", [{"backend": "reference"}, {"backend": "futhark", "target": "c"}])
@pytest.mark.parametrize("kind", ["option", "bond"])
def test_float32_risk_is_within_its_stated_tolerance_of_float64(engine, kind):
    """The docstring's float32 tolerance, against float64 at the same shifts: dv01 and vega (price units) within
    2e-3 relative plus 2e-6 of the base price; duration, spread duration and key rates (years) within 2e-3 times
    max(1, |duration|)."""
    from desk_books_audit import desk_bonds

    if kind == "option":
        book, curves = options(), trinom.YieldCurve.thesis()
    else:
        book, curves = desk_bonds(6, seed=1), trinom.YieldCurve.thesis()
    f32 = risk(book, curves, precision="f32", **engine).set_index(["id", "measure", "factor"])
    f64 = risk(book, curves, precision="f64", measures=tuple(f32.index.unique("measure")), shift=1e-3,
               sigma_shift=1e-3, **engine).set_index(["id", "measure", "factor"])
    assert (f32.error == "").all() and (f64.error == "").all() and f32.index.equals(f64.index)
    measures = f64.index.get_level_values("measure")
    duration = f64.xs("duration", level="measure").value.droplevel("factor")
    years = np.maximum(1.0, np.abs(duration.loc[f64.index.get_level_values("id")].to_numpy()))
    in_price = measures.isin(["dv01", "vega"])
    bound = np.where(in_price, 2e-3 * np.abs(f64.value) + 2e-6 * f64.base, 2e-3 * years)
    miss = np.abs(f32.value - f64.value).to_numpy()
    assert (miss <= bound).all(), f64[miss > bound]


# --- the table's construction: no shared arrays, the engine's arrays left as they are -----------------------------


def test_the_table_owns_its_columns_and_repeated_calls_agree():
    """A table changed in place changes neither a later table nor anything risk keeps (default row names, scenario
    markets, the engine's columns); the text columns are NumPy object arrays and the numbers float64."""
    import pandas as pd

    book, curves = generate_bonds("R1", 12, seed=4)  # bonds on several curves: key rates of part of the rows
    first = risk(book, curves, backend="reference")
    again = risk(book, curves, backend="reference")
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    assert isinstance(first.index, pd.RangeIndex)
    assert [str(first[c].dtype) for c in first.columns] == ["object"] * 3 + ["float64"] * 3 + ["object"]
    assert all(isinstance(first[c].to_numpy(), np.ndarray) for c in first.columns)
    for column, value in (("id", "x"), ("measure", "x"), ("factor", "x"), ("base", -1.0), ("value", -1.0),
                          ("error", "x")):
        first[column].to_numpy()[:] = value
    pd.testing.assert_frame_equal(risk(book, curves, backend="reference"), again, check_exact=True)


@pytest.mark.parametrize("failing", [False, True])
def test_risk_never_writes_into_the_engines_arrays(monkeypatch, failing):
    """The engine's price grid and error column may be its own (cached, shared memory): risk reads them as they are
    and copies them before repricing rows that a move fails (here sigma 5e-5, below the vega move)."""
    import importlib

    module = importlib.import_module("trinom.analytics.risk")  # the module (trinom.risk is the function)
    priced: list = []

    from trinom.pipeline import price_book

    def frozen(*args, **kwargs):
        result = price_book(*args, **kwargs)
        for array in (result.price, result.error):
            array.setflags(write=False)
        priced.append((result, result.price.copy(), result.error.copy()))
        return result

    monkeypatch.setattr(module, "price_book", frozen)
    book = with_field(options(), "sigma", 1, 5e-5) if failing else options()
    table = risk(book, backend="reference", errors="mask")
    assert table.value.notna().all() and (table.error == "").all()
    assert len(priced) == (2 if failing else 1)  # the failing row priced again without the move it cannot take
    for result, price_before, error_before in priced:
        np.testing.assert_array_equal(result.price, price_before)
        np.testing.assert_array_equal(result.error, error_before)
    monkeypatch.undo()
    expected = risk(book, backend="reference", errors="mask")
    import pandas as pd

    pd.testing.assert_frame_equal(table, expected, check_exact=True)


def test_a_key_rate_that_cannot_be_computed_says_why_on_every_curve():
    """A bond worth nothing (no cash flows to pay): its duration, convexity and key rates divide by a base price
    of 0, NaN with the reason, on whichever curve the bond is; the other bonds' measures are numbers."""
    book, curves = generate_bonds("R1", 8, seed=2)
    fields = {k: np.array(v, copy=True) for k, v in book.as_dict().items()}
    starts = np.concatenate(([0], np.cumsum(fields["cashflow_count"])))
    for name in ("repayment", "coupon"):
        fields[name] = fields[name].astype(np.float64)
        fields[name][starts[3]:starts[4]] = 0.0
    fields["strike"] = fields["strike"].astype(np.float64)
    fields["strike"][3] = 0.0  # and an option on it struck at nothing
    table = risk(trinom.BondPortfolio(**fields), curves, backend="reference", errors="mask")
    worthless = table[table.id == "3"]
    divided = worthless[worthless.measure.isin(["duration", "convexity", "krd", "spread_duration"])]
    assert divided.value.isna().all() and divided.error.str.contains("undefined for a base price of 0").all()
    others = table[table.id != "3"]
    assert others.value.notna().all() and (others.error == "").all()
