"""The rule registry: what each rule is, as data (``registry.py``), and the rule classes, one per
module named after its code and name (its fixture in tests/fixtures/ carries the same name),
imported when first asked for (``ALL_RULES``, ``rule_by_code``): they import LibCST."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, List, Optional, Type

from .registry import RULES, RuleInfo, add, anchor, rule_info

if TYPE_CHECKING:
    from .base import Rule

__all__ = ["ALL_RULES", "RULES", "RuleInfo", "anchor", "register", "rule_by_code", "rule_info"]


def _classes() -> List[Type[Rule]]:
    rules = globals().get("ALL_RULES")
    if rules is None:
        rules = [getattr(importlib.import_module(info.module), info.cls) for info in RULES]
        globals()["ALL_RULES"] = rules
    return rules


def __getattr__(name: str) -> object:
    if name == "ALL_RULES":  # every rule class, in code order
        return _classes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(rule: Type[Rule]) -> None:
    """Add a rule from outside (a test's, a plugin's) to the registry, on by default unless its
    ``default_enabled`` says otherwise: every surface then selects and reports it."""
    _classes().append(rule)
    add(RuleInfo(rule.code, rule.name, rule.default_enabled, rule.__name__))


def rule_by_code(code: str) -> Optional[Type[Rule]]:
    return next((rule for rule in _classes() if rule.code == code), None) if rule_info(code) is not None else None
