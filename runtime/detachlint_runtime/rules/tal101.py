"""TAL101 tensor-copy-construct: ``torch.tensor(t)`` / ``t.new_tensor(u)`` of a tensor copies and drops its graph."""

from __future__ import annotations

import warnings

import torch

from detachlint.signature import Signature

from ..recipes import (
    Config, known, make_source, need_numpy, NoReproducer, not_reproduced, Raised, raised_result, reproduced,
    run_body, shares_storage)
from .base import RuleRuntime


COPY_WARNING = "To copy construct from a tensor"


def reproduce(sig: Signature, config: Config) -> dict:
    facts = sig.facts
    op = (sig.ops or ("tensor",))[0]
    kind = facts.type or "tensor"
    x = make_source(facts, config.device, requires_grad=known(facts.requires_grad, True))
    if kind == "ndarray" and need_numpy():
        x = x.detach().cpu().numpy()
    elif kind == "list":
        x = x.detach().cpu().tolist()
    if op == "tensor":
        def body(x):
            return torch.tensor(x)
        text = "torch.tensor(x)"
    elif op == "new_tensor":
        like = torch.zeros(1, device=config.device)

        def body(x):
            return like.new_tensor(x)
        text = "u.new_tensor(x)"
    else:
        raise NoReproducer(f"no recipe for the constructor `{op}`")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = run_body(body, (x,), config)
        except Raised as e:
            return raised_result(e, text, loud_is_hazard=False)
    texts = [str(w.message) for w in caught if COPY_WARNING in str(w.message)]
    src_rg = isinstance(x, torch.Tensor) and x.requires_grad
    shares = shares_storage(x, r)
    details = dict(warning=texts[0].split(",")[0] if texts else None, source_requires_grad=src_rg,
                   result_requires_grad=r.requires_grad, shares_storage=shares)
    if texts:
        dropped = " and dropped requires_grad" if src_rg and not r.requires_grad else ""
        return reproduced("copy-construct-warning", f"{text} copied{dropped}; UserWarning: {texts[0][:80]}…",
                         **details)
    return not_reproduced(f"{text} of a {kind}: no copy-construct warning", seen="no-warning", **details)


RULE = RuleRuntime(
    "TAL101", reproduce, "it was never called with a tensor that requires grad (a copy of one that does not computes "
    "the same values)",
    counts="calls")
