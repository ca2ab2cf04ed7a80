"""The NumPy reference pricer on the CPU (`make bench`)."""

from __future__ import annotations

import numpy as np
import pytest
import trinom
from conftest import dataset, record

DATASETS = ["book", "options-1000", "0_UNIFORM_1000", "1_RAND_1000", "2_RANDCONSTHEIGHT_1000", "3_RANDCONSTWIDTH_1000"]


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("data", DATASETS)
def test_reference(benchmark, data, precision):
    portfolio, curve, expected = dataset(data)
    rounds = 1 if data.startswith(("1_", "3_")) else 3
    prices = benchmark.pedantic(trinom.price, args=(portfolio, curve),
                                kwargs={"backend": "reference", "precision": precision}, rounds=rounds, iterations=1)
    record(benchmark, portfolio, precision)
    np.testing.assert_allclose(prices, expected, rtol=0, atol=1e-12 if precision == "f64" else 1.2e-4)
