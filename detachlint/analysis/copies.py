"""What indexing gives and which expressions are certainly a copy, in one scope (issue 40).

``x[i, :, None]`` (integers, slices, ``None``, ``...``) is a view of ``x``; an index that is a list,
an integer array or tensor of one dimension or more, or a boolean mask makes a copy; a 0-d integer
tensor (``x[:, p[i]]`` with ``p = torch.randperm(n)``) indexes as an integer does, so it gives a view.
``Indexing.of`` says ``VIEW``, ``COPY`` or None (the code does not show which). ``Indexing.copy_of``
names the value an expression is certainly a fresh copy of (``x.clone()``, ``copy.deepcopy(x)``,
``torch.tensor(x)``, ``x[idx]`` with an advanced index, ``x.float()`` of an int tensor), so that an
in-place write into it that nobody reads is known to be lost.
"""

from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import libcst as cst

from ..knowledge import catalog
from .alias_model import Relation
from .dtypes import DtypeClasses, _Bindings
from .tensors import Kind
from ..knowledge.torch_facts import is_view_method
from .torchnames import TorchNames, dotted_name
from ..walk import walk

VIEW = "view"
COPY = "copy"
_RANGE = object()  # a ``for i in range(...)`` target: a Python int
_TENSORS = (Kind.TENSOR, Kind.NDARRAY)


def multi_dimensional(node: cst.Subscript) -> bool:
    """``x[:, :, k]``: a slice among several indices, which only tensors and arrays take (and
    pandas' indexers, ``df.loc[:, "a"]``, whose copies and views are their own)."""
    sl, base = node.slice, node.value
    return len(sl) >= 2 and any(isinstance(e.slice, cst.Slice) for e in sl) \
        and not (isinstance(base, cst.Attribute) and base.attr.value in ("loc", "iloc", "at", "iat", "ix"))


def written_back(values, target: cst.Subscript) -> bool:
    """Whether every stale value a name may hold is the item ``target`` itself, made by the same
    subscript, or its whole base, which the code takes for the item when every row is selected
    (``part = x if everything else x[m]``): ``x[m] = part`` writes the part back, it reads nothing new."""
    stale = [o for o, mutations in values.items() if mutations]
    return bool(stale) and all(o.node is not None and (o.node.deep_equals(target) or (
        o.relation is Relation.PLAIN and o.node.deep_equals(target.value))) for o in stale)


class _LoopBindings(_Bindings):
    """``_Bindings``, with ``for i in range(n)`` recorded as an int rather than as unknown."""

    def visit_For(self, node: cst.For) -> None:
        it = node.iter
        if isinstance(node.target, cst.Name) and isinstance(it, cst.Call) and isinstance(it.func, cst.Name) \
                and it.func.value == "range":
            self.values.setdefault(node.target.value, []).append(_RANGE)  # type: ignore[arg-type]
        else:
            self._unknown(node.target)


def items_written(statements) -> Dict[str, int]:
    """The least length each name's list must have for ``statements`` to run: ``L[k] = v`` (or
    ``L[k] += v``) with an integer literal ``k`` raises IndexError on a shorter list."""
    least: Dict[str, int] = {}
    for line in statements:
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                [small.target] if isinstance(small, cst.AugAssign) else []
            for target in targets:
                if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) \
                        and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                    k = literal_int(target.slice[0].slice.value)
                    if k is not None:
                        name = target.value.value
                        least[name] = max(least.get(name, 0), k + 1 if k >= 0 else -k)
    return least


def literal_int(node: cst.BaseExpression) -> Optional[int]:
    """``2``, ``-1``: the value of an integer literal, else None."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = literal_int(node.expression)
        return None if inner is None else -inner
    return int(node.value, 0) if isinstance(node, cst.Integer) and "_" not in node.value else None


class Copy(NamedTuple):
    """What ``Indexing.copy_of`` found: the value copied, how the code shows it is a copy, and
    whether the copy comes from indexing (``x[idx]``: read as a view by mistake) rather than an
    explicit copy (``.clone()``, ``copy.deepcopy``, ``torch.tensor``, a dtype conversion)."""

    source: cst.BaseExpression
    how: str
    by_index: bool = False


class Indexing:
    """For one scope: what an index gives (``of``) and what an expression is a copy of (``copy_of``)."""

    def __init__(self, scope: cst.CSTNode, names: TorchNames, kind_of: Callable[[cst.BaseExpression], Kind]) -> None:
        self.scope = scope
        self.names = names
        self.kind_of = kind_of
        self._values: Optional[Dict[str, List[Optional[cst.CSTNode]]]] = None
        self._classes: Optional[DtypeClasses] = None
        self._least: Optional[Dict[str, int]] = None

    # ------------------------------------------------------------------ what a name is bound to

    def bindings(self, key: str) -> List[Optional[cst.CSTNode]]:
        """Every value the scope binds ``key`` to (None: one the code does not show)."""
        if self._values is None:
            bindings = _LoopBindings()
            scope = self.scope
            if isinstance(scope, cst.FunctionDef):
                for param in [*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params]:
                    bindings.values.setdefault(param.name.value, []).append(param.annotation)
            walk(scope.body if isinstance(scope, cst.FunctionDef) else scope, bindings)
            self._values = bindings.values
        return self._values.get(key) or [None]

    def _class(self, node: cst.BaseExpression) -> Optional[str]:
        if self._classes is None:
            self._classes = DtypeClasses(self.scope, self.names)
        return self._classes.of(node)

    def _is_int(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A Python integer the code shows: a literal, ``len(...)``, ``x.shape[k]``, ``x.size(k)``, a
        ``range`` loop's target, arithmetic of those, or a name every binding of which is one."""
        if isinstance(node, cst.Integer) or (isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Integer)):
            return True
        if depth > 4:
            return False
        if isinstance(node, cst.Name):
            return self.kind_of(node) is not Kind.TENSOR and all(
                v is _RANGE or (isinstance(v, cst.BaseExpression) and self._is_int(v, depth + 1))
                for v in self.bindings(node.value))
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name):
                return func.value in ("len", "int", "round") and func.value not in self.names.bindings
            return isinstance(func, cst.Attribute) and func.attr.value == "size" and bool(node.args)
        if isinstance(node, cst.Subscript):
            value = node.value
            return isinstance(value, cst.Attribute) and value.attr.value == "shape" and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Index)
        if isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)):
            return self._is_int(node.left, depth + 1) and self._is_int(node.right, depth + 1)
        return False

    def _rank(self, node: cst.BaseExpression, depth: int = 0) -> Optional[int]:
        """The number of dimensions of a tensor the code shows it has (None: not shown)."""
        if depth > 4:
            return None
        if isinstance(node, cst.Name):
            ranks = {self._rank(v, depth + 1) if isinstance(v, cst.BaseExpression) else None
                     for v in self.bindings(node.value)}
            return ranks.pop() if len(ranks) == 1 else None
        if isinstance(node, cst.Call):
            q = self.names.qualified(node.func) or ""
            member = q.rpartition(".")[2]
            if q.startswith("torch.") and member in catalog.ONE_D_FACTORIES:
                return 1
            if q in ("torch.tensor", "torch.as_tensor") and node.args:
                first = node.args[0].value
                if isinstance(first, (cst.List, cst.Tuple)) and first.elements and all(
                        isinstance(e, cst.Element) and isinstance(e.value, (cst.Integer, cst.Float, cst.Name))
                        for e in first.elements):
                    return 1
            return None
        if isinstance(node, cst.Subscript):
            base = self._rank(node.value, depth + 1)
            if base is None:
                return None
            dropped = 0
            for element in node.slice:
                inner = element.slice
                if isinstance(inner, cst.Slice):
                    continue
                if not self._is_int(inner.value):
                    return None
                dropped += 1
            return base - dropped if dropped <= base else None
        return None

    def _ranked(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A tensor of one dimension or more, as the code shows, its exact rank known or not:
        ``.to()``/``.long()``/``.cuda()``... of one, ``.unsqueeze(d)`` of anything, ``.view``/
        ``.reshape``/``.expand``/``.repeat`` given a size or more (several, one integer, a
        non-empty display, a list the scope shows to have an item)."""
        rank = self._rank(node, depth)
        if rank is not None or depth > 4:
            return rank is not None and rank >= 1
        if isinstance(node, cst.Name):
            return all(isinstance(v, cst.BaseExpression) and self._ranked(v, depth + 1)
                       for v in self.bindings(node.value))
        if not isinstance(node, cst.Call) or any(a.keyword is not None and a.keyword.value == "as_tuple"
                                                 for a in node.args):
            return False
        q = self.names.qualified(node.func)
        if q is not None or not isinstance(node.func, cst.Attribute):
            # a function of a module (``np.repeat``): not a tensor's method
            return q is not None and q.startswith("torch.") and q.rpartition(".")[2] in catalog.RANKED_RESULTS
        method = node.func.attr.value
        if method in catalog.RANK_ADDING_METHODS or method in catalog.RANKED_RESULTS:
            return True
        if method in catalog.RANK_KEEPING_METHODS:
            return self._ranked(node.func.value, depth + 1)
        sizes = [a.value for a in node.args if a.keyword is None]
        if method not in catalog.RANK_SETTING_METHODS or any(a.star for a in node.args) or not sizes:
            return False
        size = sizes[0]
        return len(sizes) >= 2 or self._is_int(size) or self._least_length(size) >= 1

    def _least_length(self, node: cst.BaseExpression) -> int:
        """The least length a list must have: a display's, or that of a name bound once, to a list,
        an item of which a statement run on every path through the scope assigns (``L[0] = 1``;
        where in the scope is not weighed)."""
        if isinstance(node, (cst.Tuple, cst.List)):
            return 0 if any(isinstance(e, cst.StarredElement) for e in node.elements) else len(node.elements)
        if not (isinstance(node, cst.Name) and len(self.bindings(node.value)) == 1 and self._list_name(node)):
            return 0
        if self._least is None:  # the statements of the scope's own block: not under an if, a loop, a try
            body = self.scope.body if isinstance(self.scope, cst.FunctionDef) else self.scope
            self._least = items_written(getattr(body, "body", ()))
        bound = self.bindings(node.value)[0]
        shown = self._least_length(bound) if isinstance(bound, cst.List) else 0
        return max(shown, self._least.get(node.value, 0))

    # ------------------------------------------------------------------ indexing

    def _element(self, value: cst.BaseExpression) -> Optional[str]:
        if isinstance(value, (cst.Ellipsis, cst.Integer)) or (isinstance(value, cst.Name) and value.value == "None") \
                or self._is_int(value):
            return VIEW
        if isinstance(value, (cst.List, cst.ListComp)) or self._list_name(value):
            return COPY
        kind = self.kind_of(value)
        if kind not in _TENSORS:
            return None
        if isinstance(value, cst.Comparison) or self._class(value) == "bool":
            return COPY  # a boolean mask, of any number of dimensions
        rank = self._rank(value)
        if rank == 0 and self._class(value) == "int":
            return VIEW  # a 0-d integer tensor indexes as an integer
        if (rank is not None and rank >= 1) or (rank is None and self._ranked(value)):
            return COPY  # an index of one dimension or more: advanced
        if kind is Kind.NDARRAY and self._annotated_array(value):
            return COPY
        return None

    def _list_name(self, value: cst.BaseExpression) -> bool:
        """A name every binding of which is a Python list: a display, a comprehension, ``list(...)``
        or an annotation ``List[...]``/``list[...]`` (an index that is a list is advanced: a copy)."""
        if not isinstance(value, cst.Name) or self.kind_of(value) in _TENSORS:
            return False
        for bound in self.bindings(value.value):
            if isinstance(bound, cst.Annotation):
                bound = bound.annotation
                head = bound.value if isinstance(bound, cst.Subscript) else bound
                if (dotted_name(head) or "").rpartition(".")[2] not in ("List", "list"):
                    return False
            elif not (isinstance(bound, (cst.List, cst.ListComp)) or (
                    isinstance(bound, cst.Call) and isinstance(bound.func, cst.Name) and bound.func.value == "list"
                    and "list" not in self.names.bindings)):
                return False
        return True

    def _annotated_array(self, value: cst.BaseExpression) -> bool:
        """A parameter annotated as an array, or a 1-D integer array numpy makes: used as an index,
        one of integers (0-d index arrays are not what such code passes)."""
        if not isinstance(value, cst.Name):
            return False
        for bound in self.bindings(value.value):
            if isinstance(bound, cst.Annotation):
                if "ndarray" not in (dotted_name(bound.annotation) or ""):
                    return False
            elif not (isinstance(bound, cst.Call) and (self.names.qualified(bound.func) or "")
                      in catalog.NUMPY_ONE_D_INDEX_FUNCTIONS):
                return False
        return True

    def of(self, sl: Tuple[cst.SubscriptElement, ...]) -> Optional[str]:
        """``VIEW`` where every index is basic, ``COPY`` where one is certainly advanced (that makes
        the whole result a copy), None otherwise."""
        found: Optional[str] = VIEW
        for element in sl:
            inner = element.slice
            got = VIEW if isinstance(inner, cst.Slice) else self._element(inner.value)
            if got == COPY:
                return COPY
            if got is None:
                found = None
        return found

    # ------------------------------------------------------------------ certain copies

    def copy_of(self, node: cst.BaseExpression) -> Optional[Copy]:
        """The ``Copy`` where ``node`` is certainly new memory made from ``source`` (through
        views of such a copy too: ``x.clone().view(-1)``); None where it may share memory."""
        while True:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and is_view_method(node.func.attr.value):
                node = node.func.value
            elif isinstance(node, cst.Subscript) and self.kind_of(node.value) in _TENSORS \
                    and self.of(node.slice) == VIEW:
                node = node.value
            else:
                break
        if isinstance(node, cst.Subscript):
            if self.kind_of(node.value) in _TENSORS and self.of(node.slice) == COPY:
                return Copy(node.value, "indexing with an integer array, a list or a mask makes a copy", by_index=True)
            return None
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        q = self.names.qualified(func) or ""
        if q in ("copy.deepcopy", "torch.clone", "torch.tensor") and len(positional) == 1 \
                and isinstance(positional[0], (cst.Name, cst.Attribute, cst.Subscript)) \
                and self.kind_of(positional[0]) in (*_TENSORS, Kind.UNKNOWN):
            how = "`torch.tensor` always copies" if q == "torch.tensor" else f"`{q}` copies"
            return Copy(positional[0], how)
        if q:
            return None  # another function of a module: not a method of a tensor
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            if method == "clone" and not positional and self.kind_of(receiver) in (*_TENSORS, Kind.UNKNOWN):
                return Copy(receiver, "`.clone()` always copies")
            if method in catalog.CLASS_METHODS and not node.args and self.kind_of(receiver) is Kind.TENSOR:
                source = self._class(receiver)
                if source is not None and source != catalog.CLASS_METHODS[method]:
                    return Copy(receiver, f"`.{method}()` of a tensor of the {source} class converts, so it copies")
            return None
        return None
