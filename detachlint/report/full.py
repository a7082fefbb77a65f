"""The concise line, then the source line with the finding's range underlined, its related
locations as notes and a link to the rule's documentation."""

from __future__ import annotations

from typing import List, Sequence

from ..findings import Finding
from ..rules import rule_info
from . import concise
from .common import ReportOptions, Style, position, summary


def _snippet(f: Finding, options: ReportOptions, style: Style) -> List[str]:
    lines = options.sources(f.filename, f.cell)
    row = f.location.row
    if not lines or not 1 <= row <= len(lines):
        return []
    text = lines[row - 1].rstrip("\r\n").expandtabs(1)  # one column per code point, tabs included
    start = min(f.location.column, len(text))
    if f.end_location.row == row:
        end = max(f.end_location.column, start + 1)
    else:
        end = max(len(text), start + 1)  # a multi-line range: underline to the end of the first line
    gutter = str(row)
    pad = " " * len(gutter)
    marker = "^" + "~" * (end - start - 1)
    return [f"{pad} |", f"{style.dim(gutter)} | {text}", f"{pad} | {' ' * start}{style.severity(f.severity, marker)}"]


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    style = Style(options.color)
    out: List[str] = []
    for f in findings:
        out.append(concise.line(f, style, options))
        out.extend(_snippet(f, options, style))
        for rel in f.related:
            out.append(f"  = note: {position(f, rel.location, rel.cell)}: {rel.message}")
        if rule_info(f.code) is not None:
            out.append(f"  = help: {style.cyan(f'detachlint rule {f.code}')}")  # works wherever detachlint does
        out.append("")
    if not options.quiet:
        out.append(summary(findings, options))
    return "".join(x + "\n" for x in out)
