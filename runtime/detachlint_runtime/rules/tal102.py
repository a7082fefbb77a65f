"""TAL102 tensor-from-tensor-list: ``torch.tensor([t1, t2])`` converts each element to a number."""

from __future__ import annotations

import warnings

import torch

from detachlint.signature import Signature

from ..recipes import (
    Config, known, NoReproducer, not_reproduced, Raised, raised_result, reproduced, run_body, same, values)
from .base import RuleRuntime


def reproduce(sig: Signature, config: Config) -> dict:
    facts = sig.facts
    op = (sig.ops or ("tensor",))[-1]
    ctor = {"tensor": torch.tensor, "as_tensor": torch.as_tensor}.get(op)
    if ctor is None:
        raise NoReproducer(f"no recipe for the constructor `{op}`")
    requires_grad = bool(known(facts.requires_grad, known(facts.calls_backward, True)))
    elements = facts.elements or "0d"
    shape = () if elements == "0d" else ((1,) if elements == "one" else (2,))
    a = torch.full(shape, 1.0, device=config.device, requires_grad=requires_grad)
    b = torch.full(shape, 2.0, device=config.device, requires_grad=requires_grad)
    text = f"torch.{op}([a, b * 3])"

    def body(a, b):
        return ctor([a, b * 3])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = run_body(body, (a, b), config)
        except Raised as e:
            return raised_result(e, text)
    stacked = torch.stack([a, b * 3])
    if requires_grad and not r.requires_grad:
        return reproduced("graph-dropped", f"{text} = {values(r)} with requires_grad=False: no gradient reaches a, b "
                         f"(torch.stack keeps {type(stacked.grad_fn).__name__})", result_requires_grad=False)
    if same(r, stacked):
        return not_reproduced(f"{text} = {values(r)}: no graph to drop (the elements do not require grad), "
                             f"identical to torch.stack", seen="no-graph", result_requires_grad=r.requires_grad)
    return not_reproduced(f"{text} = {values(r)}, keeps the graph", seen="graph-kept")


RULE = RuleRuntime(
    "TAL102", reproduce, "none of the elements required grad: there was no graph to drop", counts="calls")
