"""Bond backend ``futhark``: coupon bonds with embedded options in Futhark (fut/bonds.fut).

One bond per map element; float64 reproduces the paper's ``out64`` and the NumPy reference
to the last bit on the CPU targets, float32 follows the paper's float build (§9 of
docs/paper-instrument.md). Targets: c, multicore, opencl, cuda (cffi libraries through
futhark-ffi, built by ``make lib`` as ``_futhark_bonds_<target>``); the default is the best
usable one (cuda > opencl on a GPU > multicore > c, never PoCL). Options: ``device``,
``platform`` (OpenCL/CUDA device selection, by name), ``build_options`` (OpenCL/NVRTC compiler
options; on cuda the default is ``--fmad=false``), ``num_threads`` (multicore). The entry points
called are ``bonds_listed64``/``bonds_listed32``: the paper's 19 arrays (:func:`entry_arrays`) and the
bonds' listed exercise points (:func:`listed_arrays`, empty where no bond has any).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..instruments.bond import BondPortfolio, flatten_curves
from ..model.curve import YieldCurve
from . import _futhark

NAME = "futhark"
TARGETS: tuple[str, ...] = ("c", "multicore", "opencl", "cuda")
PROGRAM = "bonds"
#: Entry point by precision (the 19 arrays, then the listed exercise points).
ENTRIES: dict[str, str] = {"f64": "bonds_listed64", "f32": "bonds_listed32"}
#: Entry point by precision for a book with flows or listed points between steps (those arrays, then their times).
TIMED_ENTRIES: dict[str, str] = {"f64": "bonds_timed64", "f32": "bonds_timed32"}
#: NVRTC options of the cuda target when the caller gives none: NVRTC contracts ``a*b + c``
#: into fused multiply-adds by default, and the spec's arithmetic has none.
CUDA_BUILD_OPTIONS: tuple[str, ...] = ("--fmad=false",)


def available(target: str | None = None) -> tuple[bool, str]:
    """``(usable, reason)``: is the library built for ``target`` (default: the best one) and usable here?"""
    if target is not None and target not in TARGETS:
        return False, f"unknown target {target!r}; choose one of {', '.join(TARGETS)}"
    return _futhark.available(PROGRAM, target)


def default_target() -> str:
    """The target :func:`price` uses when none is given."""
    return _futhark.default_target(PROGRAM)


def entry_arrays(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str) -> list[np.ndarray]:
    """The 19 arrays of ``bonds64``/``bonds32``, in the file's order (§1 of the spec).

    Integers as int32, reals in the precision's dtype, all contiguous.
    """
    _futhark.check_precision(precision)
    real = _futhark.REAL_DTYPES[precision]

    def reals(values: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(values, dtype=real)

    def ints(values: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(values).astype(np.int32))

    p = portfolio
    terms, rates, days = flatten_curves(curves)
    return [ints(p.term_unit), ints(p.term_steps), reals(p.a), reals(p.sigma), reals(p.maturity),
            ints(p.cashflow_count), ints(p.cashflow_step), reals(p.repayment), reals(p.coupon), reals(p.spread),
            ints(p.option_type), reals(p.strike), ints(p.first_exercise), ints(p.last_exercise),
            ints(p.exercise_frequency), ints(p.curve_index), ints(terms), reals(rates), ints(days)]


def listed_arrays(portfolio: BondPortfolio, precision: str) -> list[np.ndarray]:
    """The bonds' listed exercise points as the entry points take them after the 19 arrays: ``exercise_count``
    (per bond) and ``exercise_step`` as int32, ``exercise_price`` in the precision's dtype (the last two empty
    where no bond has a point)."""
    real = _futhark.REAL_DTYPES[precision]
    return [np.ascontiguousarray(portfolio.exercise_count, dtype=np.int32),
            np.ascontiguousarray(portfolio.exercise_step, dtype=np.int32),
            np.ascontiguousarray(portfolio.exercise_price, dtype=real)]


def time_arrays(portfolio: BondPortfolio) -> list[np.ndarray]:
    """The cash flows' times and the listed points' dates in years as the entry points take them after the listed
    points (float64; NaN: on its step)."""
    return [np.ascontiguousarray(portfolio.cashflow_time, dtype=np.float64),
            np.ascontiguousarray(portfolio.exercise_time, dtype=np.float64)]


def checked_options(precision: str, target: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """The context options of a Futhark bond backend's ``price`` call, after checking its precision, target
    and options (an unknown one is an error); shared with ``bonds_futhark_fast``."""
    _futhark.check_precision(precision)
    context_options, _ = _futhark.split_options(options, (), f"bond backend {NAME}")
    if target is not None and target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    return context_options


def price(portfolio: BondPortfolio, curves: Sequence[YieldCurve], precision: str = "f64", *,
          target: str | None = None, **options: Any) -> np.ndarray:
    """Dirty prices (per 100 face) of a validated portfolio, in input order (float32 for ``"f32"``)."""
    context_options = checked_options(precision, target, options)
    if len(portfolio) == 0:
        return np.zeros(0, dtype=_futhark.REAL_DTYPES[precision])
    chosen = target if target is not None else default_target()
    if chosen == "cuda" and "build_options" not in context_options:
        context_options["build_options"] = CUDA_BUILD_OPTIONS
    arrays = [*entry_arrays(portfolio, curves, precision), *listed_arrays(portfolio, precision)]
    entry = ENTRIES[precision]
    if portfolio.has_flow_times():
        arrays += time_arrays(portfolio)
        entry = TIMED_ENTRIES[precision]
    return _futhark.call_entry(PROGRAM, entry, arrays, precision, chosen, context_options, targets=TARGETS)
