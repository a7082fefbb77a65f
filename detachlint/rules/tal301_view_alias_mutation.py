"""TAL301 view-alias-mutation: a view or alias and its source, one written while the other is read."""

from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from ..knowledge import catalog
from ..analysis.alias_model import Mutation, Origin, Relation, StaleRead
from ..analysis.alias_state import kept_by_caller, strip_aliases
from ..analysis.aliases import AliasAnalysis
from ..analysis.hooks import AppliedFunctions
from ..analysis.order import ScopeOrder
from ..analysis.tensors import Kind, TensorFacts
from ..knowledge.torch_facts import is_copy_intent_conversion, writes_receiver
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Severity
from ..signature import Side
from .alias_rule import AliasRule, int_literal, mutation_ops, whole_index
from .argument_writes import ArgumentWrites
from .base import WRITES
from .fixkit import UNSAFE, copy_after, make_fix
from .recomputed import RecomputedWrites
from .tal301_lost_write import LostWrite
from ..walk import walk


class ViewAliasMutation(LostWrite, RecomputedWrites, ArgumentWrites, AliasRule):
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
    Writing through a view on purpose (`x.view(-1)[idx] = 0`, then using `x`) is not flagged,
    nor a loop whose iterations each write and read only the elements at the loop's own index
    along a dimension the view keeps whole (`base[rows, i] = window[0, :, i]`).
    A write that reaches the caller's argument is a **warning** instead of an error where
    another override of the same method in the project writes that argument in place itself:
    changing the caller's tensor is then the method's contract. It is a warning too where the
    alias is the result of a project function that returns the argument's memory only for some
    iteration counts of a loop swapping two buffers (`x, c = c, x`): for the others it is new.
    Where only NumPy arrays are involved (no `.numpy()`, `torch.from_numpy` or tensor on the
    way), the finding is a warning about arrays; a loop that reads `a[j]` and `a[j + 1]` before
    writing `a[j]` through another name is not flagged, as no read sees a write. A conversion
    between dtype classes the code shows (`.float()` of `torch.arange(n)`, an int grid `.to()` a
    float tensor) always copies and is not flagged; where only one side's class is known, the
    finding is a warning. A transform that writes its argument through a plain alias or a view
    bound before the write, and returns that alias as its result
    (`scaled = features; scaled *= w; return scaled`), is a **warning**: the caller's tensor
    changes (a cached dataset, every epoch) while the result reads as a new one.
    A write whose result the same statement stores whole back into the name it may alias
    (`x.copy_(x.cpu().normal_())`, `x.data = x.cpu().mul_(2)`, `x[:] = ...`) leaves that name with
    the written values either way and is not flagged. A write reaching the caller's argument
    through a conversion is a **warning** where the function evidently exists to write it: a
    name ending in `_` (`def normal_(w)`), a parameter named as a destination (`out`, `buf`), an
    `inplace` parameter, or a function given to `Module.apply`. A write that replaces every value
    (`fill_`, `zero_`, `copy_`) of a whole conversion of a parameter
    (`return t.float().fill_(float("-inf")).type_as(t)`) takes only the argument's shape and type:
    a **warning**, and an **error** only where a caller in the same module reads the argument again
    after the call (a caller passing a temporary loses nothing).
    Any other write reaching the caller's argument is a **warning** where the module calls the
    function and every call passes there a local name it does not read again after the call, or an
    arithmetic result (`norm(pos / n)`): what the module's callers hold does not change; callers in
    other modules are not followed. A parameter the body hands to OpenCV (`cv2.cvtColor(image,
    ...)`) or converts with `.astype` is a NumPy array, its aliasing a warning about arrays. A
    project function that writes its argument only through an index (`x[..., -1] += eps`) is not
    known to reach a view of another part (`d = x[..., :-1]`): a warning. Constant indices apart
    (`x[:-1]` and `x[-1]`, `x[1:]` and `x[0]`) never meet. An item assigned into an
    `OrderedDict` (or another container of `collections`) replaces an entry and writes no array.
    Where nothing on the way shows a tensor rather than an array (no torch op, tensor annotation,
    in-place tensor method or tensor index; only `.shape` or slicing), the finding is a warning
    that says "array or tensor", with no fix.
    An alias made under one outcome of a test (`w = x.clone() if flag else x`, or under
    `if flag:`) never meets a write under the other; an alias a conditional expression chose is
    reported only with a write under the same outcome (the code chose it where it writes nothing
    else). A write only on a range loop's last iteration (`if step == 0:` in
    `for step in reversed(range(n))`) is not seen by the reads of a next iteration, nor is a
    write to row `j` of an ascending `range`/`enumerate` loop (`img = imgs[j, ...]; img.mul_(s)`,
    or an element of that row) by a read of `imgs[j, ...]` (or a later row) before it in the
    body: each iteration reads a row no earlier one wrote. A read of the whole base, an earlier
    row, or one in an inner loop, the index rebound in the body, or an outer loop that does not
    bind the base anew, still sees it. After
    `if mode not in ("a", "b", None): raise ...` in the function's body, an `if`/`elif` chain
    testing `mode` against each allowed value leaves no path on which no branch runs, so an
    alias every branch rebinds is not what a write after the chain reaches. An identity test
    (`x is not None`) reads no values: it sees no write. A value that fails an `isinstance` test
    on its path is not what the guarded code sees: an array made by `.numpy()` (or an item of one)
    under `isinstance(x[i], torch.Tensor)`, a `.detach()` result under `isinstance(x, np.ndarray)`;
    so `if isinstance(x[i], torch.Tensor): x[i] = ...` after `x = x.cpu().numpy()` never writes the
    caller's tensor.
    A value kept under another attribute (`batch.orig_rew = batch.rew`) or passed by keyword to a
    record's constructor (`Batch(orig_rew=batch.rew)`) is the same array: writing the source in
    place changes the "original" too. Kept under an attribute of a parameter whose name says it
    keeps a value as it was (`orig`, `old`, `prev`, `init`, `backup`, ...), it counts as read by
    the caller; through a constructor, whose storing the code does not show, it is a **warning**.
    The converse is flagged too: an in-place write into a value that is certainly new memory
    (`x.clone()`, `copy.deepcopy(x)`, `torch.tensor(x)`, `x[idx]` with an integer array, a list or
    a mask as index, `idx` also a name bound to a list display, comprehension or `list(...)`, or
    annotated `List[...]`) whose result is dropped (`out.clone().masked_fill_(mask, 0)` as a statement,
    or `tmp = x[mask]; tmp.zero_()` with `tmp` never read) is lost: `x` keeps its values. Basic
    indexing (integers, slices, `None`, `...`, a 0-d integer tensor such as `perm[i]`) is a view,
    so `stored = w[:, :, perm[i]]` changes with the next write into that channel.
    Lost the same way: a write into a weight the module computes from other tensors
    (`self.fc = weight_norm(...)` or `parametrizations.weight_norm` / `spectral_norm`, then
    `nn.init.kaiming_normal_(self.fc.weight)`, `self.fc.weight.normal_()` under `no_grad`, or the
    same on `m.weight` in a function handed to `Module.apply` by a class that wraps modules so):
    the weight is recomputed at the next forward or at each read. Through `.data` it is TAL001's.
    An op that changes only a tensor object's shape, strides or storage (`t_`, `unsqueeze_`,
    `resize_`, `set_`) changes no values: it reaches another name only where that name is the same
    object (`b = a`, or `a.cpu()` and `a.float()`, which return `a` itself when nothing converts),
    never through a view, `x[0]`, `.detach()` or `torch.from_numpy`; nor does a helper that runs one
    only on such an alias write its argument.
    A function or `forward()` that writes a tensor parameter in place, directly (`boxes *= scale`,
    `mask[:, 0] = True`, `attn_mask += pos`), through a plain alias or a view, or through
    `.detach()` in the same expression (`t.squeeze(0).detach().clamp_(0, 1)`), changes the tensor
    its caller still holds: a **warning**, and an **error** where a caller in the same module reads
    that tensor again after the call. The parameter must be shown to be a tensor (an annotation,
    `Optional[Tensor]` included, or an op only tensors and arrays have: `.detach()`, `.size(0)`,
    `.shape`, `x[:, 0]`, `torch.is_tensor(x)`); a number, a list or a dict item is never reported.
    In a module that imports another tensor library (MegEngine, TensorFlow, JAX, Paddle, OneFlow,
    CuPy, ...) and never torch, an op's name (`.permute()`, `.detach()`, `.mul_()`, `x[..., i] = v`)
    shows no torch tensor, as those libraries' tensors have the same names with semantics of their
    own: only an annotation, a tensor a project function returns, or a call in the project passing
    the parameter a tensor made by torch does; NumPy arrays keep their rules there. A method of a
    plain project class (no tensor or module among its bases) named like a tensor's in-place op
    (`prox_map.apply_(view, gamma)` of a `ProxMap`) writes what it is given, not its receiver: the
    call is no write of a receiver known to be such an object (an annotation, a constructor call),
    and no evidence that a parameter is a tensor where one of the project's methods of that name
    can take its arguments (`x.apply_(fn)` still is, where none takes one argument).
    Where writing the argument is the function's contract, nothing is reported: a name ending in
    `_`, a function that returns nothing or hands back only the argument it filled, an `inplace`
    flag, an `out`/`buf` parameter, an optimizer `step`, a `@torch.no_grad()` update or a write in a `with torch.no_grad():` block, an
    `autograd.Function`'s `forward`/`backward`, a function given to `Module.apply`, or another
    override of the method writing the argument too. Only the first write of each parameter is
    reported.

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
        prev = state
        state = state + delta    # a new tensor: neither `prev` nor the caller's changes
        return state - prev
    ```
    """

    code = "TAL301"
    severity = Severity.ERROR
    summary = "in-place write to a view or alias while the other name is read as if it were a copy"
    sites = WRITES  # reported at the write
    requires = AliasRule.requires + (AppliedFunctions,)  # functions ``Module.apply`` calls write on purpose

    _ALIAS = (Relation.PLAIN, Relation.VIEW, Relation.CONVERSION)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        # ``nn.init.kaiming_normal_(self.fc.weight)``: a torch.nn.init function no alias rule takes for a write
        if func.__class__ is cst.Attribute and func.attr.value.endswith("_") and not writes_receiver(func.attr.value) \
                and self._lost_to_recomputation(node):
            return
        super().visit_Call(node)

    def _check_write(self, node: cst.CSTNode) -> None:
        if self._lost_write(node) or self._lost_to_recomputation(node):
            return
        mutation = self._mutation_at(node)
        if mutation is None:
            return
        analysis = self._analysis()
        for read in self._seeing_reads(mutation, analysis):
            for written in mutation.ordered_origins():
                if not mutation.reaches(read.origin, written):
                    continue  # ``t.unsqueeze_(0)`` reshapes the tensor object, not the memory others see
                if written.find(Relation.DETACH, Relation.DATA, Relation.SNAPSHOT, Relation.PARAMS) is not None:
                    continue  # TAL201 / TAL001 / TAL401
                found = self._stale_copy(read, written, analysis) or self._changed_source(read, written)
                if found is not None:
                    self._report(mutation, read, written, *found, analysis=analysis)
                    return
        self._argument_write(mutation, analysis)

    def _stale_copy(self, read: StaleRead, written: Origin, analysis: AliasAnalysis):
        """The written name is the source; the read one was made from it before the write. Not a
        window on a buffer allocated uninitialised and not written before the window was made
        (views made to be filled), nor a constant index apart from the written one."""
        if (read.escape and not kept_by_caller(read.key, analysis.params)) or not read.origin.derives_from(written):
            return None
        below = read.origin.chain()[len(written.chain()):]
        if not below or any(o.relation not in self._ALIAS for o in below):
            return None
        if self._window_on_a_new_buffer(written, below[0], analysis) or self._apart(below[0], read.mutation) \
                or self._own_slice(below, read):
            return None
        return ("copy", below[-1])

    def _window_on_a_new_buffer(self, written: Origin, alias: Origin, analysis: AliasAnalysis) -> bool:
        """``packed = torch.empty(n); views = [packed[i] for i in ...]`` (or a ``torch.zeros`` rollout
        buffer whose episodes are views): the views were made before anything was written into the
        buffer, so they cannot be meant as copies."""
        root = written.root
        call = root.node
        if root.relation is not Relation.FRESH or not isinstance(call, cst.Call):
            return False
        name = (self.analysis(TorchNames).qualified(call.func) or dotted_name(call.func) or "").rsplit(".", 1)[-1]
        if name not in catalog.UNINITIALISED_FACTORIES and (
                name not in catalog.CONSTANT_FACTORIES or alias.relation is not Relation.VIEW):
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
            if not any(_disjoint(a, b) or _disjoint(b, a) for a, b in zip(read_index, written_index)):
                return False
        return bool(targets)

    def _own_slice(self, below: List[Origin], read: StaleRead) -> bool:
        """``for i in range(n): base[rows, i] = window[0, :, i]`` with ``window = base[a:b, :][None]``:
        each iteration writes, and reads, only the elements at its own ``i`` along one dimension of
        the base that the view keeps whole, so a read on a later iteration (at or before the write
        in the loop body) sees other elements than the ones written."""
        mutation, alias = read.mutation, below[-1]
        statement = mutation.statement
        loop = next((p for p in reversed(self.ctx.parents) if isinstance(p, cst.For)), None)
        if mutation.op != "__setitem__" or not isinstance(statement, cst.Assign) or len(statement.targets) != 1 \
                or loop is None or not isinstance(loop.target, cst.Name) or not isinstance(alias.node, cst.Subscript) \
                or self.ctx.after(read.node, statement):
            return False
        index = loop.target.value
        target = statement.targets[0].target
        written_at = _bare_position(target, index) if isinstance(target, cst.Subscript) else None
        dims = _view_dimensions(alias.node, len(below))
        subscript = next((s for s in _subscripts_of(loop.body, read.node)), None)
        read_at = _bare_position(subscript, index) if subscript is not None else None
        if written_at is None or dims is None or read_at is None or read_at >= len(dims):
            return False
        return dims[read_at] == (written_at, True)

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
        if read.escape and "." not in read.key and below[-1].statement is not read.mutation.statement \
                and all(_spelled(o) for o in below) and self._returned(read.mutation):
            return ("returned", below[-1])  # a transform that hands back its argument, written, as new
        return None  # writing through a plain alias or a view and using the base: write-through

    def _returned(self, mutation: Mutation) -> bool:
        """Whether the function returns the written alias, bound before the write (``scaled =
        features; scaled *= w; return scaled``): its result reads as a new value while it is the
        caller's argument."""
        scope, key = self.ctx.scope, mutation.key
        if not isinstance(scope, cst.FunctionDef) or key is None or "." in key or mutation.target is None:
            return False
        if self.analysis(TensorFacts).kind(strip_aliases(mutation.target)) not in (Kind.TENSOR, Kind.NDARRAY) \
                and not (mutation.origins and all(_made_by_tensor_method(o) for o in mutation.origins)):
            return False  # ``limits[key] *= 0.9`` into a dict, ``total *= w`` on a number: no tensor written
        finder = _Returns()
        walk(scope.body, finder)
        return key in finder.names

    @staticmethod
    def _template_only(mutation: Mutation, written: Origin, read: StaleRead, analysis: AliasAnalysis) -> bool:
        """``t.float().fill_(v)``, ``staged = t.cpu(); staged.zero_()``: the write replaces every value
        of a conversion of the parameter, whole, so the function takes nothing of the argument's values
        (a template for a new tensor's shape and type); what is lost is only what a caller keeps."""
        below = written.chain()[len(read.origin.chain()):]
        return read.escape and read.key in analysis.params and mutation.op in catalog.OVERWRITING_METHODS \
            and bool(below) and all(o.relation in (Relation.CONVERSION, Relation.PLAIN) for o in below)

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

    def _filler(self, read: StaleRead, analysis: AliasAnalysis) -> Optional[str]:
        """Why writing the parameter that ``read`` (the caller's, at the function's end) names may be
        what the function is for (``def normal_(w)``, a function given to ``Module.apply``):
        ``ArgumentWrites._meant_to_fill``."""
        scope = self.ctx.scope
        if not read.escape or not isinstance(scope, cst.FunctionDef) or read.key not in analysis.params:
            return None  # a read of the function's own after the write takes the argument for a value
        return self._meant_to_fill(scope, read.key)

    def _arrays_only(self, mutation: Mutation, read: StaleRead, written: Origin) -> bool:
        """The written expression is a NumPy array (made by NumPy, or a parameter the body hands to
        OpenCV) and no tensor is on the way to either name: no ``.numpy()``, ``torch.from_numpy``,
        ``torch.as_tensor``, no name known to be a tensor."""
        facts = self.analysis(TensorFacts)
        if mutation.target is None or (facts.kind(mutation.target) is not Kind.NDARRAY
                                       and self._numpy_parameter(written.root.source) is None):
            return False
        if isinstance(read.node, (cst.Name, cst.Attribute)) and facts.kind(read.node) is Kind.TENSOR:
            return False
        return not (set(written.ops()) | set(read.origin.ops())) & catalog.ARRAY_TENSOR_BRIDGE_OPS

    def _passed_temporaries(self, analysis: AliasAnalysis, param: str) -> Optional[int]:
        """The line of the first call of the function being linted in its own module, where every
        such call passes as ``param`` a local name or an arithmetic result (``ProjectIndex.
        passed_temporaries``); None where the module does not call it so."""
        project, scope = self.ctx.project, self.ctx.scope
        if project is None or not isinstance(scope, cst.FunctionDef):
            return None
        return project.index.passed_temporaries(self._qualname(analysis, scope), analysis.params.index(param))

    def _tensor_shown(self, mutation: Mutation, read: StaleRead, written: Origin, analysis: AliasAnalysis) -> bool:
        """Whether anything on the way shows a tensor, not only something indexable: an in-place
        tensor method or a project function's write, a name of tensor kind, a tensor op or a
        tensor-array bridge on either chain, or a tensor index (``w[:, :, perm[i]] = ...``)."""
        if mutation.op in catalog.INPLACE_METHODS or mutation.op.endswith("()"):  # ``helper()``: its summary's write
            return True
        nodes = [n for n in (mutation.target, read.node) if isinstance(n, (cst.Name, cst.Attribute))]
        if any(analysis.kind_of(n) is Kind.TENSOR for n in nodes):
            return True
        if (set(written.ops()) | set(read.origin.ops())) & (catalog.TENSOR_EVIDENCE_OPS | catalog.ARRAY_TENSOR_BRIDGE_OPS):
            return True
        subscripts = [n for n in (*(t.target for t in getattr(mutation.statement, "targets", ())),
                                  getattr(mutation.statement, "target", None), *(o.node for o in read.origin.chain()))
                      if isinstance(n, cst.Subscript)]
        return any(isinstance(e.slice, cst.Index) and analysis.kind_of(e.slice.value) is Kind.TENSOR
                   for s in subscripts for e in s.slice)

    @staticmethod
    def _part_of_callee_write(mutation: Mutation, read: StaleRead, written: Origin) -> Optional[cst.CSTNode]:
        """``d = x[..., :-1]; helper(x)`` where a project helper writes ``x`` only through an index
        (``x[..., -1] += eps``): the slice that makes the read alias only part of the written tensor.
        The summary does not say which elements the helper writes."""
        if mutation.partly_by is None:
            return None
        return next((o.node for o in read.origin.chain()[len(written.chain()):] if isinstance(o.node, cst.Subscript)
                     and not all(whole_index(e.slice) for e in o.node.slice)), None)

    def _report(self, mutation: Mutation, read: StaleRead, written: Origin, direction: str, alias: Origin,
                analysis: AliasAnalysis) -> None:
        written_text = self._text(mutation.node)
        severity, evidence = self.severity, ""
        made = self._made(alias)
        line = self.ctx.cited_line(made)
        arrays = self._arrays_only(mutation, read, written)
        if arrays:  # NumPy's own aliasing, which no tensor reaches: worth a look, not a failed build
            severity = Severity.WARNING
            evidence = " Only NumPy arrays are involved."
        shown = arrays or self._tensor_shown(mutation, read, written, analysis)
        if not shown:
            severity = Severity.WARNING  # the hazard is the same for an array; an error needs a tensor shown
            evidence = (f" Nothing here shows that `{self._text(mutation.target)}` is a tensor rather than an array"
                        f" (no torch op, annotation or in-place tensor method on the way).")
        unsure = next((o for o in [*read.origin.chain(), *written.chain()] if o.unsure), None)
        if unsure is not None:  # the alias rests on a conversion whose target dtype the code does not show
            severity = Severity.WARNING
            evidence += (f" `{self._text(unsure.node)}` converts to a dtype the code does not show: it shares "
                         f"memory only if that dtype is the one it already has.")
        kept = next((o for o in read.origin.chain() if o.op == "keyword"), None)
        if kept is not None:  # ``Record(orig=x)``: that the constructor keeps ``x`` itself is not shown
            severity = Severity.WARNING
            evidence += (f" That the constructor keeps `{self._text(kept.node)}` itself, as records and dataclasses "
                         f"do, is not shown.")
        same = "the same array" if arrays else "the same tensor" if shown else "the same array or tensor"
        what = {Relation.PLAIN: same, Relation.VIEW: "a view of it",
                Relation.CONVERSION: "the same memory when no conversion is needed"}[alias.relation]
        if direction == "copy":
            part = self._part_of_callee_write(mutation, read, written)
            if part is not None:  # the summary keeps that the callee writes, not which elements
                severity = Severity.WARNING
                evidence += (f" `{mutation.partly_by.rpartition('.')[2]}` writes only part of `{self._text(mutation.target)}` "
                             f"(through an index), and `{self._text(part)}` may be another part.")
            other = read.key
            copy = "`.copy()`" if arrays else "`.clone()`"
            # ``batch.policy.orig_rew`` is spelled nowhere when a constructor's keyword made it
            shown = f"{other.rpartition('.')[0]}`'s `{other.rpartition('.')[2]}" if kept is not None else other
            message = f"`{written_text}` also changes `{shown}`, which is {what}, not a copy"
            notes = (f"`{self._text(made)}` (line {line}) is {what}, and {self._where(read)}.{evidence}",
                     f"Use {copy} where `{other}` is made.")
            origin_for_signature = read.origin
        else:
            name = mutation.key or self._text(mutation.target)
            shared = {Relation.PLAIN: f"`{read.key}` itself", Relation.VIEW: f"a view of `{read.key}`",
                      Relation.CONVERSION: f"`{read.key}`'s own memory when no conversion is needed"
                      }[alias.relation]
            made_text = self._text(alias.node)
            if name == made_text:  # the write is through the alias expression itself: say it once
                shared = f"`{made_text}` (line {line}) is {shared}"
            else:
                which = "which is " if alias.relation is Relation.CONVERSION else ""
                shared = f"`{name}` is `{made_text}` (line {line}), {which}{shared}"
            contract = self._filled_by_override(read, analysis) if read.escape else None
            scope = self.ctx.scope
            caller = self._read_by_caller(analysis, scope, read.key) if read.escape and isinstance(
                scope, cst.FunctionDef) and read.key in analysis.params else None
            swapped = next((o for o in written.chain() if id(o.node) in analysis.partial_returns), None)
            temporaries = self._passed_temporaries(analysis, read.key) if caller is None and read.escape \
                and read.key in analysis.params else None
            if direction == "returned":
                severity = Severity.WARNING  # no caller seen reading the argument afterwards
                evidence += f" The function returns `{name}` as if it were a new tensor."
            if swapped is not None:
                severity = Severity.WARNING
                evidence += (f" `{self._text(swapped.node.func)}` returns it only for some iteration counts of a "
                             f"loop that swaps its buffers; for the others the result is a new tensor.")
            elif read.escape and self._weakly_shown(read.key, alias.node) is not None:
                severity = Severity.WARNING
                evidence += " " + self._weakly_shown(read.key, alias.node)
            elif contract is not None:
                severity = Severity.WARNING
                evidence += (f" `{contract[0]}` (line {contract[1]}) writes this argument in place too, so the "
                             f"write may be meant to reach the caller.")
            elif self._filler(read, analysis) is not None:
                severity = Severity.WARNING  # the write reaching the argument is the function's purpose
                evidence += " " + self._filler(read, analysis)
            elif self._template_only(mutation, written, read, analysis) and caller is None:
                severity = Severity.WARNING  # ``t.float().fill_(v)``: the caller's values are lost only to a caller that keeps them
                evidence += (f" `{mutation.op}` replaces every value without reading one (`{read.key}` gives only its "
                             f"shape and type), and no caller in this module is seen reading `{read.key}` after the call.")
            elif temporaries is not None:
                severity = Severity.WARNING  # what goes wrong is a caller's later read: the callers seen make none
                evidence += (f" The calls in this module (line {temporaries}) pass a local name or an arithmetic result as "
                             f"`{read.key}` and do not read it after the call; callers elsewhere are not followed.")
            if caller is not None:
                evidence += f" `{caller[0]}` passes `{read.key}` at line {caller[1]} and reads it again at line {caller[2]}."
            message = f"`{written_text}` also changes `{read.key}`" + (f" through `{name}`" if name != read.key else "")
            notes = (f"{shared}, and {self._where(read)}.{evidence}",
                     "Copy first (`.clone()`, or `.copy()` for an array).")
            origin_for_signature = written
        related = [(made, "the alias is made here"),
                   (read.node, f"`{read.key}` read here sees the write" if not read.escape
                    else f"`{read.key}` is kept by the object" if "." in read.key else f"`{read.key}` is what the caller passed")]
        # which side is written: the source (a stale alias is read) or the alias (the source changes)
        written = Side.SOURCE if direction == "copy" else Side.ALIAS
        signature = self._signature(mutation_ops(mutation, origin_for_signature), origin_for_signature,
                                    analysis, False, mutation, written)
        self.ctx.report(mutation.node, self.code, message, severity, related,
                        fix=(lambda ctx: alias_copy_fix(ctx, alias, arrays)) if shown else None,  # `.clone()` or `.copy()`: not known
                        signature=signature, notes=notes)


def _spelled(origin: Origin) -> bool:
    """An alias the code spells (``b = a``, ``a[i]``, ``a.view(n)``), not one a project helper's
    summary says it may return (``transform_points(m, a)`` returning ``a`` on some path)."""
    node = origin.node
    return origin.relation is Relation.PLAIN or isinstance(node, cst.Subscript) or (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == origin.op)


def _made_by_tensor_method(origin: Origin) -> bool:
    """Whether a method only tensors and arrays have made the value (``disp.permute(1, 0)``): as
    ``alias_calls.surely_tensor``, but spelled in the code, not a project helper's summary."""
    return any(o.op in catalog.TENSOR_EVIDENCE_OPS and isinstance(o.node, cst.Call)
               and isinstance(o.node.func, cst.Attribute) and o.node.func.attr.value == o.op for o in origin.chain())


class _Returns(cst.CSTVisitor):
    """The names a function returns (alone or in a tuple), not inside nested scopes."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        for element in [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]:
            if isinstance(element, cst.Name):
                self.names.add(element.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]


def _constant_index(node: cst.Subscript):
    """``x[..., 2, 1:, ::2]`` as ``("...", 2, (1, None), ":")``: a slice of constant bounds and no
    step as its bounds, any other as ``":"``, one dimension each; None where an index is not a
    constant."""
    out = []
    for element in node.slice:
        inner = element.slice
        if isinstance(inner, cst.Slice):
            ends = (inner.lower, inner.upper)
            bounds = tuple(int_literal(e) for e in ends)
            constant = inner.step is None and all(e is None or b is not None for e, b in zip(ends, bounds))
            out.append(bounds if constant else ":")
            continue
        value = inner.value
        if isinstance(value, cst.Ellipsis):
            out.append("...")
        else:
            number = int_literal(value)
            if number is None:
                return None
            out.append(number)
    return tuple(out)


def _disjoint(a, b) -> bool:
    """Whether index ``a`` (an int) selects, along one dimension, no element ``b`` (an int or a
    slice's bounds) does, whatever the dimension's size: ``-1`` and ``:-1``, ``0`` and ``1:``, ``2``
    and ``5``. Indices of opposite signs count from different ends and are never known apart."""
    if not isinstance(a, int):
        return False
    if isinstance(b, int):
        return a != b and (a < 0) == (b < 0)
    if not isinstance(b, tuple):
        return False
    lower, upper = b
    same = [bound for bound in (lower, upper) if bound is not None and (bound < 0) == (a < 0)]
    if (lower is not None and lower not in same) or (upper is not None and upper not in same):
        return False  # a bound counted from the other end: where it falls depends on the size
    return (lower is not None and a < lower) or (upper is not None and a >= upper)


def _bare_position(subscript: cst.Subscript, name: str):
    """The position of the index that is just ``name`` in ``x[a, b:c, name]`` (each index one
    dimension: None where ``None`` or ``...`` is among them, or where ``name`` is not alone)."""
    found = None
    for at, element in enumerate(subscript.slice):
        inner = element.slice
        value = inner.value if isinstance(inner, cst.Index) else None
        if isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None"):
            return None
        if isinstance(value, cst.Name) and value.value == name:
            found = at
    return found


def _view_dimensions(view: cst.BaseExpression, steps: int):
    """Per dimension of ``base[a:b, :][None]`` (``steps`` subscripts, all in this expression), the
    base dimension it is and whether the view keeps that dimension whole: ``[(None, False),
    (0, False), (1, True)]``; None for anything else (a ``...``, a method, a step made elsewhere)."""
    chain = []
    while isinstance(view, cst.Subscript):
        chain.append(view)
        view = view.value
    if not chain or len(chain) != steps:
        return None
    dims = None  # None: the base's own dimensions, all whole, as many as there are
    for subscript in reversed(chain):
        out, at = [], 0
        for element in subscript.slice:
            inner = element.slice
            if isinstance(inner, cst.Slice):
                whole = inner.lower is None and inner.upper is None and inner.step is None
                base, kept = (at, True) if dims is None else dims[at] if at < len(dims) else (None, False)
                out.append((base, kept and whole))
                at += 1
            elif isinstance(inner.value, cst.Name) and inner.value.value == "None":
                out.append((None, False))
            elif isinstance(inner.value, cst.Ellipsis):
                return None
            else:
                at += 1  # an integer index drops the dimension
        # past the first subscript, the base's remaining dimensions (unknown in number) go unlisted
        dims = out if dims is None else out + dims[at:]
    return dims


def _subscripts_of(root: cst.CSTNode, name: cst.CSTNode):
    """The subscripts in ``root`` taken of ``name`` (that very node)."""
    finder = _SubscriptOf(name)
    walk(root, finder)
    return finder.found


class _SubscriptOf(cst.CSTVisitor):
    def __init__(self, name: cst.CSTNode) -> None:
        self.name = name
        self.found = []

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if node.value is self.name:
            self.found.append(node)


def alias_copy_fix(ctx, alias: Origin, arrays: bool = False):
    """TAL301: copy where the alias is made, when it is made by ``name = <alias>`` (``arrays``: of
    a NumPy array, which has ``.copy()`` and no ``.clone()``)."""
    stmt, node = alias.statement, alias.node
    small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    if node is None or not any(isinstance(s, (cst.Assign, cst.AnnAssign)) and s.value is node for s in small):
        return None  # ``a, b = x.unbind()``, a loop target, an argument: no single place to copy
    method = "copy" if arrays or alias.op == "numpy" else "clone"
    return make_fix(UNSAFE, f"Make the alias a copy with `.{method}()`", *copy_after(ctx, node, method),
                    because="the alias no longer shares storage: a write to either no longer reaches the other")
