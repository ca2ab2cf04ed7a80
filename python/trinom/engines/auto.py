"""``backend="auto"``: the usable engine whose predicted time for the book is the least (issue 34).

Each candidate engine's time for a book is predicted by a cost model fitted to measured runs on this host
(:mod:`trinom.engines.costs`: a fixed cost a call, a cost a tree, node updates a second by tree width class, and the
longest tree's time alone, which no engine goes under): ``trinom backends --measure`` measures every usable engine
here, and without that measurement the defaults hold (measured on an H200 host and a 2-core EPYC). The candidates:

* ``cuda`` (the hand-written CUDA engine), where an NVIDIA GPU is usable;
* ``futhark`` on ``opencl`` where an OpenCL platform has a GPU (not PoCL on the CPU), on ``multicore`` and on ``c``;
* the NumPy ``reference`` where nothing is compiled.

On the defaults: a book of a few small trees goes to the ``c`` target (one thread beats the thread pool and a GPU
call's fixed cost), anything larger to ``cuda`` where it is usable (every dated desk book, 1 to 14000 trades, and
every thesis and paper dataset), else to ``opencl`` on a GPU for narrow trees, else ``multicore``.
:func:`explain` says what each candidate was predicted to cost (``trinom backends`` prints it for sample books).

A ``target`` given by the caller is honoured: ``auto`` then picks among the engines that run on it (``cuda``: the
hand-written CUDA engine; ``c``, ``multicore``, ``opencl``, ``pyopencl``: Futhark). Availability is probed once per
process.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import engines
from ..instruments.option import describe
from ..lattice.book import Book
from . import costs, futhark_fast

#: Widest tree the ``cuda`` engine's fast kernels hold in registers (wider ones use its block kernel).
CUDA_FAST_MAX_WIDTH = 512
#: The candidates, in the order that breaks ties: (engine, target).
CANDIDATES: tuple[tuple[str, str | None], ...] = (("cuda", None), ("futhark", "opencl"), ("futhark", "multicore"),
                                                  ("futhark", "c"), ("reference", None))


@dataclass(frozen=True)
class Profile:
    """What the inspector sees of a book."""

    trees: int
    work: float  #: node updates of both passes (docs/model.md §1.11)
    widest: int
    width_skewness: float
    height_skewness: float
    width_std: float
    height_std: float


def inspect(book: Book) -> Profile:
    """Cheap statistics of a validated book (one pass over its geometry; cached on the book)."""
    return book.cached("profile", lambda: _profile(book))


def _profile(book: Book) -> Profile:
    if len(book) == 0:
        return Profile(0, 0.0, 0, 0.0, 0.0, 0.0, 0.0)
    n, jmax = book.shape()
    width, height = 2 * jmax + 1, n + 1
    widths, heights = describe(width), describe(height)
    return Profile(trees=len(book), work=float(book.work().sum()), widest=int(width.max()),
                   width_skewness=widths["skewness"], height_skewness=heights["skewness"],
                   width_std=widths["std"], height_std=heights["std"])


def usable(name: str, target: str | None = None) -> bool:
    """Can engine ``name`` (on ``target``) run here? (asked once per process)"""
    return engines.usable(name, target)


def opencl_gpu() -> bool:
    """Is there an OpenCL platform with a GPU here (not PoCL on the CPU)?"""
    return futhark_fast.gpu_shape("opencl")


def cost_key(name: str, target: str | None) -> str:
    """The cost model's name of an engine on a target (``futhark/multicore``, ``cuda``)."""
    return f"{name}/{target}" if target else name


def predictions(book: Book) -> list[tuple[str, str | None, float]]:
    """``(engine, target, predicted seconds)`` of every usable candidate for ``book``, in :data:`CANDIDATES` order."""
    model = costs.load()
    f = costs.features(book)
    rows = []
    for name, target in CANDIDATES:
        if not usable(name, target) or (target == "opencl" and not opencl_gpu()):
            continue
        rows.append((name, target, model[cost_key(name, target)].predict(f)))
    return rows


#: Where ``auto`` prices a book with sigma pieces or coupon options (the first usable): the engines that price them,
#: the CPU's cores first (Futhark prices such trees a tree a map element, which fills a GPU only with large books;
#: ``cuda`` prices them on its kernel with levels in global memory, which issue 34 measured 40x slower than Futhark
#: multicore on a desk's 14 trades).
PIECES_ORDER: tuple[tuple[str, str | None], ...] = (("futhark", "multicore"), ("futhark", "cuda"), ("cuda", None),
                                                     ("futhark", "c"), ("reference", None))


def choose(book: Book, precision: str = "f64", target: str | None = None) -> tuple[str, str | None]:
    """The engine (and its target, or None) that ``auto`` runs for ``book``, honouring ``target`` (a book with sigma
    pieces or coupon options: :data:`PIECES_ORDER`'s first usable engine)."""
    if (book.sigma_pieces is not None or book.has_coupon_options()) and target is None:
        return next(((name, chosen) for name, chosen in PIECES_ORDER if usable(name, chosen)), ("reference", None))
    if target is not None:
        if target == "cuda" and usable("cuda"):
            return "cuda", target
        futhark = "futhark" if target != "pyopencl" else "futhark-basic"
        if usable(futhark, target):
            return futhark, target
        raise engines.BackendUnavailable(f"no engine can run on target {target!r} here "
                                         f"({engines.get(futhark).available(target)[1]})")
    rows = predictions(book)
    if not rows:
        return "reference", None
    name, chosen, _seconds = min(rows, key=lambda row: row[2])
    return name, chosen


def explain(book: Book) -> str:
    """What each usable candidate was predicted to cost for ``book``, the chosen first."""
    if book.sigma_pieces is not None or book.has_coupon_options():
        return "trees with sigma pieces or caps and floors on coupons: the engines that price them, in order (" + \
            ", ".join(f"{n}/{t}" if t else n for n, t in PIECES_ORDER) + ")"
    rows = sorted(predictions(book), key=lambda row: row[2])
    model = costs.load()
    return "; ".join(f"{cost_key(name, target)} {seconds * 1e3:.3g} ms ({model[cost_key(name, target)].source})"
                     for name, target, seconds in rows)


def describe_choice(book: Book, precision: str = "f64", target: str | None = None) -> str:
    """One line: what auto picks and why (for ``trinom backends`` and ``trinom info``)."""
    name, chosen = choose(book, precision, target)
    p = inspect(book)
    return (f"{name}{'/' + chosen if chosen else ''} ({p.trees} trees, {p.work:.3g} node updates, widest tree "
            f"{p.widest}; predicted: {explain(book)})")
