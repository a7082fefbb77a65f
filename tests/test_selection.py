"""A rule's findings do not depend on which other rules are selected.

The engine's fast paths (the pre-check, the blanking of quiet code, the screen on the tree built
from Python's) are decided by the selected rules; a rule that answers differently on the
screen's tree than on LibCST's is found only where no other selected rule reports in the module
(then LibCST never parses it). The fixtures hide that: most hold findings of several rules, so
the equality tests in test_fromast.py and test_units.py, run with every rule, always reach
LibCST. Here each rule runs alone too.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from detachlint.engine import ALL_RULES, lint_source

from fixture_expectations import FIXTURES
from test_precheck import ALL_CODES, SOURCES

# TAL901 (an unused ``noqa``) is about the selection itself: a code not selected is "non-enabled"
CODES = [r.code for r in ALL_RULES if r.code != "TAL901"]

def _fixture_function(path: Path, name: str) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(path.read_text(encoding="utf-8"), node, padded=True)


# issue 41, fresh set 18: a view's region copied back into its base at the same elements, the
# target's subscript split over lines (the fixture's trap, alone in a module); beside it one
# finding of another rule (TAL101), so that with every rule selected LibCST parses the module
# and with TAL301 alone only the screen sees it.
SPLIT_WRITE_BACK = "import torch\nfrom torch import Tensor\n\n\n" + _fixture_function(
    FIXTURES / "tal301_view_alias_mutation.py", "refill_columns_split") + textwrap.dedent("""


    def as_tensor(x: torch.Tensor):
        return torch.tensor(x)
""")


def _by_rule(source: str, name: str, codes):
    return sorted((f.code, f.location.row, f.location.column, f.severity.value, f.message)
                  for f in lint_source(source, name, codes))


def _each_rule_alone_as_within_all(source: str, name: str):
    together = _by_rule(source, name, ALL_CODES)
    for code in CODES:
        alone = _by_rule(source, name, [code])
        assert alone == [f for f in together if f[0] == code], (name, code)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_each_rule_alone_finds_what_it_finds_among_all(path):
    _each_rule_alone_as_within_all(path.read_text(encoding="utf-8"), str(path))


def test_a_split_write_back_is_judged_alike_alone_and_among_all():
    _each_rule_alone_as_within_all(SPLIT_WRITE_BACK, "split.py")
    # and what it is judged: the identity copy is no finding, whatever the line breaks
    assert [f.code for f in lint_source(SPLIT_WRITE_BACK, "split.py", ALL_CODES)] == ["TAL101"]
    assert lint_source(SPLIT_WRITE_BACK, "split.py", ["TAL301"], screen=False) == []
