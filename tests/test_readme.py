"""Every command in README.md's shell examples, run as written (in a scratch directory that holds
the files they name): none may fail with a usage error, a missing module or a traceback.

Left to other tests: ``pip install`` lines (the quick start is CI's own command, ``.ci/run``) and
``pre-commit`` (``test_precommit.py`` runs the README's hook configuration)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_HERE = ("pip install", "pre-commit ")

MODULE = '''\
import torch


def main() -> None:
    w = torch.ones(3, requires_grad=True)
    loss = (w * 2).sum()
    w.data.mul_(0.5)
    loss.backward()
    print("grad", w.grad)


if __name__ == "__main__":
    main()
'''
TEST = '''\
import torch


def test_step():
    w = torch.ones(2)
    w.data.add_(1)
    assert w.sum() == 4
'''


def readme_commands() -> List[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S):
        for line in block.splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()  # the trailing explanation
            if command and not command.startswith(NOT_HERE):
                commands.append(command)
    return commands


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """What the examples name: ``demo/``, ``train.py``, ``src/``, ``model.py``, ``m.py``,
    ``mypkg.train`` and a test for ``pytest --detachlint``."""
    here = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "demo", here / "demo")
    for name in ("train.py", "src/model.py", "model.py", "m.py", "mypkg/train.py"):
        (here / name).parent.mkdir(parents=True, exist_ok=True)
        (here / name).write_text(MODULE)
    (here / "mypkg" / "__init__.py").write_text("")
    (here / "test_step.py").write_text(TEST)
    return here


@pytest.mark.parametrize("command", readme_commands())
def test_readme_command_works_as_written(command, workspace):
    pytest.importorskip("torch")  # `detachlint run` and `--confirm` examples need it (CI installs it)
    if command.startswith("pytest "):
        command = f"{sys.executable} -m {command}"
    command = command.replace("python -m detachlint ...", "python -m detachlint --version")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("DETACHLINT_OUTPUT_FORMAT", None)
    proc = subprocess.run(command, shell=True, cwd=workspace, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), out  # 1: findings (the examples lint code that has them)
    for broken in ("Traceback", "unrecognized arguments", "No module named", "command not found", "usage:"):
        assert broken not in out, out
