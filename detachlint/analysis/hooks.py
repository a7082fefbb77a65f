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
        walk(module, _Registrations(self.functions))  # = module.visit(...), without rebuilding the tree


class _Registrations(cst.CSTVisitor):
    """The names of the functions registered as forward hooks (``m.register_forward_hook(fn)``)."""

    def __init__(self, hooks: Set[str]) -> None:
        self.hooks = hooks

    def visit_Call(self, call: cst.Call) -> None:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "register_forward_hook" and call.args:
            target = call.args[0].value
            if isinstance(target, cst.Name):
                self.hooks.add(target.value)
            elif isinstance(target, cst.Attribute):
                self.hooks.add(target.attr.value)
