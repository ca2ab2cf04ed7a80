"""The one result type of :func:`trinom.price`: a price per input row, or the row's error."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Instrument kinds (what lowered a tree; engines route trees to kernels by it) and their names in a result; the
#: lattice's book (``trinom.lattice.book``) takes them from here.
OPTION, BOND = 0, 1
INSTRUMENT_NAMES = {OPTION: "option", BOND: "bond"}


@dataclass(frozen=True)
class Prices:
    """Prices per input row, in input order.

    * ``price``: the value per 100 of notional (face) for every kind of row (for a bond its dirty price, the tree's
      root value); shape ``(rows,)``, or ``(scenarios, rows)`` for a market of several scenarios. NaN where the row
      has an error.
    * ``value``: the value in currency, ``price * notional / 100`` (``notional``: each row's, 100 where the input has
      none: then ``value`` is ``price``).
    * ``clean`` and ``accrued``: ``clean = price - accrued``; ``accrued`` is a bond's interest accrued at
      the valuation date and 0 for an option.
    * ``error``: ``""`` for a good row, else every problem of the row, joined by ``"; "``. A row that only a
      scenario's move of sigma or of the spread makes invalid (a negative ``SigmaShift`` larger than its sigma) is
      NaN in those scenarios only, its other scenarios priced; its error names the move.
    * ``instrument``: ``"option"`` or ``"bond"`` per row; ``engine``: what priced the book (e.g.
      ``cuda`` or ``futhark/multicore``).
    * ``problems``: every problem behind ``error`` as ``(row, field, message)`` (``row`` None: the whole
      input), what :class:`trinom.InputError` holds; empty for a book without errors.
    * ``warnings``: ``(row, message)`` for rows priced as asked but not as a user may expect (a bond whose exercise
      dates have all passed, priced without its option); the command line prints them on stderr.
    * ``steps_per_year`` and ``accuracy``: with ``price(..., accuracy=...)`` (:mod:`trinom.analytics.resolution`),
      the grid that priced each row and its estimated error per 100 (NaN and 0 for a row with an error); else None.
    * ``vol_price``: where a cap or floor quotes a volatility (``vol``, ``vol_kind``, ``shift``), its price per 100
      off that volatility (Bachelier or Black, beside the model's ``price``), NaN for the other rows; else None.
    * ``settlement``, ``settlement_clean`` and ``settlement_accrued``: where a bond settles apart from the valuation
      date (``settlement_days``), its settlement date (``datetime64[D]``) and its clean price and accrued interest
      there, per 100 (QuantLib's convention: :mod:`trinom.instruments.settlement`); NaT and NaN for the other rows;
      else None.

    ``numpy.asarray(prices)`` gives ``price``.
    """

    price: np.ndarray
    clean: np.ndarray
    accrued: np.ndarray
    error: np.ndarray
    instrument: np.ndarray
    engine: str = ""
    problems: tuple[tuple[int | None, str, str], ...] = field(default=(), repr=False, compare=False)
    warnings: tuple[tuple[int, str], ...] = field(default=(), repr=False, compare=False)
    notional: np.ndarray | None = field(default=None, repr=False, compare=False)  #: per row; None: 100 each
    steps_per_year: np.ndarray | None = field(default=None, repr=False, compare=False)  #: with accuracy=
    accuracy: np.ndarray | None = field(default=None, repr=False, compare=False)  #: the estimate, with accuracy=
    vol_price: np.ndarray | None = field(default=None, repr=False, compare=False)  #: off a cap's quoted vol
    settlement: np.ndarray | None = field(default=None, repr=False, compare=False)  #: a bond's settlement date
    settlement_clean: np.ndarray | None = field(default=None, repr=False, compare=False)  #: the clean price then
    settlement_accrued: np.ndarray | None = field(default=None, repr=False, compare=False)  #: accrued then

    @property
    def value(self) -> np.ndarray:
        """The value in currency, ``price * notional / 100`` (``price`` itself where no row has a notional)."""
        return self.price if self.notional is None else self.price * (self.notional / 100.0)

    def __len__(self) -> int:
        return int(self.price.shape[-1])

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self.price if dtype is None else self.price.astype(dtype)

    @property
    def ok(self) -> np.ndarray:
        """True for the rows that were priced."""
        return self.error == ""

    def to_pandas(self) -> Any:
        """A DataFrame, one row per input row (and scenario): ``id, [scenario,] instrument, price, clean,
        accrued, error, value`` (and ``steps_per_year, accuracy`` where priced to an accuracy, the
        :data:`EXTRA_COLUMNS` a result has: ``vol_price`` where a cap quotes a volatility, ``settlement``,
        ``settlement_clean`` and ``settlement_accrued`` where a bond settles apart)."""
        import pandas as pd

        ids = np.arange(len(self))
        if self.price.ndim == 1:
            frame = pd.DataFrame({"id": ids, "instrument": self.instrument, "price": self.price,
                                  "clean": self.clean, "accrued": self.accrued, "error": self.error,
                                  "value": self.value})
            if self.steps_per_year is not None and self.accuracy is not None:
                frame["steps_per_year"], frame["accuracy"] = self.steps_per_year, self.accuracy
            for name in EXTRA_COLUMNS:
                if getattr(self, name) is not None:
                    frame[name] = getattr(self, name)
            return frame
        scenarios = self.price.shape[0]
        return pd.DataFrame({"id": np.tile(ids, scenarios), "scenario": np.repeat(np.arange(scenarios), len(self)),
                             "instrument": np.tile(self.instrument, scenarios), "price": self.price.reshape(-1),
                             "clean": self.clean.reshape(-1), "accrued": np.tile(self.accrued, scenarios),
                             "error": np.tile(self.error, scenarios), "value": self.value.reshape(-1)})


#: The optional per-row columns a result may have, appended to its table where it has them (issue 38).
EXTRA_COLUMNS: tuple[str, ...] = ("vol_price", "settlement", "settlement_clean", "settlement_accrued")


def joined(parts: Sequence[Prices], firsts: Sequence[int]) -> Prices:
    """The prices of consecutive parts of a book (each numbered from 0; part ``k``'s first row is ``firsts[k]`` of
    the book) as the book's: rows, problems and warnings in book order; ``engine`` each distinct one in turn."""
    def cat(name: str) -> np.ndarray:
        return np.concatenate([np.asarray(getattr(part, name)) for part in parts])

    def moved(row: int | None, first: int) -> int | None:
        return None if row is None else row + first

    notional = None
    if any(part.notional is not None for part in parts):
        notional = np.concatenate([np.full(len(part), 100.0) if part.notional is None else part.notional
                                   for part in parts])
    extra = {}
    for name in EXTRA_COLUMNS:
        if any(getattr(part, name) is not None for part in parts):
            empty = np.datetime64("NaT") if name == "settlement" else np.nan
            extra[name] = np.concatenate([np.full(len(part), empty) if getattr(part, name) is None
                                          else getattr(part, name) for part in parts])
    engines = list(dict.fromkeys(part.engine for part in parts if part.engine))
    return Prices(price=cat("price"), clean=cat("clean"), accrued=cat("accrued"), error=cat("error"),
                  instrument=cat("instrument"), engine=", ".join(engines),
                  problems=tuple(dict.fromkeys((moved(row, first), field, message)  # the whole book's said once
                                               for part, first in zip(parts, firsts, strict=True)
                                               for row, field, message in part.problems)),
                  warnings=tuple((row + first, message) for part, first in zip(parts, firsts, strict=True)
                                 for row, message in part.warnings),
                  notional=notional, **extra)


def instrument_labels(kinds: np.ndarray) -> np.ndarray:
    """``"option"``/``"bond"`` per row from the book's instrument codes."""
    labels = np.array([INSTRUMENT_NAMES[k] for k in sorted(INSTRUMENT_NAMES)])
    return labels[kinds]
