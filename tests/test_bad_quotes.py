"""Bad volatility quotes (issue 26): "negative vol, a tenor past the curve, a kind that does not exist, a quote no
parameters can reach give clear errors or statuses naming the quote; nothing is dropped."

Each bad ``vols.csv`` is tried on the three ways in: the global calibration (``trinom.model.calibration.calibrate``),
the command line (``trinom calibrate --curve --vols --as-of --out``: exit 2 and the message on stderr, no model
file) and the volatility surface of the per-trade calibration (``VolSurface.from_quotes``). Every message must name
the file and line of the quote and the field; a quote no parameters reach is a status (``bound``) whose message
names the quote.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import trinom
from trinom.model import read_dated_curves
from trinom.model.calibration import calibrate
from trinom.model.quotes import VolQuotes, VolSurface, read_vol_quotes

AS_OF = "2025-01-02"
CURVES = "curve,date,zero\nEUR,2026-01-02,0.025\nEUR,2035-01-02,0.03\nEUR,2055-01-04,0.032\n"
#: A curve of negative rates.
JPY = "JPY,2026-01-02,-0.006\nJPY,2055-01-04,-0.002\n"
HEADER = "curve,expiry,tenor,vol,kind,shift"
#: A full 3 x 2 normal matrix on EUR (lines 2 to 7).
GOOD = ["EUR,1Y,5Y,0.0090,normal,", "EUR,2Y,5Y,0.0088,normal,", "EUR,5Y,5Y,0.0080,normal,",
        "EUR,1Y,10Y,0.0085,normal,", "EUR,2Y,10Y,0.0082,normal,", "EUR,5Y,10Y,0.0076,normal,"]
#: Cells no reader accepts: (name, the bad line 4, field, message).
UNREADABLE = [
    ("negative vol", "EUR,5Y,5Y,-0.008,normal,", "vol", "vols.csv line 4: vol must be a finite number > 0, got '-0.008'"),
    ("zero vol", "EUR,5Y,5Y,0,normal,", "vol", "vols.csv line 4: vol must be a finite number > 0, got '0'"),
    ("NaN vol", "EUR,5Y,5Y,nan,normal,", "vol", "vols.csv line 4: vol must be a finite number > 0, got 'nan'"),
    ("missing vol", "EUR,5Y,5Y,,normal,", "vol", "vols.csv line 4: vol is missing"),
    ("vol not a number", "EUR,5Y,5Y,80bp,normal,", "vol", "vols.csv line 4: vol must be a number, got '80bp'"),
    ("unknown kind", "EUR,5Y,5Y,0.008,smile,", "kind", "vols.csv line 4: kind 'smile' is not normal or lognormal"),
    ("bad expiry", "EUR,5X,5Y,0.008,normal,", "expiry",
     "vols.csv line 4: expiry '5X' is not a period longer than zero (such as 6M, 1Y, 10Y, 2W, 10D)"),
    ("bad tenor", "EUR,5Y,ten,0.008,normal,", "tenor",
     "vols.csv line 4: tenor 'ten' is not a period longer than zero (such as 6M, 1Y, 10Y, 2W, 10D)"),
    ("zero tenor", "EUR,5Y,0Y,0.008,normal,", "tenor",
     "vols.csv line 4: tenor '0Y' is not a period longer than zero (such as 6M, 1Y, 10Y, 2W, 10D)"),
    ("negative shift", "EUR,5Y,5Y,0.2,lognormal,-0.01", "shift",
     "vols.csv line 4: shift must be a finite number >= 0, got '-0.01'"),
]


def write(tmp_path: Path, lines: list[str], header: str = HEADER, curves: str = CURVES) -> dict[str, Path]:
    """``curve.csv`` and ``vols.csv`` in a folder of their own under ``tmp_path``."""
    folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "curve.csv").write_text(curves)
    (folder / "vols.csv").write_text(header + "\n" + "\n".join(lines) + "\n")
    return {"curve": folder / "curve.csv", "vols": folder / "vols.csv", "out": folder / "model.csv",
            "quotes": folder / "quotes.csv"}


def with_line(bad: str, at: int = 2) -> list[str]:
    """The good matrix with line ``at + 2`` replaced by ``bad``."""
    return [bad if k == at else line for k, line in enumerate(GOOD)]


def global_fit(files: dict[str, Path], **kwargs: object) -> trinom.model.calibration.CalibrationResult:
    return calibrate(curves=read_dated_curves(files["curve"], as_of=AS_OF), quotes=files["vols"], as_of=AS_OF,
                     **kwargs)


def command(files: dict[str, Path], capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    from trinom.cli import main

    code = main(["calibrate", "--curve", str(files["curve"]), "--vols", str(files["vols"]), "--as-of", AS_OF, "--out",
                 str(files["out"]), "--quotes-out", str(files["quotes"]), *extra])
    return code, capsys.readouterr().err


def errors(call: object) -> list[tuple[int | None, str, str]]:
    with pytest.raises(trinom.InputError) as caught:
        call()  # type: ignore[operator]
    return caught.value.errors


# --- cells no reader accepts: every way in says the same ---------------------------------------------------------------

@pytest.mark.parametrize(("name", "line", "field", "message"), UNREADABLE, ids=[c[0] for c in UNREADABLE])
def test_unreadable_quotes(tmp_path, capsys, name, line, field, message):
    files = write(tmp_path, with_line(line))
    assert errors(lambda: global_fit(files)) == [(2, field, message)]
    assert errors(lambda: VolSurface.from_quotes(files["vols"], as_of=AS_OF)) == [(2, field, message)]
    code, err = command(files, capsys)
    assert code == 2 and f"trinom: error: row 2: {message}" in err and not files["out"].exists()


def test_every_bad_quote_is_named_at_once(tmp_path, capsys):
    """Nothing is dropped and nothing hides another: one error per bad cell, in line order."""
    bad = [line for _name, line, _field, _message in UNREADABLE]
    files = write(tmp_path, GOOD + bad)
    found = errors(lambda: global_fit(files))
    assert [(row, field) for row, field, _m in found] == [(6 + k, c[2]) for k, c in enumerate(UNREADABLE)]
    assert [m for _r, _f, m in found] == [c[3].replace("line 4", f"line {8 + k}") for k, c in enumerate(UNREADABLE)]
    code, err = command(files, capsys)
    assert code == 2 and "vols.csv line 8: vol must be" in err and "vols.csv line 17: shift must be" in err


def test_unknown_columns_and_instruments(tmp_path):
    files = write(tmp_path, [line + ",collar" for line in GOOD], header=HEADER + ",instrument")
    found = errors(lambda: global_fit(files))
    assert found[0] == (0, "instrument", "vols.csv line 2: instrument 'collar' is not one of swaption, cap, floor")
    files = write(tmp_path, [line + ",x" for line in GOOD], header=HEADER + ",smile")
    assert "unknown column 'smile'" in str(errors(lambda: read_vol_quotes(files["vols"]))[0][2])


# --- quotes that read, but cannot be priced on their curve -------------------------------------------------------------

def test_a_tenor_past_the_curve(tmp_path, capsys):
    """The EUR curve ends on 2055-01-04: a 5Y x 30Y swaption (to 2060) is refused, naming it; QuantLib's curves refuse
    such dates too (no extrapolation unless asked). A surface holds no curve: it takes the node."""
    files = write(tmp_path, with_line("EUR,5Y,30Y,0.008,normal,", at=5))
    message = ("vols.csv line 7: the swaption (expiry 5Y, tenor 30Y) ends on 2060-01-02, after curve 'EUR''s last "
               "date 2055-01-04: extend the curve (trinom does not extrapolate a quote's curve)")
    assert errors(lambda: global_fit(files)) == [(5, "tenor", message)]
    code, err = command(files, capsys)
    assert code == 2 and message in err
    longer = write(tmp_path, [line.replace(",10Y,", ",30Y,") for line in GOOD])
    assert len(errors(lambda: global_fit(longer))) == 3
    assert VolSurface.from_quotes(longer["vols"], as_of=AS_OF).grids["EUR"].tenor[-1] == pytest.approx(30.0, abs=0.05)
    # a cap whose tenor counts from the as-of date, past the curve
    cap = write(tmp_path, ["EUR,3M,31Y,0.008,normal,,cap,as_of"], header=HEADER + ",instrument,tenor_from")
    assert errors(lambda: global_fit(cap))[0][2].startswith("vols.csv line 2: the cap (expiry 3M, tenor 31Y) ends on "
                                                            "2056-01-02, after curve 'EUR''s last date")


def test_an_unknown_curve(tmp_path, capsys):
    files = write(tmp_path, with_line("USD,5Y,5Y,0.008,normal,"))
    message = "vols.csv line 4: curve 'USD' is not among the curves ('EUR')"
    assert errors(lambda: global_fit(files)) == [(2, "curve", message)]
    code, err = command(files, capsys)
    assert code == 2 and message in err
    # the surface holds any curve's matrix (a per-trade calibration names a trade whose curve has none); EUR's
    # matrix now lacks its 5Y x 5Y node, and that is named
    assert errors(lambda: VolSurface.from_quotes(files["vols"], as_of=AS_OF)) == [
        (None, "tenor", "curve 'EUR': the volatility matrix has no quote at expiry 5Y, tenor 5Y: its expiries (1Y, 2Y, "
         "5Y) and tenors (5Y, 10Y) must form a full grid")]


def test_a_duplicate_quote(tmp_path, capsys):
    """The same instrument twice (60M is 5Y): an error naming both lines, on every way in."""
    files = write(tmp_path, [*GOOD, "EUR,60M,5Y,0.0081,normal,"])
    message = ("vols.csv line 8: the same swaption as vols.csv line 4 (curve 'EUR', 2030-01-02 to 2035-01-02, strike "
               "ATM, 1 a year 30/360): quote each instrument once (a weight gives it more say)")
    assert errors(lambda: global_fit(files)) == [(6, "tenor", message)]
    code, err = command(files, capsys)
    assert code == 2 and message in err
    assert errors(lambda: VolSurface.from_quotes(files["vols"], as_of=AS_OF)) == [
        (6, "tenor", "vols.csv line 8: curve 'EUR' has expiry 60M, tenor 5Y already at vols.csv line 4")]
    # other strikes, legs or instruments are other instruments
    more = write(tmp_path, [*(line + ",," for line in GOOD), "EUR,5Y,5Y,0.0081,normal,,0.03,",
                            "EUR,5Y,5Y,0.0081,normal,,,2"],
                 header=HEADER + ",strike,frequency")
    assert global_fit(more).status.tolist() == ["converged"]


def test_a_shift_too_small_for_the_forward(tmp_path, capsys):
    """JPY's forwards are negative: a lognormal quote needs forward + shift > 0 (and strike + shift > 0)."""
    lines = ["JPY,1Y,5Y,0.2,lognormal,0.001", "JPY,2Y,5Y,0.2,lognormal,0.02", "JPY,5Y,5Y,0.2,lognormal,0.02"]
    files = write(tmp_path, lines, curves=CURVES + JPY)
    found = errors(lambda: global_fit(files))
    assert [(row, field) for row, field, _m in found] == [(0, "shift")]
    assert found[0][2].startswith("vols.csv line 2: a lognormal quote needs forward + shift > 0, got forward -0.00")
    assert found[0][2].endswith("and shift 0.001 (a larger shift, or a normal vol)")
    code, err = command(files, capsys)
    assert code == 2 and "vols.csv line 2: a lognormal quote needs forward + shift > 0" in err
    strike = write(tmp_path, ["JPY,1Y,5Y,0.2,lognormal,0.02,-0.03", *(line + "," for line in lines[1:])],
                   header=HEADER + ",strike", curves=CURVES + JPY)
    assert errors(lambda: global_fit(strike))[0][:2] == (0, "strike")
    # a cap: every caplet's forward
    cap = write(tmp_path, ["JPY,3M,5Y,0.3,lognormal,0.003,cap"], header=HEADER + ",instrument", curves=CURVES + JPY)
    found = errors(lambda: global_fit(cap))
    assert found[0][:2] == (0, "shift") and "every caplet's forward + shift > 0" in found[0][2]
    # the surface holds no curve: its lognormal shifts are checked against forwards when a trade is priced
    same_shift = write(tmp_path, [line.replace("0.02", "0.001") for line in lines], curves=CURVES + JPY)
    assert len(errors(lambda: global_fit(same_shift))) == 3
    assert VolSurface.from_quotes(same_shift["vols"], as_of=AS_OF).shift("JPY") == 0.001
    mixed = write(tmp_path, with_line("EUR,5Y,5Y,0.2,lognormal,0.01"))
    assert errors(lambda: VolSurface.from_quotes(mixed["vols"], as_of=AS_OF))[0][:2] == (2, "kind")


# --- quotes no parameters reach: a status naming them --------------------------------------------------------------------

@pytest.mark.parametrize(("vol", "side"), [(1e-13, "below the least"), (3.0, "above the greatest")])
def test_a_quote_no_parameters_can_reach(tmp_path, capsys, vol, side):
    """A price below the least or above the greatest Hull-White price within the bounds: the curve's status is
    ``bound`` and its message names the quote, its price and where the fit leaves it; the quote is not dropped
    (it is in the fit, its row in the quotes table with ``reachable`` false)."""
    files = write(tmp_path, with_line(f"EUR,5Y,5Y,{vol},normal,"))
    result = global_fit(files)
    assert result.status.tolist() == ["bound"] and not result.ok
    message = result.message[0]
    assert message.startswith(f"1 quote(s) out of reach of the model with a in [1e-08, 5], sigma in [1e-08, 1]: "
                              f"vols.csv line 4 (swaption expiry 5Y, tenor 5Y, normal vol {vol:g}): its market price ")
    assert side in message and "the fit leaves it at model vol" in message
    assert result.reachable.tolist() == [True, True, False, True, True, True]
    assert result.quote_count[0] == 6 and np.isfinite(result.model_price).all()
    assert not (result.least_price[2] <= result.market_price[2] <= result.most_price[2])
    with pytest.raises(trinom.InputError, match="curve 'EUR': bound: 1 quote"):
        result.raise_for_status()
    code, err = command(files, capsys)
    assert code == 0 and "(1 bound)" in err
    model = pd.read_csv(files["out"])
    assert model.status.tolist() == ["bound"] and "vols.csv line 4" in model.message[0]
    quotes = pd.read_csv(files["quotes"])
    assert quotes.reachable.tolist() == result.reachable.tolist() and quotes["where"][2] == "vols.csv line 4"


def test_out_of_reach_by_the_bounds_or_a_fixed_a(tmp_path):
    """Reach depends on the bounds and on a fixed a: with sigma at most 0.004 every quote is out of reach, all
    named (five, then "and N more"); a fit at a bound names its largest errors."""
    files = write(tmp_path, [*GOOD, "EUR,10Y,5Y,0.0070,normal,", "EUR,10Y,10Y,0.0066,normal,"])
    capped = global_fit(files, a=0.05, bounds={"sigma": (1e-6, 0.004)})
    assert capped.status.tolist() == ["bound"] and not capped.reachable.any()
    assert capped.message[0].startswith("8 quote(s) out of reach of the model with a = 0.05, sigma in [1e-06, 0.004]")
    assert "; and 3 more; sigma at its upper bound 0.004" in capped.message[0]
    # inside the bounds, but at a bound: the message names the quotes left with the largest errors
    rising = write(tmp_path, ["EUR,1Y,1Y,0.005,normal,", "EUR,1Y,5Y,0.008,normal,", "EUR,1Y,10Y,0.011,normal,",
                              "EUR,5Y,1Y,0.006,normal,", "EUR,5Y,10Y,0.012,normal,"])
    result = global_fit(rising)
    assert result.status.tolist() == ["bound"] and result.reachable.all()
    assert "a at its lower bound 1e-08" in result.message[0]
    assert "; largest errors: vols.csv line 6 (swaption expiry 5Y, tenor 10Y, normal vol 0.012): model vol" in (
        result.message[0])


def test_quotes_from_columns_name_their_rows():
    """Quotes built in code (no file) are named by their row."""
    with pytest.raises(trinom.InputError) as caught:
        VolQuotes.from_columns(curve="EUR", expiry=["1Y", "2Y"], tenor="5Y", vol=[0.009, -1.0], kind="normal")
    assert caught.value.errors == [(1, "vol", "quote 1: vol must be a finite number > 0, got -1.0")]
    with pytest.raises(trinom.InputError) as caught:
        VolQuotes.from_columns(curve="EUR", expiry="1Y", tenor="5Y", vol=0.009, kind="normal", atm_frequency=2)
    assert caught.value.errors == [(0, "atm_frequency", "quote 0: atm_frequency applies to caps and floors: a "
                                    "swaption's at-the-money strike is its own fixed leg's swap rate (frequency, "
                                    "day_count)")]
    with pytest.raises(trinom.InputError) as caught:
        VolQuotes.from_columns(curve="EUR", expiry="3M", tenor="5Y", vol=0.009, kind="normal", instrument="cap",
                               tenor_from="spot", atm_frequency=3, atm_day_count="ACT/366")
    assert [(r, f) for r, f, _m in caught.value.errors] == [(0, "tenor_from"), (0, "atm_frequency"),
                                                            (0, "atm_day_count")]
