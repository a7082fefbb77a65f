"""How one function's graph uses a tensor around a write to it: whether an op before the write may
have saved it for backward, and whether a later op backpropagates through it.

Asked by TAL001 for a ``.data`` write inside ``forward()``, where the old question ("was the
tensor used before?") made an error of every EMA update of a buffer that a view or a sum had
read. Built on demand for one write: a walk of the function body with the parents of each use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from .order import ScopeOrder
from ..knowledge import catalog
from ..knowledge.torch_facts import (carries_no_gradient, cuts_graph, is_view_attribute, is_view_method, makes_leaf,
                          may_return_receiver, returns_index_pair, saves_nothing_of_input, saves_result,
                          zero_gradient_at_neg_inf, gradient_at_neg_inf_only_from_infinite_loss,
                          is_infinity_constant)
from .copies import literal_int
from .torchnames import TorchNames, dotted_name
from ..walk import significant_children, walk

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_SMALL = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)
# Operators whose backward keeps neither operand (``a + b``, ``a - b``); the others may keep both.
_KEEPS_NOTHING = (cst.Add, cst.Subtract)
# A -inf mask below this is as good as -inf for the ops of ZERO_GRADIENT_AT_NEG_INF: their result
# underflows to exactly 0 (exp(-1e4) is 0 in every float dtype).
_AS_GOOD_AS_NEG_INF = -1e4


@dataclass
class _Use:
    node: cst.CSTNode
    position: int
    parents: Tuple[cst.CSTNode, ...]  # innermost last


class GraphUse:
    """The uses of ``names`` (dotted) in ``body``, and the statements that rebind them."""

    def __init__(self, body: cst.CSTNode, order: ScopeOrder, torch_names: TorchNames, names: Iterable[str],
                 call_keeps: Optional[Callable[[str, int], bool]] = None) -> None:
        self.order = order
        # ``ModuleView.call_keeps``: whether a call of the project may save its argument (None: any may)
        self.call_keeps = call_keeps
        self.names = set(names)
        self.uses: List[_Use] = []
        # (name, first and last position of the statement, the statement)
        self.rebinds: List[Tuple[str, int, int, cst.CSTNode]] = []
        self.statements: List[Tuple[int, int, cst.CSTNode]] = []  # small statements and their spans
        self.local: Set[str] = set()  # the plain names the body binds
        self._walk(body, ())
        self.statements.sort(key=lambda s: s[0])
        self.torch_names = torch_names.without(self.local)

    def _walk(self, node: cst.CSTNode, parents: Tuple[cst.CSTNode, ...]) -> Tuple[int, int]:
        """Record ``node``'s subtree; return the least and greatest positions in it."""
        here = self.order.position(node)
        low = high = here
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) in self.names:
            self.uses.append(_Use(node, here, parents))
        inner = parents + (node,)
        for child in significant_children(node):
            if isinstance(child, _NESTED):
                continue
            lo, hi = self._walk(child, inner)
            low, high = min(low, lo) if lo >= 0 else low, max(high, hi)
        if isinstance(node, _SMALL):
            self.statements.append((low, high, node))
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.For)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for name in _bound(targets):
                if "." not in name:
                    self.local.add(name)
                if name in self.names:
                    self.rebinds.append((name, low, high, node))
        return low, high

    def _live(self, use: _Use, name: str, start: int, end: int) -> bool:
        """Whether ``use`` (of ``name``) between ``start`` and ``end`` still holds the same tensor
        at ``end``: no statement rebinding ``name`` ends between the use and ``end``."""
        binding = self._consumer(use)[0] == "bound"
        return not any(bound == name and use.position <= last < end and last > start
                       and not (binding and statement in use.parents)  # the binding itself
                       for bound, _, last, statement in self.rebinds)

    def saved_before(self, name: str, write: cst.CSTNode, calls: Sequence[str] = (),
                     written_saves: bool = True) -> Optional[Tuple[cst.CSTNode, Optional[str]]]:
        """A use of ``name`` before ``write`` (the same tensor still) in an op that may have saved
        it for backward: any op except those known to keep nothing of it (views, sums, ``+``,
        comparisons, ...), a call of a module in ``calls`` (``self.fc(x)`` keeps ``self.fc.weight``),
        or the binding of ``name`` to the result of an op that saves its result (``softmax``): the
        use, and that op for a binding. Not in a graph that is never backpropagated
        (``feeds_gradient``). ``written_saves=False``: for a tensor that requires no gradient (a
        ``.grad``), whose own in-place methods (``g.zero_()``) save nothing of it."""
        at = self.order.position(write)
        for use in self.uses:
            used = dotted_name(use.node)
            if use.position >= at or not self._live(use, used, -1, at):
                continue
            if used in calls and use.parents and isinstance(use.parents[-1], cst.Call) \
                    and use.parents[-1].func is use.node and self.feeds_gradient(use.node):
                return use.node, None
            if used == name and self._may_save(use):
                kind, op = self._consumer(use)
                if not written_saves and kind == "method" and op in catalog.INPLACE_METHODS:
                    continue
                if kind == "bound":
                    return use.node, op
                if self.feeds_gradient(use.node):
                    return use.node, None
        return None

    def feeds_gradient(self, use: cst.CSTNode) -> bool:
        """Whether the graph built by the statement holding ``use`` may be backpropagated: its
        result (and what is computed from it, not through ``argmin``, comparisons, ``.detach()``)
        is returned, stored on an object, or handed to anything but a local name. A graph whose
        values only feed integer results (nearest-code search) is never backpropagated."""
        at = self.order.position(use)
        holder = next(((low, s) for low, high, s in self.statements if low <= at <= high), None)
        if holder is None:
            return True
        at, statement = holder
        value = getattr(statement, "value", None)
        root = dotted_name(use)
        if value is not None and root is not None and root.split(".")[0] not in names_in(value, self.torch_names):
            return False  # ``F.embedding(codes, w).detach()``, ``torch.argmin(x @ w)``: no graph comes out
        derived = _local_targets(statement, self.torch_names)
        if derived is None:
            return True
        for _, _, later in (s for s in self.statements if s[0] > at):
            value = getattr(later, "value", None)
            if value is None or not (names_in(value, self.torch_names) & derived) or _into_untracked(later):
                continue
            targets = _local_targets(later, self.torch_names)
            if targets is None:
                return True  # returned, stored on an object, handed to a call
            derived |= targets
        return False

    def _may_save(self, use: _Use) -> bool:
        kind, op = self._consumer(use)
        if kind == "bound":
            return op is not None and saves_result(op)
        if kind in ("method", "torch"):
            return not (saves_nothing_of_input(op) or cuts_graph(op))
        if kind == "call":
            return self._call_may_save(use)
        return kind in ("operator", "held")

    def _call_may_save(self, use: _Use) -> bool:
        """A call that takes the tensor: not one the project index knows computes nothing from it."""
        node, parents = self._through_views(use.node, use.parents)
        arg, call = parents[-1], parents[-2]
        name = dotted_name(call.func)
        if self.call_keeps is None or name is None or arg.keyword is not None or arg.star:
            return True
        position = next(i for i, a in enumerate(call.args) if a is arg)
        if any(a.star for a in call.args[:position]):
            return True
        return self.call_keeps(name, position)

    def gradient_read_after(self, name: str, write: cst.CSTNode, statement: cst.CSTNode,
                            neg_inf_fill: bool, exact_neg_inf: bool = False) -> Optional[cst.CSTNode]:
        """A read of ``name`` after ``write`` (the same tensor still) by an op that backpropagates
        into it: arithmetic, or a torch op other than those that carry no gradient, or that give
        none to the cells the write set to -inf (``neg_inf_fill``: it wrote -inf, or maybe did),
        or, where the write surely wrote exactly -inf (``exact_neg_inf``), that give them gradient
        only from a loss that is then infinite (``log_softmax``).
        Calls of the project or of modules, returns and stores say nothing: their use is unseen."""
        for use in self._reads_after(name, write, statement):
            if self._backpropagates(use, neg_inf_fill, exact_neg_inf):
                return use.node
        return None

    def read_by_after(self, name: str, write: cst.CSTNode, statement: cst.CSTNode,
                      ops: Callable[[Optional[str]], bool]) -> Optional[Tuple[cst.CSTNode, str]]:
        """The first read of ``name`` after ``write`` by a method or torch op that ``ops`` accepts,
        and that op's name."""
        for use in self._reads_after(name, write, statement):
            kind, op = self._consumer(use)
            if kind in ("method", "torch") and op is not None and ops(op):
                return use.node, op
        return None

    def _reads_after(self, name: str, write: cst.CSTNode, statement: cst.CSTNode) -> Iterable[_Use]:
        at = self.order.position(write)
        for use in self.uses:
            if dotted_name(use.node) != name or use.position <= at or statement in use.parents:
                continue
            if any(bound == name and at < first and last < use.position for bound, first, last, _ in self.rebinds):
                continue
            yield use

    def made_without_graph(self, name: str) -> bool:
        """Whether ``name`` is bound here, each time, by a factory (``torch.zeros(...)``): a leaf
        with no graph behind it, through which nothing backpropagates."""
        bound = [op for use in self.uses if dotted_name(use.node) == name
                 for kind, op in [self._consumer(use)] if kind == "bound"]
        return bool(bound) and all(op is not None and makes_leaf(op) for op in bound)

    def _backpropagates(self, use: _Use, neg_inf_fill: bool, exact_neg_inf: bool) -> bool:
        kind, op = self._consumer(use)
        if kind == "operator":
            return True
        if kind not in ("method", "torch") or op is None:
            return False
        if carries_no_gradient(op) or cuts_graph(op) or self._indices_only(use):
            return False
        if exact_neg_inf and gradient_at_neg_inf_only_from_infinite_loss(op):
            return False
        return not (neg_inf_fill and zero_gradient_at_neg_inf(op))

    def _indices_only(self, use: _Use) -> bool:
        """Whether the op taking ``use`` gives only the indices of its (values, indices) pair:
        ``x.max(1)[1]``, ``torch.topk(x, k).indices``."""
        _, parents = self._through_views(use.node, use.parents)
        return len(parents) > 2 and isinstance(parents[-2], cst.Call) \
            and getattr(parents[-3], "value", None) is parents[-2] and index_half(parents[-3], self.torch_names)

    def _consumer(self, use: _Use) -> Tuple[str, Optional[str]]:
        """What takes the tensor (through its views): ``("method", op)`` for ``x.op(...)``,
        ``("torch", op)`` for ``torch.op(x)``, ``("call", None)`` for a call of anything else (the
        project's, a module), ``("operator", None)`` for ``x * y`` (``x + y`` keeps nothing:
        ``("none", None)``), ``("bound", op)`` where ``x`` is bound to ``op``'s result, ``("held",
        None)`` where it is kept (``a = x``, a list), ``("none", None)`` where no value is taken."""
        node, parents = self._through_views(use.node, use.parents)
        if not parents:
            return "none", None
        parent = parents[-1]
        grand = parents[-2] if len(parents) > 1 else None
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if isinstance(grand, cst.Call) and grand.func is parent:
                return "method", parent.attr.value
            return "none", None  # ``x.shape``, ``x.device``
        if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call):
            qualified = self.torch_names.qualified(grand.func) or ""
            if qualified.startswith("torch."):
                return "torch", qualified.rpartition(".")[2]
            return "call", None
        if isinstance(parent, cst.BinaryOperation):
            return ("none" if isinstance(parent.operator, _KEEPS_NOTHING) else "operator"), None
        if isinstance(parent, cst.AssignTarget):
            value = getattr(grand, "value", None)
            return "bound", self.torch_names.op(value)[0] if isinstance(value, cst.Call) else None
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.List, cst.Tuple, cst.Element, cst.Dict,
                               cst.DictElement, cst.Yield, cst.StarredElement)):
            return "held", None
        return "none", None  # an index, a comparison, ``-x``, a return, ``del x``, an ``if`` test

    @staticmethod
    def _through_views(node: cst.CSTNode, parents: Tuple[cst.CSTNode, ...]):
        """Up from ``node`` through what shares its memory: ``x.view(...)``, ``x.unsqueeze(1)``,
        ``x[i]``, ``x.T``, ``x.data``, ``x.detach()``, ``x.contiguous()``."""
        while parents:
            parent = parents[-1]
            if isinstance(parent, cst.Subscript) and parent.value is node:
                node, parents = parent, parents[:-1]
            elif isinstance(parent, cst.Attribute) and parent.value is node:
                attr = parent.attr.value
                if is_view_attribute(attr) or attr == "data":
                    node, parents = parent, parents[:-1]
                elif len(parents) > 1 and isinstance(parents[-2], cst.Call) and parents[-2].func is parent \
                        and (is_view_method(attr) or may_return_receiver(attr)) and attr != "detach":
                    node, parents = parents[-2], parents[:-2]
                else:
                    return node, parents
            else:
                return node, parents
        return node, parents


def unsaved_gradient(function: Optional[cst.FunctionDef], order: ScopeOrder, torch_names: TorchNames,
                     gradient: cst.BaseExpression, write: cst.CSTNode, aliases: Sequence[str] = ()) -> Optional[str]:
    """The name of ``gradient`` where it is a ``.grad`` (``x.grad``) that no graph of ``function``
    can have saved when ``write`` changes it; None otherwise. Autograd never saves a ``.grad`` on
    its own: only where a ``backward(create_graph=True)`` made it part of a graph, or an op before
    the write took it (not a copy of it: ``x.grad.data.clone()``). ``aliases`` hold the same tensor
    (``g = x.grad.detach()``); the gradient's own in-place writes (``g.zero_()``) save nothing."""
    name = dotted_name(gradient)
    if function is None or name is None or not (isinstance(gradient, cst.Attribute) and gradient.attr.value == "grad"):
        return None
    creates = _CreateGraph()
    walk(function, creates)
    if creates.found:
        return None
    names = [name, *aliases]
    graph = GraphUse(function.body, order, torch_names, names)
    return name if all(graph.saved_before(n, write, written_saves=False) is None for n in names) else None


class _CreateGraph(cst.CSTVisitor):
    """Whether a call passes ``create_graph=`` anything but ``False`` (a gradient built as a graph)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "create_graph" \
                and not (isinstance(node.value, cst.Name) and node.value.value == "False"):
            self.found = True


def names_in(node: cst.CSTNode, graph: Optional[TorchNames] = None) -> Set[str]:
    """The names read in an expression (not inside lambdas); with ``graph``, only those whose
    gradient can flow into the expression's value: not inside ``torch.argmin(d)``, ``d.argmax(1)``,
    ``d.max(1)[1]``, ``d.detach()``, a comparison (integer, boolean or cut results carry none)."""
    return names_and_calls(node, graph)[0]


def names_and_calls(node: cst.CSTNode, graph: Optional[TorchNames] = None) -> Tuple[Set[str], List[cst.Call]]:
    """``names_in``'s names, and the calls among which they were found."""
    finder = _Names(graph)
    walk(node, finder)
    return finder.names, finder.calls


class _Names(cst.CSTVisitor):
    def __init__(self, graph: Optional[TorchNames]) -> None:
        self.names: Set[str] = set()
        self.calls: List[cst.Call] = []
        self.graph = graph

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Comparison(self, node: cst.Comparison) -> bool:
        return self.graph is None

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        return self.graph is None or not index_half(node, self.graph)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self.graph is None or node.attr.value != "indices" or not index_half(node, self.graph)

    def visit_Call(self, node: cst.Call) -> bool:
        self.calls.append(node)
        if self.graph is None:
            return True
        op, _ = self.graph.op(node)
        return not (carries_no_gradient(op) or (isinstance(node.func, cst.Attribute) and cuts_graph(op or "")))


def _bound(targets: Sequence[cst.BaseExpression]) -> List[str]:
    out: List[str] = []
    for target in targets:
        if isinstance(target, (cst.Tuple, cst.List)):
            out.extend(_bound([e.value for e in target.elements]))
        elif isinstance(target, cst.StarredElement):
            out.extend(_bound([target.value]))
        else:
            name = dotted_name(target)
            if name is not None:
                out.append(name)
    return out


def returns_indices(call: cst.Call, graph: TorchNames, named: bool = False) -> bool:
    """``x.max(1)``, ``torch.max(x, dim=1)``, ``x.topk(k)``: a call whose result is a (values,
    indices) pair (a dim is an integer literal or ``dim=``; ``torch.max(x, y)`` is elementwise).
    ``named``: its ``.indices`` is read, which only a pair has."""
    op, first = graph.op(call)
    if op is None:
        return False
    if named:
        return returns_index_pair(op, dim_given=True)
    rest = call.args[1:] if call.args and call.args[0].value is first else call.args
    dim_given = any(a.keyword is not None and a.keyword.value in ("dim", "keepdim") for a in rest) or (
        bool(rest) and rest[0].keyword is None and not rest[0].star and literal_int(rest[0].value) is not None)
    return returns_index_pair(op, dim_given)


def index_half(node: cst.CSTNode, graph: TorchNames) -> bool:
    """``x.max(1)[1]``, ``torch.topk(x, k).indices``: the indices of a (values, indices) pair, an
    integer tensor through which no gradient flows."""
    named = isinstance(node, cst.Attribute)
    if named:
        picked = node.attr.value == "indices"
    elif isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        picked = literal_int(node.slice[0].slice.value) in (1, -1)
    else:
        return False
    return picked and isinstance(node.value, cst.Call) and returns_indices(node.value, graph, named)


def _graph_targets(targets: Sequence[cst.BaseExpression], value: cst.BaseExpression,
                   graph: TorchNames) -> Sequence[cst.BaseExpression]:
    """The targets that receive the graph of ``value``: in ``v, i = x.max(1)`` only ``v``."""
    if len(targets) == 1 and isinstance(targets[0], (cst.Tuple, cst.List)) and isinstance(value, cst.Call):
        elements = targets[0].elements
        if len(elements) == 2 and not any(isinstance(e, cst.StarredElement) for e in elements) \
                and returns_indices(value, graph):
            return [elements[0].value]
    return targets


def _into_untracked(statement: cst.CSTNode) -> bool:
    """``p.data.copy_(v)``, ``p.data = v``: the values go where autograd does not look, so no
    gradient flows back through this statement into the graph that computed ``v``."""
    if isinstance(statement, cst.Assign):
        return all(isinstance(t.target, cst.Attribute) and t.target.attr.value == "data" for t in statement.targets)
    call = statement.value if isinstance(statement, cst.Expr) else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
        and call.func.attr.value in catalog.INPLACE_METHODS and isinstance(call.func.value, cst.Attribute) \
        and call.func.value.attr.value == "data"


def _local_targets(statement: cst.CSTNode, graph: TorchNames) -> "Optional[Set[str]]":
    """The local names an assignment binds the graph of its value to (not the indices of ``_, i =
    x.max(1)``); None for anything else (a return, an expression, an assignment to an attribute
    or an item)."""
    if isinstance(statement, cst.Assign):
        targets = list(_graph_targets([t.target for t in statement.targets], statement.value, graph))
    elif isinstance(statement, (cst.AnnAssign, cst.AugAssign)):
        targets = [statement.target]
    else:
        return None
    names: Set[str] = set()
    for name in _bound(targets):
        if "." in name:
            return None
        names.add(name)
    return names if names and all(isinstance(t, (cst.Name, cst.Tuple, cst.List)) for t in targets) else None


def exact_neg_inf(value: Optional[cst.BaseExpression], names: TorchNames) -> bool:
    """Whether a written value is surely -inf: ``-float("inf")``, ``float("-inf")``, ``-math.inf``,
    ``-np.inf``, ``-torch.inf`` (through the imports); not a name bound elsewhere, nor -1e9."""
    negative = False
    while isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
        negative ^= isinstance(value.operator, cst.Minus)
        value = value.expression
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "float" \
            and "float" not in names.bindings and len(value.args) == 1 \
            and isinstance(value.args[0].value, cst.SimpleString):
        text = value.args[0].value.evaluated_value
        spelled = text.strip().lower() if isinstance(text, str) else ""
        word = spelled[1:] if spelled[:1] in ("+", "-") else spelled
        return word in ("inf", "infinity") and (spelled[:1] == "-") != negative
    return negative and is_infinity_constant(names.qualified(value)) if value is not None else False


def neg_inf_fill(value: Optional[cst.BaseExpression]) -> bool:
    """Whether a written value is -inf, or may be: anything but a number literal above -1e4
    (``0``, ``1e-8``, ``-1.0``: finite, so softmax still passes gradient to those cells)."""
    if value is None:
        return True
    sign = 1.0
    while isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
        sign = -sign if isinstance(value.operator, cst.Minus) else sign
        value = value.expression
    if isinstance(value, (cst.Integer, cst.Float)):
        try:
            return sign * float(value.evaluated_value) <= _AS_GOOD_AS_NEG_INF
        except (TypeError, ValueError):
            return True
    return True
