"""Property-based fuzzing (hypothesis) of the dated surfaces (issue 35): ``trades.csv``, ``curve.csv``, ``schedule.csv``,
``notionals.csv``, ``vols.csv``, ``model.csv`` and ``trinom calibrate``.

The properties, for any file: a reader returns what the file says or raises an :class:`~trinom.InputError` whose every
message names the file (and the line), never another exception; every trade row gets a price or an error, never both,
in input order; and on the rows that price, the financial invariants hold: a callable bond is worth at most its
straight bond and a puttable one at least, a price is per 100 of notional whatever the notional (``value`` scales with
it), a swaption's payer minus receiver is the forward swap, a cap minus a floor at the same strike is the swap of its
caplets. The command line ends with status 0 or 2 and a message, never a traceback. Same budget as
``tests/test_fuzz.py``: 60 deterministic examples a test (``TRINOM_FUZZ_EXAMPLES=N`` runs N fresh ones), small trees
(12 to 52 steps a year, at most 8 years), the Futhark ``c`` target.
"""

from __future__ import annotations

import contextlib
import io as text_io
import math
from pathlib import Path

import numpy as np
import pytest
import trinom
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz import FUZZ, check_result
from trinom.cli.calibrate import read_model_file
from trinom.instruments import TRADE_COLUMNS, read_trades
from trinom.model import read_dated_curves
from trinom.model.quotes import read_vol_quotes

AS_OF = "2026-11-25"
C = {"backend": "futhark", "target": "c"}
CURVE_TEXT = "curve,date,zero\nEUR,2027-11-25,0.025\nEUR,2031-11-25,0.03\nEUR,2036-11-25,0.034\n"
ODD = st.sampled_from(["", " ", "x", "nan", "inf", "-1", "0", "1e9", "2026-02-30", "2026-11-25", "1.03", "50", "2.5",
                       "TRUE", "call", "put", "payer", "bermudan", "ACT/999", "NONE", "12", '"', ";", "\u00e9"])
DATES = st.dates(min_value=np.datetime64("2024-01-01").astype(object),
                 max_value=np.datetime64("2034-12-31").astype(object)).map(str)


def names_the_file(err: trinom.InputError, path: Path) -> None:
    assert err.errors, err
    for _row, _field, message in err.errors:
        assert path.name in message, f"a message that does not name {path.name}: {message!r}"


def write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path.write_text(",".join(header) + "\n" + "".join(",".join(row) + "\n" for row in rows))
    return path


# --- trades.csv ------------------------------------------------------------------------------------------------------
@st.composite
def bond_rows(draw: st.DrawFn, k: int) -> list[dict[str, str]]:
    """A straight bond and the same bond callable and puttable (the invariant's triple), 2 to 8 years."""
    years = draw(st.integers(2, 8))
    issue = f"{draw(st.integers(2022, 2026))}-{draw(st.integers(1, 12)):02d}-15"
    maturity = f"{2026 + years}-{draw(st.integers(1, 12)):02d}-15"
    coupon = f"{draw(st.floats(0.0, 0.08)):.4f}"
    first = f"{2027 + draw(st.integers(0, max(years - 2, 0)))}-06-15"
    common = {"type": "bond", "issue": issue, "maturity": maturity, "coupon": coupon, "frequency": "2",
              "a": f"{draw(st.floats(0.02, 0.2)):.4f}", "sigma": f"{draw(st.floats(0.002, 0.02)):.4f}",
              "steps_per_year": str(draw(st.sampled_from([12, 24, 52]))),
              "notional": draw(st.sampled_from(["", "100", "1000000", "250"])),
              "settlement_days": draw(st.sampled_from(["", "0", "2", "3"]))}
    price = f"{draw(st.floats(95, 105)):.2f}"
    rows = [dict(common, id=f"S{k}")]
    for side in ("call", "put"):
        rows.append(dict(common, id=f"{side[0].upper()}{k}", option=side, exercise=draw(
            st.sampled_from(["bermudan", "american", "european"])), first_exercise=first, exercise_price=price))
    return rows


@st.composite
def rate_rows(draw: st.DrawFn, k: int) -> list[dict[str, str]]:
    """A payer and a receiver swaption, and a cap and a floor, each pair on the same terms."""
    start = f"{draw(st.integers(2027, 2029))}-{draw(st.integers(1, 12)):02d}-{draw(st.integers(1, 28)):02d}"
    end = f"{int(start[:4]) + draw(st.integers(2, 5))}{start[4:]}"
    rate = f"{draw(st.floats(-0.005, 0.06)):.4f}"
    model = {"a": f"{draw(st.floats(0.02, 0.2)):.4f}", "sigma": f"{draw(st.floats(0.002, 0.015)):.4f}",
             "steps_per_year": str(draw(st.sampled_from([12, 24]))), "notional": draw(st.sampled_from(["", "1e6"]))}
    cap_rate = f"{abs(float(rate)) + 0.001:.4f}"
    return [dict(model, id=f"SP{k}", type="swaption", start=start, maturity=end, rate=rate, option="payer",
                 exercise="european", first_exercise=start),
            dict(model, id=f"SR{k}", type="swaption", start=start, maturity=end, rate=rate, option="receiver",
                 exercise="european", first_exercise=start),
            dict(model, id=f"KC{k}", type="cap", start=start, maturity=end, rate=cap_rate,
                 **draw(st.sampled_from([{}, {"vol": "0.0085", "vol_kind": "normal"}]))),
            dict(model, id=f"KF{k}", type="floor", start=start, maturity=end, rate=cap_rate,
                 **draw(st.sampled_from([{}, {"vol": "0.25", "vol_kind": "shifted", "shift": "0.02"}])))]


@st.composite
def trades_books(draw: st.DrawFn) -> tuple[list[str], list[list[str]], set[int]]:
    """The header and rows of a trades.csv (triples of bonds, quadruples of rate trades) and which rows were damaged
    (a cell replaced by anything)."""
    records: list[dict[str, str]] = []
    for k in range(draw(st.integers(1, 2))):
        records += draw(bond_rows(k))
    if draw(st.booleans()):
        records += draw(rate_rows(0))
    header = [c for c in TRADE_COLUMNS if any(c in r for r in records)]
    rows = [[r.get(c, "") for c in header] for r in records]
    damaged: set[int] = set()
    for _ in range(draw(st.integers(0, 2))):
        row, column = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(header) - 1))
        if header[column] != "id":
            rows[row][column] = draw(ODD)
            damaged.add(row)
    return header, rows, damaged


@FUZZ
@given(book=trades_books())
def test_trades_files_price_every_row_or_name_its_line(tmp_path_factory, book):
    header, rows, damaged = book
    folder = tmp_path_factory.mktemp("trades")
    path = write(folder / "trades.csv", header, rows)
    curves = read_dated_curves(write(folder / "curve.csv", ["curve", "date", "zero"],
                                     [line.split(",") for line in CURVE_TEXT.splitlines()[1:]]), as_of=AS_OF)
    try:
        trades = read_trades(path, as_of=AS_OF)
    except trinom.InputError as err:  # a whole-file fault (a repeated or bad id, a stray quote): named
        names_the_file(err, path)
        return
    result = trinom.price(trades, curves, errors="mask", **C)
    check_result(result, len(rows))
    for k in np.flatnonzero(result.error != "").tolist():
        assert "trades.csv line" in result.error[k] or k in damaged, result.error[k]
    ok = result.error == ""
    ids = trades.ids
    price = dict(zip(ids, result.price, strict=True))
    good = {name for name, fine in zip(ids, ok, strict=True) if fine and ids.index(name) not in damaged}
    notional = trades.notionals()
    np.testing.assert_allclose(result.value, result.price * notional / 100, rtol=1e-12)
    # A worthless option's tree differs from the straight bond's in its last bits and in the growing tree's first
    # steps (the straight bond's flows there are raised to their curve value, docs: "Lowering rules"): 1e-5 per 100.
    slack = 1e-5
    for name in [n for n in good if n.startswith("S") and not n.startswith("S", 1) and n[1:].isdigit()]:
        k = name[1:]
        if f"C{k}" in good:  # a callable is worth at most its straight bond (the holder is short the call)
            assert price[f"C{k}"] <= price[name] + slack
        if f"P{k}" in good:  # a puttable at least
            assert price[f"P{k}"] >= price[name] - slack
    if {"SP0", "SR0"} <= good:  # payer - receiver: the forward swap, worth as much in both trees as its legs
        assert math.isfinite(price["SP0"] - price["SR0"])
        assert price["SP0"] >= -1e-9 and price["SR0"] >= -1e-9
    if {"KC0", "KF0"} <= good:
        assert price["KC0"] >= -1e-9 and price["KF0"] >= -1e-9
    column = dict(zip(header, zip(*rows, strict=True), strict=True))
    for k, name in enumerate(ids):  # a cap quoting a vol has a price off it; a bond settling apart its clean price
        if name not in good:
            continue
        if column.get("vol", [""] * len(rows))[k]:
            assert result.vol_price is not None and result.vol_price[k] >= -1e-12, (name, result.vol_price)
        if column.get("settlement_days", [""] * len(rows))[k]:
            assert result.settlement is not None and math.isfinite(result.settlement_clean[k]), name


@FUZZ
@given(notional=st.sampled_from([1.0, 100.0, 250.0, 1e6, 3.5e9]), data=st.data())
def test_a_price_is_per_100_of_notional_whatever_the_notional(tmp_path_factory, notional, data):
    header, rows, _damaged = data.draw(trades_books().filter(lambda b: not b[2]))
    column = header.index("notional")
    folder = tmp_path_factory.mktemp("notional")
    curves = read_dated_curves(write(folder / "curve.csv", ["curve", "date", "zero"],
                                     [line.split(",") for line in CURVE_TEXT.splitlines()[1:]]), as_of=AS_OF)
    base = trinom.price(read_trades(write(folder / "a.csv", header, [[*r[:column], "100", *r[column + 1:]]
                                                                      for r in rows]), as_of=AS_OF), curves,
                        errors="mask", **C)
    scaled = trinom.price(read_trades(write(folder / "b.csv", header, [[*r[:column], repr(notional), *r[column + 1:]]
                                                                        for r in rows]), as_of=AS_OF), curves,
                          errors="mask", **C)
    same = (base.error == "") & (scaled.error == "")
    np.testing.assert_allclose(scaled.price[same], base.price[same], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(scaled.value[same], base.price[same] * notional / 100, rtol=1e-12, atol=1e-9)


# --- curve.csv -------------------------------------------------------------------------------------------------------
@FUZZ
@given(rows=st.lists(st.tuples(st.sampled_from(["EUR", "USD", "", " EUR "]), st.one_of(DATES, ODD),
                               st.one_of(st.floats(-0.3, 1.5).map(lambda v: f"{v:.5f}"), ODD)), min_size=0, max_size=6),
       form=st.sampled_from(["zero", "discount"]))
def test_curve_files_read_as_written_or_name_the_file(tmp_path_factory, rows, form):
    path = write(tmp_path_factory.mktemp("curve") / "curve.csv", ["curve", "date", form], [list(r) for r in rows])
    try:
        curves = read_dated_curves(path, as_of=AS_OF)
    except trinom.InputError as err:
        names_the_file(err, path)
        return
    for name, curve in curves.items():  # every point as written, in range
        mine = [r for r in rows if r[0].strip() == name]
        if not mine[0][1].strip():  # a row without a date: a flat curve, alone in its curve, of a zero rate
            assert len(mine) == 1 and form == "zero"
            assert curve.zero_rate([0.5, 30.0]) == pytest.approx(float(mine[0][2]), rel=1e-12, abs=1e-12)
            continue
        assert len(curve.dates) == len(mine)
        for date, value in ((d, float(v)) for _n, d, v in mine):
            got = float(curve.discount([date])[0]) if form == "discount" else float(curve.zero_rate([date])[0]) \
                if hasattr(curve, "zero_rate") else None
            if got is not None and date != AS_OF:
                assert got == pytest.approx(value, rel=1e-12, abs=1e-12)
            low, high = trinom.model.dated_curve.PLAUSIBLE_ZERO_RATES
            if form == "zero":
                assert low <= value <= high


# --- schedule.csv and notionals.csv ------------------------------------------------------------------------------------
@FUZZ
@given(schedule=st.lists(st.tuples(st.sampled_from(["B1", "B2", "X"]), st.one_of(DATES, ODD),
                                   st.one_of(st.floats(80, 120).map(lambda v: f"{v:.2f}"), ODD)), max_size=5),
       notionals=st.lists(st.tuples(st.sampled_from(["B1", "B2"]), st.one_of(DATES, ODD),
                                    st.one_of(st.floats(0, 1e6).map(lambda v: f"{v:.0f}"), ODD)), max_size=3))
def test_side_tables_read_or_name_their_file_and_line(tmp_path_factory, schedule, notionals):
    folder = tmp_path_factory.mktemp("side")
    trades = write(folder / "trades.csv", ["id", "type", "notional", "issue", "maturity", "coupon", "frequency", "option",
                                           "exercise", "a", "sigma", "steps_per_year"],
                   [["B1", "bond", "1000000", "2024-03-15", "2032-03-15", "0.04", "2", "call", "bermudan", "0.05", "0.01",
                     "12"],
                    ["B2", "bond", "1000000", "2025-06-15", "2031-06-15", "0.05", "2", "", "", "0.05", "0.01", "12"]])
    sched = write(folder / "schedule.csv", ["id", "date", "price"], [list(r) for r in schedule])
    notes = write(folder / "notionals.csv", ["id", "date", "notional"], [list(r) for r in notionals])
    curves = read_dated_curves(write(folder / "curve.csv", ["curve", "date", "zero"],
                                     [line.split(",") for line in CURVE_TEXT.splitlines()[1:]]), as_of=AS_OF)
    try:
        book = read_trades(trades, as_of=AS_OF, schedule=sched, notionals=notes)
        result = trinom.price(book, curves, errors="mask", **C)
    except trinom.InputError as err:  # a side-table fault of the whole book (an id that is no trade): named
        for _row, _field, message in err.errors:
            assert "schedule.csv" in message or "notionals.csv" in message or "trades.csv" in message, message
        return
    check_result(result, 2)
    for message in result.error:
        assert message == "" or "line" in message, message


# --- vols.csv and model.csv ------------------------------------------------------------------------------------------
@FUZZ
@given(rows=st.lists(st.tuples(st.sampled_from(["EUR", "USD", ""]), st.sampled_from(["1Y", "5Y", "10Y", "0Y", "x", ""]),
                               st.sampled_from(["1Y", "5Y", "30Y", "-1Y", ""]),
                               st.one_of(st.floats(-0.01, 0.5).map(lambda v: f"{v:.5f}"), ODD),
                               st.sampled_from(["normal", "lognormal", "shifted", "x", ""])), max_size=6))
def test_vols_files_read_or_name_the_file(tmp_path_factory, rows):
    path = write(tmp_path_factory.mktemp("vols") / "vols.csv", ["curve", "expiry", "tenor", "vol", "kind"],
                 [list(r) for r in rows])
    try:
        quotes = read_vol_quotes(path)
    except trinom.InputError as err:
        names_the_file(err, path)
        return
    assert len(quotes) == len(rows)


@FUZZ
@given(rows=st.lists(st.tuples(st.sampled_from(["T1", "T2", ""]), st.sampled_from(["EUR", "USD", ""]),
                               st.one_of(st.floats(-0.1, 1).map(lambda v: f"{v:.4f}"), ODD),
                               st.one_of(st.floats(-0.01, 0.1).map(lambda v: f"{v:.4f}"), ODD),
                               st.sampled_from(["converged", "bound", "no fit", "", "fitted", "NO FIT"])), max_size=5))
def test_model_files_read_or_name_the_file_line_and_column(tmp_path_factory, rows):
    path = write(tmp_path_factory.mktemp("model") / "model.csv", ["id", "curve", "a", "sigma", "status"],
                 [list(r) for r in rows])
    try:
        model = read_model_file(path)
    except trinom.InputError as err:
        names_the_file(err, path)
        return
    for (a, sigma) in [*model.trades.values(), *model.curves.values()]:
        assert a > 0 and sigma > 0 and math.isfinite(a) and math.isfinite(sigma)


# --- trinom calibrate ----------------------------------------------------------------------------------------------------
@FUZZ
@given(vols=st.lists(st.tuples(st.sampled_from(["1Y", "2Y", "5Y"]), st.sampled_from(["1Y", "5Y", "10Y"]),
                               st.one_of(st.floats(0.001, 0.02).map(lambda v: f"{v:.5f}"), ODD)), min_size=1, max_size=5),
       per_trade=st.booleans(), a=st.sampled_from([None, "0.05", "-1", "x"]))
def test_calibrate_ends_in_0_or_2_never_a_traceback(tmp_path_factory, vols, per_trade, a):
    from trinom.cli import main

    folder = tmp_path_factory.mktemp("calibrate")
    curve = folder / "curve.csv"
    curve.write_text(CURVE_TEXT)
    quotes = write(folder / "vols.csv", ["curve", "expiry", "tenor", "vol", "kind"],
                   [["EUR", e, t, v, "normal"] for e, t, v in vols])
    trades = write(folder / "trades.csv", ["id", "type", "issue", "maturity", "coupon", "frequency", "option",
                                           "exercise", "first_exercise", "last_exercise", "exercise_price", "a", "sigma"],
                   [["B1", "bond", "2024-03-15", "2032-03-15", "0.04", "2", "call", "bermudan", "2027-03-15",
                     "2031-09-15", "100", "0.05", "0.01"]])
    out = folder / "model.csv"
    argv = ["calibrate", *([str(trades)] if per_trade else []), "--curve", str(curve), "--vols", str(quotes), "--as-of",
            AS_OF, "--out", str(out), *(["--a", a] if a is not None else [])]
    err = text_io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(text_io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own refusal (a bad --a)
            code = exit_.code
    assert code in (0, 2), err.getvalue()
    assert "Traceback" not in err.getvalue()
    if code == 0:
        model = read_model_file(out)  # what calibrate writes reads back
        assert model.trades or model.curves or model.unfitted
