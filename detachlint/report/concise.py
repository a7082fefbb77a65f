"""``path:row:col: CODE [severity] message``, one line per finding (what editors' problem matchers
and grep expect), then a one-line summary unless ``--quiet``."""

from __future__ import annotations

from typing import Sequence

from ..findings import Finding
from .common import ReportOptions, Style, confirmation, fix_marker, position, summary


def line(f: Finding, style: Style, options: ReportOptions) -> str:
    return (f"{style.bold(position(f))}: {style.severity(f.severity, f.code)}{fix_marker(f, options)} "
            f"[{f.severity.value}] {f.message}{confirmation(f)}")


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    style = Style(options.color)
    lines = [line(f, style, options) for f in findings]
    if not options.quiet:
        lines.append(summary(findings, options))
    return "".join(x + "\n" for x in lines)
