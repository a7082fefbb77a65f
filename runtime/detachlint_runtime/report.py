"""Run mode output: a summary on stderr, and the findings (with ``confirmation``) in a file.

The file formats are the core's own reporters: ``json`` is ``check --output-format json``'s list,
``sarif`` carries the confirmation in each result's ``properties``, ``text`` is the concise form.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import List, Optional, TextIO

FORMATS = ("text", "json", "sarif")
_CORE_FORMAT = {"text": "concise", "json": "json", "sarif": "sarif"}


def summary(findings: List, stream: TextIO) -> None:
    verdicts = Counter(f.confirmation["verdict"] for f in findings if f.confirmation.get("origin") != "runtime")
    runtime = [f for f in findings if f.confirmation.get("origin") == "runtime"]
    parts = [f"{verdicts[v]} {v}" for v in ("confirmed", "harmless-in-run", "unobservable", "not-run") if verdicts[v]]
    total = sum(verdicts.values())
    stream.write(f"detachlint: {total} static finding{'s' if total != 1 else ''} in the files that ran"
                 + (f": {', '.join(parts)}" if parts else "") + f"; {len(runtime)} hazard"
                 f"{'s' if len(runtime) != 1 else ''} observed with no static finding\n")
    for f in findings:
        c = f.confirmation
        if c["verdict"] in ("confirmed",):
            origin = " [runtime, no static finding]" if c.get("origin") == "runtime" else ""
            stream.write(f"detachlint: {f.filename}:{f.location.row}: {f.code} confirmed{origin}: "
                         f"{c['evidence'][0] if c['evidence'] else ''}\n")
    stream.flush()


def render(findings: List, fmt: str) -> str:
    from detachlint.report import ReportOptions, render as core_render

    return core_render(_CORE_FORMAT[fmt], findings, ReportOptions(quiet=True))


def write_report(findings: List, output: Optional[str], fmt: str = "text", stream: Optional[TextIO] = None) -> None:
    summary(findings, stream or sys.stderr)
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(render(findings, fmt))
