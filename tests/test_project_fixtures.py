"""Fixture projects (``tests/fixtures/projects/*``): each bug sits in a different module from the
project function that causes it (a training helper that steps the optimizer, a helper that writes
its argument in place), imported in every form (``from pkg.mod import f``, ``from pkg import mod``,
``import pkg.mod as m``), called from functions, through an instance and from a script's
``if __name__ == "__main__":`` block. The expectations are written inline (``# expect: TAL401
error``, as in ``tests/fixtures/tal*.py``); every other line must stay silent.

The real command runs in a subprocess on a copy of each project: on the whole tree, and on each
file alone (the project index is the whole project's either way, so the findings are the same),
and flake8 on each file alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Set, Tuple

import pytest

from fixture_expectations import FIXTURES, expectations

REPO = Path(__file__).resolve().parents[1]
PROJECTS = sorted(p for p in (FIXTURES / "projects").iterdir() if p.is_dir())

Found = Set[Tuple[str, int, str, str]]  # (path, row, code, severity)


def _env() -> Dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _expected(root: Path) -> Found:
    return {(path.relative_to(root).as_posix(), row, code, severity)
            for path in sorted(root.rglob("*.py"))
            for row, code, severity in expectations(path.read_text())}


def _check(root: Path, *targets: str) -> Found:
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--select", "ALL", "--no-cache",
                           "--output-format", "json", "--exit-zero", *targets],
                          cwd=root, capture_output=True, text=True, env=_env(), timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return {(Path(os.path.relpath(f["filename"], root)).as_posix(), f["location"]["row"], f["code"], f["severity"])
            for f in json.loads(proc.stdout)}


@pytest.fixture(params=PROJECTS, ids=[p.name for p in PROJECTS])
def project(request, tmp_path) -> Path:
    root = tmp_path / request.param.name
    shutil.copytree(request.param, root)
    return root


def test_the_whole_project_gives_the_expected_findings(project):
    expected = _expected(project)
    assert expected, "a fixture project without expectations tests nothing"
    assert _check(project, ".") == expected


def test_each_file_alone_gives_the_findings_of_the_whole_project(project):
    expected = _expected(project)
    for path in sorted(project.rglob("*.py")):
        rel = path.relative_to(project).as_posix()
        assert _check(project, rel) == {e for e in expected if e[0] == rel}, rel


def test_flake8_on_each_file_sees_the_project(project):
    config = project / "flake8.cfg"
    config.write_text("[flake8]\nselect = TAL\n")
    expected = {(path, row, code) for path, row, code, _ in _expected(project)}
    found = set()
    for path in sorted(project.rglob("*.py")):
        rel = path.relative_to(project).as_posix()
        proc = subprocess.run([sys.executable, "-m", "flake8", "--config", str(config),
                               "--format=%(path)s|%(row)d|%(code)s", rel],
                              cwd=project, capture_output=True, text=True, env=_env(), timeout=300)
        assert "Traceback" not in proc.stderr, proc.stderr
        for line in proc.stdout.splitlines():
            name, row, code = line.split("|")
            found.add((Path(os.path.relpath(project / name, project)).as_posix(), int(row), code))
    assert found == expected
