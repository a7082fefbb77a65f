"""TAL301 view-alias-mutation: one side of a view or alias pair written, the other read as if a copy."""

from __future__ import annotations

from typing import FrozenSet

from detachlint.signature import Side, Signature

from ..recipes import alias_write, Config
from .base import RuleRuntime


def reproduce(sig: Signature, config: Config) -> dict:
    return alias_write(sig, config, default_write="mul_", default_pending=False, default_requires_grad=False,
                       no_grad_write=True)


def watched(finding) -> FrozenSet[str]:
    """The side that was not written (both when the finding does not say which was)."""
    written = finding.signature.written if finding.signature is not None else None
    return frozenset({Side.SOURCE: {Side.ALIAS}, Side.ALIAS: {Side.SOURCE}}.get(written, set(Side)))


RULE = RuleRuntime(
    "TAL301", reproduce, "the name that was not written was never read after the write, and no pending backward had "
    "saved the memory",
    counts="writes", writes=True, needs_write=True, saved_hooks=True, watched=watched,
    intended_write="no pending backward had saved the written memory, and what the write reached was not read "
                   "afterwards")
