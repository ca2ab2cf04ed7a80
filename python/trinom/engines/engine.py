"""The engine interface every backend implements, and the engine built from instrument kernels.

An engine prices a :class:`~trinom.lattice.book.Book` in a :class:`~trinom.model.market.Market`::

    engine.price(book, market, *, precision="f64", target=None, device=0, **tuning)
        -> numpy array of shape (len(market), len(book)), in book order

``precision`` is ``"f32"`` or ``"f64"`` (the dtype of the result), ``target`` the device family where
an engine has several (Futhark's ``c``, ``multicore``, ``opencl``, ``cuda``), ``device`` the GPU's
index (0 on the CPU), ``tuning`` the engine's own knobs; an unknown knob is an error. The book it
receives is validated and non-empty. A new formulation or device plugs in by subclassing
:class:`Engine` and registering it (:func:`trinom.engines.register`); see docs/extending.md.

:class:`KernelEngine` is the engine of the existing kernels: for each instrument of the book it
rebuilds that kernel's inputs (:mod:`trinom.engines.lift`) and runs the kernel module. A market of
several scenarios (or with sigma or spread moves) is one batch (:mod:`trinom.engines.scenario_batch`):
the distinct (tree, curve, spread) entries its scenarios need, priced in one call of the kernels
(options: one per distinct curve, except on kernels that take every option's curve, as the CUDA ones
do: one library call); the ``cuda`` engine prices a bond book's entries in one library call, one
forward pass per tree and one backward pass per entry.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from ..lattice.book import BOND, INSTRUMENT_NAMES, OPTION, Book
from ..model.market import Market
from .outcomes import SEARCH_OUTCOMES, BackendUnavailable

if TYPE_CHECKING:
    from .scenario_batch import ScenarioBatch

PRECISIONS: tuple[str, ...] = ("f32", "f64")
#: Futhark targets that run on a GPU (where a device index means something).
GPU_TARGETS = ("opencl", "cuda", "pyopencl")


@dataclass(frozen=True)
class SearchLimits:
    """Where and how far a spread search goes: ``bracket`` (the lowest and highest spread, percent), ``tolerance``
    (the largest ``|model - goal|`` accepted) and ``relative_tolerance`` (the largest ``|model - goal| / goal``),
    both required, and ``max_iterations`` (the most pricings of one tree)."""

    bracket: tuple[float, float] = (-20.0, 50.0)
    tolerance: float = 1e-9
    relative_tolerance: float = 1e-11
    max_iterations: int = 60


class SpreadSolution(NamedTuple):
    """An engine's spread search (:meth:`Engine.solve_spreads`), per tree: the ``spread`` found (NaN where
    outside or skipped), the dirty ``price`` there, the ``iterations`` (pricings) it took and its ``status``, the
    codes of ``enum trinom_search_status``: :data:`SEARCH_OUTCOMES` names them."""

    spread: np.ndarray
    price: np.ndarray
    iterations: np.ndarray
    status: np.ndarray


class Engine:
    """Base class of engines: a name, what it prices, where it runs, and :meth:`price`."""

    name: str = ""
    #: A rough, low estimate of its node updates a second (see :meth:`throughput`).
    rate: float = 1e8
    #: The instrument kinds it prices (:data:`~trinom.lattice.book.OPTION`, :data:`~trinom.lattice.book.BOND`).
    instruments: frozenset[int] = frozenset()

    @property
    def targets(self) -> tuple[str, ...]:
        """The targets it can run on (``()``: one, unnamed)."""
        return ()

    def available(self, target: str | None = None) -> tuple[bool, str]:
        """``(usable here?, why not / what it runs on)``."""
        raise NotImplementedError

    def price(self, book: Book, market: Market, *, precision: str = "f64", target: str | None = None,
              device: int = 0, **tuning: Any) -> np.ndarray:
        """Prices of shape ``(len(market), len(book))`` in book order."""
        raise NotImplementedError

    def price_entries(self, plan: ScenarioBatch, precision: str, target: str | None, device: int,
                      tuning: Mapping[str, Any], scratch: bool = False) -> np.ndarray:
        """The price of every entry of ``plan`` (its curve and spread, its tree's sigma move): by
        default a book of one tree per entry, in a market of one scenario, priced in one :meth:`price` call.
        ``scratch``: the caller only reads the entries before its next call on ``plan`` (an engine may then write
        them into a buffer the plan keeps, :meth:`ScenarioBatch.scratch`)."""
        from .scenario_batch import expanded

        flat, market = expanded(plan)
        return self.price(flat, market, precision=precision, target=target, device=device, **tuning)[0]

    def solves_spreads(self, book: Book) -> bool:
        """Whether :meth:`solve_spreads` searches ``book``'s spreads inside the engine (else an OAS search prices
        each of its steps with :meth:`price_entries`)."""
        return False

    def solve_spreads(self, book: Book, market: Market, goal: np.ndarray, limits: SearchLimits, *,
                      precision: str = "f64", target: str | None = None, device: int = 0,
                      **tuning: Any) -> SpreadSolution:
        """Per tree of ``book`` (bonds), the spread at which its dirty price in ``market`` (one scenario) equals
        ``goal`` (NaN: skip the tree), within ``limits``, searched inside the engine (see :class:`SpreadSolution`;
        only where :meth:`solves_spreads`)."""
        raise NotImplementedError(f"engine {self.name!r} has no spread search of its own")

    def runner(self, book: Book, market: Market, *, precision: str = "f64", target: str | None = None,
               device: int = 0, **tuning: Any) -> Callable[[], np.ndarray]:
        """A call that prices ``book`` in ``market`` (what :meth:`price` returns) each time it is made: the
        checks and the set-up are done once, here. :func:`trinom.price` keeps it for repeated calls."""
        return lambda: self.price(book, market, precision=precision, target=target, device=device, **tuning)

    def price_into(self, book: Book, market: Market, out: np.ndarray, *, precision: str = "f64",
                   target: str | None = None, device: int = 0, **tuning: Any) -> None:
        """:meth:`price`'s prices written into ``out`` (shape ``(len(market), len(book))``, a view of a larger
        array maybe: a Dask call's result in shared memory). Engines that gather a grid from its entries gather
        straight into ``out``, through buffers kept for the next call (no new large array)."""
        out[...] = self.price(book, market, precision=precision, target=target, device=device, **tuning)

    def throughput(self, target: str | None = None) -> float:
        """A rough, low estimate of the node updates a second it prices on ``target`` (to plan progress slices)."""
        return self.rate

    def check_book(self, book: Book) -> None:
        """A clear error if the book holds an instrument (or trees with sigma pieces) this engine does not price."""
        missing = sorted(set(book.instruments()) - self.instruments)
        if missing:
            what = " and ".join(f"{INSTRUMENT_NAMES[k]}s" for k in missing)
            able = " and ".join(f"{INSTRUMENT_NAMES[k]}s" for k in sorted(self.instruments))
            raise ValueError(f"engine {self.name!r} prices {able} only, and the book holds {what}")
        if book.sigma_pieces is not None and not self.prices_sigma_pieces():
            raise ValueError(f"engine {self.name!r} does not price trees whose sigma is piecewise constant (the "
                             "futhark, cuda and reference engines do; backend='auto' picks one of them for such a book)")
        if book.has_coupon_options() and not self.prices_coupon_options():
            raise ValueError(f"engine {self.name!r} does not price caps or floors on floating coupons (the futhark, "
                             "cuda and reference engines do; backend='auto' picks one of them for such a book)")

    def prices_sigma_pieces(self) -> bool:
        """Whether the engine prices bond trees with sigma pieces (:class:`~trinom.model.piecewise_tree.SigmaPieces`)."""
        return False

    def prices_coupon_options(self) -> bool:
        """Whether the engine prices bond trees with options on coupon rates
        (:mod:`trinom.instruments.coupon_options`)."""
        return False

    def __repr__(self) -> str:
        return f"<engine {self.name}>"


class KernelEngine(Engine):
    """An engine made of one kernel module per instrument (imported lazily).

    A kernel module defines ``NAME``, ``TARGETS``, ``available(target=None)`` and ``price(portfolio,
    curve or curves, precision, *, target=None, **knobs)`` for its instrument's own inputs. An option kernel
    that takes ``curve_index`` prices options on several curves in one call (``curves``, and each option's
    index into them); others are called once per curve.
    """

    #: Keyword arguments the engine itself gives a kernel, never a user's knob.
    INTERNAL_KNOBS: ClassVar[frozenset[str]] = frozenset({"curve_index"})

    def __init__(self, name: str, kernels: Mapping[int, str], description: str = "", rate: float = 1e8,
                 target_rates: Mapping[str, float] | None = None):
        self.name = name
        self.rate = rate
        self.target_rates = dict(target_rates or {})
        self.kernels = dict(kernels)
        self.instruments = frozenset(kernels)
        self.description = description
        self._knobs: dict[int, tuple[set[str], bool]] = {}
        self._targets: tuple[str, ...] | None = None
        self._modules: dict[int, ModuleType] = {}

    def prices_sigma_pieces(self) -> bool:
        """Its bond kernel module says so (``SIGMA_PIECES = True``)."""
        return BOND in self.kernels and bool(getattr(self.module(BOND), "SIGMA_PIECES", False))

    def prices_coupon_options(self) -> bool:
        """Its bond kernel module says so (``COUPON_OPTIONS = True``)."""
        return BOND in self.kernels and bool(getattr(self.module(BOND), "COUPON_OPTIONS", False))

    def module(self, instrument: int) -> ModuleType:
        """The kernel module of ``instrument``."""
        if instrument in self._modules:
            return self._modules[instrument]
        try:
            self._modules[instrument] = importlib.import_module(self.kernels[instrument])
            return self._modules[instrument]
        except ModuleNotFoundError as err:
            if err.name and self.kernels[instrument].startswith(err.name):
                raise BackendUnavailable(f"engine {self.name!r} is not implemented in this version") from None
            raise

    @property
    def targets(self) -> tuple[str, ...]:
        """The targets every kernel of the engine runs on."""
        if self._targets is None:
            lists = [self.module(k).TARGETS for k in sorted(self.kernels)]
            self._targets = tuple(t for t in lists[0] if all(t in other for other in lists[1:]))
        return self._targets

    def available(self, target: str | None = None) -> tuple[bool, str]:
        reasons = []
        for kind in sorted(self.kernels):
            try:
                usable, reason = self.module(kind).available(target)
            except BackendUnavailable as err:
                return False, str(err)
            if not usable:
                return False, reason
            reasons.append(reason)
        return True, "; ".join(dict.fromkeys(reasons))

    def knobs(self, instrument: int) -> tuple[set[str], bool]:
        """The keyword arguments the kernel of ``instrument`` takes (and whether it takes any)."""
        if instrument not in self._knobs:
            parameters = inspect.signature(self.module(instrument).price).parameters.values()
            named = {p.name for p in parameters if p.kind == p.KEYWORD_ONLY}
            self._knobs[instrument] = named, any(p.kind == p.VAR_KEYWORD for p in parameters)
        return self._knobs[instrument]

    def price(self, book: Book, market: Market, *, precision: str = "f64", target: str | None = None,
              device: int = 0, **tuning: Any) -> np.ndarray:
        self.check_call(book, precision, target, tuning)
        if len(market) > 1 or market.moves_trees:
            from .scenario_batch import planned

            plan = planned(book, market)
            return plan.gather(self.price_entries(plan, precision, target, device, tuning))
        kinds = book.instruments()
        if len(kinds) == 1:  # the common case: one instrument, no copies
            return self._run(kinds[0], book, market, 0, precision, target, device, tuning).reshape(1, -1)
        out = np.empty((1, len(book)), dtype=np.float32 if precision == "f32" else np.float64)
        for kind in kinds:
            out[0, book.rows_of(kind)] = self._run(kind, book.part(kind), market, 0, precision, target, device, tuning)
        return out

    def price_into(self, book: Book, market: Market, out: np.ndarray, *, precision: str = "f64",
                   target: str | None = None, device: int = 0, **tuning: Any) -> None:
        if not (len(market) > 1 or market.moves_trees):
            return super().price_into(book, market, out, precision=precision, target=target, device=device, **tuning)
        from .scenario_batch import planned

        self.check_call(book, precision, target, tuning)
        plan = planned(book, market)
        entries = self.price_entries(plan, precision, target, device, tuning, scratch=True)
        plan.gather(entries, out=out)
        plan.keep_scratch(entries)
        return None

    def throughput(self, target: str | None = None) -> float:
        return self.target_rates.get(target or "", self.rate)

    def runner(self, book: Book, market: Market, *, precision: str = "f64", target: str | None = None,
               device: int = 0, **tuning: Any) -> Callable[[], np.ndarray]:
        """A one-instrument book in a market of one scenario that moves no tree calls its kernel directly (a
        subclass that prices such books otherwise must override this too); anything else calls :meth:`price`
        (a lone sigma or spread move is a scenario batch there, never the unmoved kernel call)."""
        kinds = book.instruments()
        if len(kinds) != 1 or len(market) != 1 or market.moves_trees:
            return super().runner(book, market, precision=precision, target=target, device=device, **tuning)
        self.check_call(book, precision, target, tuning)
        module, arguments, knobs = self._call(kinds[0], book, market, 0, precision, target, device, tuning)
        if arguments is None:
            return super().runner(book, market, precision=precision, target=target, device=device, **tuning)
        return lambda: module.price(*arguments, precision, target=target, **knobs).reshape(1, -1)

    def check_call(self, book: Book, precision: str, target: str | None, tuning: Mapping[str, Any]) -> None:
        """Errors for an instrument, precision, target or knob this engine does not take (nothing is ignored)."""
        self.check_book(book)
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if target is not None and target not in self.targets:
            runs_on = f"targets {', '.join(self.targets)}" if self.targets else "no named target"
            raise ValueError(f"engine {self.name!r} runs on {runs_on}; got target {target!r}")
        self._check_tuning(book, tuning)

    def _check_tuning(self, book: Book, tuning: Mapping[str, Any]) -> None:
        """Every knob must be taken by a kernel the book uses: nothing is ignored silently."""
        if not tuning:
            return
        taken: set[str] = set()
        for kind in book.instruments():
            named, any_name = self.knobs(kind)
            if any_name:
                return
            taken |= named - self.INTERNAL_KNOBS
        unknown = sorted(set(tuning) - taken)
        if unknown:
            raise ValueError(f"engine {self.name!r} takes no option {', '.join(map(repr, unknown))} "
                             f"(it takes: {', '.join(sorted(taken - {'target', 'device'})) or 'none'})")

    def _call(self, kind: int, part: Book, market: Market, scenario: int, precision: str, target: str | None,
              device: int, tuning: Mapping[str, Any]) -> tuple[ModuleType, tuple | None, dict[str, Any]]:
        """The kernel module, its leading arguments (None when the options need several curves and the kernel
        takes one curve a call) and knobs."""
        from . import lift

        module = self.module(kind)
        named, any_name = self.knobs(kind)
        knobs = {k: v for k, v in tuning.items() if any_name or k in named}
        knobs.update(self._device_knob(named, any_name, target, device))
        curves = market.aligned(part.curve_names, scenario)
        if kind == BOND:
            return module, (lift.bonds(part), curves), knobs
        used = part.curves_used()
        if len(used) == 1:  # the common case: every option on one curve
            return module, (lift.options(part), curves[used[0]]), knobs
        if "curve_index" in named:  # a kernel that takes every option's curve: one call for all
            return module, (lift.options(part), curves), {**knobs, "curve_index": part.curve}
        return module, None, knobs

    def _run(self, kind: int, part: Book, market: Market, scenario: int, precision: str, target: str | None,
             device: int, tuning: Mapping[str, Any]) -> np.ndarray:
        module, arguments, knobs = self._call(kind, part, market, scenario, precision, target, device, tuning)
        if arguments is not None:
            return module.price(*arguments, precision, target=target, **knobs)
        from . import lift

        curves = market.aligned(part.curve_names, scenario)
        prices = np.empty(len(part), dtype=np.float32 if precision == "f32" else np.float64)
        for curve in part.curves_used():
            rows = np.flatnonzero(part.curve == curve)
            prices[rows] = module.price(lift.options(part.take(rows)), curves[curve], precision, target=target, **knobs)
        return prices

    def _device_knob(self, named: set[str], any_name: bool, target: str | None, device: int) -> dict[str, Any]:
        """How the kernel is told the device: an index where it takes ``device: int``, Futhark's ``#k`` on GPU
        targets; on the CPU only device 0 exists."""
        if "device" in named:
            return {"device": int(device)}
        if device == 0:
            return {}
        if any_name and target in GPU_TARGETS:
            return {"device": f"#{int(device)}"}
        raise BackendUnavailable(f"engine {self.name!r} on target {target or 'default'} runs on device 0 only, "
                                 f"got device {device}")


class CudaEngine(KernelEngine):
    """The ``cuda`` engine: its kernels, and a book holding options and bonds priced in one library call.

    The library's one C entry takes both sections of a book and a device id (``_cuda_lib.price_book``);
    a mixed book with one scenario, its options on one curve and no per-instrument knobs is sent there
    whole, anything else goes through the kernels one instrument at a time as in :class:`KernelEngine`.
    """

    #: Knobs that mean the same for both sections of the one call.
    SHARED_KNOBS = frozenset({"sort", "memory_limit", "timing"})
    #: Bond knobs the scenario call takes (the bond kernel's, under their price_book names).
    ENTRY_KNOBS: ClassVar[dict[str, str]] = {
        "block_size": "bond_block_size", "chunk_size": "bond_chunk_size", "wide_only": "wide_only", "sort": "sort",
        "memory_limit": "memory_limit", "timing": "timing"}
    #: Option knobs the scenario call takes (the fast option kernel's).
    OPTION_ENTRY_KNOBS: ClassVar[dict[str, str]] = {
        "block_size": "block_size", "chunk_size": "chunk_size", "sort": "sort", "memory_limit": "memory_limit",
        "timing": "timing"}
    #: Option trees whose fast-kernel window (``2 min(jmax, n) + 1`` nodes, in the call's precision) is at most this
    #: wide are priced by the library's option entries. The kernel holds 511 (jmax 255); the device's exp may differ
    #: from NumPy's by an ulp, which moves a jmax at an integer's edge by one: one jmax of margin. Wider trees are
    #: priced one tree per entry, where the library did not price them (it skips, NaN, what it finds too wide).
    OPTION_ENTRY_WIDTH = 509

    def price_entries(self, plan: ScenarioBatch, precision: str, target: str | None, device: int,
                      tuning: Mapping[str, Any], scratch: bool = False) -> np.ndarray:
        """Bond entries in one library call (one forward pass per bond and sigma move, one backward pass per
        entry); option entries in another (per option the forward pass and the backward steps down to its
        expiry once, the steps below per entry); option trees too wide for the fast kernel one tree per entry,
        each on its entry's curve, in one call too."""
        from . import _cuda_lib
        from .bond_arrays import bond_blocks, bonds_at, entries_of

        book = plan.book
        self.check_call(book, precision, target, tuning)
        bonds, options = book.rows_of(BOND), book.rows_of(OPTION)
        if book.sigma_pieces is not None or book.has_coupon_options():  # moved with sigma, on each entry's curve
            return super().price_entries(plan, precision, target, device, tuning)
        if set(tuning) - (set(self.ENTRY_KNOBS) if bonds.size else set()) - (
                set(self.OPTION_ENTRY_KNOBS) if options.size else set()):
            return super().price_entries(plan, precision, target, device, tuning)
        dtype = np.dtype(np.float32 if precision == "f32" else np.float64)
        out = plan.scratch(dtype) if scratch else np.empty(plan.entries, dtype=dtype)
        counts = np.diff(plan.entry_offset)
        blocks = np.arange(plan.sigma_moves.size)[:, None] * len(book)
        if options.size:
            trees = (blocks + options[None, :]).reshape(-1)
            self._option_entries(plan, trees, out, precision, target, device, tuning)
        if not bonds.size:
            return out
        trees = (blocks + bonds[None, :]).reshape(-1)
        arrays = bond_blocks(book.part(BOND), plan.sigma_moves)
        used = np.flatnonzero(counts[trees] > 0)
        if used.size < trees.size // 2:  # few bonds priced (an OAS search's last steps): send only those
            arrays, trees = bonds_at(arrays, used), trees[used]
        where = entries_of(plan.entry_offset, trees)
        offset = np.concatenate(([0], np.cumsum(counts[trees])))
        knobs = {self.ENTRY_KNOBS[k]: v for k, v in tuning.items()}
        resume = (None if plan.checkpoint is None or plan.resume is None
                  else (plan.checkpoint[trees], plan.resume[where]))
        _, prices = _cuda_lib.price_book(None, None, arrays, plan.curves, precision, device=device, target=target,
                                         entries=(offset, plan.entry_curve[where], plan.entry_spread[where]),
                                         resume=resume, **knobs)
        out[where] = prices
        return out

    def _option_entries(self, plan: ScenarioBatch, trees: np.ndarray, out: np.ndarray, precision: str,
                        target: str | None, device: int, tuning: Mapping[str, Any]) -> None:
        """The entries of the option trees ``trees`` (of ``plan.trees``, ascending) into ``out``: the narrow trees'
        in one library call, the wide ones one tree per entry. Where ``trees`` are every tree of the batch, the
        library takes the batch's arrays as they are and writes into ``out`` (no index arrays over the entries),
        skipping the trees too wide for its fast kernel (NaN): only those are priced one tree per entry."""
        from . import _cuda_lib, lift

        counts = np.diff(plan.entry_offset)
        whole = trees.size == len(plan.trees)  # ascending and distinct: every tree of the batch
        part = plan.trees if whole else plan.trees.take(trees)
        narrow = self._narrow(part, precision)
        has = counts[trees] > 0
        knobs = {self.OPTION_ENTRY_KNOBS[k]: v for k, v in tuning.items() if k in self.OPTION_ENTRY_KNOBS}
        fits = narrow & has
        wide = np.flatnonzero(~narrow & has)
        if not fits.any():
            pass
        elif whole and has.all():  # the common case
            _cuda_lib.price_book(lift.options(part), plan.curves, None, (), precision, device=device, target=target,
                                 option_entries=(plan.entry_offset, plan.entry_curve), option_out=out,
                                 skip_wide=True, **knobs)
            # Of the trees past the margin, those the library found too wide for its kernel (their entries NaN): a
            # tree it priced has its prices (a NaN price priced again gives the same NaN).
            wide = wide[np.isnan(out[plan.entry_offset[trees[wide]]])]
        else:
            chosen = np.zeros(len(plan.trees), dtype=bool)
            chosen[trees[fits]] = True
            mask = np.repeat(chosen, counts)  # their entries, in entry order (trees ascending)
            rows = np.flatnonzero(fits)
            offset = np.concatenate(([0], np.cumsum(counts[trees[fits]])))
            prices, _ = _cuda_lib.price_book(lift.options(part.take(rows)), plan.curves, None, (), precision,
                                             device=device, target=target,
                                             option_entries=(offset, plan.entry_curve[mask]), **knobs)
            out[mask] = prices
        if wide.size:  # a book of one tree per entry, each on its entry's curve (curve_index): one call
            batch, where = plan.part(trees[wide])
            option_knobs = {k: v for k, v in tuning.items() if k in self.OPTION_ENTRY_KNOBS}
            timing = option_knobs.get("timing")
            if timing is not None:  # its own times, added to the entries' call's
                option_knobs["timing"] = {}
            out[where] = super().price_entries(batch, precision, target, device, option_knobs)
            if timing is not None:
                for key, value in option_knobs["timing"].items():
                    if isinstance(value, (int, float)):
                        timing[key] = timing.get(key, 0) + value

    def _narrow(self, trees: Book, precision: str) -> np.ndarray:
        """Which option trees the library's option entries take (:data:`OPTION_ENTRY_WIDTH`; kept on the book)."""
        def compute() -> np.ndarray:
            n, jmax = trees.shape(np.float32 if precision == "f32" else np.float64)
            return 2 * np.minimum(n, jmax) + 1 <= self.OPTION_ENTRY_WIDTH
        return trees.cached(("cuda-entry-narrow", precision, self.OPTION_ENTRY_WIDTH), compute)

    def solves_spreads(self, book: Book) -> bool:
        """A book of bonds: the library searches every bond's spread in one call (trinom_spread_search)."""
        return len(book) > 0 and book.instruments() == [BOND]

    def solve_spreads(self, book: Book, market: Market, goal: np.ndarray, limits: SearchLimits, *,
                      precision: str = "f64", target: str | None = None, device: int = 0,
                      **tuning: Any) -> SpreadSolution:
        """One library call: per bond, the forward pass once, then a Newton step per backward pass, each pass
        carrying the price's derivative by the spread (cuda/kernel_bonds.cuh)."""
        from . import _cuda_lib, lift

        if not self.solves_spreads(book):
            raise ValueError("the cuda engine searches the spreads of a book of bonds only")
        self.check_call(book, precision, target, tuning)
        unknown = sorted(set(tuning) - set(self.ENTRY_KNOBS))
        if unknown:
            raise ValueError(f"the spread search takes no option {', '.join(map(repr, unknown))}")
        search = _cuda_lib.SpreadSearch(target=goal, low=limits.bracket[0], high=limits.bracket[1],
                                        tolerance=limits.tolerance, relative_tolerance=limits.relative_tolerance,
                                        max_iterations=limits.max_iterations)
        knobs = {self.ENTRY_KNOBS[k]: v for k, v in tuning.items()}
        _, prices = _cuda_lib.price_book(None, None, lift.bonds(book), market.aligned(book.curve_names), precision,
                                         device=device, target=target, search=search, **knobs)
        return SpreadSolution(search.spread, prices, search.iterations, search.status)

    def price(self, book: Book, market: Market, *, precision: str = "f64", target: str | None = None,
              device: int = 0, **tuning: Any) -> np.ndarray:
        one_call = (book.instruments() == [OPTION, BOND] and len(market) == 1 and not market.moves_trees
                    and set(tuning) <= self.SHARED_KNOBS
                    and len(book.part(OPTION).curves_used()) == 1)
        if not one_call:
            return super().price(book, market, precision=precision, target=target, device=device, **tuning)
        from . import _cuda_lib, lift

        self.check_call(book, precision, target, tuning)
        options_rows, bond_rows = book.rows_of(OPTION), book.rows_of(BOND)
        options, bonds = book.part(OPTION), book.part(BOND)
        curves = market.aligned(book.curve_names)
        option_prices, bond_prices = _cuda_lib.price_book(
            lift.options(options), curves[int(options.curve[0])], lift.bonds(bonds), curves,
            precision, device=device, target=target, **tuning)
        out = np.empty((1, len(book)), dtype=np.float32 if precision == "f32" else np.float64)
        out[0, options_rows], out[0, bond_rows] = option_prices, bond_prices
        return out


__all__ = ["BOND", "OPTION", "PRECISIONS", "SEARCH_OUTCOMES", "BackendUnavailable", "CudaEngine", "Engine",
           "KernelEngine", "SearchLimits", "SpreadSolution"]
