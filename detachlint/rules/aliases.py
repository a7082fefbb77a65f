"""TAL201 detach-inplace, TAL301 view-alias-mutation, TAL401 stale-snapshot: writes that reach
another name. The rules ask ``analysis/aliases`` which storage a write reaches and who reads it
afterwards; they do not follow names themselves."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from ..analysis import catalog
from ..analysis.aliases import AliasAnalysis, Mutation, Origin, Relation, StaleRead, aliases_for
from ..analysis.tensors import Kind
from ..findings import Severity
from .base import Rule
from .fixkit import UNSAFE, copy_after, make_fix, replace, require_import, wrap_call

_DTYPES = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16"}


class _AliasRule(Rule):
    """Shared plumbing: find the write (or snapshot) at a node, describe origins and reads."""

    def _analysis(self) -> Optional[AliasAnalysis]:
        return aliases_for(self.ctx)

    def _mutation_at(self, node: cst.CSTNode) -> Optional[Mutation]:
        analysis = self._analysis()
        if analysis is None:
            return None
        mutation = analysis.mutation(node)
        return mutation if mutation is not None and mutation.kind == "inplace" else None

    # visit hooks: the nodes a write can be recorded at (cheap syntactic filters first)
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and (func.attr.value in catalog.INPLACE_METHODS
                                                or func.attr.value in catalog.INPLACE_VIEW_METHODS):
            self._check_write(node)
        elif any(a.keyword is not None and a.keyword.value in ("out", "inplace") for a in node.args):
            self._check_write(node)
        elif not isinstance(func, cst.Attribute) and node.args:
            q = self.ctx.names.qualified(func)
            if q is not None and (q.startswith("torch.nn.init.") or q in catalog.NUMPY_INPLACE_FUNCTIONS
                                  or (q.startswith("torch.") and q.endswith("_"))):
                self._check_write(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.ctx.tensors.kind(node.target) in (Kind.TENSOR, Kind.NDARRAY, Kind.UNKNOWN) \
                and not isinstance(node.value, (cst.SimpleString, cst.FormattedString)):
            self._check_write(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, cst.Subscript) for t in node.targets):
            self._check_write(node)

    def _check_write(self, node: cst.CSTNode) -> None:
        pass

    # descriptions
    def _text(self, node: Optional[cst.CSTNode], limit: int = 60) -> str:
        if node is None:
            return ""
        text = " ".join(self.ctx.code_for(node).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def _made(self, origin: Origin) -> cst.CSTNode:
        """The node that shows where an alias was made: its statement, else its expression."""
        return origin.statement or origin.node or self.ctx.scope

    def _pending(self, node: cst.CSTNode) -> Optional[cst.Call]:
        order = self.ctx.scope_order()
        return order.pending_backward(node)

    def _op_args(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        """An op's arguments as source text for the runtime companion's reproducer, when they are
        all literals (``"0, 0, 2"``, ``"[:, 1:]"`` for a subscript); ``""`` for none; else None."""
        if isinstance(node, cst.Subscript):
            text = "[" + self.ctx.code_for(node).split("[", 1)[-1] if "[" in self.ctx.code_for(node) else ""
            return text if text and all(c in "0123456789:, -.[]" or c.isspace() for c in text.replace("None", "")
                                        .replace("...", "")) else None
        if isinstance(node, cst.AugAssign):
            node = node.value
            return self.ctx.code_for(node) if _literal(self.ctx.code_for(node)) else None
        if not isinstance(node, cst.Call):
            return None
        text = ", ".join(self.ctx.code_for(a).strip().rstrip(",") for a in node.args)
        return text if not node.args or (all(a.keyword is None and a.star == "" for a in node.args)
                                         and _literal(text)) else None

    def _signature(self, ops: List[str], origin: Origin, analysis: AliasAnalysis, pending: bool,
                   mutation: Optional[Mutation] = None) -> dict:
        root = origin.root
        source = {
            "parameter": root.relation is Relation.ENTRY and (
                root.source in analysis.params
                or (analysis.self_name is not None and root.source.startswith(analysis.self_name + "."))),
            "module_state": any(o.relation in (Relation.PARAMS, Relation.SNAPSHOT) for o in origin.chain())
            or root.source.rsplit(".", 1)[-1] in catalog.MODULE_TENSOR_ATTRIBUTES,
            "pending_graph": pending,
            "cpu_float": "cpu" in ops and any(op in ("float", "numpy") for op in ops),
        }
        if source["module_state"]:
            source["leaf"] = True
        dtypes = [_DTYPES[op] for op in ops if op in _DTYPES]
        if dtypes:
            source["dtype"] = dtypes[-1]
        signature = {"rule": self.code, "ops": ops, "source": source}
        chain = [o for o in origin.chain() if o.op is not None]
        if mutation is not None and len(ops) == len(chain) + 1:
            signature["args"] = [self._op_args(o.node) for o in chain] + [self._op_args(mutation.node)]
        return signature

    @staticmethod
    def _first(reads: Sequence[StaleRead]) -> Optional[StaleRead]:
        real = [r for r in reads if not r.escape]
        return (real or list(reads) or [None])[0]

    def _where(self, read: StaleRead) -> str:
        if read.escape and "." in read.key:
            return f"`{read.key}` keeps it after the method returns"
        if read.escape:
            return f"the caller still holds `{read.key}` after the function returns"
        line = self.ctx.line(read.node)
        later = " on the next iteration of the loop" if line <= self.ctx.line(read.mutation.node) else ""
        return f"`{read.key}` is read at line {line}{later}"


def _mutation_ops(mutation: Mutation, origin: Origin) -> List[str]:
    return origin.ops() + [mutation.op]


def _literal(text: str) -> bool:
    import ast

    try:
        ast.literal_eval(f"({text},)")
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


class DetachInplace(_AliasRule):
    """
    ## What it does
    Flags an in-place write to the result of `.detach()`: directly (`out.detach().zero_()`),
    through a name (`d = x.detach(); d.add_(1)`), or through conversions that return the same
    memory when nothing needs converting (`img = x.detach().cpu().numpy(); img *= 255`).

    ## Why is this bad?
    `.detach()` is not a copy: it shares `x`'s storage, so the write changes `x` too. Later
    forward computations see the new values, and if a graph that saved `x` is still waiting for
    `backward()` it raises (or, through NumPy, silently computes a wrong gradient). `.cpu()`,
    `.float()` and `.numpy()` after it copy only when the device or dtype changes, so the bug
    appears exactly when the tensor is already a CPU float tensor. It is an **error** when `x` is
    read afterwards, held by the caller, or saved by a pending backward; a **warning** otherwise.

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
    name = "detach-inplace"
    severity = Severity.ERROR
    summary = "in-place write to a .detach() result, which shares storage with the original"

    def _check_write(self, node: cst.CSTNode) -> None:
        mutation = self._mutation_at(node)
        if mutation is None:
            return
        found = self._detached(mutation)
        if found is None:
            return
        origin, detach = found
        analysis = self._analysis()
        if self._same_name_write_through(mutation, origin, detach):
            return
        source = self._source_text(detach)
        written = self._text(mutation.node)
        pending = self._pending(mutation.node)
        direct = detach.statement is mutation.statement
        related: List[Tuple[cst.CSTNode, str]] = []
        if direct:
            severity = Severity.ERROR if pending is not None else Severity.WARNING
            message = (f"`{written}` writes into `{source}` through `.detach()`, which shares its storage"
                       + (f"; the pending `{self._text(pending)}` saved it and will raise" if pending is not None
                          else "; `with torch.no_grad():` on the tensor itself says so")
                       + f". For a copy, use `{source}.detach().clone()`")
        else:
            bound = origin  # the alias as bound to the name (not the view taken in the write itself)
            while bound.statement is mutation.statement and bound.parent is not None:
                bound = bound.parent
            chain = self._text(bound.node)
            reads = [r for r in analysis.stale_reads(mutation)
                     if not r.origin.derives_from(origin) and r.origin is not origin]
            read = self._first(reads)
            name = mutation.key or self._text(mutation.target)
            made = self.ctx.line(self._made(bound))
            numpy = "numpy" in origin.ops()
            fix = f"`{source}.detach().clone()`" + (" (or `.copy()` the array)" if numpy else "")
            if read is not None or pending is not None:
                severity = Severity.ERROR
                why = self._where(read) if read is not None else f"the pending `{self._text(pending)}` saved it"
            else:
                severity = Severity.WARNING
                why = f"`{source}` is not used again here, but the write still lands in its storage"
            message = (f"`{written}` also changes `{source}`: `{name}` is `{chain}` (line {made}), which "
                       f"shares `{source}`'s storage, and {why}. Use {fix} before writing")
            related.append((self._made(bound), f"`{name}` made here shares storage with `{source}`"))
            if read is not None:
                related.append((read.node, f"`{read.key}` read here sees the write" if not read.escape
                                else f"`{read.key}` still held by the caller"))
        if pending is not None:
            related.append((pending, "the pending backward that saved the tensor"))
        self.ctx.report(mutation.node, self.code, message, severity, related,
                        fix=None if direct and _discarded(mutation) else lambda ctx: clone_fix(ctx, detach),
                        signature=self._signature(_mutation_ops(mutation, origin), origin, analysis,
                                                  pending is not None, mutation))

    @staticmethod
    def _detached(mutation: Mutation) -> Optional[Tuple[Origin, Origin]]:
        """The written origin that goes through ``.detach()`` (or ``.data`` then a conversion)."""
        for origin in sorted(mutation.origins, key=lambda o: len(o.chain())):
            chain = origin.chain()
            for i in reversed(range(len(chain))):
                link = chain[i]
                if link.relation is Relation.DETACH:
                    return origin, link
                if link.relation is Relation.DATA and any(
                        o.relation is Relation.CONVERSION and o.op in catalog.COPY_INTENT_CONVERSIONS
                        for o in chain[i + 1:]):
                    return origin, link
        return None

    @staticmethod
    def _same_name_write_through(mutation: Mutation, origin: Origin, detach: Origin) -> bool:
        """``entry = entry.detach(); entry.copy_(v)``: the author keeps calling it the same tensor
        and writes into it on purpose. A conversion in between (``x = x.detach().numpy()``) reads
        as a copy, and is still reported."""
        if detach.statement is mutation.statement or mutation.key != detach.source:
            return False
        after = origin.chain()[len(detach.chain()):]
        return not any(o.relation is Relation.CONVERSION and o.op in catalog.COPY_INTENT_CONVERSIONS
                       for o in after)

    def _source_text(self, detach: Origin) -> str:
        node = detach.node
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return self._text(node.func.value, 40)
        if isinstance(node, cst.Attribute):
            return self._text(node.value, 40)
        if isinstance(node, cst.Call) and node.args:
            return self._text(node.args[0].value, 40)
        return detach.source


class ViewAliasMutation(_AliasRule):
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

    ## Example
    ```python
    def advance(state: torch.Tensor, delta: torch.Tensor):
        prev = state
        state += delta
        return state - prev      # always zero
    ```

    ## Use instead
    ```python
    def advance(state: torch.Tensor, delta: torch.Tensor):
        prev = state.clone()
        state += delta
        return state - prev
    ```
    """

    code = "TAL301"
    name = "view-alias-mutation"
    severity = Severity.ERROR
    summary = "in-place write to a view or alias while the other name is read as if it were a copy"

    _ALIAS = (Relation.PLAIN, Relation.VIEW, Relation.CONVERSION)

    def _check_write(self, node: cst.CSTNode) -> None:
        mutation = self._mutation_at(node)
        if mutation is None:
            return
        analysis = self._analysis()
        for read in analysis.stale_reads(mutation):
            for written in mutation.origins:
                if written.find(Relation.DETACH, Relation.DATA, Relation.SNAPSHOT, Relation.PARAMS) is not None:
                    continue  # TAL201 / TAL001 / TAL401
                found = self._stale_copy(read, written, analysis) or self._changed_source(read, written)
                if found is not None:
                    self._report(mutation, read, written, *found, analysis=analysis)
                    return

    def _stale_copy(self, read: StaleRead, written: Origin, analysis: AliasAnalysis):
        """The written name is the source; the read one was made from it before the write."""
        if read.escape or not read.origin.derives_from(written):
            return None
        below = read.origin.chain()[len(written.chain()):]
        if not below or any(o.relation not in self._ALIAS for o in below):
            return None
        return ("copy", below[-1])

    def _changed_source(self, read: StaleRead, written: Origin):
        """The read name is the source; the written one was made from it by a copy-like conversion
        (or by plain assignment from a local name that is read again)."""
        if not written.derives_from(read.origin):
            return None
        below = written.chain()[len(read.origin.chain()):]
        if not below or any(o.relation not in self._ALIAS for o in below):
            return None
        conversions = [o for o in below if o.relation is Relation.CONVERSION and o.op in catalog.COPY_INTENT_CONVERSIONS]
        if conversions:
            return ("source", conversions[-1])
        if read.escape and self._sample_access() and "." in read.key:
            return ("source", below[-1])  # a sample taken in __getitem__ is written into the dataset
        return None  # writing through a plain alias or a view and using the base: write-through

    def _sample_access(self) -> bool:
        scope = self.ctx.scope
        return isinstance(scope, cst.FunctionDef) and scope.name.value in catalog.SAMPLE_ACCESS_METHODS

    def _report(self, mutation: Mutation, read: StaleRead, written: Origin, direction: str, alias: Origin,
                analysis: AliasAnalysis) -> None:
        written_text = self._text(mutation.node)
        made = self._made(alias)
        line = self.ctx.line(made)
        what = {Relation.PLAIN: "the same tensor", Relation.VIEW: "a view of it",
                Relation.CONVERSION: "the same memory when no conversion is needed"}[alias.relation]
        if direction == "copy":
            other = read.key
            message = (f"`{written_text}` also changes `{other}`: `{self._text(made)}` (line {line}) is {what}, "
                       f"not a copy, and {self._where(read)}. Use `.clone()` where `{other}` is made")
            origin_for_signature = read.origin
        else:
            name = mutation.key or self._text(mutation.target)
            shared = {Relation.PLAIN: f"`{read.key}` itself", Relation.VIEW: f"a view of `{read.key}`",
                      Relation.CONVERSION: f"which is `{read.key}`'s own memory when no conversion is needed"
                      }[alias.relation]
            message = (f"`{written_text}` also changes `{read.key}`: `{name}` is `{self._text(alias.node)}` "
                       f"(line {line}), {shared}, and {self._where(read)}. Copy first "
                       f"(`.clone()`, or `.copy()` for an array)")
            origin_for_signature = written
        related = [(made, "the alias is made here"),
                   (read.node, f"`{read.key}` read here sees the write" if not read.escape
                    else f"`{read.key}` is still held by the caller")]
        signature = self._signature(_mutation_ops(mutation, origin_for_signature), origin_for_signature,
                                    analysis, False, mutation)
        # which side is written: the source (a stale alias is read) or the alias (the source changes)
        signature["written"] = "source" if direction == "copy" else "alias"
        self.ctx.report(mutation.node, self.code, message, self.severity, related,
                        fix=lambda ctx: alias_copy_fix(ctx, alias), signature=signature)


class StaleSnapshot(_AliasRule):
    """
    ## What it does
    Flags a "snapshot" of live state that is kept across an update of that state and read
    afterwards: `best = model.state_dict()` (or a shallow `.copy()`, `dict(...)`,
    `copy.copy(...)`), `w0 = model.fc.weight.detach()` / `.data`,
    `[p.detach() for p in model.parameters()]`, `optimizer.state_dict()`; updated by
    `optimizer.step()`, in-place writes, `load_state_dict`, or the next iteration of a training
    loop; read when it is returned, saved, loaded or compared.

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
            best_state = copy.deepcopy(model.state_dict())
    ```
    or `{k: v.detach().clone() for k, v in model.state_dict().items()}`.
    """

    code = "TAL401"
    name = "stale-snapshot"
    severity = Severity.ERROR
    summary = "state_dict()/detach() snapshot of live state, updated before it is read"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and (func.attr.value in catalog.STATE_SNAPSHOT_METHODS
                                                or func.attr.value == "detach"):
            self._check_snapshot(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        pass

    def visit_Assign(self, node: cst.Assign) -> None:
        pass

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
            reads = [r for r in analysis.stale_reads_of(origin) if self._through_references(r.origin, origin)
                     and not self._written_through(r.mutation, origin)
                     and (origin.relation is Relation.SNAPSHOT or r.mutation.kind == "update")]
            reads.sort(key=lambda r: r.mutation.kind != "update")
            read = self._first(reads)
            if read is None:
                continue
            self._report(node, origin, read, analysis)
            return

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
        the dict is the point of taking it."""
        return bool(mutation.origins) and all(o is snapshot or o.derives_from(snapshot) for o in mutation.origins)

    def _report(self, node: cst.CSTNode, origin: Origin, read: StaleRead, analysis: AliasAnalysis) -> None:
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
        if self.ctx.line(mutation.node) < self.ctx.line(node):
            loop = " on the next iteration of the loop"
        message = (f"`{taken}` holds references to {what}, not a copy: `{update}` (line "
                   f"{self.ctx.line(mutation.node)}) changes it{loop}, and {self._where(read)}. Use {fix}")
        related = [(mutation.node, "the update that changes the snapshot"),
                   (read.node, f"`{read.key}` read here holds the updated values" if not read.escape
                    else f"`{read.key}` still holds the live tensors after the function returns")]
        ops = origin.ops() + [mutation.op]
        self.ctx.report(node, self.code, message, self.severity, related,
                        fix=lambda ctx: snapshot_fix(ctx, node, origin),
                        signature=self._signature(ops, origin, analysis, False, mutation))


# --- unsafe fixes: make the second name a copy (the write then no longer reaches the first) ------

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
    return make_fix(UNSAFE, "Insert `.clone()` after the detach", *copy_after(ctx, detach.node))


def alias_copy_fix(ctx, alias: Origin):
    """TAL301: copy where the alias is made, when it is made by ``name = <alias>``."""
    stmt, node = alias.statement, alias.node
    small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    if node is None or not any(isinstance(s, (cst.Assign, cst.AnnAssign)) and s.value is node for s in small):
        return None  # ``a, b = x.unbind()``, a loop target, an argument: no single place to copy
    array = alias.op == "numpy"
    method = "copy" if array else "clone"
    return make_fix(UNSAFE, f"Make the alias a copy with `.{method}()`", *copy_after(ctx, node, method))


def snapshot_fix(ctx, node: cst.CSTNode, origin: Origin):
    """TAL401: ``copy.deepcopy(model.state_dict())`` (adding ``import copy`` when missing);
    ``p.detach().clone()`` for a tensor snapshot (``p.data`` becomes ``p.detach().clone()``)."""
    if origin.relation is Relation.SNAPSHOT:
        deepcopy, imports = require_import(ctx, "copy", "deepcopy")
        if deepcopy is None:
            return None  # the name ``copy`` means something else in this file
        return make_fix(UNSAFE, f"Snapshot with `{deepcopy}(...)`", *wrap_call(ctx, node, deepcopy), *imports)
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        return make_fix(UNSAFE, "Snapshot with `.detach().clone()`", replace(ctx, node.attr, "detach().clone()"))
    return make_fix(UNSAFE, "Snapshot with `.clone()`", *copy_after(ctx, node))
