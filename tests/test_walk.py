"""The fast walker fires exactly LibCST's visitor events, in LibCST's order."""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path
from typing import List, Tuple

import libcst as cst
import pytest

from detachlint.cstcompat import _source_of
from detachlint.walk import TRIVIA, Walker, _subclasses, children, significant_children, trivia_fields, walk

FIXTURES = Path(__file__).parent / "fixtures"
SOURCES = sorted(FIXTURES.glob("*.py")) + [Path(__file__).parents[1] / "demo" / "train.py"]

TRICKY = '''
from . import a
from .b import *
from x import (y as z, w)
async def f(a, /, b: int = 1, *c, d, **e) -> "T":
    async with a as (b, c), d:
        async for x in y:
            yield f"{x!r:>{w}} {y=}"
    return [i async for i in g() if i] or {k: v for k, v in d.items()}
@dec
class C(B, metaclass=M):
    x: int = 3
    def g(self): return lambda q, *r: (q, *r)
match p:
    case [1, *rest] if rest: pass
    case {"k": v, **kw}: pass
    case P(x=1) | None: pass
try:
    del a[1:2, ::3]
except* (E, F) as e:
    raise X from e
finally:
    global q; nonlocal_ = 1
x = y if z else w; x += 1; x @= m
assert x, "m"
while not x: break
else: pass
print(*a, **k, sep="")
'''


class Recorder:
    """Records every event LibCST's generic CSTVisitor would dispatch."""

    def __init__(self, events: List[Tuple[str, str, int]], skip_trivia: bool) -> None:
        self.events = events
        self.skip_trivia = skip_trivia

    def __getattr__(self, name: str):
        if not name.startswith(("visit_", "leave_")):
            raise AttributeError(name)
        if self.skip_trivia and name.split("_")[1] in {c.__name__ for c in TRIVIA}:
            raise AttributeError(name)

        def hook(node: cst.CSTNode) -> None:
            self.events.append((name, type(node).__name__, id(node)))

        return hook


class LibcstRecorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events: List[Tuple[str, str, int]] = []

    def on_visit(self, node):
        self.events.append(("visit_" + type(node).__name__, type(node).__name__, id(node)))
        return True

    def on_leave(self, node):
        self.events.append(("leave_" + type(node).__name__, type(node).__name__, id(node)))

    def on_visit_attribute(self, node, attribute):
        self.events.append((f"visit_{type(node).__name__}_{attribute}", type(node).__name__, id(node)))

    def on_leave_attribute(self, node, attribute):
        self.events.append((f"leave_{type(node).__name__}_{attribute}", type(node).__name__, id(node)))


def _is_trivia_event(event: Tuple[str, str, int], module: cst.Module) -> bool:
    return event[1] in {c.__name__ for c in TRIVIA}


def _sources() -> List[str]:
    return [p.read_text(encoding="utf-8") for p in SOURCES] + [TRICKY]


@pytest.mark.parametrize("index", range(len(SOURCES) + 1))
def test_same_events_as_libcst(index):
    module = cst.parse_module(_sources()[index])
    expected = LibcstRecorder()
    module.visit(expected)
    events: List[Tuple[str, str, int]] = []
    Walker([Recorder(events, skip_trivia=False)], skip_trivia=False).walk(module)
    assert events == expected.events


@pytest.mark.parametrize("index", range(len(SOURCES) + 1))
def test_skipping_trivia_drops_only_trivia_events(index):
    module = cst.parse_module(_sources()[index])
    expected = LibcstRecorder()
    module.visit(expected)
    # Attribute events for fields that can only hold trivia are not asked for by this recorder's
    # owner in practice, but the Recorder claims every hook, so they stay: compare node events.
    want = [e for e in expected.events if not _is_trivia_event(e, module)]
    events: List[Tuple[str, str, int]] = []
    walker = Walker([Recorder(events, skip_trivia=True)])
    assert walker.skip  # nothing hooked a trivia type, so trivia is skipped
    walker.walk(module)
    assert events == want


def test_children_match_libcst():
    module = cst.parse_module(TRICKY)
    stack = [module]
    while stack:
        node = stack.pop()
        assert children(node) == list(node.children)
        assert significant_children(node) == [c for c in node.children if type(c) not in TRIVIA]
        stack.extend(node.children)


def test_the_visit_order_is_read_from_the_source_inspect_finds():
    """``cstcompat.visit_order`` reads each class's ``_visit_and_replace_children`` through ``_source_of``
    (lines by the code's positions, not by tokenizing the file): the same text as ``inspect``'s,
    for every node class of the installed LibCST."""
    classes = [c for c in _subclasses(cst.CSTNode) if "_visit_and_replace_children" in vars(c)]
    assert len(classes) > 200
    for cls in classes:
        method = cls._visit_and_replace_children
        assert _source_of(method) == inspect.getsource(method), cls


def test_trivia_fields_hold_only_trivia():
    module = cst.parse_module(TRICKY)
    stack = [module]
    while stack:
        node = stack.pop()
        for field in trivia_fields(type(node)):
            value = getattr(node, field)
            values = value if isinstance(value, (tuple, list)) else [value]
            assert all(type(v) in TRIVIA for v in values if isinstance(v, cst.CSTNode)), (type(node), field)
        stack.extend(node.children)


def test_walk_honours_false_like_cstvisitor():
    class Names(cst.CSTVisitor):
        def __init__(self):
            self.names = []

        def visit_FunctionDef(self, node):
            return False

        def visit_Name(self, node):
            self.names.append(node.value)

    module = cst.parse_module("a = b\ndef f(x):\n    return y\nc = d\n")
    ours, theirs = Names(), Names()
    walk(module, ours)
    module.visit(theirs)
    assert ours.names == theirs.names == ["a", "b", "c", "d"]


@pytest.mark.skipif(not os.environ.get("DETACHLINT_TORCH_WALK"), reason="set DETACHLINT_TORCH_WALK=1 to compare on torch")
def test_same_events_on_torch_sources():  # pragma: no cover - long
    torch_dir = Path(cst.__file__).parents[1] / "torch"
    for path in sorted(torch_dir.rglob("*.py"))[::25]:
        try:
            module = cst.parse_module(path.read_text(encoding="utf-8"))
        except Exception:
            continue
        expected = LibcstRecorder()
        module.visit(expected)
        events: List[Tuple[str, str, int]] = []
        Walker([Recorder(events, skip_trivia=False)], skip_trivia=False).walk(module)
        assert events == expected.events, path


@pytest.mark.parametrize("index", range(len(SOURCES) + 1))
def test_import_bindings_unchanged_by_pruning_expressions(index):
    from detachlint.analysis.torchnames import ImportCollector

    module = cst.parse_module(_sources()[index])
    pruned, full = ImportCollector(), ImportCollector()
    walk(module, pruned, prune=(cst.BaseExpression,))
    module.visit(full)
    assert pruned.bindings == full.bindings


def test_the_classes_the_analyses_compare_by_identity_have_no_subclasses():
    """``node.__class__ is cst.Name`` (or ``in (cst.List, cst.Tuple)``) stands for ``isinstance``
    in the hottest analyses and rules (``isinstance`` on LibCST's classes goes through
    ``ABCMeta``): true only while no LibCST class derives from these. Every such comparison in
    the package's sources is found here."""
    from detachlint.analysis.tensors import _NOT_TENSOR_NODES

    compared = set(_NOT_TENSOR_NODES)
    package = Path(__import__("detachlint").__file__).parent
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"(?:\bis(?: not)?|\bin) \(?((?:cst\.\w+(?:, )?)+)", text):
            compared.update(getattr(cst, name) for name in re.findall(r"cst\.(\w+)", match.group(1)))
    assert {cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple} <= compared
    for cls in compared:
        assert not cls.__subclasses__(), cls
