"""The class of a value's elements (``"int"``, ``"float"``, ``"bool"``, ``"complex"``, or None where
the code does not show it), for one scope, from what the code shows: literals, torch's factories
(``arange`` of integers, ``randint``, ``zeros(..., dtype=...)``), ``stack``/``meshgrid`` of such
values, comparisons, ``.float()``/``.long()``/``.to(dtype)``, arithmetic, annotations
(``torch.LongTensor``). The alias analysis asks it whether a conversion crosses classes: an int64
grid ``.to()`` a float tensor, or ``.float()`` of a long tensor, always allocates (issue 41).
Unknown stays unknown: a class is given only where every binding of a name agrees on it.
PyTorch's facts (which factory returns what) are data in ``catalog``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from ..knowledge import catalog
from .torchnames import TorchNames, dotted_name
from ..walk import walk

_ORDER = {"bool": 0, "int": 1, "float": 2, "complex": 3}
_BITWISE = (cst.BitAnd, cst.BitOr, cst.BitXor)
# ``.to(x)``/``.type(x)`` that names no dtype: the class is kept (a device, a string)
KEEP = "keep"


def _widest(classes: List[Optional[str]]) -> Optional[str]:
    if not classes or None in classes:
        return None
    return max(classes, key=lambda c: _ORDER[c])  # type: ignore[index]


def _same(classes: List[Optional[str]]) -> Optional[str]:
    return classes[0] if classes and all(c == classes[0] for c in classes) else None


class DtypeClasses:
    """``of(node)``: the class of an expression's elements in ``scope``; ``target(call)``: the
    class a conversion call converts to (``KEEP`` where it names no dtype)."""

    def __init__(self, scope: cst.CSTNode, names: TorchNames) -> None:
        self.names = names
        bindings = _Bindings()
        if isinstance(scope, cst.FunctionDef):
            for param in [*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params]:
                bindings.values.setdefault(param.name.value, []).append(param.annotation)
        walk(scope.body if isinstance(scope, cst.FunctionDef) else scope, bindings)
        self._values: Dict[str, List[Optional[cst.CSTNode]]] = bindings.values
        self._known: Dict[str, Optional[str]] = {}
        self._busy: Set[str] = set()

    # ------------------------------------------------------------------ names

    def _name(self, key: str) -> Optional[str]:
        if key in self._known:
            return self._known[key]
        values = self._values.get(key)
        if not values or key in self._busy:
            return None
        self._busy.add(key)
        try:
            found = _same([self._binding(v) for v in values])
        finally:
            self._busy.discard(key)
        self._known[key] = found
        return found

    def _binding(self, value: Optional[cst.CSTNode]) -> Optional[str]:
        if isinstance(value, cst.Annotation):
            name = dotted_name(value.annotation) or ""
            if name in ("int", "float", "bool", "complex"):
                return name
            return catalog.TYPED_TENSOR_CLASSES.get(name.rpartition(".")[2])
        return self.of(value) if isinstance(value, cst.BaseExpression) else None

    # ------------------------------------------------------------------ expressions

    def of(self, node: cst.BaseExpression) -> Optional[str]:
        cls = node.__class__
        if cls is cst.Integer:
            return "int"
        if cls is cst.Float:
            return "float"
        if cls is cst.Imaginary:
            return "complex"
        if cls is cst.Name:
            return "bool" if node.value in ("True", "False") else self._name(node.value)
        if cls is cst.Attribute:
            if node.attr.value in catalog.CLASS_KEEPING_ATTRIBUTES:
                return self.of(node.value)
            key = dotted_name(node)
            return self._name(key) if key is not None else None
        if cls is cst.Subscript:
            value = node.value
            if isinstance(value, cst.Attribute) and value.attr.value == "shape":
                return "int"  # ``x.shape[0]``
            return self.of(value)
        if cls is cst.UnaryOperation:
            return None if isinstance(node.operator, cst.Not) else self.of(node.expression)
        if cls is cst.BinaryOperation:
            return self._binary(node)
        if cls is cst.Comparison:
            return "bool"
        if cls in (cst.List, cst.Tuple):
            return _same([self.of(e.value) for e in node.elements if isinstance(e, cst.Element)]) \
                if all(isinstance(e, cst.Element) for e in node.elements) else None
        if cls is cst.IfExp:
            return _same([self.of(node.body), self.of(node.orelse)])
        if cls is cst.Call:
            return self._call(node)
        return None

    def _binary(self, node: cst.BinaryOperation) -> Optional[str]:
        left, right = self.of(node.left), self.of(node.right)
        widest = _widest([left, right])
        if isinstance(node.operator, cst.Divide):
            return "complex" if widest == "complex" else ("float" if widest is not None else None)
        if widest == "bool" and not isinstance(node.operator, _BITWISE):
            return None  # ``True + True`` is 2; two bool tensors add to a bool tensor
        return widest

    def dtype(self, node: cst.BaseExpression) -> Optional[str]:
        """The class a dtype expression names: ``torch.long``, ``torch.float32``, ``float``, ``x.dtype``."""
        name = dotted_name(node)
        if name is None:
            return None
        if name in ("float", "int", "bool", "complex"):
            return name
        if name.endswith(".dtype"):
            head = node.value if isinstance(node, cst.Attribute) else None
            return self.of(head) if head is not None else None
        q = self.names.qualified(node) or ""
        if not q.startswith("torch."):
            return None
        member = q.rpartition(".")[2]
        canonical = catalog.DTYPE_NAMES.get(member) or catalog.DTYPE_NAMES_MORE.get(member)
        return catalog.DTYPE_CLASSES.get(canonical) if canonical is not None else None

    def _call(self, node: cst.Call) -> Optional[str]:
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        dtype = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "dtype"), None)
        func = node.func
        if isinstance(func, cst.Name) and func.value not in self.names.bindings:
            if func.value in ("len", "int", "round"):
                return "int"
            return "float" if func.value == "float" else None
        q = self.names.qualified(func) or ""
        if q.startswith("torch."):
            if dtype is not None:
                return self.dtype(dtype)
            return self._factory(q.rpartition(".")[2], positional)
        if isinstance(func, cst.Attribute):
            return self._method(func.attr.value, func.value, positional, dtype)
        return None

    def _factory(self, member: str, positional: List[cst.BaseExpression]) -> Optional[str]:
        if member in catalog.INT_FACTORIES:
            return "int"
        if member in catalog.FLOAT_FACTORIES:
            return "float"
        if member in catalog.TYPED_TENSOR_CLASSES:
            return catalog.TYPED_TENSOR_CLASSES[member]
        if member == "arange":
            found = _widest([self.of(a) for a in positional])
            return "int" if found == "bool" else found
        if member == "full":
            return self.of(positional[1]) if len(positional) > 1 else None
        if member in catalog.LIKE_FACTORIES or member in ("tensor", "as_tensor"):
            return self.of(positional[0]) if positional else None
        if member in catalog.CLASS_KEEPING_FUNCTIONS:
            return _same([self.of(a) for a in positional]) if positional else None
        return None

    def _method(self, method: str, receiver: cst.BaseExpression, positional: List[cst.BaseExpression],
                dtype: Optional[cst.BaseExpression]) -> Optional[str]:
        if method in catalog.CLASS_METHODS:
            return catalog.CLASS_METHODS[method]
        if method in ("size", "numel", "dim"):
            return "int"
        if method in catalog.DTYPE_ARGUMENT_METHODS:
            target = self.target(method, positional, dtype)
            return self.of(receiver) if target == KEEP else target
        if method in catalog.CLASS_KEEPING_METHODS or method.startswith("new_"):
            return self.dtype(dtype) if dtype is not None else self.of(receiver)
        return None

    def target(self, method: str, positional: List[cst.BaseExpression],
               dtype: Optional[cst.BaseExpression]) -> Optional[str]:
        """The class ``.to(...)``/``.type(...)``/``.type_as(t)``/``.float()`` converts to; ``KEEP``
        where it names no dtype (a device, a string); None where that is not known."""
        if method in catalog.CLASS_METHODS:
            return catalog.CLASS_METHODS[method]
        if dtype is not None:
            return self.dtype(dtype)
        if method == "type_as":
            return self.of(positional[0]) if positional else None
        for arg in positional:
            if isinstance(arg, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
                continue  # a device ("cuda:0") or, for ``.type``, a type name
            found = self.dtype(arg)
            if found is not None:
                return found
            name = dotted_name(arg) or ""
            if "device" in name.lower().rpartition(".")[2]:
                continue
            return self.of(arg)  # a tensor: its dtype (None where not known)
        return KEEP


class _Bindings(cst.CSTVisitor):
    """Every value bound to each name or attribute chain of a scope (None: bound by what gives no
    value to look at, a loop target, ``with ... as``, an import, an unpacking)."""

    def __init__(self) -> None:
        self.values: Dict[str, List[Optional[cst.CSTNode]]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._unknown(node.name)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _unknown(self, target: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._unknown(element.value)
            return
        if isinstance(target, cst.StarredElement):
            self._unknown(target.value)
            return
        key = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if key is not None:
            self.values.setdefault(key, []).append(None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            key = dotted_name(target.target) if isinstance(target.target, (cst.Name, cst.Attribute)) else None
            if key is not None:
                self.values.setdefault(key, []).append(node.value)
            else:
                self._unknown(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        key = dotted_name(node.target) if isinstance(node.target, (cst.Name, cst.Attribute)) else None
        if key is not None:
            self.values.setdefault(key, []).append(node.value if node.value is not None else node.annotation)

    def visit_For(self, node: cst.For) -> None:
        self._unknown(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._unknown(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._unknown(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._unknown(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        for name in node.names:
            self.values.setdefault(name.name.value, []).append(None)

    visit_Nonlocal = visit_Global  # type: ignore[assignment]
