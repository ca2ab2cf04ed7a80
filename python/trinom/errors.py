"""The one exception type of trinom for bad input."""

from __future__ import annotations

from collections.abc import Sequence


class InputError(ValueError):
    """Bad input: the message names the option's 0-based row and the field.

    ``errors`` holds every ``(row, field, message)`` found, in row order; ``row`` is ``None``
    for problems of the whole input (arrays of different lengths, a bad yield curve).

    >>> raise InputError([(3, "sigma", "sigma must be > 0, got -0.01")])
    Traceback (most recent call last):
    ...
    trinom.errors.InputError: row 3: sigma must be > 0, got -0.01
    """

    def __init__(self, errors: Sequence[tuple[int | None, str, str]]):
        self.errors = list(errors)
        lines = [_format(row, msg) for row, _field, msg in self.errors[:10]]
        if len(self.errors) > 10:
            lines.append(f"... and {len(self.errors) - 10} more bad rows")
        super().__init__("\n".join(lines))

    def __reduce__(self) -> tuple[type, tuple[list[tuple[int | None, str, str]]]]:
        """Pickled by its problems (a Dask task's error comes back to the caller whole, rows and fields)."""
        return (type(self), (self.errors,))

    @property
    def rows(self) -> list[int]:
        """The rows that have an error, without repeats, in order."""
        return sorted({row for row, _f, _m in self.errors if row is not None})


def _format(row: int | None, msg: str) -> str:
    return msg if row is None else f"row {row}: {msg}"


#: What a caller may do with bad rows: raise an :class:`InputError`, or mask them (NaN and a message).
ERROR_MODES: tuple[str, ...] = ("raise", "mask")


def check_error_mode(errors: str) -> None:
    """A ``ValueError`` unless ``errors`` is one of :data:`ERROR_MODES` (a programming error, not bad input)."""
    if errors not in ERROR_MODES:
        raise ValueError(f"errors must be 'raise' or 'mask', got {errors!r}")
