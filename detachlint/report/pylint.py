"""ruff's ``pylint``: ``path:row: [CODE] message``, one line per finding, no summary."""

from __future__ import annotations

from typing import Sequence

from ..findings import Finding
from .common import ReportOptions


def line(f: Finding) -> str:
    cell = f"cell {f.cell}:" if f.cell is not None else ""
    return f"{f.filename}:{cell}{f.location.row}: [{f.code}] {f.message}"


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    return "".join(line(f) + "\n" for f in findings)
