"""TAL301's lost writes: an in-place write into a value that is certainly a fresh copy, whose result
nobody reads (``out.clone().masked_fill_(mask, 0)`` as a statement, ``hidden[ids].zero_()`` with an
index array, ``tmp = x[mask]; tmp.zero_()`` with ``tmp`` never read; a named ``.clone()`` only
written is dead code the code chose, not reported): the write was meant for the
source, which keeps its values."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..knowledge import catalog
from ..analysis.aliases import AliasAnalysis
from ..findings import Severity
from ..walk import walk


class LostWrite:
    """A mixin for the TAL301 rule: ``_lost_write(call)`` reports and says whether it did."""

    def _lost_write(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return False
        method = node.func.attr.value
        if method not in catalog.INPLACE_METHODS:
            return False  # ``unsqueeze_`` and friends reshape the object, no values are lost
        parents = self.ctx.parents
        if not parents or not isinstance(parents[-1], cst.Expr) or parents[-1].value is not node:
            return False  # the result is used: ``y = x.clone().mul_(2)`` is a fresh value, written
        analysis: Optional[AliasAnalysis] = self._analysis()
        if analysis is None:
            return False
        receiver = node.func.value
        indexing = analysis.indexing
        found = indexing.copy_of(receiver)
        named = None
        bound = None
        if found is None and isinstance(receiver, cst.Name):
            values = indexing.bindings(receiver.value)
            if len(values) == 1 and isinstance(values[0], cst.BaseExpression) \
                    and indexing.copy_of(values[0]) is not None:  # the cheap test first: walk only then
                bound = _only_binding(self.ctx.scope, receiver.value)
            if bound is not None:
                found = indexing.copy_of(bound)
                named = receiver.value
                # ``shown = x.clone()`` only written is dead code, not a view mistaken for a copy: the
                # code chose the copy (TAL201's own fix makes it). ``tmp = x[mask]`` looks like a view.
                if found is not None and not found.by_index:
                    found = None
        if found is None:
            return False
        source, how, by_index = found
        source_text = self._text(source)
        copy_text = self._text(receiver if named is None else bound)
        if named is None:
            message = f"`{self._text(node)}` writes a temporary copy that is dropped: `{source_text}` keeps its values"
            where = f"`{copy_text}` is new memory ({how}), and the result of `.{method}()` is not used."
        else:
            message = (f"`{self._text(node)}` writes `{named}`, a copy that is never read: `{source_text}` keeps its "
                       f"values")
            where = f"`{named} = {copy_text}` is new memory ({how}), and `{named}` is only ever written."
        advice = ("Assign through the index instead (`x[idx] = v`), or keep the result."
                  if by_index
                  else f"Write into `{source_text}` itself, or keep the result.")
        related = [(bound, "the copy is made here")] if named is not None else []
        self.ctx.report(node, self.code, message, Severity.ERROR, related, notes=(where, advice))
        return True


    def _lost_to_recomputation(self, node: cst.CSTNode) -> bool:
        """A write into a weight that ``weight_norm`` or a parametrization recomputes
        (``nn.init.normal_(self.fc.weight)``; ``recomputed.py``): lost like a write into a copy."""
        found = self._recomputed_write(node)
        if found is None:
            return False
        lost, what = found
        self.ctx.report(node, self.code, lost.message(what), Severity.ERROR, notes=lost.notes())
        return True


def _only_binding(scope: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    """The value ``name`` is bound to where the scope binds it once (``name = value``) and only
    ever uses it as the receiver of in-place writes whose results are dropped; else None."""
    finder = _Uses(name)
    walk(scope, finder)
    if finder.other or len(finder.bound) != 1:
        return None
    return finder.bound[0]


class _Uses(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.bound = []
        self.other = False

    def visit_Assign(self, node: cst.Assign) -> Optional[bool]:
        if any(isinstance(t.target, cst.Name) and t.target.value == self.name for t in node.targets):
            if len(node.targets) != 1:
                self.other = True
            self.bound.append(node.value)
            walk(node.value, self)
            return False
        return None

    def visit_Expr(self, node: cst.Expr) -> Optional[bool]:
        value = node.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in catalog.INPLACE_METHODS \
                and isinstance(value.func.value, cst.Name) and value.func.value.value == self.name:
            for arg in value.args:
                walk(arg, self)
            return False
        return None

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.other = True  # read, rebound, deleted, declared global: not only written
