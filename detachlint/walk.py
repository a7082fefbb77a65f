"""A fast, read-only traversal of a LibCST tree, event for event what ``node.visit(visitor)`` does.

LibCST's ``CSTNode.visit`` serves transformers as well as visitors, so even a read-only visit
rebuilds and re-validates every node, whitespace included; on real code that costs several times
the parse itself. This walker reads the children in the very order LibCST visits them (read once
per node class from LibCST's private API: ``cstcompat.visit_order``), calls the same hooks in the
same order (``visit_X``, ``visit_X_attr``, ``leave_X_attr``, ``leave_X``), and rebuilds nothing.
Where that order cannot be read for a class, LibCST's own ``node.visit`` walks its nodes; where
the walker's events on ``cstcompat.SAMPLE`` are not LibCST's (checked once per process), it walks
everything (``_ViaLibcst``).

It also skips *trivia* (whitespace, comments, parentheses, commas, operators) unless a
participant asks for one of those node types: no analysis or rule looks at them, and they are
most of the nodes. ``tests/test_walk.py`` proves the event sequence equal to LibCST's, and
``tests/test_cstcompat.py`` the findings equal where LibCST's private API fails.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Type, Union

import libcst as cst
from libcst import CSTNode

from . import cstcompat

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

_TRIVIA_FIELDS: Dict[type, FrozenSet[str]] = {}


def trivia_fields(cls: Type[CSTNode]) -> FrozenSet[str]:
    """Fields whose declared type admits only trivia nodes."""
    fields = _TRIVIA_FIELDS.get(cls)
    if fields is None:
        # ``TRIVIA`` holds the trivia bases and their subclasses: a set look-up, not the ABC
        # subclass checks (about 8 ms of what every worker process pays once)
        fields = _TRIVIA_FIELDS[cls] = frozenset(
            name for name, nodes in (cstcompat.field_classes(cls) or {}).items() if all(c in TRIVIA for c in nodes))
    return fields


_CHILD_FIELDS: Dict[type, Optional[Tuple[str, ...]]] = {}


def _child_fields(cls: Type[CSTNode]) -> Optional[Tuple[str, ...]]:
    """The child fields of ``cls`` in LibCST's order, None where LibCST's property must say."""
    try:
        return _CHILD_FIELDS[cls]
    except KeyError:
        pass
    order = cstcompat.visit_order(cls) if _agrees(cls in TRIVIA) else None
    found = _CHILD_FIELDS[cls] = order[0] if order is not None else None
    return found


def children(node: CSTNode) -> List[CSTNode]:
    """``node.children`` (all direct children, trivia included, in source order), without the
    node rebuild that LibCST's property costs."""
    fields = _child_fields(node.__class__)
    if fields is None:
        return list(node.children)
    out: List[CSTNode] = []
    for name in fields:
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

_Plan = Tuple[Tuple[Callable, ...], Tuple[Callable, ...],
              Tuple[Union[str, Tuple[str, Tuple[Callable, ...], bool]], ...], bool, bool]
_UNHOOKED_PLANS: Dict[Tuple, Dict[type, _Plan]] = {}  # participants' classes -> plans with no hook
_INERT: Dict[Tuple, Set[type]] = {}  # participants' classes -> classes not visited (trivia, no node, inert)


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
        self._libcst_visitor: Optional[_ViaLibcst] = None
        self._visit: Optional[Callable[[CSTNode], None]] = None  # the fast walk's, while it runs
        self._types = tuple(_type_key(type(p)) for p in self.participants)
        # Participants with instance-level hooks (``__getattr__``, attributes) are inspected per
        # instance; the usual classes once per process.
        self._per_instance = any(getattr(t, "__getattr__", None) is not None or any(
            k.startswith(("visit_", "leave_")) for k in getattr(p, "__dict__", ()))
            for p, t in ((p, type(p)) for p in self.participants))
        self.skip: FrozenSet[type] = TRIVIA if skip_trivia and not self._hooks_trivia() else frozenset()
        # Nodes not visited at all: trivia, and the classes whose visit nobody could observe (no
        # hook, nothing below them walked: a name, a number, a pruned subtree nobody hooks).
        # ``None`` and the other field values that are no node (``MaybeSentinel``) likewise.
        if self._per_instance:
            self._skipped: Set[type] = {*self.skip, type(None), cst.MaybeSentinel}
        else:
            key = (self._types, bool(self.skip), self.prune)
            self._plans.update(_UNHOOKED_PLANS.get(key, {}))
            # one set for every walker of these participants' classes (no copy of the trivia per
            # walker): what is inert for one is inert for all
            skipped = _INERT.get(key)
            if skipped is None:
                skipped = _INERT[key] = {*self.skip, type(None), cst.MaybeSentinel}
            self._skipped = skipped

    def _hooks_trivia(self) -> bool:
        key = (self._types, "trivia")
        found = None if self._per_instance else _HOOK_CACHE.get(key)
        if found is None:
            found = any(attr.startswith(("visit_", "leave_")) and attr.split("_")[1] in TRIVIA_NAMES
                        and _hook(p, attr) is not None for p in self.participants for attr in dir(p))
            if not self._per_instance:
                _HOOK_CACHE[key] = found
        return bool(found)

    def _plan(self, cls: type) -> Optional[_Plan]:
        """None where LibCST's order of ``cls``'s children is unknown (``node.visit`` then)."""
        # Which participant hooks what is a property of the participants' classes: worked out
        # once per process (names and indexes), then bound to this walker's instances.
        key = (self._types, bool(self.skip), self.prune, cls)
        shape = None if self._per_instance else _PLAN_CACHE.get(key)
        if shape is None:
            order = cstcompat.visit_order(cls)
            if order is None:
                return None
            shape = self._shape(cls, *order)
            if not self._per_instance:
                _PLAN_CACHE[key] = shape
        ps = self.participants
        visits, leaves, steps, field_hooked, descend, unhooked, inert = shape
        if field_hooked:
            steps = tuple(s if s.__class__ is str else (s[0], tuple(getattr(ps[i], n) for i, n in s[1]), s[2])
                          for s in steps)
        plan = (tuple(getattr(ps[i], n) for i, n in visits) if visits else (),
                tuple(getattr(ps[i], n) for i, n in leaves) if leaves else (), steps, descend, not field_hooked)
        self._plans[cls] = plan
        if unhooked:
            # no participant hooks the class: the next walker with these participants' classes
            # starts with its plan, nothing to bind
            if inert:
                self._skipped.add(cls)
            if not self._per_instance:
                _UNHOOKED_PLANS.setdefault(key[:3], {})[cls] = plan
        return plan

    def _shape(self, cls: type, order: Tuple[str, ...], conditional: FrozenSet[str]):
        def hooks(name: str) -> Tuple[Tuple[int, str], ...]:
            found = [(i, name) for i, p in enumerate(self.participants) if _hook(p, name) is not None]
            if name.startswith("leave_"):
                found.reverse()
            return tuple(found)

        name = cls.__name__
        skip_fields = trivia_fields(cls) if self.skip else frozenset()
        # The fields as steps, in order: a field's name where it is walked, (field, hooks, whether
        # they fire only where the field is set) for its ``visit_X_field``/``leave_X_field``
        # hooks. A field neither walked nor hooked (trivia: whitespace, parentheses) is no step.
        # Hooks are (participant's index, method name) here, bound per walker by ``_plan``.
        steps: List[Union[str, Tuple[str, Tuple[Tuple[int, str], ...], bool]]] = []
        field_hooked = walked = False
        for field in order:
            before, after = hooks(f"visit_{name}_{field}"), hooks(f"leave_{name}_{field}")
            cond = field in conditional
            if before:
                steps.append((field, before, cond))
            if field not in skip_fields:
                steps.append(field)
                walked = True
            if after:
                steps.append((field, after, cond))
            field_hooked = field_hooked or bool(before or after)
        visits, leaves = hooks("visit_" + name), hooks("leave_" + name)
        descend = not (self.prune and issubclass(cls, self.prune))
        unhooked = not visits and not leaves and not field_hooked
        return visits, leaves, tuple(steps), field_hooked, descend, unhooked, not descend or not walked

    def walk(self, root: CSTNode) -> None:
        if _agrees(not self.skip):
            self._walk_fast(root)
        else:
            root.visit(self._via_libcst())

    def _via_libcst(self) -> "_ViaLibcst":
        if self._libcst_visitor is None:
            self._libcst_visitor = _ViaLibcst(self)
        return self._libcst_visitor

    def _walk_fast(self, root: CSTNode) -> None:
        plans = self._plans
        skip = self._skipped
        parents = self.parents
        push, pop = parents.append, parents.pop
        honour = self.honour_false
        make_plan = self._plan

        def visit(node: CSTNode) -> None:
            plan = plans.get(node.__class__)
            if plan is None:
                if not issubclass(node.__class__, CSTNode):  # a field's MaybeSentinel, say
                    skip.add(node.__class__)
                    return
                plan = make_plan(node.__class__)
                if plan is None:  # LibCST's order unknown for this class: LibCST walks the node
                    node.visit(self._via_libcst())
                    return
            visits, leaves, steps, descend, plain = plan
            for method in visits:
                if method(node) is False and honour:
                    descend = False
            push(node)
            if descend:
                for step in steps:
                    # ``plain``: no field hooks (most plans), every step a field name, no class test
                    if not plain and step.__class__ is not str:  # a field's hooks
                        field, methods, conditional = step
                        if not (conditional and getattr(node, field) is None):
                            for method in methods:
                                method(node)
                        continue
                    child = getattr(node, step)
                    if child.__class__ is tuple or child.__class__ is list:
                        for c in child:
                            if c.__class__ not in skip:
                                visit(c)
                    elif child.__class__ not in skip:  # ``skip`` holds NoneType and what is no node
                        visit(child)
            pop()
            for method in leaves:
                method(node)

        outer, self._visit = self._visit, visit
        try:
            visit(root)
        finally:
            # ``visit`` holds itself through its closure: a cycle through the participants to the
            # tree, which would live on until the cyclic GC (the engine pauses it while a tree lives)
            visit = None  # type: ignore[assignment]
            self._visit = outer


class _ViaLibcst(cst.CSTVisitor):
    """A walker's events through LibCST's public visitor API (``node.visit``): the same hooks in
    the same order, trivia skipped and subtrees pruned alike, at LibCST's cost. For where the fast
    walk cannot know LibCST's order."""

    def __init__(self, walker: Walker) -> None:
        super().__init__()
        self.walker = walker
        self.hooks: Dict[str, Tuple[Callable, ...]] = {}

    def _hooks(self, name: str) -> Tuple[Callable, ...]:
        found = self.hooks.get(name)
        if found is None:
            found = tuple(m for m in (_hook(p, name) for p in self.walker.participants) if m is not None)
            if name.startswith("leave_"):
                found = found[::-1]
            self.hooks[name] = found
        return found

    def on_visit(self, node: CSTNode) -> bool:
        walker = self.walker
        if node.__class__ in walker.skip:
            return False
        descend = not (walker.prune and isinstance(node, walker.prune))
        for method in self._hooks("visit_" + node.__class__.__name__):
            if method(node) is False and walker.honour_false:
                descend = False
        walker.parents.append(node)
        return descend

    def on_leave(self, original_node: CSTNode) -> None:
        if original_node.__class__ in self.walker.skip:
            return
        self.walker.parents.pop()
        for method in self._hooks("leave_" + original_node.__class__.__name__):
            method(original_node)

    def on_visit_attribute(self, node: CSTNode, attribute: str) -> None:
        for method in self._hooks(f"visit_{node.__class__.__name__}_{attribute}"):
            method(node)

    def on_leave_attribute(self, original_node: CSTNode, attribute: str) -> None:
        for method in self._hooks(f"leave_{original_node.__class__.__name__}_{attribute}"):
            method(original_node)


def _agrees(trivia: bool) -> bool:
    """Whether the fast walk fires LibCST's events, ``trivia`` included or skipped (each checked
    on first use, once per process)."""
    if trivia:
        return cstcompat.walker_agrees(_walk_over_trivia)
    return cstcompat.walker_agrees(_walk_skipping_trivia, TRIVIA)


def _walk_over_trivia(module: cst.Module, recorder: object) -> None:
    Walker([recorder], skip_trivia=False)._walk_fast(module)


def _walk_skipping_trivia(module: cst.Module, recorder: object) -> None:
    Walker([recorder])._walk_fast(module)


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
    key = (id(visitor), prune)
    walker = _WALKING.get(key)
    if walker is not None:  # a visitor walking a part of the tree from its own hook: its walker again
        if walker._visit is not None:  # inside its fast walk: that walk's own step, no new set-up
            walker._visit(root)
        else:
            walker.walk(root)
        return
    cls = type(visitor)
    generic = all(getattr(cls, hook) is getattr(cst.CSTVisitor, hook)
                  for hook in ("on_visit", "on_leave", "on_visit_attribute", "on_leave_attribute"))
    if not generic:
        root.visit(visitor)
        return
    _WALKING[key] = walker = Walker([visitor], honour_false=True, prune=prune)
    try:
        walker.walk(root)
    finally:
        del _WALKING[key]


# The walkers of the ``walk`` calls under way, by visitor: a visitor that walks its node's parts
# itself (``walk(node.value, self)``) reuses its walker's bound plans instead of making another
# per call. Only while the outer walk runs, so that no walker outlives its visitor in a cycle.
_WALKING: Dict[Tuple[int, Tuple[type, ...]], Walker] = {}
