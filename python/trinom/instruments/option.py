"""Options on zero-coupon bonds in tree steps (the thesis' eight fields): fields, validation and what the lattice
lowers to the book (:func:`trinom.lattice.lowering.lower_options`).

Formerly ``trinom.portfolio``, which stays importable for one release (the same module).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..model.tree_geometry import (
    DAYS_IN_YEAR,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_WIDTH,
    SIGMA_LIMIT,
    TreeGeometry,
    tree_geometry,
)
from .columns import as_array, as_float_column, option_types, rows_problems, show
from .constants import CALL, FACE_VALUE, PUT

T = TypeVar("T")

#: The conventions an option portfolio may follow (see :class:`Portfolio`).
CONVENTIONS: tuple[str, ...] = ("standard", "thesis")


def book_convention(cells: Sequence[object], places: Sequence[str], first: str) -> str | None:
    """The one convention of a book's ``convention`` cells (None where it has none): every cell names one of
    :data:`CONVENTIONS` and the first's, or it is a problem of its row after its place (``places[k]``, e.g. a file's
    line and ``": "``); ``first`` names the first row in the message (``line 2``, ``row 0``)."""
    shown = [None if cell is None else str(cell) for cell in cells]
    problems: list[tuple[int | None, str, str]] = []
    for k, cell in enumerate(shown):
        if cell not in CONVENTIONS:
            problems.append((k, "convention", f"{places[k]}convention must be one of {', '.join(CONVENTIONS)}, got "
                             f"{cell!r}"))
        elif cell != shown[0] and shown[0] in CONVENTIONS:
            problems.append((k, "convention", f"{places[k]}convention {cell!r} differs from {first}'s {shown[0]!r} (a "
                             "book has one convention, the same on every row)"))
    if problems:
        raise InputError(problems)
    return shown[0] if shown else None

#: The fields in the thesis' file order, with their meaning.
FIELDS: dict[str, str] = {
    "strike": "strike price X of the option on the bond (face value 100)",
    "maturity": "bond maturity T in years (the tree runs to it)",
    "expiry": "option expiry t in years (at most the maturity; the payoff applies at the step nearest t)",
    "term_unit": "days per term unit (365: yearly terms, 30: monthly terms)",
    "term_steps": "tree steps per term unit (the tree has round(term_steps * 365 / term_unit) steps a year)",
    "a": "Hull-White mean reversion a",
    "sigma": "Hull-White volatility sigma",
    "option_type": "0 = call, 1 = put",
}


@dataclass(frozen=True, eq=False)
class Portfolio:
    """A batch of European calls/puts on zero-coupon bonds, as a struct of NumPy arrays.

    Arrays are float64 (``option_type`` int8); ``term_unit`` and ``term_steps`` are kept as
    float64 so that a bad value is reported by :meth:`validate` instead of being truncated.
    Construction checks only shape (one length for all fields); values are checked by
    :meth:`validate`, which :func:`trinom.price` calls once.

    ``curve`` names the market curve every option of the portfolio is fitted to (None: the market's first).
    ``convention`` says how the fields map to a tree:

    * ``"standard"`` (the default; CSV and Parquet books): a term unit is ``term_unit`` days of a 365-day
      year, so the tree has ``round(term_steps * 365 / term_unit)`` steps a year (at least one), of
      ``dt = 1 / steps_a_year`` years; the maturity and the expiry map to the nearest step (halves up), so
      the tree spans the maturity for any ``term_unit``. An option may expire at most at its bond's
      maturity; one expiring there (the two on the same step) is worth its intrinsic value on the face,
      ``max(100 - X, 0)`` for a call and ``max(X - 100, 0)`` for a put, paid at maturity.
    * ``"thesis"`` (the thesis' ``.in`` files and datasets): the thesis' formulas, kept bit for bit:
      ``n = int(term_steps * ceil(365 / term_unit) * maturity)``, ``dt = ceil(365 / term_unit) / term_steps``,
      the payoff at step ``int(expiry / dt)``, and an option expiring at or after maturity priced as its bond.
      The two agree for ``term_unit = 365`` when the maturity and expiry fall on steps.

    >>> p = Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
    ...               term_steps=[12], a=[0.1], sigma=[0.01], option_type=["put"])
    >>> len(p), int(p.widths()[0]), int(p.heights()[0])
    (1, 47, 109)
    """

    strike: np.ndarray
    maturity: np.ndarray
    expiry: np.ndarray
    term_unit: np.ndarray
    term_steps: np.ndarray
    a: np.ndarray
    sigma: np.ndarray
    option_type: np.ndarray

    def __init__(self, *, convention: str = "standard", curve: str | None = None, **fields: npt.ArrayLike):
        if convention not in CONVENTIONS:
            raise InputError([(None, "convention", f"convention must be one of {', '.join(CONVENTIONS)}, "
                               f"got {convention!r}")])
        missing = [f for f in FIELDS if f not in fields]
        unknown = [f for f in fields if f not in FIELDS]
        if missing or unknown:
            raise InputError([(None, f, f"missing field '{f}'") for f in missing]
                             + [(None, f, f"unknown field '{f}' (fields: {', '.join(FIELDS)})") for f in unknown])
        arrays = {name: as_float_column(name, fields[name]) for name in FIELDS if name != "option_type"}
        arrays["option_type"], unknown_types = option_types(as_array("option_type", fields["option_type"]))
        object.__setattr__(self, "_unknown_types", unknown_types)
        lengths = {name: arr.size for name, arr in arrays.items()}
        if len(set(lengths.values())) > 1:
            detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
            raise InputError([(None, "length", f"all fields must have the same length, got {detail}")])
        for name, arr in arrays.items():
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "convention", convention)
        object.__setattr__(self, "curve", curve)  # the market curve's name (None: the market's first)
        # The arrays are private read-only copies, so derived results can be cached safely.
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_read_problems", ())

    @classmethod
    def with_read_problems(cls, problems: list[tuple[int, str, str]], *, convention: str = "standard",
                           curve: str | None = None, **fields: npt.ArrayLike) -> Portfolio:
        """A portfolio read with ``errors="mask"``: the cells that could not be read are NaN in ``fields`` and
        their ``(row, field, message)`` in ``problems``, which :meth:`validate` reports for those rows."""
        portfolio = cls(convention=convention, curve=curve, **fields)
        object.__setattr__(portfolio, "_read_problems", tuple(problems))
        return portfolio

    # --- construction -------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.ArrayLike] | list | tuple, *,
                    convention: str = "standard") -> Portfolio:
        """From a mapping of field name to array, or from the eight arrays in file order."""
        if isinstance(arrays, Mapping):
            return cls(convention=convention, **arrays)
        arrays = list(arrays)
        if len(arrays) != len(FIELDS):
            raise InputError([(None, "arrays", f"expected {len(FIELDS)} arrays ({', '.join(FIELDS)}), got {len(arrays)}")])
        return cls(convention=convention, **dict(zip(FIELDS, arrays, strict=True)))

    @classmethod
    def from_dataframe(cls, frame: Any, *, convention: str | None = None) -> Portfolio:
        """From a pandas DataFrame with one column per field (extra columns are an error) and an optional
        ``convention`` column (:meth:`from_columns`)."""
        return cls.from_columns({str(c): frame[c].to_numpy() for c in frame.columns}, convention=convention)

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any], *, convention: str | None = None) -> Portfolio:
        """From a mapping of field name to values and an optional ``convention`` column (one value on every row, as
        :meth:`to_dataframe` writes it). ``convention``: the book's convention where there is no such column (default
        ``standard``); given with the column, they must agree."""
        fields = dict(columns)
        if "convention" in fields:
            cells = np.atleast_1d(np.asarray(fields.pop("convention"), dtype=object)).tolist()
            found = book_convention(cells, [""] * len(cells), "row 0")
            if convention is not None and found is not None and found != convention:
                raise InputError([(None, "convention", f"the convention column says {found!r}, the convention "
                                   f"argument {convention!r}: a book has one convention")])
            convention = found or convention
        return cls(convention=convention or "standard", **fields)

    def replace(self, **fields: npt.ArrayLike) -> Portfolio:
        """A portfolio of the same convention with ``fields`` replaced (e.g. ``sigma``)."""
        return Portfolio(convention=self.convention, curve=self.curve, **{**self.as_dict(), **fields})

    def to_dataframe(self) -> Any:
        """As a pandas DataFrame (needs pandas); a book of another convention than ``standard`` has a ``convention``
        column too, so that :meth:`from_dataframe` and a Parquet or CSV file of the frame read it back as it was."""
        import pandas as pd

        frame = pd.DataFrame(self.as_dict())
        if self.convention != "standard":
            frame["convention"] = self.convention
        return frame

    # --- container protocol ---------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.strike.size)

    def __getitem__(self, index: int | slice | npt.ArrayLike) -> Portfolio:
        """A sub-portfolio (an int gives a portfolio of one option)."""
        if isinstance(index, (int, np.integer)):
            index = slice(int(index), int(index) + 1 if int(index) != -1 else None)
        part = Portfolio(convention=self.convention, curve=self.curve,
                         **{name: getattr(self, name)[index] for name in FIELDS})
        if self._read_problems:  # the selected rows keep their read problems, numbered as the part numbers them
            rows = np.atleast_1d(np.arange(len(self))[index])
            object.__setattr__(part, "_read_problems", rows_problems(self._read_problems, rows))
        return part

    @classmethod
    def concatenate(cls, parts: Sequence[Portfolio]) -> Portfolio:
        """The options of ``parts`` (one convention and one curve), one after the other, with their read problems."""
        from .bond import _renumbered

        conventions, curves = {p.convention for p in parts}, {p.curve for p in parts}
        if len(conventions) != 1 or len(curves) != 1:
            raise ValueError(f"options of one convention and one curve concatenate; got {sorted(map(str, conventions))} "
                             f"and {sorted(map(str, curves))}")
        whole = cls(convention=conventions.pop(), curve=curves.pop(),
                    **{name: np.concatenate([getattr(p, name) for p in parts]) for name in FIELDS})
        object.__setattr__(whole, "_read_problems", _renumbered(parts))
        return whole

    def __iter__(self) -> Iterator[dict[str, float]]:
        for k in range(len(self)):
            yield {name: getattr(self, name)[k].item() for name in FIELDS}

    def __repr__(self) -> str:
        return f"Portfolio({len(self)} options, {self.convention} convention)"

    def as_dict(self) -> dict[str, np.ndarray]:
        """The eight arrays by field name, in file order."""
        return {name: getattr(self, name) for name in FIELDS}

    def cached(self, key: object, compute: Callable[[], T]) -> T:
        """``compute()``, once per ``key`` for this portfolio (it is immutable, so derived data can be kept)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # --- what the lattice lowers (trinom.lattice.lowering.lower_options) ----------------------------------
    def lattice_fields(self) -> dict[str, np.ndarray]:
        """``maturity``, ``expiry``, ``term_unit`` and ``term_steps`` of each option's tree in the thesis' lattice.

        The thesis convention passes the fields through. The standard convention gives the lattice yearly terms
        (``term_unit`` 365) of ``steps_a_year`` steps and puts the maturity and the expiry in the middle of their
        steps, so that the lattice's truncations find the nearest steps; an expiry at (or after) maturity is the
        maturity itself. Cached.
        """
        def compute() -> dict[str, np.ndarray]:
            if self.convention == "thesis":
                return {"maturity": self.maturity, "expiry": self.expiry, "term_unit": self.term_unit,
                        "term_steps": self.term_steps}
            steps_a_year, n, expiry_step = self._standard_steps()
            with np.errstate(invalid="ignore", divide="ignore"):
                maturity = (n + 0.5) / steps_a_year
                expiry = np.where(expiry_step >= n, maturity, (expiry_step + 0.5) / steps_a_year)
            return {"maturity": maturity, "expiry": expiry, "term_unit": np.full(len(self), float(DAYS_IN_YEAR)),
                    "term_steps": steps_a_year}
        return self.cached("lattice-fields", compute)

    def thesis_view(self) -> Portfolio:
        """These options as the thesis' lattice sees them: the thesis convention with :meth:`lattice_fields` (itself
        for a thesis portfolio). Kernels take it; an option expiring at maturity is then its bond (no ``scale``)."""
        if self.convention == "thesis":
            return self
        return self.cached("thesis-view", lambda: Portfolio(convention="thesis", strike=self.strike, a=self.a,
                                                            sigma=self.sigma, option_type=self.option_type,
                                                            **self.lattice_fields()))

    def _standard_steps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Steps a year, the maturity's step and the expiry's step of each option (standard convention; NaN
        where a field is bad, which :meth:`validate` reports)."""
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            steps_a_year = np.maximum(np.floor(self.term_steps * DAYS_IN_YEAR / self.term_unit + 0.5), 1.0)
            n = np.maximum(np.floor(self.maturity * steps_a_year + 0.5), 1.0)
            expiry_step = np.floor(self.expiry * steps_a_year + 0.5)
        return steps_a_year, n, expiry_step

    def steps_a_year(self) -> np.ndarray:
        """Tree steps a year of each option: ``round(term_steps * 365 / term_unit)`` (standard convention), or the
        thesis' ``term_steps / ceil(365 / term_unit)``."""
        if self.convention == "thesis":
            with np.errstate(invalid="ignore", divide="ignore"):
                return self.term_steps / np.ceil(DAYS_IN_YEAR / self.term_unit)
        return self._standard_steps()[0]

    def expires_at_maturity(self) -> np.ndarray:
        """Whether each option's payoff falls on its tree's last level (standard convention; always False for
        the thesis', whose option then is its bond)."""
        if self.convention == "thesis":
            return np.zeros(len(self), dtype=bool)
        _steps, n, expiry_step = self._standard_steps()
        return expiry_step >= n

    def scale(self) -> np.ndarray:
        """The factor each tree's value is multiplied by: 1, but ``intrinsic / 100`` for an option expiring at
        maturity (its tree prices the bond; the payoff on the face value is known today)."""
        intrinsic = np.where(self.option_type == PUT, np.maximum(self.strike - FACE_VALUE, 0.0),
                             np.maximum(FACE_VALUE - self.strike, 0.0))
        return np.where(self.expires_at_maturity(), intrinsic / FACE_VALUE, 1.0)

    # --- derived quantities ---------------------------------------------------------------
    def geometry(self, dtype: npt.DTypeLike = np.float64) -> TreeGeometry:
        """Per-option tree constants in the working precision (see :func:`trinom.model.tree_geometry.tree_geometry`); cached."""
        key = ("geometry", np.dtype(dtype).name)
        if key not in self._cache:
            lattice = self.lattice_fields()
            self._cache[key] = tree_geometry(lattice["maturity"], lattice["expiry"], lattice["term_unit"],
                                             lattice["term_steps"], self.a, self.sigma, dtype)
        return self._cache[key]

    def widths(self, dtype: npt.DTypeLike = np.float64) -> np.ndarray:
        """Tree width ``2 jmax + 1`` of each option."""
        return self.geometry(dtype).width

    def heights(self, dtype: npt.DTypeLike = np.float64) -> np.ndarray:
        """Tree height (levels, ``n + 1``) of each option."""
        return self.geometry(dtype).height

    def stats(self) -> dict[str, dict[str, float]]:
        """Min, max, mean, std and skewness of the widths and heights (as the thesis reports)."""
        return {"width": describe(self.widths()), "height": describe(self.heights())}

    # --- validation -------------------------------------------------------------------------
    def validate(self, max_width: int = DEFAULT_MAX_WIDTH, max_steps: int = DEFAULT_MAX_STEPS) -> list[tuple[int, str, str]]:
        """Every problem as ``(row, field, message)``, in row order; empty when all is well (cached).

        ``max_width`` and ``max_steps`` bound each tree's width and height (its memory and work).
        """
        key = ("problems", int(max_width), int(max_steps))
        if key not in self._cache:
            self._cache[key] = self._find_problems(int(max_width), int(max_steps))
        return list(self._cache[key])

    def good_rows(self, max_width: int = DEFAULT_MAX_WIDTH, max_steps: int = DEFAULT_MAX_STEPS) -> np.ndarray:
        """Indices of the rows :meth:`validate` finds no problem in, ascending."""
        problems = self.validate(max_width, max_steps)
        return np.setdiff1d(np.arange(len(self)), [row for row, _field, _message in problems])

    def _find_problems(self, max_width: int, max_steps: int) -> list[tuple[int, str, str]]:
        problems: list[tuple[int, str, str]] = list(self._read_problems)
        unread = np.ones(len(self), dtype=bool)  # rows whose every cell could be read
        unread[[row for row, _f, _m in problems]] = False

        def bad(mask: np.ndarray, field: str, text: str) -> None:
            values = getattr(self, field)
            for row in np.flatnonzero(mask & unread):
                problems.append((int(row), field, f"{field} {text}, got {show(values[row])}"))

        for field in ("strike", "maturity", "expiry", "term_unit", "term_steps", "a", "sigma"):
            bad(~np.isfinite(getattr(self, field)), field, "must be a finite number")
        with np.errstate(invalid="ignore"):
            bad(self.strike < 0, "strike", "must be >= 0")
            bad(self.maturity <= 0, "maturity", "must be > 0")
            bad(self.expiry < 0, "expiry", "must be >= 0")
            for field in ("term_unit", "term_steps"):
                values = getattr(self, field)
                bad((values <= 0) | (values != np.round(values)) | (values > 65535), field,
                    "must be a whole number in 1..65535")
            bad(self.a <= 0, "a", "must be > 0")
            bad(self.sigma <= 0, "sigma", "must be > 0")
            bad(self.sigma > SIGMA_LIMIT, "sigma", f"must be at most {SIGMA_LIMIT:g} (an absolute short-rate volatility of "
                "100 percentage points a year; beyond it the trees' values leave the floating-point range)")
            if self.convention == "standard":
                fine = unread.copy()  # rows with no problem so far (a bad maturity or expiry has its own message)
                fine[[row for row, _f, _m in problems]] = False
                for row in np.flatnonzero((self.expiry > self.maturity) & fine):
                    problems.append((int(row), "expiry", f"expiry must be at most the bond's maturity "
                                     f"({show(self.maturity[row])} years): an option cannot expire after its bond "
                                     f"has matured, got {show(self.expiry[row])}"))
        for row in np.flatnonzero((self.option_type != CALL) & (self.option_type != PUT) & unread):
            shown = getattr(self, "_unknown_types", {}).get(int(row), str(int(self.option_type[row])))
            problems.append((int(row), "option_type", f"option_type must be {CALL} (call) or {PUT} (put), got {shown}"))
        checked = np.ones(len(self), dtype=bool)
        checked[[row for row, _f, _m in problems]] = False
        geometry = self.geometry()
        n, width = geometry.n, geometry.width
        overflow = n < 0  # the step count does not even fit an integer
        for row in np.flatnonzero(checked & ((n > max_steps) | overflow)):
            steps = "more than 2**62" if overflow[row] else str(int(n[row]))
            problems.append((int(row), "maturity", f"maturity gives a tree of {steps} steps, over the limit max_steps="
                             f"{max_steps} (maturity {show(self.maturity[row])} years at {show(self.term_steps[row])} "
                             "steps per term; raise max_steps to allow it)"))
        for row in np.flatnonzero(checked & (n == 0)):
            problems.append((int(row), "maturity", f"maturity gives a tree with no time steps (maturity "
                             f"{show(self.maturity[row])} years at {show(self.term_steps[row])} steps per term)"))
        for row in np.flatnonzero(checked & (n >= 1) & (n <= max_steps) & ((width < 3) | (width > max_width))):
            problems.append((int(row), "a", f"a gives a tree of width {int(width[row])}, outside 3..{max_width} "
                             f"(a={show(self.a[row])}; raise max_width to allow it)"))
        problems.sort(key=lambda p: p[0])  # stable: a row's problems keep their order
        return problems


def describe(values: np.ndarray) -> dict[str, float]:
    """Min, max, mean, (population) std and skewness of a sample."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return {"min": float("nan"), "max": float("nan"), "mean": float("nan"), "std": float("nan"), "skewness": float("nan")}
    mean = x.mean()
    d = x - mean
    std = float(np.sqrt((d * d).mean()))
    skew = float((d * d * d).mean() / std**3) if std > 0 else 0.0  # d*d*d: ** 3 goes through pow(), 20x slower
    return {"min": float(x.min()), "max": float(x.max()), "mean": float(mean), "std": float(std), "skewness": skew}
