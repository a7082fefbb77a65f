"""Re-linting an edited buffer by its top-level functions gives the whole module's findings."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from detachlint.analysis.project import ModuleView, build_index, module_name
from detachlint.engine import lint_source
from detachlint.incremental import UnitCache, _parsed, _reparsed, blanked, differences, units

from test_precheck import ALL_CODES, SOURCES

ROOT = Path(__file__).parents[1]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_units_equal_the_whole_module_on_fixtures(path):
    source = path.read_text(encoding="utf-8")
    project = ModuleView(build_index([(path, source)]), module_name(path)[0])
    for codes, view in ((ALL_CODES, None), (ALL_CODES, project)):
        assert differences(source, str(path), codes, view) == []


def _torch_sample(n: int):
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return []
    root = Path(spec.origin).parent
    files = sorted(p for p in root.rglob("*.py"))
    return [files[i * len(files) // n] for i in range(n)]


@pytest.mark.parametrize("path", _torch_sample(15), ids=lambda p: p.name)
def test_units_equal_the_whole_module_on_torch(path):
    source = path.read_text(encoding="utf-8")
    assert differences(source, path.name, ALL_CODES) == []


MODULE = '''\
import torch

def first(p):
    loss = (p * p).sum()
    p.data.mul_(2)
    loss.backward()

@torch.no_grad()
def second(w):
    w.data.add_(1)

def third(x):
    y = x.detach()
    y.add_(1)
    return x
'''


def test_an_edit_inside_one_function_relints_only_that_function():
    cache = UnitCache()
    assert cache.lint(MODULE, "m.py", ALL_CODES) == lint_source(MODULE, "m.py", ALL_CODES)
    assert cache.partial_lints == 0
    edited = MODULE.replace("p.data.mul_(2)", "p.data.mul_(3)")
    assert cache.lint(edited, "m.py", ALL_CODES) == lint_source(edited, "m.py", ALL_CODES)
    assert cache.partial_lints == 1
    fixed = MODULE.replace("    y.add_(1)\n", "    y = y + 1\n")  # a finding goes away
    assert cache.lint(fixed, "m.py", ALL_CODES) == lint_source(fixed, "m.py", ALL_CODES)
    assert cache.partial_lints == 2
    assert cache.lint(MODULE, "m.py", ALL_CODES) == lint_source(MODULE, "m.py", ALL_CODES)
    assert cache.partial_lints == 2  # every part cached
    # the context changes (an import): the whole module again, every key new
    moved = MODULE.replace("import torch\n", "import torch as T\nimport torch\n")
    assert cache.lint(moved, "m.py", ALL_CODES) == lint_source(moved, "m.py", ALL_CODES)
    assert cache.partial_lints == 2


def test_blanking_keeps_rows_and_columns():
    lines, found = units(MODULE)
    assert [(u.first, u.last) for u in found] == [(4, 6), (10, 10), (13, 15)]
    text = blanked(lines, [u for u in found if u != found[1]])
    assert len(text.splitlines()) == len(MODULE.splitlines())
    assert text.splitlines()[9] == MODULE.splitlines()[9] and text.splitlines()[3] == "    pass"
    assert units("def f(): return 1\n")[1] == []  # a body on the header's line is context
    assert units("def f(:\n") is None


def _edits(source: str):
    """Edits an editor makes inside, at the end of and around each body: a comment appended, a
    line inserted, a line removed, a statement dedented to the module, a bracket left open."""
    lines = source.splitlines(keepends=True)
    for unit in (units(source) or ([], []))[1]:
        row = (unit.first + unit.last) // 2
        line = lines[row - 1]
        indent = line[:len(line) - len(line.lstrip())]
        for new in ([line.rstrip("\r\n") + "  # edited\n"], [line, indent + "extra = 1\n"], [],
                    ["dedented = 1\n"], [indent + "call(\n"], [line, indent + "import os\n"]):
            yield "".join(lines[:row - 1] + new + lines[row:])


@pytest.mark.parametrize("path", SOURCES + _torch_sample(15), ids=lambda p: p.name)
def test_a_parse_from_the_last_text_equals_a_parse_from_scratch(path):
    """The language server starts the parse of an edited buffer from the last one
    (``incremental._reparsed``); where it can, it must find what a parse from scratch finds."""
    source = path.read_text(encoding="utf-8")
    before = _parsed(source)
    if before is None:
        return
    reused = 0
    for edited in _edits(source):
        again = _reparsed(before, edited)
        if again is not None:
            reused += 1
            assert again == _parsed(edited)
    assert reused or not before[1]
