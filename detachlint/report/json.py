"""A JSON array in the shape of ruff's ``--output-format json`` (so tools that read ruff's output
read ours), plus ``severity``, ``related`` and ``signature``. Rows and columns are 1-based.

In a notebook, ``cell`` is the 1-based cell (markdown cells count) and every row is relative to
the cell named next to it: the finding's ``cell``, and a ``cell`` on each related location and on
each fix edit (one fix may edit two cells, e.g. ``import copy`` added in the cell of the imports)."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence

from ..findings import Finding, Fix, Location
from .common import ReportOptions, absolute_filename, column1, rule_name, rule_url


def location(loc: Location) -> Dict[str, int]:
    return {"row": loc.row, "column": column1(loc)}


def with_cell(obj: Dict[str, Any], cell: Optional[int]) -> Dict[str, Any]:
    """In a notebook, an edit or related location names its cell (its rows are that cell's); in
    a Python file there is no ``cell`` key, as in ruff's output."""
    return obj if cell is None else {"cell": cell, **obj}


def fix_object(fix: Optional[Fix]) -> Optional[Dict[str, Any]]:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [with_cell({"content": e.content, "location": location(e.location),
                             "end_location": location(e.end_location)}, e.cell) for e in fix.edits],
    }


def finding_object(f: Finding) -> Dict[str, Any]:
    obj = {
        "cell": f.cell,
        "code": f.code,
        "name": rule_name(f.code),
        "message": f.message,
        "severity": f.severity.value,
        "filename": absolute_filename(f.filename),
        "location": location(f.location),
        "end_location": location(f.end_location),
        "noqa_row": f.location.row,  # suppressions are read on the line where a finding starts
        "fix": fix_object(f.fix),
        "url": rule_url(f.code),
        "related": [with_cell({"row": r.location.row, "column": column1(r.location), "end_row": r.end_location.row,
                               "end_column": column1(r.end_location), "message": r.message}, r.cell)
                    for r in f.related],
        "signature": None if f.signature is None else f.signature.to_json(),
        "notes": list(f.notes),
    }
    if f.confirmation is not None:  # detachlint check --confirm
        obj["confirmation"] = f.confirmation
    return obj


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    return json.dumps([finding_object(f) for f in findings], indent=2, ensure_ascii=False, default=str) + "\n"
