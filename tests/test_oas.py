"""trinom.oas: option-adjusted spreads from market prices, the whole book at once (issue 14, item 3)."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import trinom
from trinom.analytics.oas import CONVERGED, OUTSIDE, oas
from trinom.bonds.generator import generate_bonds
from trinom.cli import main

ENGINE = {"backend": "futhark", "target": "c"}


def with_spread(bonds: trinom.BondPortfolio, spread: np.ndarray) -> trinom.BondPortfolio:
    return trinom.BondPortfolio(**{**bonds.as_dict(), "spread": spread})


@pytest.mark.parametrize("name", ["U1", "R1", "S1"])
@pytest.mark.parametrize("price_type", ["clean", "dirty"])
def test_the_model_price_at_the_oas_is_the_market_price(name, price_type):
    """price(oas(p)) = p to 1e-8 for every bond, whatever side of the model the market lies on."""
    bonds, curves = generate_bonds(name, 30, seed=4)
    model = trinom.price(bonds, curves, **ENGINE)
    base = model.clean if price_type == "clean" else model.price
    market = base * (1 + np.random.default_rng(2).uniform(-0.2, 0.2, len(bonds)))
    result = oas(bonds, curves, market, price_type=price_type, **ENGINE)
    assert (result.status == CONVERGED).all() and (result.error == "").all()
    again = trinom.price(with_spread(bonds, result.oas), curves, **ENGINE)
    np.testing.assert_allclose(again.clean if price_type == "clean" else again.price, market, rtol=0, atol=1e-8)
    higher = market > base  # a market price above the model needs a lower spread
    assert (result.oas[higher] < bonds.spread[higher]).all() and (result.oas[~higher] > bonds.spread[~higher]).all()
    assert result.iterations.max() <= 16 and result.pricings <= 20


def test_the_oas_of_the_model_price_is_the_bonds_own_spread():
    bonds, curves = generate_bonds("U1", 10, seed=7)
    result = oas(bonds, curves, trinom.price(bonds, curves, **ENGINE).clean, **ENGINE)
    np.testing.assert_allclose(result.oas, bonds.spread, rtol=0, atol=1e-7)


def test_every_bond_gets_an_oas_or_a_reason():
    """Unattainable prices, bad market prices and bonds that cannot be priced each name their reason;
    the others still converge."""
    bonds, curves = generate_bonds("R1", 6, seed=1)
    fields = bonds.as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][3] = -0.1
    broken = trinom.BondPortfolio(**fields)
    market = trinom.price(bonds, curves, **ENGINE).clean
    market[0] = 1e6  # far above any price a spread of -20% gives
    market[1] = -5.0
    market[2] = np.nan
    result = oas(broken, curves, market, errors="mask", **ENGINE)
    assert result.status[0] == OUTSIDE and np.isnan(result.oas[0])
    assert list(result.status[1:3]) == ["market price must be a positive number"] * 2
    assert "sigma" in result.status[3]
    assert (result.status[4:] == CONVERGED).all()
    frame = result.to_frame()
    assert list(frame.columns) == ["id", "oas", "price", "iterations", "error"] and frame.error[4] == ""


def test_oas_checks_its_arguments():
    bonds, curves = generate_bonds("U1", 2, seed=1)
    with pytest.raises(ValueError, match="price_type"):
        oas(bonds, curves, [100.0, 100.0], price_type="mid")
    with pytest.raises(ValueError, match="one per bond"):
        oas(bonds, curves, [100.0])
    with pytest.raises(ValueError, match="search must be one of auto, engine, batched"):
        oas(bonds, curves, [100.0, 100.0], search="newton")
    with pytest.raises(ValueError, match="bracket"):
        oas(bonds, curves, [100.0, 100.0], bracket=(5.0, -5.0))
    with pytest.raises(ValueError, match="has no spread search of its own"):
        oas(bonds, curves, [100.0, 100.0], search="engine", **ENGINE)


def test_cli_oas(tmp_path, capsys):
    book = tmp_path / "s1.csv"
    assert main(["generate", "--instrument", "bonds", "S1", "--size", "8", "--seed", "3", "--out", str(book)]) == 0
    assert main(["price", str(book), "--backend", "futhark", "--target", "c", "--out", str(tmp_path / "p.csv")]) == 0
    with (tmp_path / "p.csv").open() as handle:
        priced = list(csv.DictReader(handle))
    market = tmp_path / "market.csv"
    market.write_text("id,price\n" + "".join(f"{row['id']},{float(row['clean']) + 0.5}\n" for row in priced))
    out = tmp_path / "oas.csv"
    assert main(["oas", str(book), "--market-prices", str(market), "--backend", "futhark", "--target", "c",
                 "--out", str(out)]) == 0
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["id"] for row in rows] == [row["id"] for row in priced]
    assert all(row["error"] == "" and abs(float(row["price"]) - float(p["clean"]) - 0.5) < 1e-8
               for row, p in zip(rows, priced, strict=True))
    market.write_text("id,price\n" + "".join(f"{row['id']},100\n" for row in priced[1:]) + "nobody,100\n")
    assert main(["oas", str(book), "--market-prices", str(market), "--out", str(tmp_path / "o2.csv")]) == 2
    err = capsys.readouterr().err
    assert "no price for bond" in err and "'nobody': a bond not in the book" in err


def test_oas_reports_its_progress():
    bonds, curves = generate_bonds("S1", 12, seed=2)
    market = trinom.price(bonds, curves, **ENGINE).clean * 1.02
    seen: list[tuple[float, float]] = []
    result = oas(bonds, curves, market, progress=lambda done, total: seen.append((done, total)), **ENGINE)
    done = [d for d, _ in seen]
    assert len(seen) == result.pricings + 1 and done == sorted(done) and seen[-1] == (12.0, 12.0)


# --- issue 24: errors=, argument checks, float32 -------------------------------------------------------------------


def test_oas_raises_for_bad_input_naming_row_and_field_before_any_pricing():
    bonds, curves = generate_bonds("R1", 6, seed=1)
    market = trinom.price(bonds, curves, **ENGINE).clean
    broken = with_spread(bonds, bonds.spread)
    fields = broken.as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][3] = -0.1
    broken = trinom.BondPortfolio(**fields)
    bad_market = market.copy()
    bad_market[1] = -5.0
    seen: list[float] = []
    with pytest.raises(trinom.InputError) as caught:
        oas(broken, curves, bad_market, progress=lambda done, total: seen.append(done), **ENGINE)
    assert [(row, field) for row, field, _m in caught.value.errors] == [(1, "market_prices"), (3, "sigma")]
    assert "row 1: market price must be a positive number, got -5.0" in str(caught.value) and seen == []
    masked = oas(broken, curves, bad_market, errors="mask", **ENGINE)
    assert masked.error[1] == "market price must be a positive number" and "sigma" in masked.error[3]
    assert list(masked.status[[0, 2, 4, 5]]) == [CONVERGED] * 4 and np.isnan(masked.oas[[1, 3]]).all()
    with pytest.raises(ValueError, match="errors must be 'raise' or 'mask'"):
        oas(bonds, curves, market, errors="skip", **ENGINE)


@pytest.mark.parametrize(("arguments", "error", "message"), [
    ({"bracket": (1.0,)}, ValueError, r"bracket must be two spreads \(percent\), low < high; got 1 values"),
    ({"bracket": None}, TypeError, "bracket must be a list of two spreads"),
    ({"bracket": (0.0, "x")}, TypeError, "bracket\\[1\\] must be a finite number, got 'x'"),
    ({"max_iterations": 2.5}, TypeError, "max_iterations must be a whole number >= 1, got 2.5"),
    ({"price_tolerance": -1.0}, ValueError, "price_tolerance must be a number >= 0, got -1.0"),
    ({"relative_tolerance": "tiny"}, TypeError, "relative_tolerance must be a number >= 0"),
    ({"progress": 1}, TypeError, "progress must be a callable"),
    ({"device": "x"}, TypeError, "device must be a whole number >= 0"),
    ({"max_steps": None}, TypeError, "max_steps must be a whole number >= 1, got None"),
])
def test_oas_names_a_bad_argument(arguments, error, message):
    bonds, curves = generate_bonds("U1", 2, seed=1)
    with pytest.raises(error, match=message):
        oas(bonds, curves, [100.0, 100.0], **{**ENGINE, **arguments})


def test_oas_takes_bonds_and_numbers_only():
    bonds, curves = generate_bonds("U1", 2, seed=1)
    options = trinom.generator.generate("uniform", 2, seed=1)
    with pytest.raises(TypeError, match=r"bonds must be a trinom\.BondPortfolio .* got Portfolio of options"):
        oas(options, curves, [1.0, 1.0], **ENGINE)
    with pytest.raises(TypeError, match=r"market_prices must be numbers, one per bond \(2\)"):
        oas(bonds, curves, ["a", "b"], **ENGINE)
    with pytest.raises(TypeError, match="market_prices must be numbers"):
        oas(bonds, curves, None, **ENGINE)


@pytest.mark.parametrize("engine", [{"backend": "reference"}, ENGINE])
def test_float32_oas_converges_within_its_stated_tolerance(engine):
    """The docstring's float32 tolerance: every bond of an ordinary book converges with the float32 defaults, its
    model price within 1e-5 of the market's (relative), its spread within 5e-4 percent of float64's."""
    from desk_books_audit import desk_bonds

    bonds, curves = desk_bonds(40, seed=3), trinom.YieldCurve.thesis()
    market = trinom.price(bonds, curves, **engine).clean * (1 + np.random.default_rng(5).uniform(-0.05, 0.05, 40))
    f64 = oas(bonds, curves, market, **engine)
    f32 = oas(bonds, curves, market, precision="f32", **engine)
    assert (f64.status == CONVERGED).all() and (f32.status == CONVERGED).all(), f32.status
    assert f32.iterations.max() <= 10
    dirty = market + bonds.accrued()
    assert (np.abs(f32.price - market) <= 1e-5 * dirty).all()
    np.testing.assert_allclose(f32.oas, f64.oas, rtol=0, atol=5e-4)
    again = trinom.price(with_spread(bonds, f32.oas), curves, precision="f32", **engine).clean
    np.testing.assert_allclose(again, market, rtol=2e-5)


def test_a_bond_paying_nothing_and_a_price_out_of_reach_report_no_spread():
    """Issue 35: an all-zero bond was given the bracket's end (-20) as its spread; a price out of reach too."""
    bonds, curves = generate_bonds("R1", 3, seed=1)
    zero = trinom.BondPortfolio(**{**bonds[:1].as_dict(), "repayment": np.zeros_like(bonds[:1].repayment),
                                   "coupon": np.zeros_like(bonds[:1].coupon)})
    found = trinom.oas(zero, curves, np.array([50.0]), errors="mask", backend="reference")
    assert np.isnan(found.oas[0]) and found.status[0].startswith("the bond pays nothing")
    with pytest.raises(trinom.InputError, match="row 0: the bond pays nothing"):
        trinom.oas(zero, curves, np.array([50.0]), backend="reference")
    model = trinom.price(bonds, curves, backend="reference").clean
    for backend in ("reference", "futhark"):
        found = trinom.oas(bonds, curves, model * np.array([1.0, 5.0, 1.0]), errors="mask", backend=backend)
        assert found.status[1] == "price outside the attainable range"
        assert np.isnan(found.oas[1]) and np.isnan(found.price[1]) and np.isfinite(found.oas[[0, 2]]).all()


def test_dated_market_prices_by_trade_id():
    """Issue 35's audit: a mapping of trade ids to prices is taken (a list stays in the trades' order); a missing or
    unknown id, and a list of the wrong length, are InputErrors naming the trouble."""
    from trinom.instruments import Trades
    from trinom.model import DatedCurve

    curves = {"EUR": DatedCurve(as_of="2026-11-25", dates=["2036-11-25"], zero_rates=[0.03])}
    book = Trades(as_of="2026-11-25", id=["B1", "B2"], type=["bond"] * 2, issue=["2024-03-15"] * 2,
                  maturity=["2032-03-15", "2034-03-15"], coupon=[0.04, 0.05], frequency=[2, 2], a=0.05, sigma=0.01,
                  steps_per_year=[12, 12])
    listed = oas(book, curves, [100.0, 104.0], backend="reference")
    mapped = oas(book, curves, {"B2": 104.0, "B1": 100.0}, backend="reference")
    np.testing.assert_array_equal(mapped.oas, listed.oas)
    with pytest.raises(trinom.InputError, match="market_prices has no price for trade 'B2'"):
        oas(book, curves, {"B1": 100.0}, backend="reference")
    with pytest.raises(trinom.InputError, match="market_prices names 'B9', which is no trade"):
        oas(book, curves, {"B1": 100.0, "B2": 104.0, "B9": 1.0}, backend="reference")
    with pytest.raises(trinom.InputError, match="market_prices has 3 entries, expected one per bond"):
        oas(book, curves, [100.0, 104.0, 1.0], backend="reference")
