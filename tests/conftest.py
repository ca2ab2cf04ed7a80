"""Shared fixtures: where the thesis and paper data live, and how GPU tests are skipped.

The thesis datasets and reference outputs (``data/thesis``) and the paper's bond files
(``data/paper``) ship with the repository, xz-compressed; ``data_dir()`` unpacks them beside the
``.xz`` files on first use (tools/make_data.py's ``unpack``, which ``make data`` also runs), so
plain ``pytest`` works in a fresh clone and tests may pass plain paths such as
``data_dir() / "thesis" / "book.in"`` to readers and to the command line.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import trinom
from trinom import io

ROOT = Path(__file__).resolve().parent.parent


@cache
def data_dir() -> Path:
    """The repository's ``data/`` folder, holding ``thesis/`` and ``paper/`` unpacked."""
    spec = importlib.util.spec_from_file_location("trinom_make_data", ROOT / "tools" / "make_data.py")
    make_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_data)
    return make_data.unpack(ROOT / "data")


#: The former name (the data used to live in ../shared/data); kept for existing callers.
shared_data_dir = data_dir


@pytest.fixture(scope="session")
def thesis_dir() -> Path:
    return data_dir() / "thesis"


@pytest.fixture(scope="session")
def thesis_curve(thesis_dir: Path) -> trinom.YieldCurve:
    return io.read_yield_curve(thesis_dir / "yield.in")


def load_thesis(name: str, precision: str = "f64") -> tuple[trinom.Portfolio, np.ndarray]:
    """A thesis dataset and its reference prices (``out/`` for f64, ``out32/`` for f32)."""
    thesis = data_dir() / "thesis"
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
    from trinom.io.bond_books import read_bonds

    paper = data_dir() / "paper"
    bonds, curves = read_bonds(paper / f"{name}.in")
    out = paper / ("out64" if precision == "f64" else "out32") / f"{name}.out"
    return bonds, curves, (io.read_prices(out) if out.exists() else None)


@pytest.fixture(scope="module")
def client(request: pytest.FixtureRequest):
    """A local Dask cluster of two one-thread worker processes, for a test module (its logs at the module's
    ``DASK_LOG_LEVEL``, default ERROR)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=getattr(request.module, "DASK_LOG_LEVEL", 40))
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()
