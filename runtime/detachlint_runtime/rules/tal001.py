"""TAL001 data-mutation: a write through ``.data`` while a graph that saved the tensor is pending."""

from __future__ import annotations

import torch

from detachlint.signature import Signature

from ..recipes import (
    apply_inplace, backward_outcome, call_text, Config, grad_of, INIT_ARGS, is_inplace_method, known, make_source,
    NoReproducer, not_reproduced, Raised, raised_result, run_body, square_sum, try_write, values)
from .base import RuleRuntime


# A shape, stride or storage op through ``.data`` is TAL001's only with a value write chained
# after it (``x.data.resize_(n).copy_(v)``), which reaches ``x``'s memory: reproduced as the op
# called so that the alias keeps ``x``'s size, then ``mul_`` (after ``set_`` the write goes to the
# other storage: TAL003's).
SIZE_KEEPING_CALLS = {
    "resize_": lambda a, x: a.resize_(x.shape), "resize_as_": lambda a, x: a.resize_as_(x),
    "t_": lambda a, x: a.t_(), "transpose_": lambda a, x: a.transpose_(0, 1),
    "swapdims_": lambda a, x: a.swapdims_(0, 1), "swapaxes_": lambda a, x: a.swapaxes_(0, 1),
    "unsqueeze_": lambda a, x: a.unsqueeze_(0), "squeeze_": lambda a, x: a.squeeze_(),
    "as_strided_": lambda a, x: a.as_strided_(x.shape, x.stride()),
}


def data_write(sig: Signature):
    """The write a TAL001 signature describes, as a function of the tensor ``x``."""
    kind = sig.write or "inplace"
    op = sig.ops[0] if sig.ops else None
    if kind == "inplace" and op in SIZE_KEEPING_CALLS:
        def chained(x):
            alias = x.data
            SIZE_KEEPING_CALLS[op](alias, x)
            alias.mul_(10)
        return f"x.data.{op}(...).mul_(10)", chained
    if kind == "inplace":
        if not op or not is_inplace_method(op):
            raise NoReproducer(f"no in-place method `{op}`")
        return f"x.data{call_text(op)}", lambda x: apply_inplace(x.data, op)
    if kind == "setitem":
        return "x.data[0] = 5", lambda x: x.data.__setitem__(0, 5.0)
    if kind == "augassign":
        def aug(x):
            d = x.data
            d *= 10
        return "x.data *= 10", aug
    if kind == "assign":
        def assign(x):
            x.data = torch.full_like(x, 100.0)
        return "x.data = torch.full_like(x, 100.)", assign
    if kind == "out":
        return "torch.add(zeros, 7, out=x.data)", lambda x: torch.add(torch.zeros_like(x), 7, out=x.data)
    if kind == "collective":
        # what a collective does to the tensor it is handed (the reduced or received values land in
        # it, in place), without a process group: an in-place overwrite of the same memory
        return (f"torch.distributed.{op}(x.data) (as the in-place overwrite it is: x.data.copy_(values))",
                lambda x: x.data.copy_(torch.full_like(x, 3.0)))
    name = op or "normal_"  # "init"
    init = getattr(torch.nn.init, name, None)
    if init is None or not name.endswith("_"):
        raise NoReproducer(f"no torch.nn.init function `{name}`")
    return f"torch.nn.init.{name}(x.data)", lambda x: init(x.data, *INIT_ARGS.get(name, ()))


def reproduce(sig: Signature, config: Config) -> dict:
    text, write = data_write(sig)
    facts = sig.facts
    try_write(lambda: write(make_source(facts, config.device, requires_grad=True)))
    x = make_source(facts, config.device, requires_grad=True)
    if known(facts.pending_graph, True):
        reference = grad_of(square_sum, x)

        def body(x):
            y = square_sum(x)
            write(x)
            return y

        context = f"y = (x*x).sum(); {text}; y.backward()"
        try:
            y = run_body(body, (x,), config)
        except Raised as r:
            return raised_result(r, context)
        return backward_outcome(x, y, reference, context, config)

    # No graph pending: the write after backward() (init, optimizer-style update).
    square_sum(x).backward()
    reference = x.grad.clone()
    version = x._version

    def update(x):
        write(x)
        return x.sum()  # something to compile around

    context = f"y.backward(); {text}"
    try:
        run_body(update, (x,), config)
    except Raised as r:
        return raised_result(r, context)
    return not_reproduced(
        f"{context}: no graph was pending, the gradient {values(x.grad)} is the tracked one; the write "
        f"was untracked (x._version {version} -> {x._version}), torch.no_grad() gives the same values",
        seen="no-pending-graph", grad=values(x.grad), reference=values(reference))


RULE = RuleRuntime(
    "TAL001", reproduce, "none of its writes hit memory that a pending backward had saved (no silent wrong gradient)",
    counts="writes", writes=True, needs_write=True, saved_hooks=True)
