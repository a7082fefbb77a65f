"""PyTorch facts as predicates over plain strings (qualified names, method and variable names),
asked alike by the LibCST analyses (``tensors.py``, ``aliases.py``), the ``ast`` project index
(``project.py``) and the rules, so that each fact is decided in one place. The data they read is
in ``catalog.py`` and ``saved_ops.py``; ``tests/test_catalog*.py`` check them against the installed torch."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, List, Mapping, Optional, Sequence, Tuple, TypeVar

from . import catalog, saved_ops

Node = TypeVar("Node")  # a LibCST or an ``ast`` node: ``stepped_optimizer`` serves both trees
_OPTIMIZER_NAME = re.compile(catalog.OPTIMIZER_NAME_PATTERN, re.IGNORECASE)
# Submodules of ``torch.optim`` whose classes are not optimizers (schedulers, averaged models).
_NOT_OPTIMIZER_MODULES = ("torch.optim.lr_scheduler", "torch.optim.swa_utils")


def is_optimizer_class(qualified: Optional[str]) -> bool:
    """``torch.optim.SGD``, ``torch.optim.adamw.AdamW``: a class of ``torch.optim`` that is an
    optimizer, whether it is called, annotated or tested with ``isinstance``; not a scheduler
    (``torch.optim.lr_scheduler.StepLR``, whose ``step()`` updates no parameter)."""
    if not qualified or not qualified.startswith("torch.optim."):
        return False
    head, _, member = qualified.rpartition(".")
    return member[:1].isupper() and not head.startswith(_NOT_OPTIMIZER_MODULES)


def is_optimizer_name(name: str) -> bool:
    """Whether a name (its last dotted part) reads as an optimizer's: ``opt``, ``optimizer_g``; not
    ``optim_checkpoint_name`` or ``optimizer_cls``. Asked only where the kind is unknown."""
    last = name.rsplit(".", 1)[-1]
    return bool(_OPTIMIZER_NAME.search(last)) and last.rsplit("_", 1)[-1].lower() not in catalog.NOT_OPTIMIZER_SUFFIXES


def writes_receiver(method: str) -> bool:
    """``x.add_(y)``, ``x.unsqueeze_(0)``: a tensor method that writes its receiver in place (its
    values, or its shape and strides)."""
    return method in catalog.INPLACE_METHODS or method in catalog.INPLACE_VIEW_METHODS


def writes_first_argument(qualified: Optional[str]) -> bool:
    """``torch.nn.init.normal_(w)``, ``torch.relu_(x)``, ``numpy.copyto(a, b)``: a function of the
    public API that writes its first argument in place (by torch's naming convention; torch's
    private helpers, ``torch._inductor...copy_strided_storage_``, follow none, and are analysed
    by the project index when torch is the project)."""
    if not qualified:
        return False
    return qualified in catalog.NUMPY_INPLACE_FUNCTIONS or (
        qualified.startswith("torch.") and qualified.endswith("_") and not qualified.endswith("__")
        and "._" not in qualified)


def writes_own_metadata(method: str) -> bool:
    """``x.unsqueeze_(0)``, ``x.set_(s)``, ``x.resize_(n)``: an in-place op that changes the tensor
    object's own size, storage or strides, no values (through ``p.data``, ``p.detach()`` or a view of
    ``p`` it leaves ``p`` as it was)."""
    return method in catalog.KEPT_THROUGH_DATA


def kept_through_data(method: str) -> Optional[str]:
    """What ``p`` keeps when ``p.data.<method>(...)`` runs: ``"shape"`` (``resize_``), ``"shape and
    strides"`` (``t_``, ``unsqueeze_``), ``"storage"`` (``set_``); None for an op that writes values."""
    return catalog.KEPT_THROUGH_DATA.get(method)


def returns_same_object(conversion: str) -> bool:
    """``x.cpu()``, ``x.float()``, ``torch.as_tensor(x)``: ``x`` itself when nothing converts (not
    ``x.reshape(...)``, ``torch.from_numpy(a)``: another object over the same memory)."""
    return conversion in catalog.OBJECT_RETURNING_CONVERSIONS


def shares_version_counter(alias: str) -> bool:
    """Whether an in-place op through an alias made by ``alias`` (``"detach"``, ``"view"``,
    ``"data"``) moves the aliased tensor's version counter: ``x.detach().t_()`` does, ``x.data.t_()``
    does not."""
    return catalog.VERSION_SHARED_THROUGH.get(alias, False)


def refuses_grad(method: str) -> bool:
    """``p.resize_(n)`` raises on a ``p`` that requires grad, even under ``torch.no_grad()``."""
    return method in catalog.GRAD_REFUSING_METHODS


def stepped_optimizer(method: str, receiver: Node, args: Sequence[Node],
                      is_optimizer: Callable[[Node], bool]) -> Optional[Node]:
    """The optimizer that ``<receiver>.<method>(*args)`` steps, for any tree (LibCST or ``ast``):
    the receiver (``opt.step()``, LBFGS's ``opt.step(closure)``) or the first argument
    (``scaler.step(opt)``); None when the call steps none. ``is_optimizer`` says what the caller
    knows of a node: its kind, else its name."""
    if method not in catalog.OPTIMIZER_UPDATE_METHODS:
        return None
    if is_optimizer(receiver):
        return receiver
    return args[0] if args and is_optimizer(args[0]) else None


def is_view_method(method: str) -> bool:
    """``x.view(-1)``, ``x.transpose(0, 1)``, ``x.unbind()``: a tensor method whose result is a view
    of its receiver (the same storage, with ``_base``)."""
    return method in catalog.VIEW_METHODS


def is_view_attribute(attribute: str) -> bool:
    """``x.T``, ``x.mH``, ``x.real``: a tensor attribute that is a view of the tensor."""
    return attribute in catalog.VIEW_ATTRIBUTES


def reorders_dimensions(op: str, dims: Sequence[Optional[int]]) -> bool:
    """``x.permute(0, 1, 3, 4, 2)``, ``x.transpose(1, 2)``, ``x.t()``, ``x.mT`` (``op`` a method or an
    attribute, ``dims`` its positional arguments, None for one that is no integer literal): surely a
    reordering other than the identity, so that ``.contiguous()`` right after it copies (unless only
    size-1 dimensions move). ``permute(0, 1, 2)``, ``transpose(1, 1)`` and dimensions that cannot be
    compared (``transpose(1, -1)``, ``permute(*order)``) are not."""
    if op in catalog.DIMENSION_REORDERING_ATTRIBUTES or op == "t":
        return not dims
    if op not in catalog.DIMENSION_REORDERING_METHODS or not dims or None in dims:
        return False
    ints = [d for d in dims if d is not None]
    if op == "permute":
        n = len(ints)
        order = [d % n for d in ints if -n <= d < n]
        return len(order) == n and sorted(order) == list(range(n)) and order != list(range(n))
    return len(ints) == 2 and (ints[0] < 0) == (ints[1] < 0) and ints[0] != ints[1]


def copies_after_reordering(method: str) -> bool:
    """``contiguous``: a conversion that copies right after a reordering of dimensions."""
    return method in catalog.COPYING_AFTER_REORDERING


def may_return_receiver(method: str) -> bool:
    """``x.contiguous()``, ``x.reshape(n)``, ``x.to(dev)``: a tensor method that returns its receiver,
    or storage shared with it, whenever nothing needs changing (not a view: no ``_base``)."""
    return method in catalog.MAY_ALIAS_METHODS


def may_alias_conversion(name: str) -> bool:
    """``.cpu()``, ``.float()``, ``.numpy()``, ``.contiguous()``, ``np.asarray`` (by its last name): a
    conversion whose result is the converted value's own memory when nothing needs converting."""
    return name in catalog.MAY_ALIAS_CONVERSIONS


def is_copy_intent_conversion(name: str) -> bool:
    """A may-alias conversion an author writes when a copy is meant (``batch.cpu().float().numpy()``),
    not one written for memory layout (``.contiguous()``)."""
    return name in catalog.COPY_INTENT_CONVERSIONS


def converts_dtype_or_device(method: str) -> bool:
    """``x.to(torch.bfloat16)``, ``x.half()``, ``x.cuda()``, ``x.type(t)``: a tensor method whose
    result may differ from its receiver in dtype or device."""
    return method in catalog.DTYPE_DEVICE_CONVERSIONS


def converts_argument(function: str) -> bool:
    """``np.asarray(x)``, ``torch.as_tensor(x)``, ``torch.from_numpy(a)`` (by the function's last name):
    a conversion function whose result is its argument's memory when nothing needs converting."""
    return function in catalog.COPY_INTENT_CONVERSION_FUNCTIONS


def shares_receiver_memory(method: str) -> bool:
    """A method whose result may be its receiver's memory: a view, or a may-alias conversion
    (``x.data.view(-1)``, ``x.data.cpu()``: still ``x``'s storage)."""
    return is_view_method(method) or may_alias_conversion(method)


def saves_result(op: Optional[str]) -> bool:
    """``torch.sigmoid``, ``F.softmax``, ``x.exp()`` (by member name): an op that saves its result for
    backward, so writing the result in place before ``backward()`` raises there."""
    return op in saved_ops.SAVES_RESULT


def saves_input(op: Optional[str]) -> bool:
    """``torch.sin``, ``F.gelu``, ``x.pow(2)`` (by member name): an op that saves its first input for
    backward, so writing that input in place before ``backward()`` raises there."""
    return op in saved_ops.SAVES_INPUT


def saves_other(op: Optional[str]) -> bool:
    """``torch.mm(w, b)``, ``w @ b`` as ``matmul``, ``torch.einsum(eq, q, s)`` (by member name): an op
    that saves its second tensor when the first requires grad."""
    return op in saved_ops.SAVES_OTHER


def saves_for_backward(op: Optional[str]) -> bool:
    """An op that saves its result or its first input for backward."""
    return saves_result(op) or saves_input(op)


def saves_nothing_of_input(op: Optional[str]) -> bool:
    """``x.permute(1, 0)``, ``x + y``'s ``add``, ``torch.cat``, ``x.masked_fill(m, 0)``: an op whose
    backward keeps nothing of its tensor input, so a later write to the input changes no gradient."""
    return op in catalog.SAVES_NOTHING_OF_INPUT


def zero_gradient_at_neg_inf(op: Optional[str]) -> bool:
    """``torch.softmax``, ``x.sigmoid()``, ``x.exp()``: an op that gives no gradient to cells that are
    -inf (its result there is 0, and flat)."""
    return op in catalog.ZERO_GRADIENT_AT_NEG_INF


def gradient_at_neg_inf_only_from_infinite_loss(op: Optional[str]) -> bool:
    """``F.log_softmax``, ``x.log_softmax(-1)``, ``F.logsigmoid``: an op that passes a cell that is
    exactly -inf only the loss's gradient at its own -inf result, so no loss that is finite."""
    return op in catalog.GRADIENT_AT_NEG_INF_ONLY_FROM_INFINITE_LOSS


def is_infinity_constant(qualified: Optional[str]) -> bool:
    """``math.inf``, ``numpy.inf``, ``torch.inf`` (qualified through the imports): +inf."""
    return qualified in catalog.INFINITY_CONSTANTS


def carries_no_gradient(op: Optional[str]) -> bool:
    """``torch.argmin(d)``, ``x.argmax(1)``, ``x.eq(y)``: an op whose integer or boolean result has no
    gradient, so nothing backpropagates through it into its input."""
    return op in catalog.NO_GRADIENT_RESULTS


def returns_index_pair(op: Optional[str], dim_given: bool) -> bool:
    """``x.max(1)``, ``torch.topk(x, k)``, ``x.sort()`` (by member name; ``dim_given``: a dim was
    passed): an op whose result is a (values, indices) pair, whose indices carry no gradient.
    ``max``, ``min`` and ``median`` only with a dim: ``x.max()`` is one value, with the graph."""
    return op in catalog.INDEX_PAIR_RESULTS or (dim_given and op in catalog.INDEX_PAIR_WITH_DIM)


def cuts_graph(method: str) -> bool:
    """``x.detach()``, ``x.item()``, ``x.size()``: a method whose result carries no graph of ``x``."""
    return method in catalog.GRAPH_CUTTING_METHODS or method in catalog.METADATA_METHODS


def makes_leaf(op: Optional[str]) -> bool:
    """``torch.zeros``, ``torch.randn_like`` (by member name): a factory whose result is a new leaf
    with no graph behind it."""
    return op in catalog.GRAPH_FREE_FACTORIES


# --- modules held as attributes (``self.act = nn.ReLU(inplace=True)``) ---------------------------
# What the project index records of a module (``project.ClassFacts.modules``): the ``torch.nn``
# class's name, ``!`` after it when made in place, ``?`` for anything else; an ``nn.Sequential``,
# its contents in order.
UNKNOWN_MODULE = "?"
INPLACE_MARK = "!"
SEQUENTIAL = "torch.nn.Sequential"
# An ``nn.ModuleList`` of like modules: the entries after it are what each element holds (called
# only through an element: ``self.blocks[i](x)``)
LIST_MARK = "[]"
MODULE_LISTS = frozenset({"torch.nn.ModuleList"})


def held_module(qualified: Optional[str], inplace: bool) -> str:
    """The index's entry for a module made by calling ``qualified`` (``torch.nn.ReLU``), ``inplace``
    when ``inplace=True`` is passed: a class measured by ``tools/saved_for_backward.py``, or ``?``."""
    head, _, member = (qualified or "").rpartition(".")
    if not head.startswith("torch.nn") or member not in _MEASURED_MODULES:
        return UNKNOWN_MODULE
    return member + (INPLACE_MARK if inplace and member in saved_ops.MODULE_INPLACE else "")


def flipped(entries: Sequence[str], kinds: Iterable[str]) -> Tuple[str, ...]:
    """The entries of the same modules with the ``inplace`` flag set afterwards (``m.inplace =
    True``) on those of the classes ``kinds`` (``*``: any) that have one."""
    kinds = set(kinds)
    return tuple(e + INPLACE_MARK if e in saved_ops.MODULE_INPLACE and ("*" in kinds or e in kinds) else e
                 for e in entries)


def module_entry(qualified: Optional[str], keywords: Mapping[str, bool], positional: Sequence[bool]) -> str:
    """The entry of the module made by calling ``qualified`` with these keyword arguments and
    positional ones (each: whether it is the constant ``True``), as ``held_module`` makes it."""
    position = inplace_position((qualified or "").rpartition(".")[2])
    return held_module(qualified, keywords.get("inplace", False)
                       or (position is not None and len(positional) > position and positional[position]))


def writes_own_weight(qualified: Optional[str], keywords: Iterable[str]) -> bool:
    """A ``torch.nn`` module made with these keyword arguments whose every call writes its own
    weight in place (``nn.Embedding(n, d, max_norm=1.0)`` renormalises the rows it looks up)."""
    head, _, member = (qualified or "").rpartition(".")
    return head.startswith("torch.nn") and saved_ops.MODULE_WRITES_WEIGHT.get(member) in set(keywords)


def chain_hazards(entries: Sequence[str]) -> List[Tuple[int, int]]:
    """In modules called one after another (an ``nn.Sequential``'s), the in-place ones that write
    a tensor an earlier one saved for backward (``nn.Tanh(), nn.ReLU(inplace=True)``): (the
    writer's index, the saver's index)."""
    out: List[Tuple[int, int]] = []
    saver: Optional[int] = None  # the module that saved the tensor flowing on, as its output
    for i, entry in enumerate(entries):
        member, inplace = entry.rstrip(INPLACE_MARK), entry.endswith(INPLACE_MARK)
        if inplace:
            if saver is not None:
                out.append((i, saver))
            saver = i if member in saved_ops.MODULE_INPLACE_SAVES_RESULT else saver
        elif member not in saved_ops.MODULE_RETURNS_INPUT:  # ``Identity`` passes the same tensor on
            saver = i if member in saved_ops.MODULE_SAVES_RESULT else None
    return out


def inplace_position(member: str) -> Optional[int]:
    """Where ``inplace`` sits among the positional arguments of the module class ``member``
    (``nn.ReLU(True)``, ``nn.Dropout(0.1, True)``)."""
    return saved_ops.MODULE_INPLACE_POSITION.get(member)


_MEASURED_MODULES = (saved_ops.MODULE_SAVES_RESULT | saved_ops.MODULE_SAVES_INPUT | saved_ops.MODULE_INPLACE
                     | saved_ops.MODULE_RETURNS_INPUT | frozenset(saved_ops.MODULE_INPLACE_POSITION))


def element_effect(held: Sequence[str]) -> Optional[ModuleEffect]:
    """The effect of calling an element of the ``nn.ModuleList`` ``held`` (``self.blocks[i](x)``)."""
    return module_effect(held[1:]) if held and held[0] == LIST_MARK else None


@dataclass(frozen=True)
class ModuleEffect:
    """What calling a held module (or a chain of them: an ``nn.Sequential``) does to its input. The
    ops are the module classes' names, as a finding's signature spells ops (``ReLU(inplace=True)``)."""

    name: str  # ``nn.ReLU(inplace=True)``, ``nn.Sequential(nn.Linear, nn.Sigmoid)``
    write_op: Optional[str]  # the module that writes the input in place (first in the chain)
    returns_input: bool  # the result is the input's memory (``Identity``, an in-place activation)
    input_op: Optional[str]  # the module that saves the input for backward
    result_op: Optional[str]  # the module that saves the result for backward (the last one)
    trained: bool = False  # a module of the chain has parameters: the result is in a graph whatever the input

    @property
    def writes_input(self) -> bool:
        return self.write_op is not None

    @property
    def saves_input(self) -> bool:
        return self.input_op is not None

    @property
    def saves_result(self) -> bool:
        return self.result_op is not None


def module_effect(held: Sequence[str]) -> Optional[ModuleEffect]:
    """The effect of calling the modules ``held`` in order (entries as ``held_module`` makes them),
    as far as they are known; None when the first is not."""
    if not held or held[0] in (UNKNOWN_MODULE, LIST_MARK):
        return None  # a list is not called itself
    alias, trained = True, False
    write_op = input_op = result_op = None
    names = []
    for entry in held:
        if entry == UNKNOWN_MODULE:
            alias, result_op = False, None  # what the rest does is unknown: claim nothing of the result
            names.append("...")
            break
        member, inplace = entry.rstrip(INPLACE_MARK), entry.endswith(INPLACE_MARK)
        trained = trained or member in saved_ops.MODULE_WITH_PARAMETERS
        names.append(f"nn.{member}(inplace=True)" if inplace else f"nn.{member}")
        if inplace:
            write_op = write_op or (f"{member}(inplace=True)" if alias else None)
            result_op = member if member in saved_ops.MODULE_INPLACE_SAVES_RESULT else None
        elif member not in saved_ops.MODULE_RETURNS_INPUT:
            input_op = input_op or (member if alias and member in saved_ops.MODULE_SAVES_INPUT else None)
            alias, result_op = False, member if member in saved_ops.MODULE_SAVES_RESULT else None
    name = names[0] if len(held) == 1 else f"nn.Sequential({', '.join(names)})"
    return ModuleEffect(name, write_op, alias, input_op, result_op, trained)
