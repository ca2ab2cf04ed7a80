"""Property-based fuzzing (hypothesis) of the bump-and-reprice surfaces: ``trinom.risk``, ``trinom.oas`` and
``trinom.price(..., scenarios=[...])`` (issue 24, item 4).

The properties, for any input: an argument of the wrong type or value is a ``TypeError``/``ValueError`` (or an
:class:`~trinom.InputError`) whose message names it, and only such an argument is refused; otherwise every
input row gets its values or a message saying why not (never a NaN without a message, never another
exception); and what is accepted is right: the CPU engines agree on risk, a converged spread reprices to its
market price, and each scenario of a grid is the market moved by hand and priced alone. Same style and budget
as ``tests/test_fuzz.py``: deterministic examples (60 a test; ``TRINOM_FUZZ_EXAMPLES=N`` runs N fresh ones)
on small trees, on the Futhark ``c`` target (and the NumPy reference where engines are compared).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import trinom
from hypothesis import event, given
from hypothesis import strategies as st
from test_fuzz import BOND_FIELDS, FUZZ, GOOD, LIMITS, NUMBERS
from trinom.analytics.oas import CONVERGED, OUTSIDE, TOLERANCES
from trinom.analytics.risk import COLUMNS, F64_SHIFTS, MEASURES
from trinom.bonds.generator import generate_bonds
from trinom.scenarios import CurveSet, CurveShift, SigmaShift, SpreadShift

C = {"backend": "futhark", "target": "c"}
REFERENCE = {"backend": "reference"}
#: Bond trees of up to 11 years of monthly steps; the limits make a fuzzed maturity or sigma a bad row, not a slow one.
BOND_LIMITS = {"max_width": 201, "max_steps": 400}
NAN, INF = float("nan"), float("inf")


# --- books ---------------------------------------------------------------------------------------------------------
def mostly(good: st.SearchStrategy, odd: st.SearchStrategy, one_in: int = 6) -> st.SearchStrategy:
    """``odd`` once in ``one_in`` draws, else ``good`` (so that most examples get past the argument checks)."""
    return st.integers(0, one_in - 1).flatmap(lambda k: odd if k == one_in - 1 else good)


@cache
def short_bonds(seed: int) -> tuple[trinom.BondPortfolio, tuple[trinom.YieldCurve, ...]]:
    """Four of the paper's S1 bonds of at most 11 years (its 100-year ones cost the reference a second)."""
    bonds, curves = generate_bonds("S1", 24, seed=seed)
    return bonds[np.flatnonzero(bonds.maturity < 11)[:4]], curves


@st.composite
def option_books(draw: st.DrawFn) -> trinom.Portfolio:
    """One to four options (expiring by their maturity, some deep out of or in the money: worth nothing, or their
    intrinsic value), good or with a cell or two replaced by any number (bad rows, not bad tables)."""
    rows = draw(st.integers(1, 4))
    columns: dict[str, list] = {field: [draw(GOOD[field]) for _ in range(rows)] for field in trinom.FIELDS}
    columns["expiry"] = [maturity * draw(st.floats(0, 1)) for maturity in columns["maturity"]]
    columns["strike"] = [draw(st.one_of(st.floats(0, 200), st.sampled_from([0.0, 100.0, 150.0]))) for _ in range(rows)]
    for _ in range(draw(st.integers(0, 2))):
        field = draw(st.sampled_from([f for f in trinom.FIELDS if f != "option_type"]))
        columns[field][draw(st.integers(0, rows - 1))] = draw(NUMBERS)
    return trinom.Portfolio(**columns)


@st.composite
def bond_books(draw: st.DrawFn) -> tuple[trinom.BondPortfolio, tuple[trinom.YieldCurve, ...]]:
    """Short S1 bonds, good or with a field or two replaced by any number (where the constructor takes it)."""
    bonds, curves = short_bonds(draw(st.integers(0, 3)))
    cells = st.one_of(NUMBERS, st.floats(0, 4))  # anything, or a number of the size of a, sigma or a spread
    changes = draw(st.lists(st.tuples(st.sampled_from(BOND_FIELDS), st.integers(0, 40), cells), max_size=2))
    if not changes:
        return bonds, curves
    fields = {name: np.asarray(values, dtype=np.float64).copy() for name, values in bonds.as_dict().items()}
    for field, position, value in changes:
        fields[field][position % fields[field].size] = value
    try:
        return trinom.BondPortfolio(**fields), curves
    except trinom.InputError:  # a table the constructor refuses (tests/test_fuzz.py fuzzes that): the book as it was
        return bonds, curves


def names_one_of(err: BaseException, words: set[str]) -> None:
    """``err``'s message names one of ``words`` (the arguments given a wrong type or value)."""
    assert words, f"an argument was refused that the documentation accepts: {type(err).__name__}: {err}"
    assert any(word in str(err) for word in words), f"{type(err).__name__} names none of {sorted(words)}: {err}"


def check_refusal(err: BaseException, bad: set[str]) -> None:
    """A call refused in mask mode: for an argument it documents as wrong (``bad``, named by the message), never for
    a row."""
    assert not isinstance(err, trinom.InputError) or bad, f"mask mode raised for a row: {err}"
    names_one_of(err, bad)
    event(f"refused: {type(err).__name__} ({', '.join(sorted(bad))})")


def real_problem(value: object, least: float = 0.0) -> bool:
    """Whether ``value`` is not what a shift must be: a finite real number (not a bool) in ``trinom.risk``'s range
    (``F64_SHIFTS``) and >= ``least``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return True
    number = float(value)
    return not (math.isfinite(number) and F64_SHIFTS[0] <= number <= F64_SHIFTS[1] and number >= least)


def sequence_problem(value: object) -> bool:
    """Whether ``value`` is no list of things (a string, a number, None...)."""
    return not (isinstance(value, Sequence) and not isinstance(value, (str, bytes))) and not (
        isinstance(value, np.ndarray) and value.ndim == 1)


# --- risk ----------------------------------------------------------------------------------------------------------
MEASURE_LISTS = mostly(
    st.one_of(st.none(), st.lists(st.sampled_from(MEASURES), min_size=1, max_size=3, unique=True)),
    st.one_of(st.lists(st.sampled_from([*MEASURES, "theta", "", "DV01", " krd", 3, None]), max_size=4),
              st.sampled_from(["dv01", ("vega",), np.array(["dv01", "krd"]), {"dv01": 1}, 7])))
SHIFTS = mostly(st.one_of(st.none(), st.floats(1e-5, 1e-2), st.sampled_from([1e-4, 1e-3, np.float32(1e-3)])),
                st.sampled_from([0, 0.0, -1e-4, NAN, INF, -INF, 1e10, 1.0, 1e300, 1e-300, 1e-9, "1e-4", True,
                                 np.float64(2e-4), np.int64(1), b"1", None]))


def risk_argument_problems(measures: Any, shift: Any, sigma_shift: Any, ids: Any, rows: int, bonds: bool,
                           precision: str) -> set[str]:
    """The words one of which a refusal must name (the arguments with a wrong type or value); empty: all good."""
    words: set[str] = set()
    if measures is not None:
        if sequence_problem(measures):
            words.add("measures")
        else:
            listed = list(measures)
            odd = [m for m in listed if not isinstance(m, str) or m not in MEASURES or listed.count(m) > 1]
            misplaced = [m for m in listed if (m == "spread_duration" and not bonds)
                         or (m == "convexity" and precision == "f32")]
            if not listed or odd or misplaced:
                words |= {"measure", *map(str, misplaced)}
    least = 1e-3 if precision == "f32" else 0.0
    if shift is not None and real_problem(shift, least):
        words.add("shift")
    if sigma_shift is not None and real_problem(sigma_shift, least):
        words.add("sigma_shift")
    if ids is not None and (sequence_problem(ids) or len(ids) != rows or len({str(i) for i in ids}) != rows):
        words.add("ids")
    return words


def check_risk_table(table: Any, names: list[str], chosen: list[str], curve_sizes: list[int]) -> None:
    """One row per input row and measure (a key rate per pillar of the row's curve); every value a number or
    NaN with a message, and a message only beside NaN."""
    assert list(table.columns) == COLUMNS
    assert set(table.measure) == set(chosen)
    for measure in chosen:
        part = table[table.measure == measure]
        if measure == "krd":
            assert sorted(part.id.value_counts().items()) == sorted(zip(names, curve_sizes, strict=True))
        else:
            assert part.id.tolist() == names
    value, base, error = table.value.to_numpy(), table.base.to_numpy(), table.error.to_numpy()
    silent = (~np.isfinite(value) | ~np.isfinite(base)) & (error == "")
    assert not silent.any(), f"values without a number and without a message:\n{table[silent]}"
    loud = np.isfinite(value) & (error != "")
    assert not loud.any(), f"values with an error message:\n{table[loud]}"


def risk_tolerance(table: Any, shift: float, sigma_shift: float) -> np.ndarray:
    """How far two engines' measures may differ where their prices differ by 1e-12 relative (of at least the
    face value, 100) plus 1e-10: each measure's difference quotient applied to that, ten times over, plus 1e-6
    of the measure (README: the Futhark engine agrees with the reference to 1e-6)."""
    p0 = np.abs(table.base.to_numpy())
    measure = table.measure.to_numpy()
    with np.errstate(all="ignore"):
        delta = 1e-12 * np.maximum(3 * p0, 100.0) + 1e-10
        bound = np.select([measure == "dv01", measure == "convexity", measure == "vega"],
                          [2 * delta * 1e-4 / shift, 4 * delta / (p0 * shift * shift), delta * 1e-4 / sigma_shift],
                          delta / (p0 * shift))  # duration, key rates, spread duration
    return 10 * bound + 1e-6 * np.abs(table.value.to_numpy())


@FUZZ
@given(data=st.data(), kind=st.sampled_from(["options", "bonds"]), measures=MEASURE_LISTS, shift=SHIFTS,
       sigma_shift=SHIFTS, precision=st.sampled_from(["f64", "f64", "f32"]),
       ids=mostly(st.sampled_from([None, None, "given", "numbers"]), st.sampled_from(["short", "long", "repeated", "text"])))
def test_risk_gives_every_row_its_measures_or_a_message(data, kind, measures, shift, sigma_shift, precision, ids):
    """``trinom.risk`` on option and bond books with bad rows, odd measure lists, shifts and ids, float32 and
    float64: a TypeError/ValueError naming the odd argument, or a long table with every input row's measures,
    each value a number or NaN with its message; ``errors="raise"`` the same table or an InputError naming rows
    that have messages; the reference engine's measures those of Futhark's ``c`` target (see
    :func:`risk_tolerance`)."""
    if kind == "options":
        book, curves, limits = data.draw(option_books()), data.draw(st.sampled_from(
            [None, {"EUR": trinom.YieldCurve([0.02, 0.03, 0.035], [90, 730, 3650])}])), LIMITS
    else:
        (book, curves), limits = data.draw(bond_books()), BOND_LIMITS
    rows = len(book)
    row_ids = None if ids is None else {
        "given": [f"r{k}" for k in range(rows)], "short": [f"s{k}" for k in range(rows - 1)],
        "long": list(range(rows + 1)), "repeated": ["x"] * rows, "text": "abcd"[:rows], "numbers": list(range(rows))}[ids]
    bad = risk_argument_problems(measures, shift, sigma_shift, row_ids, rows, kind == "bonds", precision)
    arguments = dict(measures=measures, shift=shift, sigma_shift=sigma_shift, ids=row_ids, precision=precision,
                     **limits, **C)
    try:
        with np.errstate(all="ignore"):
            masked = trinom.risk(book, curves, errors="mask", **arguments)
    except (TypeError, ValueError) as err:
        check_refusal(err, bad)
        return
    assert not bad, f"risk accepted arguments it documents as wrong ({sorted(bad)})"
    names = [str(i) for i in row_ids] if row_ids is not None else [str(k) for k in range(rows)]
    market = trinom.Market.of(curves)
    chosen = list(measures) if measures is not None else [
        m for m in MEASURES if (kind == "bonds" or m != "spread_duration") and not (precision == "f32" and m == "convexity")]
    index = np.zeros(rows) if kind == "options" else np.nan_to_num(book.curve_index.astype(np.float64), nan=0)
    sizes = [len(market.curves[int(k)]) for k in index.clip(0, len(market.curves) - 1)]
    check_risk_table(masked, names, chosen, sizes)
    failed = sorted({names.index(i) for i in masked.id[masked.error != ""]})
    event(f"a table, {'some' if failed else 'no'} rows with messages{', a base price 0' if (masked.base == 0).any() else ''}")
    try:  # errors="raise": the same table where no row failed, else an InputError naming rows that failed
        with np.errstate(all="ignore"):
            raised = trinom.risk(book, curves, errors="raise", **arguments)
        assert not failed, f"rows {failed} have messages with errors='mask' but errors='raise' raised nothing"
        np.testing.assert_array_equal(raised.value.to_numpy(), masked.value.to_numpy())
    except trinom.InputError as err:
        assert failed and set(err.rows) <= set(failed) and all(message for _r, _f, message in err.errors), err
    if precision == "f64":  # the CPU engines agree on what is accepted
        with np.errstate(all="ignore"):
            reference = trinom.risk(book, curves, errors="mask", **{**arguments, "target": None, **REFERENCE})
        assert reference[["id", "measure", "factor"]].equals(masked[["id", "measure", "factor"]])
        theirs_said, ours_said = (reference.error != "").to_numpy(), (masked.error != "").to_numpy()
        in_range = ~reference.error.str.contains("range").to_numpy() & ~masked.error.str.contains("range").to_numpy()
        assert (theirs_said == ours_said)[in_range].all(), "the engines find different rows bad (not by float range)"
        both = ~theirs_said & ~ours_said  # the engines' float ranges differ (scaled levels): compare where both price
        ours, theirs = masked.value.to_numpy()[both], reference.value.to_numpy()[both]
        assert (np.isfinite(ours) == np.isfinite(theirs)).all(), "one engine has a number where the other has none"
        good = np.isfinite(theirs)
        h = 1e-4 if shift is None else float(shift)
        v = 1e-4 if sigma_shift is None else float(sigma_shift)
        with np.errstate(all="ignore"):
            miss, allowed = np.abs(theirs - ours)[good], risk_tolerance(reference[both], h, v)[good]
        assert (miss <= allowed).all(), f"reference and futhark differ:\n{reference[both][good][miss > allowed]}"


# --- OAS -----------------------------------------------------------------------------------------------------------
PRICE_KINDS = mostly(st.one_of(st.floats(0.9, 1.1), st.sampled_from(
    [1.0, NAN, -1.0, 0.0, INF, -INF, None, 1e-300, 1e6, 1e-6, 1e300, np.float32(100.0)])),
    st.sampled_from(["x", "101.5", 1 + 2j]), one_in=40)


@FUZZ
@given(data=st.data(), kinds=st.lists(PRICE_KINDS, min_size=4, max_size=4),
       count=mostly(st.just(0), st.sampled_from([-1, 1]), one_in=10),
       shape=mostly(st.sampled_from(["list", "array", "column"]), st.just("text"), one_in=10),
       price_type=mostly(st.sampled_from(["clean", "dirty"]), st.sampled_from(["Clean", None]), one_in=10),
       bracket=mostly(st.sampled_from([(-20.0, 50.0), (-20.0, 50.0), (-5, 5), [-1.0, 30]]),
                      st.sampled_from([(5, -5), (NAN, 1.0), (0, 0), (-1.0,), "ab", (-INF, 1.0), ("0", 1)]), one_in=10),
       search=mostly(st.sampled_from(["auto", "batched"]), st.sampled_from(["engine", "fast", None]), one_in=10),
       precision=st.sampled_from(["f64", "f64", "f32"]))
def test_oas_gives_every_bond_a_spread_or_a_reason(data, kinds, count, shape, price_type, bracket, search, precision):
    """A market price per bond made from the model's (times a factor, or replaced by anything): every bond
    converges, and its spread reprices to the market, or gets a status saying why not."""
    bonds, curves = data.draw(bond_books())
    with np.errstate(all="ignore"):
        model = trinom.price(bonds, curves, errors="mask", precision=precision, **BOND_LIMITS, **C)
    base = model.clean if price_type != "dirty" else model.price
    n = len(bonds)

    def scaled(kind: Any, k: int) -> Any:  # a factor times the model's price, else the value itself
        factor = isinstance(kind, float) and (0.5 < kind < 2 or kind in (1e6, 1e-6))
        return kind * float(base[k]) if factor else kind

    market = [scaled(kind, k) for k, kind in enumerate((kinds * 2)[:n])]
    market = market[:n + count] if count <= 0 else [*market, 100.0]
    given_prices: Any = {"list": market, "array": np.array(market, dtype=object), "text": "100",
                         "column": [[p] for p in market]}[shape]
    bad: set[str] = set()
    if shape == "text" or len(market) != n or any(isinstance(p, (str, complex)) and p != "101.5" for p in market):
        bad.add("market_prices")
    if price_type not in ("clean", "dirty"):
        bad.add("price_type")
    if search not in ("auto", "batched", "engine") or search == "engine":  # the CPU engines have no search of their own
        bad.add("search")
    if not (isinstance(bracket, (tuple, list)) and len(bracket) == 2 and all(
            isinstance(end, (int, float)) and math.isfinite(end) for end in bracket) and bracket[0] < bracket[1]):
        bad.add("bracket")
    arguments = dict(price_type=price_type, bracket=bracket, search=search, precision=precision, **BOND_LIMITS, **C)
    try:
        with np.errstate(all="ignore"):
            result = trinom.oas(bonds, curves, given_prices, errors="mask", **arguments)
    except (TypeError, ValueError) as err:
        check_refusal(err, bad)
        return
    assert not bad, f"oas accepted arguments it documents as wrong ({sorted(bad)}): {given_prices!r}"
    goal = np.array([NAN if p is None else float(p) for p in market])  # what the documentation says they are
    assert result.oas.shape == result.price.shape == result.status.shape == result.iterations.shape == (n,)
    converged = result.status == CONVERGED
    event(f"{int(converged.sum())} of {n} converged")
    assert all(isinstance(s, str) and s for s in result.status), result.status
    assert (result.error == np.where(converged, "", result.status)).all()
    usable = np.isfinite(goal) & (goal > 0)
    for k in np.flatnonzero(~usable):
        assert "market price" in result.status[k], (k, goal[k], result.status[k])
    for k in np.flatnonzero(model.error != ""):
        assert not converged[k] and result.status[k], (k, result.status[k])
    low, high = bracket
    assert ((result.oas[converged] >= low) & (result.oas[converged] <= high)).all()
    dirty_goal = goal + (model.accrued if price_type == "clean" else 0.0)
    absolute, relative = TOLERANCES[precision]  # the documented defaults: converged means within both
    miss = np.abs(result.price - goal)
    assert (miss[converged] <= absolute).all() and (miss[converged] <= relative * dirty_goal[converged]).all()
    rows = np.flatnonzero(converged)
    if rows.size:  # a converged spread reprices to the market price (README: to 1e-8 in float64)
        at_oas = trinom.BondPortfolio(**{**bonds[rows].as_dict(), "spread": result.oas[rows]})
        again = trinom.price(at_oas, curves, precision=precision, **BOND_LIMITS, **C)
        value = again.clean if price_type == "clean" else again.price
        tolerance = np.maximum(1e-8, 1e-10 * dirty_goal[rows]) if precision == "f64" else relative * dirty_goal[rows]
        assert (np.abs(value - goal[rows]) <= tolerance).all(), (value, goal[rows], result.oas[rows])
    if tuple(bracket) == (-20.0, 50.0):  # a million times the model's price, or a millionth, is beyond any spread
        for k, kind in enumerate((kinds * 2)[:n]):  # of a bond of at most 11 years at a spread inside the bracket
            ordinary = -20 < bonds.spread[k] < 50 and bonds.maturity[k] <= 11 and bonds.term_unit[k] == 360
            if kind in (1e6, 1e-6) and model.error[k] == "" and usable[k] and ordinary:
                assert result.status[k] == OUTSIDE, (k, kind, result.status[k])
    invalid = {row for row, _f, _m in bonds.validate(trinom.Market.of(curves).curves, **BOND_LIMITS)}
    try:  # errors="raise": an InputError naming every bond with a bad market price or bad input, else the same
        with np.errstate(all="ignore"):
            raised = trinom.oas(bonds, curves, given_prices, errors="raise", **arguments)
        assert usable.all() and not invalid
        np.testing.assert_array_equal(raised.oas, result.oas)
    except trinom.InputError as err:
        named = {row for row, _f, _m in err.errors}
        assert named == set(np.flatnonzero(~usable)) | invalid, err
        priced = {row for row, field, _m in err.errors if field == "market_prices"}
        assert priced == set(np.flatnonzero(~usable)), err


# --- scenario grids ------------------------------------------------------------------------------------------------
SCENARIO_SHIFTS = mostly(st.one_of(st.floats(-0.05, 0.05), st.sampled_from([0.0, 1e-4, -1e-4, 0.5, np.float32(1e-3), 3])),
                         st.sampled_from([NAN, INF, "1e-4", None, True]), one_in=12)
SIGMA_SHIFTS = mostly(st.one_of(st.floats(-0.02, 0.02), st.sampled_from([-1.0, 1e-4, 1e300])),
                      st.sampled_from([NAN, "0.1"]), one_in=12)


@st.composite
def scenario_specs(draw: st.DrawFn, names: list[str]) -> tuple[str, tuple]:
    """A scenario's kind and the arguments it is made of (made in the test: a bad argument is part of the fuzz)."""
    kind = draw(mostly(st.sampled_from(["none", "curve", "curve", "set", "sigma", "spread"]), st.just("odd"), one_in=12))
    if kind == "curve":
        curve = draw(mostly(st.one_of(st.none(), st.sampled_from(names)), st.sampled_from(["XX", "", 0]), one_in=12))
        pillar = draw(mostly(st.one_of(st.none(), st.integers(0, 3), st.integers(0, 14)),
                             st.sampled_from([-1, 15, 1.0, "2", True]), one_in=12))
        return kind, (draw(SCENARIO_SHIFTS), curve, pillar)
    if kind == "set":
        points = draw(st.integers(1, 4))
        days = sorted(draw(st.lists(st.integers(1, 5000), min_size=points, max_size=points, unique=True)))
        curve = trinom.YieldCurve(draw(st.lists(st.floats(-0.02, 0.1), min_size=points, max_size=points)), days)
        name = draw(mostly(st.sampled_from(names), st.sampled_from(["XX", 7]), one_in=12))
        value = draw(mostly(st.just(curve), st.sampled_from([[0.03], None]), one_in=12))
        return kind, (draw(mostly(st.just({name: value}), st.just([value]), one_in=12)),)
    if kind == "sigma":
        return kind, (draw(SIGMA_SHIFTS),)
    if kind == "spread":
        return kind, (draw(st.one_of(SCENARIO_SHIFTS, st.sampled_from([-100.0, 1e300]))),)
    if kind == "odd":
        return kind, (draw(st.sampled_from(["up", 1e-4, {"shift": 1e-4}, ("curve", 1e-4)])),)
    return kind, ()


def made_scenario(kind: str, arguments: tuple, names: list[str], curves: Sequence[trinom.YieldCurve]) -> tuple[Any, bool]:
    """The scenario (or a refusal, raised) and whether the documentation makes it a scenario of this market."""
    if kind == "none":
        return None, True
    if kind == "odd":
        return arguments[0], False
    if kind == "curve":
        scenario = CurveShift(*arguments)  # a shift, curve or pillar of the wrong type or value is refused here
        good = scenario.curve is None or scenario.curve in names
        if scenario.pillar is not None:
            room = (max(map(len, curves)) if scenario.curve is None else
                    len(curves[names.index(scenario.curve)]) if good else 0)
            good &= scenario.pillar < room
        return scenario, good
    if kind == "set":
        (mapping,) = arguments
        scenario = CurveSet(mapping)
        return scenario, all(name in names for name in scenario.curves)
    (shift,) = arguments
    return (SigmaShift if kind == "sigma" else SpreadShift)(shift), True


def moved_by_hand(book: Any, names: list[str], curves: Sequence[trinom.YieldCurve], scenario: Any) -> tuple[Any, dict]:
    """The book and its named curves as ``scenario`` moves them, made here field by field."""
    curves = list(curves)
    if isinstance(scenario, CurveShift):
        for k, (name, curve) in enumerate(zip(names, curves, strict=True)):
            if scenario.curve not in (None, name):
                continue
            rates = np.array(curve.rates, dtype=np.float64)
            if scenario.pillar is None:
                rates = rates + scenario.shift
            elif scenario.pillar < len(rates):
                rates[scenario.pillar] += scenario.shift
            curves[k] = trinom.YieldCurve(rates, curve.days)
    elif isinstance(scenario, CurveSet):
        curves = [scenario.curves.get(name, curve) for name, curve in zip(names, curves, strict=True)]
    moved = dict(zip(names, curves, strict=True))
    field = "sigma" if isinstance(scenario, SigmaShift) else "spread" if isinstance(scenario, SpreadShift) else None
    if field is None or not hasattr(book, field):
        return book, moved
    extra = {"convention": book.convention} if isinstance(book, trinom.Portfolio) else {}
    with np.errstate(over="ignore"):
        return type(book)(**{**book.as_dict(), field: getattr(book, field) + scenario.shift}, **extra), moved


@FUZZ
@given(data=st.data(), kind=st.sampled_from(["options", "bonds"]), named=st.booleans(),
       count=mostly(st.integers(1, 4), st.just(0), one_in=40))
def test_each_scenario_of_a_grid_is_its_market_moved_by_hand(data, kind, named, count):
    """``trinom.price(book, curves, scenarios=[...])``: prices of shape ``(len(scenarios), rows)`` (a list of one
    included), each scenario's row the book priced alone in the market moved by hand, to 1e-12 relative; a row
    that some scenario cannot price has its message and NaN in that scenario (in every one where the row itself is
    bad); a scenario the documentation does not allow is refused naming it."""
    if kind == "options":
        book, limits = data.draw(option_books()), LIMITS
        base = [trinom.YieldCurve.thesis(), trinom.YieldCurve([0.01, 0.04], [30, 1825])]
        names = ["EUR", "USD"] if named else ["default"]
        base = base[:len(names)]
        curves: Any = dict(zip(names, base, strict=True)) if named else base[0]
    else:
        (book, base), limits = data.draw(bond_books()), BOND_LIMITS
        names = ["EUR", "USD", "00", "0"] if named else ["0", "1", "2", "3"]
        curves = dict(zip(names, base, strict=True)) if named else base
    specs = [data.draw(scenario_specs(names)) for _ in range(count)]
    scenarios, allowed = [], count > 0  # an empty list is no grid
    for spec_kind, arguments in specs:
        try:
            scenario, good = made_scenario(spec_kind, arguments, names, base)
        except (TypeError, ValueError) as err:
            what = {"curve": "CurveShift", "set": "CurveSet", "sigma": "SigmaShift", "spread": "SpreadShift"}[spec_kind]
            assert what in str(err), err
            event(f"refused: {what}")
            return
        scenarios.append(scenario)
        allowed &= good
    try:
        with np.errstate(all="ignore"):
            grid = trinom.price(book, curves, scenarios=scenarios, errors="mask", **limits, **C)
    except (TypeError, ValueError) as err:
        assert not allowed, f"a grid of allowed scenarios was refused: {err}"
        if isinstance(err, trinom.InputError):
            assert err.errors and all(message for _r, _f, message in err.errors)
            assert all(row is None and field in ("scenarios", "curve") for row, field, _m in err.errors), err.errors
        else:
            assert "scenario" in str(err) or "curve" in str(err), err
        event(f"refused by price: {type(err).__name__}: {str(err)[:50]}")
        return
    assert allowed, f"scenarios the documentation does not allow were priced: {scenarios}"
    rows = len(book)
    assert grid.price.shape == (count, rows) and grid.error.shape == (rows,)
    event(f"a grid, {'some' if (grid.error != '').any() else 'no'} rows with messages")
    moved_errors = np.zeros(rows, dtype=bool)
    for s, scenario in enumerate(scenarios):
        moved_book, moved_curves = moved_by_hand(book, names, base, scenario)
        with np.errstate(all="ignore"):
            alone = trinom.price(moved_book, moved_curves if named or kind == "bonds" else moved_curves[names[0]],
                                 errors="mask", **limits, **C)
        moved_errors |= alone.error != ""
        # a row this scenario cannot price is NaN here; one it can is its price alone (issue 35: a scenario's move
        # of sigma or the spread that makes a row invalid masks that scenario only)
        good = alone.error == ""
        np.testing.assert_allclose(grid.price[s, good], alone.price[good], rtol=1e-12, atol=0,
                                   err_msg=f"scenario {s}: {scenario}")
        assert np.isnan(grid.price[s, ~good]).all(), (s, scenario, grid.price[s], alone.error)
    assert ((grid.error != "") == moved_errors).all(), (grid.error, moved_errors)
    assert np.isfinite(grid.price[:, grid.error == ""]).all()
    try:  # errors="raise": the same prices, or an InputError naming the rows that have messages
        with np.errstate(all="ignore"):
            raised = trinom.price(book, curves, scenarios=scenarios, **limits, **C)
        assert not moved_errors.any()
        np.testing.assert_array_equal(raised.price, grid.price)
    except trinom.InputError as err:
        assert set(err.rows) and set(err.rows) <= set(np.flatnonzero(moved_errors)), (err.rows, grid.error)
