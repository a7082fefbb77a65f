"""TAL002 data-read: reading ``Tensor.data`` where ``.detach()`` is the tracked equivalent."""

from __future__ import annotations

from typing import List

import libcst as cst

from ..knowledge import catalog
from ..analysis.data_use import classify_data_use, own_data
from ..analysis.tensors import TensorFacts
from ..knowledge.torch_facts import shares_receiver_memory
from ..analysis.torchnames import TorchNames
from ..findings import Severity
from ..signature import Signature
from .base import Rule, Sites
from .fixkit import detach_fix


# Builtins that read a value and keep nothing of it.
_READING_BUILTINS = frozenset("print float int bool str repr format len abs round min max sum".split())
# Methods that return fresh values (or Python numbers), never the receiver's memory.
_FRESH_METHODS = frozenset(
    "item tolist clone sum mean std var norm max min argmax argmin abs sqrt exp log sign mul add sub div pow "
    "allclose equal eq ne lt le gt ge isnan isinf any all".split())


def _value_only(node: cst.CSTNode, parents: List[cst.CSTNode]) -> bool:
    """Whether the ``.data`` alias is consumed on the spot (``print(x.data)``, ``x.data.norm()``,
    ``x.data * 2``): then ``.detach()`` computes exactly the same, and nothing could later write
    through it, so the fix is safe. Kept under a name, returned or passed on, the alias may be
    written later, where ``.detach()`` raises instead of corrupting: no fix is offered then."""
    cur = node
    for at in range(len(parents) - 1, -1, -1):
        parent = parents[at]
        if isinstance(parent, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.ComparisonTarget,
                               cst.FormattedStringExpression)):
            return True
        if isinstance(parent, cst.Attribute) and parent.value is cur:
            method = parent.attr.value
            if method in _FRESH_METHODS or method in catalog.METADATA_METHODS:
                return True
            if shares_receiver_memory(method):
                cur = parent  # still the same memory: look at what uses it
                continue
            return method in ("shape", "dtype", "device", "ndim", "requires_grad", "is_leaf")
        if isinstance(parent, cst.Call):
            if parent.func is cur:
                cur = parent  # ``x.data.view(-1)``: the call of the view method reached above
                continue
            return False
        if isinstance(parent, cst.Subscript) and parent.value is cur:
            cur = parent
            continue
        if isinstance(parent, cst.SubscriptElement) or isinstance(parent, cst.Index):
            return True  # an index: ``y[x.data > 0]`` reads it
        if isinstance(parent, cst.Arg):
            call = parents[at - 1] if at else None
            return (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)
                    and call.func.value in _READING_BUILTINS)
        return False
    return False


class DataRead(Rule):
    """
    ## What it does
    Flags reads of `Tensor.data` (off by default; enable with `--extend-select TAL002`). In a
    tensor subclass that defines `data` itself (a property backed by another tensor), `self.data`
    is that property, not `Tensor.data`, and is not flagged (nor written, for TAL001/TAL003).
    A `.data` that is assigned, on its own or as an element of an unpacking target
    (`(bn.running_mean.data, bn.running_var.data) = stats()`), is a write: TAL001/TAL003's.

    ## Why is this bad?
    `x.data` and `x.detach()` both return a tensor that shares `x`'s storage and is cut from the
    graph, but only `x.detach()` shares the version counter. Anything that later writes through
    the `.data` alias is invisible to autograd, so a corrupted gradient goes unreported. Using
    `.detach()` everywhere keeps autograd's check armed at no cost.

    ## Example
    ```python
    import torch

    def log_step(weight: torch.Tensor, logits: torch.Tensor):
        snapshot = weight.data
        values = logits.data.cpu()
        return snapshot, values
    ```

    ## Use instead
    ```python
    import torch

    def log_step(weight: torch.Tensor, logits: torch.Tensor):
        snapshot = weight.detach()
        values = logits.detach().cpu()
        return snapshot, values
    ```
    """

    code = "TAL002"
    severity = Severity.WARNING
    summary = "reading Tensor.data where .detach() is the tracked equivalent"
    requires = (TensorFacts, TorchNames)
    sites = Sites(attributes=catalog.UNTRACKED_ALIAS_ATTRIBUTES)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data" or not self.analysis(TensorFacts).is_tensor(node.value) \
                or own_data(node, self.ctx.parents):
            return
        if classify_data_use(node, self.ctx.parents, self.analysis(TorchNames)).write is not None:
            return
        owner = self.ctx.code_for(node.value)
        fix = (lambda ctx, data=node: detach_fix(ctx, data)) if _value_only(node, self.ctx.parents) else None
        self.ctx.report(
            node, self.code,
            f"`{owner}.data` is an alias autograd does not track", self.severity, fix=fix,
            signature=Signature(self.code, ("data",)),
            notes=(f"`{owner}.detach()` is the same alias without disabling the version-counter check.",))
