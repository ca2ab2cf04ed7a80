"""The options of a pricing call in one small object (issue 36): what every stage of the pipeline, the analytics and
the Dask executor take instead of a dozen loose arguments.

>>> options = PricingOptions.of(backend="reference", errors="mask", max_steps=5000)
>>> options.engine, options.limits["max_steps"]
({'backend': 'reference', 'precision': 'f64', 'target': None, 'device': 0}, 5000)
>>> PricingOptions.of(precision="f16")
Traceback (most recent call last):
...
ValueError: precision must be one of f32, f64, got 'f16'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..checks import check_callable, check_text, check_whole
from ..errors import check_error_mode
from ..lattice.constants import DEFAULT_MAX_STEPS, DEFAULT_MAX_WIDTH
from .engine import PRECISIONS


@dataclass(frozen=True)
class PricingOptions:
    """How a book is priced: the engine (``backend``, ``precision``, ``target``, ``device`` and the engine's own
    ``tuning`` knobs), what a bad row does (``errors``), the trees' bounds (``max_width``, ``max_steps``) and a
    ``progress(done, total)`` callback. Build it with :meth:`of`, which checks every field."""

    backend: str = "auto"
    precision: str = "f64"
    target: str | None = None
    device: int = 0
    errors: str = "raise"
    max_width: int = DEFAULT_MAX_WIDTH
    max_steps: int = DEFAULT_MAX_STEPS
    progress: Callable[[float, float], None] | None = None
    tuning: tuple[tuple[str, Any], ...] = ()  #: the engine's own knobs, by name

    @classmethod
    def of(cls, **arguments: Any) -> PricingOptions:
        """The options from keyword arguments (a name that is no field is an engine knob), each checked:
        a ``TypeError`` or ``ValueError`` naming the first one of the wrong type or value."""
        fields = {f.name for f in dataclasses.fields(cls)} - {"tuning"}
        given = {k: v for k, v in arguments.items() if k in fields}
        tuning = tuple((k, v) for k, v in arguments.items() if k not in fields)
        options = cls(**given, tuning=tuning)
        check_price_arguments(**options.checked)
        return options

    def replace(self, **changes: Any) -> PricingOptions:
        """These options with ``changes`` (fields or engine knobs), checked again."""
        return PricingOptions.of(**{**self.arguments, **changes})

    @property
    def checked(self) -> dict[str, Any]:
        """The fields :func:`check_price_arguments` checks."""
        return dict(backend=self.backend, precision=self.precision, target=self.target, device=self.device,
                    errors=self.errors, max_width=self.max_width, max_steps=self.max_steps, progress=self.progress)

    @property
    def arguments(self) -> dict[str, Any]:
        """Every field and knob as the keyword arguments of :func:`trinom.price`."""
        return {**self.checked, **dict(self.tuning)}

    @property
    def engine(self) -> dict[str, Any]:
        """What chooses and runs the engine: backend, precision, target and device, then the knobs."""
        return dict(backend=self.backend, precision=self.precision, target=self.target, device=self.device,
                    **dict(self.tuning))

    @property
    def limits(self) -> dict[str, int]:
        """The trees' bounds that validation applies."""
        return {"max_width": self.max_width, "max_steps": self.max_steps}

    @property
    def knobs(self) -> Mapping[str, Any]:
        """The engine's own knobs."""
        return dict(self.tuning)


def check_price_arguments(*, backend: object, precision: object, target: object, device: object, errors: object,
                          max_width: object, max_steps: object, progress: object = None) -> None:
    """A ``TypeError`` or ``ValueError`` naming the first argument of :func:`trinom.price` of the wrong type or
    value."""
    check_text("backend", backend)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    check_text("target", target, optional=True)
    check_whole("device", device, minimum=0)
    check_error_mode(errors)  # type: ignore[arg-type]
    check_whole("max_width", max_width, minimum=1)
    check_whole("max_steps", max_steps, minimum=1)
    check_callable("progress", progress)
