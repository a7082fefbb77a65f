"""The package's import graph, built from the source with ``ast``: no cycle, and no module imports
one of a layer above its own. Every import counts, at module level, inside functions and under
``TYPE_CHECKING`` alike: a local import only hides a cycle, it does not remove it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).parents[1] / "detachlint"

# Lowest first. A module may import modules of its own layer or below, never above.
LAYERS: List[List[str]] = [
    ["detachlint", "detachlint.signature", "detachlint.findings", "detachlint.edits", "detachlint.noqa", "detachlint.cstcompat",
     "detachlint.walk"],
    ["detachlint.files", "detachlint.knowledge"],  # PyTorch as data: read by the front end and the analyses
    ["detachlint.frontend"],
    ["detachlint.analysis"],
    ["detachlint.context", "detachlint.rules"],
    ["detachlint.config", "detachlint.engine", "detachlint.docs"],
    ["detachlint.notebook", "detachlint.incremental"],
    ["detachlint.fixes", "detachlint.cache"],
    ["detachlint.pipeline"],
    ["detachlint.runner"],
    ["detachlint.report"],
    ["detachlint.flake8", "detachlint.lsp", "detachlint.cli", "detachlint.__main__"],
]


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(package: Path = PACKAGE) -> Dict[str, Set[str]]:
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: Dict[str, Set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                # ``from . import x`` names a submodule when one exists, else something in base.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]  # ``detachlint.rules.base.Rule`` -> the module
                if target and target != name and target.startswith(package.name):
                    graph[name].add(target)
    return graph


def layer_of(module: str) -> int:
    best, found = -1, -1
    for index, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), index
    return found


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_imports_of_every_kind():
    graph = import_graph()
    assert "detachlint.findings" in graph["detachlint.pipeline"]  # module level
    assert "detachlint.pipeline" in graph["detachlint.cli"]  # inside a function
    assert "detachlint.rules" in graph["detachlint.config"]


def test_no_import_cycle():
    assert _cycles(import_graph()) == []


def test_every_module_has_a_layer():
    assert [m for m in import_graph() if layer_of(m) < 0] == []


def test_no_module_imports_one_above_it():
    graph = import_graph()
    upward = sorted(f"{a} ({layer_of(a)}) imports {b} ({layer_of(b)})"
                    for a, targets in graph.items() for b in targets if layer_of(b) > layer_of(a))
    assert upward == []


def test_findings_stand_on_nothing():
    graph = import_graph()
    assert graph["detachlint.signature"] == set()
    assert graph["detachlint.findings"] == {"detachlint.signature"}  # the pattern a finding carries


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


RUNTIME = Path(__file__).parents[1] / "runtime" / "detachlint_runtime"

# The runtime companion, lowest first. ``recipes`` (what every rule's reproducer shares) is below the
# rules, which pick among them (``rules.reproduce``); the observer and the verdicts stand on both.
RUNTIME_LAYERS: List[List[str]] = [
    ["detachlint_runtime.names", "detachlint_runtime.static", "detachlint_runtime.program",
     "detachlint_runtime.report", "detachlint_runtime.probes"],
    ["detachlint_runtime.recipes"],
    ["detachlint_runtime.rules"],
    ["detachlint_runtime.watch", "detachlint_runtime.lines"],
    ["detachlint_runtime.verdicts", "detachlint_runtime.worker"],
    ["detachlint_runtime.observe"],
    ["detachlint_runtime.runner"],
    ["detachlint_runtime.pytest_plugin"],
    ["detachlint_runtime"],
    ["detachlint_runtime.command"],
]


def _runtime_layer(module: str) -> int:
    found = [i for i, layer in enumerate(RUNTIME_LAYERS) for prefix in layer
             if module == prefix or module.startswith(prefix + ".")]
    return max(found, default=-1)  # the longest prefix is also the last: a package sits below its users


def test_runtime_has_no_import_cycle():
    graph = import_graph(RUNTIME)
    assert "detachlint_runtime.recipes" in graph["detachlint_runtime.rules.tal001"]  # the graph sees them
    assert _cycles(graph) == []


def test_runtime_modules_import_only_below_them():
    graph = import_graph(RUNTIME)
    assert [m for m in graph if _runtime_layer(m) < 0] == []
    upward = sorted(f"{a} imports {b}" for a, targets in graph.items() for b in targets
                    if not b.startswith(a + ".") and _runtime_layer(b) > _runtime_layer(a))
    assert upward == []
