"""TAL202 saved-tensor-inplace: an in-place write to a tensor an op saved for a backward still to run."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from ..knowledge import catalog
from ..analysis.alias_model import Mutation, Origin, Relation
from ..analysis.order import ScopeOrder
from ..analysis.graph_use import names_and_calls, names_in as _names_in
from ..knowledge.torch_facts import (kept_through_data, refuses_grad, saves_input, saves_other, saves_result,
                                     shares_version_counter)
from ..analysis.tensors import TensorFacts, target_names
from ..analysis.torchnames import TorchNames, dotted_name, sliced_name
from ..findings import Severity
from ..signature import Signature, Source
from ..walk import significant_children, walk
from .alias_rule import AliasRule
from .base import WRITES, Sites
from .fixkit import UNSAFE, make_fix, replace
from .saved_modules import ModuleChecks

_ADDING = frozenset({"append", "extend", "insert"})  # list methods that make the list hold their argument
_UNSEEN = "\0"  # marks a backward not seen in the project: the finding is a warning
_MESSAGE = "one of the variables needed for gradient computation has been modified by an inplace operation"


class SavedTensorInplace(ModuleChecks, AliasRule):
    """
    ## What it does
    Flags an in-place write to a tensor that an op saved for backward, while the backward that
    needs it is still to run: the result of an op that saves its result (`y = torch.sigmoid(x);
    y += 1`, `torch.exp`, `softmax`, `relu`, ...) or the input of an op that saves its input
    (`h = torch.log(x); x.mul_(2)`), written before a later `backward()` of a loss computed from
    the op's result, inside `forward()` of a module, whose result the caller backpropagates, or in
    a function whose result a caller of the project backpropagates (`loss_of(x).backward()`). Modules
    held as attributes count as what they are (`self.gate = nn.Sigmoid()` saves its output,
    `nn.Linear` its input; `self.act = nn.ReLU(inplace=True)`, also through `nn.Sequential`, a
    constructor default or `m.inplace = True` set later, also by a class holding the module, writes
    its input; `nn.Identity` returns it). Inside an `nn.Sequential`, an in-place module right after
    one that saved its output (`nn.Tanh(), nn.ReLU(inplace=True)`) is reported where it is built. A
    call of `nn.Embedding(..., max_norm=...)` renormalises its weight in place: an op before it that
    saved the weight (`emb.weight @ w`) raises at the backward. A custom `autograd.Function` keeps
    what its `forward` hands to `ctx.save_for_backward`: `Fn.apply(h)` then `h.clamp_(...)`.
    The backward may be the caller's: a function whose result the project backpropagates, also from
    a script's own top-level code (`loss = loss_of(x); loss.backward()`). An op saves a view's
    base too (`a = h[:, :2]; h[:, :2] = torch.sin(a)`: a view shares its base's version counter);
    `torch.mm(w, b)`, `matmul`, `einsum` save their second tensor when the first is in a graph; in a
    loop, an op later in the body saves what the next pass writes (`s += k; outs.append(torch.einsum(
    eq, q, s))`); an element of an `nn.ModuleList` (`self.blocks[i](x)`) saves what its modules save.
    A step of an optimizer between two passes of a retained graph (`fake = G(z)`, then a loop of
    `D(fake)...backward(retain_graph=True)` and `opt_g.step()`) writes parameters `G(z)` saved.
    A later backward of a name bound anew after the step (`loss = model(x)` again) runs the new
    forward's graph, not the retained one.
    A parameter holds a tensor where the project's callers pass one (`f(torch.randn(3))`).
    What `.detach()` makes (`lm(x).detach().clone()`) has no graph: an op on it saves nothing.
    Which ops and modules save or write what is measured with torch itself (`tools/saved_for_backward.py`).
    A graph whose result feeds only ops with integer or boolean results (`argmin`, `argmax`, comparisons)
    or `.detach()` is not backpropagated; a helper that writes its argument only through `.data`
    moves no version counter, so nothing raises (TAL001 or TAL003 reports that write).
    An op that changes only a tensor object's shape, strides or storage (`t_`, `unsqueeze_`,
    `resize_`, `set_`), run on a view or a `.detach()` of the saved tensor, leaves its shape and
    values as they were but moves the version counter they share, so the backward raises all the
    same; the message says so (through `.data` nothing moves; `resize_` on a view of a tensor that
    requires grad raises by itself and is not reported).

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
    # reported at the write, or at the ``backward(retain_graph=True)`` whose graph a step then changes,
    # or in an ``nn.Sequential(...)``, or at the call of a module made with ``max_norm=`` (``saved_modules``)
    sites = WRITES | Sites(calls=frozenset({"Sequential"}), keywords=frozenset({"retain_graph", "max_norm"}))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._scopes: Dict[int, _ScopeFlow] = {}

    def _flow(self) -> "_ScopeFlow":
        scope = self.ctx.scope
        flow = self._scopes.get(id(scope))
        if flow is None:
            flow = self._scopes[id(scope)] = _ScopeFlow(scope, self.analysis(ScopeOrder), self.analysis(TorchNames),
                                                        self.analysis(TensorFacts), self._analysis().self_name)
        return flow

    def _check_write(self, node: cst.CSTNode) -> None:
        mutation = self._mutation_at(node)
        if mutation is None or mutation.untracked or self.ctx.reported(mutation.node, self.code):
            return  # a callee's write through ``.data`` moves no version counter: nothing raises
        roots = self._candidates(mutation)
        views = self._saved_views(mutation)
        if not roots and not views and not self._writes_saved_result(mutation):
            return  # the common case: nothing written was made or read by an op that saves it
        flow = self._flow()
        written_at = flow.finished(mutation.node)  # ``h[:, 0] = torch.log(h[:, 0])``: the log runs first
        analysis = self._analysis()
        savers = itertools.chain(((*s, written_at) for s in self._savers(roots, flow, written_at, mutation)),
                                 ((*s, written_at) for s in self._view_savers(views, flow, written_at)),
                                 self._carried_savers(roots, flow, mutation.node))
        for saver, saved, what, after in savers:
            if analysis.exclusive(mutation.statement, saver.statement):
                continue  # saved under ``if self.training:``, written under ``else``: never both
            pending = self._backprop(flow, saver, after)
            if pending is not None:
                self._report(mutation, saver, saved, what, pending)
                return

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        self._check_module_call(node)
        if node.func.__class__ is cst.Attribute and node.func.attr.value in catalog.BACKWARD_METHODS and any(
                a.keyword is not None and a.keyword.value == "retain_graph" for a in node.args):
            self._check_retained(node)

    def _check_retained(self, kept: cst.Call) -> None:
        """``d_loss.backward(retain_graph=True); opt_d.step(); g_loss.backward()``: the step writes
        the parameters of the modules it updates in place, and a later backward of a value computed
        through one of them before the step needs the parameters that forward saved."""
        analysis = self._analysis()
        if analysis is None or self.ctx.reported(kept, self.code):
            return
        flow = self._flow()
        at = flow.order.position(kept)
        for step_at, optimizer, step in flow.steps:
            modules = analysis.optimizer_links.get(optimizer, set())
            if step_at <= at or not modules:
                continue
            for later_at, names, later in flow.backwards:
                if later_at <= step_at:
                    continue
                through = flow.computed_through(names, later_at, step_at, modules)
                if through is not None:
                    self._report_step(kept, step, later, *through)
                    return
            through = flow.carried_through(kept, step, modules)
            if through is not None:  # the same backward on the loop's next pass
                self._report_step(kept, step, kept, *through)
                return

    def _report_step(self, kept: cst.Call, step: cst.Call, later: cst.Call, module: str, call: cst.Call) -> None:
        line = self.ctx.cited_line
        message = f"`{self._text(step)}` writes parameters that `{self._text(call)}` saved for a later backward"
        notes = (f"`{self._text(kept)}` kept the graph, but `{self._text(later)}` (line {line(later)}) backpropagates "
                 f"through `{self._text(call)}` (line {line(call)}), computed before the step (line {line(step)}): "
                 f"that forward saved the parameters of `{module}` for backward, so it will raise \"{_MESSAGE}\".",
                 "Step after the last backward that needs the graph, or compute the second loss after the step.")
        related = [(step, "the step writes the parameters in place"), (call, f"`{module}` saved its parameters here")]
        signature = Signature(self.code, ("step",), saved="input", source=Source(requires_grad=True, pending_graph=True))
        self.ctx.report(kept, self.code, message, self.severity, related, signature=signature, notes=notes)

    def _candidates(self, mutation: Mutation) -> List[Origin]:
        """The roots of what is written (through plain names and views only: through ``.detach()``,
        ``.data`` or a conversion TAL201, TAL001 and TAL301 say it) that an op which saves may
        have saved: a result of such an op, or a name handed to one (``AliasAnalysis.saving_calls``)."""
        names, saving, facts = self.analysis(TorchNames), self._analysis().saving_calls, self.analysis(TensorFacts)
        out = []
        # an op that changes only the written object's shape moves the version counter a
        # ``.detach()`` shares too, and TAL201 leaves it here (no value of the source changes)
        through = (Relation.PLAIN, Relation.VIEW) + tuple(
            r for r in (Relation.DETACH, Relation.DATA) if mutation.metadata and shares_version_counter(r.value))
        for origin in mutation.ordered_origins():
            chain = origin.chain()
            root = chain[0]
            if any(o.relation not in through for o in chain[1:]) \
                    or root.relation not in (Relation.ENTRY, Relation.FRESH):
                continue
            owner = self._analysis().self_name
            if root.source in saving or (isinstance(root.node, cst.Call) and _saves_result(root.node, names, facts, owner)):
                out.append(root)
        return out

    def _alias_only(self, mutation: Mutation) -> Optional[str]:
        """The written name where the write is a metadata op on another tensor object than the
        saved one (``v = y.view(-1); v.t_()``): None for a value write or one on the object itself."""
        if mutation.target is None or not any(not mutation.reaches(o.root, o) for o in mutation.origins):
            return None
        return self._text(mutation.target)

    def _writes_saved_result(self, mutation: Mutation) -> bool:
        """The write's target is a call of an op or held module that saves its result."""
        return isinstance(mutation.target, cst.Call) \
            and _saves_result(mutation.target, self.analysis(TorchNames), self.analysis(TensorFacts),
                               self._analysis().self_name)

    def _saved_views(self, mutation: Mutation) -> List[Tuple[str, cst.Call]]:
        """Views of what is written (``a = h[:, :2]``) handed to an op that saves its input
        (``torch.sin(a)``): a view shares its base's version counter, so writing the base, any part
        of it, changes what the op saved. (name of the view, the op call)."""
        analysis = self._analysis()
        written = {id(o.chain()[0]) for o in mutation.ordered_origins()
                   if all(x.relation in (Relation.PLAIN, Relation.VIEW) for x in o.chain()[1:])}
        out = []
        for name, calls in analysis.saving_calls.items() if written else ():
            for call in calls:
                read = _read_name(call, self.analysis(TorchNames))
                if read is not None and any(
                        id(o.chain()[0]) in written and Relation.VIEW in o.relations()
                        and all(x.relation in (Relation.PLAIN, Relation.VIEW) for x in o.chain()[1:])
                        for o in analysis.origins_at(read)):
                    out.append((name, call))
        return out

    @staticmethod
    def _view_savers(views: List[Tuple[str, cst.Call]], flow: "_ScopeFlow", written_at: int):
        for name, call in views:
            op = flow.ops.get(id(call))
            if op is not None and (op.saves_input or name in op.others) and not op.constant and not op.grad_off \
                    and op.position < written_at:
                yield op, name, "view"

    def _savers(self, roots: List[Origin], flow: "_ScopeFlow", written_at: int, mutation: Mutation):
        """The op calls before the write that saved what it writes: (op call, saved tensor's text,
        "result" or "input")."""
        own = flow.order.position(mutation.statement)
        if self._writes_saved_result(mutation):  # ``self.drop(self.act(h))``: no name in between
            op = flow.ops.get(id(mutation.target))
            if op is not None and op.saves_result and not op.grad_off and not op.constant:
                yield op, self._text(mutation.target), "result"
        for root in roots:
            call = root.node
            if root.relation is Relation.FRESH and isinstance(call, cst.Call):
                op = flow.ops.get(id(call))
                if op is not None and op.saves_result and not op.grad_off and not op.constant \
                        and op.position < written_at:
                    yield op, root.source, "result"
            for op in flow.calls_on(root.source, written_at, own) + flow.calls_with(call, written_at):
                if op.call is mutation.node or op.constant:
                    continue
                if op.saves_input:
                    yield op, root.source, "input"
                elif op.inplace and op.saves_result:  # ``self.act = nn.ReLU(inplace=True)`` keeps what it wrote
                    yield op, root.source, "result"
            for op in flow.calls_on(root.source, written_at, own, other=True):
                yield op, root.source, "other"

    @staticmethod
    def _carried_savers(roots: List[Origin], flow: "_ScopeFlow", write: cst.CSTNode):
        """``for ...: s += k; out.append(torch.einsum(eq, q, s))``: an op later in the loop body saved
        the tensor the next iteration writes (the name is bound to no other in the loop, and no
        backward in the loop consumes the graph first). The backward that raises comes after the loop:
        (op, saved name, what, the loop's end)."""
        for root in roots:
            for op, what, end in flow.carried(root.source, write):
                yield op, root.source, what, end

    def _backprop(self, flow: "_ScopeFlow", op: "_Op", written_at: int) -> Optional[str]:
        """Where the graph that holds the op is backpropagated: a later ``backward()`` here of a
        loss computed from the op's result, or the caller's, through the result of ``forward()``."""
        for at, names, call in flow.backwards:
            if at > written_at and names & flow.derived(op, at):
                return f"`{self._text(call)}` (line {self.ctx.cited_line(call)})"
        facts = self.analysis(TensorFacts)
        function, cls = facts.function, facts.current_class
        if function is None or not (isinstance(op.statement, cst.Return)
                                    or any(names & flow.derived(op, at) for at, names in flow.returns)):
            return None
        if function.name.value == "forward" and cls is not None and cls.is_module and op.input_from_self:
            return "the caller's `backward()` through this `forward()`'s result"
        project, name = self.ctx.project, facts.function_qualname
        if project is not None and name is not None:  # ``def loss_of(x): ...; return y.sum()``, ``loss_of(x).backward()``
            qualname = f"{project.module}.{name}" if project.module else name
            where = project.index.backpropagated(qualname)
            if where is not None:
                return f"the backward that {where} runs on this function's result"
            forward = project.index.reaches_forward(qualname)
            if forward is not None:  # no backward seen: the module's caller runs it (a warning)
                return f"{_UNSEEN}the caller's `backward()` through {forward}, whose result is computed from this one,"
        return None

    def _report(self, mutation: Mutation, op: "_Op", saved: str, what: str, pending: str) -> None:
        severity = Severity.WARNING if pending.startswith(_UNSEEN) else self.severity
        pending = pending.lstrip(_UNSEEN)
        written = self._text(mutation.node)
        saver = self._text(op.call)
        role = "its result" if what == "result" else "its input"
        name = {"result": op.saves_result, "other": op.saves_other}.get(what) or op.saves_input or op.saves_other
        # a project helper that calls the op (``squash(x)`` around ``sigmoid``) is named as called
        # (``Cube.apply(h)``, a custom ``autograd.Function``, is named by its class too)
        shown = name if name in saver and name != "apply" or not isinstance(op.call, cst.Call) \
            else self._text(op.call.func)
        advice = (f"Make `{self._text(mutation.node.func)}` not in place (`inplace=False`) or pass it `{saved}.clone()`."
                  if mutation.op.endswith("(inplace=True)") and isinstance(mutation.node, cst.Call)
                  else f"Compute out of place (`{saved} = {saved} + ...`) or write into `{saved}.clone()`." if what != "view"
                  else f"Save a copy (`{saved}.clone()`) or build the result out of place (`torch.cat`), not in its base.")
        message = f"`{written}` writes `{saved}` in place, which `{shown}` saved for backward" if what != "view" else \
            f"`{written}` writes the memory of `{saved}`, a view that `{shown}` saved for backward"
        alias = self._alias_only(mutation)
        if alias is not None and refuses_grad(mutation.op) and not any(o.find(Relation.DETACH) for o in mutation.origins):
            return  # ``y.view(-1).resize_(n)`` raises by itself ("cannot resize variables that require grad")
        if alias is not None:  # measured: the version counter moves, no value or shape of the saved tensor
            message = (f"`{written}` changes only `{alias}`'s shape, but moves the version counter it shares "
                       f"with `{saved}`, which `{shown}` saved for backward")
            args = ", ".join(self._text(a.value) for a in mutation.node.args) if isinstance(mutation.node, cst.Call) else ""
            advice = (f"Reshape out of place (`{alias} = {alias}.{mutation.op[:-1]}({args})`)."
                      if kept_through_data(mutation.op) == "shape and strides" else
                      f"Bind a new tensor to `{alias}` instead of `{mutation.op}` on it.")
        again = ", and the loop's next pass writes it" if op.position > self._flow().order.position(mutation.node) else ""
        notes = (f"`{saver}` (line {self.ctx.cited_line(op.call)}{again}) saved {role}: {pending} will raise \"{_MESSAGE}\".",
                 advice)
        related = [(op.call, f"`{name}` saves {role} for backward")]
        signature = Signature(self.code, (name, mutation.op), saved="result" if what == "result" else "input",
                              source=Source(requires_grad=True, pending_graph=True))
        self.ctx.report(mutation.node, self.code, message, severity, related,
                        fix=lambda ctx, node=mutation.node: out_of_place_fix(ctx, node), signature=signature,
                        notes=notes)


@dataclass
class _Op:
    call: cst.Call
    # what it saves for backward, by the op's name (``sigmoid``, as ``saved_ops`` keys it, or the held
    # module's class, ``Sigmoid``): its result, its first input
    saves_result: Optional[str]
    saves_input: Optional[str]
    position: int
    first: Optional[str]  # the dotted name of its first tensor input, if a name
    statement_targets: Set[str]  # what the statement holding the call binds (its result flows there)
    filled: Set[str]  # what the statement writes the result into (``h[:, 0] = torch.log(h[:, 0])``)
    grad_off: bool  # under ``torch.no_grad()``: nothing is saved
    constant: bool  # its input is made by a factory (``torch.randn(...).softmax(-1)``): no graph, nothing saved
    input_from_self: bool  # the input is computed from ``self`` (a submodule's output, a parameter)
    statement: Optional[cst.CSTNode] = None  # the statement holding the call (its path conditions)
    inplace: bool = False  # a held module that writes its input (then what it saves is that input)
    # ``torch.mm(w, b)``: the op's name and the names of the tensors after the first, which it saves
    # when the first requires grad (not a constant: ``_graph_free``)
    saves_other: Optional[str] = None
    others: Tuple[str, ...] = ()


class _ScopeFlow(cst.CSTVisitor):
    """One scope's op calls that save tensors, its assignments in order (what is computed from
    what), its backward calls and its returns."""

    def __init__(self, scope: cst.CSTNode, order: ScopeOrder, names: TorchNames, facts: TensorFacts,
                 owner: Optional[str] = None) -> None:
        self.order, self.names, self.facts = order, names, facts
        self.owner = owner  # the method's ``self``: ``self.norm(x)`` is no tensor op
        self.ops: Dict[int, _Op] = {}
        self.assignments: List[Tuple[int, Set[str], Set[str]]] = []  # (position, targets, names used)
        self.returns: List[Tuple[int, Set[str]]] = []
        self.backwards: List[Tuple[int, Set[str], cst.Call]] = []
        self.steps: List[Tuple[int, str, cst.Call]] = []  # ``<optimizer>.step()``: position, the receiver
        self.callees: Dict[int, List[cst.Call]] = {}  # an assignment's position -> the calls in its value
        self.loops: List[cst.CSTNode] = []  # ``for`` and ``while`` statements, outer first
        self._augmented: Set[int] = set()  # positions of ``x += v``: a write of a tensor, not a new binding
        self._statement: Optional[cst.CSTNode] = None
        # ``@torch.no_grad()``: nothing is saved
        self._no_grad = int(isinstance(scope, cst.FunctionDef) and names.decorated_grad_off(scope))
        self._self_names: Set[str] = set()  # names computed from ``self``
        self._constants: Set[str] = set()  # names bound to a tensor no graph is behind (``torch.randn(...)``)
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

    def visit_For(self, node: cst.CSTNode) -> None:
        self.loops.append(node)

    visit_While = visit_For

    def leave_With(self, node: cst.With) -> None:
        self._no_grad -= self.names.disables_grad(node)

    def _bind(self, node: cst.CSTNode, targets: Set[str], value: Optional[cst.CSTNode]) -> None:
        used, calls = names_and_calls(value, self.names) if value is not None else (set(), [])
        if value is not None and self._graph_free(value):
            self._constants |= targets
        else:
            self._constants -= targets
        self.assignments.append((self.order.position(node), targets, used))
        if calls:
            self.callees[self.assignments[-1][0]] = calls
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
        self._augmented.add(self.assignments[-1][0])

    def visit_Return(self, node: cst.Return) -> None:
        self._statement = node
        if node.value is not None:
            self.returns.append((self.order.position(node), _names_in(node.value)))

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement = node
        call = node.value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) \
                and call.func.attr.value in _ADDING:  # ``outs.append(y)``: ``outs`` holds ``y`` from now on
            self._bind(node, {call.func.value.value}, call)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if func.__class__ is cst.Attribute and func.attr.value in catalog.BACKWARD_METHODS:
            receiver = func.value
            used = _names_in(node.args[0].value) if node.args and node.args[0].keyword is None else set()
            self.backwards.append((self.order.position(node), used | _names_in(receiver), node))
            return
        if func.__class__ is cst.Attribute and func.attr.value == "step":
            key = dotted_name(func.value)
            if key is not None:
                self.steps.append((self.order.position(node), key, node))
        held = self.facts.held_module(node.func)  # ``self.gate(x)``, ``self.gate = nn.Sigmoid()``
        others: Tuple[str, ...] = ()
        if held is not None:
            saves = (held.result_op, held.input_op)
            first = node.args[0].value if node.args and node.args[0].keyword is None else None
        elif func.__class__ is cst.Attribute and func.attr.value == "apply" and self.facts.project is not None:
            kept = self.facts.project.apply_saves(dotted_name(func.value) or "")  # ``Cube.apply(h)``
            saves = (None, "apply" if kept and kept[0] < len(node.args) else None)
            first = node.args[kept[0]].value if saves[1] else None
        else:
            name, first = self.names.tensor_op(node, self.owner)
            saves = (name if saves_result(name) else None, name if saves_input(name) else None)
            others = self._others(node, name)
        if not any(saves) and not others:
            return
        statement = self._statement
        targets: Set[str] = set()
        filled: Set[str] = set()  # ``h[:, 0] = op(...)``: the result is written into ``h``
        if isinstance(statement, cst.Expr) and self.assignments and \
                self.assignments[-1][0] == self.order.position(statement):
            targets = self.assignments[-1][1]  # ``outs.append(torch.einsum(...))``
        if isinstance(statement, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = self.assignments[-1][1]
            ends = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
            filled = {n for n in map(sliced_name, ends) if n is not None} - targets
        first_name = sliced_name(first) if first is not None else None
        from_self = first is not None and self._self is not None and bool(
            _names_in(first) & ({self._self} | self._self_names)) or held is not None and held.trained
        constant = held is None and first is not None and self._graph_free(first)
        self.ops[id(node)] = _Op(node, *saves, self.order.position(node), first_name, targets, filled,
                                 self._no_grad > 0, constant, from_self, statement,
                                 held is not None and held.writes_input, name if others else None, others)

    def _others(self, node: cst.Call, name: Optional[str]) -> Tuple[str, ...]:
        """The names of the tensors after the first that ``node`` saves (``saves_other``), when the
        first is not a constant (``torch.mm(self.w, b)`` keeps ``b`` for ``self.w``'s gradient)."""
        if not saves_other(name):
            return ()
        operands = self.names.other_operands(node)
        first = self.names.op(node)[1]
        if name == "einsum":  # ``einsum(eq, q, s)``: ``q`` comes after the equation
            first = next((a.value for a in node.args[1:2] if a.keyword is None), None) if operands else None
        if first is None or self._graph_free(first):
            return ()
        return tuple(n for n in map(sliced_name, operands) if n is not None)

    # questions
    def _graph_free(self, node: cst.CSTNode) -> bool:
        """A value made by a ``torch`` factory with no ``requires_grad`` (``torch.randn(n)``), or by
        ``.detach()`` (``lm(x).detach().clone()``), and what methods make of it: no graph is behind it, so no op on it saves anything. Also what
        torch functions, arithmetic and comparisons make of such values and numbers
        (``torch.where(m == 1, m, torch.tensor(-inf))``, ``torch.cat((zeros, eye), 1)``)."""
        while True:
            if isinstance(node, cst.Name):
                return node.value in self._constants
            if isinstance(node, cst.Subscript):
                node = node.value
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and self.names.qualified(node.func) is None:
                if node.func.attr.value == "requires_grad_":
                    return False
                if node.func.attr.value in catalog.GRAPH_CUTTING_METHODS:
                    return True  # ``m(x).detach().clone()``: no graph behind what it makes
                node = node.func.value
            elif isinstance(node, cst.Call):
                q = self.names.qualified(node.func) or ""
                head, _, member = q.rpartition(".")
                if any(a.keyword is not None and a.keyword.value == "requires_grad" for a in node.args):
                    return False
                if head == "torch" and member in catalog.GRAPH_FREE_FACTORIES:
                    return True
                return head in ("torch", "torch.nn.functional") and bool(node.args) and all(
                    a.keyword is not None or self._graph_free(a.value) for a in node.args)
            elif isinstance(node, (cst.Tuple, cst.List)):
                return all(isinstance(e, cst.Element) and self._graph_free(e.value) for e in node.elements)
            elif isinstance(node, cst.BinaryOperation):
                return self._graph_free(node.left) and self._graph_free(node.right)
            elif isinstance(node, cst.UnaryOperation):
                node = node.expression
            else:  # a comparison's result is boolean: it carries no graph
                return isinstance(node, (cst.Integer, cst.Float, cst.Comparison))

    def finished(self, node: cst.CSTNode) -> int:
        """The position of the last node of ``node``'s subtree: where ``node`` is done running
        (the arguments and the value of a write run before the write itself)."""
        at, stack, position = -1, [node], self.order.position
        while stack:  # the order numbers no trivia: only the significant children can hold the last
            part = stack.pop()
            at = max(at, position(part))
            stack.extend(significant_children(part))
        return at

    def calls_on(self, name: str, before: int, own: int = -1, other: bool = False) -> List[_Op]:
        """Op calls on ``name`` (``other``: as a tensor after the first, ``torch.mm(w, name)``) before
        ``before``, with ``name`` not bound anew in between (by the op's own statement either:
        ``h = torch.sin(h)`` saves the old ``h``; the statement at ``own``, which holds the write,
        binds after it: ``x = self.act(x)``)."""
        out = []
        for op in self.ops.values():
            if (name in op.others if other else op.first == name) and not op.grad_off and op.position < before \
                    and (name not in op.statement_targets or isinstance(op.statement, cst.AugAssign)) \
                    and not any(op.position < at < before and at != own and name in targets
                                for at, targets, _ in self.assignments):
                out.append(op)
        return out

    def calls_with(self, made: Optional[cst.CSTNode], before: int) -> List[_Op]:
        """Op calls before ``before`` whose first argument is the expression ``made`` itself
        (``self.drop(self.act(h))``: what ``self.act`` saved is what ``self.drop`` gets)."""
        return [op for op in self.ops.values() if made is not None and op.position < before and not op.grad_off
                and op.call.args and op.call.args[0].value is made]

    def carried(self, name: str, write: cst.CSTNode) -> List[Tuple[_Op, str, int]]:
        """Op calls after ``write`` in the innermost loop around it that save ``name`` for the
        next iteration's write: (op, "input" or "other", the loop's end)."""
        at = self.order.position(write)
        loop = next((lp for lp in reversed(self.loops) if self.order.position(lp) < at <= self.finished(lp)), None)
        if loop is None:
            return []
        start, end = self.order.position(loop), self.finished(loop)
        if any(start < b < end for b, _, _ in self.backwards) or any(
                start <= p <= end and name in targets and p not in self._augmented for p, targets, _ in self.assignments):
            return []  # a backward in the loop consumes the graph, or ``name`` is bound anew each time
        out = []
        for op in self.ops.values():
            if at < op.position <= end and not op.grad_off and not op.constant:
                if op.first == name and op.saves_input:
                    out.append((op, "input", end))
                elif name in op.others:
                    out.append((op, "other", end))
        return out

    def carried_through(self, kept: cst.Call, step: cst.Call,
                        modules: Set[str]) -> Optional[Tuple[str, cst.Call]]:
        """``fake = G(z)``, then a loop that runs ``D(fake)...backward(retain_graph=True)`` and steps
        G's optimizer: the next pass backpropagates again through ``G(z)``, made before the loop,
        whose saved parameters the step wrote. A call of one of ``modules`` before the loop that the
        backward's values come from, through names the loop does not bind anew: (module, call)."""
        at = self.order.position(kept)
        loop = next((lp for lp in reversed(self.loops) if self.order.position(lp) < at <= self.finished(lp)), None)
        if loop is None or not self.order.position(loop) < self.order.position(step) <= self.finished(loop):
            return None
        start, end = self.order.position(loop), self.finished(loop)
        needed = set(next(names for b, names, call in self.backwards if call is kept))
        for position, targets, used in reversed(self.assignments):
            if position >= at or not targets & needed:
                continue
            if position > start:
                needed = (needed - targets) | used  # bound in this pass: the value of this pass
                continue
            needed -= {t for p, ts, _ in self.assignments if start < p <= end for t in ts}  # bound anew later
            for call in self.callees.get(position, ()) if targets & needed else ():
                callee = dotted_name(call.func) or ""
                module = next((m for m in modules if callee == m or callee.startswith(m + ".")), None)
                if module is not None:
                    return module, call
            needed = (needed - targets) | used
        return None

    def computed_through(self, names: Set[str], until: int, before: int,
                         modules: Set[str]) -> Optional[Tuple[str, cst.Call]]:
        """A call of one of ``modules`` (``D(x)``, ``self.net.encoder(h)``) made before ``before``
        in an assignment whose result ``names`` (read at ``until``) are computed from: (module, call).
        The latest binding of a name before ``until`` is what it holds there: an earlier one is
        not followed (``loss = D(x)`` before the step, ``loss = D(x)`` again after it)."""
        needed = set(names)
        for at, targets, used in reversed(self.assignments):
            if at >= until or not targets & needed:
                continue
            needed = (needed - targets) | used
            for call in self.callees.get(at, ()) if at < before else ():
                callee = dotted_name(call.func) or ""
                module = next((m for m in modules if callee == m or callee.startswith(m + ".")), None)
                if module is not None:
                    return module, call
        return None

    def derived(self, op: _Op, until: int) -> Set[str]:
        """The names computed (after the op, before ``until``) from its result."""
        out = op.statement_targets | op.filled
        for at, targets, used in self.assignments:
            if op.position < at < until and used & out:
                out |= targets
        return out


def _read_name(call: cst.Call, names: TorchNames) -> Optional[cst.Name]:
    """The name read as a call's first input: ``a`` in ``torch.sin(a)``, ``a[0].sin()``, ``self.fc(a)``."""
    node = names.op(call)[1]
    if node is None and call.args and call.args[0].keyword is None:
        node = call.args[0].value
    while isinstance(node, cst.Subscript):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def _saves_result(call: cst.Call, names: TorchNames, facts: TensorFacts, owner: Optional[str]) -> bool:
    """Whether the op or the held module ``call`` calls saves its result for backward."""
    held = facts.held_module(call.func)
    return held.saves_result if held is not None else saves_result(names.tensor_op(call, owner)[0])


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
