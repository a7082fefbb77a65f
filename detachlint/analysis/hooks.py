"""Which functions of a module are registered as forward hooks (``m.register_forward_hook(f)``):
they run after a forward, once the graph being built has used the module's tensors; and which are
handed to ``Module.apply`` (``model.apply(init_weights)``): they receive modules."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from ..walk import walk
from .base import Analysis, AnalysisContext
from .torchnames import dotted_name


class ForwardHooks(Analysis):
    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> "ForwardHooks":
        return cls(ctx.module, _spelled("register_forward_hook", ctx.source))

    def __init__(self, module: cst.Module, spelled: bool = True) -> None:
        self.functions: Set[str] = set()
        if spelled:
            walk(module, _Registrations(self.functions))  # = module.visit(...), without rebuilding the tree


def _spelled(word: str, source: str) -> bool:
    """Whether ``source`` may call a method ``word``: its text holds the word, or is not ASCII
    (Python reads ``ａpply`` as ``apply``). Where it cannot, the module is not walked."""
    return word in source or not source.isascii()


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


class AppliedFunctions(Analysis):
    """Functions handed to ``Module.apply`` (``model.apply(init_weights)``,
    ``self.apply(self._init_weights)``, ``net.apply(lambda m: ...)``): ``apply`` calls them on
    every submodule, so their module parameter holds an ``nn.Module``. ``functions`` maps a
    function's name, ``lambdas`` a lambda's id, to whether every such call is on a module made
    just before it, which no graph can have used yet: ``self`` in ``__init__``, or a name the
    call's scope binds only by constructing (``G = Generator()``, ``Generator().apply(f)``)."""

    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> "AppliedFunctions":
        return cls(ctx.module, _spelled("apply", ctx.source))

    def __init__(self, module: cst.Module, spelled: bool = True) -> None:
        calls = _ApplyCalls()
        if spelled:
            walk(module, calls)
        self.functions: Dict[str, bool] = {}
        self.lambdas: Dict[int, bool] = {}
        # a function's name -> the classes (as written here) whose objects the calls hand it the
        # modules of: ``self.apply(f)`` in a method of ``Net`` (with that ``self``: where in the
        # method it runs matters), ``Net().apply(f)``, ``g = Net(); g.apply(f)`` (with None)
        self.classes: Dict[str, List[Tuple[str, Optional[cst.BaseExpression]]]] = {}
        for target, receiver, scope in calls.found:
            bound = calls.bindings.get(id(scope), {})
            fresh = _fresh(receiver, scope, bound)
            if isinstance(target, cst.Lambda):
                self.lambdas[id(target)] = fresh
            else:
                name = target.value if isinstance(target, cst.Name) else target.attr.value
                self.functions[name] = self.functions.get(name, True) and fresh
                self.classes.setdefault(name, []).extend(_classes_of(receiver, scope, bound, calls.owners))


class _ApplyCalls(cst.CSTVisitor):
    """Every ``X.apply(f)`` with ``f`` a name, an attribute or a lambda, with the scope it is in,
    and per scope the values each plain name is bound to (not in nested scopes)."""

    def __init__(self) -> None:
        self.found: List[Tuple[cst.BaseExpression, cst.BaseExpression, cst.CSTNode]] = []
        self.bindings: Dict[int, Dict[str, List[cst.BaseExpression]]] = {}
        self.scopes: List[cst.CSTNode] = []
        self.owners: Dict[int, str] = {}  # a method's id -> the name of the class it is defined in
        self.inside: List[cst.CSTNode] = []  # the classes and functions around, innermost last

    def visit_Module(self, node: cst.Module) -> None:
        self.scopes.append(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.inside.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.inside.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.inside and isinstance(self.inside[-1], cst.ClassDef):
            self.owners[id(node)] = self.inside[-1].name.value
        self.inside.append(node)
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()
        self.inside.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                table = self.bindings.setdefault(id(self.scopes[-1]), {})
                table.setdefault(target.target.value, []).append(node.value)

    def visit_Call(self, call: cst.Call) -> None:
        func = call.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "apply" and len(call.args) == 1
                and call.args[0].keyword is None and call.args[0].star == ""
                and isinstance(call.args[0].value, (cst.Name, cst.Attribute, cst.Lambda))):
            self.found.append((call.args[0].value, func.value, self.scopes[-1]))


def _fresh(receiver: cst.BaseExpression, scope: cst.CSTNode, bound: Dict[str, List[cst.BaseExpression]]) -> bool:
    if isinstance(receiver, cst.Call):
        return _constructs(receiver)
    if not isinstance(receiver, cst.Name):
        return False
    if isinstance(scope, cst.FunctionDef) and scope.name.value == "__init__" and scope.params.params \
            and scope.params.params[0].name.value == receiver.value:
        return True  # ``self.apply(...)`` while the object is being built
    values = bound.get(receiver.value)
    return bool(values) and all(isinstance(v, cst.Call) and _constructs(v) for v in values)


def _classes_of(receiver: cst.BaseExpression, scope: cst.CSTNode, bound: Dict[str, List[cst.BaseExpression]],
                owners: Dict[int, str]) -> List[Tuple[str, Optional[cst.BaseExpression]]]:
    """The classes whose objects ``receiver.apply(f)`` may be called on, as written (``AppliedFunctions.classes``)."""
    if isinstance(receiver, cst.Call):
        return [(dotted_name(receiver.func), None)] if _constructs(receiver) else []
    if not isinstance(receiver, cst.Name):
        return []
    if isinstance(scope, cst.FunctionDef) and id(scope) in owners and scope.params.params \
            and scope.params.params[0].name.value == receiver.value:
        return [(owners[id(scope)], receiver)]  # ``self.apply(f)``
    values = bound.get(receiver.value, ())
    return [(dotted_name(v.func), None) for v in values if isinstance(v, cst.Call) and _constructs(v)]


def _constructs(call: cst.Call) -> bool:
    """``Generator()``, ``models.Net(3)``: a class called, by the convention of its capital."""
    name = dotted_name(call.func) or ""
    return name.rsplit(".", 1)[-1][:1].isupper()
