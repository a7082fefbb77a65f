"""What every reporter shares: options, positions, colours, rule names and links, the summary.

Positions: a ``Finding`` holds 1-based rows and 0-based columns in code points (LibCST's view).
Every format prints **1-based columns**, as ruff (text, JSON, SARIF, GitHub) and flake8 do, so
``path:row:col`` jumps to the same character in every tool.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

from ..findings import PARSE_ERROR_CODE, Finding, Location, Severity, applicable
from ..rules import rule_info

# Reads the source lines a finding points into: (filename, cell) -> lines, or None if unavailable.
SourceLines = Callable[[str, Optional[int]], Optional[List[str]]]


@dataclass
class ReportOptions:
    color: bool = False
    quiet: bool = False
    unsafe_fixes: bool = False  # which fixes count as available (``[*]``), as ``--unsafe-fixes`` says
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


def position(f: Finding, loc: Optional[Location] = None, cell: Optional[int] = None) -> str:
    """``path:row:col`` or, in a notebook, ``path:cell N:row:col``. ``loc`` and ``cell`` default
    to the finding's; a related location passes its own (it may lie in another cell)."""
    loc = loc or f.location
    cell = f.cell if cell is None else cell
    prefix = f"cell {cell}:" if cell is not None else ""
    return f"{f.filename}:{prefix}{loc.row}:{column1(loc)}"


def absolute_filename(filename: str) -> str:
    """JSON and SARIF consumers want absolute paths (ruff's JSON does the same); stdin stays '-'."""
    return filename if filename in ("-", "<stdin>") else os.path.abspath(filename)


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


def fix_marker(f: Finding, options: ReportOptions) -> str:
    """ruff's ``[*]`` after the code of a finding ``--fix`` would fix."""
    return " [*]" if applicable(f.fix, options.unsafe_fixes) else ""


def summary(findings: Sequence[Finding], options: Optional[ReportOptions] = None) -> str:
    """``Found …`` and, as ruff does, how many ``--fix`` would fix and how many need
    ``--unsafe-fixes`` (one line each)."""
    if not findings:
        return "All checks passed!"
    errors = sum(1 for f in findings if f.severity == Severity.ERROR)
    warnings = len(findings) - errors
    text = f"Found {plural(len(findings), 'finding')} ({plural(errors, 'error')}, {plural(warnings, 'warning')})."
    unsafe = options is not None and options.unsafe_fixes
    fixable = sum(1 for f in findings if applicable(f.fix, unsafe))
    hidden = sum(1 for f in findings if f.fix is not None and not applicable(f.fix, unsafe))
    hint = f"{hidden} hidden fix{'' if hidden == 1 else 'es'} can be enabled with the `--unsafe-fixes` option"
    if fixable:
        text += f"\n[*] {fixable} fixable with the `--fix` option" + (f" ({hint})." if hidden else ".")
    elif hidden:
        text += f"\nNo fixes available ({hint})."
    return text
