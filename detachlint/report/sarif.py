"""SARIF 2.1.0 for GitHub code scanning (``github/codeql-action/upload-sarif``) and other SARIF
viewers. Rule metadata comes from the registry, so every rule is described even when it has no
result. Paths are relative to the working directory (``%SRCROOT%``) when below it.

Notebook results: the region's rows and columns are relative to the cell, which each location
names in ``logicalLocations`` (``cell N``) and ``properties.cell``; the result's message starts
with ``cell N:`` for viewers that show only the text. Their fixes are left out (a SARIF
replacement edits the artifact's own text, the notebook's JSON); the JSON output carries them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .. import __version__
from ..findings import PARSE_ERROR_CODE, Finding, Fix, Location, rules_doc_page
from .common import ReportOptions, column1, is_stdin, level, relative_filename

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"


def _rules() -> List[Dict[str, Any]]:
    from ..rules import ALL_RULES  # their documentation: the rule classes, not the registry's data

    out = []
    for rule in ALL_RULES:
        sections = rule.sections()
        description = sections.get("What it does", rule.summary)
        out.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary or rule.name},
            "fullDescription": {"text": description},
            "help": {"text": rule.documentation(), "markdown": rule.documentation()},
            **({"helpUri": rule.url()} if rule.url() else {}),
            "defaultConfiguration": {"level": level(rule.severity, "sarif"), "enabled": bool(rule.default_enabled)},
            "properties": {"tags": ["pytorch", "aliasing"]},
        })
    out.append({
        "id": PARSE_ERROR_CODE,
        "name": "parse-error",
        "shortDescription": {"text": "the file could not be read, decoded, parsed or analysed"},
        "fullDescription": {"text": "detachlint could not read, decode or parse this file (an error), or could not "
                                    "analyse valid code (a warning: too deep, too large, or syntax of a newer Python "
                                    "than the one running detachlint), so it was not checked."},
        "defaultConfiguration": {"level": "error", "enabled": True},
    })
    return out


def _artifact(filename: str) -> Dict[str, Any]:
    if is_stdin(filename):
        return {"uri": "stdin"}
    path = relative_filename(filename)
    if os.path.isabs(path):  # outside the working directory
        return {"uri": Path(path).as_uri()}
    return {"uri": path, "uriBaseId": SRCROOT}


def _region(start: Location, end: Location) -> Dict[str, int]:
    region = {"startLine": start.row, "startColumn": column1(start),
              "endLine": end.row, "endColumn": column1(end)}
    if (end.row, end.column) <= (start.row, start.column):
        del region["endLine"], region["endColumn"]  # an empty range is a point
    return region


def _location(f: Finding, start: Location, end: Location, message: str = "",
              cell: Optional[int] = None) -> Dict[str, Any]:
    loc: Dict[str, Any] = {"physicalLocation": {"artifactLocation": _artifact(f.filename),
                                                "region": _region(start, end)}}
    if cell is not None:
        # A notebook: the region's rows are those of this cell, not of the .ipynb's JSON text.
        loc["logicalLocations"] = [{"name": f"cell {cell}", "fullyQualifiedName": f"{f.filename}:cell {cell}"}]
        loc["properties"] = {"cell": cell}
    if message:
        loc["message"] = {"text": message}
    return loc


def _fix(f: Finding, fix: Fix) -> Dict[str, Any]:
    return {
        "description": {"text": fix.message},
        "artifactChanges": [{
            "artifactLocation": _artifact(f.filename),
            "replacements": [{"deletedRegion": _region(e.location, e.end_location),
                              "insertedContent": {"text": e.content}} for e in fix.edits],
        }],
    }


def _result(f: Finding, rule_index: Dict[str, int]) -> Dict[str, Any]:
    said = " ".join((f.message, *f.notes))  # code scanning shows this text alone: the evidence goes with it
    text = said if f.cell is None else f"cell {f.cell}: {said}"
    result: Dict[str, Any] = {
        "ruleId": f.code,
        "level": level(f.severity, "sarif"),
        "message": {"text": text},
        "locations": [_location(f, f.location, f.end_location, cell=f.cell)],
    }
    if f.code in rule_index:
        result["ruleIndex"] = rule_index[f.code]
    if f.related:
        result["relatedLocations"] = [
            dict(_location(f, r.location, r.end_location, r.message, r.cell), id=i) for i, r in enumerate(f.related)
        ]
    # A SARIF replacement addresses the artifact's own text (the notebook's JSON), which a cell's
    # rows are not: notebook fixes are in the JSON output, with the cell on each edit.
    if f.fix is not None and f.cell is None:
        result["fixes"] = [_fix(f, f.fix)]
    if f.cell is not None:
        result["properties"] = {"cell": f.cell}
    if f.confirmation is not None:  # detachlint check --confirm
        result.setdefault("properties", {})["confirmation"] = f.confirmation
    return result


def sarif_log(findings: Sequence[Finding]) -> Dict[str, Any]:
    rules = _rules()
    doc = rules_doc_page()
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "detachlint", "version": __version__, "semanticVersion": __version__,
                                **({"informationUri": doc} if doc is not None else {}), "rules": rules}},
            "originalUriBaseIds": {SRCROOT: {"uri": Path(os.getcwd()).as_uri() + "/"}},
            # Finding columns count Unicode code points (LibCST), not SARIF's default UTF-16 units.
            "columnKind": "unicodeCodePoints",
            "results": [_result(f, rule_index) for f in findings],
        }],
    }


def render(findings: Sequence[Finding], options: ReportOptions) -> str:
    return json.dumps(sarif_log(findings), indent=2, ensure_ascii=False) + "\n"
