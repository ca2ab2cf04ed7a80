"""One reader for every CSV file trinom takes (portfolios, bonds, cash flows, curves).

Strict, so that nothing is silently dropped or overwritten: the header's names are stripped of
spaces and of a byte-order mark; a name given twice, a column nobody reads or a required one
missing, a row with more or fewer values than the header, and a file that is not UTF-8 text are
each an :class:`~trinom.errors.InputError` naming the file, the line and the column.
"""

from __future__ import annotations

import csv
import re
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
    fast = _regular_table(path)
    if fast is not None:
        header, columns = fast
        _check_header(path, header, required, optional)
        size = len(columns[0]) if columns else 0
        return dict(zip(header, columns, strict=True)), list(range(2, size + 2))
    rows, ends = read_rows(path)
    if not rows:
        raise InputError([(None, "file", f"{path}: empty file (a header naming {', '.join(required)} is needed)")])
    header = [name.strip() for name in rows[0]]
    _check_header(path, header, required, optional)
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


def _check_header(path: Path, header: Sequence[str], required: Sequence[str], optional: Sequence[str]) -> None:
    """An :class:`InputError` for a header naming a column twice, an unknown column or lacking a required one."""
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


#: Files from this size on are first read by pyarrow's CSV reader (:func:`_regular_table`); smaller ones are read
#: faster by the csv module than pyarrow is imported.
FAST_READ_BYTES: int = 1 << 20


def _regular_table(path: Path) -> tuple[list[str], list[list[str]]] | None:
    """The header and the columns (cells stripped) of a large *regular* CSV file, read by pyarrow's reader: UTF-8, no
    quote character, every line a row of as many cells as the header (so row k is on line k + 2) and none blank.
    None for any other file (small, irregular or unreadable): the csv module's reader reads it and says what is
    wrong, so both readers give the same table or the same error."""
    try:
        if path.stat().st_size < FAST_READ_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    first = data.split(b"\n", 1)[0]
    if b'"' in data or not first.strip():
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    try:
        header = [name.strip() for name in first.rstrip(b"\r").decode("utf-8").split(",")]
        names = [f"c{k}" for k in range(len(header))]
        table = pacsv.read_csv(pa.py_buffer(data), read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
                               parse_options=pacsv.ParseOptions(quote_char=False, newlines_in_values=False,
                                                                ignore_empty_lines=False),
                               convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()),
                                                                    strings_can_be_null=False,
                                                                    quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if table.num_rows != lines - 1:
        return None  # a row pyarrow did not read as one line (a lone carriage return, say)
    if table.num_rows == 0:
        return header, [[] for _ in header]
    if max(pc.max(pc.utf8_length(table.column(k))).as_py() for k in range(len(header))) > csv.field_size_limit():
        return None  # a cell the csv module refuses
    columns = [table.column(k) for k in range(len(header))]
    if _padded(data):
        columns = [pc.utf8_trim_whitespace(column) for column in columns]
    blank = pc.equal(pc.utf8_length(columns[0]), 0)
    for column in columns[1:]:
        blank = pc.and_(blank, pc.equal(pc.utf8_length(column), 0))
    if pc.any(blank).as_py():
        return None  # a blank line (",,,"): the csv module's reader skips it and numbers the lines after it
    return header, [column.to_pylist() for column in columns]


#: Byte pairs that put whitespace at a cell's start or end (ASCII; a file with a byte that may be other whitespace is
#: trimmed anyway). A cell can only hold a lone carriage return as its first or last byte where the file's rows
#: are not its lines, which :func:`_regular_table` refuses.
_PADDING = (b" ,", b", ", b" \n", b"\n ", b" \r", b"\t", b"\x0b", b"\x0c")
_ODD_BYTES = re.compile(rb"[\x1c-\x1f\x80-\xff]")


def _padded(data: bytes) -> bool:
    """Whether a cell of the file may have whitespace to strip (a file of plain ASCII cells has none)."""
    return (data[:1] == b" " or data.rstrip(b"\r\n")[-1:] == b" " or any(pair in data for pair in _PADDING)
            or _ODD_BYTES.search(data) is not None)


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
