"""Coupon bonds: data model, validation, file formats, the reference pricer and its properties."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trinom
from conftest import PAPER_50, PAPER_SAMPLE, load_paper, shared_data_dir
from trinom import InputError
from trinom.bonds import BondPortfolio
from trinom.bonds.generator import DATASETS, generate_bonds, sample_bond
from trinom.engines import bonds_reference as reference
from trinom.engines.closed_form import zero_coupon_bond_option
from trinom.io.bond_books import is_bond_file, read_bonds, write_bonds
from trinom.lattice.constants import CALL, PUT


# --- the paper's sample: bit for bit -----------------------------------------------------------------
def test_sample_reproduces_out64_text_exactly():
    bonds, curves, expected = load_paper(PAPER_SAMPLE)
    prices = reference.price(bonds, curves, "f64")
    assert np.array_equal(prices, expected)
    text = (shared_data_dir() / "paper" / "out64" / f"{PAPER_SAMPLE}.out").read_text().strip()
    assert "[" + ", ".join(f"{p:.17f}" for p in prices) + "]" == text


def test_sample_reproduces_out32_text_exactly():
    bonds, curves, expected = load_paper(PAPER_SAMPLE, "f32")
    prices = reference.price(bonds, curves, "f32")
    assert prices.dtype == np.float32
    text = (shared_data_dir() / "paper" / "out32" / f"{PAPER_SAMPLE}.out").read_text().strip()
    assert "[" + ", ".join(f"{p:.9f}" for p in prices) + "]" == text
    assert np.max(np.abs(prices - expected)) < 1e-6


def test_sample_facts_from_the_spec():
    """§11: straight bonds, never-exercised puts equal the straight bond, Hull's put."""
    bonds, curves, expected = load_paper(PAPER_SAMPLE)
    never = _with(bonds, first_exercise=np.full(len(bonds), 10_000), last_exercise=np.full(len(bonds), 10_000))
    straight = reference.price(never, curves)
    assert straight[0] == pytest.approx(51.43891640476183, abs=1e-12)
    assert straight[[3, 9, 15]] == pytest.approx([116.12685451155713, 108.88013062332237, 63.530024640862045], abs=1e-12)
    for v in (3, 5, 7, 9, 11, 13):  # puts never exercised at spreads 0 and 1
        assert expected[v] == straight[v]
    assert expected[1] - straight[1] == pytest.approx(1.805124, abs=1e-6)  # Hull: 1.8093 analytic


# --- properties -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def styles():
    """One coupon bond (a = 0.1, sigma = 0.01, 9 years, coupon 5) under each style, call and put."""
    rows = []
    for kind in (CALL, PUT):
        for first, last, freq in ((36, 36, 1), (12, 96, 12), (12, 96, 1)):  # European, Bermudan, American
            rows.append(dict(kind=kind, first=first, last=last, freq=freq))
    steps = np.arange(12, 109, 12)
    n = len(rows)
    bonds = BondPortfolio(
        term_unit=np.full(n, 360), term_steps=np.full(n, 12), a=np.full(n, 0.1), sigma=np.full(n, 0.01),
        maturity=np.full(n, 9.0), cashflow_count=np.full(n, steps.size), cashflow_step=np.tile(steps, n),
        repayment=np.tile(np.where(steps == 108, 100.0, 0.0), n), coupon=np.full(n * steps.size, 5.0),
        spread=np.full(n, 0.5), option_type=[r["kind"] for r in rows], strike=np.full(n, 100.0),
        first_exercise=[r["first"] for r in rows], last_exercise=[r["last"] for r in rows],
        exercise_frequency=[r["freq"] for r in rows], curve_index=np.zeros(n, dtype=int))
    return bonds, (trinom.YieldCurve.thesis(),)


def test_exercise_rights_order(styles):
    bonds, curves = styles
    call_eu, call_berm, call_us, put_eu, put_berm, put_us = reference.price(bonds, curves)
    never = reference.price(_with(bonds, first_exercise=np.full(6, 999), last_exercise=np.full(6, 999)), curves)
    straight = never[0]
    assert np.all(never == straight)  # a bond that can never be exercised is the straight bond
    # More exercise dates are worth more to the holder of the right.
    assert put_us >= put_berm >= put_eu >= straight
    assert call_us <= call_berm <= call_eu <= straight
    assert put_us > put_eu and call_us < call_eu  # and the rights are worth something here


def test_puttable_zero_coupon_bond_matches_the_thesis_put():
    """A European put on a zero-coupon bond: bond-with-put minus bond = the thesis' put, close to the closed form."""
    bonds, curves = sample_bond()
    with_put = reference.price(bonds, curves)[0]
    straight = reference.price(_with(bonds, first_exercise=[999], last_exercise=[999]), curves)[0]
    put_value = with_put - straight
    put = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365], term_steps=[12],
                           a=[0.1], sigma=[0.01], option_type=["put"])
    thesis_put = trinom.price(put, curves[0], backend="reference").price[0]
    assert put_value == pytest.approx(thesis_put, abs=0.01)
    assert put_value == pytest.approx(zero_coupon_bond_option(put, curves[0])[0], abs=0.01)


def test_every_bond_is_priced_from_its_own_data_alone():
    """Quirk Q3 of the paper (a bond's price depending on the bond before it) is not reproduced."""
    bonds, curves = generate_bonds("R1", 12, seed=5)
    early = _with(bonds, first_exercise=np.full(12, 2))  # exercise before the first coupon date
    alone = np.array([reference.price(early[[k]], curves)[0] for k in range(12)])
    together = reference.price(early, curves)
    shuffled = np.random.default_rng(0).permutation(12)
    assert np.array_equal(together, alone)
    assert np.array_equal(reference.price(early[shuffled], curves), alone[shuffled])


#: Files where some float32 trees overflow (sigma up to 0.9 on trees of 800+ steps and 280+ nodes);
#: the paper's float build maps inf to FLT_MAX there too, and its prices are as far off.
F32_OVERFLOWS = ("1_RAND_50", "4_SKEWED_50")


@pytest.mark.parametrize("name", PAPER_50)
def test_paper_50_files_price_and_f32_agrees(name):
    bonds, curves, _ = load_paper(name)
    assert bonds.validate(curves) == []
    f64 = reference.price(bonds, curves, "f64")
    assert np.all(np.isfinite(f64)) and np.all(f64 > 0)
    if name not in F32_OVERFLOWS:
        f32 = reference.price(bonds, curves, "f32")
        assert np.max(np.abs(f32 - f64) / np.maximum(1.0, np.abs(f64))) < 1e-5


# --- generator ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dataset", list(DATASETS))
def test_generator_shapes(dataset):
    bonds, curves = generate_bonds(dataset, 500, seed=2)
    assert len(bonds) == 500 and bonds.validate(curves) == []
    widths, heights = bonds.widths(), bonds.height()
    if dataset in ("U1", "U2"):
        assert set(widths) == {259} and set(heights) == {606}
    elif dataset.startswith("R"):
        assert widths.min() >= 7 and widths.max() <= 511 and heights.min() >= 13 and heights.max() <= 1200
    else:
        wide, tall = widths >= 461, heights >= 1082
        assert 1 <= wide.sum() <= 10 and 1 <= tall.sum() <= 10
        assert (wide == tall).all() if dataset == "S1" else not (wide & tall).any()
    styles = np.where(bonds.first_exercise == bonds.last_exercise, "eu", np.where(bonds.exercise_frequency == 1, "us", "berm"))
    assert set(styles) == {"eu", "us", "berm"} and set(bonds.option_type) == {CALL, PUT}
    assert (bonds.cashflow_count == 1).any() and (bonds.cashflow_count > 1).any()
    assert generate_bonds(dataset, 50, seed=2)[0].a.tolist() == generate_bonds(dataset, 50, seed=2)[0].a.tolist()


# --- validation ----------------------------------------------------------------------------------------------
def test_validation_names_row_and_field():
    bonds, curves = generate_bonds("R1", 6, seed=1)
    steps = bonds.cashflow_step.copy()
    lo = bonds.cashflow_offset[2]
    bad = _with(bonds, exercise_frequency=[1, 0, 1, 1, 1, 1], curve_index=[0, 0, 0, 0, 9, 0],
                last_exercise=np.where(np.arange(6) == 3, -5, bonds.last_exercise))
    problems = bad.validate(curves)
    assert (1, "exercise_frequency") in [(r, f) for r, f, _ in problems]
    assert (3, "last_exercise") in [(r, f) for r, f, _ in problems]
    assert (4, "curve_index") in [(r, f) for r, f, _ in problems]
    if bonds.cashflow_count[2] > 1:
        steps[lo], steps[lo + 1] = steps[lo + 1], steps[lo]
        swapped = _with(bonds, cashflow_step=steps)
        assert [(r, f) for r, f, _ in swapped.validate(curves)] == [(2, "cashflow_step")]
    late = bonds.cashflow_step.copy()
    late[bonds.cashflow_offset[1] - 1] += 1
    message = _with(bonds, cashflow_step=late).validate(curves)[0]
    assert message[:2] == (0, "cashflow_step") and "maturity step" in message[2]
    with pytest.raises(InputError, match=r"row 1: exercise_frequency must be in 1\.\.65535, got 0"):
        trinom.price(bad, curves, backend="reference")


def test_mask_prices_good_rows_and_reports_bad_ones_in_order():
    bonds, curves = generate_bonds("S1", 5, seed=4)
    bad = _with(bonds, sigma=[0.1, -1.0, 0.1, 0.1, np.nan])
    result = trinom.price(bad, curves, backend="reference", errors="mask")
    assert np.isnan(result.price[[1, 4]]).all() and np.isfinite(result.price[[0, 2, 3]]).all()
    assert "sigma must be > 0" in result.error[1] and "finite" in result.error[4] and result.error[0] == ""
    good = reference.price(bad[[0, 2, 3]], curves)
    assert np.array_equal(result.price[[0, 2, 3]], good)


def test_construction_errors():
    with pytest.raises(InputError, match="missing field 'coupon'"):
        BondPortfolio(**{k: v for k, v in sample_bond()[0].as_dict().items() if k != "coupon"})
    fields = sample_bond()[0].as_dict()
    with pytest.raises(InputError, match="cashflow_step has 2 entries, but the cashflow_count sum is 1"):
        BondPortfolio(**{**fields, "cashflow_step": [12, 108]})
    swap = BondPortfolio(**{**fields, "option_type": ["swap"]})  # maskable: reported by validate, not construction
    assert swap.validate(sample_bond()[1]) == [(0, "option_type", "option_type must be 0 (call) or 1 (put), got 'swap'")]


# --- files ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".in", ".csv"])
def test_round_trip(tmp_path: Path, suffix: str):
    bonds, curves = generate_bonds("S2", 30, seed=8)
    path = tmp_path / f"bonds{suffix}"
    write_bonds(bonds, curves, path)
    assert is_bond_file(path)
    again, curves_again = read_bonds(path)
    for name, values in bonds.as_dict().items():
        assert np.array_equal(getattr(again, name), values), name
    assert [c.rates.tolist() for c in curves_again] == [c.rates.tolist() for c in curves]


def test_csv_cash_flows_keyed_by_id_in_any_order(tmp_path: Path):
    bonds, curves = generate_bonds("R2", 4, seed=3)
    path = tmp_path / "book.csv"
    write_bonds(bonds, curves, path)
    flows = (tmp_path / "book.cashflows.csv").read_text().splitlines()
    (tmp_path / "book.cashflows.csv").write_text("\n".join([flows[0], *reversed(flows[1:])]) + "\n")
    assert np.array_equal(read_bonds(path)[0].cashflow_step, bonds.cashflow_step)
    (tmp_path / "book.cashflows.csv").write_text("\n".join(flows[:-1]) + "\n")  # one cash flow lost
    with pytest.raises(InputError, match="row 3: cashflow_count is"):
        read_bonds(path)


# --- dirty and clean ------------------------------------------------------------------------------------------
def test_clean_price_subtracts_interest_accrued_since_the_last_coupon():
    bonds, curves = generate_bonds("R1", 3, seed=11)
    assert np.all(bonds.accrued() == 0)  # coupons on whole years from step 12: step 0 is a coupon date
    steps = bonds.cashflow_step - np.where(bonds.cashflow_step < np.repeat(bonds.height(), bonds.cashflow_count), 3, 0)
    shifted = _with(bonds, cashflow_step=steps)  # first coupon 9 months away: 3 of 12 months accrued
    result = trinom.price(shifted, curves, backend="reference")
    first = shifted.coupon[shifted.cashflow_offset[:-1]]
    expected = np.where(shifted.cashflow_count > 1, first * 3 / 12, 0.0)
    assert result.accrued == pytest.approx(expected)
    assert result.clean == pytest.approx(result.price - expected)


def _with(bonds: BondPortfolio, **changes) -> BondPortfolio:
    return BondPortfolio(**{**bonds.as_dict(), **changes})


def test_named_curves_in_csv_and_in_price(tmp_path: Path):
    bonds, curves = generate_bonds("R1", 6, seed=13)
    path = tmp_path / "named.csv"
    write_bonds(bonds, curves, path)
    names = ["EUR", "USD", "GBP", "CHF"]
    curve_file = tmp_path / "named.curves.csv"
    lines = curve_file.read_text().splitlines()
    curve_file.write_text("\n".join([lines[0]] + [f"{names[int(line.split(',')[0])]},{line.split(',', 1)[1]}"
                                                  for line in lines[1:]]) + "\n")
    bond_file = path.read_text().splitlines()
    column = bond_file[0].split(",").index("curve_index")
    rows = [line.split(",") for line in bond_file[1:]]
    for row in rows:
        row[column] = names[int(row[column])]
    path.write_text("\n".join([bond_file[0]] + [",".join(row) for row in rows]) + "\n")
    again, again_curves = read_bonds(path)
    assert np.array_equal(again.curve_index, bonds.curve_index)
    assert [c.rates.tolist() for c in again_curves] == [c.rates.tolist() for c in curves]
    by_name = dict(zip(names, curves, strict=True))
    named = trinom.price(bonds, by_name, backend="reference").price
    assert np.array_equal(named, reference.price(bonds, curves))


@pytest.mark.parametrize(("backend", "target"), [("futhark", "c"), ("futhark", "multicore"), ("futhark-paper", "c")])
def test_trees_of_half_width_one_price_as_the_reference(backend, target):
    """A mean reversion so strong that jmax is 1 (a = 3, monthly steps): the fast bond program's formulation needs two
    nodes either side, so such trees go to the paper's program (the fast one priced 389.82 for 95.12)."""
    bonds = trinom.BondPortfolio(term_unit=[360] * 3, term_steps=[12] * 3, a=[3.0, 0.1, 2.5], sigma=[0.01] * 3,
                                 maturity=[1.0] * 3, cashflow_count=[1] * 3, cashflow_step=[12] * 3,
                                 repayment=[100.0] * 3, coupon=[0.0] * 3, spread=[0.0] * 3, option_type=["call"] * 3,
                                 strike=[1000.0, 1000.0, 99.0], first_exercise=[12] * 3, last_exercise=[12] * 3,
                                 exercise_frequency=[1] * 3, curve_index=[0] * 3)
    assert bonds.jmax().tolist() == [1, 23, 1]
    curves = [trinom.YieldCurve([0.05], [365])]
    expected = trinom.price(bonds, curves, backend="reference").price
    np.testing.assert_allclose(expected[:2], 100 * np.exp(-0.05), rtol=1e-12)
    got = trinom.price(bonds, curves, backend=backend, target=target).price
    np.testing.assert_allclose(got, expected, rtol=1e-12)
