"""The tree with a piecewise-constant sigma (issue 37, item 3; trinom.model.piecewise_tree): one grid a tree, each
step's branching matched to its own variance. Its probabilities and moments, its width, the closed forms with the
integrated variance as its limit, the pieces that are refused, and the engines that price it (the reference) or
refuse it (every other, for now)."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from trinom import BondPortfolio
from trinom.errors import InputError
from trinom.model.curve import YieldCurve
from trinom.model.hull_white import zero_bond_option
from trinom.model.piecewise_tree import MAX_VARIANCE_RATIO, SigmaPieces, piece_probabilities, piecewise_shape
from trinom.model.sigma import Sigma
from trinom.model.tree_geometry import Convention, probability_table

RATE, A, SIGMA = 0.03, 0.05, 0.01
#: Per 100: the tree at 365 steps a year against the closed form with the integrated variance (measured 4.0e-4 and
#: 1.5e-5 with pieces; the one-sigma tree is 1.7e-4 off on the same option).
TREE_365 = 1e-3


def curve() -> YieldCurve:
    return YieldCurve(rates=[RATE, RATE], days=[365, 365 * 40])


def put_book(steps_per_year: int, strike: float, pieces: tuple[list[float], list[float]] | None = None,
             sigma: float = SIGMA) -> BondPortfolio:
    """A 10-year zero-coupon bond with a European put at 5 years (puttable: the bond plus the put)."""
    n = 10 * steps_per_year
    bonds = BondPortfolio(term_unit=[365], term_steps=[steps_per_year], a=[A], sigma=[sigma], maturity=[10.0],
                          cashflow_count=[1], cashflow_step=[n], repayment=[100.0], coupon=[0.0], spread=[0.0],
                          option_type=["put"], strike=[strike], first_exercise=[5 * steps_per_year],
                          last_exercise=[5 * steps_per_year], exercise_frequency=[1], curve_index=[0])
    if pieces is None:
        return bonds
    years, values = pieces
    return bonds.with_sigma_pieces(counts=[len(years)], step=[round(y * steps_per_year) for y in years], sigma=values)


def put_value(steps_per_year: int, strike: float, pieces: tuple[list[float], list[float]] | None) -> float:
    with_put = trinom.price(put_book(steps_per_year, strike, pieces), [curve()], backend="reference").price[0]
    bond = trinom.price(put_book(steps_per_year, 0.0, pieces), [curve()], backend="reference").price[0]
    return float(with_put - bond)


@pytest.mark.parametrize("pieces", [([2.0, 4.0], [0.013, 0.008]), ([1.0, 3.0], [0.016, 0.0095])],
                         ids=["within-hull-white-width", "widened"])
def test_a_european_on_pieces_converges_to_the_closed_form(pieces: tuple[list[float], list[float]]) -> None:
    """A put on a zero-coupon bond: the tree with sigma pieces against the closed form with their integrated
    variance (trinom.model.hull_white with a Sigma), at 365 steps a year."""
    discount = np.exp(-RATE * np.array([5.0, 10.0]))
    strike = 100.0 * discount[1] / discount[0]
    closed = 100.0 * float(np.ravel(zero_bond_option(
        a=A, sigma=Sigma(times=[pieces[0]], values=[[SIGMA, *pieces[1]]]), expiry=5.0, maturity=10.0,
        strike=strike / 100.0, discount_expiry=discount[0], discount_maturity=discount[1], is_call=False))[0])
    assert put_value(365, strike, pieces) == pytest.approx(closed, abs=TREE_365)
    one_sigma = 100.0 * float(np.ravel(zero_bond_option(a=A, sigma=SIGMA, expiry=5.0, maturity=10.0,
                                                        strike=strike / 100.0, discount_expiry=discount[0],
                                                        discount_maturity=discount[1], is_call=False))[0])
    assert abs(closed - one_sigma) > 0.2  # the pieces matter


def test_pieces_of_one_sigma_are_the_one_sigma_tree_to_the_bit() -> None:
    plain = put_book(24, 80.0)
    same = plain.with_sigma_pieces(counts=[2], step=[24, 48], sigma=[SIGMA, SIGMA])
    assert same.sigma_pieces() is None
    assert trinom.price(same, [curve()], backend="reference").price[0] == \
        trinom.price(plain, [curve()], backend="reference").price[0]


@pytest.mark.parametrize("ratio", [1.2, 2.0, 2.3, 2.9, 3.0])
@pytest.mark.parametrize("a,dt", [(0.01, 1 / 365), (0.05, 1 / 12), (0.3, 1 / 4), (0.1, 1.0)])
def test_every_step_matches_its_mean_and_variance_with_probabilities_above_zero(ratio: float, a: float,
                                                                                 dt: float) -> None:
    """Every node's three probabilities are >= 0, sum to 1, and give the step's mean ``x (1 + M)`` and variance
    ``V_i`` (to 1e-13 relative), for pieces whose variances span ``ratio``."""
    pieces = SigmaPieces.of(counts=[2], step=[1, 2], sigma=[SIGMA * ratio ** 0.5, SIGMA * (1 + ratio ** 0.5) / 2])
    shape = piecewise_shape(a=np.array([a]), sigma=np.array([SIGMA]), dt=np.array([dt]), n=np.array([10]),
                            pieces=pieces)
    assert shape.ratio[0] == pytest.approx(ratio)
    jmax = int(shape.jmax[0])
    M = np.exp(-a * dt) - 1.0
    j = np.arange(-jmax, jmax + 1)
    for v in shape.v:
        p = piece_probabilities(j, M, v)
        up = np.where(j == -jmax, p["pu_b"], np.where(j == jmax, p["pu_c"], p["pu_a"]))
        mid = np.where(j == -jmax, p["pm_b"], np.where(j == jmax, p["pm_c"], p["pm_a"]))
        down = np.where(j == -jmax, p["pd_b"], np.where(j == jmax, p["pd_c"], p["pd_a"]))
        assert min(up.min(), mid.min(), down.min()) >= -1e-15
        np.testing.assert_allclose(up + mid + down, 1.0, rtol=0, atol=1e-14)
        centre = np.where(j == -jmax, j + 1, np.where(j == jmax, j - 1, j))  # the middle successor
        e = (j - centre) + j * M  # the mean's distance from it, in dx
        np.testing.assert_allclose(up - down, e, rtol=0, atol=1e-13)  # the mean
        variance = up * (1 - e) ** 2 + mid * e ** 2 + down * (1 + e) ** 2  # about the mean, in dx^2
        np.testing.assert_allclose(variance, v, rtol=1e-12)


def test_hull_whites_own_width_holds_close_pieces_and_is_widened_for_far_ones() -> None:
    base = dict(a=np.array([A]), sigma=np.array([SIGMA]), dt=np.array([1 / 12]), n=np.array([120]))
    close = piecewise_shape(**base, pieces=SigmaPieces.of(counts=[1], step=[12], sigma=[0.014]))
    far = piecewise_shape(**base, pieces=SigmaPieces.of(counts=[1], step=[12], sigma=[0.016]))
    standard = put_book(12, 80.0).jmax()[0]
    assert close.jmax[0] == standard and far.jmax[0] > standard
    assert close.v.max() == pytest.approx(1 / 3, rel=1e-15)  # Hull and White's dx for the largest sigma
    p = probability_table(np.arange(3), np.exp(-A / 12) - 1.0, np.float64, Convention.PAPER)
    q = piece_probabilities(np.arange(3), np.exp(-A / 12) - 1.0, 1 / 3)
    for key in p:
        np.testing.assert_allclose(q[key], p[key], rtol=0, atol=1e-15)


def test_pieces_too_far_apart_and_bad_pieces_are_refused_by_row_and_field() -> None:
    bonds = BondPortfolio.concatenate([put_book(12, 80.0)] * 3)
    too_far = bonds.with_sigma_pieces(counts=[0, 1, 2], step=[12, 24, 12], sigma=[0.02, 0.012, 0.009])
    problems = too_far.validate([curve()])
    assert [(row, field) for row, field, _m in problems] == [(1, "sigma_pieces"), (2, "sigma_pieces")]
    assert "a factor 2" in problems[0][2] and f"{MAX_VARIANCE_RATIO ** 0.5:.4g}" in problems[0][2]
    assert "ascending" in problems[1][2]
    with pytest.raises(InputError, match="2 counts for 3 bonds"):
        bonds.with_sigma_pieces(counts=[1, 1], step=[12], sigma=[0.01])


def test_only_the_reference_prices_pieces_and_auto_picks_it() -> None:
    bonds = put_book(12, 80.0, ([2.0], [0.012]))
    chosen = trinom.price(bonds, [curve()], backend="auto")
    assert "reference" in str(chosen.engine)
    assert chosen.price[0] == trinom.price(bonds, [curve()], backend="reference").price[0]
    with pytest.raises(ValueError, match="piecewise constant"):
        trinom.price(bonds, [curve()], backend="futhark", target="c")


def test_a_sigma_move_moves_every_piece() -> None:
    """A scenario's sigma move (a book's with_trees) moves the step function in parallel: the same as pieces given
    moved."""
    from trinom.lattice.lowering import lower_bonds

    bonds = put_book(12, 80.0, ([2.0, 4.0], [0.013, 0.008]))
    moved = lower_bonds(bonds, ("default",)).with_trees(sigma=[SIGMA + 1e-3])
    assert moved.sigma_pieces is not None and moved.sigma_pieces.sigma.tolist() == pytest.approx([0.014, 0.009])
