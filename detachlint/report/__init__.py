"""Reporters: findings in, text out. One module per ``--output-format``; none of them decides
what is a finding, only how it reads. Shared pieces live in ``common``.
"""

from __future__ import annotations

from typing import Callable, Dict, Sequence

from ..findings import Finding
from . import concise, full, github, gitlab, grouped, json, junit, pylint, rdjson, sarif
from .common import ReportOptions, rule_url

__all__ = ["FORMATS", "ReportOptions", "render", "rule_url"]

Renderer = Callable[[Sequence[Finding], ReportOptions], str]

_RENDERERS: Dict[str, Renderer] = {
    "concise": concise.render, "full": full.render, "grouped": grouped.render, "json": json.render,
    "sarif": sarif.render, "github": github.render, "gitlab": gitlab.render, "pylint": pylint.render,
    "junit": junit.render, "rdjson": rdjson.render,
}
FORMATS = tuple(_RENDERERS)


def render(fmt: str, findings: Sequence[Finding], options: ReportOptions) -> str:
    return _RENDERERS[fmt](findings, options)
