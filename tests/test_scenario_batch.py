"""A market's scenario axis priced as one batch (trinom.engines.scenario_batch, issue 14 item 1).

Every scenario price must be bit for bit the price of the moved book priced alone on the same engine: the
batch only decides which (tree, curve, spread) entries to price, and shares what a scenario leaves as it is.
The GPU engine's batched prices (one forward pass per tree, one backward pass per entry) are checked in
tests/test_bonds_cuda_gpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from trinom.bonds.generator import generate_bonds
from trinom.engines.scenario_batch import batch, expanded
from trinom.lattice.lowering import lower_bonds, lower_options
from trinom.scenarios import CurveSet, CurveShift, SigmaShift, SpreadShift, scenario_market, shifted

H = 1e-4
CPU_ENGINES = [("reference", None), ("futhark", "c")]


def moved(book, **fields):
    return type(book)(**{**book.as_dict(), **{k: getattr(book, k) + v for k, v in fields.items()}})


def alone(book, curves, scenario, backend, target):
    """The price of ``scenario`` priced as a book of its own (no scenario axis)."""
    market = trinom.Market.of(curves)
    if isinstance(scenario, SigmaShift):
        return trinom.price(moved(book, sigma=scenario.shift), market, backend=backend, target=target).price
    if isinstance(scenario, SpreadShift):
        return trinom.price(moved(book, spread=scenario.shift), market, backend=backend, target=target).price
    curves_now = scenario_market(market, [scenario]).curves
    return trinom.price(book, dict(zip(market.names, curves_now, strict=True)), backend=backend, target=target).price


def bond_scenarios(curves):
    replaced = {"2": trinom.YieldCurve([0.02, 0.03], [100, 5000])}
    return [None, CurveShift(-H), CurveShift(H), CurveShift(H, "1", 3), CurveShift(H, "0", 14), CurveSet(replaced),
            SigmaShift(H), SigmaShift(-H), SpreadShift(0.01), SpreadShift(-0.01)]


@pytest.mark.parametrize(("backend", "target"), CPU_ENGINES)
def test_every_bond_scenario_is_its_book_priced_alone(backend, target):
    bonds, curves = generate_bonds("S1", 30, seed=3)
    scenarios = bond_scenarios(curves)
    got = trinom.price(bonds, curves, scenarios=scenarios, backend=backend, target=target).price
    assert got.shape == (len(scenarios), len(bonds))
    for k, scenario in enumerate(scenarios):
        np.testing.assert_array_equal(got[k], alone(bonds, curves, scenario, backend, target), err_msg=str(scenario))


@pytest.mark.parametrize(("backend", "target"), CPU_ENGINES)
def test_every_option_scenario_is_its_book_priced_alone(backend, target):
    options = trinom.generator.generate("uniform", 5, seed=4)
    scenarios = [None, CurveShift(H), CurveShift(-H, pillar=2), CurveShift(H, pillar=14), SigmaShift(H),
                 SpreadShift(0.5)]
    got = trinom.price(options, scenarios=scenarios, backend=backend, target=target).price
    for k, scenario in enumerate(scenarios):
        want = (trinom.price(options, backend=backend, target=target).price if isinstance(scenario, SpreadShift)
                else alone(options, None, scenario, backend, target))
        np.testing.assert_array_equal(got[k], want, err_msg=str(scenario))


def test_a_bump_beyond_a_tree_or_on_another_curve_reuses_its_base_price():
    short = trinom.Portfolio(strike=[63.0], maturity=[4.0], expiry=[1.0], term_unit=[365], term_steps=[12],
                             a=[0.1], sigma=[0.01], option_type=["put"])
    market = scenario_market(None, [None, CurveShift(H, pillar=14), CurveShift(H, pillar=2), SpreadShift(1.0)])
    plan = batch(lower_options(short), market)
    assert plan.entries == 2  # base (also the far bump and the spread move), the near bump
    assert plan.source[:, 0].tolist() == [0, 0, 1, 0]
    bonds, curves = generate_bonds("U1", 4, seed=1)
    market = scenario_market(curves, [None, CurveShift(H, "3", 5)])
    plan = batch(lower_bonds(bonds, market.names), market)
    on_three = bonds.curve_index == 3
    assert (plan.source[1] != plan.source[0]).tolist() == on_three.tolist()


def test_the_expanded_book_holds_one_tree_per_entry():
    bonds, curves = generate_bonds("S1", 6, seed=2)
    market = scenario_market(curves, [None, CurveShift(H), SigmaShift(H)])
    plan = batch(lower_bonds(bonds, market.names), market)
    flat, one = expanded(plan)
    assert len(flat) == plan.entries == 3 * len(bonds) and len(one) == 1
    assert len(one.curves) == len(plan.curves) == 8  # four curves, four shifted
    np.testing.assert_array_equal(flat.sigma[-len(bonds):], bonds.sigma + H)


def test_a_scenario_that_makes_a_row_invalid_names_the_move():
    """Issue 35: a row that one scenario's move makes invalid is NaN in that scenario only (not in the base)."""
    options = trinom.generator.generate("uniform", 4, seed=5)
    sigma = options.sigma.copy()
    sigma[1] = 0.5 * H
    book = trinom.Portfolio(**{**options.as_dict(), "sigma": sigma})
    result = trinom.price(book, scenarios=[None, SigmaShift(-H), SigmaShift(H)], backend="reference", errors="mask")
    assert np.isnan(result.price[1, 1]) and "moves sigma by -0.0001" in result.error[1]
    assert np.isfinite(np.delete(result.price, 1, axis=1)).all()
    # only the scenario that moves the row out of range is masked: the others are its prices as alone
    alone = trinom.price(book, scenarios=[None, SigmaShift(H)], backend="reference")
    np.testing.assert_array_equal(result.price[[0, 2], 1], alone.price[:, 1])
    assert not result.ok[1] and result.ok[[0, 2, 3]].all()
    with pytest.raises(trinom.InputError, match=r"row 1.*sigma"):
        trinom.price(book, scenarios=[None, SigmaShift(-H)], backend="reference")


def test_scenario_market_checks_its_scenarios():
    with pytest.raises(trinom.InputError, match="scenario 1 must be"):
        scenario_market(None, [None, 0.5])
    with pytest.raises(trinom.InputError, match="no yield curve named 'GBP'"):
        scenario_market(None, [CurveSet({"GBP": trinom.YieldCurve.thesis()})])
    with pytest.raises(trinom.InputError, match="sigma_shifts has 1 entries"):
        trinom.Market(("default",), ((trinom.YieldCurve.thesis(),),) * 2, sigma_shifts=(H,))
    market = scenario_market(None, [None, CurveShift(H)])
    assert market.sigma_shifts == () and not market.moves_trees
    assert shifted(market.curves[0], H).rates[0] == market.scenarios[1][0].rates[0]


def test_an_early_key_rate_bump_resumes_from_a_checkpoint():
    bonds, curves = generate_bonds("R1", 20, seed=4)
    market = scenario_market(curves, [None, CurveShift(H, pillar=2), CurveShift(H, pillar=14), CurveShift(H)])
    plan = batch(lower_bonds(bonds, market.names), market)
    n = plan.book.shape()[0]
    # pillar 2 (day 62) moves the curve up to pillar 3 (day 94): from day 95 on, 5 steps of a month at most
    assert (plan.checkpoint == 5).all() and (n > 5).all()
    assert not plan.resume[plan.entry_offset[:-1]].any()  # a tree's first entry is priced whole
    assert plan.resume[plan.source[1]].all()
    assert not plan.resume[plan.source[2]].any() and not plan.resume[plan.source[3]].any()  # to the end


def test_bond_arrays_are_the_portfolio_once_per_sigma_move_or_a_few_bonds():
    from trinom.engines.bond_arrays import bond_blocks, bonds_at

    bonds, curves = generate_bonds("U1", 5, seed=3)
    book = lower_bonds(bonds, trinom.Market.of(curves).names)
    tiled = bond_blocks(book, np.array([0.0, H]))
    assert len(tiled) == 10 and tiled.cashflow_offset[-1] == 2 * bonds.cashflow_step.size
    np.testing.assert_array_equal(tiled.sigma, np.r_[bonds.sigma, bonds.sigma + H])
    picked = bonds_at(tiled, np.array([7, 1]))  # the third bond's sigma-moved copy, then the second bond
    np.testing.assert_array_equal(picked.cashflow_step, np.r_[bonds[2].cashflow_step, bonds[1].cashflow_step])
    np.testing.assert_array_equal(picked.sigma, [bonds.sigma[2] + H, bonds.sigma[1]])
    assert picked.cashflow_offset.tolist() == [0, bonds.cashflow_count[2], bonds.cashflow_count[2:0:-1].sum()]


def test_a_part_of_a_batch_prices_its_trees_entries():
    """``ScenarioBatch.part``: the entries of some trees (sigma moves applied) as a batch of their own."""
    from trinom import engines

    options = trinom.generator.generate("random", 6, seed=2)
    market = scenario_market(None, [None, CurveShift(H), CurveShift(H, pillar=3), SigmaShift(H)])
    plan = batch(lower_options(options, market.names[0]), market)
    engine = engines.get("reference")
    whole = engine.price_entries(plan, "f64", None, 0, {})
    trees = np.array([len(plan.trees) - 1, 0, 4])  # a sigma-moved copy first
    part, where = plan.part(trees)
    assert len(part.book) == 3 and part.entries == where.size
    assert np.array_equal(part.entry_curve, plan.entry_curve[where])
    np.testing.assert_array_equal(engine.price_entries(part, "f64", None, 0, {}), whole[where])


# --- issue 24: a lone sigma or spread move is applied on every path ------------------------------------------------

@pytest.mark.parametrize(("backend", "target"), CPU_ENGINES)
@pytest.mark.parametrize("kind", ["option", "bond"])
@pytest.mark.parametrize("path", ["plain", "market twice", "progress"])
def test_a_lone_sigma_or_spread_move_is_applied(backend, target, kind, path):
    """scenarios=[SigmaShift(0.01)] (or [SpreadShift(1.0)]) prices the moved book, shape (1, rows), never the base:
    on the plain call, on a repeated call with the same market (the plan cache) and on a call with a progress bar."""
    if kind == "option":
        book, curves = trinom.generator.generate("uniform", 5, seed=4), None
        moves = [SigmaShift(0.01)]
    else:
        book, curves = generate_bonds("S1", 6, seed=3)
        moves = [SigmaShift(0.01), SpreadShift(1.0)]
    base = trinom.price(book, curves, backend=backend, target=target).price
    for move in moves:
        field = "sigma" if isinstance(move, SigmaShift) else "spread"
        want = trinom.price(moved(book, **{field: move.shift}), curves, backend=backend, target=target).price
        if path == "plain":
            got = trinom.price(book, curves, scenarios=[move], backend=backend, target=target).price
            assert got.shape == (1, len(book))
        elif path == "market twice":
            market = scenario_market(curves, [move])
            trinom.price(book, market, backend=backend, target=target)
            got = trinom.price(book, market, backend=backend, target=target).price
        else:
            got = trinom.price(book, curves, scenarios=[move], backend=backend, target=target,
                               progress=lambda done, total: None).price
        assert not np.allclose(want, base, rtol=1e-9), move  # the move matters to the book
        np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-13, err_msg=str(move))
