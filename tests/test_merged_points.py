"""The lowering's merge of listed exercise points (``dated_bond._merged_points``): one point a bond and step, the
tighter price where several share a step (the lowest for a call, the highest for a put; the earliest of equal ones),
checked against a plain loop over random points in and out of order."""

from __future__ import annotations

import numpy as np
import pytest
from trinom.instruments.dated_bond import _merged_points


def by_loop(bond, step, price, put, time):
    """One point a (bond, step), in that order: the first of the tightest."""
    best: dict[tuple[int, int], int] = {}
    for k in sorted(range(bond.size), key=lambda k: (bond[k], step[k])):  # stable: the input order among ties
        key = (int(bond[k]), int(step[k]))
        signed = -price[k] if put[k] else price[k]
        if key not in best or signed < (-price[best[key]] if put[best[key]] else price[best[key]]):
            best[key] = k
    kept = np.array([best[key] for key in sorted(best)], dtype=np.int64)
    return bond[kept], step[kept], price[kept], time[kept]


@pytest.mark.parametrize("steps_in_order", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_merge_matches_a_plain_loop(seed: int, steps_in_order: bool):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(2, 400))
    bond = rng.integers(0, 25, count)
    step = rng.integers(0, 12, count)
    if steps_in_order:  # as the lowering adds them: runs of bonds, steps ascending within each
        order = np.lexsort((step, bond))
        bond, step = bond[order], step[order]
        cut = int(rng.integers(0, count))
        bond, step = np.r_[bond[cut:], bond[:cut]], np.r_[step[cut:], step[:cut]]
    price = rng.choice([98.0, 99.5, 100.0, 101.0], count)  # ties on purpose
    put = np.isin(bond, rng.choice(25, 10, replace=False))  # a bond's points are all a call's or a put's
    time = rng.uniform(0.0, 5.0, count)
    got = _merged_points(bond, step, price, put, time)
    want = by_loop(bond, step, price, put, time)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_points_without_shared_steps_pass_through():
    bond, step = np.array([0, 0, 1, 1]), np.array([1, 3, 0, 2])
    price, put, time = np.array([100.0, 101.0, 99.0, 98.0]), np.zeros(4, dtype=bool), np.arange(4.0)
    for g, w in zip(_merged_points(bond, step, price, put, time), (bond, step, price, time), strict=True):
        np.testing.assert_array_equal(g, w)
