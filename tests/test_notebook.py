"""Jupyter notebooks: code cells linted as one module, findings reported per cell."""

from __future__ import annotations

import json
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
    assert found[0].cell == 3 and found[0].location.row in (1, 2)  # LibCST points at or after ``(:``


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
