"""TAL002 data-read: what a later write through the ``.data`` alias does while a graph saved the tensor."""

from __future__ import annotations

from detachlint.signature import Side, Signature

from ..recipes import alias_write, Config
from .base import RuleRuntime, sides


def reproduce(sig: Signature, config: Config) -> dict:
    # A read of .data: show what a later write through it does while a graph saved the tensor.
    return alias_write(sig, config, default_write="mul_", default_pending=True, default_requires_grad=True)


RULE = RuleRuntime(
    "TAL002", reproduce, "no write through the `.data` alias taken here hit memory saved for a pending backward",
    writes=True, saved_hooks=True, watched=sides(Side.ALIAS), claims_reads=False)
