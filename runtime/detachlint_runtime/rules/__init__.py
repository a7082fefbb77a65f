"""One module per rule code: the recipe that reproduces its pattern (pattern mode), the wording of
its ``harmless-in-run`` verdict and what the observer watches for it (run mode). ``RULES`` is what
the generic code asks; a rule with no module here has no reproducer and is ``unobservable`` in a
run.

The modules import torch (through ``recipes``): this package is imported only where torch is
loaded anyway, in the reproduction worker and in ``detachlint run``.
"""

from __future__ import annotations

from typing import Dict

import torch

from detachlint.signature import Signature

from ..recipes import Config, NoReproducer, RECIPES
from . import tal001, tal002, tal003, tal101, tal102, tal103, tal201, tal202, tal301, tal401
from .base import RuleRuntime

RULES: Dict[str, RuleRuntime] = {m.RULE.code: m.RULE for m in (
    tal001, tal002, tal003, tal101, tal102, tal103, tal201, tal202, tal301, tal401)}


def reproduce(signature: Signature, config: Config) -> dict:
    """Run the recipe for the signature's rule: an extra module's (``@recipe``) first, else its own."""
    rule = signature.rule
    fn = RECIPES.get(rule) or (RULES[rule].recipe if rule in RULES else None)
    if fn is None:
        raise NoReproducer(f"no recipe for rule {rule!r}")
    torch.manual_seed(0)
    if config.compiled:
        torch._dynamo.reset()
    return fn(signature, config)


__all__ = ["RULES", "RuleRuntime", "reproduce"]
