"""TAL202 saved-tensor-inplace: an in-place write to a tensor an op saved for a backward still to run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from ..analysis import catalog
from ..analysis.alias_model import Mutation, Origin, Relation
from ..analysis.order import ScopeOrder
from ..analysis.graph_use import names_in as _names_in
from ..analysis.torch_facts import saves_for_backward, saves_input, saves_result
from ..analysis.tensors import TensorFacts, target_names
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Severity
from ..signature import Signature, Source
from ..walk import walk
from .alias_rule import AliasRule
from .base import WRITES
from .fixkit import UNSAFE, make_fix, replace

_MESSAGE = "one of the variables needed for gradient computation has been modified by an inplace operation"


class SavedTensorInplace(AliasRule):
    """
    ## What it does
    Flags an in-place write to a tensor that an op saved for backward, while the backward that
    needs it is still to run: the result of an op that saves its result (`y = torch.sigmoid(x);
    y += 1`, `torch.exp`, `softmax`, `relu`, ...) or the input of an op that saves its input
    (`h = torch.log(x); x.mul_(2)`), written before a later `backward()` of a loss computed from
    the op's result, or inside `forward()` of a module, whose result the caller backpropagates.
    Which ops save what is measured with torch itself (`tools/saved_for_backward.py`). A graph
    whose result feeds only ops with integer or boolean results (`argmin`, `argmax`, comparisons)
    or `.detach()` is not backpropagated; a helper that writes its argument only through `.data`
    moves no version counter, so nothing raises (TAL001 or TAL003 reports that write).

    ## Why is this bad?
    The op's backward needs the saved values, and autograd's version counter notices that they
    changed, but only when `backward()` runs, often hours into a run: `RuntimeError: one of the
    variables needed for gradient computation has been modified by an inplace operation`. Under
    `torch.compile` the same code fails at the first forward call instead.

    ## Example
    ```python
    import torch

    def gate_loss(logits: torch.Tensor, target: torch.Tensor):
        gate = torch.sigmoid(logits)
        gate += 1e-6              # sigmoid saved `gate` for its backward
        loss = (gate - target).pow(2).mean()
        loss.backward()           # RuntimeError: ... modified by an inplace operation
    ```

    ## Use instead
    ```python
    import torch

    def gate_loss(logits: torch.Tensor, target: torch.Tensor):
        gate = torch.sigmoid(logits)
        gate = gate + 1e-6        # a new tensor; the saved one is untouched
        loss = (gate - target).pow(2).mean()
        loss.backward()
    ```
    or `.clone()` the saved tensor before writing into the clone.
    """

    code = "TAL202"
    severity = Severity.ERROR
    summary = "in-place write to a tensor an op saved for backward, before that backward runs"
    sites = WRITES  # reported at the write

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._scopes: Dict[int, _ScopeFlow] = {}

    def _flow(self) -> "_ScopeFlow":
        scope = self.ctx.scope
        flow = self._scopes.get(id(scope))
        if flow is None:
            flow = self._scopes[id(scope)] = _ScopeFlow(scope, self.analysis(ScopeOrder), self.analysis(TorchNames))
        return flow

    def _check_write(self, node: cst.CSTNode) -> None:
        mutation = self._mutation_at(node)
        if mutation is None or mutation.untracked or self.ctx.reported(mutation.node, self.code):
            return  # a callee's write through ``.data`` moves no version counter: nothing raises
        roots = self._candidates(mutation)
        if not roots:
            return  # the common case: nothing written was made or read by an op that saves it
        flow = self._flow()
        written_at = flow.order.position(mutation.node)
        analysis = self._analysis()
        for saver, saved, what in self._savers(roots, flow, written_at):
            if analysis.exclusive(mutation.statement, saver.statement):
                continue  # saved under ``if self.training:``, written under ``else``: never both
            pending = self._backprop(flow, saver, written_at)
            if pending is not None:
                self._report(mutation, saver, saved, what, pending)
                return

    def _candidates(self, mutation: Mutation) -> List[Origin]:
        """The roots of what is written (through plain names and views only: through ``.detach()``,
        ``.data`` or a conversion TAL201, TAL001 and TAL301 say it) that an op which saves may
        have saved: a result of such an op, or a name handed to one (``AliasAnalysis.saving_calls``)."""
        names, saving = self.analysis(TorchNames), self._analysis().saving_calls
        out = []
        for origin in mutation.ordered_origins():
            chain = origin.chain()
            root = chain[0]
            if any(o.relation not in (Relation.PLAIN, Relation.VIEW) for o in chain[1:]) \
                    or root.relation not in (Relation.ENTRY, Relation.FRESH):
                continue
            if root.source in saving or (isinstance(root.node, cst.Call) and saves_result(names.op(root.node)[0])):
                out.append(root)
        return out

    def _savers(self, roots: List[Origin], flow: "_ScopeFlow", written_at: int):
        """The op calls before the write that saved what it writes: (op call, saved tensor's text,
        "result" or "input")."""
        for root in roots:
            call = root.node
            if root.relation is Relation.FRESH and isinstance(call, cst.Call):
                op = flow.ops.get(id(call))
                if op is not None and saves_result(op.name) and not op.grad_off and op.position < written_at:
                    yield op, root.source, "result"
            for op in flow.calls_on(root.source, written_at):
                if saves_input(op.name):
                    yield op, root.source, "input"

    def _backprop(self, flow: "_ScopeFlow", op: "_Op", written_at: int) -> Optional[str]:
        """Where the graph that holds the op is backpropagated: a later ``backward()`` here of a
        loss computed from the op's result, or the caller's, through the result of ``forward()``."""
        for at, names, call in flow.backwards:
            if at > written_at and names & flow.derived(op, at):
                return f"`{self._text(call)}` (line {self.ctx.line(call)})"
        facts = self.analysis(TensorFacts)
        function, cls = facts.function, facts.current_class
        if function is not None and function.name.value == "forward" and cls is not None and cls.is_module \
                and op.input_from_self and any(names & flow.derived(op, at) for at, names in flow.returns):
            return "the caller's `backward()` through this `forward()`'s result"
        return None

    def _report(self, mutation: Mutation, op: "_Op", saved: str, what: str, pending: str) -> None:
        written = self._text(mutation.node)
        saver = self._text(op.call)
        role = "its result" if what == "result" else "its input"
        # a project helper that calls the op (``squash(x)`` around ``sigmoid``) is named as called
        name = op.name if op.name in saver or not isinstance(op.call, cst.Call) else self._text(op.call.func)
        message = f"`{written}` writes `{saved}` in place, which `{name}` saved for backward"
        notes = (f"`{saver}` (line {self.ctx.line(op.call)}) saved {role}: {pending} will raise \"{_MESSAGE}\".",
                 f"Compute out of place (`{saved} = {saved} + ...`) or write into `{saved}.clone()`.")
        related = [(op.call, f"`{op.name}` saves {role} for backward")]
        signature = Signature(self.code, (op.name, mutation.op), saved=what,
                              source=Source(requires_grad=True, pending_graph=True))
        self.ctx.report(mutation.node, self.code, message, self.severity, related,
                        fix=lambda ctx, node=mutation.node: out_of_place_fix(ctx, node), signature=signature,
                        notes=notes)


@dataclass
class _Op:
    call: cst.Call
    name: str  # the member name (``sigmoid``), as ``saved_ops`` keys it
    position: int
    first: Optional[str]  # the dotted name of its first tensor input, if a name
    statement_targets: Set[str]  # what the statement holding the call binds (its result flows there)
    grad_off: bool  # under ``torch.no_grad()``: nothing is saved
    input_from_self: bool  # the input is computed from ``self`` (a submodule's output, a parameter)
    statement: Optional[cst.CSTNode] = None  # the statement holding the call (its path conditions)


class _ScopeFlow(cst.CSTVisitor):
    """One scope's op calls that save tensors, its assignments in order (what is computed from
    what), its backward calls and its returns."""

    def __init__(self, scope: cst.CSTNode, order: ScopeOrder, names: TorchNames) -> None:
        self.order, self.names = order, names
        self.ops: Dict[int, _Op] = {}
        self.assignments: List[Tuple[int, Set[str], Set[str]]] = []  # (position, targets, names used)
        self.returns: List[Tuple[int, Set[str]]] = []
        self.backwards: List[Tuple[int, Set[str], cst.Call]] = []
        self._statement: Optional[cst.CSTNode] = None
        self._no_grad = 0
        self._self_names: Set[str] = set()  # names computed from ``self``
        self._self = scope.params.params[0].name.value \
            if isinstance(scope, cst.FunctionDef) and scope.params.params else None
        walk(scope.body if isinstance(scope, cst.FunctionDef) else scope, self)
        self.assignments.sort(key=lambda a: a[0])

    # what runs where
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

    def visit_With(self, node: cst.With) -> None:
        self._no_grad += self.names.disables_grad(node)

    def leave_With(self, node: cst.With) -> None:
        self._no_grad -= self.names.disables_grad(node)

    def _bind(self, node: cst.CSTNode, targets: Set[str], value: Optional[cst.CSTNode]) -> None:
        used = _names_in(value, self.names) if value is not None else set()
        self.assignments.append((self.order.position(node), targets, used))
        if self._self is not None and (self._self in used or used & self._self_names):
            self._self_names |= targets

    def visit_Assign(self, node: cst.Assign) -> None:
        self._statement = node
        targets = {n for t in node.targets for n in target_names(t.target)}
        self._bind(node, targets, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._statement = node
        self._bind(node, set(target_names(node.target)), node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._statement = node
        self._bind(node, set(target_names(node.target)), node.value)

    def visit_Return(self, node: cst.Return) -> None:
        self._statement = node
        if node.value is not None:
            self.returns.append((self.order.position(node), _names_in(node.value)))

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement = node

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if func.__class__ is cst.Attribute and func.attr.value in catalog.BACKWARD_METHODS:
            receiver = func.value
            used = _names_in(node.args[0].value) if node.args and node.args[0].keyword is None else set()
            self.backwards.append((self.order.position(node), used | _names_in(receiver), node))
            return
        name, first = self.names.op(node)
        if not saves_for_backward(name):
            return
        statement = self._statement
        targets: Set[str] = set()
        if isinstance(statement, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = self.assignments[-1][1]
        first_name = dotted_name(first) if first is not None else None
        from_self = first is not None and self._self is not None and bool(
            _names_in(first) & ({self._self} | self._self_names))
        self.ops[id(node)] = _Op(node, name, self.order.position(node), first_name, targets, self._no_grad > 0,
                                 from_self, statement)

    # questions
    def calls_on(self, name: str, before: int) -> List[_Op]:
        """Op calls on ``name`` before ``before``, with ``name`` not bound anew in between."""
        out = []
        for op in self.ops.values():
            if op.first == name and not op.grad_off and op.position < before and not any(
                    op.position < at < before and name in targets for at, targets, _ in self.assignments):
                out.append(op)
        return out

    def derived(self, op: _Op, until: int) -> Set[str]:
        """The names computed (after the op, before ``until``) from its result."""
        out = set(op.statement_targets)
        for at, targets, used in self.assignments:
            if op.position < at < until and used & out:
                out |= targets
        return out


def out_of_place_fix(ctx, node: cst.CSTNode):
    """``y += v`` -> ``y = y + v`` on a bare name (unsafe: what the program computes changes, which is
    the point: backward no longer raises, and other names of the old tensor keep its values)."""
    if not (isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name)):
        return None
    symbol = ctx.code_for(node.operator).strip()[:-1]  # ``+=`` -> ``+``
    name = node.target.value
    value = ctx.code_for(node.value).strip()
    if not isinstance(node.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)):
        value = f"({value})"
    return make_fix(UNSAFE, f"Write `{name} = {name} {symbol} ...` (a new tensor, the saved one untouched)",
                    replace(ctx, node, f"{name} = {name} {symbol} {value}"),
                    because="other names of the old tensor keep its values, and backward no longer raises")
