"""The pre-commit hooks, end to end: a temporary git repository whose .pre-commit-config.yaml
points at a snapshot of this checkout; pre-commit builds the hook's environment (pip-installing
detachlint and its dependencies) and runs it on ``git commit``.

The snapshot is the working tree as git sees it (tracked and untracked, ignored files left out),
committed in a temporary repository, so the test exercises the code under test rather than the
last commit. One PRE_COMMIT_HOME serves the whole session, so the environment is built once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, Iterator

import pytest

from report_lines import finding_lines

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]

FINDING = textwrap.dedent(
    """\
    import torch


    def reset(p: torch.Tensor) -> None:
        p.data.zero_()
    """
)
CLEAN = textwrap.dedent(
    """\
    import torch


    def reset(p: torch.Tensor) -> None:
        with torch.no_grad():
            p.zero_()
    """
)


def git(cwd: Path, *args: str, env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)


@pytest.fixture(scope="session")
def env(tmp_path_factory) -> Iterator[Dict[str, str]]:
    out = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PRE_COMMIT_HOME")}
    out.update(
        PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
        PRE_COMMIT_COLOR="never",
        GIT_AUTHOR_NAME="test", GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="test", GIT_COMMITTER_EMAIL="test@example.com",
        GIT_CONFIG_NOSYSTEM="1",
    )
    yield out
    shutil.rmtree(out["PRE_COMMIT_HOME"], ignore_errors=True)  # hook environments (one holds torch)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory, env) -> Dict[str, str]:
    """A git repository holding a snapshot of this checkout: (path, commit)."""
    dest = tmp_path_factory.mktemp("detachlint-hook-repo")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        src = ROOT / name
        if not src.is_file():  # deleted in the working tree, not yet in the index
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    git(dest, "init", "-q", env=env)
    git(dest, "add", "-A", env=env)
    git(dest, "commit", "-q", "-m", "snapshot", env=env)
    rev = git(dest, "rev-parse", "HEAD", env=env).stdout.strip()
    return {"path": str(dest), "rev": rev}


def make_user_repo(path: Path, hook_repo: Dict[str, str], env: Dict[str, str], hooks: str) -> Path:
    path.mkdir()
    git(path, "init", "-q", env=env)
    (path / ".pre-commit-config.yaml").write_text(textwrap.dedent(
        f"""\
        repos:
        -   repo: {hook_repo['path']}
            rev: {hook_repo['rev']}
            hooks:
        """) + textwrap.indent(textwrap.dedent(hooks), " " * 4))
    git(path, "add", ".pre-commit-config.yaml", env=env)
    git(path, "commit", "-q", "-m", "config", "--no-verify", env=env)
    return path


def run(cwd: Path, *args: str, env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_manifest_is_valid():
    proc = run(ROOT, *PRE_COMMIT, "validate-manifest", ".pre-commit-hooks.yaml", env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_commit_with_a_finding_fails_then_clean_commit_passes(tmp_path, hook_repo, env):
    repo = make_user_repo(tmp_path / "user", hook_repo, env, """\
        -   id: detachlint
        -   id: detachlint-confirm
        """)
    proc = run(repo, *PRE_COMMIT, "install", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    (repo / "model.py").write_text(FINDING)
    (repo / "notes.txt").write_text("p.data.zero_()\n")  # not Python: the hook never sees it
    git(repo, "add", "model.py", "notes.txt", env=env)
    commit = run(repo, "git", "commit", "-m", "add model", env=env)
    out = commit.stdout + commit.stderr
    assert commit.returncode != 0, out
    assert "detachlint" in out and "Failed" in out
    assert any(line.startswith("model.py:5:5: TAL003") for line in finding_lines(out)), out
    assert "notes.txt" not in out
    assert "confirm findings with torch" not in out  # the manual-stage hook does not run on commit

    (repo / "model.py").write_text(CLEAN)
    git(repo, "add", "model.py", env=env)
    commit = run(repo, "git", "commit", "-m", "add model", env=env)
    out = commit.stdout + commit.stderr
    assert commit.returncode == 0, out
    assert "detachlint" in out and "Passed" in out


def test_notebook_and_noqa_and_config(tmp_path, hook_repo, env):
    repo = make_user_repo(tmp_path / "user", hook_repo, env, """\
        -   id: detachlint
        """)
    (repo / "pyproject.toml").write_text('[tool.detachlint]\nextend-exclude = ["generated"]\n')
    (repo / "generated").mkdir()
    (repo / "generated" / "model.py").write_text(FINDING)  # excluded by config: --force-exclude
    (repo / "quiet.py").write_text(FINDING.replace("p.data.zero_()", "p.data.zero_()  # noqa: TAL003"))
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# notebook\n"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["%matplotlib inline\n", "import torch\n", "t = torch.ones(2)\n",
                                "u = torch.tensor(t)\n"]}],
          "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (repo / "explore.ipynb").write_text(json.dumps(nb))
    git(repo, "add", ".", env=env)
    proc = run(repo, *PRE_COMMIT, "run", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert any(line.startswith("explore.ipynb:cell 2:4:5: TAL101") for line in finding_lines(out)), out
    assert "generated" not in out and "quiet.py" not in out


def test_manual_stage_hook_runs_only_when_asked(tmp_path, hook_repo, env):
    repo = make_user_repo(tmp_path / "user", hook_repo, env, """\
        -   id: detachlint-confirm
        """)
    (repo / "model.py").write_text(FINDING)
    git(repo, "add", "model.py", env=env)
    proc = run(repo, *PRE_COMMIT, "run", "--all-files", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # not in the default stage: nothing runs
    assert "confirm" not in proc.stdout
    proc = run(repo, *PRE_COMMIT, "run", "--all-files", "--hook-stage", "manual", "detachlint-confirm", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "detachlint (confirm findings with torch)" in out
    # The hook's environment has neither the runtime companion nor torch unless the user adds them:
    # hook fails with the message that says so, rather than a traceback.
    assert "--confirm needs the runtime companion" in out and "Traceback" not in out
    assert 'additional_dependencies: ["torch==2.13.0", "./runtime"]' in out
    assert "additional_dependencies" in out  # the remedy for a hook environment, not a pip command


def test_manual_confirm_hook_with_torch(tmp_path, hook_repo, env):
    """With torch added as the README says (additional_dependencies), the manual hook confirms.
    pip takes torch 2.13.0 from the local CPU wheel (find-links) and its dependencies from the
    index; this is the slow test of the suite (about a minute)."""
    repo = make_user_repo(tmp_path / "user", hook_repo, env, """\
        -   id: detachlint-confirm
            additional_dependencies: ["torch==2.13.0", "./runtime"]
            args: [--confirm-backends, eager, --confirm-devices, cpu]
        """)
    (repo / "model.py").write_text(FINDING)
    git(repo, "add", "model.py", env=env)
    proc = run(repo, *PRE_COMMIT, "run", "--all-files", "--hook-stage", "manual", "detachlint-confirm", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    (line,) = [x for x in finding_lines(out) if x.startswith("model.py:5:5: TAL003")]
    assert "reproduced" in line or "no-reproducer" in line  # the pattern-mode verdict on the finding


def readme_precommit_config(hook_repo: Dict[str, str]) -> str:
    """The ``.pre-commit-config.yaml`` example of README.md, pointed at the snapshot of this
    checkout: its placeholders are the only thing replaced."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## pre-commit"):]
    block = section[section.index("```yaml\n") + len("```yaml\n"):]
    block = block[:block.index("```")]
    assert "/path/to/detachlint" in block and "0" * 40 in block
    return block.replace("/path/to/detachlint", hook_repo["path"]).replace("0" * 40, hook_repo["rev"])


WARNING_ONLY = textwrap.dedent(
    """\
    import torch


    def init(p: torch.Tensor) -> None:
        p.data.normal_(0.0, 0.02)
    """
)
ERROR = textwrap.dedent(
    """\
    import torch


    def step(p: torch.Tensor, x: torch.Tensor) -> None:
        loss = (p * x).sum()
        p.data.mul_(0.5)
        loss.backward()
    """
)


def test_readme_example_config_with_fail_on_error(tmp_path, hook_repo, env):
    repo = tmp_path / "user"
    repo.mkdir()
    git(repo, "init", "-q", env=env)
    (repo / ".pre-commit-config.yaml").write_text(readme_precommit_config(hook_repo))
    (repo / "init.py").write_text(WARNING_ONLY)
    git(repo, "add", ".", env=env)
    proc = run(repo, *PRE_COMMIT, "run", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out  # a warning does not fail the commit
    assert "Passed" in out
    assert "TAL" in out and "[warning]" in out, out  # and, with the README's `verbose: true`, it is shown
    (repo / "train.py").write_text(ERROR)
    git(repo, "add", ".", env=env)
    proc = run(repo, *PRE_COMMIT, "run", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and any(line.startswith("train.py:6:5: TAL001") for line in finding_lines(out)), out
