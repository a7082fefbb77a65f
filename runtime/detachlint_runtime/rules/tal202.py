"""TAL202 saved-tensor-inplace: an in-place write to what a pending graph saved; backward raises."""

from __future__ import annotations

from typing import Callable

import torch

from detachlint.signature import Signature, Source

from ..recipes import (
    apply_write, Config, make_source, NoReproducer, not_reproduced, Raised, raised_result, run_body, try_write)
from .base import RuleRuntime


def reproduce(sig: Signature, config: Config) -> dict:
    """``y = op(h)``, an in-place write to what ``op`` saved (its result ``y`` or its input ``h``),
    then ``y.sum().backward()``: the version check raises when the op saved the written tensor."""
    ops = sig.ops
    if len(ops) != 2:
        raise NoReproducer(f"TAL202 needs the saving op and the write, got {ops}")
    op, write = ops
    fn = getattr(torch, op, None) or getattr(torch.nn.functional, op, None)
    if not callable(fn):
        raise NoReproducer(f"`{op}` is neither a torch nor a torch.nn.functional function")
    saved = sig.saved or "result"
    inplace = write.endswith("(inplace=True)")
    if inplace:
        activation = getattr(torch.nn.functional, write[: -len("(inplace=True)")], None)
        if not callable(activation):
            raise NoReproducer(f"`{write}` is not a torch.nn.functional activation")
        do_write = lambda t: activation(t, inplace=True)  # noqa: E731
    else:
        try_write(lambda: apply_write(make_source(Source(), config.device), write))
        do_write = lambda t: apply_write(t, write)  # noqa: E731
    x = make_source(Source(), config.device, requires_grad=True)

    def body(x):
        h = x.abs() + 0.5  # a non-leaf input where every op here is defined
        y = _call_op(fn, h)
        do_write(y if saved == "result" else h)
        y.sum().backward()
        return y

    context = f"h = x.abs() + 0.5; y = {op}(h); {'y' if saved == 'result' else 'h'}: {write}; y.sum().backward()"
    try:
        run_body(body, (x,), config)
    except Raised as r:
        return raised_result(r, context)
    return not_reproduced(f"{context}: backward ran; `{op}` did not save the written tensor", seen="not-saved")


def _call_op(fn: Callable, h: torch.Tensor):
    """``fn(h)``, or with the dimension or shape it also needs (softmax, layer_norm)."""
    for call in (lambda: fn(h), lambda: fn(h, dim=-1), lambda: fn(h, h.shape[-1:])):
        try:
            return call()
        except TypeError:
            continue
    raise NoReproducer(f"no argument shape works for `{getattr(fn, '__name__', fn)}`")


RULE = RuleRuntime(
    "TAL202", reproduce, "no backward needed the tensor after it was written (the version check raised nowhere)",
    counts="writes", writes=True, needs_write=True, saved_hooks=True)
