"""What each rule is (its code, its name, whether it is on by default), as data: read without
importing a rule, so that configuration, reports and a run the cache serves whole need no parser
(the rule modules import LibCST, a third of such a run's time)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

from ..findings import rules_doc_uri


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    default_enabled: bool
    cls: str  # the rule's class, in the module named after its code and name

    @property
    def module(self) -> str:
        return f"{__package__}.{self.code.lower()}_{self.name.replace('-', '_')}"

    def url(self) -> Optional[str]:
        """Where the rule is documented: the metadata's documentation URL, else the shipped
        ``rules.md`` (a ``file:`` URI), if present (``findings.rules_doc_uri``)."""
        return rules_doc_uri(anchor(self.code, self.name))


def anchor(code: str, name: str) -> str:
    """A rule's heading in ``rules.md``, as GitHub makes its anchor."""
    return f"{code.lower()}-{name}"


RULES: List[RuleInfo] = [  # in code order; ``rules.register`` adds one
    RuleInfo("TAL001", "data-mutation", True, "DataMutation"),
    RuleInfo("TAL002", "data-read", False, "DataRead"),
    RuleInfo("TAL003", "data-write-idiom", True, "DataWriteIdiom"),
    RuleInfo("TAL101", "tensor-copy-construct", True, "TensorCopyConstruct"),
    RuleInfo("TAL102", "tensor-from-tensor-list", True, "TensorFromTensorList"),
    RuleInfo("TAL103", "legacy-constructor-alias", True, "LegacyConstructorAlias"),
    RuleInfo("TAL201", "detach-inplace", True, "DetachInplace"),
    RuleInfo("TAL202", "saved-tensor-inplace", True, "SavedTensorInplace"),
    RuleInfo("TAL301", "view-alias-mutation", True, "ViewAliasMutation"),
    RuleInfo("TAL401", "stale-snapshot", True, "StaleSnapshot"),
    RuleInfo("TAL901", "unused-noqa", False, "UnusedNoqa"),
    RuleInfo("TAL902", "invalid-noqa", True, "InvalidNoqa"),
]
_INFO: Dict[str, RuleInfo] = {r.code: r for r in RULES}


def rule_info(code: str) -> Optional[RuleInfo]:
    return _INFO.get(code)


def add(info: RuleInfo) -> None:
    RULES.append(info)
    _INFO[info.code] = info
