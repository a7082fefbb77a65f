"""ruff's ``grouped``: each file's name, then its findings as ``row:col CODE [*] [severity] message``
(positions padded to one width per file), a blank line between files, then the summary."""

from __future__ import annotations

from itertools import groupby
from typing import List, Sequence

from ..findings import Finding
from .common import ReportOptions, Style, confirmation, fix_marker, row_col, summary


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    style = Style(options.color)
    out: List[str] = []
    for filename, group in groupby(findings, key=lambda f: f.filename):  # findings come in file order
        found = list(group)
        width = max(len(row_col(f)) for f in found)
        out.append(f"{style.bold(filename)}:")
        out.extend(f"  {row_col(f):<{width}} {style.severity(f.severity, f.code)}{fix_marker(f, options)} "
                   f"[{f.severity.value}] {f.message}{confirmation(f)}" for f in found)
        out.append("")
    if not options.quiet:
        out.append(summary(findings, options))
    return "".join(x + "\n" for x in out)
