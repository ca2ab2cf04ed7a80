"""Bond rows a quant would call wrong are input errors naming the row and the field (issue 24, findings 7 and 15)."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from trinom.bonds.generator import generate_bonds


def sample() -> tuple[dict[str, np.ndarray], list[trinom.YieldCurve]]:
    bonds, curves = generate_bonds("S1", 3, seed=6)  # 5, 11 and 100 cash flows
    return {name: np.array(values) for name, values in bonds.as_dict().items()}, curves


def problems(fields: dict[str, np.ndarray], curves) -> list[tuple[int, str, str]]:
    return trinom.BondPortfolio(**fields).validate(curves)


def test_an_exercise_window_after_the_last_cash_flow_is_an_error():
    """Finding 7: the window after maturity was accepted and the embedded option silently dropped."""
    fields, curves = sample()
    n = trinom.BondPortfolio(**fields).height()
    fields["first_exercise"][1], fields["last_exercise"][1] = n[1] + 1, n[1] + 10
    fields["last_exercise"][2] = n[2] + 1
    found = problems(fields, curves)
    assert [(row, field) for row, field, _ in found] == [(1, "last_exercise"), (2, "last_exercise")]
    assert f"last_exercise must be at most the maturity step {n[1]}" in found[0][2]
    masked = trinom.price(trinom.BondPortfolio(**fields), curves, backend="reference", errors="mask")
    assert np.isfinite(masked.price[0]) and np.isnan(masked.price[1:]).all()


@pytest.mark.parametrize("field", ["repayment", "coupon"])
def test_negative_cash_flows_are_errors(field):
    fields, curves = sample()
    offset = np.concatenate(([0], np.cumsum(fields["cashflow_count"])))
    fields[field][offset[2] + 1] = -5.0
    assert problems(fields, curves) == [(2, field, f"{field} of cash flow 1 must be a finite number >= 0 (an amount "
                                                   "the bond pays), got -5.0")]


def test_a_fractional_cash_flow_step_names_the_bond_and_its_cash_flow():
    """Finding 15: the step's index among all the book's cash flows was reported as a row."""
    fields, _curves = sample()
    offset = np.concatenate(([0], np.cumsum(fields["cashflow_count"])))
    steps = fields["cashflow_step"].astype(np.float64)
    steps[offset[2] + 1] = 2.5
    fields["cashflow_step"] = steps
    with pytest.raises(trinom.InputError) as info:
        trinom.BondPortfolio(**fields)
    assert info.value.errors == [(2, "cashflow_step", "cash flow 1 of the bond: cashflow_step must be a whole number, "
                                  "got 2.5")]


def test_a_term_unit_that_is_not_a_year_is_an_error():
    """The paper's lattice counts one term unit a year: a 30-day term unit gave a tree 144 times too long."""
    fields, curves = sample()
    fields["term_unit"][0] = 30
    found = problems(fields, curves)
    assert found[0][:2] == (0, "term_unit")
    assert "must be a year of 360 to 366 days" in found[0][2]
    fields["term_unit"][0] = 365
    assert problems(fields, curves) == []


def test_a_selection_keeps_the_read_problems_of_its_rows():
    """A row that could not be read stays bad in any selection of rows (it priced as its placeholder before)."""
    fields, curves = sample()
    bonds = trinom.BondPortfolio.with_read_problems([(1, "coupon", "coupon 'x' is not a number")], **fields)
    part = bonds[[2, 1]]
    assert part.validate(curves) == [(1, "coupon", "coupon 'x' is not a number")]
    assert bonds[[0, 2]].validate(curves) == []
    options = trinom.Portfolio.with_read_problems([(0, "strike", "strike 'x' is not a number")], strike=[1.0, 2.0],
                                                  maturity=[9.0, 9.0], expiry=[3.0, 3.0], term_unit=[365, 365],
                                                  term_steps=[12, 12], a=[0.1, 0.1], sigma=[0.01, 0.01],
                                                  option_type=[0, 1])
    assert [row for row, _f, _m in options[[1, 0]].validate()] == [1]
