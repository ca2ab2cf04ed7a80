"""The package's layering (issue 36, docs/layout.md): imports only go down the target layout's layers and no module
imports itself back through others. tests/layering.py builds the import graph, lazy imports included.

No import points up the layers and there is no import circle: a new one of either fails here. (The redesign
emptied :data:`KNOWN_VIOLATIONS`, which listed 45 such imports and five circles when the test came; the list stays
as the place an accepted exception would be named, and the test that fails when an entry has gone with it.)
"""

from __future__ import annotations

import layering

#: Imports that point up the layers today (``source -> target (its layer -> the target's)``): none.
KNOWN_VIOLATIONS: frozenset[str] = frozenset()

#: Import circles: none (the five that issue 36 named are gone). Kept as a list so that the test below says the same
#: thing as the violations' (a new circle fails).
KNOWN_CIRCLES: tuple[frozenset[str], ...] = ()


def test_no_import_points_up_the_layers_beyond_those_known():
    new = layering.violations() - KNOWN_VIOLATIONS
    assert not new, "imports against the layering (docs/layout.md):\n" + "\n".join(sorted(new))


def test_the_known_violations_are_all_still_there():
    gone = KNOWN_VIOLATIONS - layering.violations()
    assert not gone, "fixed, so take them off KNOWN_VIOLATIONS:\n" + "\n".join(sorted(gone))


def test_no_import_circle_beyond_those_known():
    circles = [frozenset(circle) for circle in layering.circles()]
    new = [sorted(c) for c in circles if not any(c <= known for known in KNOWN_CIRCLES)]
    assert not new, f"new import circles: {new}"
    gone = [sorted(k) for k in KNOWN_CIRCLES if not any(c <= k for c in circles)]
    assert not gone, f"circles gone, so take them off KNOWN_CIRCLES: {gone}"


def test_every_module_has_a_layer():
    for module in layering.modules():
        assert layering.layer_of(module)  # a KeyError names a module missing from layering.TODAY


def test_the_graph_sees_lazy_and_relative_imports():
    edges = layering.graph()
    assert "analytics.resolution" in edges["api"]  # inside a function: a lazy import
    assert "instruments.option" in edges["engines.closed_form"]  # from ..instruments.option import ...


#: Modules longer than a reader can hold (issue 36: about 800 lines at most), with their length today: each may
#: only shrink, and no other module may grow past the bound. Split by concept, not by size alone.
LONG_MODULES: dict[str, int] = {}
MOST_LINES = 800


def test_no_module_is_longer_than_a_reader_can_hold():
    for path in sorted(layering.PACKAGE.rglob("*.py")):
        if "_lib" in path.parts:
            continue
        name = path.relative_to(layering.PACKAGE).as_posix()
        lines = len(path.read_text().splitlines())
        assert lines <= LONG_MODULES.get(name, MOST_LINES), (
            f"trinom/{name} has {lines} lines (at most {LONG_MODULES.get(name, MOST_LINES)}): split it by concept")
