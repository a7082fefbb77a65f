"""TAL003 data-write-idiom: a write through ``.data`` where no graph was seen pending. Its recipe
is TAL001's (the signature says no graph is pending: the write after ``backward()``); in a run, a
write at its line that does hit memory a pending backward saved confirms it, as for TAL001."""

from __future__ import annotations

import torch

from detachlint.knowledge.catalog import KEPT_THROUGH_DATA
from detachlint.signature import Signature

from ..recipes import Config, make_source, not_reproduced, Raised, raised_result, reproduced, run_body
from . import tal001
from .base import RuleRuntime

# How each op of ``KEPT_THROUGH_DATA`` is called on ``x.data`` (``x``: 2 x 3, or 1 x 2 x 3 for
# ``squeeze_``) so that it would change ``x``'s shape, strides or storage if it reached ``x``.
ALIAS_ONLY_CALLS = {
    "resize_": ("resize_(9)", lambda a, x: a.resize_(x.numel() + 3)),
    "resize_as_": ("resize_as_(torch.empty(9))", lambda a, x: a.resize_as_(x.new_empty(x.numel() + 3))),
    "set_": ("set_(torch.zeros(9))", lambda a, x: a.set_(x.new_zeros(x.numel() + 3))),
    "t_": ("t_()", lambda a, x: a.t_()),
    "transpose_": ("transpose_(0, 1)", lambda a, x: a.transpose_(0, 1)),
    "swapdims_": ("swapdims_(0, 1)", lambda a, x: a.swapdims_(0, 1)),
    "swapaxes_": ("swapaxes_(0, 1)", lambda a, x: a.swapaxes_(0, 1)),
    "unsqueeze_": ("unsqueeze_(0)", lambda a, x: a.unsqueeze_(0)),
    "squeeze_": ("squeeze_(0)", lambda a, x: a.squeeze_(0)),
    "as_strided_": ("as_strided_((3, 2), (1, 3))", lambda a, x: a.as_strided_((3, 2), (1, 3))),
}


def _layout(x: torch.Tensor, kept: str) -> tuple:
    """What ``KEPT_THROUGH_DATA`` says ``x`` keeps: its shape, its strides, its storage."""
    return (tuple(x.shape), x.stride() if "strides" in kept else None,
            x.untyped_storage().data_ptr() if "storage" in kept else None)


def alias_only(op: str, sig: Signature, config: Config) -> dict:
    """The claim of a shape, stride or storage op through ``.data``: it changes only the alias,
    the tensor keeps its layout (``KEPT_THROUGH_DATA``)."""
    text, call = ALIAS_ONLY_CALLS[op]
    x = make_source(sig.facts, config.device)
    if op == "squeeze_":
        x = x.reshape(1, *x.shape).clone()
    kept = KEPT_THROUGH_DATA[op]
    before = _layout(x, kept)

    def body(x):
        alias = x.data
        call(alias, x)
        return tuple(alias.shape)

    context = f"x.data.{text}"
    try:
        alias_shape = run_body(body, (x,), config)
    except Raised as r:
        return raised_result(r, context, loud_is_hazard=False)
    if _layout(x, kept) == before:
        return reproduced("alias-only", f"{context}: the alias is now {list(alias_shape)}, `x` keeps its "
                          f"{kept} ({list(before[0])})")
    return not_reproduced(f"{context}: `x` changed too, to {list(x.shape)}", seen="reaches the tensor")


def reproduce(sig: Signature, config: Config) -> dict:
    """TAL001's recipe: the same ``.data`` write, reproduced with or without a pending graph as the
    signature's facts say (a TAL003 signature says none was seen pending); for a shape, stride or
    storage op (``KEPT_THROUGH_DATA``), the check that it changes only the alias."""
    op = sig.ops[0] if sig.ops else None
    if op in KEPT_THROUGH_DATA:
        return alias_only(op, sig, config)
    return tal001.reproduce(sig, config)


RULE = RuleRuntime(
    "TAL003", reproduce, "none of its writes hit memory that a pending backward had saved (no silent wrong gradient)",
    counts="writes", writes=True, needs_write=True, saved_hooks=True)
