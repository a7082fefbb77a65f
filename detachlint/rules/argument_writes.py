"""TAL301's argument writes (issue 40): a function or ``forward`` that writes a tensor parameter in
place, directly or through a plain alias, a view, ``.detach()`` in the same expression or a
conversion that may return the same memory, so that the caller's tensor changes.

A mixin of ``ViewAliasMutation``: asked at a write that no alias pair of the function explains.
Quiet where writing the argument is the function's contract (its name ends in ``_``, it returns
nothing, it takes an ``inplace`` flag, it is an optimizer ``step``, a ``@torch.no_grad()``
update, an ``autograd.Function``'s ``forward``/``backward``, a function handed to
``Module.apply``, or another override of the method writes the argument too), and where nothing
shows that the parameter is a tensor (an annotation, or an op only tensors and arrays have:
``param_evidence``).
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from ..knowledge import catalog
from ..knowledge.torch_facts import may_alias_conversion
from ..analysis.alias_model import Mutation, Origin, Relation
from ..analysis.aliases import AliasAnalysis
from ..analysis.hooks import AppliedFunctions
from ..analysis.param_evidence import LIST_ACCEPTING, NUMPY, TENSOR, evidence_of, tensor_tested
from ..analysis.tensors import Kind, TensorFacts
from ..analysis.torchnames import TorchNames, dotted_name, target_names
from ..findings import Severity
from ..signature import Side
from ..walk import walk

_THROUGH = (Relation.PLAIN, Relation.VIEW, Relation.CONVERSION, Relation.DETACH)
# A parameter by one of these names, or a flag by one of these, says the function writes on purpose.
_DESTINATIONS = frozenset("out dst dest buf buffer".split())
_FLAG_RE = re.compile(r"in_?place", re.IGNORECASE)
_REFILLS = catalog.OVERWRITING_METHODS | {"set_"}
_RATES = frozenset("lr learning_rate step_size".split())
_COPY_METHODS = frozenset("clone copy".split())
UPDATE_NAME_RE = re.compile(r"update|step|ema|momentum", re.IGNORECASE)
# ``autograd.Function``'s static methods: ``forward`` marks what it writes dirty, ``backward`` may
# write the incoming gradient it owns.
_FUNCTION_METHODS = frozenset("forward backward jvp vjp setup_context".split())


class ArgumentWrites:
    """``ViewAliasMutation._argument_write``; see the module docstring."""

    def _argument_write(self, mutation: Mutation, analysis: AliasAnalysis) -> None:
        scope = self.ctx.scope  # type: ignore[attr-defined]
        if not isinstance(scope, cst.FunctionDef) or mutation.target is None or not _writes_values(mutation):
            return
        found = self._written_parameter(mutation, analysis)
        if found is None:
            return
        param, origin = found
        if mutation.op in _REFILLS and origin.parent is None:
            return  # ``conv_state.copy_(new)``: the whole argument refilled, a cache or buffer updated on purpose
        if self._grad_disabled():
            return  # ``with torch.no_grad(): p.mul_(d)``: an update outside autograd, as ``p.data.mul_(d)`` is
        first = ("argument_written", id(scope), param)
        if first in self.ctx.memo or self._contract(scope, param, analysis):  # type: ignore[attr-defined]
            return  # one finding per parameter: its first write
        evidence = self._tensor_evidence(scope, param, analysis)
        if evidence is None or (not evidence[1] and _keyed_item(mutation)):
            return  # ``spec[key] = v`` where only ``spec.shape`` shows anything: a TensorDict, a spec, a frame
        read = self._read_by_caller(analysis, scope, param)
        name = scope.name.value
        if read is None and name.startswith("_") and not name.startswith("__"):
            return  # a private helper, its callers of this module know what it writes
        self.ctx.memo[first] = True  # type: ignore[attr-defined]
        self._report_argument_write(mutation, analysis, scope, param, origin, evidence, read)

    def _grad_disabled(self) -> bool:
        """Whether the write being visited runs in a ``with torch.no_grad():`` (or ``inference_mode``)
        block of its function (``TorchNames.grad_disabled`` without the decorator: a decorated
        function is a contract only for an update's name, ``_contract``)."""
        names = self.analysis(TorchNames)  # type: ignore[attr-defined]
        for node in reversed(self.ctx.parents):  # type: ignore[attr-defined]
            if isinstance(node, cst.FunctionDef):
                return False
            if isinstance(node, cst.With) and names.disables_grad(node):
                return True
        return False

    def _written_parameter(self, mutation: Mutation, analysis: AliasAnalysis) -> Optional[Tuple[str, Origin]]:
        """The parameter whose caller's tensor the write reaches, and the written origin: the entry
        itself, or what plain aliases, views and conversions made of it. ``.detach()`` only in the
        write's own expression with no backward pending (else TAL201 speaks), ``.data`` never
        (TAL001). An alias bound in another statement counts only where the caller's value is
        read as changed (``_seeing_reads``: not copied back, not on exclusive branches)."""
        if isinstance(mutation.node, cst.Assign) and any(_string_index(t.target) for t in mutation.node.targets):
            return None  # ``sample["image"] = ...``: a container's item
        for origin in mutation.ordered_origins():
            chain = origin.chain()
            root = chain[0]
            if root.relation is not Relation.ENTRY or root.source not in analysis.params \
                    or root.source == analysis.self_name:
                continue
            below = chain[1:]
            if not mutation.reaches(root, origin):
                continue  # ``v = x[0]; v.resize_(n)``: only ``v`` changes; the caller's ``x`` keeps its shape
            if any(o.relation not in _THROUGH or o.unsure or o.op in catalog.LAYOUT_CONVERSIONS for o in below):
                continue
            detached = [o for o in below if o.relation is Relation.DETACH]
            if detached and (any(o.statement is not mutation.statement for o in detached)
                             or self._pending(mutation.node) is not None or _discarded(mutation)):  # type: ignore[attr-defined]
                continue
            bound_before = [o for o in below if o.statement is not mutation.statement]
            if bound_before and not any(r.escape and r.key == root.source
                                        for r in self._seeing_reads(mutation, analysis)):  # type: ignore[attr-defined]
                continue
            if not self._only_defaulted(mutation, root, analysis):
                return None
            return root.source, origin
        return None

    @staticmethod
    def _only_defaulted(mutation: Mutation, entry: Origin, analysis: AliasAnalysis) -> bool:
        """Whether every other value the write may reach was bound in place of a missing argument
        (``if mask is None: mask = torch.ones(n)``): where the parameter was rebound on another
        path (``img = upsample(img)`` under ``if img is not None``), the caller's tensor reaches
        the write only on paths the analysis cannot tell apart from impossible ones."""
        default = (f"{entry.source} is None", True)
        for other in mutation.origins:
            root = other.root
            if root is entry:
                continue
            if root.statement is None or default not in analysis.conditions_of(root.statement):
                return False
        return True

    def _meant_to_fill(self, scope: cst.FunctionDef, param: str) -> Optional[str]:
        """Why the function evidently exists to write ``param`` (its name, the parameter's, an
        ``inplace`` parameter, ``Module.apply``), as a sentence for a message; None where nothing says so."""
        name = scope.name.value
        if name.endswith("_") and not name.endswith("__"):
            return f"`{name}` ends in `_`, as in-place ops do: writing its argument may be what it is for."
        if param in _DESTINATIONS:
            return f"`{param}` names a destination: writing it may be what `{name}` is for."
        params = [p.name.value for p in (*scope.params.posonly_params, *scope.params.params,
                                         *scope.params.kwonly_params)]
        if any(_FLAG_RE.search(p) for p in params):
            return f"`{name}` takes an in-place flag: writing its argument may be configured."
        if name in self.analysis(AppliedFunctions).functions:  # type: ignore[attr-defined]
            return f"`{name}` is given to `Module.apply`, as initialisers that fill a module's tensors are."
        return None

    def _contract(self, scope: cst.FunctionDef, param: str, analysis: AliasAnalysis) -> bool:
        """Whether writing the argument is what the function is for."""
        name = scope.name.value
        if name.endswith("_") or (name.startswith("__") and name != "__call__") or name == "step":
            return True
        params = [p.name.value for p in (*scope.params.posonly_params, *scope.params.params,
                                         *scope.params.kwonly_params)]
        if "copy" in params or _reads_a_flag(scope):
            return True  # ``x.mul_(g) if self.inplace else x * g``, a ``copy=False`` flag: writing is configured
        if any(p in _RATES for p in params):
            return True  # ``def _single_tensor_adam(p, exp_avg, ..., lr)``: an update rule writes its state
        if _keeps_a_copy(scope, param):
            return True  # ``x_orig = x.clone()`` before mixing into ``x``: the author knows ``x`` is written
        if name in _FUNCTION_METHODS and params and params[0] == "ctx":
            return True
        decorators = [dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or ""
                      for d in scope.decorators]
        if any(d.endswith("no_grad") for d in decorators) and UPDATE_NAME_RE.search(name):
            return True
        if any(".library." in f".{d}." for d in decorators):
            return True  # ``@torch.library.impl(...)``: the op's schema declares what it writes
        returned = _returned_values(scope)
        if not returned:
            return True  # the write is the function's only effect
        if name not in ("forward", "__call__") and all(_is_parameter(r, param) for r in returned):
            return True  # ``x.clamp_(0, 1); return x``: a filler that hands its argument back, as in-place ops do
        # asked after the checks above: ``Module.apply`` calls are found by a walk of the whole module
        if self._meant_to_fill(scope, param) is not None:
            return True  # ``def normal_(w)``, ``Module.apply(init)``: writing is its purpose
        project = self.ctx.project  # type: ignore[attr-defined]
        if project is not None and analysis.cls is not None and param in analysis.params:
            module = f"{project.module}." if project.module else ""
            if project.index.filled_by_override(f"{module}{analysis.cls}.{name}", analysis.params.index(param)):
                return True
        return False

    def _tensor_evidence(self, scope: cst.FunctionDef, param: str,
                         analysis: AliasAnalysis) -> Optional[Tuple[str, bool]]:
        """What shows that ``param`` holds a tensor (or an array): its annotation, or an op of the
        body only tensors and arrays have, and whether a tensor is shown (not only an array);
        None where nothing does. In a module of another tensor library (``TorchNames.foreign``),
        where no op is evidence, a call in the project passing it a tensor made by torch
        (``ProjectIndex.tensor_parameters``) is."""
        facts = self.analysis(TensorFacts)  # type: ignore[attr-defined]
        for p in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params):
            if p.name.value == param and p.annotation is not None:
                annotation = p.annotation.annotation
                kinds = {facts.annotation_kind(annotation), facts.optional_kind(annotation)}
                if kinds & {Kind.TENSOR, Kind.NDARRAY}:
                    return (f"`{param}` is annotated `{self._text(annotation, 40)}`",  # type: ignore[attr-defined]
                            Kind.TENSOR in kinds)
                return None  # annotated as something else
        found = self._evidence(scope).get(param)
        if found is None:
            project = self.ctx.project  # type: ignore[attr-defined]
            if facts.names.foreign and project is not None and analysis.params.index(param) in \
                    project.index.tensor_parameters(self._qualname(analysis, scope)):
                return f"a call in the project passes `{param}` a tensor made by torch", True
            return None
        kind, node = found
        what = "a tensor" if kind == TENSOR else "a tensor or an array"
        return (f"`{self._text(node, 40)}` (line {self.ctx.cited_line(node)}) shows `{param}` is {what}",  # type: ignore[attr-defined]
                kind == TENSOR)

    def _weakly_shown(self, param: str, conversion: cst.CSTNode) -> Optional[str]:
        """Why the unannotated parameter ``param`` may not share memory with what ``conversion``
        made of it, where the body shows it only to be an array or a tensor (``.shape``,
        ``.transpose()``: the caller may pass an image of another dtype) or only through a
        conversion that also takes lists and numbers (``torch.as_tensor(f)``); None where a tensor
        is shown (``.detach()``, ``isinstance(x, torch.Tensor)``) or annotated."""
        scope = self.ctx.scope  # type: ignore[attr-defined]
        if not isinstance(scope, cst.FunctionDef) or any(
                p.name.value == param and p.annotation is not None
                for p in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params)):
            return None
        found = self._evidence(scope).get(param)
        if found is None:
            return None
        kind, node = found
        if isinstance(node, cst.Call) and self.analysis(TensorFacts).names.qualified(node.func) in LIST_ACCEPTING:  # type: ignore[attr-defined]
            return (f"Nothing but `{self._text(conversion)}` shows that `{param}` is a tensor: the caller "  # type: ignore[attr-defined]
                    f"may pass a list or a number, which the conversion copies.")
        if kind != TENSOR and param not in tensor_tested(scope, self.analysis(TensorFacts).names):  # type: ignore[attr-defined]
            what = "a NumPy array" if kind == NUMPY else "an array or a tensor"
            return (f"Only `{self._text(node, 40)}` shows what `{param}` is ({what}, of a dtype "  # type: ignore[attr-defined]
                    f"not shown): the conversion may copy it.")
        return None

    def _numpy_parameter(self, param: str) -> Optional[cst.CSTNode]:
        """What shows that the parameter ``param`` is a NumPy array and not a tensor (``cv2.cvtColor(x,
        ...)``, ``x.astype(t)``), where nothing shows it a tensor; None otherwise."""
        scope = self.ctx.scope  # type: ignore[attr-defined]
        if not isinstance(scope, cst.FunctionDef):
            return None
        found = self._evidence(scope).get(param)
        if found is None or found[0] != NUMPY or param in tensor_tested(scope, self.analysis(TensorFacts).names):  # type: ignore[attr-defined]
            return None
        return found[1]

    def _evidence(self, scope: cst.FunctionDef):
        key = ("argument_evidence", id(scope))
        shown = self.ctx.memo.get(key)  # type: ignore[attr-defined]
        if shown is None:
            facts = self.analysis(TensorFacts)  # type: ignore[attr-defined]
            shown = self.ctx.memo[key] = evidence_of(scope, facts.names, shared=facts.shared_methods)
        return shown

    def _read_by_caller(self, analysis: AliasAnalysis, scope: cst.FunctionDef,
                        param: str) -> Optional[Tuple[str, int, int]]:
        """A caller in this module that reads the argument after the call (``ProjectIndex``)."""
        project = self.ctx.project  # type: ignore[attr-defined]
        if project is None:
            return None
        return project.index.read_after_call(self._qualname(analysis, scope), analysis.params.index(param))

    def _qualname(self, analysis: AliasAnalysis, scope: cst.FunctionDef) -> str:
        """The function's name as the project index keys it (``pkg.mod.Class.method``)."""
        project = self.ctx.project  # type: ignore[attr-defined]
        module = f"{project.module}." if project.module else ""
        owner = f"{analysis.cls}." if analysis.cls else ""
        return f"{module}{owner}{scope.name.value}"

    def _report_argument_write(self, mutation: Mutation, analysis: AliasAnalysis, scope: cst.FunctionDef,
                               param: str, origin: Origin, evidence: Tuple[str, bool],
                               read: Optional[Tuple[str, int, int]]) -> None:
        written = self._text(mutation.node)  # type: ignore[attr-defined]
        name = mutation.key or self._text(mutation.target)  # type: ignore[attr-defined]
        below = origin.chain()[1:]
        through = ""
        if below and name != param:
            made = next((o for o in reversed(below) if o.statement is not mutation.statement), below[-1])
            through = (f" `{name}` is `{self._text(made.node)}` (line {self.ctx.cited_line(self._made(made))}), "  # type: ignore[attr-defined]
                       f"{_sharing(below)} `{param}`.")
        elif below:
            through = f" `{self._text(below[-1].node)}` is {_sharing(below)} `{param}`."  # type: ignore[attr-defined]
        kind = "function" if analysis.cls is None else "method"
        severity = Severity.WARNING
        message = f"`{written}` writes the caller's `{param}` in place"
        held = (f"what the caller passed as `{param}` changes: a caller that keeps it sees the write after the {kind} "
                f"returns, as does any graph that saved it")
        if read is not None:
            caller, call, line = read
            message += f", which `{caller}` reads at line {line} after the call at line {call}"
            held = f"`{caller}` passes `{param}` at line {call} and reads it again at line {line}, changed"
            if scope.name.value.startswith("_") or analysis.cls is not None:  # ``self._mix(x)``, ``_helper(x)``
                held += " (a helper of its caller's, which may count on the write: worth a look)"
            elif not evidence[1]:
                held += " (nothing shows a tensor rather than an array: worth a look, not a failed build)"
            elif not _computes_from(scope, param):
                held += (f" (the {kind}'s result does not come from `{param}`'s values: the write may be what the "
                         f"caller wants, as a buffer scaled before a reduction)")
            else:
                severity = Severity.ERROR  # a public function that computes its result from the argument it writes
        notes = (f"{evidence[0]}, and {held}.{through}",
                 f"Copy first (`{param} = {param}.clone()`), or name the {kind} with a trailing `_` if "
                 f"writing the argument is its purpose.")
        definition = next(p for p in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params)
                          if p.name.value == param)
        # an op arrays share with tensors (``x.shape``, ``x[..., i]``) shows no more than "an array or a tensor"
        related = [(definition, f"`{param}` is the caller's {'tensor' if evidence[1] else 'array or tensor'}")]
        signature = self._signature([*origin.ops(), mutation.op], origin, analysis, False, mutation,  # type: ignore[attr-defined]
                                    Side.ALIAS if below else Side.SOURCE)
        self.ctx.report(mutation.node, self.code, message, severity, related,  # type: ignore[attr-defined]
                        signature=signature, notes=notes)


def _writes_values(mutation: Mutation) -> bool:
    """An augmented or item assignment, or a tensor's in-place method writing its receiver (not
    ``unsqueeze_``, which reshapes the object, nor a call of a project function, ``prox.apply_(p,
    g)`` of a project class included: that function's own write is reported)."""
    node = mutation.node
    if isinstance(node, (cst.AugAssign, cst.Assign)):
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value in catalog.INPLACE_METHODS and mutation.target is node.func.value


def _keyed_item(mutation: Mutation) -> bool:
    """``x[key] = v`` with one plain index (a name, an attribute, a call): what a mapping with a
    shape (a TensorDict, a spec, a data frame) takes as well as an array."""
    node = mutation.node
    if not isinstance(node, cst.Assign):
        return False
    return any(isinstance(t.target, cst.Subscript) and len(t.target.slice) == 1
               and isinstance(t.target.slice[0].slice, cst.Index)
               and isinstance(t.target.slice[0].slice.value, (cst.Name, cst.Attribute, cst.Call))
               for t in node.targets)


def _string_index(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Subscript) and any(
        isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.FormattedString))
        for e in target.slice)


def _discarded(mutation: Mutation) -> bool:
    """``x.detach().mul_(d)`` as a statement: written through on purpose (an EMA)."""
    stmt = mutation.statement
    small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    return any(isinstance(s, cst.Expr) and s.value is mutation.node for s in small)


def _sharing(below: List[Origin]) -> str:
    relations = {o.relation for o in below}
    if Relation.CONVERSION in relations:
        return "the same memory, when no conversion is needed, as"
    if relations & {Relation.VIEW, Relation.DETACH}:
        return "a view of"
    return "the same tensor as"


def _is_parameter(node: cst.BaseExpression, param: str) -> bool:
    """``x``, ``x.clamp_(0, 1)`` (an in-place method returns its receiver), or a conversion of either
    (``x.to(torch.float32).clamp_(0, 1).to(x.dtype)``)."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and (node.func.attr.value in catalog.INPLACE_METHODS or may_alias_conversion(node.func.attr.value)):
        node = node.func.value
    return isinstance(node, cst.Name) and node.value == param


def _keeps_a_copy(scope: cst.FunctionDef, param: str) -> bool:
    """Whether the body binds a copy of ``param`` to another name (``x_orig = x.clone()``)."""
    finder = _CopiesKept(param)
    walk(scope.body, finder)
    return finder.found


class _CopiesKept(cst.CSTVisitor):
    def __init__(self, param: str) -> None:
        self.param = param
        self.found = False

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _COPY_METHODS and _root_name(value.func.value) == self.param \
                and not any(isinstance(t.target, cst.Name) and t.target.value == self.param for t in node.targets):
            self.found = True  # ``x_orig = x.clone()``, ``first = x[0].clone()``, ``a = x.detach().cpu().clone()``


_METADATA = frozenset("shape dtype device ndim is_cuda requires_grad layout".split()) | catalog.METADATA_METHODS


def _computes_from(scope: cst.FunctionDef, param: str) -> bool:
    """Whether a value the function returns is computed from ``param``'s values (through the
    assignments of its body), not only from its shape or dtype: a measurement (a score, a norm)
    that writes the argument on the way, where its callers cannot expect the write."""
    finder = _Taint(param)
    for _ in range(4):  # assignments in any order, a few steps deep
        before = set(finder.tainted)
        walk(scope.body, finder)
        if finder.tainted == before:
            break
    return finder.returned


class _Taint(cst.CSTVisitor):
    def __init__(self, param: str) -> None:
        self.tainted = {param}
        self.returned = False

    def _mentions(self, node: cst.CSTNode) -> bool:
        finder = _Mentions(self.tainted)
        walk(node, finder)
        return finder.found

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._mentions(node.value):
            for target in node.targets:
                self.tainted.update(target_names(target.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and self._mentions(node.value):
            self.tainted.add(node.target.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and self._mentions(node.value):
            self.returned = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]


class _Mentions(cst.CSTVisitor):
    """A tainted name read for its values: not ``x.shape``, ``x.dtype``, ``x.size(0)``."""

    def __init__(self, names) -> None:
        self.names = names
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not (isinstance(node.value, cst.Name) and node.attr.value in _METADATA)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.found = True


def _root_name(node: cst.BaseExpression) -> Optional[str]:
    """``x`` of ``x``, ``x[0]``, ``x.detach().cpu()``, ``x.T``."""
    while True:
        if isinstance(node, cst.Subscript) or isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return node.value if isinstance(node, cst.Name) else None


def _reads_a_flag(scope: cst.FunctionDef) -> bool:
    """Whether the body reads an ``inplace`` flag (``self.inplace``, ``inplace``)."""
    finder = _FlagReads()
    walk(scope.body, finder)
    return finder.found


class _FlagReads(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Name(self, node: cst.Name) -> None:
        if _FLAG_RE.search(node.value):
            self.found = True


def _returned_values(scope: cst.FunctionDef) -> List[cst.BaseExpression]:
    finder = _ValueReturns()
    walk(scope.body, finder)
    return finder.found


class _ValueReturns(cst.CSTVisitor):
    """The values a function returns (or yields), not counting nested scopes."""

    def __init__(self) -> None:
        self.found: List[cst.BaseExpression] = []

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and not (isinstance(node.value, cst.Name) and node.value.value == "None"):
            self.found.append(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]
