"""Help links in the reports and the language server: the Documentation URL the installed
package's metadata declares (``[project.urls]``), one anchor (or page) per rule; the page shipped
inside the package only when no such URL is declared.

The metadata comes from a distribution put first on the path (``tests/metadata/documented``: a
``detachlint`` dist-info whose METADATA declares the URL), as pip would install it from a
``pyproject.toml`` with ``[project.urls] Documentation = ...``; the code runs from this checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient

from detachlint.rules import ALL_RULES

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTED = ROOT / "tests" / "metadata" / "documented"
DOCS = "https://example.org/detachlint/docs/rules.md"
ANCHORS = {r.code: r.anchor() for r in ALL_RULES}


def _env(*first: Path) -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, first), str(ROOT)]))


def _check(cwd: Path, fmt: str, env: dict) -> str:
    (cwd / "train.py").write_bytes((ROOT / "demo" / "train.py").read_bytes())
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--isolated", "--no-cache",
                           "--output-format", fmt, "train.py"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_json_sarif_and_rdjson_link_the_declared_documentation(tmp_path):
    env = _env(DOCUMENTED)
    findings = json.loads(_check(tmp_path, "json", env))
    assert findings and all(f["url"] == f"{DOCS}#{ANCHORS[f['code']]}" for f in findings)

    driver = json.loads(_check(tmp_path, "sarif", env))["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == DOCS
    assert {r["id"]: r.get("helpUri") for r in driver["rules"] if r["id"] in ANCHORS} == \
        {code: f"{DOCS}#{anchor}" for code, anchor in ANCHORS.items()}

    rdjson = json.loads(_check(tmp_path, "rdjson", env))
    assert rdjson["source"]["url"] == DOCS
    assert all(d["code"]["url"] == f"{DOCS}#{ANCHORS[d['code']['value']]}" for d in rdjson["diagnostics"])


def _json_with(tmp_path: Path, project_url: str) -> list:
    """The JSON findings with a ``detachlint`` distribution whose metadata has ``project_url``."""
    meta = tmp_path / "meta" / "detachlint-0.1.0.dist-info"
    meta.mkdir(parents=True)
    meta.joinpath("METADATA").write_text("Metadata-Version: 2.4\nName: detachlint\nVersion: 0.1.0\n"
                                         f"Project-URL: {project_url}\n")
    work = tmp_path / "work"
    work.mkdir()
    return json.loads(_check(work, "json", _env(tmp_path / "meta")))


def test_a_page_per_rule(tmp_path):
    """``{anchor}`` in the declared URL: a page per rule."""
    findings = _json_with(tmp_path, "docs, https://example.org/rules/{anchor}.html")
    assert findings and all(f["url"] == f"https://example.org/rules/{ANCHORS[f['code']]}.html" for f in findings)


def test_without_a_declared_url_the_shipped_page(tmp_path):
    findings = _json_with(tmp_path, "Source, https://example.org/detachlint")
    shipped = (ROOT / "docs" / "rules.md").as_uri()
    assert findings and all(f["url"] == f"{shipped}#{ANCHORS[f['code']]}" for f in findings)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "detachlint", "lsp"],
                                              server_env=_env(DOCUMENTED)))
async def documented(lsp_client: LanguageClient):
    lsp_client.set_configuration({}, section="detachlint")
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_language_server_code_description_and_hover(documented: LanguageClient, tmp_path):
    from test_lsp import SOURCE, hover_at, open_and_wait

    uri, diags = await open_and_wait(documented, tmp_path, "train.py", SOURCE, lambda d: len(d) > 0)
    assert diags and all(d.code_description.href == f"{DOCS}#{ANCHORS[d.code]}" for d in diags)
    hover = await hover_at(documented, uri, diags[0].range.start)
    assert f"[Documentation]({DOCS}#{ANCHORS[diags[0].code]})" in hover.contents.value
