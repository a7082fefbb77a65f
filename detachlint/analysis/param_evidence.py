"""What a function's body shows about its unannotated parameters: that one is a tensor (or an
array), from what the body does with it (issue 40, a helper or ``forward`` writing its argument).

``def tensor2img(tensor): out = tensor.squeeze(0).detach().clamp_(0, 1)`` never says ``tensor:
torch.Tensor``, but only a tensor has ``.detach()``; ``n = ref.shape[0]`` and ``ref.mean()`` show
an array or a tensor; ``factor = quality; factor.size(0)`` shows it through a plain alias. The
kinds found here start the function's flow-sensitive kinds (``TensorFacts.scope_kinds``), so
that the alias analysis sees writes into such a parameter. Nothing here is a guess from a name:
a parameter only gets a kind from an operation that numbers, strings, lists and dicts lack,
and none in a module of another tensor library (``TorchNames.foreign``), whose tensors have the
same method names.
"""

from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional, Set, Tuple

import libcst as cst

from ..knowledge import catalog
from .torchnames import TorchNames, target_names
from ..walk import walk

# Methods (called) and attributes only tensors have, not NumPy arrays nor Python's values: ``x.size(0)``
# (an array's ``size`` is an int), ``x.dim()``, ``x.detach()``, and every in-place method ``x.add_()``.
_TENSOR_METHODS = frozenset(
    """
    detach size dim numel permute unsqueeze narrow expand expand_as masked_fill masked_select
    ger outer clamp is_floating_point requires_grad_ new_zeros new_ones new_empty new_full new_tensor
    element_size ndimension nelement
    """.split()
) | catalog.INPLACE_METHODS
# Methods and attributes tensors and arrays have, and numbers, strings, lists and dicts lack.
_ARRAY_METHODS = frozenset("numpy view contiguous mean std var reshape transpose squeeze flatten".split())
_ARRAY_ATTRIBUTES = frozenset("shape ndim dtype T mT".split())
# Between a parameter and an op above, ops that keep "this is a tensor or an array" true of the
# value (``tensor.squeeze(0).detach()``: ``detach`` shows ``tensor`` is one).
_KEEPING = _ARRAY_METHODS | frozenset("float double half cpu cuda detach clone".split())
# torch functions whose first argument, a parameter, shows a tensor (``torch.is_tensor(x)``) or a
# value the author treats as one (``torch.as_tensor(f)`` hands a tensor back as itself).
_TENSOR_TESTS = frozenset({"torch.is_tensor", "torch.as_tensor"})
# Of those, the conversions that also take a list or a number (and copy it): weaker evidence.
LIST_ACCEPTING = frozenset({"torch.as_tensor"})
_ARRAY_TESTS = frozenset({"torch.from_numpy"})


# ``ARRAY``: an array or a tensor; ``NUMPY``: a NumPy array, which no tensor is (``torch.from_numpy(x)``,
# ``cv2.cvtColor(x, ...)``, ``x.astype(...)``).
TENSOR, ARRAY, NUMPY = "tensor", "array", "ndarray"
_STRENGTH = {ARRAY: 0, NUMPY: 1, TENSOR: 2}  # a stronger finding replaces a weaker one

# A method name -> (least, most) positional arguments of each method of that name (most -1: any).
Shared = Mapping[str, Tuple[Tuple[int, int], ...]]
_NONE: Shared = {}


def takes(arities: Tuple[Tuple[int, int], ...], call: cst.Call) -> bool:
    """Whether a method with one of ``arities`` can take ``call``'s arguments (a keyword may fill
    a positional parameter; ``*args`` fits anything): ``prox_map.apply_(view, gamma)`` fits
    ``ProxMap.apply_(self, p, gamma)``, ``x.apply_(fn)`` does not."""
    if any(a.star for a in call.args):
        return True
    positional = sum(1 for a in call.args if a.keyword is None)
    return any(positional <= most or most < 0 for least, most in arities
               if len(call.args) >= least)


def evidenced_kinds(function: cst.FunctionDef, params: Iterable[str], names: TorchNames,
                    shared: Shared = _NONE) -> Dict[str, str]:
    """The kind each of ``params`` (unannotated) is shown to have by ``function``'s own body:
    ``TENSOR`` for an op only tensors have, ``NUMPY`` for one only NumPy arrays take, ``ARRAY`` for
    one arrays share with tensors; absent
    where nothing shows either. ``shared``: methods other objects of the project have too, with
    the positional arguments they take (``ProxMap.apply_(p, gamma)``, ``TensorFacts.shared_methods``):
    a call one of them can take is no evidence."""
    return {p: kind for p, (kind, _) in evidence_of(function, names, params, shared).items()}


def evidence_of(function: cst.FunctionDef, names: TorchNames, params: Optional[Iterable[str]] = None,
                shared: Shared = _NONE) -> Dict[str, Tuple[str, cst.CSTNode]]:
    """Per parameter (of ``params``, else every one), its kind as ``evidenced_kinds`` finds it and
    the expression that shows it."""
    if params is None:
        params = [p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                         *function.params.kwonly_params)]
    wanted = set(params)
    if not wanted or not isinstance(function.body, cst.IndentedBlock) or names.foreign:
        return {}  # ``names.foreign``: ``x.permute()`` in a MegEngine module shows a MegEngine tensor
    finder = _Evidence(wanted, names, shared)
    walk(function.body, finder)
    return finder.kinds


def tensor_tested(function: cst.FunctionDef, names: TorchNames) -> Set[str]:
    """The parameters the body tests for a tensor while they hold the argument
    (``isinstance(images, torch.Tensor)``): a tensor on that path, whatever they are on others."""
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                     *function.params.kwonly_params)}
    if not isinstance(function.body, cst.IndentedBlock):
        return set()
    finder = _Evidence(params, names)
    walk(function.body, finder)
    return finder.tested & params


class _Evidence(cst.CSTVisitor):
    def __init__(self, params: Set[str], names: TorchNames, shared: Shared = _NONE) -> None:
        self.names = names
        self.shared = shared
        self.aliases: Dict[str, str] = {p: p for p in params}  # ``factor = quality``: factor -> quality
        self.kinds: Dict[str, Tuple[str, cst.CSTNode]] = {}
        self.tested: Set[str] = set()  # parameters tested for a tensor (``isinstance(x, torch.Tensor)``)

    # nested scopes have their own parameters
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

    # What a name holds follows the statements: evidence counts only while the name still holds the
    # caller's value (``keypoints = np.asarray(keypoints).reshape(-1, 3)`` ends it, so later
    # ``keypoints[:, :2]`` shows nothing of the argument, which may be a list).
    def visit_Assign(self, node: cst.Assign) -> bool:
        walk(node.value, self)
        param = self._kept(node.value)
        for target in node.targets:
            for name in target_names(target.target):
                self.aliases.pop(name, None)
            if param is not None and isinstance(target.target, cst.Name):
                self.aliases[target.target.value] = param  # ``factor = quality``, ``x = x.float()``
        return False

    def visit_For(self, node: cst.For) -> bool:
        walk(node.iter, self)
        for name in target_names(node.target):
            self.aliases.pop(name, None)
        walk(node.body, self)
        if node.orelse is not None:
            walk(node.orelse, self)
        return False

    def visit_If(self, node: cst.If) -> bool:
        """Branches are apart: a name rebound in one still holds the argument in the other; after
        the ``if``, only where both leave it so, or where the rebinding filled a missing argument
        (``if f is None: f = 1``)."""
        walk(node.test, self)
        before = dict(self.aliases)
        walk(node.body, self)
        after_body, self.aliases = self.aliases, dict(before)
        if node.orelse is not None:
            walk(node.orelse, self)
        defaulted = _none_tested(node.test)
        self.aliases = {n: p for n, p in before.items()
                        if (after_body.get(n) == p and self.aliases.get(n) == p) or n in defaulted}
        return False

    def _kept(self, value: cst.BaseExpression) -> Optional[str]:
        """The parameter ``value`` still holds: a tracked name, through ops that keep it a tensor or
        an array of the same memory or values (``x.float()``, ``x.squeeze(0)``)."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _KEEPING:
            value = value.func.value
        return self.aliases.get(value.value) if isinstance(value, cst.Name) else None

    def _show(self, name: Optional[str], kind: str, node: cst.CSTNode) -> None:
        param = self.aliases.get(name) if name is not None else None
        if param is not None and (param not in self.kinds or _STRENGTH[kind] > _STRENGTH[self.kinds[param][0]]):
            self.kinds[param] = (kind, node)

    def visit_Call(self, node: cst.Call) -> None:
        self._chain(node)
        if not node.args or not isinstance(node.args[0].value, cst.Name) or node.args[0].keyword is not None:
            return
        qualified = self.names.qualified(node.func)
        if isinstance(node.func, cst.Name) and node.func.value == "isinstance" and len(node.args) == 2 \
                and self._names_tensor(node.args[1].value):
            # ``isinstance(images, torch.Tensor)``: a tensor on one path, something else on the other
            self.tested.add(self.aliases.get(node.args[0].value.value, ""))
        elif qualified in _TENSOR_TESTS:
            self._show(node.args[0].value.value, TENSOR, node)
        elif qualified in _ARRAY_TESTS or (qualified or "").partition(".")[0] in catalog.NUMPY_ONLY_LIBRARIES:
            self._show(node.args[0].value.value, NUMPY, node)

    def _names_tensor(self, node: cst.BaseExpression) -> bool:
        kinds = node.elements if isinstance(node, cst.Tuple) else None
        if kinds is not None:
            return any(self._names_tensor(e.value) for e in kinds)
        return self.names.qualified(node) in catalog.TENSOR_TYPES

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._chain(node)

    def _chain(self, node: cst.CSTNode) -> None:
        """``x.shape``, ``x.detach()``, ``x.squeeze(0).detach()``: the ops applied to a name, from
        the name outwards, while each keeps it a tensor or an array."""
        ops = []  # (op, called, the expression up to it), outermost first
        while True:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                ops.append((node.func.attr.value, True, node))
                node = node.func.value
            elif isinstance(node, cst.Attribute):
                ops.append((node.attr.value, False, node))
                node = node.value
            else:
                break
        if not ops or not isinstance(node, cst.Name) or node.value not in self.aliases:
            return
        for attr, called, shown in reversed(ops):
            if called and attr in self.shared and takes(self.shared[attr], shown):
                return  # ``prox_map.apply_(view, gamma)``: a project class's method of that name
            if called and attr in _TENSOR_METHODS:
                self._show(node.value, TENSOR, shown)
                return
            if called and attr in catalog.NUMPY_ONLY_METHODS:
                self._show(node.value, NUMPY, shown)
                return
            if (called and attr in _ARRAY_METHODS) or (not called and attr in _ARRAY_ATTRIBUTES):
                self._show(node.value, ARRAY, shown)
            if not (called and attr in _KEEPING):
                return

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """``x[:, 0]``, ``x[..., i]``, ``x[None]``: indexing in several dimensions at once, or with
        ``None`` or ``...``, which only tensors and arrays accept."""
        if not isinstance(node.value, cst.Name) or node.value.value not in self.aliases:
            return
        elements = [e.slice for e in node.slice]
        multi = len(elements) > 1 and any(isinstance(e, cst.Slice) for e in elements)
        special = any(isinstance(e, cst.Index) and (isinstance(e.value, cst.Ellipsis) or (
            isinstance(e.value, cst.Name) and e.value.value == "None")) for e in elements)
        if multi or special:
            self._show(node.value.value, ARRAY, node)


def _none_tested(test: cst.BaseExpression) -> Set[str]:
    """``f`` of ``if f is None:``."""
    if isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, cst.Is) and isinstance(target.comparator, cst.Name) \
                and target.comparator.value == "None":
            return {test.left.value}
    return set()
