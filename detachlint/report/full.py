"""ruff's ``full`` layout, errors first, then warnings: ``CODE [*] [severity] message``,
`` --> path:row:col``, the source around the finding with its range underlined, the related
locations and the finding's notes as notes, ``help:`` with the fix's title and a preview of the
lines it changes, and, for an unsafe fix, a note saying why."""

from __future__ import annotations

from typing import List, Optional, Sequence

from ..findings import Finding, Severity
from .common import (ReportOptions, Style, confirmation, fix_marker, fix_preview, fix_title, position, summary,
                     unsafe_note)

CONTEXT = 2  # lines shown before and after the finding's range, as ruff


def _snippet(f: Finding, lines: Optional[List[str]], style: Style) -> List[str]:
    """The range underlined (``^^^``), or for several lines marked ``/``, ``|`` and ``|___^``."""
    row, end_row = f.location.row, max(f.end_location.row, f.location.row)
    if not lines or not 1 <= row <= len(lines):
        return []
    end_row = min(end_row, len(lines))
    text = [line.rstrip("\r\n").expandtabs(1) for line in lines]  # one column per code point
    first, last = max(1, row - CONTEXT), min(len(text), end_row + CONTEXT)
    while first < row and not text[first - 1].strip():  # as ruff: no blank lines at the edges
        first += 1
    while last > end_row and not text[last - 1].strip():
        last -= 1
    width = len(str(last))
    pad = " " * width
    start = min(f.location.column, len(text[row - 1]))
    mark = lambda s: style.severity(f.severity, s)  # noqa: E731
    out = [f"{pad} |"]
    if end_row == row:
        end = max(min(f.end_location.column, len(text[row - 1])), start + 1)
        for n in range(first, last + 1):
            out.append(f"{style.dim(f'{n:>{width}}')} | {text[n - 1]}".rstrip())
            if n == row:
                out.append(f"{pad} | {' ' * start}{mark('^' * (end - start))}")
        out.append(f"{pad} |")
        return out
    end = max(min(f.end_location.column, len(text[end_row - 1])), 1)
    whole = start <= len(text[row - 1]) - len(text[row - 1].lstrip())  # starts at the line's indentation
    for n in range(first, last + 1):
        inside = row <= n <= end_row
        gutter = ("/ " if n == row and whole else "| ") if inside and (n > row or whole) else "  "
        out.append(f"{style.dim(f'{n:>{width}}')} | {mark(gutter)}{text[n - 1]}".rstrip())
        if n == row and not whole:
            out.append(f"{pad} | {mark(' ' + '_' * (start + 1) + '^')}")
        if n == end_row:
            out.append(f"{pad} | {mark('|' + '_' * end + '^')}")
    out.append(f"{pad} |")
    return out


def block(f: Finding, options: ReportOptions, style: Style) -> List[str]:
    lines = options.sources(f.filename, f.cell)
    snippet = _snippet(f, lines, style)
    width = len(snippet[0]) - 2 if snippet else 1  # the arrow is indented as deep as the gutter
    out = [f"{style.severity(f.severity, f.code)}{fix_marker(f, options)} [{f.severity.value}] "
           f"{style.bold(f.message)}{confirmation(f)}",
           f"{' ' * width}{style.cyan('-->')} {position(f)}", *snippet]
    out.extend(f"note: {position(f, rel.location, rel.cell)}: {rel.message}" for rel in f.related)
    out.extend(f"note: {note}" for note in f.notes)
    if f.fix is not None:
        out.append(f"{style.cyan('help')}: {fix_title(f.fix)}")
        out.extend(fix_preview(f, lines))
        note = unsafe_note(f.fix)
        if note:
            out.append(f"note: {note}")
    return out


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    style = Style(options.color)
    out: List[str] = []
    # The hazards lead: errors first, then warnings, each in file order (a stable sort).
    for f in sorted(findings, key=lambda f: f.severity is not Severity.ERROR):
        out.extend(block(f, options, style))
        out.append("")
    if not options.quiet:
        out.append(summary(findings, options))
    return "".join(x + "\n" for x in out)
