"""Where a rule can report, as data (``Sites``): the vocabulary of the engine's fast paths.

Every rule reports at a node of a few syntactic kinds, its *sites*, and declares them on its
class (``Rule.sites``, ``rules/base.py``). The engine composes the sites of the selected rules
(``Sites.union``) and hands them to the textual pre-check (``precheck.py``: a file that spells
none cannot produce a finding) and to the skipping of quiet code (``units.py``: a function body
that holds none cannot be reported in). A rule that declares no sites turns both off: every file
is parsed whole, as it must be for a rule whose sites are unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import FrozenSet, Iterable, List, Optional, Union


@dataclass(frozen=True)
class Sites:
    """The nodes a rule reports at. Each kind is looked for by the pre-check in the text (as
    said below) and by ``units`` in a function body's tree."""

    # A call of one of these names, by the called name's last part (``torch.tensor(t)``,
    # ``x.detach()``), also through a local name bound to one (``from torch import tensor as make``).
    # The pre-check looks for the name followed by ``(``.
    calls: FrozenSet[str] = frozenset()
    # An attribute of one of these names, read or written (``p.data``). The pre-check looks for the word.
    attributes: FrozenSet[str] = frozenset()
    # A call with one of these keyword arguments (``out=``, ``inplace=``). The pre-check looks for the word.
    keywords: FrozenSet[str] = frozenset()
    # A call of anything named like an in-place op (``x.add_()``, ``nn.init.normal_(w)``, a project
    # helper ``normalize_(x)``): a name ending in one ``_``. The pre-check looks for ``name_(``.
    inplace_calls: bool = False
    # An augmented assignment (``x *= 2``) or an item assignment (``x[i] = v``): the pre-check
    # looks for their operators.
    writes: bool = False
    # ``kept = live`` (a name bound to a name or an attribute chain) under an ``if`` inside a loop,
    # in a file that spells one of these words (what changes ``live`` on the next iteration: an
    # optimizer's ``step``): the pre-check looks for the words, ``units`` for the assignment.
    loop_renames: FrozenSet[str] = frozenset()

    def __or__(self, other: "Sites") -> "Sites":
        return Sites(*(getattr(self, f.name) | getattr(other, f.name) for f in fields(self)))

    def __le__(self, other: "Sites") -> bool:
        """Every site of this vocabulary is one of ``other``'s too."""
        return all(getattr(self, f.name) <= getattr(other, f.name) for f in fields(self))

    @staticmethod
    def union(declared: Iterable[Optional["Sites"]]) -> Optional["Sites"]:
        """The sites of all of ``declared`` together; None when one of them is None (unknown)."""
        out = Sites()
        for sites in declared:
            if sites is None:
                return None
            out |= sites
        return out

    def to_json(self) -> List[Union[List[str], bool]]:
        return [sorted(v) if isinstance(v, frozenset) else v for v in (getattr(self, f.name) for f in fields(self))]

    @classmethod
    def from_json(cls, data: List[Union[List[str], bool]]) -> "Sites":
        return cls(*(frozenset(v) if isinstance(v, list) else v for v in data))
