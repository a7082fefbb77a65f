"""Run mode: observe the hazards in the user's own program, through torch's public hooks.

An :class:`Observer` is started before the program and stopped after it. While it runs:

- every flagged line (a static finding's row, its related rows) is counted wherever it runs, and
  the file is linted when its code first runs (:mod:`.lines`);
- a ``TorchDispatchMode`` sees aten ops; the arguments its schema marks as written
  (``alias_info.is_write``: ``foo_`` ops, ``out=``, ``copy_``, foreach ops) are the writes, and the
  innermost frame in a user file is the line that issued them. ``.data`` writes are seen too. It is
  on while a flagged line runs and while an alias or snapshot such a line made is alive (or, with
  ``watch_all``, for the whole run); pushed only onto an empty mode stack, never under our own
  handler. The aliases a flagged line makes are watched for their whole lives (:mod:`.watch`).
- ``torch.autograd.graph.saved_tensors_hooks`` record what each graph saved (a detached alias, which
  shares the storage and the version counter, and the version at save time). A write that overlaps
  a saved tensor whose backward has not run yet is noted on it. Autograd's own version check is off
  while such hooks are active (torch-semantics.md 6.5), so the unpack hook does it: a changed
  version raises the very ``RuntimeError`` autograd would have raised; an unchanged version after an
  observed write (``.data``: a write autograd cannot see) is a silent wrong gradient, recorded and
  left silent, as the program would be without us.
- ``nn.Module.state_dict`` / ``Optimizer.state_dict`` results are remembered with their storages
  and versions (wherever they are taken: a helper that returns one is followed to its caller, since
  the dict object is what is tracked); a changed version or an observed write marks the snapshot
  changed, and ``load_state_dict`` / ``torch.save`` of a changed snapshot (also inside a dict, list
  or tuple given to ``torch.save``) is the stale-snapshot hazard.
- ``torch.tensor`` / ``Tensor.new_tensor`` / ``torch.Tensor`` calls are checked for tensor arguments;
  the alias ``torch.Tensor(t)`` returns is followed, and an in-place write through it is the hazard.

The observer's own tensor calls run with torch-function and Python-dispatch modes off, so the
program's own modes see what they see without us; warnings raised inside a wrapped call are
attributed to the user's line.

Regions the user compiles with ``torch.compile`` compile as they would without us: the mode says
``ignore_compile_internals`` (otherwise Dynamo skips every frame while a dispatch mode is on and the
program would run eagerly), the wrappers hand over to the original while Dynamo traces, and
Dynamo's tables of torch functions are built before the wrappers are installed. Their ops are not
attributed to lines (the frame of compiled code stands at the function's first line): a finding in a
function that ran compiled is ``unobservable``; writes and backwards around compiled calls are seen.

Not observed (documented limits): NumPy writes and ``x.data = y`` (neither reaches the
dispatcher), typed legacy constructors (``torch.FloatTensor(t)``), threads other than the one that
started the observer, and what happens inside compiled regions.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

import detachlint

from . import compiled, events, snapshots
from .events import Event, opt as _opt, span as _span, unseen as _unseen
from .lines import LineCounter, statements
from .static import static_findings
from .rules import RULES
from .compiled import CompiledRegions, _OnImport
from .snapshots import SnapshotWatch, _Snapshot
from .watch import OVERWRITES, Site, Watch, alias_rows, follows_aliases, overlap, whose_alias

_STRIDED = torch.strided

_HERE = str(Path(__file__).resolve().parent)
# the files of the observer's wrappers (the frames a user site is looked for above)
_OWN_FILES = frozenset(sys.modules[name].__file__ for name in (__name__, compiled.__name__, events.__name__,
                                                                snapshots.__name__))
_TORCH = str(Path(torch.__file__).resolve().parent)
_NOT_USER = tuple({os.path.realpath(p) for p in (
    sysconfig.get_paths().get("stdlib", ""), sysconfig.get_paths().get("platstdlib", ""),
    sysconfig.get_paths().get("purelib", ""), sysconfig.get_paths().get("platlib", ""),
    _HERE, _TORCH, str(Path(detachlint.__file__).resolve().parent),
) if p})


@dataclass
class FileState:
    path: str
    findings: list
    lines: Set[int] = field(default_factory=set)  # rows with a finding


class _Saved:
    """What autograd saved: a detached alias (same storage and version counter, no grad_fn), its
    version then, and the writes seen since. The graph node holds this record (it is what the pack
    hook returned) and nothing here leads back to the graph: the name of the node that saved it, not
    the node (a node that saves its own output, as ReLU does, would close a cycle through C++ that
    Python's collector cannot see, and every graph dropped without backward would stay alive)."""

    __slots__ = ("alias", "version", "node_name", "output_nr", "ptr", "_span", "writes", "__weakref__")

    def __init__(self, t: torch.Tensor) -> None:
        self.alias = t.detach()
        self.version = t._version
        node = t.grad_fn
        self.node_name = type(node).__name__ if node is not None else None
        self.output_nr = t.output_nr if node is not None else 0
        try:  # events.storage_ptr(t), inline: a pack is on the hot path of every forward
            self.ptr = t.untyped_storage().data_ptr() if t.layout is _STRIDED and not t.is_meta else None
        except (RuntimeError, NotImplementedError):
            self.ptr = None
        self._span: Any = False  # computed when a write to its storage is first checked against it
        self.writes: List[Tuple[Optional[Site], str, bool]] = []  # (site, op, target requires grad)

    @property
    def span(self) -> Optional[Tuple[int, int, int, Any]]:
        # Most saved tensors die with their graph before any write is observed (a pack is on the
        # hot path of every forward): the alias has the sizes, strides and offset of `t`.
        if self._span is False:
            self._span = _span(self.alias)
        return self._span


class _SavedIndex:
    """Pending saved tensors by storage pointer, held weakly: a record lives as long as the graph
    that holds it (autograd keeps what the pack hook returned), and a dead one is never returned.
    Dead entries are swept once as many records were added as were alive at the last sweep, so the
    index stays within twice the live records at a constant cost per record. A live record keeps
    its storage alive, so a pointer is not reused while a live record is filed under it."""

    def __init__(self) -> None:
        self._buckets: Dict[int, List["weakref.ref[_Saved]"]] = {}
        self._until_sweep = 1024

    def add(self, saved: "_Saved") -> None:
        bucket = self._buckets.get(saved.ptr)
        if bucket is None:
            self._buckets[saved.ptr] = [weakref.ref(saved)]
        else:
            bucket.append(weakref.ref(saved))
        self._until_sweep -= 1
        if self._until_sweep <= 0:
            self._sweep()

    def _sweep(self) -> None:
        live = {ptr: kept for ptr, kept in ((ptr, [r for r in refs if r() is not None])
                                            for ptr, refs in list(self._buckets.items())) if kept}
        self._buckets = live
        self._until_sweep = max(1024, sum(map(len, live.values())))

    def get(self, ptr: int) -> List["_Saved"]:
        bucket = self._buckets.get(ptr)
        if not bucket:
            return []
        return [s for s in (r() for r in tuple(bucket)) if s is not None]


def version_error(saved: _Saved) -> str:
    """The message autograd's SavedVariable::unpack gives (torch 2.13), built from the same facts."""
    t = saved.alias
    shape = ", ".join(str(n) for n in t.shape)
    text = (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{t.type()} [{shape}]]")
    if saved.node_name is not None:
        name = saved.node_name
        name = name[: name.rfind("Backward")] if "Backward" in name else name
        text += f", which is output {saved.output_nr} of {name},"
    text += f" is at version {t._version}; expected version {saved.version} instead."
    if torch.is_anomaly_enabled():
        return text + (" Hint: the backtrace further above shows the operation that failed to compute its "
                       "gradient. The variable in question was changed in there or anywhere later. Good luck!")
    return text + (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                   "with torch.autograd.set_detect_anomaly(True, check_nan=False).")


_function_modes, _dispatch_modes = torch._C._is_torch_function_mode_enabled, torch._C._len_torch_dispatch_stack

_WRITES: Dict[Any, Tuple[Tuple[int, str], ...]] = {}  # op -> (position, name) of the arguments it writes


def _written(func, args, kwargs) -> List[torch.Tensor]:
    """The tensors an aten op writes, from its schema (the same test as torch-semantics.md 6.3); the
    schema is read once per op."""
    try:
        where = _WRITES[func]
    except KeyError:
        schema = getattr(func, "_schema", None)
        where = () if schema is None or not schema.is_mutable else tuple(
            (i, arg.name) for i, arg in enumerate(schema.arguments)
            if arg.alias_info is not None and arg.alias_info.is_write)
        _WRITES[func] = where
    if not where:
        return []
    out: List[torch.Tensor] = []
    for i, name in where:
        value = args[i] if i < len(args) else kwargs.get(name)
        if isinstance(value, torch.Tensor):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(v for v in value if isinstance(v, torch.Tensor))
    return out


_ALIASING: Dict[Any, bool] = {}  # op -> its output aliases its first argument (views, detach, alias)


def _aliasing(func) -> bool:
    try:
        return _ALIASING[func]
    except KeyError:
        schema = getattr(func, "_schema", None)
        returns = schema.returns if schema is not None else ()
        found = bool(returns) and returns[0].alias_info is not None and not returns[0].alias_info.is_write \
            and bool(schema.arguments) and schema.arguments[0].alias_info is not None
        _ALIASING[func] = found
        return found


class _Mode(TorchDispatchMode):
    @classmethod
    def ignore_compile_internals(cls) -> bool:
        # False (torch's default) makes torch.compile skip every frame while the mode is on: the
        # user's compiled regions would run eagerly, unlike the program without us. True: they
        # compile as usual (the mode is off while Dynamo traces) and their compiled code runs with
        # the mode on.
        return True

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # True (torch's default) wraps __torch_dispatch__ in torch._disable_dynamo, whose first call
        # imports torch._dynamo: seconds and megabytes a program that never compiles does not pay.
        # The same wrapper is put on when the program imports Dynamo (Observer._dynamo_imported).
        return False

    @classmethod
    def skip_dynamo(cls) -> None:
        if "__torch_dispatch__" in cls.__dict__ and not hasattr(cls, "_raw_dispatch"):
            cls._raw_dispatch = cls.__dict__["__torch_dispatch__"]
            cls.__torch_dispatch__ = torch._disable_dynamo(cls._raw_dispatch, recursive=True)

    def __init__(self, observer: "Observer") -> None:
        super().__init__()
        self.observer = observer

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        obs = self.observer
        obs._dispatching += 1  # the mode stack must not be changed under our own handler
        try:
            return self._observe(obs, func, args, kwargs or {})
        finally:
            obs._dispatching -= 1

    @staticmethod
    def _observe(obs: "Observer", func, args, kwargs):
        written = _written(func, args, kwargs)
        aliasing = _aliasing(func)
        if obs.watch.tags and not aliasing:  # making a view of an alias is not reading it
            obs.check_watched(func, args, written)
        if obs.dirty and not aliasing:
            obs.check_reads(args)
        if not written:
            out = func(*args, **kwargs)
        else:
            obs.on_write(func, written)
            try:
                out = func(*args, **kwargs)
            except Exception as exc:  # nothing was written (an `expand`ed target): not a write
                obs.write_raised(func, written, exc)
                raise
        if aliasing and (obs.watch.tags or obs.alias_sites):
            obs.on_alias_op(args, out)  # `.data` reaches the dispatcher as aten.detach
        return out


class Observer(SnapshotWatch, CompiledRegions):
    """``watch_all``: the dispatch mode is on for the whole run, so that hazards at lines with no
    static finding are seen too (``origin: runtime``). Otherwise (the default) it is on only while a
    flagged line runs and while an alias or snapshot made there is alive: a program whose
    findings are not in its hot loop runs at close to its own speed."""

    def __init__(self, codes: Optional[Iterable[str]] = None, watch_all: bool = False,
                 instrument: bool = False) -> None:
        self.codes = list(codes) if codes is not None else None
        self.watch_all = watch_all
        self._mode_on = False
        self._dispatching = 0
        self.files: Dict[str, Optional[FileState]] = {}  # realpath -> state (None: not a user file)
        self.counts: Dict[Site, int] = {}
        self.write_counts: Dict[Site, int] = {}
        self.blind_writes: Dict[Site, int] = {}  # writes to tensors without storage, by line
        self.raised: Dict[Site, List[Tuple[str, str]]] = {}  # writes that raised, by line: (op, error)
        self.raised_through: Dict[int, List[Tuple[str, str]]] = {}  # ... through an alias, by id(finding)
        self.numpy_aliases: Dict[int, int] = {}  # id(finding) -> `.numpy()` arrays made at its alias line
        self._last_write: Optional[Tuple[Optional[Site], int]] = None
        self.events: List[Event] = []
        self.programs: List[str] = []  # the script that ran (its __main__ is gone from sys.modules by the end)
        self._event_keys: Set[Any] = set()
        self.saved = _SavedIndex()  # storage pointer -> pending saved tensors
        self.dirty: Dict[int, List[Tuple[Any, Site, Any]]] = {}  # storage -> (finding, write site, span)
        self.write_lines: Dict[Site, List[Any]] = {}  # write line -> findings there whose write may be meant
        self.alias_sites: Dict[Site, List[Any]] = {}  # line where a finding's alias is made -> findings
        self.watch = Watch(_span)  # the aliases made there, for the rest of their lives
        # instrument: the program's files are compiled through self.lines (``detachlint run``; the
        # pytest plugin, whose test files pytest compiles itself, counts with a trace function)
        self.lines = LineCounter(self._rows, instrument=instrument)
        self.snapshots: Dict[int, _Snapshot] = {}  # id(state dict) -> snapshot
        self.snap_ptrs: Dict[int, List[_Snapshot]] = {}  # storage pointer -> snapshots holding it
        self._snap_refs: Dict[int, Any] = {}
        # A plain dict (what Optimizer.state_dict returns) cannot be weakly referenced: the newest
        # ones are held strongly, so that their id cannot be reused while they are tracked.
        self._snap_held: "OrderedDict[int, Any]" = OrderedDict()
        self._flagged_snaps: Set[int] = set()  # snapshots taken at a flagged line, still alive
        self.snap_unchanged: Dict[Site, List[str]] = {}  # snapshot site -> harmless restores/saves
        self.snap_seen: Dict[Site, int] = {}  # optimizer snapshot site -> snapshots taken
        self.snap_changed: Dict[Site, int] = {}  # ... -> of them, changed by a later write
        self._legacy: Dict[int, Tuple[Any, Site]] = {}  # id(torch.Tensor(t) result) -> (weakref, site)
        self.ctor_calls: Dict[Site, List[str]] = {}  # site -> argument kinds seen by constructors
        self._mode = _Mode(self)
        self.lines.on_flagged = self._flagged_line
        self.lines.on_idle = self._idle
        self._compiled_codes: Set[int] = set()  # ids of Dynamo's output code objects (filled by torch)
        self.compiled: Dict[Tuple[str, str, int], int] = {}  # (path, function, first line) -> last line
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks_on = False
        self.hooks_late: Optional[Tuple[str, int]] = None  # (file, graphs alive) when they began late
        self._patches: List[Tuple[Any, str, Any]] = []
        self._busy = False
        self._stopped = False
        self._thread = threading.get_ident()
        self._on_dynamo: Optional[_OnImport] = None
        self._compile_callbacks: Any = None

    # -- files and lines -------------------------------------------------------------------------

    def _state(self, filename: str) -> Optional[FileState]:
        try:
            return self.files[filename]
        except KeyError:
            pass
        real = os.path.realpath(filename) if not filename.startswith("<") else None
        state = None
        if real is not None and real.endswith(".py") and not real.startswith(_NOT_USER) and os.path.isfile(real):
            self._busy = True  # the linter's own work is not the program's
            try:
                findings = static_findings(Path(real), self.codes)
            except Exception as exc:  # noqa: BLE001 - a linter bug must not change the user's run
                print(f"detachlint: warning: could not lint {real}: {type(exc).__name__}: {exc}", file=sys.stderr)
                findings = []
            finally:
                self._busy = False
            state = FileState(real, findings)
            for f in findings:
                state.lines.update(range(f.location.row, max(f.end_location.row, f.location.row) + 1))
                if f.code in RULES and RULES[f.code].intended_write is not None:
                    self.write_lines.setdefault((real, f.location.row), []).append(f)
                if follows_aliases(f):
                    for row in alias_rows(f):
                        self.alias_sites.setdefault((real, row), []).append(f)
            if not self._hooks_on and any(f.code in RULES and RULES[f.code].saved_hooks for f in findings):
                self._start_hooks(real)
        self.files[filename] = state
        return state

    def _rows(self, filename: str):
        """For the line counter: the file's (path, flagged rows, alias rows), None if not the user's."""
        state = self._state(filename)
        if state is None:
            return None
        alias = {row for (path, row) in self.alias_sites if path == state.path}
        related = {r.location.row for f in state.findings for r in f.related}
        rows = state.lines | alias | related
        try:  # a statement over several lines is counted once per run, on every row of it
            first = statements(Path(state.path).read_text(encoding="utf-8"), rows)
        except (OSError, UnicodeDecodeError):
            first = {}
        return state.path, rows | set(first), alias, first

    def _start_hooks(self, path: Optional[str]) -> None:
        """Saved-tensor hooks, from the first file whose findings need them (they change the ops a
        program's own TorchDispatchMode sees, and cost a call per saved tensor). A graph recorded
        before is only reachable through a tensor with a ``grad_fn``: if one is alive now, what its
        graph saved is not watched, and the verdicts that depend on it say so."""
        if path is not None:
            import gc

            tensor = torch.Tensor  # type(), not isinstance(): no module's deprecated __getattr__ is woken
            alive = sum(1 for o in gc.get_objects() if issubclass(type(o), tensor) and o.grad_fn is not None)
            if alive:
                self.hooks_late = (path, alive)
        self._hooks.__enter__()
        self._hooks_on = True

    # -- the dispatch mode, on only while needed --------------------------------------------------

    def _needed(self) -> bool:
        return self.watch_all or bool(self.watch.open_groups() or self._legacy or self._flagged_snaps)

    def _push(self) -> None:
        # Only onto an empty stack: a mode pushed above the user's would be popped by their exit.
        if not self._mode_on and not self._dispatching and torch._C._len_torch_dispatch_stack() == 0:
            self._mode.__enter__()
            self._mode_on = True

    def _pop(self, force: bool = False) -> None:
        if self._mode_on and not self._dispatching and (force or not self._needed()) \
                and _get_current_dispatch_mode() is self._mode:
            self._mode.__exit__(None, None, None)
            self._mode_on = False

    def _flagged_line(self) -> None:
        if not self._mode_on and not self._busy:
            self._push()

    def _idle(self) -> None:
        if self._mode_on and not self.watch_all:
            self._pop()

    def _is_user(self, filename: str) -> bool:
        state = self.files.get(filename, 0)
        if state == 0:
            state = self._state(filename)
        return state is not None

    def user_site(self, direct: bool = False) -> Optional[Site]:
        """The innermost frame of a user file: the line that issued what is being observed.
        ``direct``: only if the caller of the wrapped function itself is user code (torch calling
        ``torch.tensor`` or ``state_dict`` internally is not the user's call)."""
        found = self._user_frame(direct)
        return (found[1].path, found[0].f_lineno) if found is not None else None

    def _user_frame(self, direct: bool = False):
        """``(frame, FileState)`` of :meth:`user_site`, or None."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename in _OWN_FILES:  # our wrappers
            frame = frame.f_back
        if direct:
            state = self._state(frame.f_code.co_filename) if frame is not None else None
            return (frame, state) if state is not None else None
        files = self.files
        while frame is not None:
            name = frame.f_code.co_filename
            state = files.get(name, 0)
            if state == 0:
                state = self._state(name)
            if state is not None:
                if id(frame.f_code) in self._compiled_codes:
                    self._in_compiled(state.path, frame.f_code)
                    return None  # a compiled region's frame stands at its first line, whatever runs
                return frame, state
            frame = frame.f_back
        return None

    @staticmethod
    def _running(maker: Optional[Tuple[int, Any]]) -> bool:
        """Whether the call that made an alias is still on the stack."""
        if maker is None:
            return True  # not known: assume the plain case
        frame = sys._getframe(1)
        while frame is not None:
            if id(frame) == maker[0] and frame.f_code is maker[1]:
                return True
            frame = frame.f_back
        return False

    def _add(self, event: Event) -> None:
        key = (event.kind, event.rules, tuple(event.sites), id(event.finding))
        if key not in self._event_keys:  # x*x saves x twice: one write, one event
            self._event_keys.add(key)
            self.events.append(event)

    # -- autograd's saved tensors -----------------------------------------------------------------

    def _pack(self, t: torch.Tensor, _unseen_now: bool = False):
        # On the hot path of every forward: as few Python calls as can be (before 3.12 each costs
        # more under the line counter's trace function), and _unseen's work only when a mode is on.
        if not _unseen_now and (_function_modes() or _dispatch_modes()):
            with torch._C.DisableTorchFunction(), torch._C._DisableTorchDispatch():
                return self._pack(t, True)
        saved = _Saved(t)
        if saved.ptr:
            self.saved.add(saved)
        return saved

    @_unseen
    def _unpack(self, saved: _Saved) -> torch.Tensor:
        alias = saved.alias
        if alias._version != saved.version:
            message = version_error(saved)
            sites = [w[0] for w in saved.writes if w[0] is not None]
            if sites:
                rules = ("TAL202", "TAL201", "TAL301", "TAL001", "TAL003") if not saved.writes[-1][2] \
                    else ("TAL202", "TAL201", "TAL301")
                self._add(Event(rules, "version-error", sites + _opt(self.user_site()),
                                         f"`{saved.writes[-1][1]}` changed a tensor saved for backward "
                                         f"({_node(saved)}); backward raised: {message[:120]}…"))
            raise RuntimeError(message)
        if saved.writes:
            backward = self.user_site()
            sites = [w[0] for w in saved.writes if w[0] is not None]
            where = f"line {backward[1]}" if backward else "a backward"
            self._add(Event(("TAL001", "TAL003", "TAL201", "TAL301"), "silent-wrong-gradient", sites,
                                     f"`{saved.writes[0][1]}` wrote memory saved for backward ({_node(saved)}) "
                                     f"without bumping its version; the backward at {where} used the changed "
                                     f"values (a silently wrong gradient)"))
            saved.writes.clear()  # one report per write, even if the graph is retained and replayed
        return alias

    # -- writes and reads -----------------------------------------------------------------------

    @_unseen
    def on_write(self, func, written: Sequence[torch.Tensor]) -> None:
        if self._busy:
            return
        site = self.user_site()
        if site is not None:
            self.write_counts[site] = self.write_counts.get(site, 0) + 1
        self._last_write = (site, len(self.events))  # undone by write_raised if the op raises
        self.watch.undo.clear()
        op = func.overloadpacket.__name__
        for t in written:
            span = _span(t)
            if self.watch.tags:
                self.watch.written(t, span, site, op)
            if span is None:  # no storage (meta, sparse): what it overlaps cannot be known
                if site is not None:
                    self.blind_writes[site] = self.blind_writes.get(site, 0) + 1
                continue
            pending = self.saved.get(span[0])
            if pending:
                for saved in list(pending):
                    if overlap(saved.span, span):
                        saved.writes.append((site, op, t.requires_grad))
            for snap in self.snap_ptrs.get(span[0], ()):
                if any(overlap(s, span) for s in snap.spans):
                    snap.changed_by.append(site)
            if site is not None and site in self.write_lines:
                for finding in self.write_lines[site]:
                    self.dirty.setdefault(span[0], []).append((finding, site, span))
            legacy = self._legacy.get(id(t))
            if legacy is not None and legacy[0]() is t:
                self._add(Event(("TAL103",), "write-through-alias", [legacy[1]] + _opt(site),
                                f"`{op}` at line {site[1] if site else '?'} wrote through the tensor "
                                f"`torch.Tensor(t)` returned at line {legacy[1][1]}: it shares `t`'s storage, so "
                                f"`t` changed too"))
            for group, side in self.watch.members(t) if self.watch.tags else ():
                linked = group.finding
                if linked.code != "TAL002" or side != "alias":
                    continue
                if not self._running(group.maker):  # kept past its call, written later: a shadow?
                    group.stats.kept_writes += 1
                if pending:
                    if any(overlap(saved.span, span) for saved in pending):
                        self._add(Event(("TAL002",), "untracked-write", _opt(site),
                                        f"`{op}` through the `.data` alias taken at line "
                                        f"{group.site[1]} wrote memory saved for backward "
                                        f"({_node(next(s for s in pending if overlap(s.span, span)))})",
                                        finding=linked))

    @_unseen
    def write_raised(self, func, written: Sequence[torch.Tensor], exc: Exception) -> None:
        """The op :meth:`on_write` was told of raised before writing: undo what it noted (a stale
        alias, a write to saved memory or to a snapshot, its events) and keep the error for the
        verdict (a refused write is not a harmless one)."""
        if self._busy or self._last_write is None:
            return
        site, events = self._last_write
        self._last_write = None
        op = func.overloadpacket.__name__
        for event in self.events[events:]:
            self._event_keys.discard((event.kind, event.rules, tuple(event.sites), id(event.finding)))
        del self.events[events:]
        self.watch.restore()
        for t in written:
            for group, _ in self.watch.members(t) if self.watch.tags else ():  # through an alias a finding made
                self.raised_through.setdefault(id(group.finding), []).append(
                    (op, f"{type(exc).__name__}: {exc}"))
            span = _span(t)
            if span is None:
                continue
            for saved in self.saved.get(span[0]):
                if saved.writes and saved.writes[-1][:2] == (site, op):
                    saved.writes.pop()
            for snap in self.snap_ptrs.get(span[0], ()):
                if snap.changed_by and snap.changed_by[-1] == site:
                    snap.changed_by.pop()
            entries = self.dirty.get(span[0], [])
            for _ in self.write_lines.get(site, ()) if site is not None else ():
                if entries and entries[-1][1:] == (site, span):
                    entries.pop()
        if site is not None:
            self.raised.setdefault(site, []).append((op, f"{type(exc).__name__}: {exc}"))

    @_unseen
    def check_watched(self, func, args, written) -> None:
        """A read of an alias or source whose other side changed since: the hazard happened."""
        if self._busy:
            return
        skip = {id(t) for t in written} if func.overloadpacket.__name__ in OVERWRITES else ()
        for a in args:
            for t in (a if isinstance(a, (list, tuple)) else (a,)):
                if isinstance(t, torch.Tensor) and id(t) not in skip and id(t) in self.watch.tags:
                    self._read(t, func.overloadpacket.__name__)

    def _numpy_alias(self) -> None:
        """``.numpy()`` ran: at a line where a finding's alias is made, that alias is an ndarray,
        whose reads never reach torch."""
        if self._busy or (self.lines.active and self.lines.hot is None):
            return
        site = self.lines.hot if self.lines.active else self.user_site(direct=True)
        for f in self.alias_sites.get(site, ()) if site is not None else ():
            self.numpy_aliases[id(f)] = self.numpy_aliases.get(id(f), 0) + 1

    @_unseen
    def _read_outside(self, t, how: str) -> None:
        if not self._busy:
            self._read(t, how)

    def _read(self, t, how: str) -> None:
        hits = self.watch.read(t)
        if not hits:
            return
        site = self.user_site()
        for group, side, (wsite, op) in hits:
            f = group.finding
            seen = ("the snapshot" if RULES[f.code].snapshots else "the alias") + f" made at line {group.site[1]}"
            if group.watched == {"source"} or side == "source":
                seen = f"the tensor the alias made at line {group.site[1]} shares storage with"
            where = f"line {site[1]}" + ("" if site is None or site[0] == group.site[0] else f" of {site[0]}") \
                if site is not None else "code outside the user's files"
            self._add(Event((f.code,), "read-after-write", [group.site] + _opt(wsite) + _opt(site),
                            f"`{op}` at line {wsite[1] if wsite else '?'} changed {seen}, and `{how}` at "
                            f"{where} read it afterwards", finding=f))

    @_unseen
    def check_reads(self, args) -> None:
        if self._busy:
            return
        for a in args:
            for t in (a if isinstance(a, (list, tuple)) else (a,)):
                if not isinstance(t, torch.Tensor):
                    continue
                span = _span(t)
                entries = self.dirty.get(span[0]) if span is not None else None
                if not entries:
                    continue
                site = self.user_site()
                if site is None:
                    continue
                for entry in list(entries):
                    finding, wsite, wspan = entry
                    reads = {r.location.row for r in finding.related} - {finding.location.row}
                    if site[0] == wsite[0] and site[1] in reads and overlap(wspan, span):
                        self._add(Event((finding.code,), "read-after-write", [wsite, site],
                                                 f"the write at line {wsite[1]} changed memory that line {site[1]} "
                                                 f"read afterwards", finding=finding))
                        entries.remove(entry)
                if not entries:
                    self.dirty.pop(span[0], None)

    @_unseen
    def on_alias_op(self, args, out) -> None:
        """A view / detach / alias was made: it joins its input's groups; made at a flagged line, it
        starts a group of its own."""
        if self._busy:
            return
        source = args[0] if args and isinstance(args[0], torch.Tensor) else None
        outs = [out] if isinstance(out, torch.Tensor) else [o for o in out if isinstance(o, torch.Tensor)] \
            if isinstance(out, (list, tuple)) else []
        joined = self.watch.members(source) if source is not None and self.watch.tags else []
        for group, side in joined:
            for o in outs:
                self.watch.join(o, group, side)
        if not self.alias_sites or (self.lines.active and self.lines.hot is None):
            return
        found = self._user_frame()
        site = (found[1].path, found[0].f_lineno) if found is not None else None
        findings = self.alias_sites.get(site) if site is not None else None
        if not findings:
            return
        self.counts[site] = self.counts.get(site, 0) + 1
        chained = {id(g.finding) for g, side in joined if side == "alias" and g.site == site}
        maker = (id(found[0]), found[0].f_code)  # the call that made the alias
        for f in whose_alias(found[0], findings) if len(findings) > 1 else findings:
            if id(f) not in chained:  # `x[0].view(-1)`: one alias, made in two ops
                self.watch.make(f, site, source, outs, findings).maker = maker

    # -- start / stop ---------------------------------------------------------------------------

    def start(self) -> None:
        # Dynamo registers polyfills against torch.Tensor.__new__ when it is first imported (torch
        # imports it lazily); it must see the original, not our wrapper. Importing it costs about
        # 2 s and 70 MB, so it is not imported for a program that never does: the import, when the
        # program makes it, runs with our patches off (and the line counter paused).
        if "torch._dynamo" in sys.modules:
            self._dynamo_imported()
        else:
            self._on_dynamo = _OnImport("torch._dynamo", self._dynamo_import)
            sys.meta_path.insert(0, self._on_dynamo)

        _prime_device()
        self._install_patches()
        if self.watch_all:
            self._start_hooks(None)
            self._push()
        # Flagged lines are counted wherever they run (lines.py: only code objects that hold one are
        # traced); a file is linted when its code first runs, and at the end every user module that
        # was imported (its findings that never ran: not-run).
        self.lines.start()

    def _remove_patches(self) -> None:
        for owner, name, original in reversed(self._patches):
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._patches.clear()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._on_dynamo in sys.meta_path:
            sys.meta_path.remove(self._on_dynamo)
        if self._compile_callbacks is not None:
            try:
                self._compile_callbacks.remove_start_callback(self._compile_start)
                self._compile_callbacks.remove_end_callback(self._compile_end)
            except ValueError:
                pass
        self.lines.stop()
        self.watch.end()  # what is still alive was watched until the run ended
        for key in list(self.snapshots):
            self._forget(key)
        if self._mode_on:
            self._pop(force=True)
        if self._hooks_on:
            self._hooks.__exit__(None, None, None)
        self._remove_patches()
        self._busy = True  # nothing after this point is the program's

    def results(self) -> List[Any]:
        from .verdicts import verdicts

        self._busy = True
        names = [getattr(m, "__file__", None) for m in list(sys.modules.values())] + list(self.programs)
        for name in names:
            if isinstance(name, str) and name not in self.files:
                self._state(name)  # imported user code: its findings are at least not-run
        self._compiled_regions()

        return verdicts(self)


def _prime_device() -> None:
    """``torch.set_default_device`` builds its set of factory functions (``torch.tensor`` among
    them) once, on first use; built while our wrapper replaces ``torch.tensor``, it would hold the
    wrapper, and ``torch.tensor`` calls would ignore the default device. Build it now."""
    try:
        from torch.utils._device import _device_constructors

        _device_constructors()
    except (ImportError, AttributeError):
        pass


def _node(saved: _Saved) -> str:
    shape = "x".join(str(n) for n in saved.alias.shape) or "scalar"
    if saved.node_name is None:
        return f"a {shape} leaf"
    return f"a {shape} tensor, output {saved.output_nr} of {saved.node_name}"
