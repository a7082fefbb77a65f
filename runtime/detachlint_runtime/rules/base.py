"""What one rule code brings to the runtime companion (:class:`RuleRuntime`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, FrozenSet, Optional


@dataclass(frozen=True)
class RuleRuntime:
    """A rule's recipe (pattern mode), its verdict wording and what the observer watches for it (run mode)."""

    code: str
    recipe: Callable[..., dict]  # (Signature, Config) -> result: the pattern reproduced, observed
    harmless: str  # why its line is ``harmless-in-run`` when the hazard did not occur
    counts: Optional[str] = None  # "writes" | "calls": what a run counts at its lines
    writes: bool = False  # its hazard is a write: one to a tensor without storage cannot be checked
    needs_write: bool = False  # unobservable when no write reached torch's dispatcher from its line
    saved_hooks: bool = False  # its hazard is a write to memory a pending graph saved: saved-tensor hooks on
    # an alias rule: the sides of the pair (``Side``) watched for a read after the other side's
    # write, given the finding; None: its lines make no alias to follow
    watched: Optional[Callable[[Any], FrozenSet[str]]] = None
    # its write may be meant to reach the other name: a read confirms only where the finding claims
    # one, a read at its related lines after its write does; the wording when it claims none
    intended_write: Optional[str] = None
    snapshots: bool = False  # its alias is a snapshot of live state (restored, saved, optimizer state)
    # its finding says the watched side is read as a copy; False (TAL002, which is about writes
    # through the alias): a read of it after the other side's write is noted, never confirmed, and
    # keeps the verdict from ``harmless-in-run``
    claims_reads: bool = True


def sides(*names: str) -> Callable[[Any], FrozenSet[str]]:
    """The same sides watched for every finding of the rule."""
    watched = frozenset(names)
    return lambda finding: watched
