"""TAL002 data-read: reading ``Tensor.data`` where ``.detach()`` is the tracked equivalent."""

from __future__ import annotations

from typing import List

import libcst as cst

from ..analysis.data_use import classify_data_use
from ..analysis.tensors import TensorFacts
from ..analysis.torchnames import TorchNames
from ..findings import Severity
from .base import Rule
from .fixkit import detach_fix


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
    name = "data-read"
    severity = Severity.WARNING
    default_enabled = False
    summary = "reading Tensor.data where .detach() is the tracked equivalent"
    requires = (TensorFacts, TorchNames)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data" or not self.analysis(TensorFacts).is_tensor(node.value):
            return
        if classify_data_use(node, self.ctx.parents, self.analysis(TorchNames)).write is not None:
            return
        owner = self.ctx.code_for(node.value)
        fix = None if _is_store(node, self.ctx.parents) else (lambda ctx, data=node: detach_fix(ctx, data))
        self.ctx.report(
            node, self.code,
            f"`{owner}.data` is an alias autograd does not track; `{owner}.detach()` is the same without "
            f"disabling the version-counter check", self.severity, fix=fix,
            signature={"rule": self.code, "ops": ["data"]})
