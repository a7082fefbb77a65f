"""TAL401 stale-snapshot: a snapshot of live state kept across an update of that state."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from ..knowledge import catalog
from ..analysis.alias_model import Mutation, Origin, Relation, StaleRead
from ..analysis.aliases import AliasAnalysis
from ..analysis.base import Analysis, AnalysisContext
from ..analysis.order import ScopeOrder
from ..analysis.project import SnapshotHazard
from ..knowledge.torch_facts import is_optimizer_name, stepped_optimizer
from ..analysis.tensors import TensorFacts, target_names
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Severity
from ..signature import Signature, Source
from .alias_rule import AliasRule
from .base import Sites
from .fixkit import UNSAFE, copy_after, make_fix, replace, require_import, wrap_call
from ..walk import walk


class ClassSnapshots(Analysis):
    """This module's snapshot hazards across methods, by (class, method, attribute): what a rule
    visiting ``self.<attr> = ...`` in that method asks."""

    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[object]) -> "ClassSnapshots":
        project = ctx.project
        hazards = project.index.snapshot_hazards(project.module) if project is not None else []
        return cls({(h.cls.rsplit(".", 1)[-1], h.method, h.attr): h for h in hazards})

    def __init__(self, hazards: Dict[Tuple[str, str, str], SnapshotHazard]) -> None:
        self.hazards = hazards

    def at(self, cls: str, method: str, attr: str) -> Optional[SnapshotHazard]:
        return self.hazards.get((cls, method, attr))


class StaleSnapshot(AliasRule):
    """
    ## What it does
    Flags a "snapshot" of live state that is kept across an update of that state and read
    afterwards: `best = model.state_dict()` (or a shallow `.copy()`, `dict(...)`,
    `copy.copy(...)`), `w0 = model.fc.weight.detach()` / `.data`,
    `[p.detach() for p in model.parameters()]`, `optimizer.state_dict()` (once the optimizer has
    stepped); updated by `optimizer.step()` (also inside a method or function of the project that
    steps it), in-place writes, or the next iteration of a training loop; read when it is
    returned, saved, loaded or compared. A snapshot stored on `self` counts across methods: taken
    in one method while another steps the optimizer (or, in a training callback, while the loop
    steps between calls) and restored, saved or returned by the class. A second name for the
    module chosen as "the best" inside a training loop (`if acc > best_acc: best_model = model`)
    and read after the loop is one too: it is the same module, trained on. So are the live
    parameters kept as "before" (`before = list(model.parameters())`, or the generator itself)
    and compared after an update: each is compared with itself, so such a test can never tell
    whether training changed the weights. That a copy was meant needs evidence: the kept list
    compared with the module's own parameters, or named as kept (`before`, `initial`, `old`); a
    reference run's list handed to its optimizer and compared with other tensors is meant live.
    A read after
    `load_state_dict` alone sees the loaded values on purpose and is not reported, nor is a
    snapshot handed to a checkpoint load that fills it in place (`dcp.load(state_dict, ...)` of
    `torch.distributed.checkpoint`), or read after one. Stepping code
    whose optimizer is not known updates only the modules made in the function that it is handed
    (its arguments, its receiver and what that was built with, or what the call that made its
    optimizer was handed or returned with it): training `m2` from `m2, opt2 = make()`, or calling
    `other.fit(..., init=snapshot)` on another instance, does not update `m1` or the snapshot's
    source (a `state_dict()` handed over is loaded, that is copied, not trained). A snapshot
    read only inside the loop that writes other entries of the same module, by a key that
    changes each pass (`for n, p in m.named_parameters(): p.data.copy_(sd[n.replace("_q", "")])`),
    is a warning: a later pass sees an earlier pass's write only if their keys meet, which is not
    known from the code.

    ## Why is this bad?
    `state_dict()` and `.detach()` return references to the live tensors, not copies. Every
    `optimizer.step()` after the "snapshot" changes it too, so the best checkpoint of an early
    stopping loop is silently the last one, and `model.load_state_dict(best)` restores nothing.

    ## Example
    ```python
    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        if val_loss(model) < best_loss:
            best_state = model.state_dict()
    model.load_state_dict(best_state)     # the last epoch's weights
    ```

    ## Use instead
    ```python
    import copy

    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        if val_loss(model) < best_loss:
            best_state = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    ```
    or `{k: v.detach().clone() for k, v in model.state_dict().items()}`.
    """

    code = "TAL401"
    severity = Severity.ERROR
    summary = "state_dict()/detach() snapshot of live state, updated before it is read"
    requires = (*AliasRule.requires, ClassSnapshots)
    # the snapshot taken (``state_dict()``, ``p.detach()``, ``p.data``, ``list(m.parameters())``), and
    # ``best = model`` chosen in a loop that steps an optimizer
    sites = Sites(calls=catalog.STATE_SNAPSHOT_METHODS | catalog.UNTRACKED_ALIAS_METHODS | catalog.PARAMETER_ITERATORS
                  | catalog.NAMED_PARAMETER_ITERATORS, attributes=catalog.UNTRACKED_ALIAS_ATTRIBUTES,
                  loop_renames=catalog.OPTIMIZER_UPDATE_METHODS)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if func.__class__ is cst.Attribute and (func.attr.value in catalog.STATE_SNAPSHOT_METHODS
                                                or func.attr.value == "detach"):
            self._check_snapshot(node)
        elif func.__class__ is cst.Attribute and func.attr.value in catalog.PARAMETER_ITERATORS:
            self._check_kept_parameters(node)

    def _check_kept_parameters(self, node: cst.Call) -> None:
        """``before = list(model.parameters())`` (or the generator itself) kept across an update
        and compared afterwards: it holds the live parameters, so each comparison is of a parameter
        with itself, and a test of "training changed the weights" can never tell."""
        kept = self._kept_name(node)
        scope = self.ctx.scope
        if kept is None or not isinstance(scope, cst.FunctionDef):
            return  # before the alias analysis: most ``parameters()`` calls are kept under no name
        analysis = self._analysis()
        if analysis is None:
            return
        order = self.analysis(ScopeOrder)
        taken_at = order.position(node)
        params = [o for o in analysis.origins_made_at(node) if o.relation is Relation.PARAMS]
        updates = sorted((order.position(m.node), m) for m in analysis.mutations() if m.kind == "update"
                         and order.position(m.node) > taken_at
                         and any(o.storage is p.storage for o in m.origins for p in params))
        if not updates:
            return
        at, update = updates[0]
        rebound = [i for i in order.assignments.get(kept, []) if i > taken_at]
        finder = _NameReads(kept)
        walk(scope.body, finder)
        for read in finder.reads:
            here = order.position(read)
            if here <= at or any(taken_at < i < here for i in rebound):
                continue
            compared = _compared_at(scope, read)
            if compared is None:
                continue
            owner = dotted_name(node.func.value)
            with_itself = owner is not None and _paired_with(scope, read, compared, owner, kept)
            named = set(kept.lower().split("_")) & catalog.KEPT_AS_COPY_WORDS
            if not (with_itself or named):
                continue  # a reference run's parameters, handed to its optimizer and meant live
            taken = self._text(node)
            message = f"`{kept}` holds the live parameters of `{self._text(node.func.value)}`, not copies"
            seen = ("compares each parameter with itself and cannot tell whether they changed" if with_itself
                    else f"sees the updated values, not those kept as `{kept}`")
            notes = (f"`{self._text(update.node)}` (line {self.ctx.cited_line(update.node)}) changes them, so the comparison "
                     f"at line {self.ctx.cited_line(compared)} {seen}.", f"Keep `[p.detach().clone() for p in {taken}]`.")
            related = [(update.node, "the update that changes the kept parameters"),
                       (compared, f"`{kept}` compared here holds the updated values")]
            self.ctx.report(node, self.code, message, self.severity, related, notes=notes,
                            signature=Signature(self.code, ("parameters", "step"), source=Source(module_state=True)))
            return

    def _kept_name(self, node: cst.Call) -> Optional[str]:
        """The name ``model.parameters()`` is kept under: ``kept = model.parameters()``, ``kept =
        list(...)`` / ``tuple(...)``, ``kept = [p for p in ...]``."""
        parents = self.ctx.parents
        value: cst.CSTNode = node
        for parent in reversed(parents):
            if isinstance(parent, (cst.Arg, cst.CompFor)):
                continue
            if isinstance(parent, cst.Call) and value is not node:
                return None
            if isinstance(parent, cst.Call) and (dotted_name(parent.func) in ("list", "tuple")
                                                 and len(parent.args) == 1):
                value = parent
                continue
            if isinstance(parent, cst.ListComp) and isinstance(parent.elt, cst.Name) \
                    and isinstance(parent.for_in.target, cst.Name) and parent.elt.value == parent.for_in.target.value \
                    and parent.for_in.iter is node:
                value = parent
                continue
            if isinstance(parent, cst.Assign) and parent.value is value and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0].target, cst.Name):
                return parent.targets[0].target.value
            return None
        return None

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        pass

    def visit_Assign(self, node: cst.Assign) -> None:
        pass

    def leave_Assign(self, node: cst.Assign) -> None:
        self._module_alias(node)
        self._class_snapshot(node)

    def _module_alias(self, node: cst.Assign) -> None:
        """``best_model = model`` chosen under a condition inside a loop that trains ``model``, and
        ``best_model`` read after the loop: a second name for the module, not a copy, so it holds
        the last weights. Not a snapshot: a rename outside such a choice, a loop variable or a
        module made afresh in the loop (``for model in models``), ``self.model = model``."""
        if len(node.targets) != 1 or node.targets[0].target.__class__ is not cst.Name:
            return
        kept, value = node.targets[0].target.value, node.value
        live = dotted_name(value) if value.__class__ in (cst.Name, cst.Attribute) else None
        if live is None or live == kept:
            return
        loop = self._choosing_loop()
        function = self.analysis(TensorFacts).function
        if loop is None or function is None:
            return
        scan = _LoopScan(live, self.ctx)
        walk(loop, scan)
        if scan.rebound or scan.step is None or not (live in scan.used or scan.step_takes_live):
            return
        body = _FunctionScan(kept, live, loop)
        walk(function, body)
        if body.read is None or not (self.analysis(TensorFacts).kind(value).is_module or body.module_evidence):
            return
        named = scan.step_takes_live or body.optimizer_over_live
        severity = Severity.ERROR if named else Severity.WARNING
        step = self._text(scan.step)
        message = f"`{kept} = {live}` is a second name for the module `{live}`, not a copy"
        notes = (f"`{step}` (line {self.ctx.cited_line(scan.step)}) keeps training it on the next iterations, so `{kept}` "
                 f"read at line {self.ctx.cited_line(body.read)} holds the last weights, not the chosen ones.",
                 f"Use `copy.deepcopy({live})` (or keep `copy.deepcopy({live}.state_dict())`).")
        related = [(scan.step, "the update that changes the module"),
                   (body.read, f"`{kept}` read here holds the last weights")]
        self.ctx.report(value, self.code, message, severity, related,
                        fix=lambda ctx: deepcopy_fix(ctx, value),
                        signature=Signature(self.code, ("alias", "step"), source=Source(module_state=True)),
                        notes=notes)

    def _choosing_loop(self):
        """The loop around the ``if`` (with no ``else``) this assignment is in (in this function),
        else None."""
        seen_if = False
        for parent in reversed(self.ctx.parents):
            if parent.__class__ is cst.IndentedBlock and not seen_if and any(
                    small.__class__ in (cst.Break, cst.Return) for stmt in parent.body
                    if stmt.__class__ is cst.SimpleStatementLine for small in stmt.body):
                return None  # chosen, then the loop ends: nothing trains it afterwards
            if parent.__class__ in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                return None
            if parent.__class__ is cst.Else or (parent.__class__ is cst.If and parent.orelse is not None):
                return None  # one of several branches (``raw = model.module`` / ``raw = model``): a pick, not a choice
            if parent.__class__ is cst.If:
                seen_if = True
            elif parent.__class__ in (cst.For, cst.While):
                return parent if seen_if else None
        return None

    def _class_snapshot(self, node: cst.Assign) -> None:
        """``self.best = model.state_dict()`` in one method, while another method steps the
        optimizer (or the training loop runs between calls of a callback) and the class restores,
        saves or returns the snapshot: what the project index found across methods."""
        tensors = self.analysis(TensorFacts)
        function, cls = tensors.function, tensors.current_class
        if function is None or cls is None or not function.params.params:
            return
        self_name = function.params.params[0].name.value
        snapshots = self.analysis(ClassSnapshots)
        for target in node.targets:
            t = target.target
            if not (isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == self_name):
                continue
            hazard = snapshots.at(cls.name, function.name.value, t.attr.value)
            if hazard is None or self.ctx.reported(node.value, self.code):
                continue
            stored = self._text(node.value)
            message = f"`{self_name}.{hazard.attr}` holds the live tensors of `{hazard.of}`, not a copy"
            notes = (f"`{stored}` stored in `{self_name}.{hazard.attr}` holds references to them: {hazard.update} "
                     f"changes it before {hazard.use}.", f"Use `copy.deepcopy({stored})`.")
            self.ctx.report(node.value, self.code, message, self.severity,
                            fix=lambda ctx, value=node.value: deepcopy_fix(ctx, value),
                            signature=Signature(self.code, ("state_dict", "step"), source=Source(module_state=True)),
                            notes=notes)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "data":
            self._check_snapshot(node)

    def _check_snapshot(self, node: cst.CSTNode) -> None:
        analysis = self._analysis()
        if analysis is None:
            return
        for origin in analysis.origins_made_at(node):
            if not self._is_snapshot(origin):
                continue
            # A read after ``load_state_dict`` alone sees the loaded values on purpose (checking
            # what was loaded, or a template filled and loaded back): not a stale snapshot.
            reads = [r for r in analysis.stale_reads_of(origin) if self._through_references(r.origin, origin)
                     and r.mutation.op not in catalog.STATE_LOAD_METHODS
                     and not self._filled_by_a_load(r)
                     and not self._written_through(r.mutation, origin)
                     and (origin.relation is Relation.SNAPSHOT or r.mutation.kind == "update")]
            scope = self.ctx.scope or self.ctx.module
            order = self.analysis(ScopeOrder)
            sure = [r for r in reads if _reseeding_loop(scope, order, r) is None]
            read = self._first(sure or reads, rank=lambda r: r.mutation.kind != "update")
            if read is None or self._before_first_step(node, origin, reads, analysis):
                continue
            self._report(node, origin, read, analysis, reseeding=not sure)
            return

    def _filled_by_a_load(self, read: StaleRead) -> bool:
        """``dcp.load(state_dict, ...)``: a checkpoint load that writes the snapshot's tensors in
        place (``catalog.STATE_DICT_FILLING_LOADS``) after the update, at the read or before it: the
        read hands the dict to be filled, or sees what was loaded, the point of keeping it live."""
        key = ("filled_by_a_load", id(self.ctx.scope))
        loads = self.ctx.memo.get(key)
        if loads is None:
            loads = self.ctx.memo[key] = _FillingLoads(self.analysis(TorchNames))
            walk(self.ctx.scope or self.ctx.module, loads)
        return any(node is read.node or (name == read.key and self.ctx.after(node, read.mutation.node)
                                         and self.ctx.after(read.node, node))
                   for name, node in loads.filled)

    def _before_first_step(self, node: cst.CSTNode, origin: Origin, reads, analysis: AliasAnalysis) -> bool:
        """``optimizer.state_dict()`` of an optimizer made here, taken before it ever stepped and
        not in a loop: its ``state`` is a new empty dict and its ``param_groups`` are copies, so the
        steps that follow cannot change it."""
        if origin.relation is not Relation.SNAPSHOT or origin.source not in analysis.optimizer_links:
            return False
        if any(isinstance(p, (cst.For, cst.While)) for p in self._enclosing_function_parents()):
            return False
        return all(self.ctx.after(r.mutation.node, node) for r in reads)

    def _enclosing_function_parents(self):
        out = []
        for parent in reversed(self.ctx.parents):
            if isinstance(parent, cst.FunctionDef):
                break
            out.append(parent)
        return out

    @staticmethod
    def _is_snapshot(origin: Origin) -> bool:
        if origin.relation is Relation.SNAPSHOT:
            return True
        if origin.relation in (Relation.DETACH, Relation.DATA) and origin.parent is not None:
            parent = origin.parent
            if parent.relation is Relation.PARAMS:
                return True
            if parent.relation is Relation.ENTRY and "." in parent.source \
                    and parent.source.rsplit(".", 1)[-1] in catalog.MODULE_TENSOR_ATTRIBUTES:
                return True
        return False

    @staticmethod
    def _through_references(read: Origin, snapshot: Origin) -> bool:
        """The value read still holds the snapshot's references (no view, conversion or copy)."""
        if read is not snapshot and not read.derives_from(snapshot):
            return False
        below = read.chain()[len(snapshot.chain()):]
        return all(o.relation in (Relation.PLAIN, Relation.DETACH, Relation.DATA) for o in below)

    @staticmethod
    def _written_through(mutation: Mutation, snapshot: Origin) -> bool:
        """``new = opt.state_dict(); new["state"][k].copy_(v)``: writing into the live state through
        the dict is the point of taking it, through this ``state_dict()`` or another one of the same
        object (``groups = opt.state_dict()["param_groups"]; state = opt.state_dict()["state"]``,
        a template filled and loaded back)."""
        def through_a_snapshot(o: Origin) -> bool:
            return o is snapshot or o.derives_from(snapshot) or (
                snapshot.relation is Relation.SNAPSHOT
                and any(c.relation is Relation.SNAPSHOT and c.source == snapshot.source for c in o.chain()))
        return bool(mutation.origins) and all(through_a_snapshot(o) for o in mutation.origins)

    def _report(self, node: cst.CSTNode, origin: Origin, read: StaleRead, analysis: AliasAnalysis,
                reseeding: bool = False) -> None:
        """``reseeding``: every read sees the update only on a later pass of the loop that writes
        entry by entry (``_reseeding_loop``): a warning that says what is unknown."""
        mutation = read.mutation
        taken = self._text(node)
        update = self._text(mutation.node)
        if origin.relation is Relation.SNAPSHOT:
            what = "the live tensors of `" + origin.source + "`"
            fix = f"`copy.deepcopy({taken})`"
            if not analysis.is_optimizer_key(origin.source):
                fix += f" (or `{{k: v.detach().clone() for k, v in {taken}.items()}}`)"
        else:
            what = "the live parameter"
            owner = node.func.value if isinstance(node, cst.Call) else node.value
            fix = f"`{self._text(owner)}.detach().clone()`"
        loop = ""
        if self.ctx.cited_line(mutation.node) < self.ctx.cited_line(node):
            loop = " on the next iteration of the loop"
        message = f"`{taken}` holds references to {what}, not a copy"
        notes = (f"`{update}` (line {self.ctx.cited_line(mutation.node)}) changes it{loop}, and {self._where(read)}.",
                 f"Use {fix}.")
        severity = self.severity
        if reseeding:
            severity = Severity.WARNING
            notes = (f"`{update}` (line {self.ctx.cited_line(mutation.node)}) writes one entry per pass of the loop, and "
                     f"`{read.key}` is read at line {self.ctx.cited_line(read.node)} by a key that changes each pass: whether "
                     f"a later pass reads an entry an earlier pass wrote is not known here.", f"Use {fix}.")
        related = [(mutation.node, "the update that changes the snapshot"),
                   (read.node, f"`{read.key}` read here holds the updated values" if not read.escape
                    else f"`{read.key}` still holds the live tensors after the function returns")]
        if reseeding:
            related[1] = (read.node, f"`{read.key}` read here holds the updated values if its key is one written before")
        ops = origin.ops() + [mutation.op]
        self.ctx.report(node, self.code, message, severity, related,
                        fix=lambda ctx: snapshot_fix(ctx, node, origin),
                        signature=self._signature(ops, origin, analysis, False, mutation), notes=notes)


def _reseeding_loop(scope: cst.CSTNode, order: ScopeOrder, read: StaleRead) -> Optional[cst.For]:
    """The loop in which ``read`` can see its update only on a later pass: the snapshot read by a
    key that is not a constant, before a write through the loop's own entry in the same pass
    (``for name, p in m.named_parameters(): p.data.copy_(sd[name.replace("_q", "")])``). A later
    pass sees an earlier pass's write only if their keys meet, which the keys' values decide."""
    mutation = read.mutation
    if read.escape or mutation.kind != "inplace" or mutation.key is None:
        return None
    finder = _Around(read.node)
    walk(scope, finder)
    path = finder.path
    if not path or not (isinstance(path[-1], cst.Subscript) and path[-1].value is read.node) or any(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.Integer))
            for e in path[-1].slice):
        return None
    in_write = any(n is mutation.node for n in path)  # ``p.copy_(sd[k])``: the argument is read first
    if not in_write and order.position(read.node) > order.position(mutation.statement):
        return None
    for loop in reversed(path):
        if isinstance(loop, cst.For) and mutation.key in target_names(loop.target):
            inside = _Around(mutation.node)
            walk(loop.body, inside)
            return loop if inside.path else None
    return None


_COMPARING_CALLS = frozenset(
    "equal allclose isclose eq ne assert_close assert_allclose assert_equal assertEqual assertNotEqual "
    "assertTrue assertFalse array_equal".split())


def _compared_at(scope: cst.FunctionDef, read: cst.CSTNode) -> Optional[cst.CSTNode]:
    """Where the value read at ``read`` is compared: the ``assert``, comparison or comparing call
    (``torch.equal``, ``allclose``) around it, or, for a read in a loop's iterable (``for a, b in
    zip(before, after)``), one in the loop's body."""
    finder = _Around(read)
    walk(scope.body, finder)
    for node in reversed(finder.path):
        if isinstance(node, cst.Call) and dotted_name(node.func) in ("len", "isinstance", "type", "id"):
            return None  # ``len(before)``: metadata, not values
        if isinstance(node, (cst.Assert, cst.Comparison)) or _comparing_call(node):
            return node
        if isinstance(node, cst.For) and finder.in_iter:
            inner = _Comparisons()
            walk(node.body, inner)
            return inner.found
        if isinstance(node, cst.BaseStatement):
            return None
    return None


def _paired_with(scope: cst.FunctionDef, read: cst.CSTNode, compared: cst.CSTNode, owner: str, kept: str) -> bool:
    """Whether the comparison pairs the kept parameters with ``owner``'s own (``zip(before,
    model.parameters())``, ``after = list(model.parameters())``): the evidence that the kept list
    was meant as the values before, since it is compared with what it was taken from."""
    finder = _Around(read)
    walk(scope.body, finder)
    loop = next((n for n in reversed(finder.path) if isinstance(n, cst.For)), None) if finder.in_iter else None
    names = _RootedNames(owner)
    walk(scope.body, names)
    rooted = _Rooted(owner, names.bound - {kept})
    for region in (loop.iter if loop is not None else None, compared):
        if region is not None:
            walk(region, rooted)
    return rooted.found


def _rooted(node: cst.CSTNode, owner: str) -> bool:
    name = dotted_name(node)
    return name is not None and (name == owner or name.startswith(owner + "."))


class _RootedNames(cst.CSTVisitor):
    """The names the function binds to an expression built on ``owner`` (``after = list(m.parameters())``)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.bound: set = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        found = _Rooted(self.owner, set())
        walk(node.value, found)
        if found.found:
            for target in node.targets:
                self.bound.update(target_names(target.target))


class _Rooted(cst.CSTVisitor):
    """Whether a region reads ``owner`` (``model.parameters()``, ``model.fc.weight``) or a name bound to it."""

    def __init__(self, owner: str, names: set) -> None:
        self.owner, self.names = owner, names
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.found = self.found or _rooted(node, self.owner)
        if not self.found:
            walk(node.value, self)  # not ``attr``: ``other.model`` is not ``model``
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value == self.owner or node.value in self.names


def _comparing_call(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    name = dotted_name(node.func) or ""
    return name.rsplit(".", 1)[-1] in _COMPARING_CALLS


class _NameReads(cst.CSTVisitor):
    """The reads of a name in a function body (not assignment targets, not nested scopes)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reads: list = []

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.reads.append(node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]


class _Around(cst.CSTVisitor):
    """The nodes around ``target`` (outermost first), and whether it is in a ``for`` loop's iterable."""

    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.stack: list = []
        self.path: list = []
        self.in_iter = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.path:
            return False
        if node is self.target:
            self.path = list(self.stack)
            loop = next((n for n in reversed(self.stack) if isinstance(n, cst.For)), None)
            self.in_iter = loop is not None and self._within(loop.iter)
            return False
        self.stack.append(node)
        return True

    def on_leave(self, node: cst.CSTNode) -> None:
        if self.stack and self.stack[-1] is node:
            self.stack.pop()

    def _within(self, node: cst.CSTNode) -> bool:
        return any(n is node for n in self.stack)


class _Comparisons(cst.CSTVisitor):
    """The first ``assert``, comparison or comparing call in a block."""

    def __init__(self) -> None:
        self.found: Optional[cst.CSTNode] = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found is None and (isinstance(node, (cst.Assert, cst.Comparison)) or _comparing_call(node)):
            self.found = node
        return self.found is None


class _LoopScan(cst.CSTVisitor):
    """In a loop: the first optimizer step (``opt.step()``, ``scaler.step(opt)``, a project function
    that steps), whether it is handed the module, whether the module's name is used, and whether
    the loop binds it anew (``for model in models``, ``model = Net()``)."""

    def __init__(self, live: str, ctx) -> None:
        self.live, self.ctx = live, ctx
        self.step = None
        self.step_takes_live = False
        self.used: set = set()
        self.rebound = False

    def visit_For(self, node: cst.For) -> None:
        if self.live in target_names(node.target):
            self.rebound = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if self.live in target_names(target.target) or dotted_name(target.target) == self.live:
                if not (isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute)
                        and dotted_name(node.value.func.value) == self.live):  # ``model = model.to(device)``
                    self.rebound = True

    def visit_Name(self, node: cst.Name) -> None:
        self.used.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = dotted_name(node)
        if name is not None:
            self.used.add(name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if self.step is not None:
            return
        func = node.func
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if func.__class__ is cst.Attribute and stepped_optimizer(
                func.attr.value, func.value, args, lambda n: is_optimizer_name(dotted_name(n) or "")) is not None:
            self.step = node
            return
        project = self.ctx.project
        name = dotted_name(func)
        if project is None or name is None:
            return
        summary = project.index.function(project.module, name, self.ctx.get(TorchNames).qualified(func))
        if summary is not None and summary.steps is not None:
            self.step = node
            self.step_takes_live = any(dotted_name(a) == self.live for a in args)


class _FunctionScan(cst.CSTVisitor):
    """In the function: the first read of ``kept`` after ``loop``, whether ``live`` is shown to be
    a module (``live.parameters()``, ``live.state_dict()``, ``live.train()``) and whether an
    optimizer is built over its parameters here."""

    def __init__(self, kept: str, live: str, loop: cst.CSTNode) -> None:
        self.kept, self.live, self.loop = kept, live, loop
        self.read = None
        self.module_evidence = False
        self.optimizer_over_live = False
        self._after = False
        self._in_loop = 0
        self._targets: set = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._targets.add(id(target.target))
        if len(node.targets) == 1 and is_optimizer_name(dotted_name(node.targets[0].target) or "") \
                and isinstance(node.value, cst.Call):
            for arg in node.value.args:
                if isinstance(arg.value, cst.Call) and isinstance(arg.value.func, cst.Attribute) \
                        and arg.value.func.attr.value in ("parameters", "named_parameters") \
                        and dotted_name(arg.value.func.value) == self.live:
                    self.optimizer_over_live = True

    def visit_For(self, node: cst.For) -> None:
        if node is self.loop:
            self._in_loop += 1

    def leave_For(self, node: cst.For) -> None:
        if node is self.loop:
            self._in_loop -= 1
            self._after = True

    visit_While = visit_For
    leave_While = leave_For

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if func.__class__ is cst.Attribute and dotted_name(func.value) == self.live \
                and func.attr.value in ("parameters", "named_parameters", "state_dict", "train", "eval",
                                        "load_state_dict", "zero_grad"):
            self.module_evidence = True

    def visit_Name(self, node: cst.Name) -> None:
        if self._after and not self._in_loop and self.read is None and node.value == self.kept \
                and id(node) not in self._targets:
            self.read = node


def snapshot_fix(ctx, node: cst.CSTNode, origin: Origin):
    """TAL401: ``copy.deepcopy(model.state_dict())`` (adding ``import copy`` when missing);
    ``p.detach().clone()`` for a tensor snapshot (``p.data`` becomes ``p.detach().clone()``)."""
    if origin.relation is Relation.SNAPSHOT:
        return deepcopy_fix(ctx, node)
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        return make_fix(UNSAFE, "Snapshot with `.detach().clone()`", replace(ctx, node.attr, "detach().clone()"),
                        because=_STOPS_FOLLOWING)
    return make_fix(UNSAFE, "Snapshot with `.clone()`", *copy_after(ctx, node), because=_STOPS_FOLLOWING)


_STOPS_FOLLOWING = "the snapshot stops following the live state, which changes what the program computes"


def deepcopy_fix(ctx, node: cst.CSTNode):
    """``copy.deepcopy(<node>)``, adding ``import copy`` when missing (unsafe: the snapshot then
    stops following the live state, which is the point, but changes what the program computes)."""
    deepcopy, imports = require_import(ctx, "copy", "deepcopy")
    if deepcopy is None:
        return None  # the name ``copy`` means something else in this file
    return make_fix(UNSAFE, f"Snapshot with `{deepcopy}(...)`", *wrap_call(ctx, node, deepcopy), *imports,
                    because=_STOPS_FOLLOWING)


class _FillingLoads(cst.CSTVisitor):
    """The state dicts handed to a checkpoint load that fills them in place: (name, expression)."""

    def __init__(self, names: TorchNames) -> None:
        self.names = names
        self.filled: list = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.qualified(node.func) in catalog.STATE_DICT_FILLING_LOADS:
            self.filled.extend((dotted_name(a.value), a.value) for i, a in enumerate(node.args)
                               if (i == 0 and a.keyword is None) or (a.keyword is not None and a.keyword.value == "state_dict"))
