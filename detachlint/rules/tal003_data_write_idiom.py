"""TAL003 data-write-idiom: a write through ``Tensor.data`` where no graph is visible: the values
are right, but the write is untracked; ``torch.no_grad()`` gives the same values and keeps
autograd's version check. Also an op that changes only the ``.data`` alias's shape, strides or
storage (``x.data.resize_(n)``): the message says what ``x`` keeps."""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..analysis.data_use import DataUse
from ..analysis.hooks import AppliedFunctions
from ..analysis.order import ScopeOrder
from ..knowledge import catalog
from ..analysis.tensors import Kind, TensorFacts
from ..knowledge.torch_facts import converts_dtype_or_device, refuses_grad, writes_own_metadata
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Edit, Fix, Location, Severity
from ..signature import Signature, Source
from .data_write import DataWrite, alias_only, landing
from .fixkit import SAFE, UNSAFE, insert_before, line_text, make_fix, replace_tail, require_import
from ..walk import walk


# Calls whose value does not depend on grad mode or on hidden state: builtins and tensor methods.
_CALM_BUILTINS = frozenset("abs float int len max min round sum pow".split())


class DataWriteIdiom(DataWrite):
    """
    ## What it does
    Flags writes through `Tensor.data` where no graph that saved the tensor is visible: weight
    initialisation (`nn.init.normal_(m.weight.data)`, `p.data.zero_()`), an optimizer-style
    update after `backward()`, an EMA, a rebinding (`p.data = new`). The values are right; the
    idiom is discouraged. Where a graph is pending the same write is TAL001 (data-mutation), a
    hazard; this rule is the nudge, and `ignore = ["TAL003"]` drops it and keeps TAL001.
    A `data` field of a config or record is not a tensor's: `cfg.data = self.data` in a
    dataclass, or `cfg.loader.data = cfg.data` (a field moved within one object tree), is not
    flagged where nothing else shows a tensor.

    Ops that change a tensor's shape, strides or storage rather than its values (`resize_`,
    `resize_as_`, `set_`, `t_`, `transpose_`, `unsqueeze_`, `squeeze_`, `as_strided_`, ...) are
    also this rule's, whether a graph is pending or not, with a message that says what goes
    wrong: through `.data` they change only the alias, so the tensor keeps its shape (or, for
    `set_`, its storage). The old input-buffer idiom `im_data.data.resize_(s).copy_(t)` leaves
    `im_data` with its old shape (faster-rcnn.pytorch issues #483 and #543: torch releases from
    1.1 on raised "set_sizes_contiguous is not allowed on Tensor created from .data" there;
    torch 2.13 runs the line silently). A write chained after the resize (`.copy_(t)`,
    `.zero_()`) lands in the storage the tensor shares, laid out by the alias's new shape: the
    tensor sees only the values within its own shape. Where a graph is pending, that chained
    write is TAL001's.

    ## Why is this bad?
    `p.data` is an alias of `p`'s storage with a fresh version counter, so autograd cannot see
    the write. Here no graph is visible, so the numbers are right, but the write would silently
    corrupt a gradient if the code moved between a forward and its backward (or a caller holds
    such a graph: the analysis sees one function at a time). The same write under
    `torch.no_grad()` gives bit-identical values and keeps the version check as a safety net.
    `torch.nn.init` functions already write under `no_grad`: drop `.data` and nothing else.
    Rebinding `p.data = q` swaps the storage: for the same shape and dtype,
    `with torch.no_grad(): p.copy_(q)` keeps autograd informed. To change the dtype or device
    (`p.data = p.data.to(torch.bfloat16)`, `.half()`, `.cuda()`), `copy_` would convert back to the
    old one: that is the one use of `.data =` without a tracked equivalent for a lone tensor;
    `module.to(...)` converts a module's parameters (and its buffers), and
    `torch.utils.swap_tensors(p, nn.Parameter(p.to(dtype)))` swaps one. The message names the
    conversion and what it may change (`.cuda()` the device, `.half()` the dtype, `.to()` either):
    whether it does depends on what the tensor already is.

    ## Example
    ```python
    model = Net()
    for p in model.parameters():
        p.data.mul_(0.5)
    ```

    ## Use instead
    ```python
    model = Net()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)
    ```

    ## Fix safety
    The fix drops `.data` and puts the write under `with torch.no_grad():` (or just drops it
    inside an existing `no_grad` block or a `torch.nn.init` call): the same values, and the check
    armed. That is safe only where no graph that saved the tensor can run backward afterwards: at
    module level, on tensors and modules made in the function (`model = Net()`, `for p in
    model.parameters()`), on `self.<attr>` built in `__init__`, and on the module a function
    handed to `Module.apply` receives (`def init(m): nn.init.normal_(m.weight.data)` with
    `Net().apply(init)`, `G = Generator(); G.apply(init)`, `self.apply(self._init)` in `__init__`).
    Elsewhere a caller may hold such a graph (a pipeline's pending micro-batches, a loss computed
    before the call) whose backward would then raise, so the fix is unsafe, and its title says
    why; also when the receiver is a tensor only by its usage, when a later `backward()` in the
    function may run a graph built before the write, or when the statement calls user code. For
    a `.grad` that no graph in the function saved (see TAL001), the title says just that, and
    that a graph built outside the function may have. No
    fix rebinds `X.data` (`X.data = v`), `out=`, a collective, or changes a shape, strides or
    storage (`resize_`, `set_`, `t_`, ...): without `.data` the op would reach the tensor, which
    the code as written never did.
    """

    code = "TAL003"
    severity = Severity.WARNING
    summary = "write through Tensor.data where no graph is visible: prefer torch.no_grad()"

    def report_write(self, node: cst.Attribute, use: DataUse, statement: cst.CSTNode,
                     context: Optional[Tuple[str, str]], pending: Optional[cst.CSTNode]) -> None:
        owner = self.ctx.code_for(node.value)
        kept = alias_only(use)
        if kept is not None:
            message, *notes = _alias_only_advice(use, owner, kept)
            notes = [f"{context[1]}.", *notes] if context is not None else notes
        else:
            message, note = self._advice(use, owner, statement)
            # a forward hook's round trip through another dtype, a ``.grad`` no graph saved: why no gradient changes
            notes = [f"{context[1]}.", note] if context is not None else [f"{self.no_graph()}; {note}"]
        unsafe = self._unsafe_because(node, owner)
        fix = (lambda ctx, use=use, parents=list(self.ctx.parents), statement=statement, unsafe=unsafe:
               no_grad_fix(ctx, use, parents, statement, unsafe))
        self.ctx.report(use.reported, self.code, message, self.severity, fix=fix,
                        signature=Signature(self.code, (use.op,) if use.op else (), write=use.write,
                                            source=Source(pending_graph=False)),
                        notes=tuple(notes))

    def _advice(self, use: DataUse, owner: str, statement: cst.CSTNode) -> Tuple[str, str]:
        """The message (one sentence) and what to write instead (the note), as the fix does it."""
        what = self.what(use)
        if use.write == "assign":
            value = statement.value if isinstance(statement, cst.Assign) else None
            method = _conversion(value) if value is not None else None
            if method is not None:  # what the conversion may change, never that it did: its source's may match
                return (f"{what} a `.{method}()` result may change its {_may_change(method)} behind autograd's back",
                        f"`{owner}.copy_(...)` would keep the old dtype and device. `module.to(...)` converts a "
                        f"module's parameters and buffers, `torch.utils.swap_tensors` swaps one tensor; "
                        f"`.data =` is acceptable where no graph saved `{owner}`.")
            return (f"{what} swaps its storage behind autograd's back",
                    f"`with torch.no_grad(): {owner}.copy_(...)` (same shape and dtype) or "
                    f"`torch.utils.swap_tensors` keep autograd informed.")
        message = f"{what} bypasses autograd's version counter"
        if use.write == "init" and (self.analysis(TorchNames).qualified(use.reported.func) or "").startswith(
                "torch.nn.init."):
            return message, "`torch.nn.init` already writes under `no_grad`: drop `.data`."
        if self.analysis(TorchNames).grad_disabled(self.ctx.parents):
            return message, "the write is already under `no_grad`: drop `.data`."
        return message, "`with torch.no_grad():` without `.data` gives identical values and keeps the check."

    def _unsafe_because(self, node: cst.Attribute, owner: str) -> Optional[str]:
        """Why dropping ``.data`` may change the program (None: it cannot). A graph that saved
        ``X`` and runs backward after the write would raise once the write is visible to autograd:
        one built before the write in this function, or one a caller holds, which only a tensor
        made in this function (or an object still being built in ``__init__``, or a module a
        function handed to ``Module.apply`` receives from such a call) cannot be in."""
        facts = self.analysis(TensorFacts)
        applied = self._applied(node.value)
        if facts.kind(node.value) is not Kind.TENSOR and applied is None:
            return f"`{owner}` is a tensor only by how it is used"
        # a ``.grad`` no graph here saved: only one built outside this function can have
        elsewhere = (f"no graph in this {self.scope_word()} saved the gradient `{owner}`, but one built outside it "
                     f"may have, and its backward() would raise") if self._unsaved_gradient(node) is not None else None
        if self.analysis(ScopeOrder).backward_after(node) is not None:
            return elsewhere or (f"a later backward() in this {self.scope_word()} may run a graph that saved "
                                 f"`{owner}`, and would raise")
        if applied is not None:
            return None if applied else (f"`Module.apply` hands this {self.scope_word()} a module that a caller may "
                                         f"have run a graph through; its backward() would raise")
        if facts.function is not None and not _made_here(facts.function, node.value, facts.current_class is not None):
            return elsewhere or f"a caller may hold a graph that saved `{owner}`; its backward() would raise"
        return None

    def _applied(self, receiver: cst.BaseExpression) -> Optional[bool]:
        """For ``m.weight`` in a function (or lambda) handed to ``Module.apply`` in this module,
        with ``m`` the parameter ``apply`` passes each submodule in: whether every such call is
        on a module made just before it (``AppliedFunctions``); None otherwise."""
        parts = (dotted_name(receiver) or "").split(".")
        if len(parts) < 2:
            return None
        applied = self.analysis(AppliedFunctions)
        parents = self.ctx.parents
        for at in range(len(parents) - 1, -1, -1):
            scope = parents[at]
            if isinstance(scope, cst.Lambda):
                params = scope.params.params
                if id(scope) in applied.lambdas and params and params[0].name.value == parts[0]:
                    return applied.lambdas[id(scope)]
                return None
            if isinstance(scope, cst.FunctionDef):
                params = scope.params.params
                skip = 1 if at >= 2 and isinstance(parents[at - 2], cst.ClassDef) and not _static(scope) else 0
                module = params[skip] if len(params) > skip else None
                if module is not None and module.name.value == parts[0] and scope.name.value in applied.functions:
                    return applied.functions[scope.name.value]
                return None
        return None


def _alias_only_advice(use: DataUse, owner: str, kept: str) -> Tuple[str, str, str]:
    """The message, what happens, and what to write instead for ``X.data.resize_(s)`` and the
    other ops that change only the alias ``.data`` returns (``kept``: what ``X`` keeps)."""
    op, lands = use.op, landing(use)
    message = f"`.{op}()` on `{owner}.data` changes only the `.data` alias: `{owner}` keeps its {kept}"
    what = ("gives that object another storage" if kept == "storage" else
            "resizes that object" if kept == "shape" else "changes that object's shape and strides")
    happens = (f"`{owner}.data` is another tensor object: `.{op}()` {what} only, so after this line `{owner}` has "
               f"its old {kept}.")
    if lands is not None:
        happens += (f" `.{lands}()` then writes into the storage `{owner}` shares, laid out by the alias's new {kept}: "
                    + (f"`{owner}` sees only the values within its own shape." if kept == "shape" else
                       f"`{owner}` sees them in its own layout."))
    elif kept == "storage" and use.then:
        happens += f" What the chain writes after it lands in that other storage, not in `{owner}`."
    if refuses_grad(op):
        advice = (f"To resize `{owner}`, call `.{op}()` on `{owner}` itself (one that requires grad cannot be resized, "
                  f"even under `torch.no_grad()`: bind a new tensor to the name instead).")
    else:
        advice = f"To change `{owner}`, call `.{op}()` on `{owner}` itself, under `torch.no_grad()` where it requires grad."
    return message, happens, advice


def _static(function: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in function.decorators)


def _conversion(value: cst.BaseExpression) -> Optional[str]:
    """``to`` of ``p.data.to(torch.bfloat16)``, ``half`` of ``q.half().contiguous()``: the outermost
    method of a chain of tensor method calls that may change the dtype or device; None for none."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if converts_dtype_or_device(value.func.attr.value):
            return value.func.attr.value
        value = value.func.value
    return None


def _may_change(method: str) -> str:
    """What a conversion method can change: ``cuda`` the device, ``half`` the dtype, ``to`` either."""
    if method in catalog.DEVICE_METHODS:
        return "device"
    return "dtype or device" if method in catalog.DEVICE_OR_DTYPE_CONVERSIONS else "dtype"


def no_grad_fix(ctx, use: DataUse, parents: Sequence[cst.CSTNode], statement: cst.CSTNode,
                unsafe: Optional[str]) -> Optional[Fix]:
    """The same write without ``.data``, under ``torch.no_grad()``: identical values, and autograd's
    version check stays armed. ``torch.nn.init`` functions already run under ``no_grad``; a write
    already inside ``with torch.no_grad():`` (or an ``@torch.no_grad()`` function) needs no block.
    Unsafe, with the reason in its title, when ``unsafe`` says why (``DataWriteIdiom._unsafe_because``)
    or when an argument calls user code (which would then also run under ``no_grad``); not offered
    where dropping ``.data`` is not the same write (rebinding ``X.data``, ``out=``, a collective,
    ``resize_``/``set_``/``t_``, a write inside a larger expression or on a line shared with other
    statements)."""
    names = ctx.get(TorchNames)
    drop = replace_tail(ctx, use.data.value, use.data, "")
    if use.write == "init":
        if not (names.qualified(use.reported.func) or "").startswith("torch.nn.init."):
            return None
        return _fix("Remove `.data` (`torch.nn.init` writes under `no_grad`)", unsafe, drop)
    if not _whole_statement(use, statement) or _other_data_writes(statement, use.data):
        return None  # ``p.data.copy_(q.data.mul_(2))``: q's write would stay behind, now reported
    at = next((i for i in range(len(parents) - 1, -1, -1) if parents[i] is statement), -1)
    line, block = (parents[at - 1], parents[at - 2]) if at >= 2 else (None, None)
    if (not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1
            or not isinstance(block, (cst.IndentedBlock, cst.Module))):
        return None  # ``if c: p.data.zero_()`` or ``a(); p.data.zero_()``: left as they are
    if unsafe is None and not _calm(statement, names):
        unsafe = "a call in the statement runs code that would then run under `no_grad` too"
    if names.grad_disabled(parents):
        return _fix("Remove `.data` (the write is already under `no_grad`)", unsafe, drop)
    spelled, imports = require_import(ctx, "torch", "no_grad")
    if spelled is None:
        return None
    position = ctx.position(line)
    if position.start.line != position.end.line and _has_multiline_string(line):
        return None  # re-indenting its continuation lines would change the string
    indent = ctx.module.default_indent
    head = line_text(ctx, position.start.line)[:position.start.column]
    edits: List[Edit] = [*imports, insert_before(ctx, line, f"with {spelled}():\n{head}{indent}"), drop]
    # Continuation lines move with the statement (inside brackets any indentation parses).
    for row in range(position.start.line + 1, position.end.line + 1):
        edits.append(Edit(Location(row, 0), Location(row, 0), indent))
    return _fix(f"Remove `.data` and write under `with {spelled}():`", unsafe, *edits)


def _fix(title: str, unsafe: Optional[str], *edits: Edit) -> Fix:
    return make_fix(UNSAFE if unsafe else SAFE, title, *edits, because=unsafe)


def _made_here(function: cst.FunctionDef, receiver: cst.BaseExpression, method: bool) -> bool:
    """Whether what ``receiver`` names was made in ``function``, so that no caller can hold a graph
    that saved it: every name it is rooted at is bound here (before the write, in any order) only
    by constructing something (``nn.Linear(...)``, ``Net()``, ``torch.zeros(...)``), or iterates
    the parameters of such names (``for p in model.parameters()``); in ``__init__``, ``self.fc``
    (of ``self.fc.weight``) counts as such a name: the object is still being built."""
    parts = (dotted_name(receiver) or "").split(".")
    root = parts[0]
    if not root:
        return False
    params = function.params
    if method and function.name.value == "__init__" and params.params and params.params[0].name.value == root:
        if len(parts) < 2:
            return False
        root = f"{root}.{parts[1]}"  # ``self.fc.weight``: ``self.fc`` must be built here
    bindings = _Bindings()
    walk(function.body, bindings)
    todo, seen = [root], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        values = bindings.values.get(name)
        if not values:
            return False  # a parameter, a global, or bound some way not seen here
        for value in values:
            roots = bindings.iterated_roots(value)
            if roots is None:
                return False
            todo.extend(roots)
    return True


class _Bindings(cst.CSTVisitor):
    """``name -> the values bound to it`` in a function body (not in nested scopes): assignments
    to a name or a dotted name (``self.fc``), and loop targets (bound to what the loop iterates)."""

    def __init__(self) -> None:
        self.values: dict = {}
        self.loops: Set[int] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

    def _bind(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression], loop: bool = False) -> None:
        if isinstance(target, (cst.Name, cst.Attribute)):
            key = dotted_name(target)
            if key is not None:
                self.values.setdefault(key, []).append(value)
            if loop and value is not None:
                self.loops.add(id(value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            if loop:  # ``for e, p in zip(...)``: each bound to what is iterated
                for element in target.elements:
                    self._bind(element.value, value, loop)
            elif isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) \
                    and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
                for element, bound in zip(target.elements, value.elements):  # ``a, b = A(), B()``
                    self._bind(element.value, bound.value)
            else:
                for element in target.elements:
                    self._bind(element.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, node.iter, loop=True)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, node.iter, loop=True)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, None)

    def iterated_roots(self, value: Optional[cst.BaseExpression]) -> Optional[List[str]]:
        """The names a bound value must itself be made from for it to be made here; ``[]`` for a
        construction; None when it may come from elsewhere."""
        if value is None:
            return None
        if id(value) in self.loops:  # ``model.parameters()``, ``zip(a.parameters(), b.parameters())``
            calls = [value]
            if isinstance(value, cst.Call) and dotted_name(value.func) in ("zip", "enumerate"):
                calls = [a.value for a in value.args]
            roots = []
            for call in calls:
                if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                        and call.func.attr.value in catalog.PARAMETER_ITERATORS | catalog.NAMED_PARAMETER_ITERATORS):
                    return None
                owner = dotted_name(call.func.value)
                if owner is None:
                    return None
                roots.append(owner.split(".")[0])
            return roots
        if isinstance(value, cst.Call):
            name = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
            if name[:1].isupper() or name in catalog.TENSOR_FUNCTIONS:
                return []  # ``nn.Linear(3, 3)``, ``Net()``, ``torch.zeros(3)``: made by this call
        return None


def _whole_statement(use: DataUse, statement: cst.CSTNode) -> bool:
    """The write is the whole statement: ``X.data.op_(...)`` (a chain), ``X.data[i] = v``,
    ``X.data[i] += v`` or ``name.data += v`` (not ``obj.attr += v``: that also calls a setter)."""
    if use.write == "inplace":
        return (isinstance(statement, cst.Expr) and statement.value is use.reported
                # through ``p.data`` a write of the tensor's own size, storage or strides leaves ``p``
                # as it was, so dropping ``.data`` would change the program
                and not writes_own_metadata(use.op) and not _chain_has(use.reported, writes_own_metadata))
    if use.write == "setitem":
        return isinstance(statement, (cst.Assign, cst.AugAssign)) and (
            isinstance(statement, cst.AugAssign) or len(statement.targets) == 1)
    if use.write == "augassign":
        return isinstance(statement, cst.AugAssign) and (
            isinstance(use.reported, cst.Subscript) or isinstance(use.data.value, cst.Name))
    return False


def _other_data_writes(statement: cst.CSTNode, data: cst.Attribute) -> bool:
    writes = _DataWrites(data)
    walk(statement, writes)
    return writes.found


class _DataWrites(cst.CSTVisitor):
    """An in-place call on ``.data`` other than the one of ``data`` (``x.data.add_(...)``)."""

    def __init__(self, data: cst.Attribute) -> None:
        self.data = data
        self.found = False

    def visit_Call(self, call: cst.Call) -> None:
        func = call.func
        if (isinstance(func, cst.Attribute) and func.attr.value.endswith("_")
                and isinstance(func.value, cst.Attribute) and func.value.attr.value == "data"
                and func.value is not self.data):
            self.found = True


def _has_multiline_string(node: cst.CSTNode) -> bool:
    strings = _MultilineStrings()
    walk(node, strings)
    return strings.found


class _MultilineStrings(cst.CSTVisitor):
    """A string literal that may span lines."""

    def __init__(self) -> None:
        self.found = False

    def visit_SimpleString(self, string: cst.SimpleString) -> None:
        self.found = self.found or "\n" in string.value

    def visit_FormattedString(self, string: cst.FormattedString) -> None:
        self.found = True  # conservatively: its parts may span lines


def _chain_has(call: cst.CSTNode, method: Callable[[str], bool]) -> bool:
    while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        if method(call.func.attr.value):
            return True
        call = call.func.value
    return False


class _Calls(cst.CSTVisitor):
    def __init__(self, names: TorchNames) -> None:
        self.names = names
        self.calm = True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and not (self.names.qualified(func) or "").startswith("torch."):
            return  # a method: tensors' and numbers' methods compute the same under no_grad
        qualified = self.names.qualified(func) or ""
        if not (qualified.startswith("torch.") or (isinstance(func, cst.Name) and func.value in _CALM_BUILTINS)):
            self.calm = False


def _calm(statement: cst.CSTNode, names: TorchNames) -> bool:
    """No call in the statement runs user code (which ``no_grad`` would change: a graph it
    builds and keeps, a ``requires_grad`` it reads)."""
    calls = _Calls(names)
    walk(statement, calls)
    return calls.calm
