"""The book, the market, the execution path and the result type (trinom/book.py, market.py, api.py, result.py)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import trinom
from conftest import PAPER_SAMPLE, load_paper, load_thesis
from trinom import pipeline as api
from trinom.bonds.generator import generate_bonds
from trinom.cli import main
from trinom.engines import lift, running
from trinom.generator import generate
from trinom.lattice.book import BOND, CASH_FLOW, EXERCISE, OPTION, PAYOFF, Book
from trinom.lattice.lowering import lower, lower_bonds, lower_options
from trinom.model.tree_geometry import Convention, work


def test_options_lower_to_two_events_and_lift_back_exactly():
    portfolio, _ = load_thesis("book")
    book = lower_options(portfolio)
    assert len(book) == 5 and book.instrument.tolist() == [OPTION] * 5
    assert book.convention.tolist() == [Convention.THESIS] * 5
    assert book.event_offset.tolist() == [0, 2, 4, 6, 8, 10]
    assert book.event_kind.tolist() == [CASH_FLOW, PAYOFF] * 5
    assert np.array_equal(book.event_amount[1::2], portfolio.strike)
    assert np.array_equal(book.event_time[1::2], portfolio.expiry)
    again = lift.options(book)
    for field in trinom.FIELDS:
        assert np.array_equal(getattr(again, field), getattr(portfolio, field)), field


def test_bonds_lower_to_cash_flows_and_one_exercise_window_and_lift_back_exactly():
    bonds, curves, _ = load_paper(PAPER_SAMPLE)
    book = lower_bonds(bonds, tuple(map(str, range(len(curves)))))
    assert book.instrument.tolist() == [BOND] * len(bonds)
    assert book.event_kind.size == bonds.cashflow_step.size + len(bonds)
    assert (book.event_kind == EXERCISE).sum() == len(bonds)
    first = book.events(0)
    assert book.event_kind[first].tolist() == [CASH_FLOW] * int(bonds.cashflow_count[0]) + [EXERCISE]
    again = lift.bonds(book)
    for field, values in bonds.as_dict().items():
        assert np.array_equal(getattr(again, field), values), field


def test_the_documented_lower_methods_are_the_lattices_lowering_and_cached():
    """``Portfolio.lower(curve)`` and ``BondPortfolio.lower(curve_names)`` (README) are the lattice's lowering, cached
    on the portfolio once per curve naming; the instruments import nothing of the lattice (tests/layering.py)."""
    portfolio, _ = load_thesis("book")
    bonds, curves = generate_bonds("S1", 4, seed=2)
    names = tuple(map(str, range(len(curves))))
    assert trinom.Portfolio.lower is lower_options and trinom.BondPortfolio.lower is lower_bonds
    assert portfolio.lower() is lower_options(portfolio) is lower_options(portfolio, "default")
    assert portfolio.lower("USD") is lower_options(portfolio, "USD") is not portfolio.lower()
    assert bonds.lower(list(names)) is lower_bonds(bonds, names)
    assert lower(portfolio, "USD") is portfolio.lower("USD") and lower(bonds, names) is bonds.lower(names)
    with pytest.raises(TypeError):
        lower(portfolio, names)
    with pytest.raises(TypeError):
        lower(bonds, "USD")


def test_take_concatenate_and_work():
    portfolio, _ = load_thesis("book")
    bonds, _ = generate_bonds("S1", 4, seed=2)
    names = ("EUR", "USD", "GBP", "JPY")
    both = Book.concatenate([lower_options(portfolio, "USD"), lower_bonds(bonds, names)])
    assert both.curve_names == ("USD", "EUR", "GBP", "JPY")
    assert [both.curve_names[c] for c in both.curve[:5]] == ["USD"] * 5
    assert [both.curve_names[c] for c in both.curve[5:]] == [names[c] for c in bonds.curve_index]
    assert both.rows_of(BOND).tolist() == [5, 6, 7, 8]
    part = both.take([6, 2])
    assert part.instrument.tolist() == [BOND, OPTION] and part.event_offset[-1] == np.diff(both.event_offset)[[6, 2]].sum()
    for a, b in ((0, 9), (3, 7), (5, 6)):  # a span is the take of its range, as views
        span, taken = both.span(a, b), both.take(np.arange(a, b))
        for field in dataclasses.fields(Book):
            assert np.array_equal(getattr(span, field.name), getattr(taken, field.name),
                                  equal_nan=field.name in ("event_time", "event_end"))
        assert np.shares_memory(span.event_amount, both.event_amount)
    geometry = portfolio.geometry()
    assert np.array_equal(both.work()[:5], work(geometry.n, geometry.jmax))
    assert np.array_equal(both.work()[5:], work(bonds.height(), bonds.jmax()))


def test_market_names_and_scenarios():
    eur, usd = trinom.YieldCurve([0.03], [365]), trinom.YieldCurve([0.04], [365])
    assert trinom.Market.of({"EUR": eur, "USD": usd}).aligned(("USD", "EUR")) == (usd, eur)
    assert trinom.Market.of([eur, usd]).names == ("0", "1")
    assert trinom.Market.of(eur).names == ("default",)
    assert len(trinom.Market.of(None).curves[0]) == 15  # the thesis curve
    with pytest.raises(trinom.InputError, match="no yield curve named 'GBP'"):
        trinom.Market.of({"EUR": eur}).index("GBP")
    with pytest.raises(trinom.InputError, match="curves must be a YieldCurve"):
        trinom.Market.of(3.5)
    with pytest.raises(trinom.InputError, match=r"curve 'x' must be a YieldCurve \(or a table .*\), got list"):
        trinom.Market.of({"x": [0.03]})


def test_engines_price_every_scenario_of_a_market():
    portfolio, _ = load_thesis("book")
    flat = [trinom.YieldCurve([rate], [365]) for rate in (0.02, 0.05)]
    market = trinom.Market(names=("default",), scenarios=((flat[0],), (flat[1],)))
    result = trinom.price(portfolio, market, backend="reference")
    assert result.price.shape == (2, 5)
    for s, curve in enumerate(flat):
        assert np.array_equal(result.price[s], trinom.price(portfolio, curve, backend="reference").price)
    table = result.to_pandas()
    assert len(table) == 10 and table["scenario"].tolist() == [0] * 5 + [1] * 5


def test_result_type_and_table():
    bonds, curves = generate_bonds("R1", 3, seed=1)
    options = generate("uniform", 2)
    result = trinom.price([options, bonds], curves, backend="reference")
    assert len(result) == 5 and np.asarray(result) is result.price
    assert result.instrument.tolist() == ["option", "option", "bond", "bond", "bond"]
    assert np.array_equal(result.accrued[2:], bonds.accrued()) and (result.accrued[:2] == 0).all()
    table = result.to_pandas()
    assert list(table.columns) == ["id", "instrument", "price", "clean", "accrued", "error", "value"]
    np.testing.assert_array_equal(table.value, result.price)  # no notional: the value is the price
    assert result.engine == "reference" and result.ok.all()


def test_rows_are_numbered_across_a_mixed_book():
    options = generate("uniform", 3)
    bonds, curves = generate_bonds("S1", 4, seed=1)
    bad = trinom.BondPortfolio(**{**bonds.as_dict(), "sigma": [0.1, 0.1, -1.0, 0.1]})
    with pytest.raises(trinom.InputError, match="row 5: sigma must be > 0"):
        trinom.price([options, bad], curves, backend="reference")
    result = trinom.price([options, bad], curves, backend="reference", errors="mask")
    assert np.isnan(result.price[5]) and np.isfinite(np.delete(result.price, 5)).all()
    assert result.error[5].startswith("sigma must be > 0") and (np.delete(result.error, 5) == "").all()


def test_slices_of_equal_work_give_the_same_prices(monkeypatch):
    portfolio = generate("skewed", 60, seed=3)
    whole = trinom.price(portfolio, backend="futhark", target="c").price
    seen: list[tuple[float, float]] = []
    monkeypatch.setattr(running, "PROGRESS_MIN_SECONDS", 0)
    sliced = trinom.price(portfolio, backend="futhark", target="c", progress=lambda d, t: seen.append((d, t)))
    assert np.array_equal(sliced.price, whole)
    assert len(seen) > 1 and seen[-1][0] == seen[-1][1] == pytest.approx(lower_options(portfolio).work().sum())


def test_cli_names_the_row_of_the_whole_input(tmp_path, capsys):
    """A bad row far into a long job is reported with its own number (it used to be its row within a slice)."""
    portfolio = generate("uniform", 1000)
    fields = portfolio.as_dict()
    fields["sigma"] = fields["sigma"].copy()
    fields["sigma"][990] = -1.0
    path = tmp_path / "bad.csv"
    trinom.io.write_portfolio(trinom.Portfolio(**fields), path)
    assert main(["price", str(path), "--backend", "futhark", "--target", "c"]) == 2
    assert "row 990: sigma must be > 0" in capsys.readouterr().err


def test_unknown_knobs_and_targets_are_errors_not_ignored():
    portfolio, _ = load_thesis("book")
    with pytest.raises(ValueError, match="engine 'reference' runs on no named target; got target 'opencl'"):
        trinom.price(portfolio, backend="reference", target="opencl")
    with pytest.raises(ValueError, match="engine 'reference' takes no option 'block_size'"):
        trinom.price(portfolio, backend="reference", block_size=64)
    with pytest.raises(trinom.engines.BackendUnavailable, match="runs on device 0 only, got device 1"):
        trinom.price(portfolio, backend="futhark", target="c", device=1)


def test_price_bonds_is_a_deprecated_alias():
    bonds, curves = generate_bonds("U1", 5, seed=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = trinom.price_bonds(bonds, curves, backend="reference")
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    new = trinom.price(bonds, curves, backend="reference")
    assert np.array_equal(old.dirty, new.price) and np.array_equal(old.clean, new.clean)


def test_repeated_calls_reuse_a_bounded_number_of_plans():
    portfolio, _ = load_thesis("book")
    first = trinom.price(portfolio, backend="reference").price
    assert np.array_equal(trinom.price(portfolio, backend="reference").price, first)
    for rate in np.linspace(0.01, 0.05, 3 * api.PLANS_KEPT):  # new curve objects: new plans, a bounded number kept
        trinom.price(portfolio, trinom.YieldCurve([rate], [365]), backend="reference")
    assert len(portfolio.cached("plans", dict)) == api.PLANS_KEPT
