"""TAL102 tensor-from-tensor-list: ``torch.tensor([t1, t2])`` of tensors."""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from ..knowledge import catalog
from ..analysis.order import ScopeOrder
from ..analysis.tensors import Kind, TensorFacts
from ..knowledge.torch_facts import shares_receiver_memory
from ..analysis.torchnames import TorchNames
from ..findings import Severity
from ..signature import Signature, Source
from .base import Rule, Sites
from .fixkit import (UNSAFE, comments_in, keywords_of, make_fix, only_args, positional_args, replace, replace_tail,
                     torch_spelling)
from ..walk import walk


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
    return make_fix(UNSAFE, f"Replace with `{torch}.stack(...)`", *edits, because="the result now keeps the autograd graph")


class _Values(cst.CSTVisitor):
    """Within one function: each name's assigned values (``x = v``, ``x += v``, ``xs.append(v)``,
    ``xs.extend(vs)``) and, for a loop or comprehension variable, the iterable it is an element
    of (pairwise through ``zip``)."""

    def __init__(self) -> None:
        self.values: Dict[str, List[cst.BaseExpression]] = {}

    def _add(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.values.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            pairs = value.args if _is_zip(value) else ()
            for i, element in enumerate(target.elements):
                self._add(element.value, pairs[i].value if i < len(pairs) else value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._add(target.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._add(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._add(node.target, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._add(node.target, node.iter)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and node.args
                and func.attr.value in catalog.CONTAINER_ADD_METHODS | catalog.CONTAINER_EXTEND_METHODS):
            self._add(func.value, node.args[-1].value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # the body of the function being analysed, not those nested in it

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def _placed_by_element(node: cst.Call, elements: cst.BaseExpression) -> Optional[cst.Attribute]:
    """``torch.tensor(losses, device=losses[0].device)``: the elements have a ``.device`` (numbers
    have none), so they are tensors (laekov/fastmoe's balance loss); the ``device=`` value, else None."""
    for arg in node.args:
        value = arg.value
        if arg.keyword is None or arg.keyword.value != "device" or not isinstance(value, cst.Attribute) \
                or value.attr.value != "device" or not isinstance(value.value, cst.Subscript):
            continue
        item = value.value
        if len(item.slice) == 1 and isinstance(item.slice[0].slice, cst.Index) \
                and isinstance(item.slice[0].slice.value, (cst.Integer, cst.UnaryOperation)) \
                and item.value.deep_equals(elements) and isinstance(elements, (cst.Name, cst.Attribute)):
            return value
    return None


def _is_zip(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "zip"


class _GraphEvidence:
    """Which element of ``torch.tensor([...])`` carries a graph that the conversion drops: a value
    computed by a call (``F.cross_entropy(logits, y)``, ``model(x)``, ``criterion(out, y)``)
    rather than made by a factory (``torch.tensor``, ``torch.zeros``) or cut from the graph
    (``.detach()``, ``.item()``). Unknown values (parameters, attributes) are no evidence."""

    def __init__(self, function: cst.FunctionDef, names: TorchNames) -> None:
        collector = _Values()
        walk(function.body, collector)
        self.values = collector.values
        self.names = names

    def find(self, node: cst.BaseExpression, seen: Optional[Set[str]] = None) -> Optional[cst.Call]:
        seen = set() if seen is None else seen
        if isinstance(node, cst.Name):
            if node.value in seen:
                return None
            seen.add(node.value)
            return next((c for v in self.values.get(node.value, ()) if (c := self.find(v, seen)) is not None), None)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return next((c for e in node.elements if (c := self.find(e.value, seen)) is not None), None)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self.find(node.elt, seen)
        if isinstance(node, cst.BinaryOperation):
            return self.find(node.left, seen) or self.find(node.right, seen)
        if isinstance(node, cst.UnaryOperation):
            return self.find(node.expression, seen)
        if isinstance(node, (cst.Subscript, cst.Attribute)):
            return self.find(node.value, seen)
        if isinstance(node, cst.Call):
            return self._call(node, seen)
        return None

    def _call(self, node: cst.Call, seen: Set[str]) -> Optional[cst.Call]:
        func = node.func
        member = self.names.torch_member(func)
        if member is not None:
            if member in catalog.GRAPH_FREE_FACTORIES:
                return None
            return next((c for a in node.args if (c := self.find(a.value, seen)) is not None), None)
        if _is_zip(node) or (isinstance(func, cst.Name) and func.value in ("float", "int", "len", "range", "enumerate")):
            return None
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in catalog.GRAPH_CUTTING_METHODS:
                return None
            if method in catalog.TENSOR_ONLY_METHODS or shares_receiver_memory(method) \
                    or method in catalog.GRAPH_KEEPING_METHODS:
                return self.find(func.value, seen)  # a tensor method keeps its receiver's graph
        qualified = self.names.qualified(func) or ""
        if qualified.startswith("torch.nn.functional.") or any(not isinstance(a.value, (
                cst.Integer, cst.Float, cst.SimpleString)) for a in node.args):
            return node  # a computation from tensors: model(x), criterion(out, y), F.mse_loss(...)
        return None


class TensorFromTensorList(Rule):
    """
    ## What it does
    Flags `torch.tensor([...])` and `torch.as_tensor([...])` whose elements are tensors, including
    a list that was filled with tensors (`losses.append(loss)`) or built by a comprehension.
    Under `not isinstance(x, torch.Tensor)` or `type(x) is not torch.Tensor`, `x` is no tensor.

    ## Why is this bad?
    The constructor converts every element to a Python number: the result is a new leaf, so no
    gradient flows back to the elements (a loss term built this way never trains), and
    elements with more than one value raise `ValueError: only one element tensors can be
    converted to Python scalars`. It is an **error** in code that calls `backward()` when an
    element is computed there by a call whose graph the conversion drops (`F.cross_entropy(...)`,
    `model(x)`, a list filled with such values); a **warning** elsewhere, and where the elements
    carry no graph the analysis can name (made by `torch.tensor`, `.detach()`, `.item()`).

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
    severity = Severity.ERROR
    summary = "torch.tensor([t1, t2, ...]) drops the graph; torch.stack is meant"
    requires = (TensorFacts, TorchNames, ScopeOrder)
    sites = Sites(calls=catalog.SEQUENCE_CONSTRUCTORS)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._evidence: Dict[int, _GraphEvidence] = {}

    def _graph(self, elements: cst.BaseExpression) -> Optional[cst.Call]:
        """The call whose graph an element carries (None: no evidence; then a warning)."""
        function = self.analysis(TensorFacts).function
        if function is None or self.analysis(TorchNames).grad_disabled(self.ctx.parents):
            return None
        evidence = self._evidence.get(id(function))
        if evidence is None:
            evidence = self._evidence[id(function)] = _GraphEvidence(function, self.analysis(TorchNames))
        return evidence.find(elements)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.analysis(TorchNames).is_torch(node.func, "tensor", "as_tensor"):
            return
        args = positional_args(node)
        if not args:
            return
        placed = None
        if self.analysis(TensorFacts).kind(args[0].value) is not Kind.TENSOR_SEQ:
            placed = _placed_by_element(node, args[0].value)
            if placed is None:
                return
        order = self.analysis(ScopeOrder)
        spelled = self.ctx.code_for(node.func)
        elements = self.ctx.code_for(args[0].value)
        graph = self._graph(args[0].value) if order.calls_backward() else None
        use = f"Use `torch.stack({elements})`."
        if graph is not None:
            message = f"`{spelled}()` of tensors drops the graph of `{self.ctx.code_for(graph)}`"
            notes = (f"Each element becomes a Python number, so the backward() in this function sends "
                     f"`{self.ctx.code_for(graph)}` (line {self.ctx.cited_line(graph)}) no gradient; multi-element tensors "
                     f"raise.", use)
            severity = Severity.ERROR
        elif placed is not None:
            message = f"`{spelled}()` of tensors converts each to a Python number, dropping the graph"
            notes = (f"The elements are tensors: the result is placed on `{self.ctx.code_for(placed)}`, an element's "
                     f"device (Python numbers have none); multi-element tensors raise.", use)
            severity = Severity.WARNING
        else:
            message = f"`{spelled}()` of tensors converts each to a Python number, dropping the graph"
            notes = ("Multi-element tensors raise.", use)
            severity = Severity.WARNING
        self.ctx.report(node, self.code, message, severity, fix=lambda ctx: stack_fix(ctx, node),
                        signature=Signature(self.code, (spelled.rsplit(".", 1)[-1],),
                                            source=Source(calls_backward=severity is Severity.ERROR)), notes=notes)
