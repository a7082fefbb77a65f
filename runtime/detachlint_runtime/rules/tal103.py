"""TAL103 legacy-constructor-alias: ``torch.Tensor(t)`` returns an alias of ``t``, not a copy."""

from __future__ import annotations

from typing import Dict, Optional

import torch

from detachlint.signature import Signature

from ..recipes import (
    Config, dtype_of, make_source, NoReproducer, not_reproduced, Raised, raised_result, reproduced, run_body,
    same, shares_storage, values)
from .base import RuleRuntime


def reproduce(sig: Signature, config: Config) -> dict:
    facts = sig.facts
    member = (sig.ops or ("Tensor",))[0]
    ctor = getattr(torch, member, None)
    if ctor is None or member not in LEGACY_DTYPES:
        raise NoReproducer(f"no legacy constructor torch.{member}")
    # Unknown dtype: the one the constructor accepts (the only way the line runs at all).
    dtype = dtype_of(facts.dtype) if facts.dtype else (LEGACY_DTYPES[member] or torch.float32)
    grad = bool(facts.requires_grad) and dtype.is_floating_point
    x = make_source(facts, config.device, requires_grad=grad, dtype=dtype)
    before = x.detach().clone()
    text = f"c = torch.{member}(x); c.mul_(2)"

    def body(x):
        c = ctor(x)
        with torch.no_grad():
            c.mul_(2)
        return c

    try:
        c = run_body(body, (x,), config)
    except Raised as e:
        return raised_result(e, text, loud_is_hazard=False)
    changed = not same(x, before)
    shares = shares_storage(x, c)
    if changed or shares:
        return reproduced("alias", f"{text}: x changed {values(before)} -> {values(x)}; c shares x's storage: {shares}",
                         shares_storage=shares, source_changed=changed)
    return not_reproduced(f"{text}: x unchanged: a copy", seen="copy", shares_storage=False)


LEGACY_DTYPES: Dict[str, Optional[torch.dtype]] = {
    "Tensor": None, "FloatTensor": torch.float32, "DoubleTensor": torch.float64, "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16, "ByteTensor": torch.uint8, "CharTensor": torch.int8,
    "ShortTensor": torch.int16, "IntTensor": torch.int32, "LongTensor": torch.int64, "BoolTensor": torch.bool,
}


RULE = RuleRuntime(
    "TAL103", reproduce, "no in-place write went through the alias it returned", counts="calls")
