"""Property-based fuzzing (hypothesis) of the newer files: scenario files (``trinom.scenarios.read_scenarios``),
Parquet books (``trinom.parquet``) and the command line's ``price``, ``risk`` and ``oas`` (issue 24, item 4).

The properties, for any file: a reader returns what the file says (checked against the file read by hand here)
or raises an :class:`~trinom.InputError` whose every message names the file (and the row or line and the field
where it is one cell's fault), never another exception; what is written is read back value for value and id
for id; the command line ends with status 0, or 2 and a message, never a traceback. Same style and budget as
``tests/test_fuzz.py``: deterministic examples (60 a test; ``TRINOM_FUZZ_EXAMPLES=N`` runs N fresh ones), small
books, the Futhark ``c`` target.
"""

from __future__ import annotations

import contextlib
import io as text_io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import trinom
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_fuzz import EXAMPLES, FUZZ, GOOD, LIMITS, NUMBERS, check_result
from test_fuzz_risk import BOND_LIMITS, bond_books, mostly, short_bonds
from trinom import parquet
from trinom.scenarios import read_scenarios

C = {"backend": "futhark", "target": "c"}
ROOT = Path(__file__).resolve().parent.parent


def names_the_file(err: trinom.InputError, path: Path) -> None:
    """Every message of ``err`` names ``path``."""
    assert err.errors, err
    for _row, _field, message in err.errors:
        assert str(path) in message, f"a message that does not name {path}: {message!r}"


# --- scenario files ------------------------------------------------------------------------------------------------
BASE_CURVES = {"one": trinom.YieldCurve.thesis(),
               "two": {"EUR": trinom.YieldCurve([0.02, 0.03, 0.035], [90, 730, 3650]),
                       "USD": trinom.YieldCurve([0.04], [365])}}
DAYS = ["", "*", " * ", "x", "1.5", "-5", "99999", " 365 ", "+365", "1_0", "3", "90", "730", "3650", "367", "1e3"]
VALUES = ["1e-4", "-0.001", "0", " 0.05 ", "0.03", "nan", "inf", "-inf", "x", "", "1e308", "1e-320", "0x1p-3", "2"]


@st.composite
def scenario_rows(draw: st.DrawFn, market: trinom.Market, form: str) -> list[list[str]]:
    """Data rows of a scenario file: four cells naming a known curve, a pillar (or every pillar) and a number, and
    in one example of three a cell replaced by anything or a row of another length."""
    rows = []
    for _ in range(draw(mostly(st.integers(1, 5), st.just(0), one_in=10))):
        curve = draw(st.sampled_from(market.names))
        pillars = [str(day) for day in market.curves[market.index(curve)].days.tolist()]
        days = draw(st.sampled_from([*pillars, "", "*", " * "] if form == "shift" else [*pillars, "4000", "1"]))
        rows.append([draw(st.sampled_from(["up", "down", "k", " up ", "", "up,down", "\u00e9t\u00e9"])), curve, days,
                     draw(st.sampled_from(VALUES[:5]))])
    hit = draw(mostly(st.none(), st.tuples(st.integers(0, 5), st.integers(0, 5), st.sampled_from(
        [*DAYS, *VALUES, "XX", " eur", "0"])), one_in=3))
    if hit is not None and rows:
        row, cell, word = hit
        row %= len(rows)
        rows[row] = (rows[row][:3] if cell == 4 else [*rows[row], "1"] if cell == 5 else
                     [word if k == cell else text for k, text in enumerate(rows[row])])
    return rows


def scenarios_by_hand(form: str, rows: list[list[str]], curves: Any) -> tuple[list[str], list[list[trinom.YieldCurve]]] | None:
    """What the documentation says a scenario file of ``rows`` holds (its names and each scenario's curves in the
    market's order), or None where it says the file is bad."""
    market = trinom.Market.of(curves)
    names, base = list(market.names), list(market.curves)
    order: list[str] = []
    shifts: dict[str, list[np.ndarray]] = {}
    points: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for row in rows:
        if not "".join(row).strip():
            continue
        if len(row) != 4:
            return None
        scenario, curve, days, value = (cell.strip() for cell in row)
        if not scenario:  # a row needs its scenario's name
            return None
        if curve not in names:
            return None
        k = names.index(curve)
        try:
            number = float(value)
            day = None if form == "shift" and days in ("", "*") else int(days)
        except ValueError:
            return None
        if scenario not in shifts:
            order.append(scenario)
            shifts[scenario] = [np.array(c.rates, dtype=np.float64) for c in base]
        if form == "rate":
            points.setdefault((scenario, k), []).append((day, number))
        elif day is None:
            with np.errstate(all="ignore"):
                shifts[scenario][k] = shifts[scenario][k] + number
        elif day in base[k].days.tolist():
            with np.errstate(all="ignore"):
                shifts[scenario][k][base[k].days.tolist().index(day)] += number
        else:
            return None
    if not order:
        return None
    out: list[list[trinom.YieldCurve]] = []
    try:
        for scenario in order:
            moved = [trinom.YieldCurve(rates, c.days) if form == "shift" else c
                     for rates, c in zip(shifts[scenario], base, strict=True)]
            for (name, k), pairs in points.items():
                if name == scenario:
                    days_list, rates = zip(*sorted(pairs), strict=True)
                    moved[k] = trinom.YieldCurve(list(rates), list(days_list))
            out.append(moved)
    except trinom.InputError:
        return None
    return order, out


@FUZZ
@given(data=st.data(), form=st.sampled_from(["shift", "rate"]), which=st.sampled_from(["one", "two"]),
       header=mostly(st.sampled_from(["exact", "spaced"]), st.sampled_from(["bom", "swapped", "short", "none"]), 8),
       suffix=mostly(st.just(".csv"), st.just(".parquet"), one_in=4), damage=mostly(st.none(), st.sampled_from(
           ["latin-1", "huge cell", "quote", "nul"]), one_in=5))
def test_scenario_files_read_as_written_or_name_the_file(tmp_path_factory, data, form, which, header, suffix, damage):
    """A scenario file of either form with fuzzed rows: its scenarios, each the base curves moved as its rows say
    (read by hand here), or an InputError naming the file."""
    curves = BASE_CURVES[which]
    names = list(trinom.Market.of(curves).names)
    rows = data.draw(scenario_rows(trinom.Market.of(curves), form))
    columns = ["scenario", "curve", "days", form]
    head = {"exact": columns, "spaced": [" Scenario", "CURVE ", "days", form.upper()], "bom": ["\ufeffscenario",
            *columns[1:]], "swapped": [columns[1], columns[0], *columns[2:]], "short": columns[:3], "none": []}[header]
    if damage in ("huge cell", "nul"):  # a scenario named by a cell beyond csv's field limit, or with a NUL in it
        rows = [*rows, ["u" * 200000 if damage == "huge cell" else "u\0p", names[0], "", "1e-4"]]
    path = tmp_path_factory.mktemp("scenarios") / f"grid{suffix}"
    if suffix == ".parquet":  # the same cells as a table of text columns (a row of another length has no place)
        rows = [row for row in rows if len(row) == 4] if len(head) == 4 else []
        table = pa.table({name or f"c{k}": [row[k] for row in rows] for k, name in enumerate(head or ["x"])})
        pq.write_table(table, path)
    else:
        lines = [",".join(f'"{cell}"' if "," in cell else cell for cell in row) for row in [head, *rows]]
        if damage == "quote" and len(lines) > 1:
            lines[1] = '"' + lines[1]
        encoded = ("\n".join(lines) + "\n").encode()
        path.write_bytes(encoded.replace(b"\n", b"\n\xe9", 1) if damage == "latin-1" else encoded)
    # What the file holds by the documentation (None: it is bad). A header with a byte-order mark, or odd bytes
    # (not UTF-8, an unclosed quote, a cell beyond csv's field limit, a NUL), a reader may refuse (naming the file).
    expected = scenarios_by_hand(form, rows, curves) if header in ("exact", "spaced", "bom") else None
    lenient = header == "bom" or damage is not None
    event(f"damage: {damage}")
    try:
        with np.errstate(all="ignore"):
            order, market = read_scenarios(path, curves)
    except trinom.InputError as err:
        names_the_file(err, path)
        assert expected is None or lenient, f"a file the documentation accepts was refused: {err}"
        event("refused")
        return
    assert header in ("exact", "spaced", "bom"), f"a file with the header {head} was read"
    if damage in ("quote", "latin-1"):  # what such a file holds is not defined: read, or refused naming the file
        return
    assert expected is not None, f"a file the documentation refuses was read: {order}"
    want_order, want_curves = expected
    assert order == want_order and len(market) == len(order) and list(market.names) == names
    for s, moved in enumerate(want_curves):
        for got, want in zip(market.scenarios[s], moved, strict=True):
            assert got.days.tolist() == want.days.tolist()
            assert np.asarray(got.rates).tolist() == np.asarray(want.rates).tolist(), (order[s], got, want)
    event(f"{len(order)} scenarios")


# --- Parquet books -------------------------------------------------------------------------------------------------
@st.composite
def option_fields(draw: st.DrawFn) -> dict[str, list]:
    """Two to five options, good or with a cell or two replaced by any number."""
    rows = draw(st.integers(2, 5))
    columns: dict[str, list] = {field: [draw(GOOD[field]) for _ in range(rows)] for field in trinom.FIELDS}
    columns["option_type"] = [0 if t == "call" else t for t in columns["option_type"]]
    for _ in range(draw(st.integers(0, 2))):
        field = draw(st.sampled_from([f for f in trinom.FIELDS if f != "option_type"]))
        columns[field][draw(st.integers(0, rows - 1))] = draw(NUMBERS)
    return columns


ODD_TYPES = ["string", "bool", "list", "float32", "int8", "null", "dictionary", "large_string", "struct", "binary",
             "timestamp", "decimal"]


def retyped(column: Any, kind: str) -> Any:
    """``column`` (an Arrow array) as another Arrow type, as a writer of a Parquet book might have typed it."""
    values = column.to_pylist()
    if kind == "string":
        return pa.array([None if v is None else str(v) for v in values], pa.string())
    if kind == "large_string":
        return pa.array([None if v is None else repr(v) for v in values], pa.large_string())
    if kind == "binary":
        return pa.array([None if v is None else str(v).encode() for v in values], pa.binary())
    if kind == "dictionary":
        return pa.array([None if v is None else str(v) for v in values], pa.string()).dictionary_encode()
    if kind == "bool":
        return pa.array([None if v is None else bool(v) for v in values])
    if kind == "list":
        return pa.array([None if v is None else v if isinstance(v, list) else [v] for v in values])
    if kind == "struct":
        return pa.array([{"value": v} for v in values])
    if kind == "null":
        return pa.nulls(len(values))
    if kind == "timestamp":
        return pa.array([0] * len(values), pa.int64()).cast(pa.timestamp("s"))
    if kind == "decimal":
        import decimal

        return pa.array([decimal.Decimal("1.5")] * len(values), pa.decimal128(5, 2))
    target = {"float32": pa.float32(), "int8": pa.int8()}[kind]
    try:
        return column.cast(target, safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array([0] * len(values), target)


@st.composite
def damages(draw: st.DrawFn, table: Any, bonds: bool) -> list[tuple]:
    """Changes to a good table: a null cell, another type, a column dropped, added or twice, odd ids, odd lists."""
    names = [n for n in table.column_names if n != "id"]
    kinds = ["null", "null", "value", "value", "retype", "drop", "extra", "twice", "id", "empty"] + (
        ["flows"] * 3 if bonds else [])
    found = []
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(kinds))
        found.append((kind, draw(st.sampled_from(names)), draw(st.integers(0, 10)), draw(st.sampled_from(ODD_TYPES)),
                      draw(st.sampled_from(["null", "empty", "repeated", "int", "blank", "absent", "unicode"])),
                      draw(NUMBERS), draw(st.sampled_from(["null entry", "empty", "null list", "longer", "strings",
                                                           "count", "count wrong", "plain", "nested"]))))
    return found


def damaged(table: Any, changes: list[tuple]) -> Any:
    """``table`` with ``changes`` (see :func:`damages`) made."""
    for kind, name, at, odd_type, id_kind, number, flow_kind in changes:
        if name not in table.column_names:
            continue
        n = table.num_rows
        k = table.column_names.index(name)
        column = table.column(k).combine_chunks()
        row = at % max(n, 1)
        if kind == "null" and n:
            values = column.to_pylist()
            values[row] = None
            table = table.set_column(k, name, pa.array(values, column.type))
        elif kind == "retype":
            table = table.set_column(k, name, retyped(column, odd_type))
        elif kind == "drop":
            table = table.remove_column(k)
        elif kind == "extra":
            table = table.append_column(["extra", "Strike", "id2"][at % 3], pa.array(range(n), pa.int64()))
        elif kind == "twice":
            table = table.append_column(name, column)
        elif kind == "empty":
            table = table.slice(0, 0)
        elif kind == "value" and n and (pa.types.is_floating(column.type) or pa.types.is_integer(column.type)):
            values = column.to_pylist()
            if pa.types.is_floating(column.type):
                values[row] = float(number)
            elif float(number).is_integer() and abs(number) < 2**62:
                values[row] = int(number)
            with contextlib.suppress(pa.ArrowInvalid):  # a number the column's type cannot hold: left as it was
                table = table.set_column(k, name, pa.array(values, column.type))
        elif kind == "id":
            ids = [str(i) for i in range(n)]
            if id_kind == "absent":
                table = table.drop_columns(["id"]) if "id" in table.column_names else table
                continue
            if id_kind == "int":
                new = pa.array(range(n), pa.int64())
            else:
                if n:
                    ids[row] = {"null": None, "empty": "", "repeated": ids[(row + 1) % n], "blank": "  ",
                                "unicode": "\u00e9\u00e9 ,\n"}[id_kind]
                new = pa.array(ids, pa.string())
            table = (table.set_column(table.column_names.index("id"), "id", new) if "id" in table.column_names
                     else table.append_column("id", new))
        elif kind == "flows":
            flow = parquet.FLOW_FIELDS[at % 3]
            k = table.column_names.index(flow) if flow in table.column_names else None
            if k is None:
                continue
            lists = table.column(k).to_pylist()
            if not n:
                continue
            item = lists[row]
            if flow_kind == "null entry" and item:
                item[0] = None
            elif flow_kind == "empty":
                item = []
            elif flow_kind == "null list":
                item = None
            elif flow_kind == "longer" and item is not None:
                item = [*item, item[-1] if item else 1]
            elif flow_kind == "nested":
                lists = [[[v] for v in (entry or [])] for entry in lists]
                table = table.set_column(k, flow, pa.array(lists))
                continue
            elif flow_kind == "strings":
                lists = [None if entry is None else [str(v) for v in entry] for entry in lists]
                table = table.set_column(k, flow, pa.array(lists))
                continue
            elif flow_kind == "plain":
                table = table.set_column(k, flow, pa.array([float(len(entry or [])) for entry in lists]))
                continue
            elif flow_kind in ("count", "count wrong"):
                counts = [len(entry or []) + (flow_kind == "count wrong" and r == row) for r, entry in enumerate(lists)]
                if "cashflow_count" not in table.column_names:
                    table = table.append_column("cashflow_count", pa.array(counts, pa.int64()))
                continue
            lists[row] = item
            table = table.set_column(k, flow, pa.array(lists, table.column(k).type))
    return table


def check_read_error(err: trinom.InputError, path: Any, rows: int) -> None:
    """A reader's refusal: every message names the file, every row named is one of the file's."""
    names_the_file(err, path)
    assert all(row is None or 0 <= row < rows for row, _f, _m in err.errors), err.errors
    assert all(isinstance(field, str) and field for _r, field, _m in err.errors), err.errors


@FUZZ
@given(data=st.data(), kind=st.sampled_from(["options", "bonds"]), group=st.integers(1, 3),
       metadata=mostly(st.sampled_from(["kept", "none"]), st.sampled_from(["json", "shape", "bad curve", "convention"]),
                       one_in=8), broken=mostly(st.none(), st.sampled_from(["truncated", "text", "empty"]), one_in=15))
def test_parquet_books_read_or_name_the_file_row_and_field(tmp_path_factory, data, kind, group, metadata, broken):
    """A Parquet book written by :func:`trinom.parquet.write_book`, then damaged (nulls, other types, columns dropped,
    added or given twice, odd ids, odd cash-flow lists, odd curve metadata): each reader returns a book whose every
    row prices or gets its message, or raises an InputError naming the file (and rows of the file), never another
    exception; the whole file and its row groups agree."""
    folder = tmp_path_factory.mktemp("parquet")
    if kind == "options":
        book, curves = trinom.Portfolio(**data.draw(option_fields())), [trinom.YieldCurve.thesis()]
    else:
        book, curves = data.draw(bond_books())
    parquet.write_book(folder / "good.parquet", book, curves)
    table = pq.read_table(folder / "good.parquet")
    table = damaged(table, data.draw(damages(table, kind == "bonds")))
    meta = dict(table.schema.metadata or {})
    meta[parquet.CURVES_KEY] = {"kept": meta.get(parquet.CURVES_KEY, b"[]"), "none": None, "json": b"[{",
                                "shape": b'{"days": 1}', "bad curve": b'[{"days": [1, 1], "rates": [0.1, 0.2]}]',
                                "convention": meta.get(parquet.CURVES_KEY)}[metadata]
    if metadata == "convention":
        meta[b"trinom.convention"] = b"paper"
    table = table.replace_schema_metadata({k: v for k, v in meta.items() if v is not None})
    path = folder / "book.parquet"
    pq.write_table(table, path, row_group_size=group)
    if broken is not None:  # not a Parquet file at all: cut short, text, or nothing
        path.write_bytes({"truncated": path.read_bytes()[:-20], "text": b"id,strike\n1,2\n", "empty": b""}[broken])
    rows = table.num_rows
    whole: dict[str, Any] = {}
    for errors in ("raise", "mask"):
        try:
            whole[errors] = parquet.read_book(path, errors=errors)
        except trinom.InputError as err:
            check_read_error(err, path, rows)
    try:
        groups = list(parquet.row_groups(path, errors="mask"))
    except trinom.InputError as err:
        check_read_error(err, path, rows)
        groups = None
    for probe in (parquet.curves_of, parquet.holds_bonds, parquet.rows, parquet.check_ids):
        try:
            probe(path)
        except trinom.InputError as err:
            check_read_error(err, path, rows)
    try:  # the API takes the table itself (trinom.parquet's layout): its rows priced, or an InputError
        with np.errstate(all="ignore"):
            check_result(trinom.price(table, curves, errors="mask", **C, **(BOND_LIMITS if kind == "bonds" else LIMITS)),
                         rows)
    except trinom.InputError as err:
        assert err.errors and all(message for _r, _f, message in err.errors)
    event(f"read whole: {', '.join(sorted(whole)) or 'refused'}; by row groups: {'yes' if groups is not None else 'no'}")
    if "mask" not in whole:
        assert "raise" not in whole, "the file reads whole with errors='raise' but not with errors='mask'"
        return
    read, read_curves, ids = whole["mask"]
    assert len(read) == rows and len(ids) == rows and len(set(ids)) == rows
    limits = BOND_LIMITS if kind == "bonds" else LIMITS
    with np.errstate(all="ignore"):
        result = trinom.price(read, read_curves or curves, errors="mask", **limits, **C)
    check_result(result, rows)
    if "raise" in whole:  # no row problems when read strictly: the same book
        for name, values in whole["raise"][0].as_dict().items():
            np.testing.assert_array_equal(values, read.as_dict()[name], err_msg=name)
    assert groups is not None, "the file reads whole but not by row groups"
    assert sum(len(part) for _f, part, _i in groups) == rows
    assert [str(i) for _f, _b, part in groups for i in part.to_pylist()] == list(ids)
    for first, part, _ids in groups:  # a row group's rows are the file's rows, and price as they do
        assert first % group == 0
        for name, values in part.as_dict().items():
            np.testing.assert_array_equal(values, read[first:first + len(part)].as_dict()[name], err_msg=name)
        with np.errstate(all="ignore"):
            alone = trinom.price(part, read_curves or curves, errors="mask", **limits, **C)
        np.testing.assert_array_equal(alone.error != "", result.error[first:first + len(part)] != "")
        np.testing.assert_array_equal(alone.price, result.price[first:first + len(part)])


TEXT_IDS = st.lists(st.text(min_size=1, max_size=6).map(lambda s: s if s.strip() else f"{s}x"), min_size=5, max_size=5,
                   unique=True)


@FUZZ
@given(data=st.data(), kind=st.sampled_from(["options", "bonds"]), convention=st.sampled_from(["standard", "thesis"]),
       ids=st.one_of(st.none(), TEXT_IDS, st.sampled_from(["short", "repeated", "blank", "None", "numbers"])),
       group=st.integers(1, 4), with_curves=st.booleans())
def test_parquet_round_trip_keeps_every_value_and_id(tmp_path_factory, data, kind, convention, ids, group, with_curves):
    """write_book then read_book (whole and by row groups): the same fields bit for bit (NaN where NaN), the same
    option convention, ids and curves, so the same prices; ids that cannot name rows are refused naming ``id``."""
    if kind == "options":
        book: Any = trinom.Portfolio(**data.draw(option_fields()), convention=convention)
        curves: Any = [trinom.YieldCurve([0.02, 0.03], [30, 3650])] if with_curves else None
    else:
        book, curves = data.draw(bond_books())
        curves = curves if with_curves else None
    n = len(book)
    names: Any = {None: None, "short": [f"r{k}" for k in range(n - 1)], "repeated": ["x", "x", *map(str, range(n - 2))],
                  "blank": ["", *map(str, range(1, n))], "None": [None, *map(str, range(1, n))],
                  "numbers": list(range(n))}[ids] if not isinstance(ids, list) else ids[:n]
    path = tmp_path_factory.mktemp("round") / "book.parquet"
    refused = ids in ("short", "repeated", "blank", "None") or (isinstance(names, list) and len(names) != n)
    try:
        parquet.write_book(path, book, curves, ids=names, row_group_size=group)
    except trinom.InputError as err:
        assert refused and all(field == "id" for _r, field, _m in err.errors), err
        assert not path.exists()
        event("ids refused")
        return
    assert not refused, f"write_book took ids that cannot name the rows: {names!r}"
    again, read_curves, read_ids = parquet.read_book(path)
    assert type(again) is type(book) and len(again) == n
    for name, values in book.as_dict().items():
        np.testing.assert_array_equal(getattr(again, name), values, err_msg=name)
    if kind == "options":
        assert again.convention == book.convention, "the option convention is lost in the Parquet file"
    assert list(read_ids) == ([str(i) for i in names] if names is not None else [str(k) for k in range(n)])
    if curves is None:
        assert read_curves is None
    else:
        assert [(c.days.tolist(), np.asarray(c.rates).tolist()) for c in read_curves] == [
            (c.days.tolist(), np.asarray(c.rates).tolist()) for c in curves]
    parts = list(parquet.row_groups(path))
    assert [first for first, _b, _i in parts] == list(range(0, n, group))
    for first, part, _ids in parts:
        for name, values in book[first:first + len(part)].as_dict().items():
            np.testing.assert_array_equal(getattr(part, name), values, err_msg=name)
    limits = BOND_LIMITS if kind == "bonds" else LIMITS
    market = curves if kind == "options" else data.draw(bond_books())[1]  # the book's own curves, or S1's
    with np.errstate(all="ignore"):
        here = trinom.price(book, market, errors="mask", **limits, **C)
        there = trinom.price(again, market, errors="mask", **limits, **C)
    np.testing.assert_array_equal(here.price, there.price)
    event("round trip")


# --- the command line ----------------------------------------------------------------------------------------------
BOOKS = ["options.csv", "options.parquet", "options.in", "bonds.csv", "bonds.parquet", "bonds.in"]
CELL_WORDS = st.sampled_from(["x", "", "nan", "-1", "1e999", "0", "call", "2.5", "65536", "\u00e9", "1,2", '"'])
ARGUMENT_WORDS = st.sampled_from(["0", "-1", "nan", "inf", "1e-4", "1e-3", "x", "", "1e300", "1e-300"])


@st.composite
def command_lines(draw: st.DrawFn) -> dict[str, Any]:
    """A command (price, risk or oas), its book file (damaged or not) and its options, some of them odd."""
    command = draw(st.sampled_from(["price", "risk", "oas"]))
    book = draw(st.sampled_from([b for b in BOOKS if command != "oas" or b.startswith("bonds")]))
    hits = draw(mostly(st.just([]), st.lists(st.tuples(st.integers(0, 10**6), CELL_WORDS), min_size=1, max_size=2), 3))
    options = draw(st.lists(st.sampled_from({
        "price": ["--errors mask", "--out OUT.csv", "--out OUT.parquet", "--out OUT.out", "--out OUT.txt",
                  "--scenarios SCENARIOS.csv", "--precision f32", "--format options", "--format bonds"],
        "risk": ["--errors mask", "--measures MEASURES", "--shift WORD", "--sigma-shift WORD", "--precision f32",
                 "--out OUT.parquet", "--yield CURVE.csv"],
        "oas": ["--errors mask", "--dirty", "--search batched", "--search engine", "--precision f32",
                "--out OUT.parquet"]}[command]), max_size=3, unique_by=lambda option: option.split(" ")[0]))
    return {"command": command, "book": book, "hits": hits, "options": options,
            "measures": draw(st.sampled_from(["dv01", "dv01,krd", "vega,dv01,", "theta", "", "spread_duration",
                                              "convexity", "dv01,dv01", " duration "])),
            "word": draw(ARGUMENT_WORDS), "market": draw(mostly(st.just("good"), st.sampled_from(
                ["missing", "unknown", "repeated", "text", "negative", "header", "empty"]), one_in=3)),
            "scenario": draw(st.sampled_from(["up", "unknown curve", "not a pillar", "bad header", "nan", "huge cell",
                                              "latin-1"]))}


def command_files(folder: Path, case: dict[str, Any]) -> list[str]:
    """The files of ``case`` written in ``folder``, and its argument list."""
    book = folder / case["book"]
    if case["book"].startswith("options"):
        options = trinom.Portfolio(strike=[63.0, 95.0, 100.0], maturity=[2.0, 3.0, 1.0], expiry=[1.0, 2.0, 0.5],
                                   term_unit=[365] * 3, term_steps=[12] * 3, a=[0.1] * 3, sigma=[0.01] * 3,
                                   option_type=["put", "call", "call"])
        trinom.io.write_portfolio(options, book)
        ids, curves = [str(k) for k in range(3)], None
    else:
        bonds, curves = short_bonds(1)
        trinom.io.bond_books.write_bonds(bonds[:3], curves, book)
        ids = [str(k) for k in range(3)]
    files = sorted(f for f in folder.iterdir() if f.suffix in (".csv", ".in"))
    for position, word in case["hits"] if files else []:  # a cell of a text file replaced by another word
        target = files[position % len(files)]
        cells = target.read_text().replace("\n", ",\n").split(",")
        k = position % len(cells)
        core = cells[k].strip(" []\n")
        cells[k] = cells[k].replace(core, word, 1) if core else cells[k]
        target.write_text(",".join(cells).replace(",\n", "\n"))
    market = {"good": "".join(f"{i},{p}\n" for i, p in zip(ids, (101.5, 99.0, 80.25), strict=True)),
              "missing": f"{ids[0]},100\n", "unknown": "".join(f"{i},100\n" for i in [*ids, "Z"]),
              "repeated": "".join(f"{i},100\n" for i in [*ids, ids[0]]), "text": "".join(f"{i},x\n" for i in ids),
              "negative": "".join(f"{i},-5\n" for i in ids), "header": "", "empty": ""}[case["market"]]
    head = {"header": "bond,price\n", "empty": ""}.get(case["market"], "id,price\n")
    (folder / "prices.csv").write_text(head + market)
    name = "default" if case["book"].startswith("options") else trinom.Market.of(curves).names[0]
    (folder / "scenarios.csv").write_bytes({
        "up": f"scenario,curve,days,shift\nup,{name},,0.0001\ndown,{name},,-0.0001\n".encode(),
        "unknown curve": b"scenario,curve,days,shift\nup,XX,,0.0001\n",
        "not a pillar": f"scenario,curve,days,shift\nup,{name},4,0.0001\n".encode(), "bad header": b"a,b\n",
        "nan": f"scenario,curve,days,shift\nup,{name},,nan\n".encode(),
        "huge cell": f"scenario,curve,days,shift\n{'u' * 200000},{name},,0.0001\n".encode(),
        "latin-1": f"scenario,curve,days,shift\n\u00e9t\u00e9,{name},,0.0001\n".encode("latin-1")}[case["scenario"]])
    (folder / "curve.csv").write_text("days,rate\n365,0.03\n3650,0.04\n")
    argv = [case["command"], str(book), *(["--market-prices", str(folder / "prices.csv")] if case["command"] == "oas"
                                          else []), "--backend", "futhark", "--target", "c", "--max-width", "201",
            "--max-steps", "400"]
    for option in case["options"]:
        flag, *value = option.split(" ")
        value = [v.replace("OUT", str(folder / "out")).replace("SCENARIOS.csv", str(folder / "scenarios.csv"))
                 .replace("CURVE.csv", str(folder / "curve.csv")).replace("MEASURES", case["measures"])
                 .replace("WORD", case["word"]) for v in value]
        argv += [flag, *value]
    if case["command"] in ("risk", "oas") and not any(o.startswith("--out") for o in case["options"]):
        argv += ["--out", str(folder / "out.csv")]
    return argv


def outputs(argv: list[str]) -> list[Path]:
    return [Path(argv[k + 1]) for k, flag in enumerate(argv[:-1]) if flag == "--out"]


@FUZZ
@given(case=command_lines())
def test_the_command_line_ends_in_0_or_2_never_a_traceback(tmp_path_factory, case):
    """``trinom price|risk|oas`` on small, possibly damaged files with odd options, run in this process: status 0
    (its output written) or 2 with a message (nothing written); an exception out of ``main`` is a traceback."""
    from trinom.cli import main

    folder = tmp_path_factory.mktemp("cli")
    argv = command_files(folder, case)
    stdout, stderr = text_io.StringIO(), text_io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), np.errstate(all="ignore"):
        try:
            status = main(argv)
        except SystemExit as stop:  # argparse: a value its type refuses
            status = stop.code
    message = stderr.getvalue()
    assert status in (0, 2), f"status {status}: {message}"
    assert "Traceback" not in message, message
    if status == 2:
        assert "trinom: error:" in message or "error:" in message.splitlines()[-1], message
        assert not any(path.exists() for path in outputs(argv)), "an output written by a failed command"
    else:
        assert all(path.exists() for path in outputs(argv)), "a command that succeeded without its output"
    event(f"{case['command']}: status {status}")


@settings(FUZZ, max_examples=max(3, EXAMPLES // 20))
@given(case=command_lines())
def test_the_installed_command_ends_in_0_or_2_never_a_traceback(tmp_path_factory, case):
    """The same as a process (``python -m trinom.cli``, a second or so each, so a handful of examples): status 0 or
    2, never 1 with a traceback."""
    folder = tmp_path_factory.mktemp("process")
    argv = command_files(folder, case)
    done = subprocess.run([sys.executable, "-m", "trinom.cli", *argv], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "python")}, cwd=folder)
    assert done.returncode in (0, 2) and "Traceback" not in done.stderr, (done.returncode, done.stderr[-3000:])
    event(f"{case['command']}: status {done.returncode}")
