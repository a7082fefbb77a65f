"""A write through ``.data`` into a parameter that ``weight_norm`` (or a parametrization) recomputes:
``self.conv1 = weight_norm(nn.Conv1d(...))`` then ``self.conv1.weight.data.normal_(0, 0.01)``. The
weight is computed from other tensors (``catalog.RECOMPUTED_PARAMETERS``), so the write is lost:
at the next forward (``torch.nn.utils.weight_norm``: a forward pre-hook) or at once
(``torch.nn.utils.parametrizations``: each read of ``m.weight`` computes a new tensor). Which
modules are wrapped is the project index's fact (``ClassFacts.wrapped``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from ..analysis.data_use import DataUse
from ..analysis.hooks import AppliedFunctions
from ..analysis.tensors import TensorFacts
from ..analysis.torchnames import TorchNames, dotted_name
from ..knowledge import catalog
from ..knowledge.torch_facts import UNKNOWN_MODULE
from ..walk import walk

# the writes whose values are lost with the computed tensor (not ``resize_`` and friends, nor ``out=``)
_LOST = frozenset({"inplace", "init", "setitem", "augassign", "assign"})


@dataclass(frozen=True)
class Recomputed:
    """What makes ``X.<param>`` a computed tensor: the wrapper and where it wraps the module."""

    receiver: str  # ``self.conv1.weight``, ``m.weight``
    wrapper: str  # qualified: ``torch.nn.utils.weight_norm``
    param: str  # ``weight``
    line: int
    module: Optional[str]  # the wrapping's module, where it is not the linted one
    applied_to: Optional[str]  # ``Generator`` for a function handed to ``Generator``'s ``apply``

    @property
    def spelled(self) -> str:
        return self.wrapper.replace("torch.nn.utils.", "").replace("weight_norm.weight_norm", "weight_norm")

    @property
    def originals(self) -> Tuple[str, ...]:
        return tuple(o.format(self.param) for o in catalog.RECOMPUTED_PARAMETERS[self.wrapper][1])

    @property
    def on_access(self) -> bool:
        return catalog.RECOMPUTED_PARAMETERS[self.wrapper][0] == "access"

    @property
    def _spelled_originals(self) -> str:
        return " and ".join(f"`{o}`" for o in self.originals)

    def message(self, what: str) -> str:
        # plain words: the message names only what the code at the finding spells (the notes name the API)
        where = f"line {self.line}" + (f" of {self.module}" if self.module else "")
        when = "at each read" if self.on_access else "at each forward"
        owner, _, attr = self.receiver.rpartition(".")
        short = self.wrapper.rpartition(".")[2]
        if self.applied_to is not None:
            return (f"{what[:1].upper()}{what[1:]} is lost on the modules `{self.applied_to}` wraps with {short} "
                    f"({where}): it recomputes their `{attr}` {when}")
        return f"`{owner}` is wrapped by {short} ({where}), which recomputes its `{attr}` {when}: {what} is lost"

    def notes(self) -> Tuple[str, str]:
        made = f"`{self.spelled}` computes `{self.param}` from {self._spelled_originals}"
        if self.on_access:
            happens = (f"{made} each time it is read: `{self.receiver}` here is a new tensor, and the write changes "
                       f"only it; the module keeps its values.")
        else:
            happens = (f"{made}, and a forward pre-hook recomputes it before every call: the values written here are "
                       f"gone at the next forward.")
        advice = (f"Initialise the module before wrapping it (the wrapper computes {self._spelled_originals} "
                  f"from the `{self.param}` it finds), or write `{self.originals[-1]}` itself")
        if len(self.originals) == 2:
            advice += f" (it sets the direction only: the norm stays `{self.originals[0]}`'s)"
        return happens, advice + "."


class RecomputedWrites:
    """A mixin for the rules that report writes: ``_recomputed(node, use)`` for a write through
    ``node`` (``X.data``, TAL001), ``_recomputed_write(node)`` for one into ``X`` itself (TAL301)."""

    def _recomputed(self, node: cst.Attribute, use: DataUse) -> Optional[Recomputed]:
        return self._recomputed_receiver(node.value) if use.write in _LOST else None

    def _recomputed_write(self, node: cst.CSTNode) -> Optional[Tuple[Recomputed, str]]:
        """``nn.init.normal_(self.fc.weight)``, ``self.fc.weight.normal_()``, ``self.fc.weight[0] = 1``,
        ``self.fc.weight += d`` (under ``no_grad``): the lost write and how the message names it."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            qualified = self.analysis(TorchNames).qualified(node.func) or ""
            if qualified.startswith("torch.nn.init.") and node.args and node.args[0].keyword is None:
                receiver, what = node.args[0].value, f"`{self.ctx.code_for(node.func)}()`"
            elif node.func.attr.value in catalog.INPLACE_METHODS:
                receiver, what = node.func.value, f"`.{node.func.attr.value}()`"
            else:
                return None
        elif isinstance(node, cst.AugAssign):
            receiver, what = node.target, "augmented assignment"
        elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript):
            receiver, what = node.targets[0].target.value, "item assignment"
        else:
            return None
        found = self._recomputed_receiver(receiver)
        return (found, what) if found is not None else None

    def _recomputed_receiver(self, receiver: cst.BaseExpression) -> Optional[Recomputed]:
        project = self.ctx.project
        if project is None or not isinstance(receiver, cst.Attribute):
            return None
        param, owner = receiver.attr.value, receiver.value
        facts = self.analysis(TensorFacts)
        function, cls = facts.function, facts.current_class
        text = dotted_name(receiver)
        if text is None or function is None:
            return None
        if isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and cls is not None \
                and function.params.params and function.params.params[0].name.value == owner.value.value:
            found = project.wrapped(cls.name, owner.attr.value)  # ``self.conv1.weight``
            if found is not None and found[2] == param:
                return Recomputed(text, found[1], param, found[3], _elsewhere(found[0], project.module), None)
            return None
        if isinstance(owner, cst.Name):
            return self._applied_wrapped(owner.value, param, text, function)
        return None

    def _applied_wrapped(self, name: str, param: str, text: str, function: cst.FunctionDef) -> Optional[Recomputed]:
        """``m.weight`` in a function handed to ``Module.apply`` (``m`` its module parameter) on an
        object of a project class that wraps modules in ``__init__``; not under an ``isinstance`` test
        that excludes every wrapped module's class."""
        if self.ctx.scope is not function:
            return None  # in a nested scope, ``m`` may be another name
        params = function.params.params
        skip = 1 if self.analysis(TensorFacts).current_class is not None else 0
        if len(params) <= skip or params[skip].name.value != name:
            return None
        project = self.ctx.project
        for written, own in self.analysis(AppliedFunctions).classes.get(function.name.value, ()):
            found = project.builds_wrapped(written)
            if own is not None and found is not None and found[0] == project.module \
                    and self.ctx.line(own) < found[3]:
                continue  # ``self.apply(f)`` before ``__init__`` wraps anything: the write reached the weight
            if found is not None and found[2] == param and self._admits(name, found[4]):
                return Recomputed(text, found[1], param, found[3], _elsewhere(found[0], project.module),
                                  written.rpartition(".")[2])
        return None

    def _admits(self, name: str, made: str) -> bool:
        """Whether the tests of the ``if``s around the write admit the wrapped module's class
        (``torch.nn.Conv1d``): an ``isinstance(name, ...)`` of ``torch.nn`` classes must name it, a
        test by class name (``classname.find("Conv") != -1``) must spell a part of it; any test
        excludes a module of unknown class."""
        names = self.analysis(TorchNames)
        short = made.rpartition(".")[2]
        for test in _if_tests(self.ctx.parents):
            kinds = _isinstance_of(test, name)
            if kinds is not None:
                classes = [names.qualified(c) for c in kinds]
                if all(c is not None and c.startswith("torch.nn.") for c in classes) and made not in classes:
                    return False
                continue
            spelled = [t.evaluated_value for t in _strings(test)]
            if spelled and (made == UNKNOWN_MODULE or not any(isinstance(t, str) and t in short for t in spelled)):
                return False
        return True


def _elsewhere(module: str, here: str) -> Optional[str]:
    return module if module != here else None


def _if_tests(parents: Sequence[cst.CSTNode]) -> Iterator[cst.BaseExpression]:
    """The tests of the ``if`` / ``elif`` statements whose body holds the node."""
    for at, parent in enumerate(parents):
        if isinstance(parent, cst.If) and at + 1 < len(parents) and parents[at + 1] is parent.body:
            yield parent.test


def _isinstance_of(test: cst.BaseExpression, name: str) -> Optional[List[cst.BaseExpression]]:
    """The classes of ``isinstance(name, C)`` / ``isinstance(name, (C, D))``; None for another test."""
    if isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2 \
            and dotted_name(test.args[0].value) == name:
        kinds = test.args[1].value
        return [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    return None


def _strings(test: cst.BaseExpression) -> List[cst.SimpleString]:
    found = _Strings()
    walk(test, found)
    return found.strings


class _Strings(cst.CSTVisitor):
    def __init__(self) -> None:
        self.strings: List[cst.SimpleString] = []

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.strings.append(node)
