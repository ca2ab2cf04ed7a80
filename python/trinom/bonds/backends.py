"""Bond backends: one module each, the same interface as the option backends.

Every bond backend module defines ``NAME``, ``TARGETS``, ``available(target=None)`` and
``price(portfolio, curves, precision="f64", *, target=None, **options) -> numpy.ndarray``
(dirty prices in input order). The portfolio it receives is validated and non-empty.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from ..backends import BackendUnavailable

_MODULES: dict[str, str] = {
    "reference": "trinom.bonds.reference",
    "futhark": "trinom.backends.bonds_futhark",
    "cuda": "trinom.backends.bonds_cuda",
}
BOND_BACKENDS: tuple[str, ...] = (*_MODULES, "auto")


def get(name: str) -> ModuleType:
    """The bond backend module called ``name`` (``auto`` is resolved by :func:`choose`)."""
    if name not in _MODULES:
        raise ValueError(f"unknown bond backend {name!r}; choose one of {', '.join(BOND_BACKENDS)}")
    try:
        return importlib.import_module(_MODULES[name])
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith("trinom."):
            raise BackendUnavailable(f"bond backend {name!r} is not implemented in this version") from None
        raise


@functools.cache
def usable(name: str, target: str | None = None) -> bool:
    """Whether bond backend ``name`` (and ``target``) can run here; probed once per process."""
    try:
        return bool(get(name).available(target)[0])
    except BackendUnavailable:
        return False


def choose() -> tuple[str, dict[str, str]]:
    """``auto`` for bonds: ``cuda`` with a GPU, else Futhark multicore, then Futhark c, else the reference.

    Bond trees are priced by the same kinds of kernels as options, and the option benchmarks
    (benches/RESULTS.md) put them in this order on every dataset; see the bond figures there.
    """
    if usable("cuda"):
        return "cuda", {}
    for target in ("multicore", "c"):
        if usable("futhark", target):
            return "futhark", {"target": target}
    return "reference", {}


def status() -> list[tuple[str, str | None, bool, str]]:
    """``(backend, target, usable, reason)`` for every bond backend and target."""
    rows: list[tuple[str, str | None, bool, str]] = []
    for name in _MODULES:
        try:
            module = get(name)
        except BackendUnavailable as err:
            rows.append((name, None, False, str(err)))
            continue
        for target in module.TARGETS or (None,):
            ok, reason = module.available(target)
            rows.append((name, target, ok, reason))
    return rows
