"""reviewdog's Diagnostic Format (``reviewdog -f=rdjson``), as ruff writes it: the source, and
per finding its message, location (absolute path, 1-based range), code (with the rule's
documentation), severity and the fix's edits as suggestions. Notebook findings carry no
suggestions (their rows are the cell's, not the file's)."""

from __future__ import annotations

import json
from typing import Any, Dict, Sequence

from ..findings import Finding, Location, rules_doc_page
from .common import ReportOptions, absolute_filename, column1, level, rule_url


def _position(loc: Location) -> Dict[str, int]:
    return {"line": loc.row, "column": column1(loc)}


def diagnostic(f: Finding) -> Dict[str, Any]:
    url = rule_url(f.code)
    obj: Dict[str, Any] = {
        "code": {"value": f.code, **({"url": url} if url else {})},
        "location": {"path": absolute_filename(f.filename),
                     "range": {"start": _position(f.location), "end": _position(f.end_location)}},
        "message": f.message if f.cell is None else f"cell {f.cell}: {f.message}",
        "severity": level(f.severity, "rdjson"),
    }
    if f.fix is not None and f.cell is None:
        obj["suggestions"] = [{"range": {"start": _position(e.location), "end": _position(e.end_location)},
                               "text": e.content} for e in f.fix.edits]
    return obj


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    doc = rules_doc_page()
    source: Dict[str, str] = {"name": "detachlint", **({"url": doc} if doc is not None else {})}
    result = {"diagnostics": [diagnostic(f) for f in findings], "severity": "WARNING", "source": source}
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
