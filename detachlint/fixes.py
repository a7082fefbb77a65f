"""Applying fixes: to source text (edits sorted, conflicts deferred to a later pass, every result
re-parsed), to files (atomic, same encoding, line endings and permissions, never over a file that
changed meanwhile), and as a unified diff for ``--diff``.

The model is ruff's: a finding's ``Fix`` is *safe* (applied by ``--fix``) or *unsafe* (also
needs ``--unsafe-fixes``). A pass lints the text, takes every applicable fix whose edits touch
no edit already taken, applies them and checks that the result still parses; fixes that lost
out run in the next pass, against the re-linted text. Passes stop when nothing applicable is
left, when the text stops changing or after ``MAX_PASSES``.
"""

from __future__ import annotations

import codecs
import difflib
import io
import os
import re
import stat
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from .engine import lint_source, refused
from .files import SourceError, atomic_write, decode_source, file_digest
from .edits import NEWLINE_RE, Offsets, edit_spans, splice
from .findings import Applicability, Finding, Fix, applicable, drop_fixes
from .noqa import noqa_edit
from .notebook import CodeCell, NotebookError, join_cells, lint_notebook_bytes, neutralise, place, read_cells

MAX_PASSES = 20

Linter = Callable[[str], List[Finding]]


# --- text ---------------------------------------------------------------------------------------

def _conflicts(span: Tuple[int, int, str], taken: Sequence[Tuple[int, int, str]]) -> bool:
    """Two edits conflict when their ranges overlap or touch (the order of two edits at one
    point is ambiguous); an identical edit (the same ``import copy`` twice) does not."""
    start, end, content = span
    for other in taken:
        if other == span:
            continue
        o_start, o_end, _ = other
        if start <= o_end and o_start <= end:
            return True
    return False


def parses(text: str) -> bool:
    """Python parses it (which also rejects assignments to calls and the like that a grammar
    alone lets through), it is not too deep for LibCST (``engine.refused``), and LibCST parses it:
    LibCST's native parser never sees what Python rejects."""
    if refused(text) is not None:
        return False
    try:
        cst.parse_module(text)
    except Exception:  # ParserSyntaxError, RecursionError, ...: all mean "do not write this"
        return False
    return True


@dataclass
class PassResult:
    text: str
    applied: List[Fix] = field(default_factory=list)
    deferred: List[Fix] = field(default_factory=list)  # conflicted with an applied one: next pass
    rejected: List[Fix] = field(default_factory=list)  # malformed, or the result would not parse


def apply_fixes(text: str, fixes: Sequence[Fix]) -> PassResult:
    """One pass: apply every fix that conflicts with none taken before it (in source order) and
    keep only what parses. Fixes that lose a conflict are returned as ``deferred``."""
    offsets = Offsets(text)
    result = PassResult(text)
    chosen: List[Tuple[Fix, List[Tuple[int, int, str]]]] = []
    taken: List[Tuple[int, int, str]] = []
    candidates = []
    for fix in fixes:
        spans = edit_spans(text, offsets, fix)
        if spans is None:
            result.rejected.append(fix)
        else:
            candidates.append((spans[0][0], spans[-1][1], fix, spans))
    for _, _, fix, spans in sorted(candidates, key=lambda c: (c[0], c[1])):
        if any(_conflicts(span, taken) for span in spans):
            result.deferred.append(fix)
            continue
        chosen.append((fix, spans))
        taken.extend(spans)
    new = splice(text, taken)
    if chosen and not parses(new):
        # Find the culprits: keep, in order, each fix whose addition still parses.
        kept: List[Tuple[Fix, List[Tuple[int, int, str]]]] = []
        for fix, spans in chosen:
            trial = splice(text, [s for _, ss in kept for s in ss] + spans)
            if parses(trial):
                kept.append((fix, spans))
            else:
                result.rejected.append(fix)
        chosen = kept
        new = splice(text, [s for _, ss in chosen for s in ss])
    result.text = new
    result.applied = [fix for fix, _ in chosen]
    return result


@dataclass
class FixOutcome:
    original: str
    text: str
    initial: List[Finding] = field(default_factory=list)  # the findings of the original text
    fixed: List[Finding] = field(default_factory=list)  # the findings whose fix was applied
    remaining: List[Finding] = field(default_factory=list)  # the findings of the final text
    passes: int = 0

    @property
    def changed(self) -> bool:
        return self.text != self.original


def fix_text(text: str, lint: Linter, unsafe: bool = False, max_passes: int = MAX_PASSES) -> FixOutcome:
    """Lint, apply, re-lint until no applicable fix is left. ``lint`` maps text to findings (the
    engine with this file's name and rule selection)."""
    outcome = FixOutcome(text, text)
    rejected: Set[Fix] = set()
    seen = {text}
    findings = outcome.initial = lint(text)
    for _ in range(max_passes):
        todo = [f for f in findings if applicable(f.fix, unsafe) and f.fix not in rejected]
        if not todo:
            break
        result = apply_fixes(outcome.text, [f.fix for f in todo])  # type: ignore[misc]
        rejected.update(result.rejected)
        if not result.applied or result.text in seen:
            break
        applied = set(map(id, result.applied))
        outcome.fixed.extend(f for f in todo if id(f.fix) in applied)
        outcome.text = result.text
        outcome.passes += 1
        seen.add(result.text)
        findings = lint(outcome.text)
    outcome.remaining = findings
    return outcome


# --- files --------------------------------------------------------------------------------------

class FixError(Exception):
    """A file that cannot be fixed safely; the message says why. Nothing was written."""


@dataclass
class SourceFile:
    path: Path
    data: bytes
    text: str
    encoding: str  # as ``tokenize.detect_encoding`` reports it; ``utf-8-sig`` keeps the BOM
    mtime_ns: int
    size: int
    digest: str

    @classmethod
    def read(cls, path: Path) -> "SourceFile":
        try:
            st = os.stat(path)
            data = Path(path).read_bytes()
        except OSError as exc:
            raise FixError(f"cannot read: {exc.strerror or exc}") from None
        try:
            text = decode_source(data)
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except (SourceError, SyntaxError) as exc:
            raise FixError(getattr(exc, "message", str(exc))) from None
        if data.startswith(codecs.BOM_UTF8):
            encoding = "utf-8-sig"
        return cls(Path(path), data, text, encoding, st.st_mtime_ns, st.st_size, file_digest(data))

    def encode(self, text: str) -> bytes:
        try:
            return text.encode(self.encoding)
        except (UnicodeEncodeError, LookupError) as exc:
            raise FixError(f"the fixed text cannot be encoded as {self.encoding}: {exc}") from None

    def unchanged_on_disk(self) -> bool:
        try:
            st = os.stat(self.path)
            if st.st_mtime_ns == self.mtime_ns and st.st_size == self.size:
                return file_digest(Path(self.path).read_bytes()) == self.digest
            return False
        except OSError:
            return False

    def write(self, text: str) -> None:
        """Atomically replace the file with ``text``: a temporary file in the same directory, the
        original's permissions, then ``os.replace``. Refuses when the file changed since it was
        read or is not writable."""
        data = self.encode(text)
        target = Path(os.path.realpath(self.path))  # through a symlink: replace what it points to
        if not os.access(target, os.W_OK):
            raise FixError("not writable")
        if not self.unchanged_on_disk():
            raise FixError("changed on disk since it was read; not overwritten")
        mode = stat.S_IMODE(os.stat(target).st_mode)

        def last_look() -> None:  # just before the rename
            if not self.unchanged_on_disk():
                raise FixError("changed on disk since it was read; not overwritten")

        atomic_write(target, data, mode, durable=True, before_replace=last_look)


@dataclass
class FileFix:
    """What fixing one file did: ``outcome`` is None when the file could not be read or decoded
    (the normal check reports that); ``error`` is set when the fixed text was not written."""

    display: str
    outcome: Optional[FixOutcome]
    error: Optional[str] = None
    written: bool = False


def fix_file(path: Path, display: str, lint: Linter, unsafe: bool = False, write: bool = True,
             transform: Optional[Callable[[str], FixOutcome]] = None) -> FileFix:
    """Fix one file in place (``write``) or only compute the fixed text (``--diff``).
    ``transform`` replaces ``fix_text`` for files that are not Python source (notebooks)."""
    try:
        source = SourceFile.read(path)
    except FixError as exc:
        return FileFix(display, None, str(exc))
    outcome = transform(source.text) if transform is not None else fix_text(source.text, lint, unsafe)
    if not outcome.changed or not write:
        return FileFix(display, outcome)
    try:
        source.write(outcome.text)
    except FixError as exc:
        return FileFix(display, outcome, str(exc))
    except OSError as exc:
        return FileFix(display, outcome, f"cannot write: {exc.strerror or exc}")
    return FileFix(display, outcome, written=True)


def _lines(text: str) -> List[str]:
    """Lines with their breaks, split where Python splits them (not at form feeds and the like)."""
    out, pos = [], 0
    for match in NEWLINE_RE.finditer(text):
        out.append(text[pos:match.end()])
        pos = match.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def add_noqa(path: Path, findings: Sequence[Finding]) -> int:
    """``--add-noqa``: ``# noqa: CODE`` on the line of each finding (added to an existing list),
    the file rewritten atomically. A line whose end is inside a string (or continued with ``\\``)
    is left alone. Returns how many directives were added; raises FixError."""
    source = SourceFile.read(path)
    lines = _lines(source.text)
    wanted: Dict[int, Set[str]] = {}
    for f in findings:
        wanted.setdefault(f.location.row, set()).add(f.code)
    original = list(lines)
    added: Dict[int, int] = {}
    for row, codes in wanted.items():
        if not 1 <= row <= len(lines):
            continue
        body = lines[row - 1].rstrip("\r\n")
        new = body
        for code in sorted(codes):
            edit = noqa_edit(new, code)
            if edit is not None:
                start, end, text = edit
                new = new[:start] + text + new[end:]
                added[row] = added.get(row, 0) + 1
        lines[row - 1] = new + lines[row - 1][len(body):]
    text = "".join(lines)
    # Keep only edits that tokenize as a comment on their own row (not text inside a string).
    try:
        commented = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                     if tok.type == tokenize.COMMENT and "noqa" in tok.string}
    except (tokenize.TokenError, SyntaxError):
        commented = set()
    for row in [r for r in added if r not in commented]:
        lines[row - 1] = original[row - 1]
        del added[row]
    text = "".join(lines)
    if added:
        if not parses(text):
            raise FixError("the file would no longer parse; nothing written")
        source.write(text)
    return sum(added.values())


def unified_diff(before: str, after: str, name: str) -> str:
    """``--- name`` / ``+++ name`` hunks, as ``ruff check --diff`` prints them."""
    a, b = _lines(before), _lines(after)
    lines = []
    for line in difflib.unified_diff(a, b, fromfile=name, tofile=name):
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    return "".join(lines)


def summary(counts: Counter) -> str:
    """``3 × TAL001, 1 × TAL101``."""
    return ", ".join(f"{n} × {code}" for code, n in sorted(counts.items()))


# --- notebooks ----------------------------------------------------------------------------------

def fix_notebook(text: str, display: str, codes, unsafe: bool = False, max_passes: int = MAX_PASSES,
                 noqa: bool = True, unfixable: FrozenSet[str] = frozenset()) -> FixOutcome:
    """Fix the code cells of a notebook's JSON text. The cells are linted joined, as ``check``
    lints them, and each fix is placed in its cells by ``notebook.place`` (the edits the JSON
    output shows): a fix may edit several cells (``import copy`` in the cell of the imports), but
    no edit may cross a cell boundary or touch a line IPython syntax was neutralised on. The JSON is rewritten only when re-serialising it reproduces the file byte for
    byte (nbformat's layout: indent 1, keys in file order), so only cell sources change."""
    import json

    initial = drop_fixes(lint_notebook_bytes(text.encode("utf-8"), display, codes, noqa), unfixable)
    outcome = FixOutcome(text, text, initial=initial, remaining=initial)
    try:
        nb = json.loads(text)
        cells, is_python = read_cells(text)
    except (ValueError, NotebookError):
        return outcome
    layout = _json_layout(nb, text)
    if not is_python or layout is None or not isinstance(nb.get("cells"), list):
        return outcome
    sources = {c.number: c.source for c in cells}
    rejected: Set[Fix] = set()
    changed = set()
    for _ in range(max_passes):
        joined, cmap = join_cells([CodeCell(n, s) for n, s in sources.items()])
        findings = drop_fixes(lint_source(joined, display, codes, noqa=noqa), unfixable)
        todo = []
        in_cells = {}  # id of a fix on the joined text -> the same fix placed in its cells
        for f in findings:
            if not applicable(f.fix, unsafe) or f.fix in rejected:
                continue
            placed = place(f, cmap, cross_cell=True).finding.fix  # what reporters show, edit for edit
            if placed is not None:
                todo.append(f)
                in_cells[id(f.fix)] = placed
        if not todo:
            break
        # Conflicts and parsing are judged on the joined text, as the rules see it.
        result = apply_fixes(joined, [f.fix for f in todo])  # type: ignore[misc]
        rejected.update(result.rejected)
        per_cell: dict = {}
        for fix in result.applied:
            for e in in_cells[id(fix)].edits:
                per_cell.setdefault(e.cell, []).append(e)
        updated = {}
        for number, edits in per_cell.items():
            old_neutral = neutralise(sources[number]) or ""
            new_neutral = apply_fixes(old_neutral, [Fix(Applicability.SAFE, "", tuple(edits))]).text
            new_source = _transplant(sources[number], old_neutral, new_neutral)
            if new_source is None:
                return outcome  # an edit reached a line of IPython syntax: leave the notebook alone
            updated[number] = new_source
        if not updated:
            break
        sources.update(updated)
        changed.update(updated)
        applied = set(map(id, result.applied))
        outcome.fixed.extend(f for f in todo if id(f.fix) in applied)
        outcome.passes += 1
    if not changed:
        return outcome
    raw = nb["cells"]
    for number in changed:
        cell = raw[number - 1]
        new = sources[number]
        cell["source"] = new.splitlines(keepends=True) if isinstance(cell.get("source"), list) else new
    indent, trailing = layout
    outcome.text = json.dumps(nb, indent=indent, ensure_ascii=False) + trailing
    outcome.remaining = lint_notebook_bytes(outcome.text.encode("utf-8"), display, codes)
    return outcome


def _json_layout(nb, text: str) -> Optional[Tuple[int, str]]:
    """(indent, trailing text) that make ``json.dumps`` reproduce ``text`` exactly, else None."""
    import json

    match = re.match(r"\{\r?\n( +)", text)
    indent = len(match.group(1)) if match else 1
    dumped = json.dumps(nb, indent=indent, ensure_ascii=False)
    if not text.startswith(dumped) or text[len(dumped):] not in ("", "\n"):
        return None
    return indent, text[len(dumped):]


def _transplant(source: str, old_neutral: str, new_neutral: str) -> Optional[str]:
    """Carry the changes between two neutralised versions of a cell into the cell's own source,
    keeping its magics and line breaks; None if a change touches a line neutralising rewrote."""
    original = source.splitlines(keepends=True)
    old, new = old_neutral.splitlines(), new_neutral.splitlines()
    if len(original) != len(old):
        return None
    out: List[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend(original[i1:i2])
            continue
        if any(original[i].rstrip("\r\n") != old[i] for i in range(i1, i2)):
            return None
        out.extend(line + "\n" for line in new[j1:j2])
    text = "".join(out)
    if not source.endswith("\n") and text.endswith("\n"):
        text = text[:-1]
    return text


def changed_lines(before: str, after: str) -> Tuple[int, int, str]:
    """The smallest run of whole lines to replace to turn ``before`` into ``after``: lines
    ``[start, end)`` (0-based) of ``before`` become the returned text. For editors, which keep
    cursors and folds outside that run."""
    a, b = _lines(before), _lines(after)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return prefix, len(a) - suffix, "".join(b[prefix:len(b) - suffix])
