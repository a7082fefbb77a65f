"""TAL102 tensor-from-tensor-list: ``torch.tensor([t1, t2])`` of tensors."""

from __future__ import annotations


import libcst as cst

from ..analysis.order import ScopeOrder
from ..analysis.tensors import Kind, TensorFacts
from ..analysis.torchnames import TorchNames
from ..findings import Severity
from .base import Rule
from .fixkit import (UNSAFE, comments_in, keywords_of, make_fix, only_args, positional_args, replace, replace_tail,
                     torch_spelling)


def stack_fix(ctx, node: cst.Call):
    """TAL102 (unsafe: the result now keeps the graph): ``torch.tensor`` → ``torch.stack``, with
    ``dtype=``/``device=`` moved into a ``.to(...)``. Spelled as this module binds ``torch``."""
    torch = torch_spelling(ctx)
    if torch is None or not only_args(node, ("dtype", "device")):
        return None
    edits = [replace(ctx, node.func, f"{torch}.stack")]
    keywords = keywords_of(node)
    if keywords:
        seq = positional_args(node)[0].value
        if comments_in(node) > comments_in(seq):  # the replaced tail (``, dtype=...)``) holds a comment
            return None
        # Drop ``, dtype=..., device=...`` (from the end of the sequence argument to the close).
        to_args = ", ".join(f"{k}={ctx.code_for(v.value).strip()}" for k, v in keywords.items())
        edits.append(replace_tail(ctx, seq, node, f").to({to_args})"))
    return make_fix(UNSAFE, f"Replace with `{torch}.stack(...)`", *edits)


class TensorFromTensorList(Rule):
    """
    ## What it does
    Flags `torch.tensor([...])` and `torch.as_tensor([...])` whose elements are tensors, including
    a list that was filled with tensors (`losses.append(loss)`) or built by a comprehension.

    ## Why is this bad?
    The constructor converts every element to a Python number: the result is a new leaf, so no
    gradient flows back to the elements (a loss term built this way never trains), and
    elements with more than one value raise `ValueError: only one element tensors can be
    converted to Python scalars`. It is an **error** in code that calls `backward()`, a
    **warning** elsewhere.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    def train_step(logits: torch.Tensor, features: torch.Tensor, y: torch.Tensor):
        ce_loss = F.cross_entropy(logits, y)
        aux_loss = F.mse_loss(features, torch.zeros_like(features))
        total = torch.tensor([ce_loss, aux_loss]).sum()
        total.backward()              # aux_loss and ce_loss receive no gradient
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    def train_step(logits: torch.Tensor, features: torch.Tensor, y: torch.Tensor):
        ce_loss = F.cross_entropy(logits, y)
        aux_loss = F.mse_loss(features, torch.zeros_like(features))
        total = torch.stack([ce_loss, aux_loss]).sum()
        total.backward()
    ```
    """

    code = "TAL102"
    name = "tensor-from-tensor-list"
    severity = Severity.ERROR
    summary = "torch.tensor([t1, t2, ...]) drops the graph; torch.stack is meant"
    requires = (TensorFacts, TorchNames, ScopeOrder)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.analysis(TorchNames).is_torch(node.func, "tensor", "as_tensor"):
            return
        args = positional_args(node)
        if not args or self.analysis(TensorFacts).kind(args[0].value) is not Kind.TENSOR_SEQ:
            return
        order = self.analysis(ScopeOrder)
        spelled = self.ctx.code_for(node.func)
        elements = self.ctx.code_for(args[0].value)
        if order.calls_backward():
            message = (f"`{spelled}()` of tensors converts each to a Python number: no gradient reaches them "
                       f"in this function that calls backward(), and multi-element tensors raise; use "
                       f"`torch.stack({elements})`")
            severity = Severity.ERROR
        else:
            message = (f"`{spelled}()` of tensors converts each to a Python number, dropping the graph "
                       f"(multi-element tensors raise); use `torch.stack({elements})`")
            severity = Severity.WARNING
        self.ctx.report(node, self.code, message, severity, fix=lambda ctx: stack_fix(ctx, node),
                        signature={"rule": self.code, "ops": [spelled.rsplit(".", 1)[-1]],
                                   "source": {"calls_backward": severity is Severity.ERROR}})
