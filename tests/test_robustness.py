"""Whatever it is fed, detachlint never crashes, never reports outside the file, and goes on.

Pipeline-level cases call ``lint_bytes``/``lint_path``; file-system and configuration cases go
through the real command line in a subprocess (``python -m detachlint check``).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Sequence

import pytest

from report_lines import finding_lines

from detachlint.engine import lint_source, physical_lines
from detachlint.pipeline import lint_bytes, lint_path
from detachlint.findings import PARSE_ERROR_CODE, Finding
from detachlint.rules import ALL_RULES

ROOT = Path(__file__).parents[1]
ALL = [r.code for r in ALL_RULES] + [PARSE_ERROR_CODE]
TORCH_SNIPPET = (
    "import torch\n"
    "\n"
    "def f(model):\n"
    "    for p in model.parameters():\n"
    "        p.data.mul_(0.5)\n"
    "    return torch.tensor(torch.ones(2))\n"
)


def assert_inside(findings: Sequence[Finding], source: str) -> None:
    """Every finding (and related location) lies within the text: rows 1..lines, columns within
    the row (an end may sit just past the last character, or at column 0 of the next row)."""
    lines = physical_lines(source) or [""]
    for f in findings:
        locations = [(f.location, f.end_location)] + [(r.location, r.end_location) for r in f.related]
        if f.fix is not None:
            locations += [(e.location, e.end_location) for e in f.fix.edits]
        for start, end in locations:
            for loc in (start, end):
                assert 1 <= loc.row <= len(lines) + 1, (f, len(lines))
                width = len(lines[loc.row - 1]) if loc.row <= len(lines) else 0
                assert 0 <= loc.column <= width, (f, loc, width)
            assert (start.row, start.column) <= (end.row, end.column), f


def codes(findings: Sequence[Finding]) -> List[str]:
    return [f.code for f in findings]


def cli(*args: str, cwd: Path, timeout: int = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    env.pop("DETACHLINT_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "detachlint", "check", "--no-cache", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout


EXPECTED = lint_source(TORCH_SNIPPET, "x.py", ALL)


# ------------------------------------------------------------------------------- engine inputs

def test_expected_findings_exist():
    assert {"TAL003", "TAL101"} <= set(codes(EXPECTED))


def test_empty_file():
    assert lint_bytes(b"", "x.py", ALL) == []
    assert lint_bytes(b"\n\n", "x.py", ALL) == []


def test_bom_gives_the_same_findings():
    got = lint_bytes(b"\xef\xbb\xbf" + TORCH_SNIPPET.encode(), "x.py", ALL)
    assert got == EXPECTED


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_crlf_and_cr_line_endings_give_the_same_rows(newline):
    data = TORCH_SNIPPET.replace("\n", newline).encode()
    got = lint_bytes(data, "x.py", ALL)
    assert [(f.code, f.location, f.end_location) for f in got] == \
        [(f.code, f.location, f.end_location) for f in EXPECTED]


def test_latin1_coding_cookie():
    source = "# -*- coding: latin-1 -*-\n" + TORCH_SNIPPET.replace("import torch\n", "import torch  # caf\xe9\n")
    got = lint_bytes(source.encode("latin-1"), "x.py", ALL)
    assert codes(got) == codes(EXPECTED)
    assert_inside(got, source)


def test_non_utf8_without_cookie_is_a_parse_error_not_a_crash():
    got = lint_bytes(b"import torch\nx = '\xff\xfe'\n", "x.py", ALL)
    assert codes(got) == [PARSE_ERROR_CODE]
    assert "coding" in got[0].message
    assert got[0].location.row == 2


def test_nul_bytes():
    got = lint_bytes(b"import torch\nx = 1\x00\n", "x.py", ALL)
    assert codes(got) == [PARSE_ERROR_CODE] and "NUL" in got[0].message
    assert got[0].location.row == 2


def test_python2_syntax():
    source = "import torch\nprint 'hello'\nexec code in ns\nraise E, 'x'\n"
    got = lint_source(source, "x.py", ALL)
    assert codes(got) == [PARSE_ERROR_CODE]
    assert_inside(got, source)
    assert lint_source(source, "x.py", ["TAL001"]) == []  # TAL999 not selected: silent


@pytest.mark.parametrize("kind", ["paren", "list", "lambda", "unary", "attribute", "call", "binop", "split"])
def test_10000_deep_nesting_is_refused_quickly(kind):
    n = 10000
    source = {
        "paren": "x = " + "(" * n + "1" + ")" * n + "\n",
        "list": "x = " + "[" * n + "]" * n + "\n",
        "lambda": "f = " + "lambda: " * n + "1\n",
        "unary": "x = " + "-" * n + "1\n",
        "attribute": "import torch\nx = torch" + ".t" * n + "\n",
        "call": "x = f" + "()" * n + "\n",
        "binop": "x = 1" + " + 1" * n + "\n",
        "split": "import torch\nx = (torch" + "\n    .t" * n + ")\n",
    }[kind]
    start = time.perf_counter()
    got = lint_source(source, "x.py", ALL)  # LibCST's native parser would segfault here
    assert codes(got) == [PARSE_ERROR_CODE]
    assert_inside(got, source)
    assert time.perf_counter() - start < 30  # generous: a broken guard takes minutes or crashes


# Valid Python whose LibCST tree is thousands deep: LibCST's native parser segfaults on these
# (issue 14), so they must become TAL999 before it is asked, in every surface, with any -j.
VALID_BUT_DEEP = {
    "or_chain": "import torch\nx = " + " or ".join(["a"] * 12500) + "\n",
    "and_chain_in_function": "import torch\ndef f(a):\n    return " + " and ".join(["a"] * 9000) + "\n",
    "elif_ladder": "import torch\nx = 0\nif x == 0:\n    y = 0\n"
                   + "".join(f"elif x == {i}:\n    y = {i}\n" for i in range(1, 12000)),
}


# With something to report (a constructor call), so that the file is parsed, not pre-checked away.
VALID_BUT_DEEP = {name: source + "w = torch.tensor(v)\n" for name, source in VALID_BUT_DEEP.items()}


@pytest.mark.parametrize("name", sorted(VALID_BUT_DEEP))
def test_valid_python_too_deep_for_libcst_is_tal999_in_every_surface(tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(VALID_BUT_DEEP[name])
    commands = [[sys.executable, "-m", "detachlint", "check", "-j", "1", "--no-cache", str(path)],
                [sys.executable, "-m", "detachlint", "check", "-j", "2", "--no-cache", str(path)]]
    try:
        compile(VALID_BUT_DEEP[name], name, "exec", ast.PyCF_ONLY_AST)
    except MemoryError:
        pass  # flake8 itself cannot parse it (its own ast.parse fails before any plugin runs)
    else:
        commands.append([sys.executable, "-m", "flake8", "--select", "TAL", "-j", "1", str(path)])
    for command in commands:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 1, (command, proc.returncode, proc.stderr[-2000:])  # not -11
        assert "TAL999" in proc.stdout and "too deeply nested" in proc.stdout, proc.stdout


def test_a_long_but_shallow_chain_is_still_linted():
    # 120 operands: a chain of 317 tensors already exhausts the analyses' recursion (firstpass.py)
    source = "import torch\nok = " + " or ".join(["a"] * 120) + "\ny = torch.tensor(torch.ones(2))\n"
    assert codes(lint_source(source, "x.py", ALL)) == ["TAL101"]


def test_deep_indentation():
    source = "".join(" " * i + "if x:\n" for i in range(150)) + " " * 150 + "pass\n"
    got = lint_source(source, "x.py", ALL)
    assert codes(got) == [PARSE_ERROR_CODE]
    assert_inside(got, source)


def test_very_long_line():
    source = "import torch\nx = [" + ", ".join(["torch.ones(1)"] * 20000) + "]\ny = torch.tensor(x[0])\n"
    got = lint_source(source, "x.py", ALL)
    assert "TAL101" in codes(got)
    assert_inside(got, source)


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\u2028"])
def test_characters_that_splitlines_splits_at_do_not_shift_noqa(separator):
    # A form feed on its own line is an old convention; str.splitlines() counts it as a newline.
    source = ("import torch\n" + separator + "\ndef f(model):\n    for p in model.parameters():\n"
              "        p.data.mul_(2)  # noqa: TAL003\n        p.data.mul_(3)\n")
    got = lint_source(source, "x.py", ALL)
    if separator == "\x0c":  # the others are not whitespace to Python: a syntax error, placed inside
        assert [(f.code, f.location.row) for f in got] == [("TAL003", 6)]
    assert_inside(got, source)


def test_mixed_tabs_and_spaces():
    source = "import torch\ndef f(p):\n\tif p:\n        \tp.data.mul_(2)\n"
    got = lint_source(source, "x.py", ALL)
    assert_inside(got, source)  # Python rejects inconsistent tabs; either way, no crash


def test_notebook_that_is_not_json():
    from detachlint.notebook import lint_notebook_bytes

    for data in (b"{not json", b"[]", b'{"cells": 3}', b'{"cells": [{"cell_type": "code", "source": 7}]}', b"\xff"):
        got = lint_notebook_bytes(data, "n.ipynb", ALL)
        assert codes(got) == [PARSE_ERROR_CODE], data


def test_a_directory_named_like_a_file(tmp_path):
    folder = tmp_path / "x.py"
    folder.mkdir()
    got = lint_path(folder, ALL, "x.py")
    assert codes(got) == [PARSE_ERROR_CODE]


def test_unreadable_file_in_process(tmp_path, monkeypatch):
    # Tests may run as root, where chmod 000 does not stop reads: simulate the failure.
    path = tmp_path / "secret.py"
    path.write_text(TORCH_SNIPPET)
    real = Path.read_bytes

    def refuse(self):
        if self.name == "secret.py":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    got = lint_path(path, ALL, "secret.py")
    assert codes(got) == [PARSE_ERROR_CODE] and "Permission denied" in got[0].message


# ------------------------------------------------------------------------------ through the CLI

def test_cli_continues_past_bad_files(tmp_path):
    (tmp_path / "a_good.py").write_text(TORCH_SNIPPET)
    (tmp_path / "b_binary.py").write_bytes(b"\x00\x01\x02")
    (tmp_path / "c_py2.py").write_text("print 'x'\n")
    (tmp_path / "d_dir.py").mkdir()
    (tmp_path / "d_dir.py" / "inner.py").write_text(TORCH_SNIPPET)
    (tmp_path / "e_notebook.ipynb").write_text("{ not a notebook")
    (tmp_path / "f_latin.py").write_bytes(b"import torch\nx = '\xe9'\n")
    (tmp_path / "g_good.py").write_text(TORCH_SNIPPET)
    proc = cli(".", "--output-format", "json", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1
    found = json.loads(proc.stdout)
    by_file = {}
    for f in found:
        by_file.setdefault(os.path.relpath(f["filename"], tmp_path), []).append(f["code"])
    assert "TAL101" in by_file["a_good.py"] and "TAL101" in by_file["g_good.py"]
    assert "TAL101" in by_file[os.path.join("d_dir.py", "inner.py")]
    for bad in ("b_binary.py", "c_py2.py", "e_notebook.ipynb", "f_latin.py"):
        assert by_file[bad] == [PARSE_ERROR_CODE], bad


def test_cli_directory_named_x_py_given_explicitly(tmp_path):
    folder = tmp_path / "x.py"
    folder.mkdir()
    (folder / "m.py").write_text(TORCH_SNIPPET)
    proc = cli("x.py", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1 and "TAL101" in proc.stdout


def test_cli_broken_symlink_and_symlink_loop(tmp_path):
    (tmp_path / "good.py").write_text(TORCH_SNIPPET)
    os.symlink(tmp_path / "missing.py", tmp_path / "broken.py")
    os.symlink(tmp_path / "loop_b.py", tmp_path / "loop_a.py")
    os.symlink(tmp_path / "loop_a.py", tmp_path / "loop_b.py")
    os.symlink(tmp_path, tmp_path / "self_dir")  # a directory loop: not followed
    proc = cli(".", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1
    assert "good.py" in proc.stdout and "TAL101" in proc.stdout
    for name in ("broken.py", "loop_a.py", "loop_b.py"):
        assert any(line.startswith(f"{name}:1:1: {PARSE_ERROR_CODE}") for line in finding_lines(proc.stdout)), proc.stdout
    assert "self_dir" not in proc.stdout
    named = cli("broken.py", "good.py", cwd=tmp_path)
    no_traceback(named)
    assert any(line.startswith("broken.py:1:1: TAL999") for line in finding_lines(named.stdout)) and "TAL101" in named.stdout


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="running as root: chmod 000 does not stop reads (simulated in test_unreadable_file_in_process)")
def test_cli_unreadable_file(tmp_path):  # pragma: no cover - not run as root
    path = tmp_path / "secret.py"
    path.write_text(TORCH_SNIPPET)
    (tmp_path / "good.py").write_text(TORCH_SNIPPET)
    path.chmod(0)
    try:
        proc = cli(".", cwd=tmp_path)
    finally:
        path.chmod(0o644)
    no_traceback(proc)
    assert any(line.startswith("secret.py:1:1: TAL999") for line in finding_lines(proc.stdout)) and "good.py" in proc.stdout


def test_cli_50mb_file_is_skipped_with_a_notice_quickly(tmp_path):
    big = tmp_path / "generated.py"
    line = b"x_%07d = torch.tensor(torch.ones(3)).detach().add_(1)\n"
    with open(big, "wb") as fh:
        fh.write(b"import torch\n")
        chunk = b"".join(line % i for i in range(10000))
        while fh.tell() < 50 * 1024 * 1024:
            fh.write(chunk)
    (tmp_path / "small.py").write_text(TORCH_SNIPPET)
    start = time.perf_counter()
    proc = cli(".", cwd=tmp_path)
    elapsed = time.perf_counter() - start
    no_traceback(proc)
    assert "generated.py: skipped" in proc.stderr and "max-file-size" in proc.stderr
    assert "small.py" in proc.stdout and "generated.py" not in proc.stdout
    assert elapsed < 60


def test_cli_max_file_size_is_configurable(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.detachlint]\nmax-file-size = "100B"\n')
    (tmp_path / "small.py").write_text(TORCH_SNIPPET)  # > 100 bytes
    proc = cli(".", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 0 and "small.py: skipped" in proc.stderr
    lifted = cli(".", "--max-file-size", "0", cwd=tmp_path)
    assert lifted.returncode == 1 and "TAL101" in lifted.stdout
    bad = cli(".", "--max-file-size", "lots", cwd=tmp_path)
    no_traceback(bad)
    assert bad.returncode == 2 and "max-file-size" in bad.stderr


@pytest.mark.parametrize("text", [
    "[tool.detachlint\nselect = [",                 # not TOML
    "[tool.detachlint]\nselect = 'TAL001'\n",        # wrong type
    "[tool.detachlint]\nselect = ['NOPE1']\n",       # unknown code
    "[tool.detachlint]\nmax-file-size = -3\n",       # bad size
    "\xff\xfe binary",
])
def test_cli_malformed_pyproject(tmp_path, text):
    (tmp_path / "pyproject.toml").write_bytes(text.encode("latin-1"))
    (tmp_path / "m.py").write_text(TORCH_SNIPPET)
    proc = cli(".", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 2
    assert "pyproject.toml" in proc.stderr or "detachlint: error" in proc.stderr
