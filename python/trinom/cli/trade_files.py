"""``trinom price|risk|oas trades.csv --curve curve.csv --as-of DATE [--schedule schedule.csv] [--notionals
notionals.csv]``: the command line of dated trades (issue 25).

The input is a ``trades.csv`` (or a Parquet table of the same columns, see :mod:`trinom.instruments.trades`), the
curves a dated curve file (``curve,date,discount`` or ``curve,date,zero``; :func:`trinom.io.curve_files.read_dated_curves`)
and ``--as-of`` the valuation date; optionally a ``schedule.csv`` (``id,date,price``: explicit and step-down exercise
schedules) and a ``notionals.csv`` (``id,date,notional``: amortizing notionals), CSV or Parquet. Outputs, in input
order: prices ``id,price,clean,accrued,error`` (price: dirty per 100 notional), risk
``id,measure,factor,shift,base,value,error``, OAS ``id,oas,price,iterations,error`` (oas as a decimal, the unit of the
file's ``spread``).

The trades-file side that ``price``, ``risk`` and ``oas`` share: reading the inputs, the options."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..instruments.trades import Trades
from ..io import parquet
from ..io.trade_files import read_trades
from ..result import Prices


def is_trades_file(path: str | Path) -> bool:
    """Whether ``path`` is a trades file: a CSV or Parquet table with a ``type`` column and no ``cashflow_count``."""
    path = Path(path)
    if not path.is_file():
        return False
    if parquet.is_parquet(path):
        header = parquet.column_names(path) if path.stat().st_size else []
    elif path.suffix.lower() == ".csv":
        header = _csv_header(path)
    else:
        return False
    return "type" in header and "cashflow_count" not in header


def _csv_header(path: Path) -> list[str]:
    """A CSV file's first line as cells (quotes removed, as the CSV readers read them)."""
    import csv

    with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
        first = next(csv.reader([handle.readline()]), [])
    return [cell.strip() for cell in first]


def not_a_trades_file(path: str | Path) -> str | None:
    """Why ``path``, given with a trades file's options (``--curve``, ``--as-of``...), is not read as a trades file,
    where it is none of the tree-step books either: missing, a folder, empty, UTF-16, ``;``-separated, a header in
    upper case, a trades header under another suffix than ``.csv`` or ``.parquet`` (None: a tree-step book, or a
    file that says nothing of what it was meant to be)."""
    path = Path(path)
    if not path.exists():
        return f"{path}: no such file"
    if path.is_dir():
        return f"{path} is a folder, not a file"
    if path.stat().st_size == 0:
        return f"{path} is empty: a trades file starts with its header line (id,type,...)"
    head = path.read_bytes()[:4096]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
        return f"{path} is UTF-16 (or binary): save it as UTF-8 (a trades file is text, comma-separated)"
    if parquet.is_parquet(path):
        return None
    line = head.decode("utf-8", errors="replace").splitlines()[0] if head.strip() else ""
    cells = [cell.strip().strip('"') for cell in line.split(",")]
    if ";" in line and "type" in [c.strip().strip('"').lower() for c in line.split(";")]:
        return f"{path} is separated by ';': a trades file is comma-separated (id,type,...)"
    if "type" not in cells and "type" in [c.lower() for c in cells]:
        shown = ", ".join(c for c in cells if c != c.lower())
        return f"{path}: its header is in upper case ({shown}): the trades.csv columns are lower case (id, type, ...)"
    if "type" in cells and "cashflow_count" not in cells and path.suffix.lower() != ".csv":
        return f"{path} has a trades header but a {path.suffix or 'missing'} suffix: name it .csv (or write .parquet)"
    return None


def read_inputs(args: argparse.Namespace) -> tuple[Trades, dict[str, Any]]:
    """The trades of ``args.portfolio`` and the dated curves of ``--curve``, both as of ``--as-of``."""
    from ..io.curve_files import read_dated_curves

    missing = [flag for flag, value in (("--as-of", args.as_of), ("--curve", args.curve)) if value is None]
    if missing:
        raise InputError([(None, flag, f"a trades file is priced as of a date on dated curves: give {flag}")
                          for flag in missing])
    if getattr(args, "yield_file", None) is not None:
        raise InputError([(None, "--yield", "--yield is the curve of tree-step option files; trades take dated curves "
                           "(--curve curve.csv)")])
    trades = read_trades(args.portfolio, as_of=args.as_of, schedule=getattr(args, "schedule", None),
                         notionals=getattr(args, "notionals", None))
    curves = read_dated_curves(args.curve, as_of=args.as_of)
    if getattr(args, "model", None) is not None:
        trades = with_model(trades, args.model, list(curves))
    return trades, curves


#: The least mean reversion a model file may give a trade: below it a tree at a day's steps is wider than any engine
#: takes (a fit at the calibration's lower bound of 1e-8).
MIN_MODEL_A = 1e-3


def with_model(trades: Trades, path: Path, curve_names: list[str]) -> Trades:
    """``trades`` with ``a`` and ``sigma`` from the model file at ``path`` (``trinom calibrate``'s output), per trade:
    its own row's fit, else its curve's row's fit, else its own cells. A ``no fit`` row is no error where the trade
    prices otherwise (a straight bond or a cap has nothing to fit and carries its own cells or its curve's row); a
    trade left with no parameters is a bad row naming the model file and why (``--errors mask`` masks that row only).
    Rows for ids the book does not hold are said on stderr (skipped)."""
    from .calibrate import read_model_file

    model = read_model_file(path)
    cells = trades.column("curve")
    only = curve_names[0] if len(curve_names) == 1 else None
    names = [only if cell is None else str(cell) for cell in cells.tolist()]
    ids = trades.ids
    a, sigma, source = model.parameters(ids, names)
    own = np.array([x is not None and y is not None for x, y in zip(trades.column("a").tolist(),
                                                                    trades.column("sigma").tolist(), strict=True)])
    problems = []
    for k in np.flatnonzero((source == "") & ~own).tolist():
        trade, curve = ids[k], names[k]
        why = model.unfitted.get(trade) or model.unfitted.get(str(curve))
        found = (f"has no fit for trade {trade!r} ({why})" if why else
                 f"has no row for trade {trade!r} nor for its curve {curve!r}")
        problems.append((k, "a", f"{path} {found}, and the trade has no a and sigma of its own"))
    from ..instruments.trades import PLAUSIBLE_SIGMA

    for k in np.flatnonzero(source != "").tolist():  # a fit at a bound of the calibration no tree can take
        if sigma[k] > PLAUSIBLE_SIGMA or a[k] < MIN_MODEL_A:
            problems.append((k, "a" if a[k] < MIN_MODEL_A else "sigma",
                             f"{path} gives trade {ids[k]!r} a = {a[k]:g}, sigma = {sigma[k]:g} (its {source[k]}'s row), "
                             f"outside what a tree prices (a >= {MIN_MODEL_A:g}, sigma <= {PLAUSIBLE_SIGMA:g}): a fit at "
                             "a bound of the calibration? Calibrate again with a fixed (--a) or more quotes"))
    at_bound = [ids[k] for k in np.flatnonzero(source != "").tolist()
                if (ids[k] if source[k] == "trade" else str(names[k])) in model.bound]
    if at_bound:
        shown = ", ".join(map(repr, at_bound[:10])) + (" ..." if len(at_bound) > 10 else "")
        print(f"trinom: warning: {path}: {len(at_bound)} trades price with a fit at a bound of its calibration (status "
              f"bound): {shown}", file=sys.stderr)
    unused = sorted(set(model.curves) - {str(name) for name in names})
    if unused:
        print(f"trinom: warning: {path} has rows for curves no trade of the book is on, skipped: "
              f"{', '.join(map(repr, unused))}", file=sys.stderr)
    book = set(ids)
    strangers = sorted(name for name in model.trades if name not in book)
    if strangers:
        shown = ", ".join(repr(name) for name in strangers[:10]) + (" ..." if len(strangers) > 10 else "")
        print(f"trinom: warning: {path} has rows for {len(strangers)} trades the book does not hold, skipped: {shown}",
              file=sys.stderr)
    found = source != ""
    priced = trades.with_columns(a=np.where(found, a, trades.column("a")),
                                 sigma=np.where(found, sigma, trades.column("sigma")))
    if model.pieces:  # until rows: sigma piecewise constant
        from ..instruments.sigma_pieces import PIECE_TYPES

        kinds = [str(v).strip().lower() for v in trades.column("type").tolist()]
        pieces = {}
        for k in np.flatnonzero(found).tolist():
            key = ids[k] if source[k] == "trade" else str(names[k])
            if key not in model.pieces:
                continue
            if kinds[k] in PIECE_TYPES:
                pieces[ids[k]] = model.pieces[key]
            else:
                problems.append((k, "sigma", f"{path} gives {source[k]} {key!r} sigma pieces (until rows); a "
                                 f"{kinds[k]} takes one sigma (pieces apply to {', '.join(PIECE_TYPES)})"))
        priced = priced.with_sigma_pieces(pieces) if pieces else priced
    return priced.with_problems(problems, replacing=("a", "sigma")) if problems else priced


def trade_inputs(args: argparse.Namespace) -> list[Path]:
    """The files a trades command reads (an output must not overwrite one)."""
    return [path for path in (args.portfolio, args.curve, getattr(args, "schedule", None),
                              getattr(args, "notionals", None), getattr(args, "model", None),
                              getattr(args, "vols", None)) if path is not None]


def say_warnings(result: Prices, ids: list[str]) -> None:
    """The result's warnings on stderr, one a line naming the trade."""
    for row, message in result.warnings:
        print(f"trinom: warning: trade {ids[row]!r}: {message}", file=sys.stderr)


def say_summary(rows: int, failed: int, what: str, out: Path) -> None:
    print(f"trinom: {what} of {rows} trades -> {out}{f'; {failed} of {rows} failed' if failed else ''}",
          file=sys.stderr)


def add_trade_options(cmd: argparse.ArgumentParser) -> None:
    """``--curve`` and ``--as-of``, the inputs a trades file needs besides itself, and the optional ``--schedule`` and
    ``--notionals``."""
    cmd.add_argument("--curve", type=Path, help="trades files: the dated curves, CSV or Parquet curve,date,discount or "
                     "curve,date,zero (continuous, ACT/365F), or curve,date,rate with compounding and day_count; a "
                     "trade's curve column names one")
    cmd.add_argument("--as-of", dest="as_of", help="trades files: the valuation date, YYYY-MM-DD")
    cmd.add_argument("--schedule", type=Path, help="trades files: explicit and step-down exercise schedules, CSV or "
                     "Parquet id,date,price (a clean price per 100 of the outstanding notional on each date)")
    cmd.add_argument("--notionals", type=Path, help="trades files: amortizing notionals, CSV or Parquet "
                     "id,date,notional (from that coupon date on, the notional outstanding, in the trade's units)")
    cmd.add_argument("--model", type=Path, help="trades files: Hull-White a and sigma from `trinom calibrate` (CSV or "
                     "Parquet: a trade's own row first, else its curve's; a and sigma in the trades file otherwise)")


def add_recalibration_options(cmd: argparse.ArgumentParser) -> None:
    """``--recalibrate`` and what it fits to (``--vols``, ``--a``, ``--strike``, ``--vol-shift``): trades files."""
    from ..analytics.baskets import STRIKES
    from ..analytics.recalibration import PER

    cmd.add_argument("--recalibrate", nargs="?", const="trade", default=None, choices=PER,
                     help="trades files: fit the Hull-White model to --vols again in every scenario (risk: every bump; "
                     "vega becomes the move per 0.0001 of every quoted vol): per trade to its co-terminal swaptions "
                     "(default) or per curve")
    cmd.add_argument("--vols", type=Path, default=None, help="with --recalibrate: the volatility quotes, "
                     "curve,expiry,tenor,vol,kind[,shift,...] (as trinom calibrate)")
    cmd.add_argument("--a", type=float, default=None, help="with --recalibrate: fix the mean reversion (default: free)")
    cmd.add_argument("--strike", choices=STRIKES, default="atm", help="with --recalibrate per trade: baskets at the "
                     "money (default) or at the deal's rate")
    cmd.add_argument("--vol-shift", dest="vol_shift", type=float, default=1e-4,
                     help="with --recalibrate: vega's move of every quoted vol (default 1e-4)")
    cmd.add_argument("--piecewise", action="store_true",
                     help="with --recalibrate per trade and --a: each trade's sigma bootstrapped piece by piece again "
                     "in every scenario (trinom calibrate --piecewise), its trees priced on the pieces")


def recalibration_of(args: argparse.Namespace) -> Any:
    """The :class:`~trinom.analytics.Recalibration` the command line asks for (None: none); ``--vols`` and the other
    options without ``--recalibrate`` (or the reverse) are errors, not ignored."""
    from ..analytics.recalibration import Recalibration

    how = getattr(args, "recalibrate", None)
    if how is None:
        stray = [flag for flag, name, default in (("--vols", "vols", None), ("--a", "a", None),
                                                  ("--strike", "strike", "atm"), ("--vol-shift", "vol_shift", 1e-4))
                 if getattr(args, name, default) != default]
        stray += ["--piecewise"] if getattr(args, "piecewise", False) else []
        if stray:
            raise InputError([(None, flag, f"{flag} applies with --recalibrate") for flag in stray])
        return None
    if args.vols is None:
        raise InputError([(None, "--vols", "--recalibrate fits the model to volatility quotes: give --vols vols.csv")])
    if getattr(args, "model", None) is not None:
        raise InputError([(None, "--model", "--recalibrate fits the model itself: --model would be overwritten")])
    try:
        return Recalibration(vols=args.vols, per=how, a=args.a, strike=args.strike, vol_shift=args.vol_shift,
                             piecewise=bool(getattr(args, "piecewise", False)))
    except ValueError as err:
        raise InputError([(None, "--recalibrate", str(err))]) from err


#: The options of trades files, by flag and attribute.
_TRADE_FLAGS = (("--curve", "curve"), ("--as-of", "as_of"), ("--schedule", "schedule"), ("--notionals", "notionals"),
                ("--model", "model"), ("--recalibrate", "recalibrate"), ("--vols", "vols"), ("--a", "a"))


def unused_trade_options(args: argparse.Namespace) -> None:
    """``--curve``/``--as-of``/``--schedule``/``--notionals`` given with a tree-step book: an error, not ignored."""
    given = [flag for flag, name in _TRADE_FLAGS if getattr(args, name, None) is not None]
    if given:
        why = not_a_trades_file(args.portfolio)
        if why:
            raise InputError([(None, "file", f"{why} (read as a trades file, as {', '.join(given)} ask)")])
        raise InputError([(None, flag, f"{flag} applies to trades files (a CSV with a type column); {args.portfolio} "
                           "is a tree-step book") for flag in given])
