"""The checks of a public call's arguments: a ``TypeError`` or ``ValueError`` naming the argument, raised before any
work. Imported from any layer (issue 36's layout: below every concern, as the error and result types are);
``trinom.pipeline`` names them too.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def check_whole(name: str, value: object, *, minimum: int | None = None) -> int:
    """``value`` as an ``int`` (a Python or NumPy integer; ``True``/``False`` are not numbers here)."""
    what = f"a whole number >= {minimum}" if minimum is not None else "a whole number"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {what}, got {_shown(value)}")
    if minimum is not None and int(value) < minimum:
        raise ValueError(f"{name} must be {what}, got {int(value)}")
    return int(value)


def check_real(name: str, value: object, *, positive: bool = False, nonnegative: bool = False) -> float:
    """``value`` as a finite ``float`` (``positive``: > 0; ``nonnegative``: >= 0)."""
    what = "a positive number" if positive else "a number >= 0" if nonnegative else "a finite number"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {what}, got {_shown(value)}")
    number = float(value)
    if not math.isfinite(number) or (positive and not number > 0) or (nonnegative and not number >= 0):
        raise ValueError(f"{name} must be {what}, got {number!r}")
    return number


def check_text(name: str, value: object, *, optional: bool = False) -> str | None:
    """``value`` as a ``str`` (``optional``: or None)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string{' or None' if optional else ''}, got {_shown(value)}")
    return value


def check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    """``value``, one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {_shown(value)}")
    return value


def check_callable(name: str, value: object) -> Callable[..., Any] | None:
    """``value``: None or something callable."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a callable such as progress(done, total), or None; got {_shown(value)}")
    return value  # type: ignore[return-value]


def check_sequence(name: str, value: object, *, of: str) -> Sequence[Any]:
    """``value`` as a list: a sequence (a list, a tuple, an array), not a string or a single item (``of`` says
    what its items are, for the message)."""
    listed = isinstance(value, Sequence) and not isinstance(value, (str, bytes))
    array_like = hasattr(value, "__array__") and np.ndim(value) == 1  # type: ignore[arg-type]
    if not (listed or array_like):
        raise TypeError(f"{name} must be a list of {of}, got {_shown(value)}")
    return list(value)  # type: ignore[call-overload]


def check_client(value: object) -> Any:
    """``value``: a Dask ``distributed.Client`` (or anything with its ``submit``, ``gather`` and
    ``scheduler_info``); an address is not a client."""
    if isinstance(value, str):
        raise TypeError(f"client must be a Dask distributed.Client, got the string {value!r}: connect first, "
                        f"client = distributed.Client({value!r})")
    missing = [m for m in ("submit", "gather", "scheduler_info") if not callable(getattr(value, m, None))]
    if missing:
        raise TypeError(f"client must be a Dask distributed.Client, got {type(value).__name__} (it has no "
                        f"{', '.join(missing)})")
    status = getattr(value, "status", None)
    if isinstance(status, str) and status in ("closed", "closing"):  # a closed client's calls fail deep inside Dask
        raise ValueError(f"the Dask client is {status}: connect again (distributed.Client(...)) or pass client=None "
                         "to price here")
    return value


__all__ = ["check_callable", "check_choice", "check_client", "check_real", "check_sequence", "check_text",
           "check_whole"]
