"""``trinom calibrate [trades.csv] --curve curve.csv --vols vols.csv --as-of DATE --out model.csv``: Hull-White
calibration on the command line, and the model file it writes (issue 26).

* **Global** (no trades file): one ``(a, sigma)`` per curve of ``--curve``, fitted to that curve's quotes in
  ``--vols`` (:func:`trinom.model.calibration.calibrate`). The model file's columns are ``curve,a,sigma,status,rmse``,
  then ``message,iterations,quotes,a_fixed``.
* **Per trade** (a ``trades.csv``, with its optional ``--schedule`` and ``--notionals`` as ``trinom price`` takes
  them): one ``(a, sigma)`` per trade, fitted to the co-terminal European swaptions of its exercise dates, their
  volatilities read off the curve's swaption matrix (:func:`trinom.analytics.baskets.book_baskets`,
  :func:`~trinom.analytics.baskets.calibrate_baskets`). Columns ``id,a,sigma,status,message``, then
  ``curve,rmse,quotes,iterations,a_fixed``. A ``swaption`` row (on the dates the tree exercises it) and a callable
  or puttable ``bond`` row (its coupon dates in the window, or its ``schedule.csv`` dates) have a basket; any other
  row (a cap or floor: calibrated per curve to a cap strip; a bond option; a bond without an option) gets ``no
  fit`` and a message saying why.

``status`` is ``converged``, ``bound`` (a parameter at its bound) or ``no fit`` (``a`` and ``sigma`` empty, the
message saying why); ``rmse`` is the root mean square of the fitted quotes' model volatility less their market
volatility, in the quotes' kind (normal: rate units, 0.0001 is a basis point). ``--a`` fixes the mean reversion
(else it is fitted), ``--error`` picks the objective (``relative_price``, QuantLib's default; ``price``; ``vol``),
``--strike`` the per-trade swaptions' strikes (``atm``, the default, or ``deal``: the bond's coupon), ``--backend``
where the per-trade solver runs (``numpy``, the default, as the Python API; ``multicore``, ``c``, ``cuda`` or
``opencl``: the same solver compiled from fut/calibrate.fut by ``make lib``, parameters within about 1e-10 of NumPy's
where the fit is well determined; ``auto``: ``cuda`` with a GPU, else ``multicore``, else NumPy), and
``--quotes-out`` writes one row per quote (market and model price and volatility, residual). Outputs are ``.csv``
or ``.parquet`` by their suffix, each written whole or not at all, checked before any work and never over an input.

:func:`read_model_file` reads a model file back, for ``trinom price trades.csv --model model.csv``: a trade's own
row first, else its curve's (:meth:`ModelFile.parameters`)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from ..errors import InputError
from ..io.files import TABLE_FORMATS, check_outputs, output_format

#: The model file's leading columns, in order: global (per curve) and per trade. More may follow them.
GLOBAL_COLUMNS: Final[tuple[str, ...]] = ("curve", "a", "sigma", "status", "rmse")
TRADE_COLUMNS: Final[tuple[str, ...]] = ("id", "a", "sigma", "status", "message")
#: The statuses a model file's rows may have.
STATUSES: Final[tuple[str, ...]] = ("converged", "bound", "no fit")


def add_calibrate_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``calibrate`` to an ``argparse`` subparsers object; its handler is :func:`cmd_calibrate`
    (``args.func``).

    >>> parser = argparse.ArgumentParser(prog="trinom")
    >>> cmd = add_calibrate_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["calibrate", "--curve", "c.csv", "--vols", "v.csv", "--as-of", "2025-01-02",
    ...                           "--out", "m.csv", "--a", "0.03"])
    >>> args.trades, args.a, args.error, args.func.__name__
    (None, 0.03, 'relative_price', 'cmd_calibrate')
    """
    from ..analytics.baskets import STRIKES
    from ..engines.calibration_kernel import TARGETS as KERNEL_TARGETS
    from ..model.calibration import ERRORS
    from .arguments import positive_number

    text = "fit Hull-White a and sigma to swaption volatilities: one pair per curve, or per trade (with a trades file)"
    cmd = subparsers.add_parser("calibrate", help=text, description=f"{text}.\n\n{_EXAMPLES}",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("trades", nargs="?", type=Path, default=None,
                     help="a trades file (CSV or Parquet, the trades.csv columns): calibrate per trade, each swaption "
                     "and callable or puttable bond to the co-terminal European swaptions of its exercise dates (caps "
                     "and floors: no fit, they calibrate per curve); without it, one (a, sigma) per curve")
    cmd.add_argument("--curve", type=Path, required=True, help="the dated curves: curve,date,discount or "
                     "curve,date,zero (CSV or Parquet)")
    cmd.add_argument("--vols", type=Path, required=True, help="the volatility quotes: curve,expiry,tenor,vol,kind[,shift,"
                     "strike,frequency,day_count,weight,instrument,tenor_from,atm_frequency,atm_day_count] (CSV or Parquet); "
                     "per trade, each curve's "
                     "at-the-money swaption matrix (one kind per curve, a full grid)")
    cmd.add_argument("--as-of", dest="as_of", required=True, help="the valuation date, YYYY-MM-DD")
    cmd.add_argument("--out", type=Path, required=True, help=".csv or .parquet: curve,a,sigma,status,rmse,... (global) or "
                     "id,a,sigma,status,message,... (per trade)")
    cmd.add_argument("--a", type=positive_number, default=None, help="fix the mean reversion a (> 0) for every curve or "
                     "trade (default: fitted)")
    cmd.add_argument("--error", choices=ERRORS, default="relative_price",
                     help="the objective: relative_price (QuantLib's default), price or vol (default %(default)s)")
    cmd.add_argument("--schedule", type=Path, default=None,
                     help="per trade: explicit and step-down exercise schedules of the trades file's bonds, CSV or "
                     "Parquet id,date,price (as trinom price takes it): a bond's basket is on its listed dates")
    cmd.add_argument("--notionals", type=Path, default=None,
                     help="per trade: amortizing notionals of the trades file's bonds, CSV or Parquet "
                     "id,date,notional (as trinom price takes it; checked, it does not move a basket)")
    cmd.add_argument("--strike", choices=STRIKES, default=None,
                     help="per trade: the swaptions' strikes, atm (their forward swap rates) or deal (the bond's "
                     "coupon, the swaption's fixed rate) (default atm)")
    cmd.add_argument("--backend", choices=("numpy", "auto", *KERNEL_TARGETS), default=None,
                     help="per trade: where the solver runs: numpy (the default), a Futhark target (multicore, c, cuda, "
                     "opencl: the same solver compiled, built by make lib; error relative_price or price), or auto "
                     "(cuda with a GPU, else multicore, else numpy)")
    cmd.add_argument("--piecewise", action="store_true",
                     help="per trade: sigma piecewise constant, bootstrapped piece by piece to the co-terminal swaptions "
                     "(the piece ending at each exercise date fitted to the swaption expiring there), a fixed (--a); "
                     "the model file has a row a piece and an until column (issue 37)")
    cmd.add_argument("--quotes-out", dest="quotes_out", type=Path, default=None,
                     help=".csv or .parquet: one row per quote fitted (market and model price and volatility, residual)")
    cmd.set_defaults(func=cmd_calibrate)
    return cmd


_EXAMPLES = """examples:
  trinom calibrate --curve curve.csv --vols vols.csv --as-of 2026-11-25 --out model.csv
  trinom calibrate trades.csv --curve curve.csv --vols vols.csv --as-of 2026-11-25 --a 0.03 --out model.csv
  trinom calibrate trades.csv --piecewise --a 0.03 --curve curve.csv --vols vols.csv --as-of 2026-11-25 \
      --out model.csv
  trinom calibrate trades.csv --schedule schedule.csv --curve curve.csv --vols vols.csv --as-of 2026-11-25 \
      --out model.csv"""


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Run ``trinom calibrate`` (see the module's documentation); 0 once the model file is written, whatever the
    rows' statuses (a line on stderr counts them); an :class:`~trinom.InputError` for bad input."""
    from ..io.curve_files import read_dated_curves
    from ..io.result_files import write_table_file

    outputs = [("--out", args.out)]
    output_format(args.out, TABLE_FORMATS, "--out", "the model table")
    quotes_out = getattr(args, "quotes_out", None)
    if quotes_out is not None:
        output_format(quotes_out, TABLE_FORMATS, "--quotes-out", "the quotes table")
        outputs.append(("--quotes-out", quotes_out))
    sides = [getattr(args, "schedule", None), getattr(args, "notionals", None)]
    check_outputs(outputs, [args.trades, args.curve, args.vols, *[path for path in sides if path is not None]])
    if args.trades is None:
        unused = [flag for flag, path in zip(("--schedule", "--notionals"), sides, strict=True) if path is not None]
        if unused:
            raise InputError([(None, flag, f"{flag} applies to per-trade calibration (give a trades file): it "
                               "describes the trades' bonds") for flag in unused])
    if args.trades is None and getattr(args, "backend", None) is not None:
        raise InputError([(None, "--backend", "--backend applies to per-trade calibration (give a trades file); the "
                           "global calibration runs in NumPy")])
    if getattr(args, "piecewise", False):
        checks = [(args.trades is None, "--piecewise", "--piecewise applies to per-trade calibration (give a trades "
                   "file)"),
                  (args.a is None, "--a", "--piecewise fixes the mean reversion: give --a"),
                  (quotes_out is not None, "--quotes-out", "--piecewise writes no quotes table"),
                  (getattr(args, "backend", None) not in (None, "numpy"), "--backend",
                   "--piecewise bootstraps in NumPy (no --backend)")]
        wrong = [(None, flag, why) for bad, flag, why in checks if bad]
        if wrong:
            raise InputError(wrong)
    if args.trades is None and args.strike is not None:
        raise InputError([(None, "--strike", "--strike applies to per-trade calibration (give a trades file); the "
                           "global calibration fits each quote at its own strike")])
    start = time.perf_counter()
    curves = read_dated_curves(args.curve, as_of=args.as_of)
    if args.trades is None:
        table, quotes, status, what = _global(args, curves)
    else:
        table, quotes, status, what = _per_trade(args, curves)
    elapsed = time.perf_counter() - start
    write_table_file(args.out, table)
    if quotes_out is not None:
        write_table_file(quotes_out, quotes, "--quotes-out")
    counts = ", ".join(f"{int((status == name).sum())} {name}" for name in STATUSES if (status == name).any())
    print(f"trinom: calibrated {len(status)} {what} as of {args.as_of} in {elapsed:.3f} s ({counts or 'none'}) -> "
          f"{args.out}", file=sys.stderr)
    return 0


def _global(args: argparse.Namespace, curves: dict[str, Any]) -> tuple[Any, Any, np.ndarray, str]:
    import pandas as pd

    from ..model.calibration import calibrate

    result = calibrate(curves=curves, quotes=args.vols, as_of=args.as_of, a=args.a, error=args.error)
    index = result.instruments.curve_index
    used = (result.weight > 0) & np.isfinite(result.model_vol)
    gap = np.where(used, result.model_vol - result.market_vol, 0.0)
    count = np.bincount(index, weights=used.astype(float), minlength=len(result.curve_names))
    with np.errstate(invalid="ignore", divide="ignore"):
        rmse = np.sqrt(np.bincount(index, weights=gap * gap, minlength=len(result.curve_names)) / count)
    rmse = np.where((count > 0) & (result.status != "no fit"), rmse, np.nan)
    table = pd.DataFrame({"curve": list(result.curve_names), "a": result.a, "sigma": result.sigma,
                          "status": result.status, "rmse": rmse, "message": list(result.message),
                          "iterations": result.iterations, "quotes": result.quote_count, "a_fixed": result.a_fixed})
    return table, result.to_frame(), np.asarray(result.status), "curves"


def _per_trade(args: argparse.Namespace, curves: dict[str, Any]) -> tuple[Any, Any, np.ndarray, str]:
    from ..analytics.baskets import book_baskets, calibrate_baskets
    from ..io.trade_files import read_trades

    trades = read_trades(args.trades, as_of=args.as_of, schedule=getattr(args, "schedule", None),
                         notionals=getattr(args, "notionals", None))
    baskets = book_baskets(trades, curve_names=list(curves))
    if getattr(args, "piecewise", False):
        from ..analytics.baskets import prepare_baskets
        from ..analytics.baskets.piecewise import bootstrap_baskets

        prepared = prepare_baskets(baskets, args.vols, args.as_of, curves=curves, strike=args.strike or "atm")
        pieces = bootstrap_baskets(prepared, curves, a=args.a)
        return pieces.to_frame(), None, np.asarray(pieces.status), "trades"
    result = calibrate_baskets(curves=curves, vols=args.vols, as_of=args.as_of, baskets=baskets, a=args.a,
                               strike=args.strike or "atm", error=args.error,
                               backend=getattr(args, "backend", None) or "numpy")
    return result.trades_frame(), result.quotes_frame(), np.asarray(result.status), "trades"


@dataclass(frozen=True, eq=False)
class ModelFile:
    """A model file's parameters: per curve (rows with a ``curve`` and no ``id``) and per trade (rows with an
    ``id``), each ``(a, sigma)``; ``unfitted``: the rows without parameters (status ``no fit``), by id or curve,
    with their messages."""

    path: Path
    curves: dict[str, tuple[float, float]] = field(default_factory=dict)
    trades: dict[str, tuple[float, float]] = field(default_factory=dict)
    unfitted: dict[str, str] = field(default_factory=dict)
    bound: set[str] = field(default_factory=set)  #: the ids and curves whose fit is at a bound (status ``bound``)
    #: per id or curve with ``until`` rows: the dates where each sigma piece but the last ends, and every piece's sigma
    pieces: dict[str, tuple[list[str], list[float]]] = field(default_factory=dict)

    def parameters(self, ids: Any, curves: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per trade (``ids``, each with its ``curves`` name; one name for all), its ``a`` and ``sigma``: the trade's
        own row, else its curve's (NaN where neither), and where they came from: ``"trade"``, ``"curve"`` or
        ``""``.

        >>> m = ModelFile(Path("model.csv"), curves={"EUR": (0.03, 0.01)}, trades={"B1": (0.05, 0.012)})
        >>> a, sigma, source = m.parameters(["B1", "B2", "B3"], ["EUR", "EUR", "USD"])
        >>> a.tolist(), source.tolist()
        ([0.05, 0.03, nan], ['trade', 'curve', ''])
        """
        names = [str(v) for v in np.asarray(ids, dtype=object).reshape(-1).tolist()]
        on = np.broadcast_to(np.asarray(curves, dtype=object), (len(names),)).tolist()
        a, sigma = np.full(len(names), np.nan), np.full(len(names), np.nan)
        source = np.full(len(names), "", dtype=object)
        for k, (name, curve) in enumerate(zip(names, on, strict=True)):
            found = self.trades.get(name)
            where = "trade"
            if found is None:
                found = self.curves.get("" if curve is None else str(curve))
                where = "curve"
            if found is not None:
                a[k], sigma[k] = found
                source[k] = where
        return a, sigma, source


def read_model_file(path: str | Path) -> ModelFile:
    """A model file (``trinom calibrate``'s ``--out``; CSV or Parquet by its suffix): columns ``a`` and ``sigma``,
    and ``id`` or ``curve`` (or both); others (``status``, ``message``, ``rmse``...) as they come.

    A row with an ``id`` is that trade's parameters, a row with only a ``curve`` that curve's. A row whose status is
    ``no fit`` (its ``a`` and ``sigma`` empty) is kept in ``unfitted`` with its message. An ``until`` column (issue
    37) makes sigma piecewise constant: several rows of one id or curve are its pieces, each up to its ``until`` date
    (YYYY-MM-DD), the one with an empty ``until`` open-ended (exactly one), all of one ``a``; ``pieces`` keeps them
    (the first piece's sigma is the trade's or curve's ``sigma``). Every bad cell is reported
    at once, naming the file, the line (Parquet: the row) and the column: ``a`` or ``sigma`` missing, not a number,
    not finite or not > 0 (on a row that has a fit), a row with neither id nor curve, an id or a curve given twice.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "model.csv"
    >>> _ = f.write_text("curve,a,sigma,status,rmse\\nEUR,0.03,0.01,converged,1e-05\\nUSD,,,no fit,\\n")
    >>> m = read_model_file(f)
    >>> m.curves, m.unfitted
    ({'EUR': (0.03, 0.01)}, {'USD': 'no fit'})
    """
    from ..io import parquet
    from ..io.csvtable import read_rows, read_table_lines

    path = Path(path)
    if parquet.is_parquet(path):
        header, *rows = parquet.read_text_rows(path)
        places = [f"{path} row {k + 1}" for k in range(len(rows))]
        columns = {name: [row[k] for row in rows] for k, name in enumerate(header)}
    else:
        first, _ends = read_rows(path)
        header = [name.strip() for name in first[0]] if first else []
        if not header:
            raise InputError([(None, "file", f"{path}: empty file (a header naming a, sigma and id or curve is needed)")])
        columns, lines = read_table_lines(path, [n for n in ("a", "sigma") if n in header],
                                          [n for n in header if n not in ("a", "sigma")])
        places = [f"{path} line {line}" for line in lines]
    problems = [(None, name, f"{path}: the header lacks column {name!r} (a model file has a, sigma, and id or "
                 "curve)") for name in ("a", "sigma") if name not in columns]
    if "id" not in columns and "curve" not in columns:
        problems.append((None, "id", f"{path}: the header has neither an id nor a curve column"))
    if problems:
        raise InputError(problems)
    count = len(places)
    ids = [cell.strip() for cell in columns.get("id", [""] * count)]
    names = [cell.strip() for cell in columns.get("curve", [""] * count)]
    status = [cell.strip().lower() for cell in columns.get("status", [""] * count)]
    messages = [cell.strip() for cell in columns.get("message", [""] * count)]
    until = [cell.strip() for cell in columns.get("until", [""] * count)]
    result = ModelFile(path=path)
    seen: dict[tuple[str, str, str], int] = {}
    pieces: dict[tuple[str, str], list[tuple[str, float, float, int]]] = {}
    for row in range(count):
        place = places[row]
        key = ("id", ids[row]) if ids[row] else ("curve", names[row]) if names[row] else None
        if key is None:
            problems.append((row, "id", f"{place}: the row has neither an id nor a curve"))
            continue
        if (*key, until[row]) in seen:
            again = f" until {until[row]}" if until[row] else ""
            problems.append((row, key[0], f"{place}: {key[0]} {key[1]!r}{again} is already at "
                             f"{places[seen[(*key, until[row])]]}"))
            continue
        seen[(*key, until[row])] = row
        if status[row] not in ("", *STATUSES):
            problems.append((row, "status", f"{place}: status {status[row]!r} is not one of {', '.join(STATUSES)}"))
            continue
        values = {}
        for name in ("a", "sigma"):
            text = columns[name][row].strip()
            if text.lower() in ("", "nan") and status[row] == "no fit":
                continue
            try:
                value = float(text)
            except ValueError:
                problems.append((row, name, f"{place}: {name} {text!r} is not a number" if text else
                                 f"{place}: {name} is missing (the row's status is {status[row] or 'not given'})"))
                continue
            if not (math.isfinite(value) and value > 0):
                problems.append((row, name, f"{place}: {name} must be a finite number > 0, got {text}"))
                continue
            values[name] = value
        if status[row] == "no fit" and len(values) < 2:
            result.unfitted[key[1]] = messages[row] or "no fit"
        elif len(values) == 2:
            pieces.setdefault(key, []).append((until[row], values["a"], values["sigma"], row))
            if status[row] == "bound":
                result.bound.add(key[1])
    for key, rows in pieces.items():
        found = _pieces(key, rows, places)
        if isinstance(found, list):
            problems += found
            continue
        (result.trades if key[0] == "id" else result.curves)[key[1]] = (rows[0][1], found[1][0])
        if found[0]:
            result.pieces[key[1]] = found
    if problems:
        raise InputError(problems)
    return result


def _pieces(key: tuple[str, str], rows: list[tuple[str, float, float, int]],
            places: list[str]) -> tuple[list[str], list[float]] | list[tuple[int, str, str]]:
    """The sigma pieces of one id's or curve's rows ``(until, a, sigma, row)`` (one row without ``until``: no
    pieces), in date order, or their problems: ``until`` dates that are not dates, not exactly one open-ended row,
    ``a`` not one number."""
    from ..conventions.dates import to_days

    if len(rows) == 1 and not rows[0][0]:
        return [], [rows[0][2]]
    dated = [r for r in rows if r[0]]
    open_ended = [r for r in rows if not r[0]]
    days, bad = to_days(np.array([r[0] for r in dated], dtype=object), field="until")
    what = f"{key[0]} {key[1]!r}"
    if bad:
        return [(dated[k][3], "until", f"{places[dated[k][3]]}: until {dated[k][0]!r} is not a date (YYYY-MM-DD)")
                for k, _f, _m in bad]
    if len(open_ended) != 1:
        row = (open_ended[1] if open_ended else rows[-1])[3]
        return [(row, "until", f"{places[row]}: {what}'s sigma pieces need exactly one row with an empty until (the "
                 f"last, open-ended piece), got {len(open_ended)}")]
    if len({r[1] for r in rows}) != 1:
        return [(rows[0][3], "a", f"{places[rows[0][3]]}: {what}'s sigma pieces must share one a (a is constant, "
                 f"sigma piecewise), got {sorted({r[1] for r in rows})}")]
    order = np.argsort(days, kind="stable")
    return ([dated[k][0] for k in order.tolist()], [dated[k][2] for k in order.tolist()] + [open_ended[0][2]])


__all__ = ["GLOBAL_COLUMNS", "TRADE_COLUMNS", "ModelFile", "add_calibrate_parser", "cmd_calibrate",
           "read_model_file"]
