"""Shared fixtures: where the thesis data lives, and how GPU tests are skipped.

The thesis datasets and reference outputs are read from ``$TRINOM_SHARED_DATA`` (default
``../shared/data`` beside the checkout; on the lent GPU machine ``.carry/shared/data``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
import trinom
from trinom import io

ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path:
    """The folder holding ``thesis/`` and ``paper/``."""
    env = os.environ.get("TRINOM_SHARED_DATA")
    for candidate in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "data", ROOT / ".carry" / "shared" / "data"]:
        if (candidate / "thesis").is_dir():
            return candidate
    pytest.skip("thesis data not found: set TRINOM_SHARED_DATA to the folder holding thesis/")


@pytest.fixture(scope="session")
def thesis_dir() -> Path:
    return shared_data_dir() / "thesis"


@pytest.fixture(scope="session")
def thesis_curve(thesis_dir: Path) -> trinom.YieldCurve:
    return io.read_yield_curve(thesis_dir / "yield.in")


def load_thesis(name: str, precision: str = "f64") -> tuple[trinom.Portfolio, np.ndarray]:
    """A thesis dataset and its reference prices (``out/`` for f64, ``out32/`` for f32)."""
    thesis = shared_data_dir() / "thesis"
    portfolio = io.read_portfolio(thesis / f"{name}.in")
    out = thesis / ("out" if precision == "f64" else "out32") / f"{name}.out"
    return portfolio, io.read_prices(out)


def gpu_present() -> tuple[bool, str]:
    """Is an NVIDIA GPU usable here? (and why not)."""
    if not Path("/dev/nvidia0").exists() and not Path("/dev/nvidiactl").exists():
        return False, "no CUDA device (no /dev/nvidia0)"
    return True, "NVIDIA device present"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip GPU tests where no GPU is present, printing the reason."""
    ok, why = gpu_present()
    if ok:
        return
    marker = pytest.mark.skip(reason=f"GPU test skipped: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(marker)


def relative_to_root(path: Path) -> str:
    return re.sub(f"^{re.escape(str(ROOT))}/?", "", str(path))


PAPER_SAMPLE = "0_UNIFORM_1_CALL_PUT_EU_Berm_US_oas"
PAPER_50 = ["0_UNIFORM_50", "1_RAND_50", "2_RANDCONSTHEIGHT_50", "3_RANDCONSTWIDTH_50", "4_SKEWED_50",
            "5_SKEWEDCONSTHEIGHT_50", "6_SKEWEDCONSTWIDTH_50"]


def load_paper(name: str, precision: str = "f64"):
    """A paper bond file (``paper/NAME.in``), its curves, and its reference outputs if any.

    Returns ``(bonds, curves, expected)``; ``expected`` is ``out64``/``out32`` for the sample
    and ``None`` for the ``*_50`` files (which have no published outputs).
    """
    from trinom.bonds.io import read_bonds

    paper = shared_data_dir() / "paper"
    if not paper.is_dir():
        pytest.skip(f"paper data not found in {paper.parent}")
    bonds, curves = read_bonds(paper / f"{name}.in")
    out = paper / ("out64" if precision == "f64" else "out32") / f"{name}.out"
    return bonds, curves, (io.read_prices(out) if out.exists() else None)
