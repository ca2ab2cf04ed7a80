"""The model side of dated instruments (issue 25): dated curves now, the rest later.

>>> from trinom.model import DatedCurve
>>> DatedCurve(as_of="2025-01-02", dates=["2026-01-02"], zero_rates=[0.03]).discount([1.0]).round(6).tolist()
[0.970446]
"""

from .dated_curve import INTERPOLATIONS, DatedCurve, read_dated_curves

__all__ = ["INTERPOLATIONS", "DatedCurve", "read_dated_curves"]
