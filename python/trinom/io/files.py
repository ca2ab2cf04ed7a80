"""Output files: checked before any work, written whole or not at all, never over an input.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "prices.out"
>>> with replacing([out]) as (temporary,):
...     _ = temporary.write_text("[1.0]\\n")
>>> out.read_text()
'[1.0]\\n'
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..instruments.bond import BondPortfolio

_UMASK = os.umask(0)
os.umask(_UMASK)


#: What each kind of output file may be written as, by suffix: a book, a book's prices, a table (risk, OAS, a
#: scenario grid). The suffix picks the format; any other suffix is an error.
BOOK_FORMATS: dict[str, str] = {".in": "in", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
PRICE_FORMATS: dict[str, str] = {".out": "out", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
TABLE_FORMATS: dict[str, str] = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def output_format(path: str | Path, formats: Mapping[str, str], what: str = "--out", holds: str = "the output") -> str:
    """The format ``path``'s suffix picks among ``formats`` (suffix: format); any other suffix is an
    :class:`InputError` naming the path, ``what`` it is (an option's name) and the suffixes it may have.

    >>> output_format("prices.parquet", PRICE_FORMATS)
    'parquet'
    >>> output_format("risk.txt", TABLE_FORMATS, holds="a table")
    Traceback (most recent call last):
    ...
    trinom.errors.InputError: --out risk.txt: a table is written as .csv, .parquet or .pq, by the file's suffix; got '.txt'
    """
    suffix = Path(path).suffix.lower()
    if suffix not in formats:
        names = list(formats)
        choices = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
        got = f"got {suffix!r}" if suffix else "it has none"
        verb = "are" if holds.endswith("s") else "is"
        raise InputError([(None, what, f"{what} {path}: {holds} {verb} written as {choices}, by the file's suffix; {got}")])
    return formats[suffix]


def check_outputs(outputs: Sequence[tuple[str, str | Path]], inputs: Sequence[str | Path | None] = ()) -> None:
    """Every output of one command (``(what, path)``: an option's name, or what the file is) can be written
    (:func:`check_output`), and no two are one file: a command never writes one output over another."""
    for k, (what, path) in enumerate(outputs):
        check_output(path, inputs, what)
        for other_what, other in outputs[:k]:
            if _same_file(path, other):
                raise InputError([(None, what, f"{what} {path} is the same file as {other_what} {other}: refusing to "
                                   "write one output over another")])


def _same_file(one: str | Path, other: str | Path) -> bool:
    """Whether two paths name one file (the same path once resolved, or links to one file)."""
    one, other = Path(one), Path(other)
    if one.resolve() == other.resolve():
        return True
    try:
        return one.exists() and other.exists() and os.path.samefile(one, other)
    except OSError:
        return False


def check_output(path: str | Path, inputs: Sequence[str | Path | None] = (), what: str = "--out") -> Path:
    """``path`` if it can be written: not one of ``inputs``, its folder existing and writable."""
    path = Path(path)
    for given in inputs:
        if given is not None and _same_file(path, given):
            raise InputError([(None, what, f"{what} {path} is an input of this command: refusing to overwrite it")])
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError([(None, what, f"{what} {path}: the folder {folder} does not exist")])
    if not os.access(folder, os.W_OK):
        raise InputError([(None, what, f"{what} {path}: the folder {folder} is not writable")])
    if path.is_dir():
        raise InputError([(None, what, f"{what} {path} is a folder, not a file")])
    return path


@contextmanager
def replacing(paths: Sequence[str | Path]) -> Iterator[list[Path]]:
    """Temporary files beside ``paths`` to write; when the block ends without an error they replace
    ``paths`` (each by an atomic rename), else they are removed and ``paths`` stay as they were."""
    temporaries: list[Path] = []
    try:
        for path in map(Path, paths):
            try:
                handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent or ".")
            except OSError as err:  # the folder takes no new file: say so of the file asked for, not the temporary
                raise InputError([(None, "file", f"{path}: cannot be written ({err.strerror or err}: its folder "
                                   f"{path.parent} takes no new file)")]) from None
            os.close(handle)
            os.chmod(name, 0o666 & ~_UMASK)  # as an ordinary new file would be (mkstemp makes it private)
            temporaries.append(Path(name))
        yield temporaries
        for temporary, path in zip(temporaries, paths, strict=True):
            os.replace(temporary, path)
    finally:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)


def refuse_listed_points(portfolio: object, path: str | Path) -> None:
    """An :class:`InputError` for bonds with listed exercise points, flows between steps, sigma pieces or coupon
    options: the book formats hold one exercise window a bond, flows on steps, one sigma a bond and no options on
    coupon rates, and nothing is dropped silently."""
    options = portfolio.coupon_options() if isinstance(portfolio, BondPortfolio) else None
    if options is not None:
        rows = np.flatnonzero(options.counts > 0)
        raise InputError([(int(rows[0]), "coupon_options", f"{path}: bond {int(rows[0])} (and {rows.size - 1} more) "
                           "has caps or floors on floating coupons, which the 19-array, CSV and Parquet book formats "
                           "cannot hold: keep such bonds as a trades file and price that")])
    if isinstance(portfolio, BondPortfolio) and portfolio.has_listed():
        rows = np.flatnonzero(portfolio.exercise_count > 0)
        raise InputError([(int(rows[0]), "exercise_count", f"{path}: bond {int(rows[0])} (and {rows.size - 1} more) has "
                           "listed exercise points, which the 19-array, CSV and Parquet book formats cannot hold (one "
                           "exercise window a bond): keep such bonds as a trades file and price that")])
    pieces = portfolio.sigma_pieces() if isinstance(portfolio, BondPortfolio) else None
    if pieces is not None:
        rows = np.flatnonzero(pieces.counts > 0)
        raise InputError([(int(rows[0]), "sigma_pieces", f"{path}: bond {int(rows[0])} (and {rows.size - 1} more) has "
                           "sigma pieces, which the 19-array, CSV and Parquet book formats cannot hold (one sigma a "
                           "bond): keep such bonds as a trades file with its model file's until rows and price that")])
    if isinstance(portfolio, BondPortfolio) and portfolio.has_flow_times():
        owner = np.repeat(np.arange(len(portfolio)), portfolio.cashflow_count)
        rows = np.unique(owner[np.isfinite(portfolio.cashflow_time)])
        row = int(rows[0]) if rows.size else 0
        raise InputError([(row, "cashflow_time", f"{path}: bond {row} (and {max(rows.size - 1, 0)} more) has cash "
                           "flows between the tree's steps (cashflow_time), which the 19-array, CSV and Parquet book "
                           "formats cannot hold (flows on steps): keep such bonds as a trades file and price that")])
