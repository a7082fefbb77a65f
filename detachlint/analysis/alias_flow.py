"""The alias interpreter's control flow (``aliases.py``): branches join, loops run their body
again with the state at its end, ``try`` joins its handlers, and the conditions a statement runs
under (``exclusive``: an alias made under ``if flag:`` and a write under ``if not flag:`` never meet).
"""

from __future__ import annotations

from typing import Callable, List, Optional, Set, Tuple

import libcst as cst

from .alias_model import State, join_states
from .torchnames import dotted_name
from ..walk import walk


class ControlFlow:
    """Branches, loops and ``try`` (a part of ``AliasAnalysis``: it uses the interpreter's
    ``state``, ``_block``, ``_eval`` and ``_assign``)."""

    def _branch(self, body, start: Optional[State]) -> Optional[State]:
        self.state = self._feasible(start) if start is not None else None
        self._block(body)
        return self.state

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
            kept = {o: stale for o, stale in values.items()
                    if not any(id(o2.statement) in opposed for o2 in o.chain() if o2.statement is not None)}
            out[key] = kept if kept and len(kept) < len(values) else values
        return out

    def _opposed(self, made: Tuple[Tuple[str, bool], ...], guard: Tuple[Tuple[str, bool], ...]) -> bool:
        return any((text, not holds) in guard and not self._rebound(text) for text, holds in made)

    def _if(self, node: cst.If) -> None:
        self._eval(node.test)
        start = self.state
        outer = self._guard
        condition = self._condition(node.test)
        if condition is not None:
            self._guard = outer + (condition,)
        tests = self._tests
        self._tests = tests + ((node.test, True),)
        after_body = self._branch(node.body, start)
        self._tests = tests + ((node.test, False),)
        if condition is not None:
            self._guard = outer + ((condition[0], not condition[1]),)
        self.state = self._feasible(start) if start is not None else None
        if isinstance(node.orelse, cst.If):
            self._statement = node.orelse
            self._note_guard(node.orelse)
            self._if(node.orelse)
        elif isinstance(node.orelse, cst.Else):
            self._block(node.orelse.body)
        self._guard = outer
        self._tests = tests
        self.state = join_states([after_body, self.state])

    def _condition(self, test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
        """``(text, holds)`` of a condition that reads the same wherever it is tested in the scope:
        names and attributes only (``flag``, ``self.training``, ``not x.requires_grad``), no call."""
        holds = True
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, holds = test.expression, not holds
        text = dotted_name(test) if isinstance(test, (cst.Name, cst.Attribute)) else None
        return (text, holds) if text is not None else None

    def exclusive(self, a: object, b: object) -> bool:
        """Whether the statements (or stale reads) ``a`` and ``b`` run under opposite outcomes of
        one condition that nothing in the scope rebinds: no run reaches both."""
        return self._opposed(self._guards.get(id(a), ()), self._guards.get(id(b), ()))

    def bound_in(self, node: cst.CSTNode) -> Set[str]:
        """The names and attribute chains bound inside ``node`` (a loop of this scope)."""
        found = self._bound_in.get(id(node))
        if found is None:
            targets = _BoundNames()
            walk(node, targets)
            found = self._bound_in[id(node)] = targets.bound
        return found

    def _rebound(self, text: str) -> bool:
        """Whether ``text`` (``flag``, ``self.training``) or a name it is read through is bound
        anywhere in the scope, nested functions included (assignments, loop and ``with``
        targets, ``:=``, ``del``, imports, ``global``)."""
        if self._bound is None:
            targets = _BoundNames()
            walk(self.scope, targets)
            self._bound = targets.bound
        parts = text.split(".")
        return any(".".join(parts[:i]) in self._bound for i in range(1, len(parts) + 1))

    def _loop(self, node, enter: Callable[[], None]) -> None:
        """Run a loop body until its entry state is stable (at most twice: the second pass sees
        what the end of one iteration leaves for the start of the next), then its ``else``.
        ``enter`` binds the loop target or evaluates the test at the start of every pass."""
        head = self.state
        loop = Loop()
        self._loops.append(loop)
        try:
            for iteration in range(2):
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
        self._block(node.body)
        after_body = self.state
        ends = []
        if node.orelse is not None:
            self._block(node.orelse.body)
        ends.append(self.state)
        for handler in node.handlers:
            self.state = join_states([start, after_body])
            if handler.name is not None and self.state is not None:
                self._assign(handler.name.name, set(), handler)
            self._block(handler.body)
            ends.append(self.state)
        self.state = join_states(ends)
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

    def _target(self, node: cst.CSTNode) -> None:
        self._names(node.target)  # type: ignore[attr-defined]  # each node hooked below has one

    visit_AssignTarget = visit_AugAssign = visit_AnnAssign = visit_For = visit_CompFor = visit_NamedExpr = visit_Del = _target

    def visit_AsName(self, node: cst.AsName) -> None:
        self._names(node.name)

    def visit_Global(self, node: cst.Global) -> None:
        self.bound.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.bound.update(n.name.value for n in node.names)

    def _names(self, target: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._names(element.value)
        elif isinstance(target, cst.StarredElement):
            self._names(target.value)
        else:
            name = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
            if name is not None:
                self.bound.add(name)
