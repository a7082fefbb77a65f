"""One module per rule code: the recipe that reproduces its pattern (pattern mode), the wording of
its ``harmless-in-run`` verdict and what the observer watches for it (run mode). ``RULES`` is what
the generic code asks; a rule with no module here has no reproducer and is ``unobservable`` in a
run.

The modules import torch (through ``recipes``): this package is imported only where torch is
loaded anyway, in the reproduction worker and in ``detachlint run``.
"""

from __future__ import annotations

from typing import Dict

from . import tal001, tal002, tal003, tal101, tal102, tal103, tal201, tal202, tal301, tal401
from .base import RuleRuntime

RULES: Dict[str, RuleRuntime] = {m.RULE.code: m.RULE for m in (
    tal001, tal002, tal003, tal101, tal102, tal103, tal201, tal202, tal301, tal401)}

__all__ = ["RULES", "RuleRuntime"]
