"""Every fixture's findings equal, exactly, the expectations written next to its code."""

from __future__ import annotations

import pytest

from detachlint.analysis.project import ModuleView, build_index, module_name
from detachlint.engine import lint_source

from fixture_expectations import FIXTURES, expectations, fixture_files, selected_codes

# The fixtures are one small project: facts across functions, classes and modules come from it.
INDEX = build_index([(p, p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.rglob("*.py"))])


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_fixture(path):
    text = path.read_text(encoding="utf-8")
    codes = selected_codes(path, text)
    project = ModuleView(INDEX, module_name(path)[0])
    found = {(f.location.row, f.code, f.severity.value) for f in lint_source(text, str(path), codes, project=project)}
    expected = expectations(text)
    missing = sorted(expected - found)
    unexpected = sorted(found - expected)
    assert not missing and not unexpected, f"missing={missing} unexpected={unexpected}"


def test_every_rule_has_a_fixture():
    from detachlint.rules import ALL_RULES

    covered = {p.name.split("_")[0].upper() for p in fixture_files()}
    assert {r.code for r in ALL_RULES} <= covered
