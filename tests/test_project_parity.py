"""Facts across files reach every surface alike: the CLI on one file or on the tree, flake8 (one
file at a time) and the language server see the same project, so they report the same findings.

The project: the optimizer steps in a base class defined in another file; the subclass stores
``self.model.state_dict()`` and restores it later. Only the project index connects the two."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from test_lsp import client, open_and_wait  # noqa: F401  (client: the language server fixture)

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))

BASE = textwrap.dedent("""\
    import torch.nn.functional as F


    class BaseTrainer:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer

        def train_epoch(self, loader):
            for x, y in loader:
                self.optimizer.zero_grad()
                F.mse_loss(self.model(x), y).backward()
                self.optimizer.step()
""")

TRAINER = textwrap.dedent("""\
    import torch

    from .base import BaseTrainer


    class Trainer(BaseTrainer):
        def validate(self, loader):
            self.best = self.model.state_dict()

        def fit(self, loader, epochs):
            for _ in range(epochs):
                self.train_epoch(loader)
                self.validate(loader)
            torch.save(self.best, "best.pt")
""")
EXPECTED = [(8, "TAL401")]


def make_project(root: Path) -> Path:
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text(BASE)
    (package / "trainer.py").write_text(TRAINER)
    return package / "trainer.py"


def _run(args, cwd):
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=ENV, timeout=300)


def test_cli_one_file_and_tree_agree(tmp_path):
    trainer = make_project(tmp_path)
    for target in (str(trainer), "."):
        proc = _run([sys.executable, "-m", "detachlint", "check", "--output-format", "json", "--no-cache", target],
                    tmp_path)
        found = [(f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)]
        assert found == EXPECTED, (target, proc.stdout, proc.stderr)
        first = json.loads(proc.stdout)[0]
        assert "train_epoch" in " ".join([first["message"], *first["notes"]])


def test_cli_stdin_uses_the_project_too(tmp_path):
    trainer = make_project(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--output-format", "json",
                           "--stdin-filename", str(trainer), "-"], input=TRAINER, capture_output=True,
                          text=True, cwd=tmp_path, env=ENV, timeout=300)
    assert [(f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)] == EXPECTED


def test_flake8_agrees(tmp_path):
    trainer = make_project(tmp_path)
    proc = _run([sys.executable, "-m", "flake8", "--select", "TAL", str(trainer)], tmp_path)
    rows = [(int(line.split(":")[1]), line.split(":")[3].split()[0]) for line in proc.stdout.splitlines()]
    assert rows == EXPECTED, proc.stdout + proc.stderr


def _with_many_files(root: Path) -> Path:
    """The project and 20 more modules: enough that the index's facts are computed in worker
    processes (``runner.facts_in_parallel``)."""
    trainer = make_project(root)
    for i in range(20):
        (trainer.parent / f"helper_{i}.py").write_text(f"def helper_{i}(x):\n    return x + {i}\n")
    return trainer


def test_facts_from_worker_processes_reach_the_cli_and_flake8(tmp_path):
    _with_many_files(tmp_path)
    proc = _run([sys.executable, "-m", "detachlint", "check", "--output-format", "json", "--no-cache", "--jobs", "2",
                 "."], tmp_path)
    assert [(f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)] == EXPECTED, proc.stderr
    # flake8 builds the index once, in its main process, before forking its two workers
    proc = _run([sys.executable, "-m", "flake8", "--select", "TAL", "--jobs", "2", "."], tmp_path)
    rows = [(int(line.split(":")[1]), line.split(":")[3].split()[0]) for line in proc.stdout.splitlines()]
    assert rows == EXPECTED, proc.stdout + proc.stderr


def test_a_change_in_another_file_reaches_the_cached_result(tmp_path):
    trainer = make_project(tmp_path)
    args = [sys.executable, "-m", "detachlint", "check", "--output-format", "json", str(trainer)]
    assert [f["code"] for f in json.loads(_run(args, tmp_path).stdout)] == ["TAL401"]
    base = tmp_path / "pkg" / "base.py"
    base.write_text(BASE.replace("self.optimizer.step()", "pass"))  # the base class no longer steps
    assert json.loads(_run(args, tmp_path).stdout) == []


@pytest.mark.asyncio
async def test_language_server_agrees(client: LanguageClient, tmp_path):
    make_project(tmp_path)
    uri, diags = await open_and_wait(client, tmp_path, "pkg/trainer.py", TRAINER, lambda d: len(d) > 0)
    assert [(d.range.start.line + 1, d.code) for d in diags] == EXPECTED
