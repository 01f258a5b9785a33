"""The import graph of the strgm and fst_factors packages, read with ``ast``
(module-level and function-level imports alike), and the layer table of
docs/architecture.md §1."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (ROOT / "fst_factors", ROOT / "strgm")
#: package roots: the root module itself belongs to no entry but its own
ROOTS = ("strgm", "fst_factors")

#: docs/architecture.md §1, lowest first: a module may import modules of its own unit
#: (the same entry) or of lower layers, never a sibling entry of its own layer.
LAYERS = [
    ["fst_factors.errors"],
    ["fst_factors.files"],
    ["fst_factors.alphabet", "fst_factors.wfsa"],
    ["fst_factors.transducers"],
    ["fst_factors"],  # the leaf library's root (imports nothing of its own)
    ["strgm.errors"],
    ["strgm.validate", "strgm.safe_io", "strgm.progress", "strgm.display", "strgm.compiled"],
    ["strgm.chains"],
    ["strgm.features"],
    ["strgm.factors"],
    ["strgm.graph", "strgm.projection"],
    ["strgm.inference"],
    ["strgm.grammars", "strgm.datasets", "strgm.hmm"],
    ["strgm.models"],
    ["strgm.workflows", "strgm.plot"],
    ["strgm.distributed"],
    ["strgm.cli"],
    ["strgm"],  # the package root re-exports the error hierarchy
]


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_graph(packages=PACKAGES) -> dict[str, set[str]]:
    """module -> the modules of ``packages`` it imports (``from strgm.x import y`` counts
    as strgm.x.y when that is a module, else strgm.x)."""
    files = sorted(p for package in packages for p in package.rglob("*.py"))
    names = {module_name(p) for p in files}
    graph = {}
    for p in files:
        me = module_name(p)
        deps = set()
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names
                           else node.module for a in node.names]
            for t in targets:
                while t and t not in names and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in names and t != me:
                    deps.add(t)
        graph[me] = deps
    return graph


def component(module: str) -> str:
    """The layer-table entry a module belongs to (the longest entry that prefixes it)."""
    best = module
    for layer in LAYERS:
        for unit in layer:
            if (module == unit or module.startswith(unit + ".")) and unit not in ROOTS:
                return unit
            if unit in ROOTS and module == unit:
                best = unit
    return best


def layer_of(unit: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return i
    return None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports that go against the layer table (upwards, sideways within a layer, or
    from or to a module the table does not place)."""
    bad = []
    for a, deps in graph.items():
        ua = component(a)
        for b in deps:
            ub = component(b)
            if ua == ub:
                continue
            la, lb = layer_of(ua), layer_of(ub)
            if la is None or lb is None:
                bad.append(f"{a} -> {b} (not in the layer table)")
            elif lb >= la:
                bad.append(f"{a} (layer {la}) -> {b} (layer {lb})")
    return sorted(bad)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    pg: dict[str, set[str]] = {}
    for a, deps in graph.items():
        pg.setdefault(component(a), set()).update(
            component(b) for b in deps if component(b) != component(a))
    return pg
