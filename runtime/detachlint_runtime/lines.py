"""How many times each flagged line ran, in every frame: comprehensions, generators, lambdas,
decorators, module code (torch-free, so that it can be tested on any Python).

Only code objects that contain a flagged line are traced, and only their flagged lines are counted:
on Python 3.12+ with ``sys.monitoring`` (``PY_START`` is turned off for every other code object
the first time it runs, ``LINE`` for every other line), before it with a ``sys.settrace`` global
function that returns a local tracer only for such code objects (one Python call per function
call, none per line elsewhere). When another tool holds the tracer (a debugger, coverage.py) the
counter stays off and says so: runs are then counted only by the ops a line issues.

``hot`` is the flagged "alias" row (see ``alias_rows``) last entered in a traced frame, or None: a
cheap gate that tells the observer when to look up the exact frame of a view op.
"""

from __future__ import annotations

import sys
from typing import Callable, Dict, FrozenSet, Optional, Set, Tuple

Site = Tuple[str, int]


class LineCounter:
    def __init__(self, rows_of: Callable[[str], Optional[Tuple[str, Set[int], Set[int]]]]) -> None:
        # rows_of(co_filename) -> (path, flagged rows, alias rows), or None for a file that is not
        # the user's. Called once per file name.
        self._rows_of = rows_of
        self._files: Dict[str, Optional[Tuple[str, Set[int], Set[int]]]] = {}
        self._codes: Dict[object, Tuple[str, FrozenSet[int], FrozenSet[int]]] = {}
        self.counts: Dict[Site, int] = {}
        self.hot: Optional[Site] = None
        self.active = False
        self.why_off = ""
        self._tool: Optional[int] = None

    def _code_rows(self, code) -> Tuple[str, FrozenSet[int], FrozenSet[int]]:
        try:
            return self._codes[code]
        except KeyError:
            pass
        name = code.co_filename
        if name not in self._files:
            self._files[name] = self._rows_of(name)
        found = self._files[name]
        if found is None or not found[1]:
            entry: Tuple[str, FrozenSet[int], FrozenSet[int]] = ("", frozenset(), frozenset())
        else:
            path, rows, alias = found
            mine = {line for _, _, line in code.co_lines() if line is not None} & rows
            entry = (path, frozenset(mine), frozenset(mine & alias))
        self._codes[code] = entry
        return entry

    def _line(self, path: str, row: int, alias: FrozenSet[int]) -> None:
        site = (path, row)
        self.counts[site] = self.counts.get(site, 0) + 1
        self.hot = site if row in alias else None

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
                return disable
            self._line(path, row, alias)
            return None

        def on_leave(code, offset, value):
            self.hot = None

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
        for code in self._codes:
            try:
                mon.set_local_events(tool, code, 0)
            except (ValueError, TypeError):
                pass
        for event in (mon.events.PY_START, mon.events.LINE, mon.events.PY_RETURN, mon.events.PY_YIELD):
            mon.register_callback(tool, event, None)
        mon.free_tool_id(tool)
        self._tool = None

    # -- before 3.12: sys.settrace ----------------------------------------------------------------

    def _trace(self, frame, event, arg):
        entry = self._code_rows(frame.f_code)
        if not entry[1]:
            return None
        path, rows, alias = entry

        def local(frame, event, arg):
            if event == "line":
                row = frame.f_lineno
                if row in rows:
                    self._line(path, row, alias)
                else:
                    self.hot = None
            elif event == "return":
                self.hot = None
            return local

        return local

    # -- start / stop -----------------------------------------------------------------------------

    def start(self) -> None:
        if hasattr(sys, "monitoring"):
            self.active = self._start_monitoring()
            return
        if sys.gettrace() is not None:
            self.why_off = "another tracer (a debugger or coverage) holds sys.settrace"
            return
        sys.settrace(self._trace)
        self.active = True

    def stop(self) -> None:
        if not self.active:
            return
        self.active = False
        self.hot = None
        if self._tool is not None:
            self._stop_monitoring()
        elif sys.gettrace() == self._trace:
            sys.settrace(None)
