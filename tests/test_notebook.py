"""Jupyter notebooks: code cells linted as one module, findings reported per cell."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from detachlint.pipeline import lint_path
from detachlint.findings import PARSE_ERROR_CODE
from detachlint.notebook import CodeCell, join_cells, lint_notebook_bytes, neutralise, read_cells

from fixture_expectations import EXPECT_RE, FIXTURES

NOTEBOOK = FIXTURES / "notebooks" / "train.ipynb"


def notebook(*cells, language="python") -> bytes:
    out = []
    for cell in cells:
        kind, src = cell if isinstance(cell, tuple) else ("code", cell)
        out.append({"cell_type": kind, "metadata": {}, "source": src.splitlines(True),
                    **({"outputs": [], "execution_count": None} if kind == "code" else {})})
    nb = {"cells": out, "metadata": {"language_info": {"name": language}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb).encode()


def cell_expectations(path: Path):
    """``# expect:`` markers inside the notebook's cells, as (cell, row, code, severity)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = set()
    for number, cell in enumerate(nb["cells"], start=1):
        for row, line in enumerate("".join(cell["source"]).splitlines(), start=1):
            match = EXPECT_RE.search(line)
            if match:
                for item in match.group("items").split(","):
                    code, severity = item.split()
                    out.add((number, row, code, severity))
    return out


def test_fixture_notebook_findings_match_its_expectations():
    found = {(f.cell, f.location.row, f.code, f.severity.value) for f in lint_path(NOTEBOOK)}
    expected = cell_expectations(NOTEBOOK)
    assert expected and found == expected


def test_positions_are_per_cell_in_code_points():
    by_code = {f.code: f for f in lint_path(NOTEBOOK)}
    tal103 = by_code["TAL103"]  # ``label = "é😀"; snap = torch.Tensor(x)`` in cell 8
    assert (tal103.cell, tal103.location.row, tal103.location.column) == (8, 1, 21)
    assert (tal103.end_location.row, tal103.end_location.column) == (1, 36)
    assert by_code["TAL001"].cell == 6 and by_code["TAL001"].location.row == 4
    assert all(f.filename == str(NOTEBOOK) for f in by_code.values())


def test_display_name_and_selection():
    found = lint_path(NOTEBOOK, codes=["TAL101"], display="nb/train.ipynb")
    assert [(f.filename, f.code, f.cell) for f in found] == [("nb/train.ipynb", "TAL101", 8)]


def test_names_flow_across_cells():
    data = notebook("import torch\n", ("markdown", "text"), "t = torch.ones(2)\n", "u = torch.tensor(t)\n")
    found = lint_notebook_bytes(data, "nb.ipynb")
    assert [(f.code, f.cell, f.location.row) for f in found] == [("TAL101", 4, 1)]


def test_cell_magic_skips_the_cell_and_line_magics_keep_lines():
    data = notebook(
        "import torch\nt = torch.ones(2)\n",
        "%%timeit\nu = torch.tensor(t)\n",
        "%load_ext autoreload\n!nvidia-smi\nt?\n??t\nv = torch.tensor(t)\n",
    )
    found = lint_notebook_bytes(data, "nb.ipynb")
    assert [(f.code, f.cell, f.location.row, f.location.column) for f in found] == [("TAL101", 3, 5, 4)]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("%matplotlib inline", "pass"),
        ("    !pip install x", "    pass"),
        ("files = !ls -la", "files = ..."),
        ("out = %timeit -o f()", "out = ..."),
        ("model.forward?", "pass"),
        ("  ??torch.tensor", "  pass"),
        ("x = y  # why?", "x = y  # why?"),
        ("a = b % c", "a = b % c"),
        ("print('!')", "print('!')"),
        ("if x != y:", "if x != y:"),
    ],
)
def test_neutralise_lines(line, expected):
    assert neutralise(line) == expected + "\n"


def test_continued_magic_line_is_blanked_and_line_count_kept():
    src = "!pip install \\\n    torch\nx = 1\n"
    assert neutralise(src) == "pass\n\nx = 1\n"
    assert neutralise("%%bash\necho hi\n") is None


def test_join_keeps_each_cells_rows():
    cells = [CodeCell(2, "a = 1\nb = 2"), CodeCell(3, "%%time\nc = 3\n"), CodeCell(5, "d = 4\n")]
    source, cmap = join_cells(cells)
    assert source == "a = 1\nb = 2\nd = 4\n"
    assert [cmap.locate(r) for r in (1, 2, 3)] == [(2, 1), (2, 2), (5, 1)]


def test_noqa_inside_a_cell():
    data = notebook("import torch\nt = torch.ones(2)\n", "u = torch.tensor(t)  # noqa: TAL101\n")
    assert lint_notebook_bytes(data, "nb.ipynb") == []


def test_syntax_error_is_reported_in_its_cell():
    data = notebook("import torch\n", ("markdown", "x"), "def f(:\n    pass\n")
    found = lint_notebook_bytes(data, "nb.ipynb")
    assert len(found) == 1 and found[0].code == PARSE_ERROR_CODE
    # Python's own message and position (LibCST never sees what Python rejects), in the cell
    assert found[0].cell == 3 and (found[0].location.row, found[0].location.column) == (1, 6)
    assert found[0].message.startswith("SyntaxError: ")


@pytest.mark.parametrize(
    "data",
    [b"{not json", b"[]", b'{"cells": 3}', b'{"cells": [1]}', b'{"cells": [{"cell_type": "code", "source": 5}]}',
     b"\xff\xfe\x00garbage"],
)
def test_corrupt_notebook_gives_one_tal999(data):
    found = lint_notebook_bytes(data, "bad.ipynb")
    assert [(f.code, f.filename, f.cell) for f in found] == [(PARSE_ERROR_CODE, "bad.ipynb", None)]
    assert found[0].message.startswith("not a valid notebook")


def test_corrupt_notebook_through_lint_path(tmp_path):
    path = tmp_path / "bad.ipynb"
    path.write_text('{"cells": [', encoding="utf-8")
    assert [f.code for f in lint_path(path)] == [PARSE_ERROR_CODE]


def test_non_python_notebook_is_skipped():
    assert lint_notebook_bytes(notebook("x <- c(1, 2)\n", language="R"), "r.ipynb") == []


def test_empty_and_markdown_only_notebooks():
    assert lint_notebook_bytes(notebook(("markdown", "# hi")), "m.ipynb") == []
    assert lint_notebook_bytes(notebook(""), "e.ipynb") == []


def test_read_cells_accepts_string_sources_and_nbformat3():
    cells, is_python = read_cells(json.dumps({"cells": [{"cell_type": "code", "source": "a = 1\n"}]}))
    assert cells == [CodeCell(1, "a = 1\n")] and is_python
    v3 = {"worksheets": [{"cells": [{"cell_type": "code", "input": ["b = 2\n"]}]}], "metadata": {}}
    assert read_cells(json.dumps(v3))[0] == [CodeCell(1, "b = 2\n")]


# --- issue 13: messages, notes, JSON, SARIF and fixes of a notebook, through the real CLI ----------

FINETUNE = FIXTURES / "notebooks" / "finetune.ipynb"  # an alias made in one cell, written in another


@pytest.fixture
def nb_dir(tmp_path):
    """A copy of the fixture notebooks: the CLI runs there (its cache and config stay out of the tree)."""
    for path in (NOTEBOOK, FINETUNE):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    return tmp_path


def cli(*args, cwd):
    from test_cli import detachlint

    return detachlint("check", *args, cwd=cwd)


def cli_json(path: Path, *args):
    proc = cli("--output-format", "json", *args, path.name, cwd=path.parent)
    assert proc.returncode == 1, proc.stderr
    return {f["code"]: f for f in json.loads(proc.stdout)}


def cell_lines(path: Path):
    """cell number -> its source lines (every cell, markdown included, as numbered in findings)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return {n: "".join(c["source"]).splitlines() for n, c in enumerate(nb["cells"], start=1)}


REF_RE = re.compile(r"`[^`]*`|(?:cell (\d+), )?line (\d+)")


def line_refs(text: str, home: int):
    """The (cell, row) of every ``line N`` / ``cell C, line N`` outside backquoted code."""
    return [(int(m.group(1)) if m.group(1) else home, int(m.group(2)))
            for m in REF_RE.finditer(text) if not m.group(0).startswith("`")]


def said(f) -> str:
    """A finding's message and its notes (where the lines it names are), of a Finding or a JSON object."""
    if isinstance(f, dict):
        return " ".join((f["message"], *f["notes"]))
    return " ".join((f.message, *f.notes))


def test_message_lines_are_cell_relative_and_name_other_cells(nb_dir):
    found = cli_json(nb_dir / FINETUNE.name)
    assert "`opt.step()` (cell 6, line 5) changes it, and `best` is read at cell 7, line 1." in said(found["TAL401"])
    assert "`first = x[0]` (cell 8, line 1) is a view of it" in said(found["TAL301"])
    assert "`shown` is `x.detach()` (cell 8, line 2)" in said(found["TAL201"])
    same_cell = cli_json(nb_dir / NOTEBOOK.name)["TAL001"]  # the backward() is in the finding's own cell: no cell named
    assert same_cell["cell"] == 6 and "until `loss.backward()` (line 6):" in said(same_cell)
    lines = cell_lines(FINETUNE)
    for f in found.values():
        refs = line_refs(said(f), f["cell"]) + [ref for r in f["related"] for ref in line_refs(r["message"], r["cell"])]
        assert refs
        for cell, row in refs:  # every row named is a row of that cell
            assert 1 <= row <= len(lines[cell]), (f["code"], cell, row)
    assert "opt.step()" in lines[6][5 - 1] and "best" in lines[7][0] and lines[8][0] == "first = x[0]"


def test_python_file_messages_are_unchanged_and_map_to_the_notebooks(nb_dir):
    """The same code as a .py file keeps its whole-file rows; each maps to the cell row named in
    the notebook's message, and names the same source line."""
    cells, _ = read_cells(FINETUNE.read_text(encoding="utf-8"))
    source, cmap = join_cells(cells)
    (nb_dir / "finetune.py").write_text(source, encoding="utf-8")
    as_py = cli_json(nb_dir / "finetune.py")
    as_nb = cli_json(nb_dir / FINETUNE.name)
    assert sorted(as_py) == sorted(as_nb) == ["TAL201", "TAL301", "TAL401"]
    assert "`opt.step()` (line 12) changes it, and `best` is read at line 13." in said(as_py["TAL401"])
    rows = source.splitlines()
    lines = cell_lines(FINETUNE)
    for code in as_py:
        py_refs = line_refs(said(as_py[code]), None)
        nb_refs = line_refs(said(as_nb[code]), as_nb[code]["cell"])
        assert len(py_refs) == len(nb_refs) > 0
        for (_, joined_row), (cell, row) in zip(py_refs, nb_refs):
            assert cmap.locate(joined_row) == (cell, row)
            assert rows[joined_row - 1] == lines[cell][row - 1]
        assert "cell" not in said(as_py[code]) and all("cell" not in r for r in as_py[code]["related"])


def test_every_rule_fixture_split_into_cells_names_the_right_lines():
    """Each rule fixture cut into cells at its top-level blocks: every line a message names (in the
    finding's cell or another) is the line the .py message names."""
    from detachlint.engine import lint_source
    from fixture_expectations import fixture_files, selected_codes

    checked = 0
    for path in fixture_files():
        text = path.read_text(encoding="utf-8")
        codes = selected_codes(path, text)
        blocks = re.split(r"\n(?=(?:def |class |# ---))", text)
        data = notebook(*[b + "\n" for b in blocks])
        cells, _ = read_cells(data.decode())
        source, _ = join_cells(cells)
        rows = source.splitlines()
        lines = {c.number: c.source.splitlines() for c in cells}
        py = sorted(lint_source(source, "t.py", codes), key=lambda f: (f.location, f.code))
        nb = lint_notebook_bytes(data, "t.ipynb", codes)
        assert len(py) == len(nb), path.name
        by_message_shape = {}
        for f in nb:
            by_message_shape.setdefault((f.code, REF_RE.sub("#", said(f))), []).append(f)
        for f in py:
            g = by_message_shape[(f.code, REF_RE.sub("#", said(f)))].pop(0)
            for (_, joined), (cell, row) in zip(line_refs(said(f), None), line_refs(said(g), g.cell)):
                assert rows[joined - 1] == lines[cell][row - 1], (path.name, said(f), said(g))
                checked += 1
    assert checked > 10


def test_full_notes_name_the_cell_of_each_related_location(nb_dir):
    proc = cli("--output-format", "full", FINETUNE.name, cwd=nb_dir)
    notes = [line for line in proc.stdout.splitlines() if line.startswith("note:")]
    assert "note: finetune.ipynb:cell 6:5:5: the update that changes the snapshot" in notes
    assert "note: finetune.ipynb:cell 7:1:23: `best` read here holds the updated values" in notes
    assert "note: finetune.ipynb:cell 8:1:1: the alias is made here" in notes
    assert "note: finetune.ipynb:cell 10:1:7: `first` read here sees the write" in notes
    assert "\nTAL301 [error] " in proc.stdout and " --> finetune.ipynb:cell 9:1:1\n" in proc.stdout


def test_sarif_results_are_cell_relative_and_name_the_cell(nb_dir):
    from test_cli import validate_sarif

    proc = cli("--output-format", "sarif", FINETUNE.name, cwd=nb_dir)
    log = json.loads(proc.stdout)
    assert validate_sarif(log) or sys.version_info < (3, 11)
    results = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    tal401 = results["TAL401"]
    (loc,) = tal401["locations"]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "finetune.ipynb"
    assert loc["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 8, "endLine": 1, "endColumn": 26}
    assert loc["logicalLocations"][0]["name"] == "cell 4" and loc["properties"] == {"cell": 4}
    assert tal401["properties"]["cell"] == 4 and tal401["message"]["text"].startswith("cell 4: ")
    assert "(cell 6, line 5)" in tal401["message"]["text"]
    related = [(r["logicalLocations"][0]["name"], r["physicalLocation"]["region"]["startLine"])
               for r in tal401["relatedLocations"]]
    assert related == [("cell 6", 5), ("cell 7", 1)]
    assert "fixes" not in tal401  # a SARIF replacement would edit the JSON text, not the cell


def apply_json_fix(path: Path, fix: dict) -> dict:
    """What a client does with the JSON output: apply each edit to the source of its cell."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    edits = sorted(fix["edits"], key=lambda e: (e["cell"], e["location"]["row"], e["location"]["column"]),
                   reverse=True)
    for e in edits:
        cell = nb["cells"][e["cell"] - 1]
        lines = "".join(cell["source"]).splitlines(True)

        def index(loc):
            return sum(len(x) for x in lines[:loc["row"] - 1]) + loc["column"] - 1

        text = "".join(lines)
        text = text[:index(e["location"])] + e["content"] + text[index(e["end_location"]):]
        cell["source"] = text.splitlines(True)
    return nb


def test_json_carries_notebook_fixes_with_their_cells(nb_dir):
    path = nb_dir / FINETUNE.name
    found = cli_json(path)
    fix = found["TAL401"]["fix"]
    assert fix is not None and fix["applicability"] == "unsafe"
    assert sorted((e["cell"], e["location"]["row"], e["location"]["column"], e["content"]) for e in fix["edits"]) == [
        (2, 2, 1, "import copy\n"), (4, 1, 8, "copy.deepcopy("), (4, 1, 26, ")")]
    assert found["TAL301"]["fix"]["edits"] == [{"cell": 8, "content": ".clone()", "location": {"row": 1, "column": 13},
                                                "end_location": {"row": 1, "column": 13}}]
    # A client applying the JSON edits gets what ``--fix`` writes for that finding.
    by_client = apply_json_fix(path, fix)
    proc = cli("--fix", "--unsafe-fixes", "--select", "TAL401", path.name, cwd=nb_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(path.read_text(encoding="utf-8")) == by_client


def test_fix_adds_the_missing_import_and_relints_clean(nb_dir):
    path = nb_dir / FINETUNE.name
    before = cli_json(path, "--unsafe-fixes")
    assert all(f["fix"] is not None for f in before.values())
    proc = cli("--fix", "--unsafe-fixes", "--show-fixes", path.name, cwd=nb_dir)
    assert proc.returncode == 0 and "1 × TAL401" in proc.stdout, proc.stdout + proc.stderr
    assert proc.stdout.endswith("Found 3 findings (3 fixed, 0 remaining).\n")
    lines = cell_lines(path)
    assert lines[2] == ["%matplotlib inline", "import copy", "import torch", "import torch.nn as nn"]
    assert lines[4] == ["best = copy.deepcopy(model.state_dict())  # expect: TAL401 error"]
    cells, _ = read_cells(path.read_text(encoding="utf-8"))
    import ast

    ast.parse(join_cells(cells)[0])  # the fixed cells still parse
    again = cli("--output-format", "json", "--select", "ALL", path.name, cwd=nb_dir)
    assert again.returncode == 0 and json.loads(again.stdout) == []
    # The same code as a .py file takes the same path: ``import copy`` is added there too.
    source, _ = join_cells(read_cells(FINETUNE.read_text(encoding="utf-8"))[0])
    py = nb_dir / "finetune.py"
    py.write_text(source, encoding="utf-8")
    assert cli("--fix", "--unsafe-fixes", "--select", "TAL401", py.name, cwd=nb_dir).returncode == 0
    assert "pass\nimport copy\nimport torch\n" in py.read_text(encoding="utf-8")


def test_cross_cell_fixes_are_kept_for_the_cli_and_left_out_for_one_cell_clients():
    """The language server edits one cell document at a time: it gets only fixes confined to the
    finding's cell; the command line gets every fix, each edit naming its cell."""
    from detachlint.notebook import lint_joined, map_finding, place

    cells, _ = read_cells(FINETUNE.read_text(encoding="utf-8"))
    findings, cmap = lint_joined(cells, "finetune.ipynb", ["TAL401"])
    (f,) = findings
    assert place(f, cmap).finding.fix is None
    assert {e.cell for e in map_finding(f, cmap).fix.edits} == {2, 4}


def test_import_goes_before_a_magic_line_which_stays(tmp_path):
    """``import copy`` lands before the line a magic was neutralised on, leaving the magic as is."""
    path = tmp_path / "nb.ipynb"
    data = notebook("import collections\n%matplotlib inline\nimport torch\n",
                    "m = torch.nn.Linear(1, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n",
                    "best = m.state_dict()\nopt.step()\nm.load_state_dict(best)\n")
    path.write_text(json.dumps(json.loads(data), indent=1) + "\n", encoding="utf-8")
    edits = cli_json(path)["TAL401"]["fix"]["edits"]
    assert {(e["cell"], e["location"]["row"], e["content"]) for e in edits} >= {(1, 2, "import copy\n")}
    assert cli("--fix", "--unsafe-fixes", path.name, cwd=tmp_path).returncode == 0
    assert cell_lines(path)[1] == ["import collections", "import copy", "%matplotlib inline", "import torch"]


def test_fix_changing_a_neutralised_line_is_not_offered():
    """An edit that would change a line of IPython syntax (linted as ``pass``) is dropped, in the
    reported finding as in ``--fix``."""
    from detachlint.findings import Applicability, Edit, Finding, Fix, Location, Severity
    from detachlint.notebook import map_finding

    _, cmap = join_cells([CodeCell(1, "import torch\n"), CodeCell(2, "x = 1\n%time y = 2\n")])
    def finding(row):
        edit = Edit(Location(row, 0), Location(row, 4), "del ")
        return Finding("TAL001", "m", Severity.ERROR, "nb.ipynb", Location(2, 0), Location(2, 1),
                       Fix(Applicability.SAFE, "f", (edit,)))
    assert map_finding(finding(2), cmap).fix.edits == (Edit(Location(1, 0), Location(1, 4), "del ", 2),)
    assert map_finding(finding(3), cmap).fix is None
