"""TAL003 data-write-idiom: a write through ``.data`` where no graph was seen pending. Its recipe
is TAL001's (the signature says no graph is pending: the write after ``backward()``); in a run, a
write at its line that does hit memory a pending backward saved confirms it, as for TAL001."""

from __future__ import annotations

from detachlint.signature import Signature

from ..recipes import Config
from . import tal001
from .base import RuleRuntime


def reproduce(sig: Signature, config: Config) -> dict:
    """TAL001's recipe: the same ``.data`` write, reproduced with or without a pending graph as the
    signature's facts say (a TAL003 signature says none was seen pending)."""
    return tal001.reproduce(sig, config)


RULE = RuleRuntime(
    "TAL003", reproduce, "none of its writes hit memory that a pending backward had saved (no silent wrong gradient)",
    counts="writes", writes=True, needs_write=True, saved_hooks=True)
