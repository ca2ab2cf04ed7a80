"""One reader for every CSV file trinom takes (portfolios, bonds, cash flows, curves).

Strict, so that nothing is silently dropped or overwritten: the header's names are stripped of
spaces and of a byte-order mark; a name given twice, a column nobody reads or a required one
missing, a row with more or fewer values than the header, and a file that is not UTF-8 text are
each an :class:`~trinom.errors.InputError` naming the file, the line and the column.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from .errors import InputError


def read_table(path: str | Path, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, list[str]]:
    """The columns of a CSV file by header name (cells stripped), ``required`` ones first checked present.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "c.csv"
    >>> _ = f.write_text("\\ufeffdays, rate\\n365,0.05\\n")
    >>> read_table(f, ["days", "rate"])
    {'days': ['365'], 'rate': ['0.05']}
    """
    return read_table_lines(path, required, optional)[0]


def read_table_lines(path: str | Path, required: Sequence[str],
                     optional: Sequence[str] = ()) -> tuple[dict[str, list[str]], list[int]]:
    """:func:`read_table`, and the file's line number (1-based) of each row read, for messages that name it
    (blank lines are skipped, so a row's index plus 2 is not always its line)."""
    path = Path(path)
    if not path.exists():
        raise InputError([(None, "file", f"{path}: no such file")])
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            rows, ends = [], []
            for row in reader:
                rows.append(row)
                ends.append(reader.line_num)  # the line a row ends on (a quoted cell may span lines)
    except UnicodeDecodeError as err:
        raise InputError([(None, "file", f"{path}: not a UTF-8 text file (byte {err.start}: {err.reason})")]) from None
    except csv.Error as err:
        raise InputError([(None, "file", f"{path}: not a CSV file ({err})")]) from None
    if not rows:
        raise InputError([(None, "file", f"{path}: empty file (a header naming {', '.join(required)} is needed)")])
    header = [name.strip() for name in rows[0]]
    problems: list[tuple[int | None, str, str]] = []
    seen: set[str] = set()
    for name in header:
        if name in seen:
            problems.append((None, name, f"{path}: column '{name}' appears twice in the header"))
        seen.add(name)
    known = (*required, *optional)
    for name in header:
        if name not in known:
            problems.append((None, name, f"{path}: unknown column '{name}' (columns: {', '.join(known)})"))
    for name in required:
        if name not in seen:
            problems.append((None, name, f"{path}: CSV header lacks column '{name}' (need {', '.join(required)})"))
    if problems:
        raise InputError(problems)
    table: dict[str, list[str]] = {name: [] for name in header}
    lines: list[int] = []
    for line, row in zip(ends[1:], rows[1:], strict=True):
        if not row or all(not cell.strip() for cell in row):
            continue  # a blank line
        if len(row) != len(header):
            raise InputError([(None, "file", f"{path} line {line}: {len(row)} values, but the header names "
                               f"{len(header)} columns ({', '.join(header)})")])
        for name, cell in zip(header, row, strict=True):
            table[name].append(cell.strip())
        lines.append(line)
    return table, lines
