"""Every fixture's findings equal, exactly, the expectations written next to its code."""

from __future__ import annotations

import pytest

from detachlint.engine import lint_source

from fixture_expectations import expectations, fixture_files, selected_codes


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_fixture(path):
    text = path.read_text(encoding="utf-8")
    codes = selected_codes(path, text)
    found = {(f.location.row, f.code, f.severity.value) for f in lint_source(text, str(path), codes)}
    expected = expectations(text)
    missing = sorted(expected - found)
    unexpected = sorted(found - expected)
    assert not missing and not unexpected, f"missing={missing} unexpected={unexpected}"


def test_every_rule_has_a_fixture():
    from detachlint.rules import ALL_RULES

    covered = {p.name.split("_")[0].upper() for p in fixture_files()}
    assert {r.code for r in ALL_RULES} <= covered
