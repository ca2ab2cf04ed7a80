"""The package's import graph against its target layout (docs/layout.md, issue 36): which folder each module belongs
to, the imports that point up the layers, and the import circles. Every import counts, the lazy ones inside
functions included (they run as surely as the others, only later).

    python tests/layering.py          # the violations and circles, one a line
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "trinom"

#: The layers from the top; a module may import from its own layer and those below. ``io`` and ``paper`` stand side
#: by side (the same rank, neither importing the other's concern is checked by the circles).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",), ("api",), ("analytics",), ("pipeline",), ("distributed",), ("io", "paper"), ("engines",), ("lattice",),
    ("instruments",), ("model",), ("conventions",),
)
#: Imported from anywhere: the error and result types, the arguments' checks and the ragged arrays' helper.
ANYWHERE: frozenset[str] = frozenset({"errors", "result", "checks", "ragged"})

#: Where today's modules go (docs/layout.md's "from today's" column), by dotted name under ``trinom`` or its first
#: part; a module already in its folder (``instruments.trades``) is found by its first part.
TODAY: dict[str, str] = {
    "": "api", "api": "api", "pipeline": "pipeline",
    "cli": "cli",
    "analytics": "analytics",
    "distributed": "distributed",
    "engines": "engines", "_lib": "engines",
    "lattice": "lattice",
    "instruments": "instruments", "portfolio": "instruments", "bonds.portfolio": "instruments",
    "bonds": "api",  # the documented trinom.bonds names only: its modules live in their folders
    "model": "model",
    "conventions": "conventions",
    "io": "io",
    "paper": "paper",
    "errors": "errors", "result": "result", "checks": "checks", "ragged": "ragged",
}


def rank(layer: str) -> int:
    """The layer's place from the top (0: ``cli``); -1 for the types imported from anywhere."""
    if layer in ANYWHERE:
        return -1
    return next(k for k, names in enumerate(LAYERS) if layer in names)


def module_name(path: Path) -> str:
    """``trinom``-relative dotted name of a source file ("" for the package itself)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    """The target folder of a ``trinom``-relative module name: its own entry in :data:`TODAY`, else its parent's."""
    parts = module.split(".") if module else []
    for cut in range(len(parts), -1, -1):
        key = ".".join(parts[:cut])
        if key in TODAY:
            return TODAY[key]
    raise KeyError(f"trinom.{module} is in no layer: add it to TODAY in tests/layering.py")


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(module: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """The ``trinom`` modules that ``module`` imports (each with its line), the lazy imports included; ``from x
    import y`` counts ``x.y`` where that is a module, else ``x``."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if module == "":
        package = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "trinom" or alias.name.startswith("trinom."):
                    yield _known(alias.name.removeprefix("trinom").lstrip("."), known), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] if node.level > 1 else list(package)
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and (node.module == "trinom" or node.module.startswith("trinom.")):
                target = node.module.removeprefix("trinom").lstrip(".")
            else:
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}" if target else alias.name
                yield (full if full in known else _known(target, known)), node.lineno


def _known(name: str, known: set[str]) -> str:
    """The longest prefix of ``name`` that is a module of the package."""
    parts = name.split(".") if name else []
    for cut in range(len(parts), -1, -1):
        candidate = ".".join(parts[:cut])
        if candidate in known:
            return candidate
    return ""


def graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: first line}, self-imports left out."""
    found = modules()
    known = set(found)
    edges: dict[str, dict[str, int]] = {}
    for module, path in found.items():
        mine = edges.setdefault(module, {})
        for target, line in imports(module, path, known):
            if target != module:
                mine.setdefault(target, line)
    return edges


def violations(edges: dict[str, dict[str, int]] | None = None) -> set[str]:
    """``"a -> b (a's layer -> b's layer)"`` for every import that points up the layers."""
    edges = graph() if edges is None else edges
    out = set()
    for source, targets in edges.items():
        mine = rank(layer_of(source))
        for target in targets:
            theirs = rank(layer_of(target))
            if theirs != -1 and (mine == -1 or theirs < mine):
                out.add(f"{source or 'trinom'} -> {target or 'trinom'} ({layer_of(source)} -> {layer_of(target)})")
    return out


def circles(edges: dict[str, dict[str, int]] | None = None) -> list[list[str]]:
    """The import circles: the strongly connected sets of more than one module (Tarjan's algorithm), each sorted.
    The package's own ``__init__`` is left out: it re-exports the public names and is imported by nothing inside."""
    edges = graph() if edges is None else edges
    nodes = [m for m in edges if m]
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, {}):
            if not target:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in nodes:
        if node not in index:
            visit(node)
    return sorted(found)


if __name__ == "__main__":
    edges = graph()
    for line in sorted(violations(edges)):
        print(line)
    for circle in circles(edges):
        print("circle:", " <-> ".join(circle))
