"""Backends: one module per pricing engine, one interface.

Every backend module defines::

    NAME: str                                    # e.g. "futhark-flat"
    TARGETS: tuple[str, ...]                     # targets it can run on (() if none apply)
    def available(target: str | None = None) -> tuple[bool, str]
        # (usable here?, why not / what it runs on)
    def price(portfolio, curve, precision="f64", *, target=None, **options) -> numpy.ndarray
        # prices in input order, dtype float32 for "f32" and float64 for "f64"

The portfolio a backend receives is already validated (every row is good) and non-empty;
sorting, packing and chunking happen inside the backend and are undone before it returns.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Backend name -> module (imported lazily, so a missing library only matters when used).
_MODULES: dict[str, str] = {
    "reference": "trinom.backends.reference",
    "futhark-basic": "trinom.backends.futhark_basic",
    "futhark-flat": "trinom.backends.futhark_flat",
    "cuda-option": "trinom.backends.cuda_option",
    "cuda-multi": "trinom.backends.cuda_multi",
    "cuda": "trinom.backends.cuda",
}
BACKENDS: tuple[str, ...] = (*_MODULES, "auto")
PRECISIONS: tuple[str, ...] = ("f32", "f64")


class BackendUnavailable(RuntimeError):
    """The chosen backend (or target) cannot run here; the message says why."""


def get(name: str) -> ModuleType:
    """The backend module called ``name`` (``auto`` is resolved by :func:`trinom.price`)."""
    if name not in _MODULES:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    try:
        return importlib.import_module(_MODULES[name])
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith("trinom.backends."):
            raise BackendUnavailable(f"backend {name!r} is not implemented in this version") from None
        raise


def status() -> list[tuple[str, str | None, bool, str]]:
    """``(backend, target, usable, reason)`` for every backend and target."""
    rows: list[tuple[str, str | None, bool, str]] = []
    for name in _MODULES:
        try:
            module = get(name)
        except BackendUnavailable as err:
            rows.append((name, None, False, str(err)))
            continue
        for target in module.TARGETS or (None,):
            usable, reason = module.available(target)
            rows.append((name, target, usable, reason))
    return rows
