"""GitLab's Code Quality report (``artifacts: reports: codequality``), as ruff writes it: a JSON
array of ``check_name``, ``description`` (``CODE: message``), ``severity`` (``major`` for errors,
``minor`` for warnings), a ``fingerprint`` that survives lines moving, and ``location`` with the
path relative to the working directory (the repository root in CI) and 1-based ``positions``.
A notebook finding's rows are its cell's, which its description names."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Sequence

from ..findings import Finding
from .common import ReportOptions, column1, fingerprint, level, relative_filename


def issue(f: Finding, seen: Dict[str, int]) -> Dict[str, Any]:
    cell = f"cell {f.cell}: " if f.cell is not None else ""
    return {
        "check_name": f.code,
        "description": f"{f.code}: {cell}{f.message}",
        "severity": level(f.severity, "gitlab"),
        "fingerprint": fingerprint(f, seen),
        "location": {
            "path": relative_filename(f.filename),
            "positions": {"begin": {"line": f.location.row, "column": column1(f.location)},
                          "end": {"line": f.end_location.row, "column": column1(f.end_location)}},
        },
    }


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    seen: Dict[str, int] = {}
    issues: List[Dict[str, Any]] = [issue(f, seen) for f in findings]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
