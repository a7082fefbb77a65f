"""The alias interpreter's control flow (``aliases.py``): branches join, loops run their body
again with the state at its end, ``try`` joins its handlers, and the conditions a statement runs
under (``exclusive``: an alias made under ``if flag:`` and a write under ``if not flag:`` never meet).
"""

from __future__ import annotations

import ast
import functools
from typing import AbstractSet, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from ..knowledge import catalog
from .alias_model import Relation, State, join_states
from .torchnames import dotted_name
from ..walk import walk


class ControlFlow:
    """Branches, loops and ``try`` (a part of ``AliasAnalysis``: it uses the interpreter's
    ``state``, ``_block``, ``_eval`` and ``_assign``)."""

    def _branch(self, body, start: Optional[State], test: cst.BaseExpression) -> Optional[State]:
        self.state = self._narrowed(self._feasible(start), test, True) if start is not None else None
        self._block(body)
        return self.state

    def _narrowed(self, state: State, test: cst.BaseExpression, holds: bool) -> Optional[State]:
        """``state`` less the values of a name that the outcome ``holds`` of an ``isinstance`` test
        rules out: under ``if isinstance(x[i], torch.Tensor):`` the values of ``x`` made by
        ``.numpy()`` are gone (no item of a numeric array is a tensor), under ``if not
        isinstance(x, torch.Tensor):`` those known to be tensors. Where every value is ruled out,
        no run takes this outcome: None, as after a ``return``."""
        out = state
        for atom, truth in atoms(test, holds):
            found = self._instance_test(atom)
            if found is None:
                continue
            key, classes = found
            values = out.get(key)
            if not values:
                continue
            kept = {o: stale for o, stale in values.items() if _passes(_known_class(o), classes) in (None, truth)}
            if not kept:
                return None
            if len(kept) < len(values):
                out = dict(out) if out is state else out
                out[key] = kept
        return out

    def _instance_test(self, atom: cst.BaseExpression) -> Optional[Tuple[str, FrozenSet[str]]]:
        """``(x, classes)`` of ``isinstance(x, T)`` or ``isinstance(x[...], T)`` (an item, at any
        depth) with the classes qualified (``torch.Tensor``, ``numpy.ndarray``); None for any other test."""
        if atom.__class__ is not cst.Call or not isinstance(atom.func, cst.Name) or atom.func.value != "isinstance" \
                or len(atom.args) != 2 or any(a.keyword is not None or a.star for a in atom.args):
            return None
        subject = atom.args[0].value
        while isinstance(subject, cst.Subscript):
            subject = subject.value
        key = dotted_name(subject) if isinstance(subject, (cst.Name, cst.Attribute)) else None
        given = atom.args[1].value
        types = [e.value for e in given.elements] if isinstance(given, cst.Tuple) else [given]
        classes = frozenset(self.names.qualified(t) or "?" for t in types)
        return (key, classes) if key is not None else None

    def _note_guard(self, statement: cst.CSTNode) -> None:
        """Remember the conditions ``statement`` runs under, and index it by each of them."""
        self._guards[id(statement)] = self._guard
        for condition in self._guard:
            self._made_under.setdefault(condition, set()).add(id(statement))

    def _feasible(self, start: State) -> State:
        """``start`` less the values made under the opposite of a condition this branch runs
        under (``h = a`` under ``if img.requires_grad:`` is not what ``h`` holds in a later
        ``if not img.requires_grad:``), where the name keeps another value."""
        opposed: Set[int] = set()  # the statements made under the opposite of a condition here
        for text, holds in self._guard:
            made = self._made_under.get((text, not holds))
            if made and not self._rebound(text):
                opposed |= made
        if not opposed:
            return dict(start)
        out = {}
        for key, values in start.items():
            if len(values) < 2:  # a name keeps its one value: nothing to drop
                out[key] = values
                continue
            kept = {o: stale for o, stale in values.items() if not _made_in(o, opposed)}
            out[key] = kept if kept and len(kept) < len(values) else values
        return out

    def _arm(self, arm: cst.BaseExpression, test: cst.BaseExpression, holds: bool) -> Set:
        """An arm of ``a if test else b``: a name there is an alias made under that outcome of
        ``test``, as in ``if test: y = a`` (``x.clone() if needs_grad else x`` is ``x`` only
        without grad), so it never meets a write under the opposite outcome."""
        origins = self._eval(arm)
        conditions = self._conditions(test, holds)
        if not conditions or not origins or arm.__class__ not in (cst.Name, cst.Attribute):
            return origins
        derived = self._derive(origins, Relation.PLAIN, "alias", arm)
        for origin in derived:
            self._guards[id(origin)] = conditions  # the statement's own guard is its statement's
            for condition in conditions:
                self._made_under.setdefault(condition, set()).add(id(origin))
        return derived

    def _opposed(self, made: Tuple[Tuple[str, bool], ...], guard: Tuple[Tuple[str, bool], ...]) -> bool:
        return any((text, not holds) in guard and not self._rebound(text) for text, holds in made)

    def _if(self, node: cst.If) -> None:
        self._eval(node.test)
        start = self.state
        outer = self._guard
        tests = self._tests
        self._guard = outer + self._conditions(node.test, True)
        self._tests = tests + ((node.test, True),)
        after_body = self._branch(node.body, start, node.test)
        body_guard = self._guard
        self._tests = tests + ((node.test, False),)
        self._guard = outer + self._conditions(node.test, False)
        self.state = self._narrowed(self._feasible(start), node.test, False) if start is not None else None
        if self.state is not None and self._covered(self._guard):
            self.state = None  # every value a validated subject may have took a branch before
        if isinstance(node.orelse, cst.If):
            self._statement = node.orelse
            self._note_guard(node.orelse)
            self._if(node.orelse)
        elif isinstance(node.orelse, cst.Else):
            self._block(node.orelse.body)
        # An early exit (``if not self.training: return x``) leaves the rest of the block to the
        # other outcome: what follows runs under the conditions of the path that goes on.
        if after_body is None and self.state is not None:
            self._tests = tests + ((node.test, False),)  # the ``else`` path's conditions stand
        elif self.state is None and after_body is not None:
            self._guard = body_guard
            self._tests = tests + ((node.test, True),)
        else:
            self._guard = outer
            self._tests = tests
        if after_body is None and node.orelse is None:
            self._note_domain(node)
        self.state = join_states([after_body, self.state])

    def _note_domain(self, node: cst.If) -> None:
        """``if mode not in ("a", "b", None): raise ...`` (or ``return``) as a statement of the
        function's body: after it, ``mode`` (bound nowhere in the scope) is one of those literals."""
        test = node.test
        if not isinstance(self.scope, cst.FunctionDef) or not any(s is node for s in self.scope.body.body) \
                or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
                or not isinstance(test.comparisons[0].operator, cst.NotIn):
            return
        subject = dotted_name(test.left) if isinstance(test.left, (cst.Name, cst.Attribute)) else None
        values = _literal_values(self._constant(test.comparisons[0].comparator))
        if subject is not None and values is not None and not self._rebound(subject):
            self._domains[subject] = values

    def _constant(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """``node``, or the value of the name it is where the function's body binds it once."""
        if isinstance(node, cst.Name) and not self._rebound(node.value):  # unbound, or bound once (``_bound_once``)
            for line in self.scope.body.body:
                for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                    target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
                    if isinstance(target, cst.Name) and target.value == node.value:
                        return small.value
        return node

    def _covered(self, guard: Tuple[Tuple[str, bool], ...]) -> bool:
        """Whether ``guard`` says a validated subject (``_note_domain``) differs from each value it
        may have: no run gets here (the fall-through of ``if m == "a": ... elif m == "b": ...``)."""
        for subject, domain in self._domains.items():
            excluded = [self._compared[text][1] for text, holds in guard
                        if not holds and self._compared.get(text, (None,))[0] == subject]
            if all(any(_same(v, e) for e in excluded) for v in domain):
                return True
        return False

    def _conditions(self, test: cst.BaseExpression, holds: bool) -> Tuple[Tuple[str, bool], ...]:
        """What the outcome ``holds`` of ``test`` says, as ``(text, holds)`` of conditions that read
        the same wherever they are tested in the scope: names and attributes (``flag``,
        ``self.training``), ``x is None``, ``isinstance(x, T)``, ``x == <literal>``, through
        ``not``, ``and`` (holding) and ``or`` (failing); no other call."""
        out = []
        for atom, truth in atoms(test, holds):
            found = _literal(atom)
            if found is not None:
                text, subject, positive = found
                self._subjects[text] = subject
                compared = _compared_value(atom)
                if compared is not _UNKNOWN:
                    self._compared[text] = (subject, compared)
                out.append((text, truth is positive))
        return tuple(out)

    def exclusive(self, a: object, b: object) -> bool:
        """Whether the statements (or stale reads, or origins made in an arm of ``a if c else b``)
        ``a`` and ``b`` run under opposite outcomes of one condition that nothing in the scope
        rebinds: no run reaches both."""
        return self._opposed(self._guards.get(id(a), ()), self._guards.get(id(b), ()))

    def implies(self, made: object, statement: object) -> bool:
        """Whether ``statement`` runs only under a condition ``made`` was made under, one that nothing
        in the scope rebinds (``w = x if flag else y`` and a write under ``if flag:``)."""
        guard = self._guards.get(id(statement), ())
        return any(c in guard and not self._rebound(c[0]) for c in self._guards.get(id(made), ()))

    def conditions_of(self, statement: object) -> Tuple[Tuple[str, bool], ...]:
        """The conditions ``statement`` runs under, as ``(text, holds)`` (``("step == 0", True)``); for
        an origin, those of the arm of ``a if c else b`` that made it (none for other origins)."""
        return self._guards.get(id(statement), ())

    def bound_in(self, node: cst.CSTNode) -> AbstractSet[str]:
        """The names and attribute chains bound inside ``node`` (a loop of this scope)."""
        return self.bindings_in(node).keys()

    def bindings_in(self, node: cst.CSTNode) -> Dict[str, int]:
        """How many times each name and attribute chain is bound inside ``node`` (the scope, a loop)."""
        found = self._bound_in.get(id(node))
        if found is None:
            seen = self._scope_bindings if node is self.scope else None
            if seen is not None:
                found = seen.complete(node)
            else:
                targets = _BoundNames()
                walk(node, targets)
                found = targets.counts
            self._bound_in[id(node)] = found
        return found

    def _rebound(self, text: str) -> bool:
        """Whether ``text`` (``flag``, ``self.training``) or a name it is read through is bound
        anywhere in the scope, nested functions included (assignments, loop and ``with``
        targets, ``:=``, ``del``, imports, ``global``)."""
        found = self._rebound_texts.get(text)
        if found is None:
            if self._bound is None:  # the walk ``bindings_in(self.scope)`` makes (alias rules ask it too)
                self._bound_counts = self.bindings_in(self.scope)  # ``_bound_once`` reads the counts
                self._bound = self._bound_counts.keys()
            parts = self._subjects.get(text, text).split(".")
            found = any(".".join(parts[:i]) in self._bound for i in range(1, len(parts) + 1))
            found = self._rebound_texts[text] = found and not (len(parts) == 1 and self._bound_once(parts[0]))
        return found

    def _bound_once(self, name: str) -> bool:
        """``needs_grad = any(...)`` as a statement of the function's own body, the only binding
        of ``needs_grad`` in the scope, not a parameter: every test of the local reads that value."""
        if not isinstance(self.scope, cst.FunctionDef) or self._bound_counts.get(name) != 1:
            return False
        params = self.scope.params
        if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)) \
                or any(isinstance(p, cst.Param) and p.name.value == name for p in (params.star_arg, params.star_kwarg)):
            return False
        for line in self.scope.body.body:
            for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                    [small.target] if isinstance(small, cst.AnnAssign) and small.value is not None else []
                if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                    return True
        return False

    def _loop(self, node, enter: Callable[[], None]) -> None:
        """Run a loop body until its entry state is stable (at most twice: the second pass sees
        what the end of one iteration leaves for the start of the next), then its ``else``.
        ``enter`` binds the loop target or evaluates the test at the start of every pass."""
        head = self.state
        outer = self._guard  # an early ``continue`` in the body says nothing after the loop
        outer_tests = self._tests
        loop = Loop()
        self._loops.append(loop)
        try:
            for iteration in range(2):
                self._guard, self._tests = outer, outer_tests
                self.state = dict(head) if head is not None else None
                self._statement = node
                enter()
                self._block(node.body)
                new_head = join_states([head, self.state, *loop.continues])
                stable = new_head == head
                head = new_head
                loop.continues = []
                if stable:
                    break
        finally:
            self._loops.pop()
            self._guard, self._tests = outer, outer_tests
        self.state = head
        if node.orelse is not None:
            self._block(node.orelse.body)
        self.state = join_states([self.state, *loop.breaks])

    def _for(self, node: cst.For) -> None:
        elements = self._iterate(node.iter)
        self._loop(node, lambda: self._bind_target(node.target, elements, node.iter))

    def _while(self, node: cst.While) -> None:
        self._loop(node, lambda: self._eval(node.test))

    def _try(self, node) -> None:
        start = self.state
        outer, outer_tests = self._guard, self._tests  # a handler may run from any point of the body
        self._block(node.body)
        after_body = self.state
        ends = []
        if node.orelse is not None:
            self._block(node.orelse.body)
        ends.append(self.state)
        for handler in node.handlers:
            self._guard, self._tests = outer, outer_tests
            self.state = join_states([start, after_body])
            if handler.name is not None and self.state is not None:
                self._assign(handler.name.name, set(), handler)
            self._block(handler.body)
            ends.append(self.state)
        self.state = join_states(ends)
        self._guard, self._tests = outer, outer_tests
        if node.finalbody is not None:
            if self.state is None:
                self.state = join_states([start, after_body])
                self._block(node.finalbody.body)
                self.state = None
            else:
                self._block(node.finalbody.body)


class Loop:
    """The states the ``break`` and ``continue`` statements of the loop being run leave with."""

    def __init__(self) -> None:
        self.breaks: List[State] = []
        self.continues: List[State] = []


class _BoundNames(cst.CSTVisitor):
    """Every name and attribute chain bound in a scope, nested functions included
    (``AliasAnalysis._rebound``)."""

    def __init__(self) -> None:
        self.bound: Set[str] = set()
        self.counts: Dict[str, int] = {}  # how many bindings each name has

    def _target(self, node: cst.CSTNode) -> None:
        self._names(node.target)  # type: ignore[attr-defined]  # each node hooked below has one

    visit_AssignTarget = visit_AugAssign = visit_AnnAssign = visit_For = visit_CompFor = visit_NamedExpr = visit_Del = _target

    def visit_AsName(self, node: cst.AsName) -> None:
        self._names(node.name)

    def visit_Global(self, node: cst.Global) -> None:
        for n in node.names:
            self._add(n.name.value)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for n in node.names:
            self._add(n.name.value)

    def _add(self, name: str) -> None:
        self.bound.add(name)
        self.counts[name] = self.counts.get(name, 0) + 1

    def _names(self, target: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._names(element.value)
        elif isinstance(target, cst.StarredElement):
            self._names(target.value)
        else:
            name = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
            if name is not None:
                self._add(name)


class ScopeBindings(_BoundNames):
    """``_BoundNames`` of a function or module scope, as a visitor taking part in the walk
    ``TensorFacts.scope_kinds`` makes of it (saving a walk of its own): that walk starts at a
    function's body and enters no nested function, class or lambda, so ``complete`` walks those
    parts, and only when the bindings are asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.unentered: List[cst.CSTNode] = []
        self._completed: Optional[Dict[str, int]] = None

    def _unentered(self, node: cst.CSTNode) -> None:
        self.unentered.append(node)

    visit_FunctionDef = visit_ClassDef = visit_Lambda = _unentered

    def complete(self, scope: cst.CSTNode) -> Dict[str, int]:
        """The counts of a walk of the whole ``scope`` (what ``bindings_in`` counts)."""
        if self._completed is not None:  # asked again: the parts are walked once
            return self._completed
        rest = _BoundNames()
        rest.bound, rest.counts = self.bound, self.counts
        parts = list(self.unentered)
        if isinstance(scope, cst.FunctionDef):  # what lies outside its body
            parts += [*scope.decorators, scope.params, scope.returns, getattr(scope, "type_parameters", None)]
        elif not isinstance(scope, cst.Module):
            parts = [scope]  # not a scope the kinds' walk covers: walked whole
            rest.bound, rest.counts = set(), {}
        for part in parts:
            if part is not None:
                walk(part, rest)
        self.unentered = []
        self._completed = rest.counts
        return rest.counts


def _made_in(origin, statements: Set[int]) -> bool:
    """Whether ``origin`` or one it was derived from was made by one of ``statements``."""
    while origin is not None:
        if id(origin) in statements or origin.statement is not None and id(origin.statement) in statements:
            return True
        origin = origin.parent
    return False


_ARRAY_OPS = frozenset({"numpy"})  # ``.numpy()`` (or a helper returning an array): a numeric array
_TENSOR_RELATIONS = frozenset({Relation.DETACH, Relation.DATA})


def _known_class(origin) -> Optional[str]:
    """``"array"`` for a value made by ``.numpy()`` (a numeric array: neither it nor any item or
    view of it is a tensor), ``"tensor"`` for one made by ``.detach()`` or ``.data`` (its items
    and views are tensors too), through plain aliases and views; None where the code does not show."""
    while origin is not None:
        if origin.relation in _TENSOR_RELATIONS:
            return "tensor"
        if origin.relation is Relation.CONVERSION:
            return "array" if origin.op in _ARRAY_OPS else None
        if origin.relation not in (Relation.PLAIN, Relation.VIEW):
            return None
        origin = origin.parent
    return None


def _passes(known: Optional[str], classes: FrozenSet[str]) -> Optional[bool]:
    """Whether a value of the class ``known`` (or an item of it) passes ``isinstance(_, classes)``;
    None where that is not settled (an unknown class, a class named that is neither torch's
    tensor classes nor NumPy's array)."""
    if known is None:
        return None
    if classes <= catalog.TENSOR_TYPES:
        return False if known == "array" else (True if "torch.Tensor" in classes else None)
    if classes == {"numpy.ndarray"} and known == "tensor":
        return False
    return None


def atoms(test: cst.BaseExpression, holds: bool) -> List[Tuple[cst.BaseExpression, bool]]:
    """What an ``if`` test with outcome ``holds`` says of its parts: ``a and b`` holding says both
    hold, ``a or b`` failing says both fail, ``not a`` says the opposite of ``a``."""
    # class identity, not ``isinstance`` (ABCMeta's on LibCST's classes, none subclassed): asked
    # twice for every ``if`` of every scope the alias analysis runs
    cls = test.__class__
    if cls is cst.UnaryOperation and test.operator.__class__ is cst.Not:
        return atoms(test.expression, not holds)
    if cls is cst.BooleanOperation and test.operator.__class__ is (cst.And if holds else cst.Or):
        return atoms(test.left, holds) + atoms(test.right, holds)
    return [(test, holds)]


_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)
_UNKNOWN = object()


def _value(node: cst.BaseExpression) -> object:
    """The Python value of a literal (``None`` too); ``_UNKNOWN`` for anything else."""
    if node.__class__ is cst.Name and node.value == "None":
        return None
    if node.__class__ in _LITERALS:  # none of them subclassed
        return _literal_value(node.value)
    return _UNKNOWN


@functools.lru_cache(maxsize=1024)
def _literal_value(text: str) -> object:
    """``ast.literal_eval`` of a literal's source text (an int, float, str or bytes: immutable, and
    the same for the same text in any tree), asked for each comparison every time an ``if`` is interpreted."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _UNKNOWN


def _literal_values(node: cst.BaseExpression) -> Optional[List[object]]:
    """The values of a tuple, list or set display of literals; None otherwise."""
    if not isinstance(node, (cst.Tuple, cst.List, cst.Set)) or not node.elements:
        return None
    values = [_value(e.value) if isinstance(e, cst.Element) else _UNKNOWN for e in node.elements]
    return None if any(v is _UNKNOWN for v in values) else values


def _compared_value(atom: cst.BaseExpression) -> object:
    """The literal ``x == <literal>`` or ``x is None`` compares with (``_UNKNOWN``: another test)."""
    if not isinstance(atom, cst.Comparison) or len(atom.comparisons) != 1:
        return _UNKNOWN
    op, right = atom.comparisons[0].operator, atom.comparisons[0].comparator
    if isinstance(op, (cst.Is, cst.IsNot)):
        return None if isinstance(right, cst.Name) and right.value == "None" else _UNKNOWN
    return _value(right) if isinstance(op, (cst.Equal, cst.NotEqual)) else _UNKNOWN


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


def _literal(atom: cst.BaseExpression) -> Optional[Tuple[str, str, bool]]:
    """``(text, subject, positive)`` of a test that names no call but ``isinstance``: ``flag``,
    ``self.training``, ``x is None`` (``x is not None`` is its negation), ``isinstance(x, T)``,
    ``mode == "train"`` (``!=``: the negation). ``subject``: the name whose rebinding would change
    it. None for anything else."""
    cls = atom.__class__  # identity, as in ``atoms``
    if cls is cst.Name or cls is cst.Attribute:
        text = dotted_name(atom)
        return (text, text, True) if text is not None and text not in ("True", "False", "None") else None
    if cls is not cst.Comparison and cls is not cst.Call:
        return None
    if cls is cst.Comparison and len(atom.comparisons) == 1:
        subject = dotted_name(atom.left) if isinstance(atom.left, (cst.Name, cst.Attribute)) else None
        op, right = atom.comparisons[0].operator, atom.comparisons[0].comparator
        if subject is None:
            return None
        if isinstance(right, cst.Name) and right.value == "None" and isinstance(op, (cst.Is, cst.IsNot)):
            return (f"{subject} is None", subject, isinstance(op, cst.Is))
        if isinstance(right, _LITERALS) and isinstance(op, (cst.Equal, cst.NotEqual)):
            return (f"{subject} == {right.value}", subject, isinstance(op, cst.Equal))
        return None
    if isinstance(atom, cst.Call) and isinstance(atom.func, cst.Name) and atom.func.value == "isinstance" \
            and len(atom.args) == 2 and all(a.keyword is None and not a.star for a in atom.args):
        subject = dotted_name(atom.args[0].value)
        kinds = [dotted_name(e.value) for e in atom.args[1].value.elements] \
            if isinstance(atom.args[1].value, cst.Tuple) else [dotted_name(atom.args[1].value)]
        if subject is None or None in kinds:
            return None
        return (f"isinstance({subject}, {'|'.join(sorted(kinds))})", subject, True)
    return None
