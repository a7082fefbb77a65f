"""TAL101 tensor-copy-construct: ``torch.tensor(t)`` of a tensor."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..knowledge import catalog
from ..analysis.tensors import Kind, TensorFacts
from ..analysis.torchnames import TorchNames, target_names
from ..findings import Severity
from ..signature import Signature
from .base import Rule, Sites
from .fixkit import (SAFE, UNSAFE, copy_replacement, has_comment, is_pure, is_simple_value, keywords_of, make_fix,
                     only_args, positional_args, receiver_code, replace)


_COPY_KEYWORDS = ("dtype", "device", "requires_grad")


def copy_fix(ctx, node: cst.Call, source: cst.BaseExpression, like: Optional[cst.BaseExpression],
             annotated: Optional[str] = None):
    """TAL101: the call becomes ``copy_replacement``. Safe: the same values, dtype, device and
    (non-)leafness; unsafe when ``u`` of ``u.new_tensor(t)`` or a keyword's value would be
    evaluated twice or in another order, or when ``t`` is a tensor only by the annotation of the
    parameter ``annotated`` (an annotation may lie: ``.detach()`` raises on a tuple or an array)."""
    if not only_args(node, _COPY_KEYWORDS) or has_comment(node):
        return None  # pin_memory=, layout=, ... have no spelling in the replacement
    keywords = keywords_of(node)
    pure = (like is None or is_pure(like)) and all(is_simple_value(a.value) for a in keywords.values())
    text = copy_replacement(ctx, source, keywords, like)
    because = "the receiver or a keyword's value would be evaluated twice or in another order"
    if annotated is not None:
        because = (f"only the annotation of `{annotated}` says it is a tensor; "
                   "on a tuple or an array the replacement raises AttributeError")
    return make_fix(SAFE if pure and annotated is None else UNSAFE, f"Replace with `{text}`",
                    replace(ctx, node, text), because=because)


class TensorCopyConstruct(Rule):
    """
    ## What it does
    Flags `torch.tensor(t)` and `u.new_tensor(t)` where `t` is already a tensor. A parameter
    annotated `torch.Tensor` to which a call in the project passes something else (a shape, a
    tuple, a NumPy array) is not flagged: the call is the conversion those callers need.

    ## Why is this bad?
    These constructors are meant for Python data. Given a tensor they copy it element by
    element, cut it from the autograd graph (the result never requires grad, whatever `t` did)
    and emit a `UserWarning` on every call. The intent, a detached copy, has a direct spelling
    that says so.

    ## Example
    ```python
    import torch

    def make_target(logits: torch.Tensor):
        return torch.tensor(logits, dtype=torch.float64)
    ```

    ## Use instead
    ```python
    import torch

    def make_target(logits: torch.Tensor):
        return logits.detach().clone().to(dtype=torch.float64)
    ```
    (or `logits.clone()` if the copy should stay in the graph).
    """

    code = "TAL101"
    severity = Severity.WARNING
    summary = "torch.tensor(t) / u.new_tensor(t) on a tensor: copies, drops the graph, warns"
    requires = (TensorFacts, TorchNames)
    sites = Sites(calls=catalog.COPY_CONSTRUCTORS)

    def visit_Call(self, node: cst.Call) -> None:
        args = positional_args(node)
        if not args:
            return
        func = node.func
        like = None
        if self.analysis(TorchNames).is_torch(func, "tensor"):
            spelled = "torch.tensor"
        elif (func.__class__ is cst.Attribute and func.attr.value == "new_tensor"
              and self.analysis(TensorFacts).kind(func.value) in (Kind.TENSOR, Kind.UNKNOWN)):
            spelled, like = f"{receiver_code(self.ctx, func.value)}.new_tensor", func.value
        else:
            return
        source = args[0].value
        facts = self.analysis(TensorFacts)
        if not facts.is_tensor(source):
            return
        annotated = None
        passed = facts.passed_to(source.value) if source.__class__ is cst.Name \
            and not _bound_before(facts.function, source.value, node) else None
        if passed is not None:
            tensors, others = passed
            if others:
                return  # a call in the project passes no tensor here (``f(img.shape[:2])``): a conversion
            annotated = None if tensors else source.value
        replacement = copy_replacement(self.ctx, source, keywords_of(node), like)
        self.ctx.report(
            node, self.code,
            f"`{spelled}()` of a tensor copies it and drops it from the graph", self.severity,
            fix=lambda ctx: copy_fix(ctx, node, source, like, annotated),
            signature=Signature(self.code, ("new_tensor" if like is not None else "tensor",)),
            notes=(f"PyTorch warns on every such call; use `{replacement}`.",))


def _bound_before(function: Optional[cst.FunctionDef], name: str, call: cst.Call) -> bool:
    """Whether ``function`` binds ``name`` anew before ``call`` (in source order; ``x = torch.tensor(x)``
    binds it after): then it no longer holds the caller's argument."""
    if function is None:
        return False
    finder = _BindingsBefore(name, call)
    function.body.visit(finder)
    return finder.bound


class _BindingsBefore(cst.CSTVisitor):
    def __init__(self, name: str, call: cst.Call) -> None:
        self.name, self.call, self.bound, self.done = name, call, False, False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.call:
            self.done = True
        return not self.done and super().on_visit(node)

    def on_leave(self, node: cst.CSTNode) -> None:
        if not self.done and isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.With,
                                                 cst.NamedExpr)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else \
                [node.target] if not isinstance(node, cst.With) else \
                [i.asname.name for i in node.items if i.asname is not None]
            self.bound |= any(self.name in target_names(t) for t in targets)
        super().on_leave(node)
