"""Snapshots (``state_dict()`` copies, optimizer state) and tensor constructors, watched through
wrappers around the public functions: the part of the observer that TAL101, TAL102 and TAL401 need."""

from __future__ import annotations

import sys
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from .events import Event, span as _span, unseen as _unseen
from .recipes import leaves
from .rules import RULES
from .watch import Site

_HELD = 256  # plain-dict snapshots (optimizer state) tracked at once
_REGISTRIES: Dict[str, dict] = {}  # "once per location" for warnings raised inside torch's files


@dataclass
class _Snapshot:
    site: Optional[Site]
    what: str
    spans: List[Any]
    total: int
    changed_by: List[Optional[Site]] = field(default_factory=list)
    # (tensor, its version then): a state_dict()'s tensors share their version counters with the
    # live ones (detach() / the optimizer's own state), so an update is seen with the dispatch mode
    # off too; `.data` writes, which bump no version, only while it is on.
    versions: List[Tuple[Any, int]] = field(default_factory=list)

    def changed(self) -> bool:
        return bool(self.changed_by) or any(t._version != v for t, v in self.versions)


class SnapshotWatch:
    """Mixed into ``Observer``: its snapshot and constructor wrappers."""

    # -- snapshots and constructors (wrappers around public functions) ---------------------------

    @_unseen
    def _remember(self, result, what: str) -> None:
        if self._busy or not isinstance(result, dict):
            return
        site = self.user_site(direct=True)
        if site is None:
            return  # torch's own recursion into submodules, or a library's call
        self.counts[site] = self.counts.get(site, 0) + 1
        tensors = [t for t in leaves(result) if isinstance(t, torch.Tensor)]
        spans = [s for s in map(_span, tensors) if s is not None]
        if not spans:
            return
        key = id(result)
        self._forget(key)
        try:
            self._snap_refs[key] = weakref.ref(result, lambda _r, k=key: self._forget(k))
        except TypeError:  # a plain dict: held (the newest _HELD of them), so its id stays its own
            self._snap_held[key] = result
            while len(self._snap_held) > _HELD:
                self._forget(next(iter(self._snap_held)))
        snap = _Snapshot(site, what, spans, len(tensors), versions=[(t, t._version) for t in tensors])
        if what.startswith("optimizer"):
            self.snap_seen[site] = self.snap_seen.get(site, 0) + 1
        if what == "state_dict()":  # its tensors are detached aliases; an optimizer's are the live state
            for f in self.alias_sites.get(site, ()):
                if RULES[f.code].snapshots:
                    self.watch.make(f, site, None, tensors)
        if site in self.alias_sites:  # watched until it dies: its staleness needs every write seen
            self._flagged_snaps.add(key)
            self._push()
        self.snapshots[key] = snap
        for ptr in {s[0] for s in spans}:
            self.snap_ptrs.setdefault(ptr, []).append(snap)

    def _forget(self, key: int) -> None:
        self._flagged_snaps.discard(key)
        snap = self.snapshots.pop(key, None)
        if snap is not None and snap.site is not None and snap.what.startswith("optimizer") and snap.changed():
            self.snap_changed[snap.site] = self.snap_changed.get(snap.site, 0) + 1
        self._snap_refs.pop(key, None)
        self._snap_held.pop(key, None)
        if snap is not None:
            for ptr in {s[0] for s in snap.spans}:
                held = self.snap_ptrs.get(ptr, [])
                if snap in held:
                    held.remove(snap)
                if not held:
                    self.snap_ptrs.pop(ptr, None)

    @_unseen
    def _used(self, obj, how: str) -> None:
        if self._busy or not self.snapshots:
            return
        snaps = [s for s in map(self.snapshots.get, _containers(obj)) if s is not None]
        if not snaps:
            return
        site = self.user_site(direct=True)
        for snap in snaps:
            self._check_snapshot(snap, how, site)

    def _check_snapshot(self, snap: _Snapshot, how: str, site: Optional[Site]) -> None:
        if not snap.changed():
            if snap.site is not None:
                self.snap_unchanged.setdefault(snap.site, []).append(
                    f"{how} at line {site[1] if site else '?'} while the live tensors were unchanged")
            return
        else:
            writer = next((s for s in snap.changed_by if s is not None), None)
            where = f" (written at line {writer[1]})" if writer else ""
            sites = [s for s in (snap.site, site, writer) if s is not None]
            self._add(Event(("TAL401",), "stale-snapshot", sites,
                                     f"the {snap.what} snapshot taken at line {snap.site[1] if snap.site else '?'} "
                                     f"was {how} at line {site[1] if site else '?'} after in-place updates had "
                                     f"changed it{where}: it aliases the live tensors"))

    @_unseen
    def _on_ctor(self, name: str, data) -> Optional[Site]:
        """Note a constructor call from user code; the call's site when ``data`` is a tensor."""
        if self._busy:
            return None
        site = self.user_site(direct=True)
        if site is None:
            return None
        if isinstance(data, torch.Tensor):
            kind = "tensor-requiring-grad" if data.requires_grad else "tensor"
            # torch.tensor(t) of a tensor that requires grad drops its graph; of one that does not, it
            # is a copy that computes the same values (torch's warning is style). torch.Tensor(t): the
            # hazard is a later write through the alias it returns.
            if name != "torch.Tensor" and data.requires_grad:
                self._add(Event(("TAL101",), "graph-dropped", [site],
                                f"`{name}(t)` copied a tensor that requires grad: the copy has no graph, so no "
                                f"gradient reaches `t` through it"))
            self.ctor_calls.setdefault(site, []).append(kind)
            return site
        elif isinstance(data, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in data):
            grads = [v for v in data if isinstance(v, torch.Tensor) and v.requires_grad]
            kind = "tensors-requiring-grad" if grads else "tensors"
            if grads:
                self._add(Event(("TAL102",), "graph-dropped", [site],
                                         f"`{name}([...])` of {len(grads)} tensor(s) requiring grad built a "
                                         f"tensor with no graph: no gradient reaches them"))
        else:
            kind = type(data).__module__.split(".")[0] + "." + type(data).__name__ \
                if type(data).__module__ != "builtins" else type(data).__name__
        self.ctor_calls.setdefault(site, []).append(kind)
        return None

    @_unseen
    def _on_legacy_alias(self, result, site: Site) -> None:
        """Follow the alias ``torch.Tensor(t)`` returned: a write through it changes ``t``."""
        if not isinstance(result, torch.Tensor):
            return
        key = id(result)

        def gone(ref, key=key):
            entry = self._legacy.get(key)
            if entry is not None and entry[0] is ref:
                del self._legacy[key]

        self._legacy[key] = (weakref.ref(result, gone), site)
        self._push()  # a write through it is the hazard

    def _patch(self, owner, name: str, wrapper_factory) -> None:
        own = owner.__dict__.get(name)  # None: inherited, so deleted again at stop
        setattr(owner, name, wrapper_factory(getattr(owner, name)))
        self._patches.append((owner, name, own))

    def _install_patches(self) -> None:
        # Each wrapper first hands over to the original while Dynamo traces a region the user
        # compiles (``is_compiling()`` is a constant True there, so that branch is all it traces):
        # the region compiles as it would without us, and calls inside it are not observed.
        obs = self
        compiling = torch.compiler.is_compiling

        def state_dict(original, what):
            def wrapper(self, *args, **kwargs):
                if compiling():
                    return original(self, *args, **kwargs)
                result = _as_caller(original, self, *args, **kwargs)
                if not kwargs.get("keep_vars"):
                    obs._remember(result, what)
                return result
            return wrapper

        def restoring(original, how):
            def wrapper(self, state_dict, *args, **kwargs):
                if compiling():
                    return original(self, state_dict, *args, **kwargs)
                obs._used(state_dict, how)
                return _as_caller(original, self, state_dict, *args, **kwargs)
            return wrapper

        def saving(original):
            def wrapper(obj, *args, **kwargs):
                if compiling():
                    return original(obj, *args, **kwargs)
                obs._used(obj, "saved")
                return _as_caller(original, obj, *args, **kwargs)
            return wrapper

        def ctor(original, name):
            def wrapper(data, *args, **kwargs):
                if compiling():
                    return original(data, *args, **kwargs)
                obs._on_ctor(name, data)
                return _as_caller(original, data, *args, **kwargs)
            return wrapper

        def method_ctor(original, name):
            def wrapper(self, data, *args, **kwargs):
                if compiling():
                    return original(self, data, *args, **kwargs)
                obs._on_ctor(name, data)
                return _as_caller(original, self, data, *args, **kwargs)
            return wrapper

        def reading(original, how):
            # Reads that reach no aten op: a watched alias read this way is read all the same.
            def wrapper(self, *args, **kwargs):
                if obs.watch.tags and id(self) in obs.watch.tags and not compiling():
                    obs._read_outside(self, how)
                result = original(self, *args, **kwargs)
                if how == "numpy" and obs.alias_sites and not compiling():
                    obs._numpy_alias()
                return result
            return wrapper

        def legacy(original):
            def __new__(cls, *args, **kwargs):
                if compiling():
                    return original(cls, *args, **kwargs)
                site = None
                if cls is torch.Tensor and len(args) == 1 and not kwargs:
                    site = obs._on_ctor("torch.Tensor", args[0])
                result = _as_caller(original, cls, *args, **kwargs)
                if site is not None:
                    obs._on_legacy_alias(result, site)
                return result
            return staticmethod(__new__)

        self._patch(torch.nn.Module, "state_dict", lambda o: state_dict(o, "state_dict()"))
        self._patch(torch.optim.Optimizer, "state_dict", lambda o: state_dict(o, "optimizer state_dict()"))
        self._patch(torch.nn.Module, "load_state_dict", lambda o: restoring(o, "restored with load_state_dict"))
        self._patch(torch.optim.Optimizer, "load_state_dict", lambda o: restoring(o, "restored with load_state_dict"))
        self._patch(torch, "save", saving)
        self._patch(torch, "tensor", lambda o: ctor(o, "torch.tensor"))
        self._patch(torch.Tensor, "new_tensor", lambda o: method_ctor(o, "new_tensor"))
        for name in ("tolist", "numpy", "__repr__"):
            self._patch(torch.Tensor, name, lambda o, name=name: reading(o, name))
        new = torch.Tensor.__dict__.get("__new__")
        original_new = new.__func__ if isinstance(new, staticmethod) else torch._C.TensorBase.__new__
        torch.Tensor.__new__ = legacy(original_new)
        self._patches.append((torch.Tensor, "__new__", new))


def _containers(obj, depth: int = 3, budget: int = 1000) -> List[int]:
    """ids of ``obj`` and of the dicts, lists and tuples inside it (a checkpoint dict holding
    ``model.state_dict()`` and ``opt.state_dict()``), a few levels deep and a bounded number."""
    out: List[int] = []
    todo = [(obj, 0)]
    while todo and len(out) < budget:
        item, level = todo.pop()
        if not isinstance(item, (dict, list, tuple)):
            continue
        out.append(id(item))
        if level < depth:
            values = item.values() if isinstance(item, dict) else item
            todo.extend((v, level + 1) for v in values if isinstance(v, (dict, list, tuple)))
    return out


def _as_caller(original, *args, **kwargs):
    """``original(*args, **kwargs)`` called from a wrapper of ours, with the warnings it gives
    attributed as without us: torch attributes a C++ warning to the innermost Python frame, which
    would be the wrapper; it goes to the user's line that called the wrapper."""
    # Not warnings.catch_warnings: entering and leaving it counts as changing the filters, which
    # empties every "once per location" registry, so a warning the program gives once in a loop
    # would be given at every iteration. The filter list is changed in place instead (which
    # invalidates nothing) and what is shown is collected.
    caught: list = []
    show = warnings._showwarnmsg
    always = ("always", None, Warning, None, 0)
    warnings.filters.insert(0, always)
    warnings._showwarnmsg = caught.append
    try:
        return original(*args, **kwargs)
    finally:
        warnings._showwarnmsg = show
        filters = warnings.filters  # a catch_warnings inside the call may have put back a copy
        if filters and filters[0] is always:
            del filters[0]
        else:  # the call changed the filters itself
            filters[:] = [f for f in filters if f is not always]
        frame = sys._getframe(2)  # 0: here, 1: the wrapper, 2: its caller
        for w in caught:  # re-issued under the user's filters, now restored
            if w.filename == __file__:
                where = frame.f_globals
                warnings.warn_explicit(w.message, w.category, frame.f_code.co_filename, frame.f_lineno,
                                       module=where.get("__name__"),
                                       registry=where.setdefault("__warningregistry__", {}), module_globals=where)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno,
                                       registry=_REGISTRIES.setdefault(w.filename, {}))
