"""Every use of LibCST's private API, in one place, each checked against LibCST's public API on
first use and given up, with one logged warning, where the check fails.

- ``visit_order``: the order in which LibCST visits a node class's children, read from the
  source of its private ``_visit_and_replace_children`` (the fast walker, ``walk.py``, needs it
  to fire LibCST's events without LibCST's rebuild of every node). ``walker_agrees`` checks the
  walker's events on ``SAMPLE`` against ``module.visit``'s; where it disagrees, the walker goes
  through ``module.visit`` itself, and where one class's order cannot be read, through
  ``node.visit`` for the nodes of that class.
- ``parse_module``: the parse without LibCST's node validation (a process-wide patch of
  ``CSTNode.__post_init__``, skipped in the parsing thread only); else ``libcst.parse_module``.
- ``positions``: ``PositionProvider``'s private ``_gen``, without the whole-module visit that
  ``MetadataWrapper.resolve`` adds; else ``resolve``.

Findings are the same either way, only slower on the public API. The warnings go to the logger
``detachlint``. pyproject.toml bounds LibCST above: CI raises the bound when the next version passes.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import linecache
import logging
import threading
import typing
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple, Type

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

LOG = logging.getLogger("detachlint")

# What the checks run on: every statement and most expression kinds, trivia of every sort, and
# fields LibCST visits only when present (an ``else``, an annotation, a ``from``).
SAMPLE = '''# a comment
"""docstring"""
from . import a
from .b import *
from x import (y as z, w)
import p.q as r, s
async def f(a, /, b: int = 1, *c, d, e=2, **g) -> "T":
    async with a as (b, c), d:
        async for x in y:
            yield f"{x!r:>{w}} {y=}" 'more', b"bytes"
            await z; yield from q
    return [i async for i in g() if i] or {k: v for k, v in d.items()} and {*s} | (t for t in u)
@dec.orated(1)
@other
class C(B, metaclass=M):
    x: int = 3
    y: "str"
    def g(self, *, k): return lambda q, *r, s=1, **t: (q, *r)
match p:
    case [1, *rest] if rest: pass
    case {"k": v, **kw}: pass
    case P(0, x=1.5) | None | -2j | "s" as whole: pass
    case (a, b, *_) : pass
    case _: pass
try:
    del a[1:2, ::3], b.c
except* (E, F) as e:
    raise X from e
except* G:
    raise
try:
    pass
except Exception:
    pass
else:
    pass
finally:
    global q; nonlocal_ = 1
x = y if z else w; x += 1; x @= m; x = y = -z ** ~2 // 3 << 4
assert x, "m"
while not x: break
else: continue
for i, (j, k) in enumerate(z): pass
else: ...
if (n := len(a)) > 10 >= m is not None and a not in b or c:
    pass
elif e: pass
else: pass
print(*a, **k, sep="")
with open("f") as h, g:
    h.write(a[::2][1])
def outer():
    v = 1
    def inner():
        nonlocal v
        v += 1
    return inner
'''
# PEP 695 type parameters, added to the sample where this LibCST parses them
_PEP_695 = "type A[T] = list[T]\ndef first[T: int, *Ts, **P](x: T) -> T: return x\nclass Box[T]: pass\n"

_WARNED: Set[str] = set()
_VERDICTS: Dict[str, bool] = {}
_LOCK = threading.RLock()


def _fall_back(what: str, why: str) -> None:
    """Log, once per process and touchpoint, that ``what`` takes LibCST's public API."""
    if what not in _WARNED:
        _WARNED.add(what)
        LOG.warning("detachlint: with LibCST %s, %s; %s falls back to LibCST's public API "
                    "(same findings, slower)", _libcst_version(), why, what)


def _libcst_version() -> str:
    try:
        import importlib.metadata  # only here: importing it costs every process several ms

        return importlib.metadata.version("libcst")
    except Exception:  # pragma: no cover - not installed as a distribution
        return "(version unknown)"


def _checked(what: str, check: Callable[[], Optional[str]]) -> bool:
    """Whether the private way to ``what`` passed ``check`` (None: passed, else why not), run
    once per process; an exception in the check fails it."""
    verdict = _VERDICTS.get(what)
    if verdict is None:
        with _LOCK:
            verdict = _VERDICTS.get(what)
            if verdict is None:
                try:
                    why = check()
                except Exception as exc:
                    why = f"{type(exc).__name__}: {exc}"
                if why is not None:
                    _fall_back(what, why)
                verdict = _VERDICTS[what] = why is None
    return verdict


_SAMPLE_TREE: List[Tuple[str, cst.Module]] = []


def _sample() -> Tuple[str, cst.Module]:
    """The sample as this LibCST parses it, and its tree parsed the public way (made once: the
    checks only read it)."""
    with _LOCK:
        if not _SAMPLE_TREE:
            try:
                _SAMPLE_TREE.append((SAMPLE + _PEP_695, cst.parse_module(SAMPLE + _PEP_695)))
            except cst.ParserSyntaxError:  # before LibCST 1.1
                _SAMPLE_TREE.append((SAMPLE, cst.parse_module(SAMPLE)))
    return _SAMPLE_TREE[0]


# --- The visit order -----------------------------------------------------------------------------

_ORDERS: Dict[type, Optional[Tuple[Tuple[str, ...], FrozenSet[str]]]] = {}
_FIELD_CLASSES: Dict[type, Optional[Dict[str, Tuple[type, ...]]]] = {}


def visit_order(cls: Type[cst.CSTNode]) -> Optional[Tuple[Tuple[str, ...], FrozenSet[str]]]:
    """The child fields of ``cls`` in the order LibCST visits them, and those of them it visits
    only when they are not None (``visit_sequence(...) if x is not None else None``: no attribute
    hooks fire for them then). None where that cannot be read, or what is read is not every
    field declared to hold nodes: nodes of that class are then visited by LibCST's own visit."""
    try:
        return _ORDERS[cls]
    except KeyError:
        pass
    try:
        found: Optional[Tuple[Tuple[str, ...], FrozenSet[str]]] = _read_visit_order(cls)
    except Exception as exc:
        _fall_back("the walker, for some node classes,",
                   f"the visit order of {cls.__name__} cannot be read ({type(exc).__name__}: {exc})")
        found = None
    _ORDERS[cls] = found
    return found


def _read_visit_order(cls: Type[cst.CSTNode]) -> Tuple[Tuple[str, ...], FrozenSet[str]]:
    source = _source_of(cls._visit_and_replace_children)  # type: ignore[attr-defined]
    # an indented method parses as the body of an ``if``: no ``textwrap.dedent`` (a tenth of the read)
    tree = ast.parse("if 1:\n" + source if source[:1].isspace() else source)
    nodes = list(ast.walk(tree))  # walked once, read twice
    present = set()
    for n in nodes:
        if isinstance(n, ast.IfExp) and isinstance(n.body, ast.Call) and len(n.body.args) >= 2 \
                and isinstance(n.body.args[1], ast.Constant):
            present.add(n.body.args[1].value)
    names: List[str] = []
    calls = [n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id.startswith("visit_") and len(n.args) >= 2
             and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)]
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        if call.args[1].value not in names:
            names.append(call.args[1].value)
    # What the source says must be what the class declares: an empty read (the source changed
    # shape) would otherwise walk no children, and report nothing, silently.
    declared = field_classes(cls)
    if declared is None or set(names) != set(declared) or not present <= set(names):
        raise LookupError(f"read {names}, but the fields that hold nodes are "
                          f"{sorted(declared) if declared is not None else 'unknown'}")
    return tuple(names), frozenset(present)


def _source_of(function: Callable) -> str:
    """``inspect.getsource(function)``, its lines found from the code object's positions instead of
    by tokenizing the file from the first line on: a quarter of the cost, which every worker
    process pays once per node class it meets. ``inspect`` where the positions say nothing."""
    code = getattr(function, "__code__", None)
    positions = getattr(code, "co_positions", None)  # Python 3.11+
    lines = linecache.getlines(code.co_filename) if positions is not None else []
    ends = [end for _, end, _, _ in positions()] if lines else []
    if not ends or None in ends:  # ``-X no_debug_ranges``
        return inspect.getsource(function)
    return "".join(lines[code.co_firstlineno - 1:max(ends)])


def _classes_in(hint: object) -> List[type]:
    if isinstance(hint, type):
        return [hint]
    out: List[type] = []
    for arg in typing.get_args(hint):
        out.extend(_classes_in(arg))
    return out


def field_classes(cls: Type[cst.CSTNode]) -> Optional[Dict[str, Tuple[type, ...]]]:
    """The node classes each field of ``cls`` is declared to hold, for the fields that may hold a
    node (public: the dataclass's fields and their annotations); None where the annotations
    cannot be resolved."""
    try:
        return _FIELD_CLASSES[cls]
    except KeyError:
        pass
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # pragma: no cover - unresolvable annotations
        found = None
    else:
        found = {}
        for field in dataclasses.fields(cls):
            nodes = tuple(c for c in _classes_in(hints.get(field.name)) if issubclass(c, cst.CSTNode))
            if nodes:
                found[field.name] = nodes
    _FIELD_CLASSES[cls] = found
    return found


class _Recorder:
    """Every ``visit_*``/``leave_*`` hook, recording (hook, node): what the fast walker calls."""

    def __init__(self) -> None:
        self.events: List[Tuple[str, int]] = []

    def __getattr__(self, name: str) -> Callable[[cst.CSTNode], None]:
        if not name.startswith(("visit_", "leave_")):
            raise AttributeError(name)
        return lambda node: self.events.append((name, id(node)))


class _LibcstRecorder(cst.CSTVisitor):
    """The same events as LibCST's ``CSTVisitor`` dispatches them, but for nodes of the classes
    ``skipped`` and below."""

    def __init__(self, skipped: FrozenSet[type]) -> None:
        super().__init__()
        self.events: List[Tuple[str, int]] = []
        self.skipped = skipped

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in self.skipped:
            return False
        self.events.append(("visit_" + type(node).__name__, id(node)))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if type(original_node) not in self.skipped:
            self.events.append(("leave_" + type(original_node).__name__, id(original_node)))

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.events.append((f"visit_{type(node).__name__}_{attribute}", id(node)))

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        self.events.append((f"leave_{type(original_node).__name__}_{attribute}", id(original_node)))


def walker_agrees(walk: Callable[[cst.Module, object], None], skipped: FrozenSet[type] = frozenset()) -> bool:
    """Whether ``walk(module, recorder)`` (the fast walker, hooks looked up by name on
    ``recorder``) fires the very events ``module.visit`` does on the sample, but for the nodes of
    the classes ``skipped`` (trivia: checked apart, where a walk first includes them, since no
    built-in rule or analysis needs their order). Checked once per process."""
    what = "the walker" if skipped else "the walker over trivia"
    return _checked(what, lambda: _compare_walks(walk, skipped))


def _compare_walks(walk: Callable[[cst.Module, object], None], skipped: FrozenSet[type]) -> Optional[str]:
    module = _sample()[1]
    theirs, ours = _LibcstRecorder(skipped), _Recorder()
    module.visit(theirs)
    walk(module, ours)
    if ours.events == theirs.events:
        return None
    at = next((i for i, (a, b) in enumerate(zip(ours.events, theirs.events)) if a != b),
              min(len(ours.events), len(theirs.events)))
    got = ours.events[at][0] if at < len(ours.events) else "the end"
    want = theirs.events[at][0] if at < len(theirs.events) else "the end"
    return f"the fast walker's event {at} on a sample module is {got}, LibCST's visit's {want}"


# --- The parse without validation ----------------------------------------------------------------

# LibCST validates every node it builds (``CSTNode.__post_init__``), the parser's output too,
# where the parser has already checked what validation checks: a tenth to a fifth of a parse
# (LibCST's own PERF note there says as much). The threads listed here are inside
# ``parse_module`` and skip it; nodes built anywhere else (fixes, other threads of the language
# server, other plugins in a flake8 process) are validated as before.
_PARSING: Set[int] = set()
_VALIDATE = getattr(cst.CSTNode, "__post_init__", None)


def _post_init(node: cst.CSTNode, parsing: Set[int] = _PARSING, thread: Callable[[], int] = threading.get_ident) -> None:
    if thread() not in parsing:
        _VALIDATE(node)  # type: ignore[misc]


def _install(hook: Callable[[cst.CSTNode], None]) -> None:
    cst.CSTNode.__post_init__ = hook  # type: ignore[method-assign]


def _check_unvalidated() -> Optional[str]:
    if _VALIDATE is None:
        return "CSTNode has no __post_init__ to skip"
    why: Optional[str] = "CSTNode.__post_init__ cannot be replaced"
    try:
        _install(_post_init)
        if getattr(cst.CSTNode, "__post_init__", None) is _post_init:
            source, theirs = _sample()
            why = None if _parse_unvalidated(source).deep_equals(theirs) else \
                "a sample module parsed without validation differs from the validated parse"
    finally:
        if why is not None:  # an exception too: LibCST's own validation back
            _restore()
    return why


def _restore() -> None:
    if _VALIDATE is not None and getattr(cst.CSTNode, "__post_init__", None) is _post_init:
        _install(_VALIDATE)


def _parse_unvalidated(source: str) -> cst.Module:
    _install(_post_init)  # again: something may have put LibCST's own back since
    thread = threading.get_ident()
    _PARSING.add(thread)
    try:
        return cst.parse_module(source)
    finally:
        _PARSING.discard(thread)


def parse_module(source: str) -> cst.Module:
    """``libcst.parse_module`` without validating the nodes the parser builds (same tree)."""
    if _checked("the parser", _check_unvalidated):
        return _parse_unvalidated(source)
    return cst.parse_module(source)


# --- Positions -----------------------------------------------------------------------------------

_POSITION_GEN = "_gen"


def _gen_positions(wrapper: MetadataWrapper) -> Mapping[cst.CSTNode, CodeRange]:
    return getattr(PositionProvider(), _POSITION_GEN)(wrapper)


# Positions need no variety of nodes, only lines, columns and what LibCST counts as a node's extent.
_POSITIONS_SAMPLE = "x = (a +\n     b)  # c\nif x:\n    f(y)[0].z = 1\n"


def _check_positions() -> Optional[str]:
    module = cst.parse_module(_POSITIONS_SAMPLE)
    ours = _gen_positions(MetadataWrapper(module, unsafe_skip_copy=True))
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    if not isinstance(ours, Mapping) or dict(ours) != dict(theirs):
        return f"PositionProvider.{_POSITION_GEN} on a sample module differs from MetadataWrapper.resolve"
    return None


def positions(wrapper: MetadataWrapper) -> Mapping[cst.CSTNode, CodeRange]:
    """``wrapper.resolve(PositionProvider)`` for half its cost: ``resolve`` follows the provider's
    code generation with a visit of the whole module for the batchable providers, rebuilding
    every node even when there are none, as here."""
    if _checked("the position look-up", _check_positions):
        return _gen_positions(wrapper)
    return wrapper.resolve(PositionProvider)
