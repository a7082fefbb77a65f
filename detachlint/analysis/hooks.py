"""Which functions of a module are registered as forward hooks (``m.register_forward_hook(f)``):
they run after a forward, once the graph being built has used the module's tensors."""

from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from ..walk import walk
from .base import Analysis, AnalysisContext


class ForwardHooks(Analysis):
    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> "ForwardHooks":
        return cls(ctx.module)

    def __init__(self, module: cst.Module) -> None:
        self.functions: Set[str] = set()
        hooks = self.functions

        class Finder(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == "register_forward_hook" and call.args:
                    target = call.args[0].value
                    if isinstance(target, cst.Name):
                        hooks.add(target.value)
                    elif isinstance(target, cst.Attribute):
                        hooks.add(target.attr.value)

        walk(module, Finder())  # = module.visit(Finder()), without rebuilding the tree
