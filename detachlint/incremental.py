"""Re-lint an edited buffer by its top-level functions: what an edit did not touch is not linted again.

A module is split with Python's parser into *units*, the bodies of its top-level functions (from
the first body line to the last), and the *context*, every other line: imports, module-level
code, classes whole, each function's decorators and signature, and the bodies that hold
something the analyses read module-wide (``frontend.units.function_units``). A unit's findings are those
located in its body; the context's are the rest. The analyses that cross statements see a
function's body only through the project index (built from files on disk, with its own key), so
a unit's findings depend on its body and the context, and the context's on the context alone:

- the unit's findings come from linting the module with every *other* body blanked (its first
  line becomes ``pass``, the others empty lines), which keeps every row and column, so positions,
  fixes and the line numbers inside messages are exactly the whole module's;
- they are kept under a key of (file name, selected codes, the project index's digest, the
  context's text, the body's position and text). An edit inside one function leaves every other
  key as it was, and only that function is linted again, in a module whose other bodies are blank.

When one body is linted, the simple statements of the module (assignments, expressions) whose
names that function cannot read are blanked too (``alone``): in torch's largest file the
``op_db`` list, 11,000 lines. And the buffer's parse by Python starts from the last one: when an
edit stays inside one body, only that function is parsed again (``_reparsed``).

Anything else (an edit to the context, several bodies changed, a first lint) lints the whole
module once and files its findings under every key. A finding whose related lines or fix reach
into another unit's body could not come from a blanked module: then the module is never split.
``tests/test_incremental.py`` proves the split equal to whole-module linting on the fixtures and
on torch's sources; ``python bench/run.py --units-equality`` does it on every torch file.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .frontend.firstpass import first_pass
from .frontend.units import Statement, Unit, blanked, function_units, source_lines, top_statements
from .engine import lint_source
from .findings import PARSE_ERROR_CODE, Finding
from .noqa import skips_file

def units(source: str) -> Optional[Tuple[List[str], List[Unit]]]:
    """The source's physical lines (with their line breaks) and its units, the bodies of its
    top-level functions that read nothing module-wide (``frontend.units.function_units``); None
    when Python cannot parse it (the whole module is linted, and reports the error)."""
    parsed = _parsed(source)
    return parsed[:2] if parsed is not None else None


def _parsed(source: str) -> Optional[Tuple[List[str], List[Unit], List[Statement]]]:
    """``units``, and the module's top-level statements (``frontend.units.top_statements``)."""
    tree = first_pass(source).tree
    if tree is None:  # SyntaxError, ValueError (NUL), RecursionError, MemoryError
        return None
    lines = source_lines(source)
    return lines, function_units(tree, lines, methods=False), top_statements(tree, lines)


def _shifted(unit: Unit, delta: int) -> Unit:
    return replace(unit, first=unit.first + delta, last=unit.last + delta)


def _moved(statement: Statement, delta: int) -> Statement:
    return replace(statement, unit=_shifted(statement.unit, delta))


def _reparsed(before: Tuple[List[str], List[Unit], List[Statement]], source: str
              ) -> Optional[Tuple[List[str], List[Unit], List[Statement]]]:
    """``_parsed(source)`` from the parse of an earlier text, when the two differ only inside
    one unit's body and the edited function, parsed alone, is still a unit there: an editor's
    keystroke then costs Python's parse of one function, not of the module."""
    old_lines, found, statements = before
    lines = source_lines(source)
    top = 0
    limit = min(len(lines), len(old_lines))
    while top < limit and lines[top] == old_lines[top]:
        top += 1
    if top == len(lines) == len(old_lines):
        return before
    bottom = 0
    while bottom < limit - top and lines[-1 - bottom] == old_lines[-1 - bottom]:
        bottom += 1
    edited = next((u for u in found if u.first - 1 <= top and len(old_lines) - bottom <= u.last), None)
    if edited is None:
        return None
    where = next(i for i, st in enumerate(statements) if st.unit.first <= edited.first <= st.unit.last)
    delta = len(lines) - len(old_lines)
    first = statements[where].unit.first
    function_lines = lines[first - 1:edited.last + delta]
    tree = first_pass("".join(function_lines)).tree
    if tree is None:
        return None
    units_now = function_units(tree, function_lines, methods=False)
    if len(tree.body) != 1 or len(units_now) != 1 or units_now[0].last != len(function_lines):
        return None
    (statement,) = top_statements(tree, function_lines)
    return (lines,
            [u for u in found if u.last < edited.first] + [_shifted(units_now[0], first - 1)]
            + [_shifted(u, delta) for u in found if u.first > edited.last],
            statements[:where] + [_moved(statement, first - 1)] + [_moved(st, delta) for st in statements[where + 1:]])


def alone(lines: Sequence[str], found: Sequence[Unit], statements: Sequence[Statement], unit: Optional[Unit]) -> str:
    """The module as the re-lint of ``unit``'s body sees it: every other body blank and, what
    LibCST then parses most of in a module like torch's (its ``op_db``), every simple statement
    whose names the body cannot read. A name may be read when the body's function spells it, or
    a statement that binds a name so read spells it (a blank body spells nothing), or a statement
    that reaches past its names does. A body's analyses learn from such a statement only the names
    it binds, so its findings are the whole module's. ``unit`` None: the context, every body blank."""
    others = [u for u in found if u != unit]
    if unit is None:
        return blanked(lines, others)
    blank_rows = {u.first for u in others}
    needed: Set[str] = set()
    pending = []
    for statement in statements:
        span = statement.unit
        if span.first <= unit.first <= span.last or statement.binds is None:  # the linted function, or
            needed |= statement.words  # a statement that reaches past its names
        else:
            holds_blank = any(span.first <= row <= span.last for row in blank_rows)
            pending.append((statement, statement.head if holds_blank else statement.words))
    while True:
        reached = [(s, spelt) for s, spelt in pending if s.binds & needed]  # type: ignore[operator]
        if not reached:
            break
        for _, spelt in reached:
            needed |= spelt
        pending = [(s, spelt) for s, spelt in pending if not s.binds & needed]  # type: ignore[operator]
    return blanked(lines, others + [s.unit for s, _ in pending if s.blankable])


def _rows(finding: Finding) -> Iterable[int]:
    yield finding.location.row
    yield finding.end_location.row
    for related in finding.related:
        yield related.location.row
        yield related.end_location.row
    if finding.fix is not None:
        for edit in finding.fix.edits:
            yield edit.location.row
            yield edit.end_location.row


def _owner(row: int, units: Sequence[Unit]) -> Optional[Unit]:
    for unit in units:
        if unit.first <= row <= unit.last:
            return unit
    return None


def split(findings: Sequence[Finding], units: Sequence[Unit]) -> Optional[Dict[Optional[Unit], List[Finding]]]:
    """Findings by the unit whose body holds them (None: the context); None when one of them
    reaches into a body other than its own, or the module did not parse (it cannot be split)."""
    out: Dict[Optional[Unit], List[Finding]] = {None: []}
    out.update((unit, []) for unit in units)
    for finding in findings:
        if finding.code == PARSE_ERROR_CODE:  # LibCST refused the module: nothing to reuse
            return None
        owner = _owner(finding.location.row, units)
        if any(_owner(row, units) not in (None, owner) for row in _rows(finding)):
            return None
        out[owner].append(finding)
    return out


class UnitCache:
    """Findings per unit of the buffers one editor session lints (bounded, least recently used).
    ``partial_lints`` counts the lints of a single body (tests observe the saving through it)."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._entries: "OrderedDict[str, Tuple[Finding, ...]]" = OrderedDict()
        self._lock = threading.Lock()  # the language server lints in worker threads
        self.partial_lints = 0
        # file name -> its last text's parse (``_parsed``), which the next edit starts from
        self._parses: "OrderedDict[str, Tuple[List[str], List[Unit], List[Statement]]]" = OrderedDict()

    def _parse(self, filename: str, source: str) -> Optional[Tuple[List[str], List[Unit], List[Statement]]]:
        with self._lock:
            before = self._parses.get(filename)
        parsed = _reparsed(before, source) if before is not None else None
        if parsed is None:
            parsed = _parsed(source)
        with self._lock:
            self._parses.pop(filename, None)
            if parsed is not None:
                self._parses[filename] = parsed
                while len(self._parses) > 16:
                    self._parses.popitem(last=False)
        return parsed

    def _get(self, key: str) -> Optional[Tuple[Finding, ...]]:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def _put(self, key: str, findings: Iterable[Finding]) -> None:
        with self._lock:
            self._entries[key] = tuple(findings)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def lint(self, source: str, filename: str, codes: Optional[Iterable[str]] = None, project=None) -> List[Finding]:
        """``engine.lint_source(source, filename, codes, project=project)``, the same findings."""
        codes = None if codes is None else frozenset(codes)
        split_up = None if skips_file(source) else self._parse(filename, source)
        if split_up is None or not split_up[1]:
            return lint_source(source, filename, codes, project=project)
        lines, found, statements = split_up
        context = blanked(lines, found)
        digest = project.index.digest if project is not None else ""
        base = hashlib.sha256(repr((filename, sorted(codes) if codes is not None else None, digest,
                                    project.module if project is not None else None)).encode()
                              + context.encode("utf-8", "surrogatepass")).hexdigest()
        keys: Dict[Optional[Unit], str] = {None: base}
        for unit in found:
            body = "".join(lines[unit.first - 1:unit.last])
            keys[unit] = hashlib.sha256(f"{base}\0{unit.first}\0".encode()
                                        + body.encode("utf-8", "surrogatepass")).hexdigest()
        cached = {unit: self._get(key) for unit, key in keys.items()}
        missing = [unit for unit, hit in cached.items() if hit is None]
        if len(missing) == 1 and missing[0] is not None:
            # one body edited: lint it with the others blank, and keep the rest
            unit = missing[0]
            self.partial_lints += 1
            fresh = lint_source(alone(lines, found, statements, unit), filename, codes, project=project)
            parts = split(fresh, found)
            if parts is not None:
                self._put(keys[unit], parts[unit])
                cached[unit] = tuple(parts[unit])
                return sorted((f for hit in cached.values() for f in hit or ()), key=Finding.sort_key)
        if missing:
            whole = lint_source(source, filename, codes, project=project)
            parts = split(whole, found)
            if parts is not None:
                for unit, key in keys.items():
                    self._put(key, parts[unit])
            return whole
        return sorted((f for hit in cached.values() for f in hit or ()), key=Finding.sort_key)


def differences(source: str, filename: str, codes: Optional[Iterable[str]] = None, project=None,
                most: Optional[int] = None) -> List[str]:
    """Where linting by units would differ from linting the whole module (empty: nowhere). Each
    body is linted with the others blank, and the context with every body blank. ``most``: check
    that many bodies at most, evenly spaced (each check lints the whole module once more)."""
    split_up = None if skips_file(source) else _parsed(source)
    if split_up is None or not split_up[1]:
        return []
    lines, found, statements = split_up
    parts = split(lint_source(source, filename, codes, project=project), found)
    if parts is None:
        return []  # never split: the whole module is always linted
    out = []
    checked = found if most is None or len(found) <= most else [found[i * len(found) // most] for i in range(most)]
    for unit in [None, *checked]:
        parted = split(lint_source(alone(lines, found, statements, unit), filename, codes, project=project), found)
        got = parted[unit] if parted is not None else ["(cannot be split)"]
        if got != parts[unit]:
            where = f"the body at lines {unit.first}-{unit.last}" if unit is not None else "the context"
            out.append(f"{filename}: {where}: whole module {parts[unit]} != by units {got}")
    return out
