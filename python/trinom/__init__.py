"""trinom: prices books of interest-rate options and callable/puttable bonds under Hull-White with
trinomial trees, on GPUs and CPUs.

>>> import trinom
>>> book = trinom.Portfolio(strike=[63.0], maturity=[9.0], expiry=[3.0], term_unit=[365],
...                         term_steps=[1], a=[0.1], sigma=[0.01], option_type=["put"])
>>> round(float(trinom.price(book, backend="reference").price[0]), 10)
1.879957315
"""

import importlib as _importlib
import importlib.abc as _importlib_abc
import importlib.util as _importlib_util
import sys as _sys
from importlib.machinery import ModuleSpec as _ModuleSpec
from types import ModuleType as _ModuleType

from .analytics import scenarios, spreads
from .analytics.oas import OASResult, oas
from .analytics.risk import risk
from .api import price
from .bonds import BondPortfolio, BondPrices, price_bonds
from .distributed import DistributedBook, distribute, parquet_files, shared_results, worker_calls, worker_tuning
from .engines import closed_form
from .errors import InputError
from .instruments.option import FIELDS, Portfolio
from .instruments.trades import Trades
from .io import curve_files, parquet, quote_files, trade_files
from .io.trade_files import read_trades
from .lattice.book import Book
from .lattice.constants import CALL, PUT
from .lattice.lowering import lower_bonds, lower_options
from .model.calibration import calibrate
from .model.curve import YieldCurve
from .model.dated_curve import DatedCurve
from .model.market import Market
from .paper import option_generator as generator
from .result import Prices

# ``trinom.parquet`` (documented) is the Parquet format's module, now ``trinom.io.parquet`` (issue 36's layout).
_sys.modules.setdefault(f"{__name__}.parquet", parquet)
# The documented modules that moved into their folders (issue 36): the same module objects under their former names
# (``trinom.risk`` and ``trinom.oas`` are the functions, in ``trinom.analytics``' modules of those names).
_sys.modules.setdefault(f"{__name__}.scenarios", scenarios)
_sys.modules.setdefault(f"{__name__}.spreads", spreads)
_sys.modules.setdefault(f"{__name__}.generator", generator)
_sys.modules.setdefault(f"{__name__}.parquet_files", parquet_files)
_sys.modules.setdefault(f"{__name__}.shared_results", shared_results)
_sys.modules.setdefault(f"{__name__}.worker_calls", worker_calls)
_sys.modules.setdefault(f"{__name__}.worker_tuning", worker_tuning)

#: The documented module paths of before issue 36's layout, each the same module as its new home: ``trinom.backends``
#: is ``trinom.engines`` and each of its modules (all of them, so that none is ever loaded twice, registry and all).
_MOVED: dict[str, str] = {
    "backends": "engines",
    **{f"backends.{name}": f"engines.{name}" for name in (
        "_cuda_lib", "_futhark", "bond_arrays", "bonds_cuda", "bonds_futhark", "bonds_futhark_fast", "costs", "cuda",
        "cuda_multi", "cuda_option", "engine", "futhark_basic", "futhark_fast", "futhark_flat", "lift", "outcomes",
        "reference", "scenario_batch")},
    "auto": "engines.auto",
    "bonds.reference": "engines.bonds_reference",
    "book": "lattice.book",
    "lattice.geometry": "model.tree_geometry",
    "lattice.columns": "instruments.columns",
    "market": "model.market",
    "closed_form": "engines.closed_form",
    "model.closed_form": "engines.closed_form",
    "model.baskets": "analytics.baskets",
    "model.calibration_kernel": "engines.calibration_kernel",
}


class _MovedModules(_importlib_abc.MetaPathFinder, _importlib_abc.Loader):
    """An import of a former path in :data:`_MOVED` gives the module at its new home, imported then (not every
    module at ``import trinom``); first on ``sys.meta_path``, so that no path finder loads a second copy."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> _ModuleSpec | None:
        old = fullname.removeprefix(f"{__name__}.")
        return _importlib_util.spec_from_loader(fullname, self) if old in _MOVED and old != fullname else None

    def create_module(self, spec: _ModuleSpec) -> _ModuleType:
        return _importlib.import_module(f"{__name__}.{_MOVED[spec.name.removeprefix(f'{__name__}.')]}")

    def exec_module(self, module: _ModuleType) -> None:
        """Nothing to run: the module ran at its new home."""


_sys.meta_path.insert(0, _MovedModules())
_baskets = _importlib.import_module(f"{__name__}.analytics.baskets")  # as when the model's __init__ imported it
for _old, _new in _MOVED.items():  # the moved modules loaded already: their former paths at once, attributes too
    _module = _sys.modules.get(f"{__name__}.{_new}")
    if _module is not None:
        _sys.modules.setdefault(f"{__name__}.{_old}", _module)
        _parent, _, _name = f"{__name__}.{_old}".rpartition(".")
        setattr(_sys.modules[_parent], _name, _module)  # ``trinom.backends`` as an attribute, as when it was a module

#: ``trinom.model``'s names of per-trade calibration, now :mod:`trinom.analytics.baskets`'s (set here: the model may
#: not import the analytics above it).
_BASKET_NAMES: tuple[str, ...] = (
    "PreparedBaskets", "ScenarioFits", "bond_baskets", "book_baskets", "calibrate_baskets", "calibrate_prepared",
    "calibrate_scenarios", "prepare_baskets", "trade_baskets")
_model = _sys.modules[f"{__name__}.model"]
for _name in _BASKET_NAMES:
    setattr(_model, _name, getattr(_baskets, _name))
_model.__all__ = sorted({*_model.__all__, *_BASKET_NAMES})

# ``Portfolio.lower(curve)`` and ``BondPortfolio.lower(curve_names)`` (documented) are the lattice's lowering
# (set here: the instruments may not import the lattice above them).
Portfolio.lower = lower_options
BondPortfolio.lower = lower_bonds

#: The file readers that moved to ``io`` (issue 36: the instruments and the model import no file format), under their
#: former names: ``trinom.instruments.read_trades``, ``trinom.model.read_dated_curves``, ... (set here: the lower layers
#: may not import ``io`` above them). Each is (module, names, whether the module's ``__all__`` lists them).
_READERS: tuple[tuple[str, object, tuple[str, ...], bool], ...] = (
    ("instruments", trade_files, ("read_trades",), True),
    ("instruments.trades", trade_files, ("read_trades", "read_side_table"), True),
    ("instruments.side_tables", trade_files, ("read_side_table",), False),
    ("model", curve_files, ("read_dated_curves",), True),
    ("model.dated_curve", curve_files, ("read_dated_curves",), False),
    ("model", quote_files, ("read_vol_quotes", "read_vol_surface"), True),
    ("model.quotes", quote_files, ("read_vol_quotes", "read_vol_surface"), True),
)
for _path, _reader, _names, _listed in _READERS:
    _module = _importlib.import_module(f"{__name__}.{_path}")
    for _name in _names:
        setattr(_module, _name, getattr(_reader, _name))
    if _listed:
        _module.__all__ = sorted({*_module.__all__, *_names})

__version__ = "0.2.0"
__all__ = [
           "CALL",
           "FIELDS",
           "PUT",
           "BondPortfolio",
           "BondPrices",
           "Book",
           "DatedCurve",
           "DistributedBook",
           "InputError",
           "Market",
           "OASResult",
           "Portfolio",
           "Prices",
           "Trades",
           "YieldCurve",
           "__version__",
           "calibrate",
           "closed_form",
           "distribute",
           "generator",
           "oas",
           "price",
           "price_bonds",
           "read_trades",
           "risk",
]
