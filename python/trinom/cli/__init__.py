"""The ``trinom`` command, one module per command (``price``, ``risk``, ``oas``, ``calibrate``, ``generate``,
``info``, ``backends``, ``demo``), their shared arguments (:mod:`.arguments`) and the trades files' side
(:mod:`.trade_files`); :func:`main` is the entry point (``trinom``, ``python -m trinom.cli``)."""

from .arguments import ProgressBar
from .main import main, parser

__all__ = ["ProgressBar", "main", "parser"]
