"""GitHub Actions workflow commands, as ruff writes them: each finding becomes an annotation on
the pull request, ``::error title=detachlint (CODE),file=/abs/path,line=..,col=..,endLine=..,
endColumn=..::path:row:col: CODE message`` (``::warning`` for warnings), the fix's title after it."""

from __future__ import annotations

from typing import Sequence

from ..findings import Finding
from .common import ReportOptions, absolute_filename, column1, fix_title, level, position


def _escape_data(text: str) -> str:
    # https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts (escapeData)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def line(f: Finding) -> str:
    props = {"title": f"detachlint ({f.code})", "file": absolute_filename(f.filename)}
    if f.cell is None:  # GitHub cannot address a notebook cell: point at the file, the cell is in the text
        props.update({"line": f.location.row, "col": column1(f.location),
                      "endLine": f.end_location.row, "endColumn": column1(f.end_location)})
    head = ",".join(f"{k}={_escape_property(str(v))}" for k, v in props.items())
    text = f"{position(f)}: {f.code} {f.message}"
    if f.fix is not None:
        text += f"\n  help: {fix_title(f.fix)}"
    return f"::{level(f.severity, 'github')} {head}::{_escape_data(text)}"


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    return "".join(line(f) + "\n" for f in findings)
