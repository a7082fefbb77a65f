"""What the code around one ``X.data`` does with it: reads it, or writes through it (in place, by
assignment, item assignment, augmented assignment, ``nn.init``, ``out=``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import libcst as cst

from ..knowledge import catalog
from ..knowledge.torch_facts import is_view_attribute, is_view_method, writes_receiver
from .torchnames import TorchNames


@dataclass
class DataUse:
    """One ``X.data`` on a tensor ``X`` and what the surrounding code does with it."""

    data: cst.Attribute  # the ``X.data`` node
    # None for a read; else "inplace", "assign", "setitem", "augassign", "init", "collective", "out"
    write: Optional[str]
    reported: cst.CSTNode  # the node a finding covers
    op: Optional[str] = None  # the in-place method or init function, for messages and signatures
    then: Tuple[str, ...] = ()  # in-place methods chained after ``op``: ``copy_`` of ``.resize_(s).copy_(t)``


def own_data(node: cst.Attribute, parents: List[cst.CSTNode]) -> bool:
    """``self.data`` in a method of a class that defines ``data`` itself (a property of a tensor
    subclass, backed by another tensor): the class's own attribute, not ``Tensor.data``."""
    if not isinstance(node.value, cst.Name):
        return False
    function = next((p for p in reversed(parents) if isinstance(p, cst.FunctionDef)), None)
    if function is None or not function.params.params or function.params.params[0].name.value != node.value.value:
        return False
    at = parents.index(function)
    owner = next((p for p in reversed(parents[:at]) if isinstance(p, (cst.ClassDef, cst.FunctionDef))), None)
    if not isinstance(owner, cst.ClassDef) or not isinstance(owner.body, cst.IndentedBlock):
        return False
    for statement in owner.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "data":
            return True
        if isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, (cst.Assign, cst.AnnAssign)) and any(
                    isinstance(t, cst.Name) and t.value == "data"
                    for t in ([x.target for x in small.targets] if isinstance(small, cst.Assign) else [small.target]))
                for small in statement.body):
            return True
    return False


def classify_data_use(node: cst.Attribute, parents: List[cst.CSTNode], names: TorchNames) -> DataUse:
    """Follow ``X.data`` up through views and chained in-place calls to what finally uses it."""
    cur: cst.CSTNode = node
    i = len(parents) - 1

    def parent(k: int = 0) -> Optional[cst.CSTNode]:
        j = i - k
        return parents[j] if j >= 0 else None

    # Views of X.data are untracked aliases too: X.data[0], X.data.view(-1), X.data.T.
    while True:
        p = parent()
        if isinstance(p, cst.Subscript) and p.value is cur:
            cur, i = p, i - 1
        elif isinstance(p, cst.Attribute) and p.value is cur and is_view_attribute(p.attr.value):
            cur, i = p, i - 1
        elif (isinstance(p, cst.Attribute) and p.value is cur and is_view_method(p.attr.value)
              and isinstance(parent(1), cst.Call) and parent(1).func is p):
            cur, i = parent(1), i - 2
        else:
            break
    p = parent()
    if isinstance(p, cst.Attribute) and p.value is cur and isinstance(parent(1), cst.Call) and parent(1).func is p:
        method = p.attr.value
        if writes_receiver(method):
            top, k, then = parent(1), 2, []
            # p.data.mul_(a).add_(b): in-place ops return their receiver; one finding per chain.
            while (isinstance(parent(k), cst.Attribute) and parent(k).value is top
                   and parent(k).attr.value in catalog.INPLACE_METHODS
                   and isinstance(parent(k + 1), cst.Call) and parent(k + 1).func is parent(k)):
                then.append(parent(k).attr.value)
                top, k = parent(k + 1), k + 2
            return DataUse(node, "inplace", top, method, tuple(then))
    # ``(a.data, b.data) = f()``: an element of an unpacking target is assigned as a whole target is
    target, k = cur, 0
    while isinstance(parent(k), (cst.Element, cst.StarredElement)) and parent(k).value is target \
            and isinstance(parent(k + 1), (cst.Tuple, cst.List)):
        target, k = parent(k + 1), k + 2
    if k and isinstance(parent(k), cst.AssignTarget) and parent(k).target is target:
        return DataUse(node, "assign" if cur is node else "setitem", cur)
    if isinstance(p, cst.AssignTarget) and p.target is cur:
        return DataUse(node, "assign" if cur is node else "setitem", cur)
    if isinstance(p, cst.AugAssign) and p.target is cur:
        return DataUse(node, "augassign", cur)
    if isinstance(p, cst.Arg) and p.value is cur and isinstance(parent(1), cst.Call):
        call = parent(1)
        if p.keyword is not None and p.keyword.value == "out":
            return DataUse(node, "out", cur)
        member = names.torch_member(call.func, "torch.nn.init")
        if call.args and call.args[0] is p and member in catalog.INIT_FUNCTIONS:
            return DataUse(node, "init", call, member)
        member = names.torch_member(call.func, "torch.distributed")
        if call.args and call.args[0] is p and p.keyword is None and member in catalog.COLLECTIVE_WRITES:
            return DataUse(node, "collective", call, member)
    return DataUse(node, None, node)
