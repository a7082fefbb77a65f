"""Reporters: findings in, text out. One module per ``--output-format``; none of them decides
what is a finding, only how it reads. Shared pieces live in ``common``.
"""

from __future__ import annotations

import importlib
from typing import Sequence

from ..findings import Finding
from .common import ReportOptions, rule_url

__all__ = ["FORMATS", "ReportOptions", "render", "rule_url"]

# Each format's module, by its name, imported only when asked: a run reports in one format, and
# importing every one cost each process about 30 ms (``junit``'s ``xml.sax.saxutils`` pulls in
# ``urllib.request``).
FORMATS = ("concise", "full", "grouped", "json", "sarif", "github", "gitlab", "pylint", "junit", "rdjson")


def render(fmt: str, findings: Sequence[Finding], options: ReportOptions) -> str:
    if fmt not in FORMATS:
        raise KeyError(fmt)
    return importlib.import_module(f"{__name__}.{fmt}").render(findings, options)
