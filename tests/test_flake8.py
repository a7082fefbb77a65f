"""The flake8 plugin, driven through the real ``flake8`` command in a subprocess.

flake8 finds the plugin through its ``flake8.extension`` entry point when detachlint is installed
(``pip install -e .``); in a bare checkout the same class is loaded through flake8's
``[flake8:local-plugins]``, so the tests exercise the identical ``Checker`` either way.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Optional, Sequence, Set, Tuple

import pytest

from detachlint.noqa import is_suppressed
from detachlint.engine import lint_source
from detachlint.pipeline import Projects
from detachlint.findings import PARSE_ERROR_CODE
from detachlint.rules import ALL_RULES

from fixture_expectations import fixture_files

ROOT = Path(__file__).resolve().parents[1]
FORMAT = "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s"
ALL_CODES = [r.code for r in ALL_RULES] + [PARSE_ERROR_CODE]
# ``--select TAL`` is detachlint's default set; the opt-in rules are named (TAL901 is never
# reported under flake8, which applies ``# noqa`` itself)
EVERY_RULE = ",".join(["TAL"] + [r.code for r in ALL_RULES if not r.default_enabled])

SAMPLE = textwrap.dedent(
    """\
    import torch


    def step(p: torch.Tensor, t: torch.Tensor):
        p.data.add_(1)
        p.data.zero_()  # noqa: TAL003
        p.data.mul_(2)  # noqa: E501
        p.data.sub_(3)  # noqa
        q = p.data
        s = "héllo 😀"; p.data.div_(2)
        u = torch.tensor(t)
        return q, s, u
    """
)

Row = Tuple[str, int, int, str, str]


def _entry_point_installed() -> bool:
    eps = importlib.metadata.entry_points(group="flake8.extension")
    return any(ep.name == "TAL" and ep.value == "detachlint.flake8:Checker" for ep in eps)


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    cfg = tmp_path_factory.mktemp("flake8cfg") / "flake8.ini"
    if _entry_point_installed():
        cfg.write_text("[flake8]\n")
    else:
        cfg.write_text(
            "[flake8:local-plugins]\nextension =\n    TAL = detachlint.flake8:Checker\n"
            f"paths = {ROOT}\n"
        )
    return cfg


def flake8(config: Path, *args: str, cwd: Optional[Path] = None, stdin: Optional[str] = None):
    cmd = [sys.executable, "-m", "flake8", "--config", str(config), f"--format={FORMAT}", *args]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, env=env, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def rows(output: str, prefix: str = "TAL") -> List[Row]:
    out = []
    for line in output.splitlines():
        path, row, col, code, text = line.split("|", 4)
        if code.startswith(prefix):
            out.append((path, int(row), int(col), code, text))
    return out


def engine_rows(path: Path, display: str) -> List[Row]:
    """What the engine finds in ``path`` with the index of the project the file belongs to (as
    ``detachlint check`` and the plugin both use it)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    # flake8 applies ``# noqa`` itself, after the plugin: so TAL901 (unused-noqa) is not reported
    # there, and a TAL902 on a line whose ``# noqa:`` acts as a blanket one is silenced by it
    return [
        (display, f.location.row, f.location.column + 1, f.code, f.message)
        for f in lint_source(text, display, ALL_CODES, project=PROJECTS.view(path))
        if f.code != "TAL901" and not is_suppressed(f, lines)
    ]


PROJECTS = Projects()


@pytest.fixture
def sample(tmp_path) -> Path:
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE, encoding="utf-8")
    return path


def codes_at(result: Sequence[Row]) -> Set[Tuple[int, str]]:
    return {(r[1], r[3]) for r in result}


def test_fixtures_identical_to_engine(config):
    """Every fixture: same codes, rows, columns (+1) and messages as the engine with all rules."""
    files = fixture_files()
    assert files, "no fixtures found"
    proc = flake8(config, "--select", EVERY_RULE, "--jobs", "1", *map(str, files))
    got = sorted(rows(proc.stdout))
    want = sorted(r for path in files for r in engine_rows(path, str(path)))
    assert want, "the fixtures should produce findings"
    assert got == want
    assert proc.returncode == 1


def test_default_run_identical_to_detachlint_check(config, tmp_path):
    """flake8 with its defaults and ``detachlint check`` with its defaults agree on every fixture
    and the demo: codes, rows, columns and messages (copied to a directory without config)."""
    sources = fixture_files() + [ROOT / "demo" / "train.py"]
    names = []
    for i, path in enumerate(sources):
        names.append(f"{i:02d}_{path.name}")
        (tmp_path / names[-1]).write_bytes(path.read_bytes())
    got = sorted(r[1:] + (r[0],) for r in rows(flake8(config, *names, cwd=tmp_path).stdout))
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--output-format", "json", *names],
                          cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          timeout=300)
    assert proc.returncode == 1, proc.stderr
    want = sorted((f["location"]["row"], f["location"]["column"], f["code"], f["message"], Path(f["filename"]).name)
                  for f in json.loads(proc.stdout))
    assert want and got == want


def test_jobs_2_gives_the_same_result(config):
    files = [str(p) for p in fixture_files()]
    serial = flake8(config, "--select", "TAL", "--jobs", "1", *files)
    parallel = flake8(config, "--select", "TAL", "--jobs", "2", *files)
    assert parallel.returncode == serial.returncode == 1
    assert sorted(rows(parallel.stdout)) == sorted(rows(serial.stdout))


def test_columns_count_code_points(config, sample):
    got = rows(flake8(config, "--select", EVERY_RULE, str(sample)).stdout)
    assert got == sorted(engine_rows(sample, str(sample)), key=lambda r: (r[1], r[2]))
    emoji = [r for r in got if r[1] == 10]
    # ``    s = "héllo 😀"; p.data.div_(2)``: ``p`` is code point 19 (UTF-8 byte 23), flake8 prints 20.
    assert [(r[2], r[3]) for r in emoji] == [(20, "TAL003")]


def test_noqa(config, sample):
    got = codes_at(rows(flake8(config, str(sample)).stdout))
    assert (5, "TAL003") in got
    assert (6, "TAL003") not in got  # noqa: TAL003
    assert (7, "TAL003") in got  # noqa for another code does not hide it
    assert (8, "TAL003") not in got  # blanket noqa
    restored = codes_at(rows(flake8(config, "--disable-noqa", str(sample)).stdout))
    assert {(6, "TAL003"), (8, "TAL003")} <= restored  # flake8, not the engine, owns noqa


def test_noqa_checks_under_flake8(config, tmp_path):
    path = tmp_path / "directives.py"
    path.write_text("import torch\n\n\ndef f(p: torch.Tensor):\n"
                    "    p.data.zero_()  # noqa: tal003\n    return p * 2  # noqa: TAL003\n", encoding="utf-8")
    got = codes_at(rows(flake8(config, "--select", "TAL", str(path)).stdout))
    assert got == {(5, "TAL003"), (5, "TAL902")}  # no TAL901: flake8, not the engine, applies noqa


def test_tal002_off_by_default_and_opt_in(config, sample):
    default = codes_at(rows(flake8(config, str(sample)).stdout))
    assert not any(code == "TAL002" for _, code in default)
    assert (11, "TAL101") in default
    extended = codes_at(rows(flake8(config, "--extend-select", "TAL002", str(sample)).stdout))
    assert (9, "TAL002") in extended
    assert default < extended


@pytest.mark.parametrize("how", [("--select", "TAL"), ("--select", "E,F,W,TAL"), ("--extend-select", "TAL"),
                                 ("config", "select = E,TAL")])
def test_the_plugin_selected_by_name_gives_the_default_rules(config, sample, tmp_path, how):
    """``select = ...,TAL`` (how flake8 users turn a plugin on) gives what ``detachlint check``
    gives: the default rules, not the opt-in TAL002 (``q = p.data``, line 9)."""
    if how[0] == "config":
        text = config.read_text()
        own = tmp_path / "own.ini"
        own.write_text(text.replace("[flake8]\n", f"[flake8]\n{how[1]}\n") if "[flake8]\n" in text
                       else f"{text}\n[flake8]\n{how[1]}\n")
        got = codes_at(rows(flake8(own, str(sample)).stdout))
    else:
        got = codes_at(rows(flake8(config, *how, str(sample)).stdout))
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--output-format", "json", "--isolated",
                           str(sample)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    want = {(f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)}
    assert (5, "TAL003") in got and (9, "TAL002") not in got
    assert got == want


@pytest.mark.parametrize("selector", ["TAL002", "TAL0", "TAL00"])
def test_an_opt_in_rule_named_more_specifically_is_on(config, sample, selector):
    got = codes_at(rows(flake8(config, "--select", f"TAL,{selector}", str(sample)).stdout))
    assert (9, "TAL002") in got
    extended = codes_at(rows(flake8(config, "--select", "TAL", "--extend-select", selector, str(sample)).stdout))
    assert (9, "TAL002") in extended


def test_select_and_extend_ignore(config, sample):
    only = codes_at(rows(flake8(config, "--select", "TAL101", str(sample)).stdout))
    assert only == {(11, "TAL101")}
    ignored = codes_at(rows(flake8(config, "--extend-ignore", "TAL003", str(sample)).stdout))
    assert ignored == {(11, "TAL101")}
    # pydocstyle users' ``--extend-ignore D`` must not touch TAL findings.
    docstyle = codes_at(rows(flake8(config, "--extend-ignore", "D", str(sample)).stdout))
    assert (5, "TAL003") in docstyle


def test_per_file_ignores(config, sample):
    proc = flake8(config, "--select", "TAL", "--per-file-ignores", f"{sample.name}:TAL003",
                  sample.name, cwd=sample.parent)
    assert codes_at(rows(proc.stdout)) == {(11, "TAL101")}  # TAL002 is opt-in: not under `TAL`


def test_stdin_display_name(config):
    proc = flake8(config, "--select", "TAL", "--stdin-display-name", "pkg/model.py", "-", stdin=SAMPLE)
    got = rows(proc.stdout)
    assert {r[0] for r in got} == {"pkg/model.py"}
    assert (5, "TAL003") in codes_at(got)


def test_syntax_error_does_not_crash_the_run(config, tmp_path, sample):
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\ndef f(:\n    pass\n")
    proc = flake8(config, "--jobs", "2", str(broken), str(sample))
    all_rows = rows(proc.stdout, prefix="")
    by_file = {}
    for r in all_rows:
        by_file.setdefault(Path(r[0]).name, set()).add(r[3])
    assert by_file["broken.py"] == {"E999"}  # flake8 reports it once; no duplicate TAL999
    assert "TAL003" in by_file["sample.py"]
    assert proc.returncode == 1


def test_off_by_default_codes_come_from_the_registry():
    from detachlint.flake8 import off_by_default

    assert off_by_default() == sorted(r.code for r in ALL_RULES if not r.default_enabled)
    assert "TAL002" in off_by_default()


def test_import_is_cheap():
    code = (
        "import sys, detachlint.flake8\n"
        "heavy = [m for m in ('torch', 'libcst', 'numpy') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT,
                   env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_entry_point_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points."flake8.extension"]' in text
    assert 'TAL = "detachlint.flake8:Checker"' in text


# Suppression comments as users write them: flake8 and ``detachlint check`` must agree on every one.
NOQA_VARIANTS = [
    "", "  # noqa", "  # NOQA", "  # noqa: TAL003", "  # NOQA: tal003", "  # noqa:TAL003", "  # noqa: TAL",
    "  # noqa: TAL0", "  # noqa: E501", "  # noqa: E501,TAL003", "  # noqa: E501 TAL003", "  #noqa",
    "  # noqa : TAL003", "  # noqa:  TAL003", "  # noqa: TAL003 because", "  # type: ignore # noqa",
    "  # noqa-ish", "  # a comment, noqa",
]


def _cli_rows(path: Path) -> Set[Tuple[int, str]]:
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--no-cache", "--output-format", "json",
                           "--select", "TAL003", str(path)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode in (0, 1), proc.stderr
    return {(f["location"]["row"], f["code"]) for f in json.loads(proc.stdout)}


def test_noqa_parity_with_the_cli(config, tmp_path):
    body = "".join(f"    p.data.zero_(){comment}\n" for comment in NOQA_VARIANTS)
    path = tmp_path / "variants.py"
    path.write_text(f"import torch\n\n\ndef f(p: torch.Tensor):\n{body}")
    by_flake8 = codes_at(rows(flake8(config, "--select", "TAL003", str(path)).stdout))
    assert by_flake8 == _cli_rows(path)
    assert (5, "TAL003") in by_flake8 and (6, "TAL003") not in by_flake8  # the test can tell them apart


@pytest.mark.parametrize("header, skipped", [
    ("# flake8: noqa\n", True), ("# FLAKE8=NOQA\n", True), ("  # flake8: noqa: TAL003\n", True),
    ("x = 1  # flake8: noqa\n", False), ("# flake8 noqa\n", False), ("# detachlint: skip-file\n", True),
])
def test_file_level_noqa_parity(config, tmp_path, header, skipped):
    path = tmp_path / "whole.py"
    path.write_text(f"{header}import torch\n\n\ndef f(p: torch.Tensor):\n    p.data.zero_()\n")
    by_flake8 = codes_at(rows(flake8(config, "--select", "TAL003", str(path)).stdout))
    by_cli = _cli_rows(path)
    if header.startswith("# detachlint"):  # detachlint's own: honoured by the engine under flake8 too
        assert by_flake8 == by_cli == set()
        return
    assert by_flake8 == by_cli
    assert (by_cli == set()) is skipped
