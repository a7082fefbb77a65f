"""The one data type every surface consumes: a finding, its location, severity and fix.

Findings are plain data. Formatting them is the reporters' job, never a rule's.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, FrozenSet, List, Optional, Tuple

from .signature import Signature


DOCUMENTATION_LABELS = ("documentation", "docs")  # ``[project.urls]`` labels, compared in lower case


@functools.lru_cache(maxsize=None)
def documentation_url() -> Optional[str]:
    """The rule documentation's web address, as the installed distribution declares it
    (``[project.urls] Documentation`` in ``pyproject.toml``, read from the package metadata at run
    time): a report uploaded from CI links there. ``{anchor}`` in it stands for a rule's anchor
    (a page per rule); else each rule is ``URL#anchor``. None when nothing is declared."""
    try:
        import importlib.metadata

        entries = importlib.metadata.metadata("detachlint").get_all("Project-URL") or []
    except Exception:  # not installed (a bare checkout on PYTHONPATH), or unreadable metadata
        return None
    for entry in entries:
        label, _, url = str(entry).partition(",")
        if label.strip().lower() in DOCUMENTATION_LABELS and url.strip():
            return url.strip()
    return None


@functools.lru_cache(maxsize=None)
def rules_doc() -> Optional[Path]:
    """The rule documentation that ships with detachlint: ``detachlint/rules.md`` in an installed
    wheel (``pyproject.toml`` copies it there), ``docs/rules.md`` in a checkout or an editable
    install: the links' fallback when the metadata declares no ``documentation_url``."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "rules.md", here.parent / "docs" / "rules.md"):
        if candidate.is_file():
            return candidate
    return None


def rules_doc_uri(anchor: str) -> Optional[str]:
    """Where one rule is documented: under ``documentation_url``, else in the shipped page."""
    url = documentation_url()
    if url is not None:
        return url.replace("{anchor}", anchor) if "{anchor}" in url else f"{url.partition('#')[0]}#{anchor}"
    doc = rules_doc()
    return f"{doc.as_uri()}#{anchor}" if doc is not None else None


def rules_doc_page() -> Optional[str]:
    """Where the rules are documented, as a whole (a report's tool information)."""
    url = documentation_url()
    if url is not None:
        return url.partition("{anchor}")[0].partition("#")[0]
    doc = rules_doc()
    return doc.as_uri() if doc is not None else None


# The code given to files that cannot be read, decoded or parsed.
PARSE_ERROR_CODE = "TAL999"


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, order=True)
class Location:
    """1-based row, 0-based column counted in Unicode code points (what LibCST reports)."""

    row: int
    column: int


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding: the alias origin, the mutation, the later read."""

    location: Location
    end_location: Location
    message: str
    # For notebooks: the 1-based cell ``location`` lies in (it may differ from the finding's).
    cell: Optional[int] = None


@dataclass(frozen=True)
class Edit:
    """Replace the text between two locations with ``content``."""

    location: Location
    end_location: Location
    content: str
    # For notebooks: the 1-based cell the edit applies to (one fix may edit several cells, e.g.
    # ``import copy`` added in the cell of the imports), with the locations relative to it.
    cell: Optional[int] = None


class Applicability(str, enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: Tuple[Edit, ...]


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    severity: Severity
    filename: str
    location: Location
    end_location: Location
    fix: Optional[Fix] = None
    related: Tuple[Related, ...] = ()
    # What the runtime companion needs to reproduce the pattern (rule, ops, source facts).
    signature: Optional[Signature] = field(default=None, compare=False, hash=False)
    # For notebooks: the 1-based code cell, with ``location`` relative to that cell.
    cell: Optional[int] = None
    # Set by ``--confirm``: the runtime companion's verdict and per-configuration results.
    confirmation: Optional[dict] = field(default=None, compare=False, hash=False)
    # What the one-sentence ``message`` leaves out: the evidence and the advice, each a sentence
    # (``full`` prints them as ``note:`` lines, JSON as ``notes``, the language server under the message).
    notes: Tuple[str, ...] = ()

    def sort_key(self) -> Tuple[Any, ...]:
        return (self.filename, self.cell or 0, self.location, self.code)


def drop_fixes(findings: "List[Finding]", codes: FrozenSet[str]) -> "List[Finding]":
    """``--unfixable``: the findings of ``codes`` without their fixes (neither offered nor applied)."""
    if not codes:
        return findings
    return [dataclasses.replace(f, fix=None) if f.fix is not None and f.code in codes else f for f in findings]


def applicable(fix: Optional[Fix], unsafe: bool) -> bool:
    """Whether ``fix`` is applied (and marked ``[*]``): safe fixes always, unsafe ones on request."""
    return fix is not None and (fix.applicability is Applicability.SAFE or unsafe)


def parse_error_finding(filename: str, message: str, row: int = 1, column: int = 0) -> Finding:
    """TAL999: a file that cannot be read, decoded, parsed or analysed."""
    loc = Location(max(row, 1), max(column, 0))
    return Finding(PARSE_ERROR_CODE, message, Severity.ERROR, filename, loc, loc)


def analysis_limit_finding(filename: str, message: str, row: int = 1, column: int = 0) -> Finding:
    """TAL999 for code Python accepts that detachlint's parser or analyses cannot take (too deep,
    too large): nothing is wrong with the code, so it is a warning, which ``--fail-on error``
    does not fail on. Syntax errors and unreadable files stay errors, as in ruff."""
    loc = Location(max(row, 1), max(column, 0))
    return Finding(PARSE_ERROR_CODE, message, Severity.WARNING, filename, loc, loc)


def _location_from(data: Any) -> Location:
    return Location(int(data[0]), int(data[1]))


def _cell_from(entry: Any) -> Optional[int]:
    """The optional fourth item of a serialised edit or related location (older entries have 3)."""
    return entry[3] if len(entry) > 3 else None


def finding_to_dict(finding: Finding) -> dict:
    """A JSON-safe dict that ``finding_from_dict`` turns back into an equal Finding (the cache's
    format; reporters have their own)."""
    fix = finding.fix
    return {
        "code": finding.code, "message": finding.message, "severity": finding.severity.value,
        "filename": finding.filename, "location": [finding.location.row, finding.location.column],
        "end_location": [finding.end_location.row, finding.end_location.column],
        "fix": None if fix is None else {
            "applicability": fix.applicability.value, "message": fix.message,
            "edits": [[[e.location.row, e.location.column], [e.end_location.row, e.end_location.column], e.content,
                       e.cell] for e in fix.edits]},
        "related": [[[r.location.row, r.location.column], [r.end_location.row, r.end_location.column], r.message,
                     r.cell] for r in finding.related],
        "signature": None if finding.signature is None else finding.signature.to_json(),
        "cell": finding.cell, "confirmation": finding.confirmation, "notes": list(finding.notes),
    }


def finding_from_dict(data: dict) -> Finding:
    fix = data.get("fix")
    return Finding(
        data["code"], data["message"], Severity(data["severity"]), data["filename"],
        _location_from(data["location"]), _location_from(data["end_location"]),
        None if fix is None else Fix(Applicability(fix["applicability"]), fix["message"], tuple(
            Edit(_location_from(e[0]), _location_from(e[1]), e[2], _cell_from(e)) for e in fix["edits"])),
        tuple(Related(_location_from(r[0]), _location_from(r[1]), r[2], _cell_from(r)) for r in data["related"]),
        None if data.get("signature") is None else Signature.from_json(data["signature"]),
        data.get("cell"), data.get("confirmation"), tuple(data.get("notes", ())),
    )
