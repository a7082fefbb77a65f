"""Each Neovim configuration in docs/editors.md and README.md, run as written: headless Neovim
opens two files of a project that has a finding, and the driver below records what arrived.

Neovim comes from Debian's packages (``.ci/run`` installs it where apt-get can); where it is
missing, or older than the version the text before a snippet names, that snippet's test skips and
says why. ``DETACHLINT_TEST_NVIM`` names another ``nvim`` to run them with."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("docs/editors.md", "README.md")
NVIM = os.environ.get("DETACHLINT_TEST_NVIM", "nvim")

MODULE = "import torch\nw = torch.zeros(3, requires_grad=True)\nw.data.mul_(2)\nv = w.data\n"
FOUND = {("TAL003", 2)}  # 0-based lines, as Neovim keeps them
OPTIONAL = {("TAL002", 3)}  # off by default: only there when the snippet's settings reach the server

# Waits (bounded) for each file's expected codes, since a server that fetches its settings after
# the first lint publishes twice, then writes what it saw and quits whatever happened.
DRIVER = r"""
local expect = vim.split(vim.env.DETACHLINT_EXPECT, ",")
local function arrived()
  local codes = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do codes[d.code] = true end
  for _, code in ipairs(expect) do
    if not codes[code] then return false end
  end
  return true
end
vim.wait(20000, arrived, 50)
vim.cmd("edit " .. vim.fn.fnameescape(vim.env.DETACHLINT_SECOND))
vim.wait(20000, arrived, 50)
local files, clients = {}, {}
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(found, { d.code or vim.NIL, d.lnum, d.source or vim.NIL })
  end
  files[vim.api.nvim_buf_get_name(buf)] = found
end
for _, c in pairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
  table.insert(clients, { c.name, c.config.root_dir or vim.NIL })
end
local out = io.open(vim.env.DETACHLINT_OUT, "w")
out:write(vim.fn.json_encode({ files = files, clients = clients, messages = vim.fn.execute("messages") }))
out:close()
vim.cmd("qa!")
"""


def lua_snippets():
    for name in DOCS:
        text = (ROOT / name).read_text(encoding="utf-8")
        for block in re.finditer(r"```lua\n(.*?)```", text, re.S):
            intro = text[:block.start()].rstrip().rsplit("\n\n", 1)[-1]  # the paragraph before it
            version = re.search(r"Neovim (\d+)\.(\d+)", intro)
            line = text.count("\n", 0, block.start()) + 1
            yield pytest.param(block.group(1), tuple(map(int, version.groups())) if version else None,
                               id=f"{name}:{line}")


@functools.lru_cache(maxsize=None)
def nvim_version() -> Optional[Tuple[int, int, int]]:
    if shutil.which(NVIM) is None:
        return None
    first = subprocess.run([NVIM, "--version"], capture_output=True, text=True, timeout=30).stdout
    found = re.match(r"NVIM v(\d+)\.(\d+)\.(\d+)", first)
    assert found, f"unexpected `{NVIM} --version`: {first[:200]!r}"
    return tuple(map(int, found.groups()))


@pytest.mark.parametrize("snippet, needs", list(lua_snippets()))
def test_neovim_snippet_shows_the_findings(snippet, needs, tmp_path):
    assert needs is not None, "the paragraph before a Neovim snippet names the Neovim version it needs"
    have = nvim_version()
    if have is None:
        pytest.skip(f"`{NVIM}` is not installed (Debian: apt-get install neovim)")
    if have[:2] < needs:
        pytest.skip(f"this snippet needs Neovim {'.'.join(map(str, needs))}; `{NVIM}` is "
                    f"{'.'.join(map(str, have))}")
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    for name in ("train.py", "other.py"):  # the second must reuse the first one's server
        (project / "pkg" / name).write_text(MODULE)
    (tmp_path / "init.lua").write_text(snippet)
    (tmp_path / "driver.lua").write_text(DRIVER)
    expected = FOUND | (OPTIONAL if "TAL002" in snippet else set())
    env = dict(os.environ,
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),  # this detachlint
               DETACHLINT_EXPECT=",".join(sorted(code for code, _ in expected)),
               DETACHLINT_SECOND=str(project / "pkg" / "other.py"),
               DETACHLINT_OUT=str(tmp_path / "out.json"))
    for xdg in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[xdg] = str(tmp_path / xdg)  # its logs and swap files stay here
    try:
        proc = subprocess.run([NVIM, "--headless", "--clean", "-u", str(tmp_path / "init.lua"),
                               "-c", "luafile " + str(tmp_path / "driver.lua"), str(project / "pkg" / "train.py")],
                              cwd=project, env=env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"nvim did not quit within 120 s: {exc.stdout!r} {exc.stderr!r}")
    out = tmp_path / "out.json"
    assert out.exists(), f"the driver wrote nothing: rc {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    seen = json.loads(out.read_text())
    context = f"{seen['messages']}\n{proc.stdout}\n{proc.stderr}"
    for name in ("train.py", "other.py"):
        got = {(code, line) for code, line, source in seen["files"].get(str(project / "pkg" / name), [])
               if source == "detachlint"}
        assert got == expected, f"{name}: {got} != {expected}\n{context}"
    assert seen["clients"] == [["detachlint", str(project)]], context  # one server, at the project root
