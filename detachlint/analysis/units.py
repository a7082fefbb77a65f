"""Function bodies as units: where each one lies, which ones can hold no finding, and the module
with some of them blanked (rows and columns unchanged).

A *unit* is the body of a top-level function or of a method of a top-level class (nested
classes included), from its first body line to its last. The analyses read a body only while
they are inside it, except for what they collect module-wide: imports (``TorchNames``), hook
registrations (``ForwardHooks``), classes, ``global`` and ``nonlocal``, a bare ``torch`` or
``copy`` (what a fix may spell), and, in a method, what the class table of ``TensorFacts``
records (``self.<attr> = ...``, ``register_buffer``, ``register_parameter``). A body that holds
none of these (``function_units``) contributes nothing to the findings anywhere else, and
blanking it (its first line ``pass``, the rest empty) changes only the findings inside it.

A body is *quiet* when there are none inside it either (``quiet_units``): every rule reports at
a node of a few syntactic kinds, and a body holding none of them cannot be reported in. Those
*sites*, as the rules visit them (``rules/``):
- ``.data`` (TAL001, TAL002, TAL401);
- a call of a constructor (``tensor``, ``as_tensor``, ``new_tensor``, the legacy ``Tensor``
  family: TAL101-TAL103), of ``state_dict``/``detach`` or a parameter iterator (TAL401), of an
  in-place op or anything named like one (``add_``, ``nn.init.normal_``), of numpy's in-place
  functions, or with ``out=``/``inplace=`` (the writes of TAL201/TAL301); a call through a local
  name bound to one of these (``from torch import tensor as make``), and any call through a
  name when the module star-imports;
- an augmented assignment, an item assignment (writes);
- ``kept = live`` under an ``if`` inside a loop (TAL401's second name for a module).

The engine blanks the quiet units before LibCST parses the module (``engine.py``), which is
what most of a module costs; the language server's re-lint by function splits a module by
``function_units`` (``incremental.py``), and blanks the top-level statements whose names the
function it lints cannot read (``top_statements``: what each binds and spells). ``python bench/run.py --blank-equality`` proves the
findings equal with and without blanking on every torch source file; ``tests/test_units.py``
on the fixtures, the demo and a sample of torch.
"""

from __future__ import annotations

import ast
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

from . import catalog

_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]

# What a body may hold that the analyses read module-wide, not from the function it is in.
_MODULE_WIDE_NODES = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Global, ast.Nonlocal)
_MODULE_WIDE_ATTRIBUTES = frozenset({"register_forward_hook"})
# In a method, what the class table of ``TensorFacts`` records besides ``self.<attr> = ...``.
_CLASS_TABLE_ATTRIBUTES = frozenset({"register_buffer", "register_parameter"})
# Modules a fix may spell (``torch.no_grad``, ``copy.deepcopy``): any binding of the name counts.
_FIX_MODULES = frozenset({"torch", "copy"})

# Calls that are a site (by the called attribute's or name's last part), besides names ending in
# ``_`` (in-place ops, ``nn.init.*_``, a project helper named like one).
_SITE_CALLS = frozenset().union(
    {"tensor", "as_tensor", "new_tensor", "detach"},
    catalog.LEGACY_CONSTRUCTORS,
    catalog.STATE_SNAPSHOT_METHODS,
    catalog.PARAMETER_ITERATORS,
    catalog.NAMED_PARAMETER_ITERATORS,
    {name.rsplit(".", 1)[-1] for name in catalog.NUMPY_INPLACE_FUNCTIONS},
)
_SITE_KEYWORDS = frozenset({"out", "inplace"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class Unit:
    """A function's body: 1-based rows ``first`` to ``last``, both included."""

    first: int
    last: int
    indent: str


def _is_site_name(name: str) -> bool:
    return name in _SITE_CALLS or (name.endswith("_") and not name.endswith("__"))


@dataclass(frozen=True)
class Sites:
    """What calls a site in one module (``site_names``)."""

    names: FrozenSet[str]  # local names bound to a site's name (``from torch import tensor as make``)
    star: bool  # the module star-imports: any name may be one

    def called(self, node: ast.Call) -> bool:
        func = node.func
        if any(k.arg in _SITE_KEYWORDS for k in node.keywords):
            return True
        if isinstance(func, ast.Attribute):
            return _is_site_name(func.attr)
        if isinstance(func, ast.Name):
            return self.star or _is_site_name(func.id) or func.id in self.names
        return False


def statements(body: Sequence[ast.stmt]) -> Iterable[ast.stmt]:
    """Every statement, nested ones included, without walking expressions (imports are
    statements; ``ast.walk`` over every expression node costs as much as the rest of the pass)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        for block in ("body", "orelse", "finalbody"):
            stack.extend(reversed(getattr(stmt, block, None) or []))
        for handler in getattr(stmt, "handlers", None) or []:
            stack.extend(reversed(handler.body))
        for case in getattr(stmt, "cases", None) or []:
            stack.extend(reversed(case.body))


def site_names(tree: ast.Module) -> Sites:
    """The names bound, by an import anywhere or a module-level alias, to a site's name."""
    names: Set[str] = set()
    star = False
    for node in statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None and _is_site_name(alias.name.rsplit(".", 1)[-1]):
                    names.add(alias.asname)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    star = True
                elif _is_site_name(alias.name):
                    names.add(alias.asname or alias.name)
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, ast.AnnAssign) and stmt.value is not None else []
        value = getattr(stmt, "value", None)
        last = value.attr if isinstance(value, ast.Attribute) else value.id if isinstance(value, ast.Name) else None
        if last is not None and (_is_site_name(last) or last in names):
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return Sites(frozenset(names), star)


def _kept(body: Sequence[ast.stmt], method: bool, sites: Optional[Sites]) -> bool:
    """Whether the body must stay: it holds something the analyses read module-wide (an import, a
    class, ``global``/``nonlocal``, a hook registration, the name ``torch`` or ``copy`` other
    than in ``torch.attr``, a binding that would shadow the module; in a method, what the class
    table records: ``self.<attr> = ...``, ``register_buffer``, ``register_parameter``), or, with
    ``sites``, a site a rule reports at (see the module's docstring). One walk, no recursion."""
    references: Set[int] = set()  # ``torch`` in ``torch.attr``: a use of the module, not a binding
    # (node, inside a loop of this scope, under an ``if`` inside such a loop)
    stack: List[Tuple[ast.AST, bool, bool]] = [(stmt, False, False) for stmt in reversed(body)]
    while stack:
        node, in_loop, chosen = stack.pop()
        if isinstance(node, _MODULE_WIDE_NODES) or _fix_module_use(node, references):
            return True
        if isinstance(node, ast.Attribute):
            if node.attr in _MODULE_WIDE_ATTRIBUTES or (method and node.attr in _CLASS_TABLE_ATTRIBUTES):
                return True
            if sites is not None and node.attr in catalog.UNTRACKED_ALIAS_ATTRIBUTES:
                return True
        elif isinstance(node, ast.Call):
            if sites is not None and sites.called(node):
                return True
        elif isinstance(node, ast.Subscript):
            if sites is not None and isinstance(node.ctx, ast.Store):
                return True  # an item assignment: a write
        elif isinstance(node, ast.Assign):
            if method and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                              for t in node.targets):
                return True
            if sites is not None and chosen and _renames(node):
                return True
        elif isinstance(node, ast.AugAssign):
            if sites is not None:
                return True  # a write
        if isinstance(node, _SCOPES):
            in_loop = chosen = False
        elif isinstance(node, _LOOPS):
            in_loop = True
        elif isinstance(node, ast.If) and in_loop:
            chosen = True
        stack.extend((child, in_loop, chosen) for child in ast.iter_child_nodes(node))
    return False


def _fix_module_use(node: ast.AST, references: Set[int]) -> bool:
    """One node of a walk that reaches an attribute before the name it holds: whether it spells
    ``torch`` or ``copy`` other than in ``torch.attr`` (a read, or a binding that would shadow the
    module: a parameter, a definition, an ``except`` or an import of that name)."""
    if isinstance(node, ast.Attribute):
        references.add(id(node.value))
    elif isinstance(node, ast.Name):
        return node.id in _FIX_MODULES and id(node) not in references
    elif isinstance(node, ast.arg):
        return node.arg in _FIX_MODULES
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
        return node.name in _FIX_MODULES
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) in _FIX_MODULES for a in node.names)
    return False


def _renames(node: ast.Assign) -> bool:
    """``kept = live``: one name bound to another name or an attribute chain."""
    return len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(
        node.value, (ast.Name, ast.Attribute))


def function_units(tree: ast.Module, lines: Sequence[str], methods: bool = True,
                   sites: Optional[Sites] = None) -> List[Unit]:
    """The bodies of the module's top-level functions (and, with ``methods``, of the methods of its
    top-level classes and of the classes nested in them) that start a line of their own and read
    nothing module-wide; with ``sites``, only those that hold no site either (``quiet_units``).
    ``lines``: the physical lines, with their line breaks (``LINE_RE``)."""
    out: List[Unit] = []
    pending: List[Tuple[ast.stmt, bool]] = [(stmt, False) for stmt in tree.body]
    while pending:
        stmt, method = pending.pop()
        if isinstance(stmt, ast.ClassDef):
            if methods:
                pending.extend((inner, True) for inner in stmt.body)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            unit = _body_unit(stmt, lines)
            if unit is not None and not _kept(stmt.body, method, sites):
                out.append(unit)
    out.sort(key=lambda u: u.first)
    return out


def _body_unit(stmt: _Function, lines: Sequence[str]) -> Optional[Unit]:
    first = stmt.body[0]
    decorators = getattr(first, "decorator_list", None) or []
    row = decorators[0].lineno if decorators else first.lineno
    if row <= stmt.lineno or row > len(lines) or stmt.end_lineno is None:
        return None  # ``def f(): return 1``: the body is on the header's line
    line = lines[row - 1]
    head = line[:len(line) - len(line.lstrip(" \t"))]
    # the body's first statement starts its own line, after the indentation
    starts = line.lstrip(" \t").startswith("@") if decorators else first.col_offset == len(head.encode("utf-8"))
    return Unit(row, stmt.end_lineno, head) if head and starts else None


@dataclass(frozen=True)
class Statement:
    """A top-level statement (``unit``: its rows, decorators included) and what a function's body
    can learn from it: the names it binds (``binds``: assignments, definitions and imports at any
    depth; None when it reaches past its names: a hook registration, ``global``, ``torch`` or
    ``copy`` bound or spelt bare, ``import *``), whose meaning it computes from the names it
    spells (``words``; ``head``: those outside its body, for a function). ``blankable``: a simple
    statement (assignment or expression) on lines of its own."""

    unit: Unit
    binds: Optional[FrozenSet[str]]
    words: FrozenSet[str]
    head: FrozenSet[str]
    blankable: bool


_WORD_RE = re.compile(r"[^\W\d]\w*")
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# What reaches past the names a statement binds: a hook registration, ``global``/``nonlocal``,
# and ``torch`` or ``copy`` other than in ``torch.attr`` (a fix's spelling checks for those;
# spelt, the tree tells).
_NOT_BY_NAME_RE = re.compile(r"\b(?:register_forward_hook|global|nonlocal)\b")
_FIX_MODULES_RE = re.compile(r"\b(?:torch|copy)\b(?!\s*\.)")


def words(text: str) -> Set[str]:
    """Every identifier ``text`` spells, in code, strings (annotations) and comments alike."""
    return set(_WORD_RE.findall(text))


def top_statements(tree: ast.Module, lines: Sequence[str]) -> List[Statement]:
    """Every top-level statement of the module, with what it binds and spells."""
    out: List[Statement] = []
    body = tree.body
    for i, stmt in enumerate(body):
        if stmt.end_lineno is None:
            continue
        decorators = getattr(stmt, "decorator_list", None) or []
        first = decorators[0].lineno if decorators else stmt.lineno
        simple = (isinstance(stmt, _SIMPLE) and not stmt.col_offset
                  and (not i or (body[i - 1].end_lineno or first) < first)
                  and (i + 1 == len(body) or body[i + 1].lineno > stmt.end_lineno))
        text = "".join(lines[first - 1:stmt.end_lineno])
        binds, spelt = _statement_facts(text, stmt, simple)
        head = spelt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.body[0].lineno > first:
            head = frozenset(words("".join(lines[first - 1:stmt.body[0].lineno - 1])))
        out.append(Statement(Unit(first, stmt.end_lineno, ""), binds, spelt, head, simple and binds is not None))
    return out


_FACTS_LOCK = threading.Lock()
_FACTS_BY_TEXT: "OrderedDict[Tuple[str, bool], Tuple[Optional[FrozenSet[str]], FrozenSet[str]]]" = OrderedDict()


def _statement_facts(text: str, stmt: ast.stmt, simple: bool) -> Tuple[Optional[FrozenSet[str]], FrozenSet[str]]:
    """(binds, words) of a top-level statement; kept by its text, since an editor asks again
    after every keystroke elsewhere and a statement like torch's ``op_db`` takes a while to walk."""
    key = (text, simple)
    with _FACTS_LOCK:  # the language server lints in worker threads
        found = _FACTS_BY_TEXT.get(key)
        if found is not None:
            _FACTS_BY_TEXT.move_to_end(key)
            return found
    binds = None if _NOT_BY_NAME_RE.search(text) or _FIX_MODULES_RE.search(text) and _uses_fix_module(stmt) \
        else _bound_names(stmt, simple and ":=" not in text)
    found = (binds, frozenset(words(text)))
    with _FACTS_LOCK:
        _FACTS_BY_TEXT[key] = found
        while len(_FACTS_BY_TEXT) > 4096:
            _FACTS_BY_TEXT.popitem(last=False)
    return found


def _uses_fix_module(stmt: ast.stmt) -> bool:
    references: Set[int] = set()
    return any(_fix_module_use(node, references) for node in ast.walk(stmt))  # breadth first: parents first


def _bound_names(stmt: ast.stmt, targets_only: bool) -> Optional[FrozenSet[str]]:
    """Every name ``stmt`` may bind (a superset: at any depth); None after ``import *``."""
    if targets_only:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        return frozenset(n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name))
    bound: Set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (*_DEFINITIONS, ast.ExceptHandler)):
            bound.add(node.name or "")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return None
            bound.update(a.asname or a.name.split(".")[0] for a in node.names)
    return frozenset(bound)


def quiet_units(tree: ast.Module, lines: Sequence[str]) -> List[Unit]:
    """The bodies that can hold no finding and feed none elsewhere: safe to blank."""
    return function_units(tree, lines, methods=True, sites=site_names(tree))


_NEWLINE_END_RE = re.compile(r"(?:\r\n|\r|\n)\Z")
LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def blanked(lines: Sequence[str], units: Iterable[Unit]) -> str:
    """The module with every unit's body blanked, rows and columns unchanged.
    ``lines``: the physical lines, with their line breaks (``LINE_RE``)."""
    out = list(lines)
    for unit in units:
        for row in range(unit.first, unit.last + 1):
            end = _NEWLINE_END_RE.search(out[row - 1])
            out[row - 1] = ("" if row > unit.first else unit.indent + "pass") + (end.group() if end else "")
    return "".join(out)

