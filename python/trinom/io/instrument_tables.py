"""Instruments given as tables (issue 36: every input format in ``io/``): a pandas DataFrame, a mapping of field
name to column or an Arrow table (:mod:`trinom.io.parquet`'s layout) as a portfolio, and a sequence of them as the
portfolios a pricing call takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..instruments.bond import BondPortfolio
from ..instruments.option import Portfolio

Instrument = Portfolio | BondPortfolio


def as_blocks(instruments: object) -> list[Instrument]:
    """The portfolios of ``instruments``: a portfolio, a table of one (a pandas DataFrame or a mapping of
    field name to column), or a sequence of them."""
    single = as_portfolio(instruments)
    if single is not None:
        return [single]
    if isinstance(instruments, Sequence) and not isinstance(instruments, (str, bytes)):
        blocks = []
        for k, item in enumerate(instruments):
            block = as_portfolio(item)
            if block is None:
                raise InputError([(None, "instruments", f"instruments[{k}] must be a trinom.Portfolio, a "
                                   f"trinom.BondPortfolio, or a table of one; got {type(item).__name__}")])
            blocks.append(block)
        return blocks
    raise InputError([(None, "instruments", "instruments must be a trinom.Portfolio, a trinom.BondPortfolio, a "
                       "table of one (pandas DataFrame or mapping of field to column) or a sequence of them; got "
                       f"{type(instruments).__name__}")])


def as_portfolio(value: object) -> Instrument | None:
    """A portfolio from a portfolio, a DataFrame, a mapping (options by their eight fields, bonds by theirs) or an
    Arrow table (trinom.io.parquet's layout: a bond's cash flows in list columns);
    None for anything else."""
    if isinstance(value, (Portfolio, BondPortfolio)):
        return value
    if hasattr(value, "column_names") and hasattr(value, "schema"):  # an Arrow table, as trinom.io.parquet lays it out
        from .parquet import book_of_table

        return book_of_table(value)
    columns = _columns_of(value)
    if columns is None:
        return None
    if "cashflow_count" in columns:
        return BondPortfolio(**columns)
    return Portfolio.from_columns(columns)  # a thesis book's table has a convention column (Portfolio.to_dataframe)


def _columns_of(value: object) -> dict[str, Any] | None:
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    if hasattr(value, "columns") and hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):  # a DataFrame
        return {str(c): value[c].to_numpy() for c in value.columns}  # type: ignore[index]
    return None
