"""Per-trade calibration of a piecewise-constant sigma (issue 37, item 4; ``trinom calibrate trades.csv --piecewise``):
each trade's basket (:mod:`trinom.analytics.baskets`, its co-terminal European swaptions) bootstrapped piece by piece
(:func:`trinom.model.bootstrap_sigma`, ORE's "bootstrap" of a Bermudan's model), ``a`` fixed, every trade at once.

The piece ending at each exercise date is fitted to the swaption expiring there, in date order; the last holds on.
Quotes the fit of one sigma leaves out (a price not above 0, or no time value) are left out here too, their dates
then inside a longer piece. Each piece has a status: ``converged``
where it reprices its quote, ``bound`` where its quote asked for less variance than the earlier pieces already gave
(the piece at the bootstrap's least sigma), and its ``residual``, the model's price of its quote on the trade's pieces
less the market's (per unit notional; 0 to rounding where converged). A trade is ``no fit`` where a quote is out of
the model's reach or it has no basket (its message says why). The model file has a row a piece, ``residual`` and
then ``until`` appended (the piece's last date; empty on the last, open-ended one): ``trinom price --model`` reads it
back (:func:`trinom.cli.calibrate.read_model_file`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...model.bootstrap import bootstrap_sigma
from ...model.piecewise_tree import MAX_VARIANCE_RATIO
from .fit import _usable_quotes
from .preparation import PreparedBaskets


@dataclass(frozen=True, eq=False)
class PiecewiseCalibration:
    """Per trade (in the baskets' order): ``id``, ``curve``, ``a``, ``status``, ``message``, ``quotes`` (the quotes
    fitted) and its pieces ``until[k]`` (dates, each piece's last day but the last's), ``sigma[k]``, ``piece_status[k]``
    and ``residual[k]`` (its quote's model price less its market price)."""

    id: np.ndarray
    curve: np.ndarray
    a: np.ndarray
    status: np.ndarray
    message: np.ndarray
    quotes: np.ndarray
    until: list[list[str]]
    sigma: list[list[float]]
    piece_status: list[list[str]]
    residual: list[list[float]]

    def row_pieces(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Per trade with a fit, its pieces as :meth:`~trinom.instruments.trades.Trades.with_sigma_pieces` keeps
        them: the days where each but the last ends, and every piece's sigma."""
        return {k: (np.array([np.datetime64(d, "D").astype(np.int64) for d in self.until[k]], dtype=np.int64),
                    np.array(self.sigma[k])) for k in range(self.id.size) if self.sigma[k]}

    def to_frame(self) -> Any:
        """The model file's rows: one a piece, ``id, a, sigma, status, message, curve, quotes, residual, until``
        (a trade without a fit: one row, ``a`` and ``sigma`` empty, its status ``no fit``)."""
        import pandas as pd

        rows: dict[str, list[Any]] = {name: [] for name in ("id", "a", "sigma", "status", "message", "curve",
                                                               "quotes", "residual", "until")}
        for k in range(self.id.size):
            fitted = bool(self.sigma[k])
            values = self.sigma[k] if fitted else [np.nan]
            ends = [*self.until[k], ""] if fitted else [""]
            statuses = self.piece_status[k] if fitted else [self.status[k]]
            residuals = self.residual[k] if fitted else [np.nan]
            for value, end, status, residual in zip(values, ends, statuses, residuals, strict=True):
                for name, cell in (("id", self.id[k]), ("a", self.a[k] if fitted else np.nan), ("sigma", value),
                                   ("status", status), ("message", self.message[k]), ("curve", self.curve[k]),
                                   ("quotes", int(self.quotes[k])), ("residual", residual), ("until", end)):
                    rows[name].append(cell)
        return pd.DataFrame(rows)


def bootstrap_baskets(prepared: PreparedBaskets, curves: Any, *, a: float,
                      vol_shift: float = 0.0) -> PiecewiseCalibration:
    """Every trade's pieces of sigma bootstrapped to its basket's quotes priced on ``curves`` (see the module),
    with the mean reversion ``a`` fixed (> 0) and every quoted volatility moved by ``vol_shift``."""
    quotes = prepared.quotes(curves, vol_shift)
    positive, timeless = _usable_quotes(quotes.market_price, quotes.annuity, quotes.payer, quotes.forward,
                                        quotes.strike)
    used = np.flatnonzero(positive & ~timeless)
    n = len(prepared)
    owner = quotes.trade[used]
    trades, local = np.unique(owner, return_inverse=True)
    count = np.bincount(owner, minlength=n)
    status = np.full(n, "no fit", dtype=object)
    message = np.array(list(prepared.notes), dtype=object)
    until: list[list[str]] = [[] for _ in range(n)]
    sigma: list[list[float]] = [[] for _ in range(n)]
    statuses: list[list[str]] = [[] for _ in range(n)]
    residual: list[list[float]] = [[] for _ in range(n)]
    if used.size:
        swaptions = quotes.swaptions_of(used)
        fit = bootstrap_sigma(swaptions, quotes.market_price[used], trade=local, a=a)
        with np.errstate(all="ignore"):
            model = swaptions.price(a=a, sigma=fit.sigma.take(local), root="exact")
        for t, trade in enumerate(trades.tolist()):
            mine = local == t
            piece_status = fit.status[mine]
            dates = [str(d) for d in quotes.exercise[used][mine]]
            if (piece_status == "no fit").any():
                first = dates[int(np.flatnonzero(piece_status == "no fit")[0])]
                message[trade] = (f"the quote expiring {first} is out of the model's reach with a = {a:g} (no sigma "
                                  "reprices it)")
                continue
            pieces = [float(v) for v in fit.sigma.values[t, :int(mine.sum())]]
            sigma[trade], until[trade] = pieces, dates[:-1]
            statuses[trade] = ["bound" if v == "bound" else "converged" for v in piece_status.tolist()]
            residual[trade] = (model[mine] - quotes.market_price[used][mine]).tolist()
            status[trade] = "bound" if (piece_status == "bound").any() else "converged"
            notes = [message[trade]] if message[trade] else []
            if status[trade] == "bound":
                notes.append("a quote asks for less variance than the earlier pieces give: its piece is at the least "
                             "sigma")
            ratio = (max(pieces) / min(pieces)) ** 2
            if ratio > MAX_VARIANCE_RATIO:
                notes.append(f"the pieces range over a factor {ratio ** 0.5:.3g}: a tree holds at most "
                             f"{MAX_VARIANCE_RATIO ** 0.5:.3g} (pricing refuses the trade)")
            message[trade] = "; ".join(notes)
    for k in np.flatnonzero((status == "no fit") & (message == "")).tolist():
        message[k] = "no quote with a price and time value to fit"
    return PiecewiseCalibration(id=prepared.baskets.id.copy(), curve=prepared.curve.copy(),
                                a=np.full(n, float(a)), status=status, message=message, quotes=count,
                                until=until, sigma=sigma, piece_status=statuses, residual=residual)
