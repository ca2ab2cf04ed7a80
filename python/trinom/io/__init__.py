"""Every file format, one reader and one writer per format (docs/layout.md's ``io/``):

* :mod:`.option_books`: the thesis' option arrays (``.in``), option books as CSV, yield curves and price files
  (the functions of ``trinom.io`` itself, below);
* :mod:`.bond_books`: the paper's 19-array bond files and the bond CSV trio;
* :mod:`.parquet`: books and results as Parquet and Arrow;
* :mod:`.book_files`: a book file of any of these, by its suffix and content;
* :mod:`.result_files`: prices, scenario grids and tables, by the output's suffix;
* :mod:`.trade_files`, :mod:`.curve_files`, :mod:`.quote_files`: the dated trades' files (``trades.csv``,
  ``schedule.csv``, ``notionals.csv``), dated curve files and volatility quote files, CSV or Parquet (the
  instruments and the model import no file format; their former names, ``trinom.read_trades``,
  ``trinom.model.read_dated_curves``, ..., are these functions);
* :mod:`.csvtable`, :mod:`.textdata`, :mod:`.row_ids`, :mod:`.files`: CSV tables, Futhark's text arrays, row ids,
  and the rules every output follows (its format by its suffix, written whole or not at all, never over an input).
"""

import importlib
from typing import Any

#: The functions of ``trinom.io`` itself, from :mod:`.option_books`, looked up when first used (as every other name
#: of the former ``trinom.io`` module): the modules below ``io`` (the curve reads Futhark's text arrays) import its
#: submodules without loading every format.
_OPTION_BOOKS = (
    "read_csv_options",
    "read_csv_portfolio",
    "read_input",
    "read_option_book",
    "read_portfolio",
    "read_prices",
    "read_yield_curve",
    "write_portfolio",
    "write_prices",
    "write_yield_curve",
)


def __getattr__(name: str) -> Any:
    """``trinom.io.NAME``: the former ``trinom.io`` module's names (:mod:`.option_books`'), the helpers it imported
    included (``read_arrays``); a submodule not imported yet is left to the import system."""
    if name.startswith("__") or name == "option_books":  # the import system's own questions
        raise AttributeError(name)
    option_books = importlib.import_module(f"{__name__}.option_books")
    try:
        return getattr(option_books, name)
    except AttributeError:
        raise AttributeError(f"module 'trinom.io' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *_OPTION_BOOKS])


__all__ = list(_OPTION_BOOKS)
