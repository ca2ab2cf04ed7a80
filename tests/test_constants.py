"""One definition of the model constants per language, and the three agree."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT
from trinom.lattice import constants

NAMES = ("DAYS_IN_YEAR", "JMAX_FACTOR", "FACE_VALUE", "CALL", "PUT", "BOND_DAYS_IN_YEAR", "SPREAD_UNIT")


def futhark_constants() -> dict[str, float]:
    text = (ROOT / "fut" / "constants.fut").read_text()
    found = re.findall(r"^\s*def\s+([A-Z_]+)\s*(?::\s*\w+)?\s*=\s*(-?[0-9.]+)(?:[fiu](?:8|16|32|64))?", text, re.M)
    return {name: float(value) for name, value in found}


def cuda_constants() -> dict[str, float]:
    text = (ROOT / "cuda" / "trinom_constants.h").read_text()
    defines = re.findall(r"#define\s+([A-Z_]+)\s+\(?\s*(-?[0-9.]+)[fF]?\s*\)?", text)
    consts = re.findall(r"(?:static\s+)?(?:constexpr|const)\s+\w+\s+([A-Z_]+)\s*=\s*(-?[0-9.]+)[fF]?\s*;", text)
    return {name: float(value) for name, value in defines + consts}


@pytest.mark.parametrize("reader", [futhark_constants, cuda_constants], ids=["futhark", "cuda"])
def test_languages_agree_with_python(reader):
    values = reader()
    for name in NAMES:
        assert name in values, f"{name} is not defined in {reader.__name__}"
        assert values[name] == float(getattr(constants, name)), name
