"""TAL202's checks of what modules save and write beyond one op call in one statement: the pairs
inside an ``nn.Sequential`` (``nn.Tanh(), nn.ReLU(inplace=True)``) and a module bound to a local
name whose call writes its own weight (``nn.Embedding(n, d, max_norm=1.0)``). The facts are
``torch_facts``' (measured by ``tools/saved_for_backward.py``); the rule class mixes this in."""

from __future__ import annotations

from typing import Dict, Optional, Set

import libcst as cst

from ..analysis.graph_use import GraphUse
from ..analysis.order import ScopeOrder
from ..knowledge.torch_facts import SEQUENTIAL, UNKNOWN_MODULE, chain_hazards, module_entry, writes_own_weight
from ..analysis.torchnames import TorchNames
from ..signature import Signature, Source

MESSAGE = "one of the variables needed for gradient computation has been modified by an inplace operation"


def _true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _given(call: cst.Call) -> Set[str]:
    """The keyword arguments ``call`` passes, other than ``None``."""
    return {a.keyword.value for a in call.args
            if a.keyword is not None and not (isinstance(a.value, cst.Name) and a.value.value == "None")}


class ModuleChecks:
    """Mixed into ``SavedTensorInplace``: ``visit_Call`` hands every call to ``_check_module_call``."""

    def _check_module_call(self, node: cst.Call) -> None:
        func = node.func
        last = func.attr.value if func.__class__ is cst.Attribute else func.value if func.__class__ is cst.Name else None
        if last == "Sequential" and self.analysis(TorchNames).qualified(func) == SEQUENTIAL:
            self._check_sequential(node)
        elif node.func.__class__ is cst.Name and node.args:
            self._check_weight_write(node)

    # --- ``nn.Sequential(nn.Tanh(), nn.ReLU(inplace=True))`` ------------------------------------
    def _default(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """What a parameter of the enclosing function holds by default (``act=nn.ReLU(inplace=True)``,
        ``act_layer=nn.ReLU``), as the project index reads held modules; else ``node``."""
        scope = self.ctx.scope
        if isinstance(node, cst.Name) and isinstance(scope, cst.FunctionDef):
            params = scope.params
            return next((p.default for p in (*params.params, *params.kwonly_params)
                         if p.name.value == node.value and p.default is not None), node)
        return node

    def _entry(self, node: cst.BaseExpression) -> str:
        node = self._default(node)
        if not isinstance(node, cst.Call):
            return UNKNOWN_MODULE
        return module_entry(self.analysis(TorchNames).qualified(self._default(node.func)),
                            {a.keyword.value: _true(a.value) for a in node.args if a.keyword is not None},
                            [_true(a.value) for a in node.args if a.keyword is None and not a.star])

    def _check_sequential(self, node: cst.Call) -> None:
        if any(a.keyword is not None or a.star for a in node.args):
            return  # ``nn.Sequential(*layers)``, an ``OrderedDict``: what runs in order is not seen
        elements = [a.value for a in node.args]
        for writer, saver in chain_hazards([self._entry(e) for e in elements]):
            written, saving = elements[writer], elements[saver]
            if self.ctx.reported(written, self.code):
                continue
            member = self._entry(saving).rstrip("!")
            writes = f"{self._entry(written).rstrip('!')}(inplace=True)"
            message = (f"`{self._text(written)}` writes in place the output of `{self._text(saving)}`, "
                       "which that module saved for backward")
            notes = (f"In this `nn.Sequential`, `{self._text(saving)}` (line {self.ctx.cited_line(saving)}) saves its output "
                     f"for its backward and `{self._text(written)}` overwrites it: a backward through the Sequential "
                     f"in training will raise \"{MESSAGE}\".",
                     "Make the later module not in place (`inplace=False`), or put it where nothing saved its input.")
            signature = Signature(self.code, (member, writes), saved="result",
                                  source=Source(requires_grad=True, pending_graph=True))
            self.ctx.report(written, self.code, message, self.severity, [(saving, f"`{member}` saves its output")],
                            signature=signature, notes=notes)

    # --- ``emb = nn.Embedding(n, d, max_norm=1.0)``; ``a = emb.weight @ w``; ``emb(idx)`` --------
    def _local_modules(self) -> Dict[str, cst.Call]:
        """The names this scope binds (once, at its top level) to a ``torch.nn`` module whose call
        writes its own weight in place, with the constructor call."""
        scope = self.ctx.scope
        key = ("weight-writing modules", id(scope))
        if key in self.ctx.memo:
            return self.ctx.memo[key]
        names = self.analysis(TorchNames)
        out: Dict[str, cst.Call] = {}
        bound: Set[str] = set()
        block = scope.body if isinstance(scope, cst.FunctionDef) else scope
        # ``def f(i): return emb(i)`` has a suite of small statements, not a block of lines
        for statement in block.body if isinstance(block, (cst.IndentedBlock, cst.Module)) else [block]:
            for small in statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) \
                    else ():
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)):
                    continue
                name, value = small.targets[0].target.value, small.value
                if name in bound:
                    out.pop(name, None)  # bound twice: which one is called is not known
                elif isinstance(value, cst.Call) and writes_own_weight(names.qualified(value.func), _given(value)):
                    out[name] = value
                bound.add(name)
        self.ctx.memo[key] = out
        return out

    def _check_weight_write(self, node: cst.Call) -> None:
        """``emb(idx)`` with ``emb = nn.Embedding(..., max_norm=...)`` renormalises the rows it looks
        up in ``emb.weight`` in place: an op before it that saved ``emb.weight``, in a graph a later
        ``backward()`` here runs, raises there."""
        made = self._local_modules().get(node.func.value)
        if made is None:
            return
        weight = f"{node.func.value}.weight"
        order, names = self.analysis(ScopeOrder), self.analysis(TorchNames)
        scope = self.ctx.scope
        uses = GraphUse(scope.body if isinstance(scope, cst.FunctionDef) else scope, order, names, [weight])
        saved = uses.saved_before(weight, node)
        if saved is None:
            return
        at = order.position(saved[0])
        saver = next((s for low, high, s in uses.statements if low <= at <= high), None)
        backward = self._backward_of(saver, node) if saver is not None else None
        if backward is None:
            return
        message = (f"`{self._text(node)}` writes `{weight}` in place (`max_norm` renormalises it), "
                   "which an op saved for backward")
        notes = (f"`{self._text(saver)}` (line {self.ctx.cited_line(saver)}) saved `{weight}`: `{self._text(backward)}` "
                 f"(line {self.ctx.cited_line(backward)}) will raise \"{MESSAGE}\".",
                 f"Use `{weight}.clone()` in the op that saves it, or look up before it.")
        signature = Signature(self.code, ("matmul", "embedding_renorm_"), saved="input",
                              source=Source(requires_grad=True, pending_graph=True))
        self.ctx.report(node, self.code, message, self.severity,
                        [(made, "made with `max_norm`: each call renormalises the weight in place")],
                        signature=signature, notes=notes)

    def _backward_of(self, statement: cst.CSTNode, write: cst.CSTNode) -> Optional[cst.Call]:
        """A ``backward()`` after ``write`` of a value computed from what ``statement`` binds."""
        flow = self._flow()
        at, written = flow.order.position(statement), flow.order.position(write)
        derived: Set[str] = set()
        for position, targets, used in flow.assignments:
            if position == at or position > at and used & derived:
                derived |= targets
        return next((call for position, loss, call in flow.backwards if position > written and loss & derived), None)
