"""The hand-written CUDA library ``trinom/_lib/libtrinom_cuda.so``, loaded with cffi (ABI mode).

One loader and one entry: every price goes through ``trinom_cuda_price_book``, which takes a book
(an option section and a bond section, either may be empty) and a device id. :func:`price_book`
makes that one call for a mixed book; :func:`price` (the option backends ``cuda-option``,
``cuda-multi`` and ``cuda``) and :func:`price_bonds` (the bond backend ``bonds_cuda``) call it with
one section. The library keeps one context per device, created on the first call for that device
and kept until the process ends; calls on different devices may run at the same time from
different threads (cffi releases the GIL during the call).

Errors come back as data (the library's ``trinom_error``): :class:`CudaError` carries the status,
the failing row of the section's input arrays, the field and the stage. Where the library is not
built or no GPU exists, :func:`available` says ``(False, "no CUDA device: ...")`` and the pricing
functions raise :class:`~trinom.engines.BackendUnavailable`.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model.curve import YieldCurve
from ..portfolio import Portfolio
from .coupon_option_terms import option_terms
from .outcomes import SEARCH_OUTCOMES, BackendUnavailable

if TYPE_CHECKING:
    from ..instruments.bond import BondPortfolio

_PACKAGE = Path(__file__).resolve().parent.parent
LIBRARY = _PACKAGE / "_lib" / "libtrinom_cuda.so"
#: The header: next to the library once built, else in the source tree.
HEADERS = (_PACKAGE / "_lib" / "trinom_cuda.h", _PACKAGE.parent.parent / "cuda" / "trinom_cuda.h")

VARIANTS: dict[str, int] = {"option": 0, "multi": 1, "fast": 2}
PADDINGS: dict[str, int] = {"global": 0, "block": 1, "warp": 2}
#: ``wide_only``: bonds by width (False), every bond on the wide-tree kernels in registers (True), or on the one
#: with levels in global memory (``"global"``, the kernel before issue 34).
WIDE_ONLY: dict[bool | str, int] = {False: 0, True: 1, "global": 2}
_PRECISIONS: dict[str, tuple[int, type[np.floating]]] = {"f32": (0, np.float32), "f64": (1, np.float64)}
_NO_DEVICE = "no CUDA device"
#: enum trinom_status
OK, ERR_CUDA, ERR_ARGUMENT, ERR_MEMORY, ERR_NO_DEVICE, ERR_DEVICE = 0, 1, 2, 3, 5, 6
#: enum trinom_section, by name
SECTIONS: dict[int, str] = {0: "", 1: "options", 2: "bonds"}

_OPTION_FIELDS = ("strike", "maturity", "expiry", "term_unit", "term_steps", "a", "sigma")
_BOND_FIELDS_INT64 = ("term_unit", "term_steps", "first_exercise", "last_exercise", "exercise_frequency",
                      "curve_index", "cashflow_offset", "cashflow_step", "exercise_offset", "exercise_step")
_BOND_FIELDS_FLOAT64 = ("a", "sigma", "maturity", "spread", "strike", "repayment", "coupon", "exercise_price")
#: The listed exercise points' arrays: left NULL where no bond has any (the kernels then skip them).
_LISTED_FIELDS = ("exercise_offset", "exercise_step", "exercise_price")
_C_TYPES = {np.dtype(np.int64): "int64_t[]", np.dtype(np.int32): "int32_t[]", np.dtype(np.float64): "double[]",
            np.dtype(np.int8): "int8_t[]"}


@dataclass
class SpreadSearch:
    """A spread search for :func:`price_book` (``trinom_spread_search``): per bond, the spread (percent) at which
    the model's dirty price equals ``target`` (NaN or not > 0: the bond is skipped), searched in ``[low, high]``
    to ``tolerance`` (absolute) and ``relative_tolerance`` in at most ``max_iterations`` pricings. The call
    fills ``spread`` (NaN where outside or skipped), ``iterations`` and ``status`` (``enum trinom_search_status``,
    named by :data:`trinom.engines.engine.SEARCH_OUTCOMES`)."""

    target: np.ndarray
    low: float
    high: float
    tolerance: float
    relative_tolerance: float
    max_iterations: int
    spread: np.ndarray = field(init=False, repr=False)
    iterations: np.ndarray = field(init=False, repr=False)
    status: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.target = np.ascontiguousarray(self.target, dtype=np.float64)
        count = self.target.size
        self.spread = np.full(count, np.nan)
        self.iterations = np.zeros(count, dtype=np.int32)
        self.status = np.full(count, SEARCH_OUTCOMES.index("skipped"), dtype=np.int32)


class CudaError(RuntimeError):
    """The CUDA library refused or failed, from its ``trinom_error``.

    ``code`` is the status (``ERR_*``), ``row`` the failing row of the section's input arrays (-1 if
    none), ``section`` ``"options"``, ``"bonds"`` or ``""``, ``field`` the input field at fault and
    ``stage`` where it failed (both may be empty), ``device`` the device id of the call.
    """

    def __init__(self, code: int, message: str, *, row: int = -1, section: str = "", field: str = "",
                 stage: str = "", device: int = -1):
        super().__init__(message)
        self.code = code
        self.row = row
        self.section = section
        self.field = field
        self.stage = stage
        self.device = device


def cdef_text(header: str) -> str:
    """The declarations between the CDEF markers with preprocessor lines dropped (for ``ffi.cdef``)."""
    begin, end = header.index("/* CDEF BEGIN */"), header.index("/* CDEF END */")
    lines = header[begin:end].splitlines()[1:]
    return "\n".join(line for line in lines if not line.lstrip().startswith("#"))


class _Library:
    """The library, opened once (under a lock); it creates its device contexts itself."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ffi: Any = None
        self.lib: Any = None

    def open(self) -> tuple[Any, Any]:
        with self.lock:
            if self.lib is not None:
                return self.ffi, self.lib
            if not LIBRARY.exists():
                raise BackendUnavailable(f"{_NO_DEVICE}: {LIBRARY} is not built "
                                         "(it is built where nvcc and an NVIDIA GPU are present)")
            header = next((h for h in HEADERS if h.exists()), None)
            if header is None:
                raise BackendUnavailable(f"{_NO_DEVICE}: trinom_cuda.h not found beside {LIBRARY}")
            try:
                import cffi
            except ImportError as err:  # pragma: no cover - cffi is a dependency
                raise BackendUnavailable(f"{_NO_DEVICE}: cffi is not installed ({err})") from None
            ffi = cffi.FFI()
            ffi.cdef(cdef_text(header.read_text()))
            try:
                lib = ffi.dlopen(str(LIBRARY))
            except OSError as err:
                raise BackendUnavailable(f"{_NO_DEVICE}: cannot load {LIBRARY.name}: {err}") from None
            self.ffi, self.lib = ffi, lib
            return ffi, lib


_LIBRARY = _Library()


def _text(ffi: Any, chars: Any) -> str:
    return ffi.string(chars).decode(errors="replace")


def _failure(ffi: Any, error: Any, *, name_section: bool = False) -> Exception:
    """The exception for a filled ``trinom_error``: BackendUnavailable where no GPU exists, else CudaError.

    The row comes from the struct: the message is ``row N: ...`` (``options row N`` / ``bonds row N``
    with ``name_section``, for a book of both).
    """
    code, message = int(error.status), _text(ffi, error.message)
    if code == ERR_NO_DEVICE:
        return BackendUnavailable(message if message.startswith(_NO_DEVICE) else f"{_NO_DEVICE}: {message}")
    row, section = int(error.row), SECTIONS.get(int(error.section), "")
    if row >= 0:
        message = f"{section + ' ' if name_section and section else ''}row {row}: {message}"
    return CudaError(code, message, row=row, section=section, field=_text(ffi, error.field),
                     stage=_text(ffi, error.stage), device=int(error.device))


def _device_names(ffi: Any, lib: Any) -> list[str]:
    """The names of the devices this process sees; raises BackendUnavailable where there are none."""
    count, error = ffi.new("int32_t *"), ffi.new("trinom_error *")
    if lib.trinom_cuda_device_count(count, error) != OK:
        raise _failure(ffi, error)
    names = []
    name = ffi.new("char[256]")
    for device in range(count[0]):
        if lib.trinom_cuda_device_name(device, name, 256, error) != OK:
            raise _failure(ffi, error)
        names.append(_text(ffi, name))
    return names


def available(target: str | None = None, *, device: int | None = None) -> tuple[bool, str]:
    """Whether the CUDA library and a GPU (``device``, if given) are usable here, and on what (or why not)."""
    if target not in (None, "cuda"):
        return False, f"unknown target {target!r} (the CUDA backends run on target 'cuda')"
    try:
        names = _device_names(*_LIBRARY.open())
    except BackendUnavailable as err:
        return False, str(err)
    except CudaError as err:
        return False, f"{_NO_DEVICE}: {err}"
    if device is not None:
        if not 0 <= device < len(names):
            return False, f"device {device} is out of range: this process sees {len(names)} CUDA device(s)"
        return True, f"CUDA on {names[device]} (device {device})"
    if len(names) == 1:
        return True, f"CUDA on {names[0]}"
    return True, f"CUDA on {len(names)} devices: " + ", ".join(f"{d}: {n}" for d, n in enumerate(names))


def _checked(target: str | None, precision: str, device: int) -> tuple[int, Any, int]:
    """The precision code, the result dtype and the device id; unknown targets, precisions and ids are refused."""
    if target not in (None, "cuda"):
        raise BackendUnavailable(f"unknown target {target!r} (the CUDA backends run on target 'cuda')")
    if precision not in _PRECISIONS:
        raise ValueError(f"precision must be 'f32' or 'f64', got {precision!r}")
    device = operator.index(device)
    if not 0 <= device < 2**31:
        raise CudaError(ERR_DEVICE, f"device {device} is out of range: device ids start at 0", field="device",
                        stage="device", device=device)
    code, dtype = _PRECISIONS[precision]
    return code, dtype, device


def _buffer(ffi: Any, keep: list, array: np.ndarray) -> Any:
    """A C pointer to ``array``'s data, kept alive in ``keep`` for the call."""
    pointer = ffi.from_buffer(_C_TYPES[array.dtype], array)
    keep.append((array, pointer))
    return pointer


def _option_section(ffi: Any, book: Any, keep: list, portfolio: Portfolio,
                    curve: YieldCurve | Sequence[YieldCurve], curve_index: np.ndarray | None = None) -> None:
    """Fill the book's option section. The arrays go as trinom.Portfolio holds them (float64, option
    types int8): no conversion here; the library converts while staging them for the GPU. With
    ``curve_index``, ``curve`` is a sequence of curves and option i is priced on ``curve[curve_index[i]]``."""
    options = book.options
    options.count = len(portfolio)
    portfolio = portfolio.thesis_view()  # the kernels' lattice fields
    for name in _OPTION_FIELDS:
        setattr(options, name, _buffer(ffi, keep, np.ascontiguousarray(getattr(portfolio, name), dtype=np.float64)))
    options.option_type = _buffer(ffi, keep, np.ascontiguousarray(portfolio.option_type, dtype=np.int8))
    if curve_index is not None:
        if len(curve_index) != len(portfolio):
            raise ValueError(f"curve_index needs one entry per option ({len(portfolio)}), got {len(curve_index)}")
        options.curve_index = _buffer(ffi, keep, np.ascontiguousarray(curve_index, dtype=np.int64))
        _curves_into(ffi, book.option_curves, keep, tuple(curve))
        return
    book.curve.count = len(curve.rates)
    book.curve.rates = _buffer(ffi, keep, np.ascontiguousarray(curve.rates, dtype=np.float64))
    book.curve.days = _buffer(ffi, keep, np.ascontiguousarray(curve.days, dtype=np.int32))


def _curves_into(ffi: Any, target: Any, keep: list, curves: tuple[YieldCurve, ...]) -> None:
    """Fill a ``trinom_bond_curves`` (the flattened layout of several curves)."""
    from ..instruments.bond import flatten_curves

    terms, rates, days = flatten_curves(curves)
    target.count = len(terms)
    target.terms = _buffer(ffi, keep, np.ascontiguousarray(terms, dtype=np.int64))
    target.rates = _buffer(ffi, keep, np.ascontiguousarray(rates, dtype=np.float64))
    target.days = _buffer(ffi, keep, np.ascontiguousarray(days, dtype=np.int64))


def _bond_section(ffi: Any, book: Any, keep: list, bonds: BondPortfolio, curves: Sequence[YieldCurve]) -> None:
    """Fill the book's bond section, the arrays as trinom.bonds.BondPortfolio holds them (int64, float64, int8);
    the listed exercise points' arrays stay NULL where no bond has any, the cash flows' times where no flow has
    one."""
    section = book.bonds
    section.count = len(bonds)
    skipped = () if bonds.exercise_step.size else _LISTED_FIELDS
    for names, dtype in ((_BOND_FIELDS_INT64, np.int64), (_BOND_FIELDS_FLOAT64, np.float64)):
        for name in names:
            if name not in skipped:
                setattr(section, name, _buffer(ffi, keep, np.ascontiguousarray(getattr(bonds, name), dtype=dtype)))
    section.option_type = _buffer(ffi, keep, np.ascontiguousarray(bonds.option_type, dtype=np.int8))
    for name in ("cashflow_time", "exercise_time"):  # flows and listed points between steps (NULL: none)
        times = getattr(bonds, name, None)
        if times is not None and np.isfinite(times).any():
            setattr(section, name, _buffer(ffi, keep, np.ascontiguousarray(times, dtype=np.float64)))
    _pieces_into(ffi, section, keep, bonds, tuple(curves))
    _curves_into(ffi, book.bond_curves, keep, tuple(curves))


def _pieces_into(ffi: Any, section: Any, keep: list, bonds: BondPortfolio, curves: tuple[YieldCurve, ...]) -> None:
    """The bonds' sigma pieces (their grid and each piece's ``V / dx^2``) and options on coupon rates (their steps and
    terms on every curve of ``curves``) into the bond section (NULL where no bond has any)."""
    if not hasattr(bonds, "coupon_options"):  # a scenario batch's arrays: books with neither (CudaEngine)
        return
    pieces, options = bonds.sigma_pieces(), bonds.coupon_options()
    if pieces is not None:
        geometry, shape = bonds.piecewise(np.float64)
        counts = np.zeros(len(bonds), dtype=np.int64)
        counts[pieces.counts > 0] = np.diff(shape.v_offset)  # type: ignore[union-attr]
        offset = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        for name, values, dtype in (("piece_offset", offset, np.int64),
                                    ("piece_step", shape.v_step, np.int64),  # type: ignore[union-attr]
                                    ("piece_v", shape.v, np.float64),  # type: ignore[union-attr]
                                    ("piece_jmax", geometry.jmax, np.int64),
                                    ("piece_mdrdt", geometry.mdrdt, np.float64)):
            setattr(section, name, _buffer(ffi, keep, np.ascontiguousarray(values, dtype=dtype)))
    if options is not None:
        terms = np.stack([option_terms(bonds, curves, np.float64, curve=c) for c in range(len(curves))])
        section.option_offset = _buffer(ffi, keep, np.ascontiguousarray(options.offset, dtype=np.int64))
        section.option_step = _buffer(ffi, keep, np.ascontiguousarray(options.step, dtype=np.int64))
        section.option_terms = _buffer(ffi, keep, np.ascontiguousarray(terms, dtype=np.float64))


def _book(ffi: Any, portfolio: Portfolio | None, curve: YieldCurve | Sequence[YieldCurve] | None,
          bonds: BondPortfolio | None, curves: tuple[YieldCurve, ...],
          curve_index: np.ndarray | None = None) -> tuple[Any, list]:
    """The C book of the sections (and the arrays it points into, to keep alive).

    A one-section book is built once per portfolio and curve(s) and kept on the portfolio: its arrays
    are read-only, so the struct stays valid, and a repeated call passes it again without rebuilding it
    (options on several curves, ``curve_index``, are built for the call).
    """
    def build() -> tuple[Any, list]:
        keep: list = []
        book = ffi.new("trinom_book *")
        if portfolio is not None:
            _option_section(ffi, book, keep, portfolio, curve, curve_index)
        if bonds is not None:
            _bond_section(ffi, book, keep, bonds, curves)
        return book, keep

    if curve_index is not None:
        return build()
    if portfolio is not None and bonds is None:
        return portfolio.cached(("cuda-book", curve), build)
    if bonds is not None and portfolio is None:
        return bonds.cached(("cuda-book", curves), build)
    return build()


def _search_book(ffi: Any, bonds: BondPortfolio, curves: tuple[YieldCurve, ...],
                 search: SpreadSearch) -> tuple[Any, list]:
    """A C book of ``bonds`` with a spread search (built for the call: the targets change from call to call)."""
    if search.target.size != len(bonds):
        raise ValueError(f"search: target needs one entry per bond ({len(bonds)}), got {search.target.size}")
    keep: list = []
    book = ffi.new("trinom_book *")
    _bond_section(ffi, book, keep, bonds, curves)
    c_search = ffi.new("trinom_spread_search *")
    keep.append(c_search)
    c_search.target = _buffer(ffi, keep, search.target)
    c_search.low, c_search.high = float(search.low), float(search.high)
    c_search.tolerance, c_search.relative_tolerance = float(search.tolerance), float(search.relative_tolerance)
    c_search.max_iterations = int(search.max_iterations)
    c_search.spread = _buffer(ffi, keep, search.spread)
    c_search.iterations = _buffer(ffi, keep, search.iterations)
    c_search.status = _buffer(ffi, keep, search.status)
    book.bonds.search = c_search
    return book, keep


def _option_entry_book(ffi: Any, portfolio: Portfolio, curves: tuple[YieldCurve, ...],
                       entries: tuple[np.ndarray, np.ndarray]) -> tuple[Any, list]:
    """A C book of options with scenario entries on ``curves`` (built for the call)."""
    offset, curve = entries
    if len(offset) != len(portfolio) + 1 or int(offset[-1]) != len(curve):
        raise ValueError(f"option_entries: entry_offset needs {len(portfolio) + 1} entries ending at "
                         f"len(entry_curve); got {len(offset)} and {len(curve)}")
    keep: list = []
    book = ffi.new("trinom_book *")
    _option_section(ffi, book, keep, portfolio, curves[0])
    _curves_into(ffi, book.option_curves, keep, curves)
    book.options.entry_offset = _buffer(ffi, keep, np.ascontiguousarray(offset, dtype=np.int64))
    book.options.entry_curve = _buffer(ffi, keep, np.ascontiguousarray(curve, dtype=np.int64))
    return book, keep


def _entry_book(ffi: Any, bonds: BondPortfolio, curves: tuple[YieldCurve, ...],
                entries: tuple[np.ndarray, np.ndarray, np.ndarray],
                resume: tuple[np.ndarray, np.ndarray] | None) -> tuple[Any, list]:
    """A C book of ``bonds`` with scenario entries (built for the call: entries change from call to call)."""
    offset, curve, spread = entries
    if len(offset) != len(bonds) + 1 or len(curve) != len(spread) or int(offset[-1]) != len(curve):
        raise ValueError(f"entries: entry_offset needs {len(bonds) + 1} entries ending at len(entry_curve) == "
                         f"len(entry_spread); got {len(offset)}, {len(curve)} and {len(spread)}")
    keep: list = []
    book = ffi.new("trinom_book *")
    _bond_section(ffi, book, keep, bonds, curves)
    book.bonds.entry_offset = _buffer(ffi, keep, np.ascontiguousarray(offset, dtype=np.int64))
    book.bonds.entry_curve = _buffer(ffi, keep, np.ascontiguousarray(curve, dtype=np.int64))
    book.bonds.entry_spread = _buffer(ffi, keep, np.ascontiguousarray(spread, dtype=np.float64))
    if resume is not None:
        checkpoint, flags = resume
        if len(checkpoint) != len(bonds) or len(flags) != len(curve):
            raise ValueError("resume: checkpoint_step needs one entry per bond, entry_resume one per entry")
        book.bonds.checkpoint_step = _buffer(ffi, keep, np.ascontiguousarray(checkpoint, dtype=np.int64))
        book.bonds.entry_resume = _buffer(ffi, keep, np.ascontiguousarray(flags, dtype=np.int8))
    return book, keep


def _section_timing(section: Any) -> dict[str, float]:
    return {"kernel_ms": section.kernel_ms, "device_ms": section.device_ms, "chunks": int(section.chunks),
            "fallback": int(section.fallback)}


def price_book(
    portfolio: Portfolio | None,
    curve: YieldCurve | Sequence[YieldCurve] | None,
    bonds: BondPortfolio | None,
    curves: Sequence[YieldCurve] = (),
    precision: str = "f64",
    *,
    device: int = 0,
    variant: str = "fast",
    target: str | None = None,
    block_size: int | None = None,
    padding: str = "global",
    sort: bool = True,
    chunk_size: int | None = None,
    bond_block_size: int | None = None,
    wide_only: bool | str = False,
    bond_chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, Any] | None = None,
    entries: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    resume: tuple[np.ndarray, np.ndarray] | None = None,
    search: SpreadSearch | None = None,
    curve_index: np.ndarray | None = None,
    option_entries: tuple[np.ndarray, np.ndarray] | None = None,
    option_out: np.ndarray | None = None,
    skip_wide: bool = False,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Option prices and dirty bond prices (per 100 face) of a book in one library call, on GPU ``device``.

    ``portfolio`` (priced against ``curve``, or with ``curve_index`` option i against ``curve[curve_index[i]]``:
    the scenarios of an option book in one call) or ``bonds`` (against ``curves``, indexed by each bond's
    ``curve_index``) may be None (or empty); its prices are then None. Both come back in input order,
    float32 for ``"f32"``, float64 for ``"f64"``, each section bit for bit what a call for it alone
    gives. Options: ``variant`` (``"option"``, ``"multi"``, ``"fast"``), ``block_size``, ``padding``
    (cuda-option), ``chunk_size``; bonds: ``bond_block_size``, ``wide_only`` (True: every bond on the wide-tree
    kernels; ``"global"``: on the one with levels in global memory), ``bond_chunk_size``;
    both: ``sort``, ``memory_limit`` (bytes of GPU memory a section's buffers may use; default a
    fixed fraction of what is free). ``timing``, if given, is filled with ``kernel_ms``, ``device_ms``,
    ``chunks`` and ``fallback`` summed over the sections, ``library_ms`` (wall clock inside the
    library), and the per-section values under ``"options"`` and ``"bonds"``. ``entries``: the bonds'
    scenario entries ``(entry_offset, entry_curve, entry_spread)`` (trinom_cuda.h): the bond prices are
    then one per entry, in entry order (one forward pass per bond, one backward pass per entry). ``resume``:
    ``(checkpoint_step, entry_resume)`` (trinom_cuda.h), entries that start from their bond's first entry's
    level at that step. ``option_entries``: the options' scenario entries ``(entry_offset, entry_curve)``
    (trinom_cuda.h; ``curve`` is then the sequence of curves they index, the variant ``"fast"``): the option prices
    are then one per entry, in entry order. ``option_out``: the array the option prices are written to and returned
    as (C-contiguous, of the precision's dtype and the prices' length; default a new one). ``skip_wide``: with
    ``option_entries``, an option too wide for the fast kernel (over 512 nodes) is skipped, its entries' prices NaN,
    instead of refused. ``search``: a :class:`SpreadSearch` per bond instead (bonds alone, no entries): the bond
    prices are then the model's at the spreads found, and ``search`` is filled.

    Raises :class:`BackendUnavailable` ("no CUDA device: ...") where the library or a GPU is
    missing, :class:`CudaError` (with ``row``, ``section``, ``field``, ``stage``) where the library
    refuses an input or fails, and for a device id out of range.
    """
    code, dtype, device = _checked(target, precision, device)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if padding not in PADDINGS:
        raise ValueError(f"padding must be one of {', '.join(PADDINGS)}, got {padding!r}")
    if portfolio is not None and curve is None:
        raise ValueError("options need a yield curve")
    ffi, lib = _LIBRARY.open()
    if search is not None:
        if bonds is None or portfolio is not None or entries is not None:
            raise ValueError("a spread search goes with a book of bonds alone, without scenario entries")
        book, _keep = _search_book(ffi, bonds, tuple(curves), search)
        bond_count = len(bonds)
    elif option_entries is not None:
        if portfolio is None or bonds is not None or curve_index is not None:
            raise ValueError("option scenario entries go with a book of options alone, without curve_index")
        book, _keep = _option_entry_book(ffi, portfolio, tuple(curve), option_entries)
        bond_count = None
    elif entries is None:
        book, _keep = _book(ffi, portfolio, curve, bonds, tuple(curves), curve_index)
        bond_count = None if bonds is None else len(bonds)
    else:
        if bonds is None or portfolio is not None:
            raise ValueError("scenario entries go with a book of bonds alone")
        book, _keep = _entry_book(ffi, bonds, tuple(curves), entries, resume)
        bond_count = int(entries[0][-1])
    option_count = None if portfolio is None else len(portfolio) if option_entries is None else int(option_entries[0][-1])
    option_prices = None if option_count is None else np.empty(option_count, dtype=dtype)
    if option_out is not None:
        if option_count is None or option_out.shape != (option_count,) or option_out.dtype != dtype \
                or not option_out.flags.c_contiguous or not option_out.flags.writeable:
            raise ValueError(f"option_out must be a writable C-contiguous {np.dtype(dtype).name} array of "
                             f"{option_count} prices")
        option_prices = option_out
    bond_prices = None if bond_count is None else np.empty(bond_count, dtype=dtype)
    opt = ffi.new("trinom_run_options *")
    opt.precision = code
    opt.variant = VARIANTS[variant]
    opt.block_size = int(block_size or 0)
    opt.padding = PADDINGS[padding]
    opt.no_sort = 0 if sort else 1
    opt.skip_wide = 1 if skip_wide else 0
    opt.bond_block_size = int(bond_block_size or 0)
    opt.bond_wide_only = WIDE_ONLY[wide_only]
    opt.chunk_size = int(chunk_size or 0)
    opt.bond_chunk_size = int(bond_chunk_size or 0)
    opt.memory_limit = int(memory_limit or 0)
    out = [ffi.NULL if p is None or not p.size else ffi.from_buffer("char[]", p, require_writable=True)
           for p in (option_prices, bond_prices)]
    times, error = ffi.new("trinom_timing *"), ffi.new("trinom_error *")
    status = lib.trinom_cuda_price_book(book, device, opt, out[0], out[1], times, error)
    if status != OK:
        both = bool(portfolio is not None and len(portfolio) and bonds is not None and len(bonds))
        raise _failure(ffi, error, name_section=both)
    if timing is not None:
        sections = {"options": _section_timing(times.options), "bonds": _section_timing(times.bonds)}
        timing.update({key: sum(s[key] for s in sections.values()) for key in sections["options"]})
        timing.update(library_ms=times.total_ms, **sections)
    return option_prices, bond_prices


def price(
    portfolio: Portfolio,
    curve: YieldCurve | Sequence[YieldCurve],
    precision: str = "f64",
    *,
    target: str | None = None,
    variant: str = "fast",
    device: int = 0,
    block_size: int | None = None,
    padding: str = "global",
    sort: bool = True,
    chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, float] | None = None,
    curve_index: np.ndarray | None = None,
) -> np.ndarray:
    """Option prices in input order on GPU ``device`` (see :func:`price_book` and the backend modules); with
    ``curve_index``, option i on ``curve[curve_index[i]]``, all in one call.

    ``timing``, if given, is filled with ``kernel_ms`` (pricing kernels, cudaEvent), ``device_ms``
    (first upload to last download), ``library_ms`` (wall clock inside the library), ``chunks``
    and ``fallback`` (options priced by the wide-tree fallback).
    """
    times: dict[str, Any] | None = None if timing is None else {}
    prices, _ = price_book(portfolio, curve, None, (), precision, device=device, variant=variant, target=target,
                           block_size=block_size, padding=padding, sort=sort, chunk_size=chunk_size,
                           memory_limit=memory_limit, timing=times, curve_index=curve_index)
    if timing is not None and times is not None:
        timing.update(times["options"], library_ms=times["library_ms"])
    return prices


def price_bonds(
    portfolio: BondPortfolio,
    curves: Sequence[YieldCurve],
    precision: str = "f64",
    *,
    target: str | None = None,
    device: int = 0,
    block_size: int | None = None,
    sort: bool = True,
    wide_only: bool | str = False,
    chunk_size: int | None = None,
    memory_limit: int | None = None,
    timing: dict[str, float] | None = None,
) -> np.ndarray:
    """Dirty bond prices in input order on GPU ``device`` (see :func:`price_book` and ``bonds_cuda``).

    ``block_size`` and ``chunk_size`` are the bond section's (``bond_block_size``, ``bond_chunk_size``
    of :func:`price_book`). ``timing`` as for :func:`price` (``fallback`` counts the bonds priced by
    the wide-tree kernel).
    """
    times: dict[str, Any] | None = None if timing is None else {}
    _, prices = price_book(None, None, portfolio, curves, precision, device=device, target=target,
                           bond_block_size=block_size, sort=sort, wide_only=wide_only, bond_chunk_size=chunk_size,
                           memory_limit=memory_limit, timing=times)
    if timing is not None and times is not None:
        timing.update(times["bonds"], library_ms=times["library_ms"])
    return prices


def release(device: int = -1) -> None:
    """Free the library's context on ``device`` (every device for -1); the next call creates a new one."""
    if _LIBRARY.lib is not None:
        _LIBRARY.lib.trinom_cuda_release(int(device))
