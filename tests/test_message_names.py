"""Every name a finding's message puts in backquotes is in the code it points to, and none is a
module (issue 41, item 6): over every fixture, rules and project fixtures alike. ``eval/run.py``
runs the same check on the real projects."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from detachlint.analysis.project import ModuleView, build_index, module_name
from detachlint.engine import lint_source
from detachlint.rules import ALL_RULES

from fixture_expectations import FIXTURES

sys.path.insert(0, str(Path(__file__).parents[1] / "eval"))
from message_names import definitions, problems  # noqa: E402

PATHS = sorted(FIXTURES.rglob("*.py"))
INDEX = build_index([(p, p.read_text(encoding="utf-8")) for p in PATHS])
CODES = [r.code for r in ALL_RULES]
DEFINED = definitions(p.read_text(encoding="utf-8") for p in PATHS)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_message_names_are_in_the_code(path):
    text = path.read_text(encoding="utf-8")
    findings = lint_source(text, str(path), CODES, project=ModuleView(INDEX, module_name(path)[0]))
    wrong = [(f.location.row, f.code, p) for f in findings
             for p in problems(text, f.location.row, f.message, [r.location.row for r in f.related],
                               DEFINED.__contains__)]
    assert not wrong, wrong


def test_the_check_catches_a_module_and_a_name_from_elsewhere():
    source = "import torch\n\ndef f(grad):\n    g = torch.from_numpy(grad)\n    return g\n"
    assert problems(source, 4, "`torch` is `torch.from_numpy(grad)`, and `grad` is read") == ["`torch` is a module"]
    assert problems(source, 4, "`h` also changes `grad`") == ["`h` is not in the code the finding points to"]
    assert problems(source, 4, "`g` also changes `grad`; use `torch.stack`") == []
