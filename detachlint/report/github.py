"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request."""

from __future__ import annotations

from typing import Sequence

from ..findings import Finding, Severity
from .common import ReportOptions, column1, position


def _escape_data(text: str) -> str:
    # https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts (escapeData)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def line(f: Finding) -> str:
    kind = "error" if f.severity == Severity.ERROR else "warning"
    props = {
        "file": f.filename,
        "line": f.location.row,
        "col": column1(f.location),
        "endLine": f.end_location.row,
        "endColumn": column1(f.end_location),
        "title": f"detachlint ({f.code})",  # as ruff: ``title=ruff (F401)``
    }
    if f.cell is not None:
        # GitHub cannot address a notebook cell; point at the file, keep the cell in the text.
        props = {"file": f.filename, "title": props["title"]}
    head = ",".join(f"{k}={_escape_property(str(v))}" for k, v in props.items())
    text = f.message if f.cell is None else f"{position(f)}: {f.message}"
    return f"::{kind} {head}::{_escape_data(text)}"


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    return "".join(line(f) + "\n" for f in findings)
