"""``--statistics``: how many findings of each code, most frequent first (like ruff)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Sequence

from ..findings import Finding, applicable
from .common import ReportOptions, Style, rule_name, summary


def render(findings: Sequence[Finding], options: ReportOptions, fmt: str = "concise") -> str:
    counts = sorted(Counter(f.code for f in findings).items(), key=lambda kv: (-kv[1], kv[0]))
    # As ruff: ``[*]`` before the name when findings of that code are fixable; JSON says so
    # (``fixable``) and counts them (``fixable_count``).
    fixable = Counter(f.code for f in findings if applicable(f.fix, options.unsafe_fixes))
    if fmt == "json":
        return json.dumps([{"code": c, "name": rule_name(c), "count": n, "fixable": fixable[c] > 0,
                            "fixable_count": fixable[c]} for c, n in counts], indent=2) + "\n"
    style = Style(options.color)
    width = max((len(str(n)) for _, n in counts), default=1)
    lines = [f"{n:>{width}}\t{style.bold(c)}\t{'[*]' if fixable[c] else '[ ]'} {rule_name(c)}" for c, n in counts]
    if not options.quiet:
        lines.append(summary(findings, options))
    return "".join(x + "\n" for x in lines)
