"""Findings in printed output as ``concise`` lines (``path:row:col: CODE ...``), whether the
output was ``concise`` or ruff's ``full`` layout (``CODE [*] message`` over `` --> path:row:col``)."""

from __future__ import annotations

import re
from typing import List

ARROW = re.compile(r"^ +--> (.+)$")
CONCISE = re.compile(r"^\S+:(cell \d+:)?\d+:\d+: TAL\d+")


def finding_lines(text: str) -> List[str]:
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        arrow = ARROW.match(line)
        if arrow and i:
            out.append(f"{arrow.group(1)}: {lines[i - 1]}")
        elif CONCISE.match(line):
            out.append(line)
    return out
