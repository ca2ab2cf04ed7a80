"""What a call of each engine costs, predicted from a book's shape: the cost model behind ``backend="auto"`` (issue 34).

A book is seen as its trees' work (node updates of both passes, :meth:`~trinom.lattice.book.Book.work`) by width class
(:data:`WIDTH_CLASSES`), its number of trees and its longest tree. An engine's call costs

    fixed + per_tree * trees + max(sum_c work_c / rate_c, step_latency_c * steps + work / tree_rate of one tree)

seconds: a fixed cost, a cost per tree on the host, the book's work at the engine's rate in each width class, and the
floor no engine goes under, the longest single tree (a tree is one GPU block or one CPU thread; ``step_latency_c`` is
a GPU block's time per step of both passes for a tree of width class c, ``tree_rate`` a CPU thread's node updates per
second).

The coefficients are measured: ``trinom backends --measure`` prices probe books on every usable engine of this host,
fits them (:func:`measure`) and writes them to :func:`costs_path` (``$TRINOM_ENGINE_COSTS``, else
``~/.cache/trinom/engine-costs.json``), which :func:`load` reads back. Without that file the defaults hold: cuda as
measured on an H200, the CPU targets as measured on a 2-core EPYC (multicore per core, times this host's cores).

>>> import trinom
>>> from trinom.engines.costs import DEFAULTS, features
>>> from trinom.lattice.lowering import lower_options
>>> book = lower_options(trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
...                                       term_steps=[12], a=[0.1], sigma=[0.01], option_type=["put"]))
>>> f = features(book)
>>> f.trees, f.steps
(1, 108)
>>> DEFAULTS["futhark/c"].predict(f) < DEFAULTS["cuda"].predict(f)  # one small tree: no GPU call pays
True
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..lattice.book import Book

#: Upper bounds of the width classes (nodes): the cuda engine's warp segments (<= 64, <= 512), its block kernel
#: (<= 2048, <= 8192), and wider.
WIDTH_CLASSES: tuple[float, ...] = (64, 512, 2048, 8192, float("inf"))
CLASS_NAMES: tuple[str, ...] = ("<=64", "65-512", "513-2048", "2049-8192", ">8192")


@dataclass(frozen=True)
class Features:
    """What the cost model sees of a book."""

    trees: int
    work: tuple[float, ...]  #: node updates by width class (:data:`WIDTH_CLASSES`)
    steps: int  #: the longest tree's steps
    longest_class: int  #: its width class
    longest_work: float  #: that tree's node updates
    widest_work: float  #: the largest single tree's node updates


def features(book: Book) -> Features:
    """The book's :class:`Features` (cached on the book)."""
    def compute() -> Features:
        if not len(book):
            return Features(0, (0.0,) * len(WIDTH_CLASSES), 0, 0, 0.0, 0.0)
        n, jmax = book.shape()
        n = np.maximum(n, 0)
        width = 2 * np.minimum(np.maximum(jmax, 0), n) + 1
        work = book.work()
        cls = np.searchsorted(np.asarray(WIDTH_CLASSES[:-1]), width, side="left")
        by_class = np.bincount(cls, weights=work, minlength=len(WIDTH_CLASSES))
        tall = int(np.argmax(n))
        return Features(len(book), tuple(float(w) for w in by_class), int(n[tall]), int(cls[tall]),
                        float(work[tall]), float(work.max()))
    return book.cached("cost-features", compute)


@dataclass(frozen=True)
class EngineCost:
    """An engine's cost coefficients (the module's docstring)."""

    fixed: float  #: seconds a call
    per_tree: float  #: seconds a tree, on the host
    rates: tuple[float, ...]  #: node updates a second, by width class
    step_latency: tuple[float, ...] = (0.0,) * 5  #: seconds a step (both passes) of one tree alone (a GPU block), by class
    tree_rate: float = float("inf")  #: node updates a second of one tree on its own (a CPU thread)
    source: str = "default"  #: where the coefficients come from

    def predict(self, f: Features) -> float:
        """Predicted seconds of one call on a book of features ``f``."""
        if not f.trees:
            return 0.0
        bulk = sum(w / r for w, r in zip(f.work, self.rates, strict=True) if w)
        floor = max(self.step_latency[f.longest_class] * f.steps + f.longest_work / self.tree_rate,
                    f.widest_work / self.tree_rate)
        return self.fixed + self.per_tree * f.trees + max(bulk, floor)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _defaults(cores: int) -> dict[str, EngineCost]:
    """The coefficients without a measurement (the module's docstring): cuda as measured on an H200
    (benches/width_classes.py, benches/desk_book.py, 2026-11-29); the CPU targets per core, times ``cores``."""
    per_core = (0.5e9, 1.0e9, 1.05e9, 1.05e9, 1.05e9)  # futhark multicore, node updates a second a core
    return {
        "cuda": EngineCost(fixed=3e-4, per_tree=8e-8, rates=(2.0e11, 4.2e11, 2.9e11, 2.3e11, 3e9),
                           step_latency=(3e-7, 5e-7, 2e-6, 2e-6, 2e-4)),
        "futhark/multicore": EngineCost(fixed=5e-4, per_tree=0.0, rates=tuple(r * cores for r in per_core),
                                        tree_rate=1.0e9),
        "futhark/c": EngineCost(fixed=2.7e-4, per_tree=0.0, rates=(0.32e9, 0.44e9, 0.49e9, 0.49e9, 0.49e9),
                                tree_rate=0.49e9),
        # Futhark's GPU targets price wide trees slowly (a tree of 10000 steps, 1500 nodes wide: 16 s on an H200).
        "futhark/opencl": EngineCost(fixed=2e-3, per_tree=1e-7, rates=(1e11, 1e11, 1e9, 1e9, 1e9),
                                     step_latency=(5e-6, 5e-6, 8e-4, 8e-4, 8e-4)),
        "futhark/cuda": EngineCost(fixed=2e-3, per_tree=1e-7, rates=(1e11, 1e11, 1e9, 1e9, 1e9),
                                   step_latency=(5e-6, 5e-6, 8e-4, 8e-4, 8e-4)),
        "reference": EngineCost(fixed=1e-3, per_tree=1e-6, rates=(0.1e9,) * 5, tree_rate=0.05e9),
    }


DEFAULTS: dict[str, EngineCost] = _defaults(_cores())


def costs_path() -> Path:
    """Where measured coefficients are kept: ``$TRINOM_ENGINE_COSTS``, else ``~/.cache/trinom/engine-costs.json``."""
    if os.environ.get("TRINOM_ENGINE_COSTS"):
        return Path(os.environ["TRINOM_ENGINE_COSTS"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "trinom" / "engine-costs.json"


def host() -> dict[str, Any]:
    """This host as the measured file names it: a measurement of another host (or core count) is not used."""
    import platform

    return {"node": platform.node(), "cores": _cores(), "machine": platform.machine()}


_loaded: dict[str, dict[str, EngineCost]] = {}


def load(path: Path | None = None) -> dict[str, EngineCost]:
    """The coefficients auto uses: the defaults, with the measured ones of this host where the file has them (read
    once per process and path)."""
    path = path or costs_path()
    key = str(path)
    if key not in _loaded:
        costs = dict(DEFAULTS)
        try:
            saved = json.loads(path.read_text())
            if saved.get("host") == host():
                for name, fields in saved.get("engines", {}).items():
                    fields["rates"] = tuple(fields["rates"])
                    fields["step_latency"] = tuple(fields["step_latency"])
                    costs[name] = EngineCost(**{**fields, "source": f"measured {saved.get('date', '')}".strip()})
        except (OSError, ValueError, TypeError, KeyError):
            pass  # no file, or one this version cannot read: the defaults
        _loaded[key] = costs
    return _loaded[key]


def forget() -> None:
    """Read the measured file again at the next :func:`load` (after :func:`measure` wrote it)."""
    _loaded.clear()


# --- measurement ----------------------------------------------------------------------------------------------------
def probe_books() -> dict[str, Book]:
    """Books of dated callable bonds for the fit: one per width class (10-20 years; many trees, each in a model of its
    own, as a desk's are: no two share a lattice), and one short tree and one tall tree of moderate width (fixed cost
    and per-step latency)."""
    from ..instruments import Trades
    from ..instruments.trades import lowered
    from ..lattice.lowering import lower_bonds
    from ..model import DatedCurve

    def bonds(count: int, steps: int, a: float, years: tuple[int, int], seed: int) -> Book:
        rng = np.random.default_rng(seed)
        as_of = np.datetime64("2026-11-25")
        maturity = as_of + rng.integers(years[0] * 365, years[1] * 365 + 1, count).astype("timedelta64[D]")
        trades = Trades(as_of=str(as_of), id=[f"P{k}" for k in range(count)], type=["bond"] * count,
                        issue=["2025-06-15"] * count, maturity=maturity.astype(str).tolist(),
                        coupon=rng.uniform(0.02, 0.06, count), frequency=[2] * count, option=["call"] * count,
                        exercise=["bermudan"] * count, first_exercise=["2027-11-25"] * count,
                        last_exercise=(maturity - np.timedelta64(180, "D")).astype(str).tolist(),
                        exercise_price=[100.0] * count, a=np.full(count, a), sigma=rng.uniform(0.008, 0.012, count),
                        steps_per_year=[steps] * count)
        curve = {"default": DatedCurve(as_of=str(as_of), dates=["2027-11-25", "2056-11-25"], zero_rates=[0.03, 0.04])}
        (_, lowered_bonds), = lowered(trades, curve)[0]
        return lower_bonds(lowered_bonds, ("default",))

    return {"<=64": bonds(4000, 12, 0.1, (10, 20), 1), "65-512": bonds(400, 52, 0.05, (10, 20), 2),
            "513-2048": bonds(40, 365, 0.1, (10, 20), 3), "2049-8192": bonds(20, 365, 0.03, (10, 20), 4),
            "short": bonds(1, 12, 0.1, (3, 3), 5), "tall": bonds(1, 365, 0.1, (25, 25), 6)}


def measure(engines: Iterable[str], run: Callable[[str, Book], Any], *, rounds: int = 3,
            budget: float = 2.0) -> dict[str, EngineCost]:
    """Fit each engine's coefficients from warm timings of :func:`probe_books`: ``run(engine, book)`` prices a book
    (``engine`` as ``"cuda"`` or ``"futhark/multicore"``); each probe is repeated until it takes ``budget`` / 10
    seconds (the book doubled) or gets that large, and timed ``rounds`` times (the median)."""
    books = probe_books()
    fitted: dict[str, EngineCost] = {}
    for engine in engines:
        def timed(book: Book, engine: str = engine) -> float:
            run(engine, book)  # warm: libraries loaded, contexts made
            times = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                run(engine, book)
                times.append(time.perf_counter() - t0)
            return float(np.median(times))

        fixed = timed(books["short"])
        tall = books["tall"]
        f_tall = features(tall)
        t_tall = max(timed(tall) - fixed, 1e-9)
        latency = t_tall / max(f_tall.steps, 1)
        rates = []
        for name in CLASS_NAMES[:-1]:
            book = books[name]
            seconds = timed(book)
            while seconds < budget / 10 and len(book) < 64 * len(books[name]):
                # twice the trees, the copies' sigma moved by a hair: a copy must not share its original's lattice
                book = Book.concatenate([book, book.with_trees(sigma=book.sigma * (1 + 1e-7))])
                seconds = timed(book)
            work = float(book.work().sum())
            rates.append(work / max(seconds - fixed, 1e-9))
        rates.append(rates[-1])  # wider than 8192: as the widest class measured
        gpu = engine == "cuda" or engine in ("futhark/cuda", "futhark/opencl")
        if gpu:  # the tall tree alone is the per-step latency of one block
            # the tall tree's class measured; narrower classes take the same (an upper bound), wider ones the
            # default's ratio to it
            default = DEFAULTS.get(engine, DEFAULTS["cuda"]).step_latency
            scale = latency / default[f_tall.longest_class]
            fitted[engine] = EngineCost(fixed=fixed, per_tree=0.0, rates=tuple(rates),
                                        step_latency=tuple(latency if c <= f_tall.longest_class else d * scale
                                                           for c, d in enumerate(default)), source="measured")
        else:  # one CPU thread prices the tall tree alone
            fitted[engine] = EngineCost(fixed=fixed, per_tree=0.0, rates=tuple(rates),
                                        tree_rate=f_tall.longest_work / t_tall, source="measured")
    return fitted


def save(fitted: dict[str, EngineCost], path: Path | None = None) -> Path:
    """Write ``fitted`` for this host to ``path`` (default :func:`costs_path`), keeping other engines' entries."""
    path = path or costs_path()
    saved: dict[str, Any] = {}
    try:
        saved = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        saved = {}
    engines = saved.get("engines", {}) if saved.get("host") == host() else {}
    engines.update({name: {k: v for k, v in asdict(cost).items() if k != "source"} for name, cost in fitted.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"host": host(), "date": time.strftime("%Y-%m-%d"), "engines": engines}, indent=1))
    forget()
    return path
