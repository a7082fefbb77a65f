"""TAL301 view-alias-mutation: a view or alias and its source, one written while the other is read."""

from __future__ import annotations


import libcst as cst

from ..analysis import catalog
from ..analysis.alias_model import Mutation, Origin, Relation, StaleRead
from ..analysis.aliases import AliasAnalysis
from ..analysis.order import ScopeOrder
from ..analysis.torch_facts import is_copy_intent_conversion
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Severity
from ..signature import Side
from .alias_rule import AliasRule, mutation_ops
from .base import WRITES
from .fixkit import UNSAFE, copy_after, make_fix


class ViewAliasMutation(AliasRule):
    """
    ## What it does
    Flags an in-place write to one of two names for the same memory while the other is read
    afterwards as if it were a copy: a plain alias (`old = x; x += 1; use(old)`), a view or
    slice (`first = x[0]; x.mul_(2); use(first)`), or a conversion that returns the same memory
    when nothing needs converting (`images = batch.cpu().float().numpy(); images *= 255` while
    `batch` is read later, or held by the caller).

    ## Why is this bad?
    Assignment, views, slicing and no-op conversions (`.cpu()` on a CPU tensor, `.float()` on a
    float tensor, `.numpy()`, `torch.as_tensor`) never copy, so the write shows through the
    other name: the "old" value, the "original" batch or the caller's tensor silently changes.
    Writing through a view on purpose (`x.view(-1)[idx] = 0`, then using `x`) is not flagged.
    A write that reaches the caller's argument is a **warning** instead of an error where
    another override of the same method in the project writes that argument in place itself:
    changing the caller's tensor is then the method's contract.

    ## Example
    ```python
    import torch

    def advance(state: torch.Tensor, delta: torch.Tensor):
        prev = state
        state += delta
        return state - prev      # always zero
    ```

    ## Use instead
    ```python
    import torch

    def advance(state: torch.Tensor, delta: torch.Tensor):
        prev = state.clone()
        state += delta
        return state - prev
    ```
    """

    code = "TAL301"
    severity = Severity.ERROR
    summary = "in-place write to a view or alias while the other name is read as if it were a copy"
    sites = WRITES  # reported at the write

    _ALIAS = (Relation.PLAIN, Relation.VIEW, Relation.CONVERSION)

    def _check_write(self, node: cst.CSTNode) -> None:
        mutation = self._mutation_at(node)
        if mutation is None:
            return
        analysis = self._analysis()
        for read in self._seeing_reads(mutation, analysis):
            for written in mutation.ordered_origins():
                if mutation.op in catalog.INPLACE_VIEW_METHODS and written.relation is not Relation.PLAIN:
                    continue  # ``t.unsqueeze_(0)`` reshapes the tensor object, not the memory others see
                if written.find(Relation.DETACH, Relation.DATA, Relation.SNAPSHOT, Relation.PARAMS) is not None:
                    continue  # TAL201 / TAL001 / TAL401
                found = self._stale_copy(read, written, analysis) or self._changed_source(read, written)
                if found is not None:
                    self._report(mutation, read, written, *found, analysis=analysis)
                    return

    def _stale_copy(self, read: StaleRead, written: Origin, analysis: AliasAnalysis):
        """The written name is the source; the read one was made from it before the write. Not a
        window on a buffer allocated uninitialised and not written before the window was made
        (views made to be filled), nor a constant index apart from the written one."""
        if read.escape or not read.origin.derives_from(written):
            return None
        below = read.origin.chain()[len(written.chain()):]
        if not below or any(o.relation not in self._ALIAS for o in below):
            return None
        if self._window_on_a_new_buffer(written, below[0], analysis) or self._apart(below[0], read.mutation):
            return None
        return ("copy", below[-1])

    def _window_on_a_new_buffer(self, written: Origin, alias: Origin, analysis: AliasAnalysis) -> bool:
        """``packed = torch.empty(n); views = [packed[i] for i in ...]``: the views were made
        before anything was written into the buffer, so they cannot be meant as copies."""
        root = written.root
        call = root.node
        if root.relation is not Relation.FRESH or not isinstance(call, cst.Call):
            return False
        name = (self.analysis(TorchNames).qualified(call.func) or dotted_name(call.func) or "").rsplit(".", 1)[-1]
        if name not in catalog.UNINITIALISED_FACTORIES:
            return False
        order = self.analysis(ScopeOrder)
        made = order.position(alias.statement or alias.node)
        return made >= 0 and not any(
            0 <= order.position(m.node) < made and any(o.storage is root.storage for o in m.origins)
            for m in analysis.mutations())

    @staticmethod
    def _apart(alias: Origin, mutation: Mutation) -> bool:
        """``tmp = res[..., 2, 0]`` and ``res[..., 1, 0] = v``: constant indices that differ in one
        place (of the same sign) select elements apart, so the write cannot reach the alias."""
        if mutation.op != "__setitem__" or not isinstance(alias.node, cst.Subscript):
            return False
        statement = mutation.statement
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else \
            [statement.target] if isinstance(statement, cst.AugAssign) else []
        read_index = _constant_index(alias.node)
        for target in targets:
            written_index = _constant_index(target) if isinstance(target, cst.Subscript) else None
            if read_index is None or written_index is None or len(read_index) != len(written_index):
                return False
            if any((a == "...") != (b == "...") for a, b in zip(read_index, written_index)):
                return False
            if not any(isinstance(a, int) and isinstance(b, int) and a != b and (a < 0) == (b < 0)
                       for a, b in zip(read_index, written_index)):
                return False
        return bool(targets)

    def _changed_source(self, read: StaleRead, written: Origin):
        """The read name is the source; the written one was made from it by a copy-like conversion
        (or by plain assignment from a local name that is read again)."""
        if not written.derives_from(read.origin):
            return None
        below = written.chain()[len(read.origin.chain()):]
        if not below or any(o.relation not in self._ALIAS for o in below):
            return None
        conversions = [o for o in below if o.relation is Relation.CONVERSION and is_copy_intent_conversion(o.op)]
        if conversions:
            return ("source", conversions[-1])
        if read.escape and self._sample_access() and "." in read.key:
            return ("source", below[-1])  # a sample taken in __getitem__ is written into the dataset
        return None  # writing through a plain alias or a view and using the base: write-through

    def _sample_access(self) -> bool:
        scope = self.ctx.scope
        return isinstance(scope, cst.FunctionDef) and scope.name.value in catalog.SAMPLE_ACCESS_METHODS

    def _filled_by_override(self, read: StaleRead, analysis: AliasAnalysis):
        """A parameter of a method that another override of the method, elsewhere in the project,
        writes in place through the parameter itself (``Categorical._project`` clamping ``val``):
        the caller's value is written under the method's contract, not through a copy gone wrong."""
        project, scope = self.ctx.project, self.ctx.scope
        if project is None or analysis.cls is None or not isinstance(scope, cst.FunctionDef) \
                or read.key not in analysis.params:
            return None
        module = f"{project.module}." if project.module else ""
        return project.index.filled_by_override(f"{module}{analysis.cls}.{scope.name.value}",
                                                analysis.params.index(read.key))

    def _report(self, mutation: Mutation, read: StaleRead, written: Origin, direction: str, alias: Origin,
                analysis: AliasAnalysis) -> None:
        written_text = self._text(mutation.node)
        severity, evidence = self.severity, ""
        made = self._made(alias)
        line = self.ctx.line(made)
        what = {Relation.PLAIN: "the same tensor", Relation.VIEW: "a view of it",
                Relation.CONVERSION: "the same memory when no conversion is needed"}[alias.relation]
        if direction == "copy":
            other = read.key
            message = f"`{written_text}` also changes `{other}`, which is {what}, not a copy"
            notes = (f"`{self._text(made)}` (line {line}) is {what}, and {self._where(read)}.",
                     f"Use `.clone()` where `{other}` is made.")
            origin_for_signature = read.origin
        else:
            name = mutation.key or self._text(mutation.target)
            shared = {Relation.PLAIN: f"`{read.key}` itself", Relation.VIEW: f"a view of `{read.key}`",
                      Relation.CONVERSION: f"which is `{read.key}`'s own memory when no conversion is needed"
                      }[alias.relation]
            contract = self._filled_by_override(read, analysis) if read.escape else None
            if contract is not None:
                severity = Severity.WARNING
                evidence = (f" `{contract[0]}` (line {contract[1]}) writes this argument in place too, so the "
                            f"write may be meant to reach the caller.")
            message = f"`{written_text}` also changes `{read.key}`" + (f" through `{name}`" if name != read.key else "")
            notes = (f"`{name}` is `{self._text(alias.node)}` (line {line}), {shared}, and {self._where(read)}."
                     f"{evidence}", "Copy first (`.clone()`, or `.copy()` for an array).")
            origin_for_signature = written
        related = [(made, "the alias is made here"),
                   (read.node, f"`{read.key}` read here sees the write" if not read.escape
                    else f"`{read.key}` is still held by the caller")]
        # which side is written: the source (a stale alias is read) or the alias (the source changes)
        written = Side.SOURCE if direction == "copy" else Side.ALIAS
        signature = self._signature(mutation_ops(mutation, origin_for_signature), origin_for_signature,
                                    analysis, False, mutation, written)
        self.ctx.report(mutation.node, self.code, message, severity, related,
                        fix=lambda ctx: alias_copy_fix(ctx, alias), signature=signature, notes=notes)


def _constant_index(node: cst.Subscript):
    """``x[..., 2, 1::2]`` as ``("...", 2, ":")`` (a slice of any bounds, one dimension each); None
    where an index is not a constant."""
    out = []
    for element in node.slice:
        inner = element.slice
        if isinstance(inner, cst.Slice):
            out.append(":")
            continue
        value = inner.value
        if isinstance(value, cst.Ellipsis):
            out.append("...")
        elif isinstance(value, cst.Integer):
            out.append(int(value.value, 0))
        elif isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) \
                and isinstance(value.expression, cst.Integer):
            out.append(-int(value.expression.value, 0))
        else:
            return None
    return tuple(out)


def alias_copy_fix(ctx, alias: Origin):
    """TAL301: copy where the alias is made, when it is made by ``name = <alias>``."""
    stmt, node = alias.statement, alias.node
    small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    if node is None or not any(isinstance(s, (cst.Assign, cst.AnnAssign)) and s.value is node for s in small):
        return None  # ``a, b = x.unbind()``, a loop target, an argument: no single place to copy
    array = alias.op == "numpy"
    method = "copy" if array else "clone"
    return make_fix(UNSAFE, f"Make the alias a copy with `.{method}()`", *copy_after(ctx, node, method),
                    because="the alias no longer shares storage: a write to either no longer reaches the other")
