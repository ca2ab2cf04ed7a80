"""``trinom.price``: one call from a portfolio and a curve to prices in input order."""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np

from . import auto, backends
from .constants import DEFAULT_MAX_WIDTH
from .curve import YieldCurve
from .errors import InputError
from .portfolio import Portfolio


@overload
def price(portfolio: Portfolio, curve: YieldCurve | None = ..., *, backend: str = ..., precision: str = ...,
          errors: Literal["raise"] = ..., max_width: int = ..., **options: Any) -> np.ndarray: ...
@overload
def price(portfolio: Portfolio, curve: YieldCurve | None = ..., *, backend: str = ..., precision: str = ...,
          errors: Literal["mask"], max_width: int = ..., **options: Any) -> tuple[np.ndarray, np.ndarray]: ...


def price(
    portfolio: Portfolio,
    curve: YieldCurve | None = None,
    *,
    backend: str = "auto",
    precision: str = "f64",
    errors: str = "raise",
    max_width: int = DEFAULT_MAX_WIDTH,
    **options: Any,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Price every option of ``portfolio`` on ``curve`` (default: the thesis curve).

    ``backend`` is one of ``trinom.backends.BACKENDS`` (``auto``: the best usable one);
    ``precision`` is ``"f64"`` or ``"f32"``; ``options`` go to the backend (``target=`` picks a
    Futhark target, for example). The input is validated once: with ``errors="raise"`` a bad row
    raises :class:`trinom.InputError` naming the row and field; with ``errors="mask"`` the result is
    ``(prices, messages)`` where bad rows have price NaN and a message, good rows ``""``.

    >>> import trinom
    >>> p = trinom.Portfolio(strike=[63.0, 63.0], maturity=[9.0, 9.0], expiry=[3.0, 3.0],
    ...                      term_unit=[365, 365], term_steps=[1, 1], a=[0.1, -0.1],
    ...                      sigma=[0.01, 0.01], option_type=["put", "put"])
    >>> prices, messages = trinom.price(p, backend="reference", errors="mask")
    >>> print(round(float(prices[0]), 6), prices[1], messages[1])
    1.879957 nan a must be > 0, got -0.1
    """
    if precision not in backends.PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(backends.PRECISIONS)}, got {precision!r}")
    if errors not in ("raise", "mask"):
        raise ValueError(f"errors must be 'raise' or 'mask', got {errors!r}")
    curve = curve if curve is not None else YieldCurve.thesis()
    problems = portfolio.validate(max_width=max_width)
    if problems and errors == "raise":
        raise InputError(problems)
    dtype = np.float32 if precision == "f32" else np.float64
    if not problems:  # the common case: no masking, no copies
        prices = np.empty(0, dtype=dtype)
        if len(portfolio):
            module, options = _resolve(backend, portfolio, precision, options)
            prices = np.asarray(module.price(portfolio, curve, precision, **options), dtype=dtype)
    else:
        prices = np.full(len(portfolio), np.nan, dtype=dtype)
        good = portfolio.good_rows(max_width)
        if good.size:
            subset = portfolio[good]
            module, options = _resolve(backend, subset, precision, options)
            prices[good] = module.price(subset, curve, precision, **options)
    if errors == "mask":
        text = np.full(len(portfolio), "", dtype=object)
        for row, _field, message in problems:  # a row with several problems gets them all, joined
            text[row] = f"{text[row]}; {message}" if text[row] else message
        return prices, text.astype(str)
    return prices


def _resolve(backend: str, portfolio: Portfolio, precision: str, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The backend module to run and its options (``auto`` asks :mod:`trinom.auto`)."""
    if backend != "auto":
        return backends.get(backend), options
    name, chosen = auto.choose(portfolio, precision)
    return backends.get(name), {**options, **chosen}


def choose_backend(portfolio: Portfolio, precision: str = "f64") -> str:
    """The backend ``auto`` runs for ``portfolio`` (with its target, e.g. ``futhark-basic/c``)."""
    name, options = auto.choose(portfolio, precision)
    return f"{name}/{options['target']}" if options.get("target") else name
