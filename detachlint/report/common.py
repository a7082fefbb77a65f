"""What every reporter shares: options, positions, colours, rule names and links, the summary.

Positions: a ``Finding`` holds 1-based rows and 0-based columns in code points (LibCST's view).
Every format prints **1-based columns**, as ruff (text, JSON, SARIF, GitHub) and flake8 do, so
``path:row:col`` jumps to the same character in every tool.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..findings import PARSE_ERROR_CODE, Applicability, Finding, Fix, Location, Severity, applicable
from ..rules import rule_info

# Reads the source lines a finding points into: (filename, cell) -> lines, or None if unavailable.
SourceLines = Callable[[str, Optional[int]], Optional[List[str]]]


@dataclass
class ReportOptions:
    color: bool = False
    quiet: bool = False
    unsafe_fixes: bool = False  # which fixes count as available (``[*]``), as ``--unsafe-fixes`` says
    fixed: Optional[int] = None  # with ``--fix``: how many findings were fixed (the summary counts them)
    unchecked: int = 0  # files an internal error stopped: the summary must not say that all passed
    sources: SourceLines = field(default=lambda filename, cell: None)


def rule_name(code: str) -> str:
    rule = rule_info(code)
    if rule is not None:
        return rule.name
    return "parse-error" if code == PARSE_ERROR_CODE else code.lower()


def rule_url(code: str) -> Optional[str]:
    """Where a finding's rule is documented (None for codes without a rule, such as TAL999)."""
    rule = rule_info(code)
    return rule.url() if rule is not None else None


def column1(loc: Location) -> int:
    return loc.column + 1


def row_col(f: Finding, loc: Optional[Location] = None, cell: Optional[int] = None) -> str:
    """``row:col`` or, in a notebook, ``cell N:row:col`` (``position`` without the path)."""
    loc = loc or f.location
    cell = f.cell if cell is None else cell
    prefix = f"cell {cell}:" if cell is not None else ""
    return f"{prefix}{loc.row}:{column1(loc)}"


def position(f: Finding, loc: Optional[Location] = None, cell: Optional[int] = None) -> str:
    """``path:row:col`` or, in a notebook, ``path:cell N:row:col``. ``loc`` and ``cell`` default
    to the finding's; a related location passes its own (it may lie in another cell)."""
    return f"{f.filename}:{row_col(f, loc, cell)}"


def is_stdin(filename: str) -> bool:
    return filename in ("-", "<stdin>")


def absolute_filename(filename: str) -> str:
    """JSON, GitHub and JUnit consumers want absolute paths (as ruff's); stdin stays '-'."""
    return filename if is_stdin(filename) else os.path.abspath(filename)


def relative_filename(filename: str) -> str:
    """Relative to the working directory when below it (GitLab, SARIF's ``%SRCROOT%``), with ``/``;
    otherwise absolute. stdin stays '-'."""
    if is_stdin(filename):
        return filename
    absolute = os.path.abspath(filename)
    try:
        relative = os.path.relpath(absolute, os.getcwd())
    except ValueError:  # another drive
        return absolute
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return absolute
    return relative.replace(os.sep, "/")


# How each format names a severity (detachlint's two levels; ruff's formats have one).
_LEVELS: Dict[str, Tuple[str, str]] = {  # format -> (error, warning)
    "github": ("error", "warning"), "sarif": ("error", "warning"), "junit": ("error", "warning"),
    "gitlab": ("major", "minor"),  # GitLab Code Quality: info, minor, major, critical, blocker
    "rdjson": ("ERROR", "WARNING"),  # reviewdog: UNKNOWN_SEVERITY, ERROR, WARNING, INFO
}


def level(severity: Severity, fmt: str) -> str:
    error, warning = _LEVELS[fmt]
    return error if severity == Severity.ERROR else warning


def fingerprint(f: Finding, seen: Dict[str, int]) -> str:
    """A stable id for GitLab: the code, path, cell and message, not the row (findings keep their
    id when lines move above them), plus an occurrence count where those repeat in a file."""
    key = "\0".join((f.code, relative_filename(f.filename), str(f.cell or ""), f.message))
    seen[key] = seen.get(key, 0) + 1
    return hashlib.sha256(f"{key}\0{seen[key]}".encode("utf-8", "backslashreplace")).hexdigest()[:16]


class Style:
    """ANSI styling that vanishes when colour is off; presentation never lives in the data."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def cyan(self, text: str) -> str:
        return self._wrap("36", text)

    def severity(self, severity: Severity, text: str) -> str:
        return self._wrap("1;31" if severity == Severity.ERROR else "1;33", text)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def confirmation(f: Finding) -> str:
    """`` [verdict]`` after a finding's message under ``detachlint check --confirm``."""
    if f.confirmation is None:
        return ""
    return f" [{f.confirmation.get('short') or f.confirmation.get('verdict')}]"


def fix_marker(f: Finding, options: ReportOptions) -> str:
    """ruff's ``[*]`` after the code of a finding ``--fix`` would fix."""
    return " [*]" if applicable(f.fix, options.unsafe_fixes) else ""


_UNSAFE_REASON = re.compile(r"^(?P<title>.*?) \(unsafe: (?P<reason>.+)\)$", re.S)


def fix_title(fix: Fix) -> str:
    """The fix's title without the ``(unsafe: why)`` its rule may end it with."""
    match = _UNSAFE_REASON.match(fix.message)
    return match.group("title") if match else fix.message


def unsafe_note(fix: Fix) -> Optional[str]:
    """ruff's note under an unsafe fix, with why it is unsafe when the rule's title says so
    (``Title (unsafe: why)``, the convention of ``rules.fixkit.make_fix``)."""
    if fix.applicability is not Applicability.UNSAFE:
        return None
    match = _UNSAFE_REASON.match(fix.message)
    note = "This is an unsafe fix and may change runtime behavior"
    return f"{note}: {match.group('reason')}" if match else note


def fix_preview(f: Finding, lines: Optional[List[str]]) -> List[str]:
    """The lines the fix changes, as ruff shows them under ``help:``: one line of context either
    side, ``-`` for removed lines, ``N +`` for added ones (numbered as after the fix). Empty when
    the source is unavailable or an edit lies in another notebook cell."""
    from ..edits import apply_fix

    fix = f.fix
    if fix is None or lines is None or any(e.cell != f.cell for e in fix.edits):
        return []
    before = "".join(line + "\n" for line in lines)
    after = apply_fix(before, fix)
    if after is None:
        return []
    old, new = before.splitlines(), after.splitlines()
    groups = list(difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(1))
    if not groups:
        return []
    rows: List[Tuple[str, Optional[int], str]] = []  # (mark, number after the fix, text)
    for n, group in enumerate(groups):
        if n:
            rows.append(("...", None, ""))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(("|", j + 1, new[j]) for j in range(j1, j2))
                continue
            rows.extend(("-", None, old[i]) for i in range(i1, i2))
            rows.extend(("+", j + 1, new[j]) for j in range(j1, j2))
    width = len(str(max((number for _, number, _ in rows if number is not None), default=1)))
    out = [" " * width + " |"]
    out.extend(f"{'' if number is None else number:>{width}} {mark} {text}".rstrip() for mark, number, text in rows)
    out.append(" " * width + " |")
    return out


def summary(findings: Sequence[Finding], options: Optional[ReportOptions] = None) -> str:
    """ruff's summary: ``Found …`` (with ``--fix``: ``(F fixed, R remaining)``), then how many
    ``--fix`` would fix and how many unsafe fixes ``--unsafe-fixes`` would add (one line each).
    detachlint's findings have a severity, so ``Found`` counts findings and says how many of those
    remaining are errors and warnings."""
    fixed = options.fixed if options is not None else None
    unchecked = options.unchecked if options is not None else 0
    if not findings and not fixed:
        if unchecked:
            return f"No findings in the files checked; {plural(unchecked, 'file')} could not be checked (see above)."
        return "All checks passed!"
    errors = sum(1 for f in findings if f.severity == Severity.ERROR)
    severities = f"{plural(errors, 'error')}, {plural(len(findings) - errors, 'warning')}"
    if fixed is None:
        text = f"Found {plural(len(findings), 'finding')} ({severities})."
    else:
        remaining = f"{len(findings)} remaining" + (f": {severities}" if findings else "")
        text = f"Found {plural(len(findings) + fixed, 'finding')} ({fixed} fixed, {remaining})."
    unsafe = options is not None and options.unsafe_fixes
    fixable = sum(1 for f in findings if applicable(f.fix, unsafe))
    hidden = sum(1 for f in findings if f.fix is not None and not applicable(f.fix, unsafe))
    hint = f"{hidden} unsafe fix{'' if hidden == 1 else 'es'} available with `--fix --unsafe-fixes`"
    if fixable:
        text += f"\n[*] {fixable} fixable with `--fix`" + (f" ({hint})." if hidden else ".")
    elif hidden:
        text += f"\n{hint}."
    return text
