"""Bond file formats: the paper's 19-array file and a CSV pair (bonds, cash flows).

* ``*.in`` with 19 arrays (docs/paper-instrument.md §1): the per-bond fields, the concatenated
  cash flows and the yield curves (points per curve, rates, days). Written with integer arrays
  as plain integers and reals with a decimal point, which is also Futhark's textual value
  format for the ``bonds64`` entry point (i32 and f64 arrays).
* CSV: ``NAME.csv`` holds one row per bond (an ``id`` column and the per-bond fields) and
  ``NAME.cashflows.csv`` one row per cash flow (``id,step,repayment,coupon``), keyed by bond id;
  the curves go to ``NAME.curves.csv`` (``curve,days,rate``). A curve may be named there (for
  example ``EUR-OIS``) and a bond's ``curve_index`` may then give that name; names are numbered
  in order of first appearance.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import InputError, check_error_mode
from ..instruments.bond import _INTEGER_FIELDS, BOND_FIELDS, BondPortfolio, flatten_curves
from ..instruments.columns import show
from ..model.curve import YieldCurve
from ..model.market import NamedCurves
from .csvtable import read_table_lines
from .files import BOOK_FORMATS, output_format, refuse_listed_points, replacing
from .row_ids import check_row_ids, row_numbers
from .textdata import WHOLE_NUMBER_LIMIT, format_array, format_float, not_whole, read_arrays, read_text

#: The 19 arrays in file order (the last three are the curves).
FILE_ARRAYS: tuple[str, ...] = ("term_unit", "term_steps", "a", "sigma", "maturity", "cashflow_count",
                                "cashflow_step", "repayment", "coupon", "spread", "option_type", "strike",
                                "first_exercise", "last_exercise", "exercise_frequency", "curve_index",
                                "curve_terms", "curve_rates", "curve_days")
_INTEGER_ARRAYS = (*_INTEGER_FIELDS, "option_type", "curve_terms", "curve_days")


def is_bond_file(path: str | Path) -> bool:
    """True for a 19-array bond file or a bond CSV (one with a ``cashflow_count`` column)."""
    path = Path(path)
    text = read_text(path)
    if path.suffix.lower() == ".csv":
        return "cashflow_count" in text.split("\n", 1)[0]
    return text.count("[") == len(FILE_ARRAYS)


def read_bonds(path: str | Path, errors: str = "raise") -> tuple[BondPortfolio, tuple[YieldCurve, ...]]:
    """A bond portfolio and its curves from a 19-array ``.in`` file or a bond CSV.

    With ``errors="mask"`` a bond's cell (or one of its cash flows' cells) that is no number (or no whole
    number where one is needed) becomes that bond's problem, reported by :meth:`BondPortfolio.validate` and
    priced as a bad row by ``trinom.price(..., errors="mask")``; what cannot be laid to one bond (a curve, a cash
    flow of an unknown bond, an unreadable ``cashflow_count`` of the ``.in`` file, an empty or repeated id) is an
    error either way.
    """
    bonds, curves, _ids = read_bond_book(path, errors)
    return bonds, curves


def read_bond_book(path: str | Path, errors: str = "raise") -> tuple[BondPortfolio, tuple[YieldCurve, ...], list[str]]:
    """:func:`read_bonds`, and the bonds' ids: a CSV's ``id`` column, the row numbers of a ``.in`` file."""
    path = Path(path)
    check_error_mode(errors)
    if not path.exists():
        raise InputError([(None, "file", f"{path}: no such file")])
    if path.suffix.lower() == ".csv":
        return _read_bonds_csv(path, errors)
    unread: list[tuple[int, int, str]] = []
    arrays = read_arrays(path, unread if errors == "mask" else None)
    if len(arrays) != len(FILE_ARRAYS):
        raise InputError([(None, "file", f"{path}: a bond file holds {len(FILE_ARRAYS)} arrays, found {len(arrays)}")])
    unread += _fractional_items(path, arrays, {array for array, _item, _m in unread})
    named = dict(zip(FILE_ARRAYS, arrays, strict=True))
    unassignable = ("cashflow_count", "curve_terms", "curve_rates", "curve_days")  # no one bond's
    fatal = [message for array, _item, message in unread if FILE_ARRAYS[array] in unassignable]
    if fatal:
        raise InputError([(None, "file", message) for message in fatal])
    curves = curves_from_arrays(named.pop("curve_terms"), named.pop("curve_rates"), named.pop("curve_days"))
    ids = row_numbers(named["strike"].size)
    if not unread:
        try:
            return BondPortfolio(**named), curves, ids
        except InputError as err:  # the arrays' lengths: name the file and each array's place in it
            raise InputError([(row, field, f"{path}: {message}" + (
                f" (array {FILE_ARRAYS.index(field) + 1} of the file's {len(FILE_ARRAYS)}, {field})"
                if field in FILE_ARRAYS else "")) for row, field, message in err.errors]) from None
    counts = named["cashflow_count"]
    if (counts < 0).any():
        return BondPortfolio(**named), curves, ids  # the constructor names the bonds
    if int(counts.sum()) != named["cashflow_step"].size:
        raise InputError([(None, "cashflow_count", f"{path}: the cashflow_count array sums to {int(counts.sum())}, but "
                           f"the file holds {named['cashflow_step'].size} cash flows")])
    owner = np.repeat(np.arange(counts.size), counts.astype(np.int64))
    starts = np.cumsum(counts.astype(np.int64)) - counts.astype(np.int64)
    problems = []
    for array, item, message in unread:
        name = FILE_ARRAYS[array]
        if name in BOND_FIELDS:
            problems.append((item, name, message))
        else:  # a cash flow's item: its bond's problem
            bond = int(owner[item])
            problems.append((bond, name, f"{message} (cash flow {item - int(starts[bond])} of the bond)"))
        named[name] = named[name].copy()
        named[name][item] = np.nan
    if errors == "raise":
        raise InputError(sorted(problems, key=lambda p: p[0]))
    return BondPortfolio.with_read_problems(sorted(problems, key=lambda p: p[0]), **named), curves, ids


def _fractional_items(path: Path, arrays: list[np.ndarray], unread: set[int]) -> list[tuple[int, int, str]]:
    """``(array, item, message)`` for every item of a bond's whole-number array (steps, counts, indices) that is a
    number but no whole number in the int32 range (items already unread are left to their message)."""
    found = []
    for array, name in enumerate(FILE_ARRAYS):
        if name not in _INTEGER_FIELDS or array >= len(arrays):  # the curves' arrays are checked as curves
            continue
        values = arrays[array]
        with np.errstate(invalid="ignore"):
            bad = ~np.isnan(values) & (~np.isfinite(values) | (values != np.round(values))
                                       | (np.abs(values) > WHOLE_NUMBER_LIMIT))
        for item in np.flatnonzero(bad):
            if array in unread and np.isnan(values[item]):
                continue
            found.append((array, int(item), f"{path}: array {array + 1} ({name}), item {item + 1} "
                          f"{not_whole(float(values[item]))}, got {show(values[item])}"))
    return found


def bond_ids(path: str | Path) -> list[str]:
    """The ids of a bond file's bonds: a CSV's ``id`` column, the row numbers of a ``.in`` file."""
    return read_bond_book(path)[2]


def curves_from_arrays(terms: np.ndarray, rates: np.ndarray, days: np.ndarray) -> tuple[YieldCurve, ...]:
    """Split the file's concatenated curve arrays into :class:`YieldCurve` objects."""
    terms = np.asarray(terms, dtype=np.float64)
    if (not np.isfinite(terms).all() or (terms < 1).any() or (terms != np.round(terms)).any()
            or terms.sum() != len(rates) or len(rates) != len(days)):
        raise InputError([(None, "curve_terms", f"the curves' point counts {terms.tolist()} are not whole numbers >= 1 "
                           f"that match the {len(rates)} rates and {len(days)} days")])
    ends = np.cumsum(terms.astype(np.int64))
    starts = ends - terms.astype(np.int64)
    return tuple(named_curve(f"curve {c}", rates[s:e], days[s:e]) for c, (s, e) in enumerate(zip(starts, ends, strict=True)))


def named_curve(name: str, rates: np.ndarray, days: np.ndarray) -> YieldCurve:
    """A curve of a file of several, its problems prefixed with which one it is."""
    try:
        return YieldCurve(rates, days)
    except InputError as err:
        raise InputError([(row, field, f"{name}: {message}") for row, field, message in err.errors]) from None


def write_bonds(portfolio: BondPortfolio, curves: Sequence[YieldCurve], path: str | Path) -> None:
    """Write the 19-array ``.in`` file (also Futhark's input for ``bonds64``), the CSV trio or a Parquet book, by
    the suffix (any other is an :class:`InputError`)."""
    path = Path(path)
    kind = output_format(path, BOOK_FORMATS, "file", "a bond book")
    refuse_listed_points(portfolio, path)
    if kind == "csv":
        write_bonds_csv(portfolio, curves, path)
        return
    if kind == "parquet":
        from .parquet import write_book

        write_book(path, portfolio, curves)
        return
    terms, rates, days = flatten_curves(curves)
    arrays = {**portfolio.as_dict(), "curve_terms": terms, "curve_rates": rates, "curve_days": days}
    lines = [format_array(arrays[name], integer=name in _INTEGER_ARRAYS) for name in FILE_ARRAYS]
    with replacing([path]) as (temporary,):
        temporary.write_text("\n".join(lines) + "\n")


def companions(path: str | Path) -> tuple[Path, Path]:
    """The cash-flow and curve files that go with a bond CSV ``NAME.csv``."""
    path = Path(path)
    stem = path.with_suffix("")
    return stem.with_name(stem.name + ".cashflows.csv"), stem.with_name(stem.name + ".curves.csv")


def write_bonds_csv(portfolio: BondPortfolio, curves: Sequence[YieldCurve], path: str | Path) -> None:
    """``NAME.csv`` (bonds), ``NAME.cashflows.csv`` (cash flows by bond id), ``NAME.curves.csv``."""
    path = Path(path)
    fields = [f for f in BOND_FIELDS if f != "cashflow_count"]
    with replacing([path, *companions(path)]) as (bond_file, cash_file, curve_file):  # all three or none
        with open(bond_file, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", *fields, "cashflow_count"])
            for k in range(len(portfolio)):
                writer.writerow([k, *(_cell(f, getattr(portfolio, f)[k]) for f in fields),
                                 int(portfolio.cashflow_count[k])])
        with open(cash_file, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "step", "repayment", "coupon"])
            owner = np.repeat(np.arange(len(portfolio)), portfolio.cashflow_count)
            for k, (bond, step) in enumerate(zip(owner, portfolio.cashflow_step, strict=True)):
                writer.writerow([int(bond), int(step), format_float(float(portfolio.repayment[k])),
                                 format_float(float(portfolio.coupon[k]))])
        with open(curve_file, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["curve", "days", "rate"])
            for c, curve in enumerate(curves):
                writer.writerows([c, int(d), format_float(float(r))] for d, r in zip(curve.days, curve.rates, strict=True))


def read_bonds_csv(path: str | Path, errors: str = "raise") -> tuple[BondPortfolio, tuple[YieldCurve, ...]]:
    """The CSV trio written by :func:`write_bonds_csv` (cash flows may be listed in any order); ``errors``
    as for :func:`read_bonds`."""
    bonds, curves, _ids = _read_bonds_csv(Path(path), errors)
    return bonds, curves


def _read_bonds_csv(path: Path, errors: str) -> tuple[BondPortfolio, tuple[YieldCurve, ...], list[str]]:
    """The CSV trio and the bonds' ids; every message names the file and the line (and a cash flow's, its bond)."""
    cash_path, curve_path = companions(path)
    for needed in (cash_path, curve_path):
        if not needed.exists():
            raise InputError([(None, "file", f"{path}: a bond CSV needs its companion file {needed.name}")])
    problems: list[tuple[int, str, str]] | None = [] if errors == "mask" else None
    bonds, bond_lines = read_table_lines(path, ["id", *BOND_FIELDS])
    ids = check_row_ids(bonds["id"], path.name, bond_lines)
    position = {bond_id: row for row, bond_id in enumerate(ids)}
    flows, flow_lines = read_table_lines(cash_path, ["id", "step", "repayment", "coupon"])
    owners = []
    for k, bond_id in enumerate(flows["id"]):
        if bond_id not in position:
            raise InputError([(None, "id", f"{cash_path.name} line {flow_lines[k]}: cash flow for unknown bond id "
                               f"{bond_id!r}")])
        owners.append(position[bond_id])
    owner = np.array(owners, dtype=np.int64)

    def flow_column(column: str) -> np.ndarray:  # a cash-flow cell's problem is its bond's
        return np.array([_number(cash_path, column, flow_lines[k], v, row=int(owner[k]), problems=problems,
                                 what=f"{column} of a cash flow of bond {ids[owner[k]]!r}", whole=column == "step")
                         for k, v in enumerate(flows[column])])

    steps = flow_column("step")
    order = np.lexsort((steps, owner))  # by bond, then by step
    fields: dict[str, object] = {}
    table, curve_lines = read_table_lines(curve_path, ["curve", "days", "rate"])
    names = list(dict.fromkeys(table["curve"]))  # curve names (or numbers) in order of first appearance
    numbered = all(name.isdigit() and str(int(name)) == name for name in names)  # 0, 1, ...; "00", "EUR" are names
    if numbered:  # curves numbered 0, 1, ...: a bond's curve_index is such a number
        every = [str(c) for c in range(max((int(n) for n in names), default=-1) + 1)]
        missing = [name for name in every if name not in set(names)]
        if missing:  # a gap would name curves the file never wrote
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            which = f"curve {shown} is" if len(missing) == 1 else f"curves {shown} are"
            raise InputError([(None, "curve", f"{curve_path.name}: the curves are numbered up to {every[-1]} but "
                               f"{which} missing (numbered curves run 0, 1, 2, ... as the bonds' curve_index counts "
                               "them; give every one, or name the curves)")])
        names = every
    position_of = {name: c for c, name in enumerate(names)}
    for f in BOND_FIELDS:
        if f == "option_type":
            fields[f] = bonds[f]
        elif f == "curve_index":  # a curve's name in NAME.curves.csv (its number where the curves are numbered)
            fields[f] = [_curve_of(path, k, bond_lines[k], v, position_of, numbered, problems)
                         for k, v in enumerate(bonds[f])]
        else:
            fields[f] = [_number(path, f, bond_lines[k], v, row=k, problems=problems, whole=f in _INTEGER_FIELDS)
                         for k, v in enumerate(bonds[f])]
    counted = np.bincount(owner, minlength=len(ids))
    counts = fields["cashflow_count"]
    for row, (given, found) in enumerate(zip(counts, counted, strict=True)):  # type: ignore[arg-type]
        if given != given or int(given) != int(found):  # unread (NaN) or wrong: the flows listed are the bond's
            if given == given:
                message = (f"cashflow_count is {int(given)} but {cash_path.name} lists {int(found)} cash flows "
                           f"for bond {ids[row]!r} ({path.name} line {bond_lines[row]})")
                if problems is None:
                    raise InputError([(row, "cashflow_count", message)])
                problems.append((row, "cashflow_count", message))
            counts[row] = float(found)  # type: ignore[index]
    fields["cashflow_step"] = steps[order]
    for name in ("repayment", "coupon"):
        fields[name] = flow_column(name)[order]
    curve_ids = np.array([position_of.get(v, -1) for v in table["curve"]], dtype=np.int64)
    days = np.array([_number(curve_path, "days", curve_lines[k], v) for k, v in enumerate(table["days"])])
    rates = np.array([_number(curve_path, "rate", curve_lines[k], v) for k, v in enumerate(table["rate"])])
    curves = NamedCurves(names, (named_curve(f"{curve_path.name}: curve {name!r}", rates[curve_ids == c],
                                             days[curve_ids == c]) for c, name in enumerate(names)))
    if problems:
        return BondPortfolio.with_read_problems(sorted(problems, key=lambda p: p[0]), **fields), curves, ids
    return BondPortfolio(**fields), curves, ids


def _curve_of(path: Path, row: int, line: int, value: str, position_of: dict[str, int], numbered: bool,
              problems: list[tuple[int, str, str]] | None) -> float:
    """The index of the curve a bond names: text is matched as a name (``1`` may name a curve), never
    read as a position among named curves, so a name that looks like a number cannot pick another curve."""
    if numbered:  # a number: validation checks that it names a curve
        return _number(path, "curve_index", line, value, row=row, problems=problems, whole=True)
    if value not in position_of:
        shown = ", ".join(position_of) if len(position_of) <= 20 else f"{len(position_of)} curves"
        message = f"{path.name} line {line}: curve_index {value!r} names no curve of the curves file ({shown})"
        if problems is None:
            raise InputError([(row, "curve_index", message)])
        problems.append((row, "curve_index", message))
        return float("nan")
    return float(position_of[value])


def _number(path: Path, field: str, line: int, text: str, row: int | None = None,
            problems: list[tuple[int, str, str]] | None = None, what: str | None = None, whole: bool = False) -> float:
    """A cell (on ``line`` of the file) as a float, a whole number in the int32 range where ``whole``; any other is
    an error naming the file, the line and ``row`` (the bond), or, where ``problems`` is given (and ``row``), NaN
    with the problem added there."""
    try:
        value = float(text)
        why = not_whole(value) if whole else ""
        message = f"{path.name} line {line}: {what or field} {why}, got {text!r}" if why else ""
    except ValueError:
        value, message = float("nan"), f"{path.name} line {line}: {what or field} must be a number, got {text!r}"
    if not message:
        return value
    if problems is None or row is None:
        raise InputError([(row, field, message)])
    problems.append((row, field, message))
    return float("nan")


def _cell(field: str, value: object) -> object:
    return int(value) if field in _INTEGER_FIELDS or field == "option_type" else format_float(float(value))  # type: ignore[arg-type]
