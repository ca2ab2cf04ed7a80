"""QuantLib's published cases written as trinom trades (issue 38; the cases are in ``tests/published_cases.py``, their
table in ``docs/published-cases.md``): trinom within the published engine's own resolution of the published value (the
gap between that engine as published and converged) and within ``CONVERGED`` of the converged engine."""

from __future__ import annotations

import pytest
from published_cases import CONVERGED, Case, bermudan_swaptions


@pytest.fixture(scope="module")
def swaptions() -> list[Case]:
    return bermudan_swaptions()


@pytest.mark.parametrize("k", range(3), ids=["in the money", "at the money", "out of the money"])
def test_bermudan_swaptions_of_quantlibs_test_suite(swaptions: list[Case], k: int) -> None:
    case = swaptions[k]
    assert case.quantlib == pytest.approx(case.published, abs=0.03)  # QuantLib 1.44 still reproduces the case
    assert abs(case.trinom - case.converged) <= CONVERGED, case
    assert abs(case.trinom - case.published) <= abs(case.published - case.converged) + CONVERGED, case
