"""The rule registry: every rule class, in code order. One rule per module, named after its code
and name; its fixture in tests/fixtures/ carries the same name."""

from __future__ import annotations

from typing import Dict, List, Optional, Type

from .base import Rule
from .tal001_data_mutation import DataMutation
from .tal002_data_read import DataRead
from .tal101_tensor_copy_construct import TensorCopyConstruct
from .tal102_tensor_from_tensor_list import TensorFromTensorList
from .tal103_legacy_constructor_alias import LegacyConstructorAlias
from .tal201_detach_inplace import DetachInplace
from .tal301_view_alias_mutation import ViewAliasMutation
from .tal401_stale_snapshot import StaleSnapshot

ALL_RULES: List[Type[Rule]] = sorted(
    [DataMutation, DataRead, TensorCopyConstruct, TensorFromTensorList, LegacyConstructorAlias,
     DetachInplace, ViewAliasMutation, StaleSnapshot],
    key=lambda r: r.code,
)
_BY_CODE: Dict[str, Type[Rule]] = {r.code: r for r in ALL_RULES}


def rule_by_code(code: str) -> Optional[Type[Rule]]:
    return _BY_CODE.get(code)
