"""A fast, read-only traversal of a LibCST tree, event for event what ``node.visit(visitor)`` does.

LibCST's ``CSTNode.visit`` serves transformers as well as visitors, so even a read-only visit
rebuilds and re-validates every node (``_visit_and_replace_children``), whitespace included; on
real code that costs several times the parse itself. This walker reads the children in the very
order LibCST visits them (taken once per node class from LibCST's own
``_visit_and_replace_children``), calls the same hooks in the same order (``visit_X``,
``visit_X_attr``, ``leave_X_attr``, ``leave_X``), and rebuilds nothing.

It also skips *trivia* (whitespace, comments, parentheses, commas, operators) unless a
participant asks for one of those node types: no analysis or rule looks at them, and they are
most of the nodes. ``tests/test_walk.py`` proves the event sequence equal to LibCST's.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import typing
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Type

import libcst as cst
from libcst._nodes.base import CSTNode

# Node classes that hold no expression or statement below them: what the walker may skip.
_TRIVIA_BASES: Tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Comment,
    cst.Newline, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon,
    cst.AssignEqual, cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp,
    cst.BaseAugOp, cst.Asynchronous,
)


def _subclasses(base: type) -> List[type]:
    out, stack = [], [base]
    while stack:
        cls = stack.pop()
        out.append(cls)
        stack.extend(cls.__subclasses__())
    return out


TRIVIA: FrozenSet[type] = frozenset(c for base in _TRIVIA_BASES for c in _subclasses(base))
TRIVIA_NAMES: FrozenSet[str] = frozenset(c.__name__ for c in TRIVIA)

_ORDER: Dict[type, Tuple[str, ...]] = {}
# Fields LibCST visits only when they are not None (``visit_sequence(...) if x is not None else
# None``): no attribute hooks fire for them when they are None.
_WHEN_PRESENT: Dict[type, FrozenSet[str]] = {}


def field_order(cls: Type[CSTNode]) -> Tuple[str, ...]:
    """The child fields of ``cls`` in the order LibCST visits them."""
    order = _ORDER.get(cls)
    if order is None:
        method = getattr(cls, "_visit_and_replace_children")
        names: List[str] = []
        try:
            tree = ast.parse(textwrap.dedent(_source_of(method)))
        except (OSError, TypeError, SyntaxError):  # pragma: no cover - source unavailable
            tree = None
        present = set()
        if tree is not None:
            nodes = list(ast.walk(tree))  # walked once, read twice
            for n in nodes:
                if isinstance(n, ast.IfExp) and isinstance(n.body, ast.Call) and len(n.body.args) >= 2 \
                        and isinstance(n.body.args[1], ast.Constant):
                    present.add(n.body.args[1].value)
            calls = [n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id.startswith("visit_") and len(n.args) >= 2
                     and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)]
            for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
                if call.args[1].value not in names:
                    names.append(call.args[1].value)
        _WHEN_PRESENT[cls] = frozenset(present)
        order = _ORDER[cls] = tuple(names)
    return order


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


def when_present(cls: Type[CSTNode]) -> FrozenSet[str]:
    field_order(cls)
    return _WHEN_PRESENT[cls]


_TRIVIA_FIELDS: Dict[type, FrozenSet[str]] = {}


def _classes_in(hint: object) -> List[type]:
    if isinstance(hint, type):
        return [hint]
    out: List[type] = []
    for arg in typing.get_args(hint):
        out.extend(_classes_in(arg))
    return out


def trivia_fields(cls: Type[CSTNode]) -> FrozenSet[str]:
    """Fields whose declared type admits only trivia nodes."""
    fields = _TRIVIA_FIELDS.get(cls)
    if fields is None:
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # pragma: no cover - unresolvable annotations: skip nothing
            hints = {}
        out = set()
        for name in field_order(cls):
            nodes = [c for c in _classes_in(hints.get(name)) if isinstance(c, type) and issubclass(c, CSTNode)]
            # ``TRIVIA`` holds the trivia bases and their subclasses: a set look-up, not the ABC
            # subclass checks (about 8 ms of what every worker process pays once)
            if nodes and all(c in TRIVIA for c in nodes):
                out.add(name)
        fields = _TRIVIA_FIELDS[cls] = frozenset(out)
    return fields


def children(node: CSTNode) -> List[CSTNode]:
    """``node.children`` (all direct children, trivia included, in source order), without the
    node rebuild that LibCST's property costs."""
    out: List[CSTNode] = []
    for name in field_order(type(node)):
        value = getattr(node, name)
        if isinstance(value, CSTNode):
            out.append(value)
        elif isinstance(value, (tuple, list)):
            out.extend(value)
    return out


def significant_children(node: CSTNode) -> List[CSTNode]:
    """The direct children that are not trivia, in source order."""
    return [c for c in children(node) if type(c) not in TRIVIA]


def _hook(participant: object, name: str) -> Optional[Callable]:
    """The participant's method ``name``, unless it is CSTVisitor's empty default."""
    method = getattr(participant, name, None)
    if method is None:
        return None
    default = getattr(cst.CSTVisitor, name, None)
    if default is not None and getattr(type(participant), name, None) is default:
        return None
    return method


def _type_key(cls: type) -> object:
    """How a participant's class keys the caches: the class itself, or for a class statement run
    inside a function (a new class object per call, same methods) its name, so that the caches
    neither miss every time nor keep every such class alive."""
    return (cls.__module__, cls.__qualname__) if "<locals>" in cls.__qualname__ else cls


_HOOK_CACHE: Dict[Tuple, object] = {}
_PLAN_CACHE: Dict[Tuple, Tuple] = {}
_IS_NODE: Dict[type, bool] = {}

_Plan = Tuple[Tuple[Callable, ...], Tuple[Callable, ...],
              Tuple[Tuple[str, Tuple[Callable, ...], Tuple[Callable, ...], bool, bool], ...], bool]
_UNHOOKED_PLANS: Dict[Tuple, Dict[type, _Plan]] = {}  # participants' classes -> plans with no hook
_INERT: Dict[Tuple, Set[type]] = {}  # participants' classes -> node classes whose visit does nothing


class Walker:
    """Walk a tree calling the participants' ``visit_X``/``leave_X``/``visit_X_attr``/
    ``leave_X_attr`` methods, participants in order on the way in and in reverse on the way out
    (the engine's convention), while ``parents`` holds the nodes enclosing the current one.

    ``honour_false``: a ``visit_X`` returning False skips the node's children, as in
    ``CSTVisitor``. The engine's batched traversal ignores return values (always descends).
    """

    def __init__(self, participants: Sequence[object], parents: Optional[List[CSTNode]] = None,
                 honour_false: bool = False, skip_trivia: bool = True, prune: Tuple[type, ...] = ()) -> None:
        self.participants = list(participants)
        self.prune = prune  # node types visited without their children (a collector's shortcut)
        self.parents = parents if parents is not None else []
        self.honour_false = honour_false
        self._plans: Dict[type, _Plan] = {}
        self._types = tuple(_type_key(type(p)) for p in self.participants)
        # Participants with instance-level hooks (``__getattr__``, attributes) are inspected per
        # instance; the usual classes once per process.
        self._per_instance = any(getattr(t, "__getattr__", None) is not None or any(
            k.startswith(("visit_", "leave_")) for k in getattr(p, "__dict__", ()))
            for p, t in ((p, type(p)) for p in self.participants))
        self.skip: FrozenSet[type] = TRIVIA if skip_trivia and not self._hooks_trivia() else frozenset()
        # Nodes not visited at all: trivia, and the classes whose visit nobody could observe (no
        # hook, nothing below them walked: a name, a number, a pruned subtree nobody hooks).
        self._skipped: Set[type] = set(self.skip)
        if not self._per_instance:
            key = (self._types, bool(self.skip), self.prune)
            self._plans.update(_UNHOOKED_PLANS.get(key, {}))
            self._skipped.update(_INERT.get(key, ()))

    def _hooks_trivia(self) -> bool:
        key = (self._types, "trivia")
        found = None if self._per_instance else _HOOK_CACHE.get(key)
        if found is None:
            found = any(attr.startswith(("visit_", "leave_")) and attr.split("_")[1] in TRIVIA_NAMES
                        and _hook(p, attr) is not None for p in self.participants for attr in dir(p))
            if not self._per_instance:
                _HOOK_CACHE[key] = found
        return bool(found)

    def _plan(self, cls: type) -> _Plan:
        # Which participant hooks what is a property of the participants' classes: worked out
        # once per process (names and indexes), then bound to this walker's instances.
        key = (self._types, bool(self.skip), self.prune, cls)
        shape = None if self._per_instance else _PLAN_CACHE.get(key)
        if shape is None:
            shape = self._shape(cls)
            if not self._per_instance:
                _PLAN_CACHE[key] = shape
        ps = self.participants

        def bind(hooks: Tuple[Tuple[int, str], ...]) -> Tuple[Callable, ...]:
            return tuple(getattr(ps[i], n) for i, n in hooks) if hooks else ()

        visits, leaves, fields = shape
        plan = (bind(visits), bind(leaves),
                tuple((f, bind(before), bind(after), walk_it, cond) for f, before, after, walk_it, cond in fields),
                not (self.prune and issubclass(cls, self.prune)))
        self._plans[cls] = plan
        if not visits and not leaves and not any(f[1] or f[2] for f in fields):
            # no participant hooks the class: the next walker with these participants' classes
            # starts with its plan, nothing to bind
            if not plan[3] or not any(f[3] for f in fields):
                self._skipped.add(cls)
                if not self._per_instance:
                    _INERT.setdefault(key[:3], set()).add(cls)
            if not self._per_instance:
                _UNHOOKED_PLANS.setdefault(key[:3], {})[cls] = plan
        return plan

    def _shape(self, cls: type):
        def hooks(name: str) -> Tuple[Tuple[int, str], ...]:
            found = [(i, name) for i, p in enumerate(self.participants) if _hook(p, name) is not None]
            if name.startswith("leave_"):
                found.reverse()
            return tuple(found)

        name = cls.__name__
        skip_fields = trivia_fields(cls) if self.skip else frozenset()
        conditional = when_present(cls)
        fields = []
        for field in field_order(cls):
            fields.append((field, hooks(f"visit_{name}_{field}"), hooks(f"leave_{name}_{field}"),
                           field not in skip_fields, field in conditional))
        return hooks("visit_" + name), hooks("leave_" + name), tuple(fields)

    def walk(self, root: CSTNode) -> None:
        plans = self._plans
        skip = self._skipped
        parents = self.parents
        push, pop = parents.append, parents.pop
        honour = self.honour_false
        make_plan = self._plan
        is_node = _IS_NODE

        def visit(node: CSTNode) -> None:
            plan = plans.get(node.__class__)
            if plan is None:
                plan = make_plan(node.__class__)
            visits, leaves, fields, descend = plan
            for method in visits:
                if method(node) is False and honour:
                    descend = False
            push(node)
            if descend:
                for field, before, after, walk_it, conditional in fields:
                    if conditional and getattr(node, field) is None:
                        continue
                    for method in before:
                        method(node)
                    if walk_it:
                        child = getattr(node, field)
                        if child.__class__ is tuple or child.__class__ is list:
                            for c in child:
                                if c.__class__ not in skip:
                                    visit(c)
                        elif child is not None and child.__class__ not in skip:
                            kind = child.__class__
                            node_class = is_node.get(kind)
                            if node_class is None:
                                node_class = is_node[kind] = issubclass(kind, CSTNode)  # not MaybeSentinel
                            if node_class:
                                visit(child)
                    for method in after:
                        method(node)
            pop()
            for method in leaves:
                method(node)

        try:
            visit(root)
        finally:
            # ``visit`` holds itself through its closure: a cycle through the participants to the
            # tree, which would live on until the cyclic GC (the engine pauses it while a tree lives)
            visit = None  # type: ignore[assignment]


# For a visitor that only looks at statements and reads what it needs from the statement's own
# fields (imports, assignments, definitions): everything below a statement's block is pruned.
STATEMENTS_ONLY: Tuple[type, ...] = (
    cst.BaseExpression, cst.BaseSmallStatement, cst.Parameters, cst.Decorator, cst.Annotation, cst.Arg,
    cst.WithItem, cst.AsName, cst.MatchPattern, *((cst.TypeParameters,) if hasattr(cst, "TypeParameters") else ()),
)


def walk(root: CSTNode, visitor: cst.CSTVisitor, prune: Tuple[type, ...] = ()) -> None:
    """``root.visit(visitor)`` for a read-only ``CSTVisitor``, fast. Visitors that override the
    generic ``on_visit``/``on_leave`` hooks are handed to LibCST unchanged. ``prune``: node types
    whose children the visitor does not need (for example ``cst.BaseExpression`` for a visitor
    that only looks at statements)."""
    cls = type(visitor)
    generic = all(getattr(cls, hook) is getattr(cst.CSTVisitor, hook)
                  for hook in ("on_visit", "on_leave", "on_visit_attribute", "on_leave_attribute"))
    if not generic:
        root.visit(visitor)
        return
    Walker([visitor], honour_false=True, prune=prune).walk(root)
