"""TAL001 data-mutation and TAL002 data-read: ``Tensor.data``, the alias autograd cannot see."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Set

import libcst as cst

from ..analysis import catalog
from ..analysis.order import ScopeOrder
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Severity
from .base import Rule
from .fixkit import SAFE, make_fix, replace


@dataclass
class DataUse:
    """One ``X.data`` on a tensor ``X`` and what the surrounding code does with it."""

    data: cst.Attribute  # the ``X.data`` node
    write: Optional[str]  # None for a read; else "inplace", "assign", "setitem", "augassign", "init", "out"
    reported: cst.CSTNode  # the node a finding covers
    op: Optional[str] = None  # the in-place method or init function, for messages and signatures


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
        elif isinstance(p, cst.Attribute) and p.value is cur and p.attr.value in catalog.VIEW_ATTRIBUTES:
            cur, i = p, i - 1
        elif (isinstance(p, cst.Attribute) and p.value is cur and p.attr.value in catalog.VIEW_METHODS
              and isinstance(parent(1), cst.Call) and parent(1).func is p):
            cur, i = parent(1), i - 2
        else:
            break
    p = parent()
    if isinstance(p, cst.Attribute) and p.value is cur and isinstance(parent(1), cst.Call) and parent(1).func is p:
        method = p.attr.value
        if method in catalog.INPLACE_METHODS or method in catalog.INPLACE_VIEW_METHODS:
            top, k = parent(1), 2
            # p.data.mul_(a).add_(b): in-place ops return their receiver; one finding per chain.
            while (isinstance(parent(k), cst.Attribute) and parent(k).value is top
                   and parent(k).attr.value in catalog.INPLACE_METHODS
                   and isinstance(parent(k + 1), cst.Call) and parent(k + 1).func is parent(k)):
                top, k = parent(k + 1), k + 2
            return DataUse(node, "inplace", top, method)
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
    return DataUse(node, None, node)


def detach_fix(ctx, data: cst.Attribute):
    """The safe fix for both rules: ``X.data`` → ``X.detach()``, editing only the attribute name.
    The same alias, but sharing X's version counter: a write that would silently corrupt a
    pending backward now raises there instead."""
    return make_fix(SAFE, "Replace `.data` with `.detach()`", replace(ctx, data.attr, "detach()"))


# Writes whose ``X.data`` may become ``X.detach()``. Not ``X.data = v`` (rebinding is not a write
# into the storage) nor ``X.data *= v`` (a call cannot be an augmented-assignment target).
_FIXABLE_WRITES = ("inplace", "init", "out")


def _fixable_write(use: DataUse) -> bool:
    if use.write in _FIXABLE_WRITES:
        return True
    return use.write in ("setitem", "augassign") and isinstance(use.reported, cst.Subscript)


_STORE_PARENTS = (cst.Tuple, cst.List, cst.StarredElement, cst.Element)


def _is_store(node: cst.CSTNode, parents: List[cst.CSTNode]) -> bool:
    """Whether ``node`` is (part of) an assignment, ``del``, ``for`` or ``with ... as`` target."""
    child = node
    for parent in reversed(parents):
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.AsName,
                               cst.NamedExpr)):
            return getattr(parent, "target", None) is child or getattr(parent, "name", None) is child
        if isinstance(parent, cst.Del):
            return True
        if not isinstance(parent, _STORE_PARENTS):
            return False
        child = parent
    return False


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

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._statements: Set[int] = set()
        self._hooks: Optional[Set[str]] = None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data" or not self.ctx.tensors.is_tensor(node.value):
            return
        use = classify_data_use(node, self.ctx.parents, self.ctx.names)
        if use.write is None:
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
        order = self.ctx.scope_order()
        pending = order.pending_backward(node)
        if pending is not None:
            return (Severity.ERROR, f"while a graph is pending until `{self.ctx.code_for(pending)}` (line {self.ctx.line(pending)})",
                    pending)
        function = self.ctx.tensors.function
        if function is not None:
            name = function.name.value
            cls = self.ctx.tensors.current_class
            if name == "forward" and cls is not None and cls.is_module:
                if self._used_before(order, node.value, node):
                    return Severity.ERROR, "inside forward(), after the graph being built used it", None
            # Only a (post-)forward hook runs after the module's forward used its tensors; a
            # pre-hook runs before, like weight initialisation.
            if name in self._hook_functions():
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

    def _hook_functions(self) -> Set[str]:
        if self._hooks is None:
            hooks: Set[str] = set()

            class Finder(cst.CSTVisitor):
                def visit_Call(self, call: cst.Call) -> None:
                    func = call.func
                    if (isinstance(func, cst.Attribute)
                            and func.attr.value == "register_forward_hook"
                            and call.args):
                        target = call.args[0].value
                        if isinstance(target, cst.Name):
                            hooks.add(target.value)
                        elif isinstance(target, cst.Attribute):
                            hooks.add(target.attr.value)

            self.ctx.module.visit(Finder())
            self._hooks = hooks
        return self._hooks


class DataRead(Rule):
    """
    ## What it does
    Flags reads of `Tensor.data` (off by default; enable with `--extend-select TAL002`).

    ## Why is this bad?
    `x.data` and `x.detach()` both return a tensor that shares `x`'s storage and is cut from the
    graph, but only `x.detach()` shares the version counter. Anything that later writes through
    the `.data` alias is invisible to autograd, so a corrupted gradient goes unreported. Using
    `.detach()` everywhere keeps autograd's check armed at no cost.

    ## Example
    ```python
    snapshot = weight.data
    values = logits.data.cpu()
    ```

    ## Use instead
    ```python
    snapshot = weight.detach()
    values = logits.detach().cpu()
    ```
    """

    code = "TAL002"
    name = "data-read"
    severity = Severity.WARNING
    default_enabled = False
    summary = "reading Tensor.data where .detach() is the tracked equivalent"

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data" or not self.ctx.tensors.is_tensor(node.value):
            return
        if classify_data_use(node, self.ctx.parents, self.ctx.names).write is not None:
            return
        owner = self.ctx.code_for(node.value)
        fix = None if _is_store(node, self.ctx.parents) else (lambda ctx, data=node: detach_fix(ctx, data))
        self.ctx.report(
            node, self.code,
            f"`{owner}.data` is an alias autograd does not track; `{owner}.detach()` is the same without "
            f"disabling the version-counter check", self.severity, fix=fix,
            signature={"rule": self.code, "ops": ["data"]})
