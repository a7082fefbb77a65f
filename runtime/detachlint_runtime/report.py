"""Run mode output: a summary on stderr, and the findings (with ``confirmation``) in a file.

The file formats are the core's own reporters: ``json`` is ``check --output-format json``'s list,
``sarif`` carries the confirmation in each result's ``properties``, ``text`` is the concise form.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import List, Optional, TextIO

FORMATS = ("text", "json", "sarif")
_CORE_FORMAT = {"text": "concise", "json": "json", "sarif": "sarif"}


VERDICTS = ("confirmed", "observed", "harmless-in-run", "unobservable", "not-run")
FAIL_ON = {"never": (), "confirmed": ("confirmed",), "observed": ("confirmed", "observed")}


def shown_path(filename: str) -> str:
    """A path as the user gave it: relative to the working directory when under it (the program's
    files were given so), else as found."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive
        return filename
    return filename if rel.startswith(os.pardir) else rel


def summary(findings: List, stream: TextIO) -> None:
    """One count line, then every finding with its verdict and the reason for it (confirmed first)."""
    verdicts = Counter(f.confirmation["verdict"] for f in findings if f.confirmation.get("origin") != "runtime")
    runtime = [f for f in findings if f.confirmation.get("origin") == "runtime"]
    parts = [f"{verdicts[v]} {v}" for v in VERDICTS if verdicts[v]]
    total = sum(verdicts.values())
    stream.write(f"detachlint: {total} static finding{'s' if total != 1 else ''} in the files that ran"
                 + (f": {', '.join(parts)}" if parts else "") + f"; {len(runtime)} hazard"
                 f"{'s' if len(runtime) != 1 else ''} at lines with no static finding\n")
    rank = {v: i for i, v in enumerate(VERDICTS)}
    for f in sorted(findings, key=lambda f: (rank.get(f.confirmation["verdict"], len(rank)), f.sort_key())):
        c = f.confirmation
        origin = " [runtime, no static finding]" if c.get("origin") == "runtime" else ""
        reason = c["evidence"][0] if c.get("evidence") else c.get("why", "")
        stream.write(f"detachlint: {shown_path(f.filename)}:{f.location.row}:{f.location.column + 1}: {f.code} "
                     f"{c['verdict']}{origin}" + (f": {reason}" if reason else "") + "\n")
    stream.flush()


def failed(findings: List, fail_on: str) -> bool:
    """``--fail-on confirmed`` / ``observed``: whether the run should fail although the program
    succeeded (``observed`` also fails on what may have been meant)."""
    return any(f.confirmation["verdict"] in FAIL_ON[fail_on] for f in findings)


def render(findings: List, fmt: str) -> str:
    from detachlint.report import ReportOptions, render as core_render

    return core_render(_CORE_FORMAT[fmt], findings, ReportOptions(quiet=True))


def write_report(findings: List, output: Optional[str], fmt: str = "text", stream: Optional[TextIO] = None) -> None:
    summary(findings, stream or sys.stderr)
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(render(findings, fmt))
