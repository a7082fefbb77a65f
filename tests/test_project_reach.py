"""One file costs what its analysis reaches, not the whole tree (issue 42): ``detachlint check
script.py`` indexes the script and what it imports, in a folder without a project marker (where
the project is what the command line names) and in a marked project alike; a file's findings are
those it gets when every file is indexed.

What was indexed comes from the CLI itself (``DETACHLINT_RUNNER_STATS``: the modules of each
project index), not from timing; ``bench/one_file.py`` measures the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from one_file import make_tree  # noqa: E402  (the bench's tree, so both measure the same)

Found = List[Tuple[str, int, str, str]]


def check(cwd: Path, *targets: str) -> Tuple[Found, Dict[str, List[str]]]:
    """Findings (file, row, code, message and notes) and the modules indexed per project root."""
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--no-cache", "--exit-zero", "-j", "1",
                           "--output-format", "json", *targets], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), DETACHLINT_RUNNER_STATS="1"), timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    stats = next(json.loads(line.split(": ", 1)[1]) for line in proc.stderr.splitlines()
                 if line.startswith("detachlint-stats: "))
    found = sorted((Path(os.path.relpath(f["filename"], cwd)).as_posix(), f["location"]["row"], f["code"],
                    " ".join([f["message"], *f["notes"]])) for f in json.loads(proc.stdout))
    return found, stats["indexed"]


def modules(indexed: Dict[str, List[str]]) -> Set[str]:
    return {m for found in indexed.values() for m in found}


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> Found:
    """The script and its helper in a folder of their own: everything indexed."""
    base = tmp_path_factory.mktemp("alone")
    make_tree(base, 0)
    found, indexed = check(base, "script.py")
    assert modules(indexed) == {"script", "helpers"}
    assert any(f[2] == "TAL301" and "scale_(x)" in f[3] for f in found)  # the helper's write: the index is needed
    return found


@pytest.mark.parametrize("marker", [None, "pyproject.toml", ".git"])
def test_one_file_in_a_large_folder_indexes_what_it_imports(tmp_path, alone, marker):
    make_tree(tmp_path, 2600)
    if marker == ".git":
        (tmp_path / ".git").mkdir()
    elif marker is not None:
        (tmp_path / marker).write_text("[project]\nname = 'scratch'\n")
    found, indexed = check(tmp_path, "script.py")
    assert modules(indexed) == {"script", "helpers"}  # not the 2,600 others
    assert found == alone


def test_an_unmarked_folder_is_what_the_command_line_names(tmp_path, alone):
    """Named directories are indexed whole; a named file brings only what it imports."""
    make_tree(tmp_path, 30)
    _, indexed = check(tmp_path, "script.py", "area0")
    assert modules(indexed) == {"script", "helpers"} | {f"mod_{i}" for i in range(0, 30, 13)}


LIB = {
    "pkg/__init__.py": "",
    "pkg/train.py": """\
        import torch

        from .ops import fill_
        from lib.steps import bump


        def run(x: torch.Tensor):
            view = x[0]
            fill_(x)
            bump(x)
            return view
        """,
    "pkg/ops.py": """\
        from . import deeper


        def fill_(t):
            deeper.zero_(t)
        """,
    "pkg/deeper.py": """\
        def zero_(t):
            t.zero_()
        """,
    "lib/steps.py": """\
        def bump(t):
            t.add_(1)
        """,
    "pkg/unused.py": """\
        def other(t):
            t.mul_(2)
        """,
}


def _write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.mark.parametrize("marked", [False, True])
def test_imports_are_followed_transitively(tmp_path, marked):
    """Relative imports, a package's modules, a namespace directory (``lib`` has no
    ``__init__.py``), and what the imported modules call: the same findings as the whole tree."""
    _write(tmp_path, LIB)
    if marked:
        (tmp_path / "pyproject.toml").write_text("")
    whole, _ = check(tmp_path, ".")
    one, indexed = check(tmp_path, "pkg/train.py")
    assert one == [f for f in whole if f[0] == "pkg/train.py"]
    assert [f[2] for f in one] == ["TAL301", "TAL301"]  # written by ``fill_`` (through ``zero_``) and ``bump``
    assert {"pkg.train", "pkg.ops", "pkg.deeper"} <= modules(indexed) and "pkg.unused" not in modules(indexed)
    assert any(m.endswith("steps") for m in modules(indexed))


OVERRIDES = {
    "base.py": """\
        import torch


        class Transform:
            def project(self, val: torch.Tensor):
                return val
        """,
    "scale.py": """\
        import torch

        from base import Transform


        class Scale(Transform):
            def project(self, val: torch.Tensor):
                y = val.float()
                y.sub_(y.mean())
                return y
        """,
    # not imported by scale.py: found as a subclass of the class scale.py's class derives from
    "clamp.py": """\
        import torch

        from base import Transform as Base


        class Clamp(Base):
            def project(self, val: torch.Tensor):
                val.clamp_(0, 1)
                return val
        """,
    "unrelated.py": """\
        def helper(t):
            return t + 1
        """,
}


def test_overrides_in_subclasses_elsewhere_are_found(tmp_path):
    """Another override of a method, in a file the linted one never imports, is what makes its
    write a warning (``filled_by_override``): the marked project's subclasses are indexed too."""
    (tmp_path / "pyproject.toml").write_text("")
    _write(tmp_path, OVERRIDES)
    whole, _ = check(tmp_path, ".")
    one, indexed = check(tmp_path, "scale.py")
    assert one == [f for f in whole if f[0] == "scale.py"]
    assert "Clamp.project" in one[0][3]  # the evidence comes from clamp.py
    assert modules(indexed) == {"base", "scale", "clamp"}


@pytest.mark.parametrize("marker", [None, "pyproject.toml"])
def test_flake8_on_one_file_sees_what_it_imports(tmp_path, alone, marker):
    """flake8 (``pipeline.Projects``, built for the files flake8 was named) agrees."""
    make_tree(tmp_path, 200)
    if marker is not None:
        (tmp_path / marker).write_text("")
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TAL", "-j", "1",
                           "--format=%(path)s|%(row)d|%(code)s", "script.py"], cwd=tmp_path, capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    found = sorted(tuple(line.split("|")) for line in proc.stdout.splitlines())
    assert found == sorted((f[0], str(f[1]), f[2]) for f in alone)
