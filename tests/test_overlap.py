"""A large dated book is lowered a part at a time, each part priced while the next is lowered (issue 34, item 4):
the prices, errors, problems and warnings are the whole book's in one go, for a mixed book with schedules, amortizing
notionals, a trade without an id that a schedule names by its row, bad rows and passed exercise; ``errors="raise"``
raises the same problems; a book a side-table row of which names no trade is priced whole (its error is the book's).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trinom
from trinom import pipeline
from trinom.instruments import TRADE_COLUMNS, read_trades
from trinom.model import DatedCurve
from trinom.result import Prices

AS_OF = "2026-11-25"
COLUMNS = TRADE_COLUMNS[:26]
#: One copy of the book's trades (``{k}``: the copy's number): bonds with a schedule, amortizing, american, passed
#: exercise, a bond option, a swaption, a cap, a bad sigma, and a bond without an id.
ROWS = (
    "C{k},bond,,2024-03-15,2034-03-15,0.05,2,30/360,NONE,F,call,bermudan,,,,,,0.03,0.01,,EUR,12,,,,",
    "A{k},bond,,2024-03-15,2034-03-15,0.05,2,ACT/ACT-ICMA,NONE,F,put,american,,2031-03-15,,,,0.03,0.01,,EUR,12,,,,",
    "M{k},bond,1000000,2024-03-15,2034-03-15,0.05,2,30/360,NONE,F,,,,,,,,0.03,0.01,,EUR,12,,,,",
    "G{k},bond,,2020-03-15,2030-03-15,0.04,1,30/360,TARGET,MF,call,bermudan,2021-03-15,2026-03-15,100,,,0.03,0.01,,"
    "EUR,12,,,,",
    "Z{k},bond_option,,,2034-11-25,,,,,,put,,,,,2029-11-25,63,0.1,0.01,,EUR,12,,,,",
    "S{k},swaption,100,,2033-11-25,,1,30/360,NONE,F,receiver,bermudan,2027-11-25,2032-11-25,,,,0.05,0.01,,EUR,12,,"
    "2026-11-25,0.034,2",
    "K{k},cap,100,,2031-11-25,,4,ACT/360,,,,,,,,,,0.05,0.01,,EUR,12,,2027-02-25,0.035,",
    "X{k},bond,,2024-03-15,2034-03-15,0.05,2,30/360,NONE,F,call,european,2030-03-15,,101,,,0.03,-0.01,,EUR,12,,,,",
    "U{k},bond,,2024-03-15,2034-03-15,0.03,2,30/360,NONE,F,call,bermudan,,,,,,0.03,0.01,,EUR,12,,,,",
)
COPIES = 5


def write_book(folder: Path, schedule_extra: str = "") -> trinom.instruments.Trades:
    """:data:`COPIES` copies of :data:`ROWS`, with each copy's schedule and notionals, read from files; the ``U``
    bonds' ids then emptied (a book made through the API may leave ids empty)."""
    rows = [row.format(k=k) for k in range(COPIES) for row in ROWS]
    (folder / "trades.csv").write_text(",".join(COLUMNS) + "\n" + "\n".join(rows) + "\n")
    schedule = [f"C{k},2028-03-15,102\nC{k},2030-03-15,101\nC{k},2032-03-15,100\nA{k},2028-01-10,99\n"
                f"A{k},2029-01-10,100" for k in range(COPIES)]
    unnamed = [str(k * len(ROWS) + len(ROWS) - 1) for k in range(COPIES)]  # the bond without an id, by its row
    schedule += [f"{row},2029-03-15,101\n{row},2031-03-15,100" for row in unnamed]
    (folder / "schedule.csv").write_text("id,date,price\n" + "\n".join(schedule) + "\n" + schedule_extra)
    notionals = [f"M{k},2028-03-15,600000\nM{k},2031-03-15,300000" for k in range(COPIES)]
    (folder / "notionals.csv").write_text("id,date,notional\n" + "\n".join(notionals) + "\n")
    book = read_trades(folder / "trades.csv", as_of=AS_OF, schedule=folder / "schedule.csv",
                       notionals=folder / "notionals.csv")
    return book.with_columns(id=[None if name.startswith("U") else name for name in book.ids])


CURVES = {"EUR": DatedCurve(as_of=AS_OF, dates=["2027-11-25", "2031-11-25", "2046-11-25"],
                            zero_rates=[0.03, 0.034, 0.04], name="EUR")}


def priced(book: trinom.instruments.Trades, overlap: bool, monkeypatch: pytest.MonkeyPatch, **options: object) -> Prices:
    monkeypatch.setattr(pipeline, "OVERLAP_MIN_TRADES", 2 if overlap else 10**9)
    return trinom.price(book, CURVES, backend="futhark", target="c", **options)


def test_parts_price_as_the_whole_book(tmp_path, monkeypatch):
    whole = priced(write_book(tmp_path), False, monkeypatch, errors="mask")
    cut = []
    monkeypatch.setattr(trinom.instruments.Trades, "rows", lambda book, lo, hi, rows=trinom.instruments.Trades.rows:
                        cut.append((lo, hi)) or rows(book, lo, hi))
    parts = priced(write_book(tmp_path), True, monkeypatch, errors="mask")
    assert len(cut) == pipeline.OVERLAP_PARTS and cut[0][0] == 0 and cut[-1][1] == len(whole)
    bad = np.flatnonzero(whole.error != "")
    assert bad.tolist() == [k * len(ROWS) + 7 for k in range(COPIES)], whole.error
    assert "sigma" in whole.error[bad[0]] and "trades.csv line 9" in whole.error[bad[0]]
    assert [row for row, _w in whole.warnings] == [k * len(ROWS) + 3 for k in range(COPIES)]
    np.testing.assert_allclose(parts.price, whole.price, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(parts.accrued, whole.accrued)
    np.testing.assert_array_equal(parts.clean, whole.clean)
    assert parts.error.tolist() == whole.error.tolist()
    assert parts.instrument.tolist() == whole.instrument.tolist()
    assert parts.problems == whole.problems and parts.warnings == whole.warnings
    np.testing.assert_array_equal(parts.notional, whole.notional)
    assert parts.engine == whole.engine == "futhark/c"
    # the unnamed bond's schedule is found in its part (its price is the whole book's): a call below the straight bond
    unnamed = len(ROWS) - 1
    straight = read_trades(tmp_path / "trades.csv", as_of=AS_OF).with_columns(option=None, exercise=None)
    assert whole.price[unnamed] < trinom.price(straight, CURVES, backend="futhark", target="c",
                                               errors="mask").price[unnamed] - 0.01


def test_raise_names_the_same_problems(tmp_path, monkeypatch):
    raised = []
    for overlap in (False, True):
        with pytest.raises(trinom.InputError) as error:
            priced(write_book(tmp_path), overlap, monkeypatch)
        raised.append(error.value.errors)
    assert raised[0] == raised[1] and len(raised[0]) == COPIES


def test_a_book_level_problem_prices_the_book_whole(tmp_path, monkeypatch):
    book = write_book(tmp_path, schedule_extra="Q9,2028-03-15,100\n")
    assert not book.divisible()
    with pytest.raises(trinom.InputError, match="id 'Q9' is not a trade of the book"):
        priced(book, True, monkeypatch, errors="mask")


def test_rows_is_a_book_of_its_own(tmp_path):
    book = write_book(tmp_path)
    part = book.rows(len(ROWS), 2 * len(ROWS))
    assert len(part) == len(ROWS) and part.ids[-1] == str(2 * len(ROWS) - 1) and part.ids[0] == "C1"
    assert (part.side_owners("schedule") >= 0).all() and part.side_owners("schedule").size == 7
    assert part.side_owners("notionals").size == 2
    with pytest.raises(ValueError, match="not within"):
        book.rows(3, len(book) + 1)


@pytest.mark.gpu
def test_parts_on_the_gpu_price_as_the_whole_book(tmp_path, monkeypatch):
    """``cuda`` and Futhark's ``cuda`` target called from the pricing thread while this one lowers: the whole book's
    prices, and each engine's timings summed over the parts."""
    found = [(b, t) for b, t in (("cuda", None), ("futhark", "cuda")) if trinom.engines.get(b).available(t)[0]]
    assert found, "no GPU engine is built: run make lib on the GPU machine"
    for backend, target in found:
        prices = []
        for overlap in (False, True):
            monkeypatch.setattr(pipeline, "OVERLAP_MIN_TRADES", 2 if overlap else 10**9)
            timing: dict[str, object] = {}
            extra = {"timing": timing} if backend == "cuda" else {}
            prices.append(trinom.price(write_book(tmp_path), CURVES, backend=backend, target=target, errors="mask",
                                       **extra))
            if backend == "cuda":
                assert float(timing["kernel_ms"]) > 0  # type: ignore[arg-type]
        np.testing.assert_allclose(prices[1].price, prices[0].price, atol=1e-12, rtol=0, err_msg=backend)
        assert prices[1].error.tolist() == prices[0].error.tolist()


def test_timings_of_the_parts_add_up():
    parts = [{"kernel_ms": 1.5, "chunks": 2, "bonds": {"kernel_ms": 1.0}, "name": "a"},
             {"kernel_ms": 2.0, "chunks": 1, "bonds": {"kernel_ms": 0.5}, "name": "b"}]
    assert pipeline._summed(parts) == {"kernel_ms": 3.5, "chunks": 3, "bonds": {"kernel_ms": 1.5}, "name": "a"}
