"""Bond backends: one module each, the same interface as the option backends.

Every bond backend module defines ``NAME``, ``TARGETS``, ``available(target=None)`` and
``price(portfolio, curves, precision="f64", *, target=None, **options) -> numpy.ndarray``
(dirty prices in input order). The portfolio it receives is validated and non-empty.
"""

from __future__ import annotations

from types import ModuleType

from ..backends import Registry

#: The bond backends (imported lazily, so a missing library only matters when used).
REGISTRY = Registry({
    "reference": "trinom.bonds.reference",
    "futhark": "trinom.backends.bonds_futhark",
    "cuda": "trinom.backends.bonds_cuda",
}, kind="bond backend")
BOND_BACKENDS: tuple[str, ...] = REGISTRY.names


def get(name: str) -> ModuleType:
    """The bond backend module called ``name`` (``auto`` is resolved by :func:`choose`)."""
    return REGISTRY.get(name)


def usable(name: str, target: str | None = None) -> bool:
    """Whether bond backend ``name`` (and ``target``) can run here; probed once per process."""
    return REGISTRY.usable(name, target)


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
    return REGISTRY.status()
