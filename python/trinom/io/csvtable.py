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

from ..errors import InputError


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
    rows, ends = read_rows(path)
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


def read_rows(path: str | Path, field: str = "file") -> tuple[list[list[str]], list[int]]:
    """The rows of a CSV file as read (cells not stripped; a byte-order mark dropped), and the line (1-based) each
    row ends on (a quoted cell may span lines). A missing file, bytes that are not UTF-8 (the byte's offset in the
    file and its line named), an unclosed quote or a cell beyond the csv module's field limit is an
    :class:`InputError` naming the file, its field ``field``.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "c.csv"
    >>> _ = f.write_bytes(b"days,rate\\n365,\\xe9\\n")
    >>> try:
    ...     read_rows(f)
    ... except InputError as err:
    ...     print(err.errors[0][2].split(": ", 1)[1])
    not a UTF-8 text file (byte 14, line 2: invalid continuation byte)
    """
    path = Path(path)
    if not path.exists():
        raise InputError([(None, field, f"{path}: no such file")])
    rows: list[list[str]] = []
    ends: list[int] = []
    reader = None
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            for row in reader:
                rows.append(row)
                ends.append(reader.line_num)
    except UnicodeDecodeError:
        raise InputError([(None, field, f"{path}: not a UTF-8 text file ({_bad_byte(path)})")]) from None
    except csv.Error as err:
        line = reader.line_num if reader is not None else 1
        why = (f"a cell longer than {csv.field_size_limit()} characters" if "field limit" in str(err) else str(err))
        raise InputError([(None, field, f"{path}: not a CSV file (line {line}: {why})")]) from None
    return rows, ends


def _bad_byte(path: Path) -> str:
    """Where the first byte that is not UTF-8 lies in the file: its offset, its line and why."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        return f"byte {err.start}, line {line}: {err.reason}"
    return "undecodable"
