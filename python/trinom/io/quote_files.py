"""Volatility quote files: a ``vols.csv`` (or a Parquet table of its columns, by its ``.parquet`` / ``.pq`` suffix) as
:class:`~trinom.model.quotes.VolQuotes` (the columns: :mod:`trinom.model.vol_quotes`), and its volatility surface.

Importing this module registers :func:`read_vol_quotes` as the model's reader of a quote file's path
(:func:`trinom.model.vol_quotes.set_file_reader`), so that the model's documented calls that take a path
(``calibrate(quotes="vols.csv")``, ``VolSurface.from_quotes(path, as_of=...)``) read it while the model imports no file
format; ``import trinom`` imports it. ``trinom.model.quotes.read_vol_quotes`` and ``read_vol_surface`` (and
``trinom.model``'s) are these functions.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "vols.csv"
>>> _ = f.write_text("curve,expiry,tenor,vol,kind\\nEUR,1Y,5Y,0.0085,normal\\nEUR,2Y,5Y,0.2,lognormal\\n")
>>> quotes = read_vol_quotes(f)
>>> len(quotes), quotes.kind.tolist(), quotes.where
(2, ['normal', 'lognormal'], ('vols.csv line 2', 'vols.csv line 3'))
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..model.vol_quotes import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, VolQuotes, set_file_reader
from ..model.vol_surface import VolSurface
from . import parquet
from .csvtable import read_table_lines


def read_vol_quotes(path: str | Path) -> VolQuotes:
    """The quotes of a ``vols.csv`` (or a Parquet table of its columns); messages name the file and the line
    (Parquet: the row). Unknown columns and missing required ones are errors."""
    path = Path(path)
    if parquet.is_parquet(path):
        header, *rows = parquet.read_text_rows(path)
        unknown = [name for name in header if name not in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)]
        missing = [name for name in REQUIRED_COLUMNS if name not in header]
        if unknown or missing:
            raise InputError([(None, name, f"{path}: unknown column '{name}' (columns: "
                               f"{', '.join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)})") for name in unknown]
                             + [(None, name, f"{path}: missing column '{name}'") for name in missing])
        columns = {name: [row[k] for row in rows] for k, name in enumerate(header)}
        where = [f"{path.name} row {k + 1}" for k in range(len(rows))]
    else:
        columns, lines = read_table_lines(path, REQUIRED_COLUMNS, OPTIONAL_COLUMNS)
        where = [f"{path.name} line {line}" for line in lines]
    if not where:
        raise InputError([(None, "file", f"{path}: no quotes")])
    return VolQuotes.from_columns(**columns, where=where)


def read_vol_surface(path: str | Path, *, as_of: object) -> VolSurface:
    """The :class:`VolSurface` of a ``vols.csv`` (or Parquet) file as of ``as_of``."""
    return VolSurface.from_quotes(read_vol_quotes(path), as_of=as_of)


set_file_reader(read_vol_quotes)

__all__ = ["read_vol_quotes", "read_vol_surface"]
