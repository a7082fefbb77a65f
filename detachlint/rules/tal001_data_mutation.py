"""TAL001 data-mutation: a write through ``Tensor.data``, the alias autograd cannot see."""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Set

import libcst as cst

from ..analysis.data_use import DataUse, classify_data_use
from ..analysis.graph_use import GraphUse, neg_inf_fill
from ..analysis.hooks import ForwardHooks
from ..analysis.order import ScopeOrder
from ..analysis import catalog
from ..analysis.tensors import Kind, TensorFacts
from ..analysis.torch_facts import is_view_method, may_return_receiver, writes_own_metadata
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Edit, Fix, Location, Severity
from ..signature import Signature, Source
from .base import Rule, Sites
from .fixkit import SAFE, UNSAFE, insert_before, line_text, make_fix, replace_tail, require_import
from ..walk import walk


# Calls whose value does not depend on grad mode or on hidden state: builtins and tensor methods.
_CALM_BUILTINS = frozenset("abs float int len max min round sum pow".split())


class DataMutation(Rule):
    """
    ## What it does
    Flags writes through `Tensor.data`: in-place methods (`p.data.mul_(0.5)`,
    `p.data.add_(u).clamp_(0, 1)`), item and slice assignment (`p.data[mask] = 0`), augmented
    assignment (`p.data *= 2`), rebinding (`p.data = new`), `torch.nn.init.*_(p.data)` and
    `out=p.data`.

    ## Why is this bad?
    `p.data` is an alias of `p`'s storage with a fresh version counter, so autograd cannot see
    the write. If a graph that saved `p` (or a view of it) is still waiting for `backward()`,
    the gradient is silently computed from the new values: no error, wrong numbers. Between
    computing a loss and calling `backward()`, or in a forward hook, this is an **error**. Inside
    `forward()` it is one where an op before the write may have saved the tensor (a product, a
    module call; not a view, a sum, `+` or a comparison of it) in a graph that may be
    backpropagated (not one whose values only feed `argmin`), or where the tensor is a result
    of the graph and a later op backpropagates through it: autograd then sends gradient to the
    cells the write replaced (not to cells set to -inf before a softmax or sigmoid, which get
    none). Elsewhere (weight initialisation, an optimizer-style update after `backward()`, an EMA
    of buffers no op saved) the values are correct, and it is a **warning**: the same write under
    `torch.no_grad()` gives bit-identical results and keeps the version check as a safety net.
    A hook that gives a tensor its own values in another floating dtype and back
    (`w.data = w.data.float()` ... `w.data = w.data.half()`) changes no value: a warning.

    ## Example
    ```python
    loss = criterion(model(x), y)
    for p in model.parameters():
        p.data.mul_(0.5)          # the pending backward reads the halved weights
    loss.backward()
    ```

    ## Use instead
    ```python
    loss = criterion(model(x), y)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)
    ```
    or `p.detach().mul_(0.5)`, which shares the version counter, so a write that would corrupt
    a pending backward raises instead.

    ## Fix safety
    Where no graph is pending, the fix drops `.data` and puts the write under
    `with torch.no_grad():` (or just drops it inside an existing `no_grad` block or a
    `torch.nn.init` call): the same values, and the check armed. That is safe only where no
    graph that saved the tensor can run backward afterwards: at module level, on tensors and
    modules made in the function (`model = Net()`, `for p in model.parameters()`), and on
    `self.<attr>` built in `__init__`. Elsewhere a caller may hold such a graph (a pipeline's
    pending micro-batches, a loss computed before the call) whose backward would then raise, so
    the fix is unsafe, and its title says why; also when the receiver is a tensor only by its
    usage, when a later `backward()` in the function may run a graph built before the write, or
    when the statement calls user code. Where a graph is pending (an error), no edit keeps what
    the program computes, and none is offered. A `backward()` of a loss that came from outside
    the function (a parameter, an attribute) counts as pending: its graph was built before.
    """

    code = "TAL001"
    severity = Severity.ERROR
    summary = "in-place write through Tensor.data, invisible to autograd"
    requires = (TensorFacts, TorchNames, ScopeOrder, ForwardHooks)
    sites = Sites(attributes=catalog.UNTRACKED_ALIAS_ATTRIBUTES)  # every write it reports goes through `.data`

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._statements: Set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        kind = self.analysis(TensorFacts).kind(node.value)
        if kind is not Kind.TENSOR and kind is not Kind.UNKNOWN:
            return
        use = classify_data_use(node, self.ctx.parents, self.analysis(TorchNames))
        if use.write is None or (kind is Kind.UNKNOWN and not self._evidence(use)):
            return
        statement = self.ctx.statement()
        if id(statement) in self._statements:
            return
        self._statements.add(id(statement))
        owner = self.ctx.code_for(node.value)
        severity, context, pending = self._severity(node)
        if use.write in ("init", "collective"):
            what = f"`{self.ctx.code_for(use.reported.func)}()` on `{owner}.data`"
        else:
            what = {
                "inplace": f"`.{use.op}()` on `{owner}.data`",
                "assign": f"assigning `{owner}.data`",
                "setitem": f"item assignment into `{owner}.data`",
                "augassign": f"augmented assignment to `{owner}.data`",
                "out": f"`out={owner}.data`",
            }[use.write]
        if severity is Severity.ERROR:
            remedy = (f"write after `{self.ctx.code_for(pending)}`, under `with torch.no_grad():`" if pending
                      else f"compute with an updated copy of `{owner}` instead, or write after backward() "
                           f"under `with torch.no_grad():`")
            message = (f"{what} changes `{owner}` behind autograd's back {context}: the gradient will be "
                       f"silently wrong. To keep the values, {remedy}")
        elif context is not None:  # a dtype round trip in a forward hook
            message = (f"{what} swaps its storage behind autograd's back {context}; "
                       f"`torch.utils.swap_tensors` keeps autograd informed")
        elif use.write == "assign":
            message = (f"{what} swaps its storage behind autograd's back; {self._no_graph()}, but "
                       f"`with torch.no_grad(): {owner}.copy_(...)` (same shape) or "
                       f"`torch.utils.swap_tensors` keep autograd informed")
        else:
            message = (f"{what} bypasses autograd's version counter; {self._no_graph()}, and "
                       f"`with torch.no_grad():` gives identical values and keeps the check")
        related = [(pending, "the pending backward() that reads the changed values")] if pending else []
        fix = None
        if severity is Severity.WARNING:  # where a graph is pending no edit keeps the behaviour
            unsafe = self._unsafe_because(node, owner)
            fix = (lambda ctx, use=use, parents=list(self.ctx.parents), statement=statement, unsafe=unsafe:
                   no_grad_fix(ctx, use, parents, statement, unsafe))
        self.ctx.report(use.reported, self.code, message, severity, related, fix=fix,
                        signature=Signature(self.code, (use.op,) if use.op else (), write=use.write,
                                            source=Source(pending_graph=severity is Severity.ERROR)))

    def _severity(self, node: cst.Attribute):
        """Error when a graph that may have saved the tensor is pending, with why and where."""
        order = self.analysis(ScopeOrder)
        pending = order.pending_backward(node)
        if pending is not None:
            loss = order.built_outside(pending)
            built = f" (built before this function ran: `{loss}` comes from outside it)" if loss is not None else ""
            return (Severity.ERROR, f"while a graph{built} is pending until `{self.ctx.code_for(pending)}` "
                                    f"(line {self.ctx.line(pending)})", pending)
        function = self.analysis(TensorFacts).function
        if function is not None:
            name = function.name.value
            cls = self.analysis(TensorFacts).current_class
            if name == "forward" and cls is not None and cls.is_module:
                context = self._graph_hazard(order, function, node)
                if context is not None:
                    return Severity.ERROR, context, None
            # Only a (post-)forward hook runs after the module's forward used its tensors; a
            # pre-hook runs before, like weight initialisation.
            if name in self.analysis(ForwardHooks).functions:
                back = self._round_trip(node)
                if back is not None:
                    return (Severity.WARNING, f"inside a forward hook; it gives `{dotted_name(node.value)}` its own "
                                              f"values in another floating dtype, and line {back} converts them "
                                              f"the other way: a round trip, no value the forward used changes", None)
                return Severity.ERROR, "inside a forward hook, after the forward used it", None
        return Severity.WARNING, None, None

    def _round_trip(self, node: cst.Attribute) -> Optional[int]:
        """``w.data = w.data.float()`` in one hook and ``w.data = w.data.half()`` in its pair (or
        ``.to(float32)`` then ``.to(dtype)`` in one hook): the line of the other conversion of the
        same tensor's own values between floating dtypes, in the class (or function) around it."""
        if _dtype_cast_of_itself(self.ctx.statement(), node) is None:
            return None
        around = next((p for p in self.ctx.parents if isinstance(p, cst.ClassDef)), None) \
            or next((p for p in self.ctx.parents if isinstance(p, cst.FunctionDef)), None)
        casts = _Casts(self.ctx.code_for(node).strip(), self.ctx.statement())
        walk(around, casts)
        return self.ctx.line(casts.found) if casts.found is not None else None

    def _evidence(self, use: DataUse) -> bool:
        """Whether a write through ``X.data`` on an ``X`` of unknown kind is a tensor's: by the
        write itself (``_tensor_evidence``), or, for ``X.data = v``, by ``v``: a tensor made by torch
        (``torch.empty(...)``, ``t.narrow(...)``) or another name's ``.data``."""
        statement = self.ctx.statement()
        value = statement.value if use.write in ("assign", "setitem") and isinstance(statement, cst.Assign) else None
        if _tensor_evidence(use, value):
            return True
        # not made from the receiver's own field (``rec.data = rec.data.detach()``, or by a function
        # of the project, ``rec.data = dequantize(rec.data)``: a record's tensor field, as likely)
        if use.write != "assign" or value is None or self.analysis(TensorFacts).kind(value) is not Kind.TENSOR \
                or dotted_name(use.data.value) in _data_roots(value):
            return False
        if isinstance(value, cst.Call) and _tensor_method(value) is None \
                and self.analysis(TorchNames).qualified(value.func) is None:
            own = _OwnData(dotted_name(use.data.value))
            walk(value, own)
            return not own.found
        return True

    def _unsafe_because(self, node: cst.Attribute, owner: str) -> Optional[str]:
        """Why dropping ``.data`` may change the program (None: it cannot). A graph that saved
        ``X`` and runs backward after the write would raise once the write is visible to autograd:
        one built before the write in this function, or one a caller holds, which only a tensor
        made in this function (or an object still being built in ``__init__``) cannot be in."""
        facts = self.analysis(TensorFacts)
        if facts.kind(node.value) is not Kind.TENSOR:
            return f"`{owner}` is a tensor only by how it is used"
        if self.analysis(ScopeOrder).backward_after(node) is not None:
            return f"a later backward() in this {self._scope_word()} may run a graph that saved `{owner}`, and would raise"
        if facts.function is not None and not _made_here(facts.function, node.value, facts.current_class is not None):
            return f"a caller may hold a graph that saved `{owner}`; its backward() would raise"
        return None

    def _no_graph(self) -> str:
        """What was seen of graphs where the write is a warning: inside a module's ``forward()`` a
        graph is being built, but no op of it was seen to save the tensor or to backpropagate
        through the written cells."""
        facts = self.analysis(TensorFacts)
        if facts.function is not None and facts.function.name.value == "forward" \
                and facts.current_class is not None and facts.current_class.is_module:
            return "no op of the graph this forward() builds was seen to save it or to backpropagate through it"
        return f"no graph is visible in this {self._scope_word()}"

    def _scope_word(self) -> str:
        return "function" if self.analysis(TensorFacts).function is not None else "module"

    def _graph_hazard(self, order: ScopeOrder, function: cst.FunctionDef, node: cst.Attribute) -> Optional[str]:
        """Inside ``forward()``, where the graph of this call is being built: why the write changes
        a gradient, or None. Either an op before it may have saved the tensor (``self.fc.weight``
        also by a call of ``self.fc``; not a view, a sum, ``+`` or a comparison of it, nor a use of
        a tensor bound anew since), or the tensor is a value of the graph and an op after the write
        backpropagates into it: autograd sends gradient to the cells the write replaced (not when
        they became -inf before a softmax, which gives them none)."""
        name = dotted_name(node.value)
        if name is None:
            return None
        parts = name.split(".")
        modules = [".".join(parts[:k]) for k in range(len(parts) - 1, 1, -1)]
        graph = GraphUse(function.body, order, self.analysis(TorchNames), [name, *modules])
        saved = graph.saved_before(name, node, modules)
        if saved is not None:
            use, op = saved
            if op is not None:
                return f"inside forward(), after `{op}` (line {self.ctx.line(use)}) saved it for backward as its result"
            return (f"inside forward(), after line {self.ctx.line(use)} handed it to an op of the graph being "
                    f"built, which may have saved it for backward")
        params = function.params.params
        if len(parts) > 1 or (params and params[0].name.value == name) or graph.made_without_graph(name):
            return None  # a parameter or buffer of the module: a leaf, no gradient passes through it
        statement = self.ctx.statement()
        read = graph.gradient_read_after(name, node, statement, neg_inf_fill(_written_value(statement, node)))
        if read is None:
            return None
        return (f"inside forward(), where line {self.ctx.line(read)} backpropagates through it into the cells "
                f"the write replaced as if they still held what the graph computed")


def no_grad_fix(ctx, use: DataUse, parents: Sequence[cst.CSTNode], statement: cst.CSTNode,
                unsafe: Optional[str]) -> Optional[Fix]:
    """The same write without ``.data``, under ``torch.no_grad()``: identical values, and autograd's
    version check stays armed. ``torch.nn.init`` functions already run under ``no_grad``; a write
    already inside ``with torch.no_grad():`` (or an ``@torch.no_grad()`` function) needs no block.
    Unsafe, with the reason in its title, when ``unsafe`` says why (``DataMutation._unsafe_because``)
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


_FLOAT_CASTS = frozenset(m for m, c in catalog.CLASS_METHODS.items() if c == "float") | (catalog.DTYPE_ARGUMENT_METHODS - {"type_as"})


def _dtype_cast_of_itself(statement: Optional[cst.CSTNode], data: cst.Attribute) -> Optional[str]:
    """``X.data = X.data.half()`` (``.float()``, ``.to(...)``): the text of ``X.data``, else None."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    target, value = statement.targets[0].target, statement.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _FLOAT_CASTS and isinstance(target, cst.Attribute)
            and target.attr.value == "data" and (data is None or target is data)):
        return None
    name = dotted_name(target)
    return name if name is not None and dotted_name(value.func.value) == name else None


class _Casts(cst.CSTVisitor):
    """Another ``X.data = X.data.<floating cast>()`` of the same ``X.data`` than ``statement``."""

    def __init__(self, data: str, statement: Optional[cst.CSTNode]) -> None:
        self.data, self.statement = data, statement
        self.found: Optional[cst.Assign] = None

    def visit_Assign(self, node: cst.Assign) -> None:
        if node is not self.statement and self.found is None and isinstance(self.statement, cst.Assign) \
                and _dtype_cast_of_itself(node, None) == self.data.replace(" ", "") \
                and not node.value.deep_equals(self.statement.value):  # the other way, not the same cast again
            self.found = node


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


class _OwnData(cst.CSTVisitor):
    """Whether an expression reads ``<receiver>.data``."""

    def __init__(self, receiver: Optional[str]) -> None:
        self.receiver = receiver
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "data" and self.receiver is not None and dotted_name(node.value) == self.receiver:
            self.found = True


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


def _tensor_evidence(use: DataUse, value: Optional[cst.BaseExpression] = None) -> bool:
    """``x.data.add_(...)`` / ``nn.init.normal_(x.data)`` / ``dist.all_reduce(x.data)`` on a name
    (``p``, ``self.fc.weight``): only a tensor's ``.data`` has these; ``x.data = q.data`` /
    ``x.data[:n] = 0.9 * q.data`` / ``x.data = layer.weight``: the value assigned is another
    tensor. On an item of a container or a call result only with more than the write
    (``bindings[k].data.resize_()`` reads the ``data`` field of a record): an item of
    ``module._buffers``, a tensor method's result (``w.reshape(-1).data.copy_(...)``), or an
    in-place write from another tensor's ``.data`` (``bufs[0].data.add_(bufs[i].data)``)."""
    owner = use.data.value
    if isinstance(owner, cst.Attribute) and owner.attr.value in catalog.MODULE_TENSOR_ATTRIBUTES:
        return True  # ``module.weight.data = ...``, ``layers[-1].bias.data``: a module's parameter or buffer
    if isinstance(owner, cst.Subscript) and isinstance(owner.value, cst.Attribute) \
            and owner.value.attr.value in catalog.MODULE_TENSOR_DICTS:
        return True
    receiver = dotted_name(owner)
    inplace = use.write == "inplace" and use.op in catalog.INPLACE_METHODS
    if receiver is None:
        return inplace and (_tensor_method(owner) is not None or any(
            _data_roots(arg.value) or isinstance(arg.value, cst.Attribute) and arg.value.attr.value == "data"
            for arg in use.reported.args))
    if use.write in ("init", "collective"):
        return True
    if value is not None and _data_roots(value) - {receiver}:
        return True  # another tensor: the receiver's own ``.data`` is as likely a record's field
    return inplace


def _tensor_method(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The receiver of ``x.narrow(...)``, ``x.to(...)``, ``x.detach()``: tensor methods whose
    result is the tensor itself or a view or copy of it (None for any other expression)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        if may_return_receiver(method) or is_view_method(method) \
                or method in catalog.COPY_METHODS or method in catalog.TENSOR_ONLY_METHODS:
            return node.func.value
    return None


_TENSOR_FIELDS = frozenset({"data", *catalog.MODULE_TENSOR_ATTRIBUTES})


def _data_roots(value: cst.BaseExpression) -> Set[str]:
    """The expressions whose tensor the value is made from by tensor ops only, where the value
    shows it is a tensor: ``q`` for ``q.data``, ``q.data.cuda()``, ``0.9 * q.data``, ``q.data[:4]``,
    ``q[i].narrow(0, 0, n).data``, ``layer.weight``; ``(...)`` for the ``.data`` of an arithmetic
    result; none for ``check_yaml(opt.data)`` (a field handed to a function)."""
    while True:
        if isinstance(value, cst.Attribute) and value.attr.value in _TENSOR_FIELDS:
            inner = value.value
            while True:  # ``groups[i][j].data``, ``t.narrow(0, 0, n).view(s).data``: made from ``groups``, ``t``
                if isinstance(inner, cst.Subscript):
                    inner = inner.value
                elif _tensor_method(inner) is not None:
                    inner = _tensor_method(inner)
                else:
                    break
            if isinstance(inner, cst.BinaryOperation) and value.attr.value == "data":
                return {"(...)"}  # ``(p.data + 1).data``: only a tensor (or an array) result has one
            name = dotted_name(inner)
            return {name if value.attr.value == "data" else f"{name}.{value.attr.value}"} if name is not None else set()
        if isinstance(value, cst.BinaryOperation):
            return _data_roots(value.left) | _data_roots(value.right)
        if isinstance(value, cst.UnaryOperation):
            value = value.expression
        elif isinstance(value, cst.Subscript):
            value = value.value
        elif _tensor_method(value) is not None:
            value = _tensor_method(value)
        else:
            return set()


def _written_value(statement: Optional[cst.CSTNode], data: cst.Attribute) -> Optional[cst.BaseExpression]:
    """The value a ``.data`` write stores, where one is spelled: ``x.data[m] = v``,
    ``x.data.masked_fill_(m, v)``, ``x.data.fill_(v)`` (``zero_()``: ``0``); else None."""
    if isinstance(statement, cst.Assign):
        return statement.value
    call = statement.value if isinstance(statement, cst.Expr) else None
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.value is data:
        method, args = call.func.attr.value, [a.value for a in call.args if a.keyword is None]
        if method == "zero_":
            return cst.Integer("0")
        if method == "fill_" and args:
            return args[0]
        if method == "masked_fill_" and len(args) > 1:
            return args[1]
    return None
