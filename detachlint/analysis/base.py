"""What an analysis is: a fact about a module, or about one scope of it, that rules ask for by its
type (``ctx.get(TensorFacts)``), computed at most once per module (or per scope) and only when a
rule that runs asks. LibCST's metadata providers and Fixit's rule metadata are the model.
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterable, Optional, Protocol, Set, Tuple, Type, TypeVar

import libcst as cst

A = TypeVar("A", bound="Analysis")


class AnalysisContext(Protocol):
    """What building an analysis may use of the per-module context."""

    module: cst.Module
    source: str
    project: Any  # project.ModuleView or None (typed loosely: project.py builds on this module)

    @property
    def scope(self) -> cst.CSTNode: ...

    def get(self, analysis: Type[A]) -> A: ...

    def position(self, node: cst.CSTNode) -> Any: ...


class Analysis:
    """A per-module (or, with ``per_scope``, per-function) fact. ``build`` makes it from the
    context; ``walks`` analyses take part in the engine's single traversal instead of walking
    on their own (they are built before it starts). ``requires``: the analyses ``build`` asks for,
    as a rule declares its own; whoever needs this analysis needs them too (``with_requirements``)."""

    per_scope: ClassVar[bool] = False
    walks: ClassVar[bool] = False
    requires: ClassVar[Tuple[Type["Analysis"], ...]] = ()

    @classmethod
    def build(cls: Type[A], ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> A:
        raise NotImplementedError


def with_requirements(analyses: Iterable[Type[Analysis]]) -> Set[Type[Analysis]]:
    """``analyses`` and every analysis they require, transitively."""
    found: Set[Type[Analysis]] = set()
    stack = list(analyses)
    while stack:
        analysis = stack.pop()
        if analysis not in found:
            found.add(analysis)
            stack.extend(analysis.requires)
    return found
