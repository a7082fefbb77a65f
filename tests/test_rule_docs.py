"""Every rule's documentation shows real code: its "Example" blocks produce that rule's finding,
its "Use instead" blocks are clean of it, and both parse (no TAL999)."""

from __future__ import annotations

import re

import pytest

from detachlint.engine import lint_source
from detachlint.findings import PARSE_ERROR_CODE
from detachlint.rules import ALL_RULES

_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _blocks(rule, section):
    return _BLOCK.findall(rule.sections().get(section, ""))


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_rule_documents_all_four_parts(rule):
    sections = rule.sections()
    assert {"What it does", "Why is this bad?", "Example", "Use instead"} <= set(sections)
    assert _blocks(rule, "Example") and _blocks(rule, "Use instead")


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_example_is_flagged(rule):
    for block in _blocks(rule, "Example"):
        codes = [f.code for f in lint_source(block, "example.py", [rule.code, PARSE_ERROR_CODE])]
        assert rule.code in codes and PARSE_ERROR_CODE not in codes, (block, codes)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_use_instead_is_clean(rule):
    for block in _blocks(rule, "Use instead"):
        assert lint_source(block, "use_instead.py", [rule.code, PARSE_ERROR_CODE]) == [], block
