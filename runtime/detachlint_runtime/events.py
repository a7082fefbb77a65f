"""What the observer's parts share (below them all): an observed event, the wrapper that keeps the
observer's own work out of the program's torch modes, and a tensor's storage span."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import torch

from .watch import Site


@dataclass
class Event:
    """One observed hazard: candidate rule codes (the first is used when no static finding is at
    ``sites``), the places involved, and what happened."""

    rules: Tuple[str, ...]
    kind: str  # silent-wrong-gradient | version-error | read-after-write | copy-construct | ...
    sites: List[Site]
    evidence: str
    finding: Any = None  # set when the event was tied to one static finding directly


def unseen(method):
    """The observer's own work runs with torch-function and Python-dispatch modes off: the program's
    own modes (a TorchFunctionMode counting calls, a TorchDispatchMode counting ops) must see
    exactly what they see without us, never our ``detach()``, ``stride()`` or ``_version``."""
    function_modes, dispatch_modes = torch._C._is_torch_function_mode_enabled, torch._C._len_torch_dispatch_stack

    @functools.wraps(method)
    def inner(*args, **kwargs):
        if not function_modes() and not dispatch_modes():  # the common case, kept cheap
            return method(*args, **kwargs)
        with torch._C.DisableTorchFunction(), torch._C._DisableTorchDispatch():
            return method(*args, **kwargs)
    return inner


def storage_ptr(t: torch.Tensor) -> Optional[int]:
    """The pointer of a strided tensor's storage; None when it has none (meta, sparse)."""
    try:
        if t.layout is not torch.strided or t.is_meta:
            return None
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


def span(t: torch.Tensor) -> Optional[Tuple[int, int, int, Any]]:
    """(storage pointer, first byte, end byte, (first byte, element size, shape, strides)) of a
    strided tensor, for ``overlap``; None when it has no storage."""
    ptr = storage_ptr(t)
    if ptr is None:
        return None
    size = t.element_size()
    start = t.storage_offset()
    extent = sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride())) if t.numel() else -1
    return ptr, start * size, (start + extent + 1) * size, (start * size, size, t.shape, t.stride())


def opt(site: Optional[Site]) -> List[Site]:
    return [site] if site is not None else []
