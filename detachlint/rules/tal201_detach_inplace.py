"""TAL201 detach-inplace: an in-place write to a ``.detach()`` result kept as if it were a copy."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from ..analysis.alias_model import Mutation, Origin, Relation
from ..analysis.graph_use import unsaved_gradient
from ..analysis.order import ScopeOrder
from ..analysis.tensors import TensorFacts
from ..analysis.torchnames import TorchNames, target_names
from ..knowledge import catalog
from ..knowledge.torch_facts import is_copy_intent_conversion
from ..findings import Severity
from .alias_rule import AliasRule, mutation_ops
from .argument_writes import UPDATE_NAME_RE
from .base import WRITES
from .fixkit import UNSAFE, copy_after, make_fix
from ..walk import walk


class DetachInplace(AliasRule):
    """
    ## What it does
    Flags an in-place write to the result of `.detach()` kept as if it were a copy: through a name
    (`d = x.detach(); d.add_(1)`), or through conversions that return the same memory when nothing
    needs converting (`img = x.detach().cpu().numpy(); img *= 255`); and a direct write
    (`w.detach().mul_(0.5)`) while a graph that saved `w` waits for `backward()`. A direct write
    with nothing pending (`target.detach().mul_(decay)` in an EMA, `p.grad.detach().mul_(scale)`
    in a clipper, `p.detach().zero_()` in an initialiser) writes through on purpose and is not
    reported; nor is a gradient reset before a backward (`p.grad.detach().zero_()`) where no graph
    saved the gradient: autograd saves a `.grad` only after `backward(create_graph=True)` or when
    an op took it before the write, and the backward accumulates into the reset gradient.
    An op that changes only the detached object's shape, strides or storage (`d.t_()`,
    `d.unsqueeze_(0)`, `d.resize_(n)`, `d.set_(y)`) leaves `x` as it was and is not reported here;
    after `d.set_(y)`, `d` is `y`'s alias, not `x`'s. Such an op still moves the version counter
    `d` shares with `x`: where an op saved `x` for a backward still to run, TAL202 reports it.

    ## Why is this bad?
    `.detach()` is not a copy: it shares `x`'s storage, so the write changes `x` too. Later
    forward computations see the new values, and if a graph that saved `x` is still waiting for
    `backward()` it raises (or, through NumPy, silently computes a wrong gradient). `.cpu()`,
    `.float()` and `.numpy()` after it copy only when the device or dtype changes, so the bug
    appears exactly when the tensor is already a CPU float tensor. It is an **error** when `x` is
    read afterwards, held by the caller, or saved by a pending backward; a **warning** otherwise.
    A dict entry written under its own key (`state["step"] += 1`) is not the tensor stored under
    another key (`state["buf"] = x.detach()`).
    A write into a parameter an optimizer updates is at most a warning: in a method of a
    `torch.optim` optimizer subclass, a tensor it holds (`self.param_groups[g]["params"][i]`) or
    iterates from its groups; in a `@torch.no_grad()` or update function, a parameter it iterates
    (`group["params"]`, `model.parameters()`): reaching the parameter is the point of such code.

    ## Example
    ```python
    def to_image(x):
        img = x.detach().cpu().numpy()
        img *= 255                # also scales x when x is a CPU float tensor
        return img
    ```

    ## Use instead
    ```python
    def to_image(x):
        img = x.detach().cpu().numpy().copy()     # or x.detach().clone()
        img *= 255
        return img
    ```
    """

    code = "TAL201"
    severity = Severity.ERROR
    summary = "in-place write to a .detach() result, which shares storage with the original"
    sites = WRITES  # reported at the write

    def _check_write(self, node: cst.CSTNode) -> None:
        mutation = self._mutation_at(node)
        if mutation is None:
            return
        found = self._detached(mutation)
        if found is None:
            return
        origin, detach = found
        if not mutation.reaches(detach.parent or detach, origin):
            return  # ``d.t_()``: only ``d`` changes shape; a backward that saved the source raises: TAL202's
        analysis = self._analysis()
        if self._same_name_write_through(mutation, origin, detach) or (
                self._copied_back(mutation, analysis) & {o.source for o in origin.chain()}):
            return  # the write is meant for the source (``p.data.copy_(p_data_fp32)`` later)
        source = self._source_text(detach)
        written = self._text(mutation.node)
        pending = self._pending(mutation.node)
        if pending is not None and self._unsaved_gradient(mutation, origin, detach) is not None:
            pending = None  # the backward only accumulates into the gradient: nothing it runs saved it
        direct = detach.statement is mutation.statement
        if direct and pending is None:
            return  # ``p.detach().mul_(d)``: writing through is the point, and nothing saved ``p``
        related: List[Tuple[cst.CSTNode, str]] = []
        if direct:
            severity = Severity.ERROR if pending is not None else Severity.WARNING
            message = f"`{written}` writes into `{source}` through `.detach()`"
            notes = ((f"`.detach()` shares its storage, and the pending `{self._text(pending)}` saved it: "
                      f"it will raise."
                      if pending is not None else
                      "`.detach()` shares its storage; `with torch.no_grad():` on the tensor itself says so."),
                     f"For a copy, use `{source}.detach().clone()`.")
        else:
            bound = origin  # the alias as bound to the name (not the view taken in the write itself)
            while bound.statement is mutation.statement and bound.parent is not None:
                bound = bound.parent
            chain = self._text(bound.node)
            reads = [r for r in self._seeing_reads(mutation, analysis)
                     if not r.origin.derives_from(origin) and r.origin is not origin]
            read = self._first(reads)
            name = mutation.key or self._text(mutation.target)
            made = self.ctx.cited_line(self._made(bound))
            numpy = "numpy" in origin.ops()
            fix = f"`{source}.detach().clone()`" + (" (or `.copy()` the array)" if numpy else "")
            used = None if read is not None or pending is not None else self._value_use_after(mutation)
            if read is not None or pending is not None:
                severity = Severity.ERROR
                why = self._where(read) if read is not None else f"the pending `{self._text(pending)}` saved it"
            elif used is not None and self._outlives(detach, analysis):
                # ``w = online.weight.detach(); w.mul_(d); target.weight.copy_(w)``: ``w`` was meant
                # as a copy, and the write silently changed what the caller holds
                severity = Severity.ERROR
                why = (f"`{name}` is then used as a value (line {self.ctx.cited_line(used)}), as a copy would be, "
                       f"while `{source}` outlives this function with the change")
                related.append((used, f"`{name}` used as a copy here"))
            else:
                severity = Severity.WARNING
                why = f"`{source}` is not used again here, but the write still lands in its storage"
            meant = self._updates_parameter(detach, analysis) if severity is Severity.ERROR and pending is None else None
            if meant is not None:
                severity = Severity.WARNING  # an optimizer writing its own parameter: reaching it is the point
                why += f"; but {meant}, so the write may be meant to reach it"
            message = f"`{written}` also changes `{source}`"
            notes = (f"`{name}` is `{chain}` (line {made}), which shares `{source}`'s storage, and {why}.",
                     f"Use {fix} before writing.")
            related.append((self._made(bound), f"`{name}` made here shares storage with `{source}`"))
            if read is not None:
                related.append((read.node, f"`{read.key}` read here sees the write" if not read.escape
                                else f"`{read.key}` still held by the caller"))
        if pending is not None:
            related.append((pending, "the pending backward that saved the tensor"))
        self.ctx.report(mutation.node, self.code, message, severity, related,
                        fix=None if direct and _discarded(mutation) else lambda ctx: clone_fix(ctx, detach),
                        signature=self._signature(mutation_ops(mutation, origin), origin, analysis,
                                                  pending is not None, mutation), notes=notes)

    @staticmethod
    def _detached(mutation: Mutation) -> Optional[Tuple[Origin, Origin]]:
        """The written origin that goes through ``.detach()`` (or ``.data`` then a conversion)."""
        for origin in sorted(mutation.ordered_origins(), key=lambda o: len(o.chain())):
            chain = origin.chain()
            for i in reversed(range(len(chain))):
                link = chain[i]
                if link.relation is Relation.DETACH:
                    return origin, link
                if link.relation is Relation.DATA and any(
                        o.relation is Relation.CONVERSION and is_copy_intent_conversion(o.op)
                        for o in chain[i + 1:]):
                    return origin, link
        return None

    def _unsaved_gradient(self, mutation: Mutation, origin: Origin, detach: Origin) -> Optional[str]:
        """``p.grad`` where the write goes through ``p.grad.detach()`` and no graph here saved the
        gradient (``unsaved_gradient``), nor any name on the way to the write (``g`` of ``g =
        p.grad.detach()``)."""
        node = detach.node
        gradient = node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            else node.value if isinstance(node, cst.Attribute) else None
        if gradient is None:
            return None
        aliases = {o.source for o in origin.chain()[len(detach.chain()):]} | {mutation.key}
        return unsaved_gradient(self.analysis(TensorFacts).function, self.analysis(ScopeOrder),
                                self.analysis(TorchNames), gradient, mutation.node,
                                sorted(a for a in aliases if a and a != detach.source))

    @staticmethod
    def _same_name_write_through(mutation: Mutation, origin: Origin, detach: Origin) -> bool:
        """``entry = entry.detach(); entry.copy_(v)``: the author keeps calling it the same tensor
        and writes into it on purpose. A conversion in between (``x = x.detach().numpy()``) reads
        as a copy, and is still reported."""
        if detach.statement is mutation.statement or mutation.key != detach.source:
            return False
        after = origin.chain()[len(detach.chain()):]
        return not any(o.relation is Relation.CONVERSION and is_copy_intent_conversion(o.op)
                       for o in after)

    def _updates_parameter(self, detach: Origin, analysis) -> Optional[str]:
        """Why the write evidently updates a parameter on purpose, as a clause: in a method of a
        ``torch.optim`` optimizer subclass, a tensor the optimizer holds (``self.param_groups[g]
        ["params"][i]``, ``self.<method>(...)``) or iterates from its groups; in a ``@torch.no_grad()``
        function or one named as an update, a parameter it iterates (``group["params"]``,
        ``model.parameters()``). None where the code shows neither."""
        facts = self.analysis(TensorFacts)
        function, cls = facts.function, facts.current_class
        if function is None:
            return None
        root, name = detach.root, function.name.value
        shown = self._parameter_shown(root) or any(o.relation is Relation.PARAMS for o in detach.chain())
        source = self._source_text(detach)
        if cls is not None and cls.is_optimizer:
            held = root.node is not None and analysis.self_name is not None \
                and _base_name(root.node) == analysis.self_name
            if held or shown:
                what = f"`{self._text(root.node, 40)}`, held by it" if held else "a parameter it iterates"
                return f"`{name}` is a method of the optimizer `{cls.name}` and `{source}` is {what}"
        if shown and (self.analysis(TorchNames).decorated_grad_off(function) or UPDATE_NAME_RE.search(name)):
            return f"`{name}` updates parameters and `{source}` is one it iterates"
        return None

    def _parameter_shown(self, root: Origin) -> bool:
        """The value is shown to be a parameter: what it was taken from (or the loop that binds it)
        reads an optimizer's ``param_groups``, a group's ``"params"`` or a module's ``parameters()``."""
        node = root.node
        if isinstance(node, cst.Name):
            loop = next((p for p in reversed(self.ctx.parents)
                         if isinstance(p, cst.For) and root.source in target_names(p.target)), None)
            node = loop.iter if loop is not None else None
        if node is None:
            return False
        finder = _ParameterSource()
        walk(node, finder)
        return finder.found

    def _outlives(self, detach: Origin, analysis) -> bool:
        """The detached tensor is held beyond this function: a parameter's, or ``self``'s."""
        root = detach.source.split(".")[0]
        return root in analysis.params or (analysis.self_name is not None and root == analysis.self_name)

    def _source_text(self, detach: Origin) -> str:
        node = detach.node
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return self._text(node.func.value, 40)
        if isinstance(node, cst.Attribute):
            return self._text(node.value, 40)
        if isinstance(node, cst.Call) and node.args:
            return self._text(node.args[0].value, 40)
        return detach.source


def _base_name(node: cst.CSTNode) -> Optional[str]:
    """The name an expression is built on: ``self`` of ``self.groups[0]["params"]`` or ``self.get(f)``."""
    while isinstance(node, (cst.Call, cst.Subscript, cst.Attribute)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


class _ParameterSource(cst.CSTVisitor):
    """Whether an expression reads ``<opt>.param_groups``, ``group["params"]`` or ``<module>.parameters()``."""

    def __init__(self) -> None:
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found = self.found or node.attr.value == catalog.OPTIMIZER_PARAM_GROUPS or (
            node.attr.value in catalog.PARAMETER_ITERATORS | catalog.NAMED_PARAMETER_ITERATORS)

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        index = node.slice.value if isinstance(node.slice, cst.Index) else None
        self.found = self.found or (isinstance(index, cst.SimpleString)
                                    and index.evaluated_value == catalog.PARAM_GROUP_PARAMS_KEY)


def _discarded(mutation: Mutation) -> bool:
    """``x.detach().zero_()`` or ``x.detach()[i] = v`` as a statement: the write is the point, a
    copy would make it dead code."""
    if not isinstance(mutation.node, cst.Call):  # item or augmented assignment: always a statement
        return True
    stmt = mutation.statement
    small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    return any(isinstance(s, cst.Expr) and s.value is mutation.node for s in small)


def clone_fix(ctx, detach: Origin):
    """TAL201: ``.clone()`` right after the ``.detach()`` (or ``.data``) the write goes through."""
    if detach.node is None:
        return None
    return make_fix(UNSAFE, "Insert `.clone()` after the detach", *copy_after(ctx, detach.node),
                    because="the original tensor no longer sees the write")
