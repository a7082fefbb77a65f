"""Rule selection and ``[tool.detachlint]`` loading: ruff's semantics, checked in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from detachlint.config import ConfigError, SettingsResolver, load_settings
from detachlint.findings import PARSE_ERROR_CODE
from detachlint.rules import ALL_RULES

ALL_CODES = frozenset(r.code for r in ALL_RULES) | {PARSE_ERROR_CODE}
DEFAULT = frozenset(r.code for r in ALL_RULES if r.default_enabled) | {PARSE_ERROR_CODE}


def codes(tmp_path: Path, config: str = "", **cli) -> frozenset:
    if config:
        (tmp_path / "pyproject.toml").write_text("[tool.detachlint]\n" + config, encoding="utf-8")
    overrides = {k.replace("_", "-"): v for k, v in cli.items()}
    return load_settings(tmp_path / "x.py", overrides).codes_for(tmp_path / "x.py")


def test_defaults_are_the_registry_defaults_plus_parse_errors(tmp_path):
    assert codes(tmp_path) == DEFAULT
    assert "TAL002" not in DEFAULT and "TAL001" in DEFAULT


def test_all_and_prefixes(tmp_path):
    assert codes(tmp_path, select=["ALL"]) == ALL_CODES
    assert codes(tmp_path, select=["TAL"]) == ALL_CODES
    assert codes(tmp_path, select=["TAL00"]) == {"TAL001", "TAL002", "TAL003", PARSE_ERROR_CODE}
    assert codes(tmp_path, extend_select=["TAL002"]) == DEFAULT | {"TAL002"}


def test_most_specific_selector_wins_and_ignore_wins_ties(tmp_path):
    assert "TAL001" not in codes(tmp_path, select=["TAL0"], ignore=["TAL001"])
    assert codes(tmp_path, select=["TAL001"], ignore=["TAL0"]) == {"TAL001", PARSE_ERROR_CODE}
    assert "TAL001" not in codes(tmp_path, select=["TAL001"], ignore=["TAL001"])
    assert codes(tmp_path, select=["TAL101"], ignore=["ALL"]) == {"TAL101"}  # ALL is explicit: TAL999 off too


def test_parse_errors_stay_on_unless_ignored_explicitly(tmp_path):
    assert PARSE_ERROR_CODE in codes(tmp_path, select=["TAL101"])
    assert PARSE_ERROR_CODE not in codes(tmp_path, ignore=["TAL999"])
    assert PARSE_ERROR_CODE not in codes(tmp_path, extend_ignore=["TAL9"])


def test_command_line_layers_on_top_of_config(tmp_path):
    config = 'select = ["TAL1"]\nignore = ["TAL103"]\n'
    assert codes(tmp_path, config) == {"TAL101", "TAL102", PARSE_ERROR_CODE}
    # extend-select adds to the configured choice; select starts over (config ignores dropped, as in ruff).
    assert codes(tmp_path, config, extend_select=["TAL001"]) == {"TAL001", "TAL101", "TAL102", PARSE_ERROR_CODE}
    assert codes(tmp_path, config, select=["TAL103"]) == {"TAL103", PARSE_ERROR_CODE}
    assert codes(tmp_path, config, ignore=["TAL102"]) == {"TAL101", PARSE_ERROR_CODE}


def test_per_file_ignores_are_relative_to_the_project_root(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.detachlint.per-file-ignores]\n"tests/*" = ["TAL1"]\n"conftest.py" = ["TAL001"]\n')
    settings = load_settings(tmp_path)
    assert settings.root == tmp_path
    assert settings.codes_for(tmp_path / "tests" / "deep" / "t.py") == DEFAULT - {"TAL101", "TAL102", "TAL103"}
    assert settings.codes_for(tmp_path / "sub" / "conftest.py") == DEFAULT - {"TAL001"}  # basename match
    assert settings.codes_for(tmp_path / "src" / "tests.py") == DEFAULT


def test_exclude_extend_exclude_and_defaults(tmp_path):
    settings = load_settings(tmp_path)
    assert settings.is_excluded(tmp_path / ".venv" / "lib" / "a.py")
    assert settings.is_excluded(tmp_path / "node_modules")
    assert not settings.is_excluded(tmp_path / "src" / "a.py")
    (tmp_path / "pyproject.toml").write_text('[tool.detachlint]\nextend-exclude = ["gen", "*_pb2.py"]\n')
    settings = load_settings(tmp_path / "src")
    assert settings.is_excluded(tmp_path / "gen" / "a.py") and settings.is_excluded(tmp_path / "src" / "m_pb2.py")
    assert settings.is_excluded(tmp_path / ".venv" / "a.py")
    (tmp_path / "pyproject.toml").write_text('[tool.detachlint]\nexclude = ["gen"]\n')
    assert not load_settings(tmp_path).is_excluded(tmp_path / ".venv" / "a.py")  # exclude replaces the defaults


def test_a_parent_named_like_an_excluded_folder_does_not_exclude_the_project(tmp_path):
    root = tmp_path / "venv" / "proj"
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.detachlint]\n")
    assert not load_settings(root).is_excluded(root / "a.py")


def test_closest_config_wins_and_tables_without_our_section_are_skipped(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.detachlint]\nselect = ["TAL101"]\n')
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pyproject.toml").write_text('[tool.ruff]\nline-length = 100\n')
    (tmp_path / "a" / "b").mkdir()
    (tmp_path / "a" / "b" / "pyproject.toml").write_text('[tool.detachlint]\nselect = ["TAL103"]\n')
    resolver = SettingsResolver()
    assert resolver.for_path(tmp_path / "a" / "x.py").codes_for("x.py") == {"TAL101", PARSE_ERROR_CODE}
    assert resolver.for_path(tmp_path / "a" / "b" / "x.py").codes_for("x.py") == {"TAL103", PARSE_ERROR_CODE}
    assert resolver.for_path(tmp_path / "a" / "b" / "x.py").config_file == tmp_path / "a" / "b" / "pyproject.toml"


def test_detachlint_toml_files_in_ruffs_order(tmp_path):
    # in one directory: .detachlint.toml, then detachlint.toml, then pyproject.toml's table (ruff's order)
    (tmp_path / "pyproject.toml").write_text('[tool.detachlint]\nselect = ["TAL101"]\n')
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pyproject.toml").write_text('[tool.detachlint]\nselect = ["TAL101"]\n')
    (tmp_path / "a" / "detachlint.toml").write_text('select = ["TAL102"]\n')
    (tmp_path / "a" / "b").mkdir()
    (tmp_path / "a" / "b" / "detachlint.toml").write_text('select = ["TAL102"]\n')
    (tmp_path / "a" / "b" / ".detachlint.toml").write_text('select = ["TAL103"]\n')
    resolver = SettingsResolver()
    assert resolver.for_path(tmp_path / "x.py").codes_for("x.py") == {"TAL101", PARSE_ERROR_CODE}
    assert resolver.for_path(tmp_path / "a" / "x.py").codes_for("x.py") == {"TAL102", PARSE_ERROR_CODE}
    assert resolver.for_path(tmp_path / "a" / "b" / "x.py").config_file == tmp_path / "a" / "b" / ".detachlint.toml"
    # the editor's path (load_settings) finds the same file
    assert load_settings(tmp_path / "a" / "b" / "x.py").codes_for("x.py") == {"TAL103", PARSE_ERROR_CODE}
    assert load_settings(tmp_path / "a" / "x.py").config_file == tmp_path / "a" / "detachlint.toml"


@pytest.mark.parametrize("config, message", [
    ('bogus = 1\n', "unknown option 'bogus'"),
    ('select = ["TAL0011"]\n', "unknown rule selector 'TAL0011'"),
    ('select = [""]\n', "unknown rule selector ''"),
    ('ignore = ["tal001"]\n', "unknown rule selector 'tal001'"),
    ('respect-gitignore = "yes"\n', "respect-gitignore must be true or false"),
    ('per-file-ignores = ["x"]\n', "per-file-ignores must be a table"),
    ('select = [1]\n', "select must be a list of strings"),
])
def test_invalid_config_raises_a_config_error(tmp_path, config, message):
    with pytest.raises(ConfigError, match="pyproject.toml") as info:
        codes(tmp_path, config)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_invalid_command_line_values_raise(tmp_path):
    with pytest.raises(ConfigError, match="command line"):
        SettingsResolver({"select": ["NOPE"]})
    with pytest.raises(ConfigError, match="unknown option"):
        load_settings(tmp_path, {"colour": True})


def test_new_rules_are_selectable_without_code_changes(tmp_path):
    for rule in ALL_RULES:  # the registry is the only list of codes
        assert codes(tmp_path, select=[rule.code]) == {rule.code, PARSE_ERROR_CODE}


def test_excludes_match_as_each_glob_does_with_fnmatch(tmp_path):
    """Discovery matches every exclude glob with two regular expressions (``config._Matcher``):
    it must say what three ``fnmatch`` calls per glob say, the basename, the full path and, for
    ``**/name``, the name under the base."""
    import fnmatch

    globs = ["build", "*.pyc", "**/gen", "sub/*.py", "a[bc]d?", ".venv", "x/**/y", str(tmp_path / "abs" / "*")]
    settings = load_settings(tmp_path / "x.py", {"exclude": globs})
    paths = [tmp_path / p for p in ("build", "src/build", "m.pyc", "gen", "deep/gen", "sub/m.py", "sub/t/m.py",
                                    "abd1", "abcd", ".venv", "x/q/y", "x/y", "abs/z.py", "keep.py", "builds")]
    for path in paths:
        expected = False
        for pattern in settings.exclude:
            glob, absolute, direct = pattern._globs
            expected = expected or fnmatch.fnmatchcase(path.name, glob) or fnmatch.fnmatchcase(
                path.as_posix(), absolute) or (direct is not None and fnmatch.fnmatchcase(path.as_posix(), direct))
        assert settings.matches_exclude(path) is expected, path
    assert settings.matches_exclude(tmp_path / "src" / "build") and not settings.matches_exclude(tmp_path / "keep.py")
