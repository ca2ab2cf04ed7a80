"""Property-based fuzzing (hypothesis) of every reader, the constructors and ``trinom.price``.

The property, for any input: every row gets a price or an :class:`~trinom.InputError` naming its row
and field, never another exception; and on what is accepted, the CPU engines agree. Examples are
derived deterministically (``derandomize``) and bounded (60 a test), so the suite costs seconds in ``make
test``; ``TRINOM_FUZZ_EXAMPLES=N`` runs N fresh random ones instead;
trees are kept small by ``max_width``/``max_steps`` so that accepted rows price quickly. The newer surfaces are
fuzzed in the same style by ``tests/test_fuzz_risk.py`` (``trinom.risk``, ``trinom.oas``, scenario grids) and
``tests/test_fuzz_files.py`` (scenario files, Parquet books, the command line), which share these strategies.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import trinom
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trinom import io
from trinom.bonds.generator import generate_bonds
from trinom.io.bond_books import read_bonds, write_bonds

#: ``TRINOM_FUZZ_EXAMPLES=2000`` fuzzes longer, with fresh random examples (``make test`` runs 60, the same each time).
EXAMPLES = int(os.environ.get("TRINOM_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="TRINOM_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
#: Small trees only: accepted rows price in milliseconds on every CPU engine.
LIMITS = {"max_width": 61, "max_steps": 120}

NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64), st.integers(-10**12, 10**12),
                    st.sampled_from([0, 1, 365, 0.1, 1e-9, 1e30, -1, 2**31, 65536]))
CELLS = st.one_of(NUMBERS, st.sampled_from(["call", "PUT", " put ", "x", "", "1", "0", "nan"]), st.none())
GOOD = {"strike": st.floats(0, 200), "maturity": st.floats(0.1, 5), "expiry": st.floats(0, 5),
        "term_unit": st.sampled_from([365, 180, 90]), "term_steps": st.integers(1, 12),
        "a": st.floats(0.01, 0.5), "sigma": st.floats(0.001, 0.05), "option_type": st.sampled_from([0, 1, "call"])}


@st.composite
def portfolios(draw) -> dict[str, list]:
    """Option columns, each row good or with a few cells replaced by anything at all."""
    rows = draw(st.integers(1, 6))
    columns: dict[str, list] = {field: [draw(GOOD[field]) for _ in range(rows)] for field in trinom.FIELDS}
    for _ in range(draw(st.integers(0, 4))):
        field = draw(st.sampled_from(list(trinom.FIELDS)))
        columns[field][draw(st.integers(0, rows - 1))] = draw(CELLS)
    return columns


def check_result(result: trinom.Prices, rows: int) -> None:
    """A price or a message for every row, never both, never neither."""
    assert len(result) == rows
    for k in range(rows):
        if result.error[k]:
            assert math.isnan(result.price[k])
        else:
            assert math.isfinite(result.price[k])


@FUZZ
@given(columns=portfolios())
def test_portfolios_price_or_name_the_row_and_field(columns):
    try:
        portfolio = trinom.Portfolio(**columns)
    except trinom.InputError as err:
        assert all(field in trinom.FIELDS or field == "length" for _row, field, _m in err.errors)
        return
    result = trinom.price(portfolio, backend="reference", errors="mask", **LIMITS)
    check_result(result, len(portfolio))
    bad = sorted({k for k in range(len(portfolio)) if result.error[k]})
    try:
        trinom.price(portfolio, backend="reference", **LIMITS)
        assert not bad
    except trinom.InputError as err:  # validation's rows, or (once valid) the rows whose trees overflowed
        assert set(err.rows) <= set(bad) and err.rows and all(field in trinom.FIELDS for _r, field, _m in err.errors)
    good = [k for k in range(len(portfolio)) if not result.error[k]]
    if good:  # the CPU engines agree on what is accepted
        futhark = trinom.price(portfolio[good], backend="futhark", target="c", **LIMITS).price
        np.testing.assert_allclose(futhark, result.price[good], rtol=1e-12, atol=1e-10)


@FUZZ
@given(rates=st.lists(CELLS, max_size=5), days=st.lists(CELLS, max_size=5))
def test_curves_are_made_or_refused_with_an_input_error(rates, days):
    try:
        curve = trinom.YieldCurve(rates, days)
    except trinom.InputError as err:
        assert err.errors and all(field in ("rates", "days") for _r, field, _m in err.errors)
        return
    assert len(curve) == len(rates) and np.all(np.diff(curve.days) > 0)


TEXT = st.lists(st.sampled_from([*"[]0123456789.,-e \n\tf64inaxcalputrsk;\"'", "\ufeff", "f64.inf", "empty([0]f64)"]),
               max_size=60).map("".join)


@FUZZ
@given(text=TEXT, suffix=st.sampled_from([".in", ".csv"]), header=st.booleans())
def test_readers_return_a_portfolio_or_an_input_error(tmp_path_factory, text, suffix, header):
    path = tmp_path_factory.mktemp("fuzz") / f"book{suffix}"
    path.write_text((",".join(trinom.FIELDS) + "\n" if header and suffix == ".csv" else "") + text)
    for errors in ("raise", "mask"):
        try:
            portfolio = io.read_portfolio(path, errors=errors)
        except trinom.InputError:
            continue
        check_result(trinom.price(portfolio, backend="reference", errors="mask", **LIMITS), len(portfolio))
    try:
        io.read_yield_curve(path)
    except trinom.InputError:
        pass
    try:
        read_bonds(path)
    except trinom.InputError:
        pass


BOND_FIELDS = ["term_unit", "term_steps", "a", "sigma", "maturity", "spread", "option_type", "strike",
               "first_exercise", "last_exercise", "exercise_frequency", "curve_index", "cashflow_step", "coupon"]


@FUZZ
@given(changes=st.lists(st.tuples(st.sampled_from(BOND_FIELDS), st.integers(0, 40), CELLS), max_size=3))
def test_bonds_price_or_name_the_row_and_field(changes):
    bonds, curves = generate_bonds("S1", 4, seed=3)
    fields = {name: np.asarray(values, dtype=object).copy() for name, values in bonds.as_dict().items()}
    for field, position, value in changes:
        fields[field][position % fields[field].size] = value
    try:
        portfolio = trinom.BondPortfolio(**fields)
    except trinom.InputError as err:
        assert err.errors
        return
    result = trinom.price(portfolio, curves, backend="reference", errors="mask", max_width=201, max_steps=400)
    check_result(result, len(portfolio))
    good = [k for k in range(len(portfolio)) if not result.error[k]]
    if good:
        futhark = trinom.price(portfolio[good], curves, backend="futhark", target="c").price
        np.testing.assert_allclose(futhark, result.price[good], rtol=1e-12, atol=1e-10)


WORDS = st.sampled_from(["x", "", "1", "nan", "f64.inf", "-0", "1e999", "call", "[", "]", "--", ",", "0.5"])


@FUZZ
@given(suffix=st.sampled_from([".in", ".csv"]), hits=st.lists(st.tuples(st.integers(0, 10**6), WORDS), max_size=3))
def test_bond_files_with_bad_cells_read_or_name_the_row(tmp_path_factory, suffix, hits):
    """Cells of a good bond file (any of its files) replaced by other text: with ``errors="mask"`` every bond
    gets a price or its message; nothing else is raised."""
    folder = tmp_path_factory.mktemp("bonds")
    bonds, curves = generate_bonds("S1", 3, seed=5)
    path = folder / f"bonds{suffix}"
    write_bonds(bonds, curves, path)
    files = sorted(folder.iterdir())
    for position, word in hits:
        target = files[position % len(files)]
        cells = target.read_text().replace("\n", ",\n").split(",")
        k = position % len(cells)
        cells[k] = cells[k].replace(cells[k].strip(" []\n"), word, 1) if cells[k].strip(" []\n") else cells[k]
        target.write_text(",".join(cells).replace(",\n", "\n"))
    for errors in ("raise", "mask"):
        try:
            read, read_curves = read_bonds(path, errors=errors)
        except trinom.InputError as err:
            assert err.errors
            continue
        check_result(trinom.price(read, read_curves, backend="reference", errors="mask", max_width=201,
                                  max_steps=400), len(read))


def test_the_fuzz_files_are_written_where_pytest_says(tmp_path: Path):
    """A guard for the file fuzzing above: an empty file is an InputError naming it."""
    path = tmp_path / "empty.csv"
    path.write_text("")
    try:
        io.read_portfolio(path)
    except trinom.InputError as err:
        assert str(path) in str(err)
