"""The rule registry: every rule class, in code order."""

from __future__ import annotations

from typing import Dict, List, Optional, Type

from .aliases import DetachInplace, StaleSnapshot, ViewAliasMutation
from .base import Rule
from .constructors import LegacyConstructorAlias, TensorCopyConstruct, TensorFromTensorList
from .data import DataMutation, DataRead

ALL_RULES: List[Type[Rule]] = sorted(
    [DataMutation, DataRead, TensorCopyConstruct, TensorFromTensorList, LegacyConstructorAlias,
     DetachInplace, ViewAliasMutation, StaleSnapshot],
    key=lambda r: r.code,
)
_BY_CODE: Dict[str, Type[Rule]] = {r.code: r for r in ALL_RULES}


def rule_by_code(code: str) -> Optional[Type[Rule]]:
    return _BY_CODE.get(code)
