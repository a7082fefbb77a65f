"""TAL101-TAL103: building a tensor from a tensor with the list constructors."""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from ..analysis import catalog
from ..analysis.tensors import Kind
from ..findings import Severity
from .base import Rule
from .fixkit import SAFE, UNSAFE, comments_in, has_comment, is_pure, is_simple_value, make_fix, replace, replace_tail, \
    torch_spelling

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def receiver_code(ctx, node: cst.BaseExpression) -> str:
    """Source for ``node`` usable before ``.method()``: parenthesised unless it is an atom."""
    code = ctx.code_for(node).strip()
    return code if isinstance(node, _ATOMS) else f"({code})"


def copy_replacement(ctx, source: cst.BaseExpression, kwargs: Dict[str, cst.Arg],
                     like: Optional[cst.BaseExpression] = None) -> str:
    """The copy that ``torch.tensor(source, **kwargs)`` meant: ``source.detach().clone()``,
    with ``dtype=``/``device=`` as ``.to(...)`` and ``requires_grad=True`` as ``.requires_grad_()``.
    ``like`` is the receiver of ``like.new_tensor(source)``, whose dtype and device are the default."""
    base = receiver_code(ctx, source)
    is_detached = (isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute)
                   and source.func.attr.value == "detach" and not source.args)
    text = f"{base}.clone()" if is_detached else f"{base}.detach().clone()"
    to_args = []
    for key in ("dtype", "device"):
        if key in kwargs:
            to_args.append(f"{key}={ctx.code_for(kwargs[key].value).strip()}")
        elif like is not None:
            to_args.append(f"{key}={receiver_code(ctx, like)}.{key}")
    if to_args:
        text += f".to({', '.join(to_args)})"
    grad = kwargs.get("requires_grad")
    if grad is not None and not (isinstance(grad.value, cst.Name) and grad.value.value == "False"):
        text += ".requires_grad_()" if isinstance(grad.value, cst.Name) and grad.value.value == "True" \
            else f".requires_grad_({ctx.code_for(grad.value).strip()})"
    return text


def _keywords(call: cst.Call) -> Dict[str, cst.Arg]:
    return {a.keyword.value: a for a in call.args if a.keyword is not None}


def _positional(call: cst.Call):
    return [a for a in call.args if a.keyword is None and not a.star]


def _only_args(call: cst.Call, keywords=()) -> bool:
    """One positional argument, no ``*``/``**``, and no keyword outside ``keywords``."""
    return (len(_positional(call)) == 1 and not any(a.star for a in call.args)
            and all(a.keyword is None or a.keyword.value in keywords for a in call.args))


_COPY_KEYWORDS = ("dtype", "device", "requires_grad")


def copy_fix(ctx, node: cst.Call, source: cst.BaseExpression, like: Optional[cst.BaseExpression]):
    """TAL101: the call becomes ``copy_replacement``. Safe: the same values, dtype, device and
    (non-)leafness; unsafe only when ``u`` of ``u.new_tensor(t)`` or a keyword's value would be
    evaluated twice or in another order."""
    if not _only_args(node, _COPY_KEYWORDS) or has_comment(node):
        return None  # pin_memory=, layout=, ... have no spelling in the replacement
    keywords = _keywords(node)
    pure = (like is None or is_pure(like)) and all(is_simple_value(a.value) for a in keywords.values())
    text = copy_replacement(ctx, source, keywords, like)
    return make_fix(SAFE if pure else UNSAFE, f"Replace with `{text}`", replace(ctx, node, text))


def stack_fix(ctx, node: cst.Call):
    """TAL102 (unsafe: the result now keeps the graph): ``torch.tensor`` → ``torch.stack``, with
    ``dtype=``/``device=`` moved into a ``.to(...)``. Spelled as this module binds ``torch``."""
    torch = torch_spelling(ctx)
    if torch is None or not _only_args(node, ("dtype", "device")):
        return None
    edits = [replace(ctx, node.func, f"{torch}.stack")]
    keywords = _keywords(node)
    if keywords:
        seq = _positional(node)[0].value
        if comments_in(node) > comments_in(seq):  # the replaced tail (``, dtype=...)``) holds a comment
            return None
        # Drop ``, dtype=..., device=...`` (from the end of the sequence argument to the close).
        to_args = ", ".join(f"{k}={ctx.code_for(v.value).strip()}" for k, v in keywords.items())
        edits.append(replace_tail(ctx, seq, node, f").to({to_args})"))
    return make_fix(UNSAFE, f"Replace with `{torch}.stack(...)`", *edits)


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
    return make_fix(UNSAFE, f"Replace with `{text}`", replace(ctx, node, text))


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
    target = torch.tensor(logits, dtype=torch.float64)
    ```

    ## Use instead
    ```python
    target = logits.detach().clone().to(dtype=torch.float64)
    ```
    (or `logits.clone()` if the copy should stay in the graph).
    """

    code = "TAL101"
    name = "tensor-copy-construct"
    severity = Severity.WARNING
    summary = "torch.tensor(t) / u.new_tensor(t) on a tensor: copies, drops the graph, warns"

    def visit_Call(self, node: cst.Call) -> None:
        args = _positional(node)
        if not args:
            return
        func = node.func
        like = None
        if self.ctx.names.is_torch(func, "tensor"):
            spelled = "torch.tensor"
        elif (isinstance(func, cst.Attribute) and func.attr.value == "new_tensor"
              and self.ctx.tensors.kind(func.value) in (Kind.TENSOR, Kind.UNKNOWN)):
            spelled, like = f"{receiver_code(self.ctx, func.value)}.new_tensor", func.value
        else:
            return
        source = args[0].value
        if not self.ctx.tensors.is_tensor(source):
            return
        replacement = copy_replacement(self.ctx, source, _keywords(node), like)
        self.ctx.report(
            node, self.code,
            f"`{spelled}()` of a tensor copies it, drops it from the graph and warns on every call; "
            f"use `{replacement}`", self.severity, fix=lambda ctx: copy_fix(ctx, node, source, like),
            signature={"rule": self.code, "ops": ["new_tensor" if like is not None else "tensor"]})


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
    total = torch.tensor([ce_loss, aux_loss]).sum()
    total.backward()              # aux_loss and ce_loss receive no gradient
    ```

    ## Use instead
    ```python
    total = torch.stack([ce_loss, aux_loss]).sum()
    ```
    """

    code = "TAL102"
    name = "tensor-from-tensor-list"
    severity = Severity.ERROR
    summary = "torch.tensor([t1, t2, ...]) drops the graph; torch.stack is meant"

    def visit_Call(self, node: cst.Call) -> None:
        if not self.ctx.names.is_torch(node.func, "tensor", "as_tensor"):
            return
        args = _positional(node)
        if not args or self.ctx.tensors.kind(args[0].value) is not Kind.TENSOR_SEQ:
            return
        order = self.ctx.scope_order()
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


class LegacyConstructorAlias(Rule):
    """
    ## What it does
    Flags the legacy constructors `torch.Tensor(t)`, `torch.FloatTensor(t)`,
    `torch.LongTensor(t)`, ... called with a tensor.

    ## Why is this bad?
    With a tensor argument they do not copy: `torch.Tensor(t)` returns an alias that shares
    `t`'s storage (and its graph, through `AliasBackward0`), so writing to the "copy" changes the
    original. The typed ones keep the alias when the dtype matches and raise `TypeError`
    when it does not. Size arguments (`torch.FloatTensor(3, 4)`) are not flagged.

    ## Example
    ```python
    baseline = torch.Tensor(weights)
    baseline.mul_(0.9)            # also scales weights
    ```

    ## Use instead
    ```python
    baseline = weights.clone()                   # a copy
    baseline = weights.to(torch.float32)         # a dtype conversion
    ```
    """

    code = "TAL103"
    name = "legacy-constructor-alias"
    severity = Severity.WARNING
    summary = "torch.Tensor(t) / torch.FloatTensor(t) with a tensor: an alias, not a copy"

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.names.qualified(node.func)
        if q is None:
            return
        head, _, member = q.rpartition(".")
        if head not in ("torch", "torch.cuda") or member not in catalog.LEGACY_CONSTRUCTORS:
            return
        args = _positional(node)
        if len(args) != 1 or len(node.args) != 1 or not self.ctx.tensors.is_tensor(args[0].value):
            return
        source = receiver_code(self.ctx, args[0].value)
        spelled = self.ctx.code_for(node.func)
        self.ctx.report(
            node, self.code,
            f"`{spelled}({self.ctx.code_for(args[0].value)})` returns an alias that shares the tensor's storage, "
            f"not a copy; use `{source}.clone()` for a copy", self.severity,
            fix=lambda ctx: clone_fix(ctx, node, args[0].value, head, member),
            signature={"rule": self.code, "ops": [member]})
