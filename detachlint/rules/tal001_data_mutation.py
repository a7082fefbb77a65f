"""TAL001 data-mutation: a write through ``Tensor.data``, the alias autograd cannot see."""

from __future__ import annotations

from typing import Set

import libcst as cst

from ..analysis.data_use import DataUse, classify_data_use
from ..analysis.hooks import ForwardHooks
from ..analysis.order import ScopeOrder
from ..analysis import catalog
from ..analysis.tensors import Kind, TensorFacts
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Severity
from .base import Rule
from .fixkit import detach_fix


# Writes whose ``X.data`` may become ``X.detach()``. Not ``X.data = v`` (rebinding is not a write
# into the storage) nor ``X.data *= v`` (a call cannot be an augmented-assignment target).
_FIXABLE_WRITES = ("inplace", "init", "out")


def _fixable_write(use: DataUse) -> bool:
    if use.write in _FIXABLE_WRITES:
        return True
    return use.write in ("setitem", "augassign") and isinstance(use.reported, cst.Subscript)


class DataMutation(Rule):
    """
    ## What it does
    Flags writes through `Tensor.data`: in-place methods (`p.data.mul_(0.5)`,
    `p.data.add_(u).clamp_(0, 1)`), item and slice assignment (`p.data[mask] = 0`), augmented
    assignment (`p.data *= 2`), rebinding (`p.data = new`), `torch.nn.init.*_(p.data)` and
    `out=p.data`.

    ## Why is this bad?
    `p.data` is an alias of `p`'s storage with a fresh version counter, so autograd cannot see
    the write. If a graph that saved `p` (or a view of it) is still waiting for `backward()`,
    the gradient is silently computed from the new values: no error, wrong numbers. Inside
    `forward()`, a forward hook, or between computing a loss and calling `backward()` this is
    an **error**. Elsewhere (weight initialisation, an optimizer-style update after `backward()`,
    an EMA) the values are correct, and it is a **warning**: the same write under
    `torch.no_grad()` gives bit-identical results and keeps the version check as a safety net.

    ## Example
    ```python
    loss = criterion(model(x), y)
    for p in model.parameters():
        p.data.mul_(0.5)          # the pending backward reads the halved weights
    loss.backward()
    ```

    ## Use instead
    ```python
    loss = criterion(model(x), y)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)
    ```
    or `p.detach().mul_(0.5)`, which shares the version counter, so a write that would corrupt
    a pending backward raises instead.
    """

    code = "TAL001"
    name = "data-mutation"
    severity = Severity.ERROR
    summary = "in-place write through Tensor.data, invisible to autograd"
    requires = (TensorFacts, TorchNames, ScopeOrder, ForwardHooks)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._statements: Set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        kind = self.analysis(TensorFacts).kind(node.value)
        if kind is not Kind.TENSOR and kind is not Kind.UNKNOWN:
            return
        use = classify_data_use(node, self.ctx.parents, self.analysis(TorchNames))
        if use.write is None or (kind is Kind.UNKNOWN and not _tensor_evidence(use)):
            return
        statement = self.ctx.statement()
        if id(statement) in self._statements:
            return
        self._statements.add(id(statement))
        owner = self.ctx.code_for(node.value)
        severity, context, pending = self._severity(node)
        if use.write == "init":
            what = f"`{self.ctx.code_for(use.reported.func)}()` on `{owner}.data`"
        else:
            what = {
                "inplace": f"`.{use.op}()` on `{owner}.data`",
                "assign": f"assigning `{owner}.data`",
                "setitem": f"item assignment into `{owner}.data`",
                "augassign": f"augmented assignment to `{owner}.data`",
                "out": f"`out={owner}.data`",
            }[use.write]
        if severity is Severity.ERROR:
            message = (f"{what} changes `{owner}` behind autograd's back {context}: the gradient will be "
                       f"silently wrong. Use `with torch.no_grad():` or `{owner}.detach()`, which keep the "
                       f"version-counter check")
        elif use.write == "assign":
            message = (f"{what} swaps its storage behind autograd's back; harmless here (no graph is pending), "
                       f"but `with torch.no_grad(): {owner}.copy_(...)` (same shape) or "
                       f"`torch.utils.swap_tensors` keep autograd informed")
        else:
            message = (f"{what} bypasses autograd's version counter; harmless here (no graph is pending) "
                       f"but `with torch.no_grad():` gives identical values and keeps the check")
        related = [(pending, "the pending backward() that reads the changed values")] if pending else []
        fix = (lambda ctx, data=node: detach_fix(ctx, data)) if _fixable_write(use) else None
        self.ctx.report(use.reported, self.code, message, severity, related, fix=fix,
                        signature={"rule": self.code, "ops": [use.op or use.write], "write": use.write,
                                   "pending_graph": severity is Severity.ERROR})

    def _severity(self, node: cst.Attribute):
        """Error when a graph that may have saved the tensor is pending, with why and where."""
        order = self.analysis(ScopeOrder)
        pending = order.pending_backward(node)
        if pending is not None:
            return (Severity.ERROR, f"while a graph is pending until `{self.ctx.code_for(pending)}` (line {self.ctx.line(pending)})",
                    pending)
        function = self.analysis(TensorFacts).function
        if function is not None:
            name = function.name.value
            cls = self.analysis(TensorFacts).current_class
            if name == "forward" and cls is not None and cls.is_module:
                if self._used_before(order, node.value, node):
                    return Severity.ERROR, "inside forward(), after the graph being built used it", None
            # Only a (post-)forward hook runs after the module's forward used its tensors; a
            # pre-hook runs before, like weight initialisation.
            if name in self.analysis(ForwardHooks).functions:
                return Severity.ERROR, "inside a forward hook, after the forward used it", None
        return Severity.WARNING, None, None

    @staticmethod
    def _used_before(order: ScopeOrder, owner: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """``self.fc.weight`` counts as used once ``self.fc.weight`` or ``self.fc(...)`` ran."""
        name = dotted_name(owner)
        if name is None:
            return False
        parts = name.split(".")
        prefixes = [".".join(parts[:k]) for k in range(len(parts), 1 if len(parts) > 1 else 0, -1)]
        return any(order.used_before(prefix, node) for prefix in prefixes)


def _tensor_evidence(use: DataUse) -> bool:
    """``x.data.add_(...)`` / ``nn.init.normal_(x.data)`` on a name (``p``, ``self.fc.weight``): only
    a tensor's ``.data`` has these. Not on an item of a container (``bindings[k].data.resize_()``
    reads the ``data`` field of a record)."""
    receiver = dotted_name(use.data.value)
    if receiver is None:
        return False
    if receiver.rsplit(".", 1)[-1] in catalog.MODULE_TENSOR_ATTRIBUTES and "." in receiver:
        return True  # ``module.weight.data = ...``: a module's parameter or buffer, whatever ``module`` is
    if use.write == "init":
        return True
    return use.write == "inplace" and use.op in catalog.INPLACE_METHODS
