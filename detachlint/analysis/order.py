"""Statement order within one function (or the module body): what runs before and after a node.

Built lazily, once per scope, only for scopes where a rule needs it (a finding's severity).
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

from ..knowledge import catalog
from .base import Analysis, AnalysisContext
from .torchnames import TorchNames, dotted_name
from ..walk import significant_children

_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class ScopeOrder(Analysis):
    per_scope = True
    requires = (TorchNames,)

    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> "ScopeOrder":
        return cls(scope if scope is not None else ctx.module, ctx.get(TorchNames))

    def __init__(self, scope: cst.CSTNode, names: TorchNames) -> None:
        self.index: Dict[int, int] = {}
        self.backward_calls: List[Tuple[int, Optional[str], cst.Call]] = []
        self.assignments: Dict[str, List[int]] = {}
        self.uses: Dict[str, List[int]] = {}
        self._branches: List[Tuple[cst.CSTNode, cst.CSTNode]] = []  # an ``if``'s body and its ``else``/``elif``
        self._names = names
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        self._walk(body)

    def _walk(self, root: cst.CSTNode) -> None:
        stack: List[cst.CSTNode] = [root]
        while stack:
            node = stack.pop()
            i = len(self.index)
            self.index[id(node)] = i
            self._record(node, i)
            # whitespace, brackets and operators hold nothing recorded here (and a module of
            # blanked statements is mostly empty lines)
            children = [c for c in significant_children(node) if not isinstance(c, _NESTED_SCOPES)]
            stack.extend(reversed(children))

    def _record(self, node: cst.CSTNode, i: int) -> None:
        if isinstance(node, cst.If) and node.orelse is not None:
            self._branches.append((node.body, node.orelse))
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in catalog.BACKWARD_METHODS:
                self.backward_calls.append((i, _loss_of(node, func), node))
            elif self._names.is_torch(func, "autograd.backward", "autograd.grad") and node.args:
                self.backward_calls.append((i, dotted_name(node.args[0].value), node))
        elif isinstance(node, cst.AssignTarget):
            self._assigned(node.target, i)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
            self._assigned(node.target, i)
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._assigned(node.target, i)
        elif isinstance(node, (cst.Name, cst.Attribute)):
            name = dotted_name(node)
            if name is not None:
                self.uses.setdefault(name, []).append(i)

    def _assigned(self, target: cst.BaseExpression, i: int) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._assigned(el.value, i)
            return
        if isinstance(target, cst.StarredElement):
            self._assigned(target.value, i)
            return
        name = dotted_name(target)
        if name is not None:
            self.assignments.setdefault(name, []).append(i)

    def _apart(self, a: int, b: int) -> bool:
        """Whether positions ``a`` and ``b`` lie in the two arms of one ``if``: no pass runs both.
        (Preorder positions: an arm's nodes are the positions from its first to its last.)"""
        for body, orelse in self._branches:
            start, middle = self.index.get(id(body), -1), self.index.get(id(orelse), -1)
            if start < 0 or middle < 0 or not (start <= min(a, b) < middle <= max(a, b)):
                continue
            if max(a, b) <= self._last(orelse):
                return True
        return False

    def _last(self, node: cst.CSTNode) -> int:
        """The largest position within ``node``'s subtree (asked only for a pending backward)."""
        last, stack = self.index.get(id(node), -1), [node]
        while stack:
            for child in significant_children(stack.pop()):
                if id(child) in self.index:
                    last = max(last, self.index[id(child)])
                    stack.append(child)
        return last

    def position(self, node: cst.CSTNode) -> int:
        return self.index.get(id(node), -1)

    def _unbroken_backwards(self, node: cst.CSTNode) -> Iterator[Tuple[Optional[str], cst.Call]]:
        """The later backward calls (with their loss's name) whose loss is not computed between
        ``node`` and them: the graph they run was built before ``node`` ran."""
        here = self.position(node)
        if here < 0:
            return
        for at, receiver, call in self.backward_calls:
            if at <= here:
                continue
            if receiver is not None:
                assigned = self.assignments.get(receiver.split(".")[0], []) + self.assignments.get(receiver, [])
                if any(here < a < at for a in assigned):
                    continue
            if self._apart(here, at):
                continue  # ``if fp16: ... write ...`` and ``elif train: loss.backward()``: one pass runs one
            yield receiver, call

    def pending_backward(self, node: cst.CSTNode) -> Optional[cst.Call]:
        """A later ``L.backward()`` whose ``L`` was computed before ``node`` and not recomputed in
        between: the graph behind it is pending while ``node`` runs. Computed before includes a
        value from outside the scope (a parameter, an attribute, a global: ``built_outside``)."""
        return next((call for receiver, call in self._unbroken_backwards(node) if receiver is not None), None)

    def backward_after(self, node: cst.CSTNode) -> Optional[cst.Call]:
        """A later backward whose loss is not computed between ``node`` and it, its loss's name
        unknown included: its graph may have been built before ``node`` ran."""
        return next((call for _, call in self._unbroken_backwards(node)), None)

    def built_outside(self, call: cst.Call) -> Optional[str]:
        """The loss of the backward ``call`` when nothing in this scope assigns it before the call
        (it came from outside: a parameter, an attribute, a global), else None."""
        at = self.position(call)
        for _, receiver, backward in self.backward_calls:
            if backward is call and receiver is not None:
                assigned = self.assignments.get(receiver.split(".")[0], []) + self.assignments.get(receiver, [])
                return receiver if not any(a < at for a in assigned) else None
        return None

    def used_before(self, name: str, node: cst.CSTNode) -> bool:
        here = self.position(node)
        return any(i < here for i in self.uses.get(name, ()))

    def calls_backward(self) -> bool:
        return bool(self.backward_calls)


def _loss_of(call: cst.Call, func: cst.Attribute) -> Optional[str]:
    """The name of the value whose graph a backward call runs: ``loss.backward()``;
    ``scaler.scale(loss).backward()``; ``accelerator.backward(loss)``, ``fabric.backward(loss)``,
    ``engine.backward(loss)``, ``self.manual_backward(loss)``: a wrapper handed the loss."""
    receiver = func.value
    if (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "scale" and receiver.args):
        return dotted_name(receiver.args[0].value)
    first = call.args[0] if call.args and call.args[0].keyword is None else None
    if first is not None:
        owner = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
        if func.attr.value != "backward" or any(word in owner for word in catalog.BACKWARD_WRAPPER_HINTS):
            return dotted_name(first.value)
    return dotted_name(receiver)
