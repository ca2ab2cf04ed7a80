"""pandas and Python types (issue 35, item 6): what pandas produces for a valid book (``read_csv(parse_dates=...)``:
NaT; nullable dtypes: ``pd.NA``) reads as empty cells; booleans are refused as numbers and as option types; a wrong
argument type gets a message saying what it may be, not a library's AttributeError."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
import trinom
from trinom.instruments import Trades
from trinom.model import DatedCurve, calibrate

AS_OF = "2026-11-25"
CSV = ("id,type,issue,maturity,coupon,frequency,option,exercise,first_exercise,last_exercise,exercise_price,a,sigma\n"
       "B1,bond,2024-03-15,2034-03-15,0.05,2,call,bermudan,2029-03-15,2033-09-15,100,0.05,0.01\n"
       "B2,bond,2024-03-15,2034-03-15,0.04,2,,,,,,0.05,0.01\n")
CURVES = {"EUR": DatedCurve(as_of=AS_OF, dates=["2036-11-25"], zero_rates=[0.03])}


def priced(frame: pd.DataFrame) -> np.ndarray:
    book = Trades.from_frame(frame, as_of=AS_OF)
    assert book.problems() == []
    return trinom.price(book, CURVES, backend="reference").price


@pytest.mark.parametrize("read", [
    lambda: pd.read_csv(io.StringIO(CSV), parse_dates=["issue", "maturity", "first_exercise", "last_exercise"]),
    lambda: pd.read_csv(io.StringIO(CSV), dtype_backend="numpy_nullable"),
    lambda: pd.read_csv(io.StringIO(CSV), dtype_backend="pyarrow"),
], ids=["parse_dates-NaT", "nullable-NA", "pyarrow"])
def test_pandas_missing_markers_are_empty_cells(read):
    np.testing.assert_array_equal(priced(read()), priced(pd.read_csv(io.StringIO(CSV))))


@pytest.mark.parametrize("coupon", [[True], np.array([True])], ids=["list", "numpy"])
def test_a_boolean_is_no_number(coupon):
    book = Trades(as_of=AS_OF, id=["B1"], type=["bond"], issue=["2024-03-15"], maturity=["2034-03-15"],
                  coupon=coupon, frequency=[2], a=0.05, sigma=0.01)
    assert book.problems() == [(0, "coupon", "coupon True is a boolean, not a number")]


def test_a_boolean_array_is_no_option_type():
    options = trinom.Portfolio(strike=[63.0, 63.0], maturity=[9.0, 9.0], expiry=[3.0, 3.0], term_unit=[365, 365],
                               term_steps=[12, 12], a=[0.1, 0.1], sigma=[0.01, 0.01], option_type=np.array([True, False]))
    result = trinom.price(options, backend="reference", errors="mask")
    assert result.error.tolist() == ["option_type must be 0 (call) or 1 (put), got True (a boolean)",
                                     "option_type must be 0 (call) or 1 (put), got False (a boolean)"]


@pytest.mark.parametrize("quotes", [5, [1, 2], {"vol": 0.01}])
def test_calibrate_says_what_quotes_may_be(quotes):
    with pytest.raises(TypeError, match=r"quotes must be VolQuotes, a vols\.csv or Parquet path, or a pandas DataFrame"):
        calibrate(curves=CURVES, quotes=quotes)


@pytest.mark.parametrize("coupon", [[0.05], np.array([0.05]), pd.Series([0.05])], ids=["list", "numpy", "series"])
def test_a_column_of_one_value_is_not_every_trades(coupon):
    """A list of one beside longer columns is a column of the wrong length (it once broadcast without a word);
    a scalar is every trade's."""
    columns = dict(id=["B1", "B2"], type=["bond", "bond"], issue=["2024-03-15"] * 2, maturity=["2034-03-15"] * 2,
                   frequency=[2, 2], a=0.05, sigma=0.01)
    with pytest.raises(trinom.InputError, match=r"coupon has 1 values, expected one per trade \(2\) \(one value for "
                                                r"every trade is given as a scalar"):
        Trades(as_of=AS_OF, coupon=coupon, **columns)
    book = Trades(as_of=AS_OF, coupon=0.05, **columns)
    assert book.problems() == [] and np.ptp(trinom.price(book, CURVES, backend="reference").price) == 0
