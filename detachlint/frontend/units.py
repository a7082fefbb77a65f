"""Function bodies as units: where each one lies, which ones can hold no finding, and the module
with some of them blanked (rows and columns unchanged).

A *unit* is the body of a top-level function or of a method of a top-level class (nested
classes included), from its first body line to its last. The analyses read a body only while
they are inside it, except for what they collect module-wide: imports (``TorchNames``), hook
registrations (``ForwardHooks``), ``Module.apply`` calls (``AppliedFunctions``), classes, ``global`` and ``nonlocal``, a bare ``torch`` or
``copy`` (what a fix may spell), and, in a method, what the class table of ``TensorFacts``
records (``self.<attr> = ...``, ``register_buffer``, ``register_parameter``). A body that holds
none of these (``function_units``) contributes nothing to the findings anywhere else, and
blanking it (its first line ``pass``, the rest empty) changes only the findings inside it.

A body is *quiet* when there are none inside it either (``quiet_units``): every rule reports at
a node of a few syntactic kinds, its *sites*, which it declares (``Rule.sites``, ``sites.py``),
and a body holding none of the selected rules' sites cannot be reported in. Besides the kinds a
rule declares, a call through a local name bound to one of its calls (``from torch import tensor
as make``) is a site, and any call through a name when the module star-imports.

In a large module-level table, the arguments of an element that calls a class are blanked too
when no analysis can see them (``quiet_elements``: no site, nothing read module-wide, and no
name that module-level code may hold as state), and so are the insides of its literals. In a
module with many top-level assignments and expressions, those that share no name with a site
or with the code that stays are blanked whole (``quiet_statements``).

A body that holds no site but something read module-wide is *slimmed*: every run of its
statements that holds nothing read module-wide becomes one ``pass`` (``_slimmed``), so that
LibCST parses a method's ``self.<attr> = ...`` lines and a function's local imports, not the
code around them.

What these decisions need to know of the whole module (its imports, the names bound to a site,
its top-level imports, statements and tables) is gathered by ``ModuleScan`` from the module's
top-level statements a list at a time, so that a large module's first pass can go a piece at a
time (``firstpass.first_pass_in_pieces``) without a tree of the whole module.

The engine blanks the quiet units before LibCST parses the module (``engine.py``), which is
what most of a module costs, and hands LibCST each run of the lines that leaves empty as one
(``collapsed``: a generated module's are hundreds of thousands), mapping rows back; the
language server's re-lint by function splits a module by ``function_units``
(``incremental.py``), and blanks the top-level statements whose names the function it lints
cannot read (``top_statements``: what each binds and spells). ``python bench/run.py
--blank-equality`` proves the findings equal with and without blanking on every torch source
file; ``tests/test_units.py`` on the fixtures (also rewritten as module-level scripts), the demo
and a sample of torch.
"""

from __future__ import annotations

import ast
import bisect
import functools
import io
import keyword
import re
import threading
from array import array
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

from ..knowledge import catalog
from .sites import Sites

_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]

# What a body may hold that the analyses read module-wide, not from the function it is in.
_MODULE_WIDE_NODES = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Global, ast.Nonlocal)
_MODULE_WIDE_ATTRIBUTES = frozenset({"register_forward_hook", "apply"})  # ``ForwardHooks``, ``AppliedFunctions``
# In a method, what the class table of ``TensorFacts`` records besides ``self.<attr> = ...``.
_CLASS_TABLE_ATTRIBUTES = frozenset({"register_buffer", "register_parameter"})
# Modules a fix may spell (``torch.no_grad``, ``copy.deepcopy``): any binding of the name counts.
_FIX_MODULES = frozenset({"torch", "copy"})

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Fields that hold contexts and operators (35% of the nodes of torch's sources), which ``_kept``
# never looks at.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
# Fields that hold a name, a number or a flag, never a node, by class name: not looked into
# (``Name.id``, ``Attribute.attr`` and ``Constant.value`` are half the fields of the commonest
# nodes). Not ``name`` in general: ``TypeAlias.name`` is a node.
_SCALAR_FIELDS: Dict[str, FrozenSet[str]] = {
    "Name": frozenset({"id"}), "Attribute": frozenset({"attr"}), "Constant": frozenset({"value", "kind"}),
    "keyword": frozenset({"arg"}), "arg": frozenset({"arg", "type_comment"}), "alias": frozenset({"name", "asname"}),
    "FunctionDef": frozenset({"name", "type_comment"}), "AsyncFunctionDef": frozenset({"name", "type_comment"}),
    "ClassDef": frozenset({"name"}), "ImportFrom": frozenset({"module", "level"}),
    "ExceptHandler": frozenset({"name"}), "Global": frozenset({"names"}), "Nonlocal": frozenset({"names"}),
    "FormattedValue": frozenset({"conversion"}), "AnnAssign": frozenset({"simple"}),
    "comprehension": frozenset({"is_async"}), **{c: frozenset({"type_comment"}) for c in (
        "Assign", "For", "AsyncFor", "With", "AsyncWith")},
}
_NODE_FIELDS: Dict[type, Tuple[str, ...]] = {}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# The same as sets of classes, for ``_kept``'s per-node tests (the parser makes no subclasses):
# and, of what ``_kept`` pushes, the nodes ``_fix_module_use`` may answer True for.
_MODULE_WIDE_CLASSES = frozenset(_MODULE_WIDE_NODES)
_SCOPE_CLASSES = frozenset(_SCOPES)
_LOOP_CLASSES = frozenset(_LOOPS)
_FIX_BINDERS = frozenset({ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                          ast.Import, ast.ImportFrom})


@dataclass(frozen=True)
class Unit:
    """A function's body: 1-based rows ``first`` to ``last``, both included."""

    first: int
    last: int
    indent: str


def _is_site_name(name: str, vocabulary: Sites) -> bool:
    """Whether a call of ``name`` is a site of ``vocabulary`` (``Sites.calls``, ``inplace_calls``)."""
    return name in vocabulary.calls or (vocabulary.inplace_calls and name.endswith("_") and not name.endswith("__"))


@dataclass(frozen=True)
class SiteNames:
    """What calls a site of ``vocabulary`` in one module (``site_names``)."""

    vocabulary: Sites  # the selected rules' sites
    names: FrozenSet[str]  # local names bound to a site's name (``from torch import tensor as make``)
    star: bool  # the module star-imports: any name may be one

    def called(self, node: ast.Call) -> bool:
        func = node.func
        keywords = self.vocabulary.keywords
        if keywords and any(k.arg in keywords for k in node.keywords):
            return True
        if isinstance(func, ast.Attribute):
            return _is_site_name(func.attr, self.vocabulary)
        if isinstance(func, ast.Name):
            return self.star or _is_site_name(func.id, self.vocabulary) or func.id in self.names
        return False


# Per statement class, the fields of ``_BLOCKS`` it has, in that order (most have none: looked up
# once per class, not five times per statement).
_BLOCKS_OF: Dict[type, Tuple[str, ...]] = {}


def statements(body: Sequence[ast.stmt]) -> Iterable[ast.stmt]:
    """Every statement, nested ones included, without walking expressions (imports are
    statements; ``ast.walk`` over every expression node costs as much as the rest of the pass)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        blocks = _BLOCKS_OF.get(stmt.__class__)
        if blocks is None:
            blocks = _BLOCKS_OF[stmt.__class__] = tuple(f for f in _BLOCKS if f in stmt._fields)
        for block in blocks:
            if block == "handlers" or block == "cases":
                for part in getattr(stmt, block):
                    stack.extend(reversed(part.body))
            else:
                stack.extend(reversed(getattr(stmt, block) or []))


def site_names(tree: ast.Module, vocabulary: Sites) -> SiteNames:
    """The names bound, by an import anywhere or a module-level alias, to a site's name."""
    return ModuleScan.of(tree, (), vocabulary).sites


def _kept(body: Sequence[ast.stmt], method: bool, sites: Optional[SiteNames], module_wide: bool = True) -> bool:
    """Whether the body must stay: it holds something the analyses read module-wide (an import, a
    class, ``global``/``nonlocal``, a hook registration, the name ``torch`` or ``copy`` other
    than in ``torch.attr``, a binding that would shadow the module; in a method, what the class
    table records: ``self.<attr> = ...``, ``register_buffer``, ``register_parameter``), or, with
    ``sites``, a site a rule reports at (see the module's docstring). Without ``module_wide``,
    only a site counts. One walk, no recursion."""
    vocabulary = sites.vocabulary if sites is not None else Sites()
    attributes, writes, renames = vocabulary.attributes, vocabulary.writes, vocabulary.loop_renames
    references: Set[int] = set()  # for ``_fix_module_use``: stays empty, no name is pushed here
    # (node, inside a loop of this scope, under an ``if`` inside such a loop)
    stack: List[Tuple[Any, bool, bool]] = [(stmt, False, False) for stmt in reversed(body)]  # Any: a node of any kind, read after a class test
    pop, push = stack.pop, stack.append
    while stack:
        node, in_loop, chosen = pop()
        cls = node.__class__
        # Names, constants and attributes are most of the nodes: decided without the general
        # checks below and without enumerating their fields, names and constants when their
        # parent is (the result does not depend on the order of the walk). The answers are those
        # of ``_fix_module_use`` and the ``Attribute`` check below, which must change together:
        # an attribute's name (``torch`` in ``torch.attr``) is a use of the module, never pushed.
        if cls is ast.Attribute:
            attr = node.attr
            if module_wide and (attr in _MODULE_WIDE_ATTRIBUTES or method and attr in _CLASS_TABLE_ATTRIBUTES):
                return True
            if attr in attributes:
                return True
            value = node.value
            if value.__class__ is not ast.Name and value.__class__ is not ast.Constant:
                push((value, in_loop, chosen))
            continue
        if module_wide and (cls in _MODULE_WIDE_CLASSES or cls in _FIX_BINDERS and _fix_module_use(node, references)):
            return True
        if cls is ast.Call:
            if sites is not None and sites.called(node):
                return True
        elif cls is ast.Subscript:
            if writes and node.ctx.__class__ is ast.Store:
                return True  # an item assignment: a write
        elif cls is ast.Assign:
            if module_wide and method and any(
                    isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                    for t in node.targets):
                return True
            if renames and chosen and _renames(node):
                return True
        elif cls is ast.AugAssign:
            if writes:
                return True  # a write
        if cls in _SCOPE_CLASSES:
            in_loop = chosen = False
        elif cls in _LOOP_CLASSES:
            in_loop = True
        elif cls is ast.If and in_loop:
            chosen = True
        for child in child_nodes(node):
            child_class = child.__class__
            if child_class is ast.Name:  # decided here, without a push (no attribute's value)
                if module_wide and child.id in _FIX_MODULES:
                    return True
            elif child_class is not ast.Constant:
                push((child, in_loop, chosen))
    return False


def child_nodes(node: ast.AST) -> List[ast.AST]:
    """``ast.iter_child_nodes`` without contexts and operators, and about twice as fast."""
    children = _CHILDREN.get(node.__class__)
    if children is None:
        children = _CHILDREN[node.__class__] = _children_of(node.__class__)
    return children(node)


_CHILDREN: Dict[type, Callable[[Any], List[ast.AST]]] = {}
# A field's type in the grammar (the class's docstring, ``Call(expr func, expr* args, ...)``):
# ``T*`` a list, ``T?`` a node or None, ``T`` a node; these types are never nodes, or are the
# contexts and operators no walk here looks at.
_NOT_NODES = frozenset({"identifier", "string", "int", "constant", "expr_context", "operator", "unaryop",
                        "cmpop", "boolop"})
_SIGNATURE_RE = re.compile(r"(\w+)\((.*)\)\Z")
# The lists of the grammar that hold None for what the code leaves out (``{**d}``, ``*, k``).
_HOLES = frozenset({("Dict", "keys"), ("arguments", "kw_defaults")})


def _children_of(cls: type) -> Callable[[Any], List[ast.AST]]:
    """``child_nodes`` for the nodes of ``cls``: a function generated from its fields' types,
    without the tests of every field's value the general walk makes (on the nodes that have
    children, 28% less time over torch's sources). Where the class states no grammar, the
    general walk."""
    found = _SIGNATURE_RE.match((cls.__doc__ or "").strip())
    if found is None or found.group(1) != cls.__name__:
        return functools.partial(_generic_children, cls)
    declared = [part.split() for part in found.group(2).split(",") if part.strip()]
    if [name for _, name in declared] != list(cls._fields):  # type: ignore[attr-defined]
        return functools.partial(_generic_children, cls)
    lines = []
    for kind, name in declared:
        if kind.rstrip("*?") in _NOT_NODES or name in _LEAF_FIELDS:
            continue
        if kind.endswith("*"):
            holes = (cls.__name__, name) in _HOLES
            lines.append(f"    out += [v for v in n.{name} if v is not None]\n" if holes else f"    out += n.{name}\n")
        elif kind.endswith("?"):
            lines.append(f"    v = n.{name}\n    if v is not None:\n        out.append(v)\n")
        else:
            lines.append(f"    out.append(n.{name})\n")
    if not lines:  # names, constants, ``pass``: most of the nodes
        return _no_children
    namespace: Dict[str, Any] = {}
    exec(f"def children(n):\n    out = []\n{''.join(lines)}    return out\n", namespace)  # noqa: S102 - from the grammar
    return namespace["children"]


def _no_children(node: ast.AST) -> List[ast.AST]:
    return []


def _generic_children(cls: type, node: ast.AST) -> List[ast.AST]:
    fields = _NODE_FIELDS.get(cls)
    if fields is None:
        scalars = _SCALAR_FIELDS.get(cls.__name__, frozenset())
        fields = _NODE_FIELDS[cls] = tuple(f for f in node._fields if f not in _LEAF_FIELDS and f not in scalars)
    out: List[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, ast.AST):
                    out.append(item)
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


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
                   sites: Optional[SiteNames] = None, slim: bool = False) -> List[Unit]:
    """The bodies of the module's top-level functions (and, with ``methods``, of the methods of its
    top-level classes and of the classes nested in them) that start a line of their own and read
    nothing module-wide; with ``sites``, only those that hold no site either (``quiet_units``).
    With ``slim`` (and ``sites``), also the statements of a body that holds no site but something
    read module-wide, other than those that hold it (``_slimmed``).
    ``lines``: the physical lines, with their line breaks (``LINE_RE``)."""
    return _function_units(tree.body, lines, methods, sites, slim)


def _function_units(body: Sequence[ast.stmt], lines: Sequence[str], methods: bool, sites: Optional[SiteNames],
                    slim: bool) -> List[Unit]:
    out: List[Unit] = []
    pending: List[Tuple[ast.stmt, bool]] = [(stmt, False) for stmt in body]
    while pending:
        stmt, method = pending.pop()
        if isinstance(stmt, ast.ClassDef):
            if methods:
                pending.extend((inner, True) for inner in stmt.body)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            unit = _body_unit(stmt, lines)
            if unit is None:
                continue
            if not _kept(stmt.body, method, sites):
                out.append(unit)
            elif slim and sites is not None and not _kept(stmt.body, method, sites, module_wide=False) and not any(
                    isinstance(node, _REBINDS_OUTSIDE) for node in statements(stmt.body)):
                out.extend(_slimmed(stmt.body, method, lines))
    out.sort(key=lambda u: u.first)
    return out


# Statements with blocks that ``_slimmed`` descends into; a definition is kept or blanked whole.
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try) + tuple(
    getattr(ast, name) for name in ("TryStar", "Match") if hasattr(ast, name))
# What rebinds module-level names from inside a function: such a body stays whole, not slimmed.
_REBINDS_OUTSIDE = (ast.Global, ast.Nonlocal)


def _slimmed(block: Sequence[ast.stmt], method: bool, lines: Sequence[str]) -> List[Unit]:
    """In a body with no site, the runs of statements that hold nothing read module-wide, each
    blanked to a ``pass``: what the analyses read of such a body (imports, ``self.<attr> = ...``,
    hook registrations, classes, ...) is read statement by statement, whatever else the body
    does (the class table judges ``self.<attr>``'s value without the function's bindings), and
    no rule reports inside it. A run is blanked only when it has its lines to itself."""
    out: List[Unit] = []
    run: List[ast.stmt] = []
    for stmt in [*block, None]:
        if stmt is not None and not _kept([stmt], method, None):
            run.append(stmt)
            continue
        if run:
            unit = _run_unit(run, stmt, lines)
            if unit is not None:
                out.append(unit)
            run = []
        if isinstance(stmt, _COMPOUND):
            for inner in _blocks(stmt):
                out.extend(_slimmed(inner, method, lines))
    return out


def _blocks(stmt: ast.stmt) -> Iterable[List[ast.stmt]]:
    """The blocks of a compound statement. The blocks of an ``if`` that is an ``else`` block's only
    statement are its own: it may be an ``elif``, which cannot be blanked alone."""
    yield stmt.body  # type: ignore[attr-defined]
    orelse = getattr(stmt, "orelse", None) or []
    if isinstance(stmt, ast.If) and len(orelse) == 1 and isinstance(orelse[0], ast.If):
        yield from _blocks(orelse[0])
    elif orelse:
        yield orelse
    for handler in getattr(stmt, "handlers", None) or []:
        yield handler.body
    for case in getattr(stmt, "cases", None) or []:
        yield case.body
    if getattr(stmt, "finalbody", None):
        yield stmt.finalbody  # type: ignore[attr-defined]


def _run_unit(run: Sequence[ast.stmt], after: Optional[ast.stmt], lines: Sequence[str]) -> Optional[Unit]:
    """The rows of consecutive statements of one block, when they start a line of their own and no
    other statement shares their last line (``after``: the next statement of the block)."""
    first_stmt = run[0]
    decorators = getattr(first_stmt, "decorator_list", None) or []
    row = decorators[0].lineno if decorators else first_stmt.lineno
    column = decorators[0].col_offset - 1 if decorators else first_stmt.col_offset  # ``@`` comes first
    last = run[-1].end_lineno
    if last is None or (after is not None and after.lineno <= last) or row > len(lines):
        return None
    line = lines[row - 1]
    head = line[:len(line) - len(line.lstrip(" \t"))]
    return Unit(row, last, head) if head and column == len(head) else None


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
# What reaches past the names a statement binds: a hook registration, a function handed to
# ``Module.apply`` (``AppliedFunctions``), ``global``/``nonlocal``, and ``torch`` or ``copy`` other
# than in ``torch.attr`` (a fix's spelling checks for those; spelt, the tree tells).
_NOT_BY_NAME_RE = re.compile(r"\b(?:register_forward_hook|global|nonlocal)\b|\.apply\s*\(")
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
        simple = _simple_alone(body, i)
        text = "".join(lines[first - 1:stmt.end_lineno])
        binds, spelt = _statement_facts(text, stmt, simple)
        head = spelt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.body[0].lineno > first:
            head = frozenset(words("".join(lines[first - 1:stmt.body[0].lineno - 1])))
        out.append(Statement(Unit(first, stmt.end_lineno, ""), binds, spelt, head, simple and binds is not None))
    return out


def _simple_alone(body: Sequence[ast.stmt], i: int) -> bool:
    """Whether ``body[i]`` is a simple statement (an assignment or an expression) on lines of its
    own: blanking its lines blanks it and nothing else."""
    stmt = body[i]
    return (isinstance(stmt, _SIMPLE) and not stmt.col_offset and stmt.end_lineno is not None
            and (not i or (body[i - 1].end_lineno or stmt.lineno) < stmt.lineno)
            and (i + 1 == len(body) or body[i + 1].lineno > stmt.end_lineno))


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


def quiet_units(tree: ast.Module, lines: Sequence[str], vocabulary: Sites) -> List[Unit]:
    """The bodies that can hold no finding of rules whose sites are ``vocabulary`` and feed none
    elsewhere: safe to blank."""
    return function_units(tree, lines, methods=True, sites=site_names(tree, vocabulary))


def quiet_code(tree: ast.Module, lines: Sequence[str], vocabulary: Sites) -> Tuple[List[Unit], List["Span"]]:
    """What the engine blanks when the selected rules' sites are ``vocabulary``: the quiet bodies
    (and the slimmed ones'), the quiet top-level statements and the quiet table elements (those
    outside such a statement)."""
    return ModuleScan.of(tree, lines, vocabulary).quiet_code(lambda: [tree.body])


@dataclass(frozen=True)
class Span:
    """The inside of one call's parentheses or of one display's brackets: from 1-based ``row``,
    0-based character ``column`` to ``end_row``, ``end_column`` (excluded). ``calls``: the dotted names called inside, so
    that the engine keeps the span when one of them is a function of the project (whose
    summary may write, step or return an argument)."""

    row: int
    column: int
    end_row: int
    end_column: int
    calls: Tuple[str, ...]

    def overlaps(self, row: int, column: int, end_row: int, end_column: int) -> bool:
        return (row, column) < (self.end_row, self.end_column) and (self.row, self.column) < (end_row, end_column)


# A table (a top-level display) this large is worth a walk of its elements: LibCST spends
# hundreds of bytes per character of it (torch's ``op_db`` is 660 kB of ``OpInfo(...)``,
# ``sparse/_triton_ops_meta.py`` 470 kB of numbers).
_TABLE_SIZE = 16_384
# What a table's element must not name: a backward pass or an optimizer step (``ScopeOrder``,
# the alias analysis), also under a ``from`` import's other name.
_EFFECT_NAMES = catalog.BACKWARD_METHODS | catalog.OPTIMIZER_UPDATE_METHODS | {"backward", "grad"}
# What a literal is made of: constants, displays of them and their signs (``ast.walk`` yields
# the context and operator nodes too).
_LITERAL_NODES = (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.unaryop, ast.Load)
_BRACKETS = {ast.Tuple: "()", ast.List: "[]", ast.Set: "{}", ast.Dict: "{}"}


def quiet_elements(tree: ast.Module, lines: Sequence[str], vocabulary: Sites) -> List[Span]:
    """What no analysis can see in large module-level tables, safe to blank (``Span``): literals,
    and the arguments of class calls.
    A literal (constants and displays of them) has no name, no kind but "not a tensor" and no
    alias origin, and keeps those blanked: the inside of a tuple or dict display goes, an empty
    list (a kind of its own, ``Kind.EMPTY_LIST``) is never made, only its elements are blanked.
    A call qualifies when it calls a capitalised name, a class (what it makes has no kind and no
    alias origin that its arguments decide: not one of the catalogue's functions,
    ``OrderedDict(d)``), holds no site and nothing read module-wide (``_kept``), binds nothing
    (``:=``), names no backward pass or optimizer step, and spells no name that module-level
    code may hold as state (``_state_parts``)."""
    scan = ModuleScan.of(tree, lines, vocabulary)
    return scan.elements(lambda: [tree.body])


def _also_as(names: FrozenSet[str], imported: Dict[str, str]) -> FrozenSet[str]:
    """``names``, and the local names a ``from`` import binds one of them to."""
    return names | {local for local, name in imported.items() if name in names}


def _table(stmt: ast.stmt) -> Optional[List[ast.expr]]:
    """The elements of a statement that assigns, or is, a display (a dict's keys and values)."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
    if isinstance(value, ast.Dict):
        return [k for k in value.keys if k is not None] + value.values
    return value.elts if isinstance(value, (ast.List, ast.Tuple, ast.Set)) else None


def _literal_spans(node: Optional[ast.expr], lines: Sequence[str]) -> Optional[List[Span]]:
    """The inside of a literal tuple or dict display; in a literal list or set display, those of
    its elements; None when ``node`` is no literal display."""
    if type(node) not in _BRACKETS or not all(isinstance(n, _LITERAL_NODES) for n in ast.walk(node)):  # type: ignore[arg-type]
        return None
    if isinstance(node, (ast.List, ast.Set)):  # ``{1}`` would become ``{}``, a dict
        return [span for e in node.elts for span in _literal_spans(e, lines) or ()]
    assert node is not None and node.end_lineno is not None and node.end_col_offset is not None
    line, end_line = lines[node.lineno - 1], lines[node.end_lineno - 1]
    column, end_column = _column(line, node.col_offset), _column(end_line, node.end_col_offset) - 1
    if line[column:column + 1] + end_line[end_column:end_column + 1] != _BRACKETS[type(node)]:
        return []  # a tuple without its parentheses
    empty = node.lineno == node.end_lineno and end_column == column + 1
    return [] if empty else [Span(node.lineno, column + 1, node.end_lineno, end_column, ())]


def _quiet_call(element: ast.Call, lines: Sequence[str], sites: SiteNames, state: Set[str], effects: FrozenSet[str],
                comprehensions: bool) -> Optional[Span]:
    func = element.func
    if not ((element.args or element.keywords) and element.end_lineno is not None and element.end_col_offset
            is not None and func.end_lineno is not None and func.end_col_offset is not None):
        return None
    spelt = words("".join(lines[element.lineno - 1:element.end_lineno]))
    if spelt & state or _kept([ast.Expr(element)], False, sites):
        return None
    calls: List[str] = []
    queue = deque([element])  # breadth first, as ``ast.walk``: the calls' order is kept
    while queue:
        node = queue.popleft()
        cls = node.__class__
        if cls is ast.Name:
            if node.id in effects:
                return None
            continue
        if cls is ast.Constant:
            continue
        if cls is ast.NamedExpr or cls is ast.comprehension and not comprehensions:
            return None
        if cls is ast.Attribute and node.attr in effects:
            return None
        if cls is ast.Call:
            name = dotted(node.func)
            if name is not None:
                calls.append(name)
        queue.extend(child_nodes(node))  # contexts and operators hold nothing looked at here
    # ``Name(`` ... ``)``: the parenthesis right after the name, on its line, and the call's last
    row, line = func.end_lineno, lines[func.end_lineno - 1]
    column = _column(line, func.end_col_offset)
    column += len(line[column:]) - len(line[column:].lstrip(" \t"))
    end_row, end_line = element.end_lineno, lines[element.end_lineno - 1]
    end_column = _column(end_line, element.end_col_offset) - 1
    if line[column:column + 1] != "(" or end_line[end_column:end_column + 1] != ")":
        return None
    return Span(row, column + 1, end_row, end_column, tuple(dict.fromkeys(calls)))


# Top-level statements this large in all are worth the analysis below: LibCST spends hundreds of
# bytes per character of them, and a generated module may be megabytes of nothing else.
_STATEMENTS_SIZE = 65_536


def quiet_statements(tree: ast.Module, lines: Sequence[str], vocabulary: Sites,
                     bodies: Sequence[Unit] = ()) -> List[Span]:
    """The top-level simple statements (an assignment or an expression on lines of its own) that
    can hold no finding and tell the code that stays nothing, safe to blank whole: each a
    ``Span`` of whole lines, with the dotted names it calls (the engine keeps one that calls a
    function of the project). A finding is at a site, and learns from a statement without one
    only through a name both spell: a value it binds (an alias, a kind, a graph), a later read of
    what a site writes, an earlier use (TAL001's ``used_before``). So a statement stays when it
    holds a site or anything read module-wide (``_kept``), names a backward pass or an optimizer
    step, is a string (a docstring decides where a fix's import goes), or reads or binds a name
    that the code which stays spells, other than a module that nothing but ``import`` binds;
    and so on, to a fixpoint. ``bodies``: the quiet bodies, blank too (what they spell counts
    for nothing). Only when such statements are ``_STATEMENTS_SIZE`` characters or more: what a
    module of 40,000 ``vN = torch.zeros(k)`` lines and one ``.data`` write then needs LibCST for
    is two statements, not a megabyte."""
    scan = ModuleScan.of(tree, lines, vocabulary)
    if not scan.statements_worth:
        return []
    candidates = Candidates()
    scan.candidates(tree.body, candidates)
    return scan.statements(candidates, bodies)


class Candidates:
    """The top-level statements that ``quiet_statements`` may blank, kept compact: a generated
    module may have hundreds of thousands of them (a tuple of tuples of the words each spells,
    the names it reads and the calls it makes, and the index of names built from them, took
    about 470 bytes a statement, 190 MB for the bench's 400,000-line module; this, about 165).
    Of each: its first row and how many more it has (``rows``, ``more``) and the dotted names it
    calls (``calls``, one tuple for all the statements that call the same); for every name the
    statements read or bind, which of them do (``by_name``: one index, or an array of them). The
    words a statement spells are not kept: read again from its lines for the few that stay."""

    def __init__(self) -> None:
        self.rows = array("l")
        self.more = array("l")
        self.calls: List[Tuple[str, ...]] = []
        self.by_name: Dict[str, Union[int, "array[int]"]] = {}
        self._same_calls: Dict[Tuple[str, ...], Tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, first: int, last: int, names: Iterable[str], calls: Tuple[str, ...]) -> None:
        i = len(self.rows)
        self.rows.append(first)
        self.more.append(last - first)
        self.calls.append(self._same_calls.setdefault(calls, calls))
        by_name = self.by_name
        for name in names:
            found = by_name.get(name)
            if found is None:
                by_name[name] = i
            elif found.__class__ is int:
                by_name[name] = array("l", (found, i))  # type: ignore[arg-type]
            else:
                found.append(i)  # type: ignore[union-attr]


class ModuleScan:
    """What the blanking decisions need to know of the whole module (its imports, its sites'
    names, its top-level imports and simple statements, its tables), gathered from its top-level
    statements a list at a time (``gather``): the module's own, or the pieces of a large module
    that Python parses one after another (``firstpass.first_pass_in_pieces``), so that no tree of
    the whole module has to exist. The decisions then walk the lists again (``bodies``: a
    callable that yields them anew, parsing the pieces again)."""

    def __init__(self, lines: Sequence[str], vocabulary: Sites) -> None:
        self.lines = lines
        self.vocabulary = vocabulary  # the selected rules' sites
        self.imported: Dict[str, str] = {}  # what each ``from`` import anywhere binds: local name -> imported name
        self.star = False
        self._site_imports: Set[str] = set()  # names an import binds to a site's name
        self._aliases: List[Tuple[List[str], str]] = []  # module-level ``name = x.site``: the targets, ``site``
        self._import_rows: List[Tuple[int, int]] = []  # top-level imports
        self._modules: Set[str] = set()  # what top-level ``import`` statements bind
        self._top_imported: Set[str] = set()  # what top-level ``from`` imports bind
        self._simple_size = 0  # characters of top-level simple statements on lines of their own
        self._tables = False
        self._table_calls = False  # a table has an element that calls a class

    @classmethod
    def of(cls, tree: ast.Module, lines: Sequence[str], vocabulary: Sites) -> "ModuleScan":
        scan = cls(lines, vocabulary)
        scan.gather(tree.body)
        return scan

    def gather(self, body: Sequence[ast.stmt]) -> None:
        lines, vocabulary = self.lines, self.vocabulary
        for node in statements(body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is not None and _is_site_name(alias.name.rsplit(".", 1)[-1], vocabulary):
                        self._site_imports.add(alias.asname)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = alias.name
                    if alias.name == "*":
                        self.star = True
                    elif _is_site_name(alias.name, vocabulary):
                        self._site_imports.add(alias.asname or alias.name)
        for i, stmt in enumerate(body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                if isinstance(stmt, ast.Import):
                    self._modules.update(a.asname or a.name.split(".")[0] for a in stmt.names)
                else:
                    self._top_imported.update(a.asname or a.name for a in stmt.names)
                self._import_rows.append((stmt.lineno, stmt.end_lineno or stmt.lineno))
                continue
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
                stmt, ast.AnnAssign) and stmt.value is not None else []
            value = getattr(stmt, "value", None)
            last = value.attr if isinstance(value, ast.Attribute) else value.id if isinstance(value, ast.Name) else None
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if last is not None and names:
                self._aliases.append((names, last))
            if _blankable(body, i):
                self._simple_size += sum(len(line) for line in lines[stmt.lineno - 1:stmt.end_lineno])
            if _is_table(stmt, lines):
                self._tables = True
                self._table_calls = self._table_calls or any(_calls_capitalised(e) for e in _table(stmt) or ())

    @functools.cached_property
    def sites(self) -> SiteNames:
        """The names bound, by an import anywhere or a module-level alias, to a site's name."""
        names = set(self._site_imports)
        for targets, last in self._aliases:
            if _is_site_name(last, self.vocabulary) or last in names:
                names.update(targets)
        return SiteNames(self.vocabulary, frozenset(names), self.star)

    @property
    def statements_worth(self) -> bool:
        """Whether ``quiet_statements`` looks at the top-level statements: enough of them, and no
        ``import *`` (which may bind any name, and makes a call through any name a site)."""
        return self._simple_size >= _STATEMENTS_SIZE and not self.sites.star

    def quiet_code(self, bodies: Callable[[], Iterable[Sequence[ast.stmt]]]) -> Tuple[List[Unit], List["Span"]]:
        """``units.quiet_code`` of the module whose top-level statements ``bodies`` yields."""
        units: List[Unit] = []
        candidates = Candidates()
        worth = self.statements_worth
        for body in bodies():
            units.extend(_function_units(body, self.lines, True, self.sites, True))
            if worth:
                self.candidates(body, candidates)
        body = ()  # a piece's tree (the last one's) is not kept through the decisions below
        units.sort(key=lambda u: u.first)
        quiet = self.statements(candidates, units) if len(candidates) else []
        if not self._tables:
            return units, quiet
        rows = {row for span in quiet for row in range(span.row, span.end_row + 1)}
        elements = self.elements(bodies)
        return units, quiet + [span for span in elements if span.row not in rows]

    def candidates(self, body: Sequence[ast.stmt], out: Candidates) -> None:
        """The simple statements of ``body`` with no site, nothing read module-wide and no
        backward pass or optimizer step, added to ``out``: what ``statements`` may blank."""
        lines, sites = self.lines, self.sites
        effects = _also_as(_EFFECT_NAMES, self.imported)
        for i, stmt in enumerate(body):
            if not _blankable(body, i):
                continue
            first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
            spelt = words("".join(lines[first - 1:last]))
            if spelt & effects or _kept([stmt], False, sites):
                continue
            names: Set[str] = set()
            calls: List[str] = []
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name):
                    names.add(node.id)
                elif isinstance(node, ast.Call):
                    called = dotted(node.func)
                    if called:
                        calls.append(called)
            out.add(first, last, names, tuple(dict.fromkeys(calls)))

    def statements(self, candidates: Candidates, bodies: Sequence[Unit]) -> List[Span]:
        """The candidates that share no name with the code that stays (``quiet_statements``);
        ``candidates.by_name`` is used up."""
        lines = self.lines
        # The code but the imports (quiet bodies blank): an ``import`` binds nothing but modules, a
        # ``from`` import the names it lists. Without the candidates: what stays.
        shown = source_lines(blanked(lines, bodies)) if bodies else list(lines)
        shown += [""] * (len(lines) - len(shown))
        for first, last in self._import_rows:
            shown[first - 1:last] = [""] * (last + 1 - first)
        modules = self._modules - self._top_imported
        if modules:  # a module spelt bare, not ``torch.attr``, may be bound to something else
            modules -= set(re.findall(r"\b(%s)\b(?!\s*\.)" % "|".join(map(re.escape, modules)), "".join(shown)))
        rows, more = candidates.rows, candidates.more
        for first, extra in zip(rows, more):
            shown[first - 1:first + extra] = [""] * (extra + 1)
        needed = (words("".join(shown)) | self._top_imported) - _KEYWORDS - modules
        del shown
        # ``needed`` never holds a module: what a statement reads of one is no reason to keep it
        by_name = candidates.by_name
        stays = bytearray(len(candidates))
        pending = list(needed)
        while pending:
            found = by_name.pop(pending.pop(), ())
            for i in (found,) if found.__class__ is int else found:  # type: ignore[union-attr]
                if not stays[i]:
                    stays[i] = True
                    spelt = words("".join(lines[rows[i] - 1:rows[i] + more[i]]))
                    fresh = spelt - _KEYWORDS - modules - needed
                    needed |= fresh
                    pending.extend(fresh)
        out: List[Span] = []
        for first, extra, calls, stay in zip(rows, more, candidates.calls, stays):
            if stay:
                continue
            last = first + extra
            if out and out[-1].end_row + 1 == first:  # one span for adjacent statements
                first, calls = out[-1].row, tuple(dict.fromkeys(out.pop().calls + calls))
            out.append(Span(first, 0, last, len(lines[last - 1].rstrip("\r\n")), calls))
        return out

    def state(self, bodies: Callable[[], Iterable[Sequence[ast.stmt]]]) -> Set[str]:
        """The names module-level code may hold as state (``_state_parts``)."""
        targets: Set[str] = set()
        spelt: Set[str] = set()
        modules: Set[str] = set()
        arguments = _also_as(_ARGUMENT_CLASSES, self.imported)
        for body in bodies():
            _state_parts(body, self.lines, arguments, targets, spelt, modules)
        return targets | (spelt - _KEYWORDS - (modules - set(self.imported)))

    def elements(self, bodies: Callable[[], Iterable[Sequence[ast.stmt]]]) -> List[Span]:
        """The blankable insides of the module's tables (``quiet_elements``)."""
        if not self._tables:
            return []
        state = self.state(bodies) if self._table_calls else set()  # only class calls ask
        lines = self.lines
        # the capitalised callables whose result the alias analysis derives from an argument
        arguments = _also_as(_ARGUMENT_CLASSES, self.imported)
        effects = _also_as(_EFFECT_NAMES, self.imported)
        # a comprehension binds names that a backward pass's loss may be (``ScopeOrder``)
        comprehensions = not any("backward" in line or "autograd" in line for line in lines)
        out: List[Span] = []
        for body in bodies():
            for stmt in body:
                if not _is_table(stmt, lines):
                    continue
                literal = _literal_spans(stmt.value, lines)  # type: ignore[attr-defined]
                if literal is not None:
                    out.extend(literal)
                    continue
                for element in _table(stmt) or ():
                    literal = _literal_spans(element, lines)
                    if literal is not None:
                        out.extend(literal)
                    elif _calls_capitalised(element) and element.func.id not in arguments:  # type: ignore[attr-defined]
                        span = _quiet_call(element, lines, self.sites, state, effects,  # type: ignore[arg-type]
                                           comprehensions)
                        if span is not None:
                            out.append(span)
        return out


def _blankable(body: Sequence[ast.stmt], i: int) -> bool:
    """Whether ``quiet_statements`` looks at ``body[i]``: a simple statement alone on its lines,
    and no string (a docstring decides where a fix's import goes)."""
    stmt = body[i]
    return _simple_alone(body, i) and not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))


def _is_table(stmt: ast.stmt, lines: Sequence[str]) -> bool:
    return _table(stmt) is not None and stmt.end_lineno is not None and sum(
        len(line) for line in lines[stmt.lineno - 1:stmt.end_lineno]) >= _TABLE_SIZE


def _column(line: str, offset: int) -> int:
    """The character column of ``ast``'s UTF-8 byte ``offset`` in ``line``."""
    return offset if line.isascii() else len(line.encode("utf-8")[:offset].decode("utf-8", "replace"))


def dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for an attribute chain on a name; None for anything else."""
    if node.__class__ is ast.Name:  # the most frequent case, without the list
        return node.id  # type: ignore[attr-defined]
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


_KEYWORDS = frozenset(keyword.kwlist)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, *_COMPREHENSIONS)
# Callables whose result the alias analysis derives from an argument (by their last name).
_ARGUMENT_CLASSES = frozenset(q.rsplit(".", 1)[-1] for q in catalog.FUNCTION_EFFECTS)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _state_parts(body: Sequence[ast.stmt], lines: Sequence[str], arguments: FrozenSet[str], targets: Set[str],
                 spelt: Set[str], modules: Set[str]) -> None:
    """What ``body``'s module-level code may hold as state, a superset (``quiet_elements``), in
    three parts (``ModuleScan.state`` makes them one): the names it binds, spells and imports
    as modules (``arguments``: see ``_origin_words``). The alias analysis keeps state only for what
    is bound (``alias_state.NameState._bind``): an assignment's targets, and the names the bound value may
    alias (``_origin_words``; a write marks what is kept stale, it keeps nothing new). A store
    into an attribute or an item, or an augmented assignment, counts all it spells; a ``.data``
    counts its owner (TAL001 asks whether it was used before, ``ScopeOrder.used_before``). Of
    what is spelt, keywords and modules (names only ``import`` binds) are left out: a module is
    no tensor, and its attribute's name is spelt too."""
    pending: List[ast.stmt] = list(body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, ast.Import):
            modules.update(a.asname or a.name.split(".")[0] for a in stmt.names)
            continue
        if isinstance(stmt, (ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack: List[ast.AST] = [stmt]
        for block in ("body", "orelse", "finalbody"):
            pending.extend(getattr(stmt, block, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            pending.extend(handler.body)
            targets.add(handler.name or "")
            stack.extend(n for n in (handler.type,) if n is not None)
        for case in getattr(stmt, "cases", None) or []:
            pending.extend(case.body)
            stack.extend(n for n in (case.pattern, case.guard) if n is not None)
        for value in _bound_values(stmt):
            spelt |= _origin_words(value, arguments)
        while stack:  # this statement's own code, not the bodies queued above nor nested scopes
            node = stack.pop()
            cls = node.__class__
            # Names, constants and attributes are most of the nodes (a table's): decided first.
            if cls is ast.Constant:
                continue
            if cls is ast.Name:
                if node.ctx.__class__ is not ast.Load:
                    targets.add(node.id)
                continue
            if cls is ast.Attribute:
                if node.ctx.__class__ is not ast.Load:  # a store into it counts all it spells
                    spelt |= words("".join(lines[node.lineno - 1:node.end_lineno]))
                elif node.attr in catalog.UNTRACKED_ALIAS_ATTRIBUTES:
                    spelt |= _origin_words(node.value, arguments)  # the owner TAL001 asks was used before
                stack.append(node.value)
                continue
            if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                targets.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                targets.add(node.rest)
            elif (isinstance(node, ast.NamedExpr) or isinstance(node, _COMPREHENSIONS) and any(
                    isinstance(n, ast.NamedExpr) for n in ast.walk(node))) and stmt.end_lineno is not None:
                spelt |= words("".join(lines[stmt.lineno - 1:stmt.end_lineno]))  # it binds in this scope
            if isinstance(node, ast.AugAssign) or isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
                spelt |= words("".join(lines[node.lineno - 1:node.end_lineno]))  # type: ignore[attr-defined]
            if isinstance(node, _SCOPE_NODES):
                continue
            if node is not stmt:
                stack.extend(child_nodes(node))  # contexts and operators hold nothing looked at here
                continue
            for name, value in ast.iter_fields(node):
                if name in _BLOCKS:
                    continue
                if isinstance(value, list):
                    stack.extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST):
                    stack.append(value)


def _bound_values(stmt: ast.stmt) -> List[ast.expr]:
    """What ``stmt`` binds a name to (``for``: what it iterates; ``with``: its managers)."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return [stmt.value] if stmt.value is not None else []
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in stmt.items]
    return []


def _origin_words(node: ast.expr, arguments: FrozenSet[str] = _ARGUMENT_CLASSES) -> Set[str]:
    """The names a value may alias, as the alias analysis derives them (``aliases._eval``), a
    superset: a name, an attribute chain, a display's elements, an ``if``-expression's
    branches, a method call's receiver and arguments, a function's positional arguments (a
    project function may return one); nothing from arithmetic, comparisons, constants, lambdas
    or a class's call (other than ``arguments``, whose result the alias analysis derives from an
    argument: the catalogue's ``OrderedDict(d)``, also under another name)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return set().union(*(_origin_words(e, arguments) for e in node.elts))
    if isinstance(node, ast.Dict):
        return set().union(*(_origin_words(v, arguments) for v in node.values))
    if isinstance(node, ast.IfExp):
        return _origin_words(node.body, arguments) | _origin_words(node.orelse, arguments)
    if isinstance(node, ast.BoolOp):
        return set().union(*(_origin_words(v, arguments) for v in node.values))
    if isinstance(node, ast.Starred):
        return _origin_words(node.value, arguments)
    if isinstance(node, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.JoinedStr, ast.Lambda)):
        return set()
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        # the element's, through its loops: the loops' own names are gone once it is made
        element = _origin_words(node.elt, arguments)
        if not element:
            return element
        loops = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        return (element - loops).union(*(_origin_words(g.iter, arguments) for g in node.generators))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id[:1].isupper() and node.func.id not in arguments:
            return set()
        return set().union(*(_origin_words(a, arguments) for a in node.args))
    # what the alias analysis keys is a name or a dotted name (``dotted_name``), which spells its
    # first name wherever it is read
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _calls_capitalised(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id[:1].isupper()


_NEWLINE_END_RE = re.compile(r"(?:\r\n|\r|\n)\Z")
_EMPTY_LINES = frozenset({"\n", "\r\n", "\r", ""})
LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def source_lines(source: str) -> List[str]:
    r"""``LINE_RE.findall(source)`` (each line with its ``\r\n``, ``\r`` or ``\n``), twice as
    fast: ``newline=""`` splits at those three only and keeps them as they are."""
    return io.StringIO(source, newline="").readlines()


def blanked(lines: Sequence[str], units: Iterable[Unit], spans: Iterable[Span] = ()) -> str:
    """The module with every unit's body and every span blanked (a span's characters become
    spaces, a line it covers whole becomes empty, its line breaks stay), rows and columns
    unchanged.
    ``lines``: the physical lines, with their line breaks (``LINE_RE``)."""
    return "".join(_blanked_lines(lines, units, spans)[0])


def collapsed(lines: Sequence[str], units: Iterable[Unit], spans: Iterable[Span] = ()) -> Tuple[str, "RowMap"]:
    """``blanked``, with each run of empty lines that blanking made kept as its first line alone,
    and the map of the rows of that text to the module's (columns unchanged). A generated
    module's quiet statements are hundreds of thousands of emptied lines, each of which LibCST
    would make a node of, with its position (about 600 bytes a line).
    An empty line goes when the line before it is empty too and one of the two was emptied by
    blanking: neither is then inside a string (blanking empties whole statements, and a string's
    lines within a span), so what LibCST makes of the text differs only in how many empty lines a
    run has (leading lines, a block's footer), which no rule reads; a statement has leading lines
    or not as before, and every row a position can point at, a run's first included, is the
    module's row once mapped."""
    out, emptied = _blanked_lines(lines, units, spans)
    count, empty = len(out), _EMPTY_LINES
    # the lines that go: in each run of emptied lines all but its first, its first too after an
    # empty line, and an empty line right after it (a run is a few steps, whatever its length)
    drop = bytearray(count)
    first = emptied.find(1)
    while first != -1:
        end = emptied.find(0, first)
        end = count if end == -1 else end
        drop[first + 1:end] = b"\x01" * (end - first - 1)
        if first and out[first - 1] in empty:
            drop[first] = 1
        if end < count and out[end] in empty:
            drop[end] = 1
        first = emptied.find(1, end)
    parts: List[str] = []
    starts, rows = array("l"), array("l")
    at = kept = 0  # the next line to keep, and how many are kept before it
    gone = drop.find(1)
    while gone != -1:
        back = drop.find(0, gone)
        back = count if back == -1 else back
        parts.append("".join(out[at:gone]))
        kept += gone - at
        if back < count:  # from this row on, the text's rows are the module's, shifted
            starts.append(kept + 1)
            rows.append(back + 1)
        at, gone = back, drop.find(1, back)
    parts.append("".join(out[at:]))
    return "".join(parts), RowMap(starts, rows)


class RowMap:
    """The module's row of each row of a ``collapsed`` text."""

    def __init__(self, starts: "array[int]", rows: "array[int]") -> None:
        self._starts, self._rows = starts, rows  # sorted: where each shift begins, and to which row

    def __bool__(self) -> bool:
        """Whether any row moves."""
        return bool(self._starts)

    def __call__(self, row: int) -> int:
        at = bisect.bisect_right(self._starts, row) - 1
        return row if at < 0 else self._rows[at] + row - self._starts[at]


def _blanked_lines(lines: Sequence[str], units: Iterable[Unit], spans: Iterable[Span]) -> Tuple[List[str], bytearray]:
    """The lines of ``blanked``, and which of them blanking emptied (left with their line break
    alone)."""
    out = list(lines)
    emptied = bytearray(len(out))
    for unit in units:
        for row in range(unit.first, unit.last + 1):
            end = _NEWLINE_END_RE.search(out[row - 1])
            out[row - 1] = ("" if row > unit.first else unit.indent + "pass") + (end.group() if end else "")
            emptied[row - 1] = row > unit.first
    for span in spans:
        for row in range(span.row, span.end_row + 1):
            line = out[row - 1]
            end = _NEWLINE_END_RE.search(line)
            text = line[:end.start()] if end else line
            start = span.column if row == span.row else 0
            stop = span.end_column if row == span.end_row else len(text)
            if start == 0 and stop >= len(text):  # empty, not spaces: less for LibCST to keep
                out[row - 1] = end.group() if end else ""
                emptied[row - 1] = True
            else:
                out[row - 1] = text[:start] + " " * (stop - start) + text[stop:] + (end.group() if end else "")
    return out, emptied
