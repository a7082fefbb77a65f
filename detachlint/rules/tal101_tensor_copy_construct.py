"""TAL101 tensor-copy-construct: ``torch.tensor(t)`` of a tensor."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..knowledge import catalog
from ..analysis.tensors import Kind, TensorFacts
from ..analysis.torchnames import TorchNames
from ..findings import Severity
from ..signature import Signature
from .base import Rule, Sites
from .fixkit import (SAFE, UNSAFE, copy_replacement, has_comment, is_pure, is_simple_value, keywords_of, make_fix,
                     only_args, positional_args, receiver_code, replace)


_COPY_KEYWORDS = ("dtype", "device", "requires_grad")


def copy_fix(ctx, node: cst.Call, source: cst.BaseExpression, like: Optional[cst.BaseExpression]):
    """TAL101: the call becomes ``copy_replacement``. Safe: the same values, dtype, device and
    (non-)leafness; unsafe only when ``u`` of ``u.new_tensor(t)`` or a keyword's value would be
    evaluated twice or in another order."""
    if not only_args(node, _COPY_KEYWORDS) or has_comment(node):
        return None  # pin_memory=, layout=, ... have no spelling in the replacement
    keywords = keywords_of(node)
    pure = (like is None or is_pure(like)) and all(is_simple_value(a.value) for a in keywords.values())
    text = copy_replacement(ctx, source, keywords, like)
    return make_fix(SAFE if pure else UNSAFE, f"Replace with `{text}`", replace(ctx, node, text),
                    because="the receiver or a keyword's value would be evaluated twice or in another order")


class TensorCopyConstruct(Rule):
    """
    ## What it does
    Flags `torch.tensor(t)` and `u.new_tensor(t)` where `t` is already a tensor.

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
        if not self.analysis(TensorFacts).is_tensor(source):
            return
        replacement = copy_replacement(self.ctx, source, keywords_of(node), like)
        self.ctx.report(
            node, self.code,
            f"`{spelled}()` of a tensor copies it and drops it from the graph", self.severity,
            fix=lambda ctx: copy_fix(ctx, node, source, like),
            signature=Signature(self.code, ("new_tensor" if like is not None else "tensor",)),
            notes=(f"PyTorch warns on every such call; use `{replacement}`.",))
