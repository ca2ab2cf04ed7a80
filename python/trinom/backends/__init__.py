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
PRECISIONS: tuple[str, ...] = ("f32", "f64")


class BackendUnavailable(RuntimeError):
    """The chosen backend (or target) cannot run here; the message says why."""


class Registry:
    """Backend name -> module, imported lazily; shared by the option and the bond backends."""

    def __init__(self, modules: dict[str, str], kind: str = "backend"):
        self.modules = modules
        self.names: tuple[str, ...] = (*modules, "auto")
        self.kind = kind
        self._usable: dict[tuple[str, str | None], bool] = {}

    def get(self, name: str) -> ModuleType:
        """The module of backend ``name`` (``auto`` is resolved by the caller)."""
        if name not in self.modules:
            raise ValueError(f"unknown {self.kind} {name!r}; choose one of {', '.join(self.names)}")
        try:
            return importlib.import_module(self.modules[name])
        except ModuleNotFoundError as err:
            if err.name and self.modules[name].startswith(err.name):  # the backend module itself is missing
                raise BackendUnavailable(f"{self.kind} {name!r} is not implemented in this version") from None
            raise

    def usable(self, name: str, target: str | None = None) -> bool:
        """Can ``name`` (on ``target``) run here? Probed once per process."""
        key = (name, target)
        if key not in self._usable:
            try:
                self._usable[key] = bool(self.get(name).available(target)[0])
            except BackendUnavailable:
                self._usable[key] = False
        return self._usable[key]

    def status(self) -> list[tuple[str, str | None, bool, str]]:
        """``(backend, target, usable, reason)`` for every backend and target."""
        rows: list[tuple[str, str | None, bool, str]] = []
        for name in self.modules:
            try:
                module = self.get(name)
            except BackendUnavailable as err:
                rows.append((name, None, False, str(err)))
                continue
            for target in module.TARGETS or (None,):
                usable, reason = module.available(target)
                rows.append((name, target, usable, reason))
        return rows


#: The option backends.
REGISTRY = Registry(_MODULES)
BACKENDS: tuple[str, ...] = REGISTRY.names


def get(name: str) -> ModuleType:
    """The backend module called ``name`` (``auto`` is resolved by :func:`trinom.price`)."""
    return REGISTRY.get(name)


def status() -> list[tuple[str, str | None, bool, str]]:
    """``(backend, target, usable, reason)`` for every backend and target."""
    return REGISTRY.status()
