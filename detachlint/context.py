"""The per-module context a rule works in: the module, the analyses it asks for by type, the
nodes enclosing the one being visited, and ``report``.

Analyses (``analysis.base.Analysis``) are built at most once per module, or once per scope for
``per_scope`` ones (statement order, aliases), and only when asked: a rule declares what it needs
in ``Rule.requires`` and gets it typed with ``self.analysis(Type)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper

from . import cstcompat
from .analysis.base import Analysis
from .analysis.project import ModuleView
from .analysis.tensors import TensorFacts
from .findings import Fix, Severity
from .signature import Signature

A = TypeVar("A", bound=Analysis)


@dataclass
class Report:
    """A finding as a rule reports it: nodes, not yet positions."""

    node: cst.CSTNode
    code: str
    message: str
    severity: Severity
    related: Sequence[Tuple[cst.CSTNode, str]] = ()
    fix: Optional[Callable[["Context"], Optional[Fix]]] = None
    signature: Optional[Signature] = None
    notes: Sequence[str] = ()


_NO_SCOPE = id(None)


class Context:
    """Per-module facts every rule may ask for, computed once."""

    def __init__(self, source: str, filename: str, module: cst.Module, wrapper: MetadataWrapper,
                 project: Optional[ModuleView] = None, rows: Optional[Callable[[int], int]] = None) -> None:
        self.source = source
        # the module's row of each row of ``source``, where that is a ``units.collapsed`` text:
        # ``position`` and ``source`` count its rows, ``line`` (what messages spell) the module's
        self._rows = rows
        self.filename = filename
        self.module = module
        self.project = project  # what the project index knows beyond this file (None: this file alone)
        self._wrapper = wrapper
        self.parents: List[cst.CSTNode] = []  # the nodes enclosing the one being visited
        self.reports: List[Report] = []
        self._positions: Optional[Mapping[cst.CSTNode, CodeRange]] = None
        self._analyses: Dict[Tuple[type, int], Analysis] = {}
        # answers several rules need about one node, decided by the first to ask (the alias rules'
        # "is this a write site"), keyed by (question, id(node))
        self.memo: Dict[Tuple[str, int], object] = {}

    def get(self, analysis: Type[A]) -> A:
        """The analysis of this module (or, for a ``per_scope`` one, of the scope being visited),
        built the first time it is asked for."""
        # asked about 400 times per module linted: no ``typing.cast`` call, the module-wide key
        # without looking up the scope
        if analysis.per_scope:
            scope = self.scope
            key = (analysis, id(scope))
        else:
            scope, key = None, (analysis, _NO_SCOPE)
        found = self._analyses.get(key)
        if found is None:
            found = self._analyses[key] = analysis.build(self, scope)
        return found  # type: ignore[return-value]

    def report(
        self,
        node: cst.CSTNode,
        code: str,
        message: str,
        severity: Severity,
        related: Sequence[Tuple[cst.CSTNode, str]] = (),
        fix: Optional[Callable[["Context"], Optional[Fix]]] = None,
        signature: Optional[Signature] = None,
        notes: Sequence[str] = (),
    ) -> None:
        """``message``: one short sentence; ``notes``: the rest of the evidence and the advice."""
        self.reports.append(Report(node, code, message, severity, related, fix, signature, notes))

    def reported(self, node: cst.CSTNode, code: str) -> bool:
        return any(r.node is node and r.code == code for r in self.reports)

    def position(self, node: cst.CSTNode) -> CodeRange:
        if self._positions is None:
            self._positions = cstcompat.positions(self._wrapper)
        return self._positions[node]

    def after(self, node: cst.CSTNode, other: cst.CSTNode) -> bool:
        """Whether ``node`` starts where ``other`` ends or later: the order of the source, which
        decides alike whatever the line breaks (the screen's tree, built from Python's, has its
        own); rows do not, and a rule that decides on them answers differently there."""
        start, end = self.position(node).start, self.position(other).end
        return (start.line, start.column) >= (end.line, end.column)

    def line(self, node: cst.CSTNode) -> int:
        """The module's row where ``node`` starts, for a rule to decide on (compare it with another,
        or with a row the project index holds); a row a message cites is ``cited_line``."""
        row = self.position(node).start.line
        return self._rows(row) if self._rows else row

    def cited_line(self, node: cst.CSTNode) -> int:
        """``line``, for a message to cite and nothing else: the engine's screen, which only asks
        whether a rule reports, answers it without LibCST's positions."""
        return self.line(node)

    def code_for(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def statement(self) -> Optional[cst.CSTNode]:
        """The innermost statement enclosing the node being visited."""
        for node in reversed(self.parents):
            if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return node
        return None

    @property
    def scope(self) -> cst.CSTNode:
        """The function being visited, or the module at top level."""
        return self.get(TensorFacts).function or self.module
