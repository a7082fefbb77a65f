"""The output formats, as a ruff user reads them: the real ``detachlint check`` in a subprocess on
a small file with a safe fix (TAL101) and an unsafe one (TAL103), compared with text snapshots
laid out as ruff 0.17.6 lays them out (``full``, the summary, ``github``, ``pylint``,
``grouped``), and the machine formats parsed and validated against the schemas in tests/schemas/
(GitLab Code Quality, reviewdog's rdjson, JUnit XML)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from test_cli import detachlint

SCHEMAS = Path(__file__).resolve().parent / "schemas"

SOURCE = """\
import torch


def f():
    w = torch.zeros(3)
    a = torch.Tensor(w)
    b = torch.tensor(w)
    return a, b
"""
# One short sentence each (issue 42); the rest is a note in the full output and in JSON's "notes".
TAL103 = "`torch.Tensor()` of a tensor returns an alias of its storage, not a copy"
TAL101 = "`torch.tensor()` of a tensor copies it and drops it from the graph"

FULL = f"""\
TAL103 [warning] {TAL103}
 --> m.py:6:9
  |
4 | def f():
5 |     w = torch.zeros(3)
6 |     a = torch.Tensor(w)
  |         ^^^^^^^^^^^^^^^
7 |     b = torch.tensor(w)
8 |     return a, b
  |
note: `torch.Tensor(w)` shares the storage of `w`; use `w.clone()` for a copy.
help: Replace with `w.clone()`
  |
5 |     w = torch.zeros(3)
  -     a = torch.Tensor(w)
6 +     a = w.clone()
7 |     b = torch.tensor(w)
  |
note: This is an unsafe fix and may change runtime behavior: the result no longer shares storage with the tensor

TAL101 [*] [warning] {TAL101}
 --> m.py:7:9
  |
5 |     w = torch.zeros(3)
6 |     a = torch.Tensor(w)
7 |     b = torch.tensor(w)
  |         ^^^^^^^^^^^^^^^
8 |     return a, b
  |
note: PyTorch warns on every such call; use `w.detach().clone()`.
help: Replace with `w.detach().clone()`
  |
6 |     a = torch.Tensor(w)
  -     b = torch.tensor(w)
7 +     b = w.detach().clone()
8 |     return a, b
  |

Found 2 findings (0 errors, 2 warnings).
[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).
"""


@pytest.fixture
def work(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    return tmp_path


def check(cwd, *args, code=1):
    proc = detachlint("check", "--no-cache", *args, cwd=cwd)
    assert proc.returncode == code, proc.stderr
    return proc.stdout


def schema(name):
    return json.loads((SCHEMAS / name).read_text())


def test_full_layout_context_fix_preview_and_unsafe_reason(work):
    assert check(work, "m.py") == FULL
    assert check(work, "--output-format", "full", "m.py") == FULL


def test_full_multi_line_range_is_marked_as_ruff_marks_it(work):
    (work / "n.py").write_text("import torch\n\n\ndef f():\n    w = torch.zeros(3)\n    y = torch.tensor(\n"
                               "        w,\n    )\n    return y\n")
    out = check(work, "n.py").split("help:")[0]
    assert out.splitlines()[2:11] == [
        "  |",
        "4 |   def f():",
        "5 |       w = torch.zeros(3)",
        "6 |       y = torch.tensor(",
        "  |  _________^",
        "7 | |         w,",
        "8 | |     )",
        "  | |_____^",
        "9 |       return y",
    ]


def test_summary_and_fix_accounting(work):
    concise = check(work, "--output-format", "concise", "m.py")
    assert concise == (f"m.py:6:9: TAL103 [warning] {TAL103}\nm.py:7:9: TAL101 [*] [warning] {TAL101}\n"
                       "Found 2 findings (0 errors, 2 warnings).\n"
                       "[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).\n")
    unsafe = check(work, "--output-format", "concise", "--unsafe-fixes", "m.py")
    assert unsafe.splitlines()[-2:] == ["Found 2 findings (0 errors, 2 warnings).", "[*] 2 fixable with `--fix`."]
    fixed = check(work, "--output-format", "concise", "--fix", "m.py")  # on stdout, one stream
    assert fixed == (f"m.py:6:9: TAL103 [warning] {TAL103}\n"
                     "Found 2 findings (1 fixed, 1 remaining: 0 errors, 1 warning).\n"
                     "1 unsafe fix available with `--fix --unsafe-fixes`.\n")
    everything = check(work, "--output-format", "concise", "--fix", "--unsafe-fixes", "m.py", code=0)
    assert everything == "Found 1 finding (1 fixed, 0 remaining).\n"  # ruff: no "All checks passed!" here
    assert check(work, "m.py", code=0) == "All checks passed!\n"


def test_github_annotations(work):
    path = work / "m.py"
    assert check(work, "--output-format", "github", "m.py") == (
        f"::warning title=detachlint (TAL103),file={path},line=6,col=9,endLine=6,endColumn=24::"
        f"m.py:6:9: TAL103 {TAL103}%0A  help: Replace with `w.clone()`\n"
        f"::warning title=detachlint (TAL101),file={path},line=7,col=9,endLine=7,endColumn=24::"
        f"m.py:7:9: TAL101 {TAL101}%0A  help: Replace with `w.detach().clone()`\n")


def test_pylint_and_grouped(work):
    (work / "sub").mkdir()
    (work / "sub" / "o.py").write_text(SOURCE.replace("    a = torch.Tensor(w)\n", ""))
    assert check(work, "--output-format", "pylint", "m.py", "sub/o.py") == (
        f"m.py:6: [TAL103] {TAL103}\nm.py:7: [TAL101] {TAL101}\nsub/o.py:6: [TAL101] {TAL101}\n")
    assert check(work, "--output-format", "grouped", "m.py", "sub/o.py") == (
        f"m.py:\n  6:9 TAL103 [warning] {TAL103}\n  7:9 TAL101 [*] [warning] {TAL101}\n\n"
        f"sub/o.py:\n  6:9 TAL101 [*] [warning] {TAL101}\n\n"
        "Found 3 findings (0 errors, 3 warnings).\n"
        "[*] 2 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).\n")
    assert check(work, "--output-format", "grouped", "-q", "m.py").endswith("\n\n")  # no summary


def test_statistics_json_has_rufs_schema(work):
    data = json.loads(check(work, "--statistics", "--output-format", "json", "m.py"))
    assert data == [
        {"code": "TAL101", "name": "tensor-copy-construct", "count": 1, "fixable": True, "fixable_count": 1},
        {"code": "TAL103", "name": "legacy-constructor-alias", "count": 1, "fixable": False, "fixable_count": 0},
    ]


def test_gitlab_is_a_valid_code_quality_report(work):
    (work / "dup.py").write_text(SOURCE)
    data = json.loads(check(work, "--output-format", "gitlab", "m.py", "dup.py"))
    jsonschema.validate(data, schema("gitlab-codequality.json"))
    assert [(d["check_name"], d["severity"], d["location"]["path"]) for d in data] == [
        ("TAL103", "minor", "dup.py"), ("TAL101", "minor", "dup.py"), ("TAL103", "minor", "m.py"),
        ("TAL101", "minor", "m.py")]
    assert data[3]["description"] == f"TAL101: {TAL101}"
    assert data[3]["location"]["positions"] == {"begin": {"line": 7, "column": 9}, "end": {"line": 7, "column": 24}}
    assert len({d["fingerprint"] for d in data}) == 4
    (work / "m.py").write_text("\n\n" + SOURCE)  # lines move: the fingerprints stay
    moved = json.loads(check(work, "--output-format", "gitlab", "m.py"))
    assert [d["fingerprint"] for d in moved] == [d["fingerprint"] for d in data[2:]]
    assert json.loads(check(work, "--output-format", "gitlab", "--select", "TAL002", "m.py", code=0)) == []


def test_rdjson_is_valid_reviewdog_input(work):
    data = json.loads(check(work, "--output-format", "rdjson", "m.py"))
    jsonschema.validate(data, schema("rdjson.json"))
    assert data["source"]["name"] == "detachlint"
    first, second = data["diagnostics"]
    assert first["location"] == {"path": str(work / "m.py"),
                                 "range": {"start": {"line": 6, "column": 9}, "end": {"line": 6, "column": 24}}}
    assert (first["code"]["value"], first["severity"], first["message"]) == ("TAL103", "WARNING", TAL103)
    assert second["suggestions"] == [{"range": {"start": {"line": 7, "column": 9}, "end": {"line": 7, "column": 24}},
                                      "text": "w.detach().clone()"}]
    empty = json.loads(check(work, "--output-format", "rdjson", "--select", "TAL002", "m.py", code=0))
    jsonschema.validate(empty, schema("rdjson.json"))
    assert empty["diagnostics"] == []


def validate_junit(root: ET.Element) -> None:
    spec = schema("junit.json")
    assert root.tag == spec["root"]

    def visit(element: ET.Element) -> None:
        rules = spec["elements"][element.tag]
        attrs = set(element.attrib)
        assert set(rules["required"]) <= attrs, (element.tag, attrs)
        assert attrs <= set(rules["required"]) | set(rules["optional"]), (element.tag, attrs)
        for name in rules["integer"]:
            if name in element.attrib:
                assert int(element.attrib[name]) >= 0
        for child in element:
            assert child.tag in rules["children"], (element.tag, child.tag)
            visit(child)

    visit(root)
    for suite in [root, *root.iter("testsuite")]:
        cases = list(suite.iter("testcase"))
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)


def test_junit_is_valid_junit_xml(work):
    root = ET.fromstring(check(work, "--output-format", "junit", "m.py"))
    validate_junit(root)
    (suite,) = root.findall("testsuite")
    assert (suite.get("name"), suite.get("package")) == (str(work / "m.py"), "org.detachlint")
    case = suite.findall("testcase")[1]
    assert case.attrib == {"name": "org.detachlint.TAL101", "classname": str(work / "m"), "line": "7", "column": "9"}
    assert case.find("properties/property").attrib == {"name": "severity", "value": "warning"}
    failure = case.find("failure")
    assert (failure.get("message"), failure.text) == (TAL101, f"line 7, col 9, {TAL101}")
    clean = ET.fromstring(check(work, "--output-format", "junit", "--select", "TAL002", "m.py", code=0))
    validate_junit(clean)
    assert [c.get("name") for c in clean.iter("testcase")] == ["No errors found"]


def test_every_format_is_a_choice_and_clean_runs_print_nothing_but_structure(work):
    from detachlint.report import FORMATS

    assert set(FORMATS) == {"concise", "full", "grouped", "json", "sarif", "github", "gitlab", "pylint", "junit",
                            "rdjson"}
    for fmt in ("github", "pylint"):
        assert check(work, "--output-format", fmt, "--select", "TAL002", "m.py", code=0) == ""
