"""What names refer to: ``import torch as T``, ``from torch import tensor as make``, ``F``, ``nn``.

A cheap, module-wide map from local names to dotted qualified names, built from the import
statements (at any depth) and from module-level aliases such as ``Tensor = torch.Tensor``. It
replaces LibCST's QualifiedNameProvider, which costs several times a parse.
"""

from __future__ import annotations

import copy
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from .base import Analysis, AnalysisContext

from ..knowledge import catalog
from ..knowledge.catalog import CANONICAL_NAMES
from ..walk import STATEMENTS_ONLY, walk


def target_names(target: cst.BaseExpression) -> Iterator[str]:
    """The names an assignment target binds (``a``, ``a, (b, *c)``; not ``a[i]`` nor ``a.b``)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from target_names(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a chain of Name/Attribute nodes, else None."""
    if node.__class__ is cst.Name:  # most calls: no list to build and join
        return node.value
    parts = []
    while node.__class__ is cst.Attribute:  # ``isinstance`` on LibCST's classes is ABCMeta's, slow
        parts.append(node.attr.value)
        node = node.value
    if node.__class__ is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def sliced_name(node: cst.BaseExpression) -> Optional[str]:
    """``dotted_name`` of a value or of what it is an item or slice of (``h[:, 0]`` -> ``h``): an op
    that saves ``h[:, 0]`` saves a view of ``h``, which any in-place write to ``h`` changes."""
    while node.__class__ is cst.Subscript:
        node = node.value
    return dotted_name(node)


def _module_name(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


class ImportCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.bindings: Dict[str, str] = {}
        self.depth = 0  # function nesting: module-level aliases only at depth 0
        self.star = False  # ``from pkg.common import *``

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bindings[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                self.bindings[top] = top

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.star = True
            return
        if node.relative or node.module is None:
            return
        module = _module_name(node.module)
        for alias in node.names:
            name = _module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bindings[local] = f"{module}.{name}"

    def visit_Assign(self, node: cst.Assign) -> None:
        # ``Tensor = torch.Tensor`` at module level makes ``Tensor`` an alias.
        if self.depth or len(node.targets) != 1:
            return
        target = node.targets[0].target
        if isinstance(target, cst.Name):
            value = dotted_name(node.value)
            if value is not None:
                head = value.split(".")[0]
                if head in self.bindings:
                    self.bindings[target.value] = self.bindings[head] + value[len(head):]


class TorchNames(Analysis):
    """Resolves expressions to canonical qualified names (``torch.nn.functional.relu``)."""

    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> "TorchNames":
        return cls(ctx.module)

    def __init__(self, module: cst.Module) -> None:
        collector = ImportCollector()
        # = module.visit(collector), without rebuilding the tree; imports are statements read
        # from their own fields, so nothing inside a statement but its blocks is walked.
        walk(module, collector, prune=STATEMENTS_ONLY)
        self.bindings = collector.bindings
        if collector.star:
            # ``torch.empty(...)`` in a module that never imports torch: only a star import can
            # have bound it, and a module exporting a ``torch`` of its own is not met in practice
            self.bindings.setdefault("torch", "torch")
        self.imports_torch = any(v == "torch" or v.startswith("torch.") for v in self.bindings.values())
        # ``import megengine.functional as F`` and no torch: the module's tensors are another
        # library's, so an op's name (``x.permute``, ``x[..., 0] = v``) is no torch evidence there
        self.foreign = not self.imports_torch and any(
            v.partition(".")[0] in catalog.FOREIGN_TENSOR_LIBRARIES for v in self.bindings.values())

    def without(self, local: Iterable[str]) -> "TorchNames":
        """These names as seen inside a function that binds ``local`` itself: there ``dist`` of
        ``dist = x @ w`` is a tensor, whatever ``import torch.distributed as dist`` binds elsewhere
        in the module (the map is module-wide)."""
        shadowed = self.bindings.keys() & set(local)
        if not shadowed:
            return self
        scoped = copy.copy(self)
        scoped.bindings = {k: v for k, v in self.bindings.items() if k not in shadowed}
        return scoped

    def qualified(self, node: cst.BaseExpression) -> Optional[str]:
        # = the bound head of ``dotted_name(node)`` and the rest, asked about the root name
        # before any string is built: most chains (``self.x``, ``x.shape``) start unbound
        root = node
        while root.__class__ is cst.Attribute:
            root = root.value
        if root.__class__ is not cst.Name:
            return None
        bound = self.bindings.get(root.value)
        if bound is None:
            return None
        if root is not node:
            parts = []
            while node.__class__ is cst.Attribute:
                parts.append(node.attr.value)
                node = node.value
            parts.append(bound)
            bound = ".".join(reversed(parts))
        return CANONICAL_NAMES.get(bound, bound)

    def op(self, call: cst.Call) -> "Tuple[Optional[str], Optional[cst.BaseExpression]]":
        """A tensor op's member name and its first input: ``sigmoid`` and ``x`` for
        ``torch.sigmoid(x)``, ``F.gelu(x)``, ``torch.special.expit``-like spellings and ``x.sigmoid()``;
        (None, None) for anything else (a call of a name not from torch)."""
        func = call.func
        q = self.qualified(func)
        if q is not None:
            head, _, member = q.rpartition(".")
            if head in ("torch", "torch.nn.functional", "torch.special") and call.args and call.args[0].keyword is None:
                return member, call.args[0].value
            return None, None
        if func.__class__ is cst.Attribute:
            return func.attr.value, func.value
        return None, None

    def tensor_op(self, call: cst.Call, owner: Optional[str]) -> "Tuple[Optional[str], Optional[cst.BaseExpression]]":
        """``op``, except a method of ``owner`` (``self.norm(x)`` calls a module or a method, not
        ``Tensor.norm``; ``self.weight.abs()`` is still ``abs``): ``owner`` is the method's ``self``."""
        func = call.func
        if owner is not None and func.__class__ is cst.Attribute and func.value.__class__ is cst.Name \
                and func.value.value == owner:
            return None, None
        return self.op(call)

    def other_operands(self, call: cst.Call) -> List[cst.BaseExpression]:
        """The tensors after the first that a tensor op of several takes: ``b`` in ``torch.mm(w, b)``
        and ``w.mm(b)``, ``s`` and ``z`` in ``torch.einsum(eq, q, s, z)``."""
        op, first = self.op(call)
        if op is None or first is None:
            return []
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if op == "einsum":
            args = args[2:] if isinstance(first, (cst.SimpleString, cst.ConcatenatedString)) else []
        elif self.qualified(call.func) is not None:
            args = args[1:]
        return args

    def disables_grad(self, node: cst.With) -> bool:
        """``with torch.no_grad():`` (or ``inference_mode``): autograd is off in its body."""
        return any(isinstance(item.item, cst.Call) and self.qualified(item.item.func) in catalog.GRAD_DISABLING
                   for item in node.items)

    def decorated_grad_off(self, function: cst.FunctionDef) -> bool:
        """``@torch.no_grad()`` (or ``inference_mode``) on ``function``: autograd is off in its body."""
        return any(self.qualified(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                   in catalog.GRAD_DISABLING for d in function.decorators)

    def grad_disabled(self, parents: Sequence[cst.CSTNode]) -> bool:
        """Whether the node below ``parents`` runs with autograd off: inside ``with
        torch.no_grad():`` (or ``inference_mode``) or in a function decorated with one, looking
        no further out than the innermost function (its caller's mode is unknown)."""
        for node in reversed(parents):
            if isinstance(node, cst.With):
                if self.disables_grad(node):
                    return True
            elif isinstance(node, cst.FunctionDef):
                return self.decorated_grad_off(node)
            elif isinstance(node, (cst.ClassDef, cst.Lambda)):
                return False
        return False

    def is_torch(self, node: cst.BaseExpression, *names: str) -> bool:
        """True when ``node`` resolves to one of ``names`` (given without the ``torch.`` prefix)."""
        q = self.qualified(node)
        return q is not None and q.startswith("torch.") and q[6:] in names

    def torch_member(self, node: cst.BaseExpression, namespace: str = "torch") -> Optional[str]:
        """The member name if ``node`` is ``<namespace>.<member>``, else None."""
        q = self.qualified(node)
        if q is None:
            return None
        prefix = namespace + "."
        if q.startswith(prefix) and "." not in q[len(prefix):]:
            return q[len(prefix):]
        return None
