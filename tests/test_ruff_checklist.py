"""A ruff user's checklist (issue 33), in one place: each point a ruff user checks in their first
hour, and the tests that drive the real thing for it (the CLI, flake8 and the language server in
subprocesses, pre-commit on a git repository, Neovim headless). The tests live beside the
surface they exercise; this file keeps the list, and fails when a test it names is renamed or
removed, so that the checklist cannot quietly lose a point."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
README = TESTS.parent / "README.md"

CHECKLIST = {
    "no input kills a surface: crash shapes through the CLI (-j 1, -j 2, stdin), flake8 and the language server": [
        "test_deep_inputs.py::test_cli_every_shape",
        "test_deep_inputs.py::test_cli_stdin",
        "test_deep_inputs.py::test_column_0_shapes_through_the_cli",
        "test_deep_inputs.py::test_flake8_every_shape_python_can_parse",
        "test_deep_inputs.py::test_flake8_shapes_python_rejects",
        "test_deep_inputs.py::test_language_server_every_shape",
        "test_robustness.py::test_valid_python_too_deep_for_libcst_is_tal999_in_every_surface",
    ],
    "ruff's output: full layout with context, fix preview and unsafe reason; summary and fix accounting": [
        "test_output_formats.py::test_full_layout_context_fix_preview_and_unsafe_reason",
        "test_output_formats.py::test_full_multi_line_range_is_marked_as_ruff_marks_it",
        "test_output_formats.py::test_summary_and_fix_accounting",
        "test_output_formats.py::test_statistics_json_has_rufs_schema",
    ],
    "ruff's formats: github, pylint, grouped; gitlab, rdjson and junit validated against their schemas": [
        "test_output_formats.py::test_github_annotations",
        "test_output_formats.py::test_pylint_and_grouped",
        "test_output_formats.py::test_gitlab_is_a_valid_code_quality_report",
        "test_output_formats.py::test_rdjson_is_valid_reviewdog_input",
        "test_output_formats.py::test_junit_is_valid_junit_xml",
        "test_output_formats.py::test_every_format_is_a_choice_and_clean_runs_print_nothing_but_structure",
    ],
    "ruff's options and configuration files": [
        "test_cli.py::test_ruff_options_isolated_show_files_show_settings_extend_per_file_ignores",
        "test_cli.py::test_ignore_noqa_reports_and_fixes_suppressed_lines_and_keeps_the_cache_apart",
        "test_cli.py::test_fixable_and_unfixable",
        "test_cli.py::test_no_fix_and_exit_non_zero_on_fix",
        "test_cli.py::test_detachlint_toml_is_read_before_pyproject",
        "test_config.py::test_detachlint_toml_files_in_ruffs_order",
        "test_lsp.py::test_unfixable_and_ignore_noqa_settings",
    ],
    "noqa hygiene: invalid directives, unused codes with a fix, file-level exemptions": [
        "test_cli.py::test_noqa_hygiene_file_level_codes_unused_and_invalid_directives",
    ],
    "pre-commit shows what the README promises": [
        "test_precommit.py::test_readme_example_config_with_fail_on_error",
    ],
    "editors: the documented Neovim configurations, headless": [
        "test_editors.py::test_neovim_snippet_shows_the_findings",
    ],
    "README: every command works as written": [
        "test_readme.py::test_readme_command_works_as_written",
        "test_ruff_checklist.py::test_readme_is_short_and_states_the_suites_duration",
    ],
    "detachlint run: every verdict with its reason, paths as given, --fail-on confirmed": [
        "test_runtime_run.py::test_text_report_gives_every_verdict_with_its_reason_and_fail_on_confirmed",
    ],
}


def _defined(path: Path) -> set:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


@pytest.mark.parametrize("point", list(CHECKLIST))
def test_every_point_has_its_tests(point):
    missing = []
    for test_id in CHECKLIST[point]:
        filename, _, name = test_id.partition("::")
        path = TESTS / filename
        if not path.is_file() or name not in _defined(path):
            missing.append(test_id)
    assert not missing, f"{point}: no such test {missing}"


def test_readme_is_short_and_states_the_suites_duration():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    quick_start = text[text.index("## Quick start"):]
    quick_start = quick_start[:quick_start.index("\n## ", 1)]
    assert re.search(r"about \d+ minutes", quick_start), quick_start
