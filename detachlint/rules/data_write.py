"""What TAL001 and TAL003 share: finding the writes through ``Tensor.data`` and deciding, for each,
whether a graph that may have saved the tensor is pending (TAL001, data-mutation: a hazard) or none
is visible (TAL003, data-write-idiom: the discouraged idiom). One code, one meaning: a user can turn
the idiom off and keep the hazards."""

from __future__ import annotations

from typing import Callable, ClassVar, Optional, Set, Tuple

import libcst as cst

from ..analysis.data_use import DataUse, classify_data_use, own_data
from ..analysis.graph_use import GraphUse, exact_neg_inf, neg_inf_fill, unsaved_gradient
from ..analysis.hooks import AppliedFunctions, ForwardHooks
from ..analysis.order import ScopeOrder
from ..knowledge import catalog
from ..analysis.tensors import Kind, TensorFacts
from ..knowledge.torch_facts import (gradient_at_neg_inf_only_from_infinite_loss, is_view_method, kept_through_data,
                                     may_return_receiver)
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Severity
from .base import Rule, Sites
from .recomputed import Recomputed, RecomputedWrites
from ..walk import walk


class DataWrite(RecomputedWrites, Rule):
    """The shared detection (not a rule of its own: it has no code). A subclass reports the writes
    of its ``severity`` through ``report_write``."""

    requires = (TensorFacts, TorchNames, ScopeOrder, ForwardHooks, AppliedFunctions)
    sites = Sites(attributes=catalog.UNTRACKED_ALIAS_ATTRIBUTES)  # every write it reports goes through `.data`
    severity: ClassVar[Severity]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._statements: Set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data" or own_data(node, self.ctx.parents):
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
        self._statements.add(id(statement))  # one finding per statement, of whichever rule its first write is
        lost = self._recomputed(node, use)
        if lost is not None:  # the write never reaches the weight: that, not the idiom, is what goes wrong
            if self.severity is Severity.ERROR:
                self.report_lost(use, lost)
            return
        # ``X.data.resize_(n)`` alone changes no value of ``X``: no gradient can go wrong, whatever is pending
        severity, context, pending = ((Severity.WARNING, None, None) if alias_only(use) and landing(use) is None
                                      else self._severity(node))
        if severity is self.severity:
            self.report_write(node, use, statement, context, pending)

    def report_write(self, node: cst.Attribute, use: DataUse, statement: cst.CSTNode,
                     context: Optional[Tuple[str, str]], pending: Optional[cst.CSTNode]) -> None:
        raise NotImplementedError

    def report_lost(self, use: DataUse, lost: Recomputed) -> None:
        what = (f"`{self.ctx.code_for(use.reported.func)}()`" if use.write == "init" else
                {"inplace": f"`.{use.op}()`", "assign": "assigning `.data`", "setitem": "item assignment",
                 "augassign": "augmented assignment"}[use.write])
        self.ctx.report(use.reported, self.code, lost.message(what), Severity.ERROR, notes=lost.notes())

    def what(self, use: DataUse) -> str:
        """The write, as messages name it: ```.mul_()` on `p.data```, ``assigning `p.data```."""
        owner = self.ctx.code_for(use.data.value)
        if use.write in ("init", "collective"):
            return f"`{self.ctx.code_for(use.reported.func)}()` on `{owner}.data`"
        return {
            "inplace": f"`.{use.op}()` on `{owner}.data`",
            "assign": f"assigning `{owner}.data`",
            "setitem": f"item assignment into `{owner}.data`",
            "augassign": f"augmented assignment to `{owner}.data`",
            "out": f"`out={owner}.data`",
        }[use.write]

    def _severity(self, node: cst.Attribute) -> Tuple[Severity, Optional[Tuple[str, str]], Optional[cst.CSTNode]]:
        """Error when a graph that may have saved the tensor is pending, with where the write is (a
        phrase), why that is a hazard (a sentence) and the pending backward, if one is named."""
        order = self.analysis(ScopeOrder)
        pending = order.pending_backward(node)
        grad = self._unsaved_gradient(node)
        if grad is not None:
            return Severity.WARNING, ("", grad), None
        if pending is not None:
            loss = order.built_outside(pending)
            built = f" (built before this function ran: `{loss}` comes from outside it)" if loss is not None else ""
            return (Severity.ERROR, ("before a pending backward()", f"A graph{built} is pending until "
                                     f"`{self.ctx.code_for(pending)}` (line {self.ctx.cited_line(pending)})"), pending)
        function = self.analysis(TensorFacts).function
        if function is not None:
            name = function.name.value
            cls = self.analysis(TensorFacts).current_class
            if name == "forward" and cls is not None and cls.is_module:
                judged = self._graph_hazard(order, function, node)
                if judged is not None:  # an error's hazard, or why a warning's write changes no finite loss's gradient
                    return judged[0], ("inside forward()", judged[1]), None
            # Only a (post-)forward hook runs after the module's forward used its tensors; a
            # pre-hook runs before, like weight initialisation.
            if name in self.analysis(ForwardHooks).functions:
                back = self._round_trip(node)
                if back is not None:  # no value the forward used changes: the idiom, not the hazard
                    return (Severity.WARNING, ("inside a forward hook", f"It gives `{dotted_name(node.value)}` its "
                            f"own values in another floating dtype, and line {back} converts them the other way: "
                            f"a round trip, no value the forward used changes"), None)
                return Severity.ERROR, ("inside a forward hook", "The hook runs after the forward used it"), None
        return Severity.WARNING, None, None

    def _unsaved_gradient(self, node: cst.Attribute) -> Optional[str]:
        """For a write through ``x.grad.data``: why no graph can have saved ``x.grad`` (a sentence),
        unless something here may have made it part of one: a ``backward(create_graph=True)``, or
        an op of this function that takes ``x.grad`` (not a copy of it: ``x.grad.data.clone()``)
        before the write. Autograd never saves a ``.grad`` on its own; None for other writes."""
        name = unsaved_gradient(self.analysis(TensorFacts).function, self.analysis(ScopeOrder),
                                self.analysis(TorchNames), node.value, node)
        if name is None:
            return None
        return (f"`{name}` is a gradient: no backward here makes it part of a graph (no `create_graph=True`) "
                f"and no op before the write saved it")

    def _evidence(self, use: DataUse) -> bool:
        """Whether a write through ``X.data`` on an ``X`` of unknown kind is a tensor's: by the
        write itself (``_tensor_evidence``), or, for ``X.data = v``, by ``v``: a tensor made by torch
        (``torch.empty(...)``, ``t.narrow(...)``) or another name's ``.data``."""
        statement = self.ctx.statement()
        value = statement.value if use.write in ("assign", "setitem") and isinstance(statement, cst.Assign) else None
        if _tensor_evidence(use, value, self.analysis(TensorFacts).kind):
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

    def scope_word(self) -> str:
        return "function" if self.analysis(TensorFacts).function is not None else "module"

    def no_graph(self) -> str:
        """What was seen of graphs where the write is TAL003's: inside a module's ``forward()`` a
        graph is being built, but no op of it was seen to save the tensor or to backpropagate
        through the written cells."""
        facts = self.analysis(TensorFacts)
        if facts.function is not None and facts.function.name.value == "forward" \
                and facts.current_class is not None and facts.current_class.is_module:
            return "No op of the graph this forward() builds was seen to save it or to backpropagate through it"
        return f"No graph is visible in this {self.scope_word()}"

    def _graph_hazard(self, order: ScopeOrder, function: cst.FunctionDef,
                      node: cst.Attribute) -> Optional[Tuple[Severity, str]]:
        """Inside ``forward()``, where the graph of this call is being built: an error and why the
        write changes a gradient (a sentence), or None. Either an op before it may have saved the
        tensor (``self.fc.weight`` also by a call of ``self.fc``; not a view, a sum, ``+`` or a
        comparison of it, nor a use of a tensor bound anew since), or the tensor is a value of the
        graph and an op after the write backpropagates into it: autograd sends gradient to the cells
        the write replaced (not when they became -inf before a softmax, which gives them none, nor
        when they became exactly -inf before a ``log_softmax``, which gives them some only from a
        loss that is then infinite: then a warning, and that evidence)."""
        name = dotted_name(node.value)
        if name is None:
            return None
        parts = name.split(".")
        modules = [".".join(parts[:k]) for k in range(len(parts) - 1, 1, -1)]
        project = self.ctx.project
        graph = GraphUse(function.body, order, self.analysis(TorchNames), [name, *modules],
                         project.call_keeps if project is not None else None)
        saved = graph.saved_before(name, node, modules)
        if saved is not None:
            use, op = saved
            if op is not None:
                return Severity.ERROR, f"`{op}` (line {self.ctx.cited_line(use)}) saved it for backward as its result"
            return Severity.ERROR, (f"Line {self.ctx.cited_line(use)} handed it to an op of the graph being built, which "
                                    f"may have saved it for backward")
        params = function.params.params
        if len(parts) > 1 or (params and params[0].name.value == name) or graph.made_without_graph(name):
            return None  # a parameter or buffer of the module: a leaf, no gradient passes through it
        statement = self.ctx.statement()
        value = _written_value(statement, node)
        exact = exact_neg_inf(value, self.analysis(TorchNames))
        read = graph.gradient_read_after(name, node, statement, neg_inf_fill(value), exact)
        if read is not None:
            return Severity.ERROR, (f"Line {self.ctx.cited_line(read)} backpropagates through it into the cells the write "
                                    f"replaced as if they still held what the graph computed")
        blind = graph.read_by_after(name, node, statement, gradient_at_neg_inf_only_from_infinite_loss) \
            if exact else None
        if blind is None:
            return None
        reader, op = blind
        return Severity.WARNING, (f"The write sets cells to -inf before `{op}` (line {self.ctx.cited_line(reader)}): "
                                  f"only a loss that reads a masked cell's log-probability, which is then infinite, "
                                  f"sees a gradient other than that of a write autograd tracks")

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
        return self.ctx.cited_line(casts.found) if casts.found is not None else None


def alias_only(use: DataUse) -> Optional[str]:
    """For ``X.data.resize_(n)``, ``X.data.set_(t)``, ``X.data.t_()``: what ``X`` keeps (its
    ``shape``, ``shape and strides`` or ``storage``), as the op changes only the alias ``.data``
    returned; None for a write of values."""
    return kept_through_data(use.op) if use.write == "inplace" and use.op else None


def landing(use: DataUse) -> Optional[str]:
    """After an op that changes only the alias (``alias_only``), the first op of the chain whose
    values land in ``X``'s memory: ``copy_`` of ``im.data.resize_(s).copy_(t)``; none after
    ``set_`` (the alias then writes another tensor's storage) and none for other writes."""
    if alias_only(use) is None:
        return None
    for op in (use.op, *use.then):
        kept = kept_through_data(op)
        if kept == "storage":
            return None
        if kept is None:
            return op
    return None


_FLOAT_CASTS = frozenset(m for m, c in catalog.CLASS_METHODS.items() if c == "float") | (catalog.DTYPE_ARGUMENT_METHODS - {"type_as"})


def _dtype_cast_of_itself(statement: Optional[cst.CSTNode], data: Optional[cst.Attribute]) -> Optional[str]:
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


class _OwnData(cst.CSTVisitor):
    """Whether an expression reads ``<receiver>.data``."""

    def __init__(self, receiver: Optional[str]) -> None:
        self.receiver = receiver
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "data" and self.receiver is not None and dotted_name(node.value) == self.receiver:
            self.found = True


def _tensor_evidence(use: DataUse, value: Optional[cst.BaseExpression] = None,
                     kind: Optional[Callable[[cst.BaseExpression], Kind]] = None) -> bool:
    """``x.data.add_(...)`` / ``nn.init.normal_(x.data)`` / ``dist.all_reduce(x.data)`` on a name
    (``p``, ``self.fc.weight``): only a tensor's ``.data`` has these; ``x.data = q.data`` /
    ``x.data[:n] = 0.9 * q.data`` / ``x.data = layer.weight``: the value assigned is another
    tensor, unless ``kind`` shows its owner is no tensor (``cfg.data = self.data`` in a dataclass) or
    it is the ``data`` field of the same record tree (``cfg.sub.data = cfg.data``). On an item of a
    container or a call result only with more than the write
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
    # a bare ``Y.data`` of the same object tree is a field moved, as likely as the receiver's own;
    # a tensor op on it (``p.shard.data.to(d).view(s)``) shows a tensor
    moved = isinstance(value, cst.Attribute) and value.attr.value == "data"
    if value is not None and any(r != receiver and not (moved and _same_record(r, receiver))
                                 for r in _data_roots(value, kind)):
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


def _same_record(root: str, receiver: str) -> bool:
    """``config`` and ``config.pipeline.datamanager``, ``self.config`` and ``self.config.dataparser``:
    one reaches the other through attributes none of which is a tensor's (``p`` and ``p.grad`` are
    two tensors): a ``data`` field moved within one object tree, as configs and records do."""
    short, long = sorted((root.split("."), receiver.split(".")), key=len)
    return long[:len(short)] == short and not any(
        part in catalog.TENSOR_ATTRIBUTES or part in catalog.MODULE_TENSOR_ATTRIBUTES for part in long[len(short):])


def _data_roots(value: cst.BaseExpression, kind: Optional[Callable[[cst.BaseExpression], Kind]] = None) -> Set[str]:
    """The expressions whose tensor the value is made from by tensor ops only, where the value
    shows it is a tensor: ``q`` for ``q.data``, ``q.data.cuda()``, ``0.9 * q.data``, ``q.data[:4]``,
    ``q[i].narrow(0, 0, n).data``, ``layer.weight``; ``(...)`` for the ``.data`` of an arithmetic
    result; none for ``check_yaml(opt.data)`` (a field handed to a function), nor for the ``.data``
    of what ``kind`` shows is no tensor (``self.data`` of a dataclass, a module's ``self.data``)."""
    while True:
        if isinstance(value, cst.Attribute) and value.attr.value == "data" and kind is not None \
                and kind(value.value) not in (Kind.TENSOR, Kind.UNKNOWN):
            return set()
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
            return _data_roots(value.left, kind) | _data_roots(value.right, kind)
        if isinstance(value, cst.UnaryOperation):
            value = value.expression
        elif isinstance(value, cst.Subscript):
            value = value.value
        elif _tensor_method(value) is not None:
            value = _tensor_method(value)
        else:
            return set()
