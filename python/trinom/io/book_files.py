"""A book from any of its files, with the ids that name its rows in results (the command line's one reader).

Options: the thesis' ``.in`` (8 arrays, or 10 with a curve), a ``.csv`` (optionally with an ``id`` and a ``convention``
column: :func:`trinom.io.read_csv_options`) or a ``.parquet`` book (its convention in the metadata). Bonds: the paper's
19-array ``.in``, a bond CSV (``NAME.csv`` with ``NAME.cashflows.csv`` and ``NAME.curves.csv``) or a ``.parquet`` book.
A book with an ``id`` column keeps its ids; one without is named by its row numbers ``0..n-1`` everywhere (price, risk
and OAS outputs, and the market-price file of ``trinom oas``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..instruments.bond import BondPortfolio
from ..instruments.option import Portfolio
from ..model.curve import YieldCurve
from . import option_books as io
from . import parquet
from .bond_books import companions, is_bond_file, read_bond_book

#: Formats a book may be forced to (``--format``); ``auto`` recognises it from the file.
BOOK_KINDS = ("auto", "options", "bonds")


@dataclass(frozen=True)
class BookFile:
    """A book read from a file: its ``instruments``, their ``curves`` (one :class:`YieldCurve` for options, a
    tuple for bonds) and ``ids``, one text per row, in order."""

    instruments: Portfolio | BondPortfolio
    curves: Any
    ids: list[str]

    @property
    def bonds(self) -> bool:
        return isinstance(self.instruments, BondPortfolio)

    @property
    def kind(self) -> str:
        """``"bonds"`` or ``"options"``."""
        return "bonds" if self.bonds else "options"


def input_files(path: str | Path) -> list[Path]:
    """The files a book may be read from: the file and, for a CSV, the companions a bond CSV has."""
    path = Path(path)
    return [path, *companions(path)] if path.suffix.lower() == ".csv" else [path]


def holds_bonds(path: str | Path, kind: str = "auto") -> bool:
    """Whether the book holds bonds: ``kind`` (``--format``) if given, else recognised from the file (19 arrays,
    a CSV with a ``cashflow_count`` column, a Parquet book with cash-flow list columns). A Parquet book that
    holds the other kind than ``kind`` says is an error."""
    path = Path(path)
    if kind not in BOOK_KINDS:
        raise InputError([(None, "--format", f"--format must be one of {', '.join(BOOK_KINDS)}, got {kind!r}")])
    if not path.exists():
        raise InputError([(None, "file", f"{path}: no such file")])
    if parquet.is_parquet(path):
        found = parquet.holds_bonds(path)
        if kind != "auto" and found != (kind == "bonds"):
            raise InputError([(None, "--format", f"--format {kind}, but {path} holds {'bonds' if found else 'options'}")])
        return found
    return kind == "bonds" if kind != "auto" else is_bond_file(path)


def read_book_file(path: str | Path, kind: str = "auto", errors: str = "raise",
                   yield_file: str | Path | None = None) -> BookFile:
    """The book of ``path`` (``kind``: see :func:`holds_bonds`), its curves and its rows' ids. ``yield_file``:
    the options' curve (else the file's, else the thesis'); a bond book names its own curves, so a
    ``yield_file`` with one is an error."""
    path = Path(path)
    bonds = holds_bonds(path, kind)
    check_curve_source(bonds, yield_file)
    if parquet.is_parquet(path):
        instruments, file_curves, ids = parquet.read_book(path, errors)
        if bonds:
            return BookFile(instruments, file_curves or (), [str(i) for i in ids])
        return BookFile(instruments, option_curve(yield_file, file_curves[0] if file_curves else None),
                        [str(i) for i in ids])
    if bonds:
        bond_book, curves, bond_ids = read_bond_book(path, errors)
        return BookFile(bond_book, curves, bond_ids)
    portfolio, file_curve, option_ids = io.read_option_book(path, errors)
    return BookFile(portfolio, option_curve(yield_file, file_curve), option_ids)


def check_curve_source(bonds: bool, yield_file: str | Path | None) -> None:
    """A bond book names its own yield curves: a ``yield_file`` (``--yield``) with one is an error, not ignored."""
    if bonds and yield_file is not None:
        raise InputError([(None, "--yield", "a bond file names its own yield curves (NAME.curves.csv, the 19-array "
                           "file's curve arrays or a Parquet book's metadata); --yield applies to option files only")])


def option_curve(yield_file: str | Path | None, file_curve: YieldCurve | None) -> YieldCurve:
    """The curve options are priced on: ``yield_file``'s, else the book file's, else the thesis'."""
    if yield_file is not None:
        return io.read_yield_curve(yield_file)
    return file_curve if file_curve is not None else YieldCurve.thesis()


__all__ = ["BOOK_KINDS", "BookFile", "check_curve_source", "holds_bonds", "input_files", "option_curve", "read_book_file"]
