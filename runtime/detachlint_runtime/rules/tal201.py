"""TAL201 detach-inplace: a write through a ``.detach()`` result (or a conversion of one) reaches its source."""

from __future__ import annotations

from detachlint.signature import Side, Signature

from ..recipes import alias_write, Config
from .base import RuleRuntime, sides


def reproduce(sig: Signature, config: Config) -> dict:
    return alias_write(sig, config, default_write="mul_", default_pending=False, default_requires_grad=False)


RULE = RuleRuntime(
    "TAL201", reproduce, "no pending backward had saved the written memory, and the tensor the alias was made from "
    "was not read after the write",
    counts="writes", writes=True, needs_write=True, saved_hooks=True, watched=sides(Side.SOURCE),
    intended_write="no pending backward had saved the written memory, and what the write reached was not read "
                   "afterwards")
