"""TAL103 legacy-constructor-alias: ``torch.Tensor(t)`` of a tensor is an alias."""

from __future__ import annotations


import libcst as cst

from ..knowledge import catalog
from ..analysis.tensors import TensorFacts
from ..analysis.torchnames import TorchNames
from ..findings import Severity
from ..signature import Signature
from .base import Rule, Sites
from .fixkit import (UNSAFE, has_comment, make_fix, positional_args, receiver_code, replace, torch_spelling)


_LEGACY_DTYPES = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16",
    "ByteTensor": "uint8", "CharTensor": "int8", "ShortTensor": "int16", "IntTensor": "int32",
    "LongTensor": "int64", "BoolTensor": "bool",
}


def clone_fix(ctx, node: cst.Call, source: cst.BaseExpression, head: str, member: str):
    """TAL103 (unsafe: the result no longer shares storage): ``torch.Tensor(t)`` → ``t.clone()``,
    ``torch.FloatTensor(t)`` → ``t.to(torch.float32, copy=True)`` (a copy whatever the dtype)."""
    if has_comment(node):
        return None
    base = receiver_code(ctx, source)
    torch = torch_spelling(ctx)
    dtype = _LEGACY_DTYPES.get(member)
    if dtype is None or torch is None:
        text = f"{base}.clone()"
    else:
        device = '"cuda", ' if head == "torch.cuda" else ""
        text = f"{base}.to({device}{torch}.{dtype}, copy=True)"
    return make_fix(UNSAFE, f"Replace with `{text}`", replace(ctx, node, text),
                    because="the result no longer shares storage with the tensor")


class LegacyConstructorAlias(Rule):
    """
    ## What it does
    Flags the legacy constructors `torch.Tensor(t)`, `torch.FloatTensor(t)`,
    `torch.LongTensor(t)`, ... called with a tensor.

    ## Why is this bad?
    With a tensor argument they do not copy: `torch.Tensor(t)` returns an alias that shares
    `t`'s storage (and its graph, through `AliasBackward0`), so writing to the "copy" changes the
    original. The typed ones keep the alias when the dtype matches and raise `TypeError`
    when it does not. Size arguments (`torch.FloatTensor(3, 4)`) are not flagged, nor a matrix
    product whose left operand is not shown to be a tensor: its `__matmul__` runs first, and
    `A @ t` with `A` a scipy.sparse matrix is a NumPy array, which `torch.Tensor()` copies.

    ## Example
    ```python
    import torch

    def decayed(weights: torch.Tensor):
        baseline = torch.Tensor(weights)
        baseline.mul_(0.9)            # also scales weights
        return baseline
    ```

    ## Use instead
    ```python
    import torch

    def decayed(weights: torch.Tensor):
        baseline = weights.clone()    # a copy (or weights.to(torch.float32) for a conversion)
        baseline.mul_(0.9)
        return baseline
    ```
    """

    code = "TAL103"
    severity = Severity.WARNING
    summary = "torch.Tensor(t) / torch.FloatTensor(t) with a tensor: an alias, not a copy"
    requires = (TensorFacts, TorchNames)
    sites = Sites(calls=catalog.LEGACY_CONSTRUCTORS)

    def visit_Call(self, node: cst.Call) -> None:
        q = self.analysis(TorchNames).qualified(node.func)
        if q is None:
            return
        if q not in catalog.LEGACY_CONSTRUCTOR_NAMES:
            return
        head, _, member = q.rpartition(".")
        args = positional_args(node)
        if len(args) != 1 or len(node.args) != 1 or not self.analysis(TensorFacts).is_tensor(args[0].value):
            return
        source = receiver_code(self.ctx, args[0].value)
        spelled = self.ctx.code_for(node.func)
        self.ctx.report(
            node, self.code,
            f"`{spelled}()` of a tensor returns an alias of its storage, not a copy", self.severity,
            fix=lambda ctx: clone_fix(ctx, node, args[0].value, head, member),
            signature=Signature(self.code, (member,)),
            notes=(f"`{spelled}({self.ctx.code_for(args[0].value)})` shares the storage of "
                   f"`{self.ctx.code_for(args[0].value)}`; use `{source}.clone()` for a copy.",))
