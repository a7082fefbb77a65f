"""The one data type every surface consumes: a finding, its location, severity and fix.

Findings are plain data. Formatting them is the reporters' job, never a rule's.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

DOCS_URL = "https://github.com/detachlint/detachlint/blob/main/docs/rules.md#{anchor}"

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


@dataclass(frozen=True)
class Edit:
    """Replace the text between two locations with ``content``."""

    location: Location
    end_location: Location
    content: str


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
    signature: Optional[dict] = field(default=None, compare=False, hash=False)
    # For notebooks: the 1-based code cell, with ``location`` relative to that cell.
    cell: Optional[int] = None
    # Set by ``--confirm``: the runtime companion's verdict and per-configuration results.
    confirmation: Optional[dict] = field(default=None, compare=False, hash=False)

    @property
    def url(self) -> Optional[str]:
        from .rules import rule_by_code  # local: rules import findings

        rule = rule_by_code(self.code)
        return rule.url() if rule is not None else None

    def sort_key(self) -> Tuple[Any, ...]:
        return (self.filename, self.cell or 0, self.location, self.code)
