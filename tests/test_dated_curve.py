"""trinom.model.DatedCurve: interpolation against QuantLib 1.44's DiscountCurve and ZeroCurve, flat zero-rate
extrapolation, the conversion to and from trinom.YieldCurve at whole days, and the curve-file reader."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import QuantLib as ql  # noqa: N813 (the usual alias)
import trinom
from trinom.model import DatedCurve, read_dated_curves
from trinom.model import dated_curve as dated_curve_module

AS_OF = np.datetime64("2025-01-02")


def ql_date(day: np.datetime64) -> ql.Date:
    year, month, date = (int(x) for x in str(np.datetime64(day, "D")).split("-"))
    return ql.Date(date, month, year)


def pillars(rng: np.random.Generator, count: int = 20, years: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Random pillar dates after the as-of date (a short first one) and zero rates, including a negative one."""
    days = np.unique(np.concatenate([[rng.integers(1, 40)], rng.integers(40, years * 365, count - 1)]))
    zeros = 0.03 + 0.02 * np.sin(days / 2000.0) + rng.normal(0.0, 0.003, days.size)
    zeros[1] = -0.004
    return AS_OF + days, zeros


def whole_days(curve: DatedCurve, beyond: int = 400) -> np.ndarray:
    return np.arange(0, int(curve.times[-1] * 365) + beyond)


@pytest.fixture(autouse=True)
def evaluation_date():
    saved = ql.Settings.instance().evaluationDate
    ql.Settings.instance().evaluationDate = ql_date(AS_OF)
    yield
    ql.Settings.instance().evaluationDate = saved


def test_log_linear_discount_factors_equal_quantlib_discount_curve():
    dates, zeros = pillars(np.random.default_rng(1))
    times = (dates - AS_OF).astype(np.int64) / 365.0
    curve = DatedCurve(as_of=AS_OF, dates=dates, discount_factors=np.exp(-zeros * times))
    oracle = ql.DiscountCurve([ql_date(AS_OF), *map(ql_date, dates)], [1.0, *np.exp(-zeros * times)],
                              ql.Actual365Fixed())
    queries = AS_OF + np.arange(0, int((dates[-1] - AS_OF).astype(np.int64)) + 1, 7)
    theirs = np.array([oracle.discount(ql_date(d)) for d in queries])
    assert np.abs(curve.discount(queries) / theirs - 1).max() <= 1e-13
    assert np.abs(curve.discount(dates) - np.exp(-zeros * times)).max() <= 1e-15


def test_linear_zero_rates_equal_quantlib_zero_curve():
    dates, zeros = pillars(np.random.default_rng(2))
    dates, zeros = np.concatenate([[AS_OF], dates]), np.concatenate([[0.021], zeros])  # a zero rate at the as-of date
    curve = DatedCurve(as_of=AS_OF, dates=dates, zero_rates=zeros, interpolation="linear-zero")
    oracle = ql.ZeroCurve(list(map(ql_date, dates)), list(zeros), ql.Actual365Fixed(), ql.NullCalendar(), ql.Linear(),
                          ql.Continuous, ql.Annual)
    queries = AS_OF + np.arange(1, int((dates[-1] - AS_OF).astype(np.int64)) + 1, 5)
    theirs = np.array([oracle.zeroRate(ql_date(d), ql.Actual365Fixed(), ql.Continuous).rate() for d in queries])
    assert np.abs(curve.zero_rate(queries) - theirs).max() <= 1e-12  # QuantLib: -log(DF) / t, 1e-14 off at one day
    assert np.abs(curve.discount(queries) / np.array([oracle.discount(ql_date(d)) for d in queries]) - 1).max() <= 1e-13


@pytest.mark.parametrize("interpolation", ["log-linear-discount", "linear-zero"])
def test_zero_rates_are_flat_outside_the_pillars(interpolation: str):
    curve = DatedCurve(as_of=AS_OF, dates=["2025-07-02", "2027-01-04", "2035-01-02"], zero_rates=[0.02, 0.03, 0.035],
                       interpolation=interpolation)
    early = np.array([0.001, 0.1, 0.49])
    late = np.array([10.01, 20.0, 60.0])
    assert np.allclose(curve.zero_rate(early), 0.02, rtol=0, atol=1e-15)
    assert np.allclose(curve.zero_rate(late), 0.035, rtol=0, atol=1e-15)
    assert np.allclose(curve.discount(late), np.exp(-0.035 * late), rtol=1e-15, atol=0)
    assert curve.zero_rate([0.0])[0] == pytest.approx(0.02, abs=1e-15) and curve.discount([0.0])[0] == 1.0
    assert curve.discount(["2025-07-02"])[0] == pytest.approx(np.exp(-0.02 * 181 / 365), rel=1e-15)


@pytest.mark.parametrize("interpolation", ["log-linear-discount", "linear-zero"])
@pytest.mark.parametrize("days_in_year", [365, 360])
def test_yield_curve_reproduces_discount_factors_at_whole_days(interpolation: str, days_in_year: int):
    dates, zeros = pillars(np.random.default_rng(3), count=25, years=50)
    curve = DatedCurve(as_of=AS_OF, dates=dates, zero_rates=zeros, interpolation=interpolation)
    yield_curve = curve.to_yield_curve(days_in_year=days_in_year)
    assert isinstance(yield_curve, trinom.YieldCurve)
    days = whole_days(curve)
    t = days / float(days_in_year)  # the tree asks for rate_at(t, term_unit) and discounts by exp(-R t)
    trees = np.exp(-yield_curve.rate_at(t, days_in_year) * t)
    assert np.abs(trees - curve.discount(t)).max() <= 1e-12
    if interpolation == "linear-zero" and days_in_year == 365:
        assert len(yield_curve) == len(curve)  # linear zero rates are linear in days: the pillars suffice
    else:
        assert yield_curve.days[0] == 1 and yield_curve.days[-1] == np.ceil(curve.times[-1] * days_in_year)


def test_from_yield_curve_keeps_discount_factors_at_whole_days():
    thesis = trinom.YieldCurve.thesis()
    curve = DatedCurve.from_yield_curve(thesis, as_of="2024-06-28", name="thesis")
    assert curve.as_of == np.datetime64("2024-06-28") and curve.interpolation == "linear-zero"
    assert curve.dates[0] == np.datetime64("2024-06-28") + int(thesis.days[0])
    days = np.arange(0, int(thesis.days[-1]) + 500)
    t = days / 365.0
    assert np.abs(curve.discount(t) - np.exp(-thesis.rate_at(t, 365) * t)).max() <= 1e-15
    back = curve.to_yield_curve()
    assert np.array_equal(back.days, thesis.days) and np.array_equal(back.rates, thesis.rates)


def test_dates_and_year_fractions_agree():
    curve = DatedCurve(as_of=AS_OF, dates=["2026-01-02", "2030-01-02"], discount_factors=[0.96, 0.80])
    dates = np.array(["2025-01-02", "2025-08-15", "2028-02-29", "2040-01-01"], dtype="datetime64[D]")
    times = (dates - AS_OF).astype(np.int64) / 365.0
    assert np.array_equal(curve.discount(dates), curve.discount(times))
    assert np.array_equal(curve.zero_rate(list(map(str, dates))), curve.zero_rate(times))
    with pytest.raises(trinom.InputError, match="row 1: date 2024-12-31 is before the as-of date 2025-01-02"):
        curve.discount(["2025-03-01", "2024-12-31"])
    with pytest.raises(trinom.InputError, match=r"row 0: time -0\.5"):
        curve.discount([-0.5])


def test_bad_curves_are_refused():
    cases = [
        (dict(dates=["2026-01-02"], discount_factors=[0.9], zero_rates=[0.1]), "either discount_factors or zero_rates"),
        (dict(dates=["2026-01-02", "2026-01-02"], discount_factors=[0.9, 0.8]), "strictly increasing: point 1"),
        (dict(dates=["2026-01-02", "2027-01-02"], discount_factors=[0.9, 0.0]), "point 1 (2027-01-02): discount must"),
        (dict(dates=["2024-01-02", "2027-01-02"], zero_rates=[0.01, 0.02]), "point 0: date 2024-01-02 is before"),
        (dict(dates=["2025-01-02", "2027-01-02"], discount_factors=[0.99, 0.9]), "at the as-of date 2025-01-02 must"),
        (dict(dates=["2025-01-02"], discount_factors=[1.0]), "needs a point after the as-of date"),
        (dict(dates=["2026-01-02"], zero_rates=[float("nan")]), "zero must be finite"),
        (dict(dates=["2026-13-02"], zero_rates=[0.01]), "point 0: date '2026-13-02' is not a date"),
        (dict(dates=["2026-01-02"], zero_rates=[0.01, 0.02]), "1 dates but 2 zero values"),
        (dict(dates=["2026-01-02"], zero_rates=[0.01], interpolation="cubic"), "interpolation must be one of"),
    ]
    for arguments, message in cases:
        with pytest.raises(trinom.InputError) as err:
            DatedCurve(as_of=AS_OF, name="EUR", **arguments)
        assert message in str(err.value), (arguments, str(err.value))


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_read_csv_and_parquet_curves(tmp_path: Path):
    rows = [("USD", "2030-01-02", 0.80), ("EUR", "2026-01-02", 0.98), ("USD", "2026-01-02", 0.96),
            ("EUR", "2035-01-02", 0.75), ("USD", "2027-06-30", 0.93)]
    csv_path = write_csv(tmp_path / "curve.csv", "curve,date,discount\n" + "".join(f"{c},{d},{v!r}\n" for c, d, v in rows))
    curves = read_dated_curves(csv_path, as_of="2025-01-02")
    assert list(curves) == ["USD", "EUR"]
    assert [str(d) for d in curves["USD"].dates] == ["2026-01-02", "2027-06-30", "2030-01-02"]
    assert curves["USD"].discount_factors.tolist() == [0.96, 0.93, 0.80] and curves["EUR"].name == "EUR"
    table = pa.table({"curve": [r[0] for r in rows], "date": pa.array(np.array([r[1] for r in rows],
                                                                               dtype="datetime64[D]")),
                      "discount": [r[2] for r in rows]})
    pq.write_table(table, tmp_path / "curve.parquet")
    from_parquet = read_dated_curves(tmp_path / "curve.parquet", as_of=np.datetime64("2025-01-02"))
    for name, curve in curves.items():
        assert np.array_equal(from_parquet[name].dates, curve.dates)
        assert np.array_equal(from_parquet[name].discount_factors, curve.discount_factors)
    zero_path = write_csv(tmp_path / "zero.csv", "curve,date,zero\nGBP,2026-01-02,0.04\nGBP,2025-01-02,0.035\n")
    gbp = read_dated_curves(zero_path, as_of="2025-01-02", interpolation="linear-zero")["GBP"]
    assert gbp.zero_rates.tolist() == [0.035, 0.04] and gbp.zero_rate([0.5])[0] == pytest.approx(0.0375, abs=1e-15)


def test_curve_file_errors_name_file_line_and_field(tmp_path: Path):
    text = ("curve,date,discount\n"
            "USD,2026-01-02,0.96\n"        # line 2
            "USD,2026-02-30,0.95\n"        # line 3: no such date
            "USD,2027-01-04,-0.1\n"        # line 4: discount <= 0
            "USD,2026-01-02,0.97\n"        # line 5: duplicate of line 2
            "EUR,2024-12-31,0.99\n"        # line 6: before the as-of date
            ",2026-01-02,0.99\n"           # line 7: no curve name
            "EUR,2026-01-02,abc\n"         # line 8: not a number
            "EUR,2025-01-02,0.98\n")       # line 9: discount at the as-of date
    with pytest.raises(trinom.InputError) as err:
        read_dated_curves(write_csv(tmp_path / "bad.csv", text), as_of="2025-01-02")
    messages = [m for _r, _f, m in err.value.errors]
    fields = [f for _r, f, _m in err.value.errors]
    expected = ["bad.csv line 3: date '2026-02-30' is not a date", "bad.csv line 4: discount must be > 0, got -0.1",
                "bad.csv line 6: date 2024-12-31 is before the as-of date 2025-01-02",
                "bad.csv line 7: curve name is empty", "bad.csv line 8: discount must be a number, got 'abc'",
                "bad.csv line 9: the discount factor at the as-of date must be 1, got 0.98",
                "bad.csv line 5: curve 'USD' has date 2026-01-02 already at bad.csv line 2"]
    for want in expected:
        assert any(m.startswith(want) for m in messages), (want, messages)
    assert len(messages) == len(expected) and set(fields) == {"date", "discount", "curve"}

    for header, message in [("curve,date\n", "one of the columns discount, zero or rate, got none"),
                            ("curve,date,discount,zero\n", "one of the columns discount, zero or rate, got ['discount', 'zero']"),
                            ("curve,day,zero\n", "unknown column 'day'"),
                            ("curve,date,zero,zero\n", "appears twice")]:
        with pytest.raises(trinom.InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
            read_dated_curves(write_csv(tmp_path / "header.csv", header + "X,2026-01-02,0.01\n"), as_of="2025-01-02")
    with pytest.raises(trinom.InputError, match="no such file"):
        read_dated_curves(tmp_path / "missing.csv", as_of="2025-01-02")
    pq.write_table(pa.table({"curve": ["A", "A"], "date": ["2026-01-02", "2026-01-02"], "zero": [0.01, 0.02]}),
                   tmp_path / "dup.parquet")
    with pytest.raises(trinom.InputError) as err:
        read_dated_curves(tmp_path / "dup.parquet", as_of="2025-01-02")
    assert str(err.value) == "dup.parquet row 2: curve 'A' has date 2026-01-02 already at dup.parquet row 1"


def test_documented_examples_hold():
    assert doctest.testmod(dated_curve_module).failed == 0
    import trinom.model

    assert doctest.testmod(trinom.model).failed == 0


def test_the_file_readers_documented_examples_hold():
    """The curve and quote files' readers moved to ``io`` (issue 36): their examples hold there, and the model's names
    are the same functions."""
    from trinom.io import curve_files, quote_files, trade_files

    for module in (curve_files, quote_files):
        assert doctest.testmod(module).attempted > 0 and doctest.testmod(module).failed == 0
    assert trinom.model.read_dated_curves is curve_files.read_dated_curves is read_dated_curves
    assert trinom.model.quotes.read_vol_quotes is trinom.model.read_vol_quotes is quote_files.read_vol_quotes
    assert trinom.instruments.read_trades is trinom.read_trades is trade_files.read_trades


def test_the_thesis_curve_is_the_shipped_file():
    """``YieldCurve.thesis()`` holds the thesis' points itself (the model imports no file format): they are those of
    the package's ``data/thesis-yield.in`` as ``io`` reads it."""
    from importlib import resources

    from trinom.io.textdata import read_arrays

    rates, days = read_arrays(resources.files("trinom") / "data" / "thesis-yield.in")
    thesis = trinom.YieldCurve.thesis()
    assert np.array_equal(thesis.rates, rates) and np.array_equal(thesis.days, days.astype(np.int64))
