"""Which files ``detachlint check`` looks at: sorted, each once, .gitignore and excludes applied."""

from __future__ import annotations

import os
from pathlib import Path

from detachlint.config import SettingsResolver
from detachlint.pipeline import discover


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def found(root: Path, *paths: str, **overrides) -> list:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return [t.display for t in discover(paths or ["."], SettingsResolver(overrides))]
    finally:
        os.chdir(cwd)


def test_sorted_suffixes_and_duplicates(tmp_path):
    touch(tmp_path, "b.py", "a/z.pyi", "a/y.ipynb", "a/x.txt", "setup.cfg", "script")
    assert found(tmp_path) == ["a/y.ipynb", "a/z.pyi", "b.py"]
    # Files named explicitly are linted whatever their suffix, and only once.
    assert found(tmp_path, "script", "b.py", ".", "b.py") == ["a/y.ipynb", "a/z.pyi", "b.py", "script"]


def test_gitignore_stops_at_the_repository_root_and_reaches_into_subpaths(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")  # above the repository: not ours
    repo = tmp_path / "repo"
    (repo / ".git" / "info").mkdir(parents=True)
    (repo / ".git" / "info" / "exclude").write_text("secret.py\n")
    (repo / ".gitignore").write_text("/gen/\n")
    touch(repo, "a.py", "secret.py", "gen/g.py", "src/gen/kept.py", "src/m.py")
    assert found(repo) == ["a.py", "src/gen/kept.py", "src/m.py"]
    # Linting a subfolder still honours the repository's top-level .gitignore.
    assert found(repo / "src") == ["gen/kept.py", "m.py"]
    assert found(repo, respect_gitignore=False) == ["a.py", "gen/g.py", "secret.py", "src/gen/kept.py", "src/m.py"]


def test_force_exclude_applies_to_explicit_files_and_gitignore(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    touch(tmp_path, "ignored.py", "build/x.py", "node_modules/m.py", "ok.py")
    explicit = ("ignored.py", "node_modules/m.py", "ok.py")
    assert found(tmp_path, *explicit) == list(explicit)
    assert found(tmp_path, *explicit, force_exclude=True) == ["ok.py"]


def test_command_line_excludes_are_relative_to_the_working_directory(tmp_path):
    touch(tmp_path, "pkg/gen/a.py", "pkg/b.py", "other/gen/c.py")
    assert found(tmp_path, extend_exclude=["pkg/gen"]) == ["other/gen/c.py", "pkg/b.py"]
    assert found(tmp_path, extend_exclude=["gen"]) == ["pkg/b.py"]  # a bare name matches any folder


def test_unreadable_directory_is_reported_not_raised(tmp_path):
    touch(tmp_path, "ok.py")
    locked = tmp_path / "locked"
    locked.mkdir()
    touch(locked, "x.py")
    locked.chmod(0)
    try:
        targets = discover([str(tmp_path)], SettingsResolver())
    finally:
        locked.chmod(0o755)
    if os.geteuid() == 0:  # root reads everything; the walk must simply work
        assert [t.error for t in targets] == [None, None]
    else:
        assert [t.error is not None for t in targets] == [True, False]


def test_the_project_index_of_a_named_directory_reuses_its_discovery(tmp_path, monkeypatch):
    """``detachlint check <dir>`` walks ``<dir>`` once: the project index of a directory the command
    line named is the same walk (a directory the walk of tasks has not seen is walked anew)."""
    from detachlint import cli, pipeline

    touch(tmp_path, "pyproject.toml", "pkg/__init__.py", "pkg/a.py", "pkg/sub/b.py")
    (tmp_path / "pkg" / "a.py").write_text("def f(x):\n    return x\n")
    walks = []
    original = pipeline._walk

    def counting(directory, *args, **kwargs):
        walks.append(os.path.relpath(directory, tmp_path))
        return original(directory, *args, **kwargs)

    monkeypatch.setattr(pipeline, "_walk", counting)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", "."]) == 0
    assert walks.count(".") == 1 and walks.count("pkg") == 1
    walks.clear()
    assert cli.main(["check", "--no-cache", "pkg"]) == 0  # the project's root, ``.``, was not named
    assert walks.count("pkg") == 2 and walks.count(".") == 1
