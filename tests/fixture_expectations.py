"""Read the expectations written inline in tests/fixtures/*.py.

A line that should produce findings ends with ``# expect: TAL001 error`` (several separated by
commas: ``# expect: TAL001 error, TAL002 warning``). Every other line must produce nothing. The
rules a fixture runs with are named in a header line ``# select: TAL001,TAL002``; without one,
the code in the file name (``tal001_*.py``) is selected.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Set, Tuple

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT_RE = re.compile(r"#\s*expect:\s*(?P<items>TAL\d{3}\s+(?:error|warning)(?:\s*,\s*TAL\d{3}\s+(?:error|warning))*)")
SELECT_RE = re.compile(r"^#\s*select:\s*(?P<codes>[A-Z0-9, ]+)$", re.MULTILINE)

Expectation = Tuple[int, str, str]  # (row, code, severity)


def fixture_files() -> List[Path]:
    return sorted(FIXTURES.glob("tal*.py"))


def selected_codes(path: Path, text: str) -> List[str]:
    match = SELECT_RE.search(text)
    if match:
        return [c.strip() for c in match.group("codes").split(",") if c.strip()]
    return [path.name.split("_")[0].upper()]


def expectations(text: str) -> Set[Expectation]:
    out: Set[Expectation] = set()
    for row, line in enumerate(text.splitlines(), start=1):
        match = EXPECT_RE.search(line)
        if match:
            for item in match.group("items").split(","):
                code, severity = item.split()
                out.add((row, code, severity))
    return out
