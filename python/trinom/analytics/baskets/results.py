"""The fit's results: :class:`BasketCalibration` (per trade and per quote) and each trade's status and message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ...model.calibration import CONVERGED, MAX_ITERATIONS, NOT_FINITE, bound_hits

#: A solver outcome of this module: converged on a flat objective (no quote's price moves).
_FLAT: Final[int] = 4


@dataclass(frozen=True, eq=False)
class BasketCalibration:
    """A per-trade calibration's outcome.

    Per trade (in the baskets' order): ``id, curve, a, sigma`` (NaN where there is no fit), ``a_fixed``,
    ``status`` (``converged``, ``bound``, ``no fit``), ``message``, ``rmse`` (the root mean square of the quotes'
    ``model_vol - market_vol``, in the surface's kind: rate units for normal), ``iterations``, ``quote_count``.

    Per quote (trade by trade, exercise dates ascending): ``trade`` (the trade's index), ``exercise``, ``end``
    (dates), ``expiry``, ``tenor`` (years: the surface's coordinates), ``strike``, ``forward``, ``annuity``,
    ``payer``, ``kind``, ``shift``, ``market_vol``, ``market_price``, ``model_price`` (per unit notional),
    ``model_vol`` (the model price's implied volatility of the quote's kind), ``residual`` (``model_vol -
    market_vol``), ``price_residual`` (``model_price - market_price``), ``error`` (the objective's ``e_i``).
    """

    id: np.ndarray
    curve: np.ndarray
    a: np.ndarray
    sigma: np.ndarray
    a_fixed: np.ndarray
    status: np.ndarray
    message: np.ndarray
    rmse: np.ndarray
    iterations: np.ndarray
    quote_count: np.ndarray
    error_type: str
    trade: np.ndarray
    exercise: np.ndarray
    end: np.ndarray
    expiry: np.ndarray
    tenor: np.ndarray
    strike: np.ndarray
    forward: np.ndarray
    annuity: np.ndarray
    payer: np.ndarray
    kind: np.ndarray
    shift: np.ndarray
    market_vol: np.ndarray
    market_price: np.ndarray
    model_price: np.ndarray
    model_vol: np.ndarray
    residual: np.ndarray
    price_residual: np.ndarray
    error: np.ndarray

    def __len__(self) -> int:
        return int(self.id.size)

    @property
    def ok(self) -> bool:
        """Whether every trade converged."""
        return bool((self.status == "converged").all())

    def parameters(self) -> dict[str, tuple[float, float]]:
        """``{id: (a, sigma)}`` of the trades with a fit."""
        return {str(i): (float(a), float(s)) for i, a, s, status in zip(self.id, self.a, self.sigma, self.status,
                                                                         strict=True) if status != "no fit"}

    def trades_frame(self) -> Any:
        """One row per trade: ``id, a, sigma, status, message, curve, rmse, quotes, iterations, a_fixed``."""
        import pandas as pd

        return pd.DataFrame({"id": self.id, "a": self.a, "sigma": self.sigma, "status": self.status,
                             "message": self.message, "curve": self.curve, "rmse": self.rmse,
                             "quotes": self.quote_count, "iterations": self.iterations, "a_fixed": self.a_fixed})

    def quotes_frame(self) -> Any:
        """One row per quote: ``id, curve, exercise, end, expiry, tenor, strike, forward, payer, kind, shift,
        market_vol, market_price, model_price, model_vol, residual, price_residual, error``."""
        import pandas as pd

        return pd.DataFrame({"id": self.id[self.trade], "curve": self.curve[self.trade], "exercise": self.exercise,
                             "end": self.end, "expiry": self.expiry, "tenor": self.tenor, "strike": self.strike,
                             "forward": self.forward, "payer": self.payer, "kind": self.kind, "shift": self.shift,
                             "market_vol": self.market_vol, "market_price": self.market_price,
                             "model_price": self.model_price, "model_vol": self.model_vol, "residual": self.residual,
                             "price_residual": self.price_residual, "error": self.error})


def _statuses(fit: Any, count: np.ndarray, held: np.ndarray, a_fixed: np.ndarray,
              limits: Mapping[str, tuple[float, float]], max_iterations: int, rmse: np.ndarray, notes: list[str],
              a_guess: float, units: np.ndarray, kinds: np.ndarray, details: bool) -> tuple[np.ndarray, list[str]]:
    """Per trade its status and message (:func:`_status`), the common case (converged, no bound hit) formatted in
    one pass; ``details=False``: only the trades without a fit get their message."""
    n = count.size
    status = _texts(n, "no fit")
    messages = list(notes)
    fitted = (count > 0) & (fit.code == CONVERGED) & np.isfinite(fit.cost)
    hits = fitted & (fit.at_lower.any(axis=1) | fit.at_upper.any(axis=1))
    status[fitted] = "converged"
    status[hits] = "bound"
    plain = np.flatnonzero(fitted & ~hits)
    if details and plain.size:
        how = np.where(held, f", a held at its guess {a_guess:g} (one quote cannot determine both a and sigma)",
                       np.where(a_fixed, ", a fixed", ""))
        for k, reason, steps, held_text, quotes, error, unit in zip(
                plain.tolist(), fit.reason[plain].tolist(), fit.iterations[plain].tolist(), how[plain].tolist(),
                count[plain].tolist(), rmse[plain].tolist(), units[plain].tolist(), strict=True):
            text = f"converged ({reason}) in {steps} iterations{held_text}; {quotes} quote(s), vol rmse {error:.3g}{unit}"
            messages[k] = f"{text}; {messages[k]}" if messages[k] else text
    for k in np.flatnonzero(~fitted | (hits if details else False)):
        status[k], messages[k] = _status(fit, k, int(count[k]), bool(held[k]), bool(a_fixed[k]), limits,
                                         max_iterations, float(rmse[k]), notes[k], a_guess, str(kinds[k]))
    return status, messages


def _texts(shape: int | tuple[int, ...], text: str) -> np.ndarray:
    """An object array of ``shape`` holding ``text`` everywhere (``np.full`` of an object is some 30 times slower)."""
    out = np.empty(shape, dtype=object)
    out.fill(text)
    return out


def _status(fit: Any, k: int, quotes: int, held: bool, a_fixed: bool, limits: Mapping[str, tuple[float, float]],
            max_iterations: int, rmse: float, note: str, a_guess: float, kind: str) -> tuple[str, str]:
    """A trade's status and message (``note``: what the basket itself says)."""
    def with_note(text: str) -> str:
        return f"{text} ({note})" if note and text.startswith("no ") else (f"{text}; {note}" if note else text)

    if quotes == 0:
        return "no fit", note or "no quotes"
    code = int(fit.code[k])
    if code == NOT_FINITE or not np.isfinite(fit.cost[k]):
        return "no fit", with_note("a model price or its derivative is not finite at the starting point")
    if code == MAX_ITERATIONS:
        return "no fit", with_note(f"no convergence in {max_iterations} iterations (last a={fit.x[k, 0]:.6g}, "
                                   f"sigma={fit.x[k, 1]:.6g})")
    if code == _FLAT:
        return "no fit", with_note("no quote's model price moves with sigma at the fit (deep in or out of the money: "
                                   "no time value to fit)")
    if code != CONVERGED:
        return "no fit", with_note(f"{quotes} quote(s) for the free parameters")
    unit = " (normal, rate units)" if kind == "normal" else " (lognormal)" if kind else ""
    tail = f"{quotes} quote(s), vol rmse {rmse:.3g}{unit}"
    hits = bound_hits(fit, k, limits)
    if hits:
        return "bound", with_note(f"{hits}; {tail}")
    how = (f", a held at its guess {a_guess:g} (one quote cannot determine both a and sigma)" if held
           else ", a fixed" if a_fixed else "")
    return "converged", with_note(f"converged ({fit.reason[k]}) in {int(fit.iterations[k])} iterations{how}; {tail}")
