"""PyTorch facts as predicates over plain strings (qualified names, method and variable names),
asked alike by the LibCST analyses (``tensors.py``, ``aliases.py``), the ``ast`` project index
(``project.py``) and the rules, so that each fact is decided in one place. The data they read is
in ``catalog.py``; ``tests/test_catalog.py`` checks both against the installed torch."""

from __future__ import annotations

import re
from typing import Callable, Optional, Sequence, TypeVar

from . import catalog

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
