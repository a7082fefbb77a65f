"""How many times each flagged line ran, in every frame: comprehensions, generators, lambdas,
decorators, module code (torch-free, so that it can be tested on any Python).

Only code objects that contain a flagged line are traced: on Python 3.12+ with ``sys.monitoring``
(``PY_START`` is turned off for every other code object the first time it runs), before it with a
``sys.settrace`` global function that returns a local tracer only for such code objects (one Python
call per function call, none per line elsewhere). When another tool holds the tracer (a debugger,
coverage.py) the counter stays off and says so: runs are then counted only by the ops a line issues.
With ``instrument`` (``detachlint run`` before 3.12) there is no trace function at all: the files
with flagged rows are compiled with probes around those statements (probes.py), and the counter is
the probes' target.

``on_flagged`` is called at every run of a flagged line and ``on_idle`` where a traced frame moves
on from a flagged line to another (before 3.12: also at its first other line) or returns: the
observer turns its dispatch mode on and off there. ``hot`` is
the flagged "alias" row last entered (see ``alias_rows``), or None: a cheap gate that tells the
observer when to look up the exact frame of a view op.
"""

from __future__ import annotations

import sys
from threading import get_ident
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from .watch import Site


class LineCounter:
    def __init__(self, rows_of: Callable[[str], Optional[Tuple[str, Set[int], Set[int]]]],
                 instrument: bool = False) -> None:
        # rows_of(co_filename) -> (path, flagged rows, alias rows[, {row: first row of its multi-line
        # statement}]), or None for a file that is not the user's. Called once per file name.
        self._rows_of = rows_of
        self._files: Dict[str, Optional[Tuple[str, Set[int], Set[int]]]] = {}
        # id(code) -> (path, flagged rows in it, alias rows in it); keyed by id because a code
        # object's hash is computed from its bytecode on every lookup. The code objects are kept
        # (in _held), so an id is never reused while it is a key.
        self._codes: Dict[int, Tuple[str, FrozenSet[int], FrozenSet[int]]] = {}
        self._held: list = []
        # Runs of each flagged statement, under its first row (``statement`` maps any of its rows):
        # a statement over several lines gives several line events per run, counted once.
        self.counts: Dict[Site, int] = {}
        self._first: Dict[Site, int] = {}  # row of a multi-line statement -> its first row
        self._open: Dict[int, int] = {}  # id(frame) -> first row of the flagged statement it is in
        self.hot: Optional[Site] = None
        self.active = False
        self.why_off = ""
        # Called at a flagged line, and where none runs any more (another line of a traced frame, its
        # return): the observer turns its dispatch mode on and off there.
        self.on_flagged: Callable[[], None] = lambda: None
        self.on_idle: Callable[[], None] = lambda: None
        self._tool: Optional[int] = None
        self._trace = None
        self._paused = 0
        self.instrument = instrument and not hasattr(sys, "monitoring")
        self._probes: List[Tuple[Site, Optional[Site]]] = []  # probe index -> (statement, alias site)
        self._probe_index: Dict[Tuple[Site, Optional[Site]], int] = {}
        self._get_code: Any = None  # SourceLoader.get_code while patched
        enter, leave = self._enter, self._leave_probe

        def probe_enter(k: int) -> None:  # plain functions, not bound methods: Dynamo is told of them
            enter(k)

        def probe_leave() -> None:
            leave()

        # made here: the observer tells Dynamo of them when it is imported, maybe before start()
        self._probe_fns: Tuple[Any, ...] = (probe_enter, probe_leave)
        self._finder: Any = None
        self._thread = 0
        self._probed_files: Set[str] = set()  # files compiled with probes: never traced too

    def _found(self, name: str):
        if name not in self._files:
            self._files[name] = self._rows_of(name)
        found = self._files[name]
        if found is not None and len(found) > 3:  # the first row of each multi-line statement holding a flagged row
            self._first.update(((found[0], row), first) for row, first in found[3].items())
        return found

    def _code_rows(self, code) -> Tuple[str, FrozenSet[int], FrozenSet[int]]:
        try:
            return self._codes[id(code)]
        except KeyError:
            pass
        found = self._found(code.co_filename) if code.co_filename not in self._probed_files else None
        if found is None or not found[1]:
            entry: Tuple[str, FrozenSet[int], FrozenSet[int]] = ("", frozenset(), frozenset())
        else:
            path, rows, alias = found[:3]
            mine = {line for _, _, line in code.co_lines() if line is not None} & rows
            entry = (path, frozenset(mine), frozenset(mine & alias))
        self._codes[id(code)] = entry
        self._held.append(code)
        return entry

    def statement(self, site: Site) -> Site:
        """The site its runs are counted under: the first row of its statement."""
        return (site[0], self._first.get(site, site[1]))

    def _line(self, path: str, row: int, alias: FrozenSet[int]) -> None:
        site = (path, row)
        first = self._first.get(site, row)
        frame = sys._getframe(2)  # the traced frame (0: here, 1: the tracer's callback)
        if self._open.get(id(frame)) != first:  # a new run, not the next line of the same statement
            self._open[id(frame)] = first
            back = frame.f_back
            # a comprehension, generator expression or lambda running inside that statement's own
            # run is part of it
            if not (frame.f_code.co_name.startswith("<") and back is not None and self._open.get(id(back)) == first
                    and back.f_code.co_filename == frame.f_code.co_filename):
                key = (path, first)
                self.counts[key] = self.counts.get(key, 0) + 1
        self.hot = site if row in alias else None
        self.on_flagged()

    def _leave(self) -> None:
        self._open.pop(id(sys._getframe(2)), None)
        self.hot = None
        self.on_idle()

    # -- Python 3.12+: sys.monitoring --------------------------------------------------------------

    def _start_monitoring(self) -> bool:
        mon = sys.monitoring
        tool = next((t for t in (4, 3, 1, 0) if mon.get_tool(t) is None), None)
        if tool is None:
            self.why_off = "every sys.monitoring tool id is in use"
            return False
        mon.use_tool_id(tool, "detachlint")
        self._tool = tool
        events = mon.events
        disable = mon.DISABLE

        def on_start(code, offset):
            if self._code_rows(code)[1]:
                mon.set_local_events(tool, code, events.LINE | events.PY_RETURN | events.PY_YIELD)
            return disable

        def on_line(code, row):
            path, rows, alias = self._code_rows(code)
            if row not in rows:
                self._leave()  # LINE stays on here: this is where a flagged line is left
                return None
            self._line(path, row, alias)
            return None

        def on_leave(code, offset, value):
            self._leave()

        mon.register_callback(tool, events.PY_START, on_start)
        mon.register_callback(tool, events.LINE, on_line)
        mon.register_callback(tool, events.PY_RETURN, on_leave)
        mon.register_callback(tool, events.PY_YIELD, on_leave)
        mon.set_events(tool, events.PY_START)
        return True

    def _stop_monitoring(self) -> None:
        mon = sys.monitoring
        tool = self._tool
        if tool is None:
            return
        mon.set_events(tool, 0)
        for code in self._held:
            try:
                mon.set_local_events(tool, code, 0)
            except (ValueError, TypeError):
                pass
        for event in (mon.events.PY_START, mon.events.LINE, mon.events.PY_RETURN, mon.events.PY_YIELD):
            mon.register_callback(tool, event, None)
        mon.free_tool_id(tool)
        self._tool = None

    # -- before 3.12: sys.settrace ----------------------------------------------------------------

    def _tracer(self):
        codes, code_rows, line, leave = self._codes, self._code_rows, self._line, self._leave

        def trace(frame, event, arg):  # called at every Python call: kept to a dict lookup
            entry = codes.get(id(frame.f_code))
            if entry is None:
                entry = code_rows(frame.f_code)
            if not entry[1]:
                return None
            path, rows, alias = entry
            on_flagged = True  # as if a flagged line had run: the frame's first other line leaves

            def local(frame, event, arg):
                nonlocal on_flagged
                if event == "line":
                    row = frame.f_lineno
                    if row in rows:
                        on_flagged = True
                        line(path, row, alias)
                    elif on_flagged:  # only where a flagged line is left: the others cost one call
                        on_flagged = False
                        leave()
                elif event == "return":
                    leave()
                return local

            return local

        return trace

    # -- before 3.12 under `detachlint run`: probes compiled into the flagged files ----------------

    def compile(self, source: bytes, path: str):
        """The code of a file the program runs (its script, a module it imports): with probes where
        this counter instruments and the file has flagged rows, else as Python compiles it."""
        tree = self._probed(source, path) if self.instrument and self.active else None
        return compile(tree if tree is not None else source, path, "exec", dont_inherit=True)

    def _probed(self, source: bytes, path: str):
        from .probes import instrument

        found = self._found(path)
        if found is None or not found[1]:
            return None
        if b"compile" in source or b"_dynamo" in source:
            # Dynamo traces into a probe in a compiled function (a graph break): such a file is
            # counted by the trace function, at its cost (a heuristic: a file that compiles nothing
            # but names `compile` is traced too; a compiled module defined elsewhere is probed)
            self._trace_too()
            return None
        real = found[0]

        def add(first: int, hot: Optional[int]) -> int:
            key = ((real, first), (real, hot) if hot is not None else None)
            if key not in self._probe_index:
                self._probe_index[key] = len(self._probes)
                self._probes.append(key)
            return self._probe_index[key]

        tree = instrument(source, path, found[1], found[2], add, found[3] if len(found) > 3 else None)
        if tree is not None:
            self._probed_files.add(path)
        return tree

    def _enter(self, k: int) -> None:
        # the starting thread only, as with the trace function (sys.settrace is per thread)
        if not self.active or self._paused or get_ident() != self._thread:
            return
        site, self.hot = self._probes[k]
        self.counts[site] = self.counts.get(site, 0) + 1
        self.on_flagged()

    def _leave_probe(self) -> None:
        if self.active and not self._paused and get_ident() == self._thread:
            self.hot = None
            self.on_idle()

    def _start_probes(self) -> None:
        import builtins
        import importlib._bootstrap_external as external

        from .probes import ENTER, LEAVE

        self._thread = get_ident()
        setattr(builtins, ENTER, self._probe_fns[0])
        setattr(builtins, LEAVE, self._probe_fns[1])
        original = self._get_code = external.SourceLoader.get_code
        counter = self

        def get_code(loader, fullname):  # every import from source or .pyc: SourceFileLoader's
            try:
                path = loader.get_filename(fullname)
            except ImportError:
                path = None
            if counter.active and path and path.endswith(".py"):
                found = counter._found(path)
                if found is not None and found[1]:
                    return counter.compile(loader.get_data(path), path)  # no .pyc written: a probed code
            return original(loader, fullname)

        external.SourceLoader.get_code = get_code
        if "_pytest.assertion.rewrite" in sys.modules:
            self._trace_too()
        else:
            self._finder = _OnPytest(self._trace_too)
            sys.meta_path.insert(0, self._finder)

    def _trace_too(self) -> None:
        """pytest compiles test files itself (its assertion rewriting): those are counted by the
        trace function, at its cost; files compiled here keep their probes and are not traced."""
        if self.active and sys.gettrace() is None:
            self._trace = self._tracer()
            if not self._paused:
                sys.settrace(self._trace)

    def _stop_probes(self) -> None:
        import importlib._bootstrap_external as external

        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)

        if self._get_code is not None:
            external.SourceLoader.get_code = self._get_code
            self._get_code = None
        # The probes stay in builtins, inert (``active`` is False): probed code may still run (atexit).

    def probes(self) -> Tuple[Any, Any]:
        """The two probe functions (for Dynamo: calls it may move after its graph)."""
        return self._probe_fns

    # -- start / stop -----------------------------------------------------------------------------

    def start(self) -> None:
        if self.instrument:
            self._start_probes()
            self.active = True
            return
        if hasattr(sys, "monitoring"):
            self.active = self._start_monitoring()
            return
        if sys.gettrace() is not None:
            self.why_off = "another tracer (a debugger or coverage) holds sys.settrace"
            return
        self._trace = self._tracer()
        sys.settrace(self._trace)
        self.active = True

    def pause(self) -> None:
        """Off while no user code runs but much Python does (Dynamo and Inductor compiling, an
        import of torch._dynamo): before 3.12 any global trace function slows every Python call
        and line (3.11 also gives up its specialised instructions). Nested; :meth:`resume` ends it."""
        self._paused += 1
        if self._paused == 1 and self._trace is not None and sys.gettrace() is self._trace:
            sys.settrace(None)

    def resume(self) -> None:
        if self._paused == 0:
            return
        self._paused -= 1
        if self._paused == 0 and self.active and self._trace is not None and sys.gettrace() is None:
            sys.settrace(self._trace)

    def stop(self) -> None:
        if not self.active:
            return
        self.active = False
        self.hot = None
        if self.instrument:
            self._stop_probes()
        if self._tool is not None:
            self._stop_monitoring()
        elif sys.gettrace() is self._trace:
            sys.settrace(None)


class _OnPytest:
    """Calls ``then`` when pytest's assertion rewriting is imported; finds nothing itself."""

    def __init__(self, then: Callable[[], None]) -> None:
        self.then = then

    def find_spec(self, fullname, path, target=None):
        if fullname == "_pytest.assertion.rewrite":
            sys.meta_path.remove(self)
            self.then()
        return None


def statements(source: str, rows: Set[int]) -> Dict[int, int]:
    """Every row of each statement spanning several lines that holds one of ``rows``, mapped to
    the statement's first row (a compound statement: its header, up to its body)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out: Dict[int, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            starts = [node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]
            first, last = min(starts), body[0].lineno - 1
        else:
            first, last = node.lineno, node.end_lineno or node.lineno
        span = range(first, last + 1)
        if last > first and any(r in rows for r in span):
            out.update((r, first) for r in span)
    return out
