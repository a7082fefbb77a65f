"""Analyses declare the analyses they ask for (``Analysis.requires``), as rules do: a rule that
needs ``AliasAnalysis`` gets the scope kinds of ``TensorFacts``, which must then take part in the
engine's traversal, without naming ``TensorFacts`` itself."""

from __future__ import annotations

import ast
from pathlib import Path

from detachlint.analysis.aliases import AliasAnalysis
from detachlint.analysis.base import with_requirements
from detachlint.analysis.tensors import TensorFacts
from detachlint.analysis.torchnames import TorchNames

ANALYSIS = Path(__file__).resolve().parents[1] / "detachlint" / "analysis"


def _asked_and_declared(source: str):
    """Per class with a ``build``: the names it passes to ``ctx.get`` and those in its ``requires``."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        build = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "build"), None)
        if build is None:
            continue
        asked = {call.args[0].id for call in ast.walk(build) if isinstance(call, ast.Call)
                 and isinstance(call.func, ast.Attribute) and call.func.attr == "get"
                 and isinstance(call.func.value, ast.Name) and call.func.value.id == "ctx"
                 and call.args and isinstance(call.args[0], ast.Name)}
        declared = {e.id for s in node.body if isinstance(s, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "requires" for t in s.targets)
                    for e in ast.walk(s.value) if isinstance(e, ast.Name)}
        yield node.name, asked, declared


def test_every_analysis_declares_what_it_asks_for():
    undeclared = {name: sorted(asked - declared) for path in sorted(ANALYSIS.glob("*.py"))
                  for name, asked, declared in _asked_and_declared(path.read_text(encoding="utf-8"))
                  if asked - declared}
    assert not undeclared, f"analyses that ask for what they do not declare in `requires`: {undeclared}"


def test_the_declaration_check_can_fail():
    source = "class A:\n    requires = (B,)\n    def build(cls, ctx, scope):\n        return ctx.get(B), ctx.get(C)\n"
    assert list(_asked_and_declared(source)) == [("A", {"B", "C"}, {"B"})]


def test_requirements_are_transitive():
    assert with_requirements([AliasAnalysis]) >= {AliasAnalysis, TensorFacts, TorchNames}
    assert with_requirements([TorchNames]) == {TorchNames}
