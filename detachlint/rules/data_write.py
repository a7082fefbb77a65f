"""What TAL001 and TAL003 share: finding the writes through ``Tensor.data`` and deciding, for each,
whether a graph that may have saved the tensor is pending (TAL001, data-mutation: a hazard) or none
is visible (TAL003, data-write-idiom: the discouraged idiom). One code, one meaning: a user can turn
the idiom off and keep the hazards."""

from __future__ import annotations

from typing import ClassVar, Optional, Set, Tuple

import libcst as cst

from ..analysis.data_use import DataUse, classify_data_use
from ..analysis.hooks import AppliedFunctions, ForwardHooks
from ..analysis.order import ScopeOrder
from ..analysis import catalog
from ..analysis.tensors import Kind, TensorFacts
from ..analysis.torch_facts import is_view_method, may_return_receiver
from ..analysis.torchnames import TorchNames, dotted_name
from ..findings import Severity
from .base import Rule, Sites
from ..walk import walk


class DataWrite(Rule):
    """The shared detection (not a rule of its own: it has no code). A subclass reports the writes
    of its ``severity`` through ``report_write``."""

    requires = (TensorFacts, TorchNames, ScopeOrder, ForwardHooks, AppliedFunctions)
    sites = Sites(attributes=catalog.UNTRACKED_ALIAS_ATTRIBUTES)  # every write it reports goes through `.data`
    severity: ClassVar[Severity]

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
        self._statements.add(id(statement))  # one finding per statement, of whichever rule its first write is
        severity, context, pending = self._severity(node)
        if severity is self.severity:
            self.report_write(node, use, statement, context, pending)

    def report_write(self, node: cst.Attribute, use: DataUse, statement: cst.CSTNode,
                     context: Optional[Tuple[str, str]], pending: Optional[cst.CSTNode]) -> None:
        raise NotImplementedError

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
        if pending is not None:
            loss = order.built_outside(pending)
            built = f" (built before this function ran: `{loss}` comes from outside it)" if loss is not None else ""
            return (Severity.ERROR, ("before a pending backward()", f"A graph{built} is pending until "
                                     f"`{self.ctx.code_for(pending)}` (line {self.ctx.line(pending)})"), pending)
        function = self.analysis(TensorFacts).function
        if function is not None:
            name = function.name.value
            cls = self.analysis(TensorFacts).current_class
            if name == "forward" and cls is not None and cls.is_module:
                if self._used_before(order, node.value, node):
                    return Severity.ERROR, ("inside forward()", "The graph being built already used it"), None
            # Only a (post-)forward hook runs after the module's forward used its tensors; a
            # pre-hook runs before, like weight initialisation.
            if name in self.analysis(ForwardHooks).functions:
                return Severity.ERROR, ("inside a forward hook", "The hook runs after the forward used it"), None
        return Severity.WARNING, None, None

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

    def scope_word(self) -> str:
        return "function" if self.analysis(TensorFacts).function is not None else "module"

    @staticmethod
    def _used_before(order: ScopeOrder, owner: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """``self.fc.weight`` counts as used once ``self.fc.weight`` or ``self.fc(...)`` ran."""
        name = dotted_name(owner)
        if name is None:
            return False
        parts = name.split(".")
        prefixes = [".".join(parts[:k]) for k in range(len(parts), 1 if len(parts) > 1 else 0, -1)]
        return any(order.used_before(prefix, node) for prefix in prefixes)


class _OwnData(cst.CSTVisitor):
    """Whether an expression reads ``<receiver>.data``."""

    def __init__(self, receiver: Optional[str]) -> None:
        self.receiver = receiver
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "data" and self.receiver is not None and dotted_name(node.value) == self.receiver:
            self.found = True


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
